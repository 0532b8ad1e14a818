"""``MemoryExplorer``: what one training step keeps for backward, and what checkpointing and saved-tensor hooks change.

A small MLP (three Linear+SiLU blocks and a Linear head) runs one forward and one backward pass.
The learner checkpoints any of the three blocks (``torch.utils.checkpoint.checkpoint``, the
non-reentrant kind) and picks how saved tensors are kept: as they are, as a float16 copy (a pair
of ``saved_tensors_hooks``), or copied to the CPU (``save_on_cpu``).  The explorer runs the code
it shows (``_memory_program.py``), draws the graph with each node's saved tensors and their bytes
(:func:`leafkit.viz.memory.memory_dot`), and shows the total kept and the forward ops run again
during backward.

The facts are PyTorch's: "Autograd mechanics" (saved tensors), the tutorial "Hooks for saved
tensors" and the documentation of ``torch.utils.checkpoint``.
"""

from __future__ import annotations

import ipywidgets as W

from leafkit.viz import _palette as P
from leafkit.viz.memory import CHECKPOINT_FILL, CHECKPOINT_FRAME, PALE_SAVED, format_bytes

from ._controls import Control
from ._explorer import Explorer
from ._html import MUTED, code_html, esc, legend_items_html, mono, swatch, table_html
from ._memory_oracle import measure
from ._memory_program import BLOCKS, HOOKS, _block_name, hooks_available, memory_program, run_memory
from ._oracle import expect
from ._words import BASE_TEXT

__all__ = ["MemoryExplorer", "memory_program", "run_memory", "BLOCKS", "HOOKS", "hooks_available"]

TEXT = {
    "en": {
        "title": "MemoryExplorer: what backward keeps",
        "subtitle": "One training step of a small MLP: the tensors each node saves, their bytes, and what "
        "checkpointing and saved-tensor hooks change.",
        "summary": "checkpoint blocks of an MLP, keep saved tensors as they are, in float16 or on the CPU; "
        "each node's saved tensors, the bytes kept, the ops recomputed",
        "checkpoint": "checkpoint",
        "hooks": "saved tensors",
        "hook_none": "kept as they are",
        "hook_float16": "float16 copy (hooks)",
        "hook_cpu": "save_on_cpu",
        "code": "The code",
        "columns": ("node", "saved", "shape", "dtype", "bytes kept"),
        "table": "What each node keeps for backward",
        "recomputed_row": "nothing: recomputed in backward",
        "param_row": "0 (a view of a parameter)",
        "shared_row": "0 (same storage as {other})",
        "ckpt_input": "input of {block}",
        "kept": "Kept for backward: {total}",
        "kept_where": "{bytes} on {device}",
        "kept_paren": " ({where})",
        "list_sep": ", ",
        "recomputed": "Forward ops run again during backward ({n})",
        "recomputed_none": "Forward ops run again during backward: none",
        "legend_saved": "a saved tensor and the bytes it keeps",
        "legend_pale": "saved, but no new bytes",
        "legend_block": "a checkpointed block",
        "raises": "This code raises an error",
        "caption": "The graph before loss.backward(), with what each node keeps",
        "no_hooks": "saved_tensors_hooks is not in this leafkit yet: only 'kept as they are'",
        "why_plain": "Without checkpointing every node keeps what its backward formula reads: AddmmBackward0 its "
        "input mat1, SiluBackward0 its input self (the Linear output before the activation). A node keeps a "
        "reference, not a copy: mat2 is a view of the weight, which the model holds anyway, so it adds no bytes.",
        "why_ckpt": "The checkpointed blocks keep only their input: their nodes save nothing, and backward runs "
        "their forward again ({n} ops) to get the tensors back. Memory for time.",
        "why_float16": " The float16 hooks pack every saved tensor into a copy of half the size, once per save "
        "(parameters included): backward reads a float32 tensor rounded to float16.",
        "why_cpu": " save_on_cpu packs every saved tensor as tensor.cpu() and moves it back to its device in "
        "backward. On a GPU that is a copy in host memory, and the GPU memory is freed; here the model is on "
        "the CPU, where tensor.cpu() is the tensor itself: nothing changes.",
    },
    "zh": {
        "title": "MemoryExplorer：反向传播保存了什么",
        "subtitle": "一个小 MLP 的一步训练：每个节点保存的张量、它们占的字节，以及检查点和保存张量钩子带来的变化。",
        "summary": "给 MLP 的块做检查点（checkpoint），保存的张量原样保留、存成 float16 或放到 CPU；"
        "看每个节点保存的张量、占用的字节和重算的前向运算",
        "checkpoint": "检查点",
        "hooks": "保存的张量",
        "hook_none": "原样保留",
        "hook_float16": "float16 副本（钩子）",
        "hook_cpu": "save_on_cpu",
        "code": "代码",
        "columns": ("节点", "保存的", "形状", "dtype", "占用字节"),
        "table": "每个节点为反向传播保存的张量",
        "recomputed_row": "不保存：反向传播时重算",
        "param_row": "0（参数的视图）",
        "shared_row": "0（与 {other} 共用存储）",
        "ckpt_input": "{block} 的输入",
        "kept": "为反向传播保存：{total}",
        "kept_where": "{device} 上 {bytes}",
        "kept_paren": "（{where}）",
        "list_sep": "、",
        "recomputed": "反向传播时重跑的前向运算（{n} 个）",
        "recomputed_none": "反向传播时重跑的前向运算：没有",
        "legend_saved": "保存的张量和它占的字节",
        "legend_pale": "保存了，但不占新内存",
        "legend_block": "做了检查点的块",
        "raises": "这段代码抛出了错误",
        "caption": "loss.backward() 之前的计算图，以及每个节点保存的张量",
        "no_hooks": "这个版本的 leafkit 还没有 saved_tensors_hooks：只能“原样保留”",
        "why_plain": "不做检查点时，每个节点都保存反向公式要读的张量：`AddmmBackward0` 保存输入 `mat1`，"
        "`SiluBackward0` 保存它的输入 `self`（激活之前 Linear 的输出）。节点保存的是引用，不是副本："
        "`mat2` 是权重的视图，模型本来就持有权重，所以不占新内存。",
        "why_ckpt": "做了检查点的块只保存自己的输入：块里的节点什么也不存，反向传播时重新跑一遍它们的前向"
        "（{n} 个运算）把张量算回来。这是用时间换内存。",
        "why_float16": "float16 钩子把每个保存的张量打包成一半大小的副本，每保存一次就复制一次（参数也不例外）："
        "反向传播读到的是舍入成 float16 再转回 float32 的张量。",
        "why_cpu": "`save_on_cpu` 把每个保存的张量打包成 `tensor.cpu()`，反向传播时再搬回原来的设备。"
        "在 GPU 上这是一份放在主机内存里的副本，显存因此腾出来；这里模型本来就在 CPU 上，"
        "`tensor.cpu()` 就是张量本身，所以什么也没变。",
    },
}


