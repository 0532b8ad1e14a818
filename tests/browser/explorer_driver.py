"""Drive leafkit's explorers (``leafkit.widgets``) in JupyterLab, for any notebook and either language.

Reusable by every browser test: the explorer tests (tests/browser/test_explorers.py)
and the lessons' browser tests.  Works on top of :mod:`lab_harness` (a ``Lab``
bound to a Playwright page), scoped to one explorer's root element so that a
lesson with several explorers is no problem.  Nothing here is specific to one
explorer: the list of explorers, their controls and their walks come from
``leafkit.widgets.REGISTRY`` (a new explorer is driven without changes here).

Finding explorers
-----------------
Each explorer's root widget carries the CSS classes ``lk-explorer``, its own
class (:data:`EXPLORER_CLASSES`, by class name) and ``lk-lang-en`` /
``lk-lang-zh``.  ``explorers(lab)`` lists ``(class name, locator)`` for every
explorer on screen, in document order; ``lang_of(root)`` reads its language.

Operating them
--------------
``operate(root, control, value)`` takes a :class:`leafkit.widgets._view.Control`
(from a twin explorer built in this process) and ticks, chooses or presses it in
the page.  The control is found by its CSS class (``control_class(key)``), so a
button whose label follows the state (``t.backward(retain_graph=True)``) is found
too; options are chosen by the label the learner reads, in the explorer's language.
The helpers ``set_checkbox``, ``select``, ``toggle`` and ``click`` find controls by
their visible description instead.

Exercising them
---------------
``exercise(lab, name, root)`` walks the explorer's ``TOUR`` in the page and,
step by step, on a *twin*: the same explorer built here (default: its
``example()``, which is what ``example_code()`` builds in a notebook) in the
page's language.  After every step it waits until the
page shows exactly what the twin computed (code, table, message, explanation,
quiz feedback; memory addresses masked), that a drawing is an SVG, and that no
traceback appeared.  ``exercise_all(lab)`` walks every explorer of a notebook
whose construction arguments are unknown (a lesson): after each step it waits
for the kernel and checks that no traceback appeared and the drawings render.

Reading them
------------
``drawing_html(root)``, ``table_text(root)``, ``code_text(root)``,
``explanation_text(root)``, ``message_text(root)``, ``feedback_text(root)``;
``visible_text(html)`` is the text a browser shows for a widget's HTML value.
"""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser

from leafkit.widgets import EXPLORERS
from leafkit.widgets._view import control_class

#: Class name -> CSS class of its root widget, from the registry.
EXPLORER_CLASSES = {e.name: e.css_class for e in EXPLORERS}
#: The short names the first browser tests used.
ALIASES = {
    "leaf": "LeafExplorer",
    "grad_mode": "GradModeExplorer",
    "backward": "BackwardExplorer",
    "detach": "DetachExplorer",
    "quiz": "LeafQuiz",
}
TRACEBACK_MARKERS = ("Traceback (most recent call last)", "The explorer hit a problem", "探索器出了问题")
_HEX = re.compile(r"0x[0-9a-fA-F]+")


def _name(kind: str) -> str:
    return ALIASES.get(kind, kind)


def entry(kind: str):
    """The registry entry of an explorer, by class name (or old short name)."""
    name = _name(kind)
    return next(e for e in EXPLORERS if e.name == name)


# ------------------------------------------------------------------ finding --
def explorers(lab) -> list:
    """``[(class name, locator)]`` for every explorer in the open notebook, in document order."""
    out = []
    roots = lab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .lk-explorer")
    for i in range(roots.count()):
        root = roots.nth(i)
        classes = (root.get_attribute("class") or "").split()
        name = next((n for n, c in EXPLORER_CLASSES.items() if c in classes), "unknown")
        out.append((name, root))
    return out


def explorer(lab, kind: str, index: int = 0, timeout: float = 60):
    """The ``index``-th explorer of class ``kind`` (e.g. ``"LeafExplorer"``), once rendered."""
    css = EXPLORER_CLASSES[_name(kind)]
    loc = lab.page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) .{css}").nth(index)
    loc.wait_for(state="visible", timeout=timeout * 1000)
    return loc


