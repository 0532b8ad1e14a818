"""A small drawing model shared by both views: nodes, edges, collapsing, output.

The views (``make_dot`` and ``draw``) first describe what to draw as a
:class:`Model` (nodes in walk order, edges), then :func:`collapse` shrinks
models above ``max_nodes``, and :func:`to_digraph` / :func:`text_tree` write
the DOT source and the text view.  Node ids in the DOT come from a counter in
model order (``n0``, ``n1``, ...), never from ``id()``, so the same program
gives byte-identical DOT on every run.  Every walk here is iterative.
"""

from __future__ import annotations

from collections import Counter, deque

from ._render import AutogradDigraph

__all__ = ["Model", "collapse", "layout_cost", "to_digraph", "text_tree", "escape", "DEFAULT_MAX_NODES"]

#: Default node limit.  ``dot`` lays out graphs of this size in well under one
#: second (see ``bench/viz.py``); bigger graphs collapse their long chains.
DEFAULT_MAX_NODES = 300

FLOW, SHARE, SAVED, ATTACH, LAYOUT = "flow", "share", "saved", "attach", "layout"

#: The words this module writes into drawings and text trees, per language (see leafkit.set_language).
TEXT = {
    "en": {
        "more": "{n} more node",
        "more_plural": "{n} more nodes",
        "not_drawn": "not drawn: raise max_nodes to see them",
        "inputs_not_drawn": "(inputs not drawn)",
        "drawn_again": "(drawn again)",
        "saved_rel": "saved: ",
        "named_rel": "named: ",
        "share_rel": "shares storage with (no gradient): ",
        "see_above": "  (see above)",
        "more_lines": "({n} more lines)",
    },
    "zh": {
        "more": "还有 {n} 个节点",
        "more_plural": "还有 {n} 个节点",
        "not_drawn": "没有画出：调大 max_nodes 才能看到",
        "inputs_not_drawn": "（输入没有画出）",
        "drawn_again": "（再画一次）",
        "saved_rel": "保存的：",
        "named_rel": "命名的：",
        "share_rel": "与它共享存储（不传梯度）：",
        "see_above": "  （见上）",
        "more_lines": "（还有 {n} 行）",
    },
}


def escape(s) -> str:
    """``str(s)`` made safe inside a DOT label: backslashes and double quotes escaped.

    The one DOT escaper of the drawings.  A label's own line breaks are written after escaping
    (``escape(a) + "\\n" + escape(b)``), so a name such as ``"a\\nb"`` stays one line.
    """
    return str(s).replace("\\", "\\\\").replace('"', '\\"')


class VNode:
    __slots__ = ("kind", "name", "label", "text", "attrs", "cluster", "sig")

    def __init__(self, kind, name, label, text, attrs, cluster=None, sig=None):
        self.kind = kind  # 'fn', 'leaf', 'output', 'var', 'saved', 'more', 'ghost'
        self.name = name  # short name used in summaries ("PowBackward0", "x")
        self.label = label  # DOT label (plain text with \n, or an HTML-like <...> label)
        self.text = text  # one line for the text view
        self.attrs = attrs  # extra DOT attributes
        self.cluster = cluster  # name of the cluster (subgraph) holding it, or None
        self.sig = sig  # stable signature (diffing), or None


class VEdge:
    __slots__ = ("src", "dst", "kind", "attrs")

    def __init__(self, src, dst, kind, attrs):
        self.src, self.dst, self.kind, self.attrs = src, dst, kind, attrs


class Model:
    """Nodes and edges to draw, in a deterministic order."""

    def __init__(self, graph_attr=None, node_attr=None, edge_attr=None):
        self.nodes: list = []
        self.edges: list = []
        self.graph_attr = dict(graph_attr or {})
        self.node_attr = dict(node_attr or {})
        self.edge_attr = dict(edge_attr or {})
        self.clusters: dict = {}  # name -> attrs, in insertion order
        self.rows: dict = {}  # cluster name -> rows of VNodes, laid out left to right
        self.total_nodes = 0  # before collapsing
        self.lang = "en"  # the language of the words collapse() and text_tree() add

    def add_node(self, kind, name, label, text, cluster=None, sig=None, **attrs) -> int:
        self.nodes.append(VNode(kind, name, label, text, attrs, cluster, sig))
        return len(self.nodes) - 1

    def add_edge(self, src: int, dst: int, kind: str = FLOW, **attrs) -> None:
        self.edges.append(VEdge(src, dst, kind, attrs))


