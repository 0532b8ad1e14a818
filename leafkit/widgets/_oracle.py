"""Helpers for the explorers' oracles: run the code an explorer shows on real PyTorch, and compare.

Each explorer's :meth:`~leafkit.widgets._explorer.Explorer.oracle` runs the statements it shows
with ``torch`` bound to the module it is given (real PyTorch, in the tests), independently of
the explorer's own runner, and compares what it shows with what PyTorch gives.  Nothing here
imports PyTorch.  A mismatch raises ``AssertionError`` through :func:`expect` (not ``assert``,
which ``python -O`` would skip).
"""

from __future__ import annotations

import ast
import contextlib
import io
import warnings

__all__ = ["as_torch", "statements", "run_torch", "grad_of", "fn_name", "expect"]


def as_torch(code: str) -> str:
    """leafkit code → PyTorch code with the same leaf semantics on a CPU-only build.

    ``.cuda()`` is read as ``.double()`` and ``.to('cpu')`` as ``.float()``: both make a new tensor
    from an op, as a device move does, so ``is_leaf`` and ``grad_fn`` come out the same.
    """
    return code.replace(".cuda()", ".double()").replace(".to('cpu')", ".float()")


def statements(code: str) -> list:
    """The top-level statements of ``code`` (a ``with`` block is one statement)."""
    return [ast.get_source_segment(code, node) for node in ast.parse(code).body]


def run_torch(stmts, torch, after_each=None, namespace=None):
    """``exec`` the statements one by one with ``torch`` bound.

    Returns ``(namespace, printed, "Type: message" or None)``; the run stops at the first error.
    ``after_each(index, namespace)`` is called after each statement that succeeded.  ``namespace``
    (optional) is where they run: the namespace of an earlier run, to go on from there.
    """
    ns = {} if namespace is None else namespace
    ns["torch"] = torch
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, s in enumerate(stmts):
            try:
                with contextlib.redirect_stdout(out):
                    exec(compile(s, "<shown code>", "exec"), ns)  # noqa: S102 - the code the explorer shows
            except Exception as exc:
                return ns, out.getvalue(), f"{type(exc).__name__}: {exc}"
            if after_each is not None:
                after_each(i, ns)
    return ns, out.getvalue(), None


def grad_of(t):
    """``repr(t.grad)`` without the non-leaf warning (``None`` when there is no gradient)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = t.grad
    return None if g is None else repr(g.detach())


def fn_name(t):
    """The name of ``t.grad_fn`` (``"MulBackward0"``), or ``None`` for a leaf."""
    return None if t.grad_fn is None else t.grad_fn.name()


def expect(condition, *context) -> None:
    """Raise ``AssertionError(context)`` unless ``condition`` holds."""
    if not condition:
        raise AssertionError(context[0] if len(context) == 1 else context)
