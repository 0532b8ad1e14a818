"""``torch.nn.utils`` next to real PyTorch: gradient clipping and parameter vectors.

Each program builds parameters with given gradients on both libraries, calls
the utility and compares the returned norm (value, dtype, requires_grad),
the gradients afterwards (values and ``_version``), and errors and warnings.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def both(fn, *args):
    return fn(leafkit, *args), fn(torch, *args)


def params(lib, grads, dtype="float32"):
    """Parameters with the given gradients (None: no gradient)."""
    out = []
    for g in grads:
        p = lib.nn.Parameter(lib.zeros(len(g) if g is not None else 2, dtype=getattr(lib, dtype)))
        if g is not None:
            p.grad = lib.tensor(g, dtype=getattr(lib, dtype))
        out.append(p)
    return out


def state(ps):
    return [None if p.grad is None else (p.grad.tolist(), p.grad._version) for p in ps]


def outcome(call):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            r = call()
            res = ("ok", None if r is None else (r.tolist(), str(r.dtype), r.requires_grad, r.grad_fn, tuple(r.shape)))
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            res = (type(e).__name__, str(e))
    return res, [(w.category.__name__, str(w.message)) for w in ws]


def close(a, b):
    """Nested results equal, floats to 1e-6 (norms are float32 sums), nan equal to nan."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-6, abs=1e-7)
    return a == b


NORM_CASES = {
    "l2_clipped": ([[3.0, 4.0], [0.0, 0.0], None], dict(max_norm=1.0)),
    "l2_small_enough": ([[3.0, 4.0]], dict(max_norm=10.0)),
    "l2_exactly": ([[3.0, 4.0]], dict(max_norm=5.0)),
    "inf_string": ([[3.0, -4.0], [1.0, 2.0]], dict(max_norm=1.0, norm_type="inf")),
    "inf_float": ([[3.0, -4.0], [1.0, 2.0]], dict(max_norm=1.0, norm_type=math.inf)),
    "minus_inf": ([[3.0, -4.0], [-5.0, 6.0]], dict(max_norm=1.0, norm_type=-math.inf)),
    "l1": ([[3.0, -4.0], [0.5, 0.5]], dict(max_norm=1.0, norm_type=1)),
    "l0": ([[3.0, -4.0], [0.0, 0.0]], dict(max_norm=1.0, norm_type=0)),
    "half_norm": ([[3.0, -4.0]], dict(max_norm=1.0, norm_type=0.5)),
    "three": ([[3.0, -4.0], [1.0]], dict(max_norm=2.0, norm_type=3.0)),
    "string_two": ([[3.0, -4.0]], dict(max_norm=1.0, norm_type="2")),
    "fro": ([[3.0, -4.0]], dict(max_norm=1.0, norm_type="fro")),
    "nan": ([[3.0, math.nan]], dict(max_norm=1.0)),
    "nan_error": ([[3.0, math.nan], [1.0, 1.0]], dict(max_norm=1.0, error_if_nonfinite=True)),
    "inf_error": ([[3.0, math.inf]], dict(max_norm=1.0, norm_type="inf", error_if_nonfinite=True)),
    "inf_no_error": ([[3.0, math.inf]], dict(max_norm=1.0)),
    "all_none": ([None, None], dict(max_norm=1.0)),
    "empty": ([], dict(max_norm=1.0)),
    "foreach_true": ([[3.0, -4.0]], dict(max_norm=1.0, foreach=True)),
    "foreach_false": ([[3.0, -4.0]], dict(max_norm=1.0, foreach=False)),
    "negative_max": ([[3.0, -4.0]], dict(max_norm=-1.0)),
    "max_norm_tensor": ([[3.0, -4.0]], dict(max_norm="tensor")),
    "max_norm_string": ([[3.0, -4.0]], dict(max_norm="a")),
    "slightly_below": ([[3.0, -4.0]], dict(max_norm=5.0 - 1e-5)),
    "zeros": ([[0.0, 0.0]], dict(max_norm=1.0)),
}


