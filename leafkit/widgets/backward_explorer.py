"""``BackwardExplorer``: ``.grad`` of intermediates, hooks, ``retain_graph`` and a second backward.

Seed 000 (appendix) and seed 003 (example 8).  The chain x → y → z → t
(``y = x ** 2``, ``z = y ** 2``, ``t = z ** 2``).  The learner can call
``retain_grad()`` on y, z and t, register a hook on one of them (or remove
it), tick ``retain_graph=True`` and run ``t.backward()`` as often as they
like.  The explorer keeps the program as a list of statements and re-runs it
from scratch in leafkit after every action, so what is shown is exactly what
that code does: each tensor's ``.grad`` after every pass (or ``None`` with the
non-leaf warning), gradients accumulating over passes, the hook's printout, and
PyTorch's "backward through the graph a second time" error once the graph was
freed.  Freed parts of the graph are greyed out in the drawing.  PyTorch cannot
undo ``retain_grad()``: unticking one removes the call from the program, which
is then replayed from the top, and the explorer says so.
"""

from __future__ import annotations

import ipywidgets as W

from leafkit.viz import draw

from ._controls import Control
from ._explorer import Explorer
from ._html import bool_html, code_html, esc, message_html, mono, none_html, printed_html, table_html
from ._oracle import expect, grad_of, run_torch
from ._program import error_text, format_value, grad_value, run_program

__all__ = ["BackwardExplorer", "SETUP", "NAMES", "INTERMEDIATES", "hook_statement", "backward_statement"]

#: The chain, as in seed 003 example 8.
SETUP = ("x = torch.tensor([2.0], requires_grad=True)", "y = x ** 2", "z = y ** 2", "t = z ** 2")
NAMES = ("x", "y", "z", "t")
#: The tensors that can ``retain_grad()`` or carry a hook.
INTERMEDIATES = ("y", "z", "t")
NO_HOOK = "none"
MAX_PASS_COLUMNS = 3