def _plural(n: int, lang: str = "en") -> str:
    return TEXT[lang]["more" if n == 1 else "more_plural"].format(n=f"{n:,}")


def _summary(names) -> str:
    common = Counter(names).most_common(2)
    return ", ".join(f"{name} \u00d7{count:,}" for name, count in common)


def _ranks(n, edges):
    """Layer of each node along FLOW edges, as ``dot`` would roughly place it.

    Nodes with inputs sit one below their deepest input; nodes without inputs
    sit just above their nearest consumer (network simplex pulls them there).
    """
    outs = [[] for _ in range(n)]
    indeg = [0] * n
    for e in edges:
        if e.kind == FLOW:
            outs[e.src].append(e.dst)
            indeg[e.dst] += 1
    has_in = [d > 0 for d in indeg]
    rank = [0] * n
    stack = [i for i in range(n) if indeg[i] == 0]
    while stack:
        a = stack.pop()
        for b in outs[a]:
            if rank[a] + 1 > rank[b]:
                rank[b] = rank[a] + 1
            indeg[b] -= 1
            if indeg[b] == 0:
                stack.append(b)
    for i in range(n):
        if not has_in[i] and outs[i]:
            rank[i] = min(rank[b] for b in outs[i]) - 1
    return rank


def layout_cost(model: Model) -> int:
    """Nodes ``dot`` really lays out: drawn nodes plus one virtual node per rank a
    FLOW edge skips.  Layout time grows with this, not with the node count."""
    rank = _ranks(len(model.nodes), model.edges)
    extra = 0
    for e in model.edges:
        if e.kind == FLOW:
            span = rank[e.dst] - rank[e.src]
            if span > 1:
                extra += span - 1
    return len(model.nodes) + extra


def collapse(model: Model, max_nodes, keep: int = 2) -> Model:
    """Return a model that ``dot`` lays out quickly: about ``max_nodes`` nodes at most.

    1. Long chains (backward nodes with one input and one consumer) lose their
       middle to a labelled "… N more nodes" node, longest chains first,
       keeping ``keep`` nodes at each end, until the count fits.
    2. If that is not enough (wide graphs), the nodes farthest from the
       outputs are cut: a "… N more nodes" node says how many, and a small
       "…" node marks each drawn node whose inputs were cut.
    3. Edges that would skip many layers (a weight reused at every step of a
       loop) make ``dot`` slow (seconds for 100 nodes); when the layout cost
       exceeds ``3 * max_nodes`` (even with ``max_nodes=None``: nothing is
       lost), such an edge starts from a small dashed copy
       of its source ("↺ w (drawn again)") placed next to the consumer.
    """
    n = len(model.nodes)
    model.total_nodes = n
    if max_nodes is not None:
        max_nodes = max(int(max_nodes), 2 * keep + 3)
        if n > max_nodes:
            model = _collapse_chains(model, max_nodes, keep)
        if len(model.nodes) > max_nodes:
            model = _truncate(model, max_nodes)
    # untangling loses nothing, so it also applies with max_nodes=None
    if layout_cost(model) > 3 * (max_nodes or DEFAULT_MAX_NODES):
        model = _untangle(model)
    return model


def _more_node(model, count, note):
    label = "\u2026 " + _plural(count, model.lang)
    return model.add_node(
        "more",
        label,
        label + "\\n(" + note + ")",
        label + " (" + note + ")",
        shape="box",
        style="dashed,rounded",
        fillcolor="white",
        fontcolor="#555555",
    )


