"""One command for a GPU machine: leafkit's cuda device checked against its cpu, and W2/W3 timed on both.

    python bench/gpu_check.py            # parity, then W2 and W3 on cpu and on the GPU
    python bench/gpu_check.py --quick    # fewer repeats

1. Parity: a set of programs (elementwise ops, reductions, matmul, ``linear``,
   losses, softmax, indexing, views, in-place, SGD and Adam steps, and the
   digits MLP) runs on ``cpu`` and on ``cuda``; results and gradients must
   agree.  The source articles' experiments (``tests/cases.py``) run on
   ``cuda`` and must print what PyTorch printed (``tests/test_seed_cases.py``).
   Without a GPU the parity runs on the simulated cuda device and says so.
2. W2 (20 elementwise ops on 1e6-element float32 tensors, forward+backward)
   and W3 (one epoch of the digits MLP, batch 64, SGD) timed on cpu and cuda,
   with PyTorch beside them where it is installed (and on its GPU where it
   has one).  Without a GPU the GPU rows say "no GPU, skipped".

Exit status 0 when every check passed.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import leafkit  # noqa: E402
from leafkit.examples import digits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import timeit  # noqa: E402  (the same timing as bench/engine.py)
from peers import elementwise_chain  # noqa: E402  (the same W2 work)

try:
    import torch
except ImportError:  # PyTorch only adds reference rows
    torch = None

F = leafkit.nn.functional
GPU = leafkit.cuda.is_available()


# -- parity programs: f(lib, device) -> dict of NumPy arrays ----------------------------------------------
def _inputs(dev, *shapes, seed=0, grad=True):
    rng = np.random.default_rng(seed)
    return [leafkit.tensor(rng.standard_normal(s).astype(np.float32), device=dev, requires_grad=grad) for s in shapes]


def _out(**tensors):
    return {
        k: (v.detach().cpu().numpy().copy() if isinstance(v, leafkit.Tensor) else np.asarray(v))
        for k, v in tensors.items()
    }


def p_elementwise(dev):
    a, b = _inputs(dev, (50, 40), (50, 40))
    y = ((a * b + a / (b.abs() + 1) - b**2).tanh().sigmoid() * a.relu() + (a.clamp(-0.5, 0.5) - 1).exp()).sqrt()
    y.sum().backward()
    return _out(y=y, ga=a.grad, gb=b.grad)


def p_broadcast_reductions(dev):
    a, b, c = _inputs(dev, (4, 5, 6), (5, 1), (6,))
    y = a * b + c
    z = y.sum(dim=1) + y.mean(dim=(0, 2), keepdim=True).sum() + y.max() + y.min(dim=2).values.sum()
    z.sum().backward()
    return _out(z=z, ga=a.grad, gb=b.grad, gc=c.grad, argmax=y.argmax(dim=1))


def p_matmul(dev):
    a, b, v, w = _inputs(dev, (7, 5), (5, 3), (5,), (3,))
    bm1, bm2 = _inputs(dev, (2, 4, 5), (2, 5, 3), seed=1)
    y = (a @ b).sum() + (a @ v).sum() + (v @ b @ w) + (bm1 @ bm2).sum() + a.mm(b).t().sum()
    y.backward()
    return _out(y=y, ga=a.grad, gb=b.grad, gv=v.grad, gw=w.grad, g1=bm1.grad, g2=bm2.grad)


def p_linear_losses(dev):
    x, W, bias = _inputs(dev, (8, 6), (4, 6), (4,))
    t = leafkit.tensor([0, 1, 2, 3, 0, 1, 2, 3], device=dev)
    z = F.linear(x, W, bias)
    loss = (
        F.cross_entropy(z, t)
        + F.nll_loss(F.log_softmax(z, 1), t, reduction="sum")
        + F.mse_loss(F.softmax(z, 1), F.sigmoid(z).detach())
        + F.cross_entropy(z, t, weight=leafkit.tensor([1.0, 2.0, 0.5, 1.0], device=dev), ignore_index=1)
    )
    loss.backward()
    return _out(loss=loss, gx=x.grad, gW=W.grad, gb=bias.grad)


def p_huge_logits(dev):
    (x,) = _inputs(dev, (3, 4))
    big = x * 1e4
    loss = F.cross_entropy(big, leafkit.tensor([0, 1, 3], device=dev))
    loss.backward()
    return _out(loss=loss, g=x.grad, finite=np.isfinite(x.grad.cpu().numpy()).all())


def p_indexing_views(dev):
    a, b = _inputs(dev, (6, 5), (5,))
    idx = leafkit.tensor([0, 2, 2, 5], device=dev)
    y = a[1:4, ::2].sum() + a[idx].sum() + a[:, 1].sum() * 2 + a.view(30)[3:9].sum() + a.t().reshape(5, 6)[0].sum()
    y = y + (a[a > 0] ** 2).sum() + leafkit.cat([a[0], b]).sum() + (leafkit.stack([a[1], b]) ** 2).sum()
    y.backward()
    return _out(y=y, ga=a.grad, gb=b.grad)


def p_inplace_and_devices(dev):
    (x,) = _inputs(dev, (5,))
    y = x * 2
    y.add_(1).mul_(3)
    c = y.cpu()  # crosses to the cpu and back
    z = (c.to(dev) * c.to(dev)).sum() + y.sum()
    z.backward()
    with leafkit.no_grad():
        w = x.detach().clone()
        w.zero_().add_(5)
    return _out(z=z, gx=x.grad, w=w)


def p_optimizers(dev):
    out = {}
    for name, kw in (
        ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2)),
        ("Adam", dict(lr=0.01, amsgrad=True)),
    ):
        leafkit.manual_seed(0)
        model = leafkit.nn.Sequential(leafkit.nn.Linear(6, 5), leafkit.nn.Tanh(), leafkit.nn.Linear(5, 3)).to(dev)
        opt = getattr(leafkit.optim, name)(model.parameters(), **kw)
        (x,) = _inputs(dev, (10, 6), grad=False)
        t = leafkit.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0], device=dev)
        for _ in range(5):
            opt.zero_grad()
            F.cross_entropy(model(x), t).backward()
            opt.step()
        for k, v in model.state_dict().items():
            out[f"{name}.{k}"] = v.cpu().numpy().copy()
    return out


def p_digits(dev):
    h = digits.train(digits.make_model(0, device=dev), epochs=3, data=digits.load_data(0))
    return {"loss": np.array(h["loss"]), "test_acc": np.array(h["test_acc"])}


def p_convolution_pooling(dev):
    """Convolutions (plain, grouped/strided/dilated, 'same', transposed), padding and the three poolings, with
    first and second derivatives (the im2col/col2im kernels, the max-pool scatter and the pooling windows)."""
    x, w1, b1, w2, wt = _inputs(dev, (2, 4, 9, 8), (6, 2, 3, 3), (6,), (5, 6, 2, 2), (5, 3, 3, 3))
    h = F.conv2d(x, w1, b1, stride=2, padding=1, dilation=2, groups=2).relu()
    h = F.conv2d(F.pad(h, (1, 0, 0, 1)), w2, padding="same")
    m, idx = F.max_pool2d(h, 3, stride=1, padding=1, ceil_mode=True, return_indices=True)
    y = F.conv_transpose2d(m, wt, stride=2, output_padding=1)
    z = F.avg_pool2d(y, 3, 2, 1, count_include_pad=False).sum() + F.adaptive_avg_pool2d(y, (3, 2)).pow(2).sum()
    z = z + F.max_pool1d(y[0, 0], 2).sum() + F.conv1d(y[:, :, 0], wt[:, :, 0]).sum()
    gx, gw = leafkit.autograd.grad(z, [x, w1], create_graph=True)
    ((gx * gx).sum() + (gw * gw).sum()).backward()
    return _out(z=z, idx=idx, gx=gx, gw=gw, x2=x.grad, w12=w1.grad, b12=b1.grad, w22=w2.grad, wt2=wt.grad)


PROGRAMS = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("p_")}


def compare(a: dict, b: dict, rtol=1e-4, atol=1e-5):
    worst = 0.0
    for k in a:
        x, y = np.asarray(a[k], dtype=np.float64), np.asarray(b[k], dtype=np.float64)
        if x.shape != y.shape:
            return False, f"{k}: shapes {x.shape} vs {y.shape}"
        if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
            return False, f"{k}: max |diff| {np.nanmax(np.abs(x - y)):.3g}"
        if x.size:
            worst = max(worst, float(np.nanmax(np.abs(x - y))))
    return True, f"max |diff| {worst:.2g}"


def parity() -> list:
    where = "the GPU (CuPy)" if GPU else "the simulated cuda device (no GPU)"
    print(f"\n== Parity: cuda vs cpu, on {where}")
    failures = []
    for name, fn in PROGRAMS.items():
        try:
            ok, msg = compare(fn("cpu"), fn("cuda"))
        except Exception as e:  # noqa: BLE001 - a crash is a failure to report, not to hide
            ok, msg = False, f"{type(e).__name__}: {e}"
            traceback.print_exc(limit=3)
        print(f"  {'PASS' if ok else 'FAIL'}  {name:22s} {msg}")
        if not ok:
            failures.append(f"parity {name}: {msg}")
    try:
        sys.path.insert(0, str(ROOT / "tests"))
        from cases import SEED_CASES, run_case
        from test_seed_cases import EXPECTED
    except ImportError as e:
        print(f"  skip  the articles' cases (tests/ not found: {e})")
        return failures
    for name, fn in SEED_CASES.items():
        try:
            got = run_case(leafkit, fn, dev=lambda t: t.cuda())
            ok = got == EXPECTED[name]
            msg = "as PyTorch printed" if ok else next(f"{g} != {w}" for g, w in zip(got, EXPECTED[name]) if g != w)
        except Exception as e:  # noqa: BLE001
            ok, msg = False, f"{type(e).__name__}: {e}"
        print(f"  {'PASS' if ok else 'FAIL'}  {name:30s} {msg}")
        if not ok:
            failures.append(f"case {name}: {msg}")
    return failures


# -- timings ----------------------------------------------------------------------------------------------
def _sync(lib, dev):
    if dev != "cpu":
        lib.cuda.synchronize()


def w2(lib, dev, n=1_000_000):
    """20 elementwise ops on 1e6-element float32 tensors, forward + backward (bench/engine.py's W2, on ``dev``)."""
    g = np.random.default_rng(0)
    a = lib.tensor(g.standard_normal(n).astype(np.float32), device=dev, requires_grad=True)
    b = lib.tensor(g.standard_normal(n).astype(np.float32), device=dev, requires_grad=True)

    def run():
        elementwise_chain(a, b)
        _sync(lib, dev)

    return run


def w3(lib, dev):
    """One epoch of the digits MLP (23 steps of batch 64, SGD) from leafkit's initial weights."""
    data = digits.load_data(0)
    weights = digits.numpy_weights(digits.make_model(0))
    model = digits.make_model(0, lib, dev, weights=weights)
    opt = digits.make_optimizer(model, "sgd", lib=lib)
    X = lib.from_numpy(data["X_train"]).to(dev)
    y = lib.from_numpy(data["y_train"]).to(dev)
    order = digits.batch_order(len(data["y_train"]), 0)

    def run():
        digits.train_epoch(model, opt, X, y, order, 64, lib)
        _sync(lib, dev)

    return run


def timings(repeat: int) -> None:
    print(f"\n== Timings (median of {repeat} runs after a warm-up)")
    torch_gpu = torch is not None and torch.cuda.is_available()
    rows = []
    for wname, make, rep in (
        ("W2 20 ops on 1e6 float32, fwd+bwd", w2, repeat),
        ("W3 digits MLP, one epoch", w3, repeat),
    ):
        for libname, lib in (("leafkit", leafkit), ("PyTorch", torch)):
            if lib is None:
                continue
            for dev in ("cpu", "cuda"):
                label = f"{wname:36s} {libname:8s} {dev:5s}"
                gpu_ok = GPU if lib is leafkit else torch_gpu
                if dev == "cuda" and not gpu_ok:
                    rows.append((label, None, "no GPU, skipped"))
                    continue
                try:
                    run = make(lib, dev)  # timeit warms up once first (kernel compilation on a GPU)
                    rows.append((label, timeit(run, rep), ""))
                except Exception as e:  # noqa: BLE001
                    rows.append((label, None, f"error: {type(e).__name__}: {e}"))
    for label, t, note in rows:
        print(f"  {label} {t * 1e3:10.2f} ms" if t is not None else f"  {label} {'':>10s}    {note}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer timing repeats")
    ap.add_argument("--skip-timings", action="store_true")
    args = ap.parse_args(argv)
    print(
        f"leafkit {leafkit.__version__}; cuda backend: {leafkit.cuda.backend()}; "
        f"is_available: {leafkit.cuda.is_available()}; device: "
        f"{leafkit.cuda.get_device_name() if leafkit.cuda.backend() else 'none'}"
    )
    if GPU:
        import cupy

        print(f"CuPy {cupy.__version__}")
    else:
        print(
            "no GPU: CuPy missing or no usable CUDA device; GPU parts are skipped, parity runs on the simulated "
            "cuda device"
        )
    if torch is not None:
        print(
            f"PyTorch {torch.__version__} (cuda available: {torch.cuda.is_available()}, "
            f"{torch.get_num_threads()} threads)"
        )
    failures = parity()
    if not args.skip_timings:
        timings(3 if args.quick else 7)
    print(
        "\n" + ("ALL PARITY CHECKS PASSED" if not failures else f"{len(failures)} FAILED:\n  " + "\n  ".join(failures))
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
