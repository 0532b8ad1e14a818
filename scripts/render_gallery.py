"""Render the README gallery: PNG drawings of the seed experiments, from leafkit.

    python scripts/render_gallery.py [--out docs/gallery] [--backend leafkit|torch] [--lang en,zh]

Writes, under ``--out`` (English) and ``--out``/zh (简体中文 legends and words, CJK fonts):

- ``seed001_a_to_k.png``: seed 001's a..k in the variables view (the two
  non-leaves f and h stand out);
- ``seed000_ex1_variables.png`` and ``seed000_ex1_make_dot.png``: seed 000's
  first example (requires_grad toggle, ``.cuda()``, ``detach()``, ``a + 2``);
- ``seed003_ex9_detach.png``: seed 003's detach example (dashed "shares
  storage" edge, after ``z2.backward()``);
- ``seed000_appendix_make_dot.png``: ``retain_grad`` and a hook on an
  intermediate, torchviz style, before backward.

The experiments run on leafkit (``import leafkit as torch``), whose cuda is
simulated without a GPU.  ``--backend torch`` draws the same programs with
real PyTorch (its ``.cuda()`` needs a GPU; CPU-only builds use a float64 copy,
which makes the same autograd point).  Needs Graphviz's ``dot`` (and, for the
Chinese pictures, a CJK font such as fonts-wqy-zenhei or fonts-noto-cjk).
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from leafkit.viz import draw, make_dot  # noqa: E402

DPI = "110"


def backend(name):
    if name == "torch":
        import torch

        return torch
    try:
        import leafkit

        leafkit.tensor([1.0], requires_grad=True)
        return leafkit
    except Exception as exc:  # only while leafkit's engine is missing
        print(f"leafkit is not usable ({exc}); falling back to torch", file=sys.stderr)
        import torch

        return torch


def other_device(torch, t):
    if torch.cuda.is_available() or getattr(torch.cuda, "backend", lambda: None)() is not None:
        return t.cuda()
    return t.to(torch.float64)


def seed001(torch, lang="en"):
    a = torch.tensor([1.0], requires_grad=False)
    b = torch.tensor([1.0], requires_grad=True)
    c = torch.tensor([1.0], requires_grad=False).clone()
    d = torch.tensor([1.0], requires_grad=False).detach()
    e = other_device(torch, torch.tensor([1.0], requires_grad=False))
    f = torch.tensor([1.0], requires_grad=True).clone()
    g = torch.tensor([1.0], requires_grad=True).detach()
    h = other_device(torch, torch.tensor([1.0], requires_grad=True))
    i = torch.tensor([1.0], requires_grad=True).clone().detach()
    j = torch.tensor([1.0], requires_grad=True).detach().clone()
    k = other_device(torch, torch.tensor([1.0], requires_grad=True)).detach()
    return draw(dict(a=a, b=b, c=c, d=d, e=e, f=f, g=g, h=h, i=i, j=j, k=k), lang=lang)


def seed000_ex1(torch, lang="en"):
    torch.manual_seed(0)
    a = torch.randn(3, 3)
    a.requires_grad = True
    b = other_device(torch, a)
    c = b.detach()
    d = a + 2
    if torch.cuda.is_available() or getattr(torch.cuda, "backend", lambda: None)() is not None:
        e = torch.randn(3, 3, device="cuda", requires_grad=True)
        f = e.to("cpu")
    else:
        e = torch.randn(3, 3, requires_grad=True)
        f = e.to(torch.float64)
    return (
        draw(dict(a=a, b=b, c=c, d=d, e=e, f=f), lang=lang),
        make_dot(dict(b=b, d=d, f=f), params=dict(a=a, e=e), lang=lang),
    )


def seed003_ex9(torch, lang="en"):
    x = torch.tensor([2.0], requires_grad=True)
    y = x.detach()
    z1 = y**2
    z2 = x**2
    z2.backward()
    return draw(dict(x=x, y=y, z1=z1, z2=z2), lang=lang)


def seed000_appendix(torch, lang="en"):
    x = torch.tensor(2.0, requires_grad=True)
    y = x**2
    z = y**2
    y.retain_grad()
    y.register_hook(lambda g: None)
    return make_dot({"z": z}, params={"x": x, "y": y}, show_saved=True, show_attrs=True, lang=lang)


def write_png(drawing, path):
    dg = getattr(drawing, "digraph", drawing).copy()
    dg.graph_attr["dpi"] = DPI
    dg.graph_attr.pop("size", None)
    with open(path, "wb") as fh:
        fh.write(dg.pipe(format="png"))
    print(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "gallery"))
    ap.add_argument("--backend", choices=("leafkit", "torch"), default="leafkit")
    ap.add_argument("--lang", default="en,zh", help="comma-separated languages: en, zh (default both)")
    args = ap.parse_args(argv)
    if shutil.which("dot") is None:
        sys.exit("Graphviz's `dot` is needed: apt install graphviz / brew install graphviz / conda install graphviz")
    torch = backend(args.backend)
    for lang in args.lang.split(","):
        folder = args.out if lang == "en" else os.path.join(args.out, lang)
        os.makedirs(folder, exist_ok=True)
        out = functools.partial(os.path.join, folder)
        write_png(seed001(torch, lang), out("seed001_a_to_k.png"))
        variables, graph = seed000_ex1(torch, lang)
        write_png(variables, out("seed000_ex1_variables.png"))
        write_png(graph, out("seed000_ex1_make_dot.png"))
        write_png(seed003_ex9(torch, lang), out("seed003_ex9_detach.png"))
        write_png(seed000_appendix(torch, lang), out("seed000_appendix_make_dot.png"))
    print(f"drawn with {torch.__name__}")


if __name__ == "__main__":
    main()
