"""LeafQuiz: seed 001's a..k lines, scored against leafkit (and PyTorch); misses explained and drawn;
only answered rows are checked and revealed."""

from __future__ import annotations

import pytest
from widget_checks import as_torch, execute, leaf_facts

from leafkit.widgets import LeafQuiz
from leafkit.widgets.quiz import QUESTIONS, UNANSWERED

# seed001_clone_detach_cuda.json (PyTorch's observed values)
SEED_001 = {
    "a": (True, False),
    "b": (True, True),
    "c": (True, False),
    "d": (True, False),
    "e": (True, False),
    "f": (False, True),
    "g": (True, False),
    "h": (False, True),
    "i": (True, False),
    "j": (True, False),
    "k": (True, False),
}
SEED_LINES = {
    "a": "a = torch.tensor([1.0], requires_grad=False)",
    "b": "b = torch.tensor([1.0], requires_grad=True)",
    "c": "c = torch.tensor([1.0], requires_grad=False).clone()",
    "d": "d = torch.tensor([1.0], requires_grad=False).detach()",
    "e": "e = torch.tensor([1.0], requires_grad=False).cuda()",
    "f": "f = torch.tensor([1.0], requires_grad=True).clone()",
    "g": "g = torch.tensor([1.0], requires_grad=True).detach()",
    "h": "h = torch.tensor([1.0], requires_grad=True).cuda()",
    "i": "i = torch.tensor([1.0], requires_grad=True).clone().detach()",
    "j": "j = torch.tensor([1.0], requires_grad=True).detach().clone()",
    "k": "k = torch.tensor([1.0], requires_grad=True).cuda().detach()",
}


def _answer_all(q, table):
    for n, (leaf, rg) in table.items():
        q.answers[n][0].value = str(leaf)
        q.answers[n][1].value = str(rg)


ALL_FALSE = {n: (False, False) for n in SEED_001}


def test_lines_are_the_seed_lines():
    q = LeafQuiz()
    assert q.codes == SEED_LINES
    assert [n for n, _, _ in QUESTIONS] == list("abcdefghijk")
    for n, line in SEED_LINES.items():
        i = 4 * (1 + "abcdefghijk".index(n))  # after the header row
        mark, code, leaf, rg = q.grid.children[i : i + 4]
        assert line in code.value
        assert leaf is q.answers[n][0] and rg is q.answers[n][1] and mark is q.marks[n]


def test_rows_share_one_grid_so_they_line_up():
    """Every row's cells sit in the same four grid columns (mark first, the code column as wide as
    the longest line), so long lines (i..k) cannot push their dropdowns out of line or their marks
    out of view; the header row names the two columns."""
    q = LeafQuiz()
    assert q.grid.layout.grid_template_columns.split()[:2] == ["22px", "max-content"]
    assert len(q.grid.children) == 4 * (1 + len(SEED_LINES))
    assert "is_leaf" in q.grid.children[2].value and "requires_grad" in q.grid.children[3].value
    assert all(m.layout.width == "22px" for m in q.marks.values())


def test_truth_is_what_leafkit_returns(no_dot):
    q = LeafQuiz()
    _answer_all(q, ALL_FALSE)
    q.check_button.click()
    ns = execute(list(SEED_LINES.values()))
    for n in SEED_LINES:
        assert (q.truth[n]["is_leaf"], q.truth[n]["requires_grad"]) == SEED_001[n]
        assert (q.truth[n]["is_leaf"], q.truth[n]["requires_grad"], q.truth[n]["grad_fn"]) == leaf_facts(ns[n])
    assert q.truth["f"]["grad_fn"] == "CloneBackward0" and q.truth["h"]["grad_fn"] == "ToCopyBackward0"
    assert q.truth["h"]["device"].startswith("cuda")


@pytest.mark.parity
def test_truth_agrees_with_pytorch(real_torch, no_dot):
    q = LeafQuiz()
    _answer_all(q, ALL_FALSE)
    q.check()
    ns = execute(as_torch("\n".join(SEED_LINES.values())), real_torch)
    for n in SEED_LINES:
        assert (q.truth[n]["is_leaf"], q.truth[n]["requires_grad"], q.truth[n]["grad_fn"]) == leaf_facts(ns[n])


def test_all_right():
    q = LeafQuiz()
    _answer_all(q, SEED_001)
    q.check_button.click()
    assert q.score == (22, 22) and q.misses == []
    assert "Score: 22 / 22" in q.feedback_view.value and "lk-msg-ok" in q.feedback_view.value
    assert q.feedback_view.value.count("lk-miss") == 0
    assert all(m.value.count("\u2714") == 1 for m in q.marks.values())
    assert all(r["correct"] for r in q.rows)


def test_every_miss_gets_a_reason_and_a_drawing():
    q = LeafQuiz()
    wrong = {n: (not leaf, rg) for n, (leaf, rg) in SEED_001.items()}  # every is_leaf wrong
    _answer_all(q, wrong)
    q.check_button.click()
    assert q.score == (11, 22)
    assert [m["name"] for m in q.misses] == list("abcdefghijk")
    assert all(m["field"] == "is_leaf" for m in q.misses)
    assert q.feedback_view.value.count('class="lk-miss"') == 11
    for m in q.misses:
        assert m["reason"]
        assert m["name"] in q.miss_drawings and "<svg" in q.miss_drawings[m["name"]].svg
    by = {m["name"]: m["reason"] for m in q.misses}
    assert "CloneBackward0" in by["f"] and "ToCopyBackward0" in by["h"]
    assert ".detach()" in by["k"] and "requires_grad=False" in by["a"]
    assert q.feedback_view.value.count("<svg") == 11
    assert q.internal_errors == []


