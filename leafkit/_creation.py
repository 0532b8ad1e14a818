"""Tensor factories (``tensor``, ``zeros``, ``randn`` ...) and module-level functional forms.

Every factory takes PyTorch's keywords ``dtype``, ``device`` and
``requires_grad``.  ``requires_grad=True`` on an integer or bool dtype raises
``RuntimeError("Only Tensors of floating point and complex dtype can require
gradients")``.  An unknown keyword raises ``TypeError``; nothing is silently
ignored.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _device, _dtype
from ._random import _rng
from ._tensor import Tensor, _parse_size
from .autograd.grad_mode import _state


def _finish(arr, dtype, device, requires_grad):
    dev = _device.canonical(device)
    _device.check_available(dev)
    if dtype is not None:
        if not isinstance(dtype, _dtype.dtype):
            raise TypeError(f"argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
        if arr.dtype != dtype.np:
            arr = arr.astype(dtype.np)
    if requires_grad and not _dtype.is_differentiable(arr.dtype):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if dev.type == "cuda":
        arr = _device.to_device_array(arr, _device.CPU, dev)
    t = Tensor._make(arr, dev)
    t._requires_grad = bool(requires_grad)
    if _state.inference:
        t._inference = True  # made in inference mode
    return t


def _infer(data, dtype=None):
    """NumPy array for ``data`` with PyTorch's dtype inference (Python floats -> default dtype).

    With ``dtype`` given, Python numbers go straight to it (no float32 rounding on the way to float64)."""
    if isinstance(data, Tensor):
        return _device.to_host(data._data).copy(), True
    if isinstance(data, np.ndarray):
        return np.array(data, copy=True), True
    if isinstance(data, np.generic):
        return np.asarray(data), True
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(data, (list, tuple)):
        flat = _flatten_check(data)
        if any(isinstance(x, Tensor) for x in flat):
            data = _tensors_to_values(data)
    try:
        arr = np.asarray(data)
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.dtype == object:
        sizes = check_nested(data, dtype)  # raises PyTorch's error for what NumPy could not read
        if 0 not in sizes:
            arr = np.asarray(data, dtype=dtype.np if dtype is not None else np.float64)
        else:  # PyTorch reads no element of an empty tensor: [[], [1]] is a (2, 0) tensor
            arr = np.zeros(sizes, dtype.np if dtype is not None else _dtype.get_default_dtype().np)
    elif arr.dtype.kind in "US":
        raise TypeError("new(): invalid data type 'str'")
    elif arr.dtype.kind == "u" and isinstance(data, (list, tuple, int)) and (dtype is None or dtype.np.kind in "iub"):
        raise ValueError("Overflow when unpacking long long")  # a Python int past int64 (NumPy made it uint64)
    if dtype is not None:
        return arr.astype(dtype.np), False
    if arr.dtype.kind == "f":
        arr = arr.astype(_dtype.get_default_dtype().np)
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "b":
        raise TypeError(f"Could not infer dtype of {arr.dtype}")
    return arr, False


def _sizes(data):
    """PyTorch's ``compute_sizes``: the shape read down the first element of each level."""
    sizes, seq = [], data
    while isinstance(seq, (list, tuple)):
        sizes.append(len(seq))
        if not seq:
            break
        seq = seq[0]
    return sizes


def check_nested(data, dtype):
    """Walk nested sequences as PyTorch's ``recursive_store`` does and raise its error at the first bad item:
    ValueError "expected sequence of length n at dim d (got m)", TypeError "not a sequence" (a number where a
    sequence should be) or for a sequence where a number should be, RuntimeError "Could not infer dtype of ..."
    (None, other objects), ValueError "Overflow when unpacking long long" (an int outside int64)."""
    sizes = _sizes(data)
    if 0 in sizes:
        return sizes
    if dtype is not None:
        floating = dtype.np.kind in "fc"
    else:  # the inferred dtype: a float anywhere makes it floating
        floating = any(isinstance(x, (float, np.floating)) for x in _flatten_check(data))

    def walk(x, d):
        if d == len(sizes):
            if isinstance(x, (list, tuple)):
                raise TypeError(
                    f"must be real number, not {type(x).__name__}"
                    if floating
                    else f"'{type(x).__name__}' object cannot be interpreted as an integer"
                )
            if isinstance(x, str):
                raise TypeError("new(): invalid data type 'str'")
            if isinstance(x, bool) or isinstance(x, (float, np.generic)) or isinstance(x, Tensor):
                return
            if isinstance(x, int):
                if not floating and not -(2**63) <= x < 2**63:
                    raise ValueError("Overflow when unpacking long long")
                return
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        if not isinstance(x, (list, tuple)):
            raise TypeError("not a sequence")
        if len(x) != sizes[d]:
            raise ValueError(f"expected sequence of length {sizes[d]} at dim {d} (got {len(x)})")
        for item in x:
            walk(item, d + 1)

    walk(data, 0)
    return sizes


