"""Engine benchmark: leafkit beside PyTorch and the peers (MyGrad, HIPS autograd), as ratios from the same run.

W1  forward+backward of a 2,000-op elementwise chain on a 1-element tensor (per-op overhead)
W2  20 elementwise ops on 1,000,000-element float32 tensors, forward+backward
W4  forward+backward of chains of 25,000 / 50,000 / 100,000 ops (time must grow linearly)

Every library runs the same workload (``bench/peers.py``) in the same process,
in turn, round after round, the order turning every round (9 rounds by
default).  In a round, each library runs once to warm up, then once more and
is timed (a library whose run takes under 50 ms: five more runs back to back,
and their median counts).  Each time shown is the median over the rounds.
PyTorch runs on one thread, as do the others (NumPy's elementwise kernels are
single-threaded).  The ratio column is the median over the rounds of the time
over PyTorch's time in the same round: a shared machine's speed drifts over
seconds, and neighbours in time see the same machine.  Targets (issue 15):
W1 <= 1.0x; W2 and W4 no slower than before (the verdict column checks W2 <=
1.0x and W4 <= 1.2x at every length, and linear growth), ahead of the peers.
``LEAFKIT_FAST=0 python bench/engine.py`` times leafkit's reference path
instead (the first line says which ran).  Each library's gradients are checked
against PyTorch's (or leafkit's) before any timing is reported.

Run: ``python bench/engine.py`` (``--repeat N``, ``--only w1 w2 w4``).
W3 (the digits MLP) is in ``bench/train.py``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402

TARGETS = {"W1": 1.0, "W2": 1.0, "W4": 1.2}


def timeit(fn, repeat=5):
    """Median of ``repeat`` runs after one warm-up run (first-touch page faults and allocator warm-up aside)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _same(a, b):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return all(
        np.allclose(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), rtol=1e-3, atol=1e-4)
        for x, y in zip(a, b)
    )


def measure(name, builders, repeat):
    """Time one workload on every library, rounds interleaved; returns {library: seconds} (None: failed)."""
    runs, inner = {}, {}
    reference = None
    for lib, build in builders.items():
        try:
            run = build()
            t0 = time.perf_counter()
            out = run()
            first = time.perf_counter() - t0
        except (RecursionError, MemoryError, RuntimeError) as e:  # a peer that cannot run it is reported, not timed
            print(f"    {name}: {lib} failed ({type(e).__name__}: {str(e)[:60]})", file=sys.stderr)
            continue
        if reference is None:
            reference = out
        elif not _same(out, reference):
            raise AssertionError(f"{name}: {lib} computed different gradients")
        runs[lib] = run
        inner[lib] = 5 if first < 0.05 else 1  # a short workload: the median of 5 runs back to back per round
    times = {lib: [] for lib in runs}
    order = list(runs)
    for k in range(repeat):
        for lib in order[k % len(order) :] + order[: k % len(order)]:  # the order turns every round
            times[lib].append(timeit(runs[lib], inner[lib]))
    return times


def paired(times, lib, base="PyTorch"):
    """The median over the rounds of ``lib``'s time over ``base``'s in the same round (the machine's speed
    drifts over seconds; neighbours in time see the same machine)."""
    return statistics.median(a / b for a, b in zip(times[lib], times[base]))


def report(rows, libs):
    head = f"{'workload':36s}" + "".join(f"{lib:>19s}" for lib in libs) + "   target"
    print(head)
    print("-" * len(head))
    for label, key, times in rows:
        t = {lib: statistics.median(ts) for lib, ts in times.items()}
        base = t.get("PyTorch")
        cells = []
        for lib in libs:
            v = t.get(lib)
            if v is None:
                cells.append(f"{'n/a':>19s}")
            elif base:
                cells.append(f"{v * 1e3:11.2f}ms {paired(times, lib):5.2f}x")
            else:
                cells.append(f"{v * 1e3:17.2f}ms")
        target = TARGETS.get(key)
        verdict = ""
        if target and base and "leafkit" in t:
            ratio = paired(times, "leafkit")
            peers_best = min((paired(times, lib) for lib in t if lib not in ("leafkit", "PyTorch")), default=None)
            ok = ratio <= target and (peers_best is None or ratio <= peers_best)
            verdict = f"<= {target}x, ahead of peers: {'ok' if ok else 'MISS'}"
        print(f"{label:36s}" + "".join(cells) + "   " + verdict)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=9, help="rounds per workload (medians and paired ratios)")
    ap.add_argument("--only", nargs="*", choices=("w1", "w2", "w4"), default=("w1", "w2", "w4"))
    args = ap.parse_args(argv)
    libs = peers.backends(torch_threads=1)
    names = list(libs)
    rows = []
    if "w1" in args.only:
        rows.append(
            (
                "W1 2,000-op chain, 1 element",
                "W1",
                measure("W1", {k: (lambda b=b: b.w1(2000)) for k, b in libs.items()}, args.repeat),
            )
        )
    if "w2" in args.only:
        rng = np.random.default_rng(0)
        a = rng.standard_normal(peers.W2_SIZE).astype(np.float32)
        b = rng.standard_normal(peers.W2_SIZE).astype(np.float32)
        rows.append(
            (
                "W2 20 ops on 1e6 float32",
                "W2",
                measure("W2", {k: (lambda lb=lb: lb.w2(a, b)) for k, lb in libs.items()}, args.repeat),
            )
        )
    w4 = {}
    if "w4" in args.only:
        for n in (25_000, 50_000, 100_000):
            t = measure(f"W4 {n}", {k: (lambda b=b, n=n: b.w4(n)) for k, b in libs.items()}, max(3, args.repeat - 2))
            w4[n] = {lib: statistics.median(ts) for lib, ts in t.items()}
            rows.append((f"W4 {n:,}-op chain", "W4", t))
            gc.collect()
    import leafkit
    from leafkit._functions import _fast

    path = "default path (speed-ups on)" if _fast.installed() else "reference path (LEAFKIT_FAST=0)"
    print(
        f"leafkit {leafkit.__version__}, {path}; all libraries on one thread; median of {args.repeat} rounds; "
        f"ratio = the median of time / PyTorch's time in the same round"
    )
    report(rows, names)
    if w4:
        for lib in names:
            if all(lib in w4[n] for n in w4):
                g1, g2 = w4[50_000][lib] / w4[25_000][lib], w4[100_000][lib] / w4[50_000][lib]
                print(f"W4 growth {lib:14s} 50k/25k = {g1:.2f}, 100k/50k = {g2:.2f} (linear: 2.0)")
    from importlib import metadata

    versions = []
    for dist, label in (("torch", "PyTorch"), ("mygrad", "MyGrad"), ("autograd", "HIPS autograd"), ("numpy", "NumPy")):
        try:
            versions.append(f"{label} {metadata.version(dist)}")  # HIPS autograd has no __version__
        except metadata.PackageNotFoundError:
            pass
    print("; ".join(versions))


if __name__ == "__main__":
    main()
