"""Programs for the stepper's parity tests, and the oracle that checks a stepper against PyTorch.

The oracle itself belongs to the explorer (``leafkit.widgets.backward_stepper.oracle``: the
property test calls ``BackwardStepper.oracle``); this module re-exports it for the tests that
step through :data:`CASES`.  ``torch_pass(torch, source)`` runs a program's backward on real
PyTorch with a pre- and a post-hook on every node; ``check_stepper(ex, trace)`` compares a
stepper, at whatever step it shows, with that trace.
"""

from __future__ import annotations

from leafkit.widgets.backward_stepper.oracle import (  # noqa: F401 - re-exported for the tests
    build,
    check_stepper,
    named_tensors,
    statement_kwargs,
    torch_pass,
)

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
