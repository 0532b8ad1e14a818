"""What every explorer shares: construction without a browser, display delegation, the text
fallback without Graphviz's ``dot``, no tracebacks, the cuda badge, the rendering cache."""
from __future__ import annotations

import pytest

import leafkit
from leafkit.viz import INSTALL_HINT, clear_svg_cache
from leafkit.widgets import BackwardExplorer, DetachExplorer, GradModeExplorer, LeafExplorer, LeafQuiz
from leafkit.widgets import _view
from widget_checks import grad_mode_restored  # noqa: F401 (fixture)

EXPLORERS = [LeafExplorer, GradModeExplorer, BackwardExplorer, DetachExplorer, LeafQuiz]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _poke(ex):
    """One learner action per explorer, so that each redraws at least once."""
    if isinstance(ex, LeafExplorer):
        ex.steps[2].value = "+ 2"
    elif isinstance(ex, GradModeExplorer):
        ex.no_grad.value = True
    elif isinstance(ex, BackwardExplorer):
        ex.backward_button.click()
    elif isinstance(ex, DetachExplorer):
        ex.buttons["z = x ** 2"].click()
    else:
        ex.check_button.click()


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_constructible_and_displayable_without_a_browser(cls):
    ex = cls()
    bundle = ex._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and bundle[WIDGET_VIEW]["model_id"] == ex.widget.model_id
    assert bundle["text/plain"].startswith(f"<{cls.__name__}: an interactive explorer")
    assert callable(ex._ipython_display_)
    assert "lk-explorer" in ex.widget._dom_classes
    assert ex.code
    _poke(ex)
    assert ex.internal_errors == []


def test_the_public_api_is_exported():
    import leafkit.widgets as w

    assert w.__all__ == ["LeafExplorer", "GradModeExplorer", "BackwardExplorer", "DetachExplorer", "LeafQuiz"]
    assert leafkit.widgets.LeafExplorer is LeafExplorer


@pytest.mark.parametrize("cls", EXPLORERS[:4], ids=lambda c: c.__name__)
def test_text_fallback_without_dot(monkeypatch, cls):
    """No ``dot`` on PATH: the widget shows the text tree and the install hint, never an error."""
    monkeypatch.setenv("PATH", "/nonexistent")
    clear_svg_cache()
    _view.clear_caches()
    ex = cls()
    _poke(ex)
    assert ex.internal_errors == []
    assert ex.svg is None and ex.drawing_pane.fallback
    html = ex.drawing_view.value
    assert "lk-text-drawing" in html and "<svg" not in html
    assert "dot is missing" in html and _view.esc(INSTALL_HINT) in html
    for name in ex.drawing.state["variables"]:
        assert name in html
    monkeypatch.undo()  # dot is back: the next rendering is an SVG again
    ex.refresh()
    assert ex.svg is not None and "<svg" in ex.drawing_view.value


def test_an_internal_failure_is_a_styled_message_not_a_traceback(monkeypatch):
    from leafkit.widgets import leaf_explorer

    ex = LeafExplorer()

    def broken(*a, **k):
        raise KeyError("boom")

    monkeypatch.setattr(leaf_explorer, "run_chain", broken)
    ex.requires_grad.value = False  # must not raise
    assert len(ex.internal_errors) == 1 and isinstance(ex.internal_errors[0], KeyError)
    assert "The explorer hit a problem" in ex.message_view.value
    assert "Traceback" not in ex.message_view.value
    monkeypatch.undo()
    ex.requires_grad.value = True
    assert ex.message is None and ex.message_view.value == ""


def test_cuda_badge_says_simulated_or_real(monkeypatch):
    backend = leafkit.cuda.backend()
    ex = LeafExplorer()
    if backend == "simulated":
        assert "simulated GPU" in ex.header_view.value and "host memory" in ex.header_view.value
    monkeypatch.setattr(leafkit.cuda, "backend", lambda: "cupy")
    monkeypatch.setattr(leafkit.cuda, "get_device_name", lambda device=None: "NVIDIA H200")
    html = _view.device_badge_html()
    assert "real GPU" in html and "NVIDIA H200" in html and "lk-device-cupy" in html
    monkeypatch.setattr(leafkit.cuda, "backend", lambda: None)
    assert "no cuda" in _view.device_badge_html()


@pytest.mark.gpu
def test_real_gpu_device_in_the_table():
    ex = LeafExplorer(requires_grad=True, steps=["cuda()"])
    assert leafkit.cuda.backend() == "cupy"
    assert ex.rows[-1]["device"] == "cuda:0" and "real GPU" in ex.header_view.value
    assert ex.rows[-1]["grad_fn"] == "ToCopyBackward0"


def test_renderings_are_cached_by_dot_source():
    _view.clear_caches()
    ex = LeafExplorer(requires_grad=True, steps=["clone()"])
    pane = ex.drawing_pane
    n = len(_view._HTML_CACHE)
    pane.show(ex.drawing)
    assert len(_view._HTML_CACHE) == n  # same source: served from the cache
    ex.requires_grad.value = False
    ex.requires_grad.value = True
    ex.requires_grad.value = False
    size = len(_view._HTML_CACHE)
    ex.requires_grad.value = True
    ex.requires_grad.value = False  # the same transitions again: no new rendering
    assert len(_view._HTML_CACHE) == size


def test_fit_svg_strips_the_prologue_and_sizes_in_pixels():
    svg = ('<?xml version="1.0"?>\n<!DOCTYPE svg>\n<!-- Generated by graphviz -->\n'
           '<svg width="150pt" height="75pt" viewBox="0.00 0.00 150.00 75.00" xmlns="http://www.w3.org/2000/svg">'
           '<g/></svg>')
    out = _view.fit_svg(svg)
    assert out.startswith("<svg") and 'width="200px" height="100px"' in out and "max-width:100%" in out
    assert "Generated" not in out
    assert 'width="100px" height="50px"' in _view.fit_svg(svg, zoom=0.5)


def test_messages_escape_their_text():
    html = _view.message_html("error", "t.backward() raises", "RuntimeError: <b>x</b> & y")
    assert "&lt;b&gt;" in html and "<b>x</b>" not in html and "lk-msg-error" in html
    code = _view.code_html("a = 1\nb = a < 2", marks={1: ("error", "raised")})
    assert "a &lt; 2" in code and "raised" in code


def test_pane_says_dot_failed_not_missing(monkeypatch):
    """``dot`` on PATH but failing: the pane quotes its error instead of the install hint."""
    import graphviz

    import leafkit.viz._render as R

    def fail(*a, **k):
        raise graphviz.CalledProcessError(1, ["dot"], output=b"", stderr=b"Error: something broke")
    monkeypatch.setattr(R.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(R.graphviz, "pipe", fail)
    clear_svg_cache()
    _view.clear_caches()
    ex = LeafExplorer()
    assert ex.internal_errors == [] and ex.drawing_pane.fallback
    html = ex.drawing_view.value
    assert "dot failed" in html and "Error: something broke" in html
    assert "dot is missing" not in html and _view.esc(INSTALL_HINT) not in html
    monkeypatch.undo()
    clear_svg_cache()
    ex.refresh()
    assert ex.svg is not None
