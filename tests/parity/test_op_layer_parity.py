"""The op layer against PyTorch 2.13 where NumPy would answer differently: dtypes, errors, edges, overlap.

Each test runs the same calls on leafkit and on real PyTorch and compares
what comes out: the result's dtype, shape and values, or the error's class
and first line.  The calls are the kinds of ``tests/adversarial_cases.py``
(dtype, arguments, signed zero, no derivative, non-float targets, index_put
dtype, NumPy's errors and warnings, edge values, overlap), taken wider:
every operand kind against every op, random keys for indexing, every inf/nan
edge for the elementwise ops.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leafkit

torch = pytest.importorskip("torch")

LIBS = (torch, leafkit)


def _value(v):
    if isinstance(v, float):
        return "nan" if v != v else (math.copysign(1.0, v), v)  # -0.0 and 0.0 differ
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


def _norm(lib, r):
    if isinstance(r, lib.Tensor):
        return (str(r.dtype), tuple(r.shape), _value(r.detach().tolist()))
    if isinstance(r, (tuple, list)):
        return tuple(_norm(lib, x) for x in r)
    return _value(r)


def observe(lib, fn, *args):
    """What ``fn(lib, *args)`` returns (tensors as dtype, shape and values; -0.0 apart from 0.0; NaN equal to
    NaN), or ``("error", class, first line of the message)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(lib, *args)
        except Exception as e:  # noqa: BLE001 - the error is the observation
            return ("error", type(e).__name__, str(e).split("\n")[0].split(" (Triggered internally")[0])
    return _norm(lib, r)


def same(fn, *args, message=True):
    want, got = (observe(lib, fn, *args) for lib in LIBS)
    if not message and want[0] == "error" and got[0] == "error":
        return want[:2] == got[:2], (want, got)
    return want == got, (want, got)


# -- dtypes with Python numbers and mixed operands ------------------------------------------------------------------
DTYPES = ["bool", "int32", "int64", "float16", "float32", "float64"]
TENSORS = [(d, s) for d in DTYPES for s in ((3,), ())]
NUMBERS = [True, 2, -3, 2.5]


def _operand(lib, x):
    if not isinstance(x, tuple):
        return x
    d, shape = x
    vals = {"bool": [True, False, True]}.get(d, [3, -2, 0] if d.startswith("int") else [1.5, -2.25, 0.0])
    return lib.tensor(vals if shape else vals[0], dtype=getattr(lib, d))


