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

from ._program import error_text, facts, run_program
from ._view import Explorer, bool_html, code_html, esc, mono, table_html

__all__ = ["LeafExplorer", "STEPS", "NO_STEP", "WHEN", "chain_code", "step_program", "run_chain",
           "explain_chain", "ChainResult"]

NO_STEP = "(none)"
#: The chain steps, as they are written after a tensor expression.
STEPS = ("clone()", "detach()", "cuda()", "to('cpu')", "+ 2", "* 3")
#: Where ``requires_grad`` is set: in ``torch.tensor(...)`` or on the result of the chain.
WHEN = ("before", "after")
_BINOPS = {"+ 2": "+", "* 3": "*"}


def _step_list(steps) -> list:
    """``steps`` as a list: a single string is one step (``"clone()"``), not a sequence of characters."""
    if isinstance(steps, str):
        return [steps]
    try:
        return list(steps)
    except TypeError:
        raise TypeError(f"steps must be a step such as 'clone()' or a sequence of steps, "
                        f"got {type(steps).__name__}") from None


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


def explain_chain(res: ChainResult, one_line: bool = False) -> tuple:
    """One sentence explaining the result of a chain, from what really happened.

    Parameters
    ----------
    res : ChainResult
        What :func:`run_chain` observed.
    one_line : bool, default False
        Word it for the one-line program (``.clone()`` rather than ``t0.clone()``),
        as the quiz shows it.

    Returns
    -------
    (str, list of str)
        The sentence, and short notes (e.g. ``to('cpu')`` returned the same tensor).
    """
    name = res.name
    notes = []
    for r in res.rows:
        if r["same_as"] is not None and r["code"].endswith(("to('cpu')", "cuda()")):
            step = r["code"].split(".")[-1]
            notes.append(f"{step} on a tensor that is already on that device returns the very same tensor "
                         f"({r['variable']} is {r['same_as']}): no copy, nothing recorded.")
    if res.error is not None or not res.rows:
        return "The code raised an error, so there is no result to explain.", notes
    last = res.rows[-1]
    first = res.rows[0]
    if not last["is_leaf"]:
        maker = next((r for r in res.rows[1:] if r["grad_fn"] == last["grad_fn"] and r["same_as"] is None
                      and not r["is_leaf"]), last)
        step = _step_words(maker["code"], one_line)
        leaf = "the leaf it came from" if one_line else f"the leaf {first['variable']}"
        return (f"{name} is not a leaf: {step} ran on a tensor that requires grad, so autograd recorded it "
                f"(grad_fn={last['grad_fn']}) and backward() will pass {name}'s gradient on to {leaf} "
                f"instead of storing it in {name}.grad."), notes
    if last["requires_grad"]:
        if res.when == "after":
            return (f"{name} is a leaf that requires grad: nothing before the last line required grad, so "
                    f"{name} was made without a graph (a leaf), and setting {name}.requires_grad = True on a leaf "
                    f"makes backward() store its gradient in {name}.grad."), notes
        return (f"{name} is the tensor created with requires_grad=True itself, so it is a leaf that requires "
                f"grad: backward() will store its gradient in {name}.grad."), notes
    detach = next((r for r in res.rows if r["code"].endswith(".detach()")), None)
    if res.requires_grad and res.when == "before" and detach is not None:
        later = res.rows.index(detach) < len(res.rows) - 1
        tail = ", and the steps after it had nothing to record" if later else ""
        who = f"The {_step_words(detach['code'], True)} step" if one_line else detach["code"]
        return (f"{who} made a new tensor that shares storage with its input but does not require "
                f"grad: a fresh leaf with requires_grad=False{tail}, so {name} is a leaf that gets no "
                f"gradient."), notes
    if res.when == "after" and not res.requires_grad:
        return (f"Nothing here requires grad (setting {name}.requires_grad = False changes nothing), so no step "
                f"is recorded: {name} is a leaf with requires_grad=False, like every tensor that does not "
                f"require grad."), notes
    return (f"Nothing here requires grad (requires_grad=False at creation), so autograd records no step: "
            f"{name} is a leaf with requires_grad=False, like every tensor that does not require grad, "
            f"whatever clone/cuda/ops it went through."), notes


def _step_words(code: str, one_line: bool) -> str:
    """``t1 = t0.clone()`` → ``t0.clone()`` (or ``.clone()`` / ``+ 2`` for the one-line wording)."""
    rhs = code.split(" = ", 1)[1]
    if not one_line:
        return rhs
    op = rhs.split(" ", 1)
    return op[1] if len(op) == 2 else "." + rhs.split(".", 1)[1]


