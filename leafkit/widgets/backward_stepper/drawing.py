"""The stepper's drawing: the backward graph at one moment of the pass, and its legend.

The graph is drawn as the pass sees it: the node that just ran in orange, the nodes that ran
before in grey, the nodes that are ready with a dashed orange border, the leaves in light blue
with their ``.grad``, and on each edge the gradient it carried.  The colours come from the
drawings' palette (:mod:`leafkit.viz._palette`); no widgets here.
"""

from __future__ import annotations

from leafkit.viz import _inspect as I
from leafkit.viz import _palette as P
from leafkit.viz._graph import FLOW, Model, escape, to_digraph
from leafkit.viz.dot import CJK_FONTNAME, COLORS

from .._html import MONO, legend_items_html, swatch
from .model import shape_text

__all__ = ["PassDrawing", "draw_pass", "legend_html"]


class PassDrawing:
    """The backward graph at one moment of the pass (what :class:`BackwardStepper` shows).

    Displays in a notebook as SVG (or as a text tree without Graphviz's ``dot``).

    Attributes
    ----------
    digraph : leafkit.viz.AutogradDigraph
        The Graphviz graph (``source`` is its DOT text).
    state : dict
        ``{"variables": names drawn, "current": label of the node that just ran or None,
        "done": labels of the nodes that ran, "ready": labels of the nodes ready to run}``.
    shows_retained : bool
        Whether a node has a double border (a tensor that retains its gradient): the legend then
        explains it.
    """

    def __init__(self, digraph, state, shows_retained=False):
        self.digraph = digraph
        self.state = state
        self.shows_retained = shows_retained

    @property
    def source(self) -> str:
        return self.digraph.source

    @property
    def text(self) -> str:
        return self.digraph.text

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        return self.digraph._repr_mimebundle_(include=include, exclude=exclude)

    def __repr__(self):
        return f"<PassDrawing: {len(self.state['done'])} nodes ran, current {self.state['current']!r}>"


def legend_html(words, shows_retained: bool) -> str:
    """The legend under the drawing (HTML), in the language of ``words`` (a :class:`~.sentences.Sentences`)."""
    t = words.t
    items = [
        (swatch(P.NOW_FILL, P.NOW, width=2.5), t("legend_now")),
        (swatch(P.BACKWARD.css), t("legend_done")),
        (swatch(P.WHITE.css, P.WAITING), t("legend_wait")),
        (swatch(P.WHITE.css, P.READY, "dashed", 2), t("legend_ready")),
        (swatch(P.LEAF.css), t("legend_leaf")),
        (swatch(P.OUTPUT.css), t("legend_out")),
        (swatch(P.FREED.css, P.WAITING, "dashed"), t("legend_freed")),
        *([(swatch(P.WHITE.css, "#555", "double", 3), t("legend_retains"))] if shows_retained else []),
        (f'<span style="color:{P.SENT};margin-right:4px;font-family:{MONO}">\u2193 [1.]</span>', t("legend_edge")),
    ]
    return legend_items_html(items)


def _model(lang: str) -> Model:
    font = "Helvetica" if lang == "en" else CJK_FONTNAME
    model = Model(
        dict(rankdir="BT", nodesep="0.35", ranksep="0.4", fontname=font, fontsize="10"),
        dict(
            shape="box",
            style="filled,rounded",
            fontname=font,
            fontsize="10",
            margin="0.08,0.04",
            fillcolor=P.WHITE.css,
            color=P.WAITING,
            fontcolor=P.SOFT_INK,
        ),
        dict(arrowsize="0.7", fontname=font, fontsize="9", dir="back", color=P.WAITING),
    )
    model.lang = lang
    return model


def draw_pass(p, words) -> PassDrawing:
    """The drawing of the pass ``p`` (a :class:`~.model.BackwardPass`) at the step it shows."""
    d = _PassDrawer(p, words)
    for k, fn in enumerate(p.order):
        d.ids.append(d.add_node(k, fn))
    d.add_edges()
    d.add_output()
    state = {
        "variables": d.names,
        "current": None if d.current is None else p.label(d.current),
        "done": [p.label(r.node) for r in d.shown],
        "ready": [p.label(p.order[k]) for k in sorted(d.ready)],
    }
    return PassDrawing(to_digraph(d.model), state, d.retained)