def _flatten_check(data):
    out, stack = [], [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            out.append(x)
    return out


def _tensors_to_values(data):
    if isinstance(data, Tensor):  # each element becomes a Python scalar, with PyTorch's warning for one that
        return data._scalar(warn=True)  # requires grad (the new tensor keeps no history)
    if isinstance(data, (list, tuple)):
        return [_tensors_to_values(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Make a leaf tensor from data (nested lists, numbers, NumPy arrays), copying it.

    Parameters
    ----------
    data : number, sequence, ndarray or Tensor
        Python floats give ``float32`` (the default dtype), ints ``int64``,
        bools ``bool``; a NumPy array keeps its dtype.
    dtype : leafkit.dtype, optional
    device : str or leafkit.device, optional
        ``"cpu"`` (default) or ``"cuda"``.
    requires_grad : bool
        Make the new leaf require grad.

    Raises
    ------
    RuntimeError
        ``requires_grad=True`` on a non-floating dtype ("Only Tensors of
        floating point and complex dtype can require gradients").
    TypeError
        Data of a type that has no dtype (strings, objects).

    Notes
    -----
    Passing a Tensor warns, as PyTorch does, that ``t.clone().detach()`` is
    the recommended copy.
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"tensor(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    arr, _ = _infer(data, dtype)
    return _finish(arr, dtype, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor`, but without a copy when it can: a Tensor is returned as is (or moved with ``to``),
    and a NumPy array of a supported dtype shares its memory on cpu, as in PyTorch."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if (
        isinstance(data, np.ndarray)
        and (dtype is None or dtype.np == data.dtype)
        and _device.canonical(device).type == "cpu"
        and data.dtype in _dtype._FROM_NP
    ):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory with ``arr`` (changes show on both sides)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    return Tensor._make(arr if arr.ndim else arr.reshape(()), _device.CPU)


def _factory_dtype(dtype):
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    return dtype if dtype is not None else _dtype.get_default_dtype()


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros of shape ``size`` (default dtype float32)."""
    shape = _parse_size(size, negative="zeros: Dimension size must be non-negative.")
    return _finish(np.zeros(shape, _factory_dtype(dtype).np), None, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones of shape ``size`` (default dtype float32)."""
    return _finish(np.ones(_parse_size(size), _factory_dtype(dtype).np), None, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """Like ``zeros`` (leafkit always initialises memory)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows the value, as in PyTorch."""
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _dtype.bool
        elif isinstance(fill_value, int):
            dtype = _dtype.int64
        else:
            dtype = _dtype.get_default_dtype()
    return _finish(np.full(_parse_size((size,)), fill_value, dtype.np), None, device, requires_grad)


def _like(t, dtype, device):
    return (dtype if dtype is not None else t.dtype), (device if device is not None else t.device)


batched_like = None  # set by vmap's machinery (leafkit._functions._batched): see _shaped_like


def _shaped_like(t, make):
    """``make(t.shape)``; inside vmap, for a batched ``t``, a batched tensor of that shape, as PyTorch's ``*_like``
    functions give (so a batched value can be written into it)."""
    if batched_like is not None and t.__class__ is not Tensor and getattr(t, "_level", None):
        return batched_like(t, make, t.shape)
    return make(t.shape)


def zeros_like(t, *, dtype=None, device=None, requires_grad=False):
    dt, dev = _like(t, dtype, device)
    return _shaped_like(t, lambda shape: zeros(shape, dtype=dt, device=dev, requires_grad=requires_grad))


def ones_like(t, *, dtype=None, device=None, requires_grad=False):
    dt, dev = _like(t, dtype, device)
    return _shaped_like(t, lambda shape: ones(shape, dtype=dt, device=dev, requires_grad=requires_grad))


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False):
    dt, dev = _like(t, dtype, device)
    return _shaped_like(t, lambda shape: full(shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad))


def empty_like(t, *, dtype=None, device=None, requires_grad=False):
    return zeros_like(t, dtype=dtype, device=device, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; ints give int64, any float the default dtype."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = _dtype.int64 if ints else _dtype.get_default_dtype()
    n = math.ceil((end - start) / step)
    arr = (
        (start + np.arange(n, dtype=np.float64) * step)
        if dtype.is_floating_point
        else np.arange(start, end, step, dtype=np.int64)
    )
    return _finish(arr.astype(dtype.np), None, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    arr = np.linspace(start, end, steps).astype(_factory_dtype(dtype).np)
    return _finish(arr, None, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    return _finish(np.eye(n, m, dtype=_factory_dtype(dtype).np), None, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard-normal samples of shape ``size`` from the seeded generator (see :func:`manual_seed`)."""
    dt = _factory_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"\"normal_kernel_cpu\" not implemented for '{dt.word}'")
    arr = _rng(generator).standard_normal(size=_parse_size(size)).astype(dt.np)
    return _finish(arr, None, device, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1) of shape ``size``."""
    dt = _factory_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"\"check_uniform_bounds\" not implemented for '{dt.word}'")
    arr = _rng(generator).random(size=_parse_size(size)).astype(dt.np)
    return _finish(arr, None, device, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    arr = _rng(generator).integers(low, high, size=_parse_size((size,)))
    return _finish(arr.astype((dtype or _dtype.int64).np), None, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of ``0 .. n-1`` (int64)."""
    arr = _rng(generator).permutation(int(n))
    return _finish(arr.astype((dtype or _dtype.int64).np), None, device, requires_grad)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t) -> int:
    return t.numel()
