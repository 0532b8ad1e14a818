"""The stepper's panel: the buttons, the table of steps, the "Why" box and the drawing, laid out.

The panel keeps what a learner needs after each click in view, however many steps ran: the
buttons on top; under them the statement being stepped and the sentence about the step that just
ran (and the drawing's legend), beside the drawing (scaled down to at most :data:`DRAWING_HEIGHT`);
under both, the table of
every step so far, full width, scrolling in a box of :data:`TABLE_HEIGHT` with its newest row in
view.  (It used to grow: after "Run to end" the panel was 1,790 px tall, the drawing below the
table, and a narrow notebook clipped the table's right side.)
"""

from __future__ import annotations

import ipywidgets as W

import leafkit
from leafkit.viz import _inspect as I
from leafkit.viz import _palette as P

from .._controls import Control
from .._explorer import Explorer
from .._html import MUTED, code_html, esc, mono, none_html, printed_html, table_html
from .._oracle import expect
from .._program import error_text
from .drawing import draw_pass, legend_html
from .model import START, BackwardPass, caller_names, shape_text
from .oracle import check_stepper, torch_pass
from .sentences import Sentences, hook_key
from .words import TEXT

__all__ = ["BackwardStepper", "MAX_ROWS", "TABLE_VALUES"]

#: How many step rows the table holds at most (the latest ones; the table scrolls).
MAX_ROWS = 60
#: Up to this many elements, a gradient is written in the table with its values; above, its shape.
TABLE_VALUES = 12
#: The height of the table's scrolling box.
TABLE_HEIGHT = "280px"
#: The most height the drawing takes; a taller graph is scaled down to it.
DRAWING_HEIGHT = "480px"


