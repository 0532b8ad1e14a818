"""Training benchmark: leafkit beside PyTorch CPU on the digits MLP, as ratios from the same run.

W3  one epoch of the digits MLP (64-128-10, batch 64, SGD lr 0.1 momentum 0.9,
    23 steps), leafkit, PyTorch and the peers (MyGrad, HIPS autograd: the
    same network, loss and update written in their own style,
    ``bench/peers.py``) from the same initial weights and the same batch
    order; prints the time per epoch, the ratio to PyTorch, and the
    accuracies (which must be equal).  Target (issue 15): leafkit <= 1.0x
    PyTorch on one thread, and ahead of MyGrad, at equal accuracy.
W5  memory over 50 training steps: each step's graph is freed by reference
    counting alone (with ``gc.disable()``, a weak reference to the loss's
    ``grad_fn`` and to every node of the graph dies right after ``del``), the
    cycle collector finds nothing afterwards, and the resident set size does
    not grow from step to step.

Every W3 configuration runs in a fresh worker process, interleaved over
several rounds, so that one library's thread pool cannot slow the other
down, and each is reported with one thread and with its default threading:

* leafkit: NumPy's BLAS on 1 thread (``OPENBLAS_NUM_THREADS=1``), and on its
  default thread count;
* PyTorch: ``torch.set_num_threads(1)``, and its default.

Two more kinds of leafkit worker can join the same interleaved rounds, on one thread:

* ``--reference``: leafkit on its reference path (``LEAFKIT_FAST=0``, no speed-ups);
* ``--also NAME=PATH``: the leafkit of another checkout (``PATH`` goes first on ``PYTHONPATH``), to time a
  change before and after it in one run (``--also before=/tmp/leafkit-main``).

Run: ``python bench/train.py`` (``--rounds``, ``--epochs``; ``--only w3|w5``; ``--reference``, ``--also``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import weakref
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


# -- W3: one worker = one library, one thread setting ----------------------------------------------------
TARGET = 1.0  # issue 15: leafkit <= 1.0x PyTorch on one thread, ahead of MyGrad
EXTRA = {}  # worker name -> (PYTHONPATH to put first, LEAFKIT_FAST value): --reference, --also


def worker(lib_name: str, threads: str, epochs: int, device: str = "cpu") -> dict:
    """Train ``epochs`` + 1 epochs (the first is warm-up) and return the timings and accuracies."""
    import numpy as np

    import leafkit
    from leafkit.examples import digits

    if lib_name in ("MyGrad", "HIPS autograd"):
        return _peer_worker(lib_name, threads, epochs)
    if lib_name == "torch":
        import torch as lib

        if threads == "1":
            lib.set_num_threads(1)
        n_threads = lib.get_num_threads()
    else:  # leafkit, or another leafkit worker (its checkout and LEAFKIT_FAST set by run_worker)
        lib = leafkit
        n_threads = _blas_threads()
    data = digits.load_data(0)
    weights = digits.numpy_weights(digits.make_model(0, leafkit))  # the same start for both libraries
    model = digits.make_model(0, lib, device, weights=weights)
    opt = digits.make_optimizer(model, "sgd", lib=lib)
    t = {k: lib.from_numpy(v).to(device) for k, v in data.items()}
    sync = (lambda: lib.cuda.synchronize()) if device != "cpu" else (lambda: None)
    times = []
    for epoch in range(epochs + 1):
        order = digits.batch_order(len(data["y_train"]), epoch)
        sync()
        t0 = time.perf_counter()
        digits.train_epoch(model, opt, t["X_train"], t["y_train"], order, 64, lib)
        sync()
        times.append(time.perf_counter() - t0)
    return {
        "lib": lib_name,
        "threads": threads,
        "n_threads": n_threads,
        "times": times[1:],
        "test_acc": digits.evaluate(model, t["X_test"], t["y_test"], lib),
        "train_acc": digits.evaluate(model, t["X_train"], t["y_train"], lib),
        "checksum": float(sum(np.abs(v).sum() for v in digits.numpy_weights(model).values())),
    }


def _peer_worker(lib_name: str, threads: str, epochs: int) -> dict:
    """W3 in MyGrad or HIPS autograd: the same weights, batch order, loss and SGD-with-momentum update."""
    sys.path.insert(0, str(ROOT / "bench"))
    import numpy as np
    import peers

    import leafkit
    from leafkit.examples import digits

    data = digits.load_data(0)
    weights = {k: v.astype(np.float32).copy() for k, v in digits.numpy_weights(digits.make_model(0, leafkit)).items()}
    state, times = {}, []
    for epoch in range(epochs + 1):
        order = digits.batch_order(len(data["y_train"]), epoch)
        t0 = time.perf_counter()
        peers.mlp_epoch_numpy_peer(lib_name, weights, data, order, state=state)
        times.append(time.perf_counter() - t0)
    return {
        "lib": lib_name,
        "threads": threads,
        "n_threads": _blas_threads(),
        "times": times[1:],
        "test_acc": peers.mlp_accuracy(weights, data["X_test"], data["y_test"]),
        "train_acc": peers.mlp_accuracy(weights, data["X_train"], data["y_train"]),
        "checksum": float(sum(np.abs(v).sum() for v in weights.values())),
    }


def _blas_threads():
    try:
        from threadpoolctl import threadpool_info

        return max((i.get("num_threads", 0) for i in threadpool_info() if i.get("user_api") == "blas"), default=None)
    except ImportError:
        return None


def run_worker(lib_name: str, threads: str, epochs: int) -> dict:
    env = dict(os.environ)
    for v in THREAD_VARS:
        env.pop(v, None)
    if threads == "1":
        env.update({v: "1" for v in THREAD_VARS})
    path, fast = EXTRA.get(lib_name, (str(ROOT), None))
    env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    if fast is not None:
        env["LEAFKIT_FAST"] = fast
    r = subprocess.run(
        [sys.executable, __file__, "--worker", lib_name, threads, str(epochs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if r.returncode != 0:
        raise RuntimeError(f"worker {lib_name}/{threads} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _installed(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def w3(rounds: int, epochs: int) -> dict:
    libs = ("leafkit", "torch") if _installed("torch") else ("leafkit",)
    peer_libs = tuple(name for name, mod in (("MyGrad", "mygrad"), ("HIPS autograd", "autograd")) if _installed(mod))
    configs = [(lib, th) for th in ("1", "default") for lib in libs] + [(lib, "1") for lib in (*EXTRA, *peer_libs)]
    results = {c: [] for c in configs}
    for _ in range(rounds):
        for c in configs:
            results[c].append(run_worker(*c, epochs))
    summary = {}
    for (lib, th), runs in results.items():
        per_round = [statistics.median(r["times"]) for r in runs]
        summary[(lib, th)] = {
            "median_ms": statistics.median(per_round) * 1e3,
            "best_ms": min(min(r["times"]) for r in runs) * 1e3,
            "test_acc": runs[0]["test_acc"],
            "train_acc": runs[0]["train_acc"],
            "n_threads": runs[0]["n_threads"],
            "accs": sorted({(r["test_acc"], r["train_acc"]) for r in runs}),
        }
    print(f"W3  one epoch of the digits MLP (23 steps of batch 64, SGD), median of {rounds} rounds x {epochs} epochs")
    print(
        "    (leafkit.examples.digits.train runs leafkit on 1 BLAS thread by default; 'default' here is NumPy's "
        "own threading)"
    )
    print(f"    {'library':9s} {'threads':>10s} {'ms/epoch':>9s} {'best':>8s} {'test acc':>9s} {'train acc':>9s}")
    for (lib, th), s in summary.items():
        nt = f"{th} ({s['n_threads']})" if th == "default" and s["n_threads"] else th
        print(
            f"    {lib:9s} {nt:>10s} {s['median_ms']:9.2f} {s['best_ms']:8.2f} {s['test_acc']:9.2%} "
            f"{s['train_acc']:9.2%}"
        )
    if "torch" in libs:
        pairs = [
            ("1 thread each", ("leafkit", "1"), ("torch", "1")),
            ("default threading each", ("leafkit", "default"), ("torch", "default")),
            (
                "best of each",
                min((("leafkit", t) for t in ("1", "default")), key=lambda c: summary[c]["median_ms"]),
                min((("torch", t) for t in ("1", "default")), key=lambda c: summary[c]["median_ms"]),
            ),
        ]
        print(f"    ratio leafkit/PyTorch (target <= {TARGET}x)     median   best")
        for label, a, b in pairs:
            ratio = summary[a]["median_ms"] / summary[b]["median_ms"]
            best = summary[a]["best_ms"] / summary[b]["best_ms"]
            verdict = "meets" if ratio <= TARGET else "MISSES"
            print(
                f"      {label:24s} {'(' + a[1] + ' vs ' + b[1] + ')':20s} {ratio:5.2f}x  {best:5.2f}x  {verdict} the "
                f"target"
            )
        for lib in (*EXTRA, *peer_libs):
            ratio = summary[(lib, "1")]["median_ms"] / summary[("torch", "1")]["median_ms"]
            best = summary[(lib, "1")]["best_ms"] / summary[("torch", "1")]["best_ms"]
            kind = "(peer)" if lib in peer_libs else "(leafkit)"
            print(f"      {lib + ' / PyTorch':24s} {'(1 vs 1)':20s} {ratio:5.2f}x  {best:5.2f}x  {kind}")
        if "MyGrad" in peer_libs:
            ahead = summary[("leafkit", "1")]["median_ms"] < summary[("MyGrad", "1")]["median_ms"]
            print(f"    leafkit ahead of MyGrad (1 thread each, median): {'yes' if ahead else 'NO'}")
        same = summary[("leafkit", "1")]["accs"] == summary[("torch", "1")]["accs"]
        print(
            f"    accuracy: leafkit test {summary[('leafkit', '1')]['test_acc']:.2%} / PyTorch test "
            f"{summary[('torch', '1')]['test_acc']:.2%} after {epochs + 1} epochs from the same weights and batch "
            f"order: {'equal' if same else 'DIFFERENT'}"
        )
    return summary


# -- W5: memory over 50 training steps ----------------------------------------------------------------------
def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: the peak is the best resource offers
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _graph_nodes(fn):
    seen, stack = {}, [fn]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(m for m, _ in n.next_functions if m is not None)
    return list(seen.values())


def w5(steps: int = 50, device: str = "cpu") -> dict:
    import tracemalloc

    import leafkit
    from leafkit.examples import digits

    F = leafkit.nn.functional

    data = digits.load_data(0)
    model = digits.make_model(0, device=device)
    opt = digits.make_optimizer(model, "sgd")
    X = leafkit.from_numpy(data["X_train"]).to(device)
    y = leafkit.from_numpy(data["y_train"]).to(device)
    n = len(data["y_train"])
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    rss, traced, alive_after_del, nodes_per_step = [], [], [], []
    tracemalloc.start()
    try:
        for step in range(steps):
            start = (step * 64) % (n - 64)
            xb, yb = X[start : start + 64], y[start : start + 64]
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            refs = [weakref.ref(node) for node in _graph_nodes(loss.grad_fn)]
            root = weakref.ref(loss.grad_fn)
            loss.backward()
            opt.step()
            del loss, xb, yb
            alive_after_del.append(sum(r() is not None for r in refs) + (root() is not None))
            nodes_per_step.append(len(refs))
            rss.append(_rss_bytes())
            traced.append(tracemalloc.get_traced_memory()[0])
        unreachable = gc.collect()
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()
    warm = min(10, steps - 1)
    res = {
        "device": device,
        "steps": steps,
        "nodes": nodes_per_step[0],
        "max_alive_after_del": max(alive_after_del),
        "unreachable_found_by_gc": unreachable,
        "rss_first": rss[0],
        "rss_warm": rss[warm],
        "rss_last": rss[-1],
        "rss_growth_after_warmup": rss[-1] - rss[warm],
        "rss_max_step_growth": max(b - a for a, b in zip(rss[warm:], rss[warm + 1 :])) if steps > warm + 1 else 0,
        "traced_warm": traced[warm],
        "traced_last": traced[-1],
    }
    mib = 1 / 2**20
    print(f"W5  memory over {steps} training steps on {device} (gc disabled during the run)")
    print(
        f"    graph per step: {res['nodes']} nodes (AccumulateGrad included); nodes still alive right after "
        f"`del loss`: {res['max_alive_after_del']} (every step) -> freed by reference counting alone"
    )
    print(f"    gc.collect() after the run found {unreachable} unreachable objects (0: no reference cycles)")
    print(
        f"    RSS: step 1 {res['rss_first'] * mib:.2f} MiB, step {warm + 1} {res['rss_warm'] * mib:.2f} MiB, "
        f"step {steps} {res['rss_last'] * mib:.2f} MiB; growth after step {warm + 1}: "
        f"{res['rss_growth_after_warmup'] / 1024:+.0f} KiB"
    )
    print(
        f"    traced Python/NumPy memory: step {warm + 1} {res['traced_warm'] / 1024:.0f} KiB, step {steps} "
        f"{res['traced_last'] / 1024:.0f} KiB ({(res['traced_last'] - res['traced_warm']) / 1024:+.0f} KiB: "
        "CPython's tuple/list free lists filling up, a bounded warm-up; no tensor or node survives a step)"
    )
    ok = res["max_alive_after_del"] == 0 and unreachable == 0 and res["rss_growth_after_warmup"] < 1 << 20
    print(f"    {'PASS' if ok else 'FAIL'}: graphs freed by refcounting, no cycles, RSS flat (< 1 MiB growth)")
    res["ok"] = ok
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="W3: worker rounds per configuration")
    ap.add_argument("--epochs", type=int, default=10, help="W3: timed epochs per worker (after one warm-up epoch)")
    ap.add_argument("--steps", type=int, default=50, help="W5: training steps")
    ap.add_argument("--only", choices=("w3", "w5"))
    ap.add_argument("--reference", action="store_true", help="W3: leafkit with LEAFKIT_FAST=0 too")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH", help="W3: another checkout's leafkit")
    ap.add_argument("--worker", nargs=3, metavar=("LIB", "THREADS", "EPOCHS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.reference:
        EXTRA["leafkit (LEAFKIT_FAST=0)"] = (str(ROOT), "0")
    for spec in args.also:
        name, _, path = spec.partition("=")
        EXTRA[f"leafkit ({name})"] = (os.path.abspath(path), None)
    if args.worker:
        lib_name, threads, epochs = args.worker
        print(json.dumps(worker(lib_name, threads, int(epochs))))
        return
    import leafkit

    print(f"leafkit {leafkit.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    if args.only in (None, "w3"):
        w3(args.rounds, args.epochs)
    if args.only in (None, "w5"):
        for device in ("cpu", "cuda"):
            w5(args.steps, device)


if __name__ == "__main__":
    main()
