"""One manifest, one source per lesson, and notebooks that follow their sources.

* ``lessons/manifest.toml`` lists every lesson; every lesson file is in it.
* The lesson tables (READMEs, lesson 0), the lesson ranges, each lesson's heading and
  its ``next`` cell are generated from the manifest, and the stored notebooks are the
  learner versions of their MyST sources (same cells and ids, no solution):
  ``scripts/build_lessons.py --check`` finds nothing out of date.  A manifest change
  shows up as drift.  Adding a lesson is a source per language and a manifest entry.
* A teacher's save from JupyterLab writes the sources back unchanged; a learner's
  notebook that holds a solution (as one saved with its source does) is caught; a change
  to one language's source reminds of its twin.
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
    assert "README.md: lesson table or ranges" in drift
    assert "lessons/00_start_here.md: heading, lesson table, ranges or next link" in drift  # table and next link
    assert "lessons/01_leaf_tensors.md: heading, lesson table, ranges or next link" in drift  # its heading
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
    labels = [c.metadata["label"] for c in source.cells if not set(build_lessons.TEACHER_ONLY) & set(tags(c))]
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


def _manifest_with_numbers(tmp_path, numbers):
    """A small manifest with lessons numbered ``numbers`` and the real manifest's languages."""
    text = build_lessons.MANIFEST.read_text(encoding="utf-8")
    lessons_ = "".join(
        f'[[lesson]]\nnumber = {n}\nstem = "{n:02d}_lesson"\ntitle.en = "t{n}"\ntitle.zh = "t{n}"\n'
        f'article = ""\nteaches.en = "x"\nteaches.zh = "x"\n\n'
        for n in numbers
    )
    path = tmp_path / "manifest.toml"
    path.write_text(lessons_ + text[text.index("[language.en]") :], encoding="utf-8")
    return path


def test_manifest_numbers_go_upwards_gaps_allowed(tmp_path):
    """Lessons written in parallel land one by one: 0, 1, 3 is a valid list, and 1's next lesson is 3."""
    manifest = build_lessons.load_manifest(_manifest_with_numbers(tmp_path, [0, 1, 3]))
    entries = manifest["lessons"]
    assert [e.number for e in entries] == [0, 1, 3]
    assert "Lesson 3:" in build_lessons.next_sentence(manifest, "en", entries[1])
    assert build_lessons.next_sentence(manifest, "en", entries[2]) is None
    for numbers in ([0, 2, 1], [1, 2, 3], [0, 1, 1]):
        with pytest.raises(build_lessons.LessonError, match="numbered upwards from 0"):
            build_lessons.load_manifest(_manifest_with_numbers(tmp_path, numbers))


def test_rebuild_keeps_outputs_that_differ_only_in_addresses_or_kernel_files():
    """A rebuild does not churn a stored warning whose only change is the kernel's process id."""

    def notebook(text):
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("y.backward(create_graph=True)", id="warn")
        cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=text)]
        nb.cells.append(cell)
        return nb

    warning = "{}/ipykernel_{}/2947921728.py:3: UserWarning: Using backward() ... <Node object at {}>\n"
    old = notebook(warning.format("/tmp", 2284, "0x7f01"))
    new = notebook(warning.format("/tmp", 14567, "0x7f99"))
    build_lessons.keep_unchanged_outputs(new, old)
    assert new.cells[0].outputs == old.cells[0].outputs
    changed = notebook(warning.format("/tmp", 14567, "0x7f99").replace("UserWarning", "FutureWarning"))
    build_lessons.keep_unchanged_outputs(changed, old)
    assert "FutureWarning" in changed.cells[0].outputs[0].text


# ------------------------------------------------------------------ teachers' workflow ----
def _lab_copy(tmp_path):
    """A copy of the lessons (both languages, manifest included) and the READMEs, for a build that writes."""
    shutil.copytree(ROOT / "lessons", tmp_path / "lessons")
    for name in build_lessons.READMES:
        shutil.copy(ROOT / name, tmp_path / name)
    return build_lessons.load_manifest(tmp_path / "lessons" / "manifest.toml")


def _contents_manager(root):
    pytest.importorskip("jupytext")
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    return build_sync_jupytext_contents_manager_class(FileContentsManager)(root_dir=str(root))