def _collapse_chains(model: Model, max_nodes: int, keep: int) -> Model:
    n = len(model.nodes)
    ins = [[] for _ in range(n)]
    outs = [[] for _ in range(n)]
    other = [False] * n
    for e in model.edges:
        if e.kind == FLOW:
            outs[e.src].append(e.dst)
            ins[e.dst].append(e.src)
        else:
            other[e.src] = other[e.dst] = True
    nodes = model.nodes
    chainable = [
        nodes[i].kind == "fn" and len(ins[i]) == 1 and len(outs[i]) == 1 and not other[i] and nodes[i].cluster is None
        for i in range(n)
    ]
    chains = []
    for i in range(n):
        if not chainable[i] or chainable[outs[i][0]]:
            continue
        chain = [i]
        j = ins[i][0]
        while chainable[j] and len(chain) <= n:
            chain.append(j)
            j = ins[j][0]
        if len(chain) > 2 * keep + 1:
            chains.append(chain)
    chains.sort(key=lambda c: (-len(c), c[0]))
    visible = n
    hidden_by = {}  # node index -> its group
    groups = []  # (first hidden index, hidden list)
    for chain in chains:
        if visible <= max_nodes:
            break
        middle = chain[keep : len(chain) - keep]
        g = len(groups)
        groups.append((min(middle), middle))
        for h in middle:
            hidden_by[h] = g
        visible -= len(middle) - 1
    if not groups:
        return model
    new = Model(model.graph_attr, model.node_attr, model.edge_attr)
    new.clusters, new.rows, new.total_nodes = dict(model.clusters), model.rows, model.total_nodes
    new.lang = model.lang
    index = [-1] * n
    group_node = [-1] * len(groups)
    first_hidden = {first: g for g, (first, _) in enumerate(groups)}
    for i, node in enumerate(nodes):
        g = first_hidden.get(i)
        if g is not None:
            hidden = groups[g][1]
            group_node[g] = _more_node(new, len(hidden), _summary(nodes[h].name for h in hidden))
        if i in hidden_by:
            continue
        index[i] = len(new.nodes)
        new.nodes.append(node)
    for e in model.edges:
        s = index[e.src] if e.src not in hidden_by else group_node[hidden_by[e.src]]
        d = index[e.dst] if e.dst not in hidden_by else group_node[hidden_by[e.dst]]
        if s != d:
            new.edges.append(VEdge(s, d, e.kind, e.attrs))
    return new


MAX_CUT_MARKS = 40