BINARY = {
    "add": lambda lib, a, b: lib.add(a, b),
    "sub": lambda lib, a, b: a - b,
    "rsub": lambda lib, a, b: b - a,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "rdiv": lambda lib, a, b: b / a,
    "remainder": lambda lib, a, b: a % b,
    "rremainder": lambda lib, a, b: b % a,
    "floor_divide": lambda lib, a, b: a // b,
    "rfloor_divide": lambda lib, a, b: b // a,
    "pow": lambda lib, a, b: a**b,
    "rpow": lambda lib, a, b: b**a,
    "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "where": lambda lib, a, b: lib.where(lib.tensor([True, False, True]), a, b),
    "where_flipped": lambda lib, a, b: lib.where(lib.tensor([True, False, True]), b, a),
    "clamp_min": lambda lib, a, b: lib.clamp(a, min=b),
    "clamp_max": lambda lib, a, b: lib.clamp(a, max=b),
    "clamp": lambda lib, a, b: lib.clamp(a, b, b),
    "maximum": lambda lib, a, b: lib.maximum(a, b if isinstance(b, lib.Tensor) else lib.tensor(b)),
    "masked_fill": lambda lib, a, b: a.masked_fill(a != a, b) if not isinstance(b, lib.Tensor) or not b.ndim else a,
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_ops_promote_and_refuse_as_pytorch(op):
    """Every tensor kind against every tensor or number: result dtype, values (signed zeros) and errors."""
    failures = []
    for a, b in itertools.product(TENSORS, TENSORS + NUMBERS):
        ok, seen = same(lambda lib, x, y: BINARY[op](lib, _operand(lib, x), _operand(lib, y)), a, b)
        if not ok and not _ulp_only(*seen):
            failures.append((a, b, seen))
    assert not failures, failures[:3]


def _leaves(v):
    if isinstance(v, list):
        return [x for item in v for x in _leaves(item)]
    return [v]


def _ulp_only(want, got):
    """Two results that differ only in the last bits of some floats (NumPy's pow is not C's)."""
    if want[0] != got[0] or want[0] == "error" or want[1] != got[1]:
        return False
    w, g = _leaves(want[2]), _leaves(got[2])
    return len(w) == len(g) and all(
        x == y
        or (isinstance(x, tuple) and isinstance(y, tuple) and x[0] == y[0] and math.isclose(x[1], y[1], rel_tol=1e-6))
        for x, y in zip(w, g)
    )


def test_two_number_branches_and_number_first_forms():
    calls = [
        lambda lib: lib.where(lib.tensor([True, False]), 1.0, 0.0),
        lambda lib: lib.where(lib.tensor([True]), 1, 0),
        lambda lib: lib.where(lib.tensor([True]), True, False),
        lambda lib: lib.add(2, lib.tensor([1, 2])),
        lambda lib: lib.mul(2.5, lib.tensor([1, 2])),
        lambda lib: lib.sub(5, lib.tensor([1.0])),
        lambda lib: lib.div(5, lib.tensor([2, 4])),
        lambda lib: lib.remainder(5.0, lib.tensor([3, -2])),
        lambda lib: lib.tensor([1.0, -2.0]).where(lib.tensor([True, False]), 0.0),
        lambda lib: lib.zeros(3, dtype=lib.int64).copy_(2.7),
        lambda lib: lib.zeros(2).copy_(True),
        lambda lib: lib.tensor([0.15, 2.5, -1.25]).round(decimals=1),
        lambda lib: lib.tensor([15.0, 25.0]).round(decimals=-1),
        lambda lib: lib.tensor([1, 2]).round(decimals=1),
        lambda lib: lib.tensor([True]).trunc(),
        lambda lib: lib.tensor([2, 1]) ** lib.tensor([-1, -2]),
        lambda lib: lib.tensor([-1, 0, 1]) ** lib.tensor(-3),
        lambda lib: lib.tensor([True, False]) @ lib.tensor([True, True]),
        lambda lib: lib.ones(2, 3).sum(axis=0),
        lambda lib: lib.ones(2, 3).mean(axis=1, keepdims=True),
        lambda lib: lib.ones(1, 2, 1).squeeze((0, 2)),
        lambda lib: lib.cat([lib.zeros(0), lib.ones(2, 2)]),
        lambda lib: lib.cat([lib.ones(2, dtype=lib.int64), lib.ones(2)]),
        lambda lib: lib.zeros(0).softmax(0),
        lambda lib: lib.zeros(0, 3).mean(0),
        lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(lib.zeros(2), lib.ones(2, dtype=lib.float64)),
    ]
    for k, call in enumerate(calls):
        ok, seen = same(lambda lib, c=call: c(lib))
        assert ok, (k, seen)


def test_no_derivative_nodes_have_pytorchs_edges():
    def graph(lib, make):
        a = lib.tensor([5.0, -5.0, 3.5], requires_grad=True)
        r = make(lib, a)
        names = [None if n is None else n.name() for n, _ in r.grad_fn.next_functions]
        try:
            r.sum().backward()
            err = None
        except RuntimeError as e:
            err = str(e)
        return r.grad_fn.name(), names, err

    for make in (
        lambda lib, a: 5 % a,
        lambda lib, a: lib.remainder(5.0, a),
        lambda lib, a: 5 // a,
        lambda lib, a: a // 2,
        lambda lib, a: a // a,
        lambda lib, a: a % 2,
    ):
        assert graph(torch, make) == graph(leafkit, make)


# -- indexing: random keys --------------------------------------------------------------------------------------
def _key_item(draw, size):
    kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "bool", "index", "list", "mask"]))
    if kind == "int":
        return kind, draw(st.integers(-size - 1, size))
    if kind == "slice":
        return kind, (
            draw(st.sampled_from([None, 0, 1, -1, 2])),
            draw(st.sampled_from([None, 1, 2, -1, 5])),
            draw(st.sampled_from([None, 1, 2])),
        )
    if kind in ("none", "ellipsis"):
        return kind, None
    if kind == "bool":
        return kind, draw(st.booleans())
    if kind == "mask":
        return kind, draw(st.lists(st.booleans(), min_size=size, max_size=size + (draw(st.integers(0, 9)) == 0)))
    return kind, draw(st.lists(st.integers(-size - 1, size), min_size=int(kind == "list"), max_size=3))


