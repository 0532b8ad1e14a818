"""Every seed experiment drawn both ways (make_dot and the variables view).

The experiments are restated here (the project never reads ../shared); the
PyTorch 2.13 facts they rely on are asserted first, then the DOT source:
labels, colours, edges, the dashed "shares storage" edges of detach().
"""

from __future__ import annotations

import warnings

import pytest
from viz_devices import has_cuda, to_other_device
from viz_dotparse import attrs_of, cluster_members, edges, find, fn, has_edge, nodes, var

from leafkit.viz import draw, explain, make_dot

GREEN, BLUE, ORANGE = "darkolivegreen1", "lightblue", "orange"


@pytest.fixture(autouse=True)
def _no_nonleaf_grad_warning():
    """Drawing must never read .grad where PyTorch warns (non-leaf, no retain_grad)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*not a leaf.*")
        yield


# -- seed 000, first example: is_leaf after toggle, device moves, detach, op --------------
def seed000_ex1(torch):
    a = torch.randn(3, 3)
    a.requires_grad = True
    b = to_other_device(torch, a)
    c = b.detach()
    d = a + 2
    e = torch.randn(3, 3, requires_grad=True)
    if has_cuda(torch):
        e = torch.randn(3, 3, device="cuda", requires_grad=True)
        f = e.to("cpu")
    else:
        f = e.to(torch.float64)
    return dict(a=a, b=b, c=c, d=d, e=e, f=f)


def test_seed000_ex1_variables_view(tk):
    v = seed000_ex1(tk)
    assert [(t.is_leaf, t.requires_grad) for t in v.values()] == [
        (True, True),
        (False, True),
        (True, False),
        (False, True),
        (True, True),
        (False, True),
    ]
    src = draw(v).source
    for name in "ae":
        assert f"fillcolor={BLUE}" in attrs_of(src, var(src, name))
        assert "is_leaf=True" in attrs_of(src, var(src, name))
    for name, node in (("b", "ToCopyBackward0"), ("d", "AddBackward0"), ("f", "ToCopyBackward0")):
        box = attrs_of(src, var(src, name))
        assert f"fillcolor={GREEN}" in box and "NON-LEAF" in box and f"grad_fn={node}" in box
    # a feeds both ToCopyBackward0 (b) and AddBackward0 (d): one box, two edges
    a_id = var(src, "a")
    consumers = [d for s, d, _ in edges(src) if s == a_id]
    assert sorted(nodes(src)[c] for c in consumers) == ["AddBackward0", "ToCopyBackward0"]
    # c = b.detach(): stands apart, linked to b by the dashed shares-storage edge
    c_id = var(src, "c")
    assert cluster_members(src, "nograd") == [c_id]
    assert has_edge(src, var(src, "b"), c_id, "style=dashed")
    assert "shares storage" in [at for s, d, at in edges(src) if d == c_id][0]


def test_seed000_ex1_make_dot(tk):
    v = seed000_ex1(tk)
    src = make_dot(v["d"], params={"a": v["a"]}).source
    out, add, leaf = find(src, GREEN), find(src, "AddBackward0"), find(src, BLUE)
    assert '"a\\n (3, 3)"' in attrs_of(src, leaf)
    assert has_edge(src, leaf, add) and has_edge(src, add, out)
    assert "ToCopyBackward0" in make_dot(v["b"]).source


# -- seed 000, appendix: retain_grad and a hook on an intermediate -----------------------
def test_seed000_appendix_marks_and_freed(tk):
    x = tk.tensor(2.0, requires_grad=True)
    y = x**2
    z = y**2
    y.retain_grad()
    z.backward(retain_graph=True)
    assert y.grad.item() == 8.0
    captured = []
    handle = y.register_hook(lambda g: captured.append(g))
    src = make_dot(z, params={"x": x, "y": y}).source
    y_id = find(src, '"y\\n ()')
    assert "retains_grad" in attrs_of(src, y_id) and "peripheries=2" in attrs_of(src, y_id)
    assert "hooks: 1" in attrs_of(src, y_id) and "color=purple" in attrs_of(src, y_id)
    assert "(freed)" not in src  # retain_graph=True kept the saved tensors
    dsrc = draw(x=x, y=y, z=z).source
    assert "grad=[8.]" not in dsrc and "grad=8." in attrs_of(dsrc, var(dsrc, "y"))
    assert "retains_grad" in attrs_of(dsrc, var(dsrc, "y")) and "hooks: 1" in attrs_of(dsrc, var(dsrc, "y"))
    z.backward()
    handle.remove()
    assert captured[0].item() == 8.0 and y.grad.item() == 16.0 and x.grad.item() == 64.0
    src = make_dot(z, params={"x": x, "y": y}).source
    pows = [k for k, v in nodes(src).items() if v.startswith('"PowBackward0')]
    assert len(pows) == 2
    for p in pows:
        assert "(freed)" in attrs_of(src, p) and "dashed" in attrs_of(src, p)
    assert "hooks" not in attrs_of(src, find(src, '"y\\n ()'))  # removed hook: mark gone
    dsrc = draw(x=x, y=y, z=z).source
    assert "grad=16." in attrs_of(dsrc, var(dsrc, "y")) and "grad=64." in attrs_of(dsrc, var(dsrc, "x"))
    assert "PowBackward0\\n(freed)" in dsrc


# -- seed 001: a..k -----------------------------------------------------------------------
def seed001(torch):
    a = torch.tensor([1.0], requires_grad=False)
    b = torch.tensor([1.0], requires_grad=True)
    c = torch.tensor([1.0], requires_grad=False).clone()
    d = torch.tensor([1.0], requires_grad=False).detach()
    e = to_other_device(torch, torch.tensor([1.0], requires_grad=False))
    f = torch.tensor([1.0], requires_grad=True).clone()
    g = torch.tensor([1.0], requires_grad=True).detach()
    h = to_other_device(torch, torch.tensor([1.0], requires_grad=True))
    i = torch.tensor([1.0], requires_grad=True).clone().detach()
    j = torch.tensor([1.0], requires_grad=True).detach().clone()
    k = to_other_device(torch, torch.tensor([1.0], requires_grad=True)).detach()
    return dict(a=a, b=b, c=c, d=d, e=e, f=f, g=g, h=h, i=i, j=j, k=k)


def test_seed001_variables_view(tk):
    v = seed001(tk)
    leaf = {n: t.is_leaf for n, t in v.items()}
    assert [n for n, is_leaf in leaf.items() if not is_leaf] == ["f", "h"]
    assert [n for n, t in v.items() if t.requires_grad] == ["b", "f", "h"]
    src = draw(v).source
    # the two non-leaves are the only green, NON-LEAF boxes
    nonleaf = [n for n in v if "NON-LEAF" in attrs_of(src, var(src, n))]
    assert nonleaf == ["f", "h"]
    assert src.count(f"fillcolor={GREEN}") == 2
    for n, node in (("f", "CloneBackward0"), ("h", "ToCopyBackward0")):
        box = var(src, n)
        assert "penwidth=2.5" in attrs_of(src, box)
        maker = [s for s, d, _ in edges(src) if d == box]
        assert len(maker) == 1 and nodes(src)[maker[0]] == node
        # ... whose input is the unnamed leaf the temporary tensor was
        leafs = [s for s, d, _ in edges(src) if d == maker[0]]
        assert len(leafs) == 1 and "(unnamed leaf)" in nodes(src)[leafs[0]]
    # b: a lone leaf requiring grad; the eight others stand apart, in order
    assert f"fillcolor={BLUE}" in attrs_of(src, var(src, "b"))
    assert cluster_members(src, "nograd") == [var(src, n) for n in "acdegijk"]
    assert "style=dashed" not in "".join(at for _, _, at in edges(src) if "invis" not in at)
    if has_cuda(tk):
        assert "device=cuda:0" in attrs_of(src, var(src, "h"))
        assert "device=cuda:0" in attrs_of(src, var(src, "e"))


def test_seed001_make_dot(tk):
    v = seed001(tk)
    src = make_dot(v["f"]).source
    assert [x.split(" ")[0] for x in nodes(src).values()] == ['"', "CloneBackward0", '"']
    assert f"fillcolor={GREEN}" in src and f"fillcolor={BLUE}" in src
    src = make_dot(v["a"]).source  # no graph: just the output
    assert len(nodes(src)) == 1 and not edges(src)


# -- seed 003 ----------------------------------------------------------------------------
def test_seed003_ex1_2_requires_grad_flag(tk):
    x = tk.tensor([2.0], requires_grad=True)
    first = draw(x=x)
    assert x.requires_grad_(False) is x
    second = draw(x=x, previous=first)
    assert second.changes["changed"] == {"x": ["requires_grad"]}
    assert cluster_members(second.source, "nograd") == [var(second.source, "x")]
    assert "changed: requires_grad" in second.source
    x.requires_grad = True
    y = x * 3
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    third = draw(x=x, y=y, previous=second)
    assert third.changes["added_variables"] == ["y"]
    assert "MulBackward0" in third.changes["added_nodes"][0]
    assert "NEW since previous drawing" in attrs_of(third.source, var(third.source, "y"))


@pytest.mark.parametrize("xr,yr", [(False, False), (False, True), (True, False), (True, True)])
def test_seed003_ex3_4_propagation(tk, xr, yr):
    x = tk.tensor([2.0], requires_grad=xr)
    y = tk.tensor([2.0], requires_grad=yr)
    z = x * y
    src = make_dot(z, params={"x": x, "y": y}).source
    if not (xr or yr):
        assert z.grad_fn is None and len(nodes(src)) == 1
        return
    mul = find(src, "MulBackward0")
    inputs = sorted(nodes(src)[s].split("\\n")[0] for s, d, _ in edges(src) if d == mul)
    assert inputs == sorted(['"x'] * xr + ['"y'] * yr)
    dsrc = draw(x=x, y=y, z=z).source
    apart = cluster_members(dsrc, "nograd")
    assert apart == [var(dsrc, n) for n, r in (("x", xr), ("y", yr)) if not r]


def test_seed003_ex3_4_node_names(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = tk.tensor([2.0], requires_grad=True)
    for out, name in ((x / y, "DivBackward0"), (x + y, "AddBackward0"), (x - y, "SubBackward0")):
        assert name in make_dot(out).source
        assert f"grad_fn={name}" in draw(out=out).source


def test_seed003_ex5_6_no_grad(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = tk.tensor([2.0], requires_grad=True)
    with tk.no_grad():
        z = x * y
    assert (z.requires_grad, z.grad_fn, z.is_leaf) == (False, None, True)
    src = draw(x=x, y=y, z=z).source
    assert cluster_members(src, "nograd") == [var(src, "z")]
    assert "->" not in src.split("subgraph")[0]  # nothing links z to x or y
    reason = explain(z, "z").reason
    if tk.__name__ == "leafkit":
        assert reason == "no_grad_mode"  # leafkit records _created_in_no_grad
    else:
        assert reason == "no_requires_grad"  # torch cannot tell afterwards


def test_seed003_ex7_leaves_linear(tk):
    x = tk.tensor([2.0], requires_grad=True)
    linear = tk.nn.Linear(1, 1)
    out = linear(x)
    params = dict(linear.named_parameters(), x=x)
    src = make_dot(out, params=params).source
    for name, shape in (("weight", "(1, 1)"), ("bias", "(1,)"), ("x", "(1,)")):
        node = find(src, f'"{name}\\n {shape}"')
        assert f"fillcolor={BLUE}" in attrs_of(src, node)
    assert f"fillcolor={GREEN}" in attrs_of(src, find(src, '" (1,)"'))
    out.sum().backward()
    dsrc = draw(dict(linear.named_parameters()), x=x, out=out).source
    assert "grad=[[2.]]" in attrs_of(dsrc, var(dsrc, "weight"))
    assert "grad=[1.]" in attrs_of(dsrc, var(dsrc, "bias"))
    assert "NON-LEAF" in attrs_of(dsrc, var(dsrc, "out"))


def test_seed003_ex8_retain_grad(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = x**2
    z = y**2
    t = z**2
    z.retain_grad()
    t.backward()
    src = draw(x=x, y=y, z=z, t=t).source  # must not read y.grad (would warn)
    assert "grad=[1024.]" in attrs_of(src, var(src, "x"))
    assert "grad=[32.]" in attrs_of(src, var(src, "z")) and "retains_grad" in attrs_of(src, var(src, "z"))
    assert "<B>grad=" not in attrs_of(src, var(src, "y")) and "retains_grad" not in attrs_of(src, var(src, "y"))
    # x -> Pow -> y -> Pow -> z -> Pow -> t: the chain runs through the named boxes
    assert len(fn(src, "PowBackward0")) == 3
    chain = ["x", None, "y", None, "z", None, "t"]
    ids = [var(src, n) if n else None for n in chain]
    for i in range(0, 6, 2):
        mid = [d for s, d, _ in edges(src) if s == ids[i]]
        assert len(mid) == 1 and has_edge(src, mid[0], ids[i + 2])
    dot = make_dot(t, params={"x": x, "z": z}).source
    assert "retains_grad" in attrs_of(dot, find(dot, '"z\\n (1,)'))


def test_seed003_ex9_detach_shares_storage(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = x.detach()
    z1 = y**2
    z2 = x**2
    z2.backward()
    assert x.data_ptr() == y.data_ptr()
    src = draw(x=x, y=y, z1=z1, z2=z2).source
    xi, yi = var(src, "x"), var(src, "y")
    share = [at for s, d, at in edges(src) if s == xi and d == yi]
    assert len(share) == 1 and "style=dashed" in share[0] and "shares storage" in share[0]
    assert "no gradient" in share[0]
    assert cluster_members(src, "nograd") == [yi, var(src, "z1")]
    (pow_,) = fn(src, "PowBackward0")
    assert has_edge(src, xi, pow_) and has_edge(src, pow_, var(src, "z2"), "penwidth")
    assert "grad=[4.]" in attrs_of(src, xi)
    y.add_(1.0)
    assert x.detach().tolist() == [3.0]
    # z1 is not tracked: only the shares-storage edge touches y
    assert [e for e in edges(src) if yi in e[:2] and "invis" not in e[2]] == [(xi, yi, share[0])]
