"""BackwardStepper: one backward pass, one node at a time, on graphs built in code.

* Every step is what PyTorch's engine ran at that point (node pre- and post-hooks on every
  node of the same program's torch graph): the node, the gradients that arrived, the gradients
  sent along each edge (summed back where an input was broadcast), and every ``.grad``.
* Run to the end, it leaves exactly what a plain ``backward()`` leaves, freed graph included.
* Back and Reset rebuild the ``.grad`` fields from the record; hooks fire once.
* The lesson's errors are styled messages in the panel and exceptions from ``.step()``.
"""

from __future__ import annotations

import re

import pytest
from stepper_oracle import CASES, build, check_stepper, named_tensors, statement_kwargs, torch_pass
from widget_checks import grad_repr

import leafkit
from leafkit.widgets import BackwardStepper

SECOND_TIME = "Trying to backward through the graph a second time"


def stepper(source: str, **kw):
    """(stepper, namespace) for a program of stepper_oracle.CASES, run in leafkit."""
    ns = build(leafkit, source)
    args = statement_kwargs(ns)
    args.update(kw)
    return BackwardStepper(ns["loss"], params=named_tensors(leafkit, ns), **args), ns


def grads_of(ns) -> dict:
    return {n: grad_repr(t) for n, t in named_tensors(leafkit, ns).items()}


# ------------------------------------------------------------------ PyTorch is the specification --
@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_step_is_what_pytorch_ran(case, real_torch, no_dot, capsys):
    trace = torch_pass(real_torch, CASES[case])
    ex, _ = stepper(CASES[case])
    check_stepper(ex, trace)  # before the pass
    while not ex.finished:
        ex.step()
        check_stepper(ex, trace)
    assert ex.internal_errors == [] and ex.error is None
    assert ex.cursor == len(trace["events"]) and ex.step() is None


@pytest.mark.parity
@pytest.mark.parametrize("case", ["broadcasting", "mlp", "hooks"])
def test_back_and_forth_still_shows_pytorchs_steps(case, real_torch, no_dot, capsys):
    trace = torch_pass(real_torch, CASES[case])
    ex, _ = stepper(CASES[case])
    ex.run()
    n = ex.cursor
    for k in range(n - 1, -1, -1):
        assert ex.back()
        assert ex.cursor == k
        check_stepper(ex, trace)
    assert not ex.back()
    for _ in range(3):
        ex.step()
    check_stepper(ex, trace)
    ex.reset()
    check_stepper(ex, trace)
    ex.run()
    check_stepper(ex, trace)


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_leaves_what_backward_leaves(case, no_dot, capsys):
    plain = build(leafkit, CASES[case])
    plain["loss"].backward(**statement_kwargs(plain))
    printed_plain = capsys.readouterr().out
    ex, ns = stepper(CASES[case])
    ex.run()
    assert ex.finished and ex.error is None
    assert grads_of(ns) == grads_of(plain)
    assert capsys.readouterr().out == printed_plain  # each hook fired once, as in backward()
    # the graph is left as backward() leaves it: freed (a second pass fails) or kept
    errors = []
    for n in (plain, ns):
        try:
            n["loss"].backward(**statement_kwargs(n))
            errors.append(None)
        except RuntimeError as exc:
            errors.append(str(exc))
    capsys.readouterr()
    assert errors[0] == errors[1]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_next_node_named_is_the_one_that_runs(case, no_dot, capsys):
    """The explanation names the next node by PyTorch's rule; the engine then runs exactly that one."""
    ex, _ = stepper(CASES[case])
    while True:
        predicted, _ = ex._next_node()
        node = ex.step()
        if node is None:
            assert predicted is None
            break
        assert predicted is node, (ex.cursor, ex.label(predicted), ex.label(node))
        if not ex.finished:
            nxt, _ = ex._next_node()
            assert ex.label(nxt) in ex.explanation


