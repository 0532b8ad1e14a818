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

The check of (b) is the explorer's own :meth:`~leafkit.widgets._explorer.Explorer.oracle`, so
this file names no explorer (a test fails for an explorer without one).  Drawings take the
text path (``no_dot``) so that a step costs milliseconds; they are checked elsewhere.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from leafkit.widgets import EXPLORERS

pytestmark = pytest.mark.parity

SETTINGS = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
PROBLEM_MARKERS = ("Traceback (most recent call last)", "The explorer hit a problem", "探索器出了问题")


# ------------------------------------------------------------------ oracles --
def test_every_registered_explorer_has_an_oracle():
    """Each explorer brings its own check against PyTorch (``Explorer.oracle``): a new explorer needs
    no line here."""
    from leafkit.widgets._explorer import Explorer

    assert [e.name for e in EXPLORERS if e.cls.oracle is Explorer.oracle] == [], "give the explorer an oracle()"


# ------------------------------------------------------------------ the machine --
def learner_machine(entry, torch):
    cls = entry.cls
    steps = [(key, value) for key, c in cls.example().controls().items() for value in c.values()]

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
                self.ex.oracle(torch)

    Learner.__name__ = f"{entry.name}Learner"
    return Learner


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_random_learners_see_pytorchs_results_and_no_traceback(entry, real_torch, no_dot):
    run_state_machine_as_test(learner_machine(entry, real_torch), settings=SETTINGS)
