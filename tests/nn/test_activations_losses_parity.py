"""Activations, the l1-type and binary cross-entropy losses, normalize, cosine_similarity, their modules and
nn.init, next to real PyTorch: values at edge inputs, dtypes, gradients, in-place forms, errors, warnings, reprs.

The op rows in ``tests/op_db.py`` check first and second derivatives and the recorded graphs; this file checks
what those rows cannot: nan/inf/0 inputs, integer and float16 input, argument checks and messages, modules.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

EDGE = [float("nan"), -float("inf"), float("inf"), -30.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 6.0, 25.0]


def observe(lib, fn):
    """``fn(lib)``'s result (values, dtype, grad_fn name, gradient) or its error class and message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 - the error is the observation
            return ("error", type(e).__name__, str(e).split("\n")[0])
    # PyTorch's own warnings; NumPy RuntimeWarnings of existing ops (the sum of inf and -inf) are the adversarial
    # suite's no_numpy_runtime_warnings case
    warned = sorted({(w.category.__name__, str(w.message)) for w in caught if w.category is not RuntimeWarning})
    if isinstance(out, lib.Tensor):
        fn_name = out.grad_fn.name() if out.grad_fn is not None else None
        return (np.asarray(out.detach().double().tolist()), str(out.dtype).replace("leafkit", "torch"), fn_name, warned)
    return (out, warned)


def same(got, want):
    if isinstance(got[0], str) or isinstance(want[0], str):
        return isinstance(got[0], str) and isinstance(want[0], str) and got == want
    if isinstance(got[0], np.ndarray):
        g, w = got[0], want[0]
        return g.shape == w.shape and np.allclose(g, w, rtol=2e-6, atol=1e-7, equal_nan=True) and got[1:] == want[1:]
    return got == want


def both(fn):
    got, want = observe(leafkit, fn), observe(torch, fn)
    assert same(got, want), f"\nleafkit: {got}\ntorch:   {want}"


