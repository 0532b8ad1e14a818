"""Every lesson runs in JupyterLab (headless Chromium) as a learner would run it.

For each lesson of lessons/manifest.toml, in English and (where it exists) in
Chinese: open it in a fresh JupyterLab tab and check that, before anything runs,

* no explorer cell shows "Error displaying widget" (the stored output is the
  "Run this cell to open ..." text),
* the exercise solutions (jupytext brings them in from the Markdown source) are
  folded ``<details>`` blocks, one per exercise;

then *Run All Cells*, and check that

* no cell shows an error or a stderr output (tracebacks render as stderr), except the
  warnings the lesson shows on purpose: those its stored notebook has (lesson 3 runs the
  article's deprecated ``x.storage()``, and PyTorch warns), and each of them appears,
* every graph drawing rendered as SVG,
* every explorer rendered as live widgets (not "Error displaying widget"),
* the exercise check cells print their "Not yet" message (in the lesson's language).

Screenshots: ``artifacts/screenshots/lesson_NN.png`` (top of the lesson after
the run) and, for lessons with an explorer, ``lesson_NN_explorer.png``
(scrolled to the first explorer).  The notebook is never saved, so the stored
outputs stay those of ``make lessons``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lab_harness import REPO
from lesson_sources import MANIFEST, lessons, notebook_path, read_source, tags

nbformat = pytest.importorskip("nbformat")

LESSONS = [(lang, notebook_path(lang, entry), entry) for lang, entry in lessons()]


def _count_tagged(path: Path, tag: str) -> int:
    nb = nbformat.read(str(path), as_version=4)
    return sum(1 for c in nb.cells if tag in c.metadata.get("tags", []))


def _count_source(path: Path, needle: str) -> int:
    nb = nbformat.read(str(path), as_version=4)
    return sum(
        1
        for c in nb.cells
        if c.cell_type == "code" and needle in c.source and "nbval-ignore-output" not in c.metadata.get("tags", [])
    )


def _stored_warnings(path: Path) -> list:
    """``Category: message`` of every warning in the stored notebook's stderr outputs (spaces collapsed)."""
    nb = nbformat.read(str(path), as_version=4)
    return [
        " ".join(m.group(0).split())
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stderr"
        for m in re.finditer(r"\b\w*Warning: [^\n]*", o.get("text", ""))
    ]


def scroll_to(page, locator) -> None:
    """Scroll the notebook so that ``locator`` is at the top of the view."""
    locator.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(400)


@pytest.mark.parametrize("item", LESSONS, ids=lambda i: f"{i[0]}-{i[2].stem}")
def test_lesson_runs_in_jupyterlab(lab, item):
    lang, path, entry = item
    nn = path.name[:2] if lang == "en" else f"{lang}_{path.name[:2]}"
    page = lab.page
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden) "
    lab.open_notebook(path.relative_to(REPO))

    # before anything runs: no widget error, solutions folded
    assert "Error displaying widget" not in lab.output_text()
    solutions = sum(1 for c in read_source(lang, entry).cells if "solution" in tags(c))
    details = page.locator(panel + ".jp-MarkdownOutput details")
    if details.count():  # jupytext pairs the notebook with its source (the lab extra has it)
        assert details.count() == solutions
        assert all(not d.evaluate("el => el.open") for d in details.all()), "a solution is unfolded"

    lab.run_all(timeout=300)
    warned = _stored_warnings(path)
    stderr = lab.error_outputs()
    unexpected = [t for t in stderr if not any(w in " ".join(t.split()) for w in warned)]
    assert unexpected == [], f"{path.name}: error or stderr output after Run All: {unexpected}"
    for w in warned:  # the warnings the lesson shows on purpose are there
        assert any(w in " ".join(t.split()) for t in stderr), f"{path.name}: no {w!r} after Run All"
    assert page.locator(panel + ".jp-InputPrompt", has_text="[*]").count() == 0

    # each code cell ran: a number in every prompt
    # (a folded input, tag hide-input, adds a placeholder with an empty prompt of its own)
    prompts = page.locator(panel + ".jp-CodeCell .jp-InputPrompt:not(.jp-Placeholder-prompt)").all_inner_texts()
    assert prompts and all(p.strip() not in ("[ ]:", "[ ]", "") for p in prompts), prompts

    # drawings: one SVG per drawing cell
    drawings = _count_source(path, "draw(") + _count_source(path, "make_dot(")
    svgs = page.locator(
        panel + ".jp-OutputArea-output .jp-RenderedSVG, " + panel + ".jp-OutputArea-output img[src^='data:image/svg']"
    ).count()
    assert svgs >= drawings, f"{path.name}: {drawings} drawing cells but {svgs} rendered SVGs"

    # explorers: live widget views, no "Error displaying widget"
    explorers = _count_tagged(path, "nbval-ignore-output")
    text = lab.output_text()
    assert "Error displaying widget" not in text
    if explorers:
        views = page.locator(panel + ".jp-OutputArea-output .jupyter-widgets")
        assert views.count() >= explorers, f"{path.name}: {explorers} explorer cells, no widget views"

    # every exercise check cell answers the unanswered default with "Not yet"
    not_yet = MANIFEST["languages"][lang]["not_yet"]
    assert text.count(not_yet) == _count_tagged(path, "check"), text

    lab.run_command("application:toggle-left-area")  # more room for the notebook
    scroll_to(page, page.locator(panel + ".jp-Cell").first)
    shot = lab.screenshot(f"lesson_{nn}")
    assert shot.stat().st_size > 10_000

    if explorers:
        cell = page.locator(panel + ".jp-CodeCell", has=page.locator(".jupyter-widgets")).first
        scroll_to(page, cell)
        lab.screenshot(f"lesson_{nn}_explorer")
