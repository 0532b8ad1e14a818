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
freed.  Freed parts of the graph are greyed out in the drawing.
"""
from __future__ import annotations

import ipywidgets as W

from ._program import error_text, format_value, grad_value, run_program
from ._view import Explorer, MUTED, MONO, bool_html, code_html, esc, message_html, mono, table_html

__all__ = ["BackwardExplorer", "SETUP", "NAMES", "INTERMEDIATES", "hook_statement", "backward_statement"]

#: The chain, as in seed 003 example 8.
SETUP = ("x = torch.tensor([2.0], requires_grad=True)", "y = x ** 2", "z = y ** 2", "t = z ** 2")
NAMES = ("x", "y", "z", "t")
#: The tensors that can ``retain_grad()`` or carry a hook.
INTERMEDIATES = ("y", "z", "t")
NO_HOOK = "none"
MAX_PASS_COLUMNS = 3


def _join(names) -> str:
    """``"y"``, ``"y and z"``, ``"y, z and t"``."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def hook_statement(name: str) -> str:
    """The line that registers the explorer's printing hook on ``name``."""
    return f'handle = {name}.register_hook(lambda grad: print("hook on {name} saw", grad))'


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

    Attributes
    ----------
    retain : dict of str to ipywidgets.Checkbox
        ``retain["z"]`` has the description ``"z.retain_grad()"``.  Ticking
        adds the call to the program; unticking removes it (PyTorch has no
        way to undo ``retain_grad()``, so the program is re-run without it).
    hook_on : ipywidgets.Dropdown
        Description ``"hook on"``; ``"none"``, ``"y"``, ``"z"``, ``"t"``.
        Changing it adds ``handle.remove()`` for the old hook and registers a new one.
    retain_graph : ipywidgets.Checkbox
        Description ``"retain_graph=True"``: the argument of the next backward.
    backward_button : ipywidgets.Button
        ``"t.backward()"``: run one more backward pass.
    reset_button : ipywidgets.Button
        ``"Reset"``: a fresh graph, keeping the retain_grad / hook choices.
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

    title = "Backward explorer"
    subtitle = ("x \u2192 y = x\u00b2 \u2192 z = y\u00b2 \u2192 t = z\u00b2: which tensors get .grad, "
                "what hooks see, and when a second backward() fails.")
    css_class = "lk-backward-explorer"

    def __init__(self, retain_grad=(), hook=None, retain_graph=False, zoom=1.0):
        super().__init__(zoom=zoom)
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
        lay = W.Layout(width="auto", margin="0 16px 0 0")
        self.retain = {n: W.Checkbox(value=n in retain_grad, description=f"{n}.retain_grad()", indent=False,
                                     layout=lay) for n in INTERMEDIATES}
        self.hook_on = W.Dropdown(options=[NO_HOOK, *INTERMEDIATES], value=hook, description="hook on",
                                  style={"description_width": "initial"},
                                  layout=W.Layout(width="130px", margin="0 16px 0 0"))
        self.retain_graph = W.Checkbox(value=bool(retain_graph), description="retain_graph=True", indent=False,
                                       layout=lay)
        self.backward_button = W.Button(description=backward_statement(bool(retain_graph)), button_style="primary",
                                        icon="play",
                                        tooltip="run one backward pass from t",
                                        layout=W.Layout(width="auto", margin="0 10px 0 0"))
        self.reset_button = W.Button(description="Reset", icon="refresh", tooltip="build a fresh graph",
                                     layout=W.Layout(width="auto"))
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
        row1 = W.HBox([*self.retain.values(), self.hook_on], layout=W.Layout(align_items="center",
                                                                            flex_flow="row wrap"))
        row2 = W.HBox([self.retain_graph, self.backward_button, self.reset_button],
                      layout=W.Layout(align_items="center", flex_flow="row wrap", margin="6px 0 0 0"))
        self._assemble([row1, row2], left_extra=[self.warning_view, self.output_view])
        self._setup_actions()
        self.refresh()

    # -- actions ----------------------------------------------------------
    def _setup_actions(self):
        self.actions = [f"{n}.retain_grad()" for n in INTERMEDIATES if self.retain[n].value]
        self._hook_active = None
        if self.hook_on.value != NO_HOOK:
            self.actions.append(hook_statement(self.hook_on.value))
            self._hook_active = self.hook_on.value

    def _on_retain(self, name, value):
        stmt = f"{name}.retain_grad()"
        if value:
            self.actions.append(stmt)
        else:
            self.actions = [a for a in self.actions if a != stmt]
        self.failed = None
        self._update()

    def _on_hook(self, change):
        new = change["new"]
        if self._hook_active is not None:
            self.actions.append("handle.remove()")
            self._hook_active = None
        if new != NO_HOOK:
            self.actions.append(hook_statement(new))
            self._hook_active = new
        self.failed = None
        self._update()

    def _on_retain_graph(self, change):
        # the button shows the exact statement its next click runs
        self.backward_button.description = backward_statement(change["new"])
        self._update()

    def backward(self) -> None:
        """Run ``t.backward(...)`` once more (what the button does)."""
        stmt = backward_statement(self.retain_graph.value)
        self.actions.append(stmt)
        self.failed = None
        self._update(pending=stmt)

    def reset(self) -> None:
        """Start over with a fresh graph; the retain_grad and hook choices are kept."""
        self.failed = None
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
                marks[i] = ("ok", f"pass {p}")
        if self.failed:
            lines.append(self.failed[0])
            marks[len(lines) - 1] = ("error", "raised " + self.failed[1].split(":", 1)[0] + " (not kept)")
            code_shown = "\n".join(lines)
        else:
            code_shown = code
        self.code = code_shown
        self.code_view.value = code_html(code_shown, "The code (re-run from the top after every action)", marks)
        self._render_table(ns)
        if self.failed:
            self._set_message("error", f"{self.failed[0]} raises", self.failed[1])
        else:
            self._set_message(None)
        self._render_printed()
        sentence, notes = self._explain(ns)
        self._set_explanation(sentence, notes)
        from leafkit.viz import draw

        drawing = draw({n: ns[n] for n in NAMES}, previous=self._previous)
        self._previous = drawing
        freed = any(getattr(fn, "_released", False) for fn in self._nodes(ns["t"]))
        self.graph_freed = freed
        cap = "Variables view" + (" (greyed: freed by backward)" if freed else "")
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
        cols = ["var", "is_leaf", "retains_grad", "hook"]
        cols += [f".grad after pass {first + i + 1}" for i in range(len(shown))] or [".grad"]
        self.rows = []
        cells = []
        for n in NAMES:
            t = ns[n]
            retains = bool(getattr(t, "retains_grad", False)) and not t.is_leaf
            hook = self._hook_active == n
            history = [p["grads"][n] for p in self.passes]
            self.rows.append({"variable": n, "is_leaf": bool(t.is_leaf), "retains_grad": retains,
                              "hook": hook, "grad": self.grads[n], "grad_history": history,
                              "warning": self.grad_warnings.get(n)})

            def gcell(v, warn):
                if v is not None:
                    return f'<b>{mono(v)}</b>'
                return '<span style="color:#57606a">None</span>' + (
                    ' <span title="reading .grad of a non-leaf warns" style="color:#ed6c02">\u26a0</span>'
                    if warn else "")

            grad_cells = [gcell(p["grads"][n], n in self.grad_warnings) for p in shown] or [
                gcell(self.grads[n], n in self.grad_warnings)]
            cells.append([f"<b>{n}</b>", bool_html(t.is_leaf, strong_false=True), bool_html(retains),
                          "\u2713 hook" if hook else "", *grad_cells])
        self.table_view.value = table_html(cols, cells, title=".grad of every tensor")
        if self.grad_warnings:
            names = ", ".join(f"{n}.grad" for n in self.grad_warnings)
            text = next(iter(self.grad_warnings.values()))
            self.warning_view.value = message_html(
                "warning", f"Reading {names} warns (\u26a0): a non-leaf without retain_grad()",
                "UserWarning: " + text, mono=True)
        else:
            self.warning_view.value = ""

    def _render_printed(self) -> None:
        if not self.printed:
            self.output_view.value = ""
            return
        self.output_view.value = (
            f'<div style="font-size:12px;color:{MUTED};font-weight:600;text-transform:uppercase;'
            f'letter-spacing:.04em;margin:6px 0 3px 0">Printed by the hook</div>'
            f'<pre class="lk-printed-text" style="margin:0;padding:6px 10px;background:#fbfbfb;'
            f'border:1px solid #e1e4e8;border-radius:6px;font-family:{MONO};font-size:12.5px">'
            f'{esc(self.printed.rstrip())}</pre>')

    def _explain(self, ns):
        notes = []
        if self._hook_active and self.passes:
            notes.append(f"The hook on {self._hook_active} sees the gradient flowing through "
                         f"{self._hook_active} on every pass, retain_grad() or not.")
        if self.failed and "second time" in self.failed[1]:
            return ("The previous t.backward() ran without retain_graph=True, so it freed the tensors the graph "
                    "saved for backward (greyed out), and PyTorch refuses to go through the graph a second "
                    "time: tick retain_graph=True before the earlier pass, or press Reset for a new graph."), notes
        if self.failed:
            return f"{self.failed[0]} raised an error, so it was not kept in the program.", notes
        if not self.passes:
            return ("No backward pass yet, so every .grad is None: press t.backward() to send dt/dt = 1 back "
                    "through z and y to the leaf x."), notes
        n = len(self.passes)
        x_hist = [p["grads"]["x"] for p in self.passes]
        acc = ""
        if n > 1:
            acc = (f" (pass {n} added the same gradient again: {x_hist[-2]} \u2192 {x_hist[-1]}, because "
                   f"gradients accumulate until you reset .grad)")
        kept = [m for m in INTERMEDIATES if self.grads[m] is not None]
        none = [m for m in INTERMEDIATES if self.grads[m] is None]
        parts = []
        if kept:
            parts.append(f"{_join(kept)} kept {'its' if len(kept) == 1 else 'their'} .grad because of "
                         f"retain_grad()")
        if none:
            parts.append(f"{_join(none)} {'is a non-leaf' if len(none) == 1 else 'are non-leaves'} "
                         f"without retain_grad(), so .grad stays None")
        last = self.passes[-1]["statement"]
        after = ("retain_graph=True kept the graph, so t.backward() can run again" if "retain_graph=True" in last
                 else "the graph is now freed (greyed out), so another t.backward() will fail")
        sentence = (f"After pass {n}, the leaf x holds dt/dx = {x_hist[-1]}{acc}; " + "; ".join(parts)
                    + f"; {after}.")
        return sentence, notes
