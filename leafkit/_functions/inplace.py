"""In-place operations: the rules every ``op_`` follows, and ``zero_``, ``fill_``, ``copy_``.

Rules, as in PyTorch:

* a leaf that requires grad may not be changed in place while grad mode is
  on ("a leaf Variable that requires grad is being used in an in-place
  operation."); under ``no_grad`` it may (that is how optimizers step);
* an inference tensor may not be changed in place outside inference mode;
* the written-to tensor and an operand may not partly overlap in memory;
* every in-place change bumps the storage's version counter, so a tensor
  saved for backward and changed since is caught at backward time;
* when the change is recorded, the tensor's history is rebased: its
  ``grad_fn`` becomes the node of the in-place op (``AddBackward0`` for
  ``add_``, ``ZeroBackward0``, ``FillBackward2``, ``CopyBackwards``); on a
  view, the base's ``grad_fn`` becomes a ``CopySlices`` around that node.
"""

from __future__ import annotations

import numpy as np

from .. import _device, _dtype
from .._random import normal_array, uniform_array
from .._tensor import INFERENCE_INPLACE_MESSAGE, LEAF_INPLACE_MESSAGE, Tensor
from ..autograd.grad_mode import _state
from ..autograd.graph import SAVED_HOOKS, SavedVariable, save_input
from ._base import array_module, as_array, broadcast_check, check_tensor, is_number, num, warn_user
from ._registry import _arrays, apply, defop, public
from .copy import clone
from .views import CopySlices, Invalid, make_node, rebase_message, strided_geometry, view_index

PARTIAL_OVERLAP_MESSAGE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation."
)
INTERNAL_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation."
)


def _write(t, res) -> None:
    d = t._data
    if res.shape != d.shape:
        raise RuntimeError(
            f"output with shape [{', '.join(map(str, d.shape))}] doesn't match the broadcast shape "
            f"[{', '.join(map(str, res.shape))}]"
        )
    if res.dtype != d.dtype and not np.can_cast(res.dtype, d.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {_dtype.word(res.dtype)} can't be cast to the desired output type {_dtype.word(d.dtype)}"
        )
    if isinstance(d, np.ndarray) and not d.flags.writeable:
        d = d.view()  # expand's arrays (and views of them) are read-only (NumPy's broadcast_to): write through a view
        d.flags.writeable = True
    if _internal_overlap(d):  # an expanded tensor (fill_, masked_fill_, index_put_): write what changed, in order
        changed = res != d
        d[changed] = res[changed]
        return
    d[...] = res


# -- memory overlap, as PyTorch checks it (ATen/MemoryOverlap.cpp) ------------------------------------------------
EXPANDED_WARNING = (
    "Use of {op} on expanded tensors is deprecated. Please clone() the tensor before performing this "
    "operation. This also applies to advanced indexing e.g. {example}"
)
_WARN_ON_EXPANDED = {
    "masked_fill": ("masked_fill_", "tensor[mask] = scalar"),
    "masked_fill_tensor": ("masked_fill_", "tensor[mask] = scalar"),
    "index_put": ("index_put_", "tensor[indices] = tensor"),
}


def _internal_overlap(a) -> bool:
    """PyTorch's ``has_internal_overlap(...) == Yes``: a dimension of size > 1 with stride 0 (an expanded tensor)."""
    return isinstance(a, np.ndarray) and 0 in a.strides and any(n > 1 and st == 0 for n, st in zip(a.shape, a.strides))