#: What a running IPython kernel tells JupyterLab, which puts it into the notebook before a save.
KERNEL_LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": "3.11.7",
}


@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_source_is_as_jupytext_writes_it(item):
    """Reading a source with jupytext and writing it back (as a sync does) gives the same text."""
    lang, entry = item
    path = source_path(lang, entry)
    text = path.read_text(encoding="utf-8")
    assert build_lessons.canonical(text, path) == text, f"{path}: run `make lesson L={entry.stem[:2]}`"


def test_a_save_from_the_teachers_lab_changes_no_source(tmp_path):
    """Open every lesson as the teachers' JupyterLab does (jupytext pairs it with its source), with the kernel's
    language_info, and save it unchanged: not one byte of any source changes (a save used to rewrite every
    `{code-cell}` header as `{code-cell} ipython3`)."""
    manifest = _lab_copy(tmp_path)
    cm = _contents_manager(tmp_path)
    for lang, entry in build_lessons.selected(manifest, LANGUAGES, []):
        source = build_lessons.source_path(manifest, lang, entry)
        before = source.read_text(encoding="utf-8")
        path = str(source.with_suffix(".ipynb").relative_to(tmp_path))
        model = cm.get(path)
        model["content"].metadata["language_info"] = dict(KERNEL_LANGUAGE_INFO)
        cm.save(model, path)
        assert source.read_text(encoding="utf-8") == before, f"a save rewrote {path}'s source"


def test_a_notebook_saved_with_its_solutions_is_caught(tmp_path, capsys):
    """A save from the teachers' lab writes the solutions into the learners' notebook; `--check` (and so the
    test suite) fails on it until the lesson is rebuilt, and says why."""
    manifest = _lab_copy(tmp_path)
    entry = next(e for e in manifest["lessons"] if e.number == 5)
    path = "lessons/05_gradients_add_up.ipynb"
    cm = _contents_manager(tmp_path)
    cm.save(cm.get(path), path)
    stored = nbformat.read(str(tmp_path / path), as_version=4)
    source = build_lessons.read_source(tmp_path / "lessons" / "05_gradients_add_up.md")
    leaks = build_lessons.solution_leaks(stored, source)
    assert any("solution-1" in leak for leak in leaks) and any("BEGIN SOLUTION" in leak for leak in leaks), leaks
    problems = build_lessons.check_one(manifest, "en", entry)
    assert any("shows the exercises' solutions to learners" in p and "make lesson L=05" in p for p in problems)
    assert build_lessons.main(["--check", "05"], manifest_path=tmp_path / "lessons" / "manifest.toml") == 1
    assert "solutions" in capsys.readouterr().out
    # the learner's notebook as built holds none
    assert build_lessons.solution_leaks(build_lessons.learner_notebook(source), source) == []


@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_no_learner_notebook_holds_a_solution(item):
    """Neither a solution cell, nor its markers, nor a solution's code in an answer cell."""
    lang, entry = item
    stored = nbformat.read(str(notebook_path(lang, entry)), as_version=4)
    assert build_lessons.solution_leaks(stored, read_source(lang, entry)) == []


def test_lesson_zero_shows_the_way_to_the_other_language():
    """A Chinese reader who opens the English lesson 0 (what `make lab` opens by default) finds the Chinese
    lesson 0 at the top, and the other way round."""
    entry = ENTRIES[0]
    first = {lang: read_source(lang, entry).cells[0].source for lang in LANGUAGES}
    assert "(zh/00_start_here.ipynb)" in first["en"] and "简体中文" in first["en"].splitlines()[2]
    assert "(../00_start_here.ipynb)" in first["zh"] and "English" in first["zh"].splitlines()[2]


