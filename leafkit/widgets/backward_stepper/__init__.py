"""``BackwardStepper``: one backward pass, one node at a time, on a graph the learner built.

``BackwardStepper(loss)`` takes any leafkit tensor that requires grad (the
learner builds the graph in the notebook; nothing is typed into the explorer
and nothing is ``eval``-ed) and runs ``loss.backward()`` through
:func:`leafkit.autograd.backward_steps`, the engine's generator of
:class:`~leafkit.autograd.engine.BackwardStep`, so the order is the engine's,
which is PyTorch's (the tests check it against PyTorch's node pre-hooks).  After
each step it shows:

* the node that ran, highlighted in the drawing, and the gradient that arrived
  for each of its outputs (with the gradients that were added up to make it);
* what it sent along each edge, written on the edge; a gradient for an input
  that was broadcast arrives summed back to that input's shape, and says so;
* for ``AccumulateGrad``: the leaf's ``.grad`` before and after;
* the hooks that fired (and what they printed), the ``retain_grad()`` copies,
  and whether the node freed its saved tensors.

Controls: **Step**, **Run to end**, **Back one step** and **Reset**; from
Python: :meth:`BackwardStepper.step`, :meth:`~BackwardStepper.run`,
:meth:`~BackwardStepper.back`, :meth:`~BackwardStepper.reset` and
:attr:`~BackwardStepper.finished`.

The package, one concern per module:

* :mod:`.model`: :class:`BackwardPass`, the pass run once and recorded, and the replay that
  Back and Reset use; it imports no ipywidgets and is tested on its own;
* :mod:`.words`: every word the stepper writes, in English and Chinese;
* :mod:`.sentences`: the "Why" box's sentences, made from the model and the words;
* :mod:`.drawing`: :class:`PassDrawing`, the graph at one moment of the pass, and its legend;
* :mod:`.widget`: :class:`BackwardStepper`, the panel (buttons, table, layout);
* :mod:`.oracle`: real PyTorch's own pass, which the tests compare the stepper with.

How "Back one step" works, and why
----------------------------------
A backward pass consumes the learner's graph: without ``retain_graph=True``
each node frees its saved tensors as it runs, and the learner's hooks are code
with side effects (a print, a list that grows).  So the pass runs **once**, for
real, with the learner's own ``retain_graph``, and every step is recorded:
copies of the gradients it received and sent, what the hooks printed, and the
``.grad`` of every leaf and every tensor that retains its gradient before and
after the step.  *Back one step* rebuilds the state after step ``k - 1`` by
replaying that record from the start: every ``.grad`` is put back to what it
was before the pass (same tensor objects, values copied in), then the recorded
effects of steps ``1 .. k - 1`` are applied in order.  *Step* after *Back*
replays the record again, and once it catches up, the real pass goes on.

The alternative, running the pass with ``retain_graph=True`` behind the
learner's back and re-running the nodes on every Back, was rejected: it would
fire every hook again on each replay, it could never show a node really freeing
its saved tensors, and after *Run to end* it would leave a graph that
``loss.backward()`` would have freed.  With the record, *Run to end* leaves
exactly what ``loss.backward()`` leaves (``.grad`` values, retained gradients,
freed graph).  While the view is behind the real pass (after Back), the
explanation says so: the nodes after the view already ran.
"""

from __future__ import annotations

from .drawing import PassDrawing, draw_pass
from .model import BackwardPass, StepRecord, caller_names, names_in
from .sentences import Sentences
from .words import TEXT

__all__ = [
    "BackwardStepper",
    "BackwardPass",
    "StepRecord",
    "PassDrawing",
    "Sentences",
    "TEXT",
    "draw_pass",
    "caller_names",
    "names_in",
]


def __getattr__(name):
    """``BackwardStepper`` (and the panel's constants) load with ipywidgets on first use, so that the model,
    the sentences and the drawing import without it."""
    if name in ("BackwardStepper", "MAX_ROWS", "TABLE_VALUES"):
        from . import widget

        return getattr(widget, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
