"""Every row of ``tests/op_db.py``: first and second derivatives against finite differences, float64.

gradcheck compares ``backward`` with central differences of ``(op(x) * w).sum()``;
gradgradcheck differentiates that gradient again (``create_graph=True``),
with respect to the inputs and to ``w``, and compares with central
differences of the gradient itself.  A last test makes sure every op in the
registry is reached by some row.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from op_db import ROWS

import leafkit as lk
from leafkit._functions import SPECS

H = 1e-6
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _tensors(arrays, requires_grad=True):
    return [lk.tensor(a, dtype=lk.float64, requires_grad=requires_grad) for a in arrays]


def central_difference(fn, arrays, k):
    """d fn / d arrays[k], elementwise, where fn returns a flat float64 array."""
    base = fn(arrays)
    out = np.zeros(arrays[k].shape + base.shape)
    flat, res = arrays[k].reshape(-1), out.reshape(-1, base.size)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + H
        up = fn(arrays)
        flat[i] = old - H
        down = fn(arrays)
        flat[i] = old
        res[i] = (up - down) / (2 * H)
    return out


def _weight(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _gradients(row, arrays, w, create_graph=False):
    xs = _tensors(arrays)
    out = row.call(lk, *xs)
    wt = lk.tensor(w, dtype=lk.float64, requires_grad=create_graph)
    grads = lk.autograd.grad((out * wt).sum(), xs, create_graph=create_graph, allow_unused=True)
    return xs, wt, grads


@pytest.mark.parametrize("row", [r for r in ROWS if not r.backward_raises], ids=lambda r: r.name)
@SETTINGS
@given(data=__import__("hypothesis").strategies.data())
def test_gradcheck(row, data):
    arrays = [np.array(a) for a in data.draw(row.inputs)]
    with lk.no_grad():
        shape = tuple(row.call(lk, *_tensors(arrays, False)).shape)
    w = _weight(shape)
    _, _, grads = _gradients(row, arrays, w)

    def value(arrs):
        with lk.no_grad():
            out = row.call(lk, *_tensors(arrs, False))
            return np.array([float((out * lk.tensor(w, dtype=lk.float64)).sum().item())])

    for k, g in enumerate(grads):
        numeric = central_difference(value, arrays, k)[..., 0]
        got = np.zeros_like(arrays[k]) if g is None else g.numpy()
        assert got.shape == arrays[k].shape
        np.testing.assert_allclose(got, numeric, rtol=row.rtol, atol=row.atol, err_msg=f"input {k}")
        if not row.differentiable:
            assert not np.any(got), "a step function's gradient is zero everywhere"


@pytest.mark.parametrize("row", [r for r in ROWS if r.backward_raises], ids=lambda r: r.name)
@settings(max_examples=3, deadline=None)
@given(data=__import__("hypothesis").strategies.data())
def test_backward_raises(row, data):
    xs = _tensors([np.array(a) for a in data.draw(row.inputs)])
    out = row.call(lk, *xs)
    with pytest.raises(RuntimeError, match=row.backward_raises):
        out.sum().backward()


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r.gradgrad and r.differentiable and not r.backward_raises], ids=lambda r: r.name
)
@SETTINGS
@given(data=__import__("hypothesis").strategies.data())
def test_gradgradcheck(row, data):
    arrays = [np.array(a) for a in data.draw(row.inputs)]
    with lk.no_grad():
        shape = tuple(row.call(lk, *_tensors(arrays, False)).shape)
    w = _weight(shape)
    vs = [_weight(a.shape, seed=k + 1) for k, a in enumerate(arrays)]
    xs, wt, grads = _gradients(row, arrays, w, create_graph=True)
    total = None
    for g, v in zip(grads, vs):
        if g is not None and g.requires_grad:
            term = (g * lk.tensor(v, dtype=lk.float64)).sum()
            total = term if total is None else total + term
    analytic = [np.zeros_like(a) for a in arrays] + [np.zeros(shape)]
    if total is not None:
        for k, s in enumerate(lk.autograd.grad(total, xs + [wt], allow_unused=True)):
            if s is not None:
                analytic[k] = s.numpy()

    def first_order(arrs_and_w):
        *arrs, ww = arrs_and_w
        _, _, gs = _gradients(row, arrs, ww)
        return np.array([sum(float((g.numpy() * v).sum()) for g, v in zip(gs, vs) if g is not None)])

    point = arrays + [w]
    for k in range(len(point)):
        numeric = central_difference(first_order, point, k)[..., 0]
        np.testing.assert_allclose(
            analytic[k],
            numeric,
            rtol=1e-3,
            atol=1e-4,
            err_msg=f"d/d{'w' if k == len(arrays) else f'input {k}'} of the gradient",
        )


def _nodes_under(roots):
    seen, stack, names = set(), [r for r in roots if r is not None], set()
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        spec = getattr(type(fn), "_spec", None)
        if spec is not None:
            names.add(spec.name)
        inner = getattr(fn, "fn", None)  # CopySlices wraps the in-place op's node
        if inner is not None:
            stack.append(inner)
        stack.extend(n for n, _ in fn.next_functions if n is not None)
    return names


def _one_example(strategy):
    """One example of ``strategy``, drawn on its own (one draw for all the rows would outgrow hypothesis's buffer
    and multiply the rows' filters), the same in every run."""
    found = []

    @settings(
        max_examples=1,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def draw(value):
        found.append(value)

    draw()
    return found[0]


def test_every_registered_op_has_a_row():
    """Each op in the registry appears in the forward or the recorded backward graph of some row."""
    reached = set()
    rng = np.random.default_rng(0)
    for row in ROWS:
        arrays = [np.array(a) for a in _one_example(row.inputs)]
        xs = _tensors(arrays)
        out = row.call(lk, *xs)
        reached |= _nodes_under([out.grad_fn])
        if out.grad_fn is None or not row.differentiable or row.backward_raises:
            continue
        wt = lk.tensor(rng.standard_normal(tuple(out.shape)), dtype=lk.float64, requires_grad=True)
        grads = lk.autograd.grad((out * wt).sum(), xs, create_graph=True, allow_unused=True)
        reached |= _nodes_under([g.grad_fn for g in grads if g is not None])
        terms = [(g * g).sum() for g in grads if g is not None and g.requires_grad]
        if terms and row.gradgrad:  # (a row without second derivatives: hardsigmoid's raises, as in PyTorch)
            total = terms[0]
            for t in terms[1:]:
                total = total + t  # third-order nodes (AddBackward1 inside sigmoid_backward's derivative ...)
            second = lk.autograd.grad(total, xs + [wt], create_graph=True, allow_unused=True)
            reached |= _nodes_under([s.grad_fn for s in second if s is not None])
    # ops only reachable in ways a row cannot express, with the reason
    missing = sorted(set(SPECS) - reached)
    assert not missing, f"ops with no row in tests/op_db.py: {missing}"


def test_row_names_are_unique():
    """Two rows with one name would hide each other in test ids (and in the parity suite's report)."""
    names = [r.name for r in ROWS]
    assert sorted({n for n in names if names.count(n) > 1}) == []
