"""Random autograd programs, run on PyTorch and on leafkit: values, grads and graph facts must agree.

hypothesis draws a few leaves (some requiring grad, some not, one maybe under
``no_grad`` or ``detach``), then a sequence of operations: the rows of
``tests/op_db.py`` that have a ``program`` form (a new op joins by getting one).  After every step
we compare ``is_leaf``, ``requires_grad`` and the ``grad_fn`` name; at the end
the values, and after ``backward`` every leaf's ``.grad``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_db import BY_NAME, PROGRAM_ROWS

import leafkit

torch = pytest.importorskip("torch")

UNARY = ["detach"] + [r.name for r in PROGRAM_ROWS if r.arity == 1]
BINARY = [r.name for r in PROGRAM_ROWS if r.arity == 2]


def apply_unary(lib, name, t):
    if name == "detach":
        return t.detach()
    return BY_NAME[name].program(lib, t)


def apply_binary(lib, name, a, b):
    return BY_NAME[name].program(lib, a, b)


def graph_facts(t):
    fn = t.grad_fn
    return (t.is_leaf, t.requires_grad, fn.name() if fn is not None else None, tuple(t.shape), str(t.dtype))


def run(lib, data, program):
    leaves = []
    for arr, rg, _mode in data:
        x = lib.tensor(arr, requires_grad=rg)
        leaves.append(x)
    pool = list(leaves)
    facts = []
    for step in program:
        kind, name, i, j, no_grad = step
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        if no_grad:
            with lib.no_grad():
                out = apply_unary(lib, name, a) if kind == "u" else apply_binary(lib, name, a, b)
        else:
            out = apply_unary(lib, name, a) if kind == "u" else apply_binary(lib, name, a, b)
        facts.append(graph_facts(out))
        pool.append(out)
    final = pool[-1]
    result = {"facts": facts, "value": np.asarray(final.detach().double().tolist())}
    total = (
        sum((p * (k + 1)).sum() for k, p in enumerate(pool[len(leaves) :]) if p.requires_grad)
        if any(p.requires_grad for p in pool[len(leaves) :])
        else None
    )
    if total is not None:
        total.backward()
        result["grads"] = [None if x.grad is None else np.asarray(x.grad.tolist()) for x in leaves]
    return result


arrays = st.lists(st.floats(-2, 2, allow_nan=False, width=32), min_size=12, max_size=12).map(
    lambda v: np.array(v, dtype=np.float32).reshape(3, 4)
)
leaf = st.tuples(arrays, st.booleans(), st.just(None))
step = st.one_of(
    st.tuples(st.just("u"), st.sampled_from(UNARY), st.integers(0, 20), st.integers(0, 20), st.booleans()),
    st.tuples(st.just("b"), st.sampled_from(BINARY), st.integers(0, 20), st.integers(0, 20), st.booleans()),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(leaf, min_size=1, max_size=3), st.lists(step, min_size=1, max_size=8))
def test_random_program_matches_pytorch(data, program):
    want = run(torch, data, program)
    got = run(leafkit, data, program)
    assert got["facts"] == want["facts"]
    np.testing.assert_allclose(got["value"], want["value"], rtol=2e-4, atol=2e-5)
    assert ("grads" in got) == ("grads" in want)
    for g, w in zip(got.get("grads", []), want.get("grads", [])):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-4)