ACTIVATIONS = {
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "elu": lambda F, x: F.elu(x),
    "elu_alpha": lambda F, x: F.elu(x, 0.3),
    "leaky_relu": lambda F, x: F.leaky_relu(x),
    "leaky_relu_slope": lambda F, x: F.leaky_relu(x, -0.2),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x, beta=3, threshold=5),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_limits": lambda F, x: F.hardtanh(x, -0.5, 2.0),
    "relu6": lambda F, x: F.relu6(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_values_and_gradients_at_edge_inputs(name, dtype):
    # finite inputs: values and gradients; PyTorch's vectorised kernels give some results at +-inf and nan
    # that follow from no formula (gelu(inf) is nan), so those are compared for the value only where finite
    for vals in ([v for v in EDGE if math.isfinite(v)], EDGE):

        def run(lib, vals=vals):
            x = lib.tensor(vals, dtype=getattr(lib, dtype), requires_grad=True)
            y = ACTIVATIONS[name](lib.nn.functional, x)
            if not all(math.isfinite(v) for v in vals):
                return y
            (g,) = lib.autograd.grad(y.sum(), x)
            return lib.stack([y, g])

        got, want = observe(leafkit, run), observe(torch, run)
        if all(math.isfinite(v) for v in vals):
            assert same(got, want), f"\nleafkit: {got}\ntorch:   {want}"
        else:  # finite results must agree; nan/inf are compared where PyTorch's result is finite
            keep = np.isfinite(want[0])
            assert np.allclose(got[0][keep], want[0][keep], rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_float16_and_integer_input(name):
    both(lambda lib: ACTIVATIONS[name](lib.nn.functional, lib.tensor([-2.0, -0.5, 0.0, 1.5, 7.0], dtype=lib.float16)))
    for dt in ("int64", "bool", "uint8"):
        both(lambda lib, dt=dt: ACTIVATIONS[name](lib.nn.functional, lib.tensor([1, 0, 1], dtype=getattr(lib, dt))))


@pytest.mark.parametrize(
    "name,call",
    [
        ("silu", lambda F, t: F.silu(t, inplace=True)),
        ("elu", lambda F, t: F.elu(t, 0.7, inplace=True)),
        ("elu_", lambda F, t: F.elu_(t)),
        ("leaky_relu", lambda F, t: F.leaky_relu(t, 0.3, inplace=True)),
        ("leaky_relu_", lambda F, t: F.leaky_relu_(t, 0.3)),
        ("hardtanh", lambda F, t: F.hardtanh(t, inplace=True)),
        ("hardtanh_", lambda F, t: F.hardtanh_(t, -0.5, 0.5)),
        ("relu6", lambda F, t: F.relu6(t * 4, inplace=True)),
        ("leaky_relu_negative_slope", lambda F, t: F.leaky_relu(t, -0.3, inplace=True)),
    ],
)
def test_inplace_activations(name, call):
    def run(lib):
        x = lib.tensor([-1.5, -0.25, 0.5, 2.0], requires_grad=True)
        h = x * 1
        out = call(lib.nn.functional, h)
        assert out is h
        out.sum().backward()  # the negative-slope in-place leaky_relu raises here, as in PyTorch
        return lib.stack([out.detach(), x.grad]), out.grad_fn.name(), h._version

    got, want = observe(leafkit, run), observe(torch, run)
    if got[0] != "error":
        got, want = (got[0][0].numpy(), *got[0][1:]), (want[0][0].numpy(), *want[0][1:])
        assert np.allclose(got[0], want[0]) and got[1:] == want[1:]
    else:
        assert got == want
    # on a leaf that requires grad, PyTorch's leaf in-place error
    both(lambda lib: call(lib.nn.functional, lib.tensor([1.0, -1.0], requires_grad=True)))


@pytest.mark.parametrize(
    "case",
    [
        lambda lib: lib.nn.functional.gelu(lib.tensor([1.0]), approximate="sigmoid"),
        lambda lib: lib.nn.functional.hardtanh(lib.tensor([1.0]), 2.0, 1.0),
        lambda lib: lib.nn.functional.hardtanh(lib.tensor([1, 2], dtype=lib.uint8)),
        lambda lib: lib.nn.functional.relu6(lib.tensor([1, 7, 300], dtype=lib.int64)),
        lambda lib: lib.nn.functional.silu([1.0]),
        lambda lib: lib.logit(lib.tensor([0.0, 0.25, 1.0, 1.5, -0.5])),
        lambda lib: lib.logit(lib.tensor([0.0, 0.25, 1.0, 1.5, -0.5]), eps=0.1),
        lambda lib: lib.logit(lib.tensor([0, 1, 2])),
        lambda lib: lib.tensor([0, 1], dtype=lib.int64).logit_(),
        lambda lib: lib.tensor([0.3, 0.6]).logit_(),
        lambda lib: lib.clamp_min(lib.tensor([1, 5, 3]), 2),
        lambda lib: lib.clamp_min(lib.tensor([1, 5, 3]), 2.5),
        lambda lib: lib.tensor([float("nan"), -1.0, 2.0]).clamp_min(0.0),
    ],
    ids=[
        "gelu_approximate",
        "hardtanh_order",
        "hardtanh_uint8_negative",
        "relu6_int",
        "not_a_tensor",
        "logit_edges",
        "logit_eps",
        "logit_int",
        "logit_int_inplace",
        "logit_inplace",
        "clamp_min_int",
        "clamp_min_int_float_bound",
        "clamp_min_nan",
    ],
)
def test_activation_arguments_and_errors(case):
    both(case)


def test_logit_and_logsigmoid_gradients_at_the_edges():
    def run(lib):
        p = lib.tensor([0.0, 0.05, 0.5, 1.0, 1.2], dtype=lib.float64, requires_grad=True)
        (g1,) = lib.autograd.grad(p.logit().sum(), p)
        (g2,) = lib.autograd.grad(p.logit(eps=0.1).sum(), p)
        x = lib.tensor([-800.0, -1.0, 0.0, 800.0], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.logsigmoid(x)
        (g3,) = lib.autograd.grad(y.sum(), x)
        return lib.cat([g1, g2, y.detach(), g3])

    both(run)


# -- losses ------------------------------------------------------------------------------------------------------------
LOSSES = {
    "l1": lambda F, a, b, **kw: F.l1_loss(a, b, **kw),
    "smooth_l1": lambda F, a, b, **kw: F.smooth_l1_loss(a, b, **kw),
    "smooth_l1_beta": lambda F, a, b, **kw: F.smooth_l1_loss(a, b, beta=0.3, **kw),
    "smooth_l1_beta0": lambda F, a, b, **kw: F.smooth_l1_loss(a, b, beta=0.0, **kw),
    "huber": lambda F, a, b, **kw: F.huber_loss(a, b, **kw),
    "huber_delta": lambda F, a, b, **kw: F.huber_loss(a, b, delta=0.4, **kw),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(name, reduction):
    a = [[0.2, -1.5, 3.0], [0.0, 0.35, -0.1]]
    b = [[0.2, 0.5, -1.0], [1.0, 0.0, 0.1]]

    def run(lib, bshape=None):
        x = lib.tensor(a, requires_grad=True)
        t = lib.tensor(b, requires_grad=True)
        if bshape is not None:
            t = lib.tensor(b[0], requires_grad=True)
        loss = LOSSES[name](lib.nn.functional, x, t, reduction=reduction)
        gx, gt = lib.autograd.grad(loss.sum(), [x, t])
        return lib.cat([loss.reshape(-1), gx.reshape(-1), gt.reshape(-1)])

    both(run)
    both(lambda lib: run(lib, bshape=True))  # a target that broadcasts: PyTorch's UserWarning, expanded


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_regression_loss_graphs_dtypes_and_errors(name):
    F = "nn.functional"

    def graph(lib):
        x = lib.tensor([0.5, -2.0], requires_grad=True)
        loss = LOSSES[name](lib.nn.functional, x, lib.tensor([0.0, 1.0]))
        return (loss.grad_fn.name(), [n.name() if n is not None else None for n, _ in loss.grad_fn.next_functions])

    both(graph)
    for other in ("float64", "int64"):
        both(
            lambda lib, other=other: LOSSES[name](
                lib.nn.functional, lib.tensor([0.5, -2.0]), lib.tensor([1, 0], dtype=getattr(lib, other))
            )
        )
    both(lambda lib: LOSSES[name](lib.nn.functional, lib.tensor([1, 2]), lib.tensor([1, 0])))
    both(lambda lib: LOSSES[name](lib.nn.functional, lib.ones(3), lib.ones(2)))
    both(lambda lib: LOSSES[name](lib.nn.functional, lib.ones(3), lib.ones(3), reduction="avg"))
    both(lambda lib: LOSSES[name](lib.nn.functional, lib.ones(0), lib.ones(0)))
    assert F


@pytest.mark.parametrize(
    "case",
    [
        lambda lib: lib.nn.functional.smooth_l1_loss(lib.ones(2), lib.zeros(2), beta=-1.0),
        lambda lib: lib.nn.functional.huber_loss(lib.ones(2), lib.zeros(2), delta=0.0),
        lambda lib: lib.nn.functional.l1_loss(lib.ones(2), lib.zeros(2), reduce=False),
        lambda lib: lib.nn.functional.smooth_l1_loss(lib.ones(2), lib.zeros(2), size_average=False),
        lambda lib: lib.nn.functional.l1_loss(lib.tensor([1.0, 3.0]), lib.zeros(2), weight=lib.tensor([0.5, 2.0])),
        lambda lib: lib.nn.functional.l1_loss(lib.tensor([1.0, 3.0]), lib.zeros(2), weight=lib.tensor([0.5])),
        lambda lib: lib.nn.functional.l1_loss(lib.tensor([1.0, 3.0]), lib.zeros(2), weight=lib.ones(2), reduction="x"),
        lambda lib: lib.nn.functional.huber_loss(lib.tensor([1.0, 3.0]), lib.zeros(2), weight=lib.tensor([0.5, 2.0])),
        lambda lib: lib.nn.functional.huber_loss(
            lib.tensor([1.0, 3.0]), lib.zeros(2), weight=lib.tensor([0.5, 2.0]), reduction="sum"
        ),
    ],
    ids=[
        "beta_negative",
        "delta_zero",
        "legacy_reduce",
        "legacy_size_average",
        "l1_weight",
        "l1_weight_size",
        "l1_weight_reduction",
        "huber_weight",
        "huber_weight_sum",
    ],
)
def test_regression_loss_arguments(case):
    both(case)


BCE_P = [0.0, 0.01, 0.3, 0.5, 0.99, 1.0]
BCE_T = [1.0, 0.0, 0.25, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weight", [None, "full", "broadcast"])
def test_binary_cross_entropy_values_and_gradients(reduction, weight):
    def run(lib):
        p = lib.tensor(BCE_P, dtype=lib.float64, requires_grad=True)
        t = lib.tensor(BCE_T, dtype=lib.float64, requires_grad=True)
        w = (
            None
            if weight is None
            else (
                lib.linspace(0.5, 2.0, 6, dtype=lib.float64)
                if weight == "full"
                else lib.tensor([1.5], dtype=lib.float64)
            )
        )
        loss = lib.nn.functional.binary_cross_entropy(p, t, weight=w, reduction=reduction)
        gp, gt = lib.autograd.grad(loss.sum(), [p, t])
        return lib.cat([loss.reshape(-1), gp, gt])

    both(run)


@pytest.mark.parametrize(
    "case",
    [
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([1.2, 0.5]), lib.tensor([1.0, 0.0])),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([float("nan"), 0.5]), lib.tensor([1.0, 0.0])),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.2, 0.5]), lib.tensor([1.5, 0.0])),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.2, 0.5]), lib.tensor([1.0, 0.0, 1.0])),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.2, 0.5]), lib.tensor([1, 0])),
        lambda lib: lib.nn.functional.binary_cross_entropy(
            lib.tensor([0.2, 0.5]), lib.tensor([1.0, 0.0], dtype=lib.float64)
        ),
        lambda lib: lib.nn.functional.binary_cross_entropy(
            lib.tensor([0.2, 0.5]), lib.tensor([1.0, 0.0]), weight=lib.tensor([1.0, 2.0], requires_grad=True)
        ),
        lambda lib: lib.nn.functional.binary_cross_entropy(
            lib.tensor([0.2, 0.5]), lib.tensor([1.0, 0.0]), weight=lib.tensor([1.0, 2.0, 3.0])
        ),
        lambda lib: lib.nn.functional.binary_cross_entropy(
            lib.tensor([0.2, 0.5]), lib.tensor([1.0, 0.0]), weight=lib.tensor([2.0], dtype=lib.float64)
        ),
        lambda lib: lib.nn.functional.binary_cross_entropy(
            lib.tensor([0.2, 0.5]), lib.tensor([1.0, 0.0]), reduction="avg"
        ),
        lambda lib: lib.nn.functional.binary_cross_entropy(
            lib.tensor([0.2, 0.5]), lib.tensor([1.0, 0.0]), reduce=False
        ),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.ones(0), lib.ones(0)),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor(0.3), lib.tensor(1.0)),
        lambda lib: lib.nn.functional.binary_cross_entropy(
            lib.tensor([0.2, 0.7], dtype=lib.float16), lib.tensor([1.0, 0.0], dtype=lib.float16)
        ),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.2, 0.7]).sigmoid(), lib.tensor([1.0, 0.0])),
    ],
    ids=[
        "input_above_1",
        "input_nan",
        "target_above_1",
        "size_mismatch",
        "int_target",
        "double_target",
        "weight_requires_grad",
        "weight_not_broadcast",
        "double_weight",
        "bad_reduction",
        "legacy_reduce",
        "empty",
        "zero_dim",
        "half",
        "graph",
    ],
)
def test_binary_cross_entropy_errors_and_edges(case):
    both(case)


