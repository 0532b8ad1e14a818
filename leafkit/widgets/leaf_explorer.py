"""``LeafExplorer``: which chains of clone / detach / cuda / ops keep a tensor a leaf?

Seeds 000 and 001.  The learner picks ``requires_grad`` at creation, a chain
of up to three steps, and whether ``requires_grad`` is set before the chain
(in ``torch.tensor(...)``) or after it (``t.requires_grad = ...``).  The
explorer shows the one-line program, runs it step by step in leafkit, and
shows a table of every intermediate, the variables-view drawing (what changed
since the last toggle highlighted) and one sentence explaining the result.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field

import ipywidgets as W

from leafkit._lang import resolve_language
from leafkit.viz import draw

from ._controls import Control
from ._explorer import Explorer
from ._html import bool_html, code_html, device_text, esc, mono, none_html, table_html
from ._oracle import as_torch, expect, fn_name, run_torch, statements
from ._program import error_text, facts, run_program

__all__ = [
    "LeafExplorer",
    "STEPS",
    "NO_STEP",
    "WHEN",
    "chain_code",
    "step_program",
    "run_chain",
    "explain_chain",
    "ChainResult",
]

NO_STEP = "(none)"
#: The chain steps, as they are written after a tensor expression.
STEPS = ("clone()", "detach()", "cuda()", "to('cpu')", "+ 2", "* 3")
#: Where ``requires_grad`` is set: in ``torch.tensor(...)`` or on the result of the chain.
WHEN = ("before", "after")
_BINOPS = {"+ 2": "+", "* 3": "*"}

#: Everything this explorer (and :func:`explain_chain`) writes, per language.  In the Chinese
#: sentences code is marked with backticks (shown in the code font).
TEXT = {
    "en": {
        "title": "Leaf explorer",
        "subtitle": (
            "Create a tensor, send it through clone / detach / cuda / to / an op, and see when it stays a leaf."
        ),
        "summary": "`requires_grad` at creation or after, a chain of up to three steps, `is_leaf` at every step",
        "when": "set requires_grad",
        "before": "before the chain",
        "after": "after the chain",
        "tip_before": "torch.tensor([1.0], requires_grad=...)",
        "tip_after": "t.requires_grad = ... on the result",
        "step": "step {i}",
        "none": "(none)",
        "code": "The code",
        "columns": ("var", "step by step (what runs)", "is_leaf", "requires_grad", "grad_fn", "device"),
        "table": "Every intermediate",
        "same_as": "same tensor as {name}",
        "raises": "This code raises an error",
        "disagree": "The one-line and step-by-step programs disagree",
        "disagree_text": "one line: {one}\nstep by step: {steps}",
        "caption": "Variables view \u00b7 orange / red: changed by your last change",
        # explain_chain
        "same_note": (
            "{step} on a tensor that is already on that device returns the very same tensor "
            "({var} is {same}): no copy, nothing recorded."
        ),
        "error": "The code raised an error, so there is no result to explain.",
        "leaf_it_came_from": "the leaf it came from",
        "the_leaf": "the leaf {name}",
        "non_leaf": (
            "{name} is not a leaf: {step} ran on a tensor that requires grad, so autograd recorded it "
            "(grad_fn={fn}) and backward() will pass {name}'s gradient on to {leaf} "
            "instead of storing it in {name}.grad."
        ),
        "leaf_rg_after": (
            "{name} is a leaf that requires grad: nothing before the last line required grad, so "
            "{name} was made without a graph (a leaf), and setting {name}.requires_grad = True on a "
            "leaf makes backward() store its gradient in {name}.grad."
        ),
        "leaf_rg": (
            "{name} is the tensor created with requires_grad=True itself, so it is a leaf that requires "
            "grad: backward() will store its gradient in {name}.grad."
        ),
        "detach_later": ", and the steps after it had nothing to record",
        "detach_step": "The {step} step",
        "detach_code": "{code}",
        "detach": (
            "{who} made a new tensor that shares storage with its input but does not require "
            "grad: a fresh leaf with requires_grad=False{tail}, so {name} is a leaf that gets no "
            "gradient."
        ),
        "nothing_after": (
            "Nothing here requires grad (setting {name}.requires_grad = False changes nothing), so no "
            "step is recorded: {name} is a leaf with requires_grad=False, like every tensor that does "
            "not require grad."
        ),
        "nothing": (
            "Nothing here requires grad (requires_grad=False at creation), so autograd records no step: "
            "{name} is a leaf with requires_grad=False, like every tensor that does not require grad, "
            "whatever clone/cuda/ops it went through."
        ),
    },
    "zh": {
        "title": "叶子张量探索器",
        "subtitle": "创建一个张量，让它经过 clone / detach / cuda / to / 一次运算，看它什么时候仍是叶子张量。",
        "summary": "在创建时或之后设置 `requires_grad`，再接最多三步的链，逐步看 `is_leaf`",
        "when": "requires_grad 设在",
        "before": "链之前",
        "after": "链之后",
        "tip_before": "torch.tensor([1.0], requires_grad=...)",
        "tip_after": "对结果写 t.requires_grad = ...",
        "step": "第 {i} 步",
        "none": "（无）",
        "code": "代码",
        "columns": ("变量", "逐步运行（实际执行的代码）", "is_leaf", "requires_grad", "grad_fn", "device"),
        "table": "每一个中间结果",
        "same_as": "与 {name} 是同一个张量",
        "raises": "这段代码抛出了错误",
        "disagree": "一行写法和逐步写法的结果不一致",
        "disagree_text": "一行写法：{one}\n逐步写法：{steps}",
        "caption": "变量视图 · 橙色 / 红色：你上一次改动带来的变化",
        "same_note": (
            "对已经在那个设备上的张量调用 `{step}`，返回的就是同一个张量（`{var} is {same}`）：不拷贝，也不记录。"
        ),
        "error": "代码抛出了错误，没有结果可以解释。",
        "leaf_it_came_from": "它所来自的叶子张量",
        "the_leaf": "叶子张量 `{name}`",
        "non_leaf": (
            "`{name}` 不是叶子张量：`{step}` 作用在一个需要梯度的张量上，自动求导记录了这一步"
            "（`grad_fn={fn}`）。反向传播时，`{name}` 的梯度会继续传给{leaf}，而不会存进 `{name}.grad`。"
        ),
        "leaf_rg_after": (
            "`{name}` 是需要梯度的叶子张量：最后一行之前没有任何张量需要梯度，所以 `{name}` 产生时"
            "背后没有计算图（它是叶子张量）；对叶子张量设置 `{name}.requires_grad = True`，"
            "backward() 就会把它的梯度存进 `{name}.grad`。"
        ),
        "leaf_rg": (
            "`{name}` 就是用 `requires_grad=True` 创建的那个张量本身，所以它是需要梯度的叶子张量："
            "backward() 会把它的梯度存进 `{name}.grad`。"
        ),
        "detach_later": "，之后的步骤也没有什么可记录的",
        "detach_step": "`{step}` 这一步",
        "detach_code": "`{code}` ",
        "detach": (
            "{who}产生了一个新张量：它和输入共享存储，但不需要梯度，是一个 `requires_grad=False` 的新叶子张量"
            "{tail}。所以 `{name}` 是叶子张量，得不到梯度。"
        ),
        "nothing_after": (
            "这里没有任何张量需要梯度（设置 `{name}.requires_grad = False` 什么也没改变），所以一步也"
            "没有记录：`{name}` 是 `requires_grad=False` 的叶子张量，不需要梯度的张量都是这样。"
        ),
        "nothing": (
            "这里没有任何张量需要梯度（创建时 `requires_grad=False`），所以自动求导一步也不记录：`{name}` "
            "是 `requires_grad=False` 的叶子张量。不需要梯度的张量都是叶子张量，不管经过了怎样的 "
            "clone / cuda / 运算。"
        ),
    },
}


def _step_list(steps) -> list:
    """``steps`` as a list: a single string is one step (``"clone()"``), not a sequence of characters."""
    if isinstance(steps, str):
        return [steps]
    try:
        return list(steps)
    except TypeError:
        raise TypeError(
            f"steps must be a step such as 'clone()' or a sequence of steps, got {type(steps).__name__}"
        ) from None


def _check_name(name) -> str:
    """A variable name for the code: a Python identifier that is not a keyword."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"name must be a Python variable name (an identifier such as 't'), got {name!r}")
    return name


