"""Compare the public names of PyTorch with leafkit's, family by family (a development tool).

    python scripts/api_surface.py                 # counts per family, and the names leafkit lacks
    python scripts/api_surface.py --family Tensor # one family
    python scripts/api_surface.py --counts        # only the table of counts
    python scripts/api_surface.py --unexplained   # missing names that no entry of LEFT_OUT explains

Families: ``torch``, ``torch.Tensor``, ``torch.nn``, ``torch.nn.functional``, ``torch.autograd``, ``torch.optim``
(and ``torch.optim.lr_scheduler``, ``torch.utils.data``).  A public name is one without a leading underscore that
is not a module imported for the implementation (``math``, ``typing`` helpers ...).  PyTorch is imported here
only; leafkit never imports it.

Each missing name is put under the reason it is left out (``LEFT_OUT``: the groups the README's "What leafkit
leaves out" names), or reported as *unexplained*.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # a leafkit on PYTHONPATH (another checkout) comes first

FAMILIES = [
    ("torch", "torch", "leafkit"),
    ("torch.Tensor", "torch:Tensor", "leafkit:Tensor"),
    ("torch.nn", "torch.nn", "leafkit.nn"),
    ("torch.nn.functional", "torch.nn.functional", "leafkit.nn.functional"),
    ("torch.autograd", "torch.autograd", "leafkit.autograd"),
    ("torch.optim", "torch.optim", "leafkit.optim"),
    ("torch.optim.lr_scheduler", "torch.optim.lr_scheduler", "leafkit.optim.lr_scheduler"),
    ("torch.utils.data", "torch.utils.data", "leafkit.utils.data"),
]

# Why a name is left out: (reason, regular expression on the name). The first that matches wins.  The reasons
# are the README's groups; keep the two in step.
LEFT_OUT = [
    (
        "other devices and backends (xpu, mps, mtia, ipu, hpu, xla, vulkan, mkldnn, cudnn, miopen, fbgemm ...)",
        r"(^|_)(xpu|mps|mtia|ipu|hpu|xla|vulkan|mkldnn|cudnn|miopen|fbgemm|maia|mkl|nnpack|openmp|cpu_fused|tpu)"
        r"|^is_(cpu|meta|vulkan|xla)$|^(ipu|xpu|mtia|cpu|meta)$|privateuse1|^backends$|^get_device$|cuda_|^cuda$"
        r"|_nnpack_|^is_pinned$|^pin_memory$|record_stream|^from_file$|^get_device_module$|^is_shared$|share_memory"
        r"|^dim_order$|memory_format|contiguous_format|^channels_last|^preserve_format|^layout$|^strided$|^device_of$"
        r"|^get_num_(interop_)?threads$|^set_num_(interop_)?threads$|^get_cpu_capability$|^Stream|^Event$|stream"
        r"|^accelerator$|^DeviceObjType$|^default_generator$",
    ),
    (
        "sparse, quantized, nested and named tensors, other layouts",
        r"sparse|quant|^q_|^qscheme|qint|quint|^int_repr$|dequantize|nested|^is_nested|_csr|_csc|_bsr|_bsc|coo"
        r"|^indices$|^values$|^crow|^ccol|^col_indices|^row_indices|coalesce|^smm$|^sspaddmm|^to_dense$|to_padded"
        r"|^refine_names|^rename|^align_|^names$|^has_names|^unflatten_dense|^is_coalesced$|^dense_dim$|^hspmm$|^mkl"
        r"|^is_sparse|^saddmm$|^spmm$|fake_quant|^fused_moving_avg|^per_(tensor|channel)|^slice_inverse$|^name$",
    ),
    (
        "complex numbers, bfloat16 and the other dtypes NumPy lacks (float8, uint16 ..., bits)",
        r"complex|^c(float|double|half)$|^chalf$|^cfloat$|^cdouble$|bfloat16|float8|float4|^bits|^u?int[1-7]$"
        r"|^uint(16|32|64)$|^conj|^resolve_(conj|neg)$|^is_conj$|^is_neg$|^real$|^imag$|^angle$|^polar$|^view_as_real"
        r"|^view_as_complex|^adjoint$|^mH$|^mT$|^H$|^is_complex$|^(cdouble|cfloat|chalf)$|^BFloat16|^Complex"
        r"|^ComplexDouble|^ComplexFloat|^QInt|^QUInt|^qint|^quint|^is_neg$",
    ),
    (
        "compilation, tracing, export, graphs (torch.compile, jit, fx, export, dynamo, functorch's transforms)",
        r"compile|^jit$|^fx$|^export$|^_dynamo|^onnx$|^package$|^script|^trace|^ScriptModule|^ScriptFunction"
        r"|^Graph$|^Node$|^Value$|^Block$|^Argument|^FunctionSchema|^AliasDb|^Use$|^Type$|^TensorType$|Type$"
        r"|^library$|^Library$|^ops$|^overrides$|^compiler$|^utils$|^testing$|^hub$|^profiler$|^autocast|amp"
        r"|^vmap$|^func$|^functional$|^fork$|^wait$|^Future$|^futures$|^set_vital|^vitals_enabled|^_|^classes$"
        r"|^monitor$|^masked$|^signal$|^special$|^linalg$|^fft$|^distributions$|^distributed$|^multiprocessing$"
        r"|^return_types$|^storage$|^serialization$|^types$|^version$|^config$|^cpp$|^hub$|^mps$|^xpu$|^mtia$"
        r"|^random$|^overrides$|^nn$|^optim$|^autograd$|^cuda$|^sparse$|^quantization$|^ao$|^nested$|^export$"
        r"|^sym_|^Sym|^guard|^is_tensor_like$|^has_torch_function|^handle_torch_function|torch_function|torch_dispatch"
        r"|^TypedStorage$|^UntypedStorage$|^Storage$|Storage$|^StorageBase|^inference_mode$|^ExcludeDispatchKeyGuard"
        r"|^DispatchKey|^DisableTorchFunction|^ThroughputBenchmark|^AggregationType|^ConcreteModuleType|^CompilationUnit"
        r"|^ErrorReport|^FileCheck|^LiteScriptModule|^LockingLogger|^LoggerBase|^NoopLogger|^ModuleDict$|^CallStack"
        r"|^PyTorchFileReader|^PyTorchFileWriter|^IODescriptor|^InferredType|^BenchmarkConfig|^BenchmarkExecutionStats"
        r"|^ParameterDict$|^Gradient$|^StaticModule|^Tag$|^TensorBase$|^dtype$|^finfo$|^iinfo$|^device$|^Generator$"
        r"|^Size$|^memory_format$|^layout$|^qscheme$|^AVG$|^SUM$|^enable_grad$|^no_grad$|^set_grad_enabled$",
    ),
    (
        "randomness beyond the everyday draws (distributions, quasi-random, rng state)",
        r"^(get|set)_rng_state|^fork_rng$|^quasirandom|^SobolEngine|^poisson$|^binomial$|^standard_gamma$|^_standard"
        r"|^geometric_$|^cauchy_$|^log_normal_$|^exponential_$|^rrelu|^alpha_dropout|feature_alpha_dropout|^AlphaDropout"
        r"|^FeatureAlphaDropout|^RReLU|^dirichlet|^native_dropout|^bernoulli_$|^random_$|^nonzero_static$",
    ),
    (
        "deterministic/debug switches and global flags",
        r"determinis|^set_flush_denormal$|^set_warn_always$"
        r"|^is_warn_always_enabled$|^set_printoptions$|^use_deterministic|^are_deterministic|^set_float32_matmul"
        r"|^get_float32_matmul|^is_anomaly|^set_anomaly|^detect_anomaly$|^typename$|^is_storage$|^is_grad_enabled$"
        r"|^is_inference_mode_enabled$|^promote_types$|^result_type$|^can_cast$|^set_default|^get_default|^__",
    ),
    (
        "linear algebra and signal processing beyond matmul (torch.linalg, fft, decompositions, solvers)",
        r"^linalg_|^(det|logdet|slogdet|inverse|pinverse|cholesky\w*|lu\w*|qr|svd\w*|symeig|eig\w*|lstsq|solve"
        r"|triangular_solve|geqrf|orgqr|ormqr|matrix_exp|matrix_power|matrix_rank|householder_product|ger|chain_matmul"
        r"|stft|istft|bartlett_window|blackman_window|hamming_window|hann_window|kaiser_window|fft\w*|istft|cdist"
        r"|pdist|kron|tensordot|inner|outer|vdot|dot|mv|addmv\w*|addr\w*|baddbmm\w*|addbmm\w*|addmm\w*|block_diag"
        r"|cartesian_prod|combinations|tril_indices|triu_indices|vander|cov|corrcoef|histogram\w*|histc|bincount"
        r"|bucketize|searchsorted|renorm\w*|nuclear_norm|frobenius_norm|norm_except_dim|cross|dist)$",
    ),
    (
        "special functions (gamma family, Bessel, incomplete gamma ...)",
        r"gamma|^i0|^digamma|^polygamma|^erfinv|^erfc|^sinc|^xlogy|^special_|^logit_|^mvlgamma|^zeta$|bessel|^igamma"
        r"|^lgamma|^ndtr|^entr$|^log_ndtr$|^nextafter|^frexp|^ldexp|^copysign|^heaviside|^signbit|^float_power"
        r"|^logaddexp2?$|^hypot_|^gcd|^lcm|^fmax$|^fmin$|^logcumsumexp$|^cummax$|^cummin$|^isposinf|^isneginf"
        r"|^isreal$|^isin$|^deg2rad|^rad2deg|^positive$|^negative_$|^nan_to_num|^square_$|^trapz|^trapezoid"
        r"|^cumulative_trapezoid|^diff$|^gradient$|^kthvalue$|^mode$|^median$|^nanmedian$|^quantile$|^nanquantile$"
        r"|^nanmean$|^nansum$|^std_mean$|^var_mean$|^aminmax$|^count_nonzero$|^isclose$|^allclose$|^equal$",
    ),
    (
        "layers and losses for sequences, attention, images and embeddings bags (convolutions are another branch)",
        r"Transformer|MultiheadAttention|multi_head|scaled_dot_product|attention|^(L|G)STM|^GRU|^RNN$|^RNNBase"
        r"|^LSTM|^RNNCellBase$|Conv|conv|Pool|pool|Unpool|unpool|Pad[123]d|^pad$|Upsampl|upsampl|interpolate"
        r"|PixelShuffle|PixelUnshuffle|pixel_(un)?shuffle|ChannelShuffle|channel_shuffle|Fold|Unfold|^fold$|^unfold$"
        r"|grid_sample|affine_grid|EmbeddingBag|embedding_bag|CTCLoss|ctc_loss|LocalResponseNorm|local_response_norm"
        r"|CrossMapLRN2d|InstanceNorm|instance_norm|SyncBatchNorm|Lazy|Uninitialized|AdaptiveLogSoftmaxWithLoss"
        r"|Bilinear|bilinear|BatchNorm3d|Dropout[123]d|dropout[123]d|Flatten|Unflatten|NLLLoss2d|Softmax2d"
        r"|^Container$|^intrinsic$|^qat$|^quantizable$|^quantized$|^modules$|^common_types$|^factory_kwargs$"
        r"|^attention$|^parallel$|^utils$|^grad$|^init$|^Buffer$|LinearCrossEntropy|linear_cross_entropy"
        r"|grouped_mm|scaled_mm|scaled_grouped|^Swizzle|^Scaling|^DType$|^Broadcasting|GRID_SAMPLE|_notes$"
        r"|^assert_int_or_pair$|^boolean_dispatch$|^gumbel_softmax$|^RMSNorm$|^rms_norm$|^GroupNorm$|^group_norm$"
        r"|MultiMargin|MultiLabel|multi_margin|multilabel|TripletMargin|triplet_margin|HingeEmbedding|hinge_embedding"
        r"|CosineEmbedding|cosine_embedding|MarginRanking|margin_ranking|PoissonNLL|poisson_nll|GaussianNLL"
        r"|gaussian_nll|SoftMarginLoss|soft_margin_loss|^ReflectionPad|^ReplicationPad|^CircularPad|^ConstantPad"
        r"|^ZeroPad|^Embedding$|^embedding$|^one_hot$|^PairwiseDistance$|^pairwise_distance$|^pdist$|^clip_grad",
    ),
    (
        "optimizers and schedulers beyond the everyday ones",
        r"^(ASGD|Adadelta|Adafactor|Adamax|LBFGS|Muon|NAdam"
        r"|RAdam|Rprop|SparseAdam|swa_utils|swap_in_optimizer_params_and_state)$|^(ChainedScheduler|CyclicLR"
        r"|CosineAnnealingWarmRestarts|PolynomialLR|SWALR|SequentialLR|MultiplicativeLR|ConstantLR|OneCycleLR)$",
    ),
    (
        "autograd internals and forward mode (forward_ad, profiler, gradcheck, NestedIOFunction, graph tools)",
        r"^forward_ad$|^profiler|^gradcheck$|^gradgradcheck$|^NestedIOFunction$|^SavedTensor$|^DeviceType$"
        r"|^Profiler|^kineto|^enforce_grad_layout_policy$|multithreading|view_replay|^variable$|^Mapping$"
        r"|^Sequence$|^cast$|^overload$|^torch$|^function$|^grad_mode$|^anomaly_mode$|^graph$|^forward_ad$"
        r"|^functional$|^is_tensor_like$|^Callable$|^Optional$|^TYPE_CHECKING$|^math$|^importlib$|^dataclasses$"
        r"|^warnings$|^Any$|^Union$|^List$|^Tuple$|^Dict$|^Iterable$|^Iterator$|^TypeVar$|^Generic$",
    ),
    (
        "data pipes and distributed loading (DataPipes, DistributedSampler, worker processes)",
        r"DataPipe|datapipe|^Distributed|^graph_settings$|^communication$|^backward_compatibility$|^dataset$"
        r"|^sampler$|^dataloader$|^distributed$|^graph$|^_utils$|^argument_validation|^runtime_validation|^functional_"
        r"|^guaranteed_datapipes_determinism$|^non_deterministic$|^DFIterDataPipe$|^Sharding|^default_"
        r"|^get_worker_info$|^ChainDataset$",
    ),
]


def load(spec):
    mod, _, attr = spec.partition(":")
    obj = importlib.import_module(mod)
    return getattr(obj, attr) if attr else obj


def public_names(obj):
    """Public names of a module or class, without the modules and typing helpers a module imports for itself."""
    names = set()
    for n in dir(obj):
        if n.startswith("_"):
            continue
        try:
            v = getattr(obj, n)
        except Exception:  # noqa: BLE001 - a name that cannot be read is still a name
            names.add(n)
            continue
        if isinstance(obj, types.ModuleType):
            if isinstance(v, types.ModuleType):
                own = v.__name__.startswith(obj.__name__ + ".")
                if not own:
                    continue
            elif getattr(v, "__module__", None) in ("typing", "typing_extensions", "collections.abc", "abc"):
                continue
        names.add(n)
    return names


def reason(name):
    for why, pattern in LEFT_OUT:
        if re.search(pattern, name):
            return why
    return None


def compare():
    rows = []
    for family, torch_spec, leafkit_spec in FAMILIES:
        want = public_names(load(torch_spec))
        try:
            have = public_names(load(leafkit_spec))
        except (ImportError, AttributeError):
            have = set()
        rows.append((family, want, have))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--family", help="only this family (torch, Tensor, nn, nn.functional, autograd, optim ...)")
    p.add_argument("--counts", action="store_true", help="only the table of counts")
    p.add_argument("--unexplained", action="store_true", help="only the missing names LEFT_OUT does not explain")
    args = p.parse_args(argv)
    rows = compare()
    if args.family:
        rows = [r for r in rows if r[0] in (args.family, "torch." + args.family)]
    print(f"{'family':<26}{'PyTorch':>9}{'leafkit':>9}{'shared':>9}{'missing':>9}{'unexplained':>13}")
    for family, want, have in rows:
        missing = want - have
        unexplained = [n for n in missing if reason(n) is None]
        print(f"{family:<26}{len(want):>9}{len(have):>9}{len(want & have):>9}{len(missing):>9}{len(unexplained):>13}")
    if args.counts:
        return 0
    for family, want, have in rows:
        missing = sorted(want - have)
        if not missing:
            continue
        groups = {}
        for n in missing:
            groups.setdefault(reason(n) or "UNEXPLAINED (fill it, or say why it is left out)", []).append(n)
        print(f"\n== {family}: {len(missing)} missing")
        for why, names in sorted(groups.items(), key=lambda kv: (not kv[0].startswith("UNEXPLAINED"), kv[0])):
            if args.unexplained and not why.startswith("UNEXPLAINED"):
                continue
            print(f"-- {why} ({len(names)})")
            print("   " + ", ".join(names))
        extra = sorted(have - want)
        if extra and not args.unexplained:
            print(f"-- leafkit only ({len(extra)}): " + ", ".join(extra))
    return 0


if __name__ == "__main__":
    sys.exit(main())
