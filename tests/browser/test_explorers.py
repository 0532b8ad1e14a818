"""Every explorer of leafkit.widgets in JupyterLab (headless Chromium).

For each explorer a small notebook is written to a scratch folder inside the
server root (never into lessons/), opened and run; then the explorer's controls
are toggled like a learner would (see explorer_driver.py) and after every step
the drawing (SVG) and the table must have changed, with no traceback anywhere.
The final state of each explorer is saved as a PNG to
artifacts/screenshots/<explorer>.png.  With LEAFKIT_UPDATE_DOCS=1 it is also
copied to docs/screenshots/ (tracked, for the README); a plain test run never
changes tracked files.
"""
from __future__ import annotations

import os
import shutil

import pytest

import explorer_driver as drv
from lab_harness import REPO, SCREENSHOTS, write_notebook

DOCS_SHOTS = REPO / "docs" / "screenshots"

CASES = {
    # kind: (file name, notebook cells)
    "leaf": ("leaf_explorer", ["from leafkit.widgets import LeafExplorer\nLeafExplorer()"]),
    "grad_mode": ("grad_mode_explorer", ["from leafkit.widgets import GradModeExplorer\nGradModeExplorer()"]),
    "backward": ("backward_explorer", ["from leafkit.widgets import BackwardExplorer\nBackwardExplorer()"]),
    "detach": ("detach_explorer", ["from leafkit.widgets import DetachExplorer\nDetachExplorer()"]),
    "quiz": ("leaf_quiz", ["from leafkit.widgets import LeafQuiz\nLeafQuiz()"]),
}


def _shoot(lab, root, name: str):
    """PNG of the explorer alone, in artifacts/screenshots and docs/screenshots."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    box = root.bounding_box()
    if box is not None:  # the whole explorer on screen, whatever its height
        lab.page.set_viewport_size({"width": 1400, "height": int(min(6000, max(1000, box["height"] + 260)))})
    root.scroll_into_view_if_needed()
    lab.page.wait_for_timeout(400)  # let the last SVG paint
    root.screenshot(path=str(path))
    if os.environ.get("LEAFKIT_UPDATE_DOCS") == "1":
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_SHOTS / path.name)
    return path


@pytest.mark.parametrize("kind", list(CASES))
def test_explorer_in_jupyterlab(lab, scratch_dir, kind):
    name, cells = CASES[kind]
    # tall enough that the whole explorer is on screen for the element screenshot
    lab.page.set_viewport_size({"width": 1400, "height": 2000})
    lab.open_notebook(write_notebook(scratch_dir / f"{name}.ipynb", cells))
    drv.hide_left_sidebar(lab)
    lab.run_all()
    drv.assert_no_traceback(lab)
    root = drv.explorer(lab, kind)
    assert [k for k, _ in drv.explorers(lab)] == [kind]
    if kind != "quiz":
        drv.wait_until(lambda: "<svg" in drv.drawing_html(root), 30, "the first drawing")
        assert drv.table_text(root)
        assert drv.code_text(root)
    steps = drv.exercise(lab, kind, root)
    assert steps, "no control was exercised"
    shot = _shoot(lab, root, name)
    assert shot.stat().st_size > 20_000
    assert lab.page.console_errors == [] or all("favicon" in e for e in lab.page.console_errors)
