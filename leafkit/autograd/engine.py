"""The backward engine: walks the graph iteratively and delivers gradients.

Mirrors PyTorch's engine on one thread:

1. From the roots, an iterative walk over ``next_functions`` counts how many
   edges enter each node (no recursion: a 100,000-op chain is fine).
2. A node runs once all its incoming gradients have arrived.  Among ready
   nodes the most recently created runs first (PyTorch's sequence-number
   order); ``AccumulateGrad`` nodes run as soon as they are ready.
3. Before a node runs, the hooks registered on the tensor it made run
   (``register_hook``), then the ``retain_grad()`` copy is taken, then the
   node's pre-hooks.
4. Each input gradient is summed back to the input's shape (the one central
   "sum to shape" step that undoes broadcasting) and cast to its dtype.
5. Without ``retain_graph`` a node frees its saved tensors once it ran; a
   second backward through it raises "backward through the graph a second
   time".

The pass is written once, as the generator :func:`execute`, which can stop
after every node (``trace=True``: a :class:`BackwardStep` says what the
node did); :func:`run_backward` drives it to the end.  Gradients are raw
arrays in a plain pass and tensors when ``create_graph=True``: every backward
formula runs in the namespace ``F`` it is given, so the same formula either
computes numbers or records a graph of the backward pass.

Nothing here holds a reference after the pass ends.
"""

from __future__ import annotations

import heapq

from . import anomaly_mode
from .grad_mode import _state
from .graph import AccumulateGrad, api

__all__ = ["execute", "run_backward", "BackwardStep"]

REFERENCE_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak."
)


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

    def __init__(self, node):
        self.node = node
        self.grad_outputs = []
        self.edges = []
        self.hooks = []
        self.retained = []
        self.accumulated = None
        self.captured = False
        self.freed = False
        self.skipped = False

    def __repr__(self) -> str:
        return f"<BackwardStep {self.node.name()}>"


def _dependencies(roots):
    """Count the edges entering each node reachable from ``roots`` (roots start at 0)."""
    deps = {}
    stack = []
    for node in roots:
        if node not in deps:
            deps[node] = 0
            stack.append(node)
    while stack:
        node = stack.pop()
        for nxt in node._next:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    stack.append(nxt)
    return deps


def _needed(deps, targets):
    """The nodes from which one of ``targets`` can be reached (``inputs=`` of grad()/backward())."""
    indeg = dict(deps)
    topo = [n for n, d in indeg.items() if d == 0]
    i = 0
    while i < len(topo):
        for nxt in topo[i]._next:
            if nxt is not None:
                indeg[nxt] -= 1
                if indeg[nxt] == 0:
                    topo.append(nxt)
        i += 1
    needed = set()
    for node in reversed(topo):
        if node in targets or any(nxt in needed for nxt in node._next if nxt is not None):
            needed.add(node)
    return needed


