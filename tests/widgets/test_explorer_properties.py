"""Stateful property tests: random learners against every registered explorer.

For each explorer of ``leafkit.widgets.REGISTRY`` a hypothesis ``RuleBasedStateMachine``
builds it (in English or Chinese), then operates random controls in random order
(ticks, choices, clicks: every ``(key, value)`` of ``explorer.controls()``), and after
every step checks two invariants:

(a) no traceback ever reaches the output: ``act`` never raises, nothing lands in
    ``internal_errors``, and no view shows a traceback or the "explorer hit a problem" box;
(b) every table row equals what real PyTorch gives for the code the explorer shows: the
    shown statements are run with ``torch`` bound to PyTorch 2.13 (``.cuda()`` read as
    ``.double()`` and ``.to('cpu')`` as ``.float()``: the same leaf semantics on a CPU build),
    independently of the explorer's own runner, and the rows are compared field by field.

Each explorer needs an oracle in :data:`ORACLES` (a test fails for one without).  Drawings
take the text path (``no_dot``) so that a step costs milliseconds; they are checked elsewhere.
"""

from __future__ import annotations

import ast
import contextlib
import io
import warnings

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from stepper_oracle import check_stepper, torch_pass
from widget_checks import as_torch

from leafkit.widgets import EXPLORERS
from leafkit.widgets.quiz import UNANSWERED

pytestmark = pytest.mark.parity

SETTINGS = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
PROBLEM_MARKERS = ("Traceback (most recent call last)", "The explorer hit a problem", "探索器出了问题")


# ------------------------------------------------------------------ running code in PyTorch --
def statements(code: str) -> list:
    """The top-level statements of ``code`` (a ``with`` block is one statement)."""
    return [ast.get_source_segment(code, node) for node in ast.parse(code).body]


def run_torch(stmts, torch, after_each=None):
    """``exec`` the statements one by one with ``torch`` bound; ``(namespace, printed, "Type: msg" or None)``."""
    ns = {"torch": torch}
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, s in enumerate(stmts):
            try:
                with contextlib.redirect_stdout(out):
                    exec(compile(s, "<shown code>", "exec"), ns)  # noqa: S102
            except Exception as exc:
                return ns, out.getvalue(), f"{type(exc).__name__}: {exc}"
            if after_each is not None:
                after_each(i, ns)
    return ns, out.getvalue(), None


