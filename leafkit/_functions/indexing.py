"""Indexing: ``t[key]`` (views for basic keys, ``IndexBackward0`` copies for index tensors) and ``t[key] = value``.

A key is read as PyTorch reads it (``torch/csrc/autograd/python_variable_indexing.cpp`` and
``ATen/TensorIndexing.h``): first the basic parts, in order, each on the result of the
last (``applySlicing``): an int is a ``select`` (a view), a slice a ``slice`` (a view;
inside a tuple a slice that covers its whole dimension makes none), ``None`` an
``unsqueeze``, ``True``/``False`` an ``unsqueeze`` indexed by ``[0]``/``[]``.  Index
tensors, lists and masks are kept for the dimension they stand at, and one
``IndexBackward0`` copy of the sliced view takes them all, so ``t[0, :, idx]`` is
``IndexBackward0`` over ``SelectBackward0`` and has PyTorch's shape (the
dimensions of the index go where PyTorch puts them, which is not always where
NumPy does).  The gradient of the copy adds up repeated indices.

Writing follows PyTorch's ``copy_to``: the value loses its leading size-1
dimensions (a ``view``), is broadcast to the target (an ``expand``), and is
copied into the view the key selects (``CopyBackwards``; a 0-d value
``fill_``\\s it, ``FillBackward3``), so the base's ``grad_fn`` becomes
``CopySlices``.  Index tensors in the key use ``index_put_``
(``IndexPutBackward0``) on the sliced view.

Errors are PyTorch's, in PyTorch's order: the value's type, the key's items and
the number of dimensions, the bounds of ints, the in-place rules (a leaf that
requires grad), then for index tensors the mask shapes, index dtypes, the value's
shape, its dtype, and the bounds of the indices.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _device, _dtype
from .._creation import check_nested
from .._tensor import Tensor
from . import _batched
from ._base import array_module, as_array, check_tensor, is_number, num, type_name
from ._base import dim as _dim
from ._batch_rules import declare, dims, logical_front
from ._batched import BatchedTensor, batch_size, expand_batch, pad, per_sample, wrap
from ._registry import VMAP_LEVELS, apply, defop, public
from .inplace import copy_spec, fill_tensor_spec, inplace
from .shape import alias_spec, select, slice_dim, unsqueeze_spec

SEQUENCE_INDEX_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; use "
    "x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
    "which will result either in an error or a different result"
)


def _shape(s) -> str:
    return f"[{', '.join(map(str, s))}]"


# -- the index ops ---------------------------------------------------------------------------------------------
def _index_arrays(key):
    """``(dimension of the sliced tensor, array)`` for each index array of a key (masks as they are)."""
    out, d = [], 0
    for k in key:
        if isinstance(k, slice):
            d += 1
        else:
            out.append((d, k))
            d += k.ndim if k.dtype.kind == "b" else 1
    return out


def _expanded(self, key):
    """PyTorch's checks of index tensors against the (sliced) tensor before any value is read: mask shapes, then
    (the masks made index tensors) that the indices broadcast.  Returns ``(size of the indexed dimension or None,
    index array)`` for each index tensor after the masks are expanded, and their broadcast shape."""
    xp = array_module(self)
    expanded = []
    for d, k in _index_arrays(key):
        if k.dtype.kind == "b":
            for j in range(k.ndim):
                if d + j >= self.ndim or k.shape[j] != self.shape[d + j]:
                    raise IndexError(
                        f"The shape of the mask {_shape(k.shape)} at index {j} does not match the shape "
                        f"of the indexed tensor {_shape(self.shape)} at index {d + j}"
                    )
            expanded.extend((None, nz) for nz in xp.nonzero(k))
        else:
            expanded.append((self.shape[d], k))
    shapes = [k.shape for _, k in expanded]
    if len(shapes) == 1:
        return expanded, shapes[0]
    try:
        return expanded, np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            f"{', '.join(_shape(s) for s in shapes)}"
        ) from None


def _check_bounds(expanded, index_shape) -> None:
    """The bounds of the indices, as PyTorch's kernel reports them: element by element, and for each the index
    tensors in order ("for dimension j" is the j-th index tensor)."""
    bad = [
        (j, size, k)
        for j, (size, k) in enumerate(expanded)
        if size is not None and k.size and (k.max() >= size or k.min() < -size)
    ]
    if not bad:
        return
    xp = array_module(bad[0][2])
    masks = [xp.broadcast_to((k < -size) | (k >= size), index_shape).reshape(-1) for _, size, k in bad]
    first = min(int(xp.argmax(m)) for m in masks if m.any())
    for (j, size, k), m in zip(bad, masks):
        if m[first]:
            raise IndexError(
                f"index {int(xp.broadcast_to(k, index_shape).reshape(-1)[first])} is out of bounds for "
                f"dimension {j} with size {size}"
            )


def _result_shape(shape, key, index_shape):
    """The shape of ``a[key]`` without reading it: the broadcast index shape where the first index stands when
    the indices are adjacent, in front otherwise (NumPy's rule and PyTorch's, for a key of slices and arrays)."""
    dims, d, first, items = [], 0, None, []
    for i, k in enumerate(key):
        if isinstance(k, slice):
            dims.append(len(range(*k.indices(shape[d]))))
            d += 1
        else:
            if first is None:
                first = len(dims)
            items.append(i)
            d += k.ndim if k.dtype.kind == "b" else 1
    dims.extend(shape[d:])
    if items[-1] - items[0] == len(items) - 1:  # adjacent in the key: the index dims stand where the first does
        return tuple(dims[:first]) + tuple(index_shape) + tuple(dims[first:])
    return tuple(index_shape) + tuple(dims)


def _expandable(shape, target) -> bool:
    """PyTorch's ``is_expandable_to``: ``shape`` has no more dims than ``target`` and each is 1 or equal."""
    if len(shape) > len(target):
        return False
    return all(s == 1 or s == t for s, t in zip(reversed(shape), reversed(target)))


