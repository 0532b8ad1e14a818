#!/usr/bin/env python3
"""Sync the lesson notebooks with their MyST Markdown sources, and run them.

    python scripts/build_lessons.py                 # every lesson (en and zh): sync md -> ipynb, execute, store outputs
    python scripts/build_lessons.py 01              # lessons whose file name starts with 01 (both languages)
    python scripts/build_lessons.py --lang zh 00    # only lessons/zh/00_*
    python scripts/build_lessons.py --no-execute    # sync the inputs only; unchanged cells keep their outputs
    python scripts/build_lessons.py --check         # change nothing; exit 1 if anything is out of date

``make lessons`` runs the first line, ``make lesson L=01`` the second.  They need only
the ``lab`` extra (jupytext, nbclient, ipykernel, matplotlib, scikit-learn, tqdm) and
Graphviz's ``dot``: neither PyTorch nor the test tools.

The source of a lesson is ``lessons/NN_name.md`` (``lessons/zh/NN_name.md`` for its
Chinese twin), a MyST Markdown notebook that jupytext pairs with ``NN_name.ipynb``
beside it (``lessons/jupytext.toml``).  In the teachers' JupyterLab
(``make lab-teacher``) the pair opens as one notebook, solutions included, and saving
writes both files; the learners' JupyterLab (``make lab``) opens the notebook alone.
The list of lessons is ``lessons/manifest.toml``.

Adding a lesson
---------------
A new lesson is its source in each language and one ``[[lesson]]`` entry in the
manifest.  ``make lesson L=NN`` (or ``make lessons``) then does the rest: it writes the
heading from the manifest, the "Next" cell at the end of the new lesson and of the lesson
before it, the lesson tables and the lesson ranges (``<!-- lesson range: ... -->``) in
lesson 0 and the READMEs, and rebuilds every lesson whose source that changed (lesson 0
and the lesson that was last before).

What this script does
---------------------
1. writes the generated parts of the sources from the manifest: each lesson's heading
   (its first line) and its ``next`` cell (the next lesson, or the manifest's ``last``
   sentence for the last lesson), the lesson table in lesson 0 and in the READMEs, and
   the lesson ranges in them;
2. reads each source with jupytext and checks its cells: every cell has a ``label``
   (cell metadata, ``:label:`` in a ``{code-cell}``, ``+++ {"label": ...}`` before a
   Markdown cell) that is unique in the lesson and becomes the notebook cell's ``id``,
   so ids never depend on a cell's position; a cell without a label gets one, written
   back into the source;
3. keeps the source in the form jupytext writes when JupyterLab saves the pair
   (``{code-cell} ipython3`` headers), so that a teacher's save changes only what the
   teacher changed;
4. writes the learner's notebook: the source without its ``solution`` cells, with the
   ``check`` and ``hide-input`` cells folded;
5. executes it with nbclient (working directory: the notebook's folder) and stores the
   outputs.  Widget state is never stored: an explorer cell stores a one-line text
   ("Run this cell to open LeafExplorer.") that any fresh kernel can show, and a tqdm
   progress bar (a widget in Jupyter) stores the text of its last frame
   ("training: 100%|██████████| 230/230 [00:03<00:00, 70.1batch/s, ...]"), read from the
   widget state the run left.  Outputs are never edited by hand;
6. records the SHA-256 of the source in the notebook's metadata (``leafkit.source_sha256``),
   and warns when a lesson's source changed since its notebook was built while its twin in
   the other language did not: the twin may need the same change;
7. touches the source, so that jupytext sees it as at least as new as the notebook.

``--check`` reports, without writing: generated parts out of date, a source not in
jupytext's form, a notebook whose cells differ from its source, and a notebook that holds
an exercise's solution (as one saved from the teachers' JupyterLab does until the lesson
is rebuilt).

Cell tags (written as text in the source, ``:tags: [parity]``)
--------------------------------------------------------------
``parity``
    An experiment: tests/test_lessons_parity.py runs these cells again on real
    PyTorch (``import leafkit as torch`` becomes ``import torch``) and compares
    what they print.
``claim``
    A code cell that checks what the text around it says about a *trained* result
    (``assert ...``); not in the learner's notebook.  tests/test_lessons_parity.py runs
    the lesson's code up to it on real PyTorch with several seeds, and the claim must
    hold for each: a lesson states only what holds whatever the random numbers.
``nbval-ignore-output``
    A cell that displays an explorer widget (its output is not compared by nbval).
``exercise`` / ``check``
    The learner's answer cell and the cell that checks it.  A check cell is folded in
    the learner's notebook, and it never states the solution: its ``right=`` text says why
    an answer is right without repeating it (tests/test_lessons_exercises.py).
``hide-input``
    Jupyter Book's tag: the learner's notebook folds the cell's input
    (``jupyter.source_hidden``), as for the checks' helper code.
``solution``
    A Markdown cell right after an ``exercise`` cell, holding that answer cell's
    solution between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (nbgrader's
    markers) inside a collapsed ``<details>`` block, and the answers its check must
    reject: at least one wrong answer (``### BEGIN WRONG ANSWER`` ... ``### END WRONG
    ANSWER``) and one answer of the wrong type (``### BEGIN WRONG TYPE`` ... ``### END
    WRONG TYPE``), each replacing the whole answer cell.  It is not in the learner's
    notebook; tests/test_lessons_exercises.py runs the lesson with each of them.

Run it with the project's interpreter (``.venv/bin/python``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
MANIFEST = LESSONS / "manifest.toml"
FORMAT = "md:myst"

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
#: What a running IPython kernel reports as the notebook's language_info.  JupyterLab puts it into the
#: notebook before a save, and jupytext then writes ``{code-cell} ipython3`` (the lexer): the sources use
#: that form, so that a save from JupyterLab writes them back unchanged.
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3"}
LABEL = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what nbformat allows as a cell id
TABLE_BEGIN = "<!-- begin lesson table: generated from lessons/manifest.toml by `make lessons` -->"
TABLE_END = "<!-- end lesson table -->"
#: An inline lesson range written from the manifest, e.g.
#: ``<!-- lesson range: beyond the articles -->lessons 4–9<!-- end -->``.
RANGE = re.compile(r"<!-- lesson range: (?P<name>[a-z ]+?) -->(?P<text>.*?)<!-- end -->")
BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
#: The kinds of answer a check must reject, as marked in a solution cell (``### BEGIN WRONG ANSWER``).
WRONG_KINDS = ("WRONG ANSWER", "WRONG TYPE")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: Tags of source cells that the learner's notebook leaves out.
TEACHER_ONLY = ("solution", "claim")
#: Tags of cells whose input the learner's notebook folds.
FOLDED = ("hide-input", "check")

#: README files that carry a lesson table: file name -> (language, link prefix to the lessons)
READMES = {"README.md": ("en", "lessons/"), "README.zh-CN.md": ("zh", "lessons/zh/")}


class LessonError(Exception):
    """A lesson source or the manifest is not as this script expects."""


# --------------------------------------------------------------------------- manifest ----
@dataclass(frozen=True)
class Entry:
    number: int
    stem: str
    title: dict
    article: str
    teaches: dict


def load_manifest(path: Path = MANIFEST) -> dict:
    """Read lessons/manifest.toml: ``{"lessons": [Entry, ...], "languages": {lang: {...}}, "root": Path}``.

    ``root`` is the repository the manifest belongs to (``<root>/lessons/manifest.toml``).
    """
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    languages = data["language"]
    lessons = []
    for raw in data["lesson"]:
        entry = Entry(raw["number"], raw["stem"], raw["title"], raw.get("article", ""), raw["teaches"])
        if not re.fullmatch(rf"{entry.number:02d}_[a-z0-9_]+", entry.stem):
            raise LessonError(f"manifest: stem {entry.stem!r} must be NN_name with NN = {entry.number:02d}")
        for field in ("title", "teaches"):
            missing = set(languages) - set(getattr(entry, field))
            if missing:
                raise LessonError(f"manifest: lesson {entry.number} has no {field} in {sorted(missing)}")
        lessons.append(entry)
    numbers = [e.number for e in lessons]
    # Upwards from 0, each number once.  A gap is allowed (lessons written in parallel land one
    # by one): each lesson's "Next" link goes to the next lesson listed.
    if numbers[:1] != [0] or any(b <= a for a, b in zip(numbers, numbers[1:])):
        raise LessonError(f"manifest: lessons must be numbered upwards from 0 (0, 1, 2, ...), in order, not {numbers}")
    return {"lessons": lessons, "languages": languages, "root": path.resolve().parent.parent}


def root(manifest: dict) -> Path:
    return manifest.get("root", ROOT)


def folder(manifest: dict, lang: str) -> Path:
    return root(manifest) / manifest["languages"][lang]["folder"]


def source_path(manifest: dict, lang: str, entry: Entry) -> Path:
    return folder(manifest, lang) / f"{entry.stem}.md"


def rel(manifest: dict, path: Path) -> str:
    """``path`` relative to the repository, for messages."""
    try:
        return str(path.relative_to(root(manifest)))
    except ValueError:
        return str(path)


def heading(manifest: dict, lang: str, entry: Entry) -> str:
    """The first line of a lesson: ``# <title>`` for lesson 0, ``# Lesson N: <title>`` otherwise."""
    title = entry.title[lang]
    if entry.number == 0:
        return f"# {title}"
    return "# " + manifest["languages"][lang]["heading"].format(number=entry.number, title=title)


