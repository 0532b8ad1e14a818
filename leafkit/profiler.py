"""``torch.profiler``: the profiler's newer front door, on :mod:`leafkit.autograd.profiler`'s recording.

``with torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:`` records what
``torch.autograd.profiler.profile`` records (every op's forward as ``aten::<op>``, every backward node, each
``record_function`` block); ``prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)`` prints
PyTorch's table and ``prof.export_chrome_trace(path)`` writes a trace for ``chrome://tracing`` or Perfetto.
``on_trace_ready`` is called with the profiler when the block ends (``tensorboard_trace_handler(dir)`` writes
the trace there).  leafkit measures CPU time only: ``ProfilerActivity.CUDA`` records nothing more, and the
``schedule`` of a training loop's steps is not there (``NotImplementedError``).
"""

from __future__ import annotations

import enum
import os
import socket
import time

from .autograd import profiler as _autograd_profiler
from .autograd.profiler import EventList, FunctionEvent, FunctionEventAvg, record_function

__all__ = [
    "profile",
    "record_function",
    "ProfilerActivity",
    "supported_activities",
    "tensorboard_trace_handler",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
]


class ProfilerActivity(enum.Enum):
    """The kinds of activity a profiler may record (``torch.profiler.ProfilerActivity``); leafkit times ``CPU``."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set:
    """The activities leafkit's profiler records: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False):
    """An ``on_trace_ready`` that writes each profile's Chrome trace into ``dir_name``, as
    ``<worker_name>.<milliseconds>.pt.trace.json`` (worker name: ``<host>_<pid>``)."""

    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(dir_name, f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json"))

    return handler


class profile(_autograd_profiler.profile):  # noqa: N801 - PyTorch's name
    """Record the ops and backward nodes run inside the block (``torch.profiler.profile``).

    Also ``start()`` / ``stop()`` instead of the ``with`` block, ``step()`` (counts steps), ``events()`` (the
    recorded :class:`EventList`).  ``activities`` defaults to the supported ones; ``record_shapes`` and
    ``with_stack`` as in :class:`leafkit.autograd.profiler.profile`.  Raises ``NotImplementedError`` for a
    ``schedule``.
    """

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events=False,
        use_cuda=None,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
    ):
        if schedule is not None:
            raise NotImplementedError("leafkit's profiler records the whole block: a schedule of steps is not there")
        super().__init__(
            record_shapes=record_shapes, with_stack=with_stack, profile_memory=profile_memory, with_flops=with_flops
        )
        self.activities = set(activities) if activities is not None else supported_activities()
        self.on_trace_ready = on_trace_ready
        self.step_num = 0

    def start(self) -> None:
        self.__enter__()

    def stop(self) -> None:
        self.__exit__(None, None, None)

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """The end of one training step (counted; leafkit records every step)."""
        self.step_num += 1

    def events(self) -> EventList:
        return self._events()