def _index(self, key):
    expanded, index_shape = _expanded(self, key)
    shape = _result_shape(self.shape, key, index_shape)
    if 0 in shape:  # nothing is read, so nothing is checked (PyTorch's kernel never runs)
        return array_module(self).empty(shape, dtype=self.dtype)
    _check_bounds(expanded, index_shape)
    return as_array(self[key])


def _index_put(self, values, key, accumulate=False):
    """``index_put_``'s kernel and PyTorch's checks: a single mask with a one-element value is ``masked_fill``
    (any dtype); otherwise the value must broadcast to the indexing result, then have ``self``'s dtype, then the
    indices must be in bounds."""
    xp = array_module(self)
    out = self.copy()
    arrays = _index_arrays(key)
    masked_fill = (
        not accumulate and len(arrays) == 1 and arrays[0][1].dtype.kind == "b" and getattr(values, "size", 1) == 1
    )
    expanded, index_shape = _expanded(self, key)
    if masked_fill:
        out[key] = values.reshape(()).astype(self.dtype) if hasattr(values, "shape") else values
        return out
    target_shape = _result_shape(self.shape, key, index_shape)
    v = values if hasattr(values, "shape") else self.dtype.type(values)
    if hasattr(v, "shape"):
        if v.shape != target_shape and not _expandable(v.shape, target_shape):
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {_shape(v.shape)} cannot be broadcast to "
                f"indexing result of shape {_shape(target_shape)}"
            )
        if v.dtype != self.dtype:
            raise RuntimeError(
                f"Index put requires the source and destination dtypes match, got "
                f"{_dtype.word(self.dtype)} for the destination and {_dtype.word(v.dtype)} for the "
                "source."
            )
    if 0 in target_shape:
        return out
    _check_bounds(expanded, index_shape)
    if accumulate:
        xp.add.at(out, key, v)
    else:
        out[key] = v
    return out


index_spec = defop(
    "index",
    _index,
    self=lambda F, grad, self_sym_sizes, key: F.index_put_impl(F.new_zeros(self_sym_sizes, grad), grad, key, True),
)
index_put_spec = defop(
    "index_put",
    _index_put,
    inputs=("self", "values"),
    self=lambda F, grad, values, key, accumulate: (
        grad if accumulate else F.index_put(grad, F.zeros_like(values), key, False)
    ),
    values=lambda F, grad, key: F.index(grad, key),
)
defop(
    "index_put_impl",
    _index_put,
    inputs=("self", "values"),
    node="IndexPutImplBackward0",
    self=lambda F, grad, values, key, accumulate: (
        grad if accumulate else F.index_put(grad, F.zeros_like(values), key, False)
    ),
    values=lambda F, grad, key: F.index(grad, key),
)


# -- reading a key ---------------------------------------------------------------------------------------------
_GOT_TYPES = "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})"


def _sequence_array(seq):
    """A list (or NumPy array) in a key as PyTorch's ``sequenceToVariable`` makes it: bool stays bool, anything
    numeric becomes int64 (floats truncate).  A list NumPy cannot read as numbers (ragged, ``None``, an int past
    int64) raises what ``torch.tensor`` raises for it, with PyTorch's int64 target (:func:`check_nested`)."""
    try:
        arr = np.asarray(seq)
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.dtype == object or (arr.dtype == np.uint64 and not isinstance(seq, np.ndarray)):
        sizes = check_nested(seq, _dtype.int64)
        if 0 in sizes:  # nothing is read from an empty list: [[], [1]] is a (2, 0) index
            return np.zeros(sizes, dtype=np.int64)
        if arr is None:
            arr = np.asarray(seq, dtype=object)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind not in "iuf":
        bad = next((v for v in np.asarray(seq, dtype=object).reshape(-1) if not isinstance(v, (int, float))), arr)
        raise TypeError(f"new(): invalid data type '{type_name(bad)}'")
    return arr.astype(np.int64)


