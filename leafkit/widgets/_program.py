"""Run the code an explorer shows, statement by statement, and read tensors.

Every explorer computes what it displays by really executing the lines of code
it shows to the learner (``exec`` in a fresh namespace where ``torch`` is
leafkit, or real PyTorch in the parity tests).  Nothing here raises at a
learner: exceptions, warnings and printed output are recorded per statement.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from dataclasses import dataclass, field

import leafkit

__all__ = [
    "Outcome",
    "Run",
    "run_program",
    "error_text",
    "facts",
    "device_label",
    "grad_value",
    "format_value",
    "node_name",
]


@dataclass
class Outcome:
    """What one statement did.

    Attributes
    ----------
    code : str
        The statement (it may span several lines, e.g. a ``with`` block).
    error : BaseException or None
        The exception it raised, if any.
    warnings : list of str
        ``"Category: message"`` for every warning it issued.
    printed : str
        What it wrote to ``sys.stdout``.
    """

    code: str
    error: BaseException | None = None
    warnings: list = field(default_factory=list)
    printed: str = ""


@dataclass
class Run:
    """The result of :func:`run_program`.

    Attributes
    ----------
    namespace : dict
        The variables after the run (``torch`` included).
    outcomes : list of Outcome
        One per statement that ran; the run stops at the first error.
    """

    namespace: dict
    outcomes: list

    @property
    def error(self):
        """``(index, exception)`` of the statement that failed, or ``None``."""
        for i, o in enumerate(self.outcomes):
            if o.error is not None:
                return i, o.error
        return None

    @property
    def printed(self) -> str:
        """Everything the statements printed, in order."""
        return "".join(o.printed for o in self.outcomes)

    @property
    def warnings(self) -> list:
        """Every warning issued, in order."""
        return [w for o in self.outcomes for w in o.warnings]


def run_program(statements, torch_module=None, namespace=None, after_each=None) -> Run:
    """Execute ``statements`` one by one in a namespace where ``torch`` is bound.

    Parameters
    ----------
    statements : sequence of str
        Python statements, exactly as shown to the learner.
    torch_module : module, optional
        What ``torch`` means in the code: leafkit by default, or real PyTorch.
    namespace : dict, optional
        Start from these variables (a fresh dict by default).
    after_each : callable, optional
        ``after_each(index, namespace)`` is called after every statement that
        succeeded (used to snapshot intermediate tensors).

    Returns
    -------
    Run
        The namespace and one :class:`Outcome` per executed statement.  The
        run stops at the first statement that raises.
    """
    ns = {} if namespace is None else namespace
    ns.setdefault("torch", leafkit if torch_module is None else torch_module)
    outcomes = []
    for i, code in enumerate(statements):
        out = Outcome(code)
        buf = io.StringIO()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with contextlib.redirect_stdout(buf):
                    exec(compile(code, f"<explorer line {i + 1}>", "exec"), ns)  # noqa: S102
            except Exception as exc:  # the lesson's errors are data here
                out.error = exc
        out.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
        out.printed = buf.getvalue()
        outcomes.append(out)
        if out.error is not None:
            break
        if after_each is not None:
            after_each(i, ns)
    return Run(ns, outcomes)


def error_text(exc: BaseException) -> str:
    """``"RuntimeError: message"``: how the learner would see it, minus the traceback."""
    return f"{type(exc).__name__}: {exc}"


def _simulated() -> bool:
    try:
        return leafkit.cuda.backend() == "simulated"
    except Exception:
        return False


def device_label(t) -> str:
    """``str(t.device)``, plus ``" (simulated)"`` for leafkit's host-memory cuda."""
    dev = str(t.device)
    if getattr(t.device, "type", "") == "cuda" and type(t).__module__.startswith("leafkit") and _simulated():
        dev += " (simulated)"
    return dev


def format_value(t) -> str:
    """The tensor's values as PyTorch prints them, without autograd decorations: ``tensor([2.])``."""
    try:
        return repr(t.detach())
    except Exception:
        return "?"


def grad_value(t):
    """``(grad, warning)``: ``t.grad`` read as a learner would, and the warning text it issued.

    ``grad`` is None or a tensor; ``warning`` is ``None`` or the message (the
    non-leaf ``.grad`` warning).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = t.grad
    msg = str(caught[0].message) if caught else None
    return g, msg


def node_name(fn) -> str:
    """A backward node's name as PyTorch prints it (``MulBackward0``)."""
    try:
        return str(fn.name())
    except Exception:
        return type(fn).__name__


def facts(t) -> dict:
    """The autograd facts of a tensor: ``is_leaf``, ``requires_grad``, ``grad_fn``, ``device``."""
    fn = t.grad_fn
    return {
        "is_leaf": bool(t.is_leaf),
        "requires_grad": bool(t.requires_grad),
        "grad_fn": None if fn is None else node_name(fn),
        "device": device_label(t),
    }
