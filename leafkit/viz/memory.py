"""What a backward graph keeps: each node's saved tensors, their bytes, and a drawing of them.

:func:`saved_memory` walks the graph behind some outputs (``grad_fn``, ``next_functions``) and
reads every node's ``_saved_*`` tensors, as ``make_dot(show_saved=True)`` does, and counts the bytes
they keep alive.  :func:`memory_dot` draws the same graph with each saved tensor's shape, dtype
and bytes.  Only PyTorch's public autograd API is read, so both work on real ``torch`` tensors.

How the bytes are counted (the facts are PyTorch's, "Autograd mechanics: saved tensors" and the
tutorial "Hooks for saved tensors"):

* Without saved-tensor hooks a node keeps a *reference* to the tensor it saves, not a copy: two
  nodes that save the same activation (a ``ReluBackward0`` its ``result``, the next
  ``AddmmBackward0`` the same tensor as ``mat1``) keep its storage once, and a saved view of a
  parameter (``mat2`` is ``weight.t()``) keeps nothing the model does not hold already.
* With a ``pack`` hook every save is packed on its own: what ``pack(t)`` returns is what the
  graph keeps, once per save, parameters included; unless it returns the tensor itself (``t.cpu()``
  of a tensor already on the CPU, as ``save_on_cpu`` does there), which is kept by reference.
* Nodes listed in ``recomputed`` (those of a block run under ``torch.utils.checkpoint``) keep no
  tensor: their saved values are recomputed during backward.  Their ``_saved_*`` attributes are not
  read, because reading one would run that recomputation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .._lang import resolve_language
from . import _inspect as I
from . import _palette as P
from ._graph import SAVED, Model, escape, to_digraph
from .dot import CJK_FONTNAME, GRAPH_ATTR, LEGEND_ATTR, NODE_ATTR, walk

__all__ = ["SavedEntry", "NodeMemory", "SavedMemory", "saved_memory", "memory_dot", "format_bytes"]

#: The words the drawing writes, per language.
TEXT = {
    "en": {
        "kept_by": "kept by",
        "parameter": "a parameter's storage: no new bytes",
        "shared": "shared with {other}: no new bytes",
        "recomputed": "checkpoint: {block} (saves nothing, recomputed in backward)",
        "input": "checkpoint input",
        "total": "kept for backward: {total}",
        "legend": "orange: a saved tensor and the bytes it keeps    pale orange: saved, but no new bytes    "
        "yellow frame: a checkpointed block",
    },
    "zh": {
        "kept_by": "保存者",
        "parameter": "参数的存储：不占新内存",
        "shared": "与 {other} 共用存储：不占新内存",
        "recomputed": "检查点：{block}（什么也不保存，反向传播时重算）",
        "input": "检查点的输入",
        "total": "为反向传播保存：{total}",
        "legend": "橙色：保存的张量和它占的字节    浅橙色：保存了，但不占新内存    黄色框：做了检查点的块",
    },
}

PALE_SAVED = "#ffe0b2"
CHECKPOINT_FRAME = "#f9a825"
CHECKPOINT_FILL = "#fffde7"


def format_bytes(n: int) -> str:
    """``"8,192 B"`` below 1 MiB (exact, as a learner checks it by hand), else ``"1.50 MiB"``."""
    n = int(n)
    if n < 1 << 20:
        return f"{n:,} B"
    return f"{n / (1 << 20):.2f} MiB"


def _dtype_str(t) -> str:
    return str(getattr(t, "dtype", "?"))


def _nbytes(t) -> int:
    try:
        return int(t.numel()) * int(t.element_size())
    except Exception:
        return 0


def _storage_nbytes(t) -> int:
    try:
        return int(t.untyped_storage().nbytes())
    except Exception:
        return _nbytes(t)


@dataclass
class SavedEntry:
    """One tensor a node keeps for backward.

    Attributes
    ----------
    node : str
        The node's name (``"ReluBackward0"``); ``"checkpoint"`` for a checkpoint's input.
    attr : str
        The saved attribute without ``_saved_`` (``"result"``, ``"mat1"``).
    shape : tuple of int
        The shape backward reads.
    dtype, device : str
        What is kept (``"torch.float16"`` after a float16 ``pack`` hook, say).
    size : int
        Bytes of what is kept (of the whole storage when it is kept by reference).
    nbytes : int
        Bytes this entry adds to what the graph keeps: ``size``, or 0 when it shares an earlier
        entry's storage or a parameter's.
    shared_with : str or None
        ``"parameter"``, the ``node.attr`` of the earlier entry it shares storage with, or None.
    """

    node: str
    attr: str
    shape: tuple
    dtype: str
    device: str
    size: int
    nbytes: int
    shared_with: str | None = None


@dataclass
class NodeMemory:
    """A backward node, what it keeps, and whether its saved tensors are recomputed instead."""

    fn: object
    name: str
    saved: list = field(default_factory=list)
    block: str | None = None  # the checkpointed block it belongs to (its saved tensors are recomputed)


@dataclass
class SavedMemory:
    """What :func:`saved_memory` found.

    Attributes
    ----------
    nodes : list of NodeMemory
        In the walk's order (from the outputs towards the leaves).
    extra : list of SavedEntry
        What is kept besides the nodes' saves (a checkpoint's inputs).
    """

    nodes: list
    extra: list = field(default_factory=list)

    @property
    def entries(self) -> list:
        """Every :class:`SavedEntry`, nodes first, then ``extra``."""
        return [e for n in self.nodes for e in n.saved] + list(self.extra)

    @property
    def kept_bytes(self) -> int:
        """The bytes the graph keeps alive for backward (parameters not counted)."""
        return sum(e.nbytes for e in self.entries)

    def by_device(self) -> dict:
        """``{device: bytes}`` of :attr:`kept_bytes`."""
        out: dict = {}
        for e in self.entries:
            if e.nbytes:
                out[e.device] = out.get(e.device, 0) + e.nbytes
        return out


def _packed_tensors(packed) -> list:
    if I.is_tensor(packed):
        return [packed]
    if isinstance(packed, (tuple, list)):
        return [p for p in packed if I.is_tensor(p)]
    return []


class _Counter:
    """Turns saved tensors into :class:`SavedEntry` rows, sharing storages as PyTorch does."""

    def __init__(self, params, pack):
        self.pack = pack
        self.param_ptrs = {I.storage_ptr(p) for p in params} - {None}
        self.seen: dict = {}  # storage ptr -> "node.attr" that counted it first

    def entry(self, node: str, attr: str, t) -> SavedEntry:
        shape = I.shape_of(t)
        ptr = I.storage_ptr(t)
        if self.pack is not None:
            kept = _packed_tensors(self.pack(t))
            if not (len(kept) == 1 and ptr is not None and I.storage_ptr(kept[0]) == ptr):  # a copy
                size = sum(_nbytes(k) for k in kept)
                dtype = _dtype_str(kept[0]) if kept else "-"
                device = str(kept[0].device) if kept else "-"
                return SavedEntry(node, attr, shape, dtype, device, size, size)
            t = kept[0]  # the hook kept the tensor itself (``t.cpu()`` of a CPU tensor): by reference
        size = _storage_nbytes(t)
        e = SavedEntry(node, attr, shape, _dtype_str(t), str(t.device), size, size)
        if ptr is not None and ptr in self.param_ptrs:
            e.nbytes, e.shared_with = 0, "parameter"
        elif ptr is not None and ptr in self.seen:
            e.nbytes, e.shared_with = 0, self.seen[ptr]
        elif ptr is not None:
            self.seen[ptr] = f"{node}.{attr}"
        return e


def _saved_tensors(fn) -> list:
    """``[(attr, tensor)]`` of a node's ``_saved_*`` tensors (a tuple of tensors as ``attr[i]``)."""
    out = []
    for a, v in I.saved_items(fn) or ():
        if I.is_tensor(v):
            out.append((a, v))
        elif isinstance(v, (tuple, list)):
            out += [(f"{a}[{j}]", x) for j, x in enumerate(v) if I.is_tensor(x)]
    return out


