"""``draw``: the variables view, the picture the leaf-tensor articles are about.

Each named Python variable is a box (name, ``is_leaf``, ``requires_grad``,
``grad_fn``, ``device``, and ``.grad`` when set).  Edges run from each
variable to the backward node that made it, through the graph nodes between
them; a detached tensor is linked to its source by a dashed "shares storage"
edge that carries no gradient; tensors that do not require grad stand apart.
``draw(..., previous=earlier)`` marks what changed since an earlier drawing.
"""

from __future__ import annotations

import html

from .._lang import resolve_language
from . import _inspect as I
from . import _palette as P
from ._graph import DEFAULT_MAX_NODES, SHARE, Model, collapse, to_digraph
from ._render import display_bundle, render_svg
from .dot import CJK_FONTNAME, COLORS, walk

__all__ = ["draw", "VariablesDrawing"]

NONLEAF_FILL = COLORS["output"]  # green: a tensor made by an op (torchviz's output colour)
NONLEAF_BORDER = P.NONLEAF_BORDER
NONLEAF_BADGE = P.NONLEAF_BADGE
LEAF_FILL = COLORS["leaf"]
NOGRAD_BORDER = P.NOGRAD_BORDER
NEW_COLOR = P.NEW
FLIP_COLOR = P.FLIP
GRID_COLUMNS = 4

GRAPH_ATTR = dict(
    rankdir="TB", nodesep="0.3", ranksep="0.35", fontname="Helvetica", fontsize="10", labelloc="b", labeljust="l"
)
NODE_ATTR = dict(
    shape="box",
    style="filled,rounded",
    fontname="Helvetica",
    fontsize="10",
    fillcolor=COLORS["backward"],
    margin="0.08,0.04",
)
EDGE_ATTR = dict(arrowsize="0.7", color=P.EDGE, fontname="Helvetica")
# two left-justified lines (\\l): short enough that browsers' fonts never overflow dot's estimate of its width;
# the colours are named by the palette
_LEGEND_COLOURS = {"leaf": P.LEAF, "output": P.OUTPUT, "backward": P.BACKWARD, "white": P.WHITE}
_LEGEND = {
    "en": (
        "{leaf}: leaf    {output}: NON-LEAF (made by an op)    {backward}: backward node\\l"
        "{white}, dashed: requires_grad=False    dashed edge: shares storage, no gradient\\l"
    ),
    "zh": (
        "{leaf}：叶子张量    {output}：非叶子张量（由运算产生）    {backward}：反向节点（grad_fn）\\l"
        "{white}虚线框：requires_grad=False    虚线箭头：共享存储，不传梯度\\l"
    ),
}


def _legend(lang: str) -> str:
    return _LEGEND[lang].format(**{k: c.word(lang) for k, c in _LEGEND_COLOURS.items()})


LEGEND = _legend("en")

#: The words of the variables view, per language (``draw(..., lang=...)``).  Identifiers
#: (``is_leaf=True``, ``grad_fn=...``) are code and stay as they are in every language.
TEXT = {
    "en": {
        "legend": LEGEND,
        "badge_leaf": "leaf",
        "badge_leaf_nograd": "leaf, no grad",
        "badge_nonleaf": "NON-LEAF",
        "hooks": "hooks: {n}",
        "new": "NEW since previous drawing",
        "changed": "changed: {fields}",
        "nograd_cluster": "requires_grad=False: not part of any graph",
        "unnamed_leaf": "(unnamed leaf)",
        "freed": "(freed)",
        "new_node": "(new)",
        "share_edge": " shares storage\\n (detach: no gradient)",
        "gone_cluster": "gone since the previous drawing",
        "gone": "(gone)",
        "text_title": "variables (outputs first, inputs indented below):",
        "text_leaf": "leaf",
        "text_nonleaf": "NON-LEAF",
        "simulated": " (simulated)",
    },
    "zh": {
        "legend": _legend("zh"),
        "badge_leaf": "叶子张量",
        "badge_leaf_nograd": "叶子张量，不需要梯度",
        "badge_nonleaf": "非叶子张量",
        "hooks": "钩子：{n} 个",
        "new": "上一张图之后新出现",
        "changed": "有变化：{fields}",
        "nograd_cluster": "requires_grad=False：不属于任何计算图",
        "unnamed_leaf": "（未命名的叶子张量）",
        "freed": "（已释放）",
        "new_node": "（新）",
        "share_edge": " 共享存储\\n （detach：不传梯度）",
        "gone_cluster": "上一张图之后消失的",
        "gone": "（已消失）",
        "text_title": "变量（输出在上，输入缩进在下）：",
        "text_leaf": "叶子张量",
        "text_nonleaf": "非叶子张量",
        "simulated": "（模拟）",
    },
}