# ------------------------------------------------------------------ Back, Reset and the record --
def test_back_rebuilds_every_grad_and_hooks_fire_once(no_dot, capsys):
    ex, ns = stepper(CASES["hooks"])
    seen = []
    while not ex.finished:
        seen.append(grads_of(ns))
        ex.step()
    seen.append(grads_of(ns))
    assert capsys.readouterr().out.count("x saw") == 1
    for k in range(len(seen) - 2, -1, -1):
        ex.back()
        assert grads_of(ns) == seen[k], k
    ex.run()
    assert grads_of(ns) == seen[-1]
    ex.reset()
    assert grads_of(ns) == seen[0] and ex.cursor == 0
    ex.run()
    assert capsys.readouterr().out == ""  # replayed from the record: the hook did not fire again
    assert "x saw" in ex.output_view.value  # ... and what it printed is still shown


def test_back_keeps_the_grad_tensor_that_accumulates(no_dot):
    """A leaf with a .grad from an earlier pass: AccumulateGrad adds into that very tensor; Back puts
    its old values back into it, Step puts the sum back, and it stays the same object throughout."""
    ex, ns = stepper(CASES["second_pass_accumulates"])
    w = ns["w"]
    g = w.grad
    assert repr(g) == "tensor([ 3., -1.])"
    ex.run()
    assert w.grad is g and repr(g) == "tensor([ 6., -2.])"
    assert "w.grad already held tensor([ 3., -1.])" in ex.explanation
    ex.back()
    assert w.grad is g and repr(g) == "tensor([ 3., -1.])"
    ex.step()
    assert w.grad is g and repr(g) == "tensor([ 6., -2.])"
    acc = next(r for r in ex.rows if r["accumulated"] == "w")
    assert acc["grad"] == "tensor([ 6., -2.])"


def test_the_view_says_when_it_is_behind_the_pass(no_dot):
    ex, _ = stepper(CASES["diamond"])
    ex.run()
    n = ex.cursor
    ex.back()
    assert f"the pass itself has already run {n} steps" in ex.explanation
    assert ex.step_button.disabled is False and ex.back_button.disabled is False
    ex.step()
    assert ex.finished and "Shown again" not in ex.explanation
    assert ex.step_button.disabled and ex.run_button.disabled


def test_buttons_and_act(no_dot):
    ex = BackwardStepper.example()
    assert ex.back_button.disabled and ex.reset_button.disabled and not ex.step_button.disabled
    assert ex.act("back") is False and ex.act("reset") is False
    assert ex.act("step") and ex.cursor == 1 and not ex.back_button.disabled
    assert ex.act("run") and ex.finished
    assert ex.act("step") is False  # disabled at the end
    assert ex.act("reset") and ex.cursor == 0
    assert ex.internal_errors == []


# ------------------------------------------------------------------ what a learner reads --
def test_the_example_explains_each_step(no_dot, capsys):
    ex = BackwardStepper.example()
    assert ex.code == "loss.backward()"
    assert "The first Step runs SumBackward0 (loss)" in ex.explanation and "tensor(1.)" in ex.explanation
    assert ex.step().name() == "SumBackward0"
    assert ex.rows[0]["edges"] == [
        {"to": "AddBackward0 (z)", "output_nr": 0, "grad": "tensor([1., 1., 1.])", "shape": (3,), "summed_from": None}
    ]
    ex.step()
    ex.step()
    assert ex.rows[2]["freed"] is True and "freed its saved tensors" in ex.explanation
    ex.step()  # y's node: three gradients added up, w's summed back
    row = ex.rows[3]
    assert row["label"] == "MulBackward0 (y)" and row["grad_in"] == ["tensor([ 5.,  9., 13.])"]
    assert row["contributions"] == ["tensor([1., 1., 1.])", "tensor([2., 4., 6.])", "tensor([2., 4., 6.])"]
    assert row["retained"] == {"y": "tensor([ 5.,  9., 13.])"}
    to_w = next(e for e in row["edges"] if e["to"] == "AccumulateGrad (w)")
    assert to_w == {"to": "AccumulateGrad (w)", "output_nr": 0, "grad": "tensor(62.)", "shape": (), "summed_from": (3,)}
    assert "the sum of the 3 gradients" in ex.explanation
    assert "summed from shape (3,) back to ()" in ex.explanation
    assert "summed (3,) \u2192 ()" in ex.table_view.value
    assert ex.grads == {"w": None, "x": None, "y": "tensor([ 5.,  9., 13.])"}
    ex.step()
    assert ex.rows[4]["accumulated"] == "w" and "w.grad: None \u2192 tensor(62.)" in ex.explanation
    ex.step()
    assert ex.rows[5]["hooks"] == ["tensor hook"] and "hook on x saw" in ex.rows[5]["printed"]
    assert ex.finished and "Done after 6 steps" in ex.explanation
    assert "That is exactly what loss.backward() leaves" in ex.explanation
    assert "lk-msg" not in ex.message_view.value


