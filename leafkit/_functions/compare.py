"""Comparisons and logical operations: never differentiable, so no registry entries, only the public surface.

Their results are bool tensors with no history (``requires_grad=False``),
as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from .. import _device
from .._tensor import Tensor
from ._base import as_array, broadcast_check, check_tensor, is_number, num
from ._registry import public


def _other_array(self, other):
    if isinstance(other, Tensor):
        if other._device is not self._device:
            if not (other._device.type == "cpu" and other._data.ndim == 0):
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                                   f"{self._device} and {other._device}!")
            return _device.to_device_array(other._data, other._device, self._device)
        o = other._data
        if o.shape != self._data.shape:
            broadcast_check(self._data, o)
        return o
    if is_number(other):
        return num(other)
    return None


def _binary(np_fn, name):
    def op(self, other):
        o = _other_array(self, other)
        if o is None:
            return NotImplemented
        return Tensor._make(as_array(np_fn(self._data, o)), self._device)
    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` as a bool tensor (not differentiable)."
    return op


for _dunder, _names, _fn in (("__eq__", ("eq",), np.equal), ("__ne__", ("ne", "not_equal"), np.not_equal),
                             ("__lt__", ("lt", "less"), np.less), ("__le__", ("le", "less_equal"), np.less_equal),
                             ("__gt__", ("gt", "greater"), np.greater),
                             ("__ge__", ("ge", "greater_equal"), np.greater_equal)):
    _op = _binary(_fn, _names[0])
    setattr(Tensor, _dunder, _op)
    public(*_names)(_op)


def _logical(np_logical, np_bitwise, name):
    def op(self, other):
        o = _other_array(self, other)
        if o is None:
            return NotImplemented
        fn = np_logical if self._data.dtype.kind == "b" else np_bitwise
        return Tensor._make(as_array(fn(self._data, o)), self._device)
    op.__name__ = name
    return op


Tensor.__and__ = Tensor.__rand__ = _logical(np.logical_and, np.bitwise_and, "__and__")
Tensor.__or__ = Tensor.__ror__ = _logical(np.logical_or, np.bitwise_or, "__or__")
Tensor.__xor__ = Tensor.__rxor__ = _logical(np.logical_xor, np.bitwise_xor, "__xor__")


def _invert(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return Tensor._make(as_array(~self._data), self._device)


Tensor.__invert__ = _invert


@public("logical_not")
def logical_not(input):
    """Elementwise not, as a bool tensor."""
    check_tensor("logical_not", "input", input)
    return Tensor._make(as_array(np.logical_not(input._data)), input._device)


@public("logical_and")
def logical_and(input, other):
    check_tensor("logical_and", "input", input)
    return Tensor._make(as_array(np.logical_and(input._data, _other_array(input, other))), input._device)


@public("logical_or")
def logical_or(input, other):
    check_tensor("logical_or", "input", input)
    return Tensor._make(as_array(np.logical_or(input._data, _other_array(input, other))), input._device)


@public("isnan")
def isnan(input):
    """True where an element is NaN (a bool tensor)."""
    check_tensor("isnan", "input", input)
    return Tensor._make(as_array(np.isnan(input._data)), input._device)


@public("isfinite")
def isfinite(input):
    """True where an element is neither inf nor NaN (a bool tensor)."""
    check_tensor("isfinite", "input", input)
    return Tensor._make(as_array(np.isfinite(input._data)), input._device)


@public("isinf")
def isinf(input):
    check_tensor("isinf", "input", input)
    return Tensor._make(as_array(np.isinf(input._data)), input._device)


@public("equal")
def equal(input, other) -> bool:
    """True when both tensors have the same shape and elements."""
    return input._data.shape == other._data.shape and bool((input._data == other._data).all())


@public("allclose")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True when every element is within ``atol + rtol * |other|`` of ``other``'s."""
    return bool(np.allclose(_device.to_host(input._data), _device.to_host(other._data), rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


@public("any")
def any(input):  # noqa: A001 - PyTorch's name
    return Tensor._make(as_array(np.asarray(input._data.any())), input._device)


@public("all")
def all(input):  # noqa: A001 - PyTorch's name
    return Tensor._make(as_array(np.asarray(input._data.all())), input._device)
