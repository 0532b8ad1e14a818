"""``LeafQuiz``: predict ``is_leaf`` and ``requires_grad`` for seed 001's tensors a..k.

Each line of the experiment is run in leafkit when the learner presses Check;
the answers are what leafkit really returns (and what PyTorch returns: the
tests compare).  Only rows the learner answered (both predictions chosen) are
checked and revealed; each miss gets the reason and the drawing of that tensor.
"""

from __future__ import annotations

import ipywidgets as W

from leafkit.viz import draw

from ._controls import Control
from ._drawing import DrawingPane
from ._explorer import Explorer
from ._html import FONT, GREEN, MUTED, RED, caption_html, device_text, esc, message_html, mono, rich
from ._oracle import as_torch, expect, fn_name, run_torch
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
FIELDS = ("is_leaf", "requires_grad")

#: Everything the quiz writes, per language; the Chinese sentences mark code with backticks.
TEXT = {
    "en": {
        "title": "Leaf quiz",
        "subtitle": "For each tensor, predict is_leaf and requires_grad, then press Check.",
        "summary": "predict `is_leaf` and `requires_grad` for the article's `a`..`k`, then check",
        "header": "the code, and your predictions",
        "check": "Check",
        "changed_title": "You changed an answer",
        "changed_text": "Press Check to score your answers again.",
        "nothing_title": "Nothing to check yet",
        "nothing_text": (
            "Choose True or False for both predictions of a tensor, then press Check. Rows that "
            "still show ? are not checked, so their answers stay hidden."
        ),
        "score": "Score: {correct} / {total}",
        "all_right": "All right: you can read leaf-ness off the code.",
        "all_right_so_far": "All right so far: {checked} of {questions} tensors checked.",
        "misses": "{m} answer{s} to look at, on {k} tensor{ks} below. Each shows why, and its drawing.",
        "unchecked": " Not checked (a ? is left, so nothing about them is shown): {names}.",
        "raised": "Some lines raised",
        "said": "{field}: you said {predicted}, it is <b>{actual}</b>",
        "said_sep": "; ",
        "names_sep": ", ",
    },
    "zh": {
        "title": "叶子张量小测验",
        "subtitle": "先预测每个张量的 is_leaf 和 requires_grad，再按“检查”。",
        "summary": "预测原文里 `a`..`k` 的 `is_leaf` 和 `requires_grad`，再检查",
        "header": "代码和你的预测",
        "check": "检查",
        "changed_title": "你改了答案",
        "changed_text": "再按一次“检查”，给新的答案打分。",
        "nothing_title": "还没有可以检查的答案",
        "nothing_text": (
            "给某个张量的两个预测都选上 True 或 False，再按“检查”。还显示 ? 的行不会被检查，它们的答案也不会显示。"
        ),
        "score": "得分：{correct} / {total}",
        "all_right": "全对：你已经能从代码看出一个张量是不是叶子张量了。",
        "all_right_so_far": "目前全对：已检查 {checked} / {questions} 个张量。",
        "misses": "有 {m} 个答案需要再看看，涉及下面 {k} 个张量，每个都附有原因和图。",
        "unchecked": "还有 ? 的行没有检查，它们的答案不会显示：{names}。",
        "raised": "有几行代码抛出了错误",
        "said": "{field}：你选了 {predicted}，实际是 <b>{actual}</b>",
        "said_sep": "；",
        "names_sep": "、",
    },
}


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
    lang : {"en", "zh"} or None, default None
        The language of the panel (``None``: :func:`leafkit.get_language`).

    Raises
    ------
    ValueError
        No questions, a repeated or invalid name, an unknown step or ``lang``.

    Notes
    -----
    Check looks only at the rows whose two predictions are both chosen: a row
    that still shows ``?`` is not scored and nothing about it is revealed
    (no mark, no reason, no drawing).  Changing an answer after Check clears
    the marks and the score (they were for the old answers) and asks for
    Check again.

    Attributes
    ----------
    answers : dict of str to (ipywidgets.Dropdown, ipywidgets.Dropdown)
        ``answers["f"] == (is_leaf dropdown, requires_grad dropdown)``; values
        ``"?"``, ``"True"``, ``"False"``; descriptions ``"f.is_leaf"`` and
        ``"f.requires_grad"``; control keys ``"answer:f:is_leaf"`` and
        ``"answer:f:requires_grad"``.
    check_button, reset_button : ipywidgets.Button
        ``"Check"`` and ``"Reset"``; keys ``"check"`` and ``"reset"``.
    codes : dict of str to str
        The line of code of each question (``f = torch.tensor([1.0], requires_grad=True).clone()``).
    checked : list of str
        After Check: the names of the rows that were checked (both predictions chosen).
    truth : dict of str to dict
        After Check, for the checked rows only: ``{"is_leaf", "requires_grad", "grad_fn", "device"}``
        that leafkit returned.
    score : tuple of (int, int) or None
        ``(correct, total)`` after Check (``total`` = 2 per checked row), ``None`` before.
    misses : list of dict
        After Check: ``{"name", "field", "predicted", "actual", "reason"}`` per wrong answer.
    miss_drawings : dict of str to DrawingPane
        After Check: the drawing of each tensor with a miss (``.svg``, ``.fallback``).
    marks : dict of str to ipywidgets.HTML
        The ✔ / ✖ in front of each row.
    grid : ipywidgets.GridBox
        A header row (``is_leaf``, ``requires_grad``), then per question the mark, the code and
        the two dropdowns, in aligned columns.
    feedback_view : ipywidgets.HTML
        The score, the reasons and the drawings (CSS class ``lk-quiz-feedback``).
    widget, code, rows, explanation, message
        See :class:`leafkit.widgets._view.Explorer`.
    """

    TEXT = TEXT
    #: Some right answers, two wrong ones (f, k) and two rows left as ? (i, j), then Check.
    TOUR = (
        ("answer:a:is_leaf", "True"),
        ("answer:a:requires_grad", "False"),
        ("answer:b:is_leaf", "True"),
        ("answer:b:requires_grad", "True"),
        ("answer:c:is_leaf", "True"),
        ("answer:c:requires_grad", "False"),
        ("answer:d:is_leaf", "True"),
        ("answer:d:requires_grad", "False"),
        ("answer:e:is_leaf", "True"),
        ("answer:e:requires_grad", "False"),
        ("answer:f:is_leaf", "True"),
        ("answer:f:requires_grad", "True"),
        ("answer:g:is_leaf", "True"),
        ("answer:g:requires_grad", "False"),
        ("answer:h:is_leaf", "False"),
        ("answer:h:requires_grad", "True"),
        ("answer:k:is_leaf", "False"),
        ("answer:k:requires_grad", "True"),
        ("check", None),
    )
    DEMO = "LeafQuiz()"
    css_class = "lk-leaf-quiz"
    show_device = True

    def __init__(self, questions=QUESTIONS, zoom=0.85, lang=None):
        questions = [(n, bool(rg), tuple(_step_list(steps))) for n, rg, steps in questions]
        if not questions:
            raise ValueError("LeafQuiz needs at least one question")
        names = [n for n, _, _ in questions]
        dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if dup is not None:
            raise ValueError(f"LeafQuiz question names must be different; {dup!r} appears twice")
        codes = {n: chain_code(rg, steps, "before", n) for n, rg, steps in questions}  # checks names and steps
        super().__init__(zoom=zoom, lang=lang)
        self.questions = questions
        self.codes = codes
        self.code = "\n".join(self.codes.values())
        self.truth: dict = {}
        self.checked: list = []
        self.score = None
        self.misses: list = []
        self.results = {}
        self.miss_drawings = {}
        self.answers = {}
        self._zoom = zoom
        header = W.HTML(caption_html(self._t("header"), margin="0"))
        mono_css = "font-family:var(--jp-code-font-family, monospace);font-size:12.5px"
        cells = [W.HTML(""), W.HTML("")] + [
            W.HTML(f'<div style="{mono_css};color:{MUTED};font-weight:600">{f}</div>') for f in FIELDS
        ]
        self.marks = {}
        for n, _, _ in self.questions:
            code = W.HTML(
                f'<code style="{mono_css};white-space:nowrap">{esc(self.codes[n])}</code>',
                layout=W.Layout(width="auto"),
            )
            code.add_class("lk-quiz-code")
            # the column headers say is_leaf / requires_grad; the descriptions stay for screen readers
            # and tests, with no width of their own
            leaf = W.Dropdown(
                options=_CHOICES,
                value=UNANSWERED,
                description=f"{n}.is_leaf",
                style={"description_width": "0px"},
                layout=W.Layout(width="76px"),
            )
            rg = W.Dropdown(
                options=_CHOICES,
                value=UNANSWERED,
                description=f"{n}.requires_grad",
                style={"description_width": "0px"},
                layout=W.Layout(width="76px"),
            )
            for d in (leaf, rg):
                d.add_class("lk-quiz-answer")
            mark = W.HTML("", layout=W.Layout(width="22px"))
            mark.add_class("lk-quiz-mark")
            self.answers[n] = (leaf, rg)
            self.marks[n] = mark
            for d in (leaf, rg):
                d.observe(self._guard(self._on_answer), names="value")
            cells += [mark, code, leaf, rg]
        # one grid for all rows, the mark first: every row's dropdowns line up whatever the length of
        # its line (a row of its own per question did not: long lines such as i..k pushed their
        # dropdowns right and their marks out of a 1280 px wide JupyterLab)
        self.grid = W.GridBox(
            cells,
            layout=W.Layout(
                grid_template_columns="22px max-content 76px 112px",
                grid_gap="2px 10px",
                align_items="center",
                justify_items="flex-start",
                max_width="100%",
                overflow="auto",
                padding="2px 0",
            ),
        )
        self.grid.add_class("lk-quiz-grid")
        self.check_button = W.Button(
            description=self._t("check"),
            button_style="primary",
            icon="check",
            layout=W.Layout(width="auto", margin="6px 10px 0 0"),
        )
        self.reset_button = W.Button(
            description=self._t("reset"), icon="refresh", layout=W.Layout(width="auto", margin="6px 0 0 0")
        )
        self.check_button.on_click(self._guard(lambda b: self.check()))
        self.reset_button.on_click(self._guard(lambda b: self.reset()))
        self.feedback_view = W.HTML()
        self.feedback_view.add_class("lk-quiz-feedback")
        self.drawing_view.layout.display = "none"
        self.widget.children = [
            self.header_view,
            W.VBox([header, self.grid]),
            W.HBox([self.check_button, self.reset_button]),
            self.message_view,
            self.feedback_view,
        ]
        self.widget.layout = W.Layout(
            width="100%", max_width="1280px", padding="10px 14px", border="1px solid #d0d7de", margin="4px 0"
        )
        self._classes()
        self.refresh()

    def _controls(self) -> list:
        out = []
        for n, (a, b) in self.answers.items():
            out += [Control(f"answer:{n}:is_leaf", a, "dropdown"), Control(f"answer:{n}:requires_grad", b, "dropdown")]
        return out + [Control("check", self.check_button, "button"), Control("reset", self.reset_button, "button")]

    def _update(self) -> None:
        self._set_message(None)

    def _on_answer(self, change=None) -> None:
        """An answer changed after Check: the marks and the score no longer match, so clear them."""
        if self.score is None:
            return
        self._clear_results()
        self.feedback_view.value = message_html("info", self._t("changed_title"), self._t("changed_text"))

    def _clear_results(self) -> None:
        for m in self.marks.values():
            m.value = ""
        self.truth, self.misses, self.results, self.rows, self.miss_drawings = {}, [], {}, [], {}
        self.checked = []
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
        """Run the answered rows' lines in leafkit, score them, explain and draw each miss.

        Rows with a ``?`` left are neither run nor revealed.
        """
        self._clear_results()
        preds = self.predictions()
        names = [n for n, _, _ in self.questions]
        self.checked = [n for n in names if UNANSWERED not in preds[n].values()]
        unchecked = [n for n in names if n not in self.checked]
        correct = total = 0
        cards, errors = [], []
        for n, rg, steps in self.questions:
            if n not in self.checked:
                continue
            res = run_chain(rg, steps, "before", n)
            self.results[n] = res
            if res.error is not None:
                errors.append(f"{self.codes[n]}\n{res.error}")
                continue
            final = res.rows[-1]
            self.truth[n] = {k: final[k] for k in ("is_leaf", "requires_grad", "grad_fn", "device")}
            wrong = []
            for field in FIELDS:
                total += 1
                actual = str(final[field])
                if preds[n][field] == actual:
                    correct += 1
                else:
                    wrong.append((field, preds[n][field], actual))
            if not wrong:
                self.marks[n].value = f'<span style="color:{GREEN};font-weight:700;font-size:15px">\u2714</span>'
                continue
            self.marks[n].value = f'<span style="color:{RED};font-weight:700;font-size:15px">\u2716</span>'
            sentence, notes = explain_chain(res, one_line=True, lang=self.lang)
            for field, p, a in wrong:
                self.misses.append(
                    {"name": n, "field": field, "predicted": p, "actual": a == "True", "reason": sentence}
                )
            pane = DrawingPane(zoom=self._zoom, legend=False, min_height="0", lang=self.lang)
            pane.show(draw({n: res.tensors[n]}, lang=self.lang))
            self.miss_drawings[n] = pane
            said = self._t("said_sep").join(
                self._t("said", field=f"{n}.{f}", predicted=esc(p), actual=esc(a)) for f, p, a in wrong
            )
            fn, device = final["grad_fn"], device_text(final["device"], self.lang)
            cards.append(
                f'<div class="lk-miss" style="display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start;'
                f'border:1px solid #f1c8c8;border-radius:6px;padding:8px 10px;margin:8px 0;background:#fffafa">'
                f'<div style="flex:1 1 420px;min-width:300px;font-family:{FONT};font-size:13.5px;line-height:1.5">'
                f"<div>{mono(self.codes[n])}</div>"
                f'<div style="margin:3px 0;color:#b71c1c">\u2716 {said}</div>'
                f'<div style="font-size:12.5px;color:{MUTED}">grad_fn={esc(fn)}, device={esc(device)}</div>'
                f'<div style="margin-top:4px">{rich(sentence)}</div>'
                + "".join(f'<div style="font-size:12.5px;color:{MUTED}">{rich(x)}</div>' for x in notes)
                + f'</div><div style="flex:0 1 auto;max-width:100%">{pane.view.value}</div></div>'
            )
        self.score = (correct, total)
        self.rows = [
            {
                "variable": n,
                "code": self.codes[n],
                **self.truth[n],
                "predicted": preds[n],
                "correct": not any(m["name"] == n for m in self.misses),
            }
            for n in self.checked
            if n in self.truth
        ]
        if not self.checked:
            self.explanation = self._t("nothing_text")
            self.feedback_view.value = message_html("info", self._t("nothing_title"), self.explanation)
            return
        wrong_rows = len(cards)
        if correct == total:
            text = (
                self._t("all_right")
                if not unchecked
                else self._t("all_right_so_far", checked=len(self.checked), questions=len(names))
            )
        else:
            m = len(self.misses)
            text = self._t("misses", m=m, s="s" if m != 1 else "", k=wrong_rows, ks="s" if wrong_rows != 1 else "")
        if unchecked and (correct != total):
            text += self._t("unchecked", names=self._t("names_sep").join(unchecked))
        kind = "ok" if correct == total else ("warning" if correct >= total * 0.6 else "error")
        summary = message_html(kind, self._t("score", correct=correct, total=total), text)
        if errors:
            summary += message_html("error", self._t("raised"), "\n\n".join(errors), mono=True)
        self.explanation = text
        self.feedback_view.value = f'<div class="lk-quiz-score">{summary}</div>' + "".join(cards)

    def reset(self) -> None:
        """Clear every prediction and the feedback."""
        for a, b in self.answers.values():
            a.value = UNANSWERED
            b.value = UNANSWERED
        self._clear_results()
        self._set_message(None)

    def oracle(self, torch) -> None:
        """The checked rows are PyTorch's, and nothing is revealed about a row the learner left unanswered
        (see :meth:`Explorer.oracle`)."""
        expect([r["variable"] for r in self.rows] == list(self.checked), (self.rows, self.checked))
        for r in self.rows:
            ns, _, err = run_torch([as_torch(self.codes[r["variable"]])], torch)
            expect(err is None, (r, err))
            t = ns[r["variable"]]
            shown = (r["is_leaf"], r["requires_grad"], r["grad_fn"])
            expect(shown == (bool(t.is_leaf), bool(t.requires_grad), fn_name(t)), r)
        for n, p in self.predictions().items():
            if n not in self.checked:
                expect(self.marks[n].value == "" and self.codes[n] not in self.feedback_view.value, n)
            if self.score is not None:
                expect((n in self.checked) == (UNANSWERED not in p.values()), (n, p))