_VAR_FIELDS = ("is_leaf", "requires_grad", "grad_fn", "device", "grad")


def _device(dev: str, words) -> str:
    """``dev`` as the drawing shows it: the simulated cuda's ``" (simulated)"`` in the drawing's language."""
    suffix = TEXT["en"]["simulated"]
    return dev[: -len(suffix)] + words["simulated"] if dev.endswith(suffix) else dev


def _h(s) -> str:
    return html.escape(str(s), quote=True)


class _Var:
    __slots__ = (
        "names",
        "t",
        "is_leaf",
        "rg",
        "fn",
        "fn_name",
        "output_nr",
        "device",
        "shape",
        "grad",
        "retains",
        "hooks",
        "ptr",
        "node",
    )

    def __init__(self, name, t):
        self.names = [name]
        self.t = t
        self.is_leaf = bool(t.is_leaf)
        self.rg = bool(t.requires_grad)
        self.fn = t.grad_fn
        self.fn_name = I.node_name(self.fn) if self.fn is not None else None
        try:
            self.output_nr = int(getattr(t, "output_nr", 0))
        except Exception:
            self.output_nr = 0
        self.device = I.device_str(t)
        self.shape = I.shape_str(t)
        g = I.safe_grad(t)
        self.grad = None if g is None else I.format_values(g)
        self.retains = I.retains_grad(t) and not self.is_leaf
        self.hooks = I.hook_count(t)
        self.ptr = I.storage_ptr(t)
        self.node = -1

    @property
    def name(self):
        # a name that is empty or only blanks is shown as its repr (''): Graphviz refuses an
        # empty <FONT></FONT> in an HTML label, and a blank box title would say nothing
        return " = ".join(n if n.strip() else repr(n) for n in self.names)

    def state(self):
        return {
            "is_leaf": self.is_leaf,
            "requires_grad": self.rg,
            "grad_fn": self.fn_name,
            "device": self.device,
            "grad": self.grad,
            "shape": self.shape,
            "retains_grad": self.retains,
            "hooks": self.hooks,
        }


def _collect(mapping, named):
    items = []
    if mapping is not None:
        if not hasattr(mapping, "items"):
            raise TypeError(f"draw() takes a mapping of names to tensors, got {type(mapping).__name__}")
        for name, t in mapping.items():
            if isinstance(name, str) and not name.startswith("_") and I.is_tensor(t):
                items.append((name, t))
    for name, t in named.items():
        if not I.is_tensor(t):
            raise TypeError(f"draw() keyword {name!r} must be a tensor, got {type(t).__name__}")
        items.append((name, t))
    return items


