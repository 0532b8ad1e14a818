"""Copies: ``clone`` (CloneBackward0) and dtype/device moves (ToCopyBackward0: ``to``, ``cuda``, ``cpu``,
``float`` ...)."""

from __future__ import annotations

import warnings

from .. import _creation, _device, _dtype
from .._tensor import Tensor
from ._base import check_tensor
from ._batch_rules import declare, pointwise
from ._batched import BatchedTensor, batched_as
from ._registry import apply, defop, public

clone_spec = defop("clone", lambda self: self.copy(), self=lambda F, grad: grad)


def _to_copy(self, np_dtype, src, dst):
    out = self
    if src is not dst:
        out = _device.to_device_array(self, src, dst)
    if np_dtype is not None and out.dtype != np_dtype:
        out = out.astype(np_dtype)
    elif out is self:
        out = self.copy()
    return out


def _to_copy_backward(F, grad, self_scalar_type, src, dst):
    """The gradient goes back to the source's device and dtype (``grad.to(self.options())``)."""
    if src is not dst or getattr(grad, "_data", grad).dtype != self_scalar_type:
        return F.to_copy(grad, self_scalar_type, dst, src)
    return grad


to_copy_spec = defop("to_copy", _to_copy, node="ToCopyBackward0", device_from="dst", self=_to_copy_backward)


@public("clone")
def clone(input, *, memory_format=None):
    """A copy with its own storage; differentiable (``CloneBackward0``, the gradient passes straight through)."""
    check_tensor("clone", "input", input)
    return apply(clone_spec, (input,))


@public("detach", method=False)
def detach(input):
    """``input.detach()``: a new leaf on the same storage that does not require grad."""
    check_tensor("detach", "input", input)
    return input.detach()


def to_copy(t, np_dtype, dst):
    """A differentiable copy of ``t`` to ``np_dtype`` on device ``dst`` (``ToCopyBackward0``)."""
    return apply(to_copy_spec, (t, np_dtype, t._device, dst))


def parse_to_args(args, kwargs):
    """Read ``to()``'s arguments, PyTorch style: ``(dtype)``, ``(device)``, ``(device, dtype)``, ``(tensor)``,
    keywords ``dtype``/``device``/``copy``/``non_blocking``.  Returns ``(dtype, device, copy)``.

    Raises ``TypeError`` for an argument of any other kind or an unknown keyword.
    """
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(
            f"to() received an invalid combination of arguments - got unexpected keyword(s) {sorted(kwargs)}"
        )
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a._device
        elif isinstance(a, (str, _device.device, int)) and not isinstance(a, bool):
            dev = a
        elif isinstance(a, bool):
            pass  # non_blocking given positionally
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    return dtype, dev, copy


@public("to", function=False)
def to(self, *args, **kwargs):
    """Copy to another dtype and/or device; returns ``self`` when nothing would change.

    Accepts ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
    ``to(other_tensor)`` and the keywords ``dtype``, ``device``, ``copy``,
    ``non_blocking``.  A real copy of a tensor that requires grad is a
    non-leaf whose ``grad_fn`` is ``ToCopyBackward0``, as in PyTorch.

    Raises
    ------
    AssertionError
        "Torch not compiled with CUDA enabled" for cuda when no cuda backend
        exists (``LEAFKIT_SIMULATE_CUDA=0`` and no GPU).
    """
    dtype, dev, copy = parse_to_args(args, kwargs)
    dst = _device.canonical(dev) if dev is not None else self._device
    _device.check_available(dst)
    np_dtype = dtype.np if dtype is not None else None
    if dst is self._device and (np_dtype is None or np_dtype == self._data.dtype) and not copy:
        return self
    return to_copy(self, np_dtype, dst)


@public("cuda", function=False)
def cuda(self, device=None, non_blocking=False):
    """Copy to the GPU (``cuda:0``); see :meth:`to`."""
    return self.to(_device.canonical(device if device is not None else "cuda"))


@public("cpu", function=False)
def cpu(self):
    """Copy to the CPU (``self`` if already there); see :meth:`to`."""
    return self.to(_device.CPU)


def _dtype_method(d):
    def m(self):
        return self.to(d)

    m.__doc__ = f"``self.to(torch.{d.name})``."
    return m


for _name, _d in (
    ("float", _dtype.float32),
    ("double", _dtype.float64),
    ("half", _dtype.float16),
    ("long", _dtype.int64),
    ("int", _dtype.int32),
    ("bool", _dtype.bool),
    ("byte", _dtype.uint8),
    ("char", _dtype.int8),
    ("short", _dtype.int16),
):
    public(_name, function=False)(_dtype_method(_d))

public("type_as", function=False)(lambda self, other: self.to(other.dtype))


# -- new_zeros / new_ones / new_full / new_empty / new_tensor (task M1) ----------------------------------------------
def _new_options(self, dtype, device):
    return (dtype if dtype is not None else self.dtype), (device if device is not None else self._device)


def _new_factory(name, make, what):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        dt, dev = _new_options(self, dtype, device)
        if self.__class__ is BatchedTensor:  # inside vmap: batched, as PyTorch's new_* of a batched tensor
            return batched_as(self, lambda shape: make(shape, dtype=dt, device=dev, requires_grad=requires_grad), size)
        return make(*size, dtype=dt, device=dev, requires_grad=requires_grad)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (
        f"A new leaf tensor of shape ``size`` (ints or one sequence) filled with {what}, with this "
        "tensor's dtype and device unless ``dtype``/``device`` are given; it never shares this tensor's "
        "history (``requires_grad`` is False unless asked for, and then only for float dtypes, else "
        "RuntimeError)."
    )
    public(name, function=False)(method)


_new_factory("new_zeros", _creation.zeros, "zeros")
_new_factory("new_ones", _creation.ones, "ones")
_new_factory("new_empty", _creation.empty, "uninitialised values (zeros in leafkit)")


@public("new_full", function=False)
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A new leaf tensor of shape ``size`` (a sequence) filled with ``fill_value``, with this tensor's dtype and
    device unless ``dtype``/``device`` are given (the value is converted: an int64 tensor's ``new_full((2,), 1.5)``
    holds 1). Raises TypeError for an int ``size``, as PyTorch does."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    dt, dev = _new_options(self, dtype, device)
    if self.__class__ is BatchedTensor:
        return batched_as(
            self,
            lambda shape: _creation.full(shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad),
            size,
        )
    return _creation.full(tuple(size), fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


@public("new_tensor", function=False)
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A new leaf tensor copied from ``data`` (numbers, nested sequences, arrays, tensors), with this tensor's dtype
    and device unless ``dtype``/``device`` are given (so an int64 tensor's ``new_tensor([1.5])`` holds 1). Like
    PyTorch, warns when ``data`` is a tensor that ``data.detach().clone()`` is the recommended copy."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    dt, dev = _new_options(self, dtype, device)
    arr, _ = _creation._infer(data, dt)
    return _creation._finish(arr, dt, dev, requires_grad)


# -- vmap: batching rules (leafkit.func.vmap) --------------------------------------------------------------------------
declare(pointwise, "clone", "to_copy")
