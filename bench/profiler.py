"""Profiler benchmark: what recording costs, and that it costs nothing when no profiler is active.

W1 (the 2,000-op elementwise chain of ``bench/engine.py``, forward and backward) is timed on leafkit and on
PyTorch in the same process, rounds interleaved, the median reported:

* ``off, never profiled``: before any profiler ran;
* ``inside a profile``: the same run inside ``torch.autograd.profiler.profile()`` (each op's forward and each
  backward node recorded), entered and left around every run;
* ``off, after profiling``: after those profiles, the timers taken away again.

The ratios: each library's profiled time over its own plain time (the profiler's overhead), and leafkit's
"off, after profiling" over "off, never profiled" (1.00x within noise).  Since times on a shared machine are
noisy, the cost when off is also counted exactly: the Python function calls of one leafkit W1 run
(``sys.setprofile``) before any profile and after one, which must be equal (no test for a profiler in the op path
or the engine).  Run: ``python bench/profiler.py`` (``--repeat N``).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402


def _median_times(runs: dict, repeat: int) -> dict:
    for run in runs.values():
        run()  # warm-up
    times: dict = {k: [] for k in runs}
    for _ in range(repeat):
        for k, run in runs.items():
            t0 = time.perf_counter()
            run()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def _calls(run) -> int:
    n = [0]

    def count(frame, event, arg):
        if event in ("call", "c_call"):
            n[0] += 1

    sys.setprofile(count)
    try:
        run()
    finally:
        sys.setprofile(None)
    return n[0]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=9, help="rounds (the median is reported)")
    args = ap.parse_args(argv)
    libs = peers.backends(torch_threads=1)
    libs = {k: libs[k] for k in ("leafkit", "PyTorch") if k in libs}
    import leafkit

    mods = {"leafkit": leafkit}
    if "PyTorch" in libs:
        import torch

        mods["PyTorch"] = torch

    def profiled(lib, run):
        def go():
            with mods[lib].autograd.profiler.profile():
                run()

        return go

    plain = {lib: b.w1(2000) for lib, b in libs.items()}
    plain["leafkit"]()
    calls_before = _calls(plain["leafkit"])
    before = _median_times({f"{lib} off": run for lib, run in plain.items()}, args.repeat)
    inside = _median_times({f"{lib} on": profiled(lib, run) for lib, run in plain.items()}, args.repeat)
    gc.collect()  # the profiles' events (parents and children point at each other) are garbage now
    after = _median_times({f"{lib} off": run for lib, run in plain.items()}, args.repeat)
    calls_after = _calls(plain["leafkit"])
    print(f"leafkit {leafkit.__version__}; W1 2,000-op chain, forward+backward; median of {args.repeat} rounds")
    print(f"{'library':10s}{'off, never profiled':>22s}{'inside a profile':>20s}{'profiler overhead':>20s}")
    for lib in libs:
        off, on = before[f"{lib} off"], inside[f"{lib} on"]
        print(f"{lib:10s}{off * 1e3:20.2f}ms{on * 1e3:18.2f}ms{on / off:19.2f}x")
    off0, off1 = before["leafkit off"], after["leafkit off"]
    print(f"leafkit off, after profiling: {off1 * 1e3:.2f}ms = {off1 / off0:.2f}x the time before any profile", end="")
    if "PyTorch" in libs:
        print(f" (PyTorch: {after['PyTorch off'] / before['PyTorch off']:.2f}x)", end="")
    print()
    print(f"leafkit's Python calls per W1 run: {calls_before} before any profile, {calls_after} after one")
    if "PyTorch" in libs:
        print(f"leafkit / PyTorch, both off: {off0 / before['PyTorch off']:.2f}x")


if __name__ == "__main__":
    main()