@pytest.mark.parametrize(
    "name,form",
    [
        (n, f)
        for n in sorted(NORM_CASES)
        for f in ("list", "generator", "single")
        if f != "single" or len(NORM_CASES[n][0]) == 1
    ],
)
def test_clip_grad_norm_matches_pytorch(name, form):
    grads, kw = NORM_CASES[name]

    def run(lib):
        ps = params(lib, grads)
        kwargs = dict(kw)
        if kwargs.get("max_norm") == "tensor":
            kwargs["max_norm"] = lib.tensor(1.0)
        arg = {"list": ps, "generator": (p for p in ps), "single": ps[0] if ps else None}[form]
        res = outcome(lambda: lib.nn.utils.clip_grad_norm_(arg, **kwargs))
        return res, state(ps), [p.is_leaf and p.grad_fn is None for p in ps]

    lk, th = both(run)
    assert close(lk, th), (lk, th)


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float16", "float16"), ("float32", "float32")])
def test_clip_grad_norm_dtypes_match_pytorch(dtypes):
    def run(lib):
        a = params(lib, [[3.0, 4.0]], dtypes[0])
        b = params(lib, [[12.0]], dtypes[1])
        n = lib.nn.utils.clip_grad_norm_(a + b, 1.0)
        return str(n.dtype), n.item(), [p.grad.double().tolist() for p in a + b], str(a[0].grad.dtype)

    lk, th = both(run)
    assert lk[0] == th[0] and lk[3] == th[3]
    rel = 1e-3 if "float16" in dtypes else 1e-6
    assert lk[1] == pytest.approx(th[1], rel=rel)
    np.testing.assert_allclose(np.concatenate(lk[2]), np.concatenate(th[2]), rtol=rel)


def test_clip_grad_norm_on_a_model_after_backward_matches_pytorch():
    """The everyday use: backward, clip, step; the same model in both libraries ends with the same weights."""

    def run(lib, state_dict):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
        if state_dict is not None:
            m.load_state_dict({k: lib.tensor(v) for k, v in state_dict.items()})
        opt = lib.optim.SGD(m.parameters(), lr=0.5)
        x = lib.tensor(np.linspace(-3, 3, 20, dtype=np.float32).reshape(5, 4) * 10)
        norms = []
        for _ in range(3):
            opt.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            norms.append(lib.nn.utils.clip_grad_norm_(m.parameters(), max_norm=0.5).item())
            opt.step()
        return norms, {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}

    start = {
        k: v.numpy().copy()
        for k, v in leafkit.nn.Sequential(leafkit.nn.Linear(4, 8), leafkit.nn.Tanh(), leafkit.nn.Linear(8, 2))
        .state_dict()
        .items()
    }
    (nl, sl), (nt, st) = run(leafkit, start), run(torch, start)
    np.testing.assert_allclose(nl, nt, rtol=1e-5)
    for k in sl:
        np.testing.assert_allclose(sl[k], st[k], rtol=1e-5, atol=1e-6)


def test_get_total_norm_and_clip_grads_with_norm_match_pytorch():
    def run(lib):
        ts = [lib.tensor([3.0, 4.0]), lib.tensor([12.0])]
        out = [lib.nn.utils.get_total_norm(ts).item(), lib.nn.utils.get_total_norm(ts[0], 1).item()]
        ps = params(lib, [[3.0, 4.0]])
        out.append(lib.nn.utils.clip_grads_with_norm_(ps, 1.0, lib.tensor(5.0)))
        out.append(state(ps))
        out.append(outcome(lambda: lib.nn.utils.clip_grads_with_norm_(params(lib, [[1.0]]), 1.0, 5.0))[0])
        out.append(outcome(lambda: lib.nn.utils.clip_grad_norm(params(lib, [[3.0, 4.0]]), 1.0)))
        return out

    lk, th = both(run)
    assert close(lk, th), (lk, th)