def test_lesson_ranges_follow_the_manifest():
    text = (
        "<!-- lesson range: beyond the articles -->Lessons 4–6<!-- end --> and "
        "<!-- lesson range: with an article -->x<!-- end -->"
    )
    last = ENTRIES[-1].number  # the lessons beyond the articles run from 4 to the last one
    expected = text.replace("4–6", f"4–{last}").replace("-->x<", "-->lessons 1–3<")
    assert build_lessons.with_ranges(text, MANIFEST, "en") == expected
    zh = build_lessons.with_ranges("<!-- lesson range: beyond the articles -->第 4～5 课<!-- end -->", MANIFEST, "zh")
    assert f"第 4～{last} 课" in zh
    for path in (ROOT / "README.md", ROOT / "README.zh-CN.md"):
        assert "<!-- lesson range: beyond the articles -->" in path.read_text(encoding="utf-8"), path
    assert "<!-- lesson range: beyond the articles -->" in read_source("en", ENTRIES[0]).cells[0].source


NEW_LESSON = {
    "en": '+++ {"label": "title"}\n\nA lesson added in a test.\n\n```{code-cell} ipython3\n:label: import\n'
    ":tags: [parity]\n\nimport leafkit as torch\n```\n",
    "zh": '+++ {"label": "title"}\n\n测试里新加的一课。\n\n```{code-cell} ipython3\n:label: language\n\n'
    'import leafkit\n\nleafkit.set_language("zh")\n```\n',
}
FRONT = """---
jupytext:
  formats: ipynb,md:myst
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  name: python3
  display_name: Python 3 (ipykernel)
  language: python
---

"""


def test_adding_a_lesson_needs_one_source_per_language_and_one_manifest_line(tmp_path):
    """The recipe: a source per language (no heading, no Next cell) and a [[lesson]] entry.  The build writes
    the heading, the new lesson's Next cell (the last lesson's sentence), the Next cell of the lesson that was
    last before, lesson 0's table, the READMEs' tables and the lesson ranges, and rebuilds lesson 0 and the
    previous last lesson with the new one."""
    manifest = _lab_copy(tmp_path)
    last = manifest["lessons"][-1]
    n = last.number + 1
    stem = f"{n:02d}_added_in_a_test"
    with open(tmp_path / "lessons" / "manifest.toml", "a", encoding="utf-8") as f:
        f.write(
            f'\n[[lesson]]\nnumber = {n}\nstem = "{stem}"\ntitle.en = "a new lesson"\ntitle.zh = "新的一课"\n'
            'article = ""\nteaches.en = "how lessons are added"\nteaches.zh = "怎样加一课"\n'
        )
    text = (tmp_path / "lessons" / "manifest.toml").read_text(encoding="utf-8")
    # the [[lesson]] entry must come before the [language.*] tables
    lang_start = text.index("[language.en]")
    entry_start = text.index(f"\n[[lesson]]\nnumber = {n}")
    text = text[:lang_start] + text[entry_start:].lstrip("\n") + "\n" + text[lang_start:entry_start]
    (tmp_path / "lessons" / "manifest.toml").write_text(text, encoding="utf-8")
    (tmp_path / "lessons" / f"{stem}.md").write_text(FRONT + NEW_LESSON["en"], encoding="utf-8")
    (tmp_path / "lessons" / "zh" / f"{stem}.md").write_text(FRONT + NEW_LESSON["zh"], encoding="utf-8")
    manifest = build_lessons.load_manifest(tmp_path / "lessons" / "manifest.toml")

    changes = build_lessons.generate_parts(manifest, write=True)
    touched = {(lang, e.stem) for lang, e in build_lessons.touched_lessons(manifest, changes)}
    assert {(lang, s) for lang in LANGUAGES for s in ("00_start_here", last.stem, stem)} <= touched, touched
    assert build_lessons.generate_parts(manifest, write=False) == []  # written once, nothing left

    new = {lang: (tmp_path / build_lessons.source_path(manifest, lang, manifest["lessons"][-1])) for lang in LANGUAGES}
    assert f"# Lesson {n}: a new lesson\n" in new["en"].read_text(encoding="utf-8")
    assert f"# 第 {n} 课：新的一课\n" in new["zh"].read_text(encoding="utf-8")
    assert new["en"].read_text(encoding="utf-8").rstrip().endswith("**[lesson 0](00_start_here.ipynb)**.")
    before = (tmp_path / "lessons" / f"{last.stem}.md").read_text(encoding="utf-8")
    assert f"Next: **[Lesson {n}: a new lesson]({stem}.ipynb)**." in before
    before_zh = (tmp_path / "lessons" / "zh" / f"{last.stem}.md").read_text(encoding="utf-8")
    assert f"下一课：**[第 {n} 课：新的一课]({stem}.ipynb)**。" in before_zh
    zero = (tmp_path / "lessons" / "00_start_here.md").read_text(encoding="utf-8")
    assert f"[{stem}]({stem}.ipynb) | how lessons are added" in zero and f"Lessons 4–{n}<!-- end -->" in zero
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert f"(lessons/{stem}.ipynb)" in readme and f"lessons 4–{n}<!-- end -->" in readme
    readme_zh = (tmp_path / "README.zh-CN.md").read_text(encoding="utf-8")
    assert f"(lessons/zh/{stem}.ipynb)" in readme_zh and f"第 4～{n} 课<!-- end -->" in readme_zh
    for lang in LANGUAGES:  # a source as jupytext writes it, cells labelled, checked
        source, _ = build_lessons.prepare_source(manifest, lang, manifest["lessons"][-1], write=True)
        assert source.cells[0].source.startswith("# ")


