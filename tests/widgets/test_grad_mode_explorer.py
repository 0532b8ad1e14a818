"""GradModeExplorer: every combination of x/y requires_grad, the four operators and no_grad,
driven through the controls, against leafkit run directly, seed 003 (examples 3-6) and PyTorch."""

from __future__ import annotations

import itertools

import pytest
from widget_checks import execute_error, grad_repr, leaf_facts

from leafkit.widgets import GradModeExplorer
from leafkit.widgets.grad_mode_explorer import OPERATORS, grad_mode_program, run_grad_mode

STATES = list(itertools.product((False, True), (False, True), OPERATORS, (False, True)))
NODE = {"*": "MulBackward0", "/": "DivBackward0", "+": "AddBackward0", "-": "SubBackward0"}
NO_GRAD_ERROR = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"


def _truth(module, xr, yr, op, ng):
    fwd, bwd = grad_mode_program(xr, yr, op, ng)
    ns, err = execute_error(fwd, module)
    assert err is None
    forward = {k: leaf_facts(ns[k]) for k in "xyz"}
    try:
        exec(bwd, ns)  # noqa: S102
    except Exception as exc:
        err = f"{type(exc).__name__}: {exc}"
    return forward, err, {k: grad_repr(ns[k]) for k in "xy"}


def test_code_is_the_articles_program():
    ex = GradModeExplorer(x_requires_grad=True, y_requires_grad=True, op="*", no_grad=True)
    assert ex.code == (
        "x = torch.tensor([2.0], requires_grad=True)\n"
        "y = torch.tensor([2.0], requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    z = x * y\n"
        "z.backward()"
    )


def test_all_states_through_the_controls(no_dot):
    import leafkit

    ex = GradModeExplorer()
    for xr, yr, op, ng in STATES:
        ex.x_requires_grad.value = xr
        ex.y_requires_grad.value = yr
        ex.op.value = op
        ex.no_grad.value = ng
        assert ex.internal_errors == []
        forward, err, grads = _truth(leafkit, xr, yr, op, ng)
        res = ex.result
        fwd, bwd = grad_mode_program(xr, yr, op, ng)
        assert ex.code == res.code == "\n".join([*fwd, bwd])
        rows = {r["variable"]: r for r in ex.rows}
        for k in "xyz":
            assert (rows[k]["is_leaf"], rows[k]["requires_grad"], rows[k]["grad_fn"]) == forward[k]
        # seed 003 ex 3-4: z requires grad iff an input does (outside no_grad); grad_fn named after the op
        tracked = (xr or yr) and not ng
        assert rows["z"]["requires_grad"] is tracked
        assert rows["z"]["grad_fn"] == (NODE[op] if tracked else None)
        assert rows["z"]["is_leaf"] is (not tracked)
        assert res.grad_enabled_inside is (not ng)
        # what z.backward() does: the gradients, or PyTorch's error as a styled message
        assert res.backward_error == err
        if tracked:
            assert ex.message["kind"] == "ok"
            for k, v in grads.items():
                assert rows[k]["grad"] == v
                if v is not None:
                    assert f"{k}.grad = {v}" in ex.message["text"]
        else:
            assert err == NO_GRAD_ERROR
            assert ex.message == {"kind": "error", "title": "z.backward() raises", "text": NO_GRAD_ERROR}
            assert "lk-msg-error" in ex.message_view.value
        assert "Traceback" not in ex.message_view.value
        # the explanation
        if ng and (xr or yr):
            assert "no_grad" in ex.explanation and "nothing to differentiate" in ex.explanation
        elif not (xr or yr):
            assert ex.explanation.startswith("Neither x nor y requires grad")
        else:
            assert NODE[op] in ex.explanation and "non-leaf" in ex.explanation
        # the drawing is the forward graph, before z.backward() ran
        v = ex.drawing.state["variables"]
        assert (v["z"]["is_leaf"], v["z"]["requires_grad"], v["z"]["grad_fn"]) == forward["z"]
        assert v["x"]["grad"] is None and v["y"]["grad"] is None


def test_gradients_match_the_calculus():
    res = run_grad_mode(True, True, "/")
    assert res.grads == {"x": "tensor([0.5000])", "y": "tensor([-0.5000])"}
    res = run_grad_mode(True, True, "-")
    assert res.grads == {"x": "tensor([1.])", "y": "tensor([-1.])"}
    res = run_grad_mode(True, False, "*")
    assert res.grads == {"x": "tensor([2.])", "y": None}


@pytest.mark.parity
def test_all_states_agree_with_pytorch(real_torch):
    for xr, yr, op, ng in STATES:
        res = run_grad_mode(xr, yr, op, ng)
        forward, err, grads = _truth(real_torch, xr, yr, op, ng)
        assert {k: (f["is_leaf"], f["requires_grad"], f["grad_fn"]) for k, f in res.forward.items()} == forward
        assert res.backward_error == err
        assert res.grads == grads
        theirs = run_grad_mode(xr, yr, op, ng, torch_module=real_torch)
        assert theirs.grad_enabled_inside == res.grad_enabled_inside


def test_drawing_changes_with_each_control():
    ex = GradModeExplorer(x_requires_grad=True, y_requires_grad=False, op="*")
    seen = {ex.svg}
    for ctl, value in ((ex.op, "+"), (ex.y_requires_grad, True), (ex.no_grad, True), (ex.x_requires_grad, False)):
        table = ex.table_view.value
        ctl.value = value
        assert ex.svg not in seen and ex.svg.startswith("<")
        assert ex.table_view.value != table
        seen.add(ex.svg)
    assert ex.internal_errors == []


def test_bad_operator():
    with pytest.raises(ValueError):
        GradModeExplorer(op="**")
