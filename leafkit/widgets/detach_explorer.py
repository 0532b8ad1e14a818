"""``DetachExplorer``: ``y = x.detach()`` shares storage; in-place edits and the version counter.

Seed 003, example 9.  ``y = x.detach()`` is a new tensor object on the same
storage (same ``data_ptr``) that does not require grad.  The learner edits
``y`` in place and sees ``x`` change; the shared version counter goes up; and
when ``z = x ** 2`` saved ``x`` for backward before the edit, ``z.backward()``
raises PyTorch's "modified by an inplace operation" error.  Editing ``x``
itself raises the "leaf Variable that requires grad" error.  All of it is
computed by re-running the shown program in leafkit after every click.
"""

from __future__ import annotations

import ipywidgets as W

from leafkit.viz import _palette as P
from leafkit.viz import draw

from ._controls import Control
from ._explorer import Explorer
from ._html import MUTED, bool_html, code_html, esc, mono, none_html, table_html
from ._oracle import expect, fn_name, grad_of, run_torch
from ._program import error_text, format_value, grad_value, node_name, run_program

__all__ = ["DetachExplorer", "SETUP", "ACTIONS"]

SETUP = ("x = torch.tensor([2.0], requires_grad=True)", "y = x.detach()")
#: The buttons, in the order shown: in-place edits of y, then autograd actions.
ACTIONS = ("y.add_(1)", "y.mul_(2)", "y.zero_()", "z = x ** 2", "z.backward()", "x.add_(1)")
EDITS = ACTIONS[:3]

