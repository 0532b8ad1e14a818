"""What every explorer shares: styled HTML pieces, the drawing pane, the base class.

Plain ipywidgets 8 only (``HTML``, boxes and the standard controls); no custom
JavaScript.  All styling is inline so it survives any notebook theme, and each
piece carries a ``lk-*`` CSS class so browser tests can find it.

A widget never shows a Python traceback: callbacks run inside
:meth:`Explorer._guard`, which turns an unexpected exception into a styled
message (and records it in :attr:`Explorer.internal_errors` for the tests).
Errors that are part of the lesson are shown with :func:`message_html`.

Languages: every explorer takes ``lang="en"`` or ``"zh"`` (``None``: the
package default, :func:`leafkit.set_language`).  Each explorer keeps its own
words in a ``TEXT = {"en": {...}, "zh": {...}}`` table in its own file; the
words shared by all of them (the legend, the cuda badge, the "Why" box) are in
:data:`BASE_TEXT` here.  In Chinese sentences code is marked with backticks
(`` `x.grad` ``) and shown in the code font; :func:`plain` removes the marks.

Controls: every explorer lists its controls under language-independent keys
(:meth:`Explorer.controls`), and can be driven by key (:meth:`Explorer.act`),
so that the tests, the browser driver and the benchmarks operate any explorer
the same way; :attr:`Explorer.TOUR` is a walk through its controls.
"""

from __future__ import annotations

import html
import re
from collections import OrderedDict

import ipywidgets as W

from leafkit._lang import language, resolve_language

__all__ = [
    "Explorer",
    "Control",
    "control_class",
    "DrawingPane",
    "code_html",
    "message_html",
    "table_html",
    "bool_html",
    "legend_html",
    "device_badge_html",
    "cuda_backend_note",
    "esc",
    "rich",
    "plain",
    "BASE_TEXT",
]

#: Words every explorer shares, per language.
BASE_TEXT = {
    "en": {
        "why": "Why: ",
        "problem_title": "The explorer hit a problem (not your code)",
        "problem_hint": "Change a control or run the cell again.",
        "no_dot_missing": "No drawing: Graphviz's dot is missing",
        "no_dot_failed": "No drawing: Graphviz's dot failed",
        "plain_repr": "<{name}: an interactive explorer; it needs a running Jupyter kernel with ipywidgets>",
        "legend_leaf": "leaf",
        "legend_nonleaf": "NON-LEAF (made by an op)",
        "legend_nograd": "requires_grad=False",
        "legend_fn": "backward node (grad_fn)",
        "legend_freed": "freed by backward()",
        "legend_new": "new / changed since last step",
        "legend_flip": "is_leaf flipped",
        "legend_share": "shares storage (detach)",
        "cuda_real": "cuda = a real GPU through CuPy ({name})",
        "cuda_simulated": "cuda is simulated in host memory (no GPU here); the autograd rules are the same",
        "cuda_off": "cuda is unavailable (simulation turned off with LEAFKIT_SIMULATE_CUDA=0)",
        "cuda_unknown": "cuda status unknown ({error})",
        "badge_cupy": "real GPU",
        "badge_simulated": "simulated GPU",
        "badge_none": "no cuda",
        "reset": "Reset",
    },
    "zh": {
        "why": "为什么：",
        "problem_title": "探索器出了问题（不是你的代码的问题）",
        "problem_hint": "换一个选项，或者重新运行这个单元格。",
        "no_dot_missing": "没有图：没有安装 Graphviz 的 dot",
        "no_dot_failed": "没有图：Graphviz 的 dot 出错了",
        "plain_repr": "<{name}：交互式探索器，需要正在运行的 Jupyter 内核和 ipywidgets>",
        "legend_leaf": "叶子张量",
        "legend_nonleaf": "非叶子张量（由运算产生）",
        "legend_nograd": "requires_grad=False",
        "legend_fn": "反向节点（grad_fn）",
        "legend_freed": "已被 backward() 释放",
        "legend_new": "上一步之后新出现 / 有变化",
        "legend_flip": "is_leaf 变了",
        "legend_share": "共享存储（detach）",
        "cuda_real": "cuda = 通过 CuPy 使用的真实 GPU（{name}）",
        "cuda_simulated": "cuda 是在主机内存里模拟的（这里没有 GPU），自动求导的规则完全一样",
        "cuda_off": "cuda 不可用（已用 LEAFKIT_SIMULATE_CUDA=0 关掉了模拟）",
        "cuda_unknown": "cuda 状态未知（{error}）",
        "badge_cupy": "真实 GPU",
        "badge_simulated": "模拟 GPU",
        "badge_none": "没有 cuda",
        "reset": "重置",
    },
}

