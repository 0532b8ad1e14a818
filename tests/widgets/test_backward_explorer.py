"""BackwardExplorer: retain_grad on y/z/t, a hook, retain_graph and repeated backward() on
x -> y -> z -> t, driven through checkboxes and button clicks; checked against the seeds
(000 appendix, 003 ex 8), against leafkit running the shown program directly, and PyTorch."""

from __future__ import annotations

import itertools

import pytest
from widget_checks import execute_error, grad_repr

import leafkit
from leafkit.widgets import BackwardExplorer
from leafkit.widgets.backward_explorer import INTERMEDIATES, NAMES, SETUP

SECOND_TIME = "RuntimeError: Trying to backward through the graph a second time"
RETAINS = [c for n in range(4) for c in itertools.combinations(INTERMEDIATES, n)]
HOOKS = ["none", *INTERMEDIATES]
CLICKS = [c for n in range(1, 4) for c in itertools.product((False, True), repeat=n)]


def _replay(module, statements):
    ns, err = execute_error(statements, module)
    return {n: grad_repr(ns[n]) for n in NAMES}, err


def test_seed_003_example_8():
    ex = BackwardExplorer(retain_grad=["z"])
    assert ex.code == "\n".join(SETUP) + "\nz.retain_grad()"
    assert all(r["grad"] is None for r in ex.rows)
    ex.backward_button.click()
    grads = {r["variable"]: r["grad"] for r in ex.rows}
    assert grads == {"x": "tensor([1024.])", "y": None, "z": "tensor([32.])", "t": None}
    assert ex.rows[2]["retains_grad"] is True and ex.rows[1]["retains_grad"] is False
    # y.grad is None *with* PyTorch's non-leaf warning, shown as a styled message
    assert "not a leaf Tensor is being accessed" in ex.grad_warnings["y"]
    assert "lk-msg-warning" in ex.warning_view.value and "y.grad" in ex.warning_view.value
    assert ex.graph_freed and "(freed)" in ex.svg
    assert "z kept its .grad because of retain_grad()" in ex.explanation
    assert "greyed" in ex.explanation


def test_seed_000_appendix_accumulation_and_the_freed_graph():
    """retain_grad + retain_graph: the second pass accumulates; after a pass without
    retain_graph the next one raises "backward through the graph a second time"."""
    ex = BackwardExplorer(retain_grad=["y"])
    ex.retain_graph.value = True
    ex.backward_button.click()
    assert ex.grads["y"] == "tensor([256.])" and not ex.graph_freed and "(freed)" not in ex.svg
    ex.hook_on.value = "y"
    ex.retain_graph.value = False
    ex.backward_button.click()
    assert ex.printed == "hook on y saw tensor([256.])\n"
    assert ex.rows[1]["grad_history"] == ["tensor([256.])", "tensor([512.])"]
    assert ex.rows[0]["grad_history"] == ["tensor([1024.])", "tensor([2048.])"]
    assert "accumulate" in ex.explanation
    assert ex.graph_freed and "(freed)" in ex.svg
    ex.hook_on.value = "none"  # remove the hook: handle.remove()
    assert ex.actions[-1] == "handle.remove()"
    before = ex.code
    ex.backward_button.click()
    assert ex.message["kind"] == "error" and ex.message["text"].startswith(SECOND_TIME)
    assert ex.failed[0] == "t.backward()" and ex.code == before + "\nt.backward()"
    assert "raised RuntimeError (not kept)" in ex.code_view.value
    assert ex.actions[-1] == "handle.remove()"  # the failing call is not kept
    assert "second time" in ex.explanation and "Traceback" not in ex.message_view.value
    assert ex.internal_errors == []
    ex.reset_button.click()
    assert ex.passes == [] and ex.failed is None and ex.message is None
    assert ex.actions == ["y.retain_grad()"]  # the choices survive a reset


def test_unticking_retain_grad_removes_the_call():
    ex = BackwardExplorer()
    ex.retain["z"].value = True
    ex.retain["y"].value = True
    assert ex.actions == ["z.retain_grad()", "y.retain_grad()"]
    ex.backward_button.click()
    assert ex.grads["z"] == "tensor([32.])"
    ex.retain["z"].value = False
    assert ex.actions == ["y.retain_grad()", "t.backward()"]
    assert ex.grads["z"] is None and "z" in ex.grad_warnings


def test_every_setup_and_click_sequence(no_dot):
    """8 retain_grad subsets x 4 hook places x every sequence of 1-3 clicks (retain_graph or not)."""
    for retain, hook, clicks in itertools.product(RETAINS, HOOKS, CLICKS):
        ex = BackwardExplorer(retain_grad=retain, hook=None if hook == "none" else hook)
        freed = False
        for keep in clicks:
            ex.retain_graph.value = keep
            ex.backward_button.click()
            if freed:
                assert ex.failed is not None and ex.failed[1].startswith(SECOND_TIME)
            else:
                assert ex.failed is None
                freed = not keep
            assert ex.internal_errors == []
            # what the widget shows == the shown (kept) program run directly in leafkit
            grads, err = _replay(leafkit, ex.program)
            assert err is None
            assert ex.grads == grads
            assert {r["variable"]: r["grad"] for r in ex.rows} == grads
            assert ex.drawing.state["variables"]["x"]["grad"] is not None
        n_ok = len(ex.passes)
        assert n_ok == len([a for a in ex.actions if a.startswith("t.backward(")])
        for name in NAMES:
            retained = name in retain or name == "x"
            assert (ex.grads[name] is not None) == retained
            assert (name in ex.grad_warnings) == (not retained)
        if hook != "none":
            assert ex.printed.count(f"hook on {hook} saw") == n_ok


