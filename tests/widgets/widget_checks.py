"""Helpers and fixtures for tests/widgets.

Helpers run code directly (not through the explorers) to get the truth.
Fixtures (import them into a test module to use them; there is deliberately no
conftest.py here, since tests/viz imports its own ``conftest`` by name):

``no_dot``      Graphviz's ``dot`` reported missing, caches cleared: drawings take
                the text-fallback path.  The exhaustive tests use it, because a
                ``dot`` run per state would make them slow; the drawing is then
                checked through ``explorer.drawing`` (its ``state`` and text).
``real_torch``  The real PyTorch module, or the test is skipped.
``grad_mode_restored`` (autouse where imported)  grad mode is on before and after.
"""

from __future__ import annotations

import itertools
import warnings

import pytest

import leafkit
from leafkit.widgets._oracle import as_torch  # noqa: F401 - leafkit code read as PyTorch code (the oracles' reading)
from leafkit.widgets.leaf_explorer import STEPS, WHEN

#: Every LeafExplorer chain the lessons can reach: length 0..3 over the six steps.
ALL_CHAINS = [list(c) for n in range(4) for c in itertools.product(STEPS, repeat=n)]
ALL_LEAF_STATES = [(rg, when, chain) for rg in (True, False) for when in WHEN for chain in ALL_CHAINS]


def execute(code, module=leafkit) -> dict:
    """``exec`` the code (a str or list of statements) with ``torch`` bound to ``module``."""
    ns = {"torch": module}
    src = code if isinstance(code, str) else "\n".join(code)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(src, ns)  # noqa: S102
    return ns


def execute_error(code, module=leafkit):
    """``(namespace, "Type: message" or None)``: run statements until one raises."""
    ns = {"torch": module}
    statements = [code] if isinstance(code, str) else list(code)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in statements:
            try:
                exec(s, ns)  # noqa: S102
            except Exception as exc:
                return ns, f"{type(exc).__name__}: {exc}"
    return ns, None


def fn_name(t):
    return (
        None if t.grad_fn is None else type(t.grad_fn).__name__ if not hasattr(t.grad_fn, "name") else t.grad_fn.name()
    )


def leaf_facts(t) -> tuple:
    """``(is_leaf, requires_grad, grad_fn name)``."""
    return bool(t.is_leaf), bool(t.requires_grad), fn_name(t)


def grad_repr(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = t.grad
    return None if g is None else repr(g.detach())


@pytest.fixture
def no_dot(monkeypatch):
    from leafkit.viz import _render, clear_svg_cache
    from leafkit.widgets import _view

    monkeypatch.setattr(_render, "dot_available", lambda: False)
    clear_svg_cache()
    _view.clear_caches()
    yield
    clear_svg_cache()
    _view.clear_caches()


@pytest.fixture
def real_torch():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def grad_mode_restored():
    """Every test starts and ends with grad mode on (an explorer must never leak no_grad)."""
    import leafkit

    assert leafkit.is_grad_enabled()
    yield
    assert leafkit.is_grad_enabled()
