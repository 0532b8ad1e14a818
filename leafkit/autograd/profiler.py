"""``torch.autograd.profiler``: time every op of the forward and every node of the backward pass.

``with torch.autograd.profiler.profile() as prof:`` records, while the block runs:

* each registered op's forward as an event named as PyTorch names its ATen operator (``aten::mul``,
  ``aten::sum``, ``aten::_to_copy`` ...), with the shapes of its inputs when ``record_shapes=True``;
* each node the backward engine runs as ``autograd::engine::evaluate_function: MulBackward0`` (hooks, formulas,
  delivery), holding ``MulBackward0`` (the node's call, with the shapes of the gradients it receives), which holds
  the ops its formulas ran (``aten::mul`` ...); an ``AccumulateGrad`` as ``torch::autograd::AccumulateGrad``;
* each :class:`record_function` block under its own name.

Events nest by time: an event's *self* CPU time is its time less its children's.  ``prof.key_averages()`` sums
them by name (and by input shapes with ``group_by_input_shape=True``); ``.table(sort_by=..., row_limit=...)``
prints PyTorch's table (the same columns, widths, time units and "Self CPU time total" line), and
``prof.export_chrome_trace(path)`` writes the Trace Event Format JSON that ``chrome://tracing`` and Perfetto open.

How it costs nothing when off: nothing in the op registry or the engine tests for a profiler.  Entering a
``profile`` block puts timing wrappers in place (every op's ``forward``, the array namespace's ops that a plain
backward pass's formulas call, and the engine's ``evaluate``, ``call_function`` and ``accumulate``; the backward
passes run the engine's reference path meanwhile) and leaving it takes them away again.

Differences from PyTorch: an op's event times leafkit's forward of that op (PyTorch's also covers its dispatch);
the ops PyTorch runs inside another (``aten::empty_like`` in ``aten::ones_like`` ...) and the starting gradient's
``aten::ones_like`` are not recorded; an in-place op shows its out-of-place name; there is no device time, memory
or FLOP count (``use_cuda``, ``profile_memory``, ``with_flops`` are accepted and record nothing more);
``with_stack=True`` keeps the user's frames on each event (``FunctionEvent.stack``, grouped by
``key_averages(group_by_stack_n=n)``) without PyTorch's "Source Location" column.  One profiler at a time.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
from typing import Any

from . import engine as _engine
from .graph import AccumulateGrad

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList", "emit_nvtx"]

_ACTIVE: list = [None]  # the recording profile, or None

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OVERLOAD = re.compile(r"_(scalar_base|scalar_other|scalar_self|scalar|tensor|dims|dim|decimals|mode|stable|value)$")
_ATEN_NAMES = {
    "to_copy": "_to_copy",
    "reshape_alias": "_reshape_alias",
    "index_put_impl": "_index_put_impl_",
    "squeeze_inplace_dim": "squeeze_",
    "fill_tensor_": "fill_",
    "unique_dim": "unique_dim",
    "norm_dim": "linalg_vector_norm",
}


def aten_name(op: str) -> str:
    """The name PyTorch's profiler gives a registered op: ``mul_scalar`` -> ``aten::mul``."""
    return "aten::" + _ATEN_NAMES.get(op, _OVERLOAD.sub("", op))


# -- events -----------------------------------------------------------------------------------------------------------
class FunctionEvent:
    """One recorded range: an op, a backward node or a ``record_function`` block (``torch.autograd.profiler_util``).

    Times are in microseconds: ``time_range.start`` / ``.end`` from the start of the profile, ``cpu_time_total``
    (the whole range), ``self_cpu_time_total`` (less the direct children's), ``cpu_time`` (= total: one call).
    """

    # what leafkit does not measure, zero as PyTorch reports it without a device or memory profiling (sort keys)
    cuda_time_total = self_cuda_time_total = device_time_total = self_device_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = cuda_memory_usage = self_cuda_memory_usage = 0
    device_memory_usage = self_device_memory_usage = flops = 0

    def __init__(self, id, name, thread, start_us, input_shapes, stack, category, sequence_nr=-1, fwd_thread=0):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes
        self.stack = stack
        self.category = category  # "cpu_op" or "user_annotation" (the trace's "cat")
        self.sequence_nr = sequence_nr
        self.fwd_thread = fwd_thread
        self.cpu_children: list = []
        self.cpu_parent = None
        self.count = 1

    @property
    def time_range(self):
        return _Interval(self.start_us, self.end_us)

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time)} "
            f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} cpu_children={[c.id for c in self.cpu_children]} "
            f"thread={self.thread} input_shapes={self.input_shapes} seq_nr={self.sequence_nr}>"
        )