#: Everything this explorer writes, per language; the Chinese sentences mark code with backticks.
TEXT = {
    "en": {
        "title": "detach() explorer",
        "subtitle": "y = x.detach(): a new tensor on the same storage. Edit y in place and watch x.",
        "summary": "`y = x.detach()` shares memory; in-place edits and the version counter",
        "run_tip": "run {statement}",
        "reset_tip": "back to x and y = x.detach()",
        "edit_label": "edit y in place:",
        "autograd_label": "autograd:",
        "code": "The code (re-run from the top after every click)",
        "not_kept": "raised {error} (not kept)",
        "shared": "shared",
        "columns": ("var", "value", "is_leaf", "requires_grad", "grad_fn", "data_ptr()", "_version", ".grad"),
        "table": "x, y (and z)",
        "saved_at": "x was saved by z at version",
        "raises": "{statement} raises",
        "caption": "Variables view \u00b7 dashed arrow: shares storage",
        "inplace": (
            "z = x ** 2 saved x for backward at version {saved}; the in-place edit of y "
            "wrote into the same storage and moved the shared version counter to "
            "{version}, so z.backward() refuses to use a saved value that has changed."
        ),
        "leaf_inplace": (
            "x is a leaf that requires grad, so PyTorch forbids changing it in place (autograd needs "
            "the value it started from): edit the detached y instead, or wrap the edit in "
            "torch.no_grad()."
        ),
        "second_time": (
            "The first z.backward() freed the values z's graph saved, so a second one fails: run "
            "z = x ** 2 again to build a new graph."
        ),
        "failed": "{statement} raised an error, so it was not kept in the program.",
        "start": (
            "y = x.detach() is a new tensor object (y is x \u2192 False) on the same storage "
            "(same data_ptr) that does not require grad: a leaf outside the graph, sharing x's values "
            "and version counter."
        ),
        "edit": (
            "{statement} wrote into the storage x and y share, so x changed too (x = {x}) and "
            "their shared version counter is now {version}."
        ),
        "edit_note": "z saved x before this edit: z.backward() will now fail.",
        "saved": (
            "z = x ** 2 records PowBackward0 and saves x (at version {version}) for backward: "
            "edit y in place now and z.backward() will fail; click z.backward() first and it works."
        ),
        "backward_one": (
            "z.backward() used the x that z = x ** 2 saved (x = {saved}) and stored "
            "dz/dx = 2\u00b7x = {added} in x.grad. The gradient is a tensor of its own, apart from "
            "x's value: x.grad = {grad} while x = {x}; y, detached, gets no gradient."
        ),
        "backward_many": (
            "z.backward() used the x that z = x ** 2 saved (x = {saved}) and added "
            "dz/dx = 2\u00b7x = {added} to x.grad. x.grad is not x's value: it is a tensor of its "
            "own that sums the gradients of all {n} backward calls, now {grad}, while x itself is "
            "{x}; y, detached, gets no gradient."
        ),
        "click": "Click a button to run one more line.",
    },
    "zh": {
        "title": "detach() 探索器",
        "subtitle": "y = x.detach()：同一块存储上的一个新张量。原地修改 y，看看 x 会怎样。",
        "summary": "`y = x.detach()` 与 `x` 共享存储；原地修改和版本计数器",
        "run_tip": "运行 {statement}",
        "reset_tip": "回到 x 和 y = x.detach()",
        "edit_label": "原地修改 y：",
        "autograd_label": "自动求导：",
        "code": "代码（每次点击后从头重新运行）",
        "not_kept": "抛出 {error}（这一行不会留在代码里）",
        "shared": "共享",
        "columns": ("变量", "值", "is_leaf", "requires_grad", "grad_fn", "data_ptr()", "_version", ".grad"),
        "table": "x、y（和 z）",
        "saved_at": "z 保存 x 时的版本",
        "raises": "`{statement}` 抛出错误",
        "caption": "变量视图 · 虚线箭头：共享存储",
        "inplace": (
            "`z = x ** 2` 在版本 {saved} 时把 `x` 保存下来供反向传播使用；对 `y` 的原地修改写进了同一块"
            "存储，把共享的版本计数器推到了 {version}，所以 `z.backward()` 拒绝使用一个已经变了的保存值。"
        ),
        "leaf_inplace": (
            "`x` 是需要梯度的叶子张量，PyTorch 禁止原地修改它（自动求导需要它原来的值）：改去修改 "
            "detach 出来的 `y`，或者把修改放进 `torch.no_grad()` 里。"
        ),
        "second_time": (
            "第一次 `z.backward()` 已经释放了 `z` 的计算图保存的值，所以第二次会失败：再运行一次 "
            "`z = x ** 2`，建一个新的计算图。"
        ),
        "failed": "`{statement}` 抛出了错误，所以没有留在程序里。",
        "start": (
            "`y = x.detach()` 是一个新的张量对象（`y is x` → False），和 `x` 共享同一块存储（`data_ptr` "
            "相同），但不需要梯度：它是计算图之外的叶子张量，和 `x` 共用数值和版本计数器。"
        ),
        "edit": (
            "`{statement}` 写进了 `x` 和 `y` 共享的存储，所以 `x` 也变了（x = {x}），它们共享的版本计数器"
            "现在是 {version}。"
        ),
        "edit_note": "`z` 在这次修改之前保存了 `x`：现在 `z.backward()` 会失败。",
        "saved": (
            "`z = x ** 2` 记录了 `PowBackward0`，并把 `x`（版本 {version}）保存下来供反向传播使用：现在原地"
            "修改 `y`，`z.backward()` 就会失败；先点 `z.backward()` 就没问题。"
        ),
        "backward_one": (
            "`z.backward()` 用的是 `z = x ** 2` 保存下来的 `x`（x = {saved}），把 dz/dx = 2·x = "
            "{added} 存进了 `x.grad`。梯度是另一个张量，和 `x` 的值是两回事：`x.grad` = {grad}，"
            "而 `x` = {x}。detach 出来的 `y` 得不到梯度。"
        ),
        "backward_many": (
            "`z.backward()` 用的是 `z = x ** 2` 保存下来的 `x`（x = {saved}），把 dz/dx = 2·x = "
            "{added} 加进了 `x.grad`。`x.grad` 不是 `x` 的值，而是另一个张量，累加了全部 {n} 次 "
            "backward 的梯度，现在是 {grad}；`x` 本身的值是 {x}。detach 出来的 `y` 得不到梯度。"
        ),
        "click": "点一个按钮，再运行一行。",
    },
}


