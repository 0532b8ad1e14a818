"""Display: SVG via dot (cached), and the text fallback when dot is missing."""

from __future__ import annotations

import shutil

import graphviz
import pytest

import leafkit.viz._render as R
from leafkit.viz import INSTALL_HINT, clear_svg_cache, draw, make_dot, render_svg

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def graph(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = x.detach()
    z = (x**2).sum()
    return x, y, z


def test_text_fallback_without_dot(tk, monkeypatch):
    monkeypatch.setattr(R.shutil, "which", lambda name: None)
    clear_svg_cache()
    x, y, z = graph(tk)
    dg = make_dot(z, params={"x": x})
    bundle = dg._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    text = bundle["text/plain"]
    assert text.startswith("output () (output)\n\u2514\u2500 SumBackward0\n   \u2514\u2500 PowBackward0\n")
    assert "x (1,) (leaf)" in text
    for words in ("apt install graphviz", "brew install graphviz", "conda install graphviz"):
        assert words in INSTALL_HINT and words in bundle["text/html"]
    assert "<pre" in bundle["text/html"]
    assert dg._repr_svg_() is None
    d = draw(x=x, y=y, z=z)
    b = d._repr_mimebundle_()
    assert "shares storage with (no gradient): x" in b["text/plain"]
    assert "z [NON-LEAF]" in b["text/plain"]


def test_text_fallback_when_dot_fails(tk, monkeypatch):
    """dot on PATH but failing (broken install): still no traceback."""

    def boom(*a, **k):
        raise graphviz.ExecutableNotFound(["dot"])

    monkeypatch.setattr(R.graphviz, "pipe", boom)
    clear_svg_cache()
    x, y, z = graph(tk)
    bundle = make_dot(z)._repr_mimebundle_()
    assert "SumBackward0" in bundle["text/plain"] and INSTALL_HINT in bundle["text/plain"]


def test_ipython_formatter_never_raises(tk, monkeypatch):
    formatters = pytest.importorskip("IPython.core.formatters")
    monkeypatch.setattr(R.shutil, "which", lambda name: None)
    clear_svg_cache()
    x, y, z = graph(tk)
    data, _ = formatters.DisplayFormatter().format(draw(x=x, z=z))
    assert "text/html" in data and "Graphviz" in data["text/html"]


@needs_dot
def test_svg_rendering_and_cache(tk):
    clear_svg_cache()
    x, y, z = graph(tk)
    dg = make_dot(z, params={"x": x})
    svg = render_svg(dg)
    assert svg is not None and "<svg" in svg and "SumBackward0" in svg
    assert render_svg(dg.source) is svg  # cached by source
    bundle = dg._repr_mimebundle_()
    assert bundle["image/svg+xml"] is svg
    d = draw(x=x, y=y, z=z)
    assert "<svg" in d._repr_svg_() and "shares storage" in d._repr_svg_()
    assert d.pipe("png")[:4] == b"\x89PNG"


@needs_dot
def test_cache_is_bounded(monkeypatch):
    clear_svg_cache()
    monkeypatch.setattr(R, "SVG_CACHE_SIZE", 3)
    for i in range(6):
        render_svg(f"digraph {{ a{i} }}")
    assert len(R._SVG_CACHE) == 3


def test_dot_that_fails_is_not_reported_as_missing(tk, monkeypatch):
    """dot installed but failing: the text view says what dot said, not "install Graphviz"."""

    def fail(*a, **k):
        raise graphviz.CalledProcessError(
            1, ["dot", "-Tsvg"], output=b"", stderr=b"Error: syntax error in line 1\n... <B></B> ...\n"
        )

    monkeypatch.setattr(R.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(R.graphviz, "pipe", fail)
    clear_svg_cache()
    x, y, z = graph(tk)
    bundle = make_dot(z)._repr_mimebundle_()
    assert "SumBackward0" in bundle["text/plain"]
    assert INSTALL_HINT not in bundle["text/plain"] and "not installed" not in bundle["text/plain"]
    assert (
        "Graphviz's `dot` program is installed but failed to draw this graph, so this is a text view of it. "
        "It said: Error: syntax error in line 1 ... <B></B> ..."
    ) in bundle["text/plain"]
    assert "&lt;B&gt;&lt;/B&gt;" in bundle["text/html"]
    assert render_svg(make_dot(z)) is None  # render_svg still never raises


@needs_dot
def test_real_dot_failure_shows_its_error():
    clear_svg_cache()
    bundle = R.display_bundle("digraph { a [label=<<B></B>>] }", lambda: "a")
    assert "image/svg+xml" not in bundle
    assert "installed but failed" in bundle["text/plain"] and "syntax error" in bundle["text/plain"]
    assert INSTALL_HINT not in bundle["text/plain"]


@needs_dot
def test_draw_with_an_empty_name_renders(tk):
    clear_svg_cache()
    x = tk.ones(2, requires_grad=True)
    y = (x * 2).sum()
    d = draw({"": y, "x": x})
    bundle = d._repr_mimebundle_()
    assert "image/svg+xml" in bundle, bundle.get("text/plain")
    assert d.pipe()[:5] in (b"<?xml", b"<svg ")