def _item(k, device):
    """One item of a key as PyTorch's Python layer reads it."""
    cls = k.__class__
    if cls is int or k is None or k is Ellipsis:
        return k
    if cls is Tensor or isinstance(k, Tensor):
        d = k._data
        if d.ndim == 0 and d.dtype.kind in "iu":
            return int(k.item())  # a 0-d integer tensor is an int (a select)
        if d.ndim == 0 and d.dtype.kind == "b":
            return bool(k.item())
        if d.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if k._device.type == "cpu" and device.type != "cpu":
            return _device.to_device_array(d, k._device, device)
        return _device.to_host(d) if k._device.type == "cpu" else d
    if cls is slice:
        if k.step is not None and num(k.step) == 0:
            raise ValueError("slice step cannot be zero")
        if any(isinstance(v, (Tensor, np.integer)) for v in (k.start, k.stop, k.step)):
            k = slice(*(int(v) if isinstance(v, (Tensor, np.integer)) else v for v in (k.start, k.stop, k.step)))
        return k
    if isinstance(k, (bool, np.bool_)):
        return bool(k)
    if isinstance(k, (int, np.integer)):
        return int(k)
    if isinstance(k, (list, tuple, np.ndarray, str)):
        arr = _sequence_array(k)
        return arr if array_module(device) is np else _device.to_device_array(arr, _device.CPU, device)
    raise IndexError(_GOT_TYPES.format(type_name(k)))


def _key_items(key, device):
    """The key as a tuple of items (PyTorch's ``wrapTuple``: a list holding sequences, slices, tensors, ``None``
    or ``...`` is a tuple of indices, with PyTorch's deprecation warning; any other list is one index)."""
    if (
        isinstance(key, (list, str))
        and len(key) < 32
        and any(isinstance(k, (list, tuple, str, slice, Tensor, np.ndarray)) or k is None or k is Ellipsis for k in key)
    ):
        warnings.warn(SEQUENCE_INDEX_WARNING, UserWarning, stacklevel=3)
        key = tuple(key)
    items = key if isinstance(key, tuple) else (key,)
    return tuple(_item(k, device) for k in items), not isinstance(key, tuple)


def _specified(items):
    n = 0
    for k in items:
        if isinstance(k, (int, slice)) and not isinstance(k, bool):
            n += 1
        elif hasattr(k, "dtype"):
            n += k.ndim if k.dtype.kind == "b" else 1
    return n


def _apply_slicing(t, items, lone, for_setitem):
    """PyTorch's ``applySlicing``: the basic items applied in order; returns the sliced tensor and the numpy key of
    the index arrays for its dimensions (``None`` when there are none)."""
    nd = t._data.ndim
    specified = _specified(items)
    if lone and len(items) == 1 and isinstance(items[0], int) and not isinstance(items[0], bool) and nd == 0:
        if items[0] == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                "in C++ to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"index {items[0]} is out of bounds for dimension 0 with size 0")
    if lone and len(items) == 1 and isinstance(items[0], slice) and nd == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if specified > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    out, dim = t, 0
    indices = {}
    for i, k in enumerate(items):  # PyTorch's messages name an int's place in the key ("dimension i")
        if k is Ellipsis:
            dim += nd - specified
        elif k is None:
            out = apply(unsqueeze_spec, (out, dim))
            dim += 1
        elif isinstance(k, bool):
            out = apply(unsqueeze_spec, (out, dim))
            indices[dim] = np.zeros(1 if k else 0, dtype=np.int64)
            dim += 1
        elif isinstance(k, int):
            size = out._data.shape[dim] if dim < out._data.ndim else 0  # past the end (two ellipses): size 0
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {i} with size {size}")
            out = select(out, dim, k)
        elif isinstance(k, slice):
            size = out._data.shape[dim]
            if k.step is not None and k.step < 0:
                raise ValueError("step must be greater than zero")
            whole = k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= size)
            if (lone and not for_setitem) or not whole:
                out = slice_dim(out, dim, k)
            dim += 1
        else:  # an index array: kept for the dimension(s) it stands at
            indices[dim] = k
            dim += k.ndim if k.dtype.kind == "b" else 1
    if not indices:
        return out, None
    key, d = [], 0
    last = max(indices)
    while d <= last:
        k = indices.get(d)
        if k is None:
            key.append(slice(None))
            d += 1
        else:
            key.append(k)
            d += k.ndim if k.dtype.kind == "b" else 1
    return out, tuple(key)


