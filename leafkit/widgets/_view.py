"""What every explorer shares, in one import: the pieces live in modules by concern.

* :mod:`._words`: :data:`BASE_TEXT`, the words the explorers share, per language;
* :mod:`._html`: HTML pieces (code blocks, tables, messages, legends, the cuda badge), no widgets;
* :mod:`._drawing`: :class:`DrawingPane`, a drawing shown as inline SVG;
* :mod:`._controls`: :class:`Control`, a control under a language-independent key;
* :mod:`._explorer`: :class:`Explorer`, the base class.

New code imports from those modules; this one keeps the names the tests and ``bench/widgets.py``
have always imported from ``leafkit.widgets._view``.
"""

from __future__ import annotations

from ._controls import Control, control_class
from ._drawing import _HTML_CACHE, DrawingPane, clear_caches, fit_svg
from ._explorer import Explorer
from ._html import (
    BLUE,
    FONT,
    GREEN,
    MONO,
    MUTED,
    RED,
    TEXT,
    bool_html,
    caption_html,
    code_html,
    cuda_backend_note,
    device_badge_html,
    device_text,
    esc,
    legend_html,
    message_html,
    mono,
    plain,
    printed_html,
    rich,
    table_html,
)
from ._words import BASE_TEXT

__all__ = [
    "Explorer",
    "Control",
    "control_class",
    "DrawingPane",
    "clear_caches",
    "fit_svg",
    "code_html",
    "caption_html",
    "message_html",
    "table_html",
    "printed_html",
    "bool_html",
    "legend_html",
    "device_badge_html",
    "device_text",
    "cuda_backend_note",
    "esc",
    "rich",
    "plain",
    "mono",
    "BASE_TEXT",
    "FONT",
    "MONO",
    "TEXT",
    "MUTED",
    "BLUE",
    "RED",
    "GREEN",
    "_HTML_CACHE",
]
