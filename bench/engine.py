"""Engine benchmark: leafkit beside PyTorch CPU, as ratios from the same run.

W1  forward+backward of a 2,000-op elementwise chain on a 1-element tensor (per-op overhead)
W2  20 elementwise ops on 1,000,000-element float32 tensors, forward+backward
W4  backward of chains of 25,000 / 50,000 / 100,000 ops (time must grow linearly)

Targets (issue #2): W1 within 3x of PyTorch, W2 within 1.5x, W4 linear
(100k time at most 2.3x the 50k time).  Run: ``python bench/engine.py``.
Each figure is the median of several repeats; PyTorch runs with its default
thread count and, for reference, with one thread.
"""
from __future__ import annotations

import argparse
import statistics
import time

import leafkit

try:
    import torch
except ImportError:  # the table then shows leafkit alone
    torch = None


def timeit(fn, repeat=5):
    """Median of ``repeat`` runs after one warm-up run (first-touch page faults and allocator warm-up aside)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def w1(lib, n=2000):
    x = lib.tensor([1.0], requires_grad=True)

    def run():
        y = x
        for i in range(n // 4):
            y = y * 1.0001
            y = y + 0.5
            y = y.tanh()
            y = y - 0.25
        y.sum().backward()
    return run


def elementwise_chain(a, b):
    """W2's work: 20 elementwise ops (mul, add, tanh, sub, five times), then backward."""
    y = a
    for _ in range(5):
        y = y * b
        y = y + a
        y = y.tanh()
        y = y - b
    y.sum().backward()


def w2(lib, n=1_000_000):
    if lib is torch:
        a = torch.randn(n, requires_grad=True)
        b = torch.randn(n, requires_grad=True)
    else:
        lib.manual_seed(0)
        a = lib.randn(n, requires_grad=True)
        b = lib.randn(n, requires_grad=True)

    return lambda: elementwise_chain(a, b)


def w4(lib, n):
    x = lib.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0
    s = y.sum()
    return lambda: s.backward(retain_graph=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rows = []

    def row(name, lk_s, th_s, target):
        ratio = lk_s / th_s if th_s else float("nan")
        rows.append((name, lk_s, th_s, ratio, target))

    th = lambda f: timeit(f, args.repeat) if torch is not None else None  # noqa: E731
    row("W1 2,000-op chain, 1 element, fwd+bwd", timeit(w1(leafkit), args.repeat), th(w1(torch)) if torch else None,
        "<= 3x")
    row("W2 20 ops on 1e6 float32, fwd+bwd", timeit(w2(leafkit), args.repeat), th(w2(torch)) if torch else None,
        "<= 1.5x")
    if torch is not None:
        nthreads = torch.get_num_threads()
        torch.set_num_threads(1)
        row("W2 (PyTorch on 1 thread)", timeit(w2(leafkit), args.repeat), th(w2(torch)), "info")
        torch.set_num_threads(nthreads)
    w4_times = {}
    for n in (25_000, 50_000, 100_000):
        lk_t = timeit(w4(leafkit, n), 3)
        th_t = timeit(w4(torch, n), 3) if torch else None
        w4_times[n] = lk_t
        row(f"W4 backward of a {n:,}-op chain", lk_t, th_t, "linear")

    print(f"{'workload':44s} {'leafkit':>10s} {'PyTorch':>10s} {'ratio':>7s}  target")
    for name, a, b, r, target in rows:
        bs = f"{b * 1e3:8.2f}ms" if b else "       n/a"
        rs = f"{r:6.2f}x" if b else "    n/a"
        verdict = ""
        if b and target.startswith("<="):
            verdict = "  ok" if r <= float(target[2:].strip().rstrip("x")) else "  MISS"
        print(f"{name:44s} {a * 1e3:8.2f}ms {bs} {rs}  {target}{verdict}")
    growth = w4_times[100_000] / w4_times[50_000]
    print(f"W4 growth: 100k/50k = {growth:.2f} (linear is 2.0; target <= 2.3: {'ok' if growth <= 2.3 else 'MISS'}), "
          f"50k/25k = {w4_times[50_000] / w4_times[25_000]:.2f}")
    if torch is not None:
        print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads; leafkit {leafkit.__version__}")


if __name__ == "__main__":
    main()
