"""The lessons' exercise checks really judge the learner's answer.

Each exercise in a lesson source is an answer cell (tag ``exercise``), the solution
right after it (a Markdown cell tagged ``solution``, the code between nbgrader's
``### BEGIN SOLUTION`` and ``### END SOLUTION``) and a check cell (tag ``check``).
Every lesson (both languages) runs in-process, code cell after code cell:
unanswered, with each answer cell replaced by its solution, by a wrong answer and by
an answer of the wrong type.  The wrong answers are written in the solution cell,
after the solution (``### BEGIN WRONG ANSWER`` ... ``### END WRONG ANSWER``, and
``WRONG TYPE``); an exercise may list several, and the lesson runs once per answer.
The check cells must start their verdict with the lesson language's *Not yet*,
*Right!* and *Not quite.* (``lessons/manifest.toml``), and no cell may raise.

A check never gives the answer away: it is folded in the learner's notebook, its
``right=`` and hint texts do not state the solution, and only a right answer sees it
(``test_no_check_gives_the_answer_away``, and ``test_checks_judge_answers`` for what
the check prints to a wrong answer).
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import sys
import tokenize
import warnings

import pytest
from lesson_sources import build_lessons, lesson_id, lessons, notebook_path, read_source, source_path, tags, verdicts

nbformat = pytest.importorskip("nbformat")

LESSONS = lessons()


def exercises(nb) -> list:
    """Per exercise: (answer cell, solution code, check cell, wrong answers), in order.

    The wrong answers come from the solution cell: ``{"wrong answer": [code, ...], "wrong type": [code, ...]}``.
    """
    out = []
    for answer, sol, check in build_lessons.exercises(nb):
        solution = build_lessons.solution_code(sol) if sol else None
        wrong = build_lessons.wrong_answers(sol) if sol else {"wrong answer": [], "wrong type": []}
        out.append((answer, solution, check, wrong))
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
        if "matplotlib.pyplot" in sys.modules:  # the lesson's figures: closed, as a kernel's end would
            sys.modules["matplotlib.pyplot"].close("all")
    return outs


@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_each_exercise_has_answer_solution_and_check(item):
    lang, entry = item
    nb = read_source(lang, entry)
    kinds = "".join(
        "e" if "exercise" in tags(c) else "s" if "solution" in tags(c) else "c" if "check" in tags(c) else ""
        for c in nb.cells
    )
    found = exercises(nb)
    n = len(found)
    assert 2 <= n <= 3, f"{source_path(lang, entry)}: {n} exercises"
    assert kinds == "esc" * n, f"{source_path(lang, entry)}: answer/solution/check cells out of order: {kinds}"
    for answer, solution, _check, wrong in found:
        label = answer.metadata.get("label")
        assert solution and solution.strip() != answer.source.strip(), label
        assert wrong["wrong answer"] and wrong["wrong type"], f"{label}: the solution cell names no wrong answers"
        for code in wrong["wrong answer"] + wrong["wrong type"]:
            assert code.strip() not in (solution.strip(), answer.source.strip()), (label, code)


def runs_with_wrong_answers(found: list, kind: str) -> list[dict]:
    """The replacements for the runs of one kind of wrong answer: run k uses each exercise's k-th answer
    of that kind (its last one when it has fewer)."""
    count = max(len(wrong[kind]) for *_, wrong in found)
    return [
        {i: wrong[kind][min(k, len(wrong[kind]) - 1)] for i, (*_, wrong) in enumerate(found, start=1)}
        for k in range(count)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_checks_judge_answers(item):
    """Unanswered: Not yet; the solution: Right!; each wrong answer and answer of the wrong type: Not quite.
    Only a right answer may see the solution: no other verdict contains it."""
    lang, entry = item
    say = verdicts(lang)
    nb = read_source(lang, entry)
    found = exercises(nb)
    solutions = {i: sol for i, (_, sol, _, _) in enumerate(found, start=1)}
    runs = [("unanswered", {}, say["not_yet"]), ("solution", solutions, say["right"])]
    for kind in ("wrong answer", "wrong type"):
        runs += [(f"{kind} {k + 1}", r, say["wrong"]) for k, r in enumerate(runs_with_wrong_answers(found, kind))]
    for kind, replace, verdict in runs:
        outs = run_lesson(lang, entry, replace)
        assert sorted(outs) == list(range(1, len(found) + 1)), (kind, outs)
        for i, out in outs.items():
            assert out.startswith(verdict), f"{lang}/{entry.stem}, exercise {i}, {kind}: {out!r}"
            if verdict != say["right"]:
                # the check may quote the learner's own answer back ("'6' in quotes is text"): that gives nothing away
                heard = without_echo(out, replace.get(i, found[i - 1][0].source))
                shown = giveaways_in(heard, solutions[i], found[i - 1][0].source, code=False)
                assert not shown, f"{lang}/{entry.stem}, exercise {i}, {kind}: the feedback shows {shown}: {out!r}"


# ------------------------------------------------------------- no answer given away ----
def solution_value(solution: str, answer: str):
    """What the solution is, for looking for it elsewhere: ("value", v) when it assigns one literal
    (``answer_1 = 8.0``), else ("code", [the lines it adds to the answer cell])."""
    tree = ast.parse(solution)
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assign):
        try:
            return "value", ast.literal_eval(tree.body[0].value)
        except ValueError:
            pass
    given = set(build_lessons._code_lines(answer))
    return "code", [line for line in build_lessons._code_lines(solution) if line not in given]


def _number(v) -> str:
    """A regex for the number ``v`` as a text may write it: 48, 48.0, 48.00 (not 148 or 48.5)."""
    if float(v).is_integer():
        body = rf"-?{int(v)}(?:\.0+)?"
    else:
        body = re.escape(repr(float(v))) + "0*"
    # not a reference to a part of the course: "section 4", "lesson 4", "example 4", "第 4 节"
    where = "".join(rf"(?<!{w} )" for w in ("section", "sections", "lesson", "lessons", "example", "第"))
    return rf"(?<![\w.]){where}{body}(?![\w]|\.\d)"


def giveaway_patterns(kind: str, value) -> list:
    """Regexes that find the solution ``value`` written out in a text."""
    if kind == "code":
        return [re.escape(line) for line in value]
    if isinstance(value, bool):
        return []  # True or False alone: nothing a text search can tell apart
    if isinstance(value, (int, float)):
        return [_number(value)]
    if isinstance(value, (list, tuple)) and value:
        items = [
            rf"\b{v}\b" if isinstance(v, bool) else _number(v) if isinstance(v, (int, float)) else re.escape(repr(v))
            for v in value
        ]
        return [r"\s*,\s*".join(items)]
    if isinstance(value, (set, frozenset)) and value and all(isinstance(v, str) for v in value):
        # every letter of the answer, each standing alone ("(q, t)", "p: ... s: ..."), in one text
        return [["(?<![\\w'’])" + re.escape(v) + "(?![\\w'’])" for v in sorted(value)]]
    return []


def giveaways_in(text: str, solution: str, answer: str, code: bool) -> list[str]:
    """The parts of ``text`` that write out the solution.  ``code``: ``text`` is source code (then a literal
    solution is looked for in its string literals only, and a code solution's lines anywhere)."""
    kind, value = solution_value(solution, answer)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    if code and kind == "value":
        # a list or tuple of the solution's values is a giveaway in the code too (check(answer, [0.0, 1.0], ...))
        texts = string_literals(text) + (lines if isinstance(value, (list, tuple)) else [])
    elif code:
        texts = lines
    else:
        texts = [text]
    found = []
    for pattern in giveaway_patterns(kind, value):
        for t in texts:
            if isinstance(pattern, list):  # all of them in one text
                if len(t) > 3 and all(re.search(p, t) for p in pattern):
                    found.append(t)
            else:
                m = re.search(pattern, t)
                if m:
                    found.append(m.group(0))
    return found


def without_echo(output: str, answer_code: str) -> str:
    """``output`` without the string values of the learner's answer, as the check quotes them back."""
    for literal in string_literals(answer_code):
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue
        output = output.replace(repr(value), "")
    return output


def string_literals(source: str) -> list[str]:
    """The string literals of ``source`` (f-strings whole), as written."""
    tokens = tokenize.generate_tokens(io.StringIO(source + "\n").readline)
    return [tok.string for tok in tokens if tok.type == tokenize.STRING]


@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_no_check_gives_the_answer_away(item):
    """A check cell is folded in the learner's notebook, and neither its code (its ``right=`` and hint texts)
    nor what it printed when the notebook was built states the exercise's solution."""
    lang, entry = item
    nb = read_source(lang, entry)
    learner = {c.id: c for c in nbformat.read(str(notebook_path(lang, entry)), as_version=4).cells}
    for number, (answer, solution, check, _wrong) in enumerate(exercises(nb), start=1):
        label = check.metadata["label"]
        where = f"{source_path(lang, entry)}, exercise {number} ({label})"
        assert learner[label].metadata.get("jupyter", {}).get("source_hidden"), f"{where}: the check is not folded"
        shown = giveaways_in(check.source, solution, answer.source, code=True)
        assert not shown, f"{where}: the check cell states the solution: {shown}"
        printed = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in learner[label].outputs)
        shown = giveaways_in(printed, solution, answer.source, code=False)
        assert not shown, f"{where}: the check's stored output states the solution: {shown}"


