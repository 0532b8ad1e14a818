"""In-place operations: ``add_``, ``sub_``, ``mul_``, ``div_``, ``clamp_``, ``zero_``, ``fill_``, ``copy_``.

Rules, as in PyTorch:

* a leaf that requires grad may not be changed in place while grad mode is
  on ("a leaf Variable that requires grad is being used in an in-place
  operation."); under ``no_grad`` it may (that is how optimizers step);
* every in-place change bumps the storage's version counter, so a tensor
  saved for backward and changed since is caught at backward time;
* when the change is recorded, the tensor's history is rebased: its
  ``grad_fn`` becomes the node of the in-place op (``AddBackward0`` for
  ``add_``, ``ZeroBackward0``, ``FillBackward0``, ``CopyBackwards``).
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import _NoGraphCtx, _scalar_to
from ..autograd.grad_mode import _state
from ._base import Op
from .views import (CopySlices, IndexPutBackward0, bump_history, check_valid, edge_of, make_node,  # noqa: F401
                    refresh_view, view_index)
from . import arithmetic as _A
from . import unary as _U

_SAVES_SELF = (_A.MulBackward0, _A.DivBackward0, _U.ClampBackward1)
_NAMES = {"f": {2: "Half", 4: "Float", 8: "Double"}, "i": {4: "Int", 8: "Long"}, "b": {1: "Bool"}, "u": {1: "Byte"}}


def _dtype_word(d) -> str:
    return _NAMES.get(d.kind, {}).get(d.itemsize, str(d))


class ZeroBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        return np.zeros_like(a)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g)


class FillBackward2(Op):
    """Fill with a number (``fill_``) or with given values (``uniform_``/``normal_``)."""

    @staticmethod
    def forward(ctx, a, value):
        out = np.empty_like(a)
        out[...] = value
        return out

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g), None


class CopyBackwards(Op):
    """``self.copy_(src)``: ``src`` broadcast and cast into ``self``'s storage."""

    @staticmethod
    def forward(ctx, a, src):
        if src.shape != a.shape:
            try:
                src = np.broadcast_to(src, a.shape)
            except ValueError:
                raise RuntimeError(f"The size of tensor a ({a.shape[-1] if a.ndim else 1}) must match the size of "
                                   f"tensor b ({src.shape[-1] if src.ndim else 1}) at non-singleton dimension "
                                   f"{max(a.ndim - 1, 0)}") from None
        return src.astype(a.dtype, copy=True)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g), g

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"


def _write(t, res) -> None:
    d = t._data
    if res.shape != d.shape:
        raise RuntimeError(f"output with shape [{', '.join(map(str, d.shape))}] doesn't match the broadcast shape "
                           f"[{', '.join(map(str, res.shape))}]")
    if res.dtype != d.dtype and not np.can_cast(res.dtype, d.dtype, "same_kind"):
        raise RuntimeError(f"result type {_dtype_word(res.dtype)} can't be cast to the desired output type "
                           f"{_dtype_word(d.dtype)}")
    try:
        d[...] = res
    except ValueError:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the "
                           "operation.") from None


