"""The backward engine: walks the graph iteratively and delivers gradients.

Mirrors PyTorch's engine on one thread.  :func:`backward` gives each root
its first gradient; then the pass (:func:`execute`) takes five steps, each a
short function below:

1. :func:`dependencies`: from the roots, an iterative walk over
   ``next_functions`` counts how many edges enter each node (no recursion: a
   100,000-op chain is fine).
2. :class:`ReadyQueue`: a node runs once all its incoming gradients have
   arrived.  Among ready nodes the most recently created runs first
   (PyTorch's sequence-number order); ``AccumulateGrad`` nodes run as soon
   as they are ready.
3. :func:`call_hooks_before`: before a node runs, the hooks registered on
   the tensor it made run (``register_hook``), then the ``retain_grad()``
   copy is taken, then the node's pre-hooks.  Then the node runs
   (:func:`call_function`; ``AccumulateGrad`` adds into ``.grad``:
   :func:`accumulate`, after the leaf's hooks and then its own pre-hooks).
4. :func:`deliver`: each input gradient is summed back to the input's shape
   (the one central "sum to shape" step that undoes broadcasting) and cast
   to its dtype, then added into the buffer of the node it goes to.
5. :func:`release`: without ``retain_graph`` a node frees its saved tensors
   once it ran; a second backward through it raises "backward through the
   graph a second time".

The pass is written once, as the generator :func:`execute`, which can stop
after every node (``trace=True``: a :class:`BackwardStep` says what the
node did); :func:`run_backward` drives it to the end.  Gradients are raw
arrays in a plain pass and tensors when ``create_graph=True``: every backward
formula runs in the namespace ``F`` it is given, so the same formula either
computes numbers or records a graph of the backward pass.

This is the reference engine, written to be read.  :mod:`leafkit._functions._fast`
replaces :func:`run_backward` with a faster loop for plain passes (it reuses
gradient buffers the engine allocated), unless ``LEAFKIT_FAST=0``.

Nothing here holds a reference after the pass ends.
"""

from __future__ import annotations

import heapq
import itertools
import warnings
from typing import Any

import numpy as np

from . import anomaly_mode
from .grad_mode import _state
from .graph import AccumulateGrad, Node, api

__all__ = ["backward", "execute", "run_backward", "BackwardStep", "GraphTask", "ReadyQueue"]

REFERENCE_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak."
)
_warned_cycle = [False]  # PyTorch warns once per process (TORCH_WARN_ONCE)


class BackwardStep:
    """What one node did during a traced backward pass (see :func:`execute` with ``trace=True``).

    Attributes
    ----------
    node : Node
        The node that ran (``AccumulateGrad`` for a leaf).
    grad_outputs : list
        The gradient arriving for each of the node's outputs (after tensor
        hooks, as a node pre-hook sees it), as tensors; ``None`` where none
        arrived.
    edges : list of (Node or None, int, Tensor or None, tuple or None)
        What the node sent along each ``next_functions`` edge, already summed
        back to the input's shape and cast to its dtype, and the shape the
        gradient had before the engine summed it back over broadcast
        dimensions (``None`` when it already had the input's shape).
    hooks : list of str
        The hooks that ran: ``"tensor hook"``, ``"pre-hook"``, ``"post-hook"``.
    retained : list of Tensor
        Tensors whose ``retain_grad()`` copy was taken here.
    accumulated : Tensor or None
        For ``AccumulateGrad``: the leaf, whose ``.grad`` now holds the sum.
    captured : bool
        The gradient was taken for ``autograd.grad`` (or ``inputs=``) here.
    freed : bool
        The node's saved tensors were freed after it ran.
    skipped : bool
        No gradient reached the node, so it did not run.
    """

    __slots__ = ("node", "grad_outputs", "edges", "hooks", "retained", "accumulated", "captured", "freed", "skipped")

    def __init__(self, node: Node) -> None:
        self.node = node
        self.grad_outputs: list = []
        self.edges: list = []
        self.hooks: list[str] = []
        self.retained: list = []
        self.accumulated: Any = None
        self.captured = False
        self.freed = False
        self.skipped = False

    def __repr__(self) -> str:
        return f"<BackwardStep {self.node.name()}>"


