"""The lessons' experiments print the same lines on real PyTorch as on leafkit.

Every lesson cell tagged ``parity`` (see scripts/build_lessons.py) is an
experiment.  For each lesson of lessons/manifest.toml, in English and (where it
exists) in Chinese, this test runs its parity cells, in order, in one fresh
namespace, twice:

* as written (``import leafkit as torch``), and
* on real PyTorch: ``import leafkit as torch`` becomes ``import torch``.

and compares what each cell prints, line by line.  It also checks that the
leafkit run prints what the notebook stores (the text nbval compares), so the
lines compared here are the lines a learner reads.

Cells that use cuda
-------------------
The PyTorch here is a CPU build (and CI has no GPU), while leafkit runs its
``cuda`` device everywhere (on a GPU through CuPy, otherwise simulated).  In
cells that mention ``cuda`` the torch copy swaps every device move for a dtype
copy, which keeps each lesson's point: a differentiable copy of a tensor that
requires grad is a non-leaf with ``grad_fn=ToCopyBackward0``, and a tensor
created with ``requires_grad=True`` is a leaf.

=====================  ====================  =====================================
leafkit (lesson)       torch (this test)     same because
=====================  ====================  =====================================
``.cuda()``            ``.double()``         both are ``_to_copy``: ToCopyBackward0
``device="cuda"``      ``dtype=torch.float64``  created by the user: still a leaf
``.to("cpu")``         ``.float()``          float64 -> float32 is a real copy
=====================  ====================  =====================================

``.to("cpu")`` could not stay as it is: on a CPU tensor it returns the tensor
itself (a leaf), which is exactly the point lesson 1 makes about a cuda
tensor.  ``model.cuda()`` becomes ``model.double()``: both convert the
parameters in place, so they stay leaves.

Lines that differ, and why
--------------------------
Only device strings differ.  When two lines differ and leafkit's line names
the cuda device, both get ``cuda:0`` / ``cuda`` / ``cpu`` replaced by
``<device>`` and the tensor repr suffixes ``, device='cuda:0'`` (leafkit) and
``, dtype=torch.float64`` (torch) removed, and must then be equal.  Every
other line must match exactly (memory addresses masked).
Today these lines differ before normalisation:

* lesson 1: ``b: ... device: cuda:0``, ``c: ... device: cuda:0``,
  ``e: ... device: cuda:0`` (torch: ``cpu``);
* lesson 2: ``w1: ... device=cuda:0``, ``w2: ... device=cuda:0`` and
  ``w1.grad: tensor([3.], device='cuda:0')`` (torch: ``cpu`` and
  ``dtype=torch.float64``);
* lesson 4: ``fix_1``, ``fix_2`` and ``model.weight`` ``device=cuda:0``.

``test_device_differences_are_the_documented_ones`` keeps this list honest.  A
Chinese lesson may translate its printed labels, so it must show as many
device-only differences as its English twin, in the same cells.

Random numbers differ between leafkit (NumPy's generator) and PyTorch, so no
parity cell prints a random value.

Claims about trained results
----------------------------
What a lesson says about a *trained* result (a GAN's samples, an RNN's predictions, a
saliency map, a falling loss) depends on random numbers, and PyTorch's are not
leafkit's.  So a lesson states only what holds whatever the seed, and a ``claim`` cell
(source only, not in the learner's notebook) checks it with ``assert``.
``test_claims_hold_on_pytorch_whatever_the_seed`` runs each lesson with claims on real
PyTorch, every code cell up to its last claim (explorers left out), once per seed in
``CLAIM_SEEDS``: each ``torch.manual_seed(n)`` of the lesson (and of the library code it
calls) seeds ``n + offset`` instead.  Every claim must hold in every run.  (On leafkit,
with the lesson's own seeds, the exercise test runs the claim cells too.)
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import linecache
import re
from pathlib import Path

import pytest
from lesson_sources import ENTRIES, lessons, notebook_path, read_source, source_path, tags

nbformat = pytest.importorskip("nbformat")

#: (lang, notebook) of every lesson, English first, then the Chinese twins that exist.
LESSONS = [(lang, notebook_path(lang, entry)) for lang, entry in lessons()]
TAG = "parity"

pytestmark = [
    pytest.mark.parity,
    pytest.mark.skipif(
        importlib.util.find_spec("torch") is None, reason="torch is not installed (pip install -e '.[parity]')"
    ),
]

IMPORT_LEAFKIT = re.compile(r"^import leafkit as torch$", re.MULTILINE)
#: leafkit spelling -> torch spelling, applied to cells that mention cuda (see the module docstring).
CUDA_SWAPS = [
    (re.compile(r"\.cuda\(\)"), ".double()"),
    (re.compile(r"""device=["']cuda["']"""), "dtype=torch.float64"),
    (re.compile(r"""\.to\(["']cpu["']\)"""), ".float()"),
]
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
DEVICE_SUFFIX = re.compile(r", (device='cuda:0'|dtype=torch\.float64)")
DEVICE_NAME = re.compile(r"\b(cuda:0|cuda|cpu)\b")

