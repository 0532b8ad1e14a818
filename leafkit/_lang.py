"""The language of leafkit's teaching UI: explorers, ``explain()`` and drawing legends.

One convention everywhere: the explorers (``leafkit.widgets``),
:func:`leafkit.viz.explain` and the drawings' legends (:func:`leafkit.viz.make_dot`,
:func:`leafkit.viz.draw`) take ``lang="en"`` or ``lang="zh"`` (简体中文); ``lang=None``,
the default, means the package-level default set here.  The Chinese lessons call
``leafkit.set_language("zh")`` in their first cell.

``set_language("zh")`` also lets matplotlib draw Chinese labels (:func:`matplotlib_cjk`).

Code stays code in both languages: identifiers such as ``grad_fn``,
``requires_grad`` and ``is_leaf``, PyTorch's error and warning texts, and the
printed tensors are never translated.  This module is not part of PyTorch's API
(PyTorch has no UI language); it only concerns leafkit's teaching tools.
"""

from __future__ import annotations

import contextlib
import logging

__all__ = ["LANGUAGES", "set_language", "get_language", "resolve_language", "language", "matplotlib_cjk"]

#: The accepted language codes: English and Simplified Chinese.
LANGUAGES = ("en", "zh")

_language = "en"


def _check(lang, what: str = "language") -> str:
    if not isinstance(lang, str) or lang not in LANGUAGES:
        raise ValueError(
            f"{what} must be one of {', '.join(repr(x) for x in LANGUAGES)} (English, 简体中文), got {lang!r}"
        )
    return lang


def set_language(lang: str) -> None:
    """Set the default language of the explorers, ``explain()`` and the drawing legends.

    Parameters
    ----------
    lang : {"en", "zh"}
        ``"en"`` for English (the default) or ``"zh"`` for Simplified Chinese.

    Raises
    ------
    ValueError
        Any other value (``"cn"``, ``"zh-CN"``, ``None``); the message names the
        accepted values.

    Notes
    -----
    Only what is created afterwards follows the new default: an explorer keeps
    the language it was built with.  An explicit ``lang=`` argument always wins.

    Examples
    --------
    >>> import leafkit
    >>> leafkit.set_language("zh")
    >>> leafkit.get_language()
    'zh'
    >>> leafkit.set_language("en")
    """
    global _language
    _language = _check(lang)
    if _language == "zh":
        matplotlib_cjk()


#: Fonts with Chinese glyphs, the first installed wins: for matplotlib (:func:`matplotlib_cjk`) and for the
#: Chinese drawings (``leafkit.viz.dot.CJK_FONTNAME``).  Debian: fonts-noto-cjk, fonts-wqy-zenhei; Windows:
#: Microsoft YaHei; macOS: PingFang SC.
CJK_FONTS = ("Noto Sans CJK SC", "WenQuanYi Zen Hei", "Microsoft YaHei", "PingFang SC")

_cjk_font = None


def matplotlib_cjk():
    """Let matplotlib draw Chinese labels: add the first installed font of :data:`CJK_FONTS` to
    ``rcParams["font.family"]`` after the families already there (``sans-serif``, that is DejaVu Sans, by
    default).  matplotlib takes each glyph from the first family that has it, so Latin text and the minus sign
    keep their usual look and Chinese characters come from the CJK font.  :func:`set_language` calls it for
    ``"zh"``.

    Returns the font's family name, or None when matplotlib or every CJK font is missing (Chinese labels then
    show as empty boxes, with matplotlib's "Glyph ... missing" warning; on Debian ``apt-get install
    fonts-wqy-zenhei`` gives one).  matplotlib's log line that WenQuanYi Zen Hei has weight 500 where 400 was
    asked for is dropped: the font has no other weight.
    """
    global _cjk_font
    try:
        import matplotlib
        from matplotlib import font_manager
    except ImportError:
        return None
    if _cjk_font is None:
        installed = {f.name for f in font_manager.fontManager.ttflist}
        _cjk_font = next((name for name in CJK_FONTS if name in installed), "")
        if _cjk_font:
            logging.getLogger("matplotlib.font_manager").addFilter(_OnlyWeight(_cjk_font))
    if _cjk_font:
        families = list(matplotlib.rcParams["font.family"])
        if _cjk_font not in families:
            matplotlib.rcParams["font.family"] = families + [_cjk_font]
    return _cjk_font or None


class _OnlyWeight(logging.Filter):
    """Drop matplotlib's "Failed to find font weight ... for <the CJK font>" warning (nothing else)."""

    def __init__(self, font):
        super().__init__()
        self.font = font

    def filter(self, record):
        msg = record.getMessage()
        return not (msg.startswith("findfont: Failed to find font weight") and f" for {self.font}," in msg)


def get_language() -> str:
    """The default language set by :func:`set_language`: ``"en"`` unless changed."""
    return _language


def resolve_language(lang=None) -> str:
    """``lang`` itself when given (checked), else the package default.

    Raises
    ------
    ValueError
        ``lang`` is neither None nor one of :data:`LANGUAGES`.
    """
    return _language if lang is None else _check(lang, "lang")


@contextlib.contextmanager
def language(lang):
    """Make ``lang`` the default inside a ``with`` block, and restore the previous default after.

    Raises
    ------
    ValueError
        ``lang`` is not one of :data:`LANGUAGES` (checked before anything changes).
    """
    global _language
    before, _language = _language, _check(lang)
    try:
        yield lang
    finally:
        _language = before