def grad_of(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = t.grad
    return None if g is None else repr(g.detach())


def fn_name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


# ------------------------------------------------------------------ oracles --
def oracle_leaf(ex, torch):
    prog = [as_torch(stmt) for _, stmt in ex.result.program]
    snaps = []

    def snap(i, ns):
        t = ns[ex.result.program[i][0]]
        snaps.append((bool(t.is_leaf), bool(t.requires_grad), fn_name(t)))

    _, _, err = run_torch(prog, torch, snap)
    assert [(r["is_leaf"], r["requires_grad"], r["grad_fn"]) for r in ex.rows] == snaps, ex.code
    assert (ex.result.error is None) == (err is None) and (err is None or ex.result.error == err), (ex.code, err)
    if err is None:  # the one-line program shown ends in the same tensor
        ns, _, err1 = run_torch(statements(as_torch(ex.code)), torch)
        assert err1 is None
        t = ns[ex.name]
        assert (bool(t.is_leaf), bool(t.requires_grad), fn_name(t)) == snaps[-1]


def oracle_grad_mode(ex, torch):
    stmts = statements(ex.code)
    ns, _, err = run_torch(stmts[:-1], torch)
    assert err is None
    rows = {r["variable"]: r for r in ex.rows}
    for k in "xyz":
        t = ns[k]
        assert (rows[k]["is_leaf"], rows[k]["requires_grad"], rows[k]["grad_fn"]) == (
            bool(t.is_leaf),
            bool(t.requires_grad),
            fn_name(t),
        ), (ex.code, k)
    err = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(stmts[-1], ns)  # noqa: S102 - z.backward(), in the namespace the forward lines made
    except Exception as exc:
        err = f"{type(exc).__name__}: {exc}"
    assert ex.result.backward_error == err, ex.code
    for k in "xy":
        assert rows[k]["grad"] == grad_of(ns[k]), (ex.code, k)


def oracle_backward(ex, torch):
    history = []

    def snap(i, ns):
        if ex.program[i].startswith("t.backward("):
            history.append({n: grad_of(ns[n]) for n in "xyzt"})

    ns, printed, err = run_torch(ex.program, torch, snap)
    assert err is None, (ex.program, err)
    for r in ex.rows:
        t = ns[r["variable"]]
        assert r["is_leaf"] == bool(t.is_leaf)
        assert r["retains_grad"] == (bool(t.retains_grad) and not t.is_leaf)
        assert r["grad"] == grad_of(t), (ex.program, r)
        assert r["grad_history"] == [h[r["variable"]] for h in history], (ex.program, r)
    assert ex.printed == printed
    if ex.failed:
        _, _, err = run_torch(list(ex.program) + [ex.failed[0]], torch)
        assert err == ex.failed[1], (ex.program, ex.failed)


def oracle_detach(ex, torch):
    ns, _, err = run_torch(ex.program, torch)
    assert err is None, (ex.program, err)
    rows = {r["variable"]: r for r in ex.rows}
    assert set(rows) == {n for n in ("x", "y", "z") if n in ns}
    for n, r in rows.items():
        t = ns[n]
        assert (r["value"], r["is_leaf"], r["requires_grad"], r["grad_fn"], r["version"]) == (
            repr(t.detach()),
            bool(t.is_leaf),
            bool(t.requires_grad),
            fn_name(t),
            int(t._version),
        ), (ex.program, n)
        if t.is_leaf:
            assert r["grad"] == grad_of(t), (ex.program, n)
    assert (rows["x"]["data_ptr"] == rows["y"]["data_ptr"]) == (ns["x"].data_ptr() == ns["y"].data_ptr())
    if ex.failed:
        _, _, their = run_torch(list(ex.program) + [ex.failed[0]], torch)
        assert their is not None and their.split(":")[0] == ex.failed[1].split(":")[0], (ex.program, ex.failed)
        ours = ex.failed[1].split(": ", 1)[1]
        assert ("modified by an inplace operation" in ours) == ("modified by an inplace operation" in their)
        assert ours[:40] == their.split(": ", 1)[1][:40]


def oracle_quiz(ex, torch):
    assert [r["variable"] for r in ex.rows] == [n for n in ex.checked]
    for r in ex.rows:
        ns, _, err = run_torch([as_torch(ex.codes[r["variable"]])], torch)
        assert err is None
        t = ns[r["variable"]]
        assert (r["is_leaf"], r["requires_grad"], r["grad_fn"]) == (
            bool(t.is_leaf),
            bool(t.requires_grad),
            fn_name(t),
        ), r
    # only answered rows are checked, and nothing about the others is revealed
    for n, p in ex.predictions().items():
        if n not in ex.checked:
            assert ex.marks[n].value == "" and ex.codes[n] not in ex.feedback_view.value
        if ex.score is not None:
            assert (n in ex.checked) == (UNANSWERED not in p.values())


_STEPPER_TRACES: dict = {}


def oracle_stepper(ex, torch):
    """The steps shown so far are the first steps of PyTorch's own pass over the example's graph (node pre- and
    post-hooks on every node), and every .grad is what PyTorch has at that point of its pass."""
    program = type(ex).example_code().rsplit("\n", 1)[0]  # the cell without its last line (the explorer)
    key = (program, ex.code)
    if key not in _STEPPER_TRACES:
        assert ex.code == "loss.backward()"
        _STEPPER_TRACES[key] = torch_pass(torch, program)
    check_stepper(ex, _STEPPER_TRACES[key])


ORACLES = {
    "LeafExplorer": oracle_leaf,
    "GradModeExplorer": oracle_grad_mode,
    "BackwardExplorer": oracle_backward,
    "DetachExplorer": oracle_detach,
    "LeafQuiz": oracle_quiz,
    "BackwardStepper": oracle_stepper,
}


def test_every_registered_explorer_has_an_oracle():
    assert [e.name for e in EXPLORERS if e.name not in ORACLES] == [], "add its oracle to ORACLES"


# ------------------------------------------------------------------ the machine --
def learner_machine(entry, torch):
    cls = entry.cls
    steps = [(key, value) for key, c in cls.example().controls().items() for value in c.values()]
    oracle = ORACLES[entry.name]

    class Learner(RuleBasedStateMachine):
        @initialize(lang=st.sampled_from(["en", "zh"]))
        def build(self, lang):
            self.ex = cls.example(lang)

        @rule(step=st.sampled_from(steps))
        def operate(self, step):
            self.ex.act(*step)  # never raises, whatever the state

        @invariant()
        def no_traceback(self):
            ex = getattr(self, "ex", None)
            if ex is None:
                return
            assert ex.internal_errors == [], ex.internal_errors
            views = [
                ex.code_view,
                ex.table_view,
                ex.message_view,
                ex.explanation_view,
                ex.drawing_view,
                getattr(ex, "feedback_view", ex.code_view),
                getattr(ex, "warning_view", ex.code_view),
                getattr(ex, "output_view", ex.code_view),
            ]
            for v in views:
                for marker in PROBLEM_MARKERS:
                    assert marker not in v.value, (marker, v.value[:500])

        @invariant()
        def rows_are_pytorchs(self):
            if getattr(self, "ex", None) is not None:
                oracle(self.ex, torch)

    Learner.__name__ = f"{entry.name}Learner"
    return Learner


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_random_learners_see_pytorchs_results_and_no_traceback(entry, real_torch, no_dot):
    run_state_machine_as_test(learner_machine(entry, real_torch), settings=SETTINGS)