#: Everything this explorer writes, per language; the Chinese sentences mark code with backticks.
TEXT = {
    "en": {
        "title": "Backward explorer",
        "subtitle": (
            "x \u2192 y = x\u00b2 \u2192 z = y\u00b2 \u2192 t = z\u00b2: which tensors get .grad, "
            "what hooks see, and when a second backward() fails."
        ),
        "summary": "`retain_grad()`, a hook, `retain_graph`, repeated `backward()` on x \u2192 y \u2192 z \u2192 t",
        "hook_on": "hook on",
        "no_hook": "none",
        "tip_backward": "run one backward pass from t",
        "tip_reset": "build a fresh graph",
        "code": "The code (re-run from the top after every action)",
        "pass_mark": "pass {p}",
        "not_kept": "raised {error} (not kept)",
        "columns": ("var", "is_leaf", "retains_grad", "hook"),
        "grad_after": ".grad after pass {p}",
        "grad": ".grad",
        "hook_mark": "\u2713 hook",
        "table": ".grad of every tensor",
        "warn_tip": "reading .grad of a non-leaf warns",
        "warn_title": "Reading {names} warns (\u26a0): a non-leaf without retain_grad()",
        "raises": "{statement} raises",
        "printed": "Printed by the hook",
        "caption": "Variables view",
        "caption_freed": " (greyed: freed by backward)",
        "replayed_title": "{statement} was removed, and the program was replayed from the top",
        "replayed_text": (
            "PyTorch cannot undo retain_grad(), so unticking it removes the call and runs the whole "
            "program again without it: the columns of the earlier passes now show what that "
            "program gives."
        ),
        "hook_note": ("The hook on {h} sees the gradient flowing through {h} on every pass, retain_grad() or not."),
        "second_time": (
            "The previous t.backward() ran without retain_graph=True, so it freed the tensors the graph "
            "saved for backward (greyed out), and PyTorch refuses to go through the graph a second "
            "time: tick retain_graph=True before the earlier pass, or press Reset for a new graph."
        ),
        "failed": "{statement} raised an error, so it was not kept in the program.",
        "no_pass": (
            "No backward pass yet, so every .grad is None: press t.backward() to send dt/dt = 1 back "
            "through z and y to the leaf x."
        ),
        "accumulated": (
            " (pass {n} added the same gradient again: {before} \u2192 {after}, because "
            "gradients accumulate until you reset .grad)"
        ),
        "kept": "{names} kept {its} .grad because of retain_grad()",
        "its": "its",
        "their": "their",
        "pending": ("{names} called retain_grad() after the last pass, so {its} .grad fills from the next pass on"),
        "none_one": "{names} is a non-leaf without retain_grad(), so .grad stays None",
        "none_many": "{names} are non-leaves without retain_grad(), so .grad stays None",
        "late_note": "{name}.retain_grad() ran after pass {k}, so {name}.grad counts only the passes after it.",
        "kept_graph": "retain_graph=True kept the graph, so t.backward() can run again",
        "freed_graph": "the graph is now freed (greyed out), so another t.backward() will fail",
        "after_pass": "After pass {n}, the leaf x holds dt/dx = {x}{acc}; {parts}; {after}.",
        "sep": "; ",
        "join_and": " and ",
        "join_comma": ", ",
        "code_mark": "{name}",
    },
    "zh": {
        "title": "反向传播探索器",
        "subtitle": (
            "x \u2192 y = x\u00b2 \u2192 z = y\u00b2 \u2192 t = z\u00b2：哪些张量会得到 .grad，"
            "钩子看到什么，第二次 backward() 什么时候会失败。"
        ),
        "summary": "在 x \u2192 y \u2192 z \u2192 t 上试 `retain_grad()`、钩子、`retain_graph` 和多次 `backward()`",
        "hook_on": "钩子挂在",
        "no_hook": "不挂",
        "tip_backward": "从 t 做一次反向传播",
        "tip_reset": "重新构建计算图",
        "code": "代码（每次操作后从头重新运行）",
        "pass_mark": "第 {p} 次",
        "not_kept": "抛出 {error}（这一行不会留在代码里）",
        "columns": ("变量", "is_leaf", "retains_grad", "钩子"),
        "grad_after": "第 {p} 次之后的 .grad",
        "grad": ".grad",
        "hook_mark": "\u2713 钩子",
        "table": "每个张量的 .grad",
        "warn_tip": "读取非叶子张量的 .grad 会发出警告",
        "warn_title": "读取 {names} 会发出警告（\u26a0）：它们是没有调用 retain_grad() 的非叶子张量",
        "raises": "`{statement}` 抛出错误",
        "printed": "钩子打印的内容",
        "caption": "变量视图",
        "caption_freed": "（灰色：已被 backward 释放）",
        "replayed_title": "已删除 `{statement}`，程序从头重新运行了一遍",
        "replayed_text": (
            "PyTorch 没有办法撤销 `retain_grad()`，所以取消勾选会把这一行从程序里删掉，再把整个程序"
            "从头运行一遍：前面几次反向传播的那几列，现在显示的是新程序的结果。"
        ),
        "hook_note": "`{h}` 上的钩子每次反向传播都能看到流经 `{h}` 的梯度，不管有没有 `retain_grad()`。",
        "second_time": (
            "上一次 `t.backward()` 没有用 `retain_graph=True`，它已经释放了计算图为反向传播保存的张量"
            "（灰色部分），所以 PyTorch 不允许再沿这个计算图反向传播一次：要么在上一次之前勾选 "
            "`retain_graph=True`，要么按“重置”重新构建计算图。"
        ),
        "failed": "`{statement}` 抛出了错误，所以没有留在程序里。",
        "no_pass": (
            "还没有做反向传播，所以每个 .grad 都是 None：按 `t.backward()`，把 dt/dt = 1 经过 `z` 和 `y` "
            "传回叶子张量 `x`。"
        ),
        "accumulated": (
            "（第 {n} 次又加上了同样的梯度：{before} \u2192 {after}，因为梯度会一直累加，直到你把 .grad 清零）"
        ),
        "kept": "{names} 因为调用了 `retain_grad()`，保留了 .grad",
        "its": "",
        "their": "",
        "pending": "{names} 在最后一次反向传播之后才调用 `retain_grad()`，所以 .grad 要从下一次才开始有值",
        "none_one": "{names} 是没有调用 `retain_grad()` 的非叶子张量，.grad 保持为 None",
        "none_many": "{names} 是没有调用 `retain_grad()` 的非叶子张量，.grad 保持为 None",
        "late_note": (
            "`{name}.retain_grad()` 是在第 {k} 次之后才调用的，所以 `{name}.grad` 只包含它之后的反向传播算出的梯度。"
        ),
        "kept_graph": "`retain_graph=True` 保留了计算图，所以 `t.backward()` 还能再运行",
        "freed_graph": "计算图现在已经释放（灰色部分），再运行 `t.backward()` 会失败",
        "after_pass": "第 {n} 次之后，叶子张量 `x` 里是 dt/dx = {x}{acc}；{parts}；{after}。",
        "sep": "；",
        "join_and": " 和 ",
        "join_comma": "、",
        "code_mark": "`{name}`",
    },
}