def next_sentence(manifest: dict, lang: str, entry: Entry) -> str | None:
    """The text of ``entry``'s ``next`` cell: a link to the next lesson, or None for the last lesson."""
    lessons = manifest["lessons"]
    later = [e for e in lessons if e.number > entry.number]
    if not later:
        return None
    nxt = later[0]
    return manifest["languages"][lang]["next"].format(number=nxt.number, title=nxt.title[lang], stem=nxt.stem)


def next_cell_text(manifest: dict, lang: str, entry: Entry) -> str:
    """What ``entry``'s ``next`` cell says: the next lesson, or the manifest's ``last`` sentence."""
    sentence = next_sentence(manifest, lang, entry)
    if sentence is None:
        first = manifest["lessons"][0]
        sentence = manifest["languages"][lang]["last"].format(stem=first.stem)
    return sentence


def quoted_article(manifest: dict, lang: str, entry: Entry) -> str:
    """The source article's title in the language's quotation marks ("..." or 《...》), or ""."""
    if not entry.article:
        return ""
    return manifest["languages"][lang].get("article", '"{article}"').format(article=entry.article)


def lesson_table(manifest: dict, lang: str, prefix: str) -> str:
    """The Markdown table of all lessons, with links relative to ``prefix``."""
    header = manifest["languages"][lang]["table_header"]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for e in manifest["lessons"]:
        article = quoted_article(manifest, lang, e)
        rows.append(f"| {e.number} | [{e.stem}]({prefix}{e.stem}.ipynb) | {e.teaches[lang]} | {article} |")
    return "\n".join(rows)


