"""matmul on every pairing of 1-D..4-D shapes (with and without broadcast batches, either side requiring grad):
the same values, gradients and graph as PyTorch's composition of dot/mv/mm/bmm/expand/reshape."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")

A_SHAPES = [(4,), (3, 4), (1, 3, 4), (2, 3, 4), (1, 1, 3, 4), (2, 1, 3, 4), (1, 2, 3, 4)]
B_SHAPES = [(4,), (4, 5), (1, 4, 5), (2, 4, 5), (2, 4, 1), (1, 1, 4, 5), (3, 1, 4, 5), (2, 2, 4, 5)]


def _names(fn, out):
    out.append(fn.name() if fn is not None else None)
    if fn is not None and not fn.name().endswith("AccumulateGrad"):
        for n, _ in fn.next_functions:
            _names(n, out)
    return out


def _run(lib, an, bn, ra, rb):
    a = lib.tensor(an, requires_grad=ra)
    b = lib.tensor(bn, requires_grad=rb)
    try:
        out = a @ b
    except RuntimeError as e:
        return ("error", str(e).split(" (")[0][:40])
    out.sum().backward()
    return (
        _names(out.grad_fn, []),
        out.detach().numpy(),
        None if a.grad is None else a.grad.numpy(),
        None if b.grad is None else b.grad.numpy(),
    )


@pytest.mark.parametrize("sa, sb", list(itertools.product(A_SHAPES, B_SHAPES)), ids=str)
def test_matmul_same_as_pytorch(sa, sb):
    rng = np.random.default_rng(0)
    an, bn = rng.standard_normal(sa), rng.standard_normal(sb)
    for ra, rb in [(True, True), (True, False), (False, True)]:
        want, got = _run(torch, an, bn, ra, rb), _run(leafkit, an, bn, ra, rb)
        assert got[0] == want[0], (ra, rb)
        if got[0] == "error":
            assert got[1] == want[1]
            continue
        for g, w in zip(got[1:], want[1:]):
            assert (g is None) == (w is None)
            if g is not None:
                np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
