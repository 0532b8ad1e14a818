"""optim: Optimizer, SGD, Adam — leaves only, in-place updates, skipping None grads, PyTorch's errors and formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

import leafkit as torch
import leafkit.nn as nn


def _param(values, device="cpu"):
    return nn.Parameter(torch.tensor(values, device=device))


# -- construction errors ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make,exc,msg",
    [
        (lambda p: torch.optim.SGD([p * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
        (
            lambda p: torch.optim.SGD(p, lr=0.1),
            TypeError,
            "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
            "torch.FloatTensor",
        ),
        (lambda p: torch.optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
        (lambda p: torch.optim.SGD([p], lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda p: torch.optim.SGD([p], lr=0.1, momentum=-1), ValueError, "Invalid momentum value: -1"),
        (lambda p: torch.optim.SGD([p], lr=0.1, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (
            lambda p: torch.optim.SGD([p], lr=0.1, nesterov=True),
            ValueError,
            "Nesterov momentum requires a momentum and zero dampening",
        ),
        (
            lambda p: torch.optim.SGD([1.0], lr=0.1),
            TypeError,
            "optimizer can only optimize Tensors, but one of the params is float",
        ),
        (
            lambda p: torch.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
            ValueError,
            "some parameters appear in more than one parameter group",
        ),
        (lambda p: torch.optim.Adam([p], lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda p: torch.optim.Adam([p], eps=-1), ValueError, "Invalid epsilon value: -1"),
        (lambda p: torch.optim.Adam([p], betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
        (lambda p: torch.optim.Adam([p], betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
        (lambda p: torch.optim.Adam([p], weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    ],
)
def test_construction_errors(make, exc, msg):
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(exc) as e:
        make(p)
    assert str(e.value) == msg


def test_non_leaf_that_retains_grad_is_accepted():
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    torch.optim.SGD([y], lr=0.1)


def test_duplicate_parameter_warns():
    p = _param([1.0])
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate parameters"):
        torch.optim.SGD([p, p], lr=0.1)


# -- behaviour ------------------------------------------------------------------------------------------
def test_param_groups_and_defaults():
    a, b = _param([1.0]), _param([2.0])
    opt = torch.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"][0] is b
    assert opt.defaults["momentum"] == 0.9 and opt.param_groups[1]["momentum"] == 0.9
    assert set(opt.param_groups[0]) == {
        "params",
        "lr",
        "momentum",
        "dampening",
        "weight_decay",
        "nesterov",
        "maximize",
        "foreach",
        "differentiable",
        "fused",
    }
    assert torch.optim.SGD([a]).param_groups[0]["lr"] == 0.001  # PyTorch 2.x default


def test_sgd_step_is_in_place_and_params_stay_leaves():
    p = _param([1.0, -2.0])
    ptr, version = p.data_ptr(), p._version
    opt = torch.optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert p.tolist() == pytest.approx([0.8, -1.6])
    assert p.data_ptr() == ptr and p._version == version + 1
    assert p.is_leaf and p.requires_grad and p.grad_fn is None and type(p) is nn.Parameter


def test_step_skips_params_without_grad():
    a, b = _param([1.0]), _param([2.0])
    opt = torch.optim.Adam([a, b], lr=0.1)
    (a * 3).sum().backward()
    opt.step()
    assert b.tolist() == [2.0] and b not in opt.state
    assert a.tolist() != [1.0] and set(opt.state[a]) == {"step", "exp_avg", "exp_avg_sq"}
    assert float(opt.state[a]["step"]) == 1.0


def test_zero_grad():
    p = _param([1.0, 2.0])
    opt = torch.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # nothing to do
    assert p.tolist() == [1.0, 2.0]


def test_step_after_saving_for_backward_is_caught():
    """The step bumps the version: a graph that saved the old weights refuses to backward, as in PyTorch."""
    p = _param([1.0, 2.0])
    opt = torch.optim.SGD([p], lr=0.1)
    loss = (p * p).sum()
    p.grad = torch.ones(2)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_closure_runs_with_grad_enabled():
    p = _param([3.0])
    opt = torch.optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with torch.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0 and p.tolist() == pytest.approx([2.4])


def _sgd_reference(w, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    w = np.array(w, dtype=np.float64)
    buf = None
    for g in grads:
        g = -np.array(g, dtype=np.float64) if maximize else np.array(g, dtype=np.float64)
        g = g + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
    return w


def _adam_reference(w, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False):
    w = np.array(w, dtype=np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    vmax = np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = np.array(g, dtype=np.float64) + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        vh = vmax if amsgrad else v
        w = w - lr / (1 - betas[0] ** t) * m / (np.sqrt(vh) / math.sqrt(1 - betas[1] ** t) + eps)
    return w


GRADS = [[0.5, -1.0, 2.0], [0.25, 0.5, -1.0], [1.0, 1.0, 1.0], [-0.5, 0.0, 3.0]]


@pytest.mark.parametrize(
    "kw",
    [
        dict(lr=0.1),
        dict(lr=0.1, momentum=0.9),
        dict(lr=0.05, momentum=0.9, nesterov=True),
        dict(lr=0.1, momentum=0.5, dampening=0.3, weight_decay=0.01),
        dict(lr=0.1, maximize=True),
    ],
)
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_sgd_formula(kw, device):
    p = nn.Parameter(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=device))
    opt = torch.optim.SGD([p], **kw)
    for g in GRADS:
        p.grad = torch.tensor(g, dtype=torch.float64, device=device)
        opt.step()
    np.testing.assert_allclose(p.detach().cpu().numpy(), _sgd_reference([1.0, 2.0, 3.0], GRADS, **kw), rtol=1e-12)
    if kw.get("momentum"):
        assert opt.state[p]["momentum_buffer"].device.type == device


@pytest.mark.parametrize(
    "kw",
    [
        dict(lr=0.01),
        dict(lr=0.1, betas=(0.8, 0.99), eps=1e-6),
        dict(lr=0.01, weight_decay=0.1),
        dict(lr=0.01, amsgrad=True),
    ],
)
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_adam_formula(kw, device):
    p = nn.Parameter(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=device))
    opt = torch.optim.Adam([p], **kw)
    for g in GRADS:
        p.grad = torch.tensor(g, dtype=torch.float64, device=device)
        opt.step()
    np.testing.assert_allclose(p.detach().cpu().numpy(), _adam_reference([1.0, 2.0, 3.0], GRADS, **kw), rtol=1e-12)
    assert opt.state[p]["exp_avg"].device.type == device
    assert p.is_leaf and p.device.type == device


def test_adamw_decoupled_weight_decay():
    p = nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    opt = torch.optim.Adam([p], lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)
    p.grad = torch.tensor([1.0], dtype=torch.float64)
    opt.step()
    # p * (1 - lr * wd), then the Adam step of a unit gradient (m_hat / sqrt(v_hat) == 1)
    assert p.item() == pytest.approx(1.0 * (1 - 0.05) - 0.1 * 1 / (1 + 1e-8))


def test_repr_matches_pytorch_layout():
    opt = torch.optim.SGD([_param([1.0])], lr=0.1, momentum=0.9)
    assert repr(opt) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
        "    fused: None\n    lr: 0.1\n    maximize: False\n    momentum: 0.9\n    nesterov: False\n"
        "    weight_decay: 0\n)"
    )
    adam = torch.optim.Adam([_param([1.0])])
    assert repr(adam).splitlines()[:4] == [
        "Adam (",
        "Parameter Group 0",
        "    amsgrad: False",
        "    betas: (0.9, 0.999)",
    ]


def test_state_dict_round_trip():
    p = _param([1.0, 2.0])
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = torch.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"] and sd["param_groups"][0]["params"] == [0]
    q = _param([1.0, 2.0])
    opt2 = torch.optim.SGD([q], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["params"][0] is q
    assert opt2.state[q]["momentum_buffer"].tolist() == [1.0, 1.0]
    # as in PyTorch, a state tensor that needs no cast is shared with the state dict (torch.load gives fresh ones)
    assert opt2.state[q]["momentum_buffer"] is opt.state[p]["momentum_buffer"]
    assert opt2.state[q] is not opt.state[p]


def test_lr_change_through_param_groups():
    p = _param([1.0])
    opt = torch.optim.SGD([p], lr=0.1)
    opt.param_groups[0]["lr"] = 1.0
    p.grad = torch.ones(1)
    opt.step()
    assert p.tolist() == [0.0]


def test_cuda_copy_of_a_weight_never_learns():
    """The articles' trap: ``.cuda()`` after ``requires_grad=True`` gives a non-leaf the optimizer refuses."""
    w = torch.randn(3, requires_grad=True).cuda()
    assert not w.is_leaf and w.grad_fn.name() == "ToCopyBackward0"
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        torch.optim.SGD([w], lr=0.1)
    good = torch.randn(3, device="cuda", requires_grad=True)
    torch.optim.SGD([good], lr=0.1)


@pytest.mark.parametrize("cls", [torch.optim.SGD, torch.optim.Adam])
def test_docstring_promises_float32_rounding_not_an_exact_match(cls):
    # PyTorch fuses p.add_(g, alpha=-lr) into one multiply-add (rounded once); NumPy has no fma,
    # so the last bit can differ and the docstring must not promise "PyTorch's exact update".
    doc = cls.__doc__
    assert "exact" not in doc
    assert "float32 rounding" in doc and "fused multiply-add" in doc.replace("\n    ", " ")
