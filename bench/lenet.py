"""LeNet-5 benchmark: one forward and backward pass of a batch, leafkit beside PyTorch and MyGrad from the same run.

W6  LeNet-5 on a batch of 64 images of 1x28x28: conv 1->6 (5x5, padding 2),
    ReLU, 2x2 max pooling, conv 6->16 (5x5), ReLU, 2x2 max pooling, flatten,
    linear 400->120->84->10 with ReLU between, cross entropy; forward and
    backward, gradients of every parameter.

Every library starts from the same weights (leafkit's initialisation,
copied) and the same batch, and its gradients are checked against
PyTorch's before any timing is reported.  The libraries run in turn, round
after round; each figure is the median over the rounds (5 by default) of
the median of ``--steps`` steps.  Everything runs on one thread: PyTorch
with ``torch.set_num_threads(1)``, NumPy's BLAS (leafkit's and MyGrad's
matrix products) through ``threadpoolctl``.  The ratio column divides by
PyTorch's time.

leafkit's convolution is one matrix product per call (im2col on a strided
view, col2im for the input gradient); MyGrad's ``conv_nd`` is a
``tensordot`` over a strided view of the windows, and its ``max_pool`` a
reduction over them.

Run: ``python bench/lenet.py`` (``--repeat N``, ``--steps N``, ``--batch N``,
``--profile`` for leafkit's cProfile table).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import leafkit  # noqa: E402

NAMES = ["0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias", "9.weight", "9.bias", "11.weight", "11.bias"]


def lenet(nn):
    """LeNet-5 for 28x28 inputs, as an ``nn.Sequential`` of leafkit or PyTorch (the state_dict names are shared)."""
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(400, 120),
        nn.ReLU(),
        nn.Linear(120, 84),
        nn.ReLU(),
        nn.Linear(84, 10),
    )


def data(batch, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, batch)


def weights(seed=0):
    leafkit.manual_seed(seed)
    return {k: v.numpy().copy() for k, v in lenet(leafkit.nn).state_dict().items()}


def tape_step(lib, w, X, y):
    """leafkit or PyTorch: one step returns the gradients in ``NAMES`` order."""
    model = lenet(lib.nn)
    model.load_state_dict({k: lib.tensor(v) for k, v in w.items()})
    params = dict(model.named_parameters())
    xb, yb = lib.tensor(X), lib.tensor(y)
    F = lib.nn.functional

    def run():
        for p in params.values():
            p.grad = None
        F.cross_entropy(model(xb), yb).backward()
        return [params[k].grad.numpy() for k in NAMES]

    return run


def mygrad_step(w, X, y):
    import mygrad as mg
    from mygrad.nnet.activations import relu
    from mygrad.nnet.layers import conv_nd, max_pool
    from mygrad.nnet.losses import softmax_crossentropy

    p = {k: mg.tensor(v) for k, v in w.items()}

    def run():
        for t in p.values():
            t.null_grad()
        h = conv_nd(X, p["0.weight"], stride=1, padding=2) + p["0.bias"].reshape(1, -1, 1, 1)
        h = max_pool(relu(h), (2, 2), 2)
        h = conv_nd(h, p["3.weight"], stride=1) + p["3.bias"].reshape(1, -1, 1, 1)
        h = max_pool(relu(h), (2, 2), 2).reshape(len(X), -1)
        h = relu(mg.matmul(h, p["7.weight"].T) + p["7.bias"])
        h = relu(mg.matmul(h, p["9.weight"].T) + p["9.bias"])
        logits = mg.matmul(h, p["11.weight"].T) + p["11.bias"]
        softmax_crossentropy(logits, y).backward()
        return [np.asarray(p[k].grad) for k in NAMES]

    return run


def builders(batch):
    X, y = data(batch)
    w = weights()
    out = {"leafkit": lambda: tape_step(leafkit, w, X, y)}
    try:
        import torch

        torch.set_num_threads(1)
        out["PyTorch"] = lambda: tape_step(torch, w, X, y)
    except ImportError:
        pass
    try:
        import mygrad  # noqa: F401

        out["MyGrad"] = lambda: mygrad_step(w, X, y)
    except ImportError:
        pass
    return out


def _median_step(run, steps):
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(batch, repeat, steps):
    runs, reference = {}, None
    for lib, build in builders(batch).items():
        run = build()
        grads = run()  # warm-up, and the check
        if lib == "PyTorch":
            reference = grads
        runs[lib] = (run, grads)
    if reference is not None:
        for lib, (_, grads) in runs.items():
            for name, g, r in zip(NAMES, grads, reference):
                if not np.allclose(g, r, rtol=1e-3, atol=1e-5):
                    raise AssertionError(f"{lib} computed another gradient for {name}")
    times = {lib: [] for lib in runs}
    for _ in range(repeat):
        for lib, (run, _) in runs.items():
            times[lib].append(_median_step(run, steps))
    return {lib: statistics.median(ts) for lib, ts in times.items()}


def profile(batch, steps):
    X, y = data(batch)
    run = tape_step(leafkit, weights(), X, y)
    run()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        run()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="rounds (the median is reported)")
    ap.add_argument("--steps", type=int, default=5, help="steps per round (their median is the round's time)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--profile", action="store_true", help="print leafkit's cProfile table instead")
    args = ap.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits

        limits = threadpool_limits(limits=1, user_api="blas")
    except ImportError:
        limits = None
        print("threadpoolctl is not installed: NumPy's BLAS runs on its default threads", file=sys.stderr)
    if args.profile:
        profile(args.batch, args.steps * args.repeat)
        return
    t = measure(args.batch, args.repeat, args.steps)
    base = t.get("PyTorch")
    print(
        f"W6 LeNet-5, batch {args.batch} of 1x28x28, forward+backward; one thread each; median of {args.repeat} "
        f"rounds of {args.steps} steps; ratio = time / PyTorch's time"
    )
    for lib, v in t.items():
        ratio = f"{v / base:6.2f}x" if base else ""
        print(f"  {lib:10s} {v * 1e3:9.2f} ms {ratio}")
    from importlib import metadata

    versions = [f"leafkit {leafkit.__version__}"]
    for dist, label in (("torch", "PyTorch"), ("mygrad", "MyGrad"), ("numpy", "NumPy")):
        try:
            versions.append(f"{label} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass
    print("; ".join(versions))
    if limits is not None:
        limits.restore_original_limits()


if __name__ == "__main__":
    main()