def index(t, key, for_setitem=False):
    """``t[key]``: the basic items as views (Select/Slice/Unsqueeze nodes), then one IndexBackward0 copy for index
    tensors, lists and masks, as PyTorch does it (see the module docstring).

    For ``t[key] = value`` (``for_setitem``) whole slices never make a node and a key that selects everything
    gives ``t`` itself, as PyTorch's setitem does.

    Raises
    ------
    IndexError
        PyTorch's messages: "too many indices for tensor of dimension", "index 5 is out of bounds for dimension 0
        with size 2", "only integers, slices ... are valid indices (got float)", "The shape of the mask ... does
        not match", "tensors used as indices must be long, int, byte or bool tensors", "invalid index of a 0-dim
        tensor".
    ValueError
        "slice step cannot be zero"; "step must be greater than zero" for a negative step.
    TypeError
        "new(): invalid data type 'str'" for a string.
    """
    if key.__class__ is slice and not for_setitem and t._data.ndim and _plain_slice(key):
        return slice_dim(t, 0, key)  # t[a:b], the commonest key (a batch): what the general path below does
    if VMAP_LEVELS and _batched.in_key(key):  # a batched index tensor (inside vmap)
        return _index_batched_key(t, key)
    items, lone = _key_items(key, t._device)
    sliced, arrays = _apply_slicing(t, items, lone, for_setitem)
    if arrays is not None:
        return apply(index_spec, (sliced, arrays))
    if sliced is t and not for_setitem:
        return apply(alias_spec, (t,))
    return sliced


def _plain_slice(k) -> bool:
    """A slice of Python ints (or None) with a positive step, which needs none of :func:`_item`'s conversions."""
    step = k.step
    return (
        (k.start is None or k.start.__class__ is int)
        and (k.stop is None or k.stop.__class__ is int)
        and (step is None or (step.__class__ is int and step > 0))
    )


Tensor.__getitem__ = index


# -- writing -----------------------------------------------------------------------------------------------------
def _leading_ones(shape):
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return k


def copy_to(dst, src) -> None:
    """PyTorch's ``copy_to`` for ``dst[...] = src``: copy, fill from a 0-d CPU value, or view + expand + copy."""
    if dst._data.shape == src._data.shape:
        inplace(dst, copy_spec, (dst, src))
        return
    if src._data.ndim == 0 and src._device.type == "cpu":
        inplace(dst, fill_tensor_spec, (dst, src))
        return
    src = src.view(src._data.shape[_leading_ones(src._data.shape) :])  # PyTorch views even when nothing is dropped
    if src._data.shape != dst._data.shape:
        src = src.expand(dst._data.shape)
    inplace(dst, copy_spec, (dst, src))


def _value(self, value):
    """The value of ``t[key] = value`` as PyTorch's ``valueToTensor`` reads it: a tensor, or a number as a 0-d CPU
    tensor of ``t``'s dtype; anything else is refused."""
    if isinstance(value, Tensor):
        if value._device is not self._device and not (value._device.type == "cpu" and value._data.ndim == 0):
            value = value.to(self._device)  # like copy_, assignment copies across devices (differentiably)
        return value
    if is_number(value):
        return Tensor._make(np.asarray(num(value), dtype=self._data.dtype), _device.CPU)
    if isinstance(value, complex) and self._data.dtype.kind != "c":
        raise RuntimeError(f"value cannot be converted to type {_dtype.ctype(self._data.dtype)} without overflow")
    raise TypeError(f"can't assign a {type_name(value)} to a {_dtype.type_string(self._data.dtype, self._device)}")


def setitem(self, key, value):
    """``t[key] = value`` in place.  Recorded like PyTorch: a basic key writes through a view
    (the base's ``grad_fn`` becomes ``CopySlices``), index tensors use ``IndexPutBackward0`` (on the view the basic
    items select, so ``CopySlices`` again when there is one).

    ``value`` is a tensor or a number (a number takes ``t``'s dtype; a float into an integer tensor truncates).
    A mask key with a one-element value fills like ``masked_fill`` (any dtype); other index tensors need a value
    of ``t``'s dtype.

    Raises
    ------
    TypeError
        "can't assign a list to a torch.FloatTensor" for a value that is not a tensor or a number.
    IndexError
        The key's errors (see :func:`index`), before the in-place rules.
    RuntimeError
        "a view of a leaf Variable that requires grad is being used in an in-place operation." (and PyTorch's other
        in-place errors); PyTorch's ``expand`` message when the value does not broadcast to a basic target;
        "shape mismatch: value tensor of shape ... cannot be broadcast to indexing result of shape ...", then
        "Index put requires the source and destination dtypes match" for index tensors.
    """
    value = _value(self, value)
    if VMAP_LEVELS and _batched.in_key(key):  # a batched index tensor (inside vmap): one sample at a time
        _setitem_batched_key(self, key, value)
        return
    items, lone = _key_items(key, self._device)
    if lone and len(items) == 1 and isinstance(items[0], bool):
        if items[0]:  # PyTorch's set_item: t[True] = v copies into t.unsqueeze(0)
            copy_to(apply(unsqueeze_spec, (self, 0)), value)
        return  # t[False] = v selects nothing: PyTorch does nothing
    sliced, arrays = _apply_slicing(self, items, lone, True)
    if arrays is None:
        copy_to(sliced, value)
        return
    k = _leading_ones(value._data.shape)
    if k:
        value = value.view(value._data.shape[k:])
    if value._device is not self._device:
        value = (
            Tensor._make(_device.to_device_array(value._data, value._device, self._device), self._device)
            if not value._requires_grad
            else value.to(self._device)
        )
    inplace(sliced, index_put_spec, (sliced, value, arrays, False))


