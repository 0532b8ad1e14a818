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
