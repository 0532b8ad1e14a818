"""``GradModeExplorer``: how ``requires_grad`` propagates through an op, and what ``no_grad`` does.

Seed 003, examples 3 to 6.  Two inputs ``x`` and ``y``, each with or without
``requires_grad``, an operator (``* / + -``) and a ``no_grad`` switch.  The
explorer runs the code, shows ``z.requires_grad``, ``z.grad_fn`` and what
``z.backward()`` really does: the gradients, or PyTorch's error text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import ipywidgets as W

from ._program import error_text, facts, format_value, grad_value, run_program
from ._view import Explorer, bool_html, code_html, esc, mono, table_html

__all__ = ["GradModeExplorer", "OPERATORS", "grad_mode_program", "run_grad_mode", "explain_grad_mode",
           "GradModeResult"]

OPERATORS = ("*", "/", "+", "-")


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
    fwd = [f"x = torch.tensor([2.0], requires_grad={bool(x_requires_grad)})",
           f"y = torch.tensor([2.0], requires_grad={bool(y_requires_grad)})"]
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


def run_grad_mode(x_requires_grad=True, y_requires_grad=False, op="*", no_grad=False, torch_module=None,
                  before_backward=None):
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
    probe = run_program(["with torch.no_grad():\n    enabled = torch.is_grad_enabled()" if no_grad
                         else "enabled = torch.is_grad_enabled()"], torch_module)
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


def explain_grad_mode(res: GradModeResult) -> str:
    """One sentence on why ``z`` does (not) require grad, from what the run observed."""
    z = res.forward.get("z")
    if z is None:
        return "The code raised an error, so there is nothing to explain."
    tracked = [k for k in ("x", "y") if res.forward[k]["requires_grad"]]
    inputs = " and ".join(tracked)
    verb = "requires" if len(tracked) == 1 else "require"
    if not z["requires_grad"]:
        if tracked and not res.grad_enabled_inside:
            return (f"Inside torch.no_grad() autograd records nothing, so z = x {res.op} y gets no grad_fn and "
                    f"requires_grad=False even though {inputs} {verb} grad; z is a leaf with no graph behind it, "
                    f"and z.backward() fails because there is nothing to differentiate.")
        extra = " (no_grad changes nothing here)" if res.no_grad else ""
        return (f"Neither x nor y requires grad, so z = x {res.op} y is not tracked{extra}: no grad_fn, "
                f"requires_grad=False, and z.backward() fails because there is nothing to differentiate.")
    grads = [k for k in ("x", "y") if res.grads.get(k) is not None]
    nones = [k for k in ("x", "y") if k not in tracked]
    tail = (f"; {nones[0]}.grad stays None because {nones[0]} does not require grad" if nones else "")
    return (f"Because {inputs} {verb} grad, z does too: autograd recorded {z['grad_fn']} as z.grad_fn, "
            f"which makes z a non-leaf, and z.backward() stores "
            f"{' and '.join(f'dz/d{g} in {g}.grad' for g in grads)}{tail}.")


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

    Attributes
    ----------
    x_requires_grad, y_requires_grad : ipywidgets.Checkbox
        Descriptions ``"x requires_grad"`` and ``"y requires_grad"``.
    op : ipywidgets.ToggleButtons
        Description ``"operator"``; values ``"*"``, ``"/"``, ``"+"``, ``"-"``.
    no_grad : ipywidgets.Checkbox
        Description ``"with torch.no_grad()"``.
    result : GradModeResult
        What the current state ran and observed.
    widget, code, rows, explanation, message, drawing, svg
        See :class:`leafkit.widgets._view.Explorer`; ``message`` holds the
        outcome of ``z.backward()`` (``kind`` ``"ok"`` or ``"error"``).
    """

    title = "requires_grad and no_grad explorer"
    subtitle = "z = x (op) y: when does z require grad, what is its grad_fn, and can z.backward() run?"
    css_class = "lk-grad-mode-explorer"

    def __init__(self, x_requires_grad=True, y_requires_grad=False, op="*", no_grad=False, zoom=1.0):
        super().__init__(zoom=zoom)
        if op not in OPERATORS:
            raise ValueError(f"op must be one of {OPERATORS}, got {op!r}")
        self.result = None
        self._previous = None
        lay = W.Layout(width="auto", margin="0 18px 0 0")
        self.x_requires_grad = W.Checkbox(value=bool(x_requires_grad), description="x requires_grad",
                                          indent=False, layout=lay)
        self.y_requires_grad = W.Checkbox(value=bool(y_requires_grad), description="y requires_grad",
                                          indent=False, layout=lay)
        self.op = W.ToggleButtons(options=list(OPERATORS), value=op, description="operator",
                                  style={"description_width": "initial", "button_width": "42px"},
                                  layout=W.Layout(margin="0 18px 0 0", display="flex", align_items="center"))
        self.no_grad = W.Checkbox(value=bool(no_grad), description="with torch.no_grad()", indent=False,
                                  layout=lay)
        for c in (self.x_requires_grad, self.y_requires_grad, self.op, self.no_grad):
            c.observe(self._guard(self._on_change), names="value")
        row = W.HBox([self.x_requires_grad, self.y_requires_grad, self.op, self.no_grad],
                     layout=W.Layout(align_items="center", flex_flow="row wrap"))
        self._assemble([row])
        self.refresh()

    @property
    def state(self) -> dict:
        """The controls' values."""
        return {"x_requires_grad": self.x_requires_grad.value, "y_requires_grad": self.y_requires_grad.value,
                "op": self.op.value, "no_grad": self.no_grad.value}

    def set_state(self, x_requires_grad=None, y_requires_grad=None, op=None, no_grad=None) -> None:
        """Set several controls at once and redraw once."""
        self._batch = True
        try:
            for ctl, v in ((self.x_requires_grad, x_requires_grad), (self.y_requires_grad, y_requires_grad),
                           (self.op, op), (self.no_grad, no_grad)):
                if v is not None:
                    ctl.value = v
        finally:
            self._batch = False
        self.refresh()

    def _update(self) -> None:
        st = self.state
        from leafkit.viz import draw

        forward_drawing = []
        res = run_grad_mode(st["x_requires_grad"], st["y_requires_grad"], st["op"], st["no_grad"],
                            before_backward=lambda ns: forward_drawing.append(
                                draw({k: ns[k] for k in ("x", "y", "z")}, previous=self._previous)))
        self.result = res
        self.code = res.code
        n = len(res.code.split("\n"))
        marks = {n - 1: ("error", "raises RuntimeError")} if res.backward_error else {n - 1: ("ok", "runs")}
        self.code_view.value = code_html(res.code, "The code", marks=marks)
        if res.error:
            self.rows = []
            self.table_view.value = ""
            self._set_message("error", "This code raises an error", res.error)
            self._set_explanation(explain_grad_mode(res))
            self.drawing_pane.clear()
            return
        self.rows = []
        cells = []
        for k in ("x", "y", "z"):
            f = res.forward[k]
            grad = res.grads.get(k) if k != "z" else None
            row = {"variable": k, **f, "grad": grad}
            self.rows.append(row)
            grad_cell = ("\u2014" if k == "z" else
                         (mono(grad) if grad is not None else '<span style="color:#57606a">None</span>'))
            cells.append([f"<b>{k}</b>", bool_html(f["is_leaf"], strong_false=True), bool_html(f["requires_grad"]),
                          mono(f["grad_fn"]) if f["grad_fn"] else '<span style="color:#57606a">None</span>',
                          grad_cell])
        inside = "inside no_grad" if res.no_grad else "where z was computed"
        self.table_view.value = table_html(
            ["var", "is_leaf", "requires_grad", "grad_fn", ".grad after z.backward()"], cells,
            title="x, y and z", highlight={2}) + (
            f'<div style="font-size:12.5px;color:#57606a;margin:-2px 0 4px 2px">torch.is_grad_enabled() '
            f'{esc(inside)}: {bool_html(res.grad_enabled_inside, strong_false=True)}</div>')
        if res.backward_error:
            self._set_message("error", "z.backward() raises", res.backward_error)
        else:
            got = ", ".join(f"{k}.grad = {v}" for k, v in res.grads.items() if v is not None)
            self._set_message("ok", "z.backward() runs", got, mono=True)
        self._set_explanation(explain_grad_mode(res))
        drawing = forward_drawing[0]
        self._previous = drawing
        self._show_drawing(drawing, caption="Variables view before z.backward()")
