"""The HTML pieces every explorer draws with: code blocks, tables, messages, legends, badges.

Plain strings only (no ipywidgets here): each function returns trusted HTML that an explorer puts
into an ``ipywidgets.HTML``.  All styling is inline, so it survives any notebook theme, and each
piece carries a ``lk-*`` CSS class so that browser tests can find it.

In Chinese sentences code is marked with backticks (`` `x.grad` ``): :func:`rich` shows those spans
in the code font and :func:`plain` removes the marks.  Headings are never upper-cased (code in a
heading, ``z.backward()``, must read as code).  The colours of the legends come from the drawings'
palette (:mod:`leafkit.viz._palette`).
"""

from __future__ import annotations

import html
import re

import leafkit
from leafkit.viz import _palette as P

from ._words import BASE_TEXT

__all__ = [
    "FONT",
    "MONO",
    "TEXT",
    "MUTED",
    "BLUE",
    "RED",
    "GREEN",
    "esc",
    "rich",
    "plain",
    "mono",
    "caption_html",
    "code_html",
    "message_html",
    "bool_html",
    "none_html",
    "table_html",
    "printed_html",
    "swatch",
    "legend_items_html",
    "legend_html",
    "device_text",
    "cuda_backend_note",
    "device_badge_html",
]

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


def mono(s) -> str:
    """Escaped text in the code font, keeping the value's layout (``pre-wrap``).

    A value (a tensor's repr, a line of code) breaks only at its spaces, and only when its column
    has no room for it: a table of five columns of tensors is wider than its half of an explorer,
    and a value that never broke pushed the last column out of sight.  Its own line breaks (a 2-D
    tensor) are kept.  The padding after an opening bracket (``tensor([ 1.,``) stays with it, so
    that no line ends in a bare ``tensor([``.
    """
    text = re.sub(r"(?<=[\[(]) +", lambda m: "\u00a0" * len(m.group(0)), esc(str(s)))
    return f'<code style="font-family:{MONO};font-size:12.5px;background:none;white-space:pre-wrap">{text}</code>'


def caption_html(text: str, margin: str = "0 0 3px 0") -> str:
    """A small bold caption above a block (code, table, drawing); `` `code` `` spans in the code font.

    Captions keep their case: an upper-cased heading would turn ``z.backward()`` into ``Z.BACKWARD()``.
    """
    return (
        f'<div class="lk-caption" style="font-family:{FONT};font-size:12.5px;color:{MUTED};font-weight:600;'
        f'letter-spacing:.01em;line-height:1.4;margin:{margin}">{rich(text)}</div>'
    )


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
        f'<div class="lk-code-box" style="font-family:{FONT};margin:2px 0 6px 0">{caption_html(title)}'
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


def none_html() -> str:
    """``None`` in the table's muted grey."""
    return f'<span style="color:{MUTED}">None</span>'


def bool_html(value, strong_false: bool = False) -> str:
    """``True`` / ``False`` coloured as in the drawings (blue / grey, or red when ``strong_false``)."""
    if value is None:
        return none_html()
    if value:
        return f'<span style="color:{BLUE};font-weight:600">True</span>'
    color = RED if strong_false else MUTED
    weight = "700" if strong_false else "400"
    return f'<span style="color:{color};font-weight:{weight}">False</span>'


