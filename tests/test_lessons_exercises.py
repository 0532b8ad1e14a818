"""The lessons' exercise checks really judge the learner's answer.

Each exercise in a lesson source is an answer cell (tag ``exercise``), the solution
right after it (a Markdown cell tagged ``solution``, the code between nbgrader's
``### BEGIN SOLUTION`` and ``### END SOLUTION``) and a check cell (tag ``check``).
Every lesson (both languages) runs in-process, code cell after code cell, four
times: unanswered, with each answer cell replaced by its solution, by a wrong answer
(``WRONG`` below), and by an answer of the wrong type.  The check cells must start
their verdict with the lesson language's *Not yet*, *Right!* and *Not quite.*
(``lessons/manifest.toml``), and no cell may raise.
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings

import pytest
from lesson_sources import build_lessons, lesson_id, lessons, read_source, source_path, tags, verdicts

#: Per lesson, per exercise (numbered from 1): (a wrong answer, an answer of the wrong type).
#: Each replaces the whole answer cell.  The right answers are the lessons' solution cells.
WRONG = {
    "00_start_here": {
        1: ("answer_1 = False", "answer_1 = 'True'"),
        2: ("answer_2 = [1.0, 1.0]", "answer_2 = '33'"),
    },
    "01_leaf_tensors": {
        1: ("answer_1 = True", "answer_1 = 0"),
        2: ("answer_2 = 3", "answer_2 = '6'"),
        3: (
            "x3 = torch.tensor(3.0, requires_grad=True)\ny3 = x3 ** 3\nz3 = 2 * y3\nz3.backward()\ny3.retain_grad()",
            "x3 = torch.tensor(3.0, requires_grad=True)\ny3 = x3 ** 3\nz3 = 2 * y3\nz3.backward()\ny3 = 'retain_grad'",
        ),
    },
    "02_clone_detach_cuda": {
        1: ("answer_1 = False", "answer_1 = 1"),
        2: ('answer_2 = {"p", "q", "r"}', "answer_2 = 'prt'"),
        3: (
            "start = torch.tensor([0.5, -0.5])\nweight = start.clone().requires_grad_().cuda()",
            "start = torch.tensor([0.5, -0.5])\nweight = 'cuda'",
        ),
    },
    "03_detach_and_grad_modes": {
        1: ("answer_1 = (True, True, False)", "answer_1 = 'True, False, False'"),
        2: ("answer_2 = (2.0, 6.0)", "answer_2 = ('2', '12')"),
        3: (
            "x = torch.tensor([5.0, 6.0], requires_grad=True)\ny = x.detach().clone()",
            "x = torch.tensor([5.0, 6.0], requires_grad=True)\ny = 5.0",
        ),
    },
    "04_leaves_in_training": {
        1: ('answer_1 = {"p", "q", "r", "s"}', 'answer_1 = ["p", "r", "s"]'),
        2: (
            "w = torch.tensor([3.0], requires_grad=True)\nlr = 0.25\n(w ** 2).sum().backward()\nw = w - lr * w.grad",
            "w = torch.tensor([3.0], requires_grad=True)\nlr = 0.25\n(w ** 2).sum().backward()\nw = 1.5",
        ),
        3: ("weight = torch.randn(2, 2, requires_grad=True).cuda()", "weight = [[0.0, 0.0], [0.0, 0.0]]"),
    },
    "05_gradients_add_up": {
        1: ("answer_1 = 6.0", "answer_1 = '8'"),
        2: ("answer_2 = 3", "answer_2 = [4]"),
        3: ("answer_3 = [0.0, 0.0, 1.0]", "answer_3 = '010'"),
    },
    "06_gradients_of_gradients": {
        1: ("answer_1 = 32.0", "answer_1 = '48'"),
        2: ("answer_2 = (True, False, True)", "answer_2 = 'False, True, True'"),
        3: (
            "critic = torch.nn.Linear(2, 1)\npoints = torch.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)\n"
            "(grad_points,) = torch.autograd.grad(critic(points).sum(), points)",
            "grad_points = [[1.0, 2.0], [1.0, 2.0]]",
        ),
    },
    "07_modes_and_frozen_weights": {
        1: ("answer_1 = (False, False, False)", "answer_1 = 'True, False, False'"),
        2: ("answer_2 = 3", "answer_2 = '1'"),
        3: ('answer_3 = {"p", "q", "s"}', "answer_3 = 'ps'"),
    },
    "08_detach_in_practice": {
        1: ("answer_1 = (True, True)", "answer_1 = 'False, True'"),
        2: ("answer_2 = 5", "answer_2 = '15'"),
        3: (
            "image = torch.tensor([1.0, 2.0, 3.0, 4.0])\nx = image.requires_grad_()",
            "image = torch.tensor([1.0, 2.0, 3.0, 4.0])\nx = [1.0, 2.0, 3.0, 4.0]",
        ),
    },
    "09_inplace_in_training": {
        1: ('answer_1 = {"q", "t"}', "answer_1 = 'qrt'"),
        2: (
            "def block(x, w):\n    h = (x @ w).tanh()\n    h = h + 2\n    return h.sum()",
            "block = 2.0",
        ),
        3: ("answer_3 = 6.0", "answer_3 = '4'"),
    },
}

LESSONS = lessons()


def exercises(nb) -> list:
    """Per exercise: (answer cell, solution code, check cell), in order."""
    cells = nb.cells
    out = []
    for i, cell in enumerate(cells):
        if "exercise" in tags(cell):
            sol = cells[i + 1] if i + 1 < len(cells) and "solution" in tags(cells[i + 1]) else None
            check = next((c for c in cells[i + 1 :] if "check" in tags(c)), None)
            out.append((cell, build_lessons.solution_code(sol) if sol else None, check))
    return out


def run_lesson(lang: str, entry, replace: dict) -> dict:
    """Exec every code cell of the lesson source; return {exercise number: its check cell's stdout}.

    ``replace`` maps an exercise number to the code that replaces its answer cell.
    An exception in any cell fails the test (a learner would see a traceback).  The package
    language a Chinese lesson sets in its first cell (``leafkit.set_language("zh")``) is put back
    afterwards, so that later tests in this process see the default.
    """
    import leafkit

    try:  # no window: plots go nowhere (never via MPLBACKEND, which nbval's kernels would inherit)
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        pass
    nb = read_source(lang, entry)
    ns: dict = {"__name__": "__lesson__"}
    outs, exercise = {}, 0
    cwd = os.getcwd()
    language = leafkit.get_language()
    os.chdir(source_path(lang, entry).parent)
    try:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            src = cell.source
            if "exercise" in tags(cell):
                exercise += 1
                src = replace.get(exercise, src)
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf), warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() on Agg
                    exec(compile(src, f"<{entry.stem} {cell.metadata.get('label')}>", "exec"), ns)
            except Exception as exc:
                pytest.fail(
                    f"{lang}/{entry.stem}, cell {cell.metadata.get('label')!r} raised "
                    f"{type(exc).__name__}: {exc}\n{src}"
                )
            if "check" in tags(cell):
                outs[exercise] = buf.getvalue()
    finally:
        os.chdir(cwd)
        leafkit.set_language(language)
    return outs


@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_each_exercise_has_answer_solution_and_check(item):
    lang, entry = item
    nb = read_source(lang, entry)
    kinds = "".join(
        "e" if "exercise" in tags(c) else "s" if "solution" in tags(c) else "c" if "check" in tags(c) else ""
        for c in nb.cells
    )
    n = len(WRONG[entry.stem])
    assert kinds == "esc" * n, f"{source_path(lang, entry)}: answer/solution/check cells out of order: {kinds}"
    assert 2 <= n <= 3
    for answer, solution, _check in exercises(nb):
        assert solution and solution.strip() != answer.source.strip(), answer.metadata.get("label")


def test_every_lesson_has_wrong_answers():
    assert sorted(WRONG) == sorted(e.stem for _, e in lessons("en"))


@pytest.mark.slow
@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_checks_judge_answers(item):
    lang, entry = item
    say = verdicts(lang)
    nb = read_source(lang, entry)
    solutions = {i: sol for i, (_, sol, _) in enumerate(exercises(nb), start=1)}
    wrong = WRONG[entry.stem]
    runs = {
        "unanswered": (run_lesson(lang, entry, {}), say["not_yet"]),
        "solution": (run_lesson(lang, entry, solutions), say["right"]),
        "wrong answer": (run_lesson(lang, entry, {i: w for i, (w, _) in wrong.items()}), say["wrong"]),
        "wrong type": (run_lesson(lang, entry, {i: t for i, (_, t) in wrong.items()}), say["wrong"]),
    }
    for kind, (outs, verdict) in runs.items():
        assert sorted(outs) == sorted(wrong), (kind, outs)
        for i, out in outs.items():
            assert out.startswith(verdict), f"{lang}/{entry.stem}, exercise {i}, {kind}: {out!r}"


#: Lesson 3, exercise 3 (a new tensor sharing x's memory, x still requiring grad): more answers and
#: how the check must start its verdict (English lesson).
DETACH_ANSWERS = [
    ("y = x.detach()", "Right!"),
    ("y = x.detach()[1:]", "Right!"),  # shares memory, only part of x (the check says so)
    ("y = x.detach().clone()", "Not quite."),  # its own memory
    ("y = x.requires_grad_(False)", "Not quite."),  # y is x, and x no longer requires grad
    ("y = x.detach_()", "Not quite."),
    ("y = x", "Not quite."),
    ("y = x * 1", "Not quite. y still requires grad: it was computed from x by a recorded operation (MulBackward0)"),
    ("with torch.no_grad():\n    y = x[:]", "Not quite. y still requires grad, although nothing was recorded"),
    ("y = x.data", "Almost."),  # shares memory, but not the version counter
]


@pytest.mark.slow
@pytest.mark.parametrize("answer,verdict", DETACH_ANSWERS)
def test_detach_exercise_judges_each_case(answer, verdict):
    entry = next(e for _, e in lessons("en") if e.stem == "03_detach_and_grad_modes")
    out = run_lesson("en", entry, {3: "x = torch.tensor([5.0, 6.0], requires_grad=True)\n" + answer})
    assert out[3].startswith(verdict), (answer, out[3])


#: Lesson 6, exercise 3 (the input gradient of a critic, recorded so that a penalty can train it):
#: more answers and how the check must start its verdict (English lesson).
CRITIC = (
    "critic = torch.nn.Linear(2, 1)\nwith torch.no_grad():\n    critic.weight.copy_(torch.tensor([[1.0, 2.0]]))\n"
    "    critic.bias.zero_()\npoints = torch.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)\n"
)
GRAD_POINTS_ANSWERS = [
    ("(grad_points,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)", "Right!"),
    ("grad_points = torch.autograd.grad(critic(points).sum(), points, create_graph=True)[0]", "Right!"),
    # backward(create_graph=True) works too; the check adds the advice to break the reference cycle
    ("critic(points).sum().backward(create_graph=True)\ngrad_points = points.grad", "Right! (You used backward"),
    (
        "grad_points = torch.autograd.grad(critic(points).sum(), points, create_graph=True)",
        "Not quite. grad_points is a tuple",
    ),
    ("(grad_points,) = torch.autograd.grad(critic(points).sum(), points)", "Not quite. The values are right, but"),
    (
        "(grad_points,) = torch.autograd.grad(critic(points).mean(), points, create_graph=True)",
        "Not quite. For a linear",
    ),
    ("grad_points = critic.weight", "Not quite. For a linear"),
]


@pytest.mark.slow
@pytest.mark.parametrize("answer,verdict", GRAD_POINTS_ANSWERS)
def test_grad_points_exercise_judges_each_case(answer, verdict):
    entry = next(e for _, e in lessons("en") if e.stem == "06_gradients_of_gradients")
    out = run_lesson("en", entry, {3: CRITIC + answer})
    assert out[3].startswith(verdict), (answer, out[3])


#: Lesson 8, exercise 3 (a leaf made from image that requires grad, image unchanged): more answers and
#: how the check must start its verdict (English lesson).  A leaf of other values used to pass: the
#: check compared x.grad (the weight row, whatever x holds) instead of x.
IMAGE_ANSWERS = [
    ("x = image.clone().requires_grad_()", "Right!"),
    ("x = image.detach().clone()\nx.requires_grad = True", "Right!"),
    ("x = (image * 1).requires_grad_()", "Right!"),
    ("x = image.requires_grad_()", "Not quite. image itself requires grad now"),
    ("x = image.clone()", "Not quite. x does not require grad"),
    ("x = image.clone().requires_grad_() * 2", "Not quite. x was made by a recorded operation (MulBackward0)"),
    ("x = torch.zeros(4, requires_grad=True)", "Not quite. x holds [0.0, 0.0, 0.0, 0.0]"),
    ("x = image.clone().reshape(2, 2).requires_grad_()", "Not quite. x holds [[1.0, 2.0], [3.0, 4.0]]"),
]


@pytest.mark.parametrize("answer,verdict", IMAGE_ANSWERS)
def test_saliency_exercise_judges_each_case(answer, verdict):
    """Only the check helper, the answer and the check run (the lesson trains two GANs before them)."""
    entry = next(e for _, e in lessons("en") if e.stem == "08_detach_in_practice")
    cells = {c.metadata.get("label"): c.source for c in read_source("en", entry).cells if c.cell_type == "code"}
    ns: dict = {"__name__": "__lesson__"}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(cells["import"], ns)
        exec(cells["check-helper"], ns)
        exec("image = torch.tensor([1.0, 2.0, 3.0, 4.0])\n" + answer, ns)
        exec(cells["check-3"], ns)
    assert buf.getvalue().startswith(verdict), (answer, buf.getvalue())


# ---------------------------------------------------------------- the check helper ----
def helper_namespace(lang: str = "en") -> dict:
    """The namespace after running lesson 0's ``check-helper`` cell."""
    entry = next(e for _, e in lessons(lang) if e.number == 0)
    cell = next(c for c in read_source(lang, entry).cells if c.metadata.get("label") == "check-helper")
    ns: dict = {}
    exec(cell.source, ns)
    return ns


def verdict(ns, answer, truth) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ns["check"](answer, truth, right="R", hint="H")
    return buf.getvalue().strip()


@pytest.mark.parametrize(
    "answer,truth,expected",
    [
        # the answers learners gave that used to pass or got a concept hint
        ("33", [3.0, 3.0], "Not quite. Answer with a list or tuple, not a string ('33' in quotes is text)."),
        (1, True, "Not quite. Answer with True or False, not a number."),
        ("prt", {"p", "r", "t"}, "Not quite. Answer with a set, not a string ('prt' in quotes is text)."),
        ("True", True, "Not quite. Answer with True or False, not a string ('True' in quotes is text)."),
        # more wrong kinds
        (True, 6.0, "Not quite. Answer with a number, not True or False."),
        ("6", 6.0, "Not quite. Answer with a number, not a string ('6' in quotes is text)."),
        (["p", "r"], {"p", "r"}, "Not quite. Answer with a set, not a list or tuple."),
        ({"p", 1}, {"p", "q"}, "Not quite. Put letters in quotes in the set, for example {'p', 'q'}."),
        ([3.0], [3.0, 3.0], "Not quite. Answer with 2 values, not 1."),
        (
            (True, "False", False),
            (True, False, False),
            "Not quite. Answer with True or False, not a string ('False' in quotes is text).",
        ),
        ((2, True), (2.0, 12.0), "Not quite. Answer with a number, not True or False."),
        # the right kind: judged on the value
        ([3, 3], [3.0, 3.0], "Right! R"),
        ((3.0, 3.0000001), [3.0, 3.0], "Right! R"),
        (6, 6.0, "Right! R"),
        ({"r", "p"}, {"p", "r"}, "Right! R"),
        (False, False, "Right! R"),
        (True, False, "Not quite. H"),
        ([1.0, 1.0], [3.0, 3.0], "Not quite. H"),
        (None, True, "Not yet: replace None with your answer, then run this cell again."),
    ],
)
def test_check_helper_names_the_wrong_kind(answer, truth, expected):
    assert verdict(helper_namespace(), answer, truth) == expected


@pytest.mark.parametrize("lang", sorted({lang for lang, _ in LESSONS}))
def test_every_lesson_has_the_same_check_helper(lang):
    """One helper per language: every lesson's ``check-helper`` cell is the same code."""
    helpers = {}
    for _, entry in lessons(lang):
        cells = [c for c in read_source(lang, entry).cells if c.metadata.get("label") == "check-helper"]
        assert len(cells) == 1, f"{source_path(lang, entry)}: {len(cells)} cells labelled check-helper"
        helpers[entry.stem] = cells[0].source
    assert len(set(helpers.values())) == 1, f"{lang}: the check-helper cells differ: {sorted(helpers)}"
