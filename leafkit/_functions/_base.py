"""What the op families share: PyTorch's type promotion, broadcasting checks, argument checks."""

from __future__ import annotations

import functools
import inspect
import numbers
import os
import sys
import warnings

import numpy as np

from .. import _dtype
from .._device import array_module, as_array  # noqa: F401  (re-exported for the op families)
from .._tensor import Tensor

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}

try:  # NumPy 2: np.errstate sets this context variable; setting it directly costs a fifth as much per call
    from numpy._core.umath import _extobj_contextvar as _FP_STATE
    from numpy._core.umath import _make_extobj

    _QUIET = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # NumPy 1.x
    _FP_STATE = _QUIET = None


def quiet(fn):
    """``fn`` with NumPy's floating-point warnings off while it runs (``np.errstate(all="ignore")``).

    PyTorch computes ``inf * 0``, ``inf - inf``, overflow in a cast to
    float16, the mean of nothing ... silently (nan, inf); NumPy warns with a
    ``RuntimeWarning``.  Every registered op's forward runs through this
    (see :func:`._namespace.add_op`); backward passes run under one
    ``np.errstate`` each (``leafkit.autograd``).  Only the thread's own
    NumPy state changes, and only while ``fn`` runs: the user's
    ``np.seterr`` settings stay as they are.
    """
    if _FP_STATE is None:

        def run(*args, **kwargs):
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)
    else:
        enter, leave, state = _FP_STATE.set, _FP_STATE.reset, _QUIET

        def run(*args, **kwargs):
            token = enter(state)
            try:
                return fn(*args, **kwargs)
            finally:
                leave(token)

    run.__name__ = getattr(fn, "__name__", "forward")
    run.__doc__ = fn.__doc__
    run.__wrapped__ = fn
    return run


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def warn_user(message, category=UserWarning) -> None:
    """``warnings.warn`` pointing at the first line outside leafkit (the user's), however deep the op was."""
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def is_number(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, complex)


def num(x):
    """A NumPy scalar as a Python number; anything else unchanged."""
    return x.item() if isinstance(x, np.generic) else x


def result_type(a, b):
    """PyTorch's type promotion for two operands (arrays or Python numbers).

    Categories rank bool < integer < floating.  A Python number only raises
    the category (an int tensor times 2.5 is ``float32``, the default dtype);
    0-d arrays count as lower priority than arrays with dimensions, as in
    PyTorch.
    """
    a_arr = hasattr(a, "dtype") and not isinstance(a, np.generic)
    b_arr = hasattr(b, "dtype") and not isinstance(b, np.generic)
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
    if not a_arr and not b_arr:
        if isinstance(a, np.generic) or isinstance(b, np.generic):  # a NumPy scalar: a 0-d result inside an op
            return np.result_type(a, b)
        # two Python numbers: bool, int64 or the default float dtype, as torch.tensor(n) has
        return _NUMBER_DTYPES[max(_number_rank(a), _number_rank(b))]()
    arr, n = (a, b) if a_arr else (b, a)
    d = arr.dtype
    kn = _number_rank(n)
    if kn > _KIND_RANK[d.kind]:
        return _NUMBER_DTYPES[kn]()
    return d


def promote_types(a, b):
    """PyTorch's ``promote_types`` of two dtypes: across categories (bool < integer < floating) the higher
    category's dtype (``int64`` and ``float16`` give ``float16``, where NumPy says ``float64``)."""
    if a == b:
        return a
    ka, kb = _KIND_RANK[a.kind], _KIND_RANK[b.kind]
    if ka != kb:
        return a if ka > kb else b
    return np.promote_types(a, b)


def result_type_many(*operands):
    """PyTorch's ``result_type`` of any number of operands (arrays, numbers, ``None`` skipped).

    As ``at::native::result_type``: dimensioned arrays, 0-d arrays and numbers
    are promoted within each group; a lower group's dtype counts only when its
    category (bool < integer < floating) is higher.  A float number stands for
    the default dtype, an int for int64.
    """
    groups = [None, None, None]  # dimensioned, 0-d, numbers
    for x in operands:
        if x is None:
            continue
        if hasattr(x, "dtype") and not isinstance(x, np.generic):
            g, d = (0 if x.ndim else 1), x.dtype
        else:
            g, d = 2, _NUMBER_DTYPES[_number_rank(x)]()
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)
    out = None
    for d in reversed(groups):  # combine_categories(higher, lower), from the lowest group up
        if d is None:
            continue
        if out is None or d.kind == "f":
            out = d
        elif d.kind == "b" or out.kind == "f":
            out = promote_types(d, out)
        else:  # an integer group over an integer or bool one keeps its own dtype
            out = d
    return out


def _number_rank(n) -> int:
    return 0 if isinstance(n, (bool, np.bool_)) else (1 if isinstance(n, (int, np.integer)) else 2)


_NUMBER_DTYPES = (lambda: np.dtype(np.bool_), lambda: np.dtype(np.int64), lambda: _dtype.get_default_dtype().np)


def promote(a, b):
    """Cast ``a`` and ``b`` (arrays or numbers) to their common PyTorch dtype."""
    rt = result_type(a, b)
    if hasattr(a, "dtype") and a.dtype != rt:
        a = a.astype(rt)
    if hasattr(b, "dtype") and b.dtype != rt:
        b = b.astype(rt)
    elif not hasattr(b, "dtype"):
        b = _scalar_as(b, rt)
    if not hasattr(a, "dtype"):
        a = _scalar_as(a, rt)
    return a, b