def _check(requires_grad, steps, when, name="t"):
    _check_name(name)
    steps = [s for s in _step_list(steps) if s and s != NO_STEP]
    for s in steps:
        if s not in STEPS:
            raise ValueError(f"unknown step {s!r}; choose from {STEPS}")
    if when not in WHEN:
        raise ValueError(f"when must be 'before' or 'after', got {when!r}")
    return bool(requires_grad), steps, when


def _apply(expr: str, prev_op, step: str):
    """``(expression, top-level operator)`` for ``step`` applied to ``expr``."""
    op = _BINOPS.get(step)
    if op is None:  # a method call binds tighter than any operator
        if prev_op is not None:
            expr = f"({expr})"
        return f"{expr}.{step}", None
    if prev_op == "+" and op == "*":
        expr = f"({expr})"
    return f"{expr} {step}", op


def _creation(requires_grad: bool, when: str) -> str:
    return f"torch.tensor([1.0], requires_grad={requires_grad})" if when == "before" else "torch.tensor([1.0])"


def chain_code(requires_grad=True, steps=(), when="before", name="t") -> str:
    """The program as the articles write it: one line, plus the setter when ``after``.

    Examples
    --------
    >>> chain_code(True, ["cuda()", "detach()"])
    't = torch.tensor([1.0], requires_grad=True).cuda().detach()'
    >>> chain_code(True, ["+ 2", "* 3"], when="after")
    't = (torch.tensor([1.0]) + 2) * 3\\nt.requires_grad = True'
    """
    requires_grad, steps, when = _check(requires_grad, steps, when, name)
    expr, op = _creation(requires_grad, when), None
    for s in steps:
        expr, op = _apply(expr, op, s)
    code = f"{name} = {expr}"
    if when == "after":
        code += f"\n{name}.requires_grad = {requires_grad}"
    return code