# -- the roots ------------------------------------------------------------------------------------------------------
def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """What ``t.backward()`` and ``autograd.backward`` run (tuples of roots and gradients; see the latter)."""
    roots = root_grads(tensors, grad_tensors, bool(create_graph))
    targets = None if inputs is None else _backward_inputs(as_tuple(inputs))
    if create_graph:
        _warn_cycle()
    keep_graph = bool(create_graph if retain_graph is None else retain_graph)
    with np.errstate(all="ignore"):  # inf/nan gradients stay silent, as in PyTorch
        for _ in execute(roots, keep_graph, bool(create_graph), targets):
            pass  # (an untraced pass yields nothing)


def root_grads(tensors, grads, create_graph: bool) -> list:
    """``[(node, output_nr, gradient)]``: where the pass starts, and each root's first gradient: the one given (cast
    to the root's dtype) or ones (an array in a plain pass, a tensor with ``create_graph``)."""
    grads = (None,) * len(tensors) if grads is None else grads
    if len(grads) < len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grads)):  # PyTorch pairs them with zip: extra gradients are ignored
        _check_root(i, t, g)
        g = api.wrap(np.ones_like(t._data), t._device) if g is None else g  # ones: NumPy or CuPy, as the root
        if g._data.dtype != t._data.dtype:
            g = g.to(t.dtype) if create_graph else api.wrap(g._data.astype(t._data.dtype), t._device)
        if t._base is not None:
            t._valid_fn()  # a view whose base changed in place: its history brought up to date, or PyTorch's error
        roots.append((*t._edge(), g if create_graph else g._data))
    return roots


def as_tuple(x) -> tuple | None:
    """A tensor or a sequence of them as a tuple (``None`` stays ``None``)."""
    if x is None or isinstance(x, tuple):
        return x
    return (x,) if isinstance(x, api.tensor_type) else tuple(x)


def _check_root(i: int, t, g) -> None:
    """PyTorch's errors for root ``i`` and the gradient given for it."""
    if not isinstance(t, api.tensor_type):
        raise TypeError(f"backward(): tensors must be Tensors, got {type(t).__name__}")
    if not t._requires_grad:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    if g is not None:
        _check_given_grad(i, t, g)
    elif t._data.size != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")


def _check_given_grad(i: int, t, g) -> None:
    if not isinstance(g, api.tensor_type):
        raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    if g._data.shape != t._data.shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape of {t.shape}."
        )
    if g._device is not t._device:
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, {t._device} and "
            f"{g._device}!"
        )


def _warn_cycle() -> None:
    """PyTorch's warning for ``backward(create_graph=True)``, once per process, at the user's line."""
    if not _warned_cycle[0]:
        _warned_cycle[0] = True
        warnings.warn(REFERENCE_CYCLE_WARNING, UserWarning, stacklevel=4)


def input_edges(inputs, for_backward: bool) -> list:
    """The edges whose gradients ``autograd.grad`` (or ``backward(inputs=...)``) asks for."""
    edges = []
    for t in inputs:
        if not isinstance(t, api.tensor_type):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            if for_backward:  # PyTorch's backward(inputs=) retains the grad of each input first
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(t._edge())
    return edges


def _backward_inputs(inputs):
    """The edges of ``backward(inputs=...)``; a non-leaf named there gets its ``.grad``, so it retains grad."""
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    edges = input_edges(inputs, for_backward=True)
    for t in inputs:
        if t._grad_fn is not None:
            t.retain_grad()
    return edges


# -- the pass --------------------------------------------------------------------------------------------------------
_arrival = itertools.count()  # among nodes of one sequence number (several AccumulateGrad): first in, first out


