"""Graph nodes: :class:`Node` (a ``grad_fn``), :class:`AccumulateGrad`, saved tensors, hooks.

Mirrors ``torch.autograd.graph``.  A tensor made by an operation keeps its
``grad_fn`` node alive; each node keeps the nodes of its inputs alive through
``next_functions``.  Nothing points back from a node to the tensor it made,
so a graph is freed by reference counting as soon as its output tensors go.
A leaf that requires grad is reached through an :class:`AccumulateGrad` node,
which holds the leaf (``.variable``) and is cached on the leaf by weak
reference, exactly as in PyTorch.

This module is part of the autograd core: it imports nothing from the tensor
or operation layers.  What the core needs from them (how to wrap an array as
a tensor, the namespaces backward formulas run in) the tensor layer hands it
at import through :data:`api`.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections import OrderedDict

from . import anomaly_mode

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "SavedVariable", "api"]

_BACKWARD_SUFFIX = re.compile(r"Backward0?$|Backward(?=\d+$)")  # ExpBackward0 -> Exp, MaxBackward1 -> Max1


def short_name(name: str) -> str:
    """A node name as PyTorch's error messages write it: ``ExpBackward0`` -> ``Exp``, ``MaxBackward1`` -> ``Max1``."""
    return _BACKWARD_SUFFIX.sub("", name)


_sequence = itertools.count()  # creation order; the engine runs later nodes first, as PyTorch does

RELEASED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)
HINT_PLAIN = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True, check_nan=False)."
)
HINT_ANOMALY = (
    "Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
    "variable in question was changed in there or anywhere later. Good luck!"
)


class _TensorAPI:
    """What the tensor layer hands the autograd core at import (the core imports nothing above it).

    Attributes
    ----------
    tensor_type : type
        The tensor class (for ``isinstance`` checks).
    wrap : callable
        ``wrap(array, device)``: a tensor with no history around ``array``.
    array_ns, tensor_ns : object
        The namespaces backward formulas run in: on raw arrays (a plain
        backward pass) and on tensors (``create_graph=True``, so that the
        backward pass is itself recorded).
    type_string : callable
        ``type_string(np_dtype, device)``: ``"torch.FloatTensor"`` ...
    """

    tensor_type = None
    wrap = None
    array_ns = None
    tensor_ns = None
    type_string = None


api = _TensorAPI()


class RemovableHandle:
    """Handle returned by ``register_hook``; ``remove()`` unregisters the hook.

    Mirrors ``torch.utils.hooks.RemovableHandle``; it is also a context
    manager that removes the hook on exit.
    """

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict):
        self.id = next(RemovableHandle._next_id)
        self._hooks_ref = weakref.ref(hooks_dict)

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


def add_hook(hooks: _HookDict, fn) -> RemovableHandle:
    """Register ``fn`` in ``hooks``; the handle removes it again."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved.

    An *input* of the node is saved as the tensor itself (as PyTorch does:
    no reference cycle is possible); an *output* is saved as its array and
    version counter only, and rebuilt around the node when unpacked for a
    recorded backward pass (saving the output tensor would make a cycle
    node → tensor → node).

    ``unpack`` raises PyTorch's "modified by an inplace operation" error when
    the tensor was changed in place since it was saved.
    """

    __slots__ = ("data", "counter", "version", "tensor", "output_nr", "producer", "device")

    def __init__(self, data, counter, tensor=None, output_nr=0, producer=None, device=None):
        self.data = data
        self.counter = counter  # a one-item list shared by every tensor viewing the same storage (None: untracked)
        self.version = counter[0] if counter is not None else 0
        self.tensor = tensor
        self.output_nr = output_nr
        self.producer = producer  # the node that made the saved tensor, or its name (for the error message)
        self.device = device

    def check(self) -> None:
        if self.counter is not None and self.counter[0] != self.version:
            ttype = api.type_string(self.data.dtype, self.device)
            shape = ", ".join(map(str, self.data.shape))
            # PyTorch names a saved input's grad_fn as it is now (an in-place change gave it a new one:
            # "output 0 of Add" after h.add_(1)), and a saved output's node
            producer = self.tensor.grad_fn if self.tensor is not None else self.producer
            producer = producer if producer is None or isinstance(producer, str) else producer.name()
            where = f", which is output {self.output_nr} of {short_name(producer)}," if producer else ""
            hint = HINT_ANOMALY if anomaly_mode.is_anomaly_enabled() else HINT_PLAIN
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"[{ttype} [{shape}]]{where} is at version {self.counter[0]}; expected version {self.version} "
                f"instead. {hint}"
            )

    def unpack(self, node=None, as_tensor=False):
        """The saved array (or, with ``as_tensor``, the tensor, connected to the graph)."""
        if self.counter is not None and self.counter[0] != self.version:
            self.check()
        if not as_tensor:
            return self.data
        if self.tensor is not None:
            return self.tensor
        # a saved output: rebuilt around the node that made it
        return api.wrap(self.data, self.device, node, self.output_nr, self.counter)


