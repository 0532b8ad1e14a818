"""Drive leafkit's explorers (``leafkit.widgets``) in JupyterLab, for any notebook.

Reusable by every browser test: the explorer tests (tests/browser/test_explorers.py)
and the lessons' browser tests.  Works on top of :mod:`lab_harness` (a ``Lab``
bound to a Playwright page), scoped to one explorer's root element so that a
lesson with several explorers is no problem.

Finding explorers
-----------------
Each explorer's root widget carries the CSS classes ``lk-explorer`` and one of
:data:`EXPLORER_CLASSES` (``lk-leaf-explorer``, ...).  ``explorers(lab)``
lists ``(kind, locator)`` for every explorer on screen, in document order.

Exercising them
---------------
``exercise(lab, kind, root)`` toggles the controls of one explorer the way a
learner would and asserts after every step that the drawing (SVG) and the
table (or the quiz feedback) changed and that no traceback appeared; it
returns the list of steps it took.  ``exercise_all(lab)`` does that for every
explorer on the page.

Reading them
------------
``drawing_html(root)``, ``table_text(root)``, ``code_text(root)``,
``explanation_text(root)``, ``message_text(root)``.
"""
from __future__ import annotations

import re
import time

EXPLORER_CLASSES = {
    "leaf": "lk-leaf-explorer",
    "grad_mode": "lk-grad-mode-explorer",
    "backward": "lk-backward-explorer",
    "detach": "lk-detach-explorer",
    "quiz": "lk-leaf-quiz",
}
TRACEBACK_MARKERS = ("Traceback (most recent call last)", "The explorer hit a problem")


# ------------------------------------------------------------------ finding --
def explorers(lab) -> list:
    """``[(kind, locator)]`` for every explorer in the open notebook, in document order."""
    out = []
    page = lab.page
    roots = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .lk-explorer")
    for i in range(roots.count()):
        root = roots.nth(i)
        classes = (root.get_attribute("class") or "").split()
        kind = next((k for k, c in EXPLORER_CLASSES.items() if c in classes), "unknown")
        out.append((kind, root))
    return out


def explorer(lab, kind: str, index: int = 0, timeout: float = 60):
    """The ``index``-th explorer of ``kind`` (a key of :data:`EXPLORER_CLASSES`), once rendered."""
    loc = lab.page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) .{EXPLORER_CLASSES[kind]}").nth(index)
    loc.wait_for(state="visible", timeout=timeout * 1000)
    return loc


# ------------------------------------------------------------------ reading --
def _html(root, css: str) -> str:
    loc = root.locator(css)
    return loc.first.inner_html() if loc.count() else ""


def _text(root, css: str) -> str:
    loc = root.locator(css)
    return "\n".join(loc.all_inner_texts()) if loc.count() else ""


def drawing_html(root) -> str:
    """Inner HTML of the explorer's drawing (``<svg ...>`` or the text fallback)."""
    return _html(root, ".lk-drawing")


def table_text(root) -> str:
    return _text(root, ".lk-table-view")


def code_text(root) -> str:
    return _text(root, ".lk-code-view")


def explanation_text(root) -> str:
    return _text(root, ".lk-explanation")


def message_text(root) -> str:
    return _text(root, ".lk-message")


def feedback_text(root) -> str:
    return _text(root, ".lk-quiz-feedback")


def assert_no_traceback(lab, root=None) -> None:
    """No stderr/traceback output in the notebook, and no internal-error box in ``root``."""
    errs = lab.error_outputs()
    assert errs == [], f"stderr / traceback outputs: {errs}"
    text = root.inner_text() if root is not None else lab.output_text()
    for marker in TRACEBACK_MARKERS:
        assert marker not in text, f"{marker!r} shown to the learner:\n{text[:2000]}"


