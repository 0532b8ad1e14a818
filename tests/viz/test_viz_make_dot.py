"""make_dot: torchviz's legend, saved tensors and attributes, determinism, big graphs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from viz_dotparse import attrs_of, edges, find, fn, nodes

from leafkit.viz import DEFAULT_MAX_NODES, AutogradDigraph, make_dot
from leafkit.viz._graph import layout_cost

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def small(torch):
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, 1.0], requires_grad=True)
    y = (x * w).sum()
    return x, w, y


def test_legend_and_structure(tk):
    import graphviz

    x, w, y = small(tk)
    dg = make_dot(y, params={"x": x, "w": w})
    assert isinstance(dg, graphviz.Digraph) and isinstance(dg, AutogradDigraph)
    src = dg.source
    assert "node [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]" in src
    out = find(src, "darkolivegreen1")
    (s,) = fn(src, "SumBackward0")
    (m,) = fn(src, "MulBackward0")
    xi, wi = find(src, '"x\\n (2,)"'), find(src, '"w\\n (2,)"')
    assert "lightblue" in attrs_of(src, xi) and "lightblue" in attrs_of(src, wi)
    assert [(a, b) for a, b, _ in edges(src)] == [(m, s), (xi, m), (wi, m), (s, out)]
    # ids come from a counter in walk order: output first, then the walk from its grad_fn
    assert list(nodes(src)) == ["n0", "n1", "n2", "n3", "n4"]
    assert src.index("SumBackward0") < src.index("MulBackward0") < src.index('"x\\n')


def test_outputs_forms(tk):
    x, w, y = small(tk)
    z = x * 2
    both = make_dot((y, z)).source
    assert both.count("darkolivegreen1") == 2
    named = make_dot({"loss": y}).source
    assert '"loss\\n ()"' in named
    with pytest.raises(TypeError):
        make_dot(3.0)
    with pytest.raises(TypeError):
        make_dot(y, params={"x": 1.0})


def test_show_saved_and_attrs(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = x**3
    src = make_dot(y, params={"x": x}, show_saved=True, show_attrs=True).source
    (p,) = fn(src, "PowBackward0")
    assert "exponent: 3" in attrs_of(src, p) and "self: [saved tensor]" in attrs_of(src, p)
    saved = find(src, "orange")
    assert '"self\\n (1,)"' in attrs_of(src, saved)
    assert (p, saved, "dir=none") in edges(src)
    # saved tensors are nodes of their own, never merged with the leaf they equal (torchviz does)
    assert find(src, "lightblue") != saved
    plain = make_dot(y).source
    assert "orange" not in plain and "exponent" not in plain


def test_saved_tensors_of_a_custom_function(tk):
    """A user's Function has no ``_saved_*`` attributes: its ``ctx.save_for_backward`` tensors are drawn from
    ``saved_tensors``, on torch as on leafkit, and the node is drawn freed after backward."""

    class Cube(tk.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    x = tk.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    src = make_dot(y, params={"x": x}, show_saved=True, show_attrs=True).source
    (c,) = fn(src, "CubeBackward")
    assert "saved_tensors: [saved tensors]" in attrs_of(src, c)
    saved = find(src, "orange")
    assert '"saved_tensors[0]\\n (2,)"' in attrs_of(src, saved) and (c, saved, "dir=none") in edges(src)
    y.sum().backward()
    src = make_dot(y, show_saved=True).source
    (c,) = fn(src, "CubeBackward")
    assert "(freed)" in attrs_of(src, c) and "orange" not in src


def test_freed_nodes_after_backward(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = (x**2).clone()
    y.backward()
    src = make_dot(y, show_saved=True).source
    (p,) = fn(src, "PowBackward0")
    (c,) = fn(src, "CloneBackward0")
    assert "(freed)" in attrs_of(src, p) and "dashed" in attrs_of(src, p)
    assert "(freed)" not in attrs_of(src, c)  # nothing saved, nothing freed
    assert "orange" not in src


def test_hooks_and_retain_marks(tk):
    x = tk.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: g)
    y = x * 2
    y.retain_grad()
    src = make_dot(y * 3, params={"x": x, "y": y}).source
    xi = find(src, '"x\\n (1,)')
    assert "hooks: 1" in attrs_of(src, xi) and "color=purple" in attrs_of(src, xi)
    yi = find(src, '"y\\n (1,)')
    assert "retains_grad" in attrs_of(src, yi) and "darkolivegreen3" in attrs_of(src, yi)


PROGRAM = """
import sys
sys.path.insert(0, {root!r})
import {mod} as torch
from leafkit.viz import make_dot, draw
x = torch.tensor([2.0], requires_grad=True)
w = torch.tensor([[1.0, 2.0]], requires_grad=True)
y = x.detach()
h = x * 3
h.retain_grad()
z = (w * h ** 2).sum() + h.sum()
print(make_dot(z, params=dict(x=x, w=w, h=h), show_saved=True, show_attrs=True).source)
print(draw(x=x, y=y, w=w, h=h, z=z).source)
"""


def test_deterministic_across_runs(tk):
    """Byte-identical DOT in two fresh interpreters (different hash seeds, addresses)."""
    code = PROGRAM.format(root=ROOT, mod=tk.__name__)
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] and "digraph" in outs[0]
    assert "0x" not in outs[0]


def test_deterministic_in_process(tk):
    def build():
        x, w, y = small(tk)
        return make_dot(y, params={"x": x, "w": w}, show_saved=True).source

    assert build() == build()


def chain(torch, n):
    x = torch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return x, y


def test_collapse_long_chain(tk):
    x, y = chain(tk, 5000)
    src = make_dot(y, params={"x": x}).source
    assert len(nodes(src)) <= DEFAULT_MAX_NODES
    more = find(src, "more node")
    assert "\u2026 4,996 more nodes\\n(MulBackward0 \u00d74,996)" in attrs_of(src, more)
    assert "lightblue" in src and "darkolivegreen1" in src
    assert len(fn(src, "MulBackward0")) == 4  # two kept at each end
    full = make_dot(y, max_nodes=None).source
    assert len(nodes(full)) == 5002


@pytest.mark.slow
def test_collapse_100k_chain_iterative(lk):
    """A 100,000-node chain draws: the walk never recurses."""
    x, y = chain(lk, 100_000)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        dg = make_dot(y, params={"x": x})
        text = dg.text
    finally:
        sys.setrecursionlimit(limit)
    assert "\u2026 99,996 more nodes" in dg.source
    assert "99,996 more nodes" in text


def rnn(torch, n, k=3):
    ws = [torch.tensor([1.0], requires_grad=True) for _ in range(k)]
    h = ws[0] * 1.0
    for step in range(n):
        h = h * ws[step % k]
    return ws, h


def test_reused_weights_do_not_blow_up_the_layout(tk):
    """A weight reused at every step makes edges that skip many layers; they start
    from small copies of the weight instead, so dot stays fast."""
    ws, h = rnn(tk, 150)
    dg = make_dot(h, params={f"w{i}": w for i, w in enumerate(ws)})
    src = dg.source
    assert "\u21ba w0\\n(drawn again)" in src
    assert len(nodes(src)) <= 2 * DEFAULT_MAX_NODES


def test_wide_graph_is_truncated(tk):
    xs = [tk.tensor([1.0], requires_grad=True) for _ in range(400)]
    terms = [x * 2 for x in xs]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    src = make_dot(total).source
    n = len(nodes(src))
    assert n <= 2 * DEFAULT_MAX_NODES
    assert "more nodes\\n(not drawn: raise max_nodes to see them)" in src


def test_builds_a_2000_node_graph_whole(tk):
    """``max_nodes=None`` draws every node of a 2,000-node graph (its build time is measured by bench/viz.py)."""
    xs = [tk.tensor([1.0], requires_grad=True) for _ in range(100)]
    y = xs[0] * 1.0
    while True:
        for x in xs:
            y = y * x + 1.0
        if y.grad_fn is not None and _count(y) >= 2000:
            break
    src = make_dot(y, max_nodes=None).source
    n_fn = _count(y)
    n_leaves = len(xs)
    assert src.count("[label=") >= n_fn + n_leaves - 1, (src.count("[label="), n_fn)


def _count(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        stack.extend(c for c, _ in getattr(f, "next_functions", ()))
    return len(seen)


def test_layout_cost_counts_skipped_layers():
    from leafkit.viz._graph import FLOW, Model

    m = Model()
    a, b, c = (m.add_node("fn", n, n, n) for n in "abc")
    m.add_edge(a, b, FLOW)
    m.add_edge(b, c, FLOW)
    m.add_edge(a, c, FLOW)
    assert layout_cost(m) == 4  # 3 nodes + 1 virtual node for a -> c


def test_parity_with_torch(lk, real_torch):
    """The same program draws the same DOT on leafkit and on PyTorch."""

    def program(torch):
        x = torch.tensor([2.0, 1.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0], requires_grad=True)
        y = x.detach()
        z = (x * w + y).sum() / 2
        return make_dot(z, params=dict(x=x, w=w)).source

    assert program(lk) == program(real_torch)


def test_params_must_be_a_dict(tk):
    x, w, y = small(tk)
    for bad in ([x], (x, w), iter([("x", x)])):
        with pytest.raises(
            TypeError,
            match=r"make_dot\(\) params must be a dict of names to tensors, as in "
            r"torchviz \(e.g. dict\(model.named_parameters\(\)\)\), got ",
        ):
            make_dot(y, params=bad)
    assert '"x\\n' in make_dot(y, params=dict([("x", x)])).source


@pytest.mark.parametrize("bad", ["a", 2.5, True, [10]])
def test_max_nodes_must_be_an_int_or_none(tk, bad):
    x, w, y = small(tk)
    with pytest.raises(TypeError, match=f"make_dot\\(\\) max_nodes must be an int or None, got {type(bad).__name__}"):
        make_dot(y, max_nodes=bad)
    make_dot(y, max_nodes=None)
    make_dot(y, max_nodes=50)
