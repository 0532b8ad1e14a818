"""Smoke test: JupyterLab loads in headless Chromium, a notebook runs, and an
ipywidgets Checkbox round-trips through the kernel."""

from lab_harness import write_notebook

CELLS = [
    ("markdown", "# leafkit browser smoke test"),
    "print('hello from the kernel')",
    """\
import ipywidgets as widgets
from IPython.display import display

box = widgets.Checkbox(value=False, description='requires_grad')
status = widgets.Label(value='requires_grad is False')

def on_change(change):
    status.value = f"requires_grad is {change['new']}"

box.observe(on_change, names='value')
display(widgets.VBox([box, status]))
""",
]


def test_checkbox_roundtrip(lab, scratch_dir):
    nb = write_notebook(scratch_dir / "smoke.ipynb", CELLS)
    lab.open_notebook(nb)
    lab.run_all()

    assert lab.error_outputs() == []
    lab.wait_for_output("hello from the kernel", cell=1)
    assert "requires_grad" in lab.widget_descriptions()
    assert lab.checkbox_value("requires_grad") is False
    lab.wait_for_output("requires_grad is False", cell=2)

    assert lab.toggle_checkbox("requires_grad") is True
    lab.wait_for_output("requires_grad is True", cell=2)  # kernel callback ran

    shot = lab.screenshot("lab_smoke")
    assert shot.stat().st_size > 10_000


def test_learners_lab_opens_lessons_without_solutions(jupyter_server):
    """JupyterLab as `make lab` starts it serves each lesson notebook as stored: the same cells, none of the
    solutions its .md source holds (with jupytext's extension on, the pair would open merged)."""
    import json

    from lab_harness import REPO

    lessons = sorted((REPO / "lessons").glob("*.ipynb")) + sorted((REPO / "lessons" / "zh").glob("*.ipynb"))
    assert lessons
    for nb in lessons:
        rel = nb.relative_to(REPO).as_posix()
        served = jupyter_server.api("GET", f"api/contents/{rel}?content=1")["content"]["cells"]
        stored = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        assert [c["id"] for c in served] == [c["id"] for c in stored], rel
        assert not any("BEGIN SOLUTION" in "".join(c["source"]) for c in served), rel
