"""nn and nn.functional next to real PyTorch: same graphs, values, gradients, reprs and errors.

Skipped when torch is not installed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def tree(t):
    def walk(fn):
        name = "AccumulateGrad" if fn.name().endswith("AccumulateGrad") else fn.name()
        return (name, tuple(walk(n) if n is not None else None for n, _ in fn.next_functions))

    return walk(t.grad_fn)


def both(fn):
    """Run ``fn(lib)`` on leafkit and on torch."""
    return fn(leafkit), fn(torch)


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((5, 4)).astype(np.float32),
        "W": rng.standard_normal((3, 4)).astype(np.float32),
        "b": rng.standard_normal(3).astype(np.float32),
        "t": rng.integers(0, 3, 5).astype(np.int64),
        "y": rng.standard_normal((5, 3)).astype(np.float32),
    }


def _prog(name):
    a = _arrays()

    def run(lib):
        F = lib.nn.functional
        x = lib.tensor(a["x"], requires_grad=True)
        W = lib.tensor(a["W"], requires_grad=True)
        b = lib.tensor(a["b"], requires_grad=True)
        t = lib.from_numpy(a["t"].copy())
        z = F.linear(x, W, b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = {
                "cross_entropy": lambda: F.cross_entropy(z, t),
                "cross_entropy_sum": lambda: F.cross_entropy(z, t, reduction="sum"),
                "cross_entropy_weight": lambda: F.cross_entropy(z, t, weight=lib.tensor([0.5, 1.0, 2.0])),
                "cross_entropy_ignore": lambda: F.cross_entropy(z, lib.tensor([0, -100, 2, 1, -100])),
                "nll_none": lambda: F.nll_loss(F.log_softmax(z, 1), t, reduction="none").sum(),
                "mse": lambda: F.mse_loss(z, lib.from_numpy(a["y"].copy())),
                "mse_broadcast": lambda: F.mse_loss(z, lib.tensor(a["y"][:, :1].copy(), requires_grad=True)),
                "softmax_tanh_sigmoid": lambda: (F.softmax(F.tanh(z), 1) * F.sigmoid(z)).sum(),
                "relu_mlp": lambda: F.linear(F.relu(z), lib.tensor(a["W"][:, :3].copy(), requires_grad=True)).sum(),
                "linear_nobias_3d": lambda: F.linear(x.view(5, 2, 2).transpose(0, 1), W[:, :2]).sum() + b.sum(),
                "linear_bias_3d_noncontiguous": lambda: F.linear(x.view(5, 2, 2).transpose(0, 1), W[:, :2], b).sum(),
            }[name]()
        out.backward()
        return tree(out), out.item(), x.grad.numpy(), W.grad.numpy(), b.grad.numpy()

    return run


@pytest.mark.parametrize(
    "name",
    [
        "cross_entropy",
        "cross_entropy_sum",
        "cross_entropy_weight",
        "cross_entropy_ignore",
        "nll_none",
        "mse",
        "mse_broadcast",
        "softmax_tanh_sigmoid",
        "relu_mlp",
        "linear_nobias_3d",
        "linear_bias_3d_noncontiguous",
    ],
)
def test_functional_graph_values_and_grads(name):
    (lt, lv, *lg), (tt, tv, *tg) = both(_prog(name))
    assert lt == tt
    assert lv == pytest.approx(tv, rel=1e-5, abs=1e-6)
    for g, w in zip(lg, tg):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


def test_cross_entropy_huge_logits_same_as_pytorch():
    def run(lib):
        x = lib.tensor([[1e4, 0.0, -1e4], [3e4, 3e4, 0.0]], requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor([2, 0]))
        loss.backward()
        return loss.item(), x.grad.tolist()

    (lv, lg), (tv, tg) = both(run)
    assert lv == pytest.approx(tv) and np.allclose(lg, tg)


ERROR_CALLS = {
    "target_float": lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0.0, 1, 2, 0])),
    "target_int32": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2, 0], dtype=lib.int32)),
    "target_oob": lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 1, 5, 0])),
    "target_negative": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, -3, 0])),
    "batch_mismatch": lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 1, 2])),
    "bad_reduction": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2, 0]), reduction="foo"),
    "weight_too_short": lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 1, 0, 1]), lib.ones(2)),
    "weight_too_long": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 0, 1]), lib.ones(4)),
    "weight_2d": lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 1, 0, 1]), lib.ones(3, 1)),
    "weight_double": lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 1, 0, 1]), lib.ones(3).double()),
    "mse_shapes": lambda lib, x: lib.nn.functional.mse_loss(x, lib.zeros(5, 3)),
    "linear_shapes": lambda lib, x: lib.nn.functional.linear(x, lib.zeros(2, 4)),
    "linear_bias": lambda lib, x: lib.nn.functional.linear(x, lib.zeros(2, 3), lib.zeros(3)),
    "linear_0d": lambda lib, x: lib.nn.functional.linear(lib.tensor(1.0), lib.zeros(2, 3)),
    "train_mode": lambda lib, x: lib.nn.Linear(2, 2).train("x"),
    "setattr_module": lambda lib, x: setattr(lib.nn.Sequential(lib.nn.ReLU()), "0", 3),
    "setattr_param": lambda lib, x: setattr(lib.nn.Linear(2, 2), "weight", lib.zeros(2, 2)),
    "no_attr": lambda lib, x: lib.nn.Linear(2, 2).nothing,
    "seq_index": lambda lib, x: lib.nn.Sequential(lib.nn.ReLU())[3],
    "param_list": lambda lib, x: lib.nn.Parameter([1.0]),
    "linear_float_in": lambda lib, x: lib.nn.Linear(2.5, 3),
    "linear_float_out": lambda lib, x: lib.nn.Linear(2, 3.5),
    "module_args": lambda lib, x: lib.nn.Module(3),
    "module_kwargs": lambda lib, x: lib.nn.Module(a=3),
    "sequential_int": lambda lib, x: lib.nn.Sequential(3),
    "buffer_int": lambda lib, x: lib.nn.Linear(2, 2).register_buffer("b", 3),
    "param_name_dot": lambda lib, x: lib.nn.Linear(2, 2).register_parameter("a.b", None),
    "load_state_dict_list": lambda lib, x: lib.nn.Linear(2, 2).load_state_dict([1]),
    "linear_dtype_bias": lambda lib, x: lib.nn.functional.linear(x.double(), lib.zeros(2, 3), lib.zeros(2)),
    "linear_dtype_nobias": lambda lib, x: lib.nn.functional.linear(lib.tensor([[1, 2, 3]]), lib.zeros(2, 3)),
    "mse_long": lambda lib, x: lib.nn.functional.mse_loss(lib.tensor([1, 2]), lib.tensor([1, 2])),
    "relu_inplace_leaf": lambda lib, x: lib.nn.functional.relu(x, inplace=True),
    "softmax_bad_dim": lambda lib, x: lib.nn.functional.softmax(x, dim=2),
}


@pytest.mark.parametrize("name", sorted(ERROR_CALLS))
def test_errors_same_class_and_message(name):
    def run(lib):
        x = lib.randn(4, 3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ERROR_CALLS[name](lib, x)
            except Exception as e:  # noqa: BLE001 - comparing what each library raises
                return type(e).__name__, str(e)
        return None, None

    (lc, lm), (tc, tm) = both(run)
    assert lc == tc and tc is not None
    assert lm == tm


def test_reprs_same_as_pytorch():
    def run(lib):
        nn = lib.nn
        m = nn.Sequential(
            nn.Linear(64, 128),
            nn.ReLU(),
            nn.Linear(128, 10, bias=False),
            nn.Tanh(),
            nn.Sigmoid(),
            nn.ReLU(inplace=True),
        )
        p = nn.Parameter(lib.tensor([1.0, 2.0]))
        q = nn.Parameter(lib.tensor([[1.5], [-2.0]]), requires_grad=False)
        return repr(m), repr(p), repr(q), repr(m[0:2]), [k for k, _ in m.named_parameters()]

    lk, tr = both(run)
    assert lk == tr


def test_state_dict_errors_same_as_pytorch():
    def run(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
                self.out = nn.Linear(2, 1)

            def forward(self, x):
                return self.out(self.fc(x))

        n = Net()
        msgs = []
        for sd in (
            {"fc.weight": lib.zeros(2, 2)},
            {
                "fc.weight": lib.zeros(3, 2),
                "fc.bias": lib.zeros(2),
                "out.weight": lib.zeros(1, 2),
                "out.bias": lib.zeros(1),
                "extra": lib.zeros(1),
            },
        ):
            try:
                n.load_state_dict(sd)
            except RuntimeError as e:
                msgs.append(str(e))
        msgs.append(repr(n.load_state_dict(n.state_dict())))
        msgs.append(repr(n.load_state_dict({"fc.weight": lib.zeros(2, 2)}, strict=False)))
        msgs.append(list(n.state_dict()))
        return msgs

    lk, tr = both(run)
    assert lk == tr


def _nll_cases(n_cases=300, seed=0):
    """Random nll_loss calls with nan/inf/0 entries, ignored rows, weights (zeros included), every reduction."""
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        c = int(rng.integers(1, 4))
        unbatched = rng.random() < 0.2
        shape = (c,) if unbatched else (int(rng.integers(0, 5)), c)
        x = rng.standard_normal(shape) * rng.choice([1, 10])
        m = rng.random(shape)
        x[m < 0.1] = np.nan
        x[(m > 0.1) & (m < 0.15)] = np.inf
        x[(m > 0.15) & (m < 0.2)] = -np.inf
        x[(m > 0.2) & (m < 0.25)] = 0
        ignore = int(rng.choice([-100, 0, 1]))
        n_t = 1 if unbatched else shape[0]
        t = rng.integers(0, c, n_t)
        t[rng.random(n_t) < 0.4] = ignore
        w = None if rng.random() < 0.5 else rng.choice([0.0, 1.0, 2.5], c)
        yield (
            x,
            t.reshape(()) if unbatched else t,
            w,
            str(rng.choice(["none", "sum", "mean"])),
            ignore,
            str(rng.choice(["float32", "float64"])),
        )


def test_nll_loss_ignored_rows_nan_inf_and_zero_weights_same_as_pytorch():
    """Loss, gradient, the sign of every zero and the printed text agree, and leafkit warns nothing."""

    def run(lib, x, t, w, reduction, ignore, dt):
        dtype = getattr(lib, dt)
        X = lib.tensor(x, dtype=dtype, requires_grad=True)
        W = None if w is None else lib.tensor(w, dtype=dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the loss itself warns nothing (the sum below may, in NumPy)
            loss = lib.nn.functional.nll_loss(X, lib.tensor(t), weight=W, reduction=reduction, ignore_index=ignore)
            g = lib.ones_like(loss)
            loss.backward(g)
        return loss.detach().numpy().copy(), X.grad.numpy().copy(), str(loss.detach()), str(X.grad)

    for case in _nll_cases():
        lk = run(leafkit, *case)
        tr = run(torch, *case)
        for a, b in zip(lk[:2], tr[:2]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=repr(case))
            assert (np.signbit(a[a == 0]) == np.signbit(b[b == 0])).all(), case
        assert lk[3] == tr[3], case


def test_mse_loss_zeros_signs_and_empty_same_as_pytorch():
    def run(lib):
        a = lib.tensor([1.0, 2.0, float("inf")], requires_grad=True)
        b = lib.tensor([1.0, 3.0, float("inf")], requires_grad=True)
        out = []
        for reduction in ("mean", "sum", "none"):
            a.grad = b.grad = None
            loss = lib.nn.functional.mse_loss(a, b, reduction=reduction)
            loss.sum().backward()
            out += [str(loss.detach()), str(a.grad), str(b.grad)]
        out.append(str(lib.nn.functional.mse_loss(lib.tensor([]), lib.tensor([]))))
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lk = run(leafkit)
    assert lk == run(torch)