def table_html(
    columns,
    rows,
    title: str = "",
    css_class: str = "lk-table",
    highlight=None,
    compact: bool = False,
    max_height: str | None = None,
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
    max_height : str, optional
        A CSS height: the rows scroll inside a box of that height, under a header that stays in
        place, and the box shows its last rows first (the newest, in a table that grows at the
        bottom) without any script.  ``None``: the table takes the height it needs.
    """
    highlight = highlight or set()
    pad = "4px 6px" if compact else "4px 9px"
    sticky = "position:sticky;top:0;z-index:1;background:#ffffff;" if max_height else ""
    th = "".join(
        f'<th style="text-align:left;padding:{pad};border-bottom:2px solid #d0d7de;{sticky}'
        f'font-weight:600;white-space:nowrap">{esc(c)}</th>'
        for c in columns
    )
    body = []
    for r, row in enumerate(rows):
        bg = "#ffffff" if r % 2 == 0 else "#f6f8fa"
        mark = f"box-shadow:inset 4px 0 0 {P.NEW};" if r in highlight else ""
        tds = "".join(
            f'<td style="padding:{pad};border-bottom:1px solid #eaeef2;vertical-align:top;'
            f'{mark if i == 0 else ""}">{cell}</td>'
            for i, cell in enumerate(row)
        )
        body.append(f'<tr style="background:{bg}">{tds}</tr>')
    cap = caption_html(title) if title else ""
    table = (
        f'<table class="{esc(css_class)}" style="border-collapse:collapse;font-size:13px;color:{TEXT};'
        f'line-height:1.35"><thead><tr>{th}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )
    if max_height:  # column-reverse: the box starts scrolled to its end, where the newest row is
        table = (
            f'<div class="lk-table-scroll" style="max-height:{max_height};overflow:auto;display:flex;'
            f'flex-direction:column-reverse;border-bottom:1px solid #eaeef2"><div>{table}</div></div>'
        )
    else:
        table = f'<div style="overflow-x:auto">{table}</div>'
    return f'<div class="{esc(css_class)}-box" style="font-family:{FONT};margin:2px 0 6px 0">{cap}{table}</div>'


def printed_html(title: str, text: str) -> str:
    """What the code printed (a hook's ``print``), under a caption; empty when nothing was printed."""
    if not text:
        return ""
    return (
        caption_html(title, margin="6px 0 3px 0") + '<pre class="lk-printed-text" style="margin:0;padding:6px 10px;'
        f"background:#fbfbfb;border:1px solid #e1e4e8;border-radius:6px;font-family:{MONO};font-size:12.5px;"
        f'white-space:pre-wrap">{esc(text.rstrip())}</pre>'
    )


def swatch(fill, border="#555", style="solid", width=1.5) -> str:
    """A small box in a legend, filled and framed as a node of the drawing is."""
    return (
        f'<span style="display:inline-block;width:14px;height:11px;background:{fill};border:{width}px '
        f'{style} {border};border-radius:3px;vertical-align:-1px;margin-right:4px"></span>'
    )


def legend_items_html(items) -> str:
    """A legend of ``(swatch HTML, words)`` pairs, wrapping under a drawing."""
    spans = "".join(
        f'<span style="white-space:{"nowrap" if len(t) < 40 else "normal"};margin:0 12px 2px 0;'
        f'display:inline-block;max-width:100%">{s}{esc(t)}</span>'
        for s, t in items
    )
    return (
        f'<div class="lk-legend" style="font-family:{FONT};font-size:11.5px;color:{MUTED};'
        f'line-height:1.5;margin-top:4px">{spans}</div>'
    )


def legend_html(lang: str = "en") -> str:
    """The colour legend of the variables view (:func:`leafkit.viz.draw`), as wrapping HTML under the drawing."""
    words = BASE_TEXT[lang]
    return legend_items_html(
        [
            (swatch(P.LEAF.css), words["legend_leaf"]),
            (swatch(P.OUTPUT.css, P.NONLEAF_BORDER, width=2), words["legend_nonleaf"]),
            (swatch(P.WHITE.css, P.NOGRAD_BORDER, "dashed"), words["legend_nograd"]),
            (swatch(P.BACKWARD.css), words["legend_fn"]),
            (swatch(P.FREED.css, P.NOGRAD_BORDER, "dashed"), words["legend_freed"]),
            (swatch(P.WHITE.css, P.NEW, width=2.5), words["legend_new"]),
            (swatch(P.WHITE.css, P.FLIP, width=2.5), words["legend_flip"]),
            (f'<span style="color:{P.SHARE};margin-right:4px">- - \u25b7</span>', words["legend_share"]),
        ]
    )


_SIMULATED = " (simulated)"


def device_text(device: str, lang: str = "en") -> str:
    """A device as the explorers print it: ``"cuda:0 (simulated)"`` becomes ``"cuda:0（模拟）"`` in Chinese.

    The rows of an explorer keep :func:`leafkit.widgets._program.device_label`'s English form (data,
    the same in every language); only what is shown is translated.
    """
    if device.endswith(_SIMULATED):
        return BASE_TEXT[lang]["simulated_device"].format(device=device[: -len(_SIMULATED)])
    return device


def cuda_backend_note(lang: str = "en"):
    """``(backend, sentence)`` for the ``cuda`` device: real GPU, simulated, or unavailable."""
    words = BASE_TEXT[lang]
    try:
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
    color = {"cupy": GREEN, "simulated": P.MARKED}.get(backend, RED)
    label = {"cupy": words["badge_cupy"], "simulated": words["badge_simulated"]}.get(backend, words["badge_none"])
    return (
        f'<span class="lk-device lk-device-{esc(backend)}" title="{esc(sentence)}" '
        f'style="display:inline-block;font-family:{FONT};font-size:12px;padding:2px 9px;border-radius:10px;'
        f'border:1px solid {color};color:{color};background:#fff;white-space:nowrap">'
        f"<b>cuda{esc(words['colon'].rstrip())}</b> {esc(label)}</span> "
        f'<span style="font-size:12px;color:{MUTED}">{esc(sentence)}</span>'
    )