class ReadyQueue(list):
    """Step 2: the nodes whose gradients have all arrived (a heap); the most recently created comes out first."""

    def push(self, node: Node) -> None:
        heapq.heappush(self, (-node._seq, next(_arrival), node))

    def next_node(self) -> Node:
        return heapq.heappop(self)[2]


def dependencies(roots) -> dict:
    """Step 1: how many edges enter each node reachable from ``roots`` (an iterative walk; roots start at 0)."""
    deps = dict.fromkeys(roots, 0)
    stack = list(deps)
    while stack:
        for nxt in stack.pop()._next:
            if nxt is not None:
                if nxt not in deps:
                    stack.append(nxt)
                deps[nxt] = deps.get(nxt, 0) + 1
    return deps


class GraphTask:
    """The state of one backward pass (PyTorch's ``GraphTask``).

    Parameters
    ----------
    roots : list of (Node, int, array or Tensor)
        Where the pass starts and the gradient given there (arrays in a plain
        pass, tensors with ``create_graph``).
    keep_graph : bool
        ``retain_graph``: do not free saved tensors.
    create_graph : bool
        Record the pass, so its results can be differentiated again.
    inputs : list of (Node, int) or None
        Restrict the work to paths that reach these nodes (``inputs=`` of
        ``backward``, or ``autograd.grad``).
    capture : bool
        ``autograd.grad`` mode: return the gradients arriving at ``inputs``
        instead of accumulating into ``.grad``.

    :func:`execute` also takes ``allow_unused`` (no error for an input no gradient reached, in ``capture``
    mode) and ``trace`` (yield a :class:`BackwardStep` after each node, for stepping through a pass).

    Attributes
    ----------
    F : FormulaNamespace
        Where the formulas run: ``api.array_ns`` (arrays) or ``api.tensor_ns`` (``create_graph``).
    deps : dict
        Node -> how many of its incoming edges have not delivered yet.
    buffers : dict
        Node -> the gradients that arrived so far, one per output (PyTorch's ``InputBuffer``).
    queue : ReadyQueue
        The nodes ready to run.
    targets, needed, captured
        For ``inputs=`` (and ``autograd.grad``): the input edges by node, the nodes that lead to one, and the
        gradients taken there; ``None`` in a pass without ``inputs``.
    """

    buffers: dict
    targets: dict | None = None  # set by _only_towards
    needed: set | None = None
    captured: list | None = None

    def __init__(self, roots, keep_graph: bool, create_graph: bool, inputs=None, capture: bool = False) -> None:
        self.F = api.tensor_ns if create_graph else api.array_ns
        self.keep_graph, self.create_graph, self.capture = keep_graph, create_graph, capture
        self.deps = dependencies([node for node, _, _ in roots])
        if inputs is not None:
            self._only_towards(inputs)
        self.buffers, self.queue = {}, ReadyQueue()
        for node, nr, g in roots:
            add_to_buffer(self, node, nr, g)
            if self.deps.get(node) == 0:
                self.deps[node] = -1  # queued (a root may be given twice)
                self.queue.push(node)

    def _only_towards(self, inputs) -> None:
        """Only the nodes from which an input can be reached take part; only edges between them count."""
        targets: dict = {}
        self.targets = targets  # node -> [(index in inputs, output_nr)]
        for k, (node, nr) in enumerate(inputs):
            targets.setdefault(node, []).append((k, nr))
        self.captured = [None] * len(inputs) if self.capture else None
        self.needed = needed = _needed(self.deps, targets)
        self.deps = {node: 0 for node in self.deps if node in needed}
        for node in self.deps:
            for nxt in node._next:
                if nxt in self.deps:
                    self.deps[nxt] += 1

    def runs(self, node: Node) -> bool:
        """Whether the node's formulas run: in a pass with ``inputs``, only if the node leads to one."""
        return self.needed is None or any(nxt in self.needed for nxt in node._next if nxt is not None)

    def take(self, node: Node, grads, step) -> None:
        """``autograd.grad``: take the gradient arriving at an input's node."""
        assert self.targets is not None and self.captured is not None
        for k, nr in self.targets[node]:
            self.captured[k] = grads[nr]
        if step is not None:
            step.captured = True

    def result(self, allow_unused: bool):
        """The captured gradients (``autograd.grad``); PyTorch's error for an unused input."""
        assert self.captured is not None
        if not allow_unused:
            for k, g in enumerate(self.captured):
                if g is None:
                    raise RuntimeError(
                        f"The differentiated Tensor at index {k} appears to not have been used in the "
                        "graph. Set allow_unused=True if this is the desired behavior."
                    )
        return self.captured