def _join(names, lang: str = "en") -> str:
    """``"y"``, ``"y and z"``, ``"y, z and t"`` (Chinese: ```y`、`z` 和 `t```)."""
    words = TEXT[lang]
    names = [words["code_mark"].format(name=n) for n in names]
    return names[0] if len(names) == 1 else words["join_comma"].join(names[:-1]) + words["join_and"] + names[-1]


#: What the printing hook prints before the gradient, per language (a lesson's own ``print`` is in
#: the lesson's language too).
HOOK_PRINT = {"en": "hook on {name} saw", "zh": "{name} 上的钩子拿到"}


def hook_statement(name: str, lang: str = "en") -> str:
    """The line that registers the explorer's printing hook on ``name`` (its ``print`` in ``lang``)."""
    said = HOOK_PRINT[lang].format(name=name)
    return f'handle = {name}.register_hook(lambda grad: print("{said}", grad))'


def backward_statement(retain_graph: bool) -> str:
    """``t.backward()`` or ``t.backward(retain_graph=True)``."""
    return "t.backward(retain_graph=True)" if retain_graph else "t.backward()"


class BackwardExplorer(Explorer):
    """Run ``t.backward()`` on x → y → z → t with ``retain_grad``, hooks and ``retain_graph``.

    Parameters
    ----------
    retain_grad : sequence of str, default ()
        Which of ``"y"``, ``"z"``, ``"t"`` call ``retain_grad()`` at the start.
    hook : {None, "y", "z", "t"}, default None
        Where a printing hook is registered at the start.
    retain_graph : bool, default False
        Initial value of the ``retain_graph=True`` checkbox.
    zoom : float, default 1.0
        Scale of the drawing.
    lang : {"en", "zh"} or None, default None
        The language of the panel (``None``: :func:`leafkit.get_language`).

    Attributes
    ----------
    retain : dict of str to ipywidgets.Checkbox
        ``retain["z"]`` has the description ``"z.retain_grad()"`` (control key
        ``"retain:z"``).  Ticking adds the call to the program; unticking
        removes it (PyTorch has no way to undo ``retain_grad()``, so the
        program is replayed from the top without it, and an info message says
        so when that changes earlier passes).
    hook_on : ipywidgets.Dropdown
        Description ``"hook on"``; values ``"none"``, ``"y"``, ``"z"``, ``"t"``; key ``"hook_on"``.
        Changing it adds ``handle.remove()`` for the old hook and registers a new one.
    retain_graph : ipywidgets.Checkbox
        Description ``"retain_graph=True"``: the argument of the next backward; key ``"retain_graph"``.
    backward_button : ipywidgets.Button
        ``"t.backward()"``: run one more backward pass; key ``"backward"``.
    reset_button : ipywidgets.Button
        ``"Reset"``: a fresh graph, keeping the retain_grad / hook choices; key ``"reset"``.
    actions : list of str
        The statements after the chain, in order.
    passes : list of dict
        One per successful backward: ``{"statement", "grads": {name: repr or None},
        "printed"}``.
    grads : dict
        ``name`` → the current ``.grad`` (a tensor repr, or None).
    grad_warnings : dict
        ``name`` → the warning text reading ``.grad`` issued (non-leaves without retain_grad).
    failed : tuple or None
        ``(statement, "RuntimeError: ...")`` of the last action that raised.
    printed : str
        What the hooks printed.
    widget, code, rows, explanation, message, drawing, svg
        See :class:`leafkit.widgets._view.Explorer`.
    """

    TEXT = TEXT
    TOUR = (
        ("retain:z", True),
        ("hook_on", "y"),
        ("backward", None),
        ("reset", None),
        ("retain_graph", True),
        ("backward", None),
        ("retain_graph", False),
        ("backward", None),
        ("retain:t", True),
        ("backward", None),
        ("retain:z", False),
    )
    DEMO = "BackwardExplorer(retain_grad=['z'], retain_graph=True)"
    css_class = "lk-backward-explorer"

    def __init__(self, retain_grad=(), hook=None, retain_graph=False, zoom=1.0, lang=None):
        super().__init__(zoom=zoom, lang=lang)
        bad = [n for n in retain_grad if n not in INTERMEDIATES]
        if bad:
            raise ValueError(f"retain_grad takes names from {INTERMEDIATES}, got {bad}")
        hook = NO_HOOK if hook in (None, NO_HOOK) else hook
        if hook not in (NO_HOOK, *INTERMEDIATES):
            raise ValueError(f"hook must be None or one of {INTERMEDIATES}, got {hook!r}")
        self.actions: list = []
        self.passes: list = []
        self.grads: dict = {}
        self.grad_warnings: dict = {}
        self.failed = None
        self.printed = ""
        self._previous = None
        self._hook_active = None
        self._replayed = None  # the retain_grad() call whose removal replayed earlier passes
        lay = W.Layout(width="auto", margin="0 16px 0 0")
        self.retain = {
            n: W.Checkbox(value=n in retain_grad, description=f"{n}.retain_grad()", indent=False, layout=lay)
            for n in INTERMEDIATES
        }
        self.hook_on = W.Dropdown(
            options=[(self._t("no_hook"), NO_HOOK), *((n, n) for n in INTERMEDIATES)],
            value=hook,
            description=self._t("hook_on"),
            style={"description_width": "initial"},
            layout=W.Layout(width="130px", margin="0 16px 0 0"),
        )
        self.retain_graph = W.Checkbox(
            value=bool(retain_graph), description="retain_graph=True", indent=False, layout=lay
        )
        self.backward_button = W.Button(
            description=backward_statement(bool(retain_graph)),
            button_style="primary",
            icon="play",
            tooltip=self._t("tip_backward"),
            layout=W.Layout(width="auto", margin="0 10px 0 0"),
        )
        self.reset_button = W.Button(
            description=self._t("reset"), icon="refresh", tooltip=self._t("tip_reset"), layout=W.Layout(width="auto")
        )
        for n, cb in self.retain.items():
            cb.observe(self._guard(lambda ch, n=n: self._on_retain(n, ch["new"])), names="value")
        self.hook_on.observe(self._guard(self._on_hook), names="value")
        self.retain_graph.observe(self._guard(self._on_retain_graph), names="value")
        self.backward_button.on_click(self._guard(lambda b: self.backward()))
        self.reset_button.on_click(self._guard(lambda b: self.reset()))
        self.output_view = W.HTML()
        self.output_view.add_class("lk-printed")
        self.warning_view = W.HTML()
        self.warning_view.add_class("lk-grad-warning")
        row1 = W.HBox(
            [*self.retain.values(), self.hook_on], layout=W.Layout(align_items="center", flex_flow="row wrap")
        )
        row2 = W.HBox(
            [self.retain_graph, self.backward_button, self.reset_button],
            layout=W.Layout(align_items="center", flex_flow="row wrap", margin="6px 0 0 0"),
        )
        self._assemble([row1, row2], left_extra=[self.warning_view, self.output_view])
        self._setup_actions()
        self.refresh()

    def _controls(self) -> list:
        return [
            *(Control(f"retain:{n}", cb, "checkbox") for n, cb in self.retain.items()),
            Control("hook_on", self.hook_on, "dropdown"),
            Control("retain_graph", self.retain_graph, "checkbox"),
            Control("backward", self.backward_button, "button"),
            Control("reset", self.reset_button, "button"),
        ]

    # -- actions ----------------------------------------------------------
    def _setup_actions(self):
        self.actions = [f"{n}.retain_grad()" for n in INTERMEDIATES if self.retain[n].value]
        self._hook_active = None
        if self.hook_on.value != NO_HOOK:
            self.actions.append(hook_statement(self.hook_on.value, self.lang))
            self._hook_active = self.hook_on.value

    def _on_retain(self, name, value):
        stmt = f"{name}.retain_grad()"
        self._replayed = None
        if value:
            self.actions.append(stmt)
        else:
            first = next((i for i, a in enumerate(self.actions) if a == stmt), None)
            if first is not None and any(a.startswith("t.backward(") for a in self.actions[first + 1 :]):
                self._replayed = stmt  # earlier passes ran with it: their columns change
            self.actions = [a for a in self.actions if a != stmt]
        self.failed = None
        self._update()

    def _on_hook(self, change):
        self._replayed = None
        new = change["new"]
        if self._hook_active is not None:
            self.actions.append("handle.remove()")
            self._hook_active = None
        if new != NO_HOOK:
            self.actions.append(hook_statement(new, self.lang))
            self._hook_active = new
        self.failed = None
        self._update()

    def _on_retain_graph(self, change):
        # the button shows the exact statement its next click runs
        self.backward_button.description = backward_statement(change["new"])
        self._replayed = None
        self._update()

    def backward(self) -> None:
        """Run ``t.backward(...)`` once more (what the button does)."""
        stmt = backward_statement(self.retain_graph.value)
        self.actions.append(stmt)
        self.failed = None
        self._replayed = None
        self._update(pending=stmt)

    def reset(self) -> None:
        """Start over with a fresh graph; the retain_grad and hook choices are kept."""
        self.failed = None
        self._replayed = None
        self.passes = []
        self._previous = None
        self._setup_actions()
        self._update()

    # -- rendering --------------------------------------------------------
    @property
    def program(self) -> list:
        """All statements that the current state ran: the chain, then :attr:`actions`."""
        return list(SETUP) + list(self.actions)

    def _run(self):
        statements = self.program
        passes = []

        def snap(i, ns):
            if statements[i].startswith("t.backward("):
                grads = {}
                for n in NAMES:
                    g, _ = grad_value(ns[n])
                    grads[n] = None if g is None else format_value(g)
                passes.append({"statement": statements[i], "grads": grads, "printed": ""})

        run = run_program(statements, after_each=snap)
        ok = [o for o in run.outcomes if o.code.startswith("t.backward(") and o.error is None]
        for p, o in zip(passes, ok):
            p["printed"] = o.printed
        return run, passes

    def _update(self, pending=None) -> None:
        run, passes = self._run()
        if run.error is not None:
            idx, exc = run.error
            failed_stmt = self.program[idx]
            self.failed = (failed_stmt, error_text(exc))
            # keep the program valid: drop the statement that raised (it is shown marked instead)
            drop = idx - len(SETUP)
            if 0 <= drop < len(self.actions):
                del self.actions[drop]
            if failed_stmt.startswith("handle = "):
                self._hook_active = None
            run, passes = self._run()
        ns = run.namespace
        self.passes = passes
        self.printed = run.printed
        self.grads, self.grad_warnings = {}, {}
        for n in NAMES:
            g, warn = grad_value(ns[n])
            self.grads[n] = None if g is None else format_value(g)
            if warn:
                self.grad_warnings[n] = warn
        code = "\n".join(self.program)
        marks = {}
        lines = code.split("\n")
        p = 0
        for i, line in enumerate(lines):
            if line.startswith("t.backward("):
                p += 1
                marks[i] = ("ok", self._t("pass_mark", p=p))
        if self.failed:
            lines.append(self.failed[0])
            marks[len(lines) - 1] = ("error", self._t("not_kept", error=self.failed[1].split(":", 1)[0]))
            code_shown = "\n".join(lines)
        else:
            code_shown = code
        self.code = code_shown
        self.code_view.value = code_html(code_shown, self._t("code"), marks)
        self._render_table(ns)
        if self.failed:
            self._set_message("error", self._t("raises", statement=self.failed[0]), self.failed[1])
        elif self._replayed:
            self._set_message(
                "info", self._t("replayed_title", statement=self._replayed), self._t("replayed_text"), mono=False
            )
        else:
            self._set_message(None)
        self._render_printed()
        sentence, notes = self._explain(ns)
        self._set_explanation(sentence, notes)
        drawing = draw({n: ns[n] for n in NAMES}, previous=self._previous, lang=self.lang)
        self._previous = drawing
        freed = any(getattr(fn, "_released", False) for fn in self._nodes(ns["t"]))
        self.graph_freed = freed
        cap = self._t("caption") + (self._t("caption_freed") if freed else "")
        self._show_drawing(drawing, caption=cap)

    graph_freed = False

    @staticmethod
    def _nodes(t):
        out, stack, seen = [], [t.grad_fn], set()
        while stack:
            fn = stack.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            out.append(fn)
            stack.extend(f for f, _ in getattr(fn, "next_functions", ()) or ())
        return out

    def _render_table(self, ns) -> None:
        shown = self.passes[-MAX_PASS_COLUMNS:]
        first = len(self.passes) - len(shown)
        cols = list(self._t("columns"))
        cols += [self._t("grad_after", p=first + i + 1) for i in range(len(shown))] or [self._t("grad")]
        self.rows = []
        cells = []
        for n in NAMES:
            t = ns[n]
            retains = bool(getattr(t, "retains_grad", False)) and not t.is_leaf
            hook = self._hook_active == n
            history = [p["grads"][n] for p in self.passes]
            self.rows.append(
                {
                    "variable": n,
                    "is_leaf": bool(t.is_leaf),
                    "retains_grad": retains,
                    "hook": hook,
                    "grad": self.grads[n],
                    "grad_history": history,
                    "warning": self.grad_warnings.get(n),
                }
            )

            def gcell(v, warn):
                if v is not None:
                    return f"<b>{mono(v)}</b>"
                return none_html() + (
                    f' <span title="{esc(self._t("warn_tip"))}" style="color:#ed6c02">\u26a0</span>' if warn else ""
                )

            grad_cells = [gcell(p["grads"][n], n in self.grad_warnings) for p in shown] or [
                gcell(self.grads[n], n in self.grad_warnings)
            ]
            cells.append(
                [
                    f"<b>{n}</b>",
                    bool_html(t.is_leaf, strong_false=True),
                    bool_html(retains),
                    esc(self._t("hook_mark")) if hook else "",
                    *grad_cells,
                ]
            )
        self.table_view.value = table_html(cols, cells, title=self._t("table"))
        if self.grad_warnings:
            names = self._t("join_comma").join(f"{n}.grad" for n in self.grad_warnings)
            text = next(iter(self.grad_warnings.values()))
            self.warning_view.value = message_html(
                "warning", self._t("warn_title", names=names), "UserWarning: " + text, mono=True
            )
        else:
            self.warning_view.value = ""

    def _render_printed(self) -> None:
        self.output_view.value = printed_html(self._t("printed"), self.printed)

    def _explain(self, ns):
        t = self._t
        notes = []
        if self._hook_active and self.passes:
            notes.append(t("hook_note", h=self._hook_active))
        if self.failed and "second time" in self.failed[1]:
            return t("second_time"), notes
        if self.failed:
            return t("failed", statement=self.failed[0]), notes
        if not self.passes:
            return t("no_pass"), notes
        n = len(self.passes)
        x_hist = [p["grads"]["x"] for p in self.passes]
        acc = t("accumulated", n=n, before=x_hist[-2], after=x_hist[-1]) if n > 1 else ""
        # what each intermediate's .grad is, from the state the program really left
        kept, pending, none = [], [], []
        for m in INTERMEDIATES:
            retains = bool(getattr(ns[m], "retains_grad", False))
            if retains and self.grads[m] is not None:
                kept.append(m)
                before = self._passes_before(f"{m}.retain_grad()")
                if before:
                    notes.append(t("late_note", name=m, k=before))
            elif retains:
                pending.append(m)
            else:
                none.append(m)
        parts = []
        if kept:
            parts.append(t("kept", names=_join(kept, self.lang), its=t("its") if len(kept) == 1 else t("their")))
        if pending:
            parts.append(
                t("pending", names=_join(pending, self.lang), its=t("its") if len(pending) == 1 else t("their"))
            )
        if none:
            parts.append(t("none_one" if len(none) == 1 else "none_many", names=_join(none, self.lang)))
        last = self.passes[-1]["statement"]
        after = t("kept_graph") if "retain_graph=True" in last else t("freed_graph")
        sentence = t("after_pass", n=n, x=x_hist[-1], acc=acc, parts=t("sep").join(parts), after=after)
        return sentence, notes

    def _passes_before(self, statement: str) -> int:
        """How many backward passes ran before the first ``statement`` of the program (0 if none)."""
        count = 0
        for a in self.actions:
            if a == statement:
                return count
            if a.startswith("t.backward("):
                count += 1
        return 0

    def oracle(self, torch) -> None:
        """Every ``.grad`` after every pass, ``retains_grad``, what the hooks printed and the error of a failed
        statement are PyTorch's for the program shown (see :meth:`Explorer.oracle`)."""
        history = []

        def snap(i, ns):
            if self.program[i].startswith("t.backward("):
                history.append({n: grad_of(ns[n]) for n in NAMES})

        ns, printed, err = run_torch(self.program, torch, snap)
        expect(err is None, (self.program, err))
        for r in self.rows:
            t = ns[r["variable"]]
            expect(r["is_leaf"] == bool(t.is_leaf), r)
            expect(r["retains_grad"] == (bool(t.retains_grad) and not t.is_leaf), r)
            expect(r["grad"] == grad_of(t), (self.program, r))
            expect(r["grad_history"] == [h[r["variable"]] for h in history], (self.program, r))
        expect(self.printed == printed, (self.printed, printed))
        if self.failed:
            _, _, err = run_torch(list(self.program) + [self.failed[0]], torch)
            expect(err == self.failed[1], (self.program, self.failed))
