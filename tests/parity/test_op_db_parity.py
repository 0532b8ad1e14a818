"""Every row of ``tests/op_db.py`` on leafkit and on PyTorch: values, gradients, second derivatives, and the
node names of the forward graph and of the recorded backward graph."""

from __future__ import annotations

import numpy as np
import pytest
from higher_order_cases import tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_db import ROWS

import leafkit

torch = pytest.importorskip("torch")


def _np(t):
    if t is None:
        return None
    t = t.detach()
    if getattr(t, "_is_zerotensor", lambda: False)():  # PyTorch's efficient zeros (sgn's derivative)
        return np.zeros(tuple(t.shape))
    return t.numpy().copy()


def observe(lib, row, arrays):
    xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = row.call(lib, *xs)
    obs = {"value": out.detach().numpy().copy(), "forward": tree(out.grad_fn, 3)}
    if row.backward_raises:
        with pytest.raises(RuntimeError, match=row.backward_raises):
            out.sum().backward()
        return obs
    w = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=lib.float64, requires_grad=True)
    grads = lib.autograd.grad((out * w).sum(), xs, create_graph=True, allow_unused=True)
    obs["grads"] = [_np(g) for g in grads]
    obs["graphs"] = [None if g is None else tree(g.grad_fn, 4) for g in grads]
    terms = [(g * g).sum() for g in grads if g is not None and g.requires_grad]
    if terms and row.gradgrad:
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        second = lib.autograd.grad(total, xs + [w], allow_unused=True)
        obs["second"] = [_np(s) for s in second]
    return obs


def _close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_row_same_as_pytorch(row, data):
    arrays = [np.array(a) for a in data.draw(row.inputs)]
    want = observe(torch, row, arrays)
    got = observe(leafkit, row, arrays)
    assert _close(got["value"], want["value"])
    assert got["forward"] == want["forward"]
    assert set(got) == set(want)
    for g, w in zip(got.get("grads", []), want.get("grads", [])):
        assert _close(g, w)
    assert got.get("graphs") == want.get("graphs")
    for g, w in zip(got.get("second", []), want.get("second", [])):
        assert _close(g, w)