@st.composite
def keys(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    items = [_key_item(draw, shape[d] if d < len(shape) else 2) for d in range(draw(st.integers(1, 3)))]
    if sum(kind == "ellipsis" for kind, _ in items) > 1:  # PyTorch's reading of two ellipses is an accident
        items = [item for item in items if item[0] != "ellipsis"] or [("none", None)]
    return shape, items, draw(st.booleans()), draw(st.sampled_from(["get", "set_number", "set_scalar", "set_row"]))


def _make_key_item(lib, kind, v):
    if kind == "slice":
        return slice(*v)
    if kind == "none":
        return None
    if kind == "ellipsis":
        return Ellipsis
    if kind == "index":
        return lib.tensor(v, dtype=lib.int64)
    if kind == "list":
        return list(v) if isinstance(v, list) else v
    if kind == "mask":
        return lib.tensor(v)
    return v  # "int", "bool"


def _build_key(lib, items, as_tuple):
    out = [_make_key_item(lib, kind, v) for kind, v in items]
    return tuple(out) if as_tuple or len(out) != 1 else out[0]


def _tree(fn, depth=4):
    if fn is None or depth == 0:
        return None
    return fn.name(), tuple(_tree(n, depth - 1) for n, _ in fn.next_functions)


def _index_program(lib, shape, items, as_tuple, mode):
    leaf = lib.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
    t = leaf * 1
    key = _build_key(lib, items, as_tuple)
    if mode == "get":
        r = t[key]
        g = lib.autograd.grad((r * r).sum(), leaf)[0] if r.numel() else None
        return r, _tree(r.grad_fn), g
    value = {
        "set_number": lambda: 7.0,
        "set_scalar": lambda: lib.tensor(7.0, requires_grad=True),
        "set_row": lambda: lib.tensor([7.0, 8.0], requires_grad=True),
    }[mode]()
    t[key] = value
    g = lib.autograd.grad((t * t).sum(), leaf)[0]
    return t, _tree(t.grad_fn), g


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keys())
def test_indexing_reads_keys_as_pytorch(case):
    """Shapes (ints and index tensors mixed), values, graphs, gradients and errors of ``t[key]`` and
    ``t[key] = value``."""

    def run(lib):
        r, tree, g = _index_program(lib, *case)
        return tuple(r.shape), r.tolist(), tree, None if g is None else g.tolist()

    ok, seen = same(lambda lib: run(lib))
    assert ok, seen


SETITEM_ERRORS = [
    lambda lib: lib.zeros(3).__setitem__(slice(None), [1.0, 2.0, 3.0]),
    lambda lib: lib.zeros(3).__setitem__(0, "a"),
    lambda lib: lib.zeros(3).__setitem__(5, np.ones(1)),
    lambda lib: lib.zeros(3, dtype=lib.float64).__setitem__(lib.tensor([0]), lib.tensor([1.0])),
    lambda lib: lib.zeros(2, 2).__setitem__((lib.tensor([0, 1]), lib.tensor([2, 0])), lib.ones(3)),
    lambda lib: lib.zeros(2, 3).__setitem__(lib.zeros(2, 3) == 0, lib.ones(3)),
    lambda lib: lib.zeros(3, requires_grad=True).__setitem__((slice(None), lib.tensor([0])), 1.0),
    lambda lib: lib.zeros(3, requires_grad=True).__setitem__(lib.tensor([5]), 1.0),
    lambda lib: lib.zeros(3).index_put_((lib.tensor([0]),), lib.tensor([3.0], dtype=lib.float64)),
    lambda lib: lib.arange(6.0).reshape(2, 3).gather(1, lib.tensor([[5]])),
    lambda lib: lib.arange(6.0).reshape(2, 3).gather(1, lib.tensor([[-1]])),
    lambda lib: lib.arange(6.0).reshape(2, 3).gather(1, lib.tensor([[1.0]])),
    lambda lib: lib.arange(6.0).reshape(2, 3).scatter(1, lib.tensor([[1], [0], [1]]), 1.0),
    lambda lib: lib.arange(3.0)[lib.tensor([True, False])],
    lambda lib: lib.arange(3.0)[2.0],
    lambda lib: lib.arange(3.0)[::0],
    lambda lib: lib.arange(3.0)[::-1],
    lambda lib: lib.tensor(1.0)[0],
    lambda lib: lib.tensor(1.0)[0,],
    lambda lib: lib.zeros(0).view(-1, 0),
]


@pytest.mark.parametrize("k", range(len(SETITEM_ERRORS)))
def test_indexing_errors_are_pytorchs(k):
    ok, seen = same(SETITEM_ERRORS[k])
    assert ok, seen


