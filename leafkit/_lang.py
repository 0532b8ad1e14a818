"""The language of leafkit's teaching UI: explorers, ``explain()`` and drawing legends.

One convention everywhere: the explorers (``leafkit.widgets``),
:func:`leafkit.viz.explain` and the drawings' legends (:func:`leafkit.viz.make_dot`,
:func:`leafkit.viz.draw`) take ``lang="en"`` or ``lang="zh"`` (简体中文); ``lang=None``,
the default, means the package-level default set here.  The Chinese lessons call
``leafkit.set_language("zh")`` in their first cell.

Code stays code in both languages: identifiers such as ``grad_fn``,
``requires_grad`` and ``is_leaf``, PyTorch's error and warning texts, and the
printed tensors are never translated.  This module is not part of PyTorch's API
(PyTorch has no UI language); it only concerns leafkit's teaching tools.
"""

from __future__ import annotations

import contextlib

__all__ = ["LANGUAGES", "set_language", "get_language", "resolve_language", "language"]

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
