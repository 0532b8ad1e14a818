"""Dropout, BatchNorm1d, RNNCell and BCEWithLogitsLoss next to real PyTorch, with the same weights and buffers.

Each test runs one program on leafkit and on torch (``both``) and compares
what a learner can see: outputs, gradients (and second derivatives), buffers
after training steps, the train/eval switch, graphs (``grad_fn`` trees and
saved attributes), reprs, state_dict keys, errors and their messages.

Dropout's random mask comes from each library's own generator, so the
comparisons are of what is comparable: p=0, p=1 and eval, the structure and
scaling of the mask, its statistics, and runs where PyTorch's mask is
injected into leafkit (``leafkit._functions.nn_ops._dropout_noise``, which ``F.dropout`` draws the mask
with, replaced).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import leafkit
import leafkit._functions.nn_ops as LO

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def both(fn, *args):
    """Run ``fn(lib, *args)`` on leafkit and on torch."""
    return fn(leafkit, *args), fn(torch, *args)


def tree(t):
    """The graph below ``t`` as nested (node name, children) tuples; AccumulateGrad for every leaf."""

    def walk(fn):
        if fn is None:
            return None
        name = "AccumulateGrad" if fn.name().endswith("AccumulateGrad") else fn.name()
        return (name, tuple(walk(n) for n, _ in fn.next_functions))

    return walk(t.grad_fn)


def saved_names(fn):
    return sorted(a for a in dir(fn) if a.startswith("_saved_"))


def np_(t):
    return None if t is None else t.detach().numpy().copy()


def assert_close(a, b, rtol=1e-5, atol=1e-6):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_close(x, y, rtol, atol)
    elif a is None or b is None:
        assert a is None and b is None
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def error_of(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e).__name__, str(e)
    return None


RNG = np.random.default_rng(20240611)


def arr(*shape, scale=1.0, dtype=np.float32):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


# ============================================================================ Dropout ==========
@pytest.mark.parametrize("how", ["p0", "eval", "empty"])
def test_dropout_off_returns_the_input_itself(how):
    def run(lib):
        x = lib.empty(0, 3, requires_grad=True) if how == "empty" else lib.randn(4, 3, requires_grad=True)
        if how == "eval":
            d = lib.nn.Dropout(0.5).eval()
            y = d(x)
            return y is x, d.training, lib.nn.functional.dropout(x, 0.5, training=False) is x
        y = lib.nn.functional.dropout(x, 0.0 if how == "p0" else 0.5)
        return y is x, y.grad_fn, lib.nn.functional.dropout(x, 0.0, inplace=True) is x

    lk, th = both(run)
    assert lk == th and lk[0] is True


def test_dropout_p1_zeroes_everything_like_pytorch():
    X = arr(3, 4)

    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = lib.nn.functional.dropout(x, 1.0)
        saved = str(y.grad_fn._saved_other)
        (y * 3).sum().backward()
        z = x * 1
        w = lib.nn.functional.dropout(z, 1.0, inplace=True)
        return (tree(y), saved_names(y.grad_fn), saved, str(y.detach()), str(x.grad), w is z, tree(w), z._version)

    lk, th = both(run)
    assert lk == th


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("inplace", [False, True])
def test_dropout_with_pytorchs_mask_injected_matches(monkeypatch, p, inplace):
    """PyTorch draws the mask; leafkit is given the same one: output, graph, saved mask, gradient agree."""
    X, R = arr(6, 5), arr(6, 5)
    torch.manual_seed(3)
    xt = torch.tensor(X, requires_grad=True)
    base_t = xt * 1 if inplace else xt
    yt = torch.nn.functional.dropout(base_t, p, True, inplace)
    mask = yt.grad_fn._saved_other.numpy().copy()
    (yt * torch.tensor(R)).sum().backward()
    monkeypatch.setattr(LO, "_dropout_noise", lambda input, p: leafkit.tensor(mask))
    xl = leafkit.tensor(X, requires_grad=True)
    base_l = xl * 1 if inplace else xl
    yl = leafkit.nn.functional.dropout(base_l, p, True, inplace)
    assert str(yl.grad_fn._saved_other) == str(torch.tensor(mask))
    (yl * leafkit.tensor(R)).sum().backward()
    assert tree(yl) == tree(yt)
    assert saved_names(yl.grad_fn) == saved_names(yt.grad_fn)
    assert (yl is base_l) == (yt is base_t) == inplace
    np.testing.assert_array_equal(np_(yl), np_(yt))
    np.testing.assert_array_equal(xl.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("p", [0.1, 0.25, 0.5, 0.9])
def test_dropout_mask_structure_scale_and_statistics_match_pytorch(p):
    """Both masks hold only 0 and the same float32 1/(1-p); both drop about a fraction p; means are kept."""
    n = 200_000
    leafkit.manual_seed(0)
    torch.manual_seed(0)
    ones_l = leafkit.ones(n)
    ones_t = torch.ones(n)
    ml = leafkit.nn.functional.dropout(ones_l, p).numpy()
    mt = torch.nn.functional.dropout(ones_t, p).numpy()
    assert ml.dtype == mt.dtype == np.float32
    assert set(np.unique(ml).tolist()) == set(np.unique(mt).tolist())  # {0.0, 1/(1-p) in float32}
    tol = 5 * np.sqrt(p * (1 - p) / n)  # five standard errors
    for m in (ml, mt):
        assert abs((m == 0).mean() - p) < tol
        assert abs(m.mean() - 1.0) < 5 * np.sqrt(p / (1 - p) / n)


def test_dropout_errors_and_reprs_match_pytorch():
    calls = {
        "F_negative": lambda lib: lib.nn.functional.dropout(lib.randn(3), -0.1),
        "F_above_one": lambda lib: lib.nn.functional.dropout(lib.randn(3), 1.5),
        "module_negative": lambda lib: lib.nn.Dropout(-0.5),
        "module_above_one": lambda lib: lib.nn.Dropout(2),
        "integer_input": lambda lib: lib.nn.functional.dropout(lib.arange(6), 0.5),
        "inplace_leaf": lambda lib: lib.nn.functional.dropout(lib.randn(3, requires_grad=True), 0.5, inplace=True),
    }
    for name, call in calls.items():
        lk, th = both(lambda lib, call=call: error_of(lambda: call(lib)))
        assert lk == th and th is not None, name

    def reprs(lib):
        nn = lib.nn
        return [
            repr(nn.Dropout()),
            repr(nn.Dropout(0.2, inplace=True)),
            repr(nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))),
            list(nn.Dropout().state_dict()),
            list(nn.Dropout().parameters()),
        ]

    assert both(reprs)[0] == both(reprs)[1]


def test_dropout_integer_input_passes_through_when_off():
    def run(lib):
        x = lib.arange(6)
        return [str(lib.nn.functional.dropout(x, p, training=t)) for p, t in ((0.0, True), (0.5, False), (1.0, True))]

    lk, th = both(run)
    assert lk == th


# ========================================================================= BatchNorm1d ==========
def _bn_state(X, seed=0):
    rng = np.random.default_rng(seed)
    c = X.shape[1]
    return {"weight": rng.uniform(0.5, 2, c).astype(X.dtype), "bias": rng.standard_normal(c).astype(X.dtype)}


def _load(lib, module, state):
    module.load_state_dict({k: lib.tensor(v) for k, v in state.items()}, strict=False)
    return module


BN_CONFIGS = {
    "default": {},
    "momentum_none": {"momentum": None},
    "momentum_half": {"momentum": 0.5},
    "eps": {"eps": 1e-2},
    "no_affine": {"affine": False},
    "no_bias": {"bias": False},
    "no_running_stats": {"track_running_stats": False},
    "bare": {"affine": False, "track_running_stats": False},
}


@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5)])
@pytest.mark.parametrize("config", sorted(BN_CONFIGS))
def test_batchnorm1d_train_steps_then_eval_match_pytorch(shape, config):
    """Same weights: outputs, gradients, buffers after each of three training steps, then evaluation."""
    kw = BN_CONFIGS[config]
    xs = [arr(*shape, scale=s) + s for s in (1.0, 2.0, 0.5)]
    R = arr(*shape)
    state = _bn_state(xs[0])

    def run(lib):
        bn = lib.nn.BatchNorm1d(3, **kw)
        if bn.affine:
            _load(lib, bn, {k: v for k, v in state.items() if getattr(bn, k) is not None})
        out = []
        for X in xs + [xs[0]]:
            if X is xs[0] and out:
                bn.eval()
            bn.zero_grad()
            x = lib.tensor(X, requires_grad=True)
            y = bn(x)
            graph = (
                tree(y),
                saved_names(y.grad_fn),
                y.grad_fn._saved_training,
                y.grad_fn._saved_eps,
                tuple(y.grad_fn._saved_result1.shape),
                tuple(y.grad_fn._saved_result2.shape),
                y.grad_fn._saved_running_mean is bn.running_mean,
                bn.training,
            )
            (y * lib.tensor(R)).sum().backward()
            out.append(
                (
                    np_(y),
                    x.grad.numpy(),
                    [p.grad.numpy() for p in bn.parameters()],
                    [np_(b) for b in bn.buffers()],
                    *graph,
                )
            )
        return out

    lk, th = both(run)
    for a, b in zip(lk, th):
        assert_close(list(a[:4]), list(b[:4]), rtol=1e-5, atol=1e-5)
        assert a[4:] == b[4:]


def test_batchnorm1d_parameters_buffers_state_dict_and_repr_match_pytorch():
    def run(lib):
        nn = lib.nn
        out = []
        for kw in BN_CONFIGS.values():
            bn = nn.BatchNorm1d(4, **kw)
            out.append(
                (
                    repr(bn),
                    [(k, tuple(p.shape), p.requires_grad, p.is_leaf) for k, p in bn.named_parameters()],
                    [(k, tuple(b.shape), str(b.dtype), b.requires_grad) for k, b in bn.named_buffers()],
                    list(bn.state_dict()),
                    [str(v) for v in bn.state_dict().values()],
                    [b._version for b in bn.buffers()],
                )
            )
        model = nn.Sequential(nn.Linear(2, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Dropout(0.2), nn.Linear(4, 1))
        out.append(
            (
                repr(model),
                list(model.state_dict()),
                [k for k, _ in model.named_parameters()],
                [k for k, _ in model.named_buffers()],
            )
        )
        d = nn.BatchNorm1d(2).double()
        out.append([str(t.dtype) for t in d.state_dict().values()])
        return out

    lk, th = both(run)
    assert lk == th


def test_train_eval_switch_in_a_model_matches_pytorch(monkeypatch):
    """A model with Dropout and BatchNorm1d, same weights and PyTorch's masks: training steps with SGD, then eval."""
    xs = [arr(16, 5) for _ in range(3)]
    ys = [arr(16, 1) for _ in range(3)]

    def build(lib):
        nn = lib.nn
        lib.manual_seed(0)
        return nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 1))

    state = {k: v.detach().numpy().copy() for k, v in build(torch).state_dict().items()}
    masks = []

    def run(lib):
        model = build(lib)
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        if lib is torch:
            model[3].register_forward_hook(
                lambda m, a, out: masks.append(out.grad_fn._saved_other.numpy().copy()) if m.training else None
            )
        else:
            pending = list(masks)
            monkeypatch.setattr(LO, "_dropout_noise", lambda input, p: leafkit.tensor(pending.pop(0)))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        out = []
        for x, y in zip(xs, ys):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            out.append(loss.item())
        flags = [m.training for m in model.modules()]
        model.eval()
        flags += [m.training for m in model.modules()]
        with lib.no_grad():
            pred = model(lib.tensor(xs[0]))
            one = model(lib.tensor(xs[0][:1]))  # one sample works in eval
        model.train()
        flags += [m.training for m in model.modules()]
        return out, flags, np_(pred), np_(one), {k: np_(v) for k, v in model.state_dict().items()}

    th = run(torch)
    lk = run(leafkit)
    assert_close(lk[0], th[0], rtol=1e-5)
    assert lk[1] == th[1]
    assert_close(lk[2], th[2], rtol=1e-4, atol=1e-5)
    assert_close(lk[3], th[3], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(lk[3], lk[2][:1], rtol=1e-6)  # the eval output of a sample does not depend on the batch
    assert list(lk[4]) == list(th[4])
    for k in th[4]:
        assert_close(lk[4][k], th[4][k], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (3, 3, 4)])