def _rows(memory) -> list:
    """One dict per saved tensor (and one per recomputed node that would save some): plain values."""
    rows = []
    for n in memory.nodes:
        if n.block is not None:
            if n.name != "TBackward0":
                rows.append({"node": n.name, "attr": None, "block": n.block, "bytes": 0})
            continue
        for e in n.saved:
            rows.append(
                {
                    "node": n.name,
                    "attr": e.attr,
                    "shape": e.shape,
                    "dtype": e.dtype,
                    "device": e.device,
                    "bytes": e.nbytes,
                    "shared_with": e.shared_with,
                }
            )
    for e in memory.extra:
        rows.append(
            {
                "node": "checkpoint",
                "attr": e.attr,
                "shape": e.shape,
                "dtype": e.dtype,
                "device": e.device,
                "bytes": e.nbytes,
                "shared_with": e.shared_with,
            }
        )
    return rows


def legend_html(lang: str) -> str:
    """The legend under the explorer's drawing, in ``lang``."""
    words, base = TEXT[lang], BASE_TEXT[lang]
    return legend_items_html(
        [
            (swatch(P.LEAF.css), base["legend_leaf"]),
            (swatch(P.BACKWARD.css), base["legend_fn"]),
            (swatch(P.SAVED.css), words["legend_saved"]),
            (swatch(PALE_SAVED), words["legend_pale"]),
            (swatch(CHECKPOINT_FILL, CHECKPOINT_FRAME, "dashed"), words["legend_block"]),
        ]
    )


