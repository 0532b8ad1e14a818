#!/usr/bin/env python3
"""Sync the lesson notebooks with their MyST Markdown sources, and run them.

    python scripts/build_lessons.py                 # every lesson (en and zh): sync md -> ipynb, execute, store outputs
    python scripts/build_lessons.py 01              # only lessons whose file name starts with 01 (both languages)
    python scripts/build_lessons.py --lang zh 00    # only lessons/zh/00_*
    python scripts/build_lessons.py --no-execute    # sync the inputs only; unchanged cells keep their outputs
    python scripts/build_lessons.py --check         # change nothing; exit 1 if anything is out of date

``make lessons`` runs the first line, ``make lesson L=01`` the second.

The source of a lesson is ``lessons/NN_name.md`` (``lessons/zh/NN_name.md`` for its
Chinese twin), a MyST Markdown notebook that jupytext pairs with ``NN_name.ipynb``
beside it (``lessons/jupytext.toml``): in JupyterLab (``make lab``) the pair opens as
one notebook, and saving writes both files.  The list of lessons is
``lessons/manifest.toml``.

What this script does, per lesson:

1. writes the generated parts of the sources from the manifest: the lesson table in
   lesson 0 and in the README(s), and each lesson's ``next`` cell;
2. reads the source with jupytext and checks its cells: every cell has a ``label``
   (cell metadata, ``:label:`` in a ``{code-cell}``, ``+++ {"label": ...}`` before a
   Markdown cell) that is unique in the lesson and becomes the notebook cell's ``id``,
   so ids never depend on a cell's position; a cell without a label gets one, written
   back into the source;
3. writes the learner's notebook: the source without its ``solution`` cells;
4. executes it with nbclient (working directory: the notebook's folder) and stores the
   outputs.  Widget state is never stored: an explorer cell stores a one-line text
   ("Run this cell to open LeafExplorer.") that any fresh kernel can show, and a tqdm
   progress bar (a widget in Jupyter) stores the text of its last frame
   ("training: 100%|██████████| 230/230 [00:03<00:00, 70.1batch/s, ...]"), read from the
   widget state the run left.  Outputs are never edited by hand;
5. touches the source, so that jupytext sees it as at least as new as the notebook.

Cell tags (written as text in the source, ``:tags: [parity]``)
--------------------------------------------------------------
``parity``
    An experiment: tests/test_lessons_parity.py runs these cells again on real
    PyTorch (``import leafkit as torch`` becomes ``import torch``) and compares
    what they print.
``nbval-ignore-output``
    A cell that displays an explorer widget (its output is not compared by nbval).
``exercise`` / ``check``
    The learner's answer cell and the cell that checks it.
``hide-input``
    Jupyter Book's tag: the learner's notebook folds the cell's input
    (``jupyter.source_hidden``), as for the checks' helper code.
``solution``
    A Markdown cell right after an ``exercise`` cell, holding that answer cell's
    solution between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (nbgrader's
    markers) inside a collapsed ``<details>`` block.  It is not in the learner's
    notebook; tests/test_lessons_exercises.py runs the lesson with it.

Run it with the project's interpreter (``.venv/bin/python``): it needs jupytext,
nbclient, leafkit, ipykernel, matplotlib and scikit-learn.
"""

from __future__ import annotations

import argparse
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
LABEL = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what nbformat allows as a cell id
TABLE_BEGIN = "<!-- begin lesson table: generated from lessons/manifest.toml by `make lessons` -->"
TABLE_END = "<!-- end lesson table -->"
BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

#: README files that carry a lesson table: path -> (language, link prefix to the lessons)
READMES = {ROOT / "README.md": ("en", "lessons/"), ROOT / "README.zh-CN.md": ("zh", "lessons/zh/")}


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
    """Read lessons/manifest.toml: ``{"lessons": [Entry, ...], "languages": {lang: {...}}}``."""
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
    return {"lessons": lessons, "languages": languages}


def folder(manifest: dict, lang: str) -> Path:
    return ROOT / manifest["languages"][lang]["folder"]


def source_path(manifest: dict, lang: str, entry: Entry) -> Path:
    return folder(manifest, lang) / f"{entry.stem}.md"


def heading(manifest: dict, lang: str, entry: Entry) -> str:
    """The first line of a lesson: ``# <title>`` for lesson 0, ``# Lesson N: <title>`` otherwise."""
    title = entry.title[lang]
    if entry.number == 0:
        return f"# {title}"
    return "# " + manifest["languages"][lang]["heading"].format(number=entry.number, title=title)


