"""Per-sample gradients with ``torch.func``: leafkit beside PyTorch, as ratios from the same run.

The workload of PyTorch's "Per-sample gradients" tutorial on the digits MLP
(64-128-10, ``leafkit.examples.digits``): the gradient of the cross-entropy
loss of each of 64 samples with respect to every parameter, four ways:

* ``vmap(grad(loss), in_dims=(None, 0, 0))`` over ``functional_call(model,
  params, x)``, in leafkit and in PyTorch (``torch.func``);
* hand-batched, in leafkit: every parameter expanded to one copy per sample (a
  stride-0 view made a leaf), the forward pass with batched matrix products,
  one backward pass of the summed loss (what ``vmap(grad)`` computes, written
  out by hand);
* a Python loop over the 64 samples, one ``autograd.grad`` each, in leafkit.

Before timing, the gradients of every way are checked to be equal (to float32
rounding) to PyTorch's.  Every configuration runs in a fresh worker process on
one thread (``OPENBLAS_NUM_THREADS=1``, ``torch.set_num_threads(1)``),
interleaved over the rounds; the figures are medians.  Target (issue 17):
leafkit's ``vmap(grad)`` at most 2.0x PyTorch's.

Run: ``python bench/func.py`` (``--rounds``, ``--calls``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
BATCH = 64
KINDS = ("leafkit vmap(grad)", "PyTorch vmap(grad)", "leafkit hand-batched", "leafkit loop")


def _setup(lib):
    """The model (same initial weights for both libraries), its parameters as a dict, a batch of 64 digits."""
    import leafkit
    from leafkit.examples import digits

    data = digits.load_data(0)
    weights = digits.numpy_weights(digits.make_model(0, leafkit))
    model = digits.make_model(0, lib, weights=weights)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.from_numpy(data["X_train"][:BATCH].copy())
    y = lib.from_numpy(data["y_train"][:BATCH].copy())
    return model, params, x, y


def per_sample_grads(kind):
    """A function of no arguments computing the per-sample gradients ``kind`` names, and the parameter names."""
    if kind.startswith("PyTorch"):
        import torch as lib
        from torch.func import functional_call, grad, vmap
    else:
        import leafkit as lib
        from leafkit.func import functional_call, grad, vmap
    model, params, x, y = _setup(lib)
    names = list(params)
    F = lib.nn.functional

    def loss(p, xs, ys):
        return F.cross_entropy(functional_call(model, p, (xs.unsqueeze(0),)), ys.unsqueeze(0))

    if kind.endswith("vmap(grad)"):
        f = vmap(grad(loss), in_dims=(None, 0, 0))
        return (lambda: f(params, x, y)), names
    if kind == "leafkit hand-batched":
        w1, b1, w2, b2 = (params[k] for k in ("0.weight", "0.bias", "2.weight", "2.bias"))

        def batched():
            # one copy of every parameter per sample: stride-0 views, made leaves
            leaves = [p.expand(BATCH, *p.shape).detach().requires_grad_() for p in (w1, b1, w2, b2)]
            e1, c1, e2, c2 = leaves
            h = (lib.bmm(x.unsqueeze(1), e1.transpose(1, 2)).squeeze(1) + c1).relu()
            out = lib.bmm(h.unsqueeze(1), e2.transpose(1, 2)).squeeze(1) + c2
            total = F.cross_entropy(out, y, reduction="sum")
            return dict(zip(names, lib.autograd.grad(total, leaves)))

        return batched, names
    if kind == "leafkit loop":
        leaves = {k: v.detach().requires_grad_() for k, v in params.items()}

        def loop():
            rows = [lib.autograd.grad(loss(leaves, x[i], y[i]), list(leaves.values())) for i in range(BATCH)]
            return {k: lib.stack([r[j] for r in rows]) for j, k in enumerate(names)}

        return loop, names
    raise ValueError(kind)


def check_equal() -> float:
    """The largest difference of every way's gradients from PyTorch's (all from the same weights and batch)."""
    import numpy as np

    results = {}
    for kind in KINDS:
        f, names = per_sample_grads(kind)
        g = f()
        results[kind] = {k: np.asarray(g[k].detach().tolist()) for k in names}
    want = results["PyTorch vmap(grad)"]
    worst = 0.0
    for kind, got in results.items():
        for k, w in want.items():
            np.testing.assert_allclose(got[k], w, rtol=1e-4, atol=1e-5, err_msg=f"{kind}: {k}")
            worst = max(worst, float(np.abs(got[k] - w).max()))
    return worst


def worker(kind: str, calls: int) -> dict:
    if kind.startswith("PyTorch"):
        import torch

        torch.set_num_threads(1)
    f, _ = per_sample_grads(kind)
    for _ in range(3):
        f()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return {"kind": kind, "median": statistics.median(times)}


def run_worker(kind: str, calls: int) -> dict:
    env = dict(os.environ)
    env.update({v: "1" for v in THREAD_VARS})
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run(
        [sys.executable, __file__, "--worker", kind, str(calls)], capture_output=True, text=True, env=env, timeout=600
    )
    if r.returncode != 0:
        raise RuntimeError(f"worker {kind} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--worker", nargs=2, metavar=("KIND", "CALLS"))
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], int(args.worker[1]))))
        return {}
    worst = check_equal()
    print(
        f"per-sample gradients of the digits MLP (64-128-10), batch {BATCH}: every way equals PyTorch's "
        f"vmap(grad) (largest difference {worst:.1e})"
    )
    per_round = {k: [] for k in KINDS}
    for _ in range(args.rounds):
        for kind in KINDS:
            per_round[kind].append(run_worker(kind, args.calls)["median"])
    ms = {k: statistics.median(v) * 1e3 for k, v in per_round.items()}
    base = ms["PyTorch vmap(grad)"]
    print(f"1 thread each; median of {args.rounds} rounds x {args.calls} calls")
    print(f"    {'way':24s} {'ms/batch':>9s} {'/ PyTorch':>10s}")
    for kind in KINDS:
        print(f"    {kind:24s} {ms[kind]:9.2f} {ms[kind] / base:9.2f}x")
    lk = ms["leafkit vmap(grad)"]
    verdict = "met" if lk / base <= 2.0 else "MISSED"
    print(f"    leafkit vmap(grad) / PyTorch vmap(grad): {lk / base:.2f}x (target <= 2.0x: {verdict})")
    print(f"    leafkit vmap(grad) / leafkit hand-batched: {lk / ms['leafkit hand-batched']:.2f}x")
    print(f"    leafkit loop / leafkit vmap(grad): {ms['leafkit loop'] / lk:.2f}x")
    return ms


if __name__ == "__main__":
    main()