class _PassDrawer:
    """One drawing of the pass while it is built."""

    def __init__(self, p, words):
        self.p = p
        self.words = words
        self.t = words.t
        self.model = _model(words.lang)
        self.shown = p.shown
        self.done = {id(r.node): r for r in self.shown}
        self.current = self.shown[-1].node if self.shown else None
        self.ready = set(p.ready())
        self.grads = {tid: values for tid, (_tt, _obj, values) in p.state_at(p.cursor).items()}
        self.names = [p.loss_name]
        self.ids: list = []
        self.retained = False  # a node drawn with a double border: the legend explains it

    def _leaf_lines(self, fn, attrs):
        var = fn.variable
        name = self.p.name_of(var)
        if name and name not in self.names:
            self.names.append(name)
        head = f"{name or self.t('leaf')} {I.shape_str(var)}"
        g = self.words.short(self.grads.get(id(var)))
        attrs.update(fillcolor=COLORS["leaf"], color=P.EDGE, fontcolor=P.INK)
        return name, "leaf", [head, f".grad = {g}"], f"{head}  .grad = {g}"

    def _node_lines(self, fn, attrs):
        name = I.node_name(fn)
        made = self.p.made_by(fn)
        lines = [name] + ([f"({made})"] if made else [])
        if made and made not in self.names:
            self.names.append(made)
        for rt in self.p.retained_by(fn):
            lines.append(f"{self.p.tensor_name(rt)}.grad = {self.words.short(self.grads.get(id(rt)))}")
            attrs["peripheries"] = "2"
            self.retained = True
        if id(fn) in self.done:
            attrs.update(fillcolor=COLORS["backward"], color=P.EDGE, fontcolor=P.INK)
        return name, "fn", lines, " ".join(lines)

    def add_node(self, k, fn) -> int:
        """The box of node ``fn`` (the ``k``-th of the drawing order), marked by where the pass is."""
        t = self.t
        attrs = {}
        lines_of = self._leaf_lines if I.is_accumulate_grad(fn) else self._node_lines
        name, kind, lines, text = lines_of(fn, attrs)
        rec = self.done.get(id(fn))
        if rec is not None:
            mark = t("step_no", k=rec.index)
            if rec.node is self.current:
                mark += " \u00b7 " + t("now")
                attrs.update(
                    fillcolor=P.NOW_FILL if kind == "fn" else attrs.get("fillcolor"),
                    color=P.NOW,
                    penwidth="3",
                    fontcolor=P.INK,
                )
            lines.append(mark)
            if rec.freed:
                lines.append(t("freed_mark"))
                if rec.node is not self.current:  # the node that runs now keeps its solid orange frame
                    attrs["style"] = "filled,rounded,dashed"
                    attrs["fillcolor"] = COLORS["freed"]
            if rec.skipped:
                lines.append(t("skipped_mark"))
                attrs["style"] = "filled,rounded,dotted"
            text += f" [{mark}]"
        elif k in self.ready:
            lines.append(t("ready"))
            attrs.update(color=P.READY, style="filled,rounded,dashed", penwidth="2")
            text += f" [{t('ready')}]"
        label = "\\n".join(escape(x) for x in lines)
        return self.model.add_node(kind, name or "", label, text, **attrs)

    def add_edges(self) -> None:
        """The edges, from input to consumer (``dir=back``: the arrow points the way the gradient flows),
        labelled with the gradient each carried."""
        p, t = self.p, self.t
        sent = {}
        for rec in self.shown:
            for nxt, _nr, g, frm in rec.edges:
                sent.setdefault((id(rec.node), id(nxt)), []).append((g, frm, rec.node is self.current))
        for k, kids in enumerate(p.children):
            fn = p.order[k]
            seen_pairs: dict = {}
            for c, _nr in kids:
                if c is None:
                    continue
                key = (id(fn), id(p.order[c]))
                j = seen_pairs.get(key, 0)
                seen_pairs[key] = j + 1
                carried = sent.get(key, [])
                attrs = {}
                if j < len(carried):
                    g, frm, now = carried[j]
                    label = self.words.short(g)
                    if frm is not None and g is not None:
                        label += "\\n" + escape(t("summed", frm=shape_text(frm), to=shape_text(tuple(g.shape))))
                    attrs = dict(
                        label=" " + label + " ",
                        color=P.NOW if now else P.SENT,
                        fontcolor=P.NOW if now else P.SENT,
                        penwidth="2.2" if now else "1.3",
                    )
                self.model.add_edge(self.ids[c], self.ids[k], FLOW, **attrs)

    def add_output(self) -> None:
        """The tensor backward starts from, on top, and the edge that brings the first gradient."""
        p = self.p
        out_name = p.loss_name
        root_attrs = dict(fillcolor=COLORS["output"], color=P.EDGE, fontcolor=P.INK)
        if p.loss.grad_fn is None:
            root_attrs["style"] = "filled,rounded" if p.loss.requires_grad else "rounded,dashed"
        o = self.model.add_node(
            "output",
            out_name,
            escape(f"{out_name} {I.shape_str(p.loss)}"),
            f"{out_name} {I.shape_str(p.loss)} ({self.t('output')})",
            **root_attrs,
        )
        if p.order:
            started = bool(self.shown)
            self.model.add_edge(
                self.ids[0],
                o,
                FLOW,
                label=" " + escape(self.words.start_label()) + " ",
                color=P.SENT if started else P.WAITING,
                fontcolor=P.SENT if started else P.WAITING,
            )
