"""Indexing: ``t[key]`` (views for basic keys, ``IndexBackward0`` copies for index tensors) and ``t[key] = value``.

Reading follows PyTorch: an int is a ``select`` (a view), a slice a
``slice`` (a view), ``None`` an ``unsqueeze``; index tensors, lists and
masks make one ``IndexBackward0`` copy, whose gradient adds up repeated
indices.

Writing follows PyTorch's ``copy_to``: the value loses its leading size-1
dimensions (a ``view``), is broadcast to the target (an ``expand``), and is
copied into the view the key selects (``CopyBackwards``; a 0-d value
``fill_``\\s it, ``FillBackward3``), so the base's ``grad_fn`` becomes
``CopySlices``.  Index tensors in the key use ``index_put_``
(``IndexPutBackward0``).
"""
from __future__ import annotations

import numpy as np

from .. import _device
from ..autograd.grad_mode import _state
from .._tensor import Tensor
from ._base import array_module, as_array, is_number, num
from ._registry import apply, defop, public
from .inplace import check_inplace_allowed, copy_spec, fill_tensor_spec, inplace
from .shape import alias_spec, select, slice_dim, unsqueeze_spec


def _index(self, key):
    try:
        return as_array(self[key])
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None


def _index_put(self, values, key, accumulate=False):
    out = self.copy()
    target_shape = out[key].shape
    v = values if hasattr(values, "shape") else self.dtype.type(values)
    if hasattr(v, "shape") and v.shape != target_shape:
        try:
            array_module(self).broadcast_shapes(v.shape, target_shape)
            if len(v.shape) > len(target_shape):
                raise ValueError
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape [{', '.join(map(str, v.shape))}] cannot be "
                               f"broadcast to indexing result of shape [{', '.join(map(str, target_shape))}]") from None
    if accumulate:
        array_module(self).add.at(out, key, v)
    else:
        out[key] = v
    return out


index_spec = defop("index", _index,
                   self=lambda F, grad, self_sym_sizes, key: F.index_put_impl(F.new_zeros(self_sym_sizes, grad), grad,
                                                                             key, True))
index_put_spec = defop(
    "index_put", _index_put, inputs=("self", "values"),
    self=lambda F, grad, values, key, accumulate: grad if accumulate else F.index_put(grad, F.zeros_like(values), key,
                                                                                      False),
    values=lambda F, grad, key: F.index(grad, key))
defop("index_put_impl", _index_put, inputs=("self", "values"), node="IndexPutImplBackward0",
      self=lambda F, grad, values, key, accumulate: grad if accumulate else F.index_put(grad, F.zeros_like(values), key,
                                                                                        False),
      values=lambda F, grad, key: F.index(grad, key))


# -- reading -----------------------------------------------------------------------------------------------------
def normalize_key(key):
    """PyTorch's reading of an index: a list holding sequences, slices or tensors is a tuple of indices,
    and a 0-d integer tensor is a plain int (so ``h[torch.tensor(1)]`` is a view, like ``h[1]``)."""
    if isinstance(key, list) and any(isinstance(k, (list, tuple, slice, Tensor)) or k is None or k is Ellipsis
                                     for k in key):
        key = tuple(key)

    def one(k):
        if isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu":
            return int(k.item())
        return k
    return tuple(one(k) for k in key) if isinstance(key, tuple) else one(key)


