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

Each explorer runs the code it shows in leafkit, is constructible without a
browser (drive it from Python: set a control's ``.value``, call a button's
``.click()``), displays through its root ``.widget``, and never shows a
traceback: the lesson's errors appear as styled messages.
"""
from .backward_explorer import BackwardExplorer
from .detach_explorer import DetachExplorer
from .grad_mode_explorer import GradModeExplorer
from .leaf_explorer import LeafExplorer
from .quiz import LeafQuiz

__all__ = ["LeafExplorer", "GradModeExplorer", "BackwardExplorer", "DetachExplorer", "LeafQuiz"]
