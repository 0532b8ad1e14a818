"""Every explorer of leafkit.widgets.REGISTRY in JupyterLab (headless Chromium), in English and Chinese.

For each explorer and language a small notebook is written to a scratch folder
inside the server root (never into lessons/), opened and run: it builds the
explorer's example (``example_code(lang)``), the Chinese one after
``leafkit.set_language("zh")`` as the Chinese lessons do (the quiz test at 1280 px
builds its Chinese quiz with ``lang="zh"`` instead); then the
explorer's tour is clicked through like a learner would (explorer_driver.py), and
after every step the page must show exactly what the same explorer computes in
this process, with its drawing as SVG and no traceback anywhere.  The final state
is saved as a PNG to artifacts/screenshots/<explorer>.png (Chinese:
artifacts/screenshots/zh/<explorer>.png).  With LEAFKIT_UPDATE_DOCS=1 it is also
copied to docs/screenshots/ (and docs/screenshots/zh/), tracked, for the README;
a plain test run never changes tracked files.
"""

from __future__ import annotations

import os
import shutil

import explorer_driver as drv
import pytest
from lab_harness import REPO, SCREENSHOTS, write_notebook

from leafkit.widgets import EXPLORERS

DOCS_SHOTS = REPO / "docs" / "screenshots"
ZH_FIRST = "import leafkit\nleafkit.set_language('zh')  # the first cell of every Chinese lesson"


def _shoot(lab, root, name: str, lang: str = "en", width: int = 1400):
    """PNG of the explorer alone, in artifacts/screenshots[/zh] and (LEAFKIT_UPDATE_DOCS=1) docs/screenshots[/zh]."""
    sub = "" if lang == "en" else lang
    folder = SCREENSHOTS / sub
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    box = root.bounding_box()
    if box is not None:  # the whole explorer on screen, whatever its height
        lab.page.set_viewport_size({"width": width, "height": int(min(6000, max(1000, box["height"] + 260)))})
    root.scroll_into_view_if_needed()
    lab.page.wait_for_timeout(400)  # let the last SVG paint
    root.screenshot(path=str(path))
    if os.environ.get("LEAFKIT_UPDATE_DOCS") == "1":
        docs = DOCS_SHOTS / sub
        docs.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, docs / path.name)
    return path


def _open(lab, scratch_dir, entry, lang, width=1400):
    lab.page.set_viewport_size({"width": width, "height": 2000})
    cells = ([ZH_FIRST] if lang == "zh" else []) + [
        f"import leafkit as torch\nfrom leafkit.widgets import {entry.name}",
        entry.cls.example_code(lang),
    ]
    lab.open_notebook(write_notebook(scratch_dir / f"{entry.slug}_{lang}.ipynb", cells))
    drv.hide_left_sidebar(lab)
    lab.run_all()
    drv.assert_no_traceback(lab)
    root = drv.explorer(lab, entry.name)
    assert [k for k, _ in drv.explorers(lab)] == [entry.name]
    assert drv.lang_of(root) == lang
    return root


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_explorer_in_jupyterlab(lab, scratch_dir, entry, lang):
    root = _open(lab, scratch_dir, entry, lang)
    if entry.cls.example().drawing is not None:
        drv.wait_until(lambda: "<svg" in drv.drawing_html(root), 30, "the first drawing")
    steps = drv.exercise(lab, entry.name, root)
    assert len(steps) == len(entry.cls.TOUR)
    if lang == "zh":
        text = root.inner_text()
        assert entry.title("zh") in text
    shot = _shoot(lab, root, entry.slug, lang)
    assert shot.stat().st_size > 20_000
    assert lab.page.console_errors == [] or all("favicon" in e for e in lab.page.console_errors)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_quiz_rows_line_up_at_1280px(lab, scratch_dir, lang):
    """Issue 12: at 1280 px the dropdowns of rows i-k went out of line and their marks were clipped.
    With the left sidebar open (JupyterLab's default), every row's dropdowns share one x, and every
    mark is fully inside the quiz.  The Chinese quiz is built with lang="zh"."""
    quiz = next(e for e in EXPLORERS if e.name == "LeafQuiz")
    lab.page.set_viewport_size({"width": 1280, "height": 1600})
    arg = 'lang="zh"' if lang == "zh" else ""
    lab.open_notebook(
        write_notebook(
            scratch_dir / f"quiz_1280_{lang}.ipynb", [f"from leafkit.widgets import LeafQuiz\nLeafQuiz({arg})"]
        )
    )
    lab.run_all()
    root = drv.explorer(lab, "LeafQuiz")
    assert drv.lang_of(root) == lang
    twin = quiz.cls(lang=lang)
    answers = {n: ("True", "False") for n in "abcdefghijk"}
    for n, (leaf, rg) in answers.items():
        drv.select(root, f"{n}.is_leaf", leaf)
        drv.select(root, f"{n}.requires_grad", rg)
        twin.answer(n, leaf, rg)
    drv.click(root, twin._t("check"))
    twin.check()
    drv.wait_until(lambda: root.locator(".lk-quiz-mark span").count() == 11, 30, "a mark on every row")
    outer = root.bounding_box()
    xs = {"is_leaf": set(), "requires_grad": set()}
    for n in "abcdefghijk":
        for field in xs:
            box = (
                root.locator(".widget-dropdown")
                .filter(has=lab.page.locator("label.widget-label", has_text=f"{n}.{field}"))
                .first.bounding_box()
            )
            xs[field].add(round(box["x"]))
    assert all(len(v) == 1 for v in xs.values()), f"dropdowns out of line: {xs}"
    marks = root.locator(".lk-quiz-mark span")
    for i in range(marks.count()):
        box = marks.nth(i).bounding_box()
        assert box is not None and box["width"] > 5
        assert outer["x"] <= box["x"] and box["x"] + box["width"] <= outer["x"] + outer["width"], (i, box, outer)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    lab.page.screenshot(path=str(SCREENSHOTS / f"leaf_quiz_1280_{lang}.png"))
    drv.assert_no_traceback(lab, root)


