"""Shared pieces of the operation modules: the array-level Function base, dtype promotion."""
from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from .. import _dtype


class Op(Function):
    """Base of leafkit's own operations: arrays in, arrays out."""

    _array_api = True
    _is_view = False


def array_module(a):
    """numpy, or cupy for a CuPy array."""
    return np if isinstance(a, np.ndarray) or not hasattr(a, "__cuda_array_interface__") else _cupy()


def _cupy():
    import cupy

    return cupy


def as_array(x):
    """A NumPy scalar (what NumPy's full reductions return) as a 0-d array; arrays, NumPy or CuPy, unchanged.

    ``np.asarray`` would do for NumPy but refuses CuPy arrays (no implicit
    device-to-host copy), so the ops use this instead.
    """
    return np.asarray(x) if isinstance(x, np.generic) else x


def zeros_like_module(shape, like):
    """Zeros of ``shape`` with ``like``'s dtype, in ``like``'s array module (NumPy or CuPy)."""
    return array_module(like).zeros(shape, dtype=like.dtype)


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def result_type(a, b):
    """PyTorch's type promotion for two operands (arrays or Python numbers).

    Categories rank bool < integer < floating.  A Python number only raises
    the category (an int tensor times 2.5 is ``float32``, the default dtype);
    0-d arrays count as lower priority than arrays with dimensions, as in
    PyTorch.
    """
    a_arr = hasattr(a, "dtype") and not isinstance(a, (np.generic,))
    b_arr = hasattr(b, "dtype") and not isinstance(b, (np.generic,))
    if a_arr and b_arr:
        da, db = a.dtype, b.dtype
        if da == db:
            return da
        ka, kb = _KIND_RANK[da.kind], _KIND_RANK[db.kind]
        if ka != kb:
            return da if ka > kb else db
        za, zb = a.ndim == 0, b.ndim == 0
        if za != zb:  # a dimensioned operand of the same category wins
            return db if za else da
        return np.promote_types(da, db)
    arr, num = (a, b) if a_arr else (b, a)
    d = arr.dtype
    kn = 0 if isinstance(num, (bool, np.bool_)) else (1 if isinstance(num, (int, np.integer)) else 2)
    if kn > _KIND_RANK[d.kind]:
        return np.dtype(np.int64) if kn == 1 else _dtype.get_default_dtype().np
    return d


def promote(a, b):
    """Cast ``a`` and ``b`` (arrays or numbers) to their common PyTorch dtype."""
    rt = result_type(a, b)
    if hasattr(a, "dtype") and a.dtype != rt:
        a = a.astype(rt)
    if hasattr(b, "dtype") and b.dtype != rt:
        b = b.astype(rt)
    elif not hasattr(b, "dtype"):
        b = np.asarray(b, dtype=rt)[()] if rt.kind != "f" else b
    if not hasattr(a, "dtype"):
        a = np.asarray(a, dtype=rt)[()] if rt.kind != "f" else a
    return a, b


def broadcast_check(a, b):
    """Raise PyTorch's RuntimeError when two array shapes do not broadcast."""
    sa, sb = a.shape, b.shape
    if sa == sb:
        return
    for i in range(1, min(len(sa), len(sb)) + 1):
        x, y = sa[-i], sb[-i]
        if x != y and x != 1 and y != 1:
            dim = max(len(sa), len(sb)) - i
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {dim}")