# -- inf, nan and signed zeros ---------------------------------------------------------------------------------
EDGES = [-math.inf, -2.0, -0.0, 0.0, 0.5, math.inf, math.nan]
UNARY = {
    "pow0.5": lambda x: x**0.5,
    "pow-0.5": lambda x: x**-0.5,
    "pow3": lambda x: x**3,
    "pow-2": lambda x: x**-2,
    "pow_tensor": lambda x: x ** (x.detach() * 0 + 0.5),
    "rpow": lambda x: 2.0**x,
    "relu": lambda x: x.relu(),
    "clamp_min": lambda x: x.clamp(min=0.0),
    "maximum": lambda x: x.maximum(x.detach() * 0),
    "remainder": lambda x: x % 1.5,
    "rremainder": lambda x: x.detach().remainder(x.detach() * 0 - 4),
    "softmax": lambda x: x.softmax(0),
    "sqrt": lambda x: x.sqrt(),
    "round": lambda x: x.round(decimals=1),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_edge_values_and_their_gradients(op):
    def run(lib):
        x = lib.tensor(EDGES, dtype=lib.float64, requires_grad=True)
        r = UNARY[op](x)
        g = lib.autograd.grad(r.sum(), x)[0] if r.requires_grad else None
        return r, None if g is None else _value(g.tolist())

    ok, seen = same(lambda lib: run(lib))
    assert ok or _close_floats(*seen), seen


def _close_floats(want, got):
    w, g = json_floats(want), json_floats(got)
    return len(w) == len(g) and all(
        a == b or (isinstance(a, float) and isinstance(b, float) and math.isclose(a, b)) for a, b in zip(w, g)
    )


def json_floats(obs):
    out = []

    def walk(v):
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        else:
            out.append(v)

    walk(obs)
    return out


def test_no_numpy_warnings_from_ops_backward_or_optimizers():
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            x = leafkit.tensor([-math.inf, -1e38, 0.0, 1e38, math.inf, math.nan]).requires_grad_()
            outs = [
                x * 0,
                x - x,
                x / x,
                x.exp(),
                x.log(),
                x**2.5,
                x.sigmoid(),
                x.softmax(0),
                x.half(),
                x.sum(),
                x.mean(),
                x.norm(),
                x % x,
                (x * x).sum(),
                leafkit.zeros(0).mean(),
            ]
            x.detach() // x.detach()
            sum(o.sum() for o in outs if o.dtype.is_floating_point and o.requires_grad).backward()
            w = leafkit.nn.Parameter(leafkit.tensor([math.inf, math.nan, 1e38]))
            for opt in (leafkit.optim.SGD([w], lr=0.1, momentum=0.9), leafkit.optim.Adam([w], lr=0.1)):
                opt.zero_grad()
                (w * w).sum().backward()
                opt.step()

    run()


# -- overlap --------------------------------------------------------------------------------------------------
OVERLAP = [
    lambda lib, x: x.view(-1)[1:].copy_(x.view(-1)[:-1]),
    lambda lib, x: x.add_(x),
    lambda lib, x: x.t().add_(x),
    lambda lib, x: x[:, 0].add_(x[:, 1]),
    lambda lib, x: x[0].add_(x[:, 0]),
    lambda lib, x: x.__setitem__(slice(1, None), x[:-1]),
    lambda lib, x: x.__setitem__(0, x[:, 0]),
    lambda lib, x: x.mul_(x[0]),
    lambda lib, x: x[:2].copy_(x[2:]),
    lambda lib, x: x.__setitem__(lib.tensor([0, 1]), x[1:3]),
    lambda lib, x: x.__setitem__((slice(None), 1), x[1, 1]),
    lambda lib, x: x[0].fill_(x[0, 2]),
    lambda lib, x: x.__setitem__((Ellipsis, 0), x[0, :1]),
]
EXPANDED = [
    lambda lib, e: e.fill_(1.0),
    lambda lib, e: e.zero_(),
    lambda lib, e: e.fill_(lib.tensor(2.0)),
    lambda lib, e: e.add_(1),
    lambda lib, e: e.copy_(lib.ones(3)),
    lambda lib, e: e[0].add_(1),
    lambda lib, e: e.__setitem__(0, 2.5),
    lambda lib, e: e.__setitem__(slice(None), 1.0),
    lambda lib, e: e.masked_fill_(lib.tensor([True, False, True]), 5.0),
    lambda lib, e: e.index_put_((lib.tensor([0]),), lib.tensor(4.0)),
    lambda lib, e: e.__setitem__((lib.tensor([0, 1]), 1), lib.tensor([5.0, 6.0])),
    lambda lib, e: e.__setitem__(lib.tensor([[True, False, True], [False, False, False]]), 3.0),
]


@pytest.mark.parametrize("k", range(len(OVERLAP)))
def test_partial_overlap_as_pytorch_checks_it(k):
    def run(lib):
        x = lib.arange(16.0).reshape(4, 4)
        OVERLAP[k](lib, x)
        return x

    ok, seen = same(lambda lib: run(lib))
    assert ok, seen


@pytest.mark.parametrize("k", range(len(EXPANDED)))
def test_writes_into_expanded_tensors(k):
    def run(lib):
        e = lib.zeros(1, 3).expand(2, 3)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            EXPANDED[k](lib, e)
        return e, sorted({str(w.message).split(" (Triggered")[0] for w in got})

    ok, seen = same(lambda lib: run(lib))
    assert ok, seen
