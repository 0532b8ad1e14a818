"""Finite-difference gradient checks for every differentiable op, in float64, shapes from hypothesis.

For a scalar function ``f`` of inputs ``x_i`` we compare the analytic
gradient from ``backward`` with central differences
``(f(x + h e_k) - f(x - h e_k)) / 2h`` element by element (minitorch's
``central_difference``).  ``f`` is ``(op(...) * w).sum()`` with a fixed random
weight ``w``, so every output element carries a different weight.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import leafkit as lk

H = 1e-6
SETTINGS = settings(max_examples=25, deadline=None)


def central_difference(fn, arrays, k):
    grads = np.zeros_like(arrays[k])
    flat = arrays[k].reshape(-1)
    g = grads.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + H
        up = fn(*arrays)
        flat[i] = old - H
        down = fn(*arrays)
        flat[i] = old
        g[i] = (up - down) / (2 * H)
    return grads


def check(op, *arrays, rtol=1e-4, atol=1e-5):
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    rng = np.random.default_rng(0)
    ts = [lk.tensor(a, dtype=lk.float64, requires_grad=True) for a in arrays]
    out = op(*ts)
    w = lk.tensor(rng.standard_normal(tuple(out.shape)), dtype=lk.float64)
    (out * w).sum().backward()

    def value(*arrs):
        with lk.no_grad():
            o = op(*[lk.tensor(a, dtype=lk.float64) for a in arrs])
            return float((o * w).sum().item())

    for k, t in enumerate(ts):
        numeric = central_difference(value, arrays, k)
        assert t.grad is not None, f"input {k} got no gradient"
        assert t.grad.shape == t.shape
        np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=rtol, atol=atol)


# -- strategies ------------------------------------------------------------------------------------
small = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)
positive = st.floats(0.2, 3, allow_nan=False, allow_infinity=False, width=64)
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


def arrays_of(shape, elements=small):
    return hnp.arrays(np.float64, shape, elements=elements)


@st.composite
def broadcast_pair(draw, elements=small):
    """Two arrays whose shapes broadcast together (one side may drop or shrink dimensions)."""
    shape = draw(shapes)
    other = list(shape)
    for i in range(len(other)):
        if draw(st.booleans()):
            other[i] = 1
    drop = draw(st.integers(0, len(other)))
    other = tuple(other[drop:])
    if draw(st.booleans()):
        shape, other = other, tuple(shape)
    return draw(arrays_of(tuple(shape), elements)), draw(arrays_of(other, elements))


def away_from_zero(x):
    return np.where(np.abs(x) < 0.2, 0.5, x)


# -- binary ops with broadcasting ---------------------------------------------------------------------
@SETTINGS
@given(broadcast_pair())
def test_add(pair):
    check(lambda a, b: a + b, *pair)


@SETTINGS
@given(broadcast_pair())
def test_sub(pair):
    check(lambda a, b: a - b, *pair)


@SETTINGS
@given(broadcast_pair())
def test_mul(pair):
    check(lambda a, b: a * b, *pair)


@SETTINGS
@given(broadcast_pair())
def test_div(pair):
    a, b = pair
    check(lambda a, b: a / b, a, away_from_zero(b))


@SETTINGS
@given(broadcast_pair(elements=positive))
def test_pow_tensor_tensor(pair):
    check(lambda a, b: a**b, *pair)


@SETTINGS
@given(arrays_of(shapes), st.sampled_from([2, 3, 0.5, -1.5, 1]))
def test_pow_scalar(a, p):
    if p != int(p):
        a = np.abs(a) + 0.3
    check(lambda t: t**p, a)


@SETTINGS
@given(arrays_of(shapes), st.floats(0.5, 3))
def test_scalar_ops_both_orders(a, s):
    check(lambda t: 2.5 * t + s - t * s, a)
    check(lambda t: s - t, a)
    check(lambda t: s / t, away_from_zero(a))
    check(lambda t: t / s, a)
    check(lambda t: s**t, a)


# -- unary -------------------------------------------------------------------------------------------
UNARY = {
    "neg": (lambda t: -t, small),
    "exp": (lambda t: t.exp(), small),
    "log": (lambda t: t.log(), positive),
    "sqrt": (lambda t: t.sqrt(), positive),
    "abs": (lambda t: t.abs(), small),
    "relu": (lambda t: t.relu(), small),
    "sigmoid": (lambda t: t.sigmoid(), small),
    "tanh": (lambda t: t.tanh(), small),
    "reciprocal": (lambda t: t.reciprocal(), positive),
    "clamp": (lambda t: t.clamp(-1, 1), small),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary(name, data):
    fn, elements = UNARY[name]
    a = data.draw(arrays_of(data.draw(shapes), elements))
    if name in ("abs", "relu", "clamp"):  # keep away from the kinks
        a = np.where(np.abs(a) < 0.05, 0.3, a)
        a = np.where(np.abs(np.abs(a) - 1) < 0.05, 0.5, a)
    check(fn, a)


# -- reductions --------------------------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_sum_mean(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    a = data.draw(arrays_of(shape))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keep = data.draw(st.booleans())
    check(lambda t: t.sum(), a)
    check(lambda t: t.mean(), a)
    check(lambda t: t.sum(dim, keepdim=keep), a)
    check(lambda t: t.mean(dim=dim, keepdim=keep), a)
    if len(shape) >= 2:
        check(lambda t: t.sum(dim=(0, -1)), a)


@SETTINGS
@given(data=st.data())
def test_max_min(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    # distinct values on a 0.25 grid: no tie lies within the finite-difference step
    a = data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-40, 40).map(lambda i: i / 4), unique=True))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    check(lambda t: t.max(), a)
    check(lambda t: t.min(), a)
    check(lambda t: t.max(dim).values, a)
    check(lambda t: t.min(dim, keepdim=True)[0], a)


@SETTINGS
@given(data=st.data())
def test_softmax_log_softmax(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    a = data.draw(arrays_of(shape))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    check(lambda t: t.softmax(dim), a)
    check(lambda t: t.log_softmax(dim), a)


# -- matmul ------------------------------------------------------------------------------------------
@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.data())
def test_matmul_family(n, m, p, b, data):
    A = data.draw(arrays_of((n, m)))
    B = data.draw(arrays_of((m, p)))
    v = data.draw(arrays_of((m,)))
    u = data.draw(arrays_of((n,)))
    check(lambda x, y: x @ y, A, B)
    check(lambda x, y: x @ y, A, v)
    check(lambda x, y: x @ y, u, A)
    check(lambda x, y: x @ y, v, v)
    check(lambda x, y: x.mm(y), A, B)
    check(lambda x, y: x @ y, data.draw(arrays_of((b, n, m))), data.draw(arrays_of((b, m, p))))


# -- shape and indexing ------------------------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_shape_ops(data):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, max_side=4))
    a = data.draw(arrays_of(shape))
    check(lambda t: t.reshape(-1), a)
    check(lambda t: t.view(tuple(reversed(shape))), a)
    check(lambda t: t.transpose(0, 1), a)
    check(lambda t: t.transpose(0, 1).reshape(-1), a)  # clone + unsafe view
    check(lambda t: t.permute(*reversed(range(len(shape)))), a)
    check(lambda t: t.T if len(shape) == 2 else t.transpose(0, -1), a)
    check(lambda t: t.unsqueeze(1).expand(shape[0], 3, *shape[1:]), a)
    check(lambda t: t.unsqueeze(0).squeeze(0), a)
    check(lambda t: t.flatten(), a)
    check(lambda t: t[0], a)
    check(lambda t: t[:, 1:], a)
    check(lambda t: t[..., ::2], a)
    check(lambda t: t[None, 0, :1], a)
    idx = data.draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, max_size=5))
    check(lambda t: t[lk.tensor(idx)], a)  # repeated indices add up
    check(lambda t: t[a > 0], a)
    check(lambda t: lk.cat([t, t * 2], dim=1), a)
    check(lambda t: lk.stack([t, t.exp()], dim=-1), a)


def test_2d_matrix_t():
    check(lambda t: t.t() @ t, np.arange(6.0).reshape(2, 3) / 5)


# -- copies --------------------------------------------------------------------------------------------
@SETTINGS
@given(arrays_of(shapes))
def test_copies(a):
    check(lambda t: t.clone() * 3, a)
    check(lambda t: t.double() * 2, a)
    check(lambda t: t.cuda().exp().cpu(), a)
    check(lambda t: t.contiguous(), a)


def test_dtype_copy_gradient_is_cast_back():
    x = lk.tensor([1.5, -2.0], dtype=lk.float64, requires_grad=True)
    y = x.float()
    assert y.grad_fn.name() == "ToCopyBackward0" and y.dtype == lk.float32
    (y * lk.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.dtype == lk.float64
    assert x.grad.tolist() == [3.0, 4.0]


def test_inplace_on_non_leaf():
    check(lambda t: (t * 2).add_(t).mul_(t), np.array([0.5, -1.2, 2.0]))
    check(lambda t: (t * 1).sub_(t, alpha=0.5).div_(t + 3), np.array([0.5, -1.2, 2.0]))