def test_batch_norm_double_backward_matches_pytorch(training, affine, shape):
    """Second derivatives through NativeBatchNormBackwardBackward0, with respect to input, weight, bias and the
    incoming gradient, in float64 (PyTorch's gradgradcheck passes for these calls too)."""
    X, R = arr(*shape, dtype=np.float64), arr(*shape, dtype=np.float64)
    W, B = np.array([0.5, 2.0, -1.5]), np.array([0.1, -0.2, 0.3])
    RM, RV = np.array([0.2, -0.1, 0.4]), np.array([1.5, 0.5, 2.0])

    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(W, requires_grad=True) if affine else None
        b = lib.tensor(B, requires_grad=True) if affine else None
        r = lib.tensor(R, requires_grad=True)  # the incoming gradient, differentiated too
        y = lib.nn.functional.batch_norm(x, lib.tensor(RM), lib.tensor(RV), w, b, training=training)
        inputs = (x, w, b) if affine else (x,)
        grads = lib.autograd.grad((y * r).sum() + (y**2).sum(), inputs, create_graph=True)
        names = [g.grad_fn.name() for g in grads]
        s = sum(((g * g).sum() * (k + 1) for k, g in enumerate(grads)), (grads[0] * 0).sum())
        second = lib.autograd.grad(s, inputs + (r,), allow_unused=True)
        return names, tree(grads[0]), [np_(g) for g in grads], [np_(g) for g in second]

    lk, th = both(run)
    assert lk[0] == th[0] and set(lk[0]) == {"NativeBatchNormBackwardBackward0"}
    assert_close(lk[2], th[2], rtol=1e-9, atol=1e-10)
    assert_close(lk[3], th[3], rtol=1e-8, atol=1e-10)


