"""``LeafQuiz``: predict ``is_leaf`` and ``requires_grad`` for seed 001's tensors a..k.

Each line of the experiment is run in leafkit when the learner presses Check;
the answers are what leafkit really returns (and what PyTorch returns: the
tests compare).  Each miss gets the reason and the drawing of that tensor.
"""
from __future__ import annotations

import ipywidgets as W

from ._view import FONT, MUTED, Explorer, DrawingPane, esc, message_html, mono
from .leaf_explorer import _step_list, chain_code, explain_chain, run_chain

__all__ = ["LeafQuiz", "QUESTIONS", "UNANSWERED"]

#: Seed 001's experiment: ``(name, requires_grad at creation, steps)``.
QUESTIONS = (
    ("a", False, ()),
    ("b", True, ()),
    ("c", False, ("clone()",)),
    ("d", False, ("detach()",)),
    ("e", False, ("cuda()",)),
    ("f", True, ("clone()",)),
    ("g", True, ("detach()",)),
    ("h", True, ("cuda()",)),
    ("i", True, ("clone()", "detach()")),
    ("j", True, ("detach()", "clone()")),
    ("k", True, ("cuda()", "detach()")),
)
UNANSWERED = "?"
_CHOICES = [UNANSWERED, "True", "False"]


class LeafQuiz(Explorer):
    """Predict ``is_leaf`` and ``requires_grad`` for a..k; Check scores, explains and draws each miss.

    Parameters
    ----------
    questions : sequence of (str, bool, sequence of str), optional
        ``(name, requires_grad, steps)`` per question; seed 001's a..k by default.
        At least one; names are distinct Python identifiers; ``steps`` may be
        one string (one step).
    zoom : float, default 0.85
        Scale of the drawings shown with the misses.

    Raises
    ------
    ValueError
        No questions, a repeated or invalid name, or an unknown step.

    Notes
    -----
    Changing an answer after Check clears the marks and the score (they were
    for the old answers) and asks for Check again.

    Attributes
    ----------
    answers : dict of str to (ipywidgets.Dropdown, ipywidgets.Dropdown)
        ``answers["f"] == (is_leaf dropdown, requires_grad dropdown)``; values
        ``"?"``, ``"True"``, ``"False"``; descriptions ``"f.is_leaf"`` and
        ``"f.requires_grad"``.
    check_button, reset_button : ipywidgets.Button
        ``"Check"`` and ``"Reset"``.
    codes : dict of str to str
        The line of code of each question (``f = torch.tensor([1.0], requires_grad=True).clone()``).
    truth : dict of str to dict
        After Check: ``{"is_leaf", "requires_grad", "grad_fn", "device"}`` that leafkit returned.
    score : tuple of (int, int) or None
        ``(correct, total)`` after Check, ``None`` before.
    misses : list of dict
        After Check: ``{"name", "field", "predicted", "actual", "reason"}`` per wrong or missing answer.
    miss_drawings : dict of str to DrawingPane
        After Check: the drawing of each tensor with a miss (``.svg``, ``.fallback``).
    feedback_view : ipywidgets.HTML
        The score, the reasons and the drawings (CSS class ``lk-quiz-feedback``).
    widget, code, rows, explanation, message
        See :class:`leafkit.widgets._view.Explorer`.
    """

    title = "Leaf quiz"
    subtitle = "For each tensor, predict is_leaf and requires_grad, then press Check."
    css_class = "lk-leaf-quiz"
    show_device = True

    def __init__(self, questions=QUESTIONS, zoom=0.85):
        questions = [(n, bool(rg), tuple(_step_list(steps))) for n, rg, steps in questions]
        if not questions:
            raise ValueError("LeafQuiz needs at least one question")
        names = [n for n, _, _ in questions]
        dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if dup is not None:
            raise ValueError(f"LeafQuiz question names must be different; {dup!r} appears twice")
        codes = {n: chain_code(rg, steps, "before", n) for n, rg, steps in questions}  # checks names and steps
        super().__init__(zoom=zoom)
        self.questions = questions
        self.codes = codes
        self.code = "\n".join(self.codes.values())
        self.truth: dict = {}
        self.score = None
        self.misses: list = []
        self.results = {}
        self.miss_drawings = {}
        self.answers = {}
        self._zoom = zoom
        rows = []
        header = W.HTML(
            f'<div style="font-family:{FONT};font-size:12px;color:{MUTED};font-weight:600;'
            f'text-transform:uppercase;letter-spacing:.04em">the code, and your predictions</div>')
        rows.append(header)
        self.marks = {}
        for n, _, _ in self.questions:
            code = W.HTML(f'<code style="font-family:var(--jp-code-font-family, monospace);font-size:13px;'
                          f'white-space:nowrap">{esc(self.codes[n])}</code>', layout=W.Layout(width="470px"))
            leaf = W.Dropdown(options=_CHOICES, value=UNANSWERED, description=f"{n}.is_leaf",
                              style={"description_width": "68px"}, layout=W.Layout(width="140px", margin="0 10px 0 0"))
            rg = W.Dropdown(options=_CHOICES, value=UNANSWERED, description=f"{n}.requires_grad",
                            style={"description_width": "110px"}, layout=W.Layout(width="182px", margin="0 10px 0 0"))
            mark = W.HTML("", layout=W.Layout(width="auto"))
            self.answers[n] = (leaf, rg)
            self.marks[n] = mark
            for d in (leaf, rg):
                d.observe(self._guard(self._on_answer), names="value")
            rows.append(W.HBox([code, leaf, rg, mark], layout=W.Layout(align_items="center")))
        self.check_button = W.Button(description="Check", button_style="primary", icon="check",
                                     layout=W.Layout(width="auto", margin="6px 10px 0 0"))
        self.reset_button = W.Button(description="Reset", icon="refresh", layout=W.Layout(width="auto",
                                                                                         margin="6px 0 0 0"))
        self.check_button.on_click(self._guard(lambda b: self.check()))
        self.reset_button.on_click(self._guard(lambda b: self.reset()))
        self.feedback_view = W.HTML()
        self.feedback_view.add_class("lk-quiz-feedback")
        self.drawing_view.layout.display = "none"
        grid = W.VBox(rows)
        self.widget.children = [self.header_view, grid, W.HBox([self.check_button, self.reset_button]),
                                self.message_view, self.feedback_view]
        self.widget.layout = W.Layout(width="100%", max_width="1280px", padding="10px 14px",
                                      border="1px solid #d0d7de", margin="4px 0")
        self.widget.add_class("lk-explorer")
        self.widget.add_class(self.css_class)
        self.refresh()

    def _update(self) -> None:
        self._set_message(None)

    def _on_answer(self, change=None) -> None:
        """An answer changed after Check: the marks and the score no longer match, so clear them."""
        if self.score is None:
            return
        self._clear_results()
        self.feedback_view.value = message_html("info", "You changed an answer",
                                                "Press Check to score your answers again.")

    def _clear_results(self) -> None:
        for m in self.marks.values():
            m.value = ""
        self.truth, self.misses, self.results, self.rows, self.miss_drawings = {}, [], {}, [], {}
        self.score = None
        self.explanation = ""
        self.feedback_view.value = ""

    # -- quiz -------------------------------------------------------------
    def predictions(self) -> dict:
        """``{name: {"is_leaf": "?"|"True"|"False", "requires_grad": ...}}`` as currently chosen."""
        return {n: {"is_leaf": a.value, "requires_grad": b.value} for n, (a, b) in self.answers.items()}

    def answer(self, name: str, is_leaf=None, requires_grad=None) -> None:
        """Set the learner's prediction for one tensor (``True``/``False``/``"?"``)."""
        a, b = self.answers[name]
        if is_leaf is not None:
            a.value = is_leaf if isinstance(is_leaf, str) else str(bool(is_leaf))
        if requires_grad is not None:
            b.value = requires_grad if isinstance(requires_grad, str) else str(bool(requires_grad))

    def check(self) -> None:
        """Run every line in leafkit, score the predictions, explain and draw each miss."""
        from leafkit.viz import draw

        self.truth, self.misses, self.results, self.miss_drawings = {}, [], {}, {}
        correct = 0
        total = 0
        cards = []
        errors = []
        for n, rg, steps in self.questions:
            res = run_chain(rg, steps, "before", n)
            self.results[n] = res
            if res.error is not None:
                errors.append(f"{self.codes[n]}\n{res.error}")
                self.marks[n].value = ""
                continue
            final = res.rows[-1]
            self.truth[n] = {k: final[k] for k in ("is_leaf", "requires_grad", "grad_fn", "device")}
            pred = self.predictions()[n]
            wrong = []
            for field in ("is_leaf", "requires_grad"):
                total += 1
                actual = str(final[field])
                if pred[field] == actual:
                    correct += 1
                else:
                    wrong.append((field, pred[field], actual))
            if not wrong:
                self.marks[n].value = '<span style="color:#2e7d32;font-weight:700;font-size:15px">\u2714</span>'
                continue
            self.marks[n].value = '<span style="color:#c62828;font-weight:700;font-size:15px">\u2716</span>'
            sentence, notes = explain_chain(res, one_line=True)
            for field, p, a in wrong:
                self.misses.append({"name": n, "field": field, "predicted": p, "actual": a == "True",
                                    "reason": sentence})
            pane = DrawingPane(zoom=self._zoom, legend=False, min_height="0")
            pane.show(draw({n: res.tensors[n]}))
            self.miss_drawings[n] = pane
            said = "; ".join(f"{n}.{f}: you said {esc(p)}, it is <b>{esc(a)}</b>" for f, p, a in wrong)
            fn = final["grad_fn"]
            cards.append(
                f'<div class="lk-miss" style="display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start;'
                f'border:1px solid #f1c8c8;border-radius:6px;padding:8px 10px;margin:8px 0;background:#fffafa">'
                f'<div style="flex:1 1 420px;min-width:300px;font-family:{FONT};font-size:13.5px;line-height:1.5">'
                f'<div>{mono(self.codes[n])}</div>'
                f'<div style="margin:3px 0;color:#b71c1c">\u2716 {said}</div>'
                f'<div style="font-size:12.5px;color:{MUTED}">grad_fn={esc(fn)}, device={esc(final["device"])}</div>'
                f'<div style="margin-top:4px">{esc(sentence)}</div>'
                + "".join(f'<div style="font-size:12.5px;color:{MUTED}">{esc(x)}</div>' for x in notes)
                + f'</div><div style="flex:0 1 auto;max-width:100%">{pane.view.value}</div></div>')
        self.score = (correct, total)
        unanswered = sum(v == UNANSWERED for p in self.predictions().values() for v in p.values())
        kind = "ok" if correct == total else ("warning" if correct >= total * 0.6 else "error")
        title = f"Score: {correct} / {total}"
        text = ("All right: you can read leaf-ness off the code." if correct == total else
                f"{len(self.misses)} answer{'s' if len(self.misses) != 1 else ''} to look at, on "
                f"{len(cards)} tensor{'s' if len(cards) != 1 else ''} below"
                + (f" ({unanswered} left as ?)" if unanswered else "") + ". Each shows why, and its drawing.")
        summary = message_html(kind, title, text)
        if errors:
            summary += message_html("error", "Some lines raised", "\n\n".join(errors), mono=True)
        self.explanation = text
        self.feedback_view.value = f'<div class="lk-quiz-score">{summary}</div>' + "".join(cards)
        self.rows = [{"variable": n, "code": self.codes[n], **self.truth.get(n, {}),
                      "predicted": self.predictions()[n],
                      "correct": not any(m["name"] == n for m in self.misses)} for n, _, _ in self.questions]

    def reset(self) -> None:
        """Clear every prediction and the feedback."""
        for a, b in self.answers.values():
            a.value = UNANSWERED
            b.value = UNANSWERED
        self._clear_results()
        self._set_message(None)
