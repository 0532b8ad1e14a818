"""Print the path one backward takes through leafkit: every leafkit function that runs for ``(x * x).sum().backward()``.

``x`` is a 1-d float tensor that requires grad, made before the trace starts.  The trace covers the forward
recording of ``x * x``, of ``.sum()``, and the whole ``.backward()``.  Each function is counted once, with its
source lines as :func:`inspect.getsourcelines` gives them, and each line is counted once (a comprehension or
generator expression is part of the function it is written in, whose lines it shares).  This is the code a
reader follows to see how leafkit records a node and runs backward (lesson 14 walks through it).

leafkit reads ``LEAFKIT_FAST`` once, when it is imported: ``LEAFKIT_FAST=0`` switches the speed-ups off, and the
trace shows the reference path; without it (the default) the trace shows the fast path the speed-ups replace it
with.  So the script runs the measurement in a fresh interpreter, with ``LEAFKIT_FAST`` set for the path asked
for (whatever the caller's environment says)::

    python scripts/trace_backward.py            # the reference path (LEAFKIT_FAST=0)
    python scripts/trace_backward.py --fast     # the default path, with the speed-ups
    python scripts/trace_backward.py --json     # the same figures, as JSON (what the test reads)
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure() -> dict:
    """Trace ``(x * x).sum().backward()`` in this interpreter; the functions in the order they first ran."""
    import leafkit

    package = os.path.dirname(os.path.abspath(leafkit.__file__))
    hook = leafkit._as_torch.__file__  # wraps builtins.__import__ (see leafkit/_as_torch.py): not the autograd path
    x = leafkit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen: dict = {}
    generated: dict = {}  # code built at run time (exec), called from leafkit: it has no source file

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code in seen or code in generated:
            return
        if code.co_filename == hook:
            return  # Python's import statement, through leafkit's import hook: NumPy's sum imports its _methods
        if os.path.basename(code.co_filename).startswith("<"):  # exec'd: "<string>", or leafkit's "<saver of mul>"
            back = frame.f_back.f_code if frame.f_back is not None else None
            if back in seen or back in generated:
                generated[code] = None
        elif os.path.abspath(code.co_filename).startswith(package + os.sep):
            seen[code] = None

    sys.setprofile(profile)
    try:
        (x * x).sum().backward()
    finally:
        sys.setprofile(None)
    assert x.grad.tolist() == [2.0, 4.0, 6.0], x.grad
    functions, counted, covered = [], set(), {}
    for code in seen:
        lines, first = inspect.getsourcelines(code)
        covered.setdefault(code.co_filename, set()).update(range(first, first + len(lines)))
        if (code.co_filename, first) in counted:  # a comprehension: the lines of the function it is in
            continue
        counted.add((code.co_filename, first))
        functions.append(
            {
                "file": os.path.relpath(code.co_filename, os.path.dirname(package)),
                "line": first,
                "name": code.co_qualname if hasattr(code, "co_qualname") else code.co_name,
                "lines": len(lines),
            }
        )
    return {
        "fast": os.environ.get("LEAFKIT_FAST", "1") != "0",
        "functions": functions,
        "n_functions": len(functions),
        "n_lines": sum(len(lines) for lines in covered.values()),  # each source line once
        "lines_per_file": {
            os.path.relpath(name, os.path.dirname(package)): len(lines) for name, lines in sorted(covered.items())
        },
        "files": sorted({f["file"] for f in functions}),
        "generated": [f"{code.co_name} ({code.co_filename})" for code in generated],
    }


def run(fast: bool) -> dict:
    """:func:`measure` in a fresh interpreter, with ``LEAFKIT_FAST`` set before leafkit is imported."""
    env = dict(os.environ, LEAFKIT_FAST="1" if fast else "0")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--measure"], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def report(result: dict) -> str:
    rows = [f"{'lines':>5}  {'where':<44} function"]
    for f in result["functions"]:
        rows.append(f"{f['lines']:>5}  {f['file'] + ':' + str(f['line']):<44} {f['name']}")
    per_file = result["lines_per_file"]
    for name in result["generated"]:
        rows.append(f"{'?':>5}  {'(code built at run time)':<44} {name}")
    rows.append("")
    for name in result["files"]:
        rows.append(f"{per_file[name]:>5}  {name}")
    path = "the default path (speed-ups on)" if result["fast"] else "the reference path (LEAFKIT_FAST=0)"
    rows.append(f"\n{path}: {result['n_functions']} functions, {result['n_lines']} lines, {len(result['files'])} files")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="trace the default path (speed-ups on)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # in this interpreter, as JSON
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure()))
        return 0
    result = run(args.fast)
    print(json.dumps(result, indent=1) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