def wait_until(fn, timeout: float = 20, what: str = "condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.1)
    raise TimeoutError(f"{what} not met within {timeout}s (last: {str(last)[:300]})")


def wait_changed(read, before: str, timeout: float = 20, what: str = "view") -> str:
    """Wait until ``read()`` differs from ``before`` (and is not empty); return the new value."""
    return wait_until(lambda: (lambda v: v if v and v != before else None)(read()), timeout,
                      f"{what} to change")


# --------------------------------------------------------------- controls ----
def _exact(text: str):
    return re.compile(r"^\s*" + re.escape(text) + r"\s*:?\s*$")


def checkbox(root, description: str):
    return root.locator(".widget-checkbox").filter(has=root.page.get_by_text(_exact(description))).locator(
        "input[type=checkbox]").first


def set_checkbox(root, description: str, value: bool) -> None:
    box = checkbox(root, description)
    if box.is_checked() != bool(value):
        box.click()
        wait_until(lambda: box.is_checked() == bool(value), 10, f"checkbox {description!r}")


def select(root, description: str, option_label: str) -> None:
    """Choose ``option_label`` in the Dropdown labelled ``description``."""
    dd = root.locator(".widget-dropdown").filter(
        has=root.page.locator("label.widget-label", has_text=_exact(description))).locator("select").first
    dd.select_option(label=option_label)


def hide_left_sidebar(lab) -> None:
    """Collapse JupyterLab's left sidebar (file browser) so notebooks get the full width."""
    lab.page.evaluate("() => { const s = window.jupyterapp && window.jupyterapp.shell;"
                      " if (s && !s.leftCollapsed) s.collapseLeft(); }")
    lab.page.wait_for_timeout(300)


def toggle(root, description: str, button_label: str) -> None:
    """Press ``button_label`` in the ToggleButtons labelled ``description``."""
    tb = root.locator(".widget-toggle-buttons").filter(
        has=root.page.locator("label.widget-label", has_text=_exact(description))).first
    tb.locator("button", has_text=_exact(button_label)).first.click()


def click(root, description: str) -> None:
    """Click the Button whose text is ``description``."""
    root.locator("button.widget-button", has_text=_exact(description)).first.click()


# ---------------------------------------------------------------- exercise ---
def _step(lab, root, label: str, action, watch=("drawing", "table"), steps=None) -> None:
    readers = {"drawing": drawing_html, "table": table_text, "code": code_text,
               "message": message_text, "feedback": feedback_text}
    before = {k: readers[k](root) for k in watch}
    action()
    for k in watch:
        wait_changed(lambda k=k: readers[k](root), before[k], what=f"{label}: {k}")
    assert "<svg" in drawing_html(root) or "lk-text-drawing" in drawing_html(root) or "drawing" not in watch
    assert_no_traceback(lab, root)
    if steps is not None:
        steps.append(label)


def exercise_leaf(lab, root) -> list:
    steps: list = []
    _step(lab, root, "step 3 = + 2", lambda: select(root, "step 3", "+ 2"), steps=steps)
    assert "t2 = t1.detach()" in table_text(root) or "+ 2" in code_text(root)
    _step(lab, root, "requires_grad off", lambda: set_checkbox(root, "requires_grad=True", False), steps=steps)
    _step(lab, root, "set after the chain", lambda: toggle(root, "set requires_grad", "after the chain"),
          steps=steps)
    assert "t.requires_grad = False" in code_text(root)
    _step(lab, root, "requires_grad on", lambda: set_checkbox(root, "requires_grad=True", True), steps=steps)
    _step(lab, root, "before the chain", lambda: toggle(root, "set requires_grad", "before the chain"),
          steps=steps)
    _step(lab, root, "step 2 = clone()", lambda: select(root, "step 2", "clone()"), steps=steps)
    _step(lab, root, "step 1 = + 2", lambda: select(root, "step 1", "+ 2"), steps=steps)
    assert "AddBackward0" in table_text(root)
    return steps


def exercise_grad_mode(lab, root) -> list:
    steps: list = []
    _step(lab, root, "y requires_grad", lambda: set_checkbox(root, "y requires_grad", True), steps=steps)
    _step(lab, root, "operator /", lambda: toggle(root, "operator", "/"), steps=steps)
    assert "DivBackward0" in table_text(root)
    _step(lab, root, "no_grad on", lambda: set_checkbox(root, "with torch.no_grad()", True),
          watch=("drawing", "table", "message"), steps=steps)
    assert "does not require grad" in message_text(root)
    _step(lab, root, "no_grad off", lambda: set_checkbox(root, "with torch.no_grad()", False),
          watch=("drawing", "table", "message"), steps=steps)
    _step(lab, root, "x requires_grad off", lambda: set_checkbox(root, "x requires_grad", False), steps=steps)
    _step(lab, root, "x requires_grad on", lambda: set_checkbox(root, "x requires_grad", True), steps=steps)
    assert "x.grad = tensor([0.5000])" in message_text(root)
    return steps


def exercise_backward(lab, root) -> list:
    steps: list = []
    _step(lab, root, "z.retain_grad()", lambda: set_checkbox(root, "z.retain_grad()", True),
          watch=("drawing", "table", "code"), steps=steps)
    _step(lab, root, "hook on y", lambda: select(root, "hook on", "y"), watch=("drawing", "table", "code"),
          steps=steps)
    _step(lab, root, "backward, graph freed", lambda: click(root, "t.backward()"), steps=steps)
    _step(lab, root, "Reset", lambda: click(root, "Reset"), steps=steps)
    set_checkbox(root, "retain_graph=True", True)  # only the next backward's argument: the button says so
    _step(lab, root, "backward pass 1", lambda: click(root, "t.backward(retain_graph=True)"), steps=steps)
    assert "1024" in table_text(root)
    set_checkbox(root, "retain_graph=True", False)
    _step(lab, root, "backward pass 2 (frees)", lambda: click(root, "t.backward()"), steps=steps)
    assert "2048" in table_text(root)
    _step(lab, root, "backward pass 3 (error)", lambda: click(root, "t.backward()"),
          watch=("message", "code"), steps=steps)
    assert "second time" in message_text(root)
    return steps


def exercise_detach(lab, root) -> list:
    steps: list = []
    # an in-place edit changes values and versions (the table), not the graph (the drawing)
    _step(lab, root, "y.add_(1)", lambda: click(root, "y.add_(1)"), watch=("table", "code"), steps=steps)
    assert "tensor([3.])" in table_text(root)
    _step(lab, root, "z = x ** 2", lambda: click(root, "z = x ** 2"), steps=steps)
    _step(lab, root, "y.mul_(2)", lambda: click(root, "y.mul_(2)"), watch=("table", "code"), steps=steps)
    _step(lab, root, "z.backward() (error)", lambda: click(root, "z.backward()"), watch=("message", "code"),
          steps=steps)
    assert "inplace operation" in message_text(root)
    return steps


def exercise_quiz(lab, root, answers=None) -> list:
    steps: list = []
    answers = answers or {"a": ("True", "False"), "b": ("True", "True"), "c": ("True", "False"),
                          "d": ("True", "False"), "e": ("True", "False"), "f": ("True", "True"),
                          "g": ("True", "False"), "h": ("False", "True"), "i": ("True", "False"),
                          "j": ("True", "False"), "k": ("False", "True")}
    for name, (leaf, rg) in answers.items():
        select(root, f"{name}.is_leaf", leaf)
        select(root, f"{name}.requires_grad", rg)
    _step(lab, root, "Check", lambda: click(root, "Check"), watch=("feedback",), steps=steps)
    fb = feedback_text(root)
    assert "Score:" in fb
    wait_until(lambda: root.locator(".lk-quiz-feedback svg").count() > 0, 20, "a drawing for a miss")
    return steps


EXERCISES = {"leaf": exercise_leaf, "grad_mode": exercise_grad_mode, "backward": exercise_backward,
             "detach": exercise_detach, "quiz": exercise_quiz}


def exercise(lab, kind: str, root) -> list:
    """Toggle the controls of one explorer and assert drawing and table changed; returns the steps."""
    return EXERCISES[kind](lab, root)


def exercise_all(lab) -> dict:
    """Exercise every explorer in the open notebook; ``{"kind#i": steps}``."""
    done = {}
    for i, (kind, root) in enumerate(explorers(lab)):
        if kind in EXERCISES:
            root.scroll_into_view_if_needed()
            done[f"{kind}#{i}"] = exercise(lab, kind, root)
    return done
