"""What the lesson tests share: the manifest, the lesson sources and the notebooks.

The lessons are listed in ``lessons/manifest.toml`` and written as MyST Markdown
sources (``lessons/NN_name.md``, ``lessons/zh/NN_name.md``); ``scripts/build_lessons.py``
turns each into the learner's notebook beside it.  The functions here come from
that script, so that the tests read the lessons exactly as the build does.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import build_lessons  # noqa: E402

MANIFEST = build_lessons.load_manifest()
LANGUAGES = list(MANIFEST["languages"])
ENTRIES = MANIFEST["lessons"]


def source_path(lang: str, entry) -> Path:
    return build_lessons.source_path(MANIFEST, lang, entry)


def notebook_path(lang: str, entry) -> Path:
    return source_path(lang, entry).with_suffix(".ipynb")


def lessons(lang: str | None = None) -> list:
    """``(lang, entry)`` for every lesson source that exists, English first."""
    return build_lessons.selected(MANIFEST, [lang] if lang else LANGUAGES, [])


def lesson_id(item) -> str:
    lang, entry = item
    return f"{lang}-{entry.stem}"


def read_source(lang: str, entry):
    return build_lessons.read_source(source_path(lang, entry))


def tags(cell) -> list:
    return build_lessons.tags(cell)


def verdicts(lang: str) -> dict:
    """How a check cell starts its verdict in ``lang``: keys right, wrong, not_yet."""
    conf = MANIFEST["languages"][lang]
    return {key: conf[key] for key in ("right", "wrong", "not_yet")}