def with_table(text: str, table: str, where: str) -> str:
    """``text`` with the part between the table markers replaced by ``table``."""
    begin, end = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if begin < 0 or end < begin:
        raise LessonError(f"{where}: no lesson table markers ({TABLE_BEGIN} ... {TABLE_END})")
    return text[: begin + len(TABLE_BEGIN)] + "\n" + table + "\n" + text[end:]


def range_numbers(manifest: dict, name: str) -> list[int]:
    """The lesson numbers a named range covers.

    ``with an article``: the lessons that have a source article (``article`` in the manifest);
    ``beyond the articles``: every lesson after the last of those.
    """
    lessons = manifest["lessons"]
    with_article = [e.number for e in lessons if e.article]
    if name == "with an article":
        return with_article
    if name == "beyond the articles":
        return [e.number for e in lessons if e.number > max(with_article, default=0)]
    raise LessonError(f"unknown lesson range {name!r} (known: 'with an article', 'beyond the articles')")


def range_text(manifest: dict, lang: str, name: str, old: str = "") -> str:
    """A range in words: "lessons 4–9" / "第 4～9 课" (a single lesson: "lesson 4" / "第 4 课"; a gap in the
    numbers: "lessons 4–10 and lesson 12" / "第 4～10 课、第 12 课").

    The first letter keeps the case of ``old``, so a range can start a sentence.
    """
    numbers = range_numbers(manifest, name)
    if not numbers:
        raise LessonError(f"the lesson range {name!r} is empty")
    conf = manifest["languages"][lang]
    runs: list[list[int]] = []  # consecutive numbers, so that a gap never reads as a lesson that is not there
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    text = conf["range_join"].join(
        conf["one_lesson"].format(number=run[0])
        if len(run) == 1
        else conf["lesson_range"].format(first=run[0], last=run[-1])
        for run in runs
    )
    if old[:1].isupper():
        text = text[:1].upper() + text[1:]
    return text


def with_ranges(text: str, manifest: dict, lang: str) -> str:
    """``text`` with every ``<!-- lesson range: NAME -->...<!-- end -->`` written from the manifest."""

    def repl(m):
        new = range_text(manifest, lang, m["name"], m["text"])
        return f"<!-- lesson range: {m['name']} -->{new}<!-- end -->"

    return RANGE.sub(repl, text)


FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
#: The first cell of a source: its optional ``+++ {...}`` line, then its first line.
FIRST_LINE = re.compile(r"\A(\n*(?:\+\+\+[^\n]*\n\n)?)([^\n]*)(\n|\Z)")


def with_heading(text: str, line: str, where: str) -> str:
    """``text`` with the first line of its first cell set to the heading ``line``.

    A first line that is a Markdown heading (``# ...``) is replaced; otherwise the heading
    is put before it.
    """
    fm = FRONT_MATTER.match(text)
    start = fm.end() if fm else 0
    body = text[start:]
    m = FIRST_LINE.match(body)
    if m is None or m.group(2).startswith("```"):
        raise LessonError(f"{where}: the lesson must start with a Markdown cell (its heading)")
    if m.group(2).startswith("# "):
        body = body[: m.start(2)] + line + body[m.end(2) :]
    else:
        body = body[: m.start(2)] + line + "\n\n" + body[m.start(2) :]
    return text[:start] + body


NEXT_CELL = re.compile(r'(^\+\+\+ \{"label": "next"\}\n\n)(.*?)(?=\n\n\+\+\+|\n\n```\{code-cell\}|\n*\Z)', re.M | re.S)


def with_next_cell(text: str, sentence: str, where: str = "") -> str:
    """``text`` with its ``next`` cell saying ``sentence``; a source without one gets it at the end."""
    m = NEXT_CELL.search(text)
    if not m:
        return text.rstrip("\n") + '\n\n+++ {"label": "next"}\n\n' + sentence + "\n"
    return text[: m.start(2)] + sentence + text[m.end(2) :]