def _var_label(v: _Var, change, words=TEXT["en"]):
    """An HTML-like label: a header row (name + badge) and one row per field."""
    if v.is_leaf:
        badge, badge_bg = (words["badge_leaf"], P.LEAF_BADGE) if v.rg else (words["badge_leaf_nograd"], P.NOGRAD_BADGE)
    else:
        badge, badge_bg = words["badge_nonleaf"], NONLEAF_BADGE
    rows = [
        f'<TR><TD ALIGN="LEFT"><B><FONT POINT-SIZE="13">{_h(v.name)}</FONT></B></TD>'
        f'<TD ALIGN="RIGHT" BGCOLOR="{badge_bg}"><FONT COLOR="white"><B> {_h(badge)} </B></FONT></TD></TR>'
    ]

    def row(text, bold=False, color=None):
        t = _h(text)
        if bold:
            t = f"<B>{t}</B>"
        if color:
            t = f'<FONT COLOR="{color}">{t}</FONT>'
        rows.append(f'<TR><TD ALIGN="LEFT" COLSPAN="2">{t}</TD></TR>')

    flip = change.get("flipped") if change else None
    if flip:
        row(f"is_leaf: {flip[0]} \u2192 {flip[1]}", bold=True, color=FLIP_COLOR)
    else:
        row(f"is_leaf={v.is_leaf}", bold=not v.is_leaf)
    row(f"requires_grad={v.rg}")
    row(f"grad_fn={v.fn_name}" if v.fn_name else "grad_fn=None")
    row(f"device={_device(v.device, words)}   shape={v.shape}")
    if v.grad is not None:
        row(f"grad={v.grad}", bold=True)
    if v.retains:
        row("retains_grad \u2713", color=P.MARKED)
    if v.hooks:
        row(words["hooks"].format(n=v.hooks), color=P.MARKED)
    if change and change.get("new"):
        row(words["new"], bold=True, color=NEW_COLOR)
    elif change and change.get("changed"):
        row(words["changed"].format(fields=", ".join(change["changed"])), bold=True, color=NEW_COLOR)
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">' + "".join(rows) + "</TABLE>>"


def _var_text(v: _Var, words=TEXT["en"]) -> str:
    kind = words["text_leaf"] if v.is_leaf else words["text_nonleaf"]
    parts = [f"{v.name} [{kind}] requires_grad={v.rg} grad_fn={v.fn_name} device={_device(v.device, words)}"]
    if v.grad is not None:
        parts.append(f"grad={v.grad}")
    if v.retains:
        parts.append("retains_grad")
    if v.hooks:
        parts.append(f"hooks={v.hooks}")
    return " ".join(parts)


def _signatures(order, children, leaf_name):
    """Stable signatures for graph nodes: name + the signatures of its inputs.

    Computed bottom-up with an explicit stack.  The same structure gives the
    same signature in another drawing, so nodes can be matched across states.
    """
    n = len(order)
    sig = [None] * n
    for start in range(n):
        if sig[start] is not None:
            continue
        stack = [(start, False)]
        while stack:
            k, expanded = stack.pop()
            if sig[k] is not None:
                continue
            if not expanded:
                stack.append((k, True))
                for c, _ in children[k]:
                    if c is not None and sig[c] is None:
                        stack.append((c, False))
                continue
            fn = order[k]
            if I.is_accumulate_grad(fn):
                sig[k] = "leaf:" + leaf_name(fn.variable)
            else:
                inner = ",".join("-" if c is None else f"{sig[c]}/{nr}" for c, nr in children[k])
                sig[k] = I.node_name(fn) + ":" + I.short_sig(I.node_name(fn) + "(" + inner + ")")
    seen: dict = {}
    out = []
    for s in sig:
        c = seen.get(s, 0)
        seen[s] = c + 1
        out.append(s if c == 0 else f"{s}#{c}")
    return out


