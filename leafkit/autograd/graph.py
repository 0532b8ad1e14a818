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

import contextlib
import itertools
import re
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from . import anomaly_mode

__all__ = [
    "Node",
    "AccumulateGrad",
    "RemovableHandle",
    "SavedVariable",
    "SavedTensor",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "TensorAPI",
    "TensorLike",
    "FormulaNamespace",
    "api",
    "connect",
]

_BACKWARD_SUFFIX = re.compile(r"Backward0?$|Backward(?=\d+$)")  # ExpBackward0 -> Exp, MaxBackward1 -> Max1


def short_name(name: str) -> str:
    """A node name as PyTorch's error messages write it: ``ExpBackward0`` -> ``Exp``, ``MaxBackward1`` -> ``Max1``."""
    return _BACKWARD_SUFFIX.sub("", name)


_sequence = itertools.count()  # creation order; the engine runs later nodes first, as PyTorch does
# the sequence number of nodes the engine runs as soon as they are ready (PyTorch's UINT64_MAX)
RUN_FIRST = (1 << 64) - 1

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


class TensorLike(Protocol):
    """What the autograd core reads and calls on a tensor: the autograd state PyTorch keeps beside the data.

    ``leafkit.Tensor`` has all of it; the core never imports it (it gets the class through :data:`api`).
    """

    _data: Any  # the NumPy or CuPy array
    _device: Any
    _requires_grad: bool
    _grad_fn: Node | None  # None for a leaf
    _output_nr: int  # which output of its grad_fn the tensor is
    _version_counter: list  # [version], shared by every tensor on the same storage
    _base: Any  # the tensor a view was made from (None: not a view)
    _grad: Any
    _hooks: Any  # register_hook's hooks of a leaf
    _post_acc_hooks: Any
    _inference: bool

    @property
    def shape(self) -> Any: ...

    @property
    def dtype(self) -> Any: ...

    def _edge(self) -> tuple[Node | None, int]:
        """Where this tensor's gradient goes: ``(grad_fn, output_nr)``, a leaf's ``(AccumulateGrad, 0)``, or
        ``(None, 0)`` when it does not require grad."""

    def _accumulate_grad(self, g: Any, create_graph: bool) -> None:
        """Add ``g`` into ``.grad`` (what ``AccumulateGrad`` does)."""

    def _retain_grad_value(self, g: Any, create_graph: bool) -> None:
        """The ``retain_grad()`` copy of ``g`` into ``.grad``."""

    def _check_can_be_saved(self) -> None:
        """PyTorch's error for an inference tensor saved for backward."""

    def _valid_fn(self) -> Node | None:
        """A view's ``grad_fn`` brought up to date (or PyTorch's error for a view that cannot be)."""

    def _set_history(self, node: Node, output_nr: int) -> None:
        """Make ``node`` (output ``output_nr``) this tensor's ``grad_fn``."""

    def _fresh(self) -> Any:
        """A view whose storage changed in place since it was made gets its ``grad_fn`` regenerated."""

    def _alias(self) -> Any:
        """A new tensor on the same storage, not recorded."""

    def _type_string(self) -> str:
        """PyTorch's type name: ``"torch.FloatTensor"`` ..."""

    def retain_grad(self) -> None: ...

    def is_floating_point(self) -> bool: ...

    def detach(self) -> Any: ...

    def requires_grad_(self, requires_grad: bool = True) -> Any: ...

    def to(self, *args: Any) -> Any: ...