def _truncate(model: Model, max_nodes: int) -> Model:
    """Keep the nodes nearest the outputs (breadth first); summarise the rest."""
    n = len(model.nodes)
    adj = [[] for _ in range(n)]
    has_out = [False] * n
    for e in model.edges:
        adj[e.dst].append(e.src)  # towards the inputs first
        adj[e.src].append(e.dst)
        if e.kind == FLOW:
            has_out[e.src] = True
    limit = max(1, max_nodes - 1 - min(MAX_CUT_MARKS, max_nodes // 4))
    keep = [False] * n
    kept = 0
    order = [i for i in range(n) if not has_out[i] and model.nodes[i].kind in ("output", "var")]
    order += [i for i in range(n) if not has_out[i]]
    order += list(range(n))
    queue = deque()
    for start in order:
        if kept >= limit:
            break
        if keep[start]:
            continue
        keep[start] = True
        kept += 1
        queue.append(start)
        while queue and kept < limit:
            i = queue.popleft()
            for j in adj[i]:
                if not keep[j] and kept < limit:
                    keep[j] = True
                    kept += 1
                    queue.append(j)
    hidden = n - kept
    new = Model(model.graph_attr, model.node_attr, model.edge_attr)
    new.clusters, new.rows, new.total_nodes = dict(model.clusters), model.rows, model.total_nodes
    new.lang = model.lang
    index = [-1] * n
    for i in range(n):
        if keep[i]:
            index[i] = len(new.nodes)
            new.nodes.append(model.nodes[i])
    _more_node(new, hidden, TEXT[model.lang]["not_drawn"])
    marks = 0
    marked = set()
    for e in model.edges:
        if keep[e.src] and keep[e.dst]:
            new.edges.append(VEdge(index[e.src], index[e.dst], e.kind, e.attrs))
        elif keep[e.dst] and e.kind == FLOW and index[e.dst] not in marked and marks < MAX_CUT_MARKS:
            marked.add(index[e.dst])
            marks += 1
            m = new.add_node(
                "more",
                "\u2026",
                "\u2026",
                "\u2026 " + TEXT[model.lang]["inputs_not_drawn"],
                shape="box",
                style="dashed,rounded",
                fillcolor="white",
                fontcolor="#555555",
                height="0.2",
                width="0.3",
            )
            new.edges.append(VEdge(m, index[e.dst], FLOW, {"style": "dashed"}))
    return new


def _untangle(model: Model, max_span: int = 2) -> Model:
    """Redirect layer-skipping edges to small copies of their source node."""
    rank = _ranks(len(model.nodes), model.edges)
    copies = []
    edges = []
    for e in model.edges:
        if e.kind == FLOW and rank[e.dst] - rank[e.src] > max_span:
            src = model.nodes[e.src]
            attrs = {k: v for k, v in src.attrs.items() if k in ("fillcolor",)}
            label = "\u21ba " + src.name
            again = TEXT[model.lang]["drawn_again"]
            copies.append(
                (
                    VNode(
                        "copy",
                        src.name,
                        label + "\\n" + again,
                        label + " " + again,
                        dict(attrs, style="filled,dashed,rounded", fontsize="9"),
                    ),
                    e,
                )
            )
        else:
            edges.append(e)
    if not copies:
        return model
    for node, e in copies:
        model.nodes.append(node)
        edges.append(VEdge(len(model.nodes) - 1, e.dst, FLOW, dict(e.attrs, style="dashed")))
    model.edges = edges
    return model


def to_digraph(model: Model, text_title: str = "") -> AutogradDigraph:
    """Write the model as an :class:`AutogradDigraph` (ids ``n0``, ``n1``, ... in model order)."""
    dg = AutogradDigraph(graph_attr=model.graph_attr, node_attr=model.node_attr, edge_attr=model.edge_attr)
    ids = [f"n{i}" for i in range(len(model.nodes))]
    pos = {id(node): i for i, node in enumerate(model.nodes)}
    in_cluster: dict = {}
    for i, node in enumerate(model.nodes):
        if node.cluster is None:
            dg.node(ids[i], node.label, **node.attrs)
        else:
            in_cluster.setdefault(node.cluster, []).append(i)
    for cname, attrs in model.clusters.items():
        members = in_cluster.get(cname)
        if not members:
            continue
        with dg.subgraph(name="cluster_" + cname) as sg:
            sg.attr(**attrs)
            rows = [[pos[id(v)] for v in row if id(v) in pos] for row in model.rows.get(cname, ())]
            rows = [row for row in rows if row]
            placed = {i for row in rows for i in row}
            for i in members:
                if i not in placed:
                    node = model.nodes[i]
                    sg.node(ids[i], node.label, **node.attrs)
            for r, row in enumerate(rows):
                with sg.subgraph() as rs:
                    rs.attr(rank="same")
                    for i in row:
                        node = model.nodes[i]
                        rs.node(ids[i], node.label, **node.attrs)
                    for a, b in zip(row, row[1:]):
                        rs.edge(ids[a], ids[b], style="invis")
                if r:
                    sg.edge(ids[rows[r - 1][0]], ids[row[0]], style="invis")
    for e in model.edges:
        dg.edge(ids[e.src], ids[e.dst], **e.attrs)
    dg._lk_text_fn = lambda: text_tree(model, text_title)
    dg._lk_lang = model.lang
    return dg


def text_tree(model: Model, title: str = "", max_lines: int = 400) -> str:
    """The model as an indented tree, outputs first, inputs indented below.

    A node reached twice is written once and referred to as "(see above)".
    """
    n = len(model.nodes)
    words = TEXT[model.lang]
    text_rel = {SAVED: words["saved_rel"], ATTACH: words["named_rel"]}
    incoming = [[] for _ in range(n)]
    has_out = [False] * n
    for e in model.edges:
        if e.kind == LAYOUT:
            continue
        if e.kind in text_rel:
            incoming[e.src].append((e.dst, text_rel[e.kind]))
        elif e.kind == SHARE:
            incoming[e.dst].append((e.src, words["share_rel"]))
            has_out[e.src] = True
        else:
            incoming[e.dst].append((e.src, ""))
            has_out[e.src] = True
    lines = [title] if title else []
    seen = [False] * n
    attached = [False] * n
    for e in model.edges:
        if e.kind in text_rel:
            attached[e.dst] = True
    roots = [i for i in range(n) if not has_out[i] and not attached[i]]
    roots += list(range(n))
    truncated = 0
    for root in roots:
        if seen[root]:
            continue
        stack = [(root, "", "", "")]
        while stack:
            i, prefix, branch, rel = stack.pop()
            if len(lines) >= max_lines:
                truncated += 1
                continue
            node = model.nodes[i]
            if seen[i]:
                lines.append(prefix + branch + rel + node.text + words["see_above"])
                continue
            seen[i] = True
            lines.append(prefix + branch + rel + node.text)
            kids = incoming[i]
            child_prefix = prefix + ("" if not branch else ("   " if branch.startswith("\u2514") else "\u2502  "))
            for k in range(len(kids) - 1, -1, -1):
                j, r = kids[k]
                stack.append((j, child_prefix, "\u2514\u2500 " if k == len(kids) - 1 else "\u251c\u2500 ", r))
    if truncated:
        lines.append("\u2026 " + words["more_lines"].format(n=f"{truncated:,}"))
    return "\n".join(lines)