def test_exercise_all_drives_a_lesson_like_notebook(lab, scratch_dir):
    """What the lessons' browser test uses: every explorer of a notebook, built with arguments the
    driver does not know (each explorer's ``DEMO``, a cell as a lesson writes it) and in the package's
    language (here Chinese), is walked without a traceback."""
    cells = [
        "import leafkit\nleafkit.set_language('zh')",
        "import leafkit as torch\nfrom leafkit.widgets import *",
        *(entry.cls.demo_code() for entry in EXPLORERS),
    ]
    lab.page.set_viewport_size({"width": 1400, "height": 2000})
    lab.open_notebook(write_notebook(scratch_dir / "lesson_like.ipynb", cells))
    drv.hide_left_sidebar(lab)
    lab.run_all()
    drv.assert_no_traceback(lab)
    found = drv.explorers(lab)
    assert [n for n, _ in found] == [e.name for e in EXPLORERS]
    assert all(drv.lang_of(root) == "zh" for _, root in found)
    done = drv.exercise_all(lab)
    assert len(done) == len(EXPLORERS) and all(done.values()), done
    drv.assert_no_traceback(lab)


STEPPER_CELLS = [
    "import leafkit as torch\nfrom leafkit.widgets import BackwardStepper",
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = x * 2\ny.retain_grad()\n"
    "loss = (y * y + y).sum()\nBackwardStepper(loss)",
    "def f(x):\n    return torch.stack([x[0] * x[1], x[1] + x[2], x[0] ** 2])\n\n\n"
    "v = torch.tensor([1.0, 10.0, 100.0])\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
    "y = f(x)\nBackwardStepper(y, gradient=v)",
]
_BOXES = """root => {
  const r = root.getBoundingClientRect();
  const box = s => { const e = root.querySelector(s); if (!e) return null; const b = e.getBoundingClientRect();
    return {top: b.top - r.top, bottom: b.bottom - r.top, left: b.left - r.left, right: b.right - r.left}; };
  const caption = root.querySelector('.lk-caption');
  return {height: r.height, width: r.width, step: box('.lk-control-step'), why: box('.lk-explanation'),
          drawing: box('.lk-drawing svg'), table: box('.lk-table-scroll'),
          last_column: box('table.lk-table th:last-child'),
          transform: caption ? getComputedStyle(caption).textTransform : null};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_stepper_keeps_its_controls_drawing_and_step_in_view(lab, scratch_dir, lang):
    """Issue 19: after Run to end the stepper was about 1,790 px tall, Step at the top and the drawing below a
    growing table; at 1280 px the ``gradient=v`` stepper's table was clipped on the right.  Now, at 1280 px with
    JupyterLab's sidebar open: the buttons, the sentence about the step and the whole drawing fit in one screen
    (720 px), the table of steps scrolls in a box below them, nothing is cut on the right, and no heading is
    upper-cased (``.grad`` read ".GRAD")."""
    lab.page.set_viewport_size({"width": 1280, "height": 800})
    cells = ([ZH_FIRST] if lang == "zh" else []) + STEPPER_CELLS
    lab.open_notebook(write_notebook(scratch_dir / f"stepper_1280_{lang}.ipynb", cells))
    lab.run_all()
    drv.assert_no_traceback(lab)
    run = "Run to end" if lang == "en" else "运行到底"
    for i in range(2):
        root = drv.explorer(lab, "BackwardStepper", index=i)
        root.scroll_into_view_if_needed()
        drv.click(root, run)
        drv.wait_until(lambda root=root: "lk-msg" in root.inner_html() or "\u2714" in drv.code_text(root), 30, "end")
        lab.page.wait_for_timeout(800)
        b = root.evaluate(_BOXES)
        assert b["height"] < 1100, b
        assert b["step"]["top"] < b["why"]["bottom"] <= 720 and b["drawing"]["bottom"] <= 720, b
        assert b["table"]["top"] >= b["drawing"]["bottom"] - 1, b
        assert b["table"]["right"] <= b["width"] and b["last_column"]["right"] <= b["table"]["right"] + 1, b
        assert b["transform"] == "none", b
        root.evaluate("r => r.scrollIntoView({block: 'start'})")
        lab.page.wait_for_timeout(300)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        lab.page.screenshot(path=str(SCREENSHOTS / f"backward_stepper_1280_{lang}_{i}.png"))
    drv.assert_no_traceback(lab)
