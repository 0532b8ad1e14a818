"""The drawing pane of an explorer: a viz drawing shown as inline SVG, cached, with its legend.

Without Graphviz's ``dot`` the pane shows the drawing's text tree and the installation hint from
:mod:`leafkit.viz`; when ``dot`` is installed but fails, the text tree and what ``dot`` said.
"""

from __future__ import annotations

import re
from collections import OrderedDict

import ipywidgets as W

from leafkit.viz._render import INSTALL_HINT, _failed_hint, _render, localize_hint

from ._html import FONT, MONO, MUTED, caption_html, esc, legend_html, message_html
from ._words import BASE_TEXT

__all__ = ["DrawingPane", "fit_svg", "clear_caches", "svg_width"]

_HTML_CACHE: OrderedDict[tuple, tuple] = OrderedDict()
_HTML_CACHE_SIZE = 256
_SIZE_RE = re.compile(r'<svg\b([^>]*?)\swidth="([\d.]+)pt"\s+height="([\d.]+)pt"')


def fit_svg(svg: str, zoom: float = 1.0, max_height=None) -> str:
    """Inline-ready SVG: no XML prologue, pixel size times ``zoom``, shrinks to its box.

    Graphviz writes ``width="..pt" height="..pt"`` and a ``viewBox``; the pixel
    size keeps the fonts at their natural size, and ``max-width:100%`` with
    ``height:auto`` lets a narrow notebook scale the picture down evenly.
    ``max_height`` (a CSS length) also scales down, evenly, a picture taller than that.
    """
    tall = f";width:auto;max-height:{max_height}" if max_height else ""
    i = svg.find("<svg")
    if i > 0:
        svg = svg[i:]
    svg = re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)

    def repl(m):
        w = float(m.group(2)) * 4 / 3 * zoom
        h = float(m.group(3)) * 4 / 3 * zoom
        return (
            f'<svg{m.group(1)} width="{w:.0f}px" height="{h:.0f}px" '
            f'style="max-width:100%;height:auto;display:block;margin:0 auto{tall}"'
        )

    return _SIZE_RE.sub(repl, svg, count=1)


def _legendless_source(drawing) -> str:
    """DOT source of a drawing without its long legend caption (shown as HTML instead)."""
    dg = getattr(drawing, "digraph", None)
    if dg is None:
        return getattr(drawing, "source", str(drawing))
    if "label" not in dg.graph_attr:
        return dg.source
    attrs = dict(dg.graph_attr)
    try:
        del dg.graph_attr["label"]
        return dg.source
    finally:
        dg.graph_attr.clear()
        dg.graph_attr.update(attrs)


