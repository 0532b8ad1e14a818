"""The profiler against PyTorch's: ``torch.autograd.profiler.profile``, ``torch.profiler.profile`` with
``ProfilerActivity.CPU`` and ``record_function``; the events' names and nesting, the table's layout,
``record_shapes``, the Chrome trace, the errors; and that nothing of it stays in place once the block ends.
Times are never compared, only what is recorded and how it is laid out."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

_TIME = re.compile(r"\d+\.\d+(us|ms|s)|\d+\.\d+%|NaN")


def _layout(table: str) -> list:
    """The table with every time and share replaced by ``T``: its columns, widths, names and counts remain."""
    return [_TIME.sub(lambda m: "T".rjust(len(m.group(0))), line) for line in table.split("\n")]


def _same_layout(got: str, want: str) -> None:
    g, w = _layout(got), _layout(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        # a time may print one character wider on one side ("9.057ms" vs "127.786us"): compare cell by cell
        assert a.split() == b.split() or [c.strip("T") for c in a.split()] == [c.strip("T") for c in b.split()]
        assert len(a) == len(b)


def tutorial_style(lib):
    """The autograd tutorial's profiler cell, shorter: a loop of divisions and products."""
    x = lib.randn(2, 3, requires_grad=True)
    y = lib.rand(2, 3, requires_grad=True)
    z = lib.ones(2, 3, requires_grad=True)
    with lib.autograd.profiler.profile(use_cuda=False) as prf:
        for _ in range(20):
            z = (z / x) * y
    avg = prf.key_averages()
    return prf, avg, avg.table(sort_by="count")


def test_tutorial_table_as_pytorch():
    got_prf, got_avg, got = tutorial_style(leafkit)
    want_prf, want_avg, want = tutorial_style(torch)
    assert sorted((e.key, e.count) for e in got_avg) == sorted((e.key, e.count) for e in want_avg)
    _same_layout(got, want)
    table = got_avg.table(sort_by="self_cpu_time_total")
    assert table.startswith("-" * 13 + "  ") and table.endswith("\n")
    assert "Self CPU time total: " in table.split("\n")[-2]
    assert abs(got_avg.self_cpu_time_total - sum(e.self_cpu_time_total for e in got_prf.function_events)) < 1e-6


def _backward_program(lib, record_shapes=True):
    x = lib.ones(2, 3, requires_grad=True)
    y = lib.full((2, 3), 2.0, requires_grad=True)
    with lib.autograd.profiler.profile(record_shapes=record_shapes) as prf:
        with lib.autograd.profiler.record_function("my_block"):
            w = (x * y).sum()
        w.backward()
    return prf


def _in_a_node(e) -> bool:
    parent = e.cpu_parent
    while parent is not None:
        if parent.name.endswith("Backward0") or parent.name.endswith("AccumulateGrad"):
            return True
        parent = parent.cpu_parent
    return False


def _tree(events, names):
    """(name, parent's name, input shapes) of each event whose name and parent's name are in ``names``; the ops a
    node's formulas run are left out (leafkit's formulas write most of them as Python operators on arrays, which it
    does not record)."""
    out = []
    for e in events:
        if e.name.startswith("aten::") and _in_a_node(e):
            continue
        parent = e.cpu_parent
        while parent is not None and parent.name not in names:
            parent = parent.cpu_parent  # an op leafkit does not record (aten::as_strided ...) is skipped over
        if e.name in names:
            out.append((e.name, parent.name if parent is not None else None, str(e.input_shapes)))
    return sorted(out)


def test_forward_and_backward_events_as_pytorch():
    got, want = _backward_program(leafkit), _backward_program(torch)
    names = {e.name for e in got.function_events}
    assert names <= {e.name for e in want.function_events}  # leafkit records a subset: no inner ATen ops
    for must in (
        "my_block",
        "aten::mul",
        "aten::sum",
        "autograd::engine::evaluate_function: SumBackward0",
        "SumBackward0",
        "autograd::engine::evaluate_function: MulBackward0",
        "MulBackward0",
        "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
        "torch::autograd::AccumulateGrad",
    ):
        assert must in names
    shaped = {"aten::mul", "MulBackward0", "SumBackward0", "torch::autograd::AccumulateGrad", "my_block"}
    nodes = {n for n in names if "evaluate_function" in n} | shaped
    assert _tree(got.function_events, nodes) == _tree(want.function_events, nodes)
    seq = {e.name: e.sequence_nr for e in got.function_events}
    assert seq["MulBackward0"] == seq["autograd::engine::evaluate_function: MulBackward0"] >= 0
    assert seq["SumBackward0"] > seq["MulBackward0"]  # the later node: a larger sequence number


def test_tables_with_shapes_and_row_limit_as_pytorch():
    got, want = _backward_program(leafkit), _backward_program(torch)
    for kind in ("plain", "shapes"):
        tables = []
        for prf in (got, want):
            avg = prf.key_averages(group_by_input_shape=kind == "shapes")
            tables.append(avg.table(sort_by="count", row_limit=3).split("\n")[:3])
            assert "Input Shapes" in tables[-1][1] if kind == "shapes" else "Input Shapes" not in tables[-1][1]
            n_rows = len(avg.table(row_limit=2).split("\n")) - 6
            assert n_rows == 2
        assert tables[0][1].split() == tables[1][1].split()
    assert str(got).split("\n")[1].split() == str(want).split("\n")[1].split()  # print(prof): every event


