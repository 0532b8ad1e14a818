"""DetachExplorer: every click sequence of length <= 3 over its six buttons, against leafkit
running the shown program directly, seed 003 example 9, and PyTorch."""

from __future__ import annotations

import itertools

import pytest
from widget_checks import execute_error, grad_repr, leaf_facts

import leafkit
from leafkit.widgets import DetachExplorer
from leafkit.widgets.detach_explorer import ACTIONS, SETUP

SEQUENCES = [list(c) for n in range(1, 4) for c in itertools.product(ACTIONS, repeat=n)]
INPLACE = "modified by an inplace operation"
LEAF_INPLACE = "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."


def _state(module, statements):
    ns, err = execute_error(statements, module)
    out = {
        n: (repr(ns[n].detach()), int(ns[n]._version), leaf_facts(ns[n]), grad_repr(ns[n]) if ns[n].is_leaf else None)
        for n in ("x", "y", "z")
        if n in ns
    }
    return out, err, ns


def test_seed_003_example_9():
    ex = DetachExplorer()
    assert ex.code == "\n".join(SETUP)
    assert ex.info["same_object"] is False and ex.info["same_data_ptr"] is True
    rows = {r["variable"]: r for r in ex.rows}
    assert (rows["y"]["is_leaf"], rows["y"]["requires_grad"]) == (True, False)
    assert rows["x"]["data_ptr"] == rows["y"]["data_ptr"]
    assert "shares storage" in ex.drawing.text
    ex.buttons["y.add_(1)"].click()
    rows = {r["variable"]: r for r in ex.rows}
    assert rows["x"]["value"] == "tensor([3.])"  # in-place on the detached tensor changes the original
    assert rows["x"]["version"] == rows["y"]["version"] == 1
    assert "x changed too" in ex.explanation
    ex.buttons["z = x ** 2"].click()
    ex.buttons["z.backward()"].click()
    assert ex.info["x_grad"] == "tensor([6.])" and ex.message is None


def test_inplace_error_after_saving_for_backward():
    ex = DetachExplorer()
    assert ex.buttons["z.backward()"].disabled  # no z yet
    ex.buttons["z = x ** 2"].click()
    assert not ex.buttons["z.backward()"].disabled
    ex.buttons["y.mul_(2)"].click()
    assert "z.backward() will now fail" in ex.explanation_view.value
    ex.buttons["z.backward()"].click()
    assert ex.message["kind"] == "error" and INPLACE in ex.message["text"]
    assert "is at version 1; expected version 0 instead" in ex.message["text"]
    assert ex.info["saved_version"] == 0 and ex.info["x_version"] == 1
    assert "lk-msg-error" in ex.message_view.value and "Traceback" not in ex.message_view.value
    assert ex.actions == ["z = x ** 2", "y.mul_(2)"]  # the failing line is not kept
    ex.buttons["x.add_(1)"].click()
    assert ex.message["text"] == LEAF_INPLACE
    ex.reset_button.click()
    assert ex.actions == [] and ex.message is None and ex.code == "\n".join(SETUP)
    assert ex.internal_errors == []


def test_every_click_sequence(no_dot):
    ex = DetachExplorer()
    for seq in SEQUENCES:
        ex.reset_button.click()
        for a in seq:
            if ex.buttons[a].disabled:
                continue
            ex.buttons[a].click()
            assert ex.internal_errors == []
            # the kept program, run directly, gives what the table shows
            state, err, ns = _state(leafkit, ex.program)
            assert err is None
            rows = {r["variable"]: r for r in ex.rows}
            for n, (value, version, facts, grad) in state.items():
                r = rows[n]
                assert (r["value"], r["version"], (r["is_leaf"], r["requires_grad"], r["grad_fn"])) == (
                    value,
                    version,
                    facts,
                )
                if r["is_leaf"]:
                    assert r["grad"] == grad
            assert ex.info["same_data_ptr"] and rows["x"]["data_ptr"] == rows["y"]["data_ptr"]
            assert ns["x"].data_ptr() == ns["y"].data_ptr()
            if ex.failed:  # the click that raised: the same error as running it directly
                _, err2, _ = _state(leafkit, ex.program + [ex.failed[0]])
                assert err2 == ex.failed[1]
                assert ex.message["text"] == err2
            assert set(ex.drawing.state["variables"]) == set(state)


@pytest.mark.parity
def test_click_sequences_agree_with_pytorch(real_torch, no_dot):
    ex = DetachExplorer()
    for seq in SEQUENCES:
        ex.reset()
        for a in seq:
            if not ex.buttons[a].disabled:
                ex.run(a)
        ours, _, _ = _state(leafkit, ex.program)
        theirs, err, _ = _state(real_torch, ex.program)
        assert err is None
        for n in ours:  # values, versions, leaf facts and grads; data_ptr differs by nature
            assert ours[n] == theirs[n], (ex.program, n)
        if ex.failed:
            _, their_err, _ = _state(real_torch, ex.program + [ex.failed[0]])
            assert their_err.split(":")[0] == ex.failed[1].split(":")[0]
            key = INPLACE if INPLACE in ex.failed[1] else ex.failed[1].split(": ", 1)[1][:40]
            assert key in their_err


def test_bad_action():
    with pytest.raises(ValueError):
        DetachExplorer(actions=["x.zero_()"])
    ex = DetachExplorer(actions=["y.zero_()"])
    assert ex.info["x_value"] == "tensor([0.])"


def test_the_gradient_and_the_value_read_as_different_things():
    """Issue 12: "now tensor([4.]), accumulated over 2 backward calls" while x is 0 read as a
    contradiction; the sentence now keeps x.grad and x's value apart and says what was added."""
    ex = DetachExplorer(actions=["z = x ** 2", "z.backward()", "y.zero_()", "z = x ** 2", "z.backward()"])
    assert ex.info["x_value"] == "tensor([0.])" and ex.info["x_grad"] == "tensor([4.])"
    assert ex.info["saved_value"] == "tensor([0.])" and ex.info["grad_added"] == "tensor([0.])"
    e = ex.explanation
    assert "x.grad is not x's value" in e and "all 2 backward calls, now tensor([4.])" in e
    assert "x itself is tensor([0.])" in e and "added dz/dx = 2\u00b7x = tensor([0.]) to x.grad" in e
    one = DetachExplorer(actions=["y.add_(1)", "z = x ** 2", "z.backward()"])
    assert (
        "stored dz/dx = 2\u00b7x = tensor([6.]) in x.grad" in one.explanation
        and "x.grad = tensor([6.]) while x = tensor([3.])" in one.explanation
    )
