"""LeafQuiz: seed 001's a..k lines, scored against leafkit (and PyTorch); misses explained and drawn."""
from __future__ import annotations

import pytest

from leafkit.widgets import LeafQuiz
from leafkit.widgets.quiz import QUESTIONS, UNANSWERED
from widget_checks import as_torch, execute, leaf_facts, grad_mode_restored, no_dot, real_torch  # noqa: F401 (fixtures)

# seed001_clone_detach_cuda.json (PyTorch's observed values)
SEED_001 = {"a": (True, False), "b": (True, True), "c": (True, False), "d": (True, False), "e": (True, False),
            "f": (False, True), "g": (True, False), "h": (False, True), "i": (True, False), "j": (True, False),
            "k": (True, False)}
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


def test_lines_are_the_seed_lines():
    q = LeafQuiz()
    assert q.codes == SEED_LINES
    assert [n for n, _, _ in QUESTIONS] == list("abcdefghijk")
    for n, line in SEED_LINES.items():
        assert line in q.widget.children[1].children[1 + "abcdefghijk".index(n)].children[0].value


def test_truth_is_what_leafkit_returns(no_dot):
    q = LeafQuiz()
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


def test_unanswered_count_as_misses_and_reset_clears():
    q = LeafQuiz()
    q.answer("a", True, False)
    q.answer("f", is_leaf=False, requires_grad=True)
    q.check_button.click()
    assert q.score == (4, 22)
    assert "(18 left as ?)" in q.feedback_view.value
    assert q.marks["a"].value and "\u2714" in q.marks["a"].value and "\u2716" in q.marks["b"].value
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
    q.check()
    assert all(p.svg is None and p.fallback for p in q.miss_drawings.values())
    assert "lk-text-drawing" in q.feedback_view.value and "<svg" not in q.feedback_view.value
    assert "Graphviz" in q.feedback_view.value


def test_changing_an_answer_after_check_clears_the_stale_marks_and_score(no_dot):
    q = LeafQuiz()
    _answer_all(q, SEED_001)
    q.check_button.click()
    assert q.score == (22, 22) and all("\u2714" in m.value for m in q.marks.values())
    q.answers["f"][0].value = "True"          # now wrong: the old ✔ and 22/22 must not stay
    assert q.score is None and q.misses == [] and q.rows == []
    assert all(m.value == "" for m in q.marks.values())
    assert "Score" not in q.feedback_view.value and "All right" not in q.feedback_view.value
    assert "Press Check to score your answers again." in q.feedback_view.value
    q.check_button.click()
    assert q.score == (21, 22) and "\u2716" in q.marks["f"].value
    q.answer("f", is_leaf=False)                # the helper used by the lessons clears too
    assert q.score is None and q.marks["f"].value == ""
    assert q.internal_errors == []


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
    q = LeafQuiz(questions=[("x", True, "clone()")])   # one string is one step
    assert q.codes == {"x": "x = torch.tensor([1.0], requires_grad=True).clone()"}
