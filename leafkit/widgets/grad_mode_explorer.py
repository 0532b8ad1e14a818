"""``GradModeExplorer``: how ``requires_grad`` propagates through an op, and what ``no_grad`` does.

Seed 003, examples 3 to 6.  Two inputs ``x`` and ``y``, each with or without
``requires_grad``, an operator (``* / + -``) and a ``no_grad`` switch.  The
explorer runs the code, shows ``z.requires_grad``, ``z.grad_fn`` and what
``z.backward()`` really does: the gradients, or PyTorch's error text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ipywidgets as W

from leafkit._lang import resolve_language
from leafkit.viz import draw

from ._controls import Control
from ._explorer import Explorer
from ._html import MUTED, bool_html, code_html, esc, mono, none_html, table_html
from ._oracle import expect, fn_name, grad_of, run_torch, statements
from ._program import error_text, facts, format_value, grad_value, run_program

__all__ = ["GradModeExplorer", "OPERATORS", "grad_mode_program", "run_grad_mode", "explain_grad_mode", "GradModeResult"]

OPERATORS = ("*", "/", "+", "-")

#: Everything this explorer (and :func:`explain_grad_mode`) writes, per language; the Chinese
#: sentences mark code with backticks.
TEXT = {
    "en": {
        "title": "requires_grad and no_grad explorer",
        "subtitle": "z = x (op) y: when does z require grad, what is its grad_fn, and can z.backward() run?",
        "summary": "which inputs require grad, the operator, `no_grad()`; what `z.backward()` does",
        "operator": "operator",
        "code": "The code",
        "mark_raises": "raises RuntimeError",
        "mark_runs": "runs",
        "raises": "This code raises an error",
        "columns": ("var", "is_leaf", "requires_grad", "grad_fn", ".grad after z.backward()"),
        "table": "x, y and z",
        "inside_no_grad": "inside no_grad",
        "where_z": "where z was computed",
        "enabled": "torch.is_grad_enabled() {where}: ",
        "backward_raises": "z.backward() raises",
        "backward_runs": "z.backward() runs",
        "caption": "Variables view before z.backward()",
        # explain_grad_mode
        "error": "The code raised an error, so there is nothing to explain.",
        "and": " and ",
        "requires": "requires",
        "require": "require",
        "no_grad": (
            "Inside torch.no_grad() autograd records nothing, so z = x {op} y gets no grad_fn and "
            "requires_grad=False even though {inputs} {verb} grad; z is a leaf with no graph behind it, "
            "and z.backward() fails because there is nothing to differentiate."
        ),
        "no_grad_changes_nothing": " (no_grad changes nothing here)",
        "untracked": (
            "Neither x nor y requires grad, so z = x {op} y is not tracked{extra}: no grad_fn, "
            "requires_grad=False, and z.backward() fails because there is nothing to differentiate."
        ),
        "store": "dz/d{g} in {g}.grad",
        "stores_sep": " and ",
        "tail": "; {n}.grad stays None because {n} does not require grad",
        "tracked": (
            "Because {inputs} {verb} grad, z does too: autograd recorded {fn} as z.grad_fn, "
            "which makes z a non-leaf, and z.backward() stores {stores}{tail}."
        ),
    },
    "zh": {
        "title": "requires_grad 与 no_grad 探索器",
        "subtitle": "z = x（运算）y：z 什么时候需要梯度？它的 grad_fn 是什么？z.backward() 能不能运行？",
        "summary": "哪些输入需要梯度、用哪个运算符、要不要 `no_grad()`；`z.backward()` 会怎样",
        "operator": "运算符",
        "code": "代码",
        "mark_raises": "抛出 RuntimeError",
        "mark_runs": "可以运行",
        "raises": "这段代码抛出了错误",
        "columns": ("变量", "is_leaf", "requires_grad", "grad_fn", "z.backward() 之后的 .grad"),
        "table": "x、y 和 z",
        "inside_no_grad": "在 no_grad 里",
        "where_z": "在计算 z 的地方",
        "enabled": "torch.is_grad_enabled() {where}：",
        "backward_raises": "`z.backward()` 抛出错误",
        "backward_runs": "`z.backward()` 可以运行",
        "caption": "z.backward() 之前的变量视图",
        "error": "代码抛出了错误，没有什么可以解释的。",
        "and": " 和 ",
        "requires": "",
        "require": "都",
        "no_grad": (
            "在 `torch.no_grad()` 里，自动求导什么也不记录：即使 {inputs} {verb}需要梯度，`z = x {op} y` 也没有 "
            "`grad_fn`，`requires_grad=False`。`z` 是背后没有计算图的叶子张量，`z.backward()` 会失败，"
            "因为没有东西可以求导。"
        ),
        "no_grad_changes_nothing": "（这里 no_grad 不改变什么）",
        "untracked": (
            "`x` 和 `y` 都不需要梯度，所以 `z = x {op} y` 不会被记录{extra}：没有 `grad_fn`，"
            "`requires_grad=False`，`z.backward()` 会失败，因为没有东西可以求导。"
        ),
        "store": "把 dz/d{g} 存进 `{g}.grad`",
        "stores_sep": "，",
        "tail": "；`{n}` 不需要梯度，所以 `{n}.grad` 保持为 None",
        "tracked": (
            "因为 {inputs} {verb}需要梯度，`z` 也需要：自动求导把 `{fn}` 记为 `z.grad_fn`，所以 `z` 是非叶子张量；"
            "`z.backward()` 会{stores}{tail}。"
        ),
    },
}


def grad_mode_program(x_requires_grad=True, y_requires_grad=False, op="*", no_grad=False):
    """``(forward statements, backward statement)`` for one state.

    Examples
    --------
    >>> fwd, bwd = grad_mode_program(True, True, "*", no_grad=True)
    >>> print("\\n".join(fwd + [bwd]))
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([2.0], requires_grad=True)
    with torch.no_grad():
        z = x * y
    z.backward()
    """
    if op not in OPERATORS:
        raise ValueError(f"op must be one of {OPERATORS}, got {op!r}")
    fwd = [
        f"x = torch.tensor([2.0], requires_grad={bool(x_requires_grad)})",
        f"y = torch.tensor([2.0], requires_grad={bool(y_requires_grad)})",
    ]
    if no_grad:
        fwd.append(f"with torch.no_grad():\n    z = x {op} y")
    else:
        fwd.append(f"z = x {op} y")
    return fwd, "z.backward()"


@dataclass
class GradModeResult:
    """What :func:`run_grad_mode` observed.

    Attributes
    ----------
    code : str
        The whole program shown (forward lines, then ``z.backward()``).
    forward : dict
        ``{"x", "y", "z"}`` → facts (``is_leaf``, ``requires_grad``, ``grad_fn``, ``device``)
        right after the forward lines.
    grad_enabled_inside : bool
        ``torch.is_grad_enabled()`` where ``z`` was computed.
    backward_error : str or None
        ``"RuntimeError: element 0 of tensors does not require grad ..."`` or None.
    grads : dict
        ``{"x", "y"}`` → ``.grad`` after ``z.backward()`` (a tensor repr, or None).
    tensors : dict
        ``x``, ``y``, ``z`` (after the forward lines).
    """

    x_requires_grad: bool
    y_requires_grad: bool
    op: str
    no_grad: bool
    code: str
    forward: dict = field(default_factory=dict)
    grad_enabled_inside: bool = True
    backward_error: str | None = None
    grads: dict = field(default_factory=dict)
    tensors: dict = field(default_factory=dict)
    error: str | None = None


def run_grad_mode(
    x_requires_grad=True, y_requires_grad=False, op="*", no_grad=False, torch_module=None, before_backward=None
):
    """Run the forward lines, read x, y, z, then run ``z.backward()`` and read the grads.

    Parameters
    ----------
    x_requires_grad, y_requires_grad : bool
    op : {"*", "/", "+", "-"}
    no_grad : bool
        Compute ``z`` inside ``with torch.no_grad():``.
    torch_module : module, optional
        leafkit (default) or real PyTorch.
    before_backward : callable, optional
        Called with the namespace after the forward lines, before ``z.backward()``
        (the explorer draws the graph there).

    Returns
    -------
    GradModeResult
    """
    fwd, bwd = grad_mode_program(x_requires_grad, y_requires_grad, op, no_grad)
    res = GradModeResult(bool(x_requires_grad), bool(y_requires_grad), op, bool(no_grad), "\n".join(fwd + [bwd]))
    run = run_program(fwd, torch_module)
    if run.error is not None:
        res.error = error_text(run.error[1])
        return res
    ns = run.namespace
    # is_grad_enabled() where z was computed: a separate probe, the shown code stays exact
    probe = run_program(
        [
            "with torch.no_grad():\n    enabled = torch.is_grad_enabled()"
            if no_grad
            else "enabled = torch.is_grad_enabled()"
        ],
        torch_module,
    )
    res.grad_enabled_inside = bool(probe.namespace.get("enabled", True))
    res.tensors = {k: ns[k] for k in ("x", "y", "z")}
    res.forward = {k: facts(ns[k]) for k in ("x", "y", "z")}
    if before_backward is not None:
        before_backward(ns)
    back = run_program([bwd], torch_module, namespace=ns)
    if back.error is not None:
        res.backward_error = error_text(back.error[1])
    for k in ("x", "y"):
        g, _ = grad_value(ns[k])
        res.grads[k] = None if g is None else format_value(g)
    return res


def explain_grad_mode(res: GradModeResult, lang=None) -> str:
    """One sentence on why ``z`` does (not) require grad, from what the run observed.

    ``lang``: ``"en"`` or ``"zh"`` (``None``: :func:`leafkit.get_language`); the
    Chinese sentence marks code with backticks.
    """
    lang = resolve_language(lang)
    words = TEXT[lang]
    z = res.forward.get("z")
    if z is None:
        return words["error"]
    tracked = [k for k in ("x", "y") if res.forward[k]["requires_grad"]]
    inputs = words["and"].join(tracked if lang == "en" else [f"`{k}`" for k in tracked])
    verb = words["requires"] if len(tracked) == 1 else words["require"]
    if not z["requires_grad"]:
        if tracked and not res.grad_enabled_inside:
            return words["no_grad"].format(op=res.op, inputs=inputs, verb=verb)
        extra = words["no_grad_changes_nothing"] if res.no_grad else ""
        return words["untracked"].format(op=res.op, extra=extra)
    grads = [k for k in ("x", "y") if res.grads.get(k) is not None]
    nones = [k for k in ("x", "y") if k not in tracked]
    tail = words["tail"].format(n=nones[0]) if nones else ""
    stores = words["stores_sep"].join(words["store"].format(g=g) for g in grads)
    return words["tracked"].format(inputs=inputs, verb=verb, fn=z["grad_fn"], stores=stores, tail=tail)


class GradModeExplorer(Explorer):
    """Toggle ``requires_grad`` of x and y, the operator and ``no_grad``; see z and ``z.backward()``.

    Parameters
    ----------
    x_requires_grad : bool, default True
    y_requires_grad : bool, default False
    op : {"*", "/", "+", "-"}, default "*"
    no_grad : bool, default False
    zoom : float, default 1.0
        Scale of the drawing.
    lang : {"en", "zh"} or None, default None
        The language of the panel (``None``: :func:`leafkit.get_language`).

    Attributes
    ----------
    x_requires_grad, y_requires_grad : ipywidgets.Checkbox
        Descriptions ``"x requires_grad"`` and ``"y requires_grad"``; control keys
        ``"x_requires_grad"`` and ``"y_requires_grad"``.
    op : ipywidgets.ToggleButtons
        Description ``"operator"``; values ``"*"``, ``"/"``, ``"+"``, ``"-"``; key ``"op"``.
    no_grad : ipywidgets.Checkbox
        Description ``"with torch.no_grad()"``; key ``"no_grad"``.
    result : GradModeResult
        What the current state ran and observed.
    widget, code, rows, explanation, message, drawing, svg
        See :class:`leafkit.widgets._view.Explorer`; ``message`` holds the
        outcome of ``z.backward()`` (``kind`` ``"ok"`` or ``"error"``).
    """

    TEXT = TEXT
    TOUR = (
        ("y_requires_grad", True),
        ("op", "/"),
        ("no_grad", True),
        ("no_grad", False),
        ("x_requires_grad", False),
        ("x_requires_grad", True),
    )
    DEMO = "GradModeExplorer(op='+')"
    css_class = "lk-grad-mode-explorer"

    def __init__(self, x_requires_grad=True, y_requires_grad=False, op="*", no_grad=False, zoom=1.0, lang=None):
        super().__init__(zoom=zoom, lang=lang)
        if op not in OPERATORS:
            raise ValueError(f"op must be one of {OPERATORS}, got {op!r}")
        self.result = None
        self._previous = None
        lay = W.Layout(width="auto", margin="0 18px 0 0")
        self.x_requires_grad = W.Checkbox(
            value=bool(x_requires_grad), description="x requires_grad", indent=False, layout=lay
        )
        self.y_requires_grad = W.Checkbox(
            value=bool(y_requires_grad), description="y requires_grad", indent=False, layout=lay
        )
        self.op = W.ToggleButtons(
            options=list(OPERATORS),
            value=op,
            description=self._t("operator"),
            style={"description_width": "initial", "button_width": "42px"},
            layout=W.Layout(margin="0 18px 0 0", display="flex", align_items="center"),
        )
        self.no_grad = W.Checkbox(value=bool(no_grad), description="with torch.no_grad()", indent=False, layout=lay)
        for c in (self.x_requires_grad, self.y_requires_grad, self.op, self.no_grad):
            c.observe(self._guard(self._on_change), names="value")
        row = W.HBox(
            [self.x_requires_grad, self.y_requires_grad, self.op, self.no_grad],
            layout=W.Layout(align_items="center", flex_flow="row wrap"),
        )
        self._assemble([row])
        self.refresh()

    def _controls(self) -> list:
        return [
            Control("x_requires_grad", self.x_requires_grad, "checkbox"),
            Control("y_requires_grad", self.y_requires_grad, "checkbox"),
            Control("op", self.op, "toggle"),
            Control("no_grad", self.no_grad, "checkbox"),
        ]

    @property
    def state(self) -> dict:
        """The controls' values."""
        return {
            "x_requires_grad": self.x_requires_grad.value,
            "y_requires_grad": self.y_requires_grad.value,
            "op": self.op.value,
            "no_grad": self.no_grad.value,
        }

    def set_state(self, x_requires_grad=None, y_requires_grad=None, op=None, no_grad=None) -> None:
        """Set several controls at once and redraw once."""
        self._batch = True
        try:
            for ctl, v in (
                (self.x_requires_grad, x_requires_grad),
                (self.y_requires_grad, y_requires_grad),
                (self.op, op),
                (self.no_grad, no_grad),
            ):
                if v is not None:
                    ctl.value = v
        finally:
            self._batch = False
        self.refresh()

    def _update(self) -> None:
        st = self.state
        forward_drawing = []
        res = run_grad_mode(
            st["x_requires_grad"],
            st["y_requires_grad"],
            st["op"],
            st["no_grad"],
            before_backward=lambda ns: forward_drawing.append(
                draw({k: ns[k] for k in ("x", "y", "z")}, previous=self._previous, lang=self.lang)
            ),
        )
        self.result = res
        self.code = res.code
        n = len(res.code.split("\n"))
        marks = (
            {n - 1: ("error", self._t("mark_raises"))} if res.backward_error else {n - 1: ("ok", self._t("mark_runs"))}
        )
        self.code_view.value = code_html(res.code, self._t("code"), marks=marks)
        if res.error:
            self.rows = []
            self.table_view.value = ""
            self._set_message("error", self._t("raises"), res.error)
            self._set_explanation(explain_grad_mode(res, self.lang))
            self.drawing_pane.clear()
            return
        self.rows = []
        cells = []
        for k in ("x", "y", "z"):
            f = res.forward[k]
            grad = res.grads.get(k) if k != "z" else None
            row = {"variable": k, **f, "grad": grad}
            self.rows.append(row)
            grad_cell = "\u2014" if k == "z" else (mono(grad) if grad is not None else none_html())
            cells.append(
                [
                    f"<b>{k}</b>",
                    bool_html(f["is_leaf"], strong_false=True),
                    bool_html(f["requires_grad"]),
                    mono(f["grad_fn"]) if f["grad_fn"] else none_html(),
                    grad_cell,
                ]
            )
        inside = self._t("inside_no_grad") if res.no_grad else self._t("where_z")
        self.table_view.value = table_html(self._t("columns"), cells, title=self._t("table"), highlight={2}) + (
            f'<div style="font-size:12.5px;color:{MUTED};margin:-2px 0 4px 2px">'
            f"{esc(self._t('enabled', where=inside))}{bool_html(res.grad_enabled_inside, strong_false=True)}</div>"
        )
        if res.backward_error:
            self._set_message("error", self._t("backward_raises"), res.backward_error)
        else:
            got = ", ".join(f"{k}.grad = {v}" for k, v in res.grads.items() if v is not None)
            self._set_message("ok", self._t("backward_runs"), got, mono=True)
        self._set_explanation(explain_grad_mode(res, self.lang))
        drawing = forward_drawing[0]
        self._previous = drawing
        self._show_drawing(drawing, caption=self._t("caption"))

    def oracle(self, torch) -> None:
        """``is_leaf``, ``requires_grad`` and ``grad_fn`` of x, y and z, what ``z.backward()`` raises and the
        gradients it leaves are PyTorch's (see :meth:`Explorer.oracle`)."""
        stmts = statements(self.code)
        ns, _, err = run_torch(stmts[:-1], torch)
        expect(err is None, (self.code, err))
        rows = {r["variable"]: r for r in self.rows}
        for k in "xyz":
            t = ns[k]
            shown = (rows[k]["is_leaf"], rows[k]["requires_grad"], rows[k]["grad_fn"])
            expect(shown == (bool(t.is_leaf), bool(t.requires_grad), fn_name(t)), (self.code, k))
        _, _, err = run_torch([stmts[-1]], torch, namespace=ns)  # z.backward(), after the forward lines
        expect(self.result.backward_error == err, self.code)
        for k in "xy":
            expect(rows[k]["grad"] == grad_of(ns[k]), (self.code, k))
