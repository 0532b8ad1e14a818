"""leafkit.widgets.REGISTRY: one list of explorers that the package, the tests, the browser test,
bench/widgets.py and the README's table read; each entry complete; the README table never drifts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import leafkit.widgets as widgets
from leafkit.widgets import EXPLORERS, REGISTRY
from leafkit.widgets._registry import ExplorerEntry, entries
from leafkit.widgets._view import Control, Explorer

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("readme_explorers", ROOT / "scripts" / "readme_explorers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_registry_is_what_the_package_exports():
    assert [e.name for e in EXPLORERS] == [name for _, name in REGISTRY] == widgets.__all__
    for e in EXPLORERS:
        assert getattr(widgets, e.name) is e.cls
        folder = ROOT / "leafkit" / "widgets"
        assert (folder / f"{e.module}.py").exists() or (folder / e.module / "__init__.py").exists()
    with pytest.raises(AttributeError, match="no attribute 'NoSuchExplorer'"):
        widgets.NoSuchExplorer  # noqa: B018
    assert set(widgets.__all__) <= set(dir(widgets))


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_every_entry_is_complete(entry):
    cls = entry.cls
    assert issubclass(cls, Explorer) and cls.__name__ == entry.name
    for lang in ("en", "zh"):
        assert entry.title(lang) and entry.summary(lang) and cls.TEXT[lang]["subtitle"]
    assert cls.TOUR, "an explorer needs a tour (the browser test and the benchmarks walk it)"
    ex = cls.example()
    controls = ex.controls()
    assert controls and all(isinstance(c, Control) and c.key == k for k, c in controls.items())
    for key, value in cls.TOUR:
        assert key in controls, key
        assert value in controls[key].values(), (key, value)


def test_names_classes_and_screenshots_are_distinct():
    for attr in ("name", "slug", "css_class"):
        values = [getattr(e, attr) for e in EXPLORERS]
        assert len(set(values)) == len(values), attr
    for e in EXPLORERS:  # the screenshots' file name comes from the class name
        assert e.slug.replace("_", "") == e.name.lower() and e.slug == e.slug.lower()
    assert ExplorerEntry("BackwardStepper", "backward_stepper").slug == "backward_stepper"


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_every_tour_step_acts(entry, no_dot):
    """Each step of the tour operates an enabled control and changes what the explorer shows
    (the browser driver waits for the page to show each new state)."""
    ex = entry.cls.example()
    for key, value in entry.cls.TOUR:
        c = ex.controls()[key]
        before = (
            c.value,
            ex.code,
            ex.table_view.value,
            ex.message_view.value,
            ex.explanation_view.value,
            getattr(ex, "feedback_view", ex.code_view).value,
        )
        assert ex.act(key, value), f"{key}={value!r} did nothing"
        after = (
            c.value,
            ex.code,
            ex.table_view.value,
            ex.message_view.value,
            ex.explanation_view.value,
            getattr(ex, "feedback_view", ex.code_view).value,
        )
        assert after != before, f"{key}={value!r} changed nothing"
        assert ex.internal_errors == []


def test_act_refuses_unknown_keys_and_values():
    ex = EXPLORERS[0].cls.example()
    with pytest.raises(KeyError):
        ex.act("no such control")
    key, control = next((k, c) for k, c in ex.controls().items() if c.kind != "button")
    with pytest.raises(ValueError):
        ex.act(key, "not an option")
    assert ex.act(key, control.value) is False  # already so: nothing happens


def test_entries_refuse_a_name_twice():
    with pytest.raises(ValueError, match="registered twice"):
        entries([("leaf_explorer", "LeafExplorer"), ("leaf_explorer", "LeafExplorer")])


def test_the_readme_table_is_generated_from_the_registry():
    mod = _script()
    assert mod.drifted() == [], "run: python scripts/readme_explorers.py"
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for e in EXPLORERS:
        assert f"(docs/screenshots/{e.slug}.png)" in text and e.summary("en") in text


def test_a_new_explorer_reaches_the_readme_with_one_registry_line(monkeypatch):
    """What 'one line' buys: add an entry, and the README table has its row (and picture)."""
    mod = _script()
    extra = ExplorerEntry("LeafExplorer", "leaf_explorer")
    fake = type(
        "GraphRewinder",
        (Explorer,),
        {"TEXT": {"en": {"summary": "rewind a graph"}, "zh": {"summary": "把计算图倒回去"}}},
    )
    monkeypatch.setattr(
        ExplorerEntry,
        "cls",
        property(lambda self: fake if self.name == "GraphRewinder" else getattr(widgets, self.name)),
    )
    monkeypatch.setattr(widgets, "EXPLORERS", EXPLORERS + (ExplorerEntry("GraphRewinder", "graph_rewinder"),))
    table = mod.table("en")
    assert "**`GraphRewinder`**: rewind a graph" in table
    assert "![GraphRewinder](docs/screenshots/graph_rewinder.png)" in table
    assert "![GraphRewinder](docs/screenshots/zh/graph_rewinder.png)" in mod.table("zh")
    assert extra.slug == "leaf_explorer"


def test_lessons_are_found_by_their_code(tmp_path):
    mod = _script()
    (tmp_path / "lessons").mkdir()
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": "LeafQuiz() in prose"},
            {"cell_type": "code", "source": ["from leafkit.widgets import LeafQuiz\n", "LeafQuiz()"]},
        ]
    }
    import json

    (tmp_path / "lessons" / "07_quiz.ipynb").write_text(json.dumps(nb))
    (tmp_path / "lessons" / "08_other.ipynb").write_text(json.dumps({"cells": [nb["cells"][0]]}))
    assert mod.lessons_using("LeafQuiz", tmp_path) == [7]
    assert mod.lessons_using("LeafExplorer", tmp_path) == []
    assert "(lesson 7)" in mod.table("en", tmp_path) and "（第 7 课）" in mod.table("zh", tmp_path)


def test_modules_stay_importable_by_name():
    for e in EXPLORERS:
        assert e.cls.__module__.startswith(f"leafkit.widgets.{e.module}")
        assert f"leafkit.widgets.{e.module}" in sys.modules


def test_importing_the_package_imports_no_widgets():
    """``import leafkit.widgets`` (the registry, the README script) loads no explorer and no ipywidgets;
    ``from leafkit.widgets import *`` loads them all."""
    import subprocess

    code = (
        "import sys\n"
        "import leafkit.widgets as w\n"
        "assert 'ipywidgets' not in sys.modules, 'ipywidgets'\n"
        "assert [e.name for e in w.EXPLORERS] == w.__all__\n"
        "from leafkit.widgets import *\n"
        "assert 'ipywidgets' in sys.modules and LeafExplorer.__name__ == 'LeafExplorer'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_every_control_is_marked_for_the_browser(entry):
    """Browser tests find a control by a CSS class made from its key, in any language and whatever
    its label says now (the backward button's label follows retain_graph)."""
    from leafkit.widgets._view import control_class

    for lang in ("en", "zh"):
        ex = entry.cls.example(lang)
        classes = [control_class(k) for k in ex.controls()]
        assert len(set(classes)) == len(classes)
        for key, c in ex.controls().items():
            assert control_class(key) in c.widget._dom_classes
    assert control_class("retain:z") == "lk-control-retain-3a-z"


class _NeedsAGraph(Explorer):
    """An explorer that, like the planned BackwardStepper, needs a graph to be built."""

    TEXT = {
        "en": {"title": "t", "subtitle": "s", "summary": "m"},
        "zh": {"title": "标", "subtitle": "副", "summary": "概"},
    }
    EXAMPLE = "x = torch.tensor([2.0], requires_grad=True)\nloss = (x * 3).sum()\n_NeedsAGraph(loss)"

    def __init__(self, loss, lang=None):
        super().__init__(lang=lang)
        self.loss = loss


def test_explorers_that_need_arguments_are_built_from_their_example():
    import leafkit

    ex = _NeedsAGraph.example("zh")
    assert ex.lang == "zh" and ex.loss.grad_fn.name() == "SumBackward0"
    assert isinstance(ex.loss, leafkit.Tensor) and leafkit.get_language() == "en"  # the default is restored
    assert _NeedsAGraph.example_code().endswith("_NeedsAGraph(loss)")
    assert EXPLORERS[0].cls.example_code() == "LeafExplorer()"
    bad = type("Bad", (_NeedsAGraph,), {"EXAMPLE": "x = 1"})
    with pytest.raises(ValueError, match="must end with the expression"):
        bad.example()