Tensor.__setitem__ = setitem


def _indices_arg(self, indices, fn):
    """``index_put``'s ``indices``: a tuple or list of tensors (``None`` for a whole dimension), as a numpy key."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'indices' (position 1) must be tuple of Tensors, not {type_name(indices)}")
    key = []
    for i, k in enumerate(indices):
        if k is None:
            key.append(slice(None))
            continue
        if not isinstance(k, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(k)}")
        if k._data.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        d = k._data
        key.append(d if k._device is self._device else _device.to_device_array(d, k._device, self._device))
    if sum(k.ndim if hasattr(k, "dtype") and k.dtype.kind == "b" else 1 for k in key) > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim} (got {len(key)})")
    return tuple(key)


@public("index_put_", function=False)
def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (or ``+=`` with ``accumulate``), in place (``IndexPutBackward0``).

    ``indices`` is a tuple of index tensors (long, int, or bool masks; ``None`` for a whole dimension);
    ``values`` a tensor of ``self``'s dtype that broadcasts to the indexing result.  Raises PyTorch's errors:
    TypeError for indices that are not tensors, RuntimeError "shape mismatch: value tensor ..." and "Index put
    requires the source and destination dtypes match", IndexError for indices out of bounds."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put_(): argument 'values' (position 2) must be Tensor, not {type_name(values)}")
    return inplace(self, index_put_spec, (self, values, _indices_arg(self, indices, "index_put_"), bool(accumulate)))


@public("index_put")
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` put at ``indices`` (``IndexPutBackward0``); see :meth:`index_put_`."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 3) must be Tensor, not {type_name(values)}")
    return apply(index_put_spec, (input, values, _indices_arg(input, indices, "index_put"), bool(accumulate)))


# -- index_select, index_add, index_fill (task M1) --------------------------------------------------------------------
def _out_of_range(flat, lo, hi):
    """The first index outside ``lo <= i < hi`` (None when all are inside)."""
    if not flat.size:
        return None
    bad = (flat < lo) | (flat >= hi)
    if not bool(bad.any()):
        return None
    return int(flat[array_module(flat).argmax(bad)])


def _along(ndim, dim, idx):
    return (slice(None),) * dim + (idx,)


def _index_select(self, index, dim):
    if index.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if self.ndim == 0:
        if index.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.size} value(s)")
        if int(index.reshape(-1)[0]) != 0:
            raise IndexError("index out of range in self")
        return self.copy()
    flat = index.reshape(-1)
    if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= self.shape[dim]):
        raise IndexError("index out of range in self")
    return as_array(array_module(self).take(self, flat.astype(np.int64, copy=False), axis=dim))


def _index_add(self, index, source, dim, alpha=1):
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {_dtype.word(index.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_dtype.word(self.dtype)}) and source ({_dtype.word(source.dtype)}) "
            "must have the same scalar type"
        )
    flat = index.reshape(-1)
    s_shape = source.shape if source.ndim else (1,)
    t_shape = self.shape if self.ndim else (1,)
    if len(s_shape) != len(t_shape) or any(a != b for k, (a, b) in enumerate(zip(s_shape, t_shape)) if k != dim):
        raise RuntimeError(
            f"source tensor shape must match self tensor shape, excluding the specified dimension. Got "
            f"self.shape = [{', '.join(map(str, self.shape))}] source.shape = "
            f"[{', '.join(map(str, source.shape))}]"
        )
    if flat.size != s_shape[dim]:
        raise RuntimeError(
            f"index_add_(): Number of indices ({flat.size}) should be equal to source.size(dim): "
            f"({s_shape[dim]}), for dim: {dim}"
        )
    bad = _out_of_range(flat, 0, t_shape[dim])
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {t_shape[dim]}")
    out = self.reshape(t_shape).copy()
    src = source.reshape(s_shape)
    array_module(self).add.at(
        out,
        _along(out.ndim, dim, flat.astype(np.int64, copy=False)),
        src if alpha == 1 else src * self.dtype.type(alpha),
    )
    return out.reshape(self.shape)


def _index_fill(self, index, value, dim):
    if index.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = self.shape[dim] if self.ndim else 1
    flat = index.reshape(-1)
    bad = _out_of_range(flat, -size, size)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    out = self.copy()
    v = value if hasattr(value, "dtype") else self.dtype.type(value)
    if self.ndim == 0:
        if flat.size:
            out[...] = v
        return out
    out[_along(out.ndim, dim, flat % size)] = v
    return out


def _index_select_backward(F, grad, self_sym_sizes, dim, index):
    """PyTorch's index_select_backward: the gradient added into zeros at the selected places (repeated indices
    add up)."""
    return F.index_add(F.new_zeros(self_sym_sizes, grad), index, grad, dim)


def _index_add_source_backward(F, grad, dim, index, source_sym_sizes, alpha):
    picked = F.index_select(grad, index, dim) if source_sym_sizes else F.index_select(grad, index.reshape(()), dim)
    if source_sym_sizes:
        picked = F.expand(picked, source_sym_sizes)
    return picked if alpha == 1 else F.mul_scalar(picked, alpha)


index_select_spec = defop(
    "index_select", _index_select, inputs=("self", "index"), nondiff=("index",), self=_index_select_backward
)
index_add_spec = defop(
    "index_add",
    _index_add,
    inputs=("self", "index", "source"),
    nondiff=("index",),
    self=lambda F, grad: grad,
    source=_index_add_source_backward,
)
index_fill_spec = defop(
    "index_fill",
    _index_fill,
    inputs=("self", "index"),
    nondiff=("index",),
    self=lambda F, grad, dim, index: F.index_fill(grad, index, 0, dim),
)
index_fill_tensor_spec = defop(
    "index_fill_tensor",
    _index_fill,
    inputs=("self", "index", "value"),
    nondiff=("index",),
    node="IndexFillBackward1",
    self=lambda F, grad, dim, index: F.index_fill(grad, index, 0, dim),
    value=lambda F, grad, dim, index: F.sum(F.index_select(grad, _unique(index), dim)),
)


def _unique(index):
    """``at::_unique(index)``: each index once (a repeated index is filled once, so its gradient counts once)."""
    data = index._data if isinstance(index, Tensor) else index
    u = array_module(data).unique(data.reshape(-1))
    return Tensor._make(u, index._device) if isinstance(index, Tensor) else u


def _index_tensor(index, name, pos=3):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' (position {pos}) must be Tensor, not {type(index).__name__}")
    return index


@public("index_select")
def index_select(input, dim, index):
    """The slices of ``input`` at ``index`` (a 1-D or 0-D int64/int32 tensor) along ``dim``, copied
    (``IndexSelectBackward0``); a repeated index selects the same slice again.

    Same dtype and device; ``dim`` takes ``len(index)`` as its size. The gradient adds each slice's gradient back
    (PyTorch's ``index_select_backward``, an ``index_add`` into zeros). Raises RuntimeError for a float index,
    IndexError for an index out of range ("index out of range in self", negative ones included) or one with more
    than one dimension, TypeError for an index that is no tensor."""
    check_tensor("index_select", "input", input)
    _index_tensor(index, "index_select")
    return apply(index_select_spec, (input, index, _dim(dim, input._data.ndim)))


@public("index_add")
def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeated indices add up;
    ``IndexAddBackward0``).

    ``source`` has ``input``'s shape except ``len(index)`` along ``dim``, and the same dtype. d/dinput is 1;
    d/dsource is the gradient at the indexed slices (times ``alpha``). Raises RuntimeError for mismatched shapes
    or dtypes, an index out of range, or a float index."""
    check_tensor("index_add", "input", input)
    _index_tensor(index, "index_add")
    check_tensor("index_add", "source", source, 4)
    return apply(index_add_spec, (input, index, source, _dim(dim, input._data.ndim), alpha))


@public("index_add_", function=False)
def index_add_(self, dim, index, source, *, alpha=1):
    """In-place :meth:`index_add` (node ``IndexAddBackward0``)."""
    _index_tensor(index, "index_add_", 2)
    return inplace(self, index_add_spec, (self, index, source, _dim(dim, self._data.ndim), alpha))


def _index_fill_args(self, dim, index, value, name):
    _index_tensor(index, name, 2)
    d = _dim(dim, self._data.ndim)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        return index_fill_tensor_spec, (self, index, value, d)
    if not is_number(value):
        raise TypeError(f"{name}(): argument 'value' must be Number or Tensor, not {type(value).__name__}")
    return index_fill_spec, (self, index, num(value), d)


@public("index_fill")
def index_fill(input, dim, index, value):
    """A copy of ``input`` with the slices at ``index`` (an int64 tensor, 0-D or 1-D; negative entries count from
    the end) along ``dim`` set to ``value`` (``IndexFillBackward0``; ``IndexFillBackward1`` for a 0-d tensor value,
    which gets the summed gradient of the filled slices).

    The filled places get no gradient. Raises IndexError for an index out of range or not int64, RuntimeError for
    an index with more dimensions or a value tensor with dimensions."""
    check_tensor("index_fill", "input", input)
    spec, args = _index_fill_args(input, dim, index, value, "index_fill")
    return apply(spec, args)


@public("index_fill_", function=False)
def index_fill_(self, dim, index, value):
    """In-place :meth:`index_fill` (node ``IndexFillBackward0`` / ``IndexFillBackward1``)."""
    spec, args = _index_fill_args(self, dim, index, value, "index_fill_")
    return inplace(self, spec, args)


# -- issue 18: index_copy ---------------------------------------------------------------------------------------------
def _index_copy(self, index, source, dim):
    xp = array_module(self)
    out = self.copy()
    idx = index.reshape(-1)
    n = self.shape[dim] if self.ndim else 1
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"index_copy_(): index {int(idx.max() if idx.max() >= n else idx.min())} is out of bounds")
    if not self.ndim:
        return as_array(xp.asarray(source).reshape(()).astype(self.dtype))
    moved = xp.moveaxis(out, dim, 0)
    src = xp.moveaxis(source.reshape(source.shape if source.ndim else (1,)), dim if source.ndim else 0, 0)
    moved[idx] = src
    return as_array(out)