@pytest.mark.parametrize(
    "solution,text,found",
    [
        ("answer_1 = 8.0", 'check(a, t, right="2 plus 6 makes 8.", hint="h")', True),
        ("answer_1 = 8.0", 'check(a, t, right="2 plus 6, as 18 and 0.8 are not", hint="h")', False),
        ("answer_1 = 8.0", "x = 8.0  # code may use the number", False),
        ("answer_3 = 4.0", 'check(a, t, right="r", hint="would autograd notice it (section 4)?")', False),
        ("answer_3 = 4.0", 'check(a, t, right="回看第 4 节", hint="h")', False),
        ("answer_3 = [0.0, 1.0, 0.0]", 'right="v = [0, 1, 0] picks row 1"', True),
        ("answer_3 = [0.0, 1.0, 0.0]", "check(answer_3, [0.0, 1.0, 0.0], right='', hint='')", True),
        ("answer_2 = (False, True, True)", 'right="(False, True, True) it is"', True),
        ("answer_2 = (False, True, True)", 'right="x.grad is recorded"', False),
        ('answer_1 = {"q", "r", "t"}', 'right="exp and relu save their output (q, t); a * b saves a (r)."', True),
        ('answer_1 = {"q", "r", "t"}', 'lines = {"p": 1, "q": 2, "r": 3, "s": 4, "t": 5}', False),
        ("h = h * 2", 'print("Right! as h = h * 2 does")', True),
        ("h = h * 2", 'print("Right! a new tensor")', False),
    ],
)
def test_giveaways_are_found(solution, text, found):
    answer = "h *= 2" if solution.startswith("h") else "answer = None"
    assert bool(giveaways_in(text, solution, answer, code=True)) is found


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