def _needed(deps: dict, targets: dict) -> set:
    """The nodes from which one of ``targets`` can be reached (``inputs=`` of grad()/backward())."""
    indeg = dict(deps)
    topo = [n for n, d in indeg.items() if d == 0]
    for node in topo:  # grows while it is read: Kahn's topological order
        for nxt in node._next:
            if nxt is not None:
                indeg[nxt] -= 1
                if indeg[nxt] == 0:
                    topo.append(nxt)
    needed: set = set()
    for node in reversed(topo):
        if node in targets or any(nxt in needed for nxt in node._next if nxt is not None):
            needed.add(node)
    return needed


def execute(roots, keep_graph, create_graph=False, inputs=None, capture=False, allow_unused=False, trace=False):
    """The backward pass from ``roots`` (the parameters: :class:`GraphTask`), as a generator: with ``trace`` it
    yields a :class:`BackwardStep` after each node; it returns the gradients captured for ``autograd.grad``."""
    task = GraphTask(roots, keep_graph, create_graph, inputs, capture)
    inside = (create_graph, create_graph, inputs is None)  # formulas record only in a recorded pass
    outside = _pass_mode(inside)
    try:
        while task.queue:
            node = task.queue.next_node()
            step = BackwardStep(node) if trace else None
            evaluate(task, node, step)
            if step is not None:
                _pass_mode(outside)  # the caller's code between steps runs in its own grad mode
                yield step
                _pass_mode(inside)
    finally:
        _pass_mode(outside)
    return task.result(allow_unused) if capture else None


def _pass_mode(mode: tuple) -> tuple:
    """Set grad mode, whether ops record, and ``autograd._is_checkpoint_valid()``; returns the mode it replaced."""
    old = (_state.grad, _state.enabled, _state.checkpoint_valid)
    _state.grad, _state.enabled, _state.checkpoint_valid = mode
    return old


def run_backward(roots, keep_graph, create_graph=False, inputs=None, capture=False, allow_unused=False):
    """Run :func:`execute` to the end and return its result (the captured gradients in ``capture`` mode)."""
    try:
        next(execute(roots, keep_graph, create_graph, inputs, capture, allow_unused))
    except StopIteration as stop:
        return stop.value
    raise AssertionError("an untraced backward pass yielded")  # pragma: no cover


def evaluate(task: GraphTask, node: Node, step) -> None:
    """Run one ready node: its hooks (step 3), its formulas, then release (step 5) and deliver (step 4)."""
    grads = task.buffers.pop(node, None)
    if task.targets is not None:
        return _evaluate_towards_inputs(task, node, grads, step)
    if isinstance(node, AccumulateGrad):
        return accumulate(task, node, grads, step)  # its hooks in their own order
    if grads is not None and (node._tensor_hooks or node._retain_refs or node._pre_hooks):
        grads = call_hooks_before(node, grads, task.create_graph, step)
    in_grads = call_function(task, node, grads, step)
    if not task.keep_graph:
        release(node, in_grads is not None, step)
    deliver(task, node, in_grads, step)


