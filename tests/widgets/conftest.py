"""Fixtures for the explorer tests (tests/widgets).

``no_dot``      Graphviz's ``dot`` reported missing, caches cleared: drawings take
                the text-fallback path.  The exhaustive tests use it, because a
                ``dot`` run per state would make them slow; the drawing is then
                checked through ``explorer.drawing`` (its ``state`` and text).
``real_torch``  The real PyTorch module, or the test is skipped.
``as_torch(code)``  leafkit code → the PyTorch code with the same leaf semantics:
                ``.cuda()`` becomes ``.double()`` and ``.to('cpu')`` ``.float()`` (a
                differentiable copy when the dtype changes, the same tensor when
                it does not, exactly like a device move on a GPU build).
"""
from __future__ import annotations

import pytest


def as_torch(code: str) -> str:
    return code.replace(".cuda()", ".double()").replace(".to('cpu')", ".float()")


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
def _grad_mode_restored():
    """Every test starts and ends with grad mode on (an explorer must never leak no_grad)."""
    import leafkit

    assert leafkit.is_grad_enabled()
    yield
    assert leafkit.is_grad_enabled()