def step_program(requires_grad=True, steps=(), when="before", name="t"):
    """The same program one step per line, naming every intermediate.

    Returns
    -------
    list of (str, str)
        ``(variable, statement)``: ``t0 = torch.tensor(...)``, ``t1 = t0.cuda()``,
        ..., the last one named ``name``; with ``when="after"`` a final
        ``t.requires_grad = ...`` line.
    """
    requires_grad, steps, when = _check(requires_grad, steps, when, name)
    names = [f"{name}{i}" for i in range(len(steps))] + [name]
    prog = [(names[0], f"{names[0]} = {_creation(requires_grad, when)}")]
    for i, s in enumerate(steps):
        src = names[i]
        rhs = f"{src}.{s}" if s not in _BINOPS else f"{src} {s}"
        prog.append((names[i + 1], f"{names[i + 1]} = {rhs}"))
    if when == "after":
        prog.append((name, f"{name}.requires_grad = {requires_grad}"))
    return prog


@dataclass
class ChainResult:
    """What :func:`run_chain` observed.

    Attributes
    ----------
    requires_grad, steps, when, name
        The inputs (``steps`` without the ``"(none)"`` entries).
    code : str
        :func:`chain_code`: the program shown.
    program : list of (str, str)
        :func:`step_program`: what ran, one statement per row.
    rows : list of dict
        One per statement, the tensor it produced or changed, read right after
        it ran: ``variable``, ``code``, ``is_leaf``, ``requires_grad``,
        ``grad_fn``, ``device``, ``same_as`` (the earlier variable when the
        step returned the very same tensor, e.g. ``to('cpu')`` on a CPU tensor).
    final : dict or None
        The facts of the result of the one-line program (run separately).
    tensors : dict
        Variable name → tensor, from the step-by-step run.
    error : str or None
        ``"RuntimeError: ..."`` when a statement raised (e.g. cuda unavailable).
    error_line : int or None
        The index of the statement that raised.
    """

    requires_grad: bool
    steps: list
    when: str
    name: str
    code: str
    program: list
    rows: list = field(default_factory=list)
    final: dict | None = None
    tensors: dict = field(default_factory=dict)
    error: str | None = None
    error_line: int | None = None