index_copy_spec = defop(
    "index_copy",
    _index_copy,
    inputs=("self", "index", "source"),
    nondiff=("index",),
    self=lambda F, grad, dim, index: F.index_fill(grad, index, 0, dim),
    source=lambda F, grad, dim, index, source_sym_sizes: _index_add_source_backward(
        F, grad, dim, index, source_sym_sizes, 1
    ),
)


def _index_copy_check(input, dim, index, source, name):
    check_tensor(name, "input", input)
    _index_tensor(index, name)
    check_tensor(name, "source", source, 4)
    if index.dtype != _dtype.int64:  # PyTorch's kernel names its in-place form in both cases
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {index.dtype.word}")
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"index_copy_(): self and source expected to have the same dtype, but got (self) {input.dtype.word} and "
            f"(source) {source.dtype.word}"
        )
    return _dim(dim, input._data.ndim)


@public("index_copy")
def index_copy(input, dim, index, source):
    """A copy of ``input`` with the slices at ``index`` along ``dim`` replaced by those of ``source``
    (``IndexCopyBackward0``): the replaced slices pass no gradient to ``input``, ``source`` gets theirs."""
    d = _index_copy_check(input, dim, index, source, "index_copy")
    return apply(index_copy_spec, (input, index, source, d))


@public("index_copy_", function=False)
def index_copy_(self, dim, index, source):
    """In-place :meth:`index_copy`."""
    d = _index_copy_check(self, dim, index, source, "index_copy_")
    return inplace(self, index_copy_spec, (self, index, source, d))