class FormulaNamespace(Protocol):
    """A namespace backward formulas run in (``F``): on arrays in a plain pass, on tensors in a recorded one.

    Besides every registered op under its name (``F.mul``, ``F.expand``), it has what the engine itself calls.
    """

    records: bool  # True for the tensor namespace: formulas run there are recorded (``create_graph=True``)

    def sum_to(self, g: Any, shape: tuple, node: Node | None = None, i: int = 0) -> Any:
        """``g`` summed over broadcast dimensions to ``shape``; PyTorch's "invalid gradient" error otherwise."""

    def cast(self, g: Any, dtype: Any) -> Any:
        """``g`` cast to the NumPy dtype ``dtype``."""

    def zeros(self, shape: tuple, dtype: Any, like: Any) -> Any:
        """Zeros of ``shape`` and ``dtype`` on ``like``'s device."""

    def has_nan(self, g: Any) -> bool:
        """Whether ``g`` holds a NaN (anomaly mode's check)."""

    def own(self, g: Any) -> Any:
        """``g`` as a writeable array of its own (a broadcast view is copied); tensors as they are."""


class TensorAPI(Protocol):
    """What the tensor layer hands the autograd core at import (the core imports nothing above it).

    The core reads a tensor's autograd state directly (``_data``, ``_device``, ``_requires_grad``, ``_grad_fn``,
    ``_output_nr``, ``_version_counter``, ``_edge()``, ``_accumulate_grad()``); everything else it needs from the
    tensor layer comes through this interface, filled once by :mod:`leafkit._functions`.
    """

    tensor_type: type[TensorLike]  # the tensor class, for ``isinstance`` checks
    array_ns: FormulaNamespace  # formulas on raw arrays (a plain backward pass)
    tensor_ns: FormulaNamespace  # formulas on tensors (``create_graph=True``: the pass is itself recorded)

    def wrap(
        self, data: Any, device: Any, grad_fn: Node | None = None, output_nr: int = 0, counter: list | None = None
    ) -> Any:
        """A tensor around the array ``data`` on ``device``, with ``grad_fn`` (output ``output_nr``) as its history
        and, if given, the version ``counter`` it shares with other tensors on the same storage."""

    def type_string(self, dtype: Any, device: Any) -> str:
        """PyTorch's type name of a NumPy dtype on a device: ``"torch.FloatTensor"``, ``"torch.cuda.DoubleTensor"``."""


class _API:
    """The one :data:`api` object: empty until :mod:`leafkit._functions` sets its attributes at import."""

    tensor_type: type[TensorLike]
    array_ns: FormulaNamespace
    tensor_ns: FormulaNamespace
    wrap: Callable[..., Any]
    type_string: Callable[[Any, Any], str]


api: TensorAPI = _API()  # filled by leafkit._functions at import


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


# -- saved-tensor hooks ------------------------------------------------------------------------------------------
# The stack of (pack_hook, unpack_hook) pairs that saved_tensors_hooks pushes; the savers read it (one truth test when
# it is empty, so that recording costs nothing more without hooks).  It is one list for the whole process, always
# the same object (the fast path's written-out savers hold it): PyTorch keeps one per thread.
SAVED_HOOKS: list = []
_hooks_disabled: list = [None]  # the message of the innermost disable_saved_tensors_hooks, or None
_HOOKED = [-2]  # the version counter of a value saved with hooks: never its version, so unpack() goes to the hooks

PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
    "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need "
    "to perform in-place operations on the input to a pack hook."
)
RAW_FREED_MESSAGE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph are "
    "freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through "
    "the graph a second time or if you need to access saved variables after calling backward."
)


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved (PyTorch's ``SavedVariable``).

    An *input* of the node is saved as the tensor itself (as PyTorch does:
    no reference cycle is possible); an *output* is saved as its array and
    version counter only, and rebuilt around the node when unpacked for a
    recorded backward pass (saving the output tensor would make a cycle
    node → tensor → node).

    ``unpack`` raises PyTorch's "modified by an inplace operation" error when
    the tensor was changed in place since it was saved.

    With saved-tensor hooks (:class:`saved_tensors_hooks`, or
    ``grad_fn._raw_saved_<name>.register_hooks``) it keeps only what the pack
    hook returned (``packed``) and how to rebuild the tensor's history; each
    unpack calls the unpack hook and wraps its tensor in a new tensor with that
    history.  As in PyTorch, no version check is made then: the hooks own the
    value.
    """

    __slots__ = ("data", "counter", "version", "tensor", "output_nr", "producer", "device", "unpack_hook", "packed")

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
            return self._unpack_hooked(node, as_tensor)  # hooks set (a counter that never matches) or the error
        if not as_tensor:
            return self.data
        if self.tensor is not None:
            return self.tensor
        return api.wrap(self.data, self.device, node, self.output_nr, self.counter)  # an output, around its node

    # -- hooks ------------------------------------------------------------
    def pack(self, hooks, t, origin=None) -> SavedVariable:
        """Hand ``t`` (the tensor being saved) to the pack hook of ``hooks`` and keep what it returns instead of
        the tensor, with the history of ``origin`` (default ``t``).  PyTorch's RuntimeError when the hook changes
        ``t`` in place."""
        pack_hook, unpack_hook = hooks
        counter = t._version_counter
        before = counter[0]
        packed = pack_hook(t)
        if counter[0] != before:
            raise RuntimeError(PACK_INPLACE_MESSAGE)
        if self.tensor is not None:  # an input: its history is kept, not the tensor
            o = t if origin is None else origin
            self.producer = (o._grad_fn, o._requires_grad, o._get_accumulator() if o._requires_grad else None)
            self.tensor = None
        elif not isinstance(self.producer, tuple):  # an output of the node: rebuilt around the node
            self.producer = None
        self.packed = packed
        self.unpack_hook = unpack_hook
        self.data = None  # what the hooks keep is all that is kept (save_on_cpu frees the device's memory)
        self.counter, self.version = _HOOKED, -1  # unpack() takes its slow way, to the hooks, without a test more
        return self

    def _unpack_hooked(self, node, as_tensor):
        if self.counter is not _HOOKED:
            self.check()  # PyTorch's "modified by an inplace operation"
        t = self.unpack_hook(self.packed)
        if not isinstance(t, api.tensor_type):
            raise TypeError(
                f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type(t).__name__}"
            )
        if not as_tensor:
            return t._data
        history = self.producer
        if history is None:  # the node's own output
            return api.wrap(t._data, t._device, node, self.output_nr, t._version_counter)
        fn, requires_grad, acc = history
        out = api.wrap(t._data, t._device, fn, self.output_nr, t._version_counter)
        if fn is None and requires_grad:  # a leaf: its gradient goes to the leaf's AccumulateGrad (if it has one)
            out._requires_grad = True
            if acc is not None:
                out._acc_ref = weakref.ref(acc)
        return out


class SavedTensor:
    """``grad_fn._raw_saved_<name>``: the saved value itself, where hooks can be set on it afterwards
    (PyTorch's ``torch._C._autograd.SavedTensor``).

    ``register_hooks(pack_hook, unpack_hook)`` packs the saved value now (the pack hook gets a tensor on its
    storage, without history) and unpacks it through ``unpack_hook`` each time backward or ``_saved_<name>``
    reads it.  PyTorch's errors: ``TypeError`` for hooks that are not callable; ``RuntimeError`` for a second
    pair of hooks, for a saved value that is ``None``, and once the graph has been freed.
    """

    __slots__ = ("_node", "_k")

    def __init__(self, node, k):
        self._node = node
        self._k = k

    def _saved(self):
        stash = self._node._stash
        return stash[self._k] if stash is not None and self._k < len(stash) else None

    @property
    def data(self):
        """The saved value, unpacked (as ``grad_fn._saved_<name>``)."""
        return self.unpack()

    def unpack(self):
        """The saved value as a tensor connected to the graph; ``None`` when nothing was saved."""
        self._node._check_released()
        sv = self._saved()
        return sv.unpack(self._node, as_tensor=True) if isinstance(sv, SavedVariable) else sv

    @property
    def unpack_hook(self):
        """The unpack hook in place on this saved value, or ``None``."""
        sv = self._saved()
        return sv.unpack_hook if isinstance(sv, SavedVariable) and sv.counter is _HOOKED else None

    def register_hooks(self, *hooks) -> None:
        """Set ``(pack_hook, unpack_hook)`` on this saved value (see the class)."""
        if len(hooks) != 2 or not callable(hooks[0]) or not callable(hooks[1]):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument types are supported:\n"
                "    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                "arg1: collections.abc.Callable) -> None\n\n"
                f"Invoked with: {', '.join(map(repr, (self, *hooks)))}"
            )
        pack_hook, unpack_hook = hooks
        node, k = self._node, self._k
        stash = node._stash
        if stash is None and node._released and node._had_saved:
            raise RuntimeError(RAW_FREED_MESSAGE)
        sv = stash[k] if stash is not None and k < len(stash) else None
        if sv is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if not isinstance(sv, SavedVariable):  # a Python number, saved as PyTorch's wrapped-number tensor
            t = api.wrap(_number_array(sv), None)
            sv = SavedVariable(t._data, t._version_counter, t, 0, None, t._device)
            node._stash = stash[:k] + (sv,) + stash[k + 1 :]
        if sv.counter is _HOOKED:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair of "
                "hooks is allowed at a time."
            )
        value = sv.unpack(node, as_tensor=True)
        alias = api.wrap(value._data, value._device, None, 0, value._version_counter)  # the storage, no history
        sv.pack((pack_hook, unpack_hook), alias, value)

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"


def _number_array(v):
    dt = np.bool_ if isinstance(v, bool) else (np.int64 if isinstance(v, int) else np.float64)
    return np.asarray(v, dtype=dt)


def save_input(t: Any) -> SavedVariable:
    """What a node keeps of an input ``t`` it saves: the tensor and its version (or what a pack hook returns)."""
    if t._inference:
        t._check_can_be_saved()  # "Inference tensors cannot be saved for backward" (outside inference mode)
    sv = SavedVariable(t._data, t._version_counter, t, t._output_nr, t._grad_fn, t._device)
    return sv.pack(SAVED_HOOKS[-1], t) if SAVED_HOOKS else sv


def save_output(t: Any, node: Node, output_nr: int) -> SavedVariable:
    """What ``node`` keeps of its own output ``t``: the array and version counter only (keeping the tensor would
    make a cycle node -> tensor -> node); an output without history (indices) is kept as the tensor."""
    kept = t if t._grad_fn is not node else None
    sv = SavedVariable(t._data, t._version_counter, kept, output_nr, node.name(), t._device)
    return sv.pack(SAVED_HOOKS[-1], t) if SAVED_HOOKS else sv


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Pack and unpack every tensor saved for backward inside the block (``torch.autograd.graph.saved_tensors_hooks``).

    ``pack_hook(tensor) -> Any`` runs when an op (or ``ctx.save_for_backward``) saves a tensor, in forward; the
    node keeps only its result.  ``unpack_hook(packed) -> Tensor`` runs each time backward (or
    ``grad_fn._saved_<name>``) reads the value, and must return a tensor of the saved one's shape, dtype and
    device.  The pack hook must not change its input in place (RuntimeError).  Blocks nest: the innermost pair
    applies.  The hooks are those in place when the tensor is *saved*; leaving the block changes nothing for
    graphs recorded inside it.

    Raises ``RuntimeError`` with the message of :func:`disable_saved_tensors_hooks` when hooks are disabled,
    ``TypeError`` when a hook is not callable.
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if not callable(self.pack_hook) or not callable(self.unpack_hook):
            raise TypeError(
                "_push_saved_tensors_default_hooks(): incompatible function arguments. The following argument "
                "types are supported:\n    1. (arg0: collections.abc.Callable, arg1: collections.abc.Callable) -> "
                f"None\n\nInvoked with: {self.pack_hook!r}, {self.unpack_hook!r}"
            )
        if _hooks_disabled[0] is not None:
            raise RuntimeError(_hooks_disabled[0])
        SAVED_HOOKS.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc: Any) -> None:
        SAVED_HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Keep the tensors saved for backward in CPU memory, and move each back to its device when backward needs it
    (``torch.autograd.graph.save_on_cpu``): GPU memory traded for copies.

    ``pin_memory=True`` asks for page-locked host memory: PyTorch pins only when CUDA is available; leafkit's
    host memory is NumPy's, so the copy is a plain CPU tensor either way.  ``device_type`` names the accelerator
    (``"cuda"``: leafkit's CuPy or its simulated cuda); tensors already on the CPU are kept as they are.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


def saved_tensors_disabled_message() -> str | None:
    """The message of the innermost :func:`disable_saved_tensors_hooks` block, or None outside any."""
    return _hooks_disabled[0]


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside the block, :class:`saved_tensors_hooks` (and ``save_on_cpu``, and the non-reentrant checkpoint)
    raise ``RuntimeError(error_message)`` (``torch.autograd.graph.disable_saved_tensors_hooks``).  Entering it
    while hooks are in place raises the same error.  Blocks nest; leaving one restores the outer message."""
    previous = _hooks_disabled[0]
    try:
        _hooks_disabled[0] = error_message
        if SAVED_HOOKS:
            raise RuntimeError(error_message)
        yield
    finally:
        _hooks_disabled[0] = previous


def connect(node: Node, inputs: Sequence[Any]) -> None:
    """Give ``node`` one ``next_functions`` edge per input, to its ``grad_fn`` (a leaf: its ``AccumulateGrad``), or
    none if it does not require grad; and the input's shape and dtype, which the engine sums a gradient back to."""
    edges, meta = [], []
    for t in inputs:
        needs_grad = isinstance(t, api.tensor_type) and t._requires_grad
        edges.append(t._edge() if needs_grad else (None, 0))
        meta.append((t._data.shape, t._data.dtype) if needs_grad else None)
    node.next_functions = edges
    node.needs_input_grad = tuple(e is not None for e in meta)
    node._in_meta = meta


_NRS: dict = {}


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

    _seq: int  # the creation order (the engine runs later nodes first)
    _next: tuple  # the nodes of next_functions (None: no edge)
    _nrs: tuple  # their output numbers
    _stash: Any  # the saved values (None: nothing saved, or freed)
    _in_meta: Sequence  # per input: (shape, dtype) its gradient is summed back to and cast to, or None
    needs_input_grad: tuple
    _device: Any
    _had_saved: bool
    _released: bool
    _tensor_hooks: dict | None = None  # {output_nr: _HookDict} of hooks registered on the tensors this node made
    _retain_refs: dict | None = None  # {output_nr: weakref to a tensor that called retain_grad()}
    _pre_hooks: _HookDict | None = None
    _post_hooks: _HookDict | None = None
    _materialize = True  # missing output gradients are given as zeros
    _out_meta: list | None = None  # [(shape, dtype)] per output, for nodes with several outputs

    def __init__(self, sequence_nr: int | None = None):
        # a node takes the next number of the creation order, unless given one (AccumulateGrad: RUN_FIRST, and
        # then, as in PyTorch, the order's counter does not move)
        self._seq = next(_sequence) if sequence_nr is None else sequence_nr
        self._next = self._nrs = self._in_meta = self.needs_input_grad = ()
        self._stash = self._device = None
        self._had_saved = self._released = False  # _had_saved: a tensor was saved, freeing it makes a second pass fail
        if anomaly_mode._enabled:
            anomaly_mode.record_traceback(self)

    @property
    def next_functions(self):
        return tuple(zip(self._next, self._nrs))

    @next_functions.setter
    def next_functions(self, edges):
        self._next = tuple([e[0] for e in edges])
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
        """Free the saved values (backward ran without ``retain_graph``); a node that saved no tensor can run again."""
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
        Node.__init__(self, RUN_FIRST)  # runs as soon as it is ready, and takes no number of the creation order
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
