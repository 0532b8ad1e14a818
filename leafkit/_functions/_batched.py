"""Batched tensors: what ``vmap`` runs the ops on (PyTorch's ``BatchedTensor``).

Inside ``vmap(f)(x)``, ``f`` sees ``x`` as a tensor of one sample: a
:class:`BatchedTensor` whose *logical* shape has no batch dimension, wrapping
the *physical* tensor (all samples) with the batch dimension at position
``bdim``, for one vmap *level* (nested vmaps nest the wrappers: the value of a
level-2 batched tensor is a level-1 batched tensor).  An op with a batched
input goes to its batching rule (``defop(..., batch=rule)``, declared next to
the op's entry in its family file; the shared rules are in
:mod:`._batch_rules`).  A rule runs the op once on the physical tensors, with
leafkit's own differentiable ops, so gradients flow through vmapped code.  An
op without a rule runs once per sample, with PyTorch's performance warning.

The op layer sees a batched tensor's ``_data`` as a :class:`BatchedArray`: it
has the logical shape, dtype and strides, so the public functions check their
arguments and wrap dims as they do for any tensor.  NumPy's ufuncs on it
compute all samples at once (comparisons, ``isnan`` ...); reading its values
in any other way raises PyTorch's vmap errors (``.item()``, ``bool()``).

Also here: the transform stack (vmap and grad levels, used by
:mod:`leafkit.func`), vmap's randomness rules for the generator, in-place ops
and indexing with batched tensors, and moving one level's batch dimension in
and out of a tensor (``unwrap_level`` / ``wrap_level``), which the function
transforms need when they nest.
"""

from __future__ import annotations

import numpy as np

from .. import _creation, _random
from .. import _tensor as _tensor_mod
from .._tensor import Tensor
from ..autograd import function as _function_mod
from ..autograd.function import Function as _Function
from . import _base
from ._base import warn_user
from ._registry import SPECS, VMAP_LEVELS, apply

__all__ = [
    "BatchedTensor",
    "BatchedArray",
    "Layer",
    "STACK",
    "push",
    "pop",
    "dispatch",
    "unwrap",
    "wrap",
    "batch_size",
    "unwrap_level",
    "wrap_level",
]

# -- PyTorch's messages ----------------------------------------------------------------------------------------------
ITEM_MESSAGE = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a Tensor, "
    "please try to rewrite what you're doing with other operations. If error is occurring somewhere inside PyTorch "
    "internals, please file a bug report."
)
CONTROL_FLOW_MESSAGE = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't support "
    "that yet, please file an issue at https://github.com/pytorch/pytorch/issues ."
)
STORAGE_MESSAGE = "Cannot access data pointer of Tensor that doesn't have storage"
INPLACE_MESSAGE = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
    "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not being vmapped "
    "over in a vmap. Please try to use out-of-place operators instead of inplace arithmetic. If said operator is being "
    "called inside the PyTorch framework, please file a bug report instead."
)
RANDOM_MESSAGE = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or 'different' "
    "randomness flags on vmap or perform the randomness operation out of vmap"
)
INPLACE_RANDOM_MESSAGE = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear like same "
    "randomness. If this is necessary for your usage, please file an issue with functorch."
)
PERFORMANCE_WARNING = (
    "There is a performance drop because we have not yet implemented the batching rule for aten::{}. Please file us "
    "an issue on GitHub so that we can prioritize its implementation."
)
REQUIRES_GRAD_MESSAGE = _tensor_mod.REQUIRES_GRAD_IN_TRANSFORM_MESSAGE


# -- the transform stack ----------------------------------------------------------------------------------------------
class Layer:
    """One active function transform: ``kind`` is ``"vmap"`` (with its batch ``size`` and ``randomness``) or
    ``"grad"``; ``level`` is its depth in the stack (1 for the outermost), as PyTorch numbers its levels."""

    __slots__ = ("level", "kind", "size", "randomness")

    def __init__(self, level, kind, size=None, randomness=None):
        self.level = level
        self.kind = kind
        self.size = size
        self.randomness = randomness

    def __repr__(self) -> str:
        return f"<{self.kind} level {self.level}>"


STACK = _tensor_mod.TRANSFORMS  # every active transform, innermost last


def push(kind, size=None, randomness=None) -> Layer:
    """Enter a transform: a new level above every active one."""
    layer = Layer(len(STACK) + 1, kind, size, randomness)
    STACK.append(layer)
    if kind == "vmap":
        VMAP_LEVELS.append(layer)
        _random.batched_rng = _batched_rng
        _tensor_mod.batched_grad = autograd_grad
    return layer


