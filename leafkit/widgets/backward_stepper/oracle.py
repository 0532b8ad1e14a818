"""Real PyTorch as the oracle of the stepper: what each node of a backward pass received and sent.

:func:`torch_pass` runs a program (``torch`` is the module it is given: real PyTorch in the tests)
that defines ``loss`` (and optionally ``gradient`` and ``retain``), registers a node pre-hook and a
node post-hook on every node of ``loss``'s graph, runs ``loss.backward(...)`` and returns, in the
order PyTorch ran them: each node's position in the graph (the same depth-first walk of
``next_functions`` that the stepper draws, so positions name the same node in both graphs), what
arrived for its outputs (the pre-hook's ``grad_outputs``; for ``AccumulateGrad``, what arrives
before the leaf's own hooks), and what it sent along each edge that leads somewhere (the
post-hook's ``grad_inputs``).  :func:`check_stepper` compares a stepper, at whatever step it shows,
with that trace.  Nothing here imports PyTorch.
"""

from __future__ import annotations

import contextlib
import io
import warnings

from leafkit.viz.dot import walk

from .._oracle import expect

__all__ = ["torch_pass", "check_stepper", "build", "named_tensors", "statement_kwargs"]


def _rep(t):
    return None if t is None else repr(t.detach())


def build(module, source: str) -> dict:
    """The namespace of ``source`` run with ``torch`` bound to ``module``."""
    ns = {"torch": module}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(source, ns)  # noqa: S102 - the example's own program
    return ns


def named_tensors(module, ns) -> dict:
    """``{name: tensor}`` of the program's tensors, and of its modules' parameters (``lin1.weight``)."""
    out = {}
    for name, v in ns.items():
        if name.startswith("_"):
            continue
        if isinstance(v, module.Tensor):
            out.setdefault(name, v)
        elif isinstance(v, module.nn.Module):
            for pname, p in v.named_parameters():
                out.setdefault(f"{name}.{pname}", p)
    return out


def statement_kwargs(ns) -> dict:
    """``loss.backward``'s arguments: the program's ``gradient`` and ``retain`` (``retain_graph``)."""
    return {"gradient": ns.get("gradient"), "retain_graph": bool(ns.get("retain", False))}


def _grad(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


def torch_pass(torch, source: str) -> dict:
    """Run the program's backward on ``torch`` with hooks on every node (see the module docstring)."""
    ns = build(torch, source)
    loss = ns["loss"]
    order, _ = walk([loss.grad_fn])
    pos = {id(fn): k for k, fn in enumerate(order)}
    events = []

    def pre(k, fn):
        def hook(grad_outputs):
            events.append({"pos": k, "name": fn.name(), "grad_in": [_rep(g) for g in grad_outputs]})

        return hook

    def post(k, fn):
        def hook(grad_inputs, grad_outputs):
            events[-1]["sent"] = [_rep(g) for (nxt, _nr), g in zip(fn.next_functions, grad_inputs) if nxt is not None]

        return hook

    handles = []
    for k, fn in enumerate(order):
        handles.append(fn.register_prehook(pre(k, fn)))
        handles.append(fn.register_hook(post(k, fn)))
    names = named_tensors(torch, ns)
    graph_leaves = {id(fn.variable) for fn in order if hasattr(fn, "variable")}
    tracked = {
        n: t
        for n, t in names.items()
        if id(t) in graph_leaves or (t.grad_fn is not None and id(t.grad_fn) in pos and t.retains_grad)
    }
    initial = {n: _rep(_grad(t)) for n, t in tracked.items()}
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss.backward(**statement_kwargs(ns))
    for h in handles:
        h.remove()
    step_of = {e["pos"]: i for i, e in enumerate(events)}
    for e in events:  # AccumulateGrad's grad_in is what its pre-hook saw: after the leaf's own hooks
        e.setdefault("sent", [])
    set_at = {}
    for n, t in tracked.items():
        fn = t.grad_fn
        if fn is None:
            acc = next(f for f in order if hasattr(f, "variable") and f.variable is t)
            set_at[n] = step_of[pos[id(acc)]]
        else:
            set_at[n] = step_of[pos[id(fn)]]
    return {
        "events": events,
        "printed": out.getvalue(),
        "initial": initial,
        "final": {n: _rep(_grad(t)) for n, t in tracked.items()},
        "set_at": set_at,
        "order": order,
    }


def check_stepper(ex, trace: dict) -> None:
    """The stepper ``ex`` shows, step by step, what PyTorch's engine did (node, gradients in and out, .grad)."""
    positions = {id(fn): k for k, fn in enumerate(ex.graph_nodes)}
    shown = ex.records[: ex.cursor]
    events = trace["events"][: ex.cursor]
    expect(len(shown) == len(events), (len(shown), len(events)))
    expect([positions[id(r.node)] for r in shown] == [e["pos"] for e in events], "node order")
    for row, e in zip(ex.rows, events):
        expect(row["node"] == e["name"], (row["step"], row["node"], e["name"]))
        expect(row["grad_in"] == e["grad_in"], (row["step"], row["node"], row["grad_in"], e["grad_in"]))
        sent = [x["grad"] for x in row["edges"]]
        expect(sent == e["sent"], (row["step"], row["node"], row["edges"], e["sent"]))
    for name, value in ex.grads.items():
        want = trace["final"][name] if trace["set_at"][name] < ex.cursor else trace["initial"][name]
        expect(value == want, (name, ex.cursor, value, want))
    expect(set(ex.grads) == set(trace["final"]), (set(ex.grads), set(trace["final"])))
    if ex.finished:
        expect(len(ex.records) == len(trace["events"]), (len(ex.records), len(trace["events"])))
        printed = "".join(r.printed for r in ex.records)
        expect(printed == trace["printed"], (printed, trace["printed"]))
