"""What scripts/build_lessons.py stores for widget outputs, and that nbval accepts it on a fresh run.

A cell's widget view cannot be shown by a fresh kernel (the widget state is not stored),
so the build stores text instead:

* an explorer: "Run this cell to open <Explorer>." (its cell is tagged ``nbval-ignore-output``);
* a tqdm progress bar (``tqdm.auto`` is a widget in Jupyter): the text of the bar's *last*
  frame, "training: 100%|██████████| 46/46 [00:01<00:00, 40.1batch/s, ...]", rebuilt from
  the widget state of the run, so that a learner who opens the notebook before running it
  sees how the training ended.

nbval compares ``text/plain``.  A fresh run sends the bar's *first* frame with the widget
("training:   0%|          | 0/46 [00:00<?, ?batch/s]"); lessons/sanitize.cfg turns both
frames into "training: [tqdm progress bar, total 46]".  The slow test here builds a small
notebook exactly as ``make lessons`` does and runs nbval on it, and shows that the text the
build stored before (the explorer placeholder) fails nbval.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from lesson_sources import MANIFEST, ROOT, build_lessons, lessons, notebook_path

nbformat = pytest.importorskip("nbformat")

SANITIZE = ROOT / "lessons" / "sanitize.cfg"
PLACEHOLDER = MANIFEST["languages"]["en"]["explorer_placeholder"]


def sanitize(text: str) -> str:
    """``text`` as nbval compares it with lessons/sanitize.cfg (nbval's own parser of the file)."""
    from nbval.plugin import get_sanitize_patterns

    for regex, replace in get_sanitize_patterns(SANITIZE.read_text(encoding="utf-8")):
        text = re.sub(regex, replace, text)
    return text


def run_bar(total: int = 20, desc: str = "training", stop: int | None = None):
    """A real tqdm notebook bar run outside a kernel: (its view's data as a kernel sends it, widget states)."""
    pytest.importorskip("ipywidgets")
    import ipywidgets
    from tqdm.notebook import tqdm

    bar = tqdm(total=total, desc=desc, unit="batch", display=False)
    first = bar.container.__repr__(True)  # what display() sends as text/plain (the pretty form)
    for i in range(total if stop is None else stop):
        bar.update(1)
        bar.set_postfix_str(f"loss {1 / (i + 1):.3f}")
    if stop is None:
        bar.close()
    data = {"text/plain": first, build_lessons.WIDGET_VIEW: {"model_id": bar.container.model_id}}
    state = ipywidgets.Widget.get_manager_state(drop_defaults=False)
    return data, {k: v["state"] for k, v in state["state"].items()}


def executed_notebook(data, states, source="bar = tqdm(...)"):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    nb.cells = [cell]
    nb.metadata["widgets"] = {
        build_lessons.WIDGET_STATE: {
            "version_major": 2,
            "version_minor": 0,
            "state": {k: {"model_name": v.get("_model_name"), "state": v} for k, v in states.items()},
        }
    }
    return nb


def test_first_frame_is_what_a_kernel_sends():
    data, _ = run_bar(20)
    assert data["text/plain"] == "training:   0%|          | 0/20 [00:00<?, ?batch/s]"


def test_a_tqdm_bar_is_stored_as_its_last_frame():
    data, states = run_bar(20)
    nb = executed_notebook(data, states)
    build_lessons.strip(nb, PLACEHOLDER)
    (out,) = nb.cells[0].outputs
    assert list(out.data) == ["text/plain"] and "widgets" not in nb.metadata
    text = out.data["text/plain"]
    assert re.fullmatch(r"training: 100%\|██████████\| 20/20 \[00:00<00:00, [\d.]+batch/s, loss 0\.050\]", text), text
    build_lessons.strip(nb, PLACEHOLDER)  # the build strips twice: nothing changes the second time
    assert nb.cells[0].outputs[0].data["text/plain"] == text


def test_an_unfinished_bar_shows_where_it_stopped():
    data, states = run_bar(20, stop=5)
    text = build_lessons.tqdm_last_frame(data, states)
    assert text.startswith("training:  25%|██▌       | 5/20 [") and text.endswith("loss 0.200]"), text


def test_a_bar_without_its_widgets_keeps_the_frame_the_kernel_sent():
    data, _ = run_bar(20)
    nb = executed_notebook(data, {})  # leave=False closes the bar's widgets: no state is left
    build_lessons.strip(nb, PLACEHOLDER)
    assert nb.cells[0].outputs[0].data["text/plain"] == data["text/plain"]


def test_an_explorer_still_gets_the_placeholder():
    data = {"text/plain": "VBox(children=(HTML(value='...'),))", build_lessons.WIDGET_VIEW: {"model_id": "abc"}}
    nb = executed_notebook(data, {}, source="from leafkit.widgets import LeafExplorer\n\nLeafExplorer()")
    build_lessons.strip(nb, PLACEHOLDER)
    assert nb.cells[0].outputs[0].data == {"text/plain": "Run this cell to open LeafExplorer."}


def test_sanitize_makes_first_and_last_frames_equal():
    data, states = run_bar(46)
    first, last = data["text/plain"], build_lessons.tqdm_last_frame(data, states)
    assert first != last
    assert sanitize(first) == sanitize(last) == "training: [tqdm progress bar, total 46]"
    other, _ = run_bar(47)
    assert sanitize(other["text/plain"]) != sanitize(first)  # a different total is a different bar
    no_desc = "100%|██████████| 5/5 [00:00<00:00, 9.1it/s]"
    assert sanitize(no_desc) == " [tqdm progress bar, total 5]"
    assert sanitize("epoch 1: mean loss 0.3, test accuracy 350/360") == "epoch 1: mean loss 0.3, test accuracy 350/360"


def test_rebuilding_keeps_a_bar_whose_frame_differs_only_in_timing():
    old = nbformat.v4.new_notebook()
    new = nbformat.v4.new_notebook()
    frame = "training: 100%|██████████| 46/46 [{}, epoch 2/2 loss 0.1234]"
    for nb, timing in ((old, "00:01<00:00, 40.10batch/s"), (new, "00:02<00:00, 22.97batch/s")):
        cell = nbformat.v4.new_code_cell("train()")
        cell.id = "train"
        cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": frame.format(timing)})]
        nb.cells = [cell]
    build_lessons.keep_unchanged_outputs(new, old)
    assert new.cells[0].outputs[0].data["text/plain"] == frame.format("00:01<00:00, 40.10batch/s")
    new.cells[0].outputs[0].data["text/plain"] = frame.format("00:02<00:00, 22.97batch/s").replace("0.1234", "0.2")
    build_lessons.keep_unchanged_outputs(new, old)
    assert "loss 0.2]" in new.cells[0].outputs[0].data["text/plain"]  # a real change is kept


def test_a_bars_unit_is_not_timing():
    """A slow bar's rate ("1.25s/batch") is timing; a bar whose unit changed ("batch" -> "批") is a new output."""
    frame = "训练: 100%|██████████| 46/46 [{}, 第 2/2 轮]"

    def kept(old_timing, new_timing) -> bool:
        old, new = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
        for nb, timing in ((old, old_timing), (new, new_timing)):
            cell = nbformat.v4.new_code_cell("train()")
            cell.id = "train"
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": frame.format(timing)})]
            nb.cells = [cell]
        build_lessons.keep_unchanged_outputs(new, old)
        return new.cells[0].outputs[0].data["text/plain"] == frame.format(old_timing)

    assert kept("00:01<00:00, 40.10batch/s", "00:40<00:00, 1.25s/batch")
    assert kept("00:01<00:00, 40.10批/s", "00:02<00:00, 22.97批/s")
    assert not kept("00:01<00:00, 40.10batch/s", "00:02<00:00, 22.97批/s")


@pytest.mark.parametrize("item", lessons(), ids=lambda i: f"{i[0]}-{i[1].stem}")
def test_stored_bars_are_finished_frames(item):
    """Every tqdm bar a lesson stores is the text of its last frame, at 100%."""
    stored = nbformat.read(str(notebook_path(*item)), as_version=4)
    for cell in stored.cells:
        for out in cell.get("outputs", []):
            text = out.get("data", {}).get("text/plain", "")
            if build_lessons.TQDM_FRAME.match(text):
                assert re.search(r": 100%\|██████████\|", text), (cell.id, text)


NOTEBOOK = """\
from tqdm.auto import tqdm

bar = tqdm(range(30), desc="training", unit="batch")
for i in bar:
    bar.set_postfix_str(f"loss {1 / (i + 1):.4f}")
print("trained")
"""


@pytest.mark.slow
def test_nbval_passes_on_a_built_notebook_with_a_bar(tmp_path):
    """Build a notebook as `make lessons` does (nbclient, then strip), then run nbval on it with
    lessons/sanitize.cfg; the same notebook stored with the placeholder text fails."""
    pytest.importorskip("nbclient")
    pytest.importorskip("nbval")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(build_lessons.KERNELSPEC)
    nb.cells = [nbformat.v4.new_code_cell(NOTEBOOK)]
    nb.cells[0].id = "bar"
    build_lessons.execute(nb, tmp_path)
    sent = [o.data["text/plain"] for o in nb.cells[0].outputs if o.output_type == "display_data"]
    assert sent == ["training:   0%|          | 0/30 [00:00<?, ?batch/s]"]  # what a fresh run sends
    build_lessons.strip(nb, PLACEHOLDER)
    (bar, printed) = nb.cells[0].outputs
    assert bar.data["text/plain"].startswith("training: 100%|██████████| 30/30 [")
    assert bar.data["text/plain"].endswith(", loss 0.0333]") and printed.text == "trained\n"
    nbformat.write(nb, str(tmp_path / "built.ipynb"))

    bar.data["text/plain"] = PLACEHOLDER.format(name=build_lessons.explorer_name(NOTEBOOK))  # the old build
    nbformat.write(nb, str(tmp_path / "placeholder.ipynb"))

    def nbval(name: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
                "--nbval",
                "--nbval-current-env",
                "--nbval-sanitize-with",
                str(SANITIZE),
                name,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )

    built = nbval("built.ipynb")
    assert built.returncode == 0, built.stdout[-3000:]
    old = nbval("placeholder.ipynb")
    assert old.returncode == 1 and "mismatch 'text/plain'" in old.stdout, old.stdout[-3000:]