def _params_of(params) -> list:
    if params is None:
        return []
    if isinstance(params, Mapping):
        return list(params.values())
    return list(params)


def saved_memory(outputs, *, params=None, recomputed=None, pack=None, extra=()) -> SavedMemory:
    """Each node's saved tensors behind ``outputs`` and the bytes they keep.

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
        Where the walk starts (their ``grad_fn``), torch or leafkit.
    params : dict of str to Tensor, or iterable of Tensor, optional
        The model's parameters: a saved tensor on one of their storages (``mat2`` of an
        ``AddmmBackward0`` is a view of ``weight``) adds no bytes when kept by reference.
    recomputed : dict of node to str, optional
        Nodes whose saved tensors are recomputed during backward (a checkpointed block's), each
        with the block's name.  Their ``_saved_*`` attributes are not read.
    pack : callable, optional
        What a saved-tensor hook keeps: ``pack(tensor)`` returns a tensor or a tuple holding tensors
        (``lambda t: t.to(torch.float16)``); a tensor on the input's own storage is kept by
        reference.  ``None``: every tensor is kept by reference.
    extra : sequence of (str, Tensor)
        Tensors kept besides the nodes' saves, as ``(name, tensor)`` (a checkpoint's inputs).

    Returns
    -------
    SavedMemory

    Raises
    ------
    TypeError
        ``outputs`` holds something that is not a tensor.
    """
    outs = [outputs] if I.is_tensor(outputs) else list(outputs)
    for t in outs:
        if not I.is_tensor(t):
            raise TypeError(f"saved_memory() outputs must be tensors, got {type(t).__name__}")
    recomputed = recomputed or {}
    with I.gc_paused():
        order, _ = walk([t.grad_fn for t in outs if t.grad_fn is not None])
        count = _Counter(_params_of(params), pack)
        nodes = []
        for fn in order:
            if I.is_accumulate_grad(fn):
                continue
            name = I.node_name(fn)
            block = recomputed.get(fn)
            node = NodeMemory(fn, name, block=block)
            if block is None:
                node.saved = [count.entry(name, a, t) for a, t in _saved_tensors(fn)]
            nodes.append(node)
        kept = [count.entry("checkpoint", name, t) for name, t in extra]
    return SavedMemory(nodes, kept)