def test_the_drawing_highlights_the_node_and_writes_the_gradients(no_dot):
    ex = BackwardStepper.example()
    src = ex.drawing.source
    assert "rankdir=BT" in src and "step 1" not in src
    assert ex.drawing.state["ready"] == ["SumBackward0 (loss)"] and ex.drawing.state["current"] is None
    for _ in range(4):
        ex.step()
    src = ex.drawing.source
    assert ex.drawing.state["current"] == "MulBackward0 (y)"
    current = next(line for line in src.splitlines() if "MulBackward0\\n(y)" in line)
    assert "penwidth=3" in current and "#ef6c00" in current and "step 4 \u00b7 now" in current
    assert "y.grad = [5., 9., 13.]" in current and "peripheries=2" in current
    assert 'label=" 62.\\nsummed (3,) → () "' in src  # the broadcast input's gradient, summed back
    assert 'label=" [10., 18., 26.] "' in src
    assert ex.drawing.state["ready"] == ["AccumulateGrad (w)", "AccumulateGrad (x)"]
    freed = next(line for line in src.splitlines() if "step 3" in line)
    assert "dashed" in freed and "(freed)" in freed
    for name in ("loss", "x", "w", "y", "z"):
        assert name in ex.drawing.state["variables"]


def test_the_drawing_renders_as_svg():
    pytest.importorskip("graphviz")
    from leafkit.viz import dot_available

    if not dot_available():
        pytest.skip("Graphviz's dot is not installed")
    ex = BackwardStepper.example()
    ex.run()
    assert ex.svg is not None and "<svg" in ex.drawing_view.value
    assert "> 62.<" in ex.svg and ">w ()<" in ex.svg and "step 6 · now" in ex.svg
    # the legend stands beside the drawing, under the sentence (the panel's left column), not under the drawing
    legend = ex.drawing_pane.legend_view.value
    assert "lk-legend" in legend and "ran at this step" in legend and "lk-legend" not in ex.drawing_view.value
    assert "max-height:480px" in ex.drawing_view.value  # a tall graph is scaled down to stay in view


def test_chinese(no_dot):
    ex = BackwardStepper.example("zh")
    ex.step()
    ex.step()
    ex.step()
    ex.step()
    assert "第 4 步" in ex.explanation and "求和回到 ()" in ex.explanation
    assert "WenQuanYi Zen Hei" in ex.drawing.source and "第 4 步 · 当前" in ex.drawing.source
    assert "叶子张量" in ex.drawing_view.value
    en = BackwardStepper.example("en")
    for _ in range(4):
        en.step()
    assert en.rows == ex.rows and en.code == ex.code and en.grads == ex.grads


def test_names_come_from_the_cell_that_builds_it(no_dot):
    weight = leafkit.tensor([1.0, 2.0], requires_grad=True)
    scaled = weight * 3
    total = scaled.sum()
    ex = BackwardStepper(total)
    assert ex.code == "total.backward()"
    assert ex.label(ex.graph_nodes[1]) == "MulBackward0 (scaled)"
    assert "weight" in ex.drawing.state["variables"]
    _hidden = weight
    assert ex.name_of(_hidden) == "weight"
    anonymous = BackwardStepper((leafkit.tensor([1.0], requires_grad=True) * 2).sum(), params={})
    assert anonymous.code == "loss.backward()" and anonymous.grads == {}
    anonymous.run()
    assert anonymous.rows[-1]["accumulated"] == "?"


def test_module_parameters_are_named(no_dot):
    model = leafkit.nn.Linear(2, 1)
    out = model(leafkit.tensor([[1.0, 2.0]])).sum()
    ex = BackwardStepper(out)
    ex.run()
    assert set(ex.grads) == {"model.weight", "model.bias"}
    assert ex.grads["model.weight"] == grad_repr(model.weight)