FONT = "var(--jp-ui-font-family, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif)"
MONO = "var(--jp-code-font-family, 'DejaVu Sans Mono', Menlo, Consolas, monospace)"
TEXT = "#1f2328"
MUTED = "#57606a"
BLUE = "#1565c0"
RED = "#c62828"
GREEN = "#2e7d32"

_KINDS = {
    # kind: (border, background, title colour, icon)
    "error": ("#d32f2f", "#fdecea", "#b71c1c", "\u2716"),
    "warning": ("#ed6c02", "#fff4e5", "#8a4b00", "\u26a0"),
    "info": ("#0288d1", "#e5f6fd", "#01579b", "\u2139"),
    "ok": ("#2e7d32", "#edf7ed", "#1b5e20", "\u2714"),
}


def esc(s) -> str:
    """HTML-escape ``str(s)``."""
    return html.escape(str(s), quote=True)


_TICKS = re.compile(r"`([^`\n]+)`")


def rich(s) -> str:
    """Escaped text where `` `code` `` spans are shown in the code font (the Chinese sentences use them)."""
    return _TICKS.sub(
        lambda m: (
            f'<code style="font-family:{MONO};font-size:0.93em;background:#eef1f4;'
            f'padding:0 3px;border-radius:3px">{m.group(1)}</code>'
        ),
        esc(s),
    )


def plain(s) -> str:
    """The text without its `` `code` `` marks."""
    return _TICKS.sub(r"\1", str(s))


def code_html(code: str, title: str = "The code", marks: dict | None = None) -> str:
    """A code block with a small title.

    Parameters
    ----------
    code : str
        The program, one statement per line.
    title : str
        The caption above the block.
    marks : dict of int to (str, str), optional
        ``{line index: (kind, note)}``: a line to highlight (``kind`` is a key
        of the message styles, e.g. ``"error"``) with a short note after it.
    """
    marks = marks or {}
    lines = []
    for i, line in enumerate(code.split("\n")):
        if i in marks:
            kind, note = marks[i]
            border, bg, fg, icon = _KINDS.get(kind, _KINDS["info"])
            lines.append(
                f'<span style="background:{bg};display:inline-block;min-width:100%">'
                f'{esc(line)}   <span style="color:{fg};font-weight:600"># {icon} {esc(note)}'
                f"</span></span>"
            )
        else:
            lines.append(esc(line))
    return (
        f'<div class="lk-code-box" style="font-family:{FONT};margin:2px 0 6px 0">'
        f'<div style="font-size:12px;color:{MUTED};font-weight:600;text-transform:uppercase;'
        f'letter-spacing:.04em;margin-bottom:3px">{esc(title)}</div>'
        f'<pre class="lk-code" style="margin:0;padding:8px 12px;background:#f6f8fa;border:1px solid #d0d7de;'
        f"border-radius:6px;font-family:{MONO};font-size:13.5px;line-height:1.5;color:{TEXT};"
        f'white-space:pre-wrap;word-break:break-word">' + "\n".join(lines) + "</pre></div>"
    )