class _Interval:
    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self) -> float:
        return self.end - self.start


class FunctionEventAvg:
    """The events of one key summed (``key_averages()``): ``count``, ``cpu_time_total``, ``self_cpu_time_total``,
    and the averages ``cpu_time`` and ``self_cpu_time``."""

    # what leafkit does not measure, zero as PyTorch reports it without a device or memory profiling (sort keys)
    cuda_time_total = self_cuda_time_total = device_time_total = self_device_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = cuda_memory_usage = self_cuda_memory_usage = 0
    device_memory_usage = self_device_memory_usage = flops = 0

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = input_shapes
        self.stack = stack
        self.cpu_parent = None

    def add(self, event) -> FunctionEventAvg:
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def self_cpu_time(self) -> float:
        return self.self_cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        shapes = self.input_shapes if self.input_shapes is not None else ""
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
            f"cpu_time={_format_time(self.cpu_time_total)} input_shapes={shapes}>"
        )


class EventList(list):
    """A list of events (or of their averages) with PyTorch's ``table``, ``key_averages``, ``total_average`` and
    ``export_chrome_trace``."""

    def __init__(self, events=(), profile_start_ns: int = 0, wall_start_ns: int = 0):
        super().__init__(events)
        self._wall_start_ns = wall_start_ns

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0) -> EventList:
        """The events summed per name (and input shapes, and first ``group_by_stack_n`` frames), in the order
        each key first appears."""
        stats: dict = {}
        for e in self:
            key = [e.key]
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key.append(str((e.stack or [])[:group_by_stack_n]))
            k = tuple(key)
            if k not in stats:
                stack = (e.stack or [])[:group_by_stack_n] if group_by_stack_n > 0 else None
                stats[k] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shapes else None, stack)
            stats[k].add(e)
        return EventList(stats.values(), wall_start_ns=self._wall_start_ns)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ) -> str:
        """PyTorch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, # of Calls (and
        Input Shapes when the events have them), sorted by the attribute ``sort_by`` (largest first;
        AttributeError for one the events lack), at most ``row_limit`` rows, then "Self CPU time total"."""
        widths = (max_name_column_width, max_shapes_column_width)
        return _build_table(self, sort_by, row_limit, widths, header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path) -> None:
        """Write the events as Chrome's Trace Event Format (JSON: complete events ``"ph": "X"``, microseconds)."""
        pid = os.getpid()
        base = self._wall_start_ns / 1000.0
        events: list[dict[str, Any]] = [
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
        ]
        for tid in sorted({e.thread for e in self}):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"thread {tid}"}})
        for e in self:
            args: dict[str, Any] = {"External id": e.id}
            if e.sequence_nr >= 0:
                args["Sequence number"] = e.sequence_nr
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            events.append(
                {
                    "ph": "X",
                    "cat": e.category,
                    "name": e.name,
                    "pid": pid,
                    "tid": e.thread,
                    "ts": round(base + e.start_us, 3),
                    "dur": round(e.cpu_time_total, 3),
                    "args": args,
                }
            )
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": events}, f)


