"""``torch.autograd.grad(..., is_grads_batched=True)`` next to real PyTorch: values, shapes, unused inputs,
graph retention and the errors (PyTorch runs the rows with vmap; leafkit runs one pass per row)."""

from __future__ import annotations

import pytest

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def observe(lib, case):
    x = lib.tensor([0.5, 1.5, -2.0], requires_grad=True)
    y = lib.tensor([1.0, 2.0], requires_grad=True)
    try:
        res = case(lib, x, y)
    except Exception as e:  # noqa: BLE001 - the error is the observation
        return ("error", type(e).__name__, str(e)[:120])
    return [None if t is None else (t.tolist(), tuple(t.shape), t.requires_grad) for t in res]


def grad(lib, *args, **kw):
    return lib.autograd.grad(*args, is_grads_batched=True, **kw)


def twice(lib, x, keep):
    z = x * x
    grad(lib, z, x, lib.eye(3), retain_graph=keep)
    return grad(lib, z, x, lib.eye(3))


CASES = {
    "jacobian": lambda lib, x, y: grad(lib, x * x, x, lib.eye(3)),
    "scalar_output": lambda lib, x, y: grad(lib, (x * x).sum(), x, lib.tensor([1.0, 2.0])),
    "two_outputs": lambda lib, x, y: grad(
        lib, [x * x, (x * y[0]).sum()], [x, y], [lib.eye(3), lib.tensor([1.0, 2.0, 3.0])]
    ),
    "create_graph": lambda lib, x, y: grad(lib, x**3, x, lib.eye(3), create_graph=True),
    "hessian": lambda lib, x, y: grad(lib, lib.autograd.grad((x**3).sum(), x, create_graph=True)[0], x, lib.eye(3)),
    "unused": lambda lib, x, y: grad(lib, x * x, [x, y], lib.eye(3), allow_unused=True),
    "unused_error": lambda lib, x, y: grad(lib, x * x, [x, y], lib.eye(3)),
    "materialize": lambda lib, x, y: grad(lib, x * x, [x, y], lib.eye(3), materialize_grads=True),
    "freed": lambda lib, x, y: twice(lib, x, None),
    "retained": lambda lib, x, y: twice(lib, x, True),
    "missing_scalar": lambda lib, x, y: grad(lib, (x * x).sum(), x),
    "missing_vector": lambda lib, x, y: grad(lib, x * x, x),
    "unbatched": lambda lib, x, y: grad(lib, x * x, x, lib.ones(3)),
    "wrong_shape": lambda lib, x, y: grad(lib, x * x, x, lib.ones(2, 4)),
    "none_entry": lambda lib, x, y: grad(lib, [x * x, x.sum()], x, [lib.eye(3), None]),
    "sizes_differ": lambda lib, x, y: grad(lib, [x * x, x * 2], x, [lib.eye(3), lib.ones(2, 3)]),
    "empty_batch": lambda lib, x, y: grad(lib, x * x, x, lib.ones(0, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_is_grads_batched(name):
    got, want = observe(leafkit, CASES[name]), observe(torch, CASES[name])
    if isinstance(got, tuple) or isinstance(want, tuple):
        assert got[:2] == want[:2] and got[2][:60] == want[2][:60]
    else:
        assert got == want
