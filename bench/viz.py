"""Timing of the drawing layer: DOT build for a 2,000-node graph, and ``dot`` rendering.

Run ``python bench/viz.py [--backend leafkit|torch] [--quick]``.  It prints:

- the time to build the DOT source of a 2,000-node backward graph (a chain and
  a wide "MLP-like" graph) with ``make_dot(..., max_nodes=None)``, and with the
  default ``max_nodes`` (collapsing included);
- the time Graphviz's ``dot`` takes to lay out and render graphs of growing
  size, which is what ``DEFAULT_MAX_NODES`` is chosen from (``dot`` under 1 s);
- the time to build a 100,000-node chain's drawing (iterative walk, collapsed);
- the SVG cache hit latency.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from leafkit.viz import DEFAULT_MAX_NODES, clear_svg_cache, dot_available, draw, make_dot, render_svg  # noqa: E402


def _backend(name):
    if name == "torch":
        import torch

        return torch
    import leafkit

    return leafkit


def chain(torch, n):
    """A chain of ``n`` backward nodes: x -> *1.0001 -> ... (plus one leaf)."""
    x = torch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return x, y


def wide(torch, n):
    """A graph of about ``n`` nodes where leaves feed several ops (not chain-like)."""
    ws = [torch.tensor([1.0], requires_grad=True) for _ in range(max(2, n // 20))]
    acc = ws[0] * 1.0
    count = 2
    k = 0
    while count < n:
        w = ws[k % len(ws)]
        acc = acc * w + w  # MulBackward0, AddBackward0 (+ the leaf reused)
        count += 2
        k += 1
    return ws, acc


def tree(torch, n):
    """About ``n`` nodes: a balanced sum of products of independent leaves."""
    xs = [torch.tensor([1.0], requires_grad=True) for _ in range(max(2, n // 3))]
    terms = [x * 2.0 for x in xs]
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return xs, terms[0]


def rnn(torch, n, k=3):
    """A recurrence reusing ``k`` weights at every step (edges that skip many layers)."""
    ws = [torch.tensor([1.0], requires_grad=True) for _ in range(k)]
    h = ws[0] * 1.0
    for step in range(n):
        h = h * ws[step % k]
    return ws, h


def render_time(src):
    clear_svg_cache()
    t0 = time.perf_counter()
    render_svg(src)
    return time.perf_counter() - t0


def best(f, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default=None, help="leafkit (default when importable) or torch")
    ap.add_argument("--quick", action="store_true", help="fewer render sizes")
    args = ap.parse_args(argv)
    name = args.backend
    if name is None:
        try:
            import leafkit

            leafkit.tensor([1.0], requires_grad=True)
            name = "leafkit"
        except Exception:
            name = "torch"
    torch = _backend(name)
    print(f"backend: {name}; DEFAULT_MAX_NODES = {DEFAULT_MAX_NODES}; dot available: {dot_available()}")

    print("\n# DOT build, 2,000 backward nodes")
    for label, (_, out) in (
        ("chain", chain(torch, 2000)),
        ("tree", tree(torch, 2000)),
        ("rnn", rnn(torch, 2000)),
        ("wide", wide(torch, 2000)),
    ):
        t_full, dg = best(lambda out=out: make_dot(out, max_nodes=None))
        n_full = dg.source.count("[label=")
        t_def, dg2 = best(lambda out=out: make_dot(out))
        n_def = dg2.source.count("[label=")
        print(
            f"{label:6s} make_dot(max_nodes=None): {t_full * 1e3:7.1f} ms  ({n_full} nodes)   "
            f"default max_nodes: {t_def * 1e3:7.1f} ms  ({n_def} nodes)"
        )
    x, y = chain(torch, 2000)
    t_var, _ = best(lambda: draw(x=x, y=y))
    print(f"draw(x=x, y=y) on the 2,000-node chain: {t_var * 1e3:.1f} ms")

    print("\n# 100,000-node chain (iterative walk, collapsed)")
    _, big = chain(torch, 100_000)
    t_big, dg = best(lambda: make_dot(big), repeat=1)
    print(f"make_dot: {t_big * 1e3:.0f} ms, {dg.source.count('[label=')} nodes drawn")

    if not dot_available():
        print("\n`dot` not found: rendering figures skipped")
        return
    print("\n# dot rendering (SVG) at the default max_nodes, by graph shape and size")
    shapes = (("chain", chain), ("tree", tree), ("rnn", rnn), ("wide", wide))
    sizes = (300, 2000) if args.quick else (100, 300, 1000, 2000)
    worst = 0.0
    for n in sizes:
        for label, maker in shapes:
            _, out = maker(torch, n)
            src = make_dot(out).source
            t = render_time(src)
            worst = max(worst, t)
            print(f"{label:6s} {n:5d} backward nodes -> {src.count('[label='):4d} drawn: dot {t * 1e3:6.0f} ms")
    print(f"worst dot time at the default max_nodes: {worst * 1e3:.0f} ms (target < 1000 ms)")
    print("\n# dot rendering by max_nodes (tree-shaped graph of 2,000 nodes)")
    _, out = tree(torch, 2000)
    for m in (100, 300, 600, 1000):
        src = make_dot(out, max_nodes=m).source
        print(f"max_nodes={m:5d}: {src.count('[label='):4d} drawn, dot {render_time(src) * 1e3:6.0f} ms")
    x = torch.tensor([2.0], requires_grad=True)
    yy = x**2
    z = yy**2
    d = draw(x=x, y=yy, z=z)
    clear_svg_cache()
    t_first, _ = best(lambda: (clear_svg_cache(), render_svg(d.source)), repeat=3)
    t_hit, _ = best(lambda: render_svg(d.source), repeat=5)
    print(f"\nsmall variables view: first render {t_first * 1e3:.0f} ms, cached {t_hit * 1e6:.0f} us")


if __name__ == "__main__":
    main()