def _format_time(us: float, unit=None) -> str:
    if unit == "s" or (unit is None and us >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and us >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_share(us: float, total: float) -> str:
    return "NaN" if total == 0 else f"{us * 100.0 / total:.2f}%"


def _build_table(events, sort_by, row_limit, widths, header, top_level_only, time_unit) -> str:
    max_name, max_shapes = widths
    if not events:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    if top_level_only:
        events = [e for e in events if e.cpu_parent is None]
    has_shapes = any(e.input_shapes for e in events)
    name_width = min(max(len(e.key) for e in events) + 4, max_name)
    columns = [("Name", name_width)] + [
        (h, 12) for h in ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls")
    ]
    if has_shapes:
        columns.append(("Input Shapes", min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes)))
    line = "".join("-" * w + "  " for _, w in columns)
    fmt = "".join("{:>" + str(w) + "}  " for _, w in columns)
    total = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * (len(line) - 2), header]
    if top_level_only:
        out += ["=" * (len(line) - 2), "This report only display top-level ops statistics"]
    out += [line, fmt.format(*[h for h, _ in columns]), line]
    for e in events[:row_limit] if row_limit is not None and row_limit >= 0 else events:
        name = e.key if len(e.key) < max_name - 3 else e.key[: max_name - 3] + "..."
        cells = [
            name,
            _format_share(e.self_cpu_time_total, total),
            _format_time(e.self_cpu_time_total, time_unit),
            _format_share(e.cpu_time_total, total),
            _format_time(e.cpu_time_total, time_unit),
            _format_time(e.cpu_time, time_unit),
            e.count,
        ]
        if has_shapes:
            shapes = str(e.input_shapes)
            cells.append(shapes if len(shapes) < max_shapes - 3 else shapes[: max_shapes - 3] + "...")
        out.append(fmt.format(*cells))
    out += [line, f"Self CPU time total: {_format_time(total, time_unit)}", ""]
    return "\n".join(out)


# -- recording --------------------------------------------------------------------------------------------------------
class _Recorder:
    """The events of one profile, and the stack of open ones (their parents)."""

    def __init__(self, record_shapes: bool, with_stack: bool):
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.events: list = []
        self.open: list = []
        self.start_ns = time.perf_counter_ns()
        self.wall_start_ns = time.time_ns()

    def begin(self, name, shapes=(), category="cpu_op", sequence_nr=-1, fwd_thread=0) -> FunctionEvent:
        stack = _user_stack() if self.with_stack else []
        start = (time.perf_counter_ns() - self.start_ns) / 1000.0
        ev = FunctionEvent(len(self.events) + 1, name, 1, start, list(shapes), stack, category, sequence_nr, fwd_thread)
        if self.open:
            parent = self.open[-1]
            parent.cpu_children.append(ev)
            ev.cpu_parent = parent
        self.events.append(ev)
        self.open.append(ev)
        return ev

    def end(self, ev) -> None:
        ev.end_us = (time.perf_counter_ns() - self.start_ns) / 1000.0
        if self.open and self.open[-1] is ev:
            self.open.pop()


def _user_stack() -> list:
    """The frames outside leafkit, innermost first, as PyTorch writes them: ``file(line): function``."""
    frames = [f for f in traceback.extract_stack(sys._getframe(3)) if not f.filename.startswith(_PACKAGE)]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)]


def _shapes(args) -> list:
    return [list(a.shape) if hasattr(a, "shape") else [] for a in args]


def _timed(fn, name):
    """``fn`` recording an event ``name`` around each call (with its arguments' shapes if asked)."""

    def run(*args, **kwargs):
        rec = _ACTIVE[0]
        if rec is None:
            return fn(*args, **kwargs)
        ev = rec.begin(name, _shapes(args) if rec.record_shapes else ())
        try:
            return fn(*args, **kwargs)
        finally:
            rec.end(ev)

    run.__wrapped__ = fn  # type: ignore[attr-defined]
    return run


def _timed_evaluate(evaluate):
    def run(task, node, step):
        rec = _ACTIVE[0]
        ev = rec.begin(f"autograd::engine::evaluate_function: {node.name()}", (), "cpu_op", _seq(node), 1)
        try:
            return evaluate(task, node, step)
        finally:
            rec.end(ev)

    return run


def _timed_node(call):
    def run(task, node, grads, step):
        rec = _ACTIVE[0]
        shapes = [list(g.shape) if g is not None else [] for g in grads] if rec.record_shapes and grads else ()
        ev = rec.begin(node.name(), shapes, "cpu_op", _seq(node), 1)
        try:
            return call(task, node, grads, step)
        finally:
            rec.end(ev)

    return run


def _seq(node) -> int:
    return -1 if isinstance(node, AccumulateGrad) else node._sequence_nr()


