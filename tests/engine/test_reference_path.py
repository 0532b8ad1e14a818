"""The reference path stays readable, and the speed-ups replace it only when asked.

``scripts/trace_backward.py`` lists every leafkit function that ``(x * x).sum().backward()`` runs.  With
``LEAFKIT_FAST=0`` (read when leafkit is imported, so each measurement runs in a fresh interpreter) that is the
reference path a learner reads after lesson 5 (and lesson 14 walks through): it must fit in 420 lines in 6 files,
and run no code built at run time.  (It was 401 lines when the reference path was written; the saved-tensor
hooks' checks in saving and unpacking, and vmap's check in ``apply``, are on it now.)  That the two paths give the
same gradients is shown by running the gradient suites under both (``make test``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "trace_backward.py"
MAX_LINES, MAX_FILES = 420, 6


def trace(fast: bool) -> dict:
    args = [sys.executable, str(SCRIPT), "--json"] + (["--fast"] if fast else [])
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=True)
    return json.loads(out.stdout)


def listing(result: dict) -> str:
    return "\n".join(f"{f['lines']:>4}  {f['file']}:{f['line']}  {f['name']}" for f in result["functions"])


@pytest.fixture(scope="module")
def reference() -> dict:
    return trace(fast=False)


def test_reference_path_fits_in_420_lines_in_6_files(reference):
    assert not reference["fast"]
    assert reference["n_lines"] <= MAX_LINES, f"{reference['n_lines']} lines:\n{listing(reference)}"
    assert len(reference["files"]) <= MAX_FILES, reference["files"]


def test_reference_path_runs_no_code_built_at_run_time(reference):
    assert reference["generated"] == []
    assert all(not f["file"].endswith("_fast.py") for f in reference["functions"])


def test_reference_path_is_the_engine_steps(reference):
    """The engine's loop is its docstring's five steps, each a named function on the path."""
    names = {f["name"] for f in reference["functions"] if f["file"].endswith("engine.py")}
    assert {"dependencies", "ReadyQueue.push", "evaluate", "deliver", "sum_to_input", "release"} <= names
    assert {"record", "apply", "OpNode._backward"} <= {f["name"] for f in reference["functions"]}
    assert "connect" in {f["name"] for f in reference["functions"] if f["file"].endswith("graph.py")}


def test_default_path_uses_the_speed_ups():
    fast = trace(fast=True)
    assert fast["fast"]
    files = {f["file"] for f in fast["functions"]}
    assert any(f.endswith("_functions/_fast.py") for f in files)
    assert fast["generated"], "the written-out backward code of mul and sum"


@pytest.mark.parametrize("value, installed", [("0", False), ("1", True), (None, True)])
def test_leafkit_fast_is_read_at_import(value, installed):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("LEAFKIT_FAST", None)
    if value is not None:
        env["LEAFKIT_FAST"] = value
    code = (
        "import leafkit\n"
        "from leafkit._functions import _base, _fast, _registry\n"
        "from leafkit.autograd import engine\n"
        "print(_fast.installed(), _registry.apply is _fast.apply, engine.backward is _fast.backward)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == [str(installed)] * 3
