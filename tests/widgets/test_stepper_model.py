"""The stepper's model (``leafkit.widgets.backward_stepper.model``) on its own, without any widget.

``BackwardPass`` runs ``loss.backward()`` one node at a time, records every step and replays the
record for Back and Reset; the sentences and the drawing are made from it.  None of that needs
ipywidgets, and these tests never build a ``BackwardStepper``.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from stepper_oracle import CASES, build, named_tensors, statement_kwargs

import leafkit
from leafkit.widgets.backward_stepper.drawing import draw_pass
from leafkit.widgets.backward_stepper.model import START, BackwardPass, names_in
from leafkit.widgets.backward_stepper.sentences import Sentences

ROOT = Path(__file__).resolve().parents[2]


def passes(source: str, **kw):
    """(BackwardPass, namespace) for a program of stepper_oracle.CASES, run in leafkit."""
    ns = build(leafkit, source)
    args = statement_kwargs(ns)
    args.update(kw)
    names = {id(t): (n, t) for n, t in named_tensors(leafkit, ns).items()}
    return BackwardPass(ns["loss"], args["gradient"], args["retain_graph"], names), ns


def grads(ns) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {n: None if t.grad is None else repr(t.grad) for n, t in named_tensors(leafkit, ns).items()}


def test_the_model_imports_no_ipywidgets():
    """The model, the sentences and the drawing import and run with ipywidgets made unimportable."""
    code = (
        "import sys\n"
        "sys.modules['ipywidgets'] = None  # any import of it raises ImportError\n"
        "import leafkit\n"
        "from leafkit.widgets.backward_stepper.model import BackwardPass\n"
        "from leafkit.widgets.backward_stepper.sentences import Sentences\n"
        "from leafkit.widgets.backward_stepper.drawing import draw_pass\n"
        "x = leafkit.tensor([1.0, 2.0], requires_grad=True)\n"
        "loss = (x * x).sum()\n"
        "p = BackwardPass(loss)\n"
        "assert p.run_all() is None and p.finished and x.grad.tolist() == [2.0, 4.0]\n"
        "assert '`x.grad` = tensor([2., 4.])' in Sentences(p, 'en').explain()\n"
        "assert 'MulBackward0' in draw_pass(p, Sentences(p, 'zh')).source\n"
        "assert p.back() and x.grad is None\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_all_leaves_what_backward_leaves(case, capsys):
    ref_ns = build(leafkit, CASES[case])
    ref_ns["loss"].backward(**statement_kwargs(ref_ns))
    p, ns = passes(CASES[case])
    assert p.run_all() is None and p.finished and p.error is None
    assert grads(ns) == grads(ref_ns)
    assert [r.index for r in p.records] == list(range(1, len(p.records) + 1))
    assert {id(r.node) for r in p.records} == {id(fn) for fn in p.order}


@pytest.mark.parametrize("case", ["diamond", "broadcasting", "hooks", "second_pass_accumulates"])
def test_back_and_reset_replay_the_record(case, capsys):
    p, ns = passes(CASES[case])
    before = grads(ns)
    seen = [grads(ns)]
    while not p.finished:
        p.forward()
        seen.append(grads(ns))
    printed = capsys.readouterr().out
    for k in range(len(p.records) - 1, -1, -1):
        assert p.back() and p.cursor == k
        assert grads(ns) == seen[k]
    assert not p.back() and grads(ns) == before
    assert p.run_all() is None and grads(ns) == seen[-1]
    assert p.reset() and grads(ns) == before and not p.reset()
    assert capsys.readouterr().out == "" and "".join(r.printed for r in p.records) == printed  # hooks ran once


def test_next_node_is_the_one_that_runs(capsys):
    p, _ = passes(CASES["mlp"])
    while not p.finished:
        expected, n_ready = p.next_node()
        rec, err = p.forward()
        assert err is None and rec.node is expected and n_ready >= 1
    assert p.next_node() == (None, 0)


def test_contributions_add_up_to_what_arrived():
    p, _ = passes(CASES["diamond"])
    p.run_all()
    root = p.records[0]
    assert [src for _, src, _ in root.contributions] == [START]
    for rec in p.records:
        if len(rec.contributions) > 1:
            total = sum(g for _, _, g in rec.contributions)
            assert leafkit.allclose(total, rec.grad_outputs[0])


def test_rows_are_the_same_in_every_language():
    p, _ = passes(CASES["hooks"])
    p.run_all()
    rows = [p.row(r) for r in p.records]
    assert rows[0]["node"] == "SumBackward0" and rows[0]["label"] == "SumBackward0 (loss)"
    en, zh = Sentences(p, "en").explain(), Sentences(p, "zh").explain()
    assert en.startswith("Step") and zh.startswith("第") and en != zh
    assert draw_pass(p, Sentences(p, "en")).state == draw_pass(p, Sentences(p, "zh")).state


def test_errors_are_kept_not_raised():
    x = leafkit.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    p = BackwardPass(y, names=names_in({"x": x, "y": y}))
    rec, err = p.forward()
    assert rec is None and isinstance(err, RuntimeError) and "implicitly created only for scalar" in str(err)
    assert p.finished and p.error is err and p.forward() == (None, err)
    assert "gradient=torch.ones_like(y)" in Sentences(p, "en").explain()


def test_names_and_labels():
    lin = leafkit.nn.Linear(2, 1)
    inputs = leafkit.ones(3, 2)
    loss = lin(inputs).sum()
    p = BackwardPass(loss, names=names_in({"lin": lin, "inputs": inputs, "loss": loss}))
    assert p.loss_name == "loss" and p.statement == "loss.backward()"
    labels = [p.label(fn) for fn in p.order]
    assert "AccumulateGrad (lin.weight)" in labels and "AccumulateGrad (lin.bias)" in labels
    assert p.name_of(inputs) is None  # not in the graph: its name is not kept