class BackwardStepper(Explorer):
    """Step through ``loss.backward()`` one node at a time, on a graph built in the notebook.

    Parameters
    ----------
    loss : leafkit.Tensor
        Where the pass starts: any leafkit tensor (any shape, dtype or device).  A tensor
        that does not require grad, or a non-scalar one without ``gradient``, is accepted:
        the first Step then shows the error ``loss.backward()`` raises.
    gradient : leafkit.Tensor, optional
        ``gradient=`` of ``loss.backward``: the gradient the pass starts with, of ``loss``'s
        shape (the vector of a vector-Jacobian product).  ``None``: 1 for a one-element loss.
    retain_graph : bool, default False
        As in ``loss.backward(retain_graph=...)``: with False, each node frees its saved
        tensors as it runs, and the graph cannot be walked again afterwards.
    params : dict of str to Tensor, optional
        Names for tensors, matched by identity (as in :func:`leafkit.viz.make_dot`).  By
        default the variables of the code that builds the stepper (the notebook cell) name
        them: ``x``, ``loss``, ``model.0.weight`` for a module's parameters.
    zoom : float, default 1.0
        Scale of the drawing.
    lang : {"en", "zh"} or None, default None
        The language of the panel (``None``: :func:`leafkit.get_language`).

    Raises
    ------
    TypeError
        ``loss`` is not a leafkit tensor (real PyTorch cannot stop its engine between nodes),
        or ``params`` is not a dict.
    ValueError
        ``lang`` is not None, ``"en"`` or ``"zh"``.

    Attributes
    ----------
    step_button, run_button, back_button, reset_button : ipywidgets.Button
        Keys ``"step"``, ``"run"``, ``"back"``, ``"reset"``.
    steps : BackwardPass
        The model: the pass, its records, and replaying them (no widgets; see :mod:`.model`).
    records : list of StepRecord
        Every step the pass has run so far (also those after the view, once Back was used).
    cursor : int
        How many steps the view shows (0: before the pass).
    error : Exception or None
        The error the pass stopped with (``loss.backward()`` raises the same).
    rows : list of dict
        One per step shown: ``{"step", "node", "label", "grad_in", "contributions", "edges",
        "hooks", "printed", "retained", "accumulated", "grad", "freed", "skipped"}``, with
        tensors as their ``repr`` (``"tensor([2.])"``), the same in every language.
    grads : dict
        ``name -> repr of .grad or None`` for every named leaf and every named tensor that
        retains its gradient, as the view shows them now.
    code, explanation, message, drawing, svg, widget
        See :class:`leafkit.widgets._view.Explorer`; ``code`` is the statement being
        stepped (``"loss.backward()"``), ``drawing`` a :class:`PassDrawing`.

    Notes
    -----
    The pass runs once (see the module's docstring): Back and Reset put every ``.grad``
    back by replaying the record, so hooks never fire twice.  While you step, the stepper
    owns the ``.grad`` of the graph's leaves: change them in another cell and the next
    Back or Reset writes the recorded values over them.

    Examples
    --------
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> loss = (x * x).sum()
    >>> s = BackwardStepper(loss)          # doctest: +SKIP
    >>> s.step().name()                    # doctest: +SKIP
    'SumBackward0'
    >>> s.run(); s.finished, x.grad        # doctest: +SKIP
    (True, tensor([2., 4.]))
    """

    TEXT = TEXT
    TOUR = (
        ("step", None),
        ("step", None),
        ("back", None),
        ("run", None),
        ("back", None),
        ("reset", None),
        ("step", None),
        ("step", None),
        ("step", None),
        ("step", None),
    )
    EXAMPLE = {
        "en": (
            "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
            "w = torch.tensor(2.0, requires_grad=True)     # one number, broadcast over x\n"
            "y = w * x\n"
            "y.retain_grad()                                # keep y.grad\n"
            "z = y * y + y                                  # y is used three times\n"
            "h = x.register_hook(lambda grad: print('hook on x saw', grad))\n"
            "loss = z.sum()\n"
            "BackwardStepper(loss)"
        ),
        "zh": (
            "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
            "w = torch.tensor(2.0, requires_grad=True)     # 一个数，广播到 x 的每个元素\n"
            "y = w * x\n"
            "y.retain_grad()                                # 保留 y.grad\n"
            "z = y * y + y                                  # y 用了三次\n"
            "h = x.register_hook(lambda grad: print('x 上的钩子拿到', grad))\n"
            "loss = z.sum()\n"
            "BackwardStepper(loss)"
        ),
    }
    DEMO = (
        "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "v = torch.tensor([1.0, 10.0])\n"
        "BackwardStepper(a * a + a, gradient=v, retain_graph=True)"
    )
    css_class = "lk-backward-stepper"
    WIDE_DRAWINGS = True
    WIDE_DRAWING_LEFT_MIN = 340

    def __init__(self, loss, gradient=None, retain_graph=False, params=None, zoom=1.0, lang=None):
        super().__init__(zoom=zoom, lang=lang)
        if not isinstance(loss, leafkit.Tensor):
            kind = f"{type(loss).__module__}.{type(loss).__name__}"
            raise TypeError(
                f"BackwardStepper steps through a leafkit graph (import leafkit as torch), got {kind}"
                + ("; real PyTorch cannot stop its engine between nodes" if kind.startswith("torch") else "")
            )
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"params must be a dict of names to tensors (as for make_dot), got {type(params).__name__}")
        names = (
            caller_names()
            if params is None
            else {id(t): (str(n), t) for n, t in params.items() if isinstance(t, leafkit.Tensor)}
        )
        self.steps = BackwardPass(loss, gradient, retain_graph, names)
        self.words = Sentences(self.steps, self.lang)
        self.grads: dict = {}
        self._make_buttons()
        self.output_view = W.HTML()
        self.output_view.add_class("lk-printed")
        self.drawing_pane.legend = lambda lang: legend_html(self.words, self._shows_retained)
        self.drawing_pane.max_height = DRAWING_HEIGHT
        self.drawing_pane.separate_legend = True
        row = W.HBox(
            [self.step_button, self.run_button, self.back_button, self.reset_button],
            layout=W.Layout(align_items="center", flex_flow="row wrap"),
        )
        legend = self.drawing_pane.legend_view
        left = [self.code_view, self.explanation_view, self.message_view, self.output_view, legend]
        below = [self.table_view]
        self._assemble([row], left_views=left, below=below, left_width="420px", left_min="340px", grow=(1, 2))
        self.refresh()

    _shows_retained = False  # the drawing has a node with a double border (the legend then explains it)

    def _make_buttons(self) -> None:
        t = self._t
        lay = W.Layout(width="auto", margin="0 10px 0 0")
        self.step_button = W.Button(
            description=t("step"), button_style="primary", icon="step-forward", tooltip=t("tip_step"), layout=lay
        )
        self.run_button = W.Button(description=t("run"), icon="fast-forward", tooltip=t("tip_run"), layout=lay)
        self.back_button = W.Button(description=t("back"), icon="step-backward", tooltip=t("tip_back"), layout=lay)
        self.reset_button = W.Button(
            description=t("reset"), icon="refresh", tooltip=t("tip_reset"), layout=W.Layout(width="auto")
        )
        self.step_button.on_click(self._guard(lambda b: self._click(self.steps.forward)))
        self.run_button.on_click(self._guard(lambda b: self._click(self.steps.run_all)))
        self.back_button.on_click(self._guard(lambda b: self._click(self.steps.back)))
        self.reset_button.on_click(self._guard(lambda b: self._click(self.steps.reset)))

    def _controls(self) -> list:
        return [
            Control("step", self.step_button, "button"),
            Control("run", self.run_button, "button"),
            Control("back", self.back_button, "button"),
            Control("reset", self.reset_button, "button"),
        ]

    # -- the model's state, read through the panel ------------------------------------------------
    @property
    def loss(self):
        return self.steps.loss

    @property
    def gradient(self):
        return self.steps.gradient

    @property
    def retain_graph(self) -> bool:
        return self.steps.retain_graph

    @property
    def records(self) -> list:
        return self.steps.records

    @property
    def cursor(self) -> int:
        return self.steps.cursor

    @property
    def error(self):
        return self.steps.error

    @property
    def finished(self) -> bool:
        """True once the pass is over (every node ran, or it stopped with :attr:`error`) and the view shows it."""
        return self.steps.finished

    @property
    def history(self) -> list:
        """The engine's :class:`~leafkit.autograd.engine.BackwardStep` of every step shown."""
        return [r.step for r in self.steps.shown]

    @property
    def graph_nodes(self) -> list:
        """Every node reachable from ``loss.grad_fn``, in drawing order (a depth-first walk of ``next_functions``)."""
        return list(self.steps.order)

    @property
    def nodes(self) -> list:
        """The nodes that ran, in order, up to the step shown."""
        return [r.node for r in self.steps.shown]

    @property
    def statement(self) -> str:
        """The call being stepped through, as code: ``loss.backward()``."""
        return self.steps.statement

    @property
    def loss_name(self) -> str:
        return self.steps.loss_name

    def name_of(self, t, default=None):
        """The name of tensor ``t`` (from ``params`` or the calling cell), or ``default``."""
        return self.steps.name_of(t, default)

    def label(self, fn, plain_name: bool = False) -> str:
        """How a node is written: ``MulBackward0 (y)``, ``AccumulateGrad (x)``."""
        return self.steps.label(fn, plain_name)

    def _next_node(self):
        return self.steps.next_node()

    # -- stepping ------------------------------------------------------------------------------------
    def step(self):
        """Run the next node of the pass and return it (``None`` once the pass is over).

        After :meth:`back`, the steps already run are replayed from the record first.

        Raises
        ------
        RuntimeError, TypeError
            What ``loss.backward()`` raises at that point (a non-scalar loss without
            ``gradient``, a graph freed by an earlier backward, a hook that raises ...);
            the panel shows it as a message.
        """
        rec, exc = self.steps.forward()
        self._guard(self._update)()
        if exc is not None:
            raise exc
        return None if rec is None else rec.node

    def run(self) -> None:
        """Run the pass to its end (what ``loss.backward()`` does at once).

        Raises
        ------
        RuntimeError, TypeError
            As :meth:`step`.
        """
        exc = self.steps.run_all()
        self._guard(self._update)()
        if exc is not None:
            raise exc

    def back(self) -> bool:
        """Show the state after the previous step: every ``.grad`` rebuilt by replaying the record from the start.

        Returns False at the start of the pass (nothing to undo).
        """
        moved = self.steps.back()
        self._guard(self._update)()
        return moved

    def reset(self) -> bool:
        """Back to before the pass: every ``.grad`` as it was.  Returns False when already there."""
        moved = self.steps.reset()
        self._guard(self._update)()
        return moved

    def _click(self, action) -> None:
        action()  # the lesson's errors are kept in self.error and shown by _update (never raised here)
        self._update()

    # -- what the view shows -------------------------------------------------------------------------
    def _update(self) -> None:
        s = self.steps
        shown = s.shown
        self.rows = [s.row(r) for r in shown]
        self.grads = s.current_grads()
        self.code = s.statement
        failed = s.error is not None and s.finished
        if failed:
            mark = ("error", self._t("at_error", error=type(s.error).__name__))
        elif s.finished:
            mark = ("ok", self._t("at_end", n=len(s.records)))
        elif s.cursor:
            mark = ("info", self._t("at_step", k=s.cursor))
        else:
            mark = ("info", self._t("at_start"))
        self.code_view.value = code_html(self.code, self._t("code"), {0: mark})
        self._render_table(shown)
        if failed:
            self._set_message("error", self._t("raises", stmt=s.statement), error_text(s.error))
        else:
            self._set_message(None)
        printed = "".join(r.printed for r in shown) + (s.error_printed if failed else "")
        self.output_view.value = printed_html(self._t("printed"), printed)
        self._set_explanation(self.words.explain())
        self.step_button.disabled = self.run_button.disabled = s.finished
        self.back_button.disabled = self.reset_button.disabled = s.cursor == 0
        drawing = draw_pass(s, self.words)
        self._shows_retained = drawing.shows_retained
        self._show_drawing(drawing, caption=self._t("caption"))

    def _value(self, t) -> str:
        return mono(self.words.value(t, TABLE_VALUES))

    def _render_table(self, shown) -> None:
        t = self._t
        colon = t("colon")
        cells = []
        for rec, row in zip(shown[-MAX_ROWS:], self.rows[-MAX_ROWS:]):
            gin = [self._value(g) if g is not None else none_html() for g in rec.grad_outputs]
            if len(rec.contributions) > 1:
                parts = "<br>".join(
                    f'<span style="color:{MUTED}">{esc(t("root_in") if src is START else src)}{colon}</span>'
                    f"{self._value(g)}"
                    for _, src, g in rec.contributions
                )
                gin.append(
                    f'<div style="font-size:12px;margin-top:2px"><span style="color:{MUTED}">'
                    f"{esc(t('sum_of', n=len(rec.contributions)))}</span><br>{parts}</div>"
                )
            cells.append(
                [str(row["step"]), f"<b>{esc(row['label'])}</b>", "<br>".join(gin), self._sent_cell(rec, row)]
                + [self._also_cell(rec, row)]
            )
        title = t("table")
        if len(shown) > MAX_ROWS:
            title += " " + t("hidden_rows", n=len(shown) - MAX_ROWS)
        self.table_view.value = table_html(
            t("columns"),
            cells,
            title=title,
            css_class="lk-table",
            highlight={len(cells) - 1} if cells else set(),
            compact=True,
            max_height=TABLE_HEIGHT,
        )

    def _sent_cell(self, rec, row) -> str:
        t = self._t
        sent = []
        for (_nxt, _nr, g, _frm), e in zip(rec.edges, row["edges"]):
            line = f"\u2192 <b>{esc(e['to'])}</b>{t('colon')}{self._value(g)}"
            if e["summed_from"] is not None:
                summed = t("summed", frm=shape_text(e["summed_from"]), to=shape_text(e["shape"]))
                line += f' <span style="color:{P.NOW};font-size:12px">({esc(summed)})</span>'
            sent.append(line)
        if not sent and not rec.skipped and not I.is_accumulate_grad(rec.node):
            sent.append(f'<span style="color:{MUTED}">{esc(t("nothing_sent"))}</span>')
        return "<br>".join(sent)

    def _also_cell(self, rec, row) -> str:
        t = self._t
        also = []
        if rec.accumulated is not None:
            leaf = rec.accumulated
            also.append(
                _with_code(
                    t("acc_cell", leaf=row["accumulated"], before="\x00", after="\x01"),
                    self.words.value(rec.before[id(leaf)][2], TABLE_VALUES),
                    self.words.value(rec.after[id(leaf)][2], TABLE_VALUES),
                )
            )
        for kind in row["hooks"]:
            also.append(esc(t("hook_cell", kind=t(hook_key(kind)))))
        for r in rec.retained:
            also.append(
                _with_code(
                    t("retained_cell", t=self.steps.tensor_name(r), v="\x00"),
                    self.words.value(rec.after[id(r)][2], TABLE_VALUES),
                )
            )
        if row["printed"]:
            also.append(esc(t("printed_cell", text=row["printed"].strip())))
        if row["skipped"]:
            also.append(esc(t("skipped_cell")))
        if row["freed"]:
            also.append(f'<span style="color:{MUTED}">{esc(t("freed_cell"))}</span>')
        return "<br>".join(also)

    # -- the test oracle ---------------------------------------------------------------------------
    _TRACES: dict = {}

    def oracle(self, torch) -> None:
        """The steps shown so far are the first steps of PyTorch's own pass over the example's graph (node
        pre- and post-hooks on every node), and every ``.grad`` is what PyTorch has at that point of its pass
        (see :meth:`Explorer.oracle`).  Only an explorer built by :meth:`example` can be checked: PyTorch
        runs the example's code again."""
        program = type(self).example_code(self.lang).rsplit("\n", 1)[0]  # the cell without its last line
        expect(self.code == "loss.backward()", self.code)
        key = (program, torch.__name__)
        if key not in self._TRACES:
            self._TRACES[key] = torch_pass(torch, program)
        check_stepper(self, self._TRACES[key])


def _with_code(text: str, *values) -> str:
    """``text`` escaped, with its placeholders ``\\x00``, ``\\x01`` ... replaced by ``values`` in the code font."""
    out = esc(text)
    for i, v in enumerate(values):
        out = out.replace(chr(i), mono(v))
    return out
