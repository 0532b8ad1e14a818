"""Activation checkpointing: memory kept for backward and time, with and without ``checkpoint_sequential``.

The model is an MLP of ``n`` layers, each ``Linear(d, d)`` then ``ReLU`` (``d = 128``, a batch of 1,024,
float32: one activation, 512 KiB, outweighs one layer's weights, 64 KiB), for ``n`` = 8, 16 and 32; the
checkpointed run is ``checkpoint_sequential(model, s, x)`` with
``s = round(sqrt(n))`` segments, both variants (``use_reentrant=False`` and ``True``).  leafkit and PyTorch
run the same model in the same process.

What is measured
----------------
saved activations
    The bytes the graph keeps for backward once the forward has returned, parameters left out (they are
    kept anyway).  leafkit: walk the graph from the output and add up the arrays its nodes saved
    (``SavedVariable`` entries of each node's saved values; a checkpointed region's nodes hold
    placeholders, and the tensors the checkpoint keeps for its recomputation are counted instead), each
    storage once.  PyTorch: the same sum over the tensors its pack hook sees
    (``torch.autograd.graph.saved_tensors_hooks`` around the forward; inside a non-reentrant checkpoint its
    own hooks take over, so what the region drops is not counted), each storage once.
peak (leafkit)
    ``tracemalloc``'s peak over forward + backward, above the memory in use before (NumPy reports its
    buffers to tracemalloc): what the recomputation costs while backward runs.
time
    Median of forward + backward over the rounds; the ratio divides by the same model without
    checkpointing, in the same library.

On paper
--------
Without checkpointing the graph keeps the input and every ReLU output: ``n + 1`` activations (each Linear
saves its input, which is the previous ReLU's output: one array).  With ``s`` segments only the input of
each checkpointed segment is kept, plus what the last (plain) segment saves: about ``s + n/s``, smallest
(``2√n``) at ``s = √n``.  Backward recomputes each checkpointed segment once: one more forward of all but
the last segment, about ``+1/3`` of a forward+backward (a backward costs about two forwards).

Run: ``python bench/checkpoint.py`` (``--repeat N``, ``--width D``, ``--batch B``).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # NumPy's matmul on one thread too
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import leafkit  # noqa: E402
from leafkit.autograd.graph import SavedVariable  # noqa: E402
from leafkit.utils import checkpoint as lk_checkpoint  # noqa: E402

try:
    import torch
    import torch.utils.checkpoint as torch_checkpoint

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - PyTorch is the reference, not a dependency
    torch = None


def build(lib, n, d, seed=0):
    """``n`` x (Linear(d, d), ReLU) with the same weights in both libraries."""
    rng = np.random.default_rng(seed)
    layers = []
    for _ in range(n):
        lin = lib.nn.Linear(d, d)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(rng.standard_normal((d, d), dtype=np.float32) / np.sqrt(d)))
            lin.bias.copy_(lib.tensor(rng.standard_normal(d, dtype=np.float32) * 0.1))
        layers += [lin, lib.nn.ReLU()]
    return lib.nn.Sequential(*layers)


def forward(lib, model, x, mode, segments):
    if mode == "plain":
        return model(x)
    cp = lk_checkpoint if lib is leafkit else torch_checkpoint
    return cp.checkpoint_sequential(model, segments, x, use_reentrant=(mode == "reentrant"))


# -- saved bytes ---------------------------------------------------------------------------------------------------
def _leafkit_saved_bytes(out, params):
    """Bytes of the distinct arrays the graph of ``out`` keeps, parameters excluded (see the module docstring)."""
    param_arrays = [p._data for p in params]
    seen, total = set(), 0

    def count(arr):
        nonlocal total
        key = (arr.__array_interface__["data"][0], arr.nbytes)
        if key in seen or any(np.shares_memory(arr, p) for p in param_arrays):
            return
        seen.add(key)
        total += arr.nbytes

    stack, visited = [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in visited:
            continue
        visited.add(id(node))
        stash = node._stash
        if isinstance(stash, lk_checkpoint._Recomputable):  # a checkpointed region: what its frame keeps
            stash = stash.frame.saved_inputs._stash
        for v in stash or ():
            if isinstance(v, SavedVariable):
                count(v.data)
        stack.extend(n for n, _ in node.next_functions)
    return total


def saved_bytes(lib, model, x, mode, segments):
    if lib is leafkit:
        out = forward(lib, model, x, mode, segments)
        return _leafkit_saved_bytes(out, list(model.parameters()))
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen = {}

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        forward(lib, model, x, mode, segments)
    return sum(seen.values())


def leafkit_peak(model, x, mode, segments):
    """tracemalloc's peak over forward + backward, above what was in use before."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    out = forward(leafkit, model, x, mode, segments)
    out.sum().backward()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    model.zero_grad()
    return peak


