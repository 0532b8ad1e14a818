"""Comparisons and logical operations: never differentiable, so no registry entries, only the public surface.

Their results are bool tensors with no history (``requires_grad=False``),
as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from .. import _device, _dtype
from .._tensor import INFERENCE_INPLACE_MESSAGE, Tensor
from ..autograd.grad_mode import _state
from ._base import array_module, as_array, broadcast_check, check_tensor, is_number, num, promote, result_type
from ._registry import public
from .inplace import _write, check_inplace_allowed


def _other_array(self, other):
    if isinstance(other, Tensor):
        if other._device is not self._device:
            if not (other._device.type == "cpu" and other._data.ndim == 0):
                raise RuntimeError(
                    f"Expected all tensors to be on the same device, but found at least two devices, "
                    f"{self._device} and {other._device}!"
                )
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


for _dunder, _names, _fn in (
    ("__eq__", ("eq",), np.equal),
    ("__ne__", ("ne", "not_equal"), np.not_equal),
    ("__lt__", ("lt", "less"), np.less),
    ("__le__", ("le", "less_equal"), np.less_equal),
    ("__gt__", ("gt", "greater"), np.greater),
    ("__ge__", ("ge", "greater_equal"), np.greater_equal),
):
    _op = _binary(_fn, _names[0])
    setattr(Tensor, _dunder, _op)
    public(*_names)(_op)


def _logical(np_logical, np_bitwise, name):
    def op(self, other):
        o = _other_array(self, other)
        if o is None:
            return NotImplemented
        kinds = (self._data.dtype.kind, getattr(o, "dtype", np.dtype(type(o))).kind)
        if self._data.dtype.kind == "b" and kinds[1] == "b":
            fn = np_logical
        else:
            for k, d in ((kinds[0], self._data.dtype), (kinds[1], getattr(o, "dtype", None))):
                if k == "f":
                    word = _dtype.word(d) if d is not None else "Float"
                    raise NotImplementedError(f"\"bitwise_{name.strip('_')}_cpu\" not implemented for '{word}'")
            fn = np_bitwise
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
    return bool(
        np.allclose(
            _device.to_host(input._data), _device.to_host(other._data), rtol=rtol, atol=atol, equal_nan=equal_nan
        )
    )


@public("any")
def any(input):  # noqa: A001 - PyTorch's name
    return Tensor._make(as_array(input._data.any()), input._device)


@public("all")
def all(input):  # noqa: A001 - PyTorch's name
    return Tensor._make(as_array(input._data.all()), input._device)


# -- bit shifts: >> and << on integer tensors (task M1) ---------------------------------------------------------------
def _shift_values(a, b, np_fn, cname):
    rt = result_type(a, b)
    if rt.kind not in "iu":
        raise NotImplementedError(f"\"{cname}_cpu\" not implemented for '{_dtype.word(rt)}'")
    a, b = promote(a, b)
    xp = array_module(a if hasattr(a, "shape") else b)
    return as_array(getattr(xp, np_fn.__name__)(a, b))


def _shift(np_fn, name, cname):
    def fn(input, other):
        if not isinstance(input, Tensor):  # torch.bitwise_left_shift(2, t)
            check_tensor(name, "other", other, 2)
            if not is_number(input):
                check_tensor(name, "input", input)
            return Tensor._make(_shift_values(num(input), other._data, np_fn, cname), other._device)
        o = _other_array(input, other)
        if o is None:
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
        return Tensor._make(_shift_values(input._data, o, np_fn, cname), input._device)

    def op(self, other):
        o = _other_array(self, other)
        return NotImplemented if o is None else Tensor._make(_shift_values(self._data, o, np_fn, cname), self._device)

    def rop(self, other):
        if not is_number(other):
            return NotImplemented
        return Tensor._make(_shift_values(num(other), self._data, np_fn, cname), self._device)

    def op_(self, other):
        o = _other_array(self, other)
        if o is None:
            raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        if _state.enabled and self._requires_grad:
            check_inplace_allowed(self)
        rt = result_type(self._data, o)
        if not np.can_cast(rt, self._data.dtype, "same_kind"):
            raise RuntimeError(
                f"result type {_dtype.word(rt)} can't be cast to the desired output type "
                f"{_dtype.word(self._data.dtype)}"
            )
        _write(self, _shift_values(self._data, o, np_fn, cname))
        if self._inference and not _state.inference:  # PyTorch's kernel writes before the check that raises
            raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
        self._version_counter[0] += 1
        return self

    direction = "left (multiplying by 2**other)" if cname == "lshift" else "right (dividing by 2**other, rounding down)"
    fn.__name__ = fn.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    fn.__doc__ = (
        f"Shift the bits of integer tensors {direction}: ``input {'<<' if cname == 'lshift' else '>>'} "
        "other``, elementwise, with broadcasting; either side may be a number.\n\n    Result dtype by "
        "PyTorch's promotion (a bool tensor with a Python int gives int64); shifts by the width of the "
        "dtype or more give 0 (-1 for negative numbers shifted right), as in PyTorch. Not differentiable. "
        f"Float results raise NotImplementedError (\"{cname}_cpu\" not implemented for 'Float'), as do two "
        "bool tensors."
    )
    op_.__doc__ = f"In-place :func:`{name}` (``{'<<=' if cname == 'lshift' else '>>='}``); bumps ``_version``."
    public(name)(fn)
    public(name + "_", function=False)(op_)
    return op, rop, op_


Tensor.__lshift__, Tensor.__rlshift__, Tensor.__ilshift__ = _shift(np.left_shift, "bitwise_left_shift", "lshift")
Tensor.__rshift__, Tensor.__rrshift__, Tensor.__irshift__ = _shift(np.right_shift, "bitwise_right_shift", "rshift")