# -- normalize, cosine_similarity ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "case",
    [
        lambda lib: lib.nn.functional.normalize(lib.tensor([[3.0, 4.0], [0.0, 0.0]])),
        lambda lib: lib.nn.functional.normalize(lib.tensor([[3.0, 4.0], [0.0, 0.0]]), dim=0),
        lambda lib: lib.nn.functional.normalize(lib.tensor([[3.0, -4.0], [1.0, 1.0]]), p=1),
        lambda lib: lib.nn.functional.normalize(lib.tensor([[3.0, -4.0], [1.0, 1.0]]), p=float("inf")),
        lambda lib: lib.nn.functional.normalize(lib.tensor([1.0, 2.0])),
        lambda lib: lib.nn.functional.normalize(lib.tensor([[1, 2]])),
        lambda lib: lib.nn.functional.normalize(lib.tensor([[1.0, 2.0]], requires_grad=True), out=lib.zeros(1, 2)),
        lambda lib: lib.nn.functional.normalize(lib.tensor([[3.0, 4.0]]), out=lib.zeros(1, 2)),
        lambda lib: lib.nn.functional.cosine_similarity(
            lib.tensor([[1.0, 0.0], [1.0, 1.0]]), lib.tensor([[0.0, 2.0], [2.0, 2.0]])
        ),
        lambda lib: lib.nn.functional.cosine_similarity(lib.tensor([[1.0, 0.0], [1.0, 1.0]]), lib.tensor([[3.0, 4.0]])),
        lambda lib: lib.nn.functional.cosine_similarity(lib.zeros(3), lib.ones(3), dim=0),
        lambda lib: lib.nn.functional.cosine_similarity(lib.ones(2, 3), lib.ones(2, 4)),
        lambda lib: lib.nn.functional.cosine_similarity(lib.ones(2, 3), lib.ones(2, 3), dim=2),
        lambda lib: lib.nn.functional.cosine_similarity(lib.tensor([1, 2]), lib.tensor([2, 3]), dim=0),
        lambda lib: lib.nn.functional.cosine_similarity(lib.tensor([1, 2]), lib.tensor([2.0, 3.0]), dim=0),
        lambda lib: lib.cosine_similarity(lib.tensor([1.0, 2.0]), lib.tensor([2.0, 3.0], dtype=lib.float64), 0),
        lambda lib: lib.cosine_similarity(lib.tensor(1.0), lib.tensor(-2.0), dim=0),
    ],
    ids=[
        "rows",
        "columns",
        "p1",
        "pinf",
        "1d_dim1",
        "int",
        "out_requires_grad",
        "out",
        "cos_rows",
        "cos_broadcast",
        "cos_zero",
        "cos_shapes",
        "cos_dim",
        "cos_int",
        "cos_int_float",
        "cos_double",
        "cos_0d",
    ],
)
def test_normalize_and_cosine_similarity(case):
    both(case)