def inplace(t, op_cls, *args):
    """Apply ``op_cls`` to ``t`` and ``args`` and write the result into ``t``'s storage.

    On a view of a tensor whose history is recorded, the base's ``grad_fn``
    becomes a ``CopySlices`` around the op's node, as in PyTorch.

    Raises
    ------
    RuntimeError
        PyTorch's in-place errors: "a leaf Variable that requires grad is
        being used in an in-place operation", "a view of a leaf Variable
        ...", "A view was created in no_grad mode ..."; "Expected all tensors
        to be on the same device"; "can't be cast to the desired output
        type"; "doesn't match the broadcast shape".
    """
    from .._tensor import Tensor

    if any(a is None for a in args[:1]) and op_cls in (_A.AddBackward0, _A.SubBackward0, _A.MulBackward0,
                                                         _A.DivBackward0):
        raise TypeError(f"{op_cls.__name__[:3].lower()}_(): argument 'other' must be Tensor or Number")
    for a in args:
        if isinstance(a, Tensor) and a._device is not t._device and not (a._device.type == "cpu" and a._data.ndim == 0):
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                               f"{t._device} and {a._device}!")
    base = t._base
    if base is not None and base._history != t._history_seen:
        refresh_view(t)
    grad_on = _state.enabled
    if grad_on:
        check_valid(t)
        check_inplace_allowed(t)
    record = grad_on and (t._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args))
    if not record:
        arrays = [(a._data if a._device is t._device else _scalar_to(a, t._device)) if isinstance(a, Tensor) else a
                  for a in args]
        out = op_cls.forward(_NoGraphCtx(), t._data, *arrays)
        _write(t, out[0] if isinstance(out, tuple) else out)
        t._version_counter[0] += 1
        return t
    saves_self = op_cls in _SAVES_SELF or "self" in op_cls._names_saved  # keep the value before the change
    old = Tensor._make(t._data.copy() if saves_self else t._data, t._device, None if base is not None else t._grad_fn,
                       t._output_nr)
    old._requires_grad = t._requires_grad if base is None else base._requires_grad
    if not saves_self:
        old._version_counter = t._version_counter
    res = op_cls.apply(old, *args)
    node = res._grad_fn
    _write(t, res._data)
    t._version_counter[0] += 1
    _rebind_saved_result(node, res, t)
    if base is None:
        if t._retains_grad and t._grad_fn is not None:  # retain_grad follows the tensor to its new history
            ref = (t._grad_fn._retain_refs or {}).pop(t._output_nr, None)
            if ref is not None:
                node._retain(0, t)
        t._grad_fn = node
        t._output_nr = 0
        t._requires_grad = True
        bump_history(t)
        return t
    # an in-place op on a view: the base's history becomes CopySlices around the op's node
    cs = make_node(CopySlices, [edge_of(base)] + list(node.next_functions[1:]),
                   [(base._data.shape, base._data.dtype)] + list(node._in_meta[1:]), base._device)
    cs.fn = node
    cs.idx = view_index(base._data, t._data)
    old_fn = base._grad_fn
    if base._retains_grad and old_fn is not None:  # the base's retained grad follows it to CopySlices
        if (old_fn._retain_refs or {}).pop(base._output_nr, None) is not None:
            cs._retain(0, base)
    base._grad_fn = cs
    base._output_nr = 0
    base._requires_grad = True
    bump_history(base)
    return t


def check_inplace_allowed(t) -> None:
    """Raise PyTorch's error when an in-place change of ``t`` cannot be recorded (grad mode on)."""
    from .._tensor import LEAF_INPLACE_MESSAGE

    base = t._base
    if base is None:
        if t._requires_grad and t._grad_fn is None:
            raise RuntimeError(LEAF_INPLACE_MESSAGE)
        return
    k = getattr(t, "_multi_view", None)
    if k is not None and base._requires_grad:
        raise RuntimeError(f"Output {k} of Unbind is a view and is being modified inplace. This view is the output of "
                           "a function that returns multiple views. Such functions do not allow the output views to "
                           "be modified inplace. You should replace the inplace operation by an out-of-place one.")
    if getattr(t, "_no_grad_view", False) and t._requires_grad:
        raise RuntimeError(NO_GRAD_VIEW_MESSAGE)
    if base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


NO_GRAD_VIEW_MESSAGE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).")


def _rebind_saved_result(node, res, t) -> None:
    """An op that saved its own result saved ``res``; after the write that storage is ``t``'s, at its new version."""
    saved = node._saved
    if not saved:
        return
    for sv in saved:
        if sv is not None and sv.data is res._data:
            sv.data = t._data
            sv.counter = t._version_counter
            sv.version = t._version_counter[0]