def lang_of(root) -> str:
    """``"en"`` or ``"zh"``, from the root's ``lk-lang-*`` class."""
    classes = (root.get_attribute("class") or "").split()
    return next((c[len("lk-lang-") :] for c in classes if c.startswith("lk-lang-")), "en")


# ------------------------------------------------------------------ reading --
def _html_of(root, css: str) -> str:
    loc = root.locator(css)
    return loc.first.inner_html() if loc.count() else ""


def _text(root, css: str) -> str:
    loc = root.locator(css)
    return "\n".join(loc.all_inner_texts()) if loc.count() else ""


def drawing_html(root) -> str:
    """Inner HTML of the explorer's drawing (``<svg ...>`` or the text fallback)."""
    return _html_of(root, ".lk-drawing")


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


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("svg", "style", "script"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("svg", "style", "script") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def visible_text(markup: str) -> str:
    """The text of a widget's HTML value as a page shows it (drawings left out)."""
    p = _Text()
    p.feed(markup or "")
    p.close()
    return "".join(p.parts)


def _norm(s: str) -> str:
    """For comparing texts: no blanks, no memory addresses, case-folded."""
    return re.sub(r"\s+", "", _HEX.sub("0x", s or "")).casefold()


def _page_text_without_svg(root, css: str) -> str:
    loc = root.locator(css)
    if not loc.count():
        return ""
    return loc.first.evaluate(
        "el => { const c = el.cloneNode(true); c.querySelectorAll('svg').forEach(s => "
        "s.remove()); return c.textContent; }"
    )


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
    raise TimeoutError(f"{what} not met within {timeout}s (last: {str(last)[:600]})")


def wait_changed(read, before: str, timeout: float = 20, what: str = "view") -> str:
    """Wait until ``read()`` differs from ``before`` (and is not empty); return the new value."""
    return wait_until(lambda: (lambda v: v if v and v != before else None)(read()), timeout, f"{what} to change")


# --------------------------------------------------------------- controls ----
def _exact(text: str):
    return re.compile(r"^\s*" + re.escape(text) + r"\s*:?\s*$")


def checkbox(root, description: str):
    return (
        root.locator(".widget-checkbox")
        .filter(has=root.page.get_by_text(_exact(description)))
        .locator("input[type=checkbox]")
        .first
    )


def set_checkbox(root, description: str, value: bool) -> None:
    box = checkbox(root, description)
    if box.is_checked() != bool(value):
        box.click()
        wait_until(lambda: box.is_checked() == bool(value), 10, f"checkbox {description!r}")


def _dropdown(root, description: str):
    return (
        root.locator(".widget-dropdown")
        .filter(has=root.page.locator("label.widget-label", has_text=_exact(description)))
        .locator("select")
        .first
    )


def select(root, description: str, option_label: str) -> None:
    """Choose ``option_label`` in the Dropdown labelled ``description``."""
    _dropdown(root, description).select_option(label=option_label)


def hide_left_sidebar(lab) -> None:
    """Collapse JupyterLab's left sidebar (file browser) so notebooks get the full width."""
    lab.page.evaluate(
        "() => { const s = window.jupyterapp && window.jupyterapp.shell; if (s && !s.leftCollapsed) s.collapseLeft(); }"
    )
    lab.page.wait_for_timeout(300)


def toggle(root, description: str, button_label: str) -> None:
    """Press ``button_label`` in the ToggleButtons labelled ``description``."""
    tb = (
        root.locator(".widget-toggle-buttons")
        .filter(has=root.page.locator("label.widget-label", has_text=_exact(description)))
        .first
    )
    tb.locator("button", has_text=_exact(button_label)).first.click()


def click(root, description: str) -> None:
    """Click the Button whose text is ``description``."""
    root.locator("button.widget-button", has_text=_exact(description)).first.click()


def control_locator(root, key: str):
    """The page element of the control ``key`` of the explorer at ``root``."""
    return root.locator(f".{control_class(key)}").first


def operate(root, control, value) -> bool:
    """Do in the page what ``twin.act(control.key, value)`` does; False when nothing could happen
    (the page already had that value, or the button is disabled)."""
    el = control_locator(root, control.key)
    if control.kind == "checkbox":
        box = el.locator("input[type=checkbox]")
        if box.is_checked() == bool(value):
            return False
        box.click()
        wait_until(lambda: box.is_checked() == bool(value), 10, f"checkbox {control.key!r}")
    elif control.kind == "dropdown":
        label = control.label(value)
        dd = el.locator("select")
        if dd.evaluate("el => el.options[el.selectedIndex] ? el.options[el.selectedIndex].text : null") == label:
            return False
        dd.select_option(label=label)
    elif control.kind == "toggle":
        el.locator("button", has_text=_exact(control.label(value))).first.click()
    else:
        if el.is_disabled():
            return False
        el.click()
    return True


# ---------------------------------------------------------------- exercise ---
def _differences(root, twin) -> list:
    """What the page shows that the twin does not (empty when they agree)."""
    out = []
    pairs = [
        (".lk-code-view", twin.code_view),
        (".lk-table-view", twin.table_view),
        (".lk-message", twin.message_view),
        (".lk-explanation", twin.explanation_view),
    ]
    feedback = getattr(twin, "feedback_view", None)
    if feedback is not None:
        pairs.append((".lk-quiz-feedback", feedback))
    for css, view in pairs:
        want, got = visible_text(view.value), _page_text_without_svg(root, css)
        if _norm(want) != _norm(got):
            out.append(f"{css}: page shows {got[:300]!r}, the explorer computed {want[:300]!r}")
    if twin.svg is not None and "<svg" not in drawing_html(root):
        out.append(".lk-drawing: no SVG yet")
    return out


def exercise(lab, kind: str, root, twin=None, timeout: float = 30) -> list:
    """Walk the explorer's ``TOUR`` in the page and on ``twin``; after each step the page must show
    what the twin computed.  ``twin`` defaults to the explorer's ``example()`` in the page's language.
    Returns the steps taken (``"key=value"``)."""
    e = entry(kind)
    twin = twin if twin is not None else e.cls.example(lang_of(root))
    wait_until(lambda: not _differences(root, twin), timeout, "the page to show the explorer's first state")
    steps = []
    for key, value in e.cls.TOUR:
        control = twin.controls()[key]
        operate(root, control, value)
        twin.act(key, value)
        assert twin.internal_errors == []
        try:
            wait_until(lambda: not _differences(root, twin), timeout, f"{key}={value!r}")
        except TimeoutError as exc:
            raise AssertionError(f"after {key}={value!r}: " + "; ".join(_differences(root, twin))) from exc
        assert_no_traceback(lab, root)
        steps.append(f"{key}={value!r}")
    return steps


def exercise_blind(lab, kind: str, root) -> list:
    """Walk the tour without a twin (the explorer's arguments are unknown): after each step wait for
    the kernel, then check that no traceback appeared and that a drawing, if any, is an SVG."""
    e = entry(kind)
    twin = e.cls.example(lang_of(root))  # only to read the controls' labels in the page's language
    steps = []
    for key, value in e.cls.TOUR:
        if not operate(root, twin.controls()[key], value):
            continue
        lab.page.wait_for_timeout(250)
        lab.wait_for_idle(timeout=60)
        assert_no_traceback(lab, root)
        html = drawing_html(root)
        assert not html or "<svg" in html or "lk-text-drawing" in html
        steps.append(f"{key}={value!r}")
    return steps


def exercise_all(lab) -> dict:
    """Exercise every explorer in the open notebook (a lesson): ``{"ClassName#i": steps}``."""
    done = {}
    for i, (name, root) in enumerate(explorers(lab)):
        if name in EXPLORER_CLASSES:
            root.scroll_into_view_if_needed()
            done[f"{name}#{i}"] = exercise_blind(lab, name, root)
    return done
