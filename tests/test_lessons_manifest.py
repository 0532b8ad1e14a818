"""One manifest, one source per lesson, and notebooks that follow their sources.

* ``lessons/manifest.toml`` lists every lesson; every lesson file is in it.
* The lesson tables (README, lesson 0) and each lesson's ``next`` cell are generated
  from the manifest, and the stored notebooks are the learner versions of their MyST
  sources (same cells and ids, no solution): ``scripts/build_lessons.py --check``
  finds nothing out of date.  A manifest change shows up as drift.
* Cell ids come from labels; widget views are never stored without their state.
* jupytext pairs each notebook with its source: in JupyterLab the pair opens as one
  notebook, and saving it writes both files.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil

import pytest
from lesson_sources import (
    ENTRIES,
    LANGUAGES,
    MANIFEST,
    ROOT,
    build_lessons,
    lesson_id,
    lessons,
    notebook_path,
    read_source,
    source_path,
    tags,
)

nbformat = pytest.importorskip("nbformat")

LESSONS = lessons()


def test_manifest_lists_every_lesson_file():
    for lang in LANGUAGES:
        folder = build_lessons.folder(MANIFEST, lang)
        listed = {e.stem for e in ENTRIES}
        on_disk = {p.stem for p in folder.glob("[0-9][0-9]_*.md")} | {p.stem for p in folder.glob("[0-9][0-9]_*.ipynb")}
        assert on_disk <= listed, f"{folder}: lesson files not in lessons/manifest.toml: {sorted(on_disk - listed)}"
        for stem in on_disk:
            assert (folder / f"{stem}.md").exists(), f"{folder / stem}.ipynb has no source {stem}.md beside it"
            assert (folder / f"{stem}.ipynb").exists(), f"{folder / stem}.md has no notebook; run `make lessons`"
    for entry in ENTRIES:
        assert source_path("en", entry).exists(), entry.stem


def test_manifest_entries_are_complete():
    for entry in ENTRIES:
        for lang in LANGUAGES:
            assert entry.title[lang].strip() and entry.teaches[lang].strip(), (entry.stem, lang)
    articles = {e.article for e in ENTRIES if e.article}
    assert articles == {"PyTorch——叶子张量", "PyTorch leaf node", "Pytorch基础：Tensor的detach()方法"}


def test_nothing_is_out_of_date(capsys):
    """Tables, next links, headings and stored notebooks all follow the manifest and the sources."""
    status = build_lessons.main(["--check"])
    out = capsys.readouterr()
    assert status == 0, out.out + out.err


def test_generated_parts_follow_a_manifest_change():
    """Changing what a lesson teaches, or a title, makes the tables and the next link drift."""
    entries = list(MANIFEST["lessons"])
    changed = dataclasses.replace(
        entries[1],
        teaches={**entries[1].teaches, "en": "something else"},
        title={**entries[1].title, "en": "a new title"},
    )
    manifest = {**MANIFEST, "lessons": [entries[0], changed, *entries[2:]]}
    drift = build_lessons.generate_parts(manifest, write=False)
    assert "README.md: lesson table" in drift
    assert "lessons/00_start_here.md: lesson table or next link" in drift  # its table and its next link
    assert build_lessons.generate_parts(MANIFEST, write=False) == []


def test_source_heading_and_article_follow_the_manifest():
    for lang, entry in LESSONS:
        nb = read_source(lang, entry)
        assert nb.cells[0].source.splitlines()[0] == build_lessons.heading(MANIFEST, lang, entry)
        if entry.article:
            quoted = build_lessons.quoted_article(MANIFEST, lang, entry)  # "..." in English, 《...》 in Chinese
            assert quoted in nb.cells[0].source, f"{source_path(lang, entry)} must name its article as {quoted}"


@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_notebook_is_the_learner_version(item):
    lang, entry = item
    source = read_source(lang, entry)
    stored = nbformat.read(str(notebook_path(lang, entry)), as_version=4)
    labels = [c.metadata["label"] for c in source.cells if "solution" not in tags(c)]
    assert [c.id for c in stored.cells] == labels, "cell ids must be the source's labels"
    text = json.dumps(stored)
    assert build_lessons.BEGIN_SOLUTION not in text and not any("solution" in tags(c) for c in stored.cells)
    assert stored.metadata["jupytext"]["formats"] == "ipynb,md:myst"
    nbformat.validate(stored)


@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_no_widget_view_is_stored(item):
    """A fresh kernel cannot show a stored widget view ("Error displaying widget: model not found")."""
    lang, entry = item
    stored = nbformat.read(str(notebook_path(lang, entry)), as_version=4)
    assert "widgets" not in stored.metadata
    placeholder = MANIFEST["languages"][lang]["explorer_placeholder"]
    for cell in stored.cells:
        for out in cell.get("outputs", []):
            assert build_lessons.WIDGET_VIEW not in out.get("data", {}), cell.id
        if "nbval-ignore-output" in tags(cell):
            texts = [o["data"].get("text/plain") for o in cell.outputs if "data" in o]
            assert texts == [placeholder.format(name=build_lessons.explorer_name(cell.source))], cell.id


def test_labels_make_stable_ids():
    """Inserting a cell changes no other cell's id."""
    nb = read_source("en", ENTRIES[1])
    before = [c.id for c in build_lessons.learner_notebook(nb).cells]
    extra = nbformat.v4.new_markdown_cell("A new paragraph.", metadata={"label": "new-paragraph"})
    nb.cells.insert(3, extra)
    after = [c.id for c in build_lessons.learner_notebook(nb).cells]
    assert after[:3] + after[4:] == before and after[3] == "new-paragraph"


