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

Every W3 configuration runs in its own worker process, so that one library's thread pool cannot slow
another down, and each is reported with one thread and with its default threading:

* leafkit: NumPy's BLAS on 1 thread (``OPENBLAS_NUM_THREADS=1``), and on its
  default thread count;
* PyTorch: ``torch.set_num_threads(1)``, and its default.

The workers stay up for the whole run and train in turn, one epoch each, round after round (the order
turning every round), so every library's epoch ``k`` runs within a fraction of a second of the others'.
A shared machine's speed drifts over seconds; the ratios are therefore taken epoch by epoch, between
neighbours (the median of the paired ratios), as well as between the medians.

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


class Trainer:
    """One library's W3 in a worker: ``epoch(k)`` trains epoch ``k`` (its own batch order) and returns the
    seconds it took; ``report()`` the accuracies after the epochs run so far."""

    def __init__(self, lib_name: str, threads: str, device: str = "cpu"):
        import numpy as np

        import leafkit
        from leafkit.examples import digits

        self.lib_name, self.threads, self.np, self.digits = lib_name, threads, np, digits
        self.data = digits.load_data(0)
        start = digits.numpy_weights(digits.make_model(0, leafkit))  # the same start for every library
        if lib_name in ("MyGrad", "HIPS autograd"):
            sys.path.insert(0, str(ROOT / "bench"))
            import peers

            self.peers = peers
            self.weights = {k: v.astype(np.float32).copy() for k, v in start.items()}
            self.state: dict = {}
            self.n_threads = _blas_threads()
            return
        if lib_name == "torch":
            import torch as lib

            if threads == "1":
                lib.set_num_threads(1)
            self.n_threads = lib.get_num_threads()
        else:  # leafkit, or another leafkit worker (its checkout and LEAFKIT_FAST set by Worker)
            lib = leafkit
            self.n_threads = _blas_threads()
        self.lib = lib
        self.model = digits.make_model(0, lib, device, weights=start)
        self.opt = digits.make_optimizer(self.model, "sgd", lib=lib)
        self.t = {k: lib.from_numpy(v).to(device) for k, v in self.data.items()}
        self.sync = (lambda: lib.cuda.synchronize()) if device != "cpu" else (lambda: None)

    def epoch(self, k: int) -> float:
        order = self.digits.batch_order(len(self.data["y_train"]), k)
        if self.lib_name in ("MyGrad", "HIPS autograd"):
            t0 = time.perf_counter()
            self.peers.mlp_epoch_numpy_peer(self.lib_name, self.weights, self.data, order, state=self.state)
            return time.perf_counter() - t0
        self.sync()
        t0 = time.perf_counter()
        self.digits.train_epoch(self.model, self.opt, self.t["X_train"], self.t["y_train"], order, 64, self.lib)
        self.sync()
        return time.perf_counter() - t0

    def report(self) -> dict:
        np, d = self.np, self.data
        if self.lib_name in ("MyGrad", "HIPS autograd"):
            w = self.weights
            accs = (
                self.peers.mlp_accuracy(w, d["X_test"], d["y_test"]),
                self.peers.mlp_accuracy(w, d["X_train"], d["y_train"]),
            )
        else:
            w = self.digits.numpy_weights(self.model)
            accs = tuple(
                self.digits.evaluate(self.model, self.t[f"X_{s}"], self.t[f"y_{s}"], self.lib)
                for s in ("test", "train")
            )
        return {
            "n_threads": self.n_threads,
            "test_acc": accs[0],
            "train_acc": accs[1],
            "checksum": float(sum(np.abs(v).sum() for v in w.values())),
        }


def serve(lib_name: str, threads: str) -> None:
    """The worker's loop: a :class:`Trainer`, then one line in, one JSON line out (``epoch K``, ``report``)."""
    trainer = Trainer(lib_name, threads)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd, *arg = line.split()
        if cmd == "epoch":
            print(json.dumps({"seconds": trainer.epoch(int(arg[0]))}), flush=True)
        elif cmd == "report":
            print(json.dumps(trainer.report()), flush=True)
        else:
            return


def _blas_threads():
    try:
        from threadpoolctl import threadpool_info

        return max((i.get("num_threads", 0) for i in threadpool_info() if i.get("user_api") == "blas"), default=None)
    except ImportError:
        return None