# -- vmap: batching rules (leafkit.func.vmap) --------------------------------------------------------------------------
MASK_VMAP_MESSAGE = (
    "vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over indexing "
    "with a boolean mask."
)


def _adjacent(key):
    arrays = [i for i, k in enumerate(key) if not isinstance(k, slice)]
    return arrays[-1] - arrays[0] == len(arrays) - 1


def _index_batched(spec, args, level):
    """``t[key]`` of batched samples with index arrays that are the same for every sample: the key gets a whole
    slice in front for the batch.  Index dims that NumPy puts first (indices apart in the key) come before the
    batch dimension."""
    self, key = args
    v = logical_front(self, level)
    out = apply(spec, (v, (slice(None), *key)))
    if _adjacent(key):
        return wrap(out, 0, level)
    _, index_shape = _expanded(self._data, key)
    return wrap(out, len(index_shape), level)


def _index_put_values(self, values, key, level):
    """``values`` aligned with the physical result of indexing ``self``'s samples with ``(slice(None), *key)``."""
    _, index_shape = _expanded(self._data, key)
    target = _result_shape(self._data.shape, key, index_shape)
    adjacent = _adjacent(key)
    pv = logical_front(values, level)
    if pv is not None:
        pv = pad(pv, len(target) - values._data.ndim)
        return pv if adjacent else pv.movedim(0, len(index_shape))
    if not adjacent and hasattr(values, "_data"):
        shape = values._data.shape
        return values.reshape((1,) * (len(target) - len(shape)) + tuple(shape)).unsqueeze(len(index_shape))
    return values


def _index_put_batched(spec, args, level):
    """``index_put`` with index arrays that are the same for every sample: the samples of ``self`` (expanded if it
    is not batched) and of ``values`` (aligned with the indexing result) in one op; masks go sample by sample."""
    self, values, key = args[:3]
    accumulate = args[3] if len(args) > 3 else False
    if any(not isinstance(k, slice) and k.dtype.kind == "b" for k in key):
        return per_sample(spec, args, level)
    v = logical_front(self, level)
    if v is None:
        v = expand_batch(self, batch_size(level))
    pv = _index_put_values(self, values, key, level)
    return wrap(apply(spec, (v, pv, (slice(None), *key), accumulate)), 0, level)