def _non_overlapping_and_dense(a) -> bool:
    """Every element at its own address and no gaps: the strides, sorted, are those of a contiguous layout."""
    expected = a.itemsize
    for st, n in sorted((st, n) for n, st in zip(a.shape, a.strides) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def _partial_overlap(a, b) -> bool:
    """PyTorch's ``get_overlap_status(a, b) == Partial``: only between non-overlapping-and-dense tensors ("too hard"
    otherwise); two such tensors overlap partly when their byte ranges meet without being the same tensor."""
    if not a.size or not b.size or not np.may_share_memory(a, b):
        return False
    if not _non_overlapping_and_dense(a) or not _non_overlapping_and_dense(b):
        return False
    a0, b0 = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if a0 == b0 and a1 == b1:
        return a.strides != b.strides
    return a0 < b1 and b0 < a1


def _check_overlap(t, args, spec=None) -> None:
    """PyTorch's memory-overlap checks of an in-place op writing into ``t`` (``spec``: the op).

    The written-to tensor may not have internal overlap (an expanded tensor: "more than one element of the
    written-to tensor refers to a single memory location"), except for ``fill_`` with a number and ``zero_``;
    ``masked_fill_`` and ``index_put_`` only warn that it is deprecated.  An operand may be the written-to
    memory itself, not part of it; this is checked only between non-overlapping-and-dense tensors, on the bytes
    each spans (a strided or broadcast operand is "too hard" for PyTorch and passes), and a 0-d value (``fill_``)
    is read before anything is written.
    """
    d = t._data
    if not isinstance(d, np.ndarray):
        return
    if _internal_overlap(d):
        name = spec.name if spec is not None else None
        if name in _WARN_ON_EXPANDED:
            warn_user(EXPANDED_WARNING.format(op=_WARN_ON_EXPANDED[name][0], example=_WARN_ON_EXPANDED[name][1]))
            if name == "index_put" and _masked_fill_dispatch(args):
                warn_user(EXPANDED_WARNING.format(op="masked_fill_", example="tensor[mask] = scalar"))
        elif not (name == "zero_" or (name == "fill_" and not hasattr(args[0], "shape"))):
            raise RuntimeError(INTERNAL_OVERLAP_MESSAGE)
    for a in args:
        if (
            isinstance(a, Tensor)
            and a is not t
            and isinstance(a._data, np.ndarray)
            and a._data.ndim
            and _partial_overlap(d, a._data)
        ):
            raise RuntimeError(PARTIAL_OVERLAP_MESSAGE)


def _masked_fill_dispatch(args) -> bool:
    """``index_put_(values, key, accumulate)`` that PyTorch runs as ``masked_fill_``: one mask, a one-element value."""
    values, key, accumulate = (tuple(args) + (False,))[:3]
    arrays = [k for k in key if not isinstance(k, slice)]
    return (
        not accumulate
        and len(arrays) == 1
        and arrays[0].dtype.kind == "b"
        and getattr(getattr(values, "_data", values), "size", 1) == 1
    )


def check_inplace_allowed(t) -> None:
    """Raise PyTorch's error when an in-place change of ``t`` cannot be recorded (``check_inplace``: grad mode
    on and the op requires grad)."""
    if type(t._grad_fn) is Invalid:
        t._raise_invalid()
    base = t._base
    if base is not None:
        if t._creation_meta is not None:
            raise RuntimeError(rebase_message(t, indirect=False))
        if t._requires_grad and base._grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        return
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError(LEAF_INPLACE_MESSAGE)


def inplace(t, spec, args):
    """Apply op ``spec`` to ``args`` (``args[0]`` is ``t``) and write the result into ``t``'s storage.

    Raises
    ------
    RuntimeError
        PyTorch's in-place errors: "a leaf Variable that requires grad is
        being used in an in-place operation", "a view of a leaf Variable
        ...", "A view was created in no_grad mode ...", "Inplace update to
        inference tensor outside InferenceMode", partial memory overlap;
        "Expected all tensors to be on the same device"; "can't be cast to
        the desired output type"; "doesn't match the broadcast shape".
    """
    for a in args[1:]:
        if isinstance(a, Tensor) and a._device is not t._device and not (a._device.type == "cpu" and a._data.ndim == 0):
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{t._device} and {a._device}!"
            )
    base = t._base
    if base is not None:
        t._fresh()  # a new grad_fn after an earlier in-place change; requires_grad following the base
    needs_grad = _state.enabled and (
        t._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args[1:])
    )
    if needs_grad:
        check_inplace_allowed(t)
    _check_overlap(t, args[1:], spec)
    if t._inference and not _state.inference:
        # PyTorch's kernel writes before the check that raises
        fargs, _, _ = _arrays(spec, args)
        out = spec.forward(*fargs)
        _write(t, out[0] if isinstance(out, tuple) else out)
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    # an integer or bool tensor has no history to record: a float operand that requires grad is only read
    record = needs_grad and _dtype.is_differentiable(t._data.dtype)
    if not record:
        fargs, _, _ = _arrays(spec, args)
        out = spec.forward(*fargs)
        _write(t, out[0] if isinstance(out, tuple) else out)
        t._version_counter[0] += 1
        return t
    # the op sees ``t`` as it is now, with its history; it writes its result into t's storage afterwards
    old = Tensor._make(t._data, t._device, t._grad_fn, t._output_nr)
    old._requires_grad = t._requires_grad if base is None else base._requires_grad
    old._version_counter = t._version_counter
    hooks = SAVED_HOOKS[-1] if SAVED_HOOKS else None  # saved-tensor hooks pack what the op keeps once written
    res = _record_unpacked(spec, old, args, t) if hooks is not None else apply(spec, (old, *args[1:]))
    if hooks is None:
        res = res[0] if isinstance(res, tuple) else res
        _save_self_as_clone(res._grad_fn, t)
    node = res._grad_fn
    _write(t, res._data)
    t._version_counter[0] += 1
    _rebind_saved_result(node, res, t)
    if hooks is not None:
        _pack_saved(node, t, hooks)
    if base is None:
        if t._retains_grad and t._grad_fn is not None:  # retain_grad follows the tensor to its new history
            ref = (t._grad_fn._retain_refs or {}).pop(t._output_nr, None)
            if ref is not None:
                node._retain(0, t)
        t._set_history(node, 0)
        return t
    # an in-place op on a view: the base's history becomes CopySlices around the op's node
    cs = make_node(
        CopySlices,
        [base._edge()] + list(node.next_functions[1:]),
        [(base._data.shape, base._data.dtype)] + list(node._in_meta[1:]),
        base._device,
    )
    cs.fn = node
    cs._had_saved = node._had_saved
    cs.idx = view_index(base._data, t._data)
    cs.geometry = strided_geometry(base._data, t._data)
    old_fn = base._grad_fn
    if base._retains_grad and old_fn is not None:  # the base's retained grad follows it to CopySlices
        if (old_fn._retain_refs or {}).pop(base._output_nr, None) is not None:
            cs._retain(0, base)
    base._set_history(cs, 0)
    return t