def run_chain(requires_grad=True, steps=(), when="before", name="t", torch_module=None) -> ChainResult:
    """Run the chain for real and read every intermediate.

    Both forms run: the one-line :func:`chain_code` (whose result is
    ``final``) and the step-by-step :func:`step_program` (whose snapshots are
    ``rows``); they must agree.

    Parameters
    ----------
    requires_grad : bool
        The value given to ``requires_grad``.
    steps : str or sequence of str
        Up to three of :data:`STEPS` (``"(none)"`` entries are skipped; one
        string is one step).
    when : {"before", "after"}
        Set ``requires_grad`` at creation, or on the result of the chain.
    name : str
        The result's variable name (a Python identifier; ValueError otherwise).
    torch_module : module, optional
        leafkit (default) or real PyTorch.

    Returns
    -------
    ChainResult
    """
    requires_grad, steps, when = _check(requires_grad, steps, when, name)
    code = chain_code(requires_grad, steps, when, name)
    prog = step_program(requires_grad, steps, when, name)
    res = ChainResult(requires_grad, steps, when, name, code, prog)
    seen: list = []

    def snap(i, ns):
        var = prog[i][0]
        t = ns[var]
        same = next((n for n, obj in seen if obj is t and n != var), None)
        seen.append((var, t))
        res.rows.append({"variable": var, "code": prog[i][1], **facts(t), "same_as": same})

    run = run_program([s for _, s in prog], torch_module, after_each=snap)
    res.tensors = {v: run.namespace[v] for v, _ in prog if v in run.namespace}
    if run.error is not None:
        res.error_line, exc = run.error
        res.error = error_text(exc)
        return res
    one = run_program(code.split("\n"), torch_module)
    if one.error is None:
        res.final = facts(one.namespace[name])
    else:
        res.error = error_text(one.error[1])
    return res


def explain_chain(res: ChainResult, one_line: bool = False, lang=None) -> tuple:
    """One sentence explaining the result of a chain, from what really happened.

    Parameters
    ----------
    res : ChainResult
        What :func:`run_chain` observed.
    one_line : bool, default False
        Word it for the one-line program (``.clone()`` rather than ``t0.clone()``),
        as the quiz shows it.
    lang : {"en", "zh"} or None, default None
        The language (``None``: :func:`leafkit.get_language`).  The Chinese
        sentences mark code with backticks, as Markdown does.

    Returns
    -------
    (str, list of str)
        The sentence, and short notes (e.g. ``to('cpu')`` returned the same tensor).
    """
    words = TEXT[resolve_language(lang)]
    name = res.name
    notes = []
    for r in res.rows:
        if r["same_as"] is not None and r["code"].endswith(("to('cpu')", "cuda()")):
            step = r["code"].split(".")[-1]
            notes.append(words["same_note"].format(step=step, var=r["variable"], same=r["same_as"]))
    if res.error is not None or not res.rows:
        return words["error"], notes
    last = res.rows[-1]
    first = res.rows[0]
    if not last["is_leaf"]:
        maker = next(
            (r for r in res.rows[1:] if r["grad_fn"] == last["grad_fn"] and r["same_as"] is None and not r["is_leaf"]),
            last,
        )
        step = _step_words(maker["code"], one_line)
        leaf = words["leaf_it_came_from"] if one_line else words["the_leaf"].format(name=first["variable"])
        return words["non_leaf"].format(name=name, step=step, fn=last["grad_fn"], leaf=leaf), notes
    if last["requires_grad"]:
        if res.when == "after":
            return words["leaf_rg_after"].format(name=name), notes
        return words["leaf_rg"].format(name=name), notes
    detach = next((r for r in res.rows if r["code"].endswith(".detach()")), None)
    if res.requires_grad and res.when == "before" and detach is not None:
        later = res.rows.index(detach) < len(res.rows) - 1
        tail = words["detach_later"] if later else ""
        who = (
            words["detach_step"].format(step=_step_words(detach["code"], True))
            if one_line
            else words["detach_code"].format(code=detach["code"])
        )
        return words["detach"].format(who=who, tail=tail, name=name), notes
    if res.when == "after" and not res.requires_grad:
        return words["nothing_after"].format(name=name), notes
    return words["nothing"].format(name=name), notes


def _step_words(code: str, one_line: bool) -> str:
    """``t1 = t0.clone()`` → ``t0.clone()`` (or ``.clone()`` / ``+ 2`` for the one-line wording)."""
    rhs = code.split(" = ", 1)[1]
    if not one_line:
        return rhs
    op = rhs.split(" ", 1)
    return op[1] if len(op) == 2 else "." + rhs.split(".", 1)[1]


def _row_cells(r, lang="en"):
    same = (
        f'<div style="font-size:11.5px;color:#6a1b9a">{esc(TEXT[lang]["same_as"].format(name=r["same_as"]))}</div>'
        if r["same_as"]
        else ""
    )
    return [
        f"<b>{esc(r['variable'])}</b>",
        mono(r["code"]) + same,
        bool_html(r["is_leaf"], strong_false=True),
        bool_html(r["requires_grad"]),
        mono(r["grad_fn"]) if r["grad_fn"] else none_html(),
        f'<span style="white-space:nowrap">{esc(device_text(r["device"], lang))}</span>',  # one line: cuda:0（模拟）
    ]