def _evaluate_towards_inputs(task: GraphTask, node: Node, grads, step) -> None:
    """:func:`evaluate` in a pass with ``inputs`` (``autograd.grad``, ``backward(inputs=...)``): the gradient of
    an input is taken where it arrives; a node that leads to no input does not run."""
    assert task.targets is not None
    if task.capture and node.__class__ is not AccumulateGrad and task.runs(node) and node in task.targets:
        if _arrived(grads):
            task.take(node, grads, step)  # a node that must run too: PyTorch takes the gradient before its hooks
    if isinstance(node, AccumulateGrad):
        return accumulate(task, node, grads, step)
    if grads is not None and (node._tensor_hooks or node._retain_refs or node._pre_hooks):
        grads = call_hooks_before(node, grads, task.create_graph, step)
    if not task.runs(node):
        if task.capture and node in task.targets and _arrived(grads):
            task.take(node, grads, step)  # after the tensor's hooks, as PyTorch takes it
        return
    in_grads = call_function(task, node, grads, step)
    if not task.keep_graph:
        release(node, in_grads is not None, step)
    deliver(task, node, in_grads, step)


def _arrived(grads) -> bool:
    return grads is not None and any(g is not None for g in grads)


def call_hooks_before(node: Node, grads, create_graph: bool, step):
    """Step 3: tensor hooks on the node's outputs, then ``retain_grad()`` copies, then the node's pre-hooks."""
    if node._tensor_hooks is not None:
        for nr, hooks in node._tensor_hooks.items():
            if hooks and grads[nr] is not None:
                grads[nr] = _run_tensor_hooks(hooks, grads[nr], node._device, step)
    if node._retain_refs is not None:
        for nr, ref in node._retain_refs.items():
            if grads[nr] is not None:
                _retain(ref, grads[nr], node._device, create_graph, step)
    if node._pre_hooks is not None:
        grads = call_pre_hooks(node, grads, step)
    return grads


def call_pre_hooks(node: Node, grads, step):
    """The node's pre-hooks (``Node.register_prehook``): each may return new gradients for the node's outputs."""
    for fn in list((node._pre_hooks or {}).values()):
        r = _call_node_hook(fn, (grads,), node._device, len(grads))
        if step is not None:
            step.hooks.append("pre-hook")
        if r is not None:
            grads = r
    return grads


def call_function(task: GraphTask, node: Node, grads, step):
    """The node's formulas: one gradient per ``next_functions`` edge (``None`` when no gradient reached the node)."""
    if not _arrived(grads):
        return _skipped(step)
    if step is not None:
        step.grad_outputs = [_as_tensor(g, node._device) for g in grads]
    if len(grads) > 1:
        grads = _fill_missing(node, grads, task.F)
    in_grads = _run_node(node, grads, task.F) if anomaly_mode._enabled else node._backward(grads, task.F)
    return in_grads if node._post_hooks is None else _post_hooks(node, in_grads, grads, step, task.F)


def deliver(task: GraphTask, node: Node, in_grads, step) -> None:
    """Step 4: send each input gradient along its edge (:func:`sum_to_input` first); a node is ready once every
    edge into it has delivered."""
    for i, (nxt, nr) in enumerate(zip(node._next, node._nrs)):
        wanted = nxt is not None and (task.needed is None or nxt in task.needed)
        g, summed = None, None
        if wanted and in_grads is not None and in_grads[i] is not None:
            g, summed = sum_to_input(task.F, in_grads[i], node, i)
            add_to_buffer(task, nxt, nr, g)
        if step is not None:
            step.edges.append((nxt, nr, _as_tensor(g, node._device), summed))
        if wanted:
            task.deps[nxt] -= 1
            if task.deps[nxt] == 0:
                task.queue.push(nxt)


def sum_to_input(F, g, node: Node, i: int):
    """``g`` summed over broadcast dimensions to the shape of input ``i``, cast to its dtype; and the shape it had."""
    shape, dtype = node._in_meta[i] or (g.shape, g.dtype)  # None: the output's, as g has them
    summed = tuple(g.shape) if g.shape != shape else None
    if summed is not None:
        g = F.sum_to(g, shape, node, i)
    return (g if g.dtype == dtype else F.cast(g, dtype)), summed


def add_to_buffer(task: GraphTask, node: Node, nr: int, g) -> None:
    """Keep ``g`` as the gradient of output ``nr`` of ``node``, or add it to the one already there (a new sum)."""
    buf = task.buffers.setdefault(node, [None] * node.n_outputs)
    buf[nr] = g if buf[nr] is None else buf[nr] + g