def _install(rec: _Recorder) -> list:
    """Put the timing wrappers in place; returns what to put back: ``(owner, name, original)``."""
    from .. import _functions  # the op registry imports the core: reached at run time

    _fast, _namespace, _registry = _functions._fast, _functions._namespace, _functions._registry

    undo = []

    def swap(owner, name, new):
        undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, new)

    for spec in _registry.SPECS.values():
        swap(spec, "forward", _timed(spec.forward, aten_name(spec.name)))
    ns = _namespace.array_ns
    for op in _registry.SPECS:
        if op in vars(ns):
            swap(ns, op, _timed(vars(ns)[op], aten_name(op)))
    if _fast.installed():  # the backward passes take the reference path, whose steps are timed below
        swap(_engine, "backward", _fast._REFERENCE[_engine, "backward"])
        swap(_engine, "run_backward", _fast._REFERENCE[_engine, "run_backward"])
    swap(_engine, "evaluate", _timed_evaluate(_engine.evaluate))
    swap(_engine, "call_function", _timed_node(_engine.call_function))
    swap(_engine, "accumulate", _timed_node(_engine.accumulate))
    return undo


class profile:  # noqa: N801 - PyTorch's name
    """Record the ops and backward nodes run inside the block (``torch.autograd.profiler.profile``).

    Parameters (PyTorch's): ``enabled`` (False: record nothing), ``record_shapes`` (each event's input shapes),
    ``with_stack`` (each event's user frames); ``use_cuda``, ``use_device``, ``profile_memory``, ``with_flops``,
    ``with_modules``, ``use_kineto``, ``use_cpu`` and the rest are accepted and change nothing.

    After the block: ``function_events`` (an :class:`EventList`), ``key_averages(group_by_input_shape=False,
    group_by_stack_n=0)``, ``table(...)``, ``export_chrome_trace(path)``, ``self_cpu_time_total``; ``str(prof)``
    is the table of every event.  Raises ``RuntimeError("Profiler context manager is not reentrant")`` when
    entered twice, and when another profiler is recording.
    """

    def __init__(
        self,
        enabled=True,
        *,
        use_cuda=False,
        use_device=None,
        record_shapes=False,
        with_flops=False,
        profile_memory=False,
        with_stack=False,
        with_modules=False,
        use_kineto=False,
        use_cpu=True,
        experimental_config=None,
        acc_events=False,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
        activity_filters=None,
    ):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.use_cuda = use_cuda
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.entered = False
        self.function_events: EventList | None = None
        self._recorder: _Recorder | None = None
        self._undo: list = []

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered or _ACTIVE[0] is not None:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start_trace()
        return self

    def _start_trace(self) -> None:
        self._recorder = _Recorder(self.record_shapes, self.with_stack)
        self._undo = _install(self._recorder)
        _ACTIVE[0] = self._recorder

    def __exit__(self, *exc) -> None:
        if not self.enabled:
            return
        self._stop_trace()

    def _stop_trace(self) -> None:
        _ACTIVE[0] = None
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)
        self._undo = []
        rec = self._recorder
        if rec is not None:
            self.function_events = EventList(rec.events, wall_start_ns=rec.wall_start_ns)

    def _events(self) -> EventList:
        return self.function_events if self.function_events is not None else EventList()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False) -> EventList:
        """The events summed by name (see :meth:`EventList.key_averages`)."""
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, **kwargs) -> str:
        return self._events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def export_chrome_trace(self, path, metadata=None, use_python_export=False) -> None:
        self._events().export_chrome_trace(path)

    def total_average(self) -> FunctionEventAvg:
        return self._events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return str(self)


class record_function:  # noqa: N801 - PyTorch's name
    """Label a block in the profile (``torch.autograd.profiler.record_function``): a context manager, or a
    decorator.  The block is an event named ``name`` holding the ops run inside it; with no profiler recording it
    does nothing."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._event = None

    def __enter__(self):
        rec = _ACTIVE[0]
        if rec is not None:
            self._event = rec.begin(self.name, (), "user_annotation")
        return self

    def __exit__(self, *exc) -> None:
        rec = _ACTIVE[0]
        if rec is not None and self._event is not None:
            rec.end(self._event)
        self._event = None

    def __call__(self, fn):
        def run(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        run.__name__ = getattr(fn, "__name__", "run")
        run.__doc__ = fn.__doc__
        return run


class emit_nvtx:  # noqa: N801 - PyTorch's name
    """``torch.autograd.profiler.emit_nvtx``: NVTX ranges for NVIDIA's tools.  leafkit has none to emit; the
    block runs as it is."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None