class MemoryExplorer(Explorer):
    """Checkpoint blocks of a small MLP and choose how saved tensors are kept; see what backward keeps.

    Parameters
    ----------
    checkpointed : tuple of 3 bool, default (False, False, False)
        Which of the blocks ``model[0:2]``, ``model[2:4]``, ``model[4:6]`` run under
        ``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``.
    hooks : {"none", "float16", "cpu"}, default "none"
        Saved tensors kept as they are, as float16 copies (``saved_tensors_hooks``), or in CPU
        memory (``save_on_cpu``).  The last two need ``torch.autograd.graph.saved_tensors_hooks``.
    zoom : float, default 1.0
    lang : {"en", "zh"} or None, default None

    Raises
    ------
    ValueError
        ``hooks`` is not one of :data:`HOOKS`, or ``checkpointed`` does not hold three values.

    Attributes
    ----------
    ckpt0, ckpt1, ckpt2 : ipywidgets.Checkbox
        Control keys ``"checkpoint:0"`` ... ``"checkpoint:2"``.
    hooks : ipywidgets.ToggleButtons
        Control key ``"hooks"``.
    result : MemoryResult
    kept_bytes : int
        The bytes the graph keeps for backward (parameters not counted).
    recomputed : list of str
        The modules whose forward ran again during backward.
    """

    TEXT = TEXT
    #: (The hooks' steps only where ``torch.autograd.graph.saved_tensors_hooks`` exists.)
    TOUR = (
        (
            ("checkpoint:1", True),
            ("checkpoint:0", True),
            ("hooks", "float16"),
            ("hooks", "cpu"),
            ("checkpoint:1", False),
            ("hooks", "none"),
        )
        if hooks_available()
        else (("checkpoint:1", True), ("checkpoint:0", True), ("checkpoint:1", False), ("checkpoint:2", True))
    )
    DEMO = "MemoryExplorer(checkpointed=(False, True, False))"
    css_class = "lk-memory-explorer"
    WIDE_DRAWINGS = True

    def __init__(self, checkpointed=(False, False, False), hooks="none", zoom=1.0, lang=None):
        super().__init__(zoom=zoom, lang=lang)
        if hooks not in HOOKS:
            raise ValueError(f"hooks must be one of {HOOKS}, got {hooks!r}")
        if len(tuple(checkpointed)) != len(BLOCKS):
            raise ValueError(f"checkpointed must give {len(BLOCKS)} booleans, got {checkpointed!r}")
        self.result = None
        self.drawing_pane.legend = legend_html
        lay = W.Layout(width="auto", margin="0 14px 0 0")
        self.ckpts = [
            W.Checkbox(
                value=bool(on), description=f"{self._t('checkpoint')} {_block_name(b)}", indent=False, layout=lay
            )
            for b, on in enumerate(checkpointed)
        ]
        self.ckpt0, self.ckpt1, self.ckpt2 = self.ckpts
        available = hooks_available()
        options = [(self._t(f"hook_{h}"), h) for h in (HOOKS if available else ("none",))]
        if hooks not in [v for _, v in options]:
            raise ValueError(self._t("no_hooks"))
        self.hooks = W.ToggleButtons(
            options=options,
            value=hooks,
            description=self._t("hooks"),
            style={"description_width": "initial", "button_width": "auto"},
            layout=W.Layout(margin="4px 0 0 0"),
        )
        for c in (*self.ckpts, self.hooks):
            c.observe(self._guard(self._on_change), names="value")
        rows = [W.HBox(self.ckpts, layout=W.Layout(flex_flow="row wrap")), self.hooks]
        self.totals_view = W.HTML()
        self.totals_view.add_class("lk-memory-totals")
        self._assemble(  # the table goes below, full width: the tall graph gets the room beside the code
            rows,
            left_views=[self.code_view, self.totals_view, self.message_view, self.explanation_view],
            left_width="440px",
            left_min="380px",
            below=[self.table_view],
        )
        self.refresh()

    def _controls(self) -> list:
        ctl = [Control(f"checkpoint:{b}", c, "checkbox") for b, c in enumerate(self.ckpts)]
        return [*ctl, Control("hooks", self.hooks, "toggle")]

    @property
    def state(self) -> dict:
        return {"checkpointed": tuple(c.value for c in self.ckpts), "hooks": self.hooks.value}

    def set_state(self, checkpointed=None, hooks=None) -> None:
        """Set several controls at once and redraw once."""
        self._batch = True
        try:
            if checkpointed is not None:
                for c, v in zip(self.ckpts, checkpointed):
                    c.value = bool(v)
            if hooks is not None:
                self.hooks.value = hooks
        finally:
            self._batch = False
        self.refresh()

    @property
    def kept_bytes(self) -> int:
        return 0 if self.result is None or self.result.memory is None else self.result.memory.kept_bytes

    @property
    def recomputed(self) -> list:
        return [] if self.result is None else list(self.result.recomputed)

    def _update(self) -> None:
        st = self.state
        res = run_memory(st["checkpointed"], st["hooks"], draw=True, lang=self.lang)
        self.result = res
        self.code = res.code
        self.code_view.value = code_html(res.code, self._t("code"))
        if res.error is not None or res.memory is None:
            self.rows = []
            self.table_view.value = self.totals_view.value = ""
            self._set_message("error", self._t("raises"), res.error or "")
            self.drawing_pane.clear()
            return
        self._set_message()
        self.rows = _rows(res.memory)
        self.table_view.value = table_html(
            self._t("columns"), [self._cells(r) for r in self.rows], title=self._t("table"), compact=True
        )
        self.totals_view.value = self._totals_html(res)
        self._set_explanation(self._sentence(st, res))
        self._show_drawing(res.drawing, caption=self._t("caption"))

    def _cells(self, r: dict) -> list:
        if r["attr"] is None:
            return [mono(r["node"]), f'<span style="color:{MUTED}">{esc(self._t("recomputed_row"))}</span>', "", "", ""]
        if r["shared_with"] == "parameter":
            kept = esc(self._t("param_row"))
        elif r["shared_with"] is not None:
            kept = esc(self._t("shared_row", other=r["shared_with"]))
        else:
            kept = f"<b>{esc(format_bytes(r['bytes']))}</b>"
        attr = esc(self._t("ckpt_input", block=r["attr"])) if r["node"] == "checkpoint" else mono(r["attr"])
        shape = mono("(" + ",\u00a0".join(str(s) for s in r["shape"]) + ")")
        return [mono(r["node"]), attr, shape, mono(r["dtype"].replace("torch.", "")), kept]

    def _totals_html(self, res) -> str:
        where = self._t("list_sep").join(
            self._t("kept_where", bytes=format_bytes(b), device=d) for d, b in res.memory.by_device().items()
        )
        total = self._t("kept", total=format_bytes(res.memory.kept_bytes)) + (
            self._t("kept_paren", where=where) if where else ""
        )
        rec = (
            self._t("recomputed", n=len(res.recomputed)) + self._t("colon") + self._t("list_sep").join(res.recomputed)
            if res.recomputed
            else self._t("recomputed_none")
        )
        return (
            f'<div style="font-size:14px;margin:4px 0 2px 2px"><b>{esc(total)}</b></div>'
            f'<div style="font-size:13px;color:{MUTED};margin:0 0 6px 2px">{esc(rec)}</div>'
        )

    def _sentence(self, st, res) -> str:
        text = self._t("why_ckpt", n=len(res.recomputed)) if any(st["checkpointed"]) else self._t("why_plain")
        if st["hooks"] != "none":
            text += self._t(f"why_{st['hooks']}")
        return text

    def oracle(self, torch) -> None:
        """Each saved tensor's node, name and shape, the bytes kept and the modules run again in backward
        are what the shown code gives on ``torch`` (see :meth:`Explorer.oracle`).

        The bytes are measured on ``torch`` independently of :func:`saved_memory`: every pack hook that
        runs during the forward pass is wrapped (the shown code's, ``save_on_cpu``'s and checkpoint's
        own), and without hooks an outer pair of hooks records each saved tensor; the tensors kept by
        reference count once per storage, parameters not at all.
        """
        st = self.state
        measured = measure(torch, self.code, st["checkpointed"], st["hooks"])
        expect(measured["error"] == (self.result.error if self.result else None), (self.code, measured["error"]))
        if measured["error"] is not None:
            return
        shown = [
            (r["node"], r["attr"], tuple(r["shape"])) for r in self.rows if r["attr"] and r["node"] != "checkpoint"
        ]
        expect(shown == measured["saved"], (self.code, shown, measured["saved"]))
        expect(self.kept_bytes == measured["kept_bytes"], (self.code, self.kept_bytes, measured["kept_bytes"]))
        expect(self.recomputed == measured["recomputed"], (self.code, self.recomputed, measured["recomputed"]))