def test_normalize_and_cosine_similarity_gradients_at_zero_vectors():
    def run(lib):
        x = lib.tensor([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0]], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]], dtype=lib.float64, requires_grad=True)
        (gn,) = lib.autograd.grad((lib.nn.functional.normalize(x) * lib.arange(6.0).reshape(2, 3)).sum(), x)
        gx, gy = lib.autograd.grad(lib.nn.functional.cosine_similarity(x, y).sum(), [x, y])
        return lib.cat([gn, gx, gy])

    both(run)


# -- modules ---------------------------------------------------------------------------------------------------------
MODULES = [
    ("GELU", ()),
    ("GELU", ("tanh",)),
    ("SiLU", ()),
    ("SiLU", (True,)),
    ("ELU", ()),
    ("ELU", (0.5, True)),
    ("LeakyReLU", ()),
    ("LeakyReLU", (0.2, True)),
    ("Softplus", ()),
    ("Softplus", (2, 10)),
    ("Hardtanh", ()),
    ("Hardtanh", (-2, 3, True)),
    ("ReLU6", ()),
    ("ReLU6", (True,)),
    ("LogSigmoid", ()),
    ("L1Loss", ()),
    ("SmoothL1Loss", ()),
    ("HuberLoss", ()),
    ("BCELoss", ()),
]


