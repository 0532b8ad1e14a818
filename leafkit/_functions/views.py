"""Views and in-place changes: how PyTorch keeps gradients right when storage is shared.

Three nodes, named as PyTorch names them:

``AsStridedBackward0``
    When a base tensor's history changes in place (``h.mul_(3)``), every view
    made earlier (``v = h.view(2)``) must now route its gradient through the
    *new* history.  PyTorch regenerates the view's ``grad_fn`` lazily as an
    ``AsStridedBackward0`` over the base; so does leafkit
    (:func:`refresh_view`).
``CopySlices``
    An in-place op on a view (``b[1:3].mul_(5)``, ``b[0] = w``) changes the
    base.  The base's new ``grad_fn`` is a ``CopySlices`` that wraps the op's
    node: inside the view's region the gradient goes through the op, outside
    it passes unchanged to the base's old history.
``Invalid``
    The ``grad_fn`` of a view made under ``no_grad`` whose base was later
    changed in place with grad mode on: PyTorch forbids using it.

The geometry of a view inside its base is a flat index array
(:func:`view_index`), computed from the arrays' addresses and strides, so any
chain of views (slices, transposes, selects, expands) is covered.  The
backward of both nodes is written against the namespace ``F``, so it is
recorded too when ``create_graph=True``.
"""

from __future__ import annotations

import numpy as np

from .._device import data_ptr
from .._tensor import NO_GRAD_VIEW_BASE_CHANGED, Tensor
from ..autograd.grad_mode import _state
from ..autograd.graph import Node, short_name
from ._base import array_module


def _addresses(arr):
    """Byte address of every element of ``arr`` (C order), as an int64 array of its shape."""
    start = data_ptr(arr)
    addr = np.full(arr.shape, start, dtype=np.int64)
    for axis, (n, st) in enumerate(zip(arr.shape, arr.strides)):
        shape = [1] * arr.ndim
        shape[axis] = n
        addr = addr + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return addr


