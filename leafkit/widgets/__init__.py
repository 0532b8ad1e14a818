"""Interactive explorers for the lessons (plain ipywidgets 8, no custom JavaScript).

- :class:`LeafExplorer`: ``requires_grad`` and a chain of clone / detach /
  cuda / to / ops → ``is_leaf``, ``requires_grad``, ``grad_fn``, ``device``.
- :class:`GradModeExplorer`: ``requires_grad`` of two inputs, an operator and
  ``no_grad`` → ``z.requires_grad``, ``z.grad_fn`` and what ``z.backward()`` does.
- :class:`BackwardExplorer`: ``retain_grad``, hooks, ``retain_graph`` and
  repeated ``backward()`` on x → y → z → t.
- :class:`DetachExplorer`: ``y = x.detach()`` shares storage; in-place edits,
  the version counter and the "modified by an inplace operation" error.
- :class:`LeafQuiz`: predict ``is_leaf`` / ``requires_grad`` for seed 001's a..k.
- :class:`BackwardStepper`: one ``backward()`` pass on any graph the learner builds, one
  node at a time (gradients on the edges, ``AccumulateGrad``, hooks, freed saved tensors).

Each explorer runs the code it shows in leafkit, is constructible without a
browser (drive it from Python: set a control's ``.value``, call a button's
``.click()``, or use ``explorer.act(key, value)`` with the keys of
``explorer.controls()``), displays through its root ``.widget``, and never
shows a traceback: the lesson's errors appear as styled messages.  Every
explorer takes ``lang="en"`` or ``"zh"`` (简体中文); the default follows
:func:`leafkit.set_language`.

:data:`REGISTRY` lists the explorers once: this package's exports, the tests,
the browser test, ``bench/widgets.py`` and the README's screenshot table read
it.  A new explorer (say ``BackwardStepper``) is its own module plus one line there:

1. ``leafkit/widgets/backward_stepper.py`` (or a package, as the stepper is): a
   subclass of :class:`~leafkit.widgets._explorer.Explorer` with ``TEXT`` (``"en"``
   and ``"zh"``: ``title``, ``subtitle``, ``summary`` and its own words),
   ``css_class``, ``TOUR`` (a walk through its controls), ``EXAMPLE`` when it needs
   arguments (a notebook cell that builds a graph and ends with
   ``BackwardStepper(loss)``), ``DEMO`` (a cell as a lesson writes it),
   ``_controls()``, ``_update()`` and ``oracle(torch)``;
2. ``("backward_stepper", "BackwardStepper")`` in :data:`REGISTRY`.

Then ``python scripts/readme_explorers.py`` adds its README row (a test fails
until it does) and the browser test with ``LEAFKIT_UPDATE_DOCS=1`` its screenshots.
The tests read everything else from the class: the property test calls its
:meth:`~leafkit.widgets._explorer.Explorer.oracle` (its check against real
PyTorch), the browser test builds its ``EXAMPLE`` and its ``DEMO`` and walks its
``TOUR``.  See ARCHITECTURE.md, "A new explorer".

The explorers load on first use (``leafkit.widgets.LeafExplorer``, or
``from leafkit.widgets import *``): importing ``leafkit.widgets`` alone imports
no ipywidgets.
"""

from ._registry import ExplorerEntry, entries  # noqa: F401 - ExplorerEntry is public (a new explorer's entry)

#: ``(module, class)``, one line per explorer, in the order the README and the tests list them.
REGISTRY = (
    ("leaf_explorer", "LeafExplorer"),
    ("grad_mode_explorer", "GradModeExplorer"),
    ("backward_explorer", "BackwardExplorer"),
    ("detach_explorer", "DetachExplorer"),
    ("quiz", "LeafQuiz"),
    ("backward_stepper", "BackwardStepper"),
    ("memory_explorer", "MemoryExplorer"),
)

#: :class:`ExplorerEntry` per registered explorer (``.name``, ``.cls``, ``.slug``, ``.css_class``, ``.summary()``).
EXPLORERS = entries(REGISTRY)

__all__ = [e.name for e in EXPLORERS]


def __getattr__(name):
    """An explorer class, imported (with ipywidgets) the first time it is asked for."""
    for e in EXPLORERS:
        if e.name == name:
            globals()[name] = e.cls
            return e.cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
