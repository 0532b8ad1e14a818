"""LeafExplorer: every chain of length <= 3 over clone/detach/cuda/to('cpu')/+2/*3, with
requires_grad True/False, set before or after the chain, driven through the controls.

For each state the code line, the table, the explanation and the drawing must agree
with running the same code directly in leafkit and, when installed, in real PyTorch
(``.cuda()`` → ``.double()``, ``.to('cpu')`` → ``.float()``).
"""

from __future__ import annotations

import pytest
from widget_checks import ALL_CHAINS, ALL_LEAF_STATES, as_torch, execute, leaf_facts

import leafkit
from leafkit.widgets import LeafExplorer
from leafkit.widgets.leaf_explorer import NO_STEP, STEPS, chain_code, explain_chain, run_chain, step_program

_BY_GROUP = {}
for _rg, _when, _chain in ALL_LEAF_STATES:
    _BY_GROUP.setdefault((_rg, _when, len(_chain)), []).append(_chain)
GROUPS = sorted(_BY_GROUP)


def _expected_device(chain):
    dev = "cpu"
    for s in chain:
        if s == "cuda()":
            dev = "cuda:0"
        elif s == "to('cpu')":
            dev = "cpu"
    return dev


def test_every_state_is_counted():
    assert len(ALL_CHAINS) == 1 + 6 + 36 + 216
    assert len(ALL_LEAF_STATES) == 4 * 259


def test_default_state_is_the_articles_k_line():
    ex = LeafExplorer()
    assert ex.code == "t = torch.tensor([1.0], requires_grad=True).cuda().detach()"
    assert [r["code"] for r in ex.rows] == [
        "t0 = torch.tensor([1.0], requires_grad=True)",
        "t1 = t0.cuda()",
        "t = t1.detach()",
    ]
    assert [(r["is_leaf"], r["requires_grad"], r["grad_fn"]) for r in ex.rows] == [
        (True, True, None),
        (False, True, "ToCopyBackward0"),
        (True, False, None),
    ]
    assert ex.rows[-1]["device"] == ("cuda:0 (simulated)" if leafkit.cuda.backend() == "simulated" else "cuda:0")
    assert "detach()" in ex.explanation and "requires_grad=False" in ex.explanation
    assert ex.svg is not None and "<svg" in ex.svg and "t1" in ex.svg
    assert ex.message is None and ex.internal_errors == []


@pytest.mark.parametrize("rg,when,length", GROUPS, ids=lambda v: str(v))
def test_all_chains_through_the_controls(no_dot, rg, when, length):
    ex = LeafExplorer(requires_grad=not rg, steps=[], when="after" if when == "before" else "before")
    for chain in _BY_GROUP[(rg, when, length)]:
        ex.set_state(requires_grad=rg, steps=chain, when=when)
        assert ex.internal_errors == [] and ex.message is None, ex.message
        assert ex.requires_grad.value is rg and ex.when.value == when
        assert [d.value for d in ex.steps] == chain + [NO_STEP] * (3 - len(chain))

        # the code line, as the articles write it, run directly in leafkit
        code = chain_code(rg, chain, when)
        assert ex.code == code
        assert code in ex.code_view.value.replace("&#x27;", "'")
        truth = execute(code)["t"]

        # the table: one row per statement of the step-by-step program, read right after it ran
        prog = step_program(rg, chain, when)
        assert [r["code"] for r in ex.rows] == [s for _, s in prog]
        ns = {"torch": leafkit}
        for (var, stmt), row in zip(prog, ex.rows):
            exec(stmt, ns)
            assert (row["is_leaf"], row["requires_grad"], row["grad_fn"]) == leaf_facts(ns[var]), (code, stmt)
            assert row["device"].split(" ")[0] == str(ns[var].device)
        assert leaf_facts(ns["t"]) == leaf_facts(truth), code
        assert ex.rows[-1]["device"].split(" ")[0] == _expected_device(chain)
        table = ex.table_view.value
        assert table.count("<tr") == len(prog) + 1
        if truth.grad_fn is not None:
            assert type(truth.grad_fn).__name__ in table

        # the explanation names what decided the result
        words = ex.explanation
        is_leaf, requires_grad, fn = leaf_facts(truth)
        if not is_leaf:
            assert "t is not a leaf" in words and fn in words
        elif requires_grad:
            assert "leaf that requires grad" in words
        else:
            assert "requires_grad=False" in words
        assert words in ex.explanation_view.value.replace("&#x27;", "'")

        # the drawing: the variables view of the namespace at the end of the program
        variables = ex.drawing.state["variables"]
        for var, _ in prog:
            v = variables[var]
            assert (v["is_leaf"], v["requires_grad"], v["grad_fn"]) == leaf_facts(ns[var])
        assert ex.svg is None and "lk-text-drawing" in ex.drawing_view.value
        for var, _ in prog:
            assert var in ex.drawing.text


