"""The colours of every drawing and every legend, in one place.

Three kinds of readers use them:

* the drawings (:func:`~leafkit.viz.make_dot`, :func:`~leafkit.viz.draw` and the
  ``BackwardStepper``'s pass) write a colour into DOT, as Graphviz names it (``lightblue``);
* the explorers' legends are HTML, and need the same colour as CSS (``#add8e6``);
* the text legends under ``make_dot`` and ``draw`` name a colour in words ("light blue",
  "浅蓝").

A colour that a legend names is a :class:`Colour`, which holds all three; the others are
plain CSS/DOT strings (``#rrggbb`` reads the same in both).  torchviz's four node colours
(grey backward node, light blue leaf, orange saved tensor, green output) come first.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Colour", "COLORS", "BACKWARD", "LEAF", "SAVED", "OUTPUT", "INTERMEDIATE", "FREED", "HOOKS", "WHITE"]


class Colour(NamedTuple):
    """One colour of the drawings, as each reader needs it.

    Attributes
    ----------
    dot : str
        As DOT writes it (a Graphviz colour name, or ``#rrggbb``).
    css : str
        The same colour as CSS (for the HTML legends).
    en, zh : str
        Its name in a text legend, per language.
    """

    dot: str
    css: str
    en: str
    zh: str

    def word(self, lang: str) -> str:
        """Its name in ``lang`` (``"en"`` or ``"zh"``)."""
        return self.zh if lang == "zh" else self.en


# -- torchviz's legend (make_dot), also the variables view's fills ----------------------------------------------------
BACKWARD = Colour("lightgrey", "#d3d3d3", "grey", "灰色")  # a backward node (grad_fn)
LEAF = Colour("lightblue", "#add8e6", "light blue", "浅蓝")  # a leaf tensor reached through AccumulateGrad
SAVED = Colour("orange", "#ffa500", "orange", "橙色")  # a tensor saved for backward (show_saved=True)
OUTPUT = Colour("darkolivegreen1", "#caff70", "green", "绿色")  # an output; a non-leaf in the variables view
INTERMEDIATE = Colour("darkolivegreen3", "#a2cd5a", "darker green", "深绿")  # a named non-leaf (make_dot params)
FREED = Colour("#f2f2f2", "#f2f2f2", "pale", "浅色")  # a backward node whose saved tensors were freed
HOOKS = Colour("purple", "#800080", "purple", "紫色")  # the border of a tensor with hooks (make_dot)
WHITE = Colour("white", "#ffffff", "white", "白色")  # a tensor that does not require grad (variables view)

#: ``make_dot``'s node fills by role, as DOT writes them (``leafkit.viz.dot.COLORS``).
COLORS = {
    "backward": BACKWARD.dot,
    "leaf": LEAF.dot,
    "saved": SAVED.dot,
    "output": OUTPUT.dot,
    "intermediate": INTERMEDIATE.dot,
    "freed": FREED.dot,
}

# -- borders, badges and marks ---------------------------------------------------------------------------------------
NONLEAF_BORDER = "#1b5e20"  # the thick border of a non-leaf (variables view)
NONLEAF_BADGE = "#c62828"  # the red "NON-LEAF" badge
LEAF_BADGE = "#1565c0"  # the blue "leaf" badge
NOGRAD_BADGE = "#757575"  # the grey "leaf, no grad" badge
NOGRAD_BORDER = "#9e9e9e"  # the dashed border of a tensor that does not require grad; a waiting node (stepper)
NEW = "#ef6c00"  # new or changed since the previous drawing; the node that ran at this step (stepper)
FLIP = "#d50000"  # is_leaf flipped since the previous drawing
SHARE = "#1565c0"  # the dashed "shares storage" edge (detach); a gradient sent along an edge (stepper)
MARKED = "#6a1b9a"  # the retains_grad / hooks lines of a variable
EDGE = "#555555"  # edges and solid borders
INK = "#111111"  # text on a filled node
SOFT_INK = "#444444"  # text on a node that has not run yet (stepper)
FADED_INK = "#777777"  # text of a freed node
GHOST = "#9e9e9e"  # what is gone since the previous drawing
GHOST_INK = "#757575"
CLUSTER_INK = "#616161"  # the caption of the requires_grad=False frame
MORE_INK = "#555555"  # the "… N more nodes" boxes

# -- BackwardStepper -------------------------------------------------------------------------------------------------
NOW = NEW  # the node that ran at this step, and the edges it sent along
NOW_FILL = "#ffe0b2"
READY = NEW  # the dashed border of a node whose gradients have all arrived
SENT = SHARE  # an edge that carried a gradient
WAITING = NOGRAD_BORDER  # a node that has not run, and an edge that carried nothing yet
