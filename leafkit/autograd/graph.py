"""Graph nodes: :class:`Node` (a ``grad_fn``), :class:`AccumulateGrad`, hooks.

Mirrors ``torch.autograd.graph``.  A tensor made by an operation keeps its
``grad_fn`` node alive; each node keeps the nodes of its inputs alive through
``next_functions``.  Nothing points back from a node to the tensor it made,
so a graph is freed by reference counting as soon as its output tensors go.
A leaf that requires grad is reached through an :class:`AccumulateGrad` node,
which holds the leaf (``.variable``) and is cached on the leaf by weak
reference, exactly as in PyTorch.
"""
from __future__ import annotations

import itertools
import re
import weakref
from collections import OrderedDict

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "SavedVariable"]

_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")
_sequence = itertools.count()  # creation order; the engine runs later nodes first, as PyTorch does

RELEASED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


class RemovableHandle:
    """Handle returned by ``register_hook``; ``remove()`` unregisters the hook.

    Mirrors ``torch.utils.hooks.RemovableHandle``; it is also a context
    manager that removes the hook on exit.
    """

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict):
        self.id = next(RemovableHandle._next_id)
        self._hooks_ref = weakref.ref(hooks_dict) if _weakrefable(hooks_dict) else (lambda d=hooks_dict: d)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(OrderedDict):
    """An ordered dict of hooks that a weak reference can point at."""


def _weakrefable(obj) -> bool:
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False


class SavedVariable:
    """An array saved for backward, with the version it had when saved.

    ``unpack`` raises PyTorch's "modified by an inplace operation" error when
    the tensor that owns the array was changed in place since.
    """

    __slots__ = ("data", "counter", "version", "desc")

    def __init__(self, data, counter, desc):
        self.data = data
        self.counter = counter  # a one-item list shared by every tensor viewing the same storage
        self.version = counter[0] if counter is not None else 0
        self.desc = desc  # (device, name of the node that made the owner, or None)

    def unpack(self):
        if self.counter is not None and self.counter[0] != self.version:
            device, producer = self.desc
            names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                     "int64": "LongTensor", "int32": "IntTensor", "bool": "BoolTensor"}
            ttype = ("torch.cuda." if device is not None and device.type == "cuda" else "torch.") + \
                names.get(str(self.data.dtype), "Tensor")
            shape = self.data.shape
            where = f", which is output 0 of {_BACKWARD_SUFFIX.sub('', producer)}," if producer else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"[{ttype} [{', '.join(map(str, shape))}]]{where} is at version {self.counter[0]}; expected version "
                f"{self.version} instead. Hint: enable anomaly detection to find the operation that failed to "
                "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        return self.data


class Node:
    """A node of the backward graph: the ``grad_fn`` of a tensor.

    Attributes
    ----------
    next_functions : tuple of (Node or None, int)
        One pair per differentiable input, in argument order: the node that
        receives that input's gradient (``AccumulateGrad`` for a leaf, the
        input's own ``grad_fn`` otherwise, ``None`` when the input needs no
        gradient) and the output index of that node.
    metadata : dict
        Free space for the user, as in PyTorch.

    Notes
    -----
    ``_released`` is leafkit's own flag (PyTorch has none): True once backward
    ran through this node without ``retain_graph``, freeing its saved tensors
    (if it had any; a node without saved tensors can run again, as in
    PyTorch).  The drawings grey such nodes out.
    """

    _names_saved: tuple = ()
    _tensor_hooks = None
    _retain_refs = None
    _pre_hooks = None
    _post_hooks = None
    _released = False
    _had_saved = False
    _saved = None
    _out_meta = None
    _in_meta = ()
    _device = None
    _slot_args = None

    def __init__(self):
        self._seq = next(_sequence)
        self.next_functions = ()
        self.metadata = {}

    # -- identity ---------------------------------------------------------
    def name(self) -> str:
        """The node's name, e.g. ``'MulBackward0'``."""
        return type(self).__name__

    def _repr_name(self) -> str:
        """The name a tensor's repr shows in ``grad_fn=<...>`` (PyTorch shows the node's class name)."""
        return type(self).__name__

    def _sequence_nr(self) -> int:
        return self._seq

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def requires_grad(self) -> bool:
        return True

    # -- saved tensors ----------------------------------------------------
    @property
    def saved_tensors(self):
        """The arrays given to ``save_for_backward``, checked against their versions.

        Raises
        ------
        RuntimeError
            "backward through the graph a second time" once freed;
            "modified by an inplace operation" when a saved tensor changed.
        """
        if self._released and self._had_saved:
            raise RuntimeError(RELEASED_MESSAGE)
        saved = self._saved
        if not saved:
            return ()
        return tuple(s.unpack() if s is not None else None for s in saved)

    def _release(self) -> None:
        """Free the saved tensors (backward ran without ``retain_graph``)."""
        if self._saved is not None:
            self._had_saved = True
            self._saved = None
        self._released = True

    def __getattr__(self, item):
        # PyTorch exposes saved values as ``_saved_<name>`` attributes.
        if item.startswith("_saved_") and item[7:] in type(self)._names_saved:
            if self._released and self._had_saved:
                raise RuntimeError(RELEASED_MESSAGE)
            from .._tensor import Tensor
            idx = type(self)._names_saved.index(item[7:])
            saved = self.__dict__.get("_saved") or ()
            value = saved[idx] if idx < len(saved) else None
            if value is None:
                extra = self.__dict__.get("_extra_saved", {})
                return extra.get(item[7:])
            arr = value.unpack()
            return Tensor._wrap(arr, self.__dict__.get("_device"))
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{item}'")

    def __dir__(self):
        return list(super().__dir__()) + ["_saved_" + n for n in type(self)._names_saved]

    # -- hooks ------------------------------------------------------------
    def register_hook(self, fn):
        """Register ``fn(grad_inputs, grad_outputs)`` to run after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = _HookDict()
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn):
        """Register ``fn(grad_outputs)`` to run before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle

    def _hooks_for_output(self, output_nr: int) -> _HookDict:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        hooks = self._tensor_hooks.get(output_nr)
        if hooks is None:
            hooks = self._tensor_hooks[output_nr] = _HookDict()
        return hooks

    def _retain(self, output_nr: int, tensor) -> None:
        if self._retain_refs is None:
            self._retain_refs = {}
        self._retain_refs[output_nr] = weakref.ref(tensor)

    # -- computation (overridden) -------------------------------------------
    def _backward(self, grads):
        """Map output gradients (arrays, one per output) to input gradients (one per input slot)."""
        raise NotImplementedError


class AccumulateGrad(Node):
    """The node that adds incoming gradients into a leaf's ``.grad``.

    Attributes
    ----------
    variable : Tensor
        The leaf tensor this node accumulates into.
    """

    def __init__(self, variable):
        Node.__init__(self)
        self._seq = 1 << 62  # runs as soon as it is ready, as in PyTorch (UINT64_MAX there)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def _backward(self, grads):
        return ()