def next_sentence(manifest: dict, lang: str, entry: Entry) -> str | None:
    """The text of ``entry``'s ``next`` cell, or None for the last lesson."""
    lessons = manifest["lessons"]
    later = [e for e in lessons if e.number > entry.number]
    if not later:
        return None
    nxt = later[0]
    return manifest["languages"][lang]["next"].format(number=nxt.number, title=nxt.title[lang], stem=nxt.stem)


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


# ----------------------------------------------------------------------------- sources ----
def read_source(path: Path):
    import jupytext

    return jupytext.read(str(path), fmt=FORMAT)


def write_source(nb, path: Path) -> None:
    """Write a source as jupytext would when saving the pair (with lessons/jupytext.toml)."""
    import jupytext
    from jupytext.config import load_jupytext_config

    jupytext.write(nb, str(path), fmt=FORMAT, config=load_jupytext_config(str(path)))


def tags(cell) -> list:
    return list(cell.metadata.get("tags", []))


def solution_code(cell) -> str:
    """The code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in a solution cell."""
    m = re.search(rf"^{re.escape(BEGIN_SOLUTION)}[ \t]*\n(.*?)^{re.escape(END_SOLUTION)}", cell.source, re.M | re.S)
    if not m:
        raise LessonError(f"solution cell {cell.metadata.get('label')!r} has no {BEGIN_SOLUTION} ... {END_SOLUTION}")
    return m.group(1).rstrip("\n")


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
            solution_code(cell)


def label_cells(nb, path: Path) -> bool:
    """Give every cell without a label one (written back to the source). Return True if any changed."""
    used = {c.metadata["label"] for c in nb.cells if isinstance(c.metadata.get("label"), str)}
    changed = False
    for cell in nb.cells:
        if not isinstance(cell.metadata.get("label"), str):
            label = _new_label(cell, used)
            used.add(label)
            cell.metadata = nbformat.NotebookNode({"label": label, **cell.metadata})
            print(f"{path.relative_to(ROOT)}: labelled a new cell {label!r}")
            changed = True
    return changed