def test_batchnorm_buffers_keep_their_version_across_forwards_like_pytorch():
    """Two training forwards then one backward work (the running-stat update bumps no version); changing a
    buffer yourself in place makes backward through the old graph fail with PyTorch's message."""
    X1, X2 = arr(4, 3), arr(4, 3)

    def run(lib):
        bn = lib.nn.BatchNorm1d(3)
        x1 = lib.tensor(X1, requires_grad=True)
        versions = [bn.running_mean._version, bn.running_var._version, bn.num_batches_tracked._version]
        y1 = bn(x1)
        y2 = bn(lib.tensor(X2))
        versions += [bn.running_mean._version, bn.running_var._version, bn.num_batches_tracked._version]
        (y1.sum() + (y2 * y2).sum()).backward()
        out = [versions, np_(x1.grad)]
        for mode in ("train", "eval"):
            getattr(bn, mode)()
            y = bn(x1)
            with lib.no_grad():
                bn.running_var.mul_(2)
            out.append(error_of(y.sum().backward))
        return out

    lk, th = both(run)
    assert lk[0] == th[0]
    assert_close(lk[1], th[1], atol=1e-5)
    assert lk[2:] == th[2:] and th[2] is not None


def test_batchnorm_updates_running_stats_under_no_grad_and_inference_mode():
    X = arr(6, 2)

    def run(lib):
        bn = lib.nn.BatchNorm1d(2)
        with lib.no_grad():
            a = bn(lib.tensor(X))
        with lib.inference_mode():
            b = bn(lib.tensor(X) * 2)
        return (
            np_(a),
            np_(b),
            np_(bn.running_mean),
            np_(bn.running_var),
            int(bn.num_batches_tracked),
            bn.running_mean.is_inference(),
            a.requires_grad,
        )

    lk, th = both(run)
    assert_close(list(lk[:4]), list(th[:4]))
    assert lk[4:] == th[4:]


