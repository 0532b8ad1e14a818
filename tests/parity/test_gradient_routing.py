"""How the engine routes and sums gradients, against PyTorch: random graphs with much fan-out and fan-in.

The engine sums the gradients that reach one input in a buffer, and adds
in place into a sum it allocated itself.  Formulas such as ``AddBackward0``,
``SubBackward0`` (for ``self``), ``CloneBackward0`` or ``ViewBackward0`` pass
a gradient on as it is, so one array can sit in several buffers at once; an
in-place add into it must then never happen.  These graphs are built to
make that happen as often as possible: few leaves, many nodes that reuse
earlier nodes several times, ops that pass gradients through, and a loss
that reads many nodes.  The gradients (and, through ``create_graph``, the
second derivatives) must equal PyTorch's exactly up to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import leafkit

torch = pytest.importorskip("torch")

UNARY = {
    "clone": lambda t: t.clone(),
    "view": lambda t: t.view(2, 3).view(6),
    "neg": lambda t: -t,
    "scale": lambda t: t * 3,
    "plus": lambda t: t + 1,
    "square": lambda t: t * t,
    "flip_sign_sub": lambda t: 0 - t,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "add_alpha": lambda a, b: a.add(b, alpha=2),
}


def build(lib, leaves, program, weights):
    pool = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in leaves]
    n_leaves = len(pool)
    for kind, name, i, j in program:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        pool.append(UNARY[name](a) if kind == "u" else BINARY[name](a, b))
    loss = sum((p * w).sum() for p, w in zip(pool[n_leaves:], weights))
    return pool[:n_leaves], loss


def gradients(lib, leaves, program, weights, second: bool):
    xs, loss = build(lib, leaves, program, weights)
    if not second:
        loss.backward()
        return [x.grad.tolist() if x.grad is not None else None for x in xs]
    grads = lib.autograd.grad(loss, xs, create_graph=True, allow_unused=True)
    total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
    if not isinstance(total, (lib.Tensor,)):
        return None
    return [g.tolist() if g is not None else None for g in lib.autograd.grad(total, xs, allow_unused=True)]


vector = st.lists(st.floats(-2, 2, allow_nan=False), min_size=6, max_size=6)
step = st.one_of(
    st.tuples(st.just("u"), st.sampled_from(sorted(UNARY)), st.integers(0, 30), st.integers(0, 30)),
    st.tuples(st.just("b"), st.sampled_from(sorted(BINARY)), st.integers(0, 30), st.integers(0, 30)),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(vector, min_size=1, max_size=2),
    st.lists(step, min_size=2, max_size=14),
    st.lists(st.sampled_from([0.0, 1.0, 0.5, -2.0]), min_size=14, max_size=14),
    st.booleans(),
)
def test_gradient_routing_matches_pytorch(leaves, program, weights, second):
    want = gradients(torch, leaves, program, weights, second)
    got = gradients(leafkit, leaves, program, weights, second)
    assert (got is None) == (want is None)
    if want is None:
        return
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)


def test_a_passed_on_sum_is_not_added_to_in_place():
    """The case that found the fault: ``n = p + q`` hands the same summed gradient to ``p`` and ``q``; a later
    contribution to ``p`` (from ``m``) must not change ``q``'s."""
    for lib in (torch, leafkit):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        p, q = x * 2, x * 3
        m = p * 5
        n = p + q
        (n + n + m).sum().backward()
        assert x.grad.tolist() == [20.0, 20.0], lib.__name__