def _index_put_inplace_batched(v, spec, args, level, run):
    """``t[key] = values`` (``index_put_``) into batched samples: one in-place op on their physical tensor (``v``,
    the batch first); masks go sample by sample."""
    self, values, key = args[:3]
    accumulate = args[3] if len(args) > 3 else False
    if any(not isinstance(k, slice) and k.dtype.kind == "b" for k in key):
        for b in range(batch_size(level)):
            run(v.select(0, b), spec, (v.select(0, b), _sample(values, level, b), key, accumulate))
        return
    run(v, spec, (v, _index_put_values(self, values, key, level), (slice(None), *key), accumulate))


def _sentinel(j):
    return -(10**18) - j


def _index_batched_key(t, key):
    """``t[key]`` with batched index tensors in the key: one advanced-indexing op for every sample, an index
    array ``arange(batch)`` in front selecting each sample's own slice (PyTorch's rule for ``index``).  Keys this
    does not cover (nested vmap levels, empty index tensors) run sample by sample; a batched mask raises
    PyTorch's error."""
    items = tuple(key) if isinstance(key, (tuple, list)) else (key,)
    level = _batched.batched_level((t, *items))
    for k in items:
        if k.__class__ is BatchedTensor and k._level == level and k._data.dtype.kind == "b":
            raise RuntimeError(MASK_VMAP_MESSAGE)
    marked = []
    simple = t.__class__ is not BatchedTensor or (t._level == level and t._value.__class__ is not BatchedTensor)
    for j, k in enumerate(items):
        if k.__class__ is BatchedTensor:
            if k._level != level or k._value.__class__ is BatchedTensor or not k._data.size:
                simple = False
            if k._data.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            marked.append(np.full(k._data.shape, _sentinel(j), dtype=np.int64))
        else:
            marked.append(k)
    if not simple:
        return _per_sample_key(t, items, key, level, lambda tb, kb: index(tb, kb))
    n = batch_size(level)
    key2 = tuple(marked) if isinstance(key, (tuple, list)) else marked[0]
    found, lone = _key_items(key2, t._device)
    sliced, arrays = _apply_slicing(t, found, lone, False)
    positions = [i for i, k in enumerate(arrays) if not isinstance(k, slice)]
    if any(arrays[i].dtype.kind == "b" for i in positions):  # a mask beside batched indices: sample by sample
        return _per_sample_key(t, items, key, level, lambda tb, kb: index(tb, kb))
    rank = max(arrays[i].ndim for i in positions)
    phys = []
    for k in arrays:
        if isinstance(k, slice) or not (k.size and k.flat[0] <= _sentinel(0)):
            phys.append(k)
            continue
        b = items[int(_sentinel(0) - k.flat[0])]
        pk = pad(logical_front(b, level), rank - b._data.ndim)
        phys.append(pk._data if pk._data.dtype == np.int64 else pk._data.astype(np.int64))
    sv = logical_front(sliced, level)
    if sv is None:
        sv = expand_batch(sliced, n)
    batch_index = np.arange(n, dtype=np.int64).reshape((n,) + (1,) * rank)
    out = apply(index_spec, (sv, (batch_index, *phys)))
    first = positions[0]
    if first and _adjacent(arrays):  # PyTorch puts the index dims where the first index stands
        nd = out._data.ndim
        order = [0, *range(1 + rank, 1 + rank + first), *range(1, 1 + rank), *range(1 + rank + first, nd)]
        out = out.permute(order)
    return wrap(out, 0, level)


def _sample(x, level, b):
    return x._value.select(x._bdim, b) if x.__class__ is BatchedTensor and x._level == level else x


def _per_sample_key(t, items, key, level, run):
    outs = []
    for b in range(batch_size(level)):
        kb = tuple(_sample(k, level, b) for k in items)
        outs.append(run(_sample(t, level, b), kb if isinstance(key, (tuple, list)) else kb[0]))
    return wrap(apply(_batched._spec("stack"), (0, *outs)), 0, level)


def _setitem_batched_key(self, key, value):
    """``t[key] = value`` with batched index tensors: each sample written through a view of it."""
    items = tuple(key) if isinstance(key, (tuple, list)) else (key,)
    level = _batched.batched_level((self, value, *items))
    for k in items:
        if k.__class__ is BatchedTensor and k._level == level and k._data.dtype.kind == "b":
            raise RuntimeError(MASK_VMAP_MESSAGE)
    if self.__class__ is not BatchedTensor or self._level != level:
        raise RuntimeError(_batched.INPLACE_MESSAGE)
    for b in range(batch_size(level)):
        kb = tuple(_sample(k, level, b) for k in items)
        setitem(_sample(self, level, b), kb if isinstance(key, (tuple, list)) else kb[0], _sample(value, level, b))


declare(_index_batched, "index")
declare(_index_put_batched, "index_put", "index_put_impl")
index_put_spec.batch_inplace = _index_put_inplace_batched
declare(dims("dim", unbatched=("index",)), "index_select", "index_add", "index_fill")
declare(dims("dim", unbatched=("index", "value")), "index_fill_tensor")
