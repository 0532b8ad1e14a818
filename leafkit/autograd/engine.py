"""The backward engine: walks the graph iteratively and delivers gradients.

Mirrors PyTorch's engine on one thread:

1. From the roots, an iterative depth-first walk over ``next_functions``
   counts how many edges enter each node (no recursion: a 100,000-op chain is
   fine).
2. A node runs once all its incoming gradients have arrived.  Among ready
   nodes the most recently created runs first (PyTorch's sequence-number
   order); ``AccumulateGrad`` nodes run as soon as they are ready.
3. Before a node runs, the hooks registered on the tensor it made run
   (``register_hook``), then the ``retain_grad()`` copy is taken.
4. Each input gradient is summed back to the input's shape (the one central
   "sum to shape" step that undoes broadcasting) and cast to its dtype.
5. Without ``retain_graph`` a node frees its saved tensors once it ran; a
   second backward through it raises "backward through the graph a second
   time".

Nothing here holds a reference after ``run_backward`` returns.
"""
from __future__ import annotations

import heapq

import numpy as np

from .graph import AccumulateGrad

__all__ = ["run_backward", "sum_to_shape"]


def sum_to_shape(g, shape):
    """Sum ``g`` over broadcast dimensions so that it has ``shape``.

    Raises
    ------
    RuntimeError
        When ``g`` cannot have come from broadcasting an input of ``shape``.
    """
    if g.shape == shape:
        return g
    nd = g.ndim - len(shape)
    if nd < 0:
        raise RuntimeError(f"invalid gradient - got {list(g.shape)} but expected shape compatible with {list(shape)}")
    if nd:
        g = g.sum(axis=tuple(range(nd)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if g.shape != shape:
        raise RuntimeError(f"invalid gradient - got {list(g.shape)} but expected shape compatible with {list(shape)}")
    return g


def _run_tensor_hooks(hooks, g, device):
    from .._tensor import Tensor

    if isinstance(g, np.ndarray) and not g.flags.writeable:
        g = g.copy()  # a broadcast gradient (from sum/mean/expand): a hook may change it in place
    for fn in list(hooks.values()):
        t = Tensor._wrap(g, device)
        r = fn(t)
        if r is not None:
            if not isinstance(r, Tensor):
                raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
            name = getattr(fn, "__name__", repr(fn))
            if r._data.shape != g.shape:
                raise RuntimeError(f"hook '{name}' has changed the size of value")
            if r._data.dtype != g.dtype or r._device is not t._device:
                raise RuntimeError(f"hook '{name}' has changed the type of value (was {t._type_string()} got "
                                   f"{r._type_string()})")
            g = r._data
    return g


def _retain(ref, g, device):
    from .._tensor import Tensor

    t = ref()
    if t is None:
        return
    if t._grad is None:
        t._grad = Tensor._make(g.copy(), device)
    else:
        t._grad = Tensor._make(t._grad._data + g, device)


def accumulate_into(var, g) -> None:
    """Add ``g`` into ``var.grad`` in place (or set it), as PyTorch's AccumulateGrad does."""
    from .._tensor import Tensor

    if var._device.type == "cpu" and not isinstance(g, np.ndarray):  # a CPU scalar tensor used on the GPU
        from .._device import to_host
        g = to_host(g)
    if var._grad is None:
        var._grad = Tensor._make(g.copy(), var._device)
    else:
        gd = var._grad._data
        if gd.shape == g.shape and gd.dtype == g.dtype:
            gd += g
            var._grad._version_counter[0] += 1
        else:
            var._grad = Tensor._make(gd + g, var._device)


def run_backward(root_edges, retain_graph: bool, inputs=None, capture: bool = False, allow_unused: bool = False):
    """Run backward from ``root_edges`` = [(node, output_nr, grad_array), ...].

    Parameters
    ----------
    inputs : list of (node, output_nr) or None
        Restrict the work to paths that reach these nodes (``inputs=`` of
        ``backward``, or ``autograd.grad``).
    capture : bool
        ``autograd.grad`` mode: return the gradients arriving at ``inputs``
        instead of accumulating into ``.grad``.

    Returns
    -------
    list or None
        The captured gradient arrays (``None`` for unreached inputs) in
        ``capture`` mode.
    """
    # 1. discover the graph
    order = []          # visit order, for the "needed" pass
    seen = set()
    stack = []
    for node, _, _ in root_edges:
        if node not in seen:
            seen.add(node)
            stack.append(node)
    while stack:
        node = stack.pop()
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)

    targets = None
    if inputs is not None:
        targets = {}
        for k, (node, nr) in enumerate(inputs):
            targets.setdefault(node, []).append((k, nr))
        # a node is needed when an input node is reachable from it: scan a topological order backwards
        indeg = {}
        for node in order:
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    indeg[nxt] = indeg.get(nxt, 0) + 1
        topo = [n for n in order if indeg.get(n, 0) == 0]
        i = 0
        while i < len(topo):
            for nxt, _ in topo[i].next_functions:
                if nxt is not None:
                    indeg[nxt] -= 1
                    if indeg[nxt] == 0:
                        topo.append(nxt)
            i += 1
        needed = set()
        for node in reversed(topo):
            if node in targets or any(nxt in needed for nxt, _ in node.next_functions if nxt is not None):
                needed.add(node)
    else:
        needed = seen

    deps = {}
    for node in order:
        if node in needed:
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt in needed:
                    deps[nxt] = deps.get(nxt, 0) + 1

    # 2. seed the buffers
    buffers = {}
    for node, nr, g in root_edges:
        buf = buffers.get(node)
        if buf is None:
            n_out = len(node._out_meta) if node._out_meta else 1
            buf = buffers[node] = [None] * n_out
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    captured = [None] * len(inputs) if capture else None
    heap = []
    pushed = set()
    for node, _, _ in root_edges:
        if node not in pushed and deps.get(node, 0) == 0:
            pushed.add(node)
            heapq.heappush(heap, (-node._seq, id(node), node))

    # 3. run
    while heap:
        node = heapq.heappop(heap)[2]
        grads = buffers.pop(node, None)
        dev = node._device
        if grads is not None:
            if node._tensor_hooks:
                for nr, hooks in node._tensor_hooks.items():
                    if hooks and grads[nr] is not None:
                        grads[nr] = _run_tensor_hooks(hooks, grads[nr], dev)
            if node._retain_refs:
                for nr, ref in node._retain_refs.items():
                    if grads[nr] is not None:
                        _retain(ref, grads[nr], dev)
            if node._pre_hooks:
                for fn in list(node._pre_hooks.values()):
                    r = _call_node_hook(fn, (grads,), dev, expect=len(grads))
                    if r is not None:
                        grads = r
        is_acc = type(node) is AccumulateGrad
        if is_acc:
            if grads is None or grads[0] is None:
                continue
            var = node.variable
            g = grads[0]
            if var._hooks:
                g = _run_tensor_hooks(var._hooks, g, var._device)
            if capture:
                for k, _ in targets[node]:
                    captured[k] = g
            elif targets is None or node in targets:
                if var._requires_grad:  # a leaf switched off after the graph was built gets nothing
                    accumulate_into(var, g)
                if node._post_hooks:
                    for fn in list(node._post_hooks.values()):
                        _call_node_hook(fn, ((), (g,)), dev, expect=0)
            continue
        if targets is not None and node in targets and grads is not None and capture:
            for k, nr in targets[node]:
                captured[k] = grads[nr]
        if targets is not None and not any(nxt in needed for nxt, _ in node.next_functions if nxt is not None):
            continue  # an input of grad()/backward(inputs=): its gradient is taken, its own node does not run
        nf = node.next_functions
        if grads is not None and any(g is not None for g in grads):
            if any(g is None for g in grads):
                meta = node._out_meta
                xp = _xp(grads)
                grads = [g if g is not None else xp.zeros(meta[i][0], meta[i][1]) for i, g in enumerate(grads)]
            in_grads = node._backward(grads)
            if node._post_hooks:
                for fn in list(node._post_hooks.values()):
                    r = _call_node_hook(fn, (in_grads, grads), dev, expect=len(in_grads))
                    if r is not None:
                        in_grads = r
            if not retain_graph:
                node._release()
            meta = node._in_meta
            for i, (nxt, nr) in enumerate(nf):
                if nxt is None or nxt not in needed:
                    continue
                g = in_grads[i]
                if g is not None:
                    shape, dtype = meta[i]
                    if g.shape != shape:
                        g = sum_to_shape(g, shape)
                    if g.dtype != dtype:
                        g = g.astype(dtype)
                    buf = buffers.get(nxt)
                    if buf is None:
                        n_out = len(nxt._out_meta) if nxt._out_meta else 1
                        buf = buffers[nxt] = [None] * n_out
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heapq.heappush(heap, (-nxt._seq, id(nxt), nxt))
        else:
            if not retain_graph:
                node._release()
            for nxt, nr in nf:
                if nxt is None or nxt not in needed:
                    continue
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heapq.heappush(heap, (-nxt._seq, id(nxt), nxt))

    if capture:
        if not allow_unused:
            for k, g in enumerate(captured):
                if g is None:
                    raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have been used in the "
                                       "graph. Set allow_unused=True if this is the desired behavior.")
        return captured
    return None


def _call_node_hook(fn, args, dev, expect):
    from .._tensor import Tensor

    wrapped = [tuple(Tensor._wrap(g, dev) if g is not None else None for g in a) for a in args]
    r = fn(*wrapped)
    if r is None:
        return None
    r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
    if len(r) != expect:
        name = getattr(fn, "__name__", repr(fn))
        raise RuntimeError(f"hook '{name}' returned an incorrect number of values (got {len(r)}, but expected "
                           f"{expect})")
    return [x._data if isinstance(x, Tensor) else x for x in r]


def _xp(grads):
    for g in grads:
        if g is not None and hasattr(g, "__cuda_array_interface__"):
            import cupy

            return cupy
    return np
