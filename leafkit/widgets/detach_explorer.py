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

from ._program import error_text, format_value, grad_value, node_name, run_program
from ._view import MUTED, Explorer, bool_html, code_html, esc, mono, table_html

__all__ = ["DetachExplorer", "SETUP", "ACTIONS"]

SETUP = ("x = torch.tensor([2.0], requires_grad=True)", "y = x.detach()")
#: The buttons, in the order shown: in-place edits of y, then autograd actions.
ACTIONS = ("y.add_(1)", "y.mul_(2)", "y.zero_()", "z = x ** 2", "z.backward()", "x.add_(1)")
EDITS = ACTIONS[:3]


class DetachExplorer(Explorer):
    """Edit ``y = x.detach()`` in place and watch ``x``, the storage and the version counter.

    Parameters
    ----------
    actions : sequence of str, default ()
        Statements from :data:`ACTIONS` to run at the start, in order.
    zoom : float, default 1.0
        Scale of the drawing.

    Attributes
    ----------
    buttons : dict of str to ipywidgets.Button
        One per entry of :data:`ACTIONS`, keyed (and labelled) by the statement.
    reset_button : ipywidgets.Button
        ``"Reset"``: back to ``x`` and ``y = x.detach()``.
    actions : list of str
        The statements that ran after the setup (a statement that raised is not kept).
    failed : tuple or None
        ``(statement, "RuntimeError: ...")`` of the last click that raised.
    info : dict
        ``{"same_object": x is y, "same_data_ptr": ..., "x_version", "y_version",
        "x_value", "y_value", "x_grad", "saved_version"}``.
    widget, code, rows, explanation, message, drawing, svg
        See :class:`leafkit.widgets._view.Explorer`.
    """

    title = "detach() explorer"
    subtitle = "y = x.detach(): a new tensor on the same storage. Edit y in place and watch x."
    css_class = "lk-detach-explorer"

    def __init__(self, actions=(), zoom=1.0):
        super().__init__(zoom=zoom)
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
            b = W.Button(description=a, button_style=style, tooltip=f"run {a}",
                         layout=W.Layout(width="auto", min_width="96px", margin="0 8px 4px 0"))
            b.on_click(self._guard(lambda _b, a=a: self.run(a)))
            self.buttons[a] = b
        self.reset_button = W.Button(description="Reset", icon="refresh", tooltip="back to x and y = x.detach()",
                                     layout=W.Layout(width="auto", margin="0 8px 4px 0"))
        self.reset_button.on_click(self._guard(lambda _b: self.reset()))

        def label(text):
            return W.HTML(f'<span style="font-size:13px;color:{MUTED};font-weight:600">{esc(text)}</span>',
                          layout=W.Layout(width="150px"))

        row1 = W.HBox([label("edit y in place:"), *(self.buttons[a] for a in EDITS)],
                      layout=W.Layout(align_items="center", flex_flow="row wrap"))
        row2 = W.HBox([label("autograd:"), self.buttons["z = x ** 2"], self.buttons["z.backward()"],
                       self.buttons["x.add_(1)"], self.reset_button],
                      layout=W.Layout(align_items="center", flex_flow="row wrap"))
        self.facts_view = W.HTML()  # shown under the table (its HTML is appended to table_view)
        self._assemble([row1, row2], left_width="720px")
        self.actions = list(actions)
        self.refresh()

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
        versions = []

        def snap(i, ns):
            versions.append(ns["x"]._version)

        run = run_program(self.program, after_each=snap)
        return run, versions

    def _update(self) -> None:
        run, versions = self._run()
        if run.error is not None:
            idx, exc = run.error
            self.failed = (self.program[idx], error_text(exc))
            drop = idx - len(SETUP)
            if 0 <= drop < len(self.actions):
                del self.actions[drop]
            run, versions = self._run()
        ns = run.namespace
        x, y, z = ns["x"], ns["y"], ns.get("z")
        saved_version = None
        if "z = x ** 2" in self.actions:
            last_z = len(SETUP) + max(i for i, a in enumerate(self.actions) if a == "z = x ** 2")
            saved_version = versions[last_z]
        xg, _ = grad_value(x)
        self.info = {"same_object": x is y, "same_data_ptr": x.data_ptr() == y.data_ptr(),
                     "x_version": int(x._version), "y_version": int(y._version),
                     "x_value": format_value(x), "y_value": format_value(y),
                     "x_grad": None if xg is None else format_value(xg), "saved_version": saved_version}
        self.buttons["z.backward()"].disabled = z is None
        code = self.program
        marks = {}
        if self.failed:
            code = code + [self.failed[0]]
            marks[len(code) - 1] = ("error", "raised " + self.failed[1].split(":", 1)[0] + " (not kept)")
        self.code = "\n".join(code)
        self.code_view.value = code_html(self.code, "The code (re-run from the top after every click)", marks)
        self.rows = []
        cells = []
        for name, t in (("x", x), ("y", y), ("z", z)):
            if t is None:
                continue
            g, _ = grad_value(t) if t.is_leaf else (None, None)
            row = {"variable": name, "value": format_value(t), "is_leaf": bool(t.is_leaf),
                   "requires_grad": bool(t.requires_grad),
                   "grad_fn": None if t.grad_fn is None else node_name(t.grad_fn),
                   "data_ptr": int(t.data_ptr()), "version": int(t._version),
                   "grad": None if g is None else format_value(g)}
            self.rows.append(row)
            shared = name != "z" and self.info["same_data_ptr"]
            ptr = mono(hex(row["data_ptr"])) + (' <span style="color:#1565c0;font-size:11.5px">shared</span>'
                                                 if shared else "")
            cells.append([f"<b>{name}</b>", mono(row["value"]), bool_html(row["is_leaf"], strong_false=True),
                          bool_html(row["requires_grad"]),
                          mono(row["grad_fn"]) if row["grad_fn"] else '<span style="color:#57606a">None</span>',
                          ptr, f"<b>{row['version']}</b>",
                          mono(row["grad"]) if row["grad"] else '<span style="color:#57606a">None</span>'])
        table = table_html(["var", "value", "is_leaf", "requires_grad", "grad_fn", "data_ptr()",
                           "_version", ".grad"], cells, title="x, y (and z)")
        facts = [("y is x", bool_html(self.info["same_object"])),
                 ("x.data_ptr() == y.data_ptr()", bool_html(self.info["same_data_ptr"])),
                 ("x._version / y._version", f'<b>{self.info["x_version"]}</b> / <b>{self.info["y_version"]}</b>')]
        if saved_version is not None:
            facts.append(("x was saved by z at version", f"<b>{saved_version}</b>"))
        self.facts_view.value = (
            '<div class="lk-facts" style="font-size:13px;line-height:1.7;margin:0 0 4px 2px">'
            + " ".join(f'<span style="display:inline-block;margin-right:18px;white-space:nowrap">{mono(k)} '
                       f'\u2192 {v}</span>' for k, v in facts) + "</div>")
        self.table_view.value = table + self.facts_view.value
        if self.failed:
            self._set_message("error", f"{self.failed[0]} raises", self.failed[1])
        else:
            self._set_message(None)
        sentence, notes = self._explain(saved_version)
        self._set_explanation(sentence, notes)
        from leafkit.viz import draw

        tensors = {"x": x, "y": y}
        if z is not None:
            tensors["z"] = z
        drawing = draw(tensors, previous=self._previous)
        self._previous = drawing
        self._show_drawing(drawing, caption="Variables view \u00b7 dashed arrow: shares storage")

    def _explain(self, saved_version):
        info = self.info
        if self.failed:
            stmt, err = self.failed
            if "inplace operation" in err:
                return (f"z = x ** 2 saved x for backward at version {saved_version}; the in-place edit of y "
                        f"wrote into the same storage and moved the shared version counter to "
                        f"{info['x_version']}, so z.backward() refuses to use a saved value that has changed."), []
            if "leaf Variable" in err:
                return ("x is a leaf that requires grad, so PyTorch forbids changing it in place (autograd needs "
                        "the value it started from): edit the detached y instead, or wrap the edit in "
                        "torch.no_grad()."), []
            if "second time" in err:
                return ("The first z.backward() freed the values z's graph saved, so a second one fails: run "
                        "z = x ** 2 again to build a new graph."), []
            return f"{stmt} raised an error, so it was not kept in the program.", []
        if not self.actions:
            return ("y = x.detach() is a new tensor object (y is x \u2192 False) on the same storage "
                    "(same data_ptr) that does not require grad: a leaf outside the graph, sharing x's values "
                    "and version counter."), []
        last = self.actions[-1]
        if last in EDITS:
            return (f"{last} wrote into the storage x and y share, so x changed too (x = {info['x_value']}) and "
                    f"their shared version counter is now {info['x_version']}."), (
                ["z saved x before this edit: z.backward() will now fail."]
                if saved_version is not None and saved_version != info["x_version"] else [])
        if last == "z = x ** 2":
            return (f"z = x ** 2 records PowBackward0 and saves x (at version {info['x_version']}) for backward: "
                    f"edit y in place now and z.backward() will fail; click z.backward() first and it works."), []
        if last == "z.backward()":
            n = self.actions.count("z.backward()")
            acc = f", accumulated over {n} backward calls" if n > 1 else ""
            return (f"z.backward() used the saved x, still at the version it was saved at, so backward stored "
                    f"dz/dx = 2\u00b7x in x.grad (now {info['x_grad']}{acc}); y, detached, gets no gradient."), []
        return "Click a button to run one more line.", []