class DrawingPane:
    """An ``ipywidgets.HTML`` that shows a viz drawing as inline SVG.

    Renderings are cached by DOT source (the SVG by :func:`leafkit.viz.render_svg`,
    the final HTML here), so toggling back to a state already seen costs a dict
    lookup.  Without Graphviz's ``dot`` the pane shows the drawing's text tree
    and the installation hint from :mod:`leafkit.viz`; when ``dot`` is
    installed but fails, the text tree and what ``dot`` said.

    Parameters
    ----------
    legend : bool or callable, default True
        The legend under the drawing: the variables view's (:func:`legend_html`) when True, none
        when False, or ``legend(lang)`` (trusted HTML) for a drawing of another kind.
    separate_legend : bool, default False
        Write the legend into :attr:`legend_view`, a widget of its own that the explorer places
        where it likes (the stepper puts it beside the drawing, under the sentence), instead of
        under the drawing.
    max_height : str or None, default None
        A CSS height: a taller drawing is scaled down, evenly, to that height (so that it stays
        in view beside what explains it).  ``None``: the drawing takes the height it needs.

    Attributes
    ----------
    view : ipywidgets.HTML
        The widget (CSS class ``lk-drawing``).
    legend_view : ipywidgets.HTML
        The legend when ``separate_legend`` (CSS class ``lk-legend-view``); empty otherwise.
    svg : str or None
        The SVG currently shown, ``None`` in the text fallback.
    fallback : bool
        True when the text fallback is shown.
    source : str
        The DOT source of the drawing shown.
    """

    def __init__(
        self,
        zoom: float = 1.0,
        caption: str = "",
        legend: bool = True,
        min_height: str = "120px",
        lang: str = "en",
        max_height=None,
        separate_legend: bool = False,
    ):
        self.zoom = zoom
        self.max_height = max_height
        self.separate_legend = separate_legend
        self.legend_view = W.HTML()
        self.legend_view.add_class("lk-legend-view")
        self.caption = caption
        self.legend = legend
        self.lang = lang
        self.view = W.HTML(layout=W.Layout(min_height=min_height))
        self.view.add_class("lk-drawing")
        self.svg = None
        self.fallback = False
        self.source = ""

    def show(self, drawing, caption: str | None = None) -> None:
        """Render ``drawing`` (a ``VariablesDrawing``, ``graphviz.Digraph`` or DOT text) into the pane."""
        if caption is not None:
            self.caption = caption
        src = _legendless_source(drawing)
        self.source = src
        key = (src, self.zoom, self.max_height)
        hit = _HTML_CACHE.get(key)
        if hit is not None:
            _HTML_CACHE.move_to_end(key)
            svg, body = hit
        else:
            try:
                svg, why = _render(src)
            except Exception as e:  # never a traceback in a notebook
                svg, why = None, _failed_hint(f"{type(e).__name__}: {e}")
            if svg is not None:
                picture = fit_svg(svg, self.zoom, self.max_height)
                body = f'<div class="lk-svg" style="overflow:auto;max-width:100%">{picture}</div>'
                _HTML_CACHE[key] = (svg, body)
                while len(_HTML_CACHE) > _HTML_CACHE_SIZE:
                    _HTML_CACHE.popitem(last=False)
            else:  # no dot, or dot failed: text tree + why, never cached (dot may be installed later)
                try:
                    text = drawing.text
                except Exception:
                    text = src
                words = BASE_TEXT[self.lang]
                body = (
                    f'<pre class="lk-text-drawing" style="font-family:{MONO};font-size:12.5px;line-height:1.35;'
                    f"background:#fafafa;border:1px dashed #bdbdbd;border-radius:6px;padding:8px 10px;"
                    f'margin:0;white-space:pre;overflow-x:auto">{esc(text)}</pre>'
                    + message_html(
                        "warning",
                        words["no_dot_missing"] if why == INSTALL_HINT else words["no_dot_failed"],
                        localize_hint(why, self.lang),
                    )
                )
        self.svg = svg
        self.fallback = svg is None
        cap = caption_html(self.caption) if self.caption else ""
        legend = ""
        if self.legend and not self.fallback:
            legend = self.legend(self.lang) if callable(self.legend) else legend_html(self.lang)
        if self.separate_legend:
            self.legend_view.value, legend = legend, ""
        self.view.value = cap + body + legend

    def clear(self, note: str = "") -> None:
        """Show nothing (or a short note) instead of a drawing."""
        self.svg = None
        self.fallback = False
        self.source = ""
        self.legend_view.value = ""
        self.view.value = (
            f'<div style="font-family:{FONT};color:{MUTED};font-size:13px">{esc(note)}</div>' if note else ""
        )


def clear_caches() -> None:
    """Forget the cached drawing HTML (the SVG cache lives in ``leafkit.viz``)."""
    _HTML_CACHE.clear()


def svg_width(svg: str, zoom: float = 1.0):
    """The width in pixels that :func:`fit_svg` gives a Graphviz SVG, or ``None`` when it names none."""
    m = _SIZE_RE.search(svg or "")
    return None if m is None else float(m.group(2)) * 4 / 3 * zoom