VALUE_CASES = {
    "clamped": ([[3.0, -4.0], None, [0.5, -0.2]], 1.0),
    "negative_clip": ([[3.0, -4.0]], -1.0),
    "zero_clip": ([[3.0, -4.0]], 0),
    "string_clip": ([[3.0, -4.0]], "a"),
    "string_number": ([[3.0, -4.0]], "2.5"),
    "nan": ([[math.nan, 5.0]], 1.0),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_value_matches_pytorch(name, foreach):
    grads, clip = VALUE_CASES[name]

    def run(lib):
        ps = params(lib, grads)
        res = outcome(lambda: lib.nn.utils.clip_grad_value_(ps, clip, foreach=foreach))
        single = params(lib, grads[:1])
        res2 = outcome(lambda: lib.nn.utils.clip_grad_value_(single[0], clip, foreach=foreach))
        return res, state(ps), res2, state(single)

    lk, th = both(run)
    assert close(lk, th), (lk, th)


def test_parameters_to_vector_and_back_match_pytorch():
    def run(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2)
        v = lib.nn.utils.parameters_to_vector(lin.parameters())
        facts = [tuple(v.shape), v.grad_fn.name(), [n.name() for n, _ in v.grad_fn.next_functions], v.requires_grad]
        (v * lib.arange(8.0)).sum().backward()
        facts.append([p.grad.tolist() for p in lin.parameters()])
        lib.nn.utils.vector_to_parameters(lib.arange(8.0) / 10, lin.parameters())
        facts.append([(p.tolist(), p.is_leaf, p.requires_grad, p.grad_fn, type(p).__name__) for p in lin.parameters()])
        facts.append(lib.nn.utils.parameters_to_vector(lin.parameters()).tolist())
        w = lib.zeros(2, requires_grad=True)
        x = lib.ones(2, requires_grad=True)
        lib.nn.utils.vector_to_parameters(x * 2, [w])
        facts.append((w.tolist(), w.grad_fn, w.is_leaf, w.requires_grad))
        lib.nn.utils.vector_to_parameters(lib.arange(10.0), [lib.zeros(2, 3)])  # extra elements ignored
        facts.append(str(lib.nn.utils.parameters_to_vector([lib.zeros(2), lib.zeros(2, dtype=lib.float64)]).dtype))
        return facts

    lk, th = both(run)
    assert close(lk, th), (lk, th)


@pytest.mark.parametrize(
    "call",
    [
        "U.parameters_to_vector([])",
        "U.parameters_to_vector([1, 2])",
        "U.vector_to_parameters([1.0, 2.0], lin.parameters())",
        "U.vector_to_parameters(lib.arange(5.0), lin.parameters())",
        "U.vector_to_parameters(lib.arange(8), lin.parameters())",
        "U.vector_to_parameters(lib.arange(8.0).view(2, 4), lin.parameters())",
        "U.clip_grad_norm_([1, 2], 1.0)",
    ],
)
def test_nn_utils_errors_match_pytorch(call):
    def run(lib):
        lin = lib.nn.Linear(3, 2)
        return outcome(lambda: eval(call, {"U": lib.nn.utils, "lib": lib, "lin": lin}))[0]  # noqa: S307

    lk, th = both(run)
    assert th[0] != "ok"
    assert lk == th


def test_nn_utils_is_reachable_as_in_pytorch():
    import leafkit as torch_like
    from leafkit.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters

    assert torch_like.nn.utils.clip_grad_norm_ is clip_grad_norm_
    assert torch_like.nn.utils.clip_grad_value_ is clip_grad_value_
    assert torch_like.nn.utils.parameters_to_vector is parameters_to_vector
    assert torch_like.nn.utils.vector_to_parameters is vector_to_parameters
    names = {n for n in dir(torch.nn.utils) if not n.startswith("_")}
    for n in leafkit.nn.utils.__all__:
        assert n in names