# ----------------------------------------------------------------------------- sources ----
def read_source(path: Path):
    import jupytext

    return jupytext.read(str(path), fmt=FORMAT)


def source_text(nb, path: Path) -> str:
    """The text jupytext writes for ``nb`` when JupyterLab saves the pair (lessons/jupytext.toml)."""
    import jupytext
    from jupytext.config import load_jupytext_config

    nb = nbformat.from_dict(nb)
    nb.metadata["language_info"] = {**nb.metadata.get("language_info", {}), **LANGUAGE_INFO}
    return jupytext.writes(nb, fmt=FORMAT, config=load_jupytext_config(str(path)))


def write_source(nb, path: Path) -> None:
    """Write a source as jupytext writes it when JupyterLab saves the pair."""
    path.write_text(source_text(nb, path), encoding="utf-8")


def canonical(text: str, path: Path) -> str:
    """``text`` (a source) as a save from JupyterLab would write it."""
    import jupytext

    return source_text(jupytext.reads(text, fmt=FORMAT), path)


def tags(cell) -> list:
    return list(cell.metadata.get("tags", []))


def _marked(cell, begin: str, end: str) -> list[str]:
    pattern = rf"^{re.escape(begin)}[ \t]*\n(.*?)^{re.escape(end)}[ \t]*$"
    return [m.group(1).rstrip("\n") for m in re.finditer(pattern, cell.source, re.M | re.S)]


def solution_code(cell) -> str:
    """The code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in a solution cell."""
    found = _marked(cell, BEGIN_SOLUTION, END_SOLUTION)
    if len(found) != 1:
        raise LessonError(
            f"solution cell {cell.metadata.get('label')!r} needs one {BEGIN_SOLUTION} ... {END_SOLUTION}, "
            f"not {len(found)}"
        )
    return found[0]


def wrong_answers(cell) -> dict:
    """The answers a solution cell says its check must reject: ``{"wrong answer": [code, ...],
    "wrong type": [code, ...]}``, each between ``### BEGIN WRONG ANSWER`` and ``### END WRONG ANSWER``
    (``WRONG TYPE``)."""
    return {kind.lower(): _marked(cell, f"### BEGIN {kind}", f"### END {kind}") for kind in WRONG_KINDS}


def _new_label(cell, used: set) -> str:
    first = next((ln for ln in cell.source.splitlines() if ln.strip()), cell.cell_type)
    words = [w for w in re.split(r"[^A-Za-z0-9]+", first.lower()) if w][:4]
    base = "-".join(words)[:40].strip("-") or cell.cell_type
    label, n = base, 2
    while label in used:
        label, n = f"{base}-{n}", n + 1
    return label


def check_cells(nb, where: str) -> None:
    """Raise LessonError unless every cell's label is valid and unique and the tags are consistent."""
    seen = set()
    cells = nb.cells
    for i, cell in enumerate(cells):
        label = cell.metadata.get("label")
        if not isinstance(label, str) or not LABEL.match(label):
            raise LessonError(f"{where}: cell {i} has label {label!r}; use letters, digits, '-' and '_' (at most 64)")
        if label in seen:
            raise LessonError(f"{where}: two cells are labelled {label!r}")
        seen.add(label)
        if "solution" in tags(cell):
            if cell.cell_type != "markdown":
                raise LessonError(f"{where}: solution cell {label!r} must be a Markdown cell")
            if i == 0 or "exercise" not in tags(cells[i - 1]):
                raise LessonError(f"{where}: solution cell {label!r} must come right after an exercise cell")
            try:
                solution_code(cell)
            except LessonError as err:
                raise LessonError(f"{where}: {err}") from None
            for kind, answers in wrong_answers(cell).items():
                if not answers:
                    raise LessonError(
                        f"{where}: solution cell {label!r} has no {kind} for the tests "
                        f"(### BEGIN {kind.upper()} ... ### END {kind.upper()})"
                    )
        if "claim" in tags(cell) and cell.cell_type != "code":
            raise LessonError(f"{where}: claim cell {label!r} must be a code cell")


def label_cells(nb, path: Path) -> bool:
    """Give every cell without a label one (written back to the source). Return True if any changed."""
    used = {c.metadata["label"] for c in nb.cells if isinstance(c.metadata.get("label"), str)}
    changed = False
    for cell in nb.cells:
        if not isinstance(cell.metadata.get("label"), str):
            label = _new_label(cell, used)
            used.add(label)
            cell.metadata = nbformat.NotebookNode({"label": label, **cell.metadata})
            print(f"{path.name}: labelled a new cell {label!r}")
            changed = True
    return changed


