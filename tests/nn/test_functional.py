"""nn.functional: node names, graph shapes, numerics, stability and errors (PyTorch 2.13's, recorded here).

The same checks run against real PyTorch in ``test_nn_parity.py``.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import leafkit as torch
import leafkit.nn.functional as F


def names(fn):
    """The node names of ``fn.next_functions`` (None for a missing edge), with AccumulateGrad shortened."""
    return [None if n is None else ("AccumulateGrad" if n.name().endswith("AccumulateGrad") else n.name())
            for n, _ in fn.next_functions]


def tree(t):
    """A nested (name, children) description of the graph under ``t``."""
    def walk(fn):
        name = "AccumulateGrad" if fn.name().endswith("AccumulateGrad") else fn.name()
        return (name, tuple(walk(n) for n, _ in fn.next_functions if n is not None))
    return walk(t.grad_fn)


def test_activation_nodes():
    x = torch.randn(3, 4, requires_grad=True)
    assert F.relu(x).grad_fn.name() == "ReluBackward0"
    assert F.sigmoid(x).grad_fn.name() == "SigmoidBackward0"
    assert F.tanh(x).grad_fn.name() == "TanhBackward0"
    assert F.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert F.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"


def test_relu_inplace():
    x = torch.randn(3, requires_grad=True)
    y = x * 1
    assert F.relu(y, inplace=True) is y and y.grad_fn.name() == "ReluBackward0"
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        F.relu(x, inplace=True)


def test_linear_graph_2d():
    x = torch.randn(4, 3)
    W = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(2, requires_grad=True)
    y = F.linear(x, W, b)
    assert y.grad_fn.name() == "AddmmBackward0"
    assert names(y.grad_fn) == ["AccumulateGrad", None, "TBackward0"]
    assert names(F.linear(x, W).grad_fn) == [None, "TBackward0"]
    assert F.linear(x, W).grad_fn.name() == "MmBackward0"
    np.testing.assert_allclose(y.detach().numpy(), x.numpy() @ W.detach().numpy().T + b.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape,bias,want", [
    ((3,), True, ("ViewBackward0", (("AddmmBackward0", (("AccumulateGrad", ()), ("ViewBackward0", (("AccumulateGrad", ()),)),
                                                          ("TBackward0", (("AccumulateGrad", ()),)))),))),
    ((3,), False, ("SqueezeBackward4", (("MmBackward0", (("UnsqueezeBackward0", (("AccumulateGrad", ()),)),
                                                          ("TBackward0", (("AccumulateGrad", ()),)))),))),
    ((5, 4, 3), True, ("ViewBackward0", (("AddmmBackward0", (("AccumulateGrad", ()),
                                                               ("ViewBackward0", (("AccumulateGrad", ()),)),
                                                               ("TBackward0", (("AccumulateGrad", ()),)))),))),
    ((5, 4, 3), False, ("UnsafeViewBackward0", (("MmBackward0", (("ViewBackward0", (("AccumulateGrad", ()),)),
                                                                  ("TBackward0", (("AccumulateGrad", ()),)))),))),
])
def test_linear_graph_other_ranks(shape, bias, want):
    x = torch.randn(*shape, requires_grad=True)
    W = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(2, requires_grad=True) if bias else None
    y = F.linear(x, W, b)
    assert tree(y) == want
    assert y.shape == torch.Size([*shape[:-1], 2])
    y.sum().backward()
    assert x.grad.shape == x.shape and W.grad.shape == W.shape


def test_linear_errors():
    x = torch.randn(4, 3)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 4x2\)"):
        F.linear(x, torch.randn(2, 4))
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(2\) must match the existing size \(3\) "
                                           r"at non-singleton dimension 1.  Target sizes: \[4, 2\].  Tensor sizes: \[3\]"):
        F.linear(x, torch.randn(2, 3), torch.randn(3))
    with pytest.raises(RuntimeError, match="both arguments to linear need to be at least 1D, but they are 0D and 2D"):
        F.linear(torch.tensor(1.0), torch.randn(2, 3))


def test_cross_entropy_graph_and_value():
    x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]], requires_grad=True)
    t = torch.tensor([2, 0])
    loss = F.cross_entropy(x, t)
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert names(loss.grad_fn) == ["LogSoftmaxBackward0"]
    assert loss.shape == torch.Size([]) and loss.dtype == torch.float32
    a = x.detach().numpy().astype(np.float64)
    lse = np.log(np.exp(a).sum(1))
    want = np.mean(lse - a[[0, 1], [2, 0]])
    assert float(loss) == pytest.approx(want, rel=1e-6)
    loss.backward()
    p = np.exp(a) / np.exp(a).sum(1, keepdims=True)
    p[[0, 1], [2, 0]] -= 1
    np.testing.assert_allclose(x.grad.numpy(), p / 2, rtol=1e-5, atol=1e-7)


def test_cross_entropy_is_stable_for_huge_logits():
    x = torch.tensor([[1e4, 0.0, -1e4]], requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor([2]))
    loss.backward()
    assert float(loss) == 20000.0
    assert x.grad.tolist() == [[1.0, 0.0, -1.0]]
    y = torch.tensor([[1e4, 1e4]], requires_grad=True)
    loss = F.cross_entropy(y, torch.tensor([0]))
    loss.backward()
    assert float(loss) == pytest.approx(np.log(2)) and np.isfinite(y.grad.numpy()).all()


def test_nll_loss_reductions_weight_ignore_index():
    x = torch.randn(4, 3, requires_grad=True)
    lp = x.log_softmax(1)
    t = torch.tensor([0, 1, 2, 1])
    a = lp.detach().numpy()
    picked = a[np.arange(4), t.numpy()]
    assert F.nll_loss(lp, t, reduction="none").tolist() == pytest.approx((-picked).tolist())
    assert float(F.nll_loss(lp, t, reduction="sum")) == pytest.approx(-picked.sum(), rel=1e-6)
    w = torch.tensor([1.0, 2.0, 3.0])
    wt = np.array([1.0, 2.0, 3.0])[t.numpy()]
    assert float(F.nll_loss(lp, t, weight=w)) == pytest.approx(-(picked * wt).sum() / wt.sum(), rel=1e-6)
    t2 = torch.tensor([0, -100, 2, -100])
    assert float(F.nll_loss(lp, t2)) == pytest.approx(-(picked[0] + picked[2]) / 2, rel=1e-6)
    assert np.isnan(float(F.nll_loss(lp, torch.tensor([-100] * 4))))
    loss = F.nll_loss(lp, t2, weight=w)
    loss.backward()
    assert x.grad.shape == x.shape and np.isfinite(x.grad.numpy()).all()


def test_nll_loss_unbatched():
    x = torch.randn(3, requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor(1))
    assert loss.shape == torch.Size([])
    loss.backward()
    assert x.grad.shape == torch.Size([3])


@pytest.mark.parametrize("call,exc,msg", [
    (lambda x: F.nll_loss(x, torch.tensor([0.0, 1, 2, 0])), RuntimeError,
     "expected target dtype to be Long or Byte, but got Float"),
    (lambda x: F.cross_entropy(x, torch.tensor([0, 1, 2, 0]).int()), RuntimeError,
     "expected target dtype to be Long or Byte, but got Int"),
    (lambda x: F.nll_loss(x, torch.tensor([0, 1, 5, 0])), IndexError, "Target 5 is out of bounds."),
    (lambda x: F.cross_entropy(x, torch.tensor([0, 1, -3, 0])), IndexError, "Target -3 is out of bounds."),
    (lambda x: F.nll_loss(x, torch.tensor([0, 1, 2])), ValueError,
     r"Expected input batch_size \(4\) to match target batch_size \(3\)."),
    (lambda x: F.cross_entropy(x, torch.tensor([0, 1, 2, 0]), reduction="foo"), ValueError,
     "foo is not a valid value for reduction"),
    (lambda x: F.mse_loss(x, torch.randn(5, 3)), RuntimeError,
     r"The size of tensor a \(4\) must match the size of tensor b \(5\) at non-singleton dimension 0"),
])
def test_loss_errors(call, exc, msg):
    x = torch.randn(4, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=msg):
            call(x)


def test_mse_loss():
    x = torch.randn(4, 3, requires_grad=True)
    y = torch.randn(4, 3, requires_grad=True)
    loss = F.mse_loss(x, y)
    assert loss.grad_fn.name() == "MseLossBackward0"
    assert names(loss.grad_fn) == ["AccumulateGrad", "AccumulateGrad"]
    d = x.detach().numpy() - y.detach().numpy()
    assert float(loss) == pytest.approx((d ** 2).mean(), rel=1e-6)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * d / d.size, rtol=1e-5)
    np.testing.assert_allclose(y.grad.numpy(), -2 * d / d.size, rtol=1e-5)
    assert float(F.mse_loss(x, y, reduction="sum")) == pytest.approx((d ** 2).sum(), rel=1e-6)
    assert F.mse_loss(x, y, reduction="none").shape == torch.Size([4, 3])
    assert names(F.mse_loss(x, torch.zeros(4, 3)).grad_fn) == ["AccumulateGrad", None]


def test_mse_loss_broadcast_warns_and_expands():
    x = torch.randn(4, 3, requires_grad=True)
    t = torch.randn(4, 1, requires_grad=True)
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[4, 1\]\)\) that is different to the "
                                         r"input size \(torch.Size\(\[4, 3\]\)\)"):
        loss = F.mse_loss(x, t)
    assert names(loss.grad_fn) == ["AccumulateGrad", "ExpandBackward0"]
    loss.backward()
    assert t.grad.shape == torch.Size([4, 1])


def test_softmax_implicit_dim_warns():
    x = torch.randn(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = F.softmax(x)
    np.testing.assert_allclose(y.numpy().sum(1), [1.0, 1.0], rtol=1e-6)
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        F.log_softmax(torch.randn(3))


def test_losses_on_simulated_cuda():
    x = torch.randn(4, 3, requires_grad=True)
    xc = x.cuda()
    loss = F.cross_entropy(xc, torch.tensor([0, 1, 2, 0], device="cuda"))
    assert loss.device == torch.device("cuda:0")
    loss.backward()
    assert x.grad.device == torch.device("cpu")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        F.cross_entropy(xc, torch.tensor([0, 1, 2, 0]))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        F.mse_loss(xc, torch.zeros(4, 3))