def paper_time(n, s):
    """Time on paper, relative to no checkpointing: backward ~ two forwards, and the checkpointed segments (all
    modules but the last segment's) run forward once more."""
    if s <= 1:
        return 1.0
    recomputed = (2 * n // s) * (s - 1) / (2 * n)
    return 1 + recomputed / 3


def paper_units(n, s):
    """Activations kept on paper, in units of one ``batch x d`` array (see the module docstring).

    Modules ``0 .. 2n-1`` alternate Linear (even) and ReLU (odd); array ``k`` is module ``k``'s output, ``-1``
    the input.  A Linear saves its input, a ReLU its output.  A checkpointed segment keeps only its input; the
    last segment saves as a plain run does."""
    modules = 2 * n
    size = modules // s if s > 1 else 0
    last = size * (s - 1) if s > 1 else 0
    kept = {start - 1 for start in range(0, last, size)} if s > 1 else set()
    for j in range(last, modules):
        kept.add(j - 1 if j % 2 == 0 else j)
    return len(kept)


# -- timing --------------------------------------------------------------------------------------------------------
def step_times(lib, runs, segments, repeat):
    """Median forward + backward time of each ``(mode, model, x)`` in ``runs``, rounds interleaved (a slow moment
    of a shared machine then hits every mode alike), after one warm-up run each."""

    def once(mode, model, x):
        t0 = time.perf_counter()
        forward(lib, model, x, mode, segments).sum().backward()
        t = time.perf_counter() - t0
        model.zero_grad()
        x.grad = None
        return t

    for r in runs:
        once(*r)
    times = {r[0]: [] for r in runs}
    for _ in range(repeat):
        for r in runs:
            times[r[0]].append(once(*r))
    return {mode: statistics.median(ts) for mode, ts in times.items()}


def check_gradients(n, d, batch, segments):
    """Every library and variant must give the plain gradients before anything is reported."""
    xs = np.random.default_rng(1).standard_normal((batch, d), dtype=np.float32)
    ref = None
    for lib in [leafkit] + ([torch] if torch else []):
        for mode in ("plain", "non-reentrant", "reentrant"):
            model = build(lib, n, d)
            x = lib.tensor(xs, requires_grad=True)
            forward(lib, model, x, mode, segments).sum().backward()
            got = [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
            if ref is None:
                ref = got
            for g, r in zip(got, ref):
                np.testing.assert_allclose(g, r, rtol=2e-3, atol=2e-4)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--layers", type=int, nargs="+", default=[8, 16, 32])
    args = ap.parse_args(argv)
    d, batch = args.width, args.batch
    unit = batch * d * 4
    libs = [("leafkit", leafkit)] + ([("PyTorch", torch)] if torch else [])
    print(f"MLP of n x (Linear({d}, {d}) + ReLU), batch {batch}, float32; one activation = {unit / 1024:.0f} KiB")
    print(
        f"PyTorch {torch.__version__ if torch else '(not installed)'}, NumPy {np.__version__}, one thread; "
        f"median of {args.repeat} rounds\n"
    )
    header = (
        f"{'n':>3} {'s':>2} {'library':8} {'variant':14} {'saved KiB':>10} {'units':>6} {'paper':>6} "
        f"{'peak KiB':>9} {'fwd+bwd ms':>11} {'time ratio':>10} {'paper':>6}"
    )
    print(header)
    print("-" * len(header))
    for n in args.layers:
        s = max(1, round(math.sqrt(n)))
        check_gradients(n, d, batch, s)
        xs = np.random.default_rng(1).standard_normal((batch, d), dtype=np.float32)
        for name, lib in libs:
            rows = []
            for mode in ("plain", "non-reentrant", "reentrant"):
                model = build(lib, n, d)
                x = lib.tensor(xs, requires_grad=True)
                saved = saved_bytes(lib, model, x, mode, s)
                peak = leafkit_peak(model, x, mode, s) if lib is leafkit else None
                rows.append((mode, model, x, saved, peak))
            times = step_times(lib, [r[:3] for r in rows], s, args.repeat)
            for mode, _, _, saved, peak in rows:
                t = times[mode]
                paper = paper_units(n, 1 if mode == "plain" else s)
                print(
                    f"{n:>3} {s:>2} {name:8} {mode:14} {saved / 1024:>10.0f} {saved / unit:>6.1f} {paper:>6} "
                    f"{'' if peak is None else f'{peak / 1024:>9.0f}':>9} {t * 1e3:>11.2f} "
                    f"{t / times['plain']:>9.2f}x {paper_time(n, 1 if mode == 'plain' else s):>5.2f}x"
                )
        print()
    print("units: saved bytes / one activation; paper: the count on paper (module docstring).")


if __name__ == "__main__":
    main()