def is_basic_key(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all((isinstance(k, (int, np.integer)) and not isinstance(k, bool)) or isinstance(k, slice) or k is None
               or k is Ellipsis for k in items)


def convert_key(key, device=None):
    """Index tensors and lists as arrays for NumPy/CuPy."""
    if isinstance(key, tuple):
        return tuple(convert_key(k, device) for k in key)
    if isinstance(key, Tensor):
        return _device.to_host(key._data) if key._device.type == "cpu" else key._data
    if isinstance(key, list):
        return np.asarray(key)
    return key


def index(t, key, for_setitem=False):
    """Basic indexing becomes Select/Slice/Unsqueeze nodes (views); anything else one IndexBackward0 copy.

    Follows PyTorch: a lone slice always makes a ``SliceBackward0``; inside a
    tuple, slices that cover their whole dimension make no node; a list that
    holds sequences, slices or tensors is read as a tuple of indices.  For
    ``t[key] = value`` (``for_setitem``) whole slices never make a node and a
    key that selects everything gives ``t`` itself, as PyTorch's setitem does.
    """

    key = normalize_key(key)
    items = key if isinstance(key, tuple) else (key,)
    if not is_basic_key(key):
        for k in items:
            if isinstance(k, Tensor) and k._data.dtype.kind not in "iub":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if isinstance(key, Tensor) and key._data.dtype.kind == "b" and key._data.ndim == 0:
            # PyTorch indexes with a 0-d mask by adding a dimension of size 1 first
            return apply(index_spec, (apply(unsqueeze_spec, (t, 0)), (convert_key(key).reshape(1),)))
        return apply(index_spec, (t, convert_key(key)))
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
    nd = t._data.ndim
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if nd == 0 and any(isinstance(k, (int, np.integer)) for k in items):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    if consumed > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    lone_slice = isinstance(key, slice) and not for_setitem
    out, dim, src_dim = t, 0, 0
    shape = t._data.shape
    for k in items:
        if k is Ellipsis:
            dim += nd - consumed
            src_dim += nd - consumed
        elif k is None:
            out = apply(unsqueeze_spec, (out, dim))
            dim += 1
        elif isinstance(k, slice):
            whole = k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= shape[src_dim])
            if lone_slice or not whole:
                out = slice_dim(out, dim, k)
            dim += 1
            src_dim += 1
        else:
            size = shape[src_dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {src_dim} with size {size}")
            out = select(out, dim, int(k))
            src_dim += 1
    if out is t and not for_setitem:
        out = apply(alias_spec, (t,))
    return out


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
    src = src.view(src._data.shape[_leading_ones(src._data.shape):])  # PyTorch views even when nothing is dropped
    if src._data.shape != dst._data.shape:
        src = src.expand(dst._data.shape)
    inplace(dst, copy_spec, (dst, src))


def setitem(self, key, value):
    """``t[key] = value`` in place.  Recorded like PyTorch: a basic key writes through a view
    (the base's ``grad_fn`` becomes ``CopySlices``), index tensors use ``IndexPutBackward0``.

    Raises ``RuntimeError`` ("a view of a leaf Variable that requires grad is being used in an in-place
    operation.") on a leaf that requires grad while grad mode is on; PyTorch's ``expand`` message when the
    value does not broadcast to the target; "shape mismatch: value tensor of shape ... cannot be broadcast to
    indexing result of shape ..." for index tensors."""
    if isinstance(value, Tensor):
        if value._device is not self._device and not (value._device.type == "cpu" and value._data.ndim == 0):
            value = value.to(self._device)  # like copy_, assignment copies across devices (differentiably)
    elif is_number(value):
        value = Tensor._make(np.asarray(num(value), dtype=self._data.dtype), _device.CPU)
    else:
        value = Tensor._make(np.asarray(value, dtype=self._data.dtype), self._device)
    key = normalize_key(key)
    if is_basic_key(key):
        copy_to(index(self, key, for_setitem=True), value)
        return
    self._fresh()
    if _state.enabled:
        check_inplace_allowed(self)
    k = _leading_ones(value._data.shape)
    if k:
        value = value.view(value._data.shape[k:])
    if value._device is not self._device:
        value = Tensor._make(_device.to_device_array(value._data, value._device, self._device), self._device) \
            if not value._requires_grad else value.to(self._device)
    inplace(self, index_put_spec, (self, value, convert_key(key), False))


Tensor.__setitem__ = setitem


@public("index_put_", function=False)
def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (or ``+=`` with ``accumulate``), in place (``IndexPutBackward0``)."""
    return inplace(self, index_put_spec, (self, values, convert_key(tuple(indices)), bool(accumulate)))


@public("index_put")
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` put at ``indices`` (``IndexPutBackward0``)."""
    return apply(index_put_spec, (input, values, convert_key(tuple(indices)), bool(accumulate)))