def test_retain_graph_keeps_the_saved_tensors(no_dot):
    ex, ns = stepper(CASES["diamond"], retain_graph=True)
    ex.run()
    assert ex.code == "loss.backward(retain_graph=True)"
    assert not any(r["freed"] for r in ex.rows) and "keeps its saved tensors" in " ".join(
        ex.words.step_sentence(r) for r in ex.records
    )
    ns["loss"].backward()  # the graph is still there
    assert repr(ns["x"].grad) == "tensor([12., 20., 28.])"


def test_a_non_scalar_loss_takes_gradient(no_dot):
    ex, ns = stepper(CASES["non_scalar"])
    assert ex.code == "loss.backward(gradient=gradient)"
    assert "vector-Jacobian product" in ex.explanation
    ex.run()
    assert ex.grads["x"] == "tensor([ 3.,  3., 18.])" == grad_repr(ns["x"])  # gradient^T J, J = diag(c + 2x)
    literal = BackwardStepper(ns["y"], gradient=leafkit.tensor([1.0, 0.0, 0.0]), retain_graph=True, params={})
    assert literal.code == "loss.backward(gradient=torch.tensor([1.0, 0.0, 0.0]), retain_graph=True)"


# ------------------------------------------------------------------ errors: the lesson's, never a traceback --
def test_a_non_scalar_loss_without_gradient(no_dot):
    x = leafkit.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    ex = BackwardStepper(y)
    assert ex.act("step")
    assert ex.error is not None and ex.finished and ex.cursor == 0
    assert ex.message["kind"] == "error"
    assert ex.message["text"] == "RuntimeError: grad can be implicitly created only for scalar outputs"
    assert "gradient=torch.ones_like(y)" in ex.explanation
    assert ex.step_button.disabled and ex.run_button.disabled and ex.back_button.disabled
    assert ex.internal_errors == [] and "Traceback" not in ex.message_view.value
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        ex.step()
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        BackwardStepper(y).step()


def test_a_graph_freed_by_an_earlier_backward(no_dot):
    """The pass stops at the first node whose saved tensors are gone, as backward() does."""
    ex, ns = stepper(CASES["chain"])
    ns["loss"].backward()
    ex2 = BackwardStepper(ns["loss"], params=named_tensors(leafkit, ns))
    ex2.run_button.click()
    assert ex2.error is not None and SECOND_TIME in str(ex2.error)
    assert ex2.message["text"].startswith("RuntimeError: " + SECOND_TIME)
    assert len(ex2.records) >= 1 and ex2.finished
    assert "An earlier backward() freed" in ex2.explanation
    assert ex2.internal_errors == []
    with pytest.raises(RuntimeError, match="second time"):
        BackwardStepper(ns["loss"]).run()
    ex2.back()  # Back works after an error, and stepping shows it again
    assert ex2.message is None and not ex2.finished
    ex2.step()
    assert ex2.finished and ex2.message["kind"] == "error"


def test_a_hook_that_raises(no_dot):
    x = leafkit.tensor([1.0], requires_grad=True)
    y = x * 2

    def broken(grad):
        raise ValueError("my hook is broken")

    y.register_hook(broken)
    ex = BackwardStepper(y.sum())
    ex.run_button.click()
    assert ex.message["text"] == "ValueError: my hook is broken" and ex.internal_errors == []
    assert [r["node"] for r in ex.rows] == ["SumBackward0"]


def test_a_loss_that_does_not_require_grad_and_a_leaf_loss(no_dot):
    c = leafkit.tensor(2.0)
    ex = BackwardStepper(c)
    ex.step_button.click()
    assert ex.message["text"] == (
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
    )
    assert "does not require grad" in ex.explanation and ex.internal_errors == []
    leaf = leafkit.tensor(3.0, requires_grad=True)
    ex = BackwardStepper(leaf)
    assert "is a leaf" in ex.explanation
    assert ex.step().name() == "torch::autograd::AccumulateGrad"
    assert ex.finished and ex.step() is None
    assert repr(leaf.grad) == "tensor(1.)"


