"""Random programs (the ``program`` rows of ``tests/op_db.py``) under leafkit's function transforms.

hypothesis draws a program of one (3, 4) tensor ``t`` (and constants that do not
depend on it), as ``tests/parity/test_random_programs.py`` builds them; then

* ``vmap(f)(X)`` equals stacking ``f(X[i])`` sample by sample, for a batch at
  dim 0 and at dim 1 (the batching rules, and the per-sample fallback, agree
  with the op itself);
* ``jacrev(f)(x)``, ``jacfwd(f)(x)`` and ``autograd.functional.jacobian(f, x)``
  (row by row, and with ``vectorize=True``) are equal;
* ``vmap(grad(lambda t: f(t).sum()))(X)`` equals each sample's ``grad``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_db import BY_NAME, PROGRAM_ROWS

import leafkit
from leafkit.func import grad, jacfwd, jacrev, vmap

INPLACE_ERROR = "vmap: inplace arithmetic(self, *extra_args) is not possible"
UNARY = [r.name for r in PROGRAM_ROWS if r.arity == 1]
BINARY = [r.name for r in PROGRAM_ROWS if r.arity == 2]

arrays = st.lists(st.floats(-2, 2, allow_nan=False, width=32), min_size=12, max_size=12).map(
    lambda v: np.array(v, dtype=np.float32).reshape(3, 4)
)
step = st.one_of(
    st.tuples(st.just("u"), st.sampled_from(UNARY), st.integers(0, 20), st.integers(0, 20)),
    st.tuples(st.just("b"), st.sampled_from(BINARY), st.integers(0, 20), st.integers(0, 20)),
)


def program(constants, steps, dtype):
    """The function ``t -> last value`` of the program; pool entry 0 is ``t``, then the constants."""
    consts = [leafkit.tensor(c).to(dtype) for c in constants]

    def f(t):
        pool = [t, *consts]
        for kind, name, i, j in steps:
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            row = BY_NAME[name]
            pool.append(row.program(leafkit, a) if kind == "u" else row.program(leafkit, a, b))
        return pool[-1]

    return f


def _close(a, b, rtol=2e-4, atol=2e-5):
    assert tuple(a.shape) == tuple(b.shape)
    assert a.dtype == b.dtype
    np.testing.assert_allclose(
        np.asarray(a.detach().double().tolist()), np.asarray(b.detach().double().tolist()), rtol=rtol, atol=atol
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    st.lists(arrays, min_size=2, max_size=4),
    st.lists(arrays, min_size=0, max_size=2),
    st.lists(step, min_size=1, max_size=6),
    st.booleans(),
)
def test_vmap_equals_the_loop(samples, constants, steps, batch_last):
    f = program(constants, steps, leafkit.float32)
    X = leafkit.tensor(np.stack(samples))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the per-sample fallback's performance warning
        want = leafkit.stack([f(x) for x in X])
        try:
            if batch_last:
                got = vmap(f, in_dims=1, out_dims=-1)(X.movedim(0, 1).contiguous()).movedim(-1, 0)
            else:
                got = vmap(f)(X)
        except RuntimeError as e:
            if batch_last and not str(e).startswith(INPLACE_ERROR):
                # batched on the last dim, each sample is a strided slice: f refuses it as it is (.view of a
                # tensor that is not contiguous), as PyTorch's vmap does; vmap raises what f raises on it
                with pytest.raises(RuntimeError) as on_slice:
                    f(X.movedim(0, 1).contiguous()[:, 0])
                assert str(on_slice.value) == str(e)
                return
            # a sample's values written in place into a constant: PyTorch's error too
            assert str(e).startswith(INPLACE_ERROR), e
            assert any(BY_NAME[name].name.startswith(("inplace", "setitem")) for _, name, _, _ in steps)
            return
    _close(got, want)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(arrays, st.lists(arrays, min_size=0, max_size=2), st.lists(step, min_size=1, max_size=5))
def test_jacrev_equals_jacfwd_equals_jacobian(x, constants, steps):
    f = program(constants, steps, leafkit.float64)
    t = leafkit.tensor(x).double()
    if not f(t).is_floating_point():
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rev = jacrev(f)(t)
        if not bool(leafkit.isfinite(rev).all()):
            # 0/0 in a derivative (hypot at 0): rows (reverse mode) and columns (forward mode) meet the nan in
            # different places, in PyTorch too; the Jacobian is not defined there
            return
        try:
            fwd = jacfwd(f)(t)  # vmap over the tangents
        except RuntimeError as e:  # the input's tangent written in place into a constant: PyTorch's vmap error too
            assert str(e).startswith(INPLACE_ERROR), e
            assert any(BY_NAME[name].name.startswith(("inplace", "setitem")) for _, name, _, _ in steps)
            return
        rows = leafkit.autograd.functional.jacobian(f, t)
        vec = leafkit.autograd.functional.jacobian(f, t, vectorize=True)
    for other in (fwd, rows, vec):
        _close(rev, other, rtol=1e-7, atol=1e-9)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(st.lists(arrays, min_size=2, max_size=3), st.lists(arrays, min_size=0, max_size=2), st.lists(step, max_size=5))
def test_vmap_grad_equals_each_samples_grad(samples, constants, steps):
    f = program(constants, steps, leafkit.float64)
    X = leafkit.tensor(np.stack(samples)).double()
    if not f(X[0]).is_floating_point():
        return

    def loss(t):
        return (f(t) * leafkit.arange(1.0, 13.0, dtype=leafkit.float64).view(3, 4)).sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = vmap(grad(loss))(X)
        except RuntimeError as e:  # a sample's values written in place into a constant: PyTorch's error too
            assert str(e).startswith(INPLACE_ERROR), e
            assert any(BY_NAME[name].name.startswith(("inplace", "setitem")) for _, name, _, _ in steps)
            return
        want = leafkit.stack([grad(loss)(x) for x in X])
    _close(got, want, rtol=1e-7, atol=1e-9)