def release(node: Node, ran: bool, step) -> None:
    """Step 5: without ``retain_graph`` the node frees its saved tensors (a second pass then raises)."""
    node._release()
    if step is not None:
        step.freed = node._had_saved and ran


def accumulate(task: GraphTask, node: AccumulateGrad, grads, step) -> None:
    """An ``AccumulateGrad`` node: the hooks before it, then the leaf's ``.grad`` (or ``autograd.grad``'s capture)."""
    var, g = node.variable, grads[0] if grads is not None else None
    if g is None:
        return _skipped(step)
    if var._hooks or node._pre_hooks is not None:
        g = _leaf_hooks(task, node, g, step)
    if task.capture:
        task.take(node, [g], step)
    elif g is not None and var._requires_grad and (task.targets is None or node in task.targets):
        var._accumulate_grad(g, task.create_graph)  # (not a leaf switched off since the graph was built)
    if step is not None or var._post_acc_hooks or node._post_hooks is not None:
        _after_accumulate(task, node, g, step)


def _leaf_hooks(task: GraphTask, node: AccumulateGrad, g, step):
    """The hooks before an ``AccumulateGrad`` node, in PyTorch's order: the leaf's hooks (the node's tensor pre-hooks)
    always, then the node's pre-hooks where the node runs (not where ``autograd.grad`` captures the gradient, nor in a
    pass whose ``inputs`` leave the leaf out).  A pre-hook may take the gradient away (``None``): then ``.grad`` is left
    alone, and the hooks after the node still run."""
    var = node.variable
    if var._hooks:
        g = _run_tensor_hooks(var._hooks, g, var._device, step)
    if node._pre_hooks is not None and not task.capture and (task.targets is None or node in task.targets):
        g = call_pre_hooks(node, [g], step)[0]
    return g


def _after_accumulate(task: GraphTask, node: AccumulateGrad, g, step) -> None:
    """What the trace records of a leaf, then its post-accumulate-grad hooks and the node's post-hooks."""
    var = node.variable
    if step is not None:
        step.grad_outputs = [_as_tensor(g, var._device)]
    if task.capture or not (task.targets is None or node in task.targets):
        return
    if var._requires_grad:
        if step is not None:
            step.accumulated = var
        if var._post_acc_hooks:
            _post_accumulate_hooks(var, step)
    for fn in list(node._post_hooks.values()) if node._post_hooks is not None else []:
        _call_node_hook(fn, ((), (g,)), var._device, 0)
        if step is not None:
            step.hooks.append("post-hook")


def _skipped(step) -> None:
    """No gradient reached the node: it does not run."""
    if step is not None:
        step.skipped = True


# -- hooks, anomaly mode, missing gradients --------------------------------------------------------------------------
def _post_hooks(node: Node, in_grads, grads, step, F):
    """The node's post-hooks (``Node.register_hook``): each may return new input gradients.  They see each gradient
    as PyTorch's engine validates it first: summed back to its input's shape and cast to its dtype (:func:`deliver`
    then finds nothing left to do)."""
    meta = node._in_meta or ()
    in_grads = [g if g is None or i >= len(meta) else sum_to_input(F, g, node, i)[0] for i, g in enumerate(in_grads)]
    for fn in list((node._post_hooks or {}).values()):
        r = _call_node_hook(fn, (in_grads, grads), node._device, len(in_grads))
        if step is not None:
            step.hooks.append("post-hook")
        if r is not None:
            in_grads = r
    return in_grads


def _fill_missing(node: Node, grads, F):
    """A node with several outputs gets zeros for the outputs no gradient reached."""
    if node._materialize and any(g is None for g in grads):
        meta = node._out_meta or []
        like = next(g for g in grads if g is not None)
        # a non-tensor output of a custom Function (no meta) gets None, as in PyTorch
        return [
            g if g is not None or meta[i] is None else F.zeros(meta[i][0], meta[i][1], like)
            for i, g in enumerate(grads)
        ]
    return grads