def test_check_with_nothing_answered_reveals_nothing():
    """All answers still "?": no score of 0/22, no marks, no reasons, no drawings, no answer key."""
    q = LeafQuiz()
    q.check_button.click()
    assert q.score == (0, 0) and q.checked == [] and q.truth == {} and q.misses == [] and q.rows == []
    assert all(m.value == "" for m in q.marks.values())
    fb = q.feedback_view.value
    assert "Nothing to check yet" in fb and "lk-msg-info" in fb and "Score" not in fb
    assert "lk-miss" not in fb and "<svg" not in fb and "grad_fn" not in fb
    for line in SEED_LINES.values():
        assert line not in fb
    assert q.internal_errors == []


def test_only_answered_rows_are_checked_and_reset_clears():
    q = LeafQuiz()
    q.answer("a", True, False)  # right
    q.answer("f", is_leaf=True, requires_grad=True)  # is_leaf wrong
    q.answer("h", is_leaf=False)  # half answered: not checked
    q.check_button.click()
    assert q.checked == ["a", "f"] and set(q.truth) == {"a", "f"}
    assert q.score == (3, 4)
    assert [(m["name"], m["field"]) for m in q.misses] == [("f", "is_leaf")]
    assert "\u2714" in q.marks["a"].value and "\u2716" in q.marks["f"].value
    assert all(q.marks[n].value == "" for n in SEED_LINES if n not in ("a", "f"))
    fb = q.feedback_view.value
    assert fb.count('class="lk-miss"') == 1 and SEED_LINES["f"] in fb
    assert SEED_LINES["h"] not in fb and "ToCopyBackward0" not in fb  # h's answer stays hidden
    assert "Not checked" in fb and "b, c, d, e, g, h, i, j, k" in fb
    assert [r["variable"] for r in q.rows] == ["a", "f"]
    q.reset_button.click()
    assert q.score is None and q.misses == [] and q.feedback_view.value == ""
    assert all(a.value == UNANSWERED and b.value == UNANSWERED for a, b in q.answers.values())
    assert all(m.value == "" for m in q.marks.values())


def test_text_fallback_for_the_miss_drawings(monkeypatch):
    from leafkit.viz import clear_svg_cache
    from leafkit.widgets._view import clear_caches

    monkeypatch.setenv("PATH", "/nonexistent")
    clear_svg_cache()
    clear_caches()
    q = LeafQuiz()
    _answer_all(q, ALL_FALSE)
    q.check()
    assert q.miss_drawings and all(p.svg is None and p.fallback for p in q.miss_drawings.values())
    assert "lk-text-drawing" in q.feedback_view.value and "<svg" not in q.feedback_view.value
    assert "Graphviz" in q.feedback_view.value


def test_changing_an_answer_after_check_clears_the_stale_marks_and_score(no_dot):
    q = LeafQuiz()
    _answer_all(q, SEED_001)
    q.check_button.click()
    assert q.score == (22, 22) and all("\u2714" in m.value for m in q.marks.values())
    q.answers["f"][0].value = "True"  # now wrong: the old ✔ and 22/22 must not stay
    assert q.score is None and q.misses == [] and q.rows == []
    assert all(m.value == "" for m in q.marks.values())
    assert "Score" not in q.feedback_view.value and "All right" not in q.feedback_view.value
    assert "Press Check to score your answers again." in q.feedback_view.value
    q.check_button.click()
    assert q.score == (21, 22) and "\u2716" in q.marks["f"].value
    q.answer("f", is_leaf=False)  # the helper used by the lessons clears too
    assert q.score is None and q.marks["f"].value == ""
    assert q.internal_errors == []


def test_all_right_so_far_when_some_rows_are_left():
    q = LeafQuiz()
    q.answer("b", True, True)
    q.check()
    assert q.score == (2, 2)
    assert "All right so far: 1 of 11 tensors checked." in q.feedback_view.value
    assert "lk-msg-ok" in q.feedback_view.value


def test_answers_before_check_change_nothing_else():
    q = LeafQuiz()
    q.answer("a", True, False)
    assert q.score is None and q.feedback_view.value == ""


def test_an_empty_question_list_is_refused():
    with pytest.raises(ValueError, match="LeafQuiz needs at least one question"):
        LeafQuiz(questions=[])


def test_bad_questions_are_refused():
    with pytest.raises(ValueError, match="'a' appears twice"):
        LeafQuiz(questions=[("a", True, ()), ("a", False, ())])
    with pytest.raises(ValueError, match="name must be a Python variable name"):
        LeafQuiz(questions=[("a b", True, ())])
    q = LeafQuiz(questions=[("x", True, "clone()")])  # one string is one step
    assert q.codes == {"x": "x = torch.tensor([1.0], requires_grad=True).clone()"}