@pytest.mark.parity
@pytest.mark.parametrize("rg,when", [(True, "before"), (True, "after"), (False, "before"), (False, "after")])
def test_all_chains_agree_with_pytorch(real_torch, rg, when):
    for chain in ALL_CHAINS:
        res = run_chain(rg, chain, when)  # what the explorer shows
        ns = {"torch": real_torch}
        for (var, stmt), row in zip(step_program(rg, chain, when), res.rows):
            exec(as_torch(stmt), ns)
            got = (row["is_leaf"], row["requires_grad"], row["grad_fn"])
            assert got == leaf_facts(ns[var]), (chain_code(rg, chain, when), stmt)
            assert row["same_as"] is None or ns[row["same_as"]] is ns[var]
        one = execute(as_torch(chain_code(rg, chain, when)), real_torch)["t"]
        assert leaf_facts(one) == (res.final["is_leaf"], res.final["requires_grad"], res.final["grad_fn"])


def test_seed_000_rules(no_dot):
    """Seed 000: a.requires_grad toggled, b = a.cuda() is a non-leaf, c = b.detach() a leaf, d = a + 2 not."""
    ex = LeafExplorer(requires_grad=True, steps=["cuda()"], when="before")
    assert ex.rows[-1]["grad_fn"] == "ToCopyBackward0" and ex.rows[-1]["is_leaf"] is False
    ex.set_state(steps=["cuda()", "detach()"])
    assert (ex.rows[-1]["is_leaf"], ex.rows[-1]["requires_grad"]) == (True, False)
    ex.set_state(steps=["+ 2"])
    assert (ex.rows[-1]["is_leaf"], ex.rows[-1]["requires_grad"], ex.rows[-1]["grad_fn"]) == (
        False,
        True,
        "AddBackward0",
    )
    ex.set_state(steps=["cuda()", "to('cpu')"])
    assert ex.rows[-1]["device"] == "cpu" and ex.rows[-1]["grad_fn"] == "ToCopyBackward0"


def test_each_control_redraws_and_highlights_the_change():
    ex = LeafExplorer(requires_grad=False, steps=["clone()"], when="before")
    svg0 = ex.svg
    ex.requires_grad.value = True  # clone of a tensor requiring grad: t flips to a non-leaf
    assert ex.code == "t = torch.tensor([1.0], requires_grad=True).clone()"
    assert ex.drawing.changes["flipped"] == ["t"]
    assert ex.svg != svg0 and "is_leaf: True \u2192 False" in ex.svg
    svg1 = ex.svg
    ex.steps[1].value = "detach()"
    assert ex.code == "t = torch.tensor([1.0], requires_grad=True).clone().detach()"
    assert "t0" in ex.drawing.changes["added_variables"] or ex.drawing.changes["changed"]
    assert ex.svg != svg1 and "NEW since previous drawing" in ex.svg
    svg2 = ex.svg
    ex.when.value = "after"
    assert ex.code == "t = torch.tensor([1.0]).clone().detach()\nt.requires_grad = True"
    assert ex.rows[-1]["code"] == "t.requires_grad = True" and ex.rows[-1]["requires_grad"] is True
    assert ex.svg != svg2
    # highlighted rows in the table: the ones that changed since the last toggle
    assert "box-shadow:inset 4px 0 0 #ef6c00" in ex.table_view.value
    assert ex.internal_errors == []