def view_index(base_arr, view_arr):
    """Flat (C-order) indices into ``base_arr`` of each element of ``view_arr`` (same storage).

    For a C-contiguous base this costs time proportional to the view (offset and strides);
    otherwise the base's element addresses are sorted once.

    Raises
    ------
    RuntimeError
        If an element of the view does not lie in the base (not a view of it).
    """
    item = base_arr.dtype.itemsize
    if base_arr.flags.c_contiguous and view_arr.dtype.itemsize == item:
        start = data_ptr(view_arr) - data_ptr(base_arr)
        if start % item == 0 and all(st % item == 0 for st in view_arr.strides):
            idx = np.full(view_arr.shape, start // item, dtype=np.int64)
            for axis, (n, st) in enumerate(zip(view_arr.shape, view_arr.strides)):
                shape = [1] * view_arr.ndim
                shape[axis] = n
                idx = idx + (np.arange(n, dtype=np.int64) * (st // item)).reshape(shape)
            if idx.size == 0 or (idx.min() >= 0 and idx.max() < base_arr.size):
                return idx
    base_addr = _addresses(base_arr).reshape(-1)
    order = np.argsort(base_addr, kind="stable")
    sorted_addr = base_addr[order]
    want = _addresses(view_arr)
    pos = np.searchsorted(sorted_addr, want)
    pos = np.clip(pos, 0, max(len(sorted_addr) - 1, 0))
    if want.size and (len(sorted_addr) == 0 or not np.array_equal(sorted_addr[pos], want)):
        raise RuntimeError("leafkit: a view's elements do not lie inside its base")
    return order[pos]


def strided_geometry(base_arr, view_arr):
    """``(sizes, strides, storage_offset)`` of a view inside a C-contiguous base, in elements (None otherwise)."""
    item = base_arr.dtype.itemsize
    if not base_arr.flags.c_contiguous or view_arr.dtype.itemsize != item:
        return None
    off = data_ptr(view_arr) - data_ptr(base_arr)
    if off % item or any(st % item for st in view_arr.strides):
        return None
    return tuple(view_arr.shape), tuple(st // item for st in view_arr.strides), off // item


def _as_strided(self, size, stride, storage_offset):
    flat = self.reshape(-1)
    item = self.dtype.itemsize
    return array_module(self).lib.stride_tricks.as_strided(
        flat[storage_offset:], shape=size, strides=tuple(s * item for s in stride)
    )


def _as_strided_backward(F, grad, self_sym_sizes, size, stride, storage_offset):
    idx = np.full(size, storage_offset, dtype=np.int64)
    for axis, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = n
        idx = idx + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return _scatter_into(F, grad, idx, self_sym_sizes)


def make_node(cls, edges, meta, device):
    """A graph node built directly (no forward run): ``edges`` are its next_functions, ``meta`` its input metadata."""
    node = cls.__new__(cls)
    Node.__init__(node)
    node.next_functions = tuple(edges)
    node._in_meta = list(meta)
    node.needs_input_grad = tuple(e[0] is not None for e in edges)
    node._device = device
    return node


def _scatter_into(F, g, idx, base_shape):
    """Zeros of ``base_shape`` with ``g`` added at the flat positions ``idx`` (repeats add up)."""
    flat_shape = (int(np.prod(base_shape)),)
    return F.reshape(F.index_put_flat(F.new_zeros(flat_shape, g), idx, F.reshape(g, (-1,)), True), base_shape)


class AsStridedBackward0(Node):
    """A view regenerated over its base's current history; backward scatters into the base's shape."""

    def _backward(self, grads, F):
        return [_scatter_into(F, grads[0], self.idx, self.base_shape)]


from ._registry import apply, defop  # noqa: E402

as_strided_spec = defop("as_strided", _as_strided, view=True, self=_as_strided_backward)


class CopySlices(Node):
    """The base's node after an in-place op on one of its views (wraps that op's node ``fn``)."""

    geometry = None  # (sizes, strides, offset) of the view in its base, for the recorded backward

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def _release(self) -> None:
        self.fn._release()
        Node._release(self)

    def _backward(self, grads, F):
        if F.records and self.geometry is not None:
            return self._backward_recorded(grads[0], F)
        g = grads[0]
        idx = self.idx
        region = F.reshape(F.index_flat(F.reshape(g, (-1,)), idx), idx.shape)
        res = self.fn._backward([region], F)
        r0 = res[0]
        if r0 is None:
            r0 = F.zeros_like(region)
        elif tuple(r0.shape) != idx.shape:
            r0 = F.sum_to(r0, idx.shape)
        # outside the view's region the gradient passes to the base's old history unchanged
        out = F.index_put_flat(F.reshape(g, (-1,)), idx, F.reshape(r0, (-1,)), False)
        return [F.reshape(out, tuple(g.shape)), *res[1:]]

    def _backward_recorded(self, g, F):
        """PyTorch's CopySlices::apply on tensors: copy the gradient, run the op on the view's region, copy
        its result back into that region (so the recorded graph is CopySlices over CopyBackwards)."""
        result = F.new_zeros(tuple(g.shape), g).copy_(g)
        grad_slice = apply(as_strided_spec, (result, *self.geometry))
        res = self.fn._backward([grad_slice.clone()], F)
        if res[0] is not None:
            grad_slice.copy_(res[0])
        return [result, *res[1:]]


class Invalid(Node):
    """The grad_fn of a view whose base changed in place when the view could not follow (see
    :func:`refresh_view`); ``message`` is PyTorch's error."""

    message = NO_GRAD_VIEW_BASE_CHANGED

    def _backward(self, grads, F):
        raise RuntimeError(self.message)


def edge_of(t):
    return t._edge()


def refresh_view(view) -> None:
    """Bring a view's ``grad_fn`` and ``requires_grad`` up to date after its storage changed in place.

    PyTorch does this lazily, when the view's ``grad_fn`` is next read: the
    new node is ``AsStridedBackward0`` on the base's current history.
    ``retain_grad()`` moves to the new node; hooks registered on the view
    stay with the old node and no longer run, as in PyTorch.  A view that
    may not be rebased (made under ``no_grad`` or in inference mode from a
    tensor that requires grad, one of several views made by one op such as
    ``unbind``, an output of a custom Function, or a view of one of these)
    gets an ``Invalid`` node instead: reading its ``grad_fn`` or using it in
    a recorded op raises PyTorch's error, and it prints as
    ``grad_fn=<Invalid>``.
    """
    base = view._base
    view._attr_version = view._version_counter[0]
    view._rg_from_base = False
    if base._requires_grad and view._creation_meta is not None:
        message = rebase_message(view, indirect=True)
        view._grad_fn = make_node(Invalid, [], [], view._device)
        view._grad_fn.message = message
        view._requires_grad = True
        return
    view._requires_grad = base._requires_grad
    if not base._requires_grad:
        view._grad_fn = None
        return
    old = view._grad_fn
    node = make_node(AsStridedBackward0, [base._edge()], [(base._data.shape, base._data.dtype)], view._device)
    node.idx = view_index(base._data, view._data)
    node.base_shape = base._data.shape
    if old is not None:  # retain_grad() belongs to the tensor: it moves to the new node
        ref = (old._retain_refs or {}).pop(view._output_nr, None)
        if ref is not None:
            node._retain(0, view)
    view._grad_fn = node
    view._output_nr = 0


def mark_multi_output_views(outs):
    """The outputs of an op that returns several views (``unbind``, ``split``, ``chunk``): PyTorch's
    ``CreationMeta::MULTIPLE_OUTPUTS``, so changing one of them (or a view of one) in place is refused."""
    if _state.enabled:
        for o in outs:
            if o._creation_meta is None:
                o._creation_meta = "multi"
    return outs


_MODE_WORDS = {"no_grad": ("no_grad", "with grad mode enabled"), "inference": ("inference", "in normal mode")}
_REASONS = {
    "multi": " This view is the output of a function that returns multiple views. Such functions do not allow the "
    "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.",
    "no_grad": " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
    "by moving both the view and the inplace either both inside the no_grad block (if you don't want the "
    "inplace to be tracked) or both outside (if you want the inplace to be tracked).",
    "inference": " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
    "by moving both the view and the inplace either both inside the inference_mode block (if you don't "
    "want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
    "custom": " This view was created inside a custom Function (or because an input was returned as-is) and the "
    "autograd logic to handle view+inplace would override the custom backward associated with the custom "
    "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning "
    "the output of the custom Function.",
}


def rebase_message(view, indirect: bool) -> str:
    """PyTorch's error for changing in place (``indirect``: through its base or another view) a view whose
    creation forbids it (``handle_view_on_rebase``)."""
    meta = view._creation_meta
    modified = (
        "its base or another view of its base has been modified inplace" if indirect else "is being modified inplace"
    )
    fn = view._grad_fn
    mode, when = _MODE_WORDS.get(meta, ("no_grad", "with grad mode enabled"))
    if fn is not None and type(fn) is not Invalid:
        name = short_name(fn.name())
        if meta in _MODE_WORDS:  # a recorded view of a view made under no_grad / in inference mode
            head = (
                f"Output {view._output_nr} of {name} is a view of a view which was created in {mode} mode and "
                f"{modified} {when}."
            )
        else:
            head = f"Output {view._output_nr} of {name} is a view and {modified}."
    else:
        head = f"A view was created in {mode} mode and {modified} {when}."
    return head + _REASONS[meta]


Tensor._refresh_view = refresh_view


def flat_take(a, idx):
    return array_module(a).asarray(a.reshape(-1)[idx.reshape(-1)])


# -- vmap: batching rule (leafkit.func.vmap) ---------------------------------------------------------------------------
from ._batch_rules import logical_front  # noqa: E402
from ._batched import batch_size, fallback, wrap  # noqa: E402


def _as_strided_batched(spec, args, level):
    """``as_strided`` of C-contiguous samples (a batched gradient's zeros in ``CopySlices``): each sample's sizes,
    strides and offset within its own elements, the batch stride in front; other layouts run sample by sample."""
    self, size, stride = args[:3]
    offset = args[3] if len(args) > 3 else 0
    v = logical_front(self, level)
    if v.__class__ is not Tensor or not v._data.flags.c_contiguous:
        return fallback(spec, args, level)
    return wrap(apply(spec, (v, (batch_size(level), *size), (self._data.size, *stride), offset)), 0, level)


as_strided_spec.batch = _as_strided_batched