def _errors(lib):
    out = []
    prf = lib.autograd.profiler.profile()
    try:
        with prf:
            with prf:
                pass
    except RuntimeError as e:
        out.append(str(e))
    with lib.autograd.profiler.profile() as p:
        (lib.ones(2) * 2).sum()
    try:
        p.key_averages().table(sort_by="bogus")
    except AttributeError as e:
        out.append(str(e))
    out.append(p.key_averages().total_average().count > 0)
    out.append(repr(lib.profiler.ProfilerActivity.CPU))
    return out


def test_errors_as_pytorch():
    assert _errors(leafkit) == _errors(torch)


def _new_front_door(lib):
    from_lib = lib.profiler
    x = lib.ones(4, 4, requires_grad=True)
    with from_lib.profile(activities=[from_lib.ProfilerActivity.CPU], record_shapes=True) as prof:
        with from_lib.record_function("model_inference"):
            y = (x @ x).relu().sum()
        y.backward()
    keys = {e.key for e in prof.key_averages()}
    top = [e.name for e in prof.events() if e.cpu_parent is None][:1]
    return {"model_inference", "aten::relu", "aten::sum"} <= keys, top, type(prof.events()).__name__


def test_torch_profiler_front_door_as_pytorch():
    assert _new_front_door(leafkit) == _new_front_door(torch)


def test_record_function_as_decorator_and_outside_a_profile():
    @leafkit.autograd.profiler.record_function("step")
    def step(t):
        return t * 3

    x = leafkit.ones(2, requires_grad=True)
    assert step(x).tolist() == [3.0, 3.0]  # no profiler: nothing happens
    with leafkit.autograd.profiler.profile() as prf:
        step(x)
    (ev,) = [e for e in prf.function_events if e.name == "step"]
    assert [c.name for c in ev.cpu_children] == ["aten::mul"]


def test_chrome_trace_is_valid_trace_event_json(tmp_path):
    prf = _backward_program(leafkit)
    path = tmp_path / "trace.json"
    prf.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    complete = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in complete] == [e.name for e in prf.function_events]
    for e in complete:
        assert {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"} <= set(e)
        assert e["dur"] >= 0 and e["cat"] in ("cpu_op", "user_annotation")
    by_name = {e["name"]: e for e in complete}
    block, mul = by_name["my_block"], by_name["aten::mul"]
    assert block["ts"] <= mul["ts"] and mul["ts"] + mul["dur"] <= block["ts"] + block["dur"] + 1e-3
    assert mul["args"]["Input Dims"] == [[2, 3], [2, 3]]
    assert data["displayTimeUnit"] == "ms"


def test_nothing_stays_in_place_after_the_block():
    """The zero cost when off is structural: every timer the block put in place is gone once it ends."""
    from leafkit._functions import _namespace, _registry
    from leafkit.autograd import engine

    forwards = {name: spec.forward for name, spec in _registry.SPECS.items()}
    array_ops = dict(vars(_namespace.array_ns))
    steps = {n: getattr(engine, n) for n in ("backward", "run_backward", "evaluate", "call_function", "accumulate")}
    try:
        with leafkit.autograd.profiler.profile():
            (leafkit.ones(2, requires_grad=True) * 2).sum().backward()
            raise KeyError("inside")
    except KeyError:
        pass
    assert {name: spec.forward for name, spec in _registry.SPECS.items()} == forwards
    assert dict(vars(_namespace.array_ns)) == array_ops
    assert {n: getattr(engine, n) for n in steps} == steps
    assert leafkit.autograd.profiler._ACTIVE == [None]


def test_profiled_gradients_are_the_plain_ones():
    def grads(profiled):
        x = leafkit.tensor([0.5, 1.0, 2.0], requires_grad=True)
        w = leafkit.tensor([1.5, -1.0, 0.25], requires_grad=True)
        if profiled:
            with leafkit.autograd.profiler.profile():
                (x * w).exp().sum().backward()
                (g,) = leafkit.autograd.grad((x * x * w).sum(), x, create_graph=True)
        else:
            (x * w).exp().sum().backward()
            (g,) = leafkit.autograd.grad((x * x * w).sum(), x, create_graph=True)
        return x.grad.tolist(), w.grad.tolist(), g.tolist()

    assert grads(True) == grads(False)


FIRST_USE = """
import json, sys
import {lib} as torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.autograd.profiler.profile() as prof:  # each op runs here for the first time in this interpreter
    y = torch.addcmul(x.tanh(), x, x) * 2.0
    y.sum().backward()
json.dump(sorted((e.key, e.count) for e in prof.key_averages() if e.key.split("::")[-1] in NAMES), sys.stdout)
"""
NAMES = ("tanh", "addcmul", "sum", "tanh_backward")


def _first_use_events(lib: str) -> list:
    code = f"NAMES = {NAMES!r}" + FIRST_USE.format(lib=lib)
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=True)
    return [tuple(e) for e in json.loads(out.stdout)]


def test_an_op_first_run_inside_the_block_is_recorded_as_pytorch():
    """The fast path writes out an op's recorder on its first use; written inside a ``profile`` block, it still calls
    the profiler's timed forward (and keeps calling the op's own one once the block ends)."""
    assert _first_use_events("leafkit") == _first_use_events("torch")