def _scalar_as(x, rt):
    """A Python number as a NumPy scalar of an integer or bool dtype ``rt``, wrapping around as PyTorch's cast
    does (``uint8_tensor + 300`` adds 44); floats stay Python floats."""
    if rt.kind == "f":
        return x
    return np.asarray(x).astype(rt)[()]


def prep(a, b):
    """Promote dtypes and check broadcasting (fast path: two arrays of one dtype and shape)."""
    if type(b) is float and a.dtype.kind == "f":
        return a, b
    if hasattr(b, "dtype") and hasattr(a, "dtype"):
        if a.dtype != b.dtype:
            a, b = promote(a, b)
        if a.shape != b.shape:
            broadcast_check(a, b)
        return a, b
    return promote(a, b)


def broadcast_check(a, b):
    """Raise PyTorch's RuntimeError when two array shapes do not broadcast."""
    sa, sb = a.shape, b.shape
    if sa == sb:
        return
    for i in range(1, min(len(sa), len(sb)) + 1):
        x, y = sa[-i], sb[-i]
        if x != y and x != 1 and y != 1:
            dim = max(len(sa), len(sb)) - i
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {dim}"
            )


def broadcast_shapes(*shapes):
    """The shape several shapes broadcast to (PyTorch's message when they do not)."""
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        s = (1,) * (n - len(s)) + tuple(s)
        for i, (x, y) in enumerate(zip(out, s)):
            if x == 1:
                out[i] = y
            elif y != 1 and x != y:
                raise RuntimeError(
                    f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}"
                )
    return tuple(out)


def to_float(a):
    """Integer and bool arrays become the default float dtype (what PyTorch's float-only ops return)."""
    if a.dtype.kind != "f":
        return a.astype(_dtype.get_default_dtype().np)
    return a


def dim(d, ndim):
    """A dimension index checked and made non-negative (a 0-d tensor accepts 0 and -1)."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def dims(dim_arg, ndim):
    """``dim`` (an int, a sequence, or empty for every dimension) as a sorted-by-appearance tuple of dims."""
    if dim_arg is None:
        return tuple(range(ndim))
    ds = (dim_arg,) if isinstance(dim_arg, (int, np.integer)) else tuple(dim_arg)
    if not ds:  # PyTorch: an empty dim list reduces over every dimension
        return tuple(range(ndim))
    out = []
    for d in ds:
        n = max(ndim, 1)
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        if d % n in out:
            raise RuntimeError(f"dim {d % n} appears multiple times in the list of dims")
        out.append(d % n)
    return tuple(out) if ndim else ()


def wrap_dims(dim_arg, ndim):
    """A dim list as PyTorch's ``flip``/``amax``/``var``/``logsumexp`` read it: ``None`` or empty is ``()`` (unlike
    :func:`dims`, no dimension at all; each op says what that means), an int or a sequence is checked and made
    non-negative, and a 0-d tensor's ``0``/``-1`` stays ``(0,)``.

    Raises ``IndexError`` ("Dimension out of range ...") and ``RuntimeError`` for a repeated dim."""
    if dim_arg is None:
        return ()
    ds = (dim_arg,) if isinstance(dim_arg, (int, np.integer)) else tuple(dim_arg)
    n = max(ndim, 1)
    out = []
    for d in ds:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        if d % n in out:
            raise RuntimeError(f"dim {d % n} appears multiple times in the list of dims")
        out.append(d % n)
    return tuple(out)


def type_name(x) -> str:
    """The name PyTorch's messages give the type of ``x`` (CPython's ``tp_name``): ``list``, ``str``, a class
    defined in Python by its name, an extension type with its module (``numpy.ndarray``)."""
    cls = type(x)
    if cls.__module__ == "builtins" or cls.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE: a class made in Python
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


def numpy_names(fn):
    """Accept NumPy's argument names as PyTorch's argument parser does: ``axis`` for ``dim``, ``keepdims`` for
    ``keepdim``, ``x``/``a``/``x1`` for ``input``, ``x2`` for ``other`` (``t.sum(axis=0)``)."""
    params = set(inspect.signature(fn).parameters)
    names = {k: v for k, v in _NUMPY_NAMES.items() if v in params}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for k in [k for k in kwargs if k in names]:
                if names[k] in kwargs:
                    raise TypeError(f"{fn.__name__}() got multiple values for argument '{names[k]}'")
                kwargs[names[k]] = kwargs.pop(k)
        return fn(*args, **kwargs)

    return wrapper


def check_tensor(fn: str, name: str, x, pos: int = 1) -> None:
    """PyTorch's TypeError for a non-tensor argument."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type_name(x)}")


def operand(x, fn: str, name: str = "other"):
    """A tensor or a number as an op's second operand (a NumPy scalar becomes a Python number)."""
    if isinstance(x, Tensor):
        return x
    if is_number(x):
        return num(x)
    raise TypeError(f"{fn}(): argument '{name}' (position 1) must be Tensor, not {type_name(x)}")


def as_operand(x):
    """For operators: a tensor or number as is, ``None`` for anything else (the operator then returns
    NotImplemented)."""
    cls = x.__class__
    if cls is float or cls is int or cls is Tensor:
        return x
    if isinstance(x, Tensor):
        return x
    if is_number(x):
        return num(x)
    return None