def pop(layer) -> None:
    """Leave ``layer`` (the innermost transform)."""
    assert STACK and STACK[-1] is layer, "function transforms must be left in the order they were entered"
    STACK.pop()
    if layer.kind == "vmap":
        VMAP_LEVELS.pop()
        if not VMAP_LEVELS:
            _random.batched_rng = None
            _tensor_mod.batched_grad = None


def batch_size(level) -> int:
    return STACK[level - 1].size


def vmap_levels():
    """The active vmap layers, outermost first."""
    return list(VMAP_LEVELS)


# -- the array a batched tensor shows the op layer ---------------------------------------------------------------------
def _strides_without(strides, b):
    return strides[:b] + strides[b + 1 :]


class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous", "writeable")

    def __init__(self, shape, strides, itemsize):
        self.c_contiguous = _contiguous(shape, strides, itemsize, reversed)
        self.f_contiguous = _contiguous(shape, strides, itemsize, lambda x: x)
        self.writeable = True

    def __getitem__(self, key):
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous, "WRITEABLE": True}[key]


def _contiguous(shape, strides, itemsize, order) -> bool:
    if 0 in shape:
        return True
    expected = itemsize
    for n, st in order(list(zip(shape, strides))):
        if n != 1 and st != expected:
            return False
        expected *= n
    return True