BN_ERRORS = {
    "one_value_2d": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(1, 3)),
    "one_value_3d": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(1, 3, 1)),
    "wrong_channels": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(4, 5)),
    "input_1d": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(3)),
    "input_4d": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 3, 4, 5)),
    "F_1d": lambda lib: lib.nn.functional.batch_norm(lib.randn(3), None, None, training=True),
    "F_eval_without_stats": lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 3), None, None),
    "F_eval_without_var": lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 3), lib.zeros(3), None),
    "F_running_var_size": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(4, 3), lib.zeros(3), lib.ones(2), training=True
    ),
    "F_weight_size": lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 3), None, None, lib.ones(2), training=True),
    "F_bias_size": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(4, 3), None, None, None, lib.ones(4), training=True
    ),
    "F_eps_zero_training": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(4, 3), None, None, training=True, eps=0.0
    ),
    "F_eps_negative_eval": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(4, 3), lib.zeros(3), lib.ones(3), eps=-1.0
    ),
    "F_mixed_float_double": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(4, 3), lib.zeros(3).double(), lib.ones(3).double(), training=True
    ),
    "F_mixed_double_float": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(4, 3).double(), lib.zeros(3), lib.ones(3), training=True
    ),
    "F_long_input": lambda lib: lib.nn.functional.batch_norm(lib.arange(12).view(4, 3), None, None, training=True),
}


