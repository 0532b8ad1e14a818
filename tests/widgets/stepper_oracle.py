"""Real PyTorch as the oracle of BackwardStepper: what each node of a backward pass received and sent.

``torch_pass(source)`` runs a program (``torch`` is real PyTorch) that defines ``loss`` (and
optionally ``gradient`` and ``retain``), registers a node pre-hook and a node post-hook on every
node of ``loss``'s graph, runs ``loss.backward(...)`` and returns, in the order PyTorch ran them:
each node's position in the graph (the same depth-first walk of ``next_functions`` that the
stepper draws, so positions name the same node in both graphs), what arrived for its outputs
(the pre-hook's ``grad_outputs``; for ``AccumulateGrad``, the sum of the gradients sent to it,
which is what arrives before the leaf's own hooks), and what it sent along each edge that
leads somewhere (the post-hook's ``grad_inputs``).

``check_stepper(ex, trace)`` compares a stepper, at whatever step it shows, with that trace.
"""

from __future__ import annotations

import contextlib
import io
import warnings

from leafkit.viz.dot import walk

#: Programs for the parity tests: ``loss`` is where backward starts; ``gradient`` and ``retain``
#: are passed to it when defined.  Values are fixed (no random numbers: PyTorch's differ).
CASES = {
    "chain": """
x = torch.tensor([0.5, -1.0], requires_grad=True)
y = x ** 2
z = y.exp()
loss = (z * 3.0).sum()
""",
    "diamond": """
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
a = x * 2.0
b = x + 1.0
loss = (a * b).sum()
""",
    "broadcasting": """
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
bias = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
col = torch.tensor([[1.0], [2.0]], requires_grad=True)
s = torch.tensor(3.0, requires_grad=True)
loss = ((x + bias) * col * s).mean()
""",
    "multiple_leaves": """
W = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]], requires_grad=True)
v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([0.1, -0.2], requires_grad=True)
h = (W @ v + b).relu()
loss = (h ** 2).sum()
""",
    "hooks": """
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3.0
y_handle = y.register_hook(lambda grad: grad * 10)
x_handle = x.register_hook(lambda grad: print("x saw", grad))
z = y.sin()
z.retain_grad()
loss = (z * y).sum()
""",
    "retain_grad": """
x = torch.tensor([2.0], requires_grad=True)
y = x ** 2
y.retain_grad()
z = y * y + y
z.retain_grad()
t = z.sum()
t.retain_grad()
loss = t * 2.0
""",
    "leaf_hook_changes_grad": """
x = torch.tensor([1.0, 2.0], requires_grad=True)
handle = x.register_hook(lambda grad: grad * 10)
loss = (x * 3.0).sum()
""",
    "non_scalar": """
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * torch.tensor([1.0, 2.0, 3.0]) + x ** 2
loss = y
gradient = torch.tensor([1.0, 0.5, 2.0])
""",
    "second_pass_accumulates": """
w = torch.tensor([1.5, -0.5], requires_grad=True)
loss = (w * w).sum()
loss.backward(retain_graph=True)
retain = True
""",
    "constants_and_unbind": """
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
c = torch.tensor([2.0, 2.0, 2.0])
first, second, third = (x * c).unbind()
loss = first * 2.0 + second
""",
    "cat_of_three_leaves": """
a = torch.tensor([1.0], requires_grad=True)
b = torch.tensor([2.0], requires_grad=True)
c = torch.tensor([3.0], requires_grad=True)
loss = (torch.cat([a, b, c]) * torch.tensor([1.0, 2.0, 3.0])).sum()
""",
    "mlp": """
lin1 = torch.nn.Linear(3, 4)
lin2 = torch.nn.Linear(4, 1)
with torch.no_grad():
    lin1.weight.copy_(torch.arange(12.0).reshape(4, 3) / 10 - 0.5)
    lin1.bias.copy_(torch.tensor([0.1, -0.1, 0.2, 0.0]))
    lin2.weight.copy_(torch.tensor([[1.0, -1.0, 0.5, 2.0]]))
    lin2.bias.fill_(0.3)
inputs = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]])
target = torch.tensor([[1.0], [0.0]])
loss = torch.nn.functional.mse_loss(lin2(lin1(inputs).tanh()), target)
""",
}


def rep(t):
    return None if t is None else repr(t.detach())


def build(module, source: str) -> dict:
    ns = {"torch": module}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(source, ns)  # noqa: S102 - the test's own programs
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
    return {"gradient": ns.get("gradient"), "retain_graph": bool(ns.get("retain", False))}


def _grad(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


def torch_pass(torch, source: str) -> dict:
    """Run the program's backward on PyTorch with hooks on every node (see the module docstring)."""
    ns = build(torch, source)
    loss = ns["loss"]
    order, children = walk([loss.grad_fn])
    pos = {id(fn): k for k, fn in enumerate(order)}
    events = []

    def pre(k, fn):
        def hook(grad_outputs):
            events.append({"pos": k, "name": fn.name(), "grad_in": [rep(g) for g in grad_outputs]})

        return hook

    def post(k, fn):
        def hook(grad_inputs, grad_outputs):
            sent = []
            for (nxt, _nr), g in zip(fn.next_functions, grad_inputs):
                if nxt is None:
                    continue
                sent.append(rep(g))
            events[-1]["sent"] = sent

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
    initial = {n: rep(_grad(t)) for n, t in tracked.items()}
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
        "final": {n: rep(_grad(t)) for n, t in tracked.items()},
        "set_at": set_at,
        "order": order,
    }


def check_stepper(ex, trace: dict) -> None:
    """The stepper shows, step by step, what PyTorch's engine did (node, gradients in and out, .grad fields)."""
    positions = {id(fn): k for k, fn in enumerate(ex.graph_nodes)}
    shown = ex.records[: ex.cursor]
    events = trace["events"][: ex.cursor]
    assert len(shown) == len(events), (len(shown), len(events))
    assert [positions[id(r.node)] for r in shown] == [e["pos"] for e in events], "node order"
    for row, e in zip(ex.rows, events):
        assert row["node"] == e["name"], (row["step"], row["node"], e["name"])
        assert row["grad_in"] == e["grad_in"], (row["step"], row["node"], row["grad_in"], e["grad_in"])
        assert [x["grad"] for x in row["edges"]] == e["sent"], (row["step"], row["node"], row["edges"], e["sent"])
    for name, value in ex.grads.items():
        want = trace["final"][name] if trace["set_at"][name] < ex.cursor else trace["initial"][name]
        assert value == want, (name, ex.cursor, value, want)
    assert set(ex.grads) == set(trace["final"]), (set(ex.grads), set(trace["final"]))
    if ex.finished:
        assert len(ex.records) == len(trace["events"])
        assert "".join(r.printed for r in ex.records) == trace["printed"]