class VariablesDrawing:
    """The result of :func:`draw`: a drawing of named variables and their graph.

    Attributes
    ----------
    digraph : AutogradDigraph
        The ``graphviz.Digraph`` (``.source`` is its DOT text).
    state : dict
        ``{"variables": {name: {is_leaf, requires_grad, grad_fn, device, grad,
        shape, retains_grad, hooks}}, "nodes": {signature: node name}}``: what
        ``draw(previous=...)`` compares.  Plain data, JSON-serialisable.
    changes : dict
        Versus ``previous``: ``{"added_variables", "gone_variables",
        "flipped" (names whose is_leaf changed), "changed" (name -> fields),
        "added_nodes", "gone_nodes"}``; all empty without ``previous``.
    lang : {"en", "zh"}
        The language of the legend and the words in the drawing.
    """

    def __init__(self, digraph, state, changes, lang="en"):
        self.digraph = digraph
        self.state = state
        self.changes = changes
        self.lang = lang

    @property
    def source(self) -> str:
        """The DOT source (byte-identical for the same program)."""
        return self.digraph.source

    @property
    def text(self) -> str:
        """The drawing as a text tree (what notebooks show without ``dot``)."""
        return self.digraph.text

    def pipe(self, format: str = "svg", **kwargs):
        """Render with Graphviz (``graphviz.Digraph.pipe``)."""
        return self.digraph.pipe(format=format, **kwargs)

    def render(self, *args, **kwargs):
        """Save and render with Graphviz (``graphviz.Digraph.render``)."""
        return self.digraph.render(*args, **kwargs)

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        return display_bundle(self.source, lambda: self.text, include, exclude, self.lang)

    def _repr_svg_(self):
        return render_svg(self.source)

    def __repr__(self):
        return f"<VariablesDrawing: {len(self.state['variables'])} variables, {len(self.state['nodes'])} graph nodes>"


def _prev_state(previous):
    if previous is None:
        return None
    if isinstance(previous, VariablesDrawing):
        return previous.state
    if isinstance(previous, dict) and "variables" in previous and "nodes" in previous:
        pv, pn = previous["variables"], previous["nodes"]
        if (
            isinstance(pv, dict)
            and isinstance(pn, dict)
            and all(isinstance(k, str) and isinstance(v, dict) for k, v in pv.items())
            and all(isinstance(k, str) and isinstance(v, str) for k, v in pn.items())
        ):
            return previous
        raise TypeError(
            "previous= must be an earlier draw() result (or its .state): a dict with "
            '"variables" ({name: {field: value}}) and "nodes" ({signature: node name}); got '
            f'"variables" of type {type(pv).__name__} and "nodes" of type {type(pn).__name__}'
            + (" with entries of the wrong types" if isinstance(pv, dict) and isinstance(pn, dict) else "")
        )
    raise TypeError(f"previous= must be an earlier draw() result (or its .state), got {type(previous).__name__}")


def draw(mapping=None, /, previous=None, lang=None, **named_tensors) -> VariablesDrawing:
    """Draw named tensors as boxes, with the autograd graph that links them.

    This is the "variables view": each named Python variable is a box showing
    its name, ``is_leaf``, ``requires_grad``, ``grad_fn``, ``device`` and
    ``.grad`` when set (read only where PyTorch does not warn: on leaves and on
    tensors that ``retains_grad``).  Leaves are light blue; non-leaves are
    green with a red "NON-LEAF" badge, so they stand out at a glance.  An edge
    runs from the backward node that made a variable (its ``grad_fn``) to the
    variable, and the graph nodes between variables are drawn as in
    :func:`make_dot` (grey; an ``AccumulateGrad`` is the leaf it feeds).  A
    tensor that shares storage with another named tensor but does not require
    grad (``y = x.detach()``) gets a dashed "shares storage" edge from its
    source: memory is shared, no gradient flows.  Tensors that do not require
    grad stand apart, in a dashed frame.

    Parameters
    ----------
    mapping : dict of str to Tensor, optional (positional only)
        Names and tensors, e.g. ``locals()``: entries that are not tensors, or
        whose names start with ``_``, are skipped.
    previous : VariablesDrawing or dict, optional
        An earlier drawing (or its ``.state``).  Variables are matched by
        name, graph nodes by a signature of their name and inputs.  New
        variables and nodes get an orange border, variables whose ``is_leaf``
        flipped a red one (``is_leaf: True → False``), and what is gone is
        drawn as a dotted ghost in a "gone since the previous drawing" frame.
    lang : {"en", "zh"} or None, default None
        The language of the legend and of the words in the drawing ("NEW since
        previous drawing", "shares storage", the badges); ``None`` means
        :func:`leafkit.get_language`.  Identifiers (``is_leaf=True``,
        ``grad_fn=MulBackward0``) are code and read the same in both.  With
        ``"zh"`` the DOT source names CJK fonts (Noto Sans CJK SC, WenQuanYi Zen
        Hei, ...) so that Graphviz and browsers draw the Chinese text; the
        English source names none of them.  (So ``lang`` is not a possible
        variable name here.)
    **named_tensors : Tensor
        More names and tensors (``draw(a=a, b=b)``).

    Returns
    -------
    VariablesDrawing
        With ``.digraph`` (a ``graphviz.Digraph``), ``.source``, ``.state``,
        ``.changes`` and ``.text``; displays as SVG in notebooks (cached by
        source), or as a text tree when Graphviz's ``dot`` is missing.

    Raises
    ------
    TypeError
        If a keyword value is not a tensor, ``mapping`` is not a mapping, or
        ``previous`` is not a drawing.
    ValueError
        If ``lang`` is not None, ``"en"`` or ``"zh"``.

    Notes
    -----
    Works on torch and leafkit tensors alike (only PyTorch's public autograd
    API is read).  The same program gives byte-identical DOT source.
    """
    lang = resolve_language(lang)
    with I.gc_paused():
        return _draw(mapping, previous, named_tensors, lang)