@pytest.mark.parametrize("name", sorted(BN_ERRORS))
def test_batchnorm_errors_match_pytorch(name):
    lk, th = both(lambda lib: error_of(lambda: BN_ERRORS[name](lib)))
    assert th is not None and lk == th


def test_batch_norm_empty_batch_matches_pytorch():
    def run(lib):
        x = lib.zeros(0, 3, requires_grad=True)
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.nn.functional.batch_norm(x, lib.zeros(3), lib.ones(3), w, None, training=True)
        return tuple(y.shape), tree(y)

    lk, th = both(run)
    assert lk == th


# ============================================================================= RNNCell ==========
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("hx", ["none", "given", "requires_grad"])
def test_rnncell_unrolled_matches_pytorch(nonlinearity, bias, batched, hx):
    """Same weights, five steps: every hidden state, the graph of the last one, and every gradient."""
    W = {"weight_ih": arr(4, 3), "weight_hh": arr(4, 4, scale=0.5), "bias_ih": arr(4), "bias_hh": arr(4)}
    xs = arr(5, 2, 3)
    H0 = arr(2, 4)

    def run(lib):
        cell = lib.nn.RNNCell(3, 4, bias=bias, nonlinearity=nonlinearity)
        _load(lib, cell, {k: v for k, v in W.items() if bias or not k.startswith("bias")})
        h0 = None if hx == "none" else lib.tensor(H0 if batched else H0[0], requires_grad=hx == "requires_grad")
        h, loss, states = h0, 0.0, []
        for t in range(5):
            h = cell(lib.tensor(xs[t] if batched else xs[t, 0]), h)
            states.append(np_(h))
            loss = loss + (h * h).sum() * (t + 1)
        first = tree(cell(lib.tensor(xs[0] if batched else xs[0, 0]), h0))
        loss.backward()
        return (
            states,
            [p.grad.numpy() for p in cell.parameters()],
            None if h0 is None or h0.grad is None else h0.grad.numpy(),
            first,
            tuple(h.shape),
            [k for k, _ in cell.named_parameters()],
        )

    lk, th = both(run)
    assert_close(lk[:3], th[:3], rtol=1e-4, atol=1e-5)
    assert lk[3:] == th[3:]