def test_to_cpu_on_a_cpu_tensor_is_the_same_tensor():
    ex = LeafExplorer(requires_grad=True, steps=["to('cpu')"])
    assert ex.rows[-1]["same_as"] == "t0"
    assert "same tensor as t0" in ex.table_view.value
    assert any("returns the very same tensor" in n for n in explain_chain(ex.result)[1])
    assert "t0 = t" in ex.drawing.text or "t = t0" in ex.drawing.text


def test_code_formatting_keeps_python_precedence():
    assert chain_code(True, ["+ 2", "* 3"]) == "t = (torch.tensor([1.0], requires_grad=True) + 2) * 3"
    assert chain_code(True, ["* 3", "+ 2"]) == "t = torch.tensor([1.0], requires_grad=True) * 3 + 2"
    assert chain_code(False, ["+ 2", "clone()"]) == "t = (torch.tensor([1.0], requires_grad=False) + 2).clone()"
    assert chain_code(True, ["+ 2", "+ 2", "* 3"], when="after") == (
        "t = (torch.tensor([1.0]) + 2 + 2) * 3\nt.requires_grad = True"
    )
    for chain in ALL_CHAINS:  # every one-liner is valid Python that runs
        compile(chain_code(True, chain), "<chain>", "exec")


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        LeafExplorer(steps=["sum()"])
    with pytest.raises(ValueError):
        LeafExplorer(when="during")
    with pytest.raises(ValueError):
        LeafExplorer(steps=["clone()"] * 4)
    assert set(STEPS) == {"clone()", "detach()", "cuda()", "to('cpu')", "+ 2", "* 3"}


def test_cuda_unavailable_is_a_styled_message(monkeypatch, no_dot):
    monkeypatch.setenv("LEAFKIT_SIMULATE_CUDA", "0")
    if leafkit.cuda.backend() is not None:
        pytest.skip("a real GPU is present")
    ex = LeafExplorer(requires_grad=True, steps=["cuda()"])
    assert ex.internal_errors == []
    assert ex.message["kind"] == "error"
    assert ex.message["text"] == "AssertionError: Torch not compiled with CUDA enabled"
    assert "lk-msg-error" in ex.message_view.value and "Traceback" not in ex.message_view.value
    assert "no cuda" in ex.header_view.value


@pytest.mark.parametrize("name", ["t t", "", "1t", "if", "None", "t-1", 3])
def test_a_name_that_is_not_a_python_identifier_is_refused_at_construction(name):
    # not shown later as the learner's "This code raises an error: SyntaxError"
    with pytest.raises(ValueError, match=r"name must be a Python variable name \(an identifier such as 't'\), got "):
        LeafExplorer(name=name)
    with pytest.raises(ValueError, match="name must be a Python variable name"):
        run_chain(True, ["clone()"], name=name)


def test_a_valid_name_is_used_in_the_code():
    ex = LeafExplorer(name="weight_1", steps=["clone()"])
    assert ex.code == "weight_1 = torch.tensor([1.0], requires_grad=True).clone()"
    assert ex.message is None and ex.internal_errors == []


def test_a_single_step_string_is_one_step(no_dot):
    ex = LeafExplorer(steps="clone()")
    assert ex.state["steps"] == ["clone()"] and ex.message is None
    assert ex.code == "t = torch.tensor([1.0], requires_grad=True).clone()"
    ex.set_state(steps="detach()")
    assert ex.state["steps"] == ["detach()"] and ex.code.endswith(".detach()")
    assert chain_code(True, "cuda()") == chain_code(True, ["cuda()"])
    assert run_chain(True, "clone()").steps == ["clone()"]
    with pytest.raises(ValueError, match=r"unknown step 'sum\(\)'"):
        LeafExplorer(steps="sum()")
    with pytest.raises(TypeError, match="steps must be a step such as 'clone\\(\\)' or a sequence of steps, got int"):
        LeafExplorer(steps=3)