def message_html(
    kind: str, title: str, text: str = "", mono: bool = False, extra: str = "", marked: bool = False
) -> str:
    """A styled message box (never a traceback).

    Parameters
    ----------
    kind : {"error", "warning", "info", "ok"}
        The colour scheme.
    title : str
        A bold first line; `` `code` `` spans are shown in the code font.
    text : str
        The body; shown in a monospace font when ``mono`` (for PyTorch's error text).
    mono : bool
        Monospace body.
    extra : str
        Trusted HTML appended after the body.
    marked : bool
        Show `` `code` `` spans of a (non-mono) body in the code font, as in the title.
    """
    border, bg, fg, icon = _KINDS.get(kind, _KINDS["info"])
    body = ""
    if text:
        font = f"font-family:{MONO};font-size:12.5px" if mono else "font-size:13.5px"
        body = (
            f'<div class="lk-msg-text" style="{font};color:{TEXT};margin-top:3px;white-space:pre-wrap;'
            f'word-break:break-word">{rich(text) if marked and not mono else esc(text)}</div>'
        )
    return (
        f'<div class="lk-msg lk-msg-{esc(kind)}" style="font-family:{FONT};border-left:4px solid {border};'
        f'background:{bg};padding:7px 11px;margin:6px 0;border-radius:4px;line-height:1.45">'
        f'<div style="font-weight:700;color:{fg};font-size:13.5px">{icon} {rich(title)}</div>{body}{extra}</div>'
    )


def bool_html(value, strong_false: bool = False) -> str:
    """``True`` / ``False`` coloured as in the drawings (blue / grey, or red when ``strong_false``)."""
    if value is None:
        return f'<span style="color:{MUTED}">None</span>'
    if value:
        return f'<span style="color:{BLUE};font-weight:600">True</span>'
    color = RED if strong_false else MUTED
    weight = "700" if strong_false else "400"
    return f'<span style="color:{color};font-weight:{weight}">False</span>'


def table_html(
    columns, rows, title: str = "", css_class: str = "lk-table", highlight=None, compact: bool = False
) -> str:
    """An HTML table.

    Parameters
    ----------
    columns : sequence of str
        Header texts (escaped).
    rows : sequence of sequence of str
        Cell contents as *trusted HTML* (escape user text with :func:`esc`).
    title : str
        A caption above the table.
    highlight : set of int, optional
        Row indices drawn with an orange left border (e.g. rows that changed).
    compact : bool
        Narrower cells (6 px apart instead of 9), for tables with many columns.
    """
    highlight = highlight or set()
    pad = "4px 6px" if compact else "4px 9px"
    th = "".join(
        f'<th style="text-align:left;padding:{pad};border-bottom:2px solid #d0d7de;'
        f'font-weight:600;white-space:nowrap">{esc(c)}</th>'
        for c in columns
    )
    body = []
    for r, row in enumerate(rows):
        bg = "#ffffff" if r % 2 == 0 else "#f6f8fa"
        mark = "box-shadow:inset 4px 0 0 #ef6c00;" if r in highlight else ""
        tds = "".join(
            f'<td style="padding:{pad};border-bottom:1px solid #eaeef2;vertical-align:top;'
            f'{mark if i == 0 else ""}">{cell}</td>'
            for i, cell in enumerate(row)
        )
        body.append(f'<tr style="background:{bg}">{tds}</tr>')
    cap = (
        (
            f'<div style="font-size:12px;color:{MUTED};font-weight:600;text-transform:uppercase;'
            f'letter-spacing:.04em;margin-bottom:3px">{esc(title)}</div>'
        )
        if title
        else ""
    )
    return (
        f'<div class="{esc(css_class)}-box" style="font-family:{FONT};margin:2px 0 6px 0;overflow-x:auto">{cap}'
        f'<table class="{esc(css_class)}" style="border-collapse:collapse;font-size:13px;color:{TEXT};'
        f'line-height:1.35"><thead><tr>{th}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
    )


def mono(s) -> str:
    """Escaped text in the code font."""
    return f'<code style="font-family:{MONO};font-size:12.5px;background:none">{esc(s)}</code>'


def cuda_backend_note(lang: str = "en"):
    """``(backend, sentence)`` for the ``cuda`` device: real GPU, simulated, or unavailable."""
    words = BASE_TEXT[lang]
    try:
        import leafkit

        backend = leafkit.cuda.backend()
        if backend == "cupy":
            try:
                name = leafkit.cuda.get_device_name()
            except Exception:
                name = "GPU"
            return backend, words["cuda_real"].format(name=name)
        if backend == "simulated":
            return backend, words["cuda_simulated"]
        return backend, words["cuda_off"]
    except Exception as exc:  # never break an explorer over a badge
        return None, words["cuda_unknown"].format(error=type(exc).__name__)