def _draw(mapping, previous, named_tensors, lang="en"):
    words = TEXT[lang]
    prev = _prev_state(previous)
    vars_ = _variables(_collect(mapping, named_tensors))
    changes, var_change, cur_states = _changes(vars_, prev)
    d = _VariablesView(vars_, var_change, words, lang)
    for v in vars_:
        if v.rg:
            d.add_var(v)
    node_state = d.add_graph(prev["nodes"] if prev is not None else None, changes)
    apart = [v for v in vars_ if not v.rg]
    for v in apart:
        d.add_var(v)
    if apart:  # tensors that don't require grad, laid out in a grid inside their frame, in order
        d.model.rows["nograd"] = [
            [d.model.nodes[v.node] for v in apart[r : r + GRID_COLUMNS]] for r in range(0, len(apart), GRID_COLUMNS)
        ]
    d.add_shared_storage()
    if prev is not None:
        changes["gone_nodes"] = [s for s in prev["nodes"] if s not in node_state]
        d.add_ghosts(changes["gone_variables"], changes["gone_nodes"], prev["nodes"])
    dg = to_digraph(collapse(d.model, DEFAULT_MAX_NODES), text_title=words["text_title"])
    return VariablesDrawing(dg, {"variables": cur_states, "nodes": node_state}, changes, lang)


def _variables(items) -> list:
    """One :class:`_Var` per tensor, in order; a tensor under several names is one variable with all of them."""
    vars_: list = []
    by_id: dict = {}
    for name, t in items:
        v = by_id.get(id(t))
        if v is not None:
            if name not in v.names:
                v.names.append(name)
            continue
        v = _Var(name, t)
        by_id[id(t)] = v
        vars_.append(v)
    return vars_


def _changes(vars_, prev):
    """``(changes, {id(var): its change}, {name: state})``: what changed since the ``previous`` drawing."""
    changes = {
        "added_variables": [],
        "gone_variables": [],
        "flipped": [],
        "changed": {},
        "added_nodes": [],
        "gone_nodes": [],
    }
    var_change: dict = {}
    cur_states = {}
    for v in vars_:
        st = v.state()
        for n in v.names:
            cur_states[n] = st
    if prev is None:
        return changes, var_change, cur_states
    pv = prev["variables"]
    for v in vars_:
        ch = {}
        for n in v.names:
            old = pv.get(n)
            if old is None:
                ch["new"] = True
                changes["added_variables"].append(n)
                continue
            st = cur_states[n]
            if old.get("is_leaf") != st["is_leaf"]:
                ch["flipped"] = (old.get("is_leaf"), st["is_leaf"])
                changes["flipped"].append(n)
            diff = [f for f in _VAR_FIELDS if f != "is_leaf" and old.get(f) != st[f]]
            if diff:
                ch["changed"] = diff
                changes["changed"][n] = diff
        if ch:
            var_change[id(v)] = ch
    changes["gone_variables"] = [n for n in pv if n not in cur_states]
    return changes, var_change, cur_states


