"""MemoryExplorer's check against real PyTorch: measure what the shown code keeps, by its pack hooks.

:func:`measure` runs the code :class:`~leafkit.widgets.memory_explorer.MemoryExplorer` shows with
``torch`` bound to the module it is given, and measures the bytes kept for backward without
:func:`leafkit.viz.memory.saved_memory`: every ``saved_tensors_hooks`` made while the forward runs
(the shown pair, ``save_on_cpu``'s, checkpoint's own) gets its pack hook wrapped, and without hooks
the forward runs inside an outer pair that packs nothing (the innermost pair is the one PyTorch
calls, so the outer one sees exactly the saves no other hook takes).  Each pack call's result is
what the graph keeps: a tensor on the input's storage is kept by reference (counted once per
storage, parameters not at all), any other tensor is a copy and counts its bytes.
"""

from __future__ import annotations

import contextlib

from leafkit.viz import _inspect as I
from leafkit.viz.dot import walk

from ._memory_program import _block_nodes, _instrument
from ._oracle import run_torch, statements

__all__ = ["measure"]


@contextlib.contextmanager
def _recording(torch, record: list, outer: bool):
    graph = torch.autograd.graph
    cls = graph.saved_tensors_hooks
    original = cls.__init__

    def init(self, pack_hook, unpack_hook):
        def pack(t):
            packed = pack_hook(t)
            if record is not None:
                record.append((t, packed))
            return packed

        original(self, pack, unpack_hook)

    cls.__init__ = init
    try:
        if outer:
            with cls(lambda t: t, lambda t: t):
                yield
        else:
            yield
    finally:
        cls.__init__ = original


def _kept_bytes(record, params) -> int:
    param_ptrs = {I.storage_ptr(p) for p in params} - {None}
    seen, total = set(), 0
    for t, packed in record:
        if I.is_tensor(packed):
            kept = [packed]
        else:
            kept = [p for p in packed if I.is_tensor(p)] if isinstance(packed, tuple) else []
        for k in kept:
            ptr = I.storage_ptr(k)
            if ptr is not None and ptr == I.storage_ptr(t):  # by reference
                if ptr in param_ptrs or ptr in seen:
                    continue
                seen.add(ptr)
                total += int(k.untyped_storage().nbytes())
            else:
                total += int(k.numel()) * int(k.element_size())
    return total


_MEASURED: dict = {}


def measure(torch, code: str, checkpointed, hooks: str) -> dict:
    """Run ``code`` on ``torch`` and measure what it keeps (once per module and code: the run is seeded).

    Returns
    -------
    dict
        ``error`` (``"Type: message"`` or None), ``saved`` (``[(node, attr, shape)]`` of the tensors
        the nodes outside checkpointed blocks save, in the walk's order), ``kept_bytes`` (measured
        by the pack hooks) and ``recomputed`` (the modules whose forward ran during backward).
    """
    key = (id(torch), code, tuple(checkpointed), hooks)
    if key not in _MEASURED:
        _MEASURED[key] = _measure(torch, code, checkpointed, hooks)
    return _MEASURED[key]


def _measure(torch, code: str, checkpointed, hooks: str) -> dict:
    stmts = statements(code)
    setup = stmts[:5] if hooks == "float16" else stmts[:3]
    fwd, bwd = stmts[len(setup) : -1], stmts[-1]
    state = {"phase": "setup", "outputs": {}, "recomputed": []}
    ns, _, err = run_torch(setup, torch)
    out = {"error": err, "saved": [], "kept_bytes": 0, "recomputed": []}
    if err is not None:
        return out
    _instrument(ns["model"], state)
    record: list = []
    state["phase"] = "forward"
    with _recording(torch, record, outer=hooks == "none"):
        ns, _, err = run_torch(fwd, torch, namespace=ns)
        state["phase"] = "done"
    if err is not None:
        out["error"] = err
        return out
    blocks = _block_nodes(state, checkpointed)
    order, _ = walk([ns["loss"].grad_fn])
    for fn in order:
        if I.is_accumulate_grad(fn) or fn in blocks:
            continue
        for a, v in I.saved_items(fn) or ():
            if I.is_tensor(v):
                out["saved"].append((I.node_name(fn), a, I.shape_of(v)))
    out["kept_bytes"] = _kept_bytes(record, list(ns["model"].parameters()))
    state["phase"] = "backward"
    _, _, err = run_torch([bwd], torch, namespace=ns)
    out["error"] = err
    out["recomputed"] = list(state["recomputed"])
    return out