def device_badge_html(lang: str = "en") -> str:
    """A small pill saying whether ``cuda`` is a real GPU (CuPy) or simulated."""
    words = BASE_TEXT[lang]
    backend, sentence = cuda_backend_note(lang)
    color = {"cupy": GREEN, "simulated": "#6a1b9a"}.get(backend, RED)
    label = {"cupy": words["badge_cupy"], "simulated": words["badge_simulated"]}.get(backend, words["badge_none"])
    return (
        f'<span class="lk-device lk-device-{esc(backend)}" title="{esc(sentence)}" '
        f'style="display:inline-block;font-family:{FONT};font-size:12px;padding:2px 9px;border-radius:10px;'
        f'border:1px solid {color};color:{color};background:#fff;white-space:nowrap">'
        f'<b>cuda:</b> {esc(label)}</span> <span style="font-size:12px;color:{MUTED}">{esc(sentence)}</span>'
    )


def _swatch(fill, border="#555", dashed=False, width=1.5) -> str:
    style = "dashed" if dashed else "solid"
    return (
        f'<span style="display:inline-block;width:14px;height:11px;background:{fill};border:{width}px '
        f'{style} {border};border-radius:3px;vertical-align:-1px;margin-right:4px"></span>'
    )


def legend_html(lang: str = "en") -> str:
    """The colour legend of the variables view, as wrapping HTML under the drawing."""
    words = BASE_TEXT[lang]
    items = [
        (_swatch("#add8e6"), words["legend_leaf"]),
        (_swatch("#caff70", "#1b5e20", width=2), words["legend_nonleaf"]),
        (_swatch("#ffffff", "#9e9e9e", dashed=True), words["legend_nograd"]),
        (_swatch("#d3d3d3"), words["legend_fn"]),
        (_swatch("#f2f2f2", "#9e9e9e", dashed=True), words["legend_freed"]),
        (_swatch("#ffffff", "#ef6c00", width=2.5), words["legend_new"]),
        (_swatch("#ffffff", "#d50000", width=2.5), words["legend_flip"]),
        ('<span style="color:#1565c0;margin-right:4px">- - \u25b7</span>', words["legend_share"]),
    ]
    spans = "".join(
        f'<span style="white-space:nowrap;margin:0 12px 2px 0;display:inline-block">{s}{esc(t)}</span>'
        for s, t in items
    )
    return (
        f'<div class="lk-legend" style="font-family:{FONT};font-size:11.5px;color:{MUTED};'
        f'line-height:1.5;margin-top:4px">{spans}</div>'
    )


# ------------------------------------------------------------------ drawing --
_HTML_CACHE: OrderedDict[tuple, tuple] = OrderedDict()
_HTML_CACHE_SIZE = 256
_SIZE_RE = re.compile(r'<svg\b([^>]*?)\swidth="([\d.]+)pt"\s+height="([\d.]+)pt"')


