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
from ._base import check_tensor, dim as _dim
from .. import _dtype
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
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype.word(index.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"index_add_(): self ({_dtype.word(self.dtype)}) and source ({_dtype.word(source.dtype)}) "
                           "must have the same scalar type")
    flat = index.reshape(-1)
    s_shape = source.shape if source.ndim else (1,)
    t_shape = self.shape if self.ndim else (1,)
    if len(s_shape) != len(t_shape) or any(a != b for k, (a, b) in enumerate(zip(s_shape, t_shape)) if k != dim):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = [{', '.join(map(str, self.shape))}] source.shape = "
                           f"[{', '.join(map(str, source.shape))}]")
    if flat.size != s_shape[dim]:
        raise RuntimeError(f"index_add_(): Number of indices ({flat.size}) should be equal to source.size(dim): "
                           f"({s_shape[dim]}), for dim: {dim}")
    bad = _out_of_range(flat, 0, t_shape[dim])
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {t_shape[dim]}")
    out = self.reshape(t_shape).copy()
    src = source.reshape(s_shape)
    array_module(self).add.at(out, _along(out.ndim, dim, flat.astype(np.int64, copy=False)),
                              src if alpha == 1 else src * self.dtype.type(alpha))
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


index_select_spec = defop("index_select", _index_select, inputs=("self", "index"), nondiff=("index",),
                          self=_index_select_backward)
index_add_spec = defop("index_add", _index_add, inputs=("self", "index", "source"), nondiff=("index",),
                       self=lambda F, grad: grad, source=_index_add_source_backward)
index_fill_spec = defop("index_fill", _index_fill, inputs=("self", "index"), nondiff=("index",),
                        self=lambda F, grad, dim, index: F.index_fill(grad, index, 0, dim))
index_fill_tensor_spec = defop(
    "index_fill_tensor", _index_fill, inputs=("self", "index", "value"), nondiff=("index",),
    node="IndexFillBackward1",
    self=lambda F, grad, dim, index: F.index_fill(grad, index, 0, dim),
    value=lambda F, grad, dim, index: F.sum(F.index_select(grad, _unique(index), dim)))


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
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
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