def test_a_change_in_one_language_reminds_of_the_twin(tmp_path):
    """The build remembers the source each notebook was built from (its SHA-256 in the notebook's metadata);
    when a lesson's source changed in one language and not in the other, it says so."""
    manifest = _lab_copy(tmp_path)
    entry = next(e for e in manifest["lessons"] if e.number == 1)
    for lang in LANGUAGES:
        assert build_lessons.built_from(build_lessons.source_path(manifest, lang, entry).with_suffix(".ipynb"))
    assert build_lessons.twin_reminders(manifest, [entry]) == []
    en = build_lessons.source_path(manifest, "en", entry)
    en.write_text(en.read_text(encoding="utf-8").replace("There are two", "There are exactly two"), encoding="utf-8")
    (note,) = build_lessons.twin_reminders(manifest, [entry])
    assert "lessons/01_leaf_tensors.md changed" in note and "lessons/zh/01_leaf_tensors.md did not" in note
    zh = build_lessons.source_path(manifest, "zh", entry)
    zh.write_text(zh.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert build_lessons.twin_reminders(manifest, [entry]) == []  # both changed: nothing to remind


def bold_slips(markdown: str) -> list[str]:
    """``**`` markers that will not render as bold: CommonMark opens ``**`` only where it is left-flanking
    and closes it only where it is right-flanking.  In Chinese the usual slip is a closing ``**`` after
    full-width punctuation and before a character, "**重点。**下一句", which JupyterLab shows as literal
    asterisks; "**重点**。下一句" renders."""
    import re
    import unicodedata

    def punct(c: str) -> bool:
        return c != "" and unicodedata.category(c)[0] in "PS"

    def space(c: str) -> bool:
        return c == "" or c.isspace()

    slips = []
    markdown = re.sub(r"(?ms)^```.*?^```$", "", markdown)  # code blocks
    for para in re.split(r"\n\s*\n", markdown):
        para = re.sub(r"`[^`\n]*`", "`x`", para)  # code spans: their content does not count
        marks = list(re.finditer(r"\*\*", para))
        for k, m in enumerate(marks):
            before = para[m.start() - 1] if m.start() else ""
            after = para[m.end()] if m.end() < len(para) else ""
            opens = not space(after) and (not punct(after) or space(before) or punct(before))
            closes = not space(before) and (not punct(before) or space(after) or punct(after))
            if not (opens if k % 2 == 0 else closes):
                slips.append(para[max(0, m.start() - 30) : m.end() + 20].replace("\n", " "))
    return slips


def test_bold_slips_are_found():
    assert bold_slips("它改动了保存的张量。**把上面每个运算都测两次**") == []
    assert bold_slips("**跟在一个运算后面。**残差块") == ["**跟在一个运算后面。**残差块"]
    assert bold_slips("**原文：**《PyTorch》 and **`detach()`** and `x ** 2`") == []


@pytest.mark.parametrize("item", LESSONS, ids=lesson_id)
def test_bold_text_renders(item):
    lang, entry = item
    assert bold_slips(source_path(lang, entry).read_text(encoding="utf-8")) == []