class BatchedArray:
    """The values of a batched tensor as the op layer sees them: the logical ``shape``, ``ndim``, ``size``,
    ``dtype`` and ``strides`` of one sample, over ``data`` (all samples, the batch at ``bdim``; an array, or the
    batched array of an outer vmap level).

    NumPy's ufuncs compute on all samples at once and return a batched array, which ``Tensor._make`` turns into a
    batched tensor: that is how comparisons and the other non-differentiable elementwise functions are batched.
    Anything that would read the values of one sample (``bool()``, ``float()``, ``np.asarray``) raises PyTorch's
    vmap error.
    """

    __slots__ = ("data", "bdim", "level", "shape", "ndim", "dtype", "size")
    __array_priority__ = 10000

    def __init__(self, data, bdim, level):
        self.data = data
        self.bdim = bdim
        self.level = level
        s = data.shape
        self.shape = s[:bdim] + s[bdim + 1 :]
        self.ndim = len(s) - 1
        self.dtype = data.dtype
        n = 1
        for k in self.shape:
            n *= k
        self.size = n

    # -- metadata, as an array has it --------------------------------------------------------------------------------
    @property
    def strides(self):
        return _strides_without(self.data.strides, self.bdim)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self):
        return _Flags(self.shape, self.strides, self.dtype.itemsize)

    @property
    def base(self):
        return None

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def view(self):
        """An array with this layout and no values (a zero-filled buffer seen with the logical strides), so that
        code can ask whether a shape is a view of it (``reshape``)."""
        return np.lib.stride_tricks.as_strided(
            np.zeros(1, dtype=self.dtype), shape=self.shape, strides=self.strides, writeable=False
        ).view()

    def __repr__(self) -> str:
        return f"BatchedArray(level={self.level}, bdim={self.bdim}, shape={self.shape}, dtype={self.dtype})"

    # -- values --------------------------------------------------------------------------------------------------------
    def astype(self, dtype, copy=True):
        return BatchedArray(self.data.astype(dtype), self.bdim, self.level)

    def copy(self):
        return BatchedArray(self.data.copy(), self.bdim, self.level)

    def any(self, axis=None, keepdims=False):
        return self._reduce(np.any, axis, keepdims)

    def all(self, axis=None, keepdims=False):
        return self._reduce(np.all, axis, keepdims)

    def _reduce(self, fn, axis, keepdims):
        axes = tuple(range(self.ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        phys = tuple(self._phys(a % max(self.ndim, 1)) for a in axes)
        out = fn(self.data, axis=phys, keepdims=keepdims)
        bdim = self.bdim if keepdims else self.bdim - sum(1 for p in phys if p < self.bdim)
        return BatchedArray(out, bdim, self.level)

    def _phys(self, axis):
        """The physical axis of logical ``axis``."""
        return axis if axis < self.bdim else axis + 1

    def _front(self, rank):
        """``data`` with the batch dimension first and size-1 dims after it up to ``rank`` logical dims."""
        d = self.data
        if self.bdim:
            d = np.moveaxis(d, self.bdim, 0)
        for _ in range(rank - self.ndim):
            d = np.expand_dims(d, 1)
        return d

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None:
            raise RuntimeError(f"vmap: leafkit has no batching rule for numpy.{ufunc.__name__}.{method}")
        return batched_ufunc(ufunc, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        impl = _ARRAY_FUNCTIONS.get(func)
        if impl is None:
            raise RuntimeError(f"vmap: leafkit has no batching rule for numpy.{func.__name__} on a batched tensor")
        return impl(*args, **kwargs)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(STORAGE_MESSAGE)

    def __bool__(self):
        raise RuntimeError(CONTROL_FLOW_MESSAGE)

    def item(self, *args):
        raise RuntimeError(ITEM_MESSAGE)

    def __float__(self):
        raise RuntimeError(ITEM_MESSAGE)

    __int__ = __index__ = __complex__ = __float__

    def tolist(self):
        raise RuntimeError(STORAGE_MESSAGE)

    def __getitem__(self, key):
        raise RuntimeError(STORAGE_MESSAGE)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(f"vmap: leafkit has no batching rule for reading '{name}' of a batched tensor's values")

    __hash__ = object.__hash__


def _ufunc_dunder(fn, reflected=False):
    if reflected:
        return lambda self, other: fn(other, self)
    return lambda self, other: fn(self, other)


for _name, _fn in (
    ("add", np.add),
    ("sub", np.subtract),
    ("mul", np.multiply),
    ("truediv", np.true_divide),
    ("floordiv", np.floor_divide),
    ("mod", np.remainder),
    ("pow", np.power),
    ("and", np.bitwise_and),
    ("or", np.bitwise_or),
    ("xor", np.bitwise_xor),
    ("lshift", np.left_shift),
    ("rshift", np.right_shift),
):
    setattr(BatchedArray, f"__{_name}__", _ufunc_dunder(_fn))
    setattr(BatchedArray, f"__r{_name}__", _ufunc_dunder(_fn, reflected=True))
for _name, _fn in (
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
):
    setattr(BatchedArray, f"__{_name}__", _ufunc_dunder(_fn))
BatchedArray.__neg__ = lambda self: np.negative(self)
BatchedArray.__invert__ = lambda self: np.invert(self)
BatchedArray.__abs__ = lambda self: np.absolute(self)


def batched_ufunc(ufunc, inputs, kwargs):
    """A NumPy ufunc over batched arrays: all samples at once, the batch dimension first (right-aligned
    broadcasting of the logical shapes, as the pointwise batching rule does)."""
    level = max(x.level for x in inputs if isinstance(x, BatchedArray))
    rank = max((x.ndim for x in inputs if hasattr(x, "ndim")), default=0)
    args = [x._front(rank) if isinstance(x, BatchedArray) and x.level == level else x for x in inputs]
    out = ufunc(*args, **kwargs)
    if isinstance(out, tuple):
        return tuple(BatchedArray(np.asarray(o) if isinstance(o, np.generic) else o, 0, level) for o in out)
    return BatchedArray(np.asarray(out) if isinstance(out, np.generic) else out, 0, level)


def _moveaxis(a, source, destination):
    order = [k for k in range(a.ndim) if k != source % a.ndim]
    order.insert(destination % a.ndim, source % a.ndim)
    return _transpose(a, order)


def _transpose(a, axes=None):
    order = list(range(a.ndim))[::-1] if axes is None else [k % a.ndim for k in axes]
    phys = [a._phys(k) for k in order]
    phys.insert(a.bdim, a.bdim)
    return BatchedArray(np.transpose(a.data, phys), a.bdim, a.level)


def _expand_dims(a, axis):
    axis = axis % (a.ndim + 1)
    if axis <= a.bdim:
        return BatchedArray(np.expand_dims(a.data, axis), a.bdim + 1, a.level)
    return BatchedArray(np.expand_dims(a.data, axis + 1), a.bdim, a.level)


def _like(np_fn):
    """``np.zeros_like(a)`` and friends: the same values for every sample, so an ordinary array of the logical
    shape."""

    def like(a, dtype=None, *args, **kwargs):
        kwargs.pop("shape", None)
        return np_fn(np.empty(a.shape, dtype=a.dtype), dtype, *args, **kwargs)

    return like


def _along(np_fn):
    """``np.flip``/``np.argsort`` of a batched array along logical ``axis`` (the same shape out)."""

    def impl(a, axis=-1, **kwargs):
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        phys = tuple(a._phys(x % a.ndim) for x in axes)
        return BatchedArray(np_fn(a.data, axis=phys if len(phys) > 1 else phys[0], **kwargs), a.bdim, a.level)

    return impl


def _arg_extremum(np_fn):
    """``np.argmax``/``np.argmin`` of every sample (flattened when ``axis`` is None)."""

    def impl(a, axis=None, **kwargs):
        if axis is None:
            if isinstance(a.data, BatchedArray):
                raise RuntimeError("vmap: leafkit has no batching rule for a flattened argmax inside nested vmap")
            d = np.moveaxis(a.data, a.bdim, 0)
            return BatchedArray(np_fn(d.reshape(d.shape[0], -1), axis=1), 0, a.level)
        p = a._phys(axis % a.ndim)
        return BatchedArray(np_fn(a.data, axis=p), a.bdim - 1 if p < a.bdim else a.bdim, a.level)

    return impl


def _dynamic_shape(*args, **kwargs):
    raise RuntimeError(
        "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over "
        "aten::nonzero. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this feature."
    )


_ARRAY_FUNCTIONS = {
    np.moveaxis: _moveaxis,
    np.transpose: _transpose,
    np.expand_dims: _expand_dims,
    np.zeros_like: _like(np.zeros_like),
    np.ones_like: _like(np.ones_like),
    np.empty_like: _like(np.empty_like),
    np.flip: _along(np.flip),
    np.argsort: _along(np.argsort),
    np.argmax: _arg_extremum(np.argmax),
    np.argmin: _arg_extremum(np.argmin),
    np.nonzero: _dynamic_shape,
    np.may_share_memory: lambda a, b, max_work=None: False,
    np.shares_memory: lambda a, b, max_work=None: False,
}


def _wrap_array(arr, device, grad_fn=None):
    """``Tensor._make`` of a batched array: a batched tensor around the tensor of its samples."""
    if grad_fn is not None:
        raise RuntimeError("vmap: a batched array cannot be recorded as the output of a node")
    return wrap(Tensor._make(arr.data, device), arr.bdim, arr.level)


_tensor_mod.ARRAY_WRAPPERS[BatchedArray] = _wrap_array
_creation.batched_like = lambda t, make, shape: batched_as(t, make, shape)


# -- the batched tensor ------------------------------------------------------------------------------------------------
class BatchedTensor(Tensor):
    """A tensor of one sample inside ``vmap``: ``_value`` (the physical tensor, every sample, the batch dimension
    at ``_bdim``) at vmap level ``_level``.

    As PyTorch's ``BatchedTensor``, it prints as ``BatchedTensor(lvl=1, bdim=0, value=...)``, keeps no
    autograd state of its own (``requires_grad`` is False, ``grad_fn`` None: the physical value carries the
    history), and refuses ``.item()``, ``bool()``, ``.tolist()``, ``.numpy()`` and ``data_ptr()`` with
    PyTorch's messages.  Inside ``vmap(grad(f))`` an input of ``grad`` and what is computed from it show
    ``requires_grad`` and ``grad_fn`` as in PyTorch.
    """

    __slots__ = ("_value", "_bdim", "_level", "_arr")

    _requires_grad = False
    _grad_fn = None
    _output_nr = 0
    _lifted = False  # an input of grad inside vmap: shown as a leaf that requires grad

    @property
    def _data(self):
        arr = self._arr
        d = self._value._data
        if arr is None or arr.data is not d:
            arr = self._arr = BatchedArray(d, self._bdim, self._level)
        return arr

    @property
    def _version_counter(self):
        return self._value._version_counter

    # -- what PyTorch shows of a batched tensor ----------------------------------------------------------------------
    def _tracked(self) -> bool:
        """Inside ``vmap(grad(f))``: a grad level above this tensor's vmap level tracks it."""
        return (
            any(layer.kind == "grad" and layer.level > self._level for layer in STACK)
            and _physical(self)._requires_grad
        )

    @property
    def requires_grad(self) -> bool:
        return self._tracked()

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        raise RuntimeError(REQUIRES_GRAD_MESSAGE)

    def requires_grad_(self, requires_grad=True):
        raise RuntimeError(REQUIRES_GRAD_MESSAGE)

    @property
    def grad_fn(self):
        if self._lifted or not self._tracked():
            return None
        return _physical(self).grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        return None

    def __repr__(self) -> str:
        if _tensor_mod.repr_hook is not None:
            shown = _tensor_mod.repr_hook(self)
            if shown is not None:
                return shown
        return wrapped_repr(self._value, [("BatchedTensor", self._level, self._bdim)])

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self).__format__(spec)

    def item(self):
        raise RuntimeError(ITEM_MESSAGE)

    def __bool__(self):
        raise RuntimeError(CONTROL_FLOW_MESSAGE)

    def _scalar(self, warn):
        raise RuntimeError(ITEM_MESSAGE)

    def __index__(self):
        raise RuntimeError(ITEM_MESSAGE)

    def tolist(self):
        raise RuntimeError(STORAGE_MESSAGE)

    def numpy(self, *, force=False):
        raise RuntimeError(STORAGE_MESSAGE)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(STORAGE_MESSAGE)

    def data_ptr(self):
        raise RuntimeError(STORAGE_MESSAGE)

    def untyped_storage(self):
        raise RuntimeError(STORAGE_MESSAGE)

    storage = untyped_storage

    def detach(self):
        return wrap(self._value.detach(), self._bdim, self._level)

    @property
    def data(self):
        raise RuntimeError("accessing `data` under vmap transform is not allowed")

    def __reduce_ex__(self, protocol):
        raise RuntimeError(STORAGE_MESSAGE)

    def __deepcopy__(self, memo):
        raise RuntimeError(STORAGE_MESSAGE)


def wrapped_repr(value, wrappers):
    """``value`` printed inside PyTorch's wrappers, outermost first: ``BatchedTensor(lvl=2, bdim=0, value=...)``,
    ``GradTrackingTensor(lvl=1, value=...)``."""
    text = value if isinstance(value, str) else repr(value)
    for kind, level, bdim in reversed(wrappers):
        inner = text.replace("\n", "\n    ")
        head = f"{kind}(lvl={level}, bdim={bdim}, value=" if kind == "BatchedTensor" else f"{kind}(lvl={level}, value="
        text = f"{head}\n    {inner}\n)"
    return text


# PyTorch's batched tensors are torch.Tensor objects: the class reads the same in messages and reprs
BatchedTensor.__name__ = BatchedTensor.__qualname__ = "Tensor"
BatchedTensor.__module__ = Tensor.__module__


def wrap(value, bdim, level) -> BatchedTensor:
    """A batched tensor of level ``level`` around the physical tensor ``value`` (batch dimension ``bdim``)."""
    t = object.__new__(BatchedTensor)
    t._value = value
    t._bdim = bdim
    t._level = level
    t._device = value._device
    t._arr = None
    return t


def unwrap(a, level):
    """``(physical tensor, batch dim)`` of ``a`` at ``level``, or ``(a, None)`` when ``a`` is not batched there."""
    if a.__class__ is BatchedTensor and a._level == level:
        return a._value, a._bdim
    return a, None


def _physical(t):
    while t.__class__ is BatchedTensor:
        t = t._value
    return t


def batched_as(t, make, shape):
    """``make(shape)`` batched as ``t`` is (at every level of its wrapping): a physical tensor with every batch
    size in front of ``shape``, so that each sample has its own values."""
    wrapping, _ = chain(t)
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    if not wrapping:
        return make(shape)
    sizes = tuple(batch_size(level) for level, _ in reversed(wrapping))
    return rewrap(make(sizes + shape), [(level, 0) for level, _ in wrapping])


def chain(t):
    """The wrapping of ``t``, outermost first: ``[(level, bdim), ...]``, and the plain tensor under it."""
    out = []
    while t.__class__ is BatchedTensor:
        out.append((t._level, t._bdim))
        t = t._value
    return out, t


def rewrap(t, wrapping):
    """Wrap ``t`` as :func:`chain` found it (``wrapping`` outermost first)."""
    for level, bdim in reversed(wrapping):
        t = wrap(t, bdim, level)
    return t


# -- physical ops the rules use (straight to the registry) -------------------------------------------------------------
def _spec(name):
    return SPECS[name]


def permute(v, perm):
    perm = tuple(perm)
    if perm == tuple(range(len(perm))):
        return v
    return apply(_spec("permute"), (v, perm))


def movedim(v, src, dst):
    n = v._data.ndim
    if src == dst:
        return v
    order = [k for k in range(n) if k != src]
    order.insert(dst, src)
    return permute(v, order)


def front(a, level):
    """The physical tensor of ``a`` at ``level`` with its batch dimension first (None when not batched there)."""
    if a.__class__ is BatchedTensor and a._level == level:
        v = a._value
        b = a._bdim
        return v if b == 0 else movedim(v, b, 0)
    return None


def pad(v, k, at=1):
    """``k`` size-1 dims inserted at ``at`` (a view)."""
    if k <= 0:
        return v
    shape = v._data.shape
    return apply(_spec("view"), (v, shape[:at] + (1,) * k + shape[at:])) if _viewable(v) else _unsqueeze(v, k, at)


def _viewable(v):
    return v.__class__ is not BatchedTensor and v._data.flags.c_contiguous


def _unsqueeze(v, k, at):
    for _ in range(k):
        v = apply(_spec("unsqueeze"), (v, at))
    return v


def expand_batch(a, size):
    """An unbatched ``a`` seen with a batch dimension of ``size`` in front (a view)."""
    shape = a._data.shape
    return apply(_spec("expand"), (apply(_spec("unsqueeze"), (a, 0)), (size, *shape)))


def select(v, dim, index):
    return apply(_spec("select"), (v, dim, index))


def stack(tensors, dim=0):
    return apply(_spec("stack"), (dim, *tensors))


# -- dispatch ----------------------------------------------------------------------------------------------------------
def dispatch(spec, args):
    """Run ``spec`` on ``args`` if one of its tensor inputs is batched: by its batching rule, or once per sample."""
    level = 0
    for i in spec.positions(len(args)):
        a = args[i]
        if a.__class__ is BatchedTensor and a._level > level:
            level = a._level
    if not level:
        return NotImplemented
    rule = spec.batch
    if rule is None:
        return fallback(spec, args, level)
    return rule(spec, args, level)


_base.batched = dispatch  # what apply() calls inside vmap


def fallback(spec, args, level):
    """PyTorch's batching fallback: the op once per sample (views of the samples), the results stacked; warns
    that there is no batching rule."""
    warn_user(PERFORMANCE_WARNING.format(spec.name))
    return per_sample(spec, args, level)


def per_sample(spec, args, level):
    """The op once per sample, the outputs stacked along a new batch dimension."""
    n = batch_size(level)
    positions = spec.positions(len(args))
    outs = []
    for b in range(n):
        sample = list(args)
        for i in positions:
            a = args[i]
            if a.__class__ is BatchedTensor and a._level == level:
                sample[i] = select(a._value, a._bdim, b)
        outs.append(apply(spec, tuple(sample)))
    return stack_outputs(outs, level, spec.multi)


def stack_outputs(outs, level, multi):
    if not outs:
        raise RuntimeError("vmap: leafkit cannot run an op without a batching rule over a batch of size 0")
    if multi:
        return tuple(wrap(stack([o[k] for o in outs]), 0, level) for k in range(len(outs[0])))
    return wrap(stack(outs), 0, level)


def in_key(key) -> bool:
    """Whether an indexing key holds a batched tensor."""
    if key.__class__ is BatchedTensor:
        return True
    return isinstance(key, (tuple, list)) and any(k.__class__ is BatchedTensor for k in key)


def batched_level(args):
    level = 0
    for a in args:
        if a.__class__ is BatchedTensor and a._level > level:
            level = a._level
    return level


# -- in-place ops ------------------------------------------------------------------------------------------------------
def inplace(t, spec, args, run):
    """An in-place op inside vmap (``run`` is the ordinary in-place machinery), or NotImplemented when nothing
    is batched.

    Into a batched tensor: a pointwise op runs in place on the physical tensor (its samples' values move into
    place with a view), any other op once per sample on views of the samples.  A batched value written into a
    tensor that is not batched raises PyTorch's error.
    """
    values = [a for a in args[1:] if a.__class__ is BatchedArray]
    if values:  # random values of randomness='different' (normal_, uniform_)
        if t.__class__ is not BatchedTensor:
            raise RuntimeError(INPLACE_RANDOM_MESSAGE)
        args = tuple(Tensor._make(a, t._device) if a.__class__ is BatchedArray else a for a in args)
    level = batched_level((t, *args[1:]))
    if not level:
        return NotImplemented
    tv, tb = unwrap(t, level)
    if tb is None:
        if spec.name in ("add", "atan2"):  # PyTorch runs these kernels on the batch: its broadcast error
            raise _broadcast_error(t, args, spec, level)
        raise RuntimeError(INPLACE_MESSAGE)
    v = tv if tb == 0 else movedim(tv, tb, 0)
    rank = t._data.ndim
    own = getattr(spec, "batch_inplace", None)
    if own is not None:  # the op's own in-place rule (index_put_)
        own(v, spec, args, level, run)
        return t
    rule = spec.batch
    if spec.name in ("fill_", "fill_tensor_") and args[1].__class__ is BatchedTensor:  # a batched value: copied
        value = args[1]
        fv = front(value, level)
        run(v, _spec("copy_"), (v, value if fv is None else pad(fv, rank - value._data.ndim)))
        return t
    if rule is not None and getattr(rule, "pointwise", False):
        new = list(args)
        new[0] = v
        for i in spec.positions(len(args)):
            if i == 0:
                continue
            a = args[i]
            if a.__class__ is BatchedTensor and a._level == level:
                new[i] = pad(front(a, level), rank - a._data.ndim)
        run(v, spec, tuple(new))
        return t
    warn_user(PERFORMANCE_WARNING.format(spec.name))
    for b in range(batch_size(level)):
        sample = list(args)
        sample[0] = select(tv, tb, b)
        for i in spec.positions(len(args)):
            a = args[i]
            if i and a.__class__ is BatchedTensor and a._level == level:
                sample[i] = select(a._value, a._bdim, b)
        run(sample[0], spec, tuple(sample))
    return t


def _broadcast_error(t, args, spec, level):
    """PyTorch's error for a pointwise in-place op writing batched values into an unbatched tensor: the batched
    operands, batch first, do not broadcast into ``t``'s shape."""
    shape = t._data.shape
    rank = max(
        [shape and len(shape) or 0]
        + [args[i]._data.ndim for i in spec.positions(len(args)) if hasattr(args[i], "_data")]
    )
    shapes = [shape]
    for i in spec.positions(len(args)):
        a = args[i]
        if a.__class__ is BatchedTensor and a._level == level:
            logical = a._data.shape
            shapes.append((batch_size(level),) + (1,) * (rank - len(logical)) + tuple(logical))
    return RuntimeError(
        f"output with shape [{', '.join(map(str, shape))}] doesn't match the broadcast shape "
        f"[{', '.join(map(str, np.broadcast_shapes(*shapes)))}]"
    )


# -- randomness --------------------------------------------------------------------------------------------------------
class _BatchedGenerator:
    """The generator as ``vmap(randomness='different')`` shows it: every draw has one batch dimension per
    vmap level with 'different' randomness (so each sample gets its own numbers)."""

    def __init__(self, rng, layers):
        self._rng = rng
        self._layers = layers  # outermost first

    def _batch(self):
        return tuple(layer.size for layer in self._layers)

    def _wrap(self, arr):
        for layer in self._layers:
            arr = BatchedArray(arr, 0, layer.level)
        return arr

    def standard_normal(self, size=None):
        return self._wrap(self._rng.standard_normal(size=self._batch() + tuple(size or ())))

    def random(self, size=None):
        return self._wrap(self._rng.random(size=self._batch() + tuple(size or ())))

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._wrap(self._rng.uniform(low, high, size=self._batch() + tuple(size or ())))

    def integers(self, low, high=None, size=None):
        return self._wrap(self._rng.integers(low, high, size=self._batch() + tuple(size or ())))

    def permutation(self, n):
        batch = self._batch()
        rows = [self._rng.permutation(n) for _ in range(int(np.prod(batch)))]
        return self._wrap(np.stack(rows).reshape(batch + (n,)) if rows else np.zeros(batch + (n,), dtype=np.int64))


def _batched_rng(rng):
    """vmap's randomness rules for a random op: 'error' refuses it, 'same' draws once for all samples,
    'different' draws for each sample."""
    layers = [layer for layer in VMAP_LEVELS]
    if any(layer.randomness == "error" for layer in layers):
        raise RuntimeError(RANDOM_MESSAGE)
    different = [layer for layer in layers if layer.randomness == "different"]
    if not different:
        return rng
    return _BatchedGenerator(rng, different)


# -- moving one level's batch dimension in and out ---------------------------------------------------------------------
def unwrap_level(t, level, pos):
    """``t`` with the batch dimension of vmap level ``level`` made a logical dimension at ``pos``.

    When ``t`` is batched at ``level`` (at any depth of its wrapping), its samples become that dimension; when
    it is not, it is expanded along it (every sample sees the same values).
    """
    if t.__class__ is not BatchedTensor or t._level < level:
        size = batch_size(level)
        u = t.unsqueeze(pos)
        shape = list(u.shape)
        shape[pos] = size
        return u.expand(shape)
    if t._level == level:
        return movedim_public(t._value, t._bdim, pos)
    b = t._bdim
    if pos <= b:
        return wrap(unwrap_level(t._value, level, pos), b + 1, t._level)
    return wrap(unwrap_level(t._value, level, pos + 1), b, t._level)


def wrap_level(t, level, pos):
    """``t`` with its logical dimension ``pos`` made the batch dimension of vmap level ``level`` (the inverse of
    :func:`unwrap_level`); the wrapping stays ordered by level."""
    if t.__class__ is not BatchedTensor or t._level < level:
        return wrap(t, pos, level)
    b = t._bdim
    inner = pos if pos < b else pos + 1
    out_b = b - 1 if inner < b else b
    return wrap(wrap_level(t._value, level, inner), out_b, t._level)


def movedim_public(v, src, dst):
    return v if src == dst else v.movedim(src, dst)


# -- autograd.grad of batched tensors (inside vmap(grad(f)), jacobian inside vmap) -------------------------------------
def autograd_grad(grad, outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """``autograd.grad`` where outputs or inputs are batched: on their physical tensors (the inputs of a grad level
    inside vmap have one copy per sample, so each sample's gradient is its own), the results batched as the
    inputs are.  A batched output that no grad level tracks does not require grad, as in PyTorch."""
    outs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    ins = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    gos = (grad_outputs,) if isinstance(grad_outputs, Tensor) else grad_outputs
    batched_ends = any(t.__class__ is BatchedTensor for t in (*outs, *ins))
    if not batched_ends:
        if create_graph or not any(g.__class__ is BatchedTensor for g in gos or ()):
            return NotImplemented  # the engine runs batched gradients through the recorded formulas
        res = grad(outs, ins, gos, retain_graph=retain_graph, create_graph=True, allow_unused=allow_unused)
        return tuple(None if r is None else _detached(r) for r in res)
    phys_outs, phys_gos = [], []
    for i, o in enumerate(outs):
        wrapping, p = chain(o)
        if wrapping and not o._tracked():
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        g = gos[i] if gos is not None and i < len(gos) else None
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = Tensor._make(np.ones(p._data.shape, dtype=p._data.dtype), p._device)
        else:
            for level, bdim in wrapping:
                g = unwrap_level(g, level, bdim)
        phys_outs.append(p)
        phys_gos.append(g)
    phys_ins, wrappings = [], []
    for x in ins:
        wrapping, p = chain(x)
        if wrapping and not x._tracked():
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        phys_ins.append(p)
        wrappings.append(wrapping)
    forced = not create_graph and any(g.__class__ is BatchedTensor for g in phys_gos)
    res = grad(
        phys_outs,
        phys_ins,
        phys_gos,
        retain_graph=retain_graph,
        create_graph=bool(create_graph) or forced,
        allow_unused=allow_unused,
    )
    out = []
    for r, wrapping in zip(res, wrappings):
        if r is not None:
            if forced:
                r = _detached(r)
            for level, bdim in reversed(wrapping):
                r = wrap_level(r, level, bdim)
        out.append(r)
    return tuple(out)


def _detached(t):
    wrapping, phys = chain(t)
    return rewrap(phys.detach(), wrapping)


# -- autograd.Function inside the function transforms ------------------------------------------------------------------
SETUP_CONTEXT_MESSAGE = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must override "
    "the setup_context staticmethod. For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
)


class VmapInfo:
    """What a Function's ``vmap`` staticmethod is told: the batch size and the randomness of the vmap level."""

    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness


def function_apply(cls, args):
    """``Function.apply`` inside a transform, as PyTorch rules it: the Function must use ``setup_context``; under
    vmap it runs its own ``vmap`` staticmethod, or once per sample with ``generate_vmap_rule = True`` (each sample
    recorded with its own node, so the Function's backward gives the gradients)."""
    if not STACK:
        return NotImplemented
    if cls.setup_context is _Function.setup_context:
        raise RuntimeError(SETUP_CONTEXT_MESSAGE)
    level = batched_level(args)
    if not level:
        return NotImplemented
    rule = getattr(cls, "vmap", None)
    if rule is not None:
        in_dims = tuple(a._bdim if a.__class__ is BatchedTensor and a._level == level else None for a in args)
        values = [a._value if d is not None else a for a, d in zip(args, in_dims)]
        out, out_dims = rule(VmapInfo(batch_size(level), STACK[level - 1].randomness), in_dims, *values)
        if isinstance(out, tuple):
            dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(out)
            return tuple(o if d is None else wrap(o, d, level) for o, d in zip(out, dims))
        return out if out_dims is None else wrap(out, out_dims, level)
    if not getattr(cls, "generate_vmap_rule", False):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override and implement "
            "the vmap staticmethod or set generate_vmap_rule=True. For more details, please see "
            "https://pytorch.org/docs/main/notes/extending.func.html"
        )
    outs = []
    for b in range(batch_size(level)):
        outs.append(
            cls.apply(
                *[
                    select(a._value, a._bdim, b) if a.__class__ is BatchedTensor and a._level == level else a
                    for a in args
                ]
            )
        )
    return stack_outputs(outs, level, isinstance(outs[0], tuple))


_function_mod.transform_hook = function_apply