class Worker:
    """A worker process for one configuration ``(library, threads)``, asked for one epoch at a time."""

    def __init__(self, lib_name: str, threads: str):
        env = dict(os.environ)
        for v in THREAD_VARS:
            env.pop(v, None)
        if threads == "1":
            env.update({v: "1" for v in THREAD_VARS})
        path, fast = EXTRA.get(lib_name, (str(ROOT), None))
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
        if fast is not None:
            env["LEAFKIT_FAST"] = fast
        self.name = f"{lib_name}/{threads}"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", lib_name, threads],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.ask(None)  # its "ready"

    def ask(self, command: str | None) -> dict:
        if command is not None:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.name} failed (exit code {self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def _installed(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def w3(rounds: int, epochs: int) -> dict:
    """W3: every configuration trains ``epochs`` epochs per round after a warm-up epoch, ``rounds`` rounds, the
    workers taking turns epoch by epoch; prints the table and the ratios, returns the summary."""
    libs = ("leafkit", "torch") if _installed("torch") else ("leafkit",)
    peer_libs = tuple(name for name, mod in (("MyGrad", "mygrad"), ("HIPS autograd", "autograd")) if _installed(mod))
    configs = [(lib, th) for th in ("1", "default") for lib in libs] + [(lib, "1") for lib in (*EXTRA, *peer_libs)]
    workers = {}
    try:
        for c in configs:
            workers[c] = Worker(*c)
        for w in workers.values():
            w.ask("epoch 0")  # warm-up
        times = {c: [] for c in configs}
        for k in range(1, rounds * epochs + 1):
            turn = configs[k % len(configs) :] + configs[: k % len(configs)]
            for c in turn:
                time.sleep(0.01)  # a thread pool that spins after its work has stopped before the next one starts
                times[c].append(workers[c].ask(f"epoch {k}")["seconds"])
        reports = {c: workers[c].ask("report") for c in configs}
    finally:
        for w in workers.values():
            w.close()
    summary = {}
    for c in configs:
        ts = times[c]
        summary[c] = {
            "times": ts,
            "median_ms": statistics.median(ts) * 1e3,
            "best_ms": min(ts) * 1e3,
            **reports[c],
        }
    _print_w3(summary, libs, peer_libs, rounds, epochs)
    return summary


def _paired(summary, a, b) -> float:
    """The median over the epochs of ``a``'s time over ``b``'s time in the same round."""
    return statistics.median(x / y for x, y in zip(summary[a]["times"], summary[b]["times"]))


def _print_w3(summary, libs, peer_libs, rounds, epochs) -> None:
    n = rounds * epochs
    print(f"W3  one epoch of the digits MLP (23 steps of batch 64, SGD), {n} epochs each, the libraries taking turns")
    print(
        "    (leafkit.examples.digits.train runs leafkit on 1 BLAS thread by default; 'default' here is NumPy's "
        "own threading)"
    )
    print(f"    {'library':13s} {'threads':>10s} {'ms/epoch':>9s} {'best':>8s} {'test acc':>9s} {'train acc':>9s}")
    for (lib, th), s in summary.items():
        nt = f"{th} ({s['n_threads']})" if th == "default" and s["n_threads"] else th
        print(
            f"    {lib:13s} {nt:>10s} {s['median_ms']:9.2f} {s['best_ms']:8.2f} {s['test_acc']:9.2%} "
            f"{s['train_acc']:9.2%}"
        )
    if "torch" not in libs:
        return
    lk, pt = ("leafkit", "1"), ("torch", "1")
    pairs = [
        ("1 thread each", lk, pt),
        ("default threading each", ("leafkit", "default"), ("torch", "default")),
        (
            "best of each",
            min((("leafkit", t) for t in ("1", "default")), key=lambda c: summary[c]["median_ms"]),
            min((("torch", t) for t in ("1", "default")), key=lambda c: summary[c]["median_ms"]),
        ),
    ]
    print(f"    ratio leafkit/PyTorch (target <= {TARGET}x)       paired  medians  best")
    for label, a, b in pairs:
        ratio = _paired(summary, a, b)
        medians = summary[a]["median_ms"] / summary[b]["median_ms"]
        best = summary[a]["best_ms"] / summary[b]["best_ms"]
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(
            f"      {label:24s} {'(' + a[1] + ' vs ' + b[1] + ')':20s} {ratio:5.2f}x  {medians:5.2f}x  {best:5.2f}x  "
            f"{verdict} the target"
        )
    for lib in (*EXTRA, *peer_libs):
        c = (lib, "1")
        kind = "(peer)" if lib in peer_libs else "(leafkit)"
        print(
            f"      {lib + ' / PyTorch':24s} {'(1 vs 1)':20s} {_paired(summary, c, pt):5.2f}x  "
            f"{summary[c]['median_ms'] / summary[pt]['median_ms']:5.2f}x  "
            f"{summary[c]['best_ms'] / summary[pt]['best_ms']:5.2f}x  {kind}"
        )
    if "MyGrad" in peer_libs:
        mg = ("MyGrad", "1")
        ratio = _paired(summary, lk, mg)
        ahead = ratio < 1 and summary[lk]["median_ms"] < summary[mg]["median_ms"]
        print(
            f"    leafkit / MyGrad (1 thread each): paired {ratio:.2f}x, medians "
            f"{summary[lk]['median_ms'] / summary[mg]['median_ms']:.2f}x: ahead {'yes' if ahead else 'NO'}"
        )
    same = (summary[lk]["test_acc"], summary[lk]["train_acc"]) == (summary[pt]["test_acc"], summary[pt]["train_acc"])
    print(
        f"    accuracy: leafkit test {summary[lk]['test_acc']:.2%} / PyTorch test {summary[pt]['test_acc']:.2%} after "
        f"{n + 1} epochs from the same weights and batch order: {'equal' if same else 'DIFFERENT'}"
    )


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
    ap.add_argument("--rounds", type=int, default=3, help="W3: rounds of --epochs timed epochs (after one warm-up)")
    ap.add_argument("--epochs", type=int, default=10, help="W3: timed epochs per round, the libraries taking turns")
    ap.add_argument("--steps", type=int, default=50, help="W5: training steps")
    ap.add_argument("--only", choices=("w3", "w5"))
    ap.add_argument("--reference", action="store_true", help="W3: leafkit with LEAFKIT_FAST=0 too")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH", help="W3: another checkout's leafkit")
    ap.add_argument("--serve", nargs=2, metavar=("LIB", "THREADS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.reference:
        EXTRA["leafkit (LEAFKIT_FAST=0)"] = (str(ROOT), "0")
    for spec in args.also:
        name, _, path = spec.partition("=")
        EXTRA[f"leafkit ({name})"] = (os.path.abspath(path), None)
    if args.serve:
        serve(*args.serve)
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
