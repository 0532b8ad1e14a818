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
import pkgutil
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

# Why a name is left out: (reason, names, pattern). A missing name is explained by the first group that lists it
# or whose regular expression matches it.  The reasons are the groups of the README's "What leafkit leaves out";
# keep the two in step (`--unexplained` lists what no group explains).
LEFT_OUT = [
    (
        "other devices, backends and memory: xpu, mps, mtia, ipu, xla, vulkan, cuDNN/MIOpen/MKL-DNN/FBGEMM kernels, "
        "streams and events, pinned and shared memory, memory formats, storages and their manipulation, DLPack, "
        "threads",
        "backends cpu mps mtia xpu ipu Stream Event StreamObjType AcceleratorError OutOfMemoryError get_device_module "
        "get_num_threads set_num_threads get_num_interop_threads set_num_interop_threads init_num_threads "
        "channels_last channels_last_3d contiguous_format preserve_format legacy_contiguous_format memory_format "
        "strided layout Storage StorageBase TypedStorage UntypedStorage storage is_storage from_file frombuffer "
        "from_dlpack to_dlpack empty_strided empty_permuted new_empty_strided as_strided as_strided_ resize resize_ "
        "resize_as resize_as_ set_ is_set_to storage_type const_data_ptr dim_order pin_memory is_pinned "
        "share_memory_ is_shared record_stream is_distributed has_lapack has_mkl has_openmp has_spectral "
        "is_vulkan_available is_ipu is_maia is_mkldnn is_mps is_mtia is_vulkan is_xla is_xpu to_mkldnn "
        "DeviceObjType default_generator hash_tensor grad_dtype module_load as_subclass",
        r"Storage$|^(cudnn|miopen|mkldnn|fbgemm)_",
    ),
    (
        "sparse, quantized, nested and named tensors",
        "dsmm hsmm hspmm saddmm smm spmm sspaddmm coalesce is_coalesced indices values crow_indices ccol_indices "
        "col_indices row_indices dense_dim sparse_dim sparse_mask to_dense to_sparse to_padded_tensor jagged nested "
        "int_repr dequantize qscheme name resize_as_sparse_ sparse_resize_ sparse_resize_and_clear_ is_sparse_csr "
        "choose_qparams_optimized",
        r"^sparse|^to_sparse|quant|^q_|^qint|^quint|^QInt|^QUInt|^per_(tensor|channel)|_copy$",
    ),
    (
        "complex numbers and the dtypes NumPy lacks (bfloat16, float8, float4, uint16-64, int1-7, bits)",
        "complex complex32 complex64 complex128 cfloat cdouble chalf angle conj conj_physical conj_physical_ "
        "is_conj is_neg resolve_conj resolve_neg real imag polar view_as_real view_as_complex adjoint H mH "
        "bfloat16 BFloat16Tensor",
        r"^bits|^float8|^float4|^u?int[1-7]$|^uint(16|32|64)$",
    ),
    (
        "compilation, TorchScript, tracing and export (torch.compile, jit, fx, export, dynamo, vmap and torch.func, "
        "symbolic shapes, operator registration) and PyTorch's build metadata",
        "onnx contrib nativert numa compile compiler jit fx export func vmap cond while_loop fork wait Future futures "
        "library ops classes "
        "overrides package hub testing utils version types cpp monitor torch_version compiled_with_cxx11_abi "
        "USE_GLOBAL_DEPS USE_RTLD_GLOBAL_WITH_LIBTORCH TYPE_CHECKING PRIVATE_OPS Tag typename windows "
        "classproperty get_file_path import_ir_module import_ir_module_from_buffer parse_ir parse_schema "
        "parse_type_comment merge_type_from_type_comment unify_type_list Capsule Code CompilationUnit "
        "CompleteArgumentSpec ArgumentSpec ConcreteModuleType ConcreteModuleTypeBuilder DeepCopyMemoTable "
        "DeserializationStorageContext SerializationStorageContext ErrorReport ExecutionPlan FatalError FileCheck "
        "FunctionSchema Gradient Graph GraphExecutorState IODescriptor InferredType JITException LiteScriptModule "
        "LockingLogger LoggerBase NoopLogger ModuleDict ParameterDict BufferDict Node OperatorInfo PyTorchFileReader "
        "PyTorchFileWriter StaticModule ThroughputBenchmark BenchmarkConfig BenchmarkExecutionStats TracingState Use "
        "Value Block Argument AliasDb AggregationType AVG SUM CallStack DispatchKey DispatchKeySet "
        "ExcludeDispatchKeyGuard DisableTorchFunction DisableTorchFunctionSubclass thread_safe_generator bit "
        "handle_torch_function has_torch_function has_torch_function_unary has_torch_function_variadic "
        "is_tensor_like reinforce BroadcastingList1 BroadcastingList2 BroadcastingList3 boolean_dispatch DType "
        "reproducibility_notes sparse_support_notes tf32_notes nn optim random distributed multiprocessing "
        "functional signal masked ao quantization fft linalg special distributions profiler amp autocast",
        r"^Script|Type$|^sym_|^Sym|^autocast_|^(get|set|is)_autocast|^clear_autocast",
    ),
    ("mixed precision (autocast, GradScaler)", "GradScaler", r"autocast"),
    (
        "linear algebra beyond matmul (torch.linalg, det, inverse, solve, decompositions), FFT, spectral windows, "
        "and distance/combinatoric helpers",
        "addbmm addbmm_ addmm_ addmv addmv_ addr addr_ baddbmm baddbmm_ chain_matmul cholesky cholesky_inverse "
        "cholesky_solve det eig geqrf inverse logdet lstsq lu lu_solve lu_unpack matrix_exp matrix_power "
        "matrix_rank orgqr ormqr pinverse qr slogdet solve svd svd_lowrank symeig triangular_solve lobpcg "
        "pca_lowrank inner kron tensordot vdot cross dist cdist pdist block_diag cartesian_prod combinations "
        "tril_indices triu_indices vander cov corrcoef frobenius_norm nuclear_norm norm_except_dim native_norm "
        "renorm renorm_ stft istft bartlett_window blackman_window hamming_window hann_window kaiser_window",
        None,
    ),
    (
        "special functions and the rarer elementwise math and reductions (gamma family, erfinv, Bessel, "
        "quantiles, histograms, bit-level float functions)",
        "digamma digamma_ polygamma polygamma_ lgamma lgamma_ mvlgamma mvlgamma_ igamma igamma_ igammac igammac_ "
        "erfc erfc_ erfinv erfinv_ i0 i0_ sinc sinc_ xlogy_ logaddexp2 logcumsumexp copysign copysign_ "
        "float_power float_power_ fmax fmin frexp ldexp ldexp_ nextafter nextafter_ gcd gcd_ lcm lcm_ heaviside "
        "heaviside_ signbit isneginf isposinf isreal isin deg2rad deg2rad_ rad2deg rad2deg_ diff gradient "
        "trapezoid trapz cumulative_trapezoid aminmax kthvalue mode nanmedian quantile nanquantile std_mean "
        "var_mean histc histogram histogramdd bincount bucketize searchsorted finfo iinfo logit_",
        None,
    ),
    (
        "indexing writes and view variants without an everyday use: take, put, index/scatter reductions, the "
        "*_scatter ops, in-place comparisons, unsafe splits, map2_",
        "take put put_ index index_reduce index_reduce_ scatter_reduce scatter_reduce_ select_scatter slice_scatter "
        "diagonal_scatter as_strided_scatter slice_inverse fill fill_diagonal_ eq_ ne_ lt_ le_ gt_ ge_ greater_ "
        "greater_equal_ less_ less_equal_ not_equal_ unsafe_chunk unsafe_split unsafe_split_with_sizes "
        "narrow_copy nonzero_static segment_reduce embedding_renorm_ map2_ get_device",
        None,
    ),
    (
        "convolution and pooling beyond the everyday set: 3-d convolution, pooling and channel dropout, "
        "max-unpooling, adaptive max, fractional and LP pooling, the padding layers and the padding modes other "
        "than zeros (padding_mode, F.pad's reflect/replicate/circular), conv_tbc",
        "conv_tbc max_pool1d_with_indices",
        r"^(Conv|ConvTranspose|MaxPool|AvgPool|AdaptiveAvgPool|AdaptiveMaxPool|FractionalMaxPool|LPPool|MaxUnpool"
        r"|Dropout)[123]d$"
        r"|^(conv|conv_transpose|max_pool|avg_pool|adaptive_avg_pool|adaptive_max_pool|fractional_max_pool|lp_pool"
        r"|max_unpool|dropout)[123]d(_with_indices)?$"
        r"|^(Reflection|Replication|Circular|Constant|Zero)Pad[123]d$",
    ),
    (
        "layers outside the everyday set: recurrent layers (RNN, LSTM, GRU), attention and Transformer, "
        "upsampling, pixel shuffle, fold/unfold, instance/group/RMS/local-response norms, lazy modules, "
        "EmbeddingBag, Bilinear, and the rarer losses (CTC, margin, triplet, hinge, Poisson, Gaussian NLL)",
        "Container Buffer UninitializedBuffer UninitializedParameter attention common_types factory_kwargs grad "
        "intrinsic modules qat quantizable quantized utils assert_int_or_pair gumbel_softmax SyncBatchNorm "
        "BatchNorm3d AdaptiveLogSoftmaxWithLoss NLLLoss2d Softmax2d LinearCrossEntropyLoss LinearCrossEntropyOptions "
        "linear_cross_entropy grouped_mm scaled_mm scaled_grouped_mm ScalingType SwizzleType "
        "GRID_SAMPLE_INTERPOLATION_MODES GRID_SAMPLE_PADDING_MODES affine_grid affine_grid_generator grid_sample "
        "grid_sampler grid_sampler_2d grid_sampler_3d unfold Fold Unfold fold multi_head_attention_forward "
        "scaled_dot_product_attention batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt "
        "batch_norm_gather_stats batch_norm_gather_stats_with_counts batch_norm_stats batch_norm_update_stats "
        "native_batch_norm native_group_norm native_channel_shuffle channel_shuffle ChannelShuffle "
        "rms_norm RMSNorm group_norm GroupNorm instance_norm local_response_norm "
        "LocalResponseNorm CrossMapLRN2d bilinear Bilinear embedding_bag EmbeddingBag ctc_loss CTCLoss "
        "cosine_embedding_loss CosineEmbeddingLoss hinge_embedding_loss HingeEmbeddingLoss margin_ranking_loss "
        "MarginRankingLoss triplet_margin_loss TripletMarginLoss triplet_margin_with_distance_loss "
        "TripletMarginWithDistanceLoss poisson_nll_loss PoissonNLLLoss gaussian_nll_loss GaussianNLLLoss "
        "multi_margin_loss MultiMarginLoss multilabel_margin_loss MultiLabelMarginLoss multilabel_soft_margin_loss "
        "MultiLabelSoftMarginLoss soft_margin_loss SoftMarginLoss Transformer TransformerDecoder "
        "TransformerDecoderLayer TransformerEncoder TransformerEncoderLayer MultiheadAttention RNN RNNBase "
        "RNNCellBase LSTM LSTMCell GRU GRUCell gru gru_cell lstm lstm_cell rnn_relu rnn_relu_cell rnn_tanh "
        "rnn_tanh_cell pixel_shuffle pixel_unshuffle PixelShuffle PixelUnshuffle interpolate upsample "
        "upsample_bilinear upsample_nearest Upsample UpsamplingBilinear2d UpsamplingNearest2d",
        r"^Lazy|^InstanceNorm",
    ),
    (
        "randomness beyond the everyday draws: distributions, quasi-random sequences, saving the RNG state, "
        "the rarer in-place draws and the random regularisers (alpha dropout, RReLU)",
        "get_rng_state set_rng_state quasirandom poisson binomial cauchy_ exponential_ geometric_ log_normal_ "
        "random_ native_dropout alpha_dropout alpha_dropout_ feature_alpha_dropout feature_alpha_dropout_ "
        "feature_dropout feature_dropout_ AlphaDropout FeatureAlphaDropout rrelu rrelu_ RReLU",
        None,
    ),
    (
        "global switches for determinism, denormals, warnings and matmul precision",
        "use_deterministic_algorithms are_deterministic_algorithms_enabled get_deterministic_debug_mode "
        "set_deterministic_debug_mode is_deterministic_algorithms_warn_only_enabled set_flush_denormal "
        "set_warn_always is_warn_always_enabled get_float32_matmul_precision set_float32_matmul_precision "
        "set_anomaly_enabled",
        None,
    ),
    (
        "optimizers and schedulers beyond the everyday ones",
        "ASGD Adadelta Adafactor Adamax LBFGS Muon NAdam RAdam Rprop SparseAdam swa_utils asgd adadelta adafactor "
        "adamax lbfgs muon nadam radam rprop sparse_adam "
        "swap_in_optimizer_params_and_state ChainedScheduler CosineAnnealingWarmRestarts CyclicLR OneCycleLR "
        "PolynomialLR inf partial ref",
        None,
    ),
    (
        "autograd extras: forward-mode AD, the profiler, gradcheck/gradgradcheck, NestedIOFunction, "
        "multithreading and layout switches",
        "forward_ad profiler profiler_legacy profiler_util ProfilerActivity ProfilerConfig ProfilerEvent "
        "ProfilerState DeviceType kineto_available gradcheck gradgradcheck NestedIOFunction SavedTensor "
        "enforce_grad_layout_policy is_multithreading_enabled set_multithreading_enabled is_view_replay_enabled "
        "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12",
        None,
    ),
    (
        "DataPipes, distributed training and worker processes",
        "backward_compatibility DFIterDataPipe DataChunk DistributedSampler IterDataPipe MapDataPipe "
        "argument_validation datapipes prepare_multiprocessing_environment "
        "distributed functional_datapipe graph graph_settings guaranteed_datapipes_determinism non_deterministic "
        "runtime_validation runtime_validation_disabled",
        None,
    ),
]
LEFT_OUT = [(why, set(names.split()), re.compile(pattern) if pattern else None) for why, names, pattern in LEFT_OUT]


def load(spec):
    mod, _, attr = spec.partition(":")
    obj = importlib.import_module(mod)
    return getattr(obj, attr) if attr else obj


def public_names(obj):
    """Public names of a module or class, without the modules and typing helpers a module imports for itself.

    A package's own public submodules count whether or not something has imported them yet, so that the answer
    does not depend on what ran before."""
    names = set()
    if isinstance(obj, types.ModuleType) and hasattr(obj, "__path__"):
        names.update(n for _, n, _ in pkgutil.iter_modules(obj.__path__) if not n.startswith("_"))
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
    for why, names, pattern in LEFT_OUT:
        if name in names or (pattern is not None and pattern.search(name)):
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