def _save_self_as_clone(node, t) -> None:
    """An op that saved the tensor it changes keeps a clone of its value before the change, as PyTorch does
    (``self.clone()``, recorded as ``CloneBackward0`` when ``t`` requires grad)."""
    saved = node._stash
    if not saved:
        return
    spec = type(node)._spec
    for k, sv in enumerate(saved):
        if sv.__class__ is SavedVariable and spec.saved_kinds[k] == ("input", 0):
            c = clone(t)
            saved = list(saved)
            saved[k] = save_input(c)  # packed by the saved-tensor hooks in place, as PyTorch packs its clone
            node._stash = tuple(saved)
            return


def _record_unpacked(spec, old, args, t):
    """The op recorded with the saved-tensor hooks set aside: what it saves is packed after the write into ``t``
    (:func:`_pack_saved`), since its result is ``t`` itself then, as PyTorch packs it."""
    outer = SAVED_HOOKS[:]
    SAVED_HOOKS.clear()
    try:
        res = apply(spec, (old, *args[1:]))
        res = res[0] if isinstance(res, tuple) else res
        _save_self_as_clone(res._grad_fn, t)
    finally:
        SAVED_HOOKS[:] = outer
    return res


def _pack_saved(node, t, hooks) -> None:
    """Under saved-tensor hooks: what the in-place op's node saved, handed to the pack hook once ``t`` holds the
    result (its own result is ``t`` itself, at its new version; a saved input, the tensor saved)."""
    for sv in node._stash or ():
        if sv.__class__ is SavedVariable:
            sv.pack(hooks, sv.tensor if sv.tensor is not None else t)