def learner_notebook(source_nb):
    """The notebook a learner gets: no solution cells, cell id = label, no outputs."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["jupytext"] = {"formats": "ipynb," + FORMAT}
    for cell in source_nb.cells:
        if "solution" in tags(cell):
            continue
        meta = {k: v for k, v in cell.metadata.items()}
        if "hide-input" in tags(cell):  # Jupyter Book's tag; JupyterLab folds the input (the outputs stay)
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


# --------------------------------------------------------------------- generated parts ----
def generate_parts(manifest: dict, write: bool) -> list[str]:
    """Bring the lesson tables and the ``next`` cells in line with the manifest.

    Return a description of every part that was (or, with ``write=False``, would be) changed.
    """
    changes = []
    for path, (lang, prefix) in READMES.items():
        if lang in manifest["languages"] and path.exists():
            text = path.read_text(encoding="utf-8")
            new = with_table(text, lesson_table(manifest, lang, prefix), path.name)
            if new != text:
                changes.append(f"{path.relative_to(ROOT)}: lesson table")
                if write:
                    path.write_text(new, encoding="utf-8")
    for lang in manifest["languages"]:
        for entry in manifest["lessons"]:
            path = source_path(manifest, lang, entry)
            if not path.exists():
                continue
            text = path.read_text(encoding="utf-8")
            new = text
            if entry.number == 0:
                new = with_table(new, lesson_table(manifest, lang, ""), str(path.relative_to(ROOT)))
            new = with_next_cell(new, next_sentence(manifest, lang, entry), str(path.relative_to(ROOT)))
            if new != text:
                changes.append(f"{path.relative_to(ROOT)}: lesson table or next link")
                if write:
                    path.write_text(new, encoding="utf-8")
    return changes


NEXT_CELL = re.compile(r'(^\+\+\+ \{"label": "next"\}\n\n)(.*?)(?=\n\n\+\+\+|\n\n```\{code-cell\}|\n*\Z)', re.M | re.S)


def with_next_cell(text: str, sentence: str | None, where: str) -> str:
    m = NEXT_CELL.search(text)
    if sentence is None:
        if m:
            raise LessonError(f"{where}: the last lesson has a 'next' cell; remove it")
        return text
    if not m:
        raise LessonError(f'{where}: no Markdown cell labelled "next" (+++ {{"label": "next"}}) at the end')
    return text[: m.start(2)] + sentence + text[m.end(2) :]


# ------------------------------------------------------------------------------ execute ----
def explorer_name(source: str) -> str:
    calls = re.findall(r"^(\w+)\(.*\)\s*$", source, re.M)
    return calls[-1] if calls else "the explorer"


#: A tqdm progress bar as text (``tqdm.format_meter`` with a known total), e.g.
#: "training:   0%|          | 0/230 [00:00<?, ?batch/s]" (the first frame, the text/plain a
#: kernel sends with the bar's widget) or "training: 100%|██████████| 230/230 [00:03<00:00,
#: 70.10batch/s, loss 0.1]" (the last).  lessons/sanitize.cfg has the same pattern.
TQDM_FRAME = re.compile(r"^(.*?)\s*\d+%\|[^|\n]*\|\s*\S+/(\S+) \[[^\n]*\]$")
#: The parts of a tqdm frame that change from run to run: "[00:03<00:00, 70.10batch/s".
TQDM_TIMING = re.compile(r"\[(?:\d+:)?\d+:\d+<(?:(?:\d+:)?\d+:\d+|\?), [^,\]]*")
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
        return TQDM_TIMING.sub("[time", KERNEL_FILE.sub("<kernel-file>", ADDRESS.sub("0x0", text)))

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
def build_one(manifest: dict, lang: str, entry: Entry, run: bool, force: bool) -> str:
    path = source_path(manifest, lang, entry)
    where = str(path.relative_to(ROOT))
    source = read_source(path)
    if label_cells(source, path):
        write_source(source, path)
        source = read_source(path)
    check_cells(source, where)
    first = source.cells[0].source.splitlines()[0] if source.cells else ""
    if first != heading(manifest, lang, entry):
        raise LessonError(f"{where}: the first line is {first!r}, the manifest says {heading(manifest, lang, entry)!r}")

    ipynb = path.with_suffix(".ipynb")
    nb = learner_notebook(source)
    old = nbformat.read(str(ipynb), as_version=4) if ipynb.exists() else None
    if old is not None and not force:
        edited_elsewhere = text_inputs(old) not in (text_inputs(nb), text_inputs(source))
        if edited_elsewhere and ipynb.stat().st_mtime > path.stat().st_mtime + 1:
            raise LessonError(
                f"{ipynb.relative_to(ROOT)} was changed after {where}, and not through jupytext: "
                f"its cells differ from the source. Copy the change into {where} (or open the pair "
                "in JupyterLab with jupytext, `make lab`, and save it), or pass --force to overwrite it."
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
    nbformat.validate(nb)
    nbformat.write(nb, str(ipynb))
    os.utime(path)  # the source is never older than its notebook (jupytext refuses to open such a pair)
    return f"{ipynb.relative_to(ROOT)}: {len(nb.cells)} cells{' (executed)' if run else ''}"


def check_one(manifest: dict, lang: str, entry: Entry) -> list[str]:
    """What is out of date for one lesson (nothing is written)."""
    path = source_path(manifest, lang, entry)
    where = str(path.relative_to(ROOT))
    problems = []
    source = read_source(path)
    try:
        check_cells(source, where)
    except LessonError as err:
        return [str(err)]
    first = source.cells[0].source.splitlines()[0] if source.cells else ""
    if first != heading(manifest, lang, entry):
        problems.append(f"{where}: the first line is {first!r}, the manifest says {heading(manifest, lang, entry)!r}")
    ipynb = path.with_suffix(".ipynb")
    if not ipynb.exists():
        return problems + [f"{ipynb.relative_to(ROOT)} is missing"]
    stored = nbformat.read(str(ipynb), as_version=4)
    if inputs(stored) != inputs(learner_notebook(source)):
        problems.append(f"{ipynb.relative_to(ROOT)} does not match {where} (or shows a solution)")
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("only", nargs="*", help="file name prefixes (e.g. 01); default: every lesson")
    ap.add_argument("--lang", action="append", help="en or zh (default: both)")
    ap.add_argument("--no-execute", action="store_true", help="sync inputs only, keep the outputs of unchanged cells")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything is out of date")
    ap.add_argument("--force", action="store_true", help="overwrite a notebook that was edited after its source")
    args = ap.parse_args(argv)
    try:
        manifest = load_manifest()
        langs = args.lang or list(manifest["languages"])
        for entry in manifest["lessons"]:
            if not source_path(manifest, "en", entry).exists():
                raise LessonError(f"manifest lists {entry.stem}, but {source_path(manifest, 'en', entry)} is missing")
        if args.check:
            problems = generate_parts(manifest, write=False)
            problems = [p + " is out of date" for p in problems]
            for lang, entry in selected(manifest, langs, args.only):
                problems += check_one(manifest, lang, entry)
            print("\n".join(problems) or "lessons are up to date")
            if problems:
                print("run `make lessons` to bring them up to date", file=sys.stderr)
            return 1 if problems else 0
        for change in generate_parts(manifest, write=True):
            print(f"updated {change}")
        for lang, entry in selected(manifest, langs, args.only):
            print(build_one(manifest, lang, entry, run=not args.no_execute, force=args.force), flush=True)
    except LessonError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