#: (lesson prefix, start of the leafkit line) for every line that differs only in its device string.
DOCUMENTED_DEVICE_LINES = {
    ("01", "b: "),
    ("01", "c: "),
    ("01", "e: "),
    ("02", "w1: "),
    ("02", "w2: "),
    ("02", "w1.grad: "),
    ("04", "fix_1 "),
    ("04", "fix_2 "),
    ("04", "model.weight "),
}


def parity_cells(path: Path) -> list:
    nb = nbformat.read(str(path), as_version=4)
    return [c for c in nb.cells if c.cell_type == "code" and TAG in c.metadata.get("tags", [])]


def uses_cuda(src: str) -> bool:
    return "cuda" in src


def to_torch(src: str) -> str:
    src = IMPORT_LEAFKIT.sub("import torch", src)
    if uses_cuda(src):
        for pattern, repl in CUDA_SWAPS:
            src = pattern.sub(repl, src)
    return src


def run_cells(sources: list, label: str) -> list:
    """Exec the cells in one namespace; return each cell's stdout.

    Each cell's source goes into ``linecache`` under the cell's file name, as IPython does
    for a notebook cell, so that tracebacks (anomaly mode's forward traceback, lesson 9)
    show the code of each line, as they do in the notebook.
    """
    ns: dict = {"__name__": f"__lesson_{label}__"}
    outs = []
    for i, src in enumerate(sources):
        buf = io.StringIO()
        filename = f"<{label} cell {i}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
        with contextlib.redirect_stdout(buf):
            try:
                exec(compile(src, filename, "exec"), ns)
            except Exception as exc:  # report which cell, with its source
                raise AssertionError(f"{label}: parity cell {i} raised {type(exc).__name__}: {exc}\n{src}") from exc
        outs.append(buf.getvalue())
    return outs


def stored_stdout(cell) -> str:
    return "".join(
        o.get("text", "")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )


def normalise_device(line: str) -> str:
    return DEVICE_NAME.sub("<device>", DEVICE_SUFFIX.sub("", line))


def compare(lesson: str, cells, lk_outs, th_outs):
    """Return (mismatches, device_lines): lines that differ, and lines that differ only in device."""
    mismatches, device_lines = [], []
    for n, (lk, th) in enumerate(zip(lk_outs, th_outs)):
        lk_lines = ADDRESS.sub("0xADDR", lk).splitlines()
        th_lines = ADDRESS.sub("0xADDR", th).splitlines()
        if len(lk_lines) != len(th_lines):
            mismatches.append(
                f"cell {n}: leafkit printed {len(lk_lines)} lines, torch {len(th_lines)}\n"
                f"--- leafkit\n{lk}--- torch\n{th}"
            )
            continue
        for a, b in zip(lk_lines, th_lines):
            if a == b:
                continue
            if "cuda" in a and normalise_device(a) == normalise_device(b):
                device_lines.append((lesson, a))
            else:
                mismatches.append(f"cell {n}:\n  leafkit: {a}\n  torch:   {b}")
    return mismatches, device_lines


@pytest.fixture(scope="module")
def runs():
    """Per lesson: (cells, leafkit stdout per cell, torch stdout per cell)."""
    cache = {}

    def get(path: Path):
        if path not in cache:
            cells = parity_cells(path)
            lk = run_cells([c.source for c in cells], f"leafkit {path.name}")
            th = run_cells([to_torch(c.source) for c in cells], f"torch {path.name}")
            cache[path] = (cells, lk, th)
        return cache[path]

    return get


def lesson_ids(item) -> str:
    lang, path = item
    return f"{lang}-{path.stem}"


def test_every_lesson_has_experiments():
    assert [p.name for lang, p in LESSONS if lang == "en"] == [f"{e.stem}.ipynb" for e in ENTRIES]
    for _, path in LESSONS:
        assert len(parity_cells(path)) >= 1, f"{path} has no cell tagged {TAG!r}"


@pytest.mark.parametrize("item", LESSONS, ids=lesson_ids)
def test_leafkit_prints_what_the_notebook_stores(item, runs):
    _, path = item
    cells, lk_outs, _ = runs(path)
    for cell, out in zip(cells, lk_outs):
        assert ADDRESS.sub("0xADDR", out) == ADDRESS.sub("0xADDR", stored_stdout(cell)), (
            f"{path}, parity cell {cell.get('id')!r}: the stored output is stale; rebuild it with "
            f"`make lesson L={path.name[:2]}`\n{cell.source}"
        )


@pytest.mark.parametrize("item", LESSONS, ids=lesson_ids)
def test_lesson_matches_pytorch(item, runs):
    _, path = item
    cells, lk_outs, th_outs = runs(path)
    assert any(out.strip() for out in lk_outs), f"{path}: the parity cells print nothing"
    mismatches, _ = compare(path.name[:2], cells, lk_outs, th_outs)
    assert not mismatches, f"{path}: leafkit and PyTorch print different lines:\n" + "\n".join(mismatches)