def _rebind_saved_result(node, res, t) -> None:
    """An op that saved its own result saved ``res``; after the write that storage is ``t``'s, at its new version."""
    saved = node._stash
    if not saved:
        return
    for sv in saved:
        if sv.__class__ is SavedVariable and sv.data is res._data:
            sv.data = t._data
            sv.counter = t._version_counter
            sv.version = t._version_counter[0]


# -- the in-place-only ops ----------------------------------------------------------------------------------------
zero_spec = defop(
    "zero_",
    lambda self: as_array(array_module(self).zeros_like(self)),
    node="ZeroBackward0",
    self=lambda F, grad: F.zeros_like(grad),
)


def _fill(self, value):
    out = array_module(self).empty_like(self)
    out[...] = value
    return out


fill_spec = defop("fill_", _fill, node="FillBackward2", self=lambda F, grad: F.zeros_like(grad))
fill_tensor_spec = defop(
    "fill_tensor_",
    _fill,
    inputs=("self", "value"),
    node="FillBackward3",
    self=lambda F, grad: F.zeros_like(grad),
    value=lambda F, grad: F.sum(grad),
)


def _copy(self, src):
    if src.shape != self.shape:
        broadcast_check(self, src)  # shapes that do not broadcast at all: "The size of tensor a (3) must match ..."
        try:
            src = array_module(self).broadcast_to(src, self.shape)
        except ValueError:
            raise RuntimeError(
                f"output with shape [{', '.join(map(str, self.shape))}] doesn't match the broadcast "
                f"shape [{', '.join(map(str, np.broadcast_shapes(self.shape, src.shape)))}]"
            ) from None
    return src.astype(self.dtype, copy=True)


copy_spec = defop(
    "copy_",
    _copy,
    inputs=("self", "src"),
    node="torch::autograd::CopyBackwards",
    self=lambda F, grad: F.zeros_like(grad),
    src=lambda F, grad: grad,
)


@public("zero_", function=False)
def zero_(self):
    """Fill with zeros in place (node ``ZeroBackward0``; see :func:`inplace` for the rules)."""
    return inplace(self, zero_spec, (self,))


@public("fill_", function=False)
def fill_(self, value):
    """Fill with ``value`` in place: a number gives ``FillBackward2``, a 0-d tensor ``FillBackward3`` (which
    passes the summed gradient to the value)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value._data.ndim} dimensions."
            )
        return inplace(self, fill_tensor_spec, (self, value))
    return inplace(self, fill_spec, (self, value))


@public("copy_", function=False)
def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast, moved to this device) into this storage in place (node
    ``CopyBackwards``; the gradient flows to ``src``).

    ``src`` may be a Python number, as in PyTorch (``x.copy_(2.0)`` fills; the node's edge to it is None).
    Into an integer or bool tensor values are cast as ``.to()`` casts them (floats truncate toward zero) and
    no history is recorded, even from a ``src`` that requires grad.

    Raises ``RuntimeError`` when ``src`` does not broadcast to this shape ("The size of tensor a ... must match
    the size of tensor b"), when it partly overlaps this tensor's memory, and PyTorch's other in-place errors;
    ``TypeError`` for a ``src`` that is neither a tensor nor a number."""
    if not isinstance(src, Tensor) and is_number(src):
        src = Tensor._make(np.asarray(num(src)), _device.CPU)  # PyTorch's wrapped number: float64, int64 or bool
    check_tensor("copy_", "other", src)
    if src._device is not self._device:
        src = src.to(self._device)
    return inplace(self, copy_spec, (self, src))


@public("uniform_", function=False)
def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill in place with uniform samples from [a, b) (used by ``nn.Linear``'s initialisation)."""
    return inplace(
        self, fill_spec, (self, self._on_device(uniform_array(self.shape, a, b, self._data.dtype, generator)))
    )


@public("normal_", function=False)
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill in place with normal samples of the given mean and std."""
    return inplace(
        self, fill_spec, (self, self._on_device(normal_array(self.shape, mean, std, self._data.dtype, generator)))
    )