def learner_notebook(source_nb):
    """The notebook a learner gets: no solution or claim cells, cell id = label, no outputs."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["jupytext"] = {"formats": "ipynb," + FORMAT}
    for cell in source_nb.cells:
        if any(t in tags(cell) for t in TEACHER_ONLY):
            continue
        meta = {k: v for k, v in cell.metadata.items()}
        if any(t in tags(cell) for t in FOLDED):  # JupyterLab folds the input (the outputs stay)
            meta["jupyter"] = {"source_hidden": True}
        if cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(cell.source, metadata=meta)
        else:
            new = nbformat.v4.new_markdown_cell(cell.source, metadata=meta)
        new.id = meta["label"]
        nb.cells.append(new)
    return nb


def inputs(nb) -> list:
    """What a notebook's cells say, leaving outputs aside: (id, type, source, tags) per cell."""
    return [(c.get("id"), c.cell_type, c.source, tuple(tags(c))) for c in nb.cells]


def text_inputs(nb) -> list:
    return [(c.cell_type, c.source) for c in nb.cells]


def exercises(nb) -> list:
    """Per exercise of a source, in order: (answer cell, solution cell or None, check cell or None)."""
    cells = nb.cells
    out = []
    for i, cell in enumerate(cells):
        if "exercise" in tags(cell):
            sol = cells[i + 1] if i + 1 < len(cells) and "solution" in tags(cells[i + 1]) else None
            check = next((c for c in cells[i + 1 :] if "check" in tags(c)), None)
            out.append((cell, sol, check))
    return out


def _code_lines(code: str) -> list[str]:
    """The lines of ``code`` that say something: no blank lines, comments or trailing comments."""
    lines = []
    for line in code.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            lines.append(" ".join(line.split()))
    return lines


def solution_leaks(stored, source_nb) -> list[str]:
    """Why the notebook ``stored`` shows an exercise's solution, or [] if it shows none.

    A notebook saved from the teachers' JupyterLab (jupytext writes the pair) holds the
    solution cells until ``make lesson`` rebuilds it; so does one copied from the source.
    """
    problems = []
    text = json.dumps([c.get("source", "") for c in stored.cells], ensure_ascii=False)
    if BEGIN_SOLUTION in text or any("### BEGIN WRONG" in c.get("source", "") for c in stored.cells):
        problems.append(f"it holds the solution markers ({BEGIN_SOLUTION})")
    teacher_only = {c.metadata.get("label") for c in source_nb.cells if any(t in tags(c) for t in TEACHER_ONLY)}
    for cell in stored.cells:
        label = cell.metadata.get("label") or cell.get("id")
        if label in teacher_only or cell.get("id") in teacher_only or any(t in tags(cell) for t in TEACHER_ONLY):
            problems.append(f"it holds the cell {label!r}")
    answers = {
        " ".join(line.split())
        for c in stored.cells
        if c.cell_type == "code" and "exercise" in tags(c)
        for line in _code_lines(c.source)
    }
    for number, (answer, sol, _check) in enumerate(exercises(source_nb), start=1):
        if sol is None:
            continue
        given = set(_code_lines(answer.source))
        new_lines = [line for line in _code_lines(solution_code(sol)) if line not in given]
        if new_lines and all(line in answers for line in new_lines):
            problems.append(f"exercise {number}'s answer cell holds its solution")
    return problems


def source_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def built_from(ipynb: Path) -> str | None:
    """The SHA-256 of the source a stored notebook was built from (None if unknown)."""
    if not ipynb.exists():
        return None
    try:
        nb = nbformat.read(str(ipynb), as_version=4)
    except Exception:
        return None
    return nb.metadata.get("leafkit", {}).get("source_sha256")


def twin_reminders(manifest: dict, entries: list) -> list[str]:
    """For each lesson whose source changed since its notebook was built in one language but not in another:
    a reminder that the twin may need the same change."""
    out = []
    langs = list(manifest["languages"])
    for entry in entries:
        changed, unchanged = [], []
        for lang in langs:
            path = source_path(manifest, lang, entry)
            if not path.exists():
                continue
            stored = built_from(path.with_suffix(".ipynb"))
            if stored is None:
                continue
            (changed if stored != source_sha(path) else unchanged).append(path)
        for path in changed:
            for twin in unchanged:
                out.append(
                    f"note: {rel(manifest, path)} changed since its notebook was built, but {rel(manifest, twin)} "
                    f"did not: does the twin need the same change? (The code must stay the same: "
                    f"tests/test_lessons_zh.py.)"
                )
    return out


# --------------------------------------------------------------------- generated parts ----
def generated_source(manifest: dict, lang: str, entry: Entry, text: str) -> str:
    """A lesson source's text with its generated parts written from the manifest."""
    where = rel(manifest, source_path(manifest, lang, entry))
    new = with_heading(text, heading(manifest, lang, entry), where)
    if entry.number == 0:
        new = with_table(new, lesson_table(manifest, lang, ""), where)
    new = with_ranges(new, manifest, lang)
    return with_next_cell(new, next_cell_text(manifest, lang, entry), where)