def _run_node(node: Node, grads, F):
    """Run one node in anomaly mode: show its forward traceback when it fails, and check for NaN."""
    prev = anomaly_mode.set_parent(node)  # nodes this formula records (create_graph) remember who made them
    try:
        in_grads = node._backward(grads, F)
        if anomaly_mode._check_nan:
            for i, g in enumerate(in_grads):
                if g is not None and F.has_nan(g):
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
        return in_grads
    except Exception:
        anomaly_mode.report_error(node)
        raise
    finally:
        anomaly_mode.set_parent(prev)


def _post_accumulate_hooks(var, step) -> None:
    """``register_post_accumulate_grad_hook``'s hooks, after ``.grad`` was written; they must return None."""
    for fn in list(var._post_acc_hooks.values()):
        r = fn(var)
        if step is not None:
            step.hooks.append("post-accumulate-grad hook")
        if r is not None:
            if isinstance(r, api.tensor_type):
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
            raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")


def _as_tensor(g, device):
    if g is None or isinstance(g, api.tensor_type):
        return g
    return api.wrap(api.array_ns.own(g), device)


def _run_tensor_hooks(hooks, g, device, step=None):
    """Hooks registered with ``register_hook``: each may return a tensor that replaces the gradient."""
    wrapped = not isinstance(g, api.tensor_type)
    if wrapped:
        g = api.array_ns.own(g)  # a broadcast gradient (from sum/mean/expand): a hook may change it in place
    for fn in list(hooks.values()):
        t = api.wrap(g, device) if wrapped else g
        r = fn(t)
        if step is not None:
            step.hooks.append("tensor hook")
        if r is not None:
            _check_hook_value(fn, t, r)
            g = r._data if wrapped else r
    return g


def _check_hook_value(fn, old, new) -> None:
    """PyTorch's ``check_single_result``: a hook's replacement for the gradient ``old`` must be a tensor of its
    type (dtype and device), then of its size.  Raises TypeError ("expected Variable, but hook returned
    'float'") or RuntimeError ("hook 'f' has changed the type of value (was ... got ...)", "... the size of
    value")."""
    if not isinstance(new, api.tensor_type):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    name = getattr(fn, "__name__", repr(fn))
    if new._data.dtype != old._data.dtype or new._device != old._device:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {old._type_string()} got {new._type_string()})"
        )
    if new._data.shape != old._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _retain(ref, g, device, create_graph, step=None):
    """The ``retain_grad()`` hook: the tensor's ``.grad`` gets a copy of (or adds) the gradient."""
    t = ref()
    if t is None:
        return
    t._retain_grad_value(g, create_graph)
    if step is not None:
        step.retained.append(t)


def _call_node_hook(fn, args, dev, expect):
    """Call a Node hook (``fn(grad_inputs, grad_outputs)``) or pre-hook (``fn(grad_outputs)``) and check what it
    returns as PyTorch's ``check_hook_result`` does: ``None`` keeps the gradients, anything else must be a tuple of
    ``expect`` values, each None or a tensor of the replaced gradient's dtype, size and device; a None gradient
    stays None.  Raises TypeError ("expected tuple, but hook returned 'list'") and RuntimeError ("hook 'f' has
    returned an incorrect number of values", "can't replace a None gradient with a non-None value", "hook 'f' has
    changed the type of value ...")."""
    wrapped = [tuple(_as_tensor(g, dev) for g in a) for a in args]
    r = fn(*wrapped)
    if r is None:
        return None
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    name = getattr(fn, "__name__", repr(fn))
    if len(r) != expect:
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(r)}, but expected {expect})"
        )
    for old, new in zip(wrapped[0], r):
        if new is None:
            continue
        if old is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        _check_hook_value(fn, old, new)
    keep_tensors = _state.enabled  # a recorded pass keeps tensors; a plain one works on arrays
    return [x if (x is None or keep_tensors or not isinstance(x, api.tensor_type)) else x._data for x in r]