def test_rnncell_truncated_bptt_needs_detach_like_pytorch():
    """Chunks of a sequence: without ``h.detach()`` the second chunk's backward reaches the first chunk's freed
    graph (PyTorch's error); with it, each chunk's gradients are its own."""
    W = {"weight_ih": arr(4, 2), "weight_hh": arr(4, 4, scale=0.5), "bias_ih": arr(4), "bias_hh": arr(4)}
    seq = arr(6, 3, 2)

    def run(lib, detach):
        cell = _load(lib, lib.nn.RNNCell(2, 4), W)
        h = lib.zeros(3, 4)
        grads = []
        for chunk in (seq[:3], seq[3:]):
            if detach:
                h = h.detach()
            cell.zero_grad()
            for x in chunk:
                h = cell(lib.tensor(x), h)
            err = error_of(h.sum().backward)
            if err:
                return err
            grads.append(cell.weight_hh.grad.numpy().copy())
        return grads

    lk, th = both(run, False)
    assert th is not None and lk == th and "second time" in th[1]
    lk, th = both(run, True)
    assert_close(lk, th, rtol=1e-4, atol=1e-5)


def test_rnncell_errors_and_reprs_match_pytorch():
    calls = {
        "input_size": lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 5)),
        "hidden_size": lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 3), lib.randn(2, 5)),
        "batch": lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 3), lib.randn(3, 4)),
        "input_3d": lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(1, 2, 3)),
        "hidden_3d": lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 3), lib.randn(1, 2, 4)),
        "unbatched_input_batched_hidden": lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(3), lib.randn(2, 4)),
        "batched_input_unbatched_hidden": lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 3), lib.randn(4)),
        "nonlinearity": lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="sigmoid")(lib.randn(2, 3)),
    }
    for name, call in calls.items():
        lk, th = both(lambda lib, call=call: error_of(lambda: call(lib)))
        assert lk == th and th is not None, name

    def reprs(lib):
        nn = lib.nn
        cells = [
            nn.RNNCell(3, 4),
            nn.RNNCell(3, 4, bias=False),
            nn.RNNCell(3, 4, nonlinearity="relu"),
            nn.RNNCell(3, 4, False, "relu"),
        ]
        return (
            [repr(c) for c in cells],
            [list(c.state_dict()) for c in cells],
            [[tuple(p.shape) for p in c.parameters()] for c in cells],
        )

    lk, th = both(reprs)
    assert lk == th


# ================================================================== BCEWithLogitsLoss ==========
BCE_KW = {
    "plain": {},
    "weight": {"weight": (3,)},
    "weight_rows": {"weight": (4, 1)},
    "pos_weight": {"pos_weight": (3,)},
    "both": {"weight": (1, 3), "pos_weight": (3,)},
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", sorted(BCE_KW))
def test_bce_with_logits_values_gradients_and_second_derivatives_match_pytorch(reduction, kw):
    X = arr(4, 3, scale=3, dtype=np.float64)
    T = RNG.random((4, 3))
    extra = {k: RNG.random(s) * 2 for k, s in BCE_KW[kw].items()}

    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        t = lib.tensor(T, requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(
            x, t, reduction=reduction, **{k: lib.tensor(v) for k, v in extra.items()}
        )
        gx, gt = lib.autograd.grad((loss * 1.5).sum(), (x, t), create_graph=True)
        hx, ht = lib.autograd.grad((gx * gx).sum() + (gt * gx).sum(), (x, t))
        module = lib.nn.BCEWithLogitsLoss(reduction=reduction, **{k: lib.tensor(v) for k, v in extra.items()})
        return (
            [np_(loss), np_(gx), np_(gt), np_(hx), np_(ht), np_(module(x, t))],
            (
                tree(loss),
                saved_names(loss.grad_fn),
                loss.grad_fn._saved_reduction,
                gx.grad_fn.name(),
                list(module.state_dict()),
                repr(module),
            ),
        )

    lk, th = both(run)
    assert_close(lk[0], th[0], rtol=1e-9, atol=1e-12)
    assert lk[1] == th[1]


def test_bce_with_logits_is_stable_for_huge_logits_like_pytorch():
    def run(lib):
        x = lib.tensor([1e4, -1e4, 3e4, -50.0, 0.0], requires_grad=True)
        t = lib.tensor([0.0, 1.0, 1.0, 0.0, 0.5])
        loss = lib.nn.BCEWithLogitsLoss(reduction="sum")(x, t)
        loss.backward()
        return str(loss.detach()), str(x.grad)

    lk, th = both(run)
    assert lk == th


def test_bce_with_logits_errors_match_pytorch():
    calls = {
        "target_size": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(lib.randn(4, 3), lib.rand(2, 3)),
        "reduction": lambda lib: lib.nn.BCEWithLogitsLoss(reduction="avg")(lib.randn(4, 3), lib.rand(4, 3)),
        "weight_shape": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
            lib.randn(4, 3), lib.rand(4, 3), weight=lib.rand(2)
        ),
        "pos_weight_shape": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
            lib.randn(4, 3), lib.rand(4, 3), pos_weight=lib.rand(2)
        ),
        "weight_bigger": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
            lib.randn(4, 3), lib.rand(4, 3), weight=lib.rand(5, 4, 3)
        ),
        "pos_weight_bigger": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
            lib.randn(4, 3), lib.rand(4, 3), pos_weight=lib.rand(5, 4, 3)
        ),
        "weight_requires_grad": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
            lib.randn(4, 3, requires_grad=True), lib.rand(4, 3), weight=lib.rand(3, requires_grad=True)
        ),
        "pos_weight_requires_grad": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
            lib.randn(4, 3, requires_grad=True), lib.rand(4, 3), pos_weight=lib.rand(3, requires_grad=True)
        ),
        "long_target": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
            lib.randn(4, 3), lib.ones(4, 3, dtype=lib.long)
        ),
    }
    for name, call in calls.items():
        lk, th = both(lambda lib, call=call: error_of(lambda: call(lib)))
        assert lk == th and th is not None, name