def run_check_alone(stem: str, setup: list[str], answer: str, check: str) -> str:
    """Run only the cells labelled ``setup`` of the English lesson ``stem``, then ``answer``, then its check cell
    ``check``: what the check printed."""
    entry = next(e for _, e in lessons("en") if e.stem == stem)
    cells = {c.metadata.get("label"): c.source for c in read_source("en", entry).cells if c.cell_type == "code"}
    ns: dict = {"__name__": "__lesson__"}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        for label in setup:
            exec(cells[label], ns)
        exec(answer, ns)
        exec(cells[check], ns)
    return buf.getvalue()


#: Lesson 10, exercise 3 (fix XSinX's backward so that gradcheck and gradgradcheck pass): more answers and how
#: the check must start its verdict (English lesson).
XSINX = (
    "class XSinX(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    "        ctx.save_for_backward(x)\n        return x * x.sin()\n\n    @staticmethod\n"
    "    def backward(ctx, grad_out):\n        (x,) = ctx.saved_tensors\n        return {}\n"
)
XSINX_ANSWERS = [
    ("grad_out * (x.sin() + x * x.cos())", "Right!"),
    ("grad_out * x.sin() + grad_out * x * x.cos()", "Right!"),
    ("(x.sin() + x * x.cos()) * grad_out", "Right!"),
    ("grad_out * x * x.cos()", "Not yet: gradcheck reports"),  # the given backward
    ("grad_out * x * x.cos()  # changed only the comment", "Not yet: gradcheck reports"),
    ("x.sin() + x * x.cos()", "Not quite. gradcheck still rejects"),  # forgets grad_out
    ("grad_out * (x.cos() + x * x.sin())", "Not quite. gradcheck still rejects"),
    ("grad_out * (x.sin() + x * x.cos()).detach()", "Not quite. gradcheck passes now, but gradgradcheck"),
    ("grad_out * torch.tensor((x.sin() + x * x.cos()).tolist(), dtype=torch.float64)", "Not quite. gradcheck passes"),
    ("grad_out * (x.sin() + x * x.cos()), None", "Right!"),  # a trailing None is allowed, as in PyTorch
]


@pytest.mark.parametrize("answer,verdict", XSINX_ANSWERS)
def test_gradcheck_exercise_judges_each_case(answer, verdict):
    out = run_check_alone("10_your_own_function", ["import", "check-helper"], XSINX.format(answer), "check-3")
    assert out.startswith(verdict), (answer, out)


#: Lesson 12, exercise 3 (a backward hook on the first layer, and an in-place ReLU after it): more answers and
#: how the check must start its verdict (English lesson).
WATCHED_ANSWERS = [
    ("nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))", "Right!"),
    ("nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=False), nn.Linear(4, 1))", "Right!"),
    ("nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))", "Not yet: backward() raises"),
    ("nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))", "Not quite. The hook works now, but the model"),
    ("nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))", "Not quite. The hook works now, but the model"),
    ("nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Identity(), nn.Linear(4, 1))", "Not quite."),
    ("nn.Linear(3, 1)", "Not quite. watched should stay an nn.Sequential"),
]


@pytest.mark.parametrize("answer,verdict", WATCHED_ANSWERS)
def test_backward_hook_exercise_judges_each_case(answer, verdict):
    setup = ["import", "helpers", "check-helper"]
    out = run_check_alone("12_watching_gradients_flow", setup, f"watched = {answer}", "check-3")
    assert out.startswith(verdict), (answer, out)


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
        (
            {"P", "S"},
            {"p", "s"},
            "Not quite. Write the letters in lower case, as the question does, for example {'p', 'q'}.",
        ),
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