def fit_svg(svg: str, zoom: float = 1.0) -> str:
    """Inline-ready SVG: no XML prologue, pixel size times ``zoom``, shrinks to its box.

    Graphviz writes ``width="..pt" height="..pt"`` and a ``viewBox``; the pixel
    size keeps the fonts at their natural size, and ``max-width:100%`` with
    ``height:auto`` lets a narrow notebook scale the picture down evenly.
    """
    i = svg.find("<svg")
    if i > 0:
        svg = svg[i:]
    svg = re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)

    def repl(m):
        w = float(m.group(2)) * 4 / 3 * zoom
        h = float(m.group(3)) * 4 / 3 * zoom
        return (
            f'<svg{m.group(1)} width="{w:.0f}px" height="{h:.0f}px" '
            f'style="max-width:100%;height:auto;display:block;margin:0 auto"'
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

    Attributes
    ----------
    view : ipywidgets.HTML
        The widget (CSS class ``lk-drawing``).
    svg : str or None
        The SVG currently shown, ``None`` in the text fallback.
    fallback : bool
        True when the text fallback is shown.
    source : str
        The DOT source of the drawing shown.
    """

    def __init__(
        self, zoom: float = 1.0, caption: str = "", legend: bool = True, min_height: str = "120px", lang: str = "en"
    ):
        self.zoom = zoom
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
        from leafkit.viz._render import INSTALL_HINT, _failed_hint, _render, localize_hint

        if caption is not None:
            self.caption = caption
        src = _legendless_source(drawing)
        self.source = src
        key = (src, self.zoom)
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
                body = f'<div class="lk-svg" style="overflow:auto;max-width:100%">{fit_svg(svg, self.zoom)}</div>'
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
        cap = (
            f'<div style="font-family:{FONT};font-size:12px;color:{MUTED};font-weight:600;'
            f'text-transform:uppercase;letter-spacing:.04em;margin-bottom:3px">{esc(self.caption)}</div>'
            if self.caption
            else ""
        )
        legend = ""
        if self.legend and not self.fallback:
            legend = self.legend(self.lang) if callable(self.legend) else legend_html(self.lang)
        self.view.value = cap + body + legend

    def clear(self, note: str = "") -> None:
        """Show nothing (or a short note) instead of a drawing."""
        self.svg = None
        self.fallback = False
        self.source = ""
        self.view.value = (
            f'<div style="font-family:{FONT};color:{MUTED};font-size:13px">{esc(note)}</div>' if note else ""
        )


def clear_caches() -> None:
    """Forget the cached drawing HTML (the SVG cache lives in ``leafkit.viz``)."""
    _HTML_CACHE.clear()


# ------------------------------------------------------------------ controls --
def control_class(key: str) -> str:
    """The CSS class that marks the control ``key`` in the page (``"retain:z"`` → ``"lk-control-retain-3a-z"``).

    Browser tests find a control by it, whatever its language or its current label.
    """
    return "lk-control-" + re.sub(r"[^A-Za-z0-9_]", lambda m: f"-{ord(m.group()):x}-", key)


class Control:
    """One control of an explorer, under a key that is the same in every language.

    Attributes
    ----------
    key : str
        Language-independent name, e.g. ``"retain:z"``, ``"hook_on"``, ``"backward"``; in the
        page the widget carries the CSS class :func:`control_class` of it.
    widget : ipywidgets widget
        The control itself.
    kind : {"checkbox", "dropdown", "toggle", "button"}
        How a learner operates it.
    """

    KINDS = ("checkbox", "dropdown", "toggle", "button")

    def __init__(self, key: str, widget, kind: str):
        if kind not in self.KINDS:
            raise ValueError(f"kind must be one of {self.KINDS}, got {kind!r}")
        self.key = key
        self.widget = widget
        self.kind = kind

    @property
    def description(self) -> str:
        """What the learner reads on (or next to) the control, in the explorer's language."""
        return self.widget.description

    @property
    def enabled(self) -> bool:
        return not getattr(self.widget, "disabled", False)

    def options(self) -> list:
        """``[(label, value)]``: what a dropdown or toggle offers (``[]`` for the others)."""
        if self.kind in ("dropdown", "toggle"):
            return list(zip(self.widget._options_labels, self.widget._options_values))
        return []

    def values(self) -> list:
        """Every value the control can take (``[None]`` for a button: it is clicked)."""
        if self.kind == "checkbox":
            return [False, True]
        if self.kind == "button":
            return [None]
        return [v for _, v in self.options()]

    def label(self, value) -> str:
        """The option label of ``value`` (dropdown / toggle), as shown to the learner."""
        for lab, v in self.options():
            if v == value:
                return lab
        raise ValueError(f"{self.key}: no option with value {value!r}")

    @property
    def value(self):
        return None if self.kind == "button" else self.widget.value

    def __repr__(self):
        return f"<Control {self.key!r}: {self.kind} {self.description!r}>"


# ------------------------------------------------------------------ explorer --
class Explorer:
    """Base class: the views every explorer has, display delegation, guarded callbacks.

    Parameters
    ----------
    zoom : float, default 1.0
        Scale of the drawing.
    lang : {"en", "zh"} or None, default None
        The language of everything the explorer writes (``None``: the package
        default, :func:`leafkit.get_language`).  Code, PyTorch's messages and
        printed tensors are never translated.

    Raises
    ------
    ValueError
        ``lang`` is not None, ``"en"`` or ``"zh"``.

    Attributes
    ----------
    widget : ipywidgets.VBox
        The root widget (what a notebook displays); CSS classes ``lk-explorer``,
        the explorer's own class and ``lk-lang-en`` / ``lk-lang-zh``.
    lang : str
        ``"en"`` or ``"zh"``.
    code : str
        The program the current state runs, exactly as shown.
    rows : list of dict
        The table's data (one dict per row, plain Python values).
    explanation : str
        The sentence explaining the current result (without code marks).
    message : dict or None
        ``{"kind", "title", "text"}`` of the styled message shown (a lesson's
        error, e.g. PyTorch's RuntimeError text), or ``None``.
    drawing : leafkit.viz.VariablesDrawing or None
        The current variables-view drawing.
    internal_errors : list of Exception
        Unexpected exceptions caught in callbacks (always empty when all is well).
    code_view, table_view, explanation_view, message_view : ipywidgets.HTML
        The views of the above.
    drawing_pane : DrawingPane
        The drawing; ``drawing_view`` is its widget.

    Notes
    -----
    A subclass sets ``TEXT = {"en": {...}, "zh": {...}}`` (with at least
    ``"title"``, ``"subtitle"`` and ``"summary"``, the README line),
    ``css_class``, :attr:`TOUR`, and implements ``_controls()`` and ``_update()``.
    """

    #: The explorer's own words, per language (keys missing here come from :data:`BASE_TEXT`).
    TEXT: dict = {
        "en": {"title": "Explorer", "subtitle": "", "summary": ""},
        "zh": {"title": "探索器", "subtitle": "", "summary": ""},
    }
    #: A walk through the controls: ``(key, value)`` steps for :meth:`act` (the browser test,
    #: the benchmarks and the screenshots use it).  Each step changes what the explorer shows.
    TOUR: tuple = ()
    #: The code of a notebook cell that builds an example of this explorer, its last line the
    #: explorer (``torch`` is leafkit); ``None`` means the class called with no arguments.  The
    #: browser test runs it, :meth:`example` builds the same in Python.
    EXAMPLE = None
    _batch = False  # True while set_state() changes several controls: redraw once, at the end
    css_class = "lk-explorer"
    show_device = False

    def _on_change(self, change=None):
        """A control changed: redraw, unless a batch of changes is under way."""
        if not self._batch:
            self._update()

    def __init__(self, zoom: float = 1.0, lang=None):
        self.lang = resolve_language(lang)
        self.code = ""
        self.rows: list = []
        self.explanation = ""
        self.message = None
        self.drawing = None
        self.internal_errors: list = []
        self.code_view = W.HTML()
        self.code_view.add_class("lk-code-view")
        self.table_view = W.HTML()
        self.table_view.add_class("lk-table-view")
        self.explanation_view = W.HTML()
        self.explanation_view.add_class("lk-explanation")
        self.message_view = W.HTML()
        self.message_view.add_class("lk-message")
        self.drawing_pane = DrawingPane(zoom=zoom, lang=self.lang)
        self.drawing_view = self.drawing_pane.view
        self.header_view = W.HTML(self._header_html())
        self.widget = W.VBox()

    @classmethod
    def example_code(cls) -> str:
        """:attr:`EXAMPLE`, or ``"ClassName()"``."""
        return cls.EXAMPLE if cls.EXAMPLE is not None else f"{cls.__name__}()"

    @classmethod
    def example(cls, lang=None):
        """The explorer that :meth:`example_code` builds, in ``lang`` (``None``: the package default).

        The tests, the benchmarks and the browser driver build explorers this way, so an explorer
        that needs arguments (a graph to step through, say) is driven like any other.
        """
        import ast

        import leafkit

        tree = ast.parse(cls.example_code())
        *body, last = tree.body
        if not isinstance(last, ast.Expr):
            raise ValueError(f"{cls.__name__}.EXAMPLE must end with the expression that builds the explorer")
        ns = {"torch": leafkit, cls.__name__: cls}
        with language(resolve_language(lang)):
            exec(compile(ast.Module(body, type_ignores=[]), f"<{cls.__name__} example>", "exec"), ns)  # noqa: S102
            return eval(compile(ast.Expression(last.value), f"<{cls.__name__} example>", "eval"), ns)  # noqa: S307

    # -- words ----------------------------------------------------------
    def _t(self, key: str, **fields) -> str:
        """The explorer's text ``key`` in its language, formatted with ``fields``."""
        words = self.TEXT[self.lang]
        text = words[key] if key in words else BASE_TEXT[self.lang][key]
        return text.format(**fields) if fields else text

    @property
    def title(self) -> str:
        return self._t("title")

    @property
    def subtitle(self) -> str:
        return self._t("subtitle")

    # -- display --------------------------------------------------------
    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/plain" in bundle:  # what shows where widgets cannot render
            bundle["text/plain"] = self._t("plain_repr", name=type(self).__name__)
        return bundle

    @property
    def svg(self):
        """The SVG text of the drawing shown, or ``None`` (text fallback without ``dot``)."""
        return self.drawing_pane.svg

    # -- controls -------------------------------------------------------
    def _controls(self) -> list:  # pragma: no cover - every explorer overrides it
        return []

    def controls(self) -> dict:
        """``{key: Control}``: every control, under keys that are the same in every language."""
        return {c.key: c for c in self._controls()}

    def act(self, key: str, value=None) -> bool:
        """Operate one control as a learner would: tick, choose, press.

        Parameters
        ----------
        key : str
            A key of :meth:`controls`.
        value : optional
            The new value of a checkbox, dropdown or toggle (ignored for a button).

        Returns
        -------
        bool
            False when nothing could happen: a disabled control, or a value it already has.

        Raises
        ------
        KeyError
            An unknown key.
        ValueError
            A value the control does not offer.
        """
        c = self.controls()[key]
        if not c.enabled:
            return False
        if c.kind == "button":
            c.widget.click()
            return True
        if value not in c.values():
            raise ValueError(f"{key}: {value!r} is not one of {c.values()}")
        if c.widget.value == value:
            return False
        c.widget.value = value
        return True

    # -- layout ---------------------------------------------------------
    def _header_html(self) -> str:
        sub = (
            f'<div style="font-size:13px;color:{MUTED};margin-top:1px">{esc(self.subtitle)}</div>'
            if self.subtitle
            else ""
        )
        dev = f'<div style="margin-top:4px">{device_badge_html(self.lang)}</div>' if self.show_device else ""
        return (
            f'<div style="font-family:{FONT};color:{TEXT}"><div style="font-size:16px;font-weight:700">'
            f"{esc(self.title)}</div>{sub}{dev}</div>"
        )

    def _classes(self) -> None:
        self.widget.add_class("lk-explorer")
        self.widget.add_class(self.css_class)
        self.widget.add_class(f"lk-lang-{self.lang}")
        for c in self._controls():
            c.widget.add_class(control_class(c.key))

    def _assemble(self, controls, left_extra=(), right_extra=(), left_width="650px"):
        """Lay out header, controls; then code, table, messages beside the drawing.

        The left column (code, table, messages) is ``left_width`` wide (it
        may shrink to 460 px); the drawing takes the rest and scales down to
        fit it; when less than 320 px are left (a narrow notebook) the drawing
        wraps below, centred.
        """
        left = W.VBox(
            [self.code_view, self.table_view, self.message_view, self.explanation_view, *left_extra],
            layout=W.Layout(flex=f"0 1 {left_width}", min_width="460px", max_width="100%", padding="0 18px 0 0"),
        )
        right = W.VBox([self.drawing_view, *right_extra], layout=W.Layout(flex="1 1 320px", min_width="320px"))
        self._left_column = left
        self._left_basis = int(str(left_width).rstrip("px"))
        body = W.HBox(
            [left, right],
            layout=W.Layout(width="100%", flex_flow="row wrap", align_items="flex-start", justify_content="center"),
        )
        ctl = W.VBox(list(controls), layout=W.Layout(margin="6px 0 8px 0"))
        self.widget.children = [self.header_view, ctl, body]
        self.widget.layout = W.Layout(
            width="100%", max_width="1280px", padding="10px 14px", border="1px solid #d0d7de", margin="4px 0"
        )
        self._classes()

    # -- rendering helpers ----------------------------------------------
    def _set_message(self, kind=None, title="", text="", mono=True, extra=""):
        if kind is None:
            self.message = None
            self.message_view.value = ""
        else:
            self.message = {"kind": kind, "title": plain(title), "text": plain(text) if not mono else text}
            self.message_view.value = message_html(kind, title, text, mono=mono, extra=extra, marked=not mono)

    def _set_explanation(self, sentence: str, notes=()) -> None:
        self.explanation = plain(sentence)
        extra = "".join(f'<div style="font-size:12.5px;color:{MUTED};margin-top:3px">{rich(n)}</div>' for n in notes)
        self.explanation_view.value = (
            f'<div class="lk-explain" style="font-family:{FONT};font-size:14px;line-height:1.5;color:{TEXT};'
            f'border-left:4px solid {BLUE};background:#f3f8fd;padding:7px 11px;margin:6px 0;border-radius:4px">'
            f'<span style="font-weight:700;color:{BLUE}">{esc(self._t("why"))}</span>{rich(sentence)}{extra}</div>'
        )

    def _show_drawing(self, drawing, caption=None) -> None:
        self.drawing = drawing
        self.drawing_pane.show(drawing, caption=caption)
        if self.WIDE_DRAWINGS:
            self._fit_drawing_column()

    #: True: a drawing wider than its column claims room from the left column (see
    #: :meth:`_fit_drawing_column`).  Off for explorers whose left column holds wide controls.
    WIDE_DRAWINGS = False
    #: The narrowest the left column's flex basis becomes for a wide drawing, in pixels.
    WIDE_DRAWING_LEFT_MIN = 520

    def _fit_drawing_column(self) -> None:
        """Narrow the left column's flex basis when the drawing is wider than the room it would get.

        The explorer is at most 1280 px wide (about 1250 inside); with the left column at its full
        basis (650-700 px) a wide graph, such as five ``SelectBackward0`` side by side, was scaled to
        about 480 px and its labels became too small to read.  The left basis becomes 1250 px minus
        the drawing's natural width, but not less than ``WIDE_DRAWING_LEFT_MIN``.  (A flex basis, not
        a width: the two columns still share a narrower notebook as before, and only wrap below each
        other where both minimum widths do not fit.)  The basis only shrinks, so that stepping through
        one graph, whose edge labels come and go, does not move the columns back and forth.
        """
        left = getattr(self, "_left_column", None)
        svg = self.drawing_pane.svg
        if left is None or not svg:
            return
        m = _SIZE_RE.search(svg)
        if m is None:
            return
        width = float(m.group(2)) * 4 / 3 * self.drawing_pane.zoom
        full = self._left_basis
        basis = int(max(self.WIDE_DRAWING_LEFT_MIN, min(full, 1250 - width)))
        if basis < getattr(self, "_left_now", full):
            self._left_now = basis
            left.layout.flex = f"0 1 {basis}px"

    # -- safety ---------------------------------------------------------
    def _guard(self, fn):
        """Wrap a callback so that no exception ever reaches the notebook as a traceback."""

        def wrapped(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - shown as a styled message instead
                self.internal_errors.append(exc)
                try:
                    self.message = {"kind": "error", "title": self._t("problem_title"), "text": str(exc)}
                    self.message_view.value = message_html(
                        "error",
                        self._t("problem_title"),
                        f"{type(exc).__name__}: {exc}\n{self._t('problem_hint')}",
                        mono=True,
                    )
                except Exception:
                    pass
                return None

        wrapped.__wrapped__ = fn
        return wrapped

    def refresh(self) -> None:
        """Re-run the current state's code and redraw everything."""
        self._guard(self._update)()

    def _update(self) -> None:  # pragma: no cover - every explorer overrides it
        raise NotImplementedError