def test_bce_with_logits_legacy_arguments_warn_like_pytorch():
    def run(lib):
        x, t = lib.tensor([[0.5, -1.0]]), lib.tensor([[1.0, 0.0]])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = lib.nn.BCEWithLogitsLoss(size_average=False)(x, t)
            b = lib.nn.functional.binary_cross_entropy_with_logits(x, t, reduce=False)
            reduction = lib.nn.BCEWithLogitsLoss(size_average=False).reduction
        return [str(m.message) for m in w], str(a), str(b), reduction

    lk, th = both(run)
    assert lk == th


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 5),
    c=st.integers(1, 4),
    length=st.sampled_from([None, 1, 3]),
    training=st.booleans(),
    affine=st.booleans(),
    momentum=st.sampled_from([0.0, 0.1, 1.0]),
    seed=st.integers(0, 2**16),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_batch_norm_random_shapes_match_pytorch(n, c, length, training, affine, momentum, seed, dtype):
    """Random (N, C[, L]) batches: output, input/weight/bias gradients and running statistics agree."""
    shape = (n, c) if length is None else (n, c, length)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape) * rng.uniform(0.1, 10) + rng.uniform(-5, 5)
    G = rng.standard_normal(shape)
    W, B = rng.standard_normal(c), rng.standard_normal(c)
    RM, RV = rng.standard_normal(c), rng.uniform(0.1, 3, c)

    def run(lib):
        dt = getattr(lib, dtype)
        x = lib.tensor(X, dtype=dt, requires_grad=True)
        w = lib.tensor(W, dtype=dt, requires_grad=True) if affine else None
        b = lib.tensor(B, dtype=dt, requires_grad=True) if affine else None
        rm, rv = lib.tensor(RM, dtype=dt), lib.tensor(RV, dtype=dt)
        err = error_of(lambda: lib.nn.functional.batch_norm(x, rm, rv, w, b, training, momentum))
        if err:
            return err
        rm, rv = lib.tensor(RM, dtype=dt), lib.tensor(RV, dtype=dt)
        y = lib.nn.functional.batch_norm(x, rm, rv, w, b, training, momentum)
        (y * lib.tensor(G, dtype=dt)).sum().backward()
        return [np_(y), np_(x.grad), np_(rm), np_(rv)] + ([np_(w.grad), np_(b.grad)] if affine else [])

    lk, th = both(run)
    if isinstance(th, tuple):
        assert lk == th  # one value per channel in training: the same ValueError
        return
    tol = 1e-4 if dtype == "float32" else 1e-9
    assert_close(lk, th, rtol=tol, atol=tol)