_NRS = {}


def nrs(t):
    """One shared tuple per sequence of output numbers (most are ``(0,)`` or ``(0, 0)``)."""
    return _NRS.setdefault(t, t)


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
        Free space for the user, as in PyTorch.  In anomaly mode it holds
        the forward traceback under ``"traceback_"``.

    Notes
    -----
    ``_released`` is leafkit's own flag (PyTorch has none): True once backward
    ran through this node without ``retain_graph``, freeing its saved tensors
    (if it had any; a node without saved tensors can run again, as in
    PyTorch).  The drawings grey such nodes out.
    """

    # ``next_functions`` is stored split: the nodes in ``_next`` and their output numbers in ``_nrs`` (a tuple of
    # ints holds no reference, so the garbage collector has one container per node to visit, not one per edge)
    __slots__ = (
        "_next",
        "_nrs",
        "_seq",
        "_stash",
        "_in_meta",
        "needs_input_grad",
        "_device",
        "_had_saved",
        "_released",
        "__dict__",
        "__weakref__",
    )

    _tensor_hooks = None  # {output_nr: _HookDict} of hooks registered on the tensors this node made
    _retain_refs = None  # {output_nr: weakref to a tensor that called retain_grad()}
    _pre_hooks = None
    _post_hooks = None
    _materialize = True  # missing output gradients are given as zeros
    _out_meta = None  # [(shape, dtype)] per output, for nodes with several outputs

    def __init__(self):
        self._seq = next(_sequence)
        self._next = ()
        self._nrs = ()
        self._stash = None
        self._in_meta = ()
        self.needs_input_grad = ()
        self._device = None
        self._had_saved = False  # a tensor was saved: freeing it makes a second pass fail
        self._released = False
        if anomaly_mode._enabled:
            anomaly_mode.record_traceback(self)

    @property
    def next_functions(self):
        return tuple(zip(self._next, self._nrs))

    @next_functions.setter
    def next_functions(self, edges):
        self._next = tuple(e[0] for e in edges)
        self._nrs = nrs(tuple(e[1] for e in edges))

    # -- identity ---------------------------------------------------------
    def name(self) -> str:
        """The node's name, e.g. ``'MulBackward0'``."""
        return type(self).__name__

    def _sequence_nr(self) -> int:
        return self._seq

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def metadata(self) -> dict:
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    @property
    def requires_grad(self) -> bool:
        return True

    @property
    def n_outputs(self) -> int:
        return len(self._out_meta) if self._out_meta else 1

    # -- saved tensors ----------------------------------------------------
    def _check_released(self) -> None:
        if self._released and self._had_saved:
            raise RuntimeError(RELEASED_MESSAGE)

    def _release(self) -> None:
        """Free the saved tensors (backward ran without ``retain_graph``).

        Saved sizes and other attributes stay, as in PyTorch: a node that
        saved no tensor can run again.
        """
        if self._had_saved:
            self._stash = None
        self._released = True

    # -- hooks ------------------------------------------------------------
    def register_hook(self, fn):
        """Register ``fn(grad_inputs, grad_outputs)`` to run after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = _HookDict()
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """Register ``fn(grad_outputs)`` to run before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        return add_hook(self._pre_hooks, fn)

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
    def _backward(self, grads, F):
        """Map output gradients (one per output) to input gradients (one per ``next_functions`` entry).

        ``F`` is the namespace the formulas run in: arrays in a plain pass,
        tensors when the pass is recorded (``create_graph=True``).
        """
        raise NotImplementedError


class AccumulateGrad(Node):
    """The node that adds incoming gradients into a leaf's ``.grad``.

    Attributes
    ----------
    variable : Tensor
        The leaf tensor this node accumulates into.
    """

    __slots__ = ("variable",)

    def __init__(self, variable):
        Node.__init__(self)
        self._seq = 1 << 62  # runs as soon as it is ready, as in PyTorch (UINT64_MAX there)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def _backward(self, grads, F):
        return ()


class Error(Node):
    """A node whose backward raises (PyTorch's ``torch::autograd::Error``, made by its ``DelayedError``
    function): what ``once_differentiable`` puts behind the gradients it returns in a recorded pass."""

    def name(self) -> str:
        return "torch::autograd::Error"

    def __init__(self, message, edges):
        Node.__init__(self)
        self.message = message
        self.next_functions = tuple(edges)
        self.needs_input_grad = tuple(e[0] is not None for e in edges)

    def _backward(self, grads, F):
        raise RuntimeError(self.message)