class _Pass:
    """The state of one backward pass: the gradients waiting at each node, how many edges each node still
    waits for, and the queue of ready nodes (latest created first, as PyTorch orders it)."""

    def __init__(self, roots, keep_graph, create_graph, inputs, capture, trace):
        self.F = api.tensor_ns if create_graph else api.array_ns
        self.keep_graph, self.create_graph, self.capture = keep_graph, create_graph, capture
        self.deps = deps = _dependencies([r[0] for r in roots])
        self.targets = self.needed = None
        if inputs is not None:  # only the nodes that lead to an input of grad()/backward(inputs=) take part
            self.targets = targets = {}
            for k, (node, nr) in enumerate(inputs):
                targets.setdefault(node, []).append((k, nr))
            self.needed = needed = _needed(deps, targets)
            for node in [n for n in deps if n not in needed]:
                del deps[node]
            for node in deps:  # count only the edges between needed nodes
                deps[node] = 0
            for node in deps:
                for nxt in node._next:
                    if nxt is not None and nxt in deps:
                        deps[nxt] += 1
        self.captured = [None] * len(inputs) if capture else None
        # sums the engine itself allocated: they may be added to in place and handed to .grad without a copy
        self.owned = {} if not create_graph and not trace else None
        self.buffers = buffers = {}
        for node, nr, g in roots:
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * node.n_outputs
            buf[nr] = g if buf[nr] is None else buf[nr] + g
        self.heap = []
        self.tie = 0
        for node, _, _ in roots:
            if deps.get(node) == 0:
                deps[node] = -1  # queued
                self.push(node)

    def push(self, node):
        heapq.heappush(self.heap, (-node._seq, self.tie, node))
        self.tie += 1

    def accumulate(self, node, grads, step):
        """An ``AccumulateGrad`` node: the leaf's ``.grad`` (or the captured gradient of ``autograd.grad``)."""
        owned = self.owned
        taken = owned is not None and grads is not None and owned.pop(id(grads[0]), None) is grads[0]
        _accumulate_step(node, grads, self.targets, self.capture, self.captured, self.create_graph, step, taken)

    def run(self, node, grads, step):
        """Run the node's derivative formulas; returns its input gradients and whether it ran (None: a node whose
        gradient is only taken, for ``autograd.grad``)."""
        run = grads is not None and (grads[0] is not None if len(grads) == 1 else any(g is not None for g in grads))
        targets = self.targets
        if targets is not None:
            if not self.runs(node):
                if run and self.capture and node in targets:  # after the tensor's hooks, as PyTorch takes it
                    self.take(node, grads, step)
                return None, None  # an input of grad()/backward(inputs=): its gradient is taken, its node does not run
        if not run:
            if step is not None:
                step.skipped = True
            return None, False
        F = self.F
        owned = self.owned
        if owned:  # the formulas may pass a gradient on as it is (AddBackward0): it is no longer the engine's own
            for g in grads:
                if g is not None:
                    owned.pop(id(g), None)
        if step is not None:
            step.grad_outputs = [_as_tensor(g, node._device) for g in grads]
        if len(grads) > 1:
            grads = _fill_missing(node, grads, F)
        in_grads = _run_node(node, grads, F) if anomaly_mode._enabled else node._backward(grads, F)
        if node._post_hooks is not None:
            # [hooks branch] post-hooks see each gradient summed back to its input's shape and cast to its dtype
            in_grads = _post_hooks(node, _shaped_for_hooks(node, in_grads, F), grads, step)
        return in_grads, True

    def runs(self, node) -> bool:
        """Whether the node's formulas run: in a pass with ``inputs``, only if the node leads to one."""
        return self.needed is None or any(nxt in self.needed for nxt in node._next if nxt is not None)

    def take(self, node, grads, step):
        """``autograd.grad``: take the gradient arriving at an input's node."""
        for k, nr in self.targets[node]:
            self.captured[k] = grads[nr]
        if step is not None:
            step.captured = True

    def free(self, node, ran, step):
        """Without ``retain_graph``, the node's saved tensors go once it ran."""
        if node._had_saved:
            node._stash = None
        node._released = True
        if step is not None:
            step.freed = node._had_saved and ran

    def deliver(self, node, in_grads, step):
        """Send each input gradient along its edge, summed back to the input's shape and cast to its dtype; queue
        the next nodes that have all their gradients."""
        buffers, deps, needed, owned = self.buffers, self.deps, self.needed, self.owned
        meta = node._in_meta
        i = -1
        for nxt, nr in zip(node._next, node._nrs):
            i += 1
            if nxt is None or (needed is not None and nxt not in needed):
                if step is not None:
                    step.edges.append((nxt, nr, None, None))
                continue
            g = in_grads[i] if in_grads is not None else None
            summed = None
            if g is not None:
                m = meta[i]
                if m is not None:
                    shape, dtype = m
                    if g.shape != shape:
                        summed = tuple(g.shape)
                        g = self.F.sum_to(g, shape, node, i)
                    if g.dtype != dtype:
                        g = self.F.cast(g, dtype)
                buf = buffers.get(nxt)
                if buf is None:
                    om = nxt._out_meta
                    if om is None:
                        buffers[nxt] = [g]
                    else:
                        buf = buffers[nxt] = [None] * len(om)
                        buf[nr] = g
                else:
                    old = buf[nr]
                    if old is None:
                        buf[nr] = g
                    elif (
                        owned is not None
                        and owned.get(id(old)) is old
                        and old.shape == g.shape
                        and old.dtype == g.dtype
                    ):
                        old += g
                    else:
                        old = buf[nr] = old + g
                        if (
                            owned is not None
                            and getattr(old, "flags", None) is not None
                            and old.flags.writeable
                            and old.base is None
                        ):
                            owned[id(old)] = old
            if step is not None:
                step.edges.append((nxt, nr, _as_tensor(g, node._device), summed))
            d = deps[nxt] - 1
            deps[nxt] = d
            if d == 0:
                heapq.heappush(self.heap, (-nxt._seq, self.tie, nxt))
                self.tie += 1

    def result(self, allow_unused):
        if self.captured is not None and not allow_unused:
            for k, g in enumerate(self.captured):
                if g is None:
                    raise RuntimeError(
                        f"The differentiated Tensor at index {k} appears to not have been used in the "
                        "graph. Set allow_unused=True if this is the desired behavior."
                    )
        return self.captured


