"""The lessons' exercise checks really evaluate the learner's answer.

Each exercise is an answer cell (tag ``exercise``) followed by a check cell
(tag ``check``).  The stored notebooks keep the unanswered default, whose
check prints "Not yet" (nbval verifies that).  Here every lesson runs
in-process with each answer cell replaced, once by a right answer and once by
a wrong one, and the check cell must print "Right!" and "Not quite." in turn.
"""
from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"

#: Per lesson, per exercise: (a right answer cell, a wrong answer cell).
ANSWERS = {
    "00_start_here.ipynb": [
        ("answer_1 = True", "answer_1 = False"),
        ("answer_2 = [3.0, 3.0]", "answer_2 = [1.0, 1.0]"),
    ],
    "01_leaf_tensors.ipynb": [
        ("answer_1 = False", "answer_1 = True"),
        ("answer_2 = 6", "answer_2 = 3"),
        ("x3 = torch.tensor(3.0, requires_grad=True)\ny3 = x3 ** 3\nz3 = 2 * y3\ny3.retain_grad()\nz3.backward()",
         "x3 = torch.tensor(3.0, requires_grad=True)\ny3 = x3 ** 3\nz3 = 2 * y3\nz3.backward()\ny3.retain_grad()"),
    ],
    "02_clone_detach_cuda.ipynb": [
        ("answer_1 = True", "answer_1 = False"),
        ('answer_2 = {"p", "r", "t"}', 'answer_2 = {"p", "q", "r"}'),
        ("start = torch.tensor([0.5, -0.5])\nweight = start.clone().cuda().requires_grad_()",
         "start = torch.tensor([0.5, -0.5])\nweight = start.clone().requires_grad_().cuda()"),
    ],
    "03_detach_and_grad_modes.ipynb": [
        ("answer_1 = (True, False, False)", "answer_1 = (True, True, False)"),
        ("answer_2 = (2.0, 12.0)", "answer_2 = (2.0, 6.0)"),
        ("x = torch.tensor([5.0, 6.0], requires_grad=True)\ny = x.detach()",
         "x = torch.tensor([5.0, 6.0], requires_grad=True)\ny = x.detach().clone()"),
    ],
    "04_leaves_in_training.ipynb": [
        ('answer_1 = {"p", "r", "s"}', 'answer_1 = {"p", "q", "r", "s"}'),
        ("w = torch.tensor([3.0], requires_grad=True)\nlr = 0.25\n(w ** 2).sum().backward()\n"
         "with torch.no_grad():\n    w -= lr * w.grad",
         "w = torch.tensor([3.0], requires_grad=True)\nlr = 0.25\n(w ** 2).sum().backward()\n"
         "w = w - lr * w.grad"),
        ('weight = torch.randn(2, 2, device="cuda", requires_grad=True)',
         "weight = torch.randn(2, 2, requires_grad=True).cuda()"),
    ],
}


def _tags(cell) -> list:
    return cell.metadata.get("tags", [])


def run_lesson(name: str, replace: dict) -> dict:
    """Exec every code cell of the lesson; return {check cell index: its stdout}."""
    try:  # no window: plots go nowhere (never via MPLBACKEND, which nbval's kernels would inherit)
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        pass
    nb = nbformat.read(str(LESSONS / name), as_version=4)
    ns: dict = {"__name__": "__lesson__"}
    outs, exercise = {}, -1
    cwd = os.getcwd()
    os.chdir(LESSONS)
    try:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            src = cell.source
            if "exercise" in _tags(cell):
                exercise += 1
                src = replace.get(exercise, src)
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf), warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() on Agg
                exec(compile(src, f"<{name}>", "exec"), ns)
            if "check" in _tags(cell):
                outs[exercise] = buf.getvalue()
    finally:
        os.chdir(cwd)
    return outs


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_exercise_cells_pair_with_checks(name):
    nb = nbformat.read(str(LESSONS / name), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    kinds = [("e" if "exercise" in _tags(c) else "c" if "check" in _tags(c) else "") for c in code]
    pairs = "".join(k for k in kinds if k)
    assert pairs == "ec" * len(ANSWERS[name]), f"{name}: exercise/check cells out of order: {pairs}"
    assert 2 <= len(ANSWERS[name]) <= 3


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_checks_judge_answers(name):
    answers = ANSWERS[name]
    default = run_lesson(name, {})
    right = run_lesson(name, {i: r for i, (r, _) in enumerate(answers)})
    wrong = run_lesson(name, {i: w for i, (_, w) in enumerate(answers)})
    for i in range(len(answers)):
        assert default[i].startswith("Not yet"), (name, i, default[i])
        assert right[i].startswith("Right!"), (name, i, right[i])
        assert wrong[i].startswith("Not quite."), (name, i, wrong[i])


#: Lesson 3, exercise 3 (a new tensor sharing x's memory, x still requiring grad): more answers and
#: how the check must start its verdict.
DETACH_ANSWERS = [
    ("y = x.detach()", "Right!"),
    ("y = x.detach()[1:]", "Right!"),            # shares memory, only part of x (the check says so)
    ("y = x.detach().clone()", "Not quite."),    # its own memory
    ("y = x.requires_grad_(False)", "Not quite."),  # y is x, and x no longer requires grad
    ("y = x.detach_()", "Not quite."),
    ("y = x", "Not quite."),
    ("y = x * 1", "Not quite."),                 # still requires grad
    ("y = x.data", "Almost."),                   # shares memory, but not the version counter
]


@pytest.mark.slow
@pytest.mark.parametrize("answer,verdict", DETACH_ANSWERS)
def test_detach_exercise_judges_each_case(answer, verdict):
    name = "03_detach_and_grad_modes.ipynb"
    out = run_lesson(name, {2: "x = torch.tensor([5.0, 6.0], requires_grad=True)\n" + answer})
    assert out[2].startswith(verdict), (answer, out[2])