def test_bad_labels_are_refused():
    nb = read_source("en", ENTRIES[0])
    nb.cells[2].metadata["label"] = nb.cells[1].metadata["label"]
    with pytest.raises(build_lessons.LessonError, match="two cells are labelled"):
        build_lessons.check_cells(nb, "test")
    nb.cells[2].metadata["label"] = "has space"
    with pytest.raises(build_lessons.LessonError, match="has label"):
        build_lessons.check_cells(nb, "test")


def test_a_cell_without_label_gets_one(tmp_path):
    nb = read_source("en", ENTRIES[0])
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("## Something new"))
    assert build_lessons.label_cells(nb, ROOT / "lessons" / "x.md")
    assert nb.cells[1].metadata["label"] == "something-new"
    build_lessons.check_cells(nb, "test")


def test_jupyterlab_opens_the_pair_as_one_notebook(tmp_path):
    """jupytext's contents manager (what JupyterLab uses with jupytext installed) pairs the files."""
    jupytext = pytest.importorskip("jupytext")
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    shutil.copytree(ROOT / "lessons", tmp_path / "lessons", ignore=shutil.ignore_patterns("zh"))
    cm = build_sync_jupytext_contents_manager_class(FileContentsManager)(root_dir=str(tmp_path))
    path = "lessons/01_leaf_tensors.ipynb"
    # as after a `git pull` that brought only re-executed notebooks: the .ipynb is newer than its source
    md_time = (tmp_path / "lessons" / "01_leaf_tensors.md").stat().st_mtime
    os.utime(tmp_path / path, (md_time + 3600, md_time + 3600))
    model = cm.get(path)
    nb = model["content"]
    source = read_source("en", ENTRIES[1])
    # the inputs come from the Markdown source (solutions included), the outputs from the notebook
    assert [c.source for c in nb.cells] == [c.source for c in source.cells]
    outputs = {c.id: c.outputs for c in nb.cells if c.cell_type == "code" and c.get("id")}
    assert outputs["experiment-a"], "the stored outputs are shown"
    # a teacher edits a sentence in JupyterLab and saves: both files change
    cell = next(c for c in nb.cells if c.metadata.get("label") == "rules")
    cell.source = cell.source.replace("There are two", "There are exactly two")
    cm.save(model, path)
    md = (tmp_path / "lessons" / "01_leaf_tensors.md").read_text(encoding="utf-8")
    assert "There are exactly two" in md and ":label: experiment-a" in md
    assert "jupytext_version" not in md  # lessons/jupytext.toml keeps the version out of the sources
    saved = nbformat.read(str(tmp_path / path), as_version=4)
    assert any("There are exactly two" in c.source for c in saved.cells)
    assert jupytext.__version__


def test_numbers_increase_and_next_skips_a_gap(tmp_path):
    """Lessons written on separate branches may leave a gap in the numbers until they are merged;
    the "Next" link goes to the next lesson listed. Numbers out of order are refused."""
    text = (ROOT / "lessons" / "manifest.toml").read_text(encoding="utf-8")
    manifest = build_lessons.load_manifest()
    numbers = [e.number for e in manifest["lessons"]]
    assert numbers[0] == 0 and numbers == sorted(set(numbers))
    with_gap = {**manifest, "lessons": [e for e in manifest["lessons"] if e.number != 1]}
    second = with_gap["lessons"][1]
    assert build_lessons.next_sentence(with_gap, "en", with_gap["lessons"][0]) == MANIFEST["languages"]["en"][
        "next"
    ].format(number=second.number, title=second.title["en"], stem=second.stem)
    assert build_lessons.next_sentence(with_gap, "en", with_gap["lessons"][-1]) is None
    languages = text[text.index("[language.en]") :]
    lesson = '[[lesson]]\nnumber = {0}\nstem = "{0:02d}_x"\n' + "".join(
        f'{field}.{lang} = "x"\n' for field in ("title", "teaches") for lang in ("en", "zh")
    )
    swapped = tmp_path / "manifest.toml"
    swapped.write_text("".join(lesson.format(n) for n in (0, 2, 1)) + languages, encoding="utf-8")
    with pytest.raises(build_lessons.LessonError, match="increasing order"):
        build_lessons.load_manifest(swapped)
