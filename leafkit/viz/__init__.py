"""Drawings of the autograd graph, for torch and leafkit tensors alike.

- :func:`make_dot` draws the backward graph behind outputs in torchviz's
  colours (grey backward node, light blue leaf, orange saved tensor, green
  output), with a legend of the colours, borders and lines it uses.
- :func:`draw` is the variables view: named tensors as boxes, linked by the
  graph that made them, with dashed "shares storage" edges for ``detach()``.
- :func:`explain` answers "why is my ``.grad`` None?".

Only PyTorch's public autograd API is read, so the same calls draw real torch
tensors.  Every drawing displays in notebooks as SVG (cached by DOT source) or,
without Graphviz's ``dot`` program, as a text tree and a sentence on
installing Graphviz.

All three take ``lang="en"`` or ``lang="zh"`` (简体中文 legends, sentences and the
few words inside drawings; Chinese drawings name CJK fonts); ``lang=None`` follows
:func:`leafkit.set_language`.
"""

from ._graph import DEFAULT_MAX_NODES
from ._render import INSTALL_HINT, AutogradDigraph, clear_svg_cache, dot_available, render_svg
from .dot import make_dot
from .explain import REASONS, Explanation, explain
from .variables import VariablesDrawing, draw

__all__ = [
    "make_dot",
    "draw",
    "explain",
    "AutogradDigraph",
    "VariablesDrawing",
    "Explanation",
    "REASONS",
    "DEFAULT_MAX_NODES",
    "INSTALL_HINT",
    "render_svg",
    "dot_available",
    "clear_svg_cache",
]