def _saved_label(e: SavedEntry, words) -> tuple:
    shape = "(" + ", ".join(str(s) for s in e.shape) + ("," if len(e.shape) == 1 else "") + ")"
    lines = [escape(e.attr), f"{shape} {e.dtype.replace('torch.', '')}"]
    if e.shared_with is None:
        lines.append(format_bytes(e.size) + ("" if e.device == "cpu" else f" ({e.device})"))
        fill = P.SAVED.dot
    else:
        other = words["parameter"] if e.shared_with == "parameter" else words["shared"].format(other=e.shared_with)
        lines.append(escape(other))
        fill = PALE_SAVED
    return "\\n".join(lines), fill


def memory_dot(outputs, memory: SavedMemory, params=None, *, legend: bool = True, lang=None):
    """Draw the graph behind ``outputs`` with what :func:`saved_memory` found.

    Backward nodes are grey, leaves light blue and named from ``params`` (as in ``make_dot``);
    each saved tensor hangs off its node in orange with its shape, dtype and bytes, in pale orange
    when it adds no bytes (a parameter's storage, or one kept already).  The nodes of each
    checkpointed block sit in a yellow frame named after the block, with its input; the graph's
    label gives the total kept.

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
        The same outputs as given to :func:`saved_memory`.
    memory : SavedMemory
    params : dict of str to Tensor, optional
        Names of the leaves.
    legend : bool, default True
        Write the total kept and a legend under the graph (an explorer shows them as HTML instead).
    lang : {"en", "zh"} or None

    Returns
    -------
    AutogradDigraph
        Its ``state`` holds what it shows as plain values: ``variables`` (the leaves named from
        ``params``), ``kept_bytes``, ``nodes`` (name, block,
        saved ``(attr, shape, dtype, bytes)``) and ``extra``.
    """
    lang = resolve_language(lang)
    words = TEXT[lang]
    outs = [outputs] if I.is_tensor(outputs) else list(outputs)
    names = {id(t): n for n, t in (params or {}).items()}
    info = {id(n.fn): n for n in memory.nodes}
    model = Model(GRAPH_ATTR, NODE_ATTR)
    model.lang = lang
    with I.gc_paused():
        order, children = walk([t.grad_fn for t in outs if t.grad_fn is not None])
        index = [_memory_node(model, fn, info, names, words) for fn in order]
        for k, kids in enumerate(children):
            for c, _ in kids:
                if c is not None:
                    model.add_edge(index[c], index[k])
        for t in outs:
            o = model.add_node("output", "output", f" {I.shape_str(t)}", "output", fillcolor=P.OUTPUT.dot)
            if t.grad_fn is not None:
                model.add_edge(index[order.index(t.grad_fn)], o)
        _checkpoint_inputs(model, memory, words)
    total = words["total"].format(total=format_bytes(memory.kept_bytes))
    model.graph_attr.update(LEGEND_ATTR)
    if lang != "en":
        model.graph_attr["fontname"] = CJK_FONTNAME
    if legend:
        model.graph_attr["label"] = escape(total) + "\\l" + escape(words["legend"]) + "\\l"
    dg = to_digraph(model, total)
    dg.state = {
        "variables": [n for n in (params or {}) if any(getattr(fn, "variable", None) is params[n] for fn in order)],
        "kept_bytes": memory.kept_bytes,
        "nodes": [(n.name, n.block, [(e.attr, e.shape, e.dtype, e.nbytes) for e in n.saved]) for n in memory.nodes],
        "extra": [(e.attr, e.shape, e.dtype, e.nbytes) for e in memory.extra],
    }
    return dg


