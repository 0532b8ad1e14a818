"""Self-test of the lab_harness widget helpers on the common ipywidgets controls
(the explorer tests rely on them)."""

from lab_harness import write_notebook

CELLS = [
    """\
import ipywidgets as w
from IPython.display import display

log = w.Label(value='log: start')
def say(msg):
    log.value = 'log: ' + msg

btn = w.Button(description='Backward')
btn.on_click(lambda b: say('clicked'))
tog = w.ToggleButton(value=False, description='no_grad')
tog.observe(lambda c: say(f"no_grad={c['new']}"), names='value')
sld = w.IntSlider(value=1, min=0, max=10, description='steps')
sld.observe(lambda c: say(f"steps={c['new']}"), names='value')
dd = w.Dropdown(options=['sum', 'mean'], value='sum', description='reduction:')
dd.observe(lambda c: say(f"reduction={c['new']}"), names='value')
txt = w.Text(value='', description='name', continuous_update=False)
txt.observe(lambda c: say(f"name={c['new']}"), names='value')
rad = w.RadioButtons(options=['leaf', 'non-leaf'], value='leaf', description='kind')
rad.observe(lambda c: say(f"kind={c['new']}"), names='value')
display(w.VBox([btn, tog, sld, dd, txt, rad, log]))
""",
]


def test_widget_helpers(lab, scratch_dir):
    lab.open_notebook(write_notebook(scratch_dir / "helpers.ipynb", CELLS))
    lab.run_all()
    assert lab.error_outputs() == []
    assert set(lab.widget_descriptions()) >= {"backward", "no_grad", "steps", "reduction", "name", "kind"}

    lab.click_button("Backward")
    lab.wait_for_output("log: clicked", cell=0)
    lab.set_toggle_button("no_grad", True)
    lab.wait_for_output("log: no_grad=True", cell=0)
    lab.set_slider("steps", 7)
    lab.wait_for_output("log: steps=7", cell=0)
    lab.select_dropdown("reduction", "mean")  # trailing ':' in the description is ignored
    lab.wait_for_output("log: reduction=mean", cell=0)
    lab.set_text("name", "w1")
    lab.wait_for_output("log: name=w1", cell=0)
    lab.choose_radio("kind", "non-leaf")
    lab.wait_for_output("log: kind=non-leaf", cell=0)
    lab.screenshot("lab_widget_helpers")