class DetachExplorer(Explorer):
    """Edit ``y = x.detach()`` in place and watch ``x``, the storage and the version counter.

    Parameters
    ----------
    actions : sequence of str, default ()
        Statements from :data:`ACTIONS` to run at the start, in order.
    zoom : float, default 1.0
        Scale of the drawing.
    lang : {"en", "zh"} or None, default None
        The language of the panel (``None``: :func:`leafkit.get_language`).

    Attributes
    ----------
    buttons : dict of str to ipywidgets.Button
        One per entry of :data:`ACTIONS`, keyed (and labelled) by the statement;
        the control key is the statement too.
    reset_button : ipywidgets.Button
        ``"Reset"``: back to ``x`` and ``y = x.detach()``; control key ``"reset"``.
    actions : list of str
        The statements that ran after the setup (a statement that raised is not kept).
    failed : tuple or None
        ``(statement, "RuntimeError: ...")`` of the last click that raised.
    info : dict
        ``{"same_object": x is y, "same_data_ptr": ..., "x_version", "y_version",
        "x_value", "y_value", "x_grad", "saved_version", "saved_value", "grad_added"}``:
        ``saved_value`` is x's value when the last ``z = x ** 2`` saved it,
        ``grad_added`` what the last ``z.backward()`` added to ``x.grad``.
    widget, code, rows, explanation, message, drawing, svg
        See :class:`leafkit.widgets._view.Explorer`.
    """

    TEXT = TEXT
    TOUR = (
        ("y.add_(1)", None),
        ("z = x ** 2", None),
        ("z.backward()", None),
        ("y.zero_()", None),
        ("z = x ** 2", None),
        ("z.backward()", None),
        ("x.add_(1)", None),
        ("z = x ** 2", None),
        ("y.add_(1)", None),
        ("z.backward()", None),
    )
    DEMO = "DetachExplorer(actions=['y.add_(1)'])"
    css_class = "lk-detach-explorer"

    def __init__(self, actions=(), zoom=1.0, lang=None):
        super().__init__(zoom=zoom, lang=lang)
        bad = [a for a in actions if a not in ACTIONS]
        if bad:
            raise ValueError(f"actions must come from {ACTIONS}, got {bad}")
        self.actions: list = []
        self.failed = None
        self.info: dict = {}
        self._previous = None
        self.buttons = {}
        for a in ACTIONS:
            style = "warning" if a in EDITS else ("danger" if a == "x.add_(1)" else "info")
            b = W.Button(
                description=a,
                button_style=style,
                tooltip=self._t("run_tip", statement=a),
                layout=W.Layout(width="auto", min_width="96px", margin="0 8px 4px 0"),
            )
            b.on_click(self._guard(lambda _b, a=a: self.run(a)))
            self.buttons[a] = b
        self.reset_button = W.Button(
            description=self._t("reset"),
            icon="refresh",
            tooltip=self._t("reset_tip"),
            layout=W.Layout(width="auto", margin="0 8px 4px 0"),
        )
        self.reset_button.on_click(self._guard(lambda _b: self.reset()))

        def label(text):
            return W.HTML(
                f'<span style="font-size:13px;color:{MUTED};font-weight:600">{esc(text)}</span>',
                layout=W.Layout(width="150px"),
            )

        row1 = W.HBox(
            [label(self._t("edit_label")), *(self.buttons[a] for a in EDITS)],
            layout=W.Layout(align_items="center", flex_flow="row wrap"),
        )
        row2 = W.HBox(
            [
                label(self._t("autograd_label")),
                self.buttons["z = x ** 2"],
                self.buttons["z.backward()"],
                self.buttons["x.add_(1)"],
                self.reset_button,
            ],
            layout=W.Layout(align_items="center", flex_flow="row wrap"),
        )
        self.facts_view = W.HTML()  # shown under the table (its HTML is appended to table_view)
        self._assemble([row1, row2], left_width="780px")
        self.actions = list(actions)
        self.refresh()

    def _controls(self) -> list:
        return [
            *(Control(a, b, "button") for a, b in self.buttons.items()),
            Control("reset", self.reset_button, "button"),
        ]

    # -- actions ----------------------------------------------------------
    def run(self, statement: str) -> None:
        """Run one more statement from :data:`ACTIONS` (what its button does)."""
        if statement not in ACTIONS:
            raise ValueError(f"unknown action {statement!r}")
        self.actions.append(statement)
        self.failed = None
        self._update()

    def reset(self) -> None:
        """Back to the two setup lines."""
        self.actions = []
        self.failed = None
        self._previous = None
        self._update()

    @property
    def program(self) -> list:
        """The statements the current state ran."""
        return list(SETUP) + list(self.actions)

    # -- rendering --------------------------------------------------------
    def _run(self):
        snaps = []  # after each statement: (x._version, x's value, x.grad) as tensors detached from the graph

        def snap(i, ns):
            x = ns["x"]
            g, _ = grad_value(x)
            snaps.append((x._version, x.detach().clone(), None if g is None else g.detach().clone()))

        run = run_program(self.program, after_each=snap)
        return run, snaps

    def _update(self) -> None:
        run, snaps = self._run()
        if run.error is not None:
            idx, exc = run.error
            self.failed = (self.program[idx], error_text(exc))
            drop = idx - len(SETUP)
            if 0 <= drop < len(self.actions):
                del self.actions[drop]
            run, snaps = self._run()
        ns = run.namespace
        x, y, z = ns["x"], ns["y"], ns.get("z")
        saved_version = saved_value = added = None
        if "z = x ** 2" in self.actions:
            last_z = len(SETUP) + max(i for i, a in enumerate(self.actions) if a == "z = x ** 2")
            saved_version = snaps[last_z][0]
            saved_value = format_value(snaps[last_z][1])
        if "z.backward()" in self.actions:
            last_b = len(SETUP) + max(i for i, a in enumerate(self.actions) if a == "z.backward()")
            before, after = snaps[last_b - 1][2], snaps[last_b][2]
            added = format_value(after if before is None else after - before)
        xg, _ = grad_value(x)
        self.info = {
            "same_object": x is y,
            "same_data_ptr": x.data_ptr() == y.data_ptr(),
            "x_version": int(x._version),
            "y_version": int(y._version),
            "x_value": format_value(x),
            "y_value": format_value(y),
            "x_grad": None if xg is None else format_value(xg),
            "saved_version": saved_version,
            "saved_value": saved_value,
            "grad_added": added,
        }
        self.buttons["z.backward()"].disabled = z is None
        code = self.program
        marks = {}
        if self.failed:
            code = code + [self.failed[0]]
            marks[len(code) - 1] = ("error", self._t("not_kept", error=self.failed[1].split(":", 1)[0]))
        self.code = "\n".join(code)
        self.code_view.value = code_html(self.code, self._t("code"), marks)
        self.rows = []
        cells = []
        for name, t in (("x", x), ("y", y), ("z", z)):
            if t is None:
                continue
            g, _ = grad_value(t) if t.is_leaf else (None, None)
            row = {
                "variable": name,
                "value": format_value(t),
                "is_leaf": bool(t.is_leaf),
                "requires_grad": bool(t.requires_grad),
                "grad_fn": None if t.grad_fn is None else node_name(t.grad_fn),
                "data_ptr": int(t.data_ptr()),
                "version": int(t._version),
                "grad": None if g is None else format_value(g),
            }
            self.rows.append(row)
            shared = name != "z" and self.info["same_data_ptr"]
            ptr = mono(hex(row["data_ptr"])) + (
                f' <span style="color:{P.SHARE};font-size:11.5px">{esc(self._t("shared"))}</span>' if shared else ""
            )
            cells.append(
                [
                    f"<b>{name}</b>",
                    mono(row["value"]),
                    bool_html(row["is_leaf"], strong_false=True),
                    bool_html(row["requires_grad"]),
                    mono(row["grad_fn"]) if row["grad_fn"] else none_html(),
                    ptr,
                    f"<b>{row['version']}</b>",
                    mono(row["grad"]) if row["grad"] else none_html(),
                ]
            )
        table = table_html(self._t("columns"), cells, title=self._t("table"), compact=True)
        facts = [
            ("y is x", bool_html(self.info["same_object"])),
            ("x.data_ptr() == y.data_ptr()", bool_html(self.info["same_data_ptr"])),
            ("x._version / y._version", f"<b>{self.info['x_version']}</b> / <b>{self.info['y_version']}</b>"),
        ]
        if saved_version is not None:
            facts.append((self._t("saved_at"), f"<b>{saved_version}</b>"))
        self.facts_view.value = (
            '<div class="lk-facts" style="font-size:13px;line-height:1.7;margin:0 0 4px 2px">'
            + " ".join(
                f'<span style="display:inline-block;margin-right:18px;white-space:nowrap">'
                f"{esc(k) if k == self._t('saved_at') else mono(k)} "
                f"\u2192 {v}</span>"
                for k, v in facts
            )
            + "</div>"
        )
        self.table_view.value = table + self.facts_view.value
        if self.failed:
            self._set_message("error", self._t("raises", statement=self.failed[0]), self.failed[1])
        else:
            self._set_message(None)
        sentence, notes = self._explain(saved_version)
        self._set_explanation(sentence, notes)
        tensors = {"x": x, "y": y}
        if z is not None:
            tensors["z"] = z
        drawing = draw(tensors, previous=self._previous, lang=self.lang)
        self._previous = drawing
        self._show_drawing(drawing, caption=self._t("caption"))

    def _explain(self, saved_version):
        t = self._t
        info = self.info
        if self.failed:
            stmt, err = self.failed
            if "inplace operation" in err:
                return t("inplace", saved=saved_version, version=info["x_version"]), []
            if "leaf Variable" in err:
                return t("leaf_inplace"), []
            if "second time" in err:
                return t("second_time"), []
            return t("failed", statement=stmt), []
        if not self.actions:
            return t("start"), []
        last = self.actions[-1]
        if last in EDITS:
            return t("edit", statement=last, x=info["x_value"], version=info["x_version"]), (
                [t("edit_note")] if saved_version is not None and saved_version != info["x_version"] else []
            )
        if last == "z = x ** 2":
            return t("saved", version=info["x_version"]), []
        if last == "z.backward()":
            n = self.actions.count("z.backward()")
            return t(
                "backward_one" if n == 1 else "backward_many",
                saved=info["saved_value"],
                added=info["grad_added"],
                grad=info["x_grad"],
                x=info["x_value"],
                n=n,
            ), []
        return t("click"), []

    def oracle(self, torch) -> None:
        """Values, ``is_leaf``, ``requires_grad``, ``grad_fn``, versions, shared storage and ``.grad`` of x, y and z
        are PyTorch's; a failed statement fails there with the same error (see :meth:`Explorer.oracle`)."""
        ns, _, err = run_torch(self.program, torch)
        expect(err is None, (self.program, err))
        rows = {r["variable"]: r for r in self.rows}
        expect(set(rows) == {n for n in ("x", "y", "z") if n in ns}, (set(rows), self.program))
        for n, r in rows.items():
            t = ns[n]
            shown = (r["value"], r["is_leaf"], r["requires_grad"], r["grad_fn"], r["version"])
            theirs = (repr(t.detach()), bool(t.is_leaf), bool(t.requires_grad), fn_name(t), int(t._version))
            expect(shown == theirs, (self.program, n, shown, theirs))
            if t.is_leaf:
                expect(r["grad"] == grad_of(t), (self.program, n))
        same = ns["x"].data_ptr() == ns["y"].data_ptr()
        expect((rows["x"]["data_ptr"] == rows["y"]["data_ptr"]) == same, self.program)
        if self.failed:
            _, _, their = run_torch(list(self.program) + [self.failed[0]], torch)
            expect(their is not None and their.split(":")[0] == self.failed[1].split(":")[0], (self.program, their))
            ours, their = self.failed[1].split(": ", 1)[1], their.split(": ", 1)[1]
            key = "modified by an inplace operation"
            expect((key in ours) == (key in their), (ours, their))
            expect(ours[:40] == their[:40], (ours, their))