@pytest.mark.parametrize("name,args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_module_repr_and_forward(name, args):
    def run(lib):
        m = getattr(lib.nn, name)(*args)
        x = lib.tensor([0.1, 0.4, 0.9, 0.5], requires_grad=True)
        if "Loss" in name:
            out = m(x, lib.tensor([0.0, 1.0, 1.0, 0.5]))
        else:
            out = m(x * 3 - 1)
        out.sum().backward()
        return repr(m), out.detach().tolist(), out.grad_fn.name(), x.grad.tolist(), sorted(vars(m).get("_buffers", {}))

    got, want = run(leafkit), run(torch)
    assert got[0] == want[0] and got[2] == want[2] and got[4] == want[4]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "case",
    [
        lambda lib: repr(lib.nn.Hardtanh(2.0, 1.0)),
        lambda lib: repr(lib.nn.Hardtanh(min_value=-2.0, max_value=0.5)),
        lambda lib: repr(lib.nn.SmoothL1Loss(beta=0.5, reduction="sum")),
        lambda lib: lib.nn.HuberLoss(delta=2.0, reduction="none").delta,
        lambda lib: lib.nn.L1Loss(size_average=False).reduction,
        lambda lib: sorted(lib.nn.BCELoss(weight=lib.ones(2)).state_dict()),
        lambda lib: lib.nn.BCELoss(weight=lib.tensor([1.0, 2.0]), reduction="sum")(
            lib.tensor([0.5, 0.25]), lib.tensor([1.0, 0.0])
        ),
        lambda lib: list(lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.GELU(), lib.nn.LeakyReLU(0.1)).state_dict()),
    ],
    ids=[
        "hardtanh_order",
        "hardtanh_deprecated",
        "smooth_l1_repr",
        "huber_attrs",
        "l1_legacy",
        "bce_buffers",
        "bce_weight",
        "sequential",
    ],
)
def test_module_arguments(case):
    both(case)