def execute(
    roots,
    keep_graph: bool,
    create_graph: bool = False,
    inputs=None,
    capture: bool = False,
    allow_unused: bool = False,
    trace: bool = False,
):
    """Run backward from ``roots`` = [(node, output_nr, grad), ...]; a generator.

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
    trace : bool
        Yield a :class:`BackwardStep` after each node (for stepping through
        a pass); otherwise nothing is yielded.

    Returns
    -------
    list or None
        (As the generator's return value.)  The captured gradients in
        ``capture`` mode, ``None`` for unreached inputs.
    """
    p = _Pass(roots, keep_graph, create_graph, inputs, capture, trace)
    heap, buffers, pop = p.heap, p.buffers, heapq.heappop
    prev = (_state.grad, _state.enabled)
    inside = (create_graph, create_graph)  # grad mode in the pass: formulas on tensors record only when asked
    _state.grad, _state.enabled = inside
    try:
        while heap:
            node = pop(heap)[2]
            grads = buffers.pop(node, None)
            step = BackwardStep(node) if trace else None
            if (
                capture
                and node in p.targets
                and node.__class__ is not AccumulateGrad
                and grads is not None
                and p.runs(node)
                and any(g is not None for g in grads)
            ):
                p.take(node, grads, step)  # a node that must run too: PyTorch takes the gradient before its hooks
            if grads is not None and (
                node._tensor_hooks is not None or node._retain_refs is not None or node._pre_hooks is not None
            ):
                grads = _before_node(node, grads, create_graph, step)
            if node.__class__ is AccumulateGrad:
                p.accumulate(node, grads, step)
            else:
                in_grads, ran = p.run(node, grads, step)
                if ran is not None:
                    if not keep_graph:
                        p.free(node, ran, step)
                    p.deliver(node, in_grads, step)
            if step is not None:
                _state.grad, _state.enabled = prev
                yield step
                _state.grad, _state.enabled = inside
    finally:
        _state.grad, _state.enabled = prev
    return p.result(allow_unused)


def run_backward(
    roots, keep_graph: bool, create_graph: bool = False, inputs=None, capture: bool = False, allow_unused: bool = False
):
    """Run :func:`execute` to the end and return its result (the captured gradients in ``capture`` mode)."""
    gen = execute(roots, keep_graph, create_graph, inputs, capture, allow_unused)
    try:
        next(gen)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("an untraced backward pass yielded")  # pragma: no cover


def _before_node(node, grads, create_graph, step):
    """Tensor hooks on the node's outputs, then ``retain_grad()`` copies, then the node's pre-hooks."""
    if node._tensor_hooks is not None:
        for nr, hooks in node._tensor_hooks.items():
            if hooks and grads[nr] is not None:
                grads[nr] = _run_tensor_hooks(hooks, grads[nr], node._device, step)
    if node._retain_refs is not None:
        for nr, ref in node._retain_refs.items():
            if grads[nr] is not None:
                _retain(ref, grads[nr], node._device, create_graph, step)
    if node._pre_hooks is not None:
        for fn in list(node._pre_hooks.values()):
            r = _call_node_hook(fn, (grads,), node._device, len(grads))
            if step is not None:
                step.hooks.append("pre-hook")
            if r is not None:
                grads = r
    return grads


def _post_hooks(node, in_grads, grads, step):
    for fn in list(node._post_hooks.values()):
        r = _call_node_hook(fn, (in_grads, grads), node._device, len(in_grads))
        if step is not None:
            step.hooks.append("post-hook")
        if r is not None:
            in_grads = r
    return in_grads


def _shaped_for_hooks(node, in_grads, F):
    """[hooks branch] The input gradients as PyTorch's engine validates them before a node's post-hooks run:
    summed to the input's shape, cast to its dtype (``deliver`` then finds nothing left to do)."""
    out = list(in_grads)
    for i, m in enumerate(node._in_meta):
        g = out[i] if i < len(out) else None
        if g is None or m is None:
            continue
        shape, dtype = m
        if g.shape != shape:
            g = F.sum_to(g, shape, node, i)
        if g.dtype != dtype:
            g = F.cast(g, dtype)
        out[i] = g
    return out


def _fill_missing(node, grads, F):
    """A node with several outputs gets zeros for the outputs no gradient reached."""
    if node._materialize and any(g is None for g in grads):
        meta = node._out_meta
        like = next(g for g in grads if g is not None)
        # [hooks branch] a non-tensor output of a custom Function (no meta) gets None, as in PyTorch
        return [
            g if g is not None or meta[i] is None else F.zeros(meta[i][0], meta[i][1], like)
            for i, g in enumerate(grads)
        ]
    return grads


def _run_node(node, grads, F):
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


def _accumulate_step(node, grads, targets, capture, captured, create_graph, step, owned=False):
    """An ``AccumulateGrad`` node: leaf hooks, then ``.grad`` (or the capture of ``autograd.grad``).

    ``owned``: the gradient is a sum the engine allocated, which ``.grad`` may take without a copy."""
    if grads is None or grads[0] is None:
        if step is not None:
            step.skipped = True
        return
    var = node.variable
    g = grads[0]
    if var._hooks:
        g = _run_tensor_hooks(var._hooks, g, var._device, step)
        owned = False
    if step is not None:
        step.grad_outputs = [_as_tensor(g, var._device)]
    if capture:
        for k, _ in targets[node]:
            captured[k] = g
        if step is not None:
            step.captured = True
    elif targets is None or node in targets:
        if var._requires_grad:  # a leaf switched off after the graph was built gets nothing
            var._accumulate_grad(g, create_graph, owned)
            if step is not None:
                step.accumulated = var
            if var._post_acc_hooks:
                _post_accumulate_hooks(var, step)
        if node._post_hooks is not None:
            for fn in list(node._post_hooks.values()):
                _call_node_hook(fn, ((), (g,)), var._device, 0)
                if step is not None:
                    step.hooks.append("post-hook")


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