class LeafExplorer(Explorer):
    """Toggle ``requires_grad`` and a chain of clone / detach / cuda / to / ops; watch ``is_leaf``.

    Parameters
    ----------
    requires_grad : bool, default True
        Initial value of the ``requires_grad`` checkbox.
    steps : str or sequence of str, default ("cuda()", "detach()")
        Initial chain: up to three of :data:`STEPS` (one string is one step).
    when : {"before", "after"}, default "before"
        Set ``requires_grad`` in ``torch.tensor(...)`` or after the chain.
    name : str, default "t"
        The result's variable name in the code: a Python identifier.
    zoom : float, default 1.0
        Scale of the drawing.
    lang : {"en", "zh"} or None, default None
        The language of the panel (``None``: :func:`leafkit.get_language`).

    Raises
    ------
    ValueError
        An unknown step, more than three steps, ``when`` not "before" or
        "after", a ``name`` that is not a Python variable name
        (``"t t"``, ``""``, ``"if"``), or an unknown ``lang``.
    TypeError
        ``steps`` neither a string nor a sequence.

    Attributes
    ----------
    requires_grad : ipywidgets.Checkbox
        Description ``"requires_grad=True"``; control key ``"requires_grad"``.
    when : ipywidgets.ToggleButtons
        Description ``"set requires_grad"``; values ``"before"`` / ``"after"``; key ``"when"``.
    steps : list of ipywidgets.Dropdown
        Descriptions ``"step 1"`` .. ``"step 3"``; values from :data:`STEPS` or ``"(none)"``;
        keys ``"step1"`` .. ``"step3"``.
    result : ChainResult
        What the current state ran and observed.
    widget, code, rows, explanation, message, drawing, svg
        See :class:`leafkit.widgets._view.Explorer`.

    Examples
    --------
    >>> ex = LeafExplorer(True, ["cuda()", "detach()"])
    >>> ex.code
    't = torch.tensor([1.0], requires_grad=True).cuda().detach()'
    >>> ex.rows[-1]["is_leaf"], ex.rows[-1]["requires_grad"]
    (True, False)
    """

    TEXT = TEXT
    TOUR = (
        ("step3", "+ 2"),
        ("requires_grad", False),
        ("when", "after"),
        ("requires_grad", True),
        ("when", "before"),
        ("step2", "clone()"),
        ("step1", "+ 2"),
    )
    DEMO = "LeafExplorer(False, ['clone()'])"
    css_class = "lk-leaf-explorer"
    show_device = True

    def __init__(self, requires_grad=True, steps=("cuda()", "detach()"), when="before", name="t", zoom=1.0, lang=None):
        _, init_steps, when = _check(requires_grad, steps, when, name)
        super().__init__(zoom=zoom, lang=lang)
        if len(init_steps) > 3:
            raise ValueError("at most three steps")
        self.name = name
        self.result = None
        self._previous = None
        t = self._t
        self.requires_grad = W.Checkbox(
            value=bool(requires_grad),
            description="requires_grad=True",
            indent=False,
            layout=W.Layout(width="auto", margin="0 18px 0 0"),
        )
        self.when = W.ToggleButtons(
            options=[(t("before"), "before"), (t("after"), "after")],
            value=when,
            description=t("when"),
            style={"description_width": "initial", "button_width": "140px"},
            tooltips=[t("tip_before"), t("tip_after")],
            layout=W.Layout(display="flex", align_items="center"),
        )
        init = list(init_steps) + [NO_STEP] * (3 - len(init_steps))
        self.steps = [
            W.Dropdown(
                options=[(t("none"), NO_STEP), *((s, s) for s in STEPS)],
                value=v,
                description=t("step", i=i + 1),
                style={"description_width": "initial"},
                layout=W.Layout(width="150px", margin="0 10px 0 0"),
            )
            for i, v in enumerate(init)
        ]
        for c in (self.requires_grad, self.when, *self.steps):
            c.observe(self._guard(self._on_change), names="value")
        row1 = W.HBox([self.requires_grad, self.when], layout=W.Layout(align_items="center", flex_flow="row wrap"))
        row2 = W.HBox(self.steps, layout=W.Layout(align_items="center", flex_flow="row wrap", margin="4px 0 0 0"))
        self._assemble([row1, row2])
        self.refresh()

    def _controls(self) -> list:
        return [
            Control("requires_grad", self.requires_grad, "checkbox"),
            Control("when", self.when, "toggle"),
            *(Control(f"step{i + 1}", d, "dropdown") for i, d in enumerate(self.steps)),
        ]

    # -- state ------------------------------------------------------------
    @property
    def state(self) -> dict:
        """The controls' values: ``{"requires_grad", "steps", "when"}``."""
        return {
            "requires_grad": self.requires_grad.value,
            "steps": [d.value for d in self.steps if d.value != NO_STEP],
            "when": self.when.value,
        }

    def set_state(self, requires_grad=None, steps=None, when=None) -> None:
        """Set several controls at once and redraw once (the lessons and tests use this).

        Parameters
        ----------
        requires_grad : bool, optional
        steps : str or sequence of str, optional
            Up to three steps (one string is one step); the remaining dropdowns
            are set to ``"(none)"``.
        when : {"before", "after"}, optional
        """
        self._batch = True
        try:
            if requires_grad is not None:
                self.requires_grad.value = bool(requires_grad)
            if when is not None:
                self.when.value = when
            if steps is not None:
                steps = [s for s in _step_list(steps) if s != NO_STEP]
                if len(steps) > 3:
                    raise ValueError("at most three steps")
                for d, v in zip(self.steps, list(steps) + [NO_STEP] * (3 - len(steps))):
                    d.value = v
        finally:
            self._batch = False
        self.refresh()

    # -- rendering --------------------------------------------------------
    def _update(self) -> None:
        st = self.state
        res = run_chain(st["requires_grad"], st["steps"], st["when"], self.name)
        self.result = res
        self.code = res.code
        self.rows = res.rows
        prev_rows = {r["variable"]: r for r in (self._prev_rows or [])}
        changed = {
            i
            for i, r in enumerate(res.rows)
            if prev_rows.get(r["variable"]) is None
            or any(
                prev_rows[r["variable"]][k] != r[k] for k in ("is_leaf", "requires_grad", "grad_fn", "device", "code")
            )
        }
        if self._prev_rows is None:
            changed = set()
        self._prev_rows = res.rows
        self.code_view.value = code_html(res.code, self._t("code"))
        table_rows = [_row_cells(r, self.lang) for r in res.rows]
        self.table_view.value = table_html(self._t("columns"), table_rows, title=self._t("table"), highlight=changed)
        if res.error is not None:
            self._set_message("error", self._t("raises"), res.error)
        elif res.final is not None and res.final != {k: res.rows[-1][k] for k in res.final}:
            self._set_message(
                "warning", self._t("disagree"), self._t("disagree_text", one=res.final, steps=res.rows[-1])
            )
        else:
            self._set_message(None)
        sentence, notes = explain_chain(res, lang=self.lang)
        self._set_explanation(sentence, notes)
        self._draw(res)

    _prev_rows = None

    def _draw(self, res: ChainResult) -> None:
        tensors = {}
        for var, t in res.tensors.items():
            tensors[var] = t
        drawing = draw(tensors, previous=self._previous, lang=self.lang)
        self._previous = drawing
        self._show_drawing(drawing, caption=self._t("caption"))

    def oracle(self, torch) -> None:
        """Every row (``is_leaf``, ``requires_grad``, ``grad_fn`` after each step) and the error are PyTorch's;
        the one-line program shown ends in the same tensor (see :meth:`Explorer.oracle`)."""
        prog = [as_torch(stmt) for _, stmt in self.result.program]
        snaps = []

        def snap(i, ns):
            t = ns[self.result.program[i][0]]
            snaps.append((bool(t.is_leaf), bool(t.requires_grad), fn_name(t)))

        _, _, err = run_torch(prog, torch, snap)
        expect([(r["is_leaf"], r["requires_grad"], r["grad_fn"]) for r in self.rows] == snaps, self.code)
        same_error = (self.result.error is None) == (err is None) and (err is None or self.result.error == err)
        expect(same_error, (self.code, err))
        if err is None:  # the one-line program shown ends in the same tensor
            ns, _, err1 = run_torch(statements(as_torch(self.code)), torch)
            expect(err1 is None, (self.code, err1))
            t = ns[self.name]
            expect((bool(t.is_leaf), bool(t.requires_grad), fn_name(t)) == snaps[-1], self.code)