class _VariablesView:
    """The model of one variables-view drawing while it is built."""

    def __init__(self, vars_, var_change, words, lang):
        self.vars = vars_
        self.by_id = {id(v.t): v for v in vars_}
        self.name_of = {id(v.t): v.name for v in vars_}
        self.var_change = var_change
        self.words = words
        self.model = model = Model(GRAPH_ATTR, NODE_ATTR, EDGE_ATTR)
        model.lang = lang
        model.graph_attr["label"] = words["legend"]
        if lang != "en":  # fonts with CJK glyphs; the English source stays as it always was
            for attrs in (model.graph_attr, model.node_attr, model.edge_attr):
                attrs["fontname"] = CJK_FONTNAME
        if any(not v.rg for v in vars_):
            model.clusters["nograd"] = dict(
                label=words["nograd_cluster"],
                style="dashed,rounded",
                color=NOGRAD_BORDER,
                fontcolor=P.CLUSTER_INK,
                fontsize="10",
                labeljust="l",
            )

    def add_var(self, v) -> None:
        """The box of a variable: light blue leaf, green non-leaf, or dashed white when it needs no grad."""
        ch = self.var_change.get(id(v))
        attrs = {}
        if not v.rg:
            attrs.update(fillcolor=P.WHITE.dot, style="filled,rounded,dashed", color=NOGRAD_BORDER)
        elif v.is_leaf:
            attrs.update(fillcolor=LEAF_FILL)
        else:
            attrs.update(fillcolor=NONLEAF_FILL, color=NONLEAF_BORDER, penwidth="2.5")
        if v.retains or v.hooks:
            attrs.update(peripheries="2")
        if ch:
            if ch.get("flipped"):
                attrs.update(color=FLIP_COLOR, penwidth="4")
            else:
                attrs.update(color=NEW_COLOR, penwidth="3")
        v.node = self.model.add_node(
            "var",
            v.name,
            _var_label(v, ch, self.words),
            _var_text(v, self.words),
            cluster=None if v.rg else "nograd",
            sig="var:" + v.name,
            **attrs,
        )

    def _leaf_name(self, t):
        n = self.name_of.get(id(t))
        return n if n is not None else "unnamed" + I.shape_str(t)

    def add_graph(self, prev_nodes, changes) -> dict:
        """The graph between the variables; returns ``{signature: node name}`` (the drawing's ``state["nodes"]``)."""
        order, children = walk([v.fn for v in self.vars if v.fn is not None])
        sigs = _signatures(order, children, self._leaf_name)
        made = {}  # (id(fn), output_nr) -> var node
        for v in self.vars:
            if v.fn is not None:
                made.setdefault((id(v.fn), v.output_nr), v.node)
        fn_node = [0] * len(order)
        unnamed: dict = {}
        node_state = {}
        for k, fn in enumerate(order):
            is_new = prev_nodes is not None and sigs[k] not in prev_nodes
            if I.is_accumulate_grad(fn):
                fn_node[k] = self._add_leaf(fn.variable, sigs[k], is_new, unnamed, node_state, changes)
            else:
                fn_node[k] = self._add_backward_node(fn, sigs[k], is_new, node_state, changes)
        for k, kids in enumerate(children):
            for c, nr in kids:
                if c is not None:
                    self.model.add_edge(made.get((id(order[c]), nr), fn_node[c]), fn_node[k])
        index = {id(fn): k for k, fn in enumerate(order)}
        for v in self.vars:
            if v.fn is not None:
                src = fn_node[index[id(v.fn)]]
                if made.get((id(v.fn), v.output_nr)) == v.node:
                    self.model.add_edge(src, v.node, penwidth="1.5")
                else:  # a second variable made by the same node output (e.g. an alias view)
                    self.model.add_edge(src, v.node, style="dotted")
        return node_state

    def _add_leaf(self, var, sig, is_new, unnamed, node_state, changes) -> int:
        """The variable box of a named leaf, or a small light blue box for an unnamed one (drawn once)."""
        v = self.by_id.get(id(var))
        if v is not None and v.node >= 0:
            return v.node
        if id(var) in unnamed:
            return unnamed[id(var)]
        words = self.words
        node_state[sig] = "leaf"
        if is_new:
            changes["added_nodes"].append(sig)
        label = (
            f"{words['unnamed_leaf']}\\nshape={I.shape_str(var)}  device={_device(I.device_str(var), words)}"
            f"\\nrequires_grad={bool(var.requires_grad)}"
        )
        attrs = dict(fillcolor=LEAF_FILL, fontsize="9", style="filled,rounded")
        if is_new:
            attrs.update(color=NEW_COLOR, penwidth="3")
        text = f"{words['unnamed_leaf']} {I.shape_str(var)} device={_device(I.device_str(var), words)}"
        unnamed[id(var)] = i = self.model.add_node("leaf", "unnamed leaf", label, text, sig=sig, **attrs)
        return i

    def _add_backward_node(self, fn, sig, is_new, node_state, changes) -> int:
        words = self.words
        name = I.node_name(fn)
        node_state[sig] = name
        if is_new:
            changes["added_nodes"].append(sig)
        freed = I.node_freed(fn)
        label = name + ("\\n" + words["freed"] if freed else "") + ("\\n" + words["new_node"] if is_new else "")
        attrs = {}
        if freed:
            attrs.update(style="filled,rounded,dashed", fillcolor=COLORS["freed"], fontcolor=P.FADED_INK)
        if is_new:
            attrs.update(color=NEW_COLOR, penwidth="3")
        return self.model.add_node("fn", name, label, name + (" " + words["freed"] if freed else ""), sig=sig, **attrs)

    def add_shared_storage(self) -> None:
        """Dashed "shares storage" edges (``detach()``): memory is shared, no gradient flows along them."""
        groups: dict = {}
        for v in self.vars:
            if v.ptr is not None:
                groups.setdefault(v.ptr, []).append(v)
        for members in groups.values():
            if len(members) < 2:
                continue
            src = next((m for m in members if m.rg), members[0])
            for m in members:
                if m is src or m.rg:
                    continue
                self.model.add_edge(
                    src.node,
                    m.node,
                    SHARE,
                    style="dashed",
                    color=P.SHARE,
                    fontcolor=P.SHARE,
                    fontsize="9",
                    arrowhead="empty",
                    label=self.words["share_edge"],
                )

    def add_ghosts(self, gone_vars, gone_nodes, prev_nodes) -> None:
        """Dotted ghosts, in a "gone since the previous drawing" frame, of what the previous drawing had."""
        if not gone_vars and not gone_nodes:
            return
        words = self.words
        self.model.clusters["gone"] = dict(
            label=words["gone_cluster"], style="dotted", color=P.GHOST, fontcolor=P.GHOST_INK, fontsize="10"
        )
        ghost = dict(cluster="gone", style="dotted,rounded", fillcolor=P.WHITE.dot, fontcolor=P.GHOST, color=P.GHOST)
        for n in gone_vars:
            self.model.add_node("ghost", n, f"{n}\\n{words['gone']}", f"{n} {words['gone']}", **ghost)
        for s in gone_nodes:
            nm = prev_nodes[s]
            label = words["unnamed_leaf"] if nm == "leaf" else nm
            self.model.add_node("ghost", nm, f"{label}\\n{words['gone']}", f"{label} {words['gone']}", **ghost)