def test_device_differences_are_the_documented_ones(runs):
    found = set()
    for lang, path in LESSONS:
        if lang != "en":
            continue
        cells, lk_outs, th_outs = runs(path)
        _, device_lines = compare(path.name[:2], cells, lk_outs, th_outs)
        for lesson, line in device_lines:
            keys = [k for k in DOCUMENTED_DEVICE_LINES if k[0] == lesson and line.startswith(k[1])]
            assert keys, f"lesson {lesson}: undocumented device-only difference: {line!r}"
            found.update(keys)
    assert found == DOCUMENTED_DEVICE_LINES, f"documented but not seen: {DOCUMENTED_DEVICE_LINES - found}"


def device_differences_per_cell(path, runs) -> list:
    cells, lk_outs, th_outs = runs(path)
    counts = []
    for cell, lk, th in zip(cells, lk_outs, th_outs):
        _, lines = compare(path.name[:2], [cell], [lk], [th])
        counts.append((cell.get("id"), len(lines)))
    return counts


@pytest.mark.parametrize("item", [i for i in LESSONS if i[0] != "en"], ids=lesson_ids)
def test_translated_lesson_differs_from_pytorch_where_english_does(item, runs):
    lang, path = item
    english = next(p for lg, p in LESSONS if lg == "en" and p.name == path.name)
    assert device_differences_per_cell(path, runs) == device_differences_per_cell(english, runs)


def test_to_torch_swaps():
    src = 'import leafkit as torch\nb = a.cuda()\ne = torch.randn(2, device="cuda")\nf = e.to("cpu")\n'
    assert to_torch(src) == ("import torch\nb = a.double()\ne = torch.randn(2, dtype=torch.float64)\nf = e.float()\n")
    assert to_torch("import leafkit as torch\nx = y.to('cpu')\n") == "import torch\nx = y.to('cpu')\n"


# ----------------------------------------------------------------- claims about training ----
CLAIM = "claim"
#: Offsets added to every torch.manual_seed(n) of a lesson: 0 is the lesson's own seeds.
CLAIM_SEEDS = (0, 1000, 2000)


def claim_cells(entry) -> tuple[list, int]:
    """The English source's code cells up to its last claim (explorers left out), and how many claims."""
    cells = [c for c in read_source("en", entry).cells if c.cell_type == "code"]
    last = max((i for i, c in enumerate(cells) if CLAIM in tags(c)), default=-1)
    chosen = [c for c in cells[: last + 1] if "nbval-ignore-output" not in tags(c)]
    return chosen, sum(CLAIM in tags(c) for c in chosen)


LESSONS_WITH_CLAIMS = [e for e in ENTRIES if claim_cells(e)[1]]


def run_with_seed_offset(entry, offset: int) -> None:
    """Run the lesson's cells up to its last claim on real PyTorch, every manual_seed(n) seeding n + offset."""
    import os

    import matplotlib
    import torch

    matplotlib.use("Agg")
    cells, _ = claim_cells(entry)
    seed = torch.manual_seed

    def shifted(n):
        return seed(n + offset)

    ns: dict = {"__name__": f"__claims_{entry.stem}__"}
    cwd = os.getcwd()
    os.chdir(source_path("en", entry).parent)
    torch.manual_seed = shifted
    try:
        for cell in cells:
            label = cell.metadata.get("label")
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                try:
                    exec(compile(to_torch(cell.source), f"<{entry.stem} {label}>", "exec"), ns)
                except AssertionError as err:
                    if CLAIM not in tags(cell):
                        raise
                    raise AssertionError(
                        f"{entry.stem}: claim {label!r} does not hold on PyTorch with seed offset {offset}: {err}\n"
                        f"{cell.source}"
                    ) from None
                except Exception as exc:
                    raise AssertionError(
                        f"{entry.stem}: cell {label!r} raised {type(exc).__name__} on PyTorch: {exc}"
                    ) from exc
    finally:
        torch.manual_seed = seed
        os.chdir(cwd)
        import matplotlib.pyplot as plt

        plt.close("all")


def test_trained_results_are_claimed_in_claim_cells():
    """The lessons that train something say what holds in a claim cell (4: the digits MLP; 8: a GAN, an RNN,
    a saliency map), and a claim cell never prints: it only asserts."""
    assert {e.number for e in LESSONS_WITH_CLAIMS} >= {4, 8}
    for entry in LESSONS_WITH_CLAIMS:
        for cell in claim_cells(entry)[0]:
            if CLAIM in tags(cell):
                assert "assert " in cell.source and "print(" not in cell.source, cell.metadata.get("label")


@pytest.mark.slow
@pytest.mark.parametrize("offset", CLAIM_SEEDS)
@pytest.mark.parametrize("entry", LESSONS_WITH_CLAIMS, ids=lambda e: e.stem)
def test_claims_hold_on_pytorch_whatever_the_seed(entry, offset):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small models: one thread is faster, and CI has two cores
    try:
        run_with_seed_offset(entry, offset)
    finally:
        torch.set_num_threads(threads)
