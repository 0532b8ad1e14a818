"""Rendering with Graphviz's ``dot``, an SVG cache, and the text fallback.

A drawing never raises at a learner: when the ``dot`` program is missing,
notebooks show a text tree of the graph and one sentence on how to install
Graphviz; when ``dot`` is installed but fails, the text tree and what ``dot``
said.  SVG renderings are cached by DOT source in a small LRU dict,
so toggling back and forth between states in an explorer costs a dictionary
lookup, not a ``dot`` run.
"""

from __future__ import annotations

import html
import shutil
from collections import OrderedDict

import graphviz

__all__ = [
    "INSTALL_HINT",
    "dot_available",
    "render_svg",
    "clear_svg_cache",
    "display_bundle",
    "AutogradDigraph",
    "SVG_CACHE_SIZE",
    "localize_hint",
]

INSTALL_HINT = (
    "Graphviz's `dot` program is not installed, so this is a text view of the graph; "
    "to see the picture, install Graphviz (`apt install graphviz`, "
    "`brew install graphviz` or `conda install graphviz`) and run the cell again."
)
INSTALL_HINT_ZH = (
    "没有安装 Graphviz 的 `dot` 程序，所以这里显示的是图的文字版；想看图，请先安装 Graphviz"
    "（`apt install graphviz`、`brew install graphviz` 或 `conda install graphviz`），"
    "再重新运行这个单元格。"
)
_FAILED = "Graphviz's `dot` program is installed but failed to draw this graph, so this is a text view of it."
_FAILED_ZH = "Graphviz 的 `dot` 程序已经安装，但画这张图时出错了，所以这里显示的是图的文字版。"

SVG_CACHE_SIZE = 128
_SVG_CACHE: OrderedDict[tuple, str] = OrderedDict()


def dot_available() -> bool:
    """True when Graphviz's ``dot`` executable is on ``PATH``."""
    return shutil.which("dot") is not None


def clear_svg_cache() -> None:
    """Forget every cached SVG rendering."""
    _SVG_CACHE.clear()


def render_svg(source, engine: str = "dot"):
    """Render DOT source (or a ``graphviz.Digraph``) to SVG text, with caching.

    Parameters
    ----------
    source : str or graphviz.Digraph
        The DOT source, or a graph whose ``.source`` is used.
    engine : str, default ``"dot"``
        The Graphviz layout program.

    Returns
    -------
    str or None
        The SVG document, or ``None`` when ``dot`` is not installed or failed.
        Never raises for a missing or failing Graphviz.
    """
    return _render(source, engine)[0]


def _render(source, engine: str = "dot"):
    """``(svg, None)``, or ``(None, why)``: ``why`` is :data:`INSTALL_HINT` when ``dot`` is
    missing, else a sentence quoting what ``dot`` said when it failed."""
    src = getattr(source, "source", source)
    key = (engine, src)
    svg = _SVG_CACHE.get(key)
    if svg is not None:
        _SVG_CACHE.move_to_end(key)
        return svg, None
    if not dot_available():
        return None, INSTALL_HINT
    try:
        svg = graphviz.pipe(engine, "svg", src.encode("utf-8"), quiet=True).decode("utf-8")
    except graphviz.ExecutableNotFound:
        return None, INSTALL_HINT
    except graphviz.CalledProcessError as e:
        return None, _failed_hint(e.stderr)
    except (OSError, ValueError) as e:
        return None, _failed_hint(str(e))
    _SVG_CACHE[key] = svg
    while len(_SVG_CACHE) > SVG_CACHE_SIZE:
        _SVG_CACHE.popitem(last=False)
    return svg, None


def _failed_hint(err) -> str:
    """The sentence shown when ``dot`` is installed but could not draw the graph."""
    if isinstance(err, bytes):
        err = err.decode("utf-8", "replace")
    err = " ".join(str(err or "").split())
    if len(err) > 500:
        err = err[:500] + " ..."
    said = f" It said: {err}" if err else ""
    return _FAILED + said


def localize_hint(why: str, lang: str = "en") -> str:
    """The sentence on a missing or failing ``dot`` in ``lang`` (``"en"`` returns it unchanged).

    ``dot``'s own error text is quoted as it is, in both languages.
    """
    if lang != "zh" or not why:
        return why
    if why == INSTALL_HINT:
        return INSTALL_HINT_ZH
    if why.startswith(_FAILED):
        said = why[len(_FAILED) :].strip()
        if said.startswith("It said: "):
            said = said[len("It said: ") :]
        return _FAILED_ZH + (f"它的输出：{said}" if said else "")
    return why


def display_bundle(source, text_fn, include=None, exclude=None, lang: str = "en") -> dict:
    """The IPython mimebundle for a drawing: SVG, or the text tree plus one sentence on why.

    The sentence (in ``lang``) says how to install Graphviz when ``dot`` is
    missing, and quotes ``dot``'s error when it is installed but failed.
    ``text_fn`` is called only when the text view is needed.
    """
    try:
        svg, why = _render(source)
    except Exception as e:  # never a traceback in a notebook
        svg, why = None, _failed_hint(f"{type(e).__name__}: {e}")
    if svg is not None:
        bundle = {"image/svg+xml": svg, "text/plain": "<leafkit drawing>"}
    else:
        why = localize_hint(why, lang)
        try:
            text = text_fn()
        except Exception:
            text = "（这张图无法写成文字）" if lang == "zh" else "(the graph could not be summarised as text)"
        bundle = {
            "text/plain": text + "\n\n" + why,
            "text/html": (
                '<pre style="line-height:1.25">' + html.escape(text) + "</pre>"
                '<p style="color:#8a6d3b">' + html.escape(why) + "</p>"
            ),
        }
    if include is not None:
        inc = set(include)
        bundle = {k: v for k, v in bundle.items() if k in inc}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in set(exclude)}
    return bundle


class AutogradDigraph(graphviz.Digraph):
    """A ``graphviz.Digraph`` that displays safely in notebooks.

    It is a plain ``graphviz.Digraph`` (``source``, ``pipe``, ``render``,
    ``view`` all work), with two additions: SVG renderings are cached by
    source, and without Graphviz's ``dot`` it displays as a readable text tree
    (:attr:`text`) plus one sentence on installing Graphviz instead of raising
    ``graphviz.ExecutableNotFound``.
    """

    _lk_text_fn = None
    _lk_lang = "en"

    @property
    def text(self) -> str:
        """The graph as an indented text tree (what is shown without ``dot``)."""
        fn = self._lk_text_fn
        return fn() if fn is not None else self.source

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        return display_bundle(self.source, lambda: self.text, include, exclude, self._lk_lang)

    def _repr_svg_(self):
        return render_svg(self.source)

    def _repr_image_svg_xml(self):
        return render_svg(self.source)