@pytest.mark.parity
def test_programs_agree_with_pytorch(real_torch, no_dot):
    for retain, hook, clicks in itertools.product(RETAINS, HOOKS, CLICKS):
        ex = BackwardExplorer(retain_grad=retain, hook=None if hook == "none" else hook)
        for keep in clicks:
            ex.retain_graph.value = keep
            ex.backward()
        theirs, err = _replay(real_torch, ex.program)
        assert err is None and theirs == ex.grads, ex.code
        if ex.failed:
            _, their_err = _replay(real_torch, ex.program + [ex.failed[0]])
            assert their_err == ex.failed[1]


def test_bad_arguments():
    with pytest.raises(ValueError):
        BackwardExplorer(retain_grad=["x"])
    with pytest.raises(ValueError):
        BackwardExplorer(hook="x")


def test_moving_the_hook_between_passes(real_torch):
    """Register on y, move to z, remove: handle.remove() lands in the program; torch prints the same."""
    import contextlib
    import io

    ex = BackwardExplorer(hook="y")
    ex.retain_graph.value = True
    ex.backward_button.click()
    ex.hook_on.value = "z"
    ex.backward_button.click()
    ex.hook_on.value = "none"
    ex.backward_button.click()
    assert ex.actions == [
        'handle = y.register_hook(lambda grad: print("hook on y saw", grad))',
        "t.backward(retain_graph=True)",
        "handle.remove()",
        'handle = z.register_hook(lambda grad: print("hook on z saw", grad))',
        "t.backward(retain_graph=True)",
        "handle.remove()",
        "t.backward(retain_graph=True)",
    ]
    assert ex.printed == "hook on y saw tensor([256.])\nhook on z saw tensor([32.])\n"
    assert ex.rows[0]["grad_history"] == ["tensor([1024.])", "tensor([2048.])", "tensor([3072.])"]
    assert "\u2713 hook" not in ex.table_view.value and ex.internal_errors == []
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ns, err = execute_error(ex.program, real_torch)
    assert err is None and buf.getvalue() == ex.printed
    assert grad_repr(ns["x"]) == ex.grads["x"]


def test_button_shows_the_statement_it_runs():
    from leafkit.widgets import BackwardExplorer

    ex = BackwardExplorer()
    assert ex.backward_button.description == "t.backward()"
    ex.retain_graph.value = True
    assert ex.backward_button.description == "t.backward(retain_graph=True)"
    ex.backward_button.click()
    assert ex.actions[-1] == "t.backward(retain_graph=True)"


def test_why_follows_retain_grad_ticked_after_a_pass():
    """Issue 12: "Why" said "y, z and t are non-leaves without retain_grad()" after t.retain_grad()
    was ticked.  Ticked after pass 1, the call comes after it: t.grad fills from the next pass on."""
    ex = BackwardExplorer()
    ex.retain_graph.value = True
    ex.backward_button.click()
    assert "y, z and t are non-leaves without retain_grad()" in ex.explanation
    ex.retain["t"].value = True
    assert ex.actions == ["t.backward(retain_graph=True)", "t.retain_grad()"]
    assert ex.grads["t"] is None and "t" not in ex.grad_warnings  # no warning: t retains grad now
    assert "t called retain_grad() after the last pass, so its .grad fills from the next pass on" in ex.explanation
    assert "y and z are non-leaves without retain_grad()" in ex.explanation
    assert "y, z and t" not in ex.explanation
    ex.backward_button.click()
    assert ex.grads["t"] == "tensor([1.])"
    assert "t kept its .grad because of retain_grad()" in ex.explanation
    assert "t.retain_grad() ran after pass 1, so t.grad counts only the passes after it." in ex.explanation_view.value
    assert ex.rows[3]["grad_history"] == [None, "tensor([1.])"] and ex.internal_errors == []


def test_unticking_mid_way_says_the_program_is_replayed():
    """Issue 12: unticking retain_grad after passes silently changed the earlier passes' columns."""
    ex = BackwardExplorer(retain_grad=["z"], retain_graph=True)
    ex.backward_button.click()
    ex.backward_button.click()
    assert ex.rows[2]["grad_history"] == ["tensor([32.])", "tensor([64.])"]
    ex.retain["z"].value = False
    assert ex.rows[2]["grad_history"] == [None, None]  # the earlier columns changed...
    assert ex.message["kind"] == "info"  # ...and the explorer says why
    assert ex.message["title"] == "z.retain_grad() was removed, and the program was replayed from the top"
    assert "cannot undo retain_grad()" in ex.message["text"] and "earlier passes" in ex.message["text"]
    assert "lk-msg-info" in ex.message_view.value
    ex.backward_button.click()  # the next action clears the note
    assert ex.message is None
    # unticking a call that no pass came after changes no column: nothing to say
    ex.retain["y"].value = True
    ex.retain["y"].value = False
    assert ex.message is None and ex.internal_errors == []