def test_refuses_what_is_not_a_leafkit_tensor(real_torch):
    with pytest.raises(TypeError, match="leafkit graph.*cannot stop its engine"):
        BackwardStepper(real_torch.tensor(1.0, requires_grad=True))
    with pytest.raises(TypeError, match="leafkit graph"):
        BackwardStepper(3.0)
    with pytest.raises(TypeError, match="params must be a dict"):
        BackwardStepper(leafkit.tensor(1.0, requires_grad=True), params=["x"])


def test_python_api(no_dot, capsys):
    ex = BackwardStepper.example()
    nodes = []
    while not ex.finished:
        nodes.append(ex.step())
    assert [n.name() for n in nodes] == [n.name() for n in ex.nodes]
    assert [s.node for s in ex.history] == nodes
    assert ex.step() is None and ex.run() is None
    assert repr(ex.drawing).startswith("<PassDrawing: 6 nodes ran")
    bundle = ex.drawing._repr_mimebundle_()
    assert "image/svg+xml" in bundle or "text/plain" in bundle
    assert capsys.readouterr().out == "hook on x saw tensor([10., 18., 26.])\n"  # printed once, to the cell too


def test_table_keeps_the_latest_rows(no_dot):
    """Every step is a row of a table that scrolls in a box of its own (newest row in view); past
    MAX_ROWS steps, the oldest rows leave and the caption says so."""
    from leafkit.widgets.backward_stepper.widget import MAX_ROWS

    x = leafkit.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(15):
        y = y * 1.5
    ex = BackwardStepper(y.sum())
    ex.run()
    assert len(ex.rows) == 17
    assert ex.table_view.value.count("<tr") == 18 and "lk-table-scroll" in ex.table_view.value
    assert "scrolled away" not in ex.table_view.value
    y = x
    for _ in range(MAX_ROWS + 15):
        y = y * 1.01
    ex = BackwardStepper(y.sum())
    ex.run()
    n = len(ex.rows)
    assert n == MAX_ROWS + 17 and ex.table_view.value.count("<tr") == MAX_ROWS + 1
    assert re.search(rf"steps 1\u2013{n - MAX_ROWS} scrolled away", ex.table_view.value)


def test_big_gradients_are_written_by_their_shape(no_dot):
    """Sentences, the table and the edges write a big gradient as its shape; the rows keep its value."""
    W = leafkit.ones(3, 5, requires_grad=True)
    loss = (W * 2).sum()
    ex = BackwardStepper(loss)
    ex.run()
    assert "AccumulateGrad added a tensor of shape (3, 5) into W.grad" in ex.explanation
    assert ex.rows[-1]["grad"] == repr(W.grad)
    assert "shape (3, 5)" in ex.drawing.source and "tensor([[2." not in ex.table_view.value
    zh = BackwardStepper((W * 2).sum(), lang="zh")
    zh.run()
    assert "形状为 (3, 5) 的张量" in zh.explanation


def test_only_broadcast_inputs_are_summed_back(no_dot):
    """A smaller gradient is 'summed back' only where the op broadcast that input (mul, add, expand ...);
    stack and cat hand each input its own slice, which is no sum."""
    x = leafkit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    stacked = leafkit.stack([x[0] * x[1], x[1] + x[2], x[0] ** 2])
    joined = leafkit.cat([x[:1], x[1:]])
    row = leafkit.tensor([[1.0, 2.0]], requires_grad=True)
    wide = row.expand(3, 2)
    scale = leafkit.tensor(2.0, requires_grad=True)
    loss = stacked.sum() + (joined * scale).sum() + wide.sum()
    ex = BackwardStepper(loss)
    ex.run()
    summed = {(r["node"], e["to"]): e["summed_from"] for r in ex.rows for e in r["edges"] if e["summed_from"]}
    assert summed == {
        ("MulBackward0", "AccumulateGrad (scale)"): (3,),
        ("ExpandBackward0", "AccumulateGrad (row)"): (3, 2),
    }
    assert not any(
        e["summed_from"] for r in ex.rows if r["node"] in ("StackBackward0", "CatBackward0") for e in r["edges"]
    )