def _row_cells(r):
    same = (f'<div style="font-size:11.5px;color:#6a1b9a">same tensor as {esc(r["same_as"])}</div>'
            if r["same_as"] else "")
    return [
        f'<b>{esc(r["variable"])}</b>',
        mono(r["code"]) + same,
        bool_html(r["is_leaf"], strong_false=True),
        bool_html(r["requires_grad"]),
        mono(r["grad_fn"]) if r["grad_fn"] else '<span style="color:#57606a">None</span>',
        esc(r["device"]),
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

    Raises
    ------
    ValueError
        An unknown step, more than three steps, ``when`` not "before" or
        "after", or a ``name`` that is not a Python variable name
        (``"t t"``, ``""``, ``"if"``).
    TypeError
        ``steps`` neither a string nor a sequence.

    Attributes
    ----------
    requires_grad : ipywidgets.Checkbox
        Description ``"requires_grad=True"``.
    when : ipywidgets.ToggleButtons
        Description ``"set requires_grad"``; values ``"before"`` / ``"after"``.
    steps : list of ipywidgets.Dropdown
        Descriptions ``"step 1"`` .. ``"step 3"``; values from :data:`STEPS` or ``"(none)"``.
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

    title = "Leaf explorer"
    subtitle = "Create a tensor, send it through clone / detach / cuda / to / an op, and see when it stays a leaf."
    css_class = "lk-leaf-explorer"
    show_device = True

    def __init__(self, requires_grad=True, steps=("cuda()", "detach()"), when="before", name="t", zoom=1.0):
        _, init_steps, when = _check(requires_grad, steps, when, name)
        super().__init__(zoom=zoom)
        if len(init_steps) > 3:
            raise ValueError("at most three steps")
        self.name = name
        self.result = None
        self._previous = None
        self.requires_grad = W.Checkbox(value=bool(requires_grad), description="requires_grad=True", indent=False,
                                        layout=W.Layout(width="auto", margin="0 18px 0 0"))
        self.when = W.ToggleButtons(options=[("before the chain", "before"), ("after the chain", "after")],
                                    value=when, description="set requires_grad",
                                    style={"description_width": "initial", "button_width": "140px"},
                                    tooltips=["torch.tensor([1.0], requires_grad=...)",
                                              "t.requires_grad = ... on the result"],
                                    layout=W.Layout(display="flex", align_items="center"))
        init = list(init_steps) + [NO_STEP] * (3 - len(init_steps))
        self.steps = [W.Dropdown(options=[NO_STEP, *STEPS], value=v, description=f"step {i + 1}",
                                 style={"description_width": "initial"},
                                 layout=W.Layout(width="150px", margin="0 10px 0 0"))
                      for i, v in enumerate(init)]
        for c in (self.requires_grad, self.when, *self.steps):
            c.observe(self._guard(self._on_change), names="value")
        row1 = W.HBox([self.requires_grad, self.when], layout=W.Layout(align_items="center", flex_flow="row wrap"))
        row2 = W.HBox(self.steps, layout=W.Layout(align_items="center", flex_flow="row wrap", margin="4px 0 0 0"))
        self._assemble([row1, row2])
        self.refresh()

    # -- state ------------------------------------------------------------
    @property
    def state(self) -> dict:
        """The controls' values: ``{"requires_grad", "steps", "when"}``."""
        return {"requires_grad": self.requires_grad.value,
                "steps": [d.value for d in self.steps if d.value != NO_STEP],
                "when": self.when.value}

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
        changed = {i for i, r in enumerate(res.rows)
                   if prev_rows.get(r["variable"]) is None
                   or any(prev_rows[r["variable"]][k] != r[k] for k in ("is_leaf", "requires_grad", "grad_fn",
                                                                       "device", "code"))}
        if self._prev_rows is None:
            changed = set()
        self._prev_rows = res.rows
        self.code_view.value = code_html(res.code, "The code")
        table_rows = [_row_cells(r) for r in res.rows]
        self.table_view.value = table_html(["var", "step by step (what runs)", "is_leaf", "requires_grad",
                                            "grad_fn", "device"], table_rows, title="Every intermediate",
                                           highlight=changed)
        if res.error is not None:
            self._set_message("error", "This code raises an error", res.error)
        elif res.final is not None and res.final != {k: res.rows[-1][k] for k in res.final}:
            self._set_message("warning", "The one-line and step-by-step programs disagree",
                              f"one line: {res.final}\nstep by step: {res.rows[-1]}")
        else:
            self._set_message(None)
        sentence, notes = explain_chain(res)
        self._set_explanation(sentence, notes)
        self._draw(res)

    _prev_rows = None

    def _draw(self, res: ChainResult) -> None:
        from leafkit.viz import draw

        tensors = {}
        for var, t in res.tensors.items():
            tensors[var] = t
        drawing = draw(tensors, previous=self._previous)
        self._previous = drawing
        self._show_drawing(drawing, caption="Variables view \u00b7 orange / red: changed by your last change")