def generate_parts(manifest: dict, write: bool) -> list[str]:
    """Bring the headings, ``next`` cells, lesson tables and lesson ranges in line with the manifest.

    Return a description of every part that was (or, with ``write=False``, would be) changed:
    ``"<path>: <what>"``, the path relative to the repository.
    """
    changes = []
    for name, (lang, prefix) in READMES.items():
        path = root(manifest) / name
        if lang in manifest["languages"] and path.exists():
            text = path.read_text(encoding="utf-8")
            new = with_ranges(with_table(text, lesson_table(manifest, lang, prefix), name), manifest, lang)
            if new != text:
                changes.append(f"{name}: lesson table or ranges")
                if write:
                    path.write_text(new, encoding="utf-8")
    for lang in manifest["languages"]:
        for entry in manifest["lessons"]:
            path = source_path(manifest, lang, entry)
            if not path.exists():
                continue
            text = path.read_text(encoding="utf-8")
            new = generated_source(manifest, lang, entry, text)
            if new != text:
                changes.append(f"{rel(manifest, path)}: heading, lesson table, ranges or next link")
                if write:
                    path.write_text(new, encoding="utf-8")
    return changes


# ------------------------------------------------------------------------------ execute ----
def explorer_name(source: str) -> str:
    calls = re.findall(r"^(\w+)\(.*\)\s*$", source, re.M)
    return calls[-1] if calls else "the explorer"


#: A tqdm progress bar as text (``tqdm.format_meter`` with a known total), e.g.
#: "training:   0%|          | 0/230 [00:00<?, ?batch/s]" (the first frame, the text/plain a
#: kernel sends with the bar's widget) or "training: 100%|██████████| 230/230 [00:03<00:00,
#: 70.10batch/s, loss 0.1]" (the last).  lessons/sanitize.cfg has the same pattern.
TQDM_FRAME = re.compile(r"^(.*?)\s*\d+%\|[^|\n]*\|\s*\S+/(\S+) \[[^\n]*\]$")
#: The parts of a tqdm frame that change from run to run: "[00:03<00:00, 70.10" of
#: "[00:03<00:00, 70.10batch/s" (a slow bar writes "1.25s/batch"); the unit (group 1) is
#: not timing, so a bar whose unit changed ("batch" -> "批") is a changed output.
TQDM_TIMING = re.compile(r"\[(?:\d+:)?\d+:\d+<(?:(?:\d+:)?\d+:\d+|\?), (?:[\d.]+|\?)(?:s/)?([^,\]/]*)(?:/s)?")
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def widget_states(nb) -> dict:
    """The widget models a run left in ``nb.metadata.widgets`` (nbclient stores them): {model id: state}."""
    stored = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return {model_id: model.get("state", {}) for model_id, model in stored.items()}


def tqdm_last_frame(view: dict, states: dict) -> str | None:
    """The text of a tqdm notebook bar's last frame, rebuilt from its widget models, or None.

    ``view`` is a display_data's data: its widget view names the bar's ``HBox``, whose children
    are tqdm's left text (``HTML``: "training: 100%"), bar (``FloatProgress``: value, max) and
    right text (``HTML``: " 230/230 [00:03<00:00, 70.1batch/s, ...]"), HTML-escaped with
    U+2007 for spaces (tqdm.notebook).  The result is the frame tqdm draws in a terminal.
    None when ``view``'s text/plain is not a tqdm frame or the models are gone (a bar closed
    with ``leave=False`` closes its widgets).
    """
    import html

    if not TQDM_FRAME.match(view.get("text/plain", "")):
        return None
    box = states.get(view.get(WIDGET_VIEW, {}).get("model_id"), {})
    children = [states.get(str(c).removeprefix("IPY_MODEL_")) for c in box.get("children", [])]
    if len(children) != 3 or any(c is None for c in children):
        return None
    left, bar, right = children
    if bar.get("_model_name") != "FloatProgressModel" or not bar.get("max"):
        return None
    from tqdm.std import Bar

    def text(state):
        return html.unescape(state.get("value", "")).replace("\u2007", " ")

    frac = min(max(float(bar.get("value") or 0) / float(bar["max"]), 0.0), 1.0)
    return f"{text(left)}|{format(Bar(frac, 10, charset=Bar.UTF), '')}|{text(right)}"