def _memory_node(model: Model, fn, info: dict, names: dict, words) -> int:
    if I.is_accumulate_grad(fn):
        var = fn.variable
        nm = names.get(id(var), "")
        label = (f"{escape(nm)}\\n " if nm else " ") + I.shape_str(var)
        return model.add_node("leaf", nm or "leaf", label, f"{nm} {I.shape_str(var)}", fillcolor=P.LEAF.dot)
    node = info.get(id(fn))
    name = I.node_name(fn)
    cluster = None
    if node is not None and node.block is not None:
        cluster = node.block
        if cluster not in model.clusters:
            model.clusters[cluster] = dict(
                label=escape(words["recomputed"].format(block=cluster)),
                style="filled,dashed",
                color=CHECKPOINT_FRAME,
                fillcolor=CHECKPOINT_FILL,
                fontsize="10",
            )
    i = model.add_node("fn", name, name, name, cluster=cluster)
    for e in node.saved if node is not None else ():
        label, fill = _saved_label(e, words)
        s = model.add_node("saved", e.attr, label, f"{e.attr} {format_bytes(e.nbytes)}", fillcolor=fill)
        model.add_edge(i, s, SAVED, dir="none")
    return i


def _checkpoint_inputs(model: Model, memory: SavedMemory, words) -> None:
    """The tensors a checkpoint keeps (its block's inputs), each in its block's frame."""
    for e in memory.extra:
        label, fill = _saved_label(SavedEntry(**{**e.__dict__, "attr": words["input"]}), words)
        model.add_node("saved", e.attr, label, f"{words['input']} {e.attr}", cluster=e.attr, fillcolor=fill)