# -- nn.init -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "case",
    [
        lambda lib: lib.nn.init.calculate_gain("tanh"),
        lambda lib: lib.nn.init.calculate_gain("leaky_relu", 0.2),
        lambda lib: lib.nn.init.calculate_gain("leaky_relu"),
        lambda lib: lib.nn.init.calculate_gain("conv2d"),
        lambda lib: lib.nn.init.calculate_gain("selu"),
        lambda lib: lib.nn.init.calculate_gain("relu"),
        lambda lib: lib.nn.init.calculate_gain("softmax"),
        lambda lib: lib.nn.init.calculate_gain("leaky_relu", "0.1"),
        lambda lib: lib.nn.init._calculate_fan_in_and_fan_out(lib.empty(5, 4, 3, 2)),
        lambda lib: lib.nn.init._calculate_fan_in_and_fan_out(lib.empty(5)),
        lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 4), mode="fan_avg"),
        lambda lib: lib.nn.init.xavier_normal_(lib.empty(3)),
        lambda lib: lib.nn.init.eye_(lib.empty(2, 3)),
        lambda lib: lib.nn.init.eye_(lib.empty(2, 3, 4)),
        lambda lib: lib.nn.init.constant_(lib.empty(2, 2), 0.25),
        lambda lib: lib.nn.init.ones_(lib.empty(3, dtype=lib.float64)),
        lambda lib: lib.nn.init.zeros_(lib.empty(1, 2)),
        lambda lib: lib.nn.init.kaiming_normal_(lib.empty(0, 3)),
    ],
    ids=[
        "gain_tanh",
        "gain_leaky",
        "gain_leaky_default",
        "gain_conv",
        "gain_selu",
        "gain_relu",
        "gain_unknown",
        "gain_bad_param",
        "fans",
        "fans_1d",
        "bad_mode",
        "xavier_1d",
        "eye",
        "eye_3d",
        "constant",
        "ones",
        "zeros",
        "kaiming_empty",
    ],
)
def test_init_values_and_errors(case):
    both(case)


@pytest.mark.parametrize(
    "name,kw,spread",
    [
        ("uniform_", {"a": -2.0, "b": 3.0}, lambda fi, fo: (0.5, (5 / 12**0.5))),
        ("normal_", {"mean": 1.0, "std": 0.5}, lambda fi, fo: (1.0, 0.5)),
        ("xavier_uniform_", {"gain": 2.0}, lambda fi, fo: (0.0, 2.0 * (2 / (fi + fo)) ** 0.5)),
        ("xavier_normal_", {}, lambda fi, fo: (0.0, (2 / (fi + fo)) ** 0.5)),
        ("kaiming_uniform_", {"a": 5**0.5}, lambda fi, fo: (0.0, (2 / (1 + 5)) ** 0.5 / fi**0.5)),
        ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}, lambda fi, fo: (0.0, (2 / fo) ** 0.5)),
    ],
)
def test_init_fills_in_place_under_no_grad_with_pytorchs_spread(name, kw, spread):
    """Both libraries' numbers differ (different generators); their statistics and the leaf facts agree."""

    def run(lib):
        lib.manual_seed(0)
        w = lib.nn.Parameter(lib.empty(400, 250, 2))
        out = getattr(lib.nn.init, name)(w, **kw)
        vals = w.detach().numpy()
        return out is w, w.is_leaf, w.requires_grad, w.grad_fn, w._version, float(vals.mean()), float(vals.std())

    got, want = run(leafkit), run(torch)
    assert got[:5] == want[:5]
    mean, std = spread(500, 800)
    for res in (got, want):
        assert res[5] == pytest.approx(mean, abs=0.02 * max(std, 0.1))
        assert res[6] == pytest.approx(std, rel=0.02)