def strip(nb, placeholder: str) -> None:
    """Remove what must not be stored (widget state, timing metadata) and join split streams.

    A widget view without its state shows "Error displaying widget: model not found"
    in a fresh JupyterLab, so an explorer's view is stored as ``placeholder`` text instead.
    A tqdm bar's view is stored as the text of its last frame (:func:`tqdm_last_frame`), so
    that a learner who opens the notebook sees how training ended; a fresh run's text/plain
    is the first frame, and lessons/sanitize.cfg turns both into the same text for nbval.
    A kernel may send one ``print`` as several stream messages; consecutive messages of
    the same stream are joined into one output, as nbval does before comparing, so that
    rebuilding does not churn the stored notebooks.
    """
    states = widget_states(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        joined = []
        for out in cell.get("outputs", []):
            out.get("metadata", {}).pop("execution", None)
            data = out.get("data", {})
            if WIDGET_VIEW in data:
                text = tqdm_last_frame(data, states)
                if text is None and TQDM_FRAME.match(data.get("text/plain", "")):
                    text = data["text/plain"]  # a bar whose widgets are gone: the frame the kernel sent
                if text is None:
                    text = placeholder.format(name=explorer_name(cell.source))
                out = nbformat.v4.new_output("display_data", data={"text/plain": text})
            prev = joined[-1] if joined else None
            if (
                out.output_type == "stream"
                and prev is not None
                and prev.output_type == "stream"
                and prev.name == out.name
            ):
                prev.text += out.text
            else:
                joined.append(out)
        cell.outputs = joined


def execute(nb, cwd: Path, timeout: int = 600) -> None:
    from nbclient import NotebookClient

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute()


ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
#: The kernel's file for a cell, named in warnings and tracebacks: "/tmp/ipykernel_4242/3141592653.py".
KERNEL_FILE = re.compile(r"(/[^\s:'\"]*)?/ipykernel_\d+/\d+\.py")


def keep_unchanged_outputs(new_nb, old_nb) -> None:
    """Keep the stored outputs of cells whose new outputs differ only in memory addresses, kernel files or
    timings.

    ``<DivBackward0 object at 0x7f...>`` changes on every run, and so do the kernel's
    process id in a warning's ``/tmp/ipykernel_4242/...py:3: UserWarning`` and the
    elapsed time and rate of a tqdm bar's last frame (``[00:03<00:00, 70.10batch/s``);
    keeping the old text keeps rebuilds from churning the stored notebooks (nbval masks
    them all, lessons/sanitize.cfg).
    """
    old = {c.get("id"): c for c in old_nb.cells if c.cell_type == "code"}

    def masked(outputs) -> str:
        text = json.dumps(outputs, sort_keys=True, ensure_ascii=False)
        return TQDM_TIMING.sub(r"[time \1", KERNEL_FILE.sub("<kernel-file>", ADDRESS.sub("0x0", text)))

    for cell in new_nb.cells:
        prev = old.get(cell.id)
        if cell.cell_type == "code" and prev is not None and prev.source == cell.source:
            if masked(prev.outputs) == masked(cell.outputs) and prev.outputs != cell.outputs:
                cell.outputs = prev.outputs


def keep_outputs(new_nb, old_nb) -> None:
    """Copy outputs from ``old_nb`` into the cells of ``new_nb`` whose id and source are unchanged."""
    old = {c.get("id"): c for c in old_nb.cells if c.cell_type == "code"}
    for cell in new_nb.cells:
        prev = old.get(cell.id)
        if cell.cell_type == "code" and prev is not None and prev.source == cell.source:
            cell.outputs = prev.outputs
            cell.execution_count = prev.execution_count


# ------------------------------------------------------------------------------- build ----
def prepare_source(manifest: dict, lang: str, entry: Entry, write: bool) -> tuple:
    """Read a source, label new cells, check its cells and keep it in jupytext's form.

    Return (notebook, problems): ``problems`` lists what would change (``write=False``) or
    what was changed (``write=True``).
    """
    path = source_path(manifest, lang, entry)
    where = rel(manifest, path)
    problems = []
    source = read_source(path)
    if label_cells(source, path):
        problems.append(f"{where}: cells without a label")
        if write:
            write_source(source, path)
            source = read_source(path)
    check_cells(source, where)
    text = path.read_text(encoding="utf-8")
    if canonical(text, path) != text:
        problems.append(f"{where} is not written as jupytext writes it (a save from JupyterLab would change it)")
        if write:
            path.write_text(canonical(text, path), encoding="utf-8")
            source = read_source(path)
    first = source.cells[0].source.splitlines()[0] if source.cells else ""
    if first != heading(manifest, lang, entry):
        raise LessonError(f"{where}: the first line is {first!r}, the manifest says {heading(manifest, lang, entry)!r}")
    return source, problems


def build_one(manifest: dict, lang: str, entry: Entry, run: bool, force: bool) -> str:
    path = source_path(manifest, lang, entry)
    where = rel(manifest, path)
    source, changed = prepare_source(manifest, lang, entry, write=True)
    for change in changed:
        print(f"updated {change}")

    ipynb = path.with_suffix(".ipynb")
    nb = learner_notebook(source)
    old = nbformat.read(str(ipynb), as_version=4) if ipynb.exists() else None
    if old is not None and not force:
        edited_elsewhere = text_inputs(old) not in (text_inputs(nb), text_inputs(source))
        if edited_elsewhere and ipynb.stat().st_mtime > path.stat().st_mtime + 1:
            raise LessonError(
                f"{rel(manifest, ipynb)} was changed after {where}, and not through jupytext: "
                f"its cells differ from the source. Copy the change into {where} (or open the pair "
                "in the teachers' JupyterLab, `make lab-teacher`, and save it), or pass --force to overwrite it."
            )
    if run:
        execute(nb, ipynb.parent)
        strip(nb, manifest["languages"][lang]["explorer_placeholder"])
        if old is not None:
            keep_unchanged_outputs(nb, old)
    elif old is not None:
        keep_outputs(nb, old)
        nb.metadata["language_info"] = old.metadata.get("language_info", nb.metadata["language_info"])
    strip(nb, manifest["languages"][lang]["explorer_placeholder"])
    nb.metadata["leafkit"] = {"source_sha256": source_sha(path)}
    nbformat.validate(nb)
    nbformat.write(nb, str(ipynb))
    os.utime(path)  # the source is never older than its notebook (jupytext refuses to open such a pair)
    return f"{rel(manifest, ipynb)}: {len(nb.cells)} cells{' (executed)' if run else ''}"


def check_one(manifest: dict, lang: str, entry: Entry) -> list[str]:
    """What is out of date for one lesson (nothing is written)."""
    path = source_path(manifest, lang, entry)
    ipynb = path.with_suffix(".ipynb")
    try:
        source, problems = prepare_source(manifest, lang, entry, write=False)
    except LessonError as err:
        return [str(err)]
    if not ipynb.exists():
        return problems + [f"{rel(manifest, ipynb)} is missing"]
    stored = nbformat.read(str(ipynb), as_version=4)
    leaks = solution_leaks(stored, source)
    if leaks:
        problems.append(
            f"{rel(manifest, ipynb)} shows the exercises' solutions to learners ({'; '.join(leaks)}): "
            f"rebuild it with `make lesson L={entry.stem[:2]}`"
        )
    elif inputs(stored) != inputs(learner_notebook(source)):
        problems.append(f"{rel(manifest, ipynb)} does not match {rel(manifest, path)}")
    return problems


def selected(manifest: dict, langs: list[str], only: list[str]) -> list:
    """(lang, entry) for every lesson source that exists and matches the prefixes in ``only``."""
    out = []
    for lang in langs:
        for entry in manifest["lessons"]:
            if only and not any(entry.stem.startswith(p) for p in only):
                continue
            if source_path(manifest, lang, entry).exists():
                out.append((lang, entry))
    return out


def unique_entries(chosen: list) -> list:
    """The lessons of ``(lang, entry)`` pairs, each once, in order."""
    return list({entry.number: entry for _, entry in sorted(chosen, key=lambda item: item[1].number)}.values())


def touched_lessons(manifest: dict, changes: list[str]) -> list:
    """(lang, entry) of every lesson source named in ``changes`` (from :func:`generate_parts`)."""
    out = []
    for lang in manifest["languages"]:
        for entry in manifest["lessons"]:
            if any(c.startswith(rel(manifest, source_path(manifest, lang, entry)) + ":") for c in changes):
                out.append((lang, entry))
    return out


def main(argv=None, manifest_path: Path = MANIFEST) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("only", nargs="*", help="file name prefixes (e.g. 01); default: every lesson")
    ap.add_argument("--lang", action="append", help="en or zh (default: both)")
    ap.add_argument("--no-execute", action="store_true", help="sync inputs only, keep the outputs of unchanged cells")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything is out of date")
    ap.add_argument("--force", action="store_true", help="overwrite a notebook that was edited after its source")
    args = ap.parse_args(argv)
    try:
        manifest = load_manifest(manifest_path)
        langs = args.lang or list(manifest["languages"])
        for entry in manifest["lessons"]:
            if not source_path(manifest, "en", entry).exists():
                raise LessonError(f"manifest lists {entry.stem}, but {source_path(manifest, 'en', entry)} is missing")
        chosen = selected(manifest, langs, args.only)
        if args.check:
            problems = [p + " is out of date" for p in generate_parts(manifest, write=False)]
            for lang, entry in chosen:
                problems += check_one(manifest, lang, entry)
            for note in twin_reminders(manifest, unique_entries(chosen)):
                print(note)
            print("\n".join(problems) or "lessons are up to date")
            if problems:
                print("run `make lessons` to bring them up to date", file=sys.stderr)
            return 1 if problems else 0
        reminders = twin_reminders(manifest, unique_entries(chosen))
        changes = generate_parts(manifest, write=True)
        for change in changes:
            print(f"updated {change}")
        # a new lesson changes lesson 0's table and the next link of the lesson before it: rebuild those too
        for lang, entry in touched_lessons(manifest, changes):
            if (lang, entry) not in chosen:
                what = rel(manifest, source_path(manifest, lang, entry))
                print(f"also rebuilding {what}: its generated parts changed")
                chosen.append((lang, entry))
        chosen.sort(key=lambda item: (list(manifest["languages"]).index(item[0]), item[1].number))
        for lang, entry in chosen:
            print(build_one(manifest, lang, entry, run=not args.no_execute, force=args.force), flush=True)
        for note in reminders:
            print(note, file=sys.stderr)
    except LessonError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
