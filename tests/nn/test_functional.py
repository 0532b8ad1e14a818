"""nn.functional: node names, graph shapes, numerics, stability and errors (PyTorch 2.13's, recorded here).

The same checks run against real PyTorch in ``test_nn_parity.py``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import leafkit as torch
import leafkit.nn.functional as F


def names(fn):
    """The node names of ``fn.next_functions`` (None for a missing edge), with AccumulateGrad shortened."""
    return [
        None if n is None else ("AccumulateGrad" if n.name().endswith("AccumulateGrad") else n.name())
        for n, _ in fn.next_functions
    ]


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


@pytest.mark.parametrize(
    "shape,bias,want",
    [
        (
            (3,),
            True,
            (
                "ViewBackward0",
                (
                    (
                        "AddmmBackward0",
                        (
                            ("AccumulateGrad", ()),
                            ("ViewBackward0", (("AccumulateGrad", ()),)),
                            ("TBackward0", (("AccumulateGrad", ()),)),
                        ),
                    ),
                ),
            ),
        ),
        (
            (3,),
            False,
            (
                "SqueezeBackward4",
                (
                    (
                        "MmBackward0",
                        (("UnsqueezeBackward0", (("AccumulateGrad", ()),)), ("TBackward0", (("AccumulateGrad", ()),))),
                    ),
                ),
            ),
        ),
        (
            (5, 4, 3),
            True,
            (
                "ViewBackward0",
                (
                    (
                        "AddmmBackward0",
                        (
                            ("AccumulateGrad", ()),
                            ("ViewBackward0", (("AccumulateGrad", ()),)),
                            ("TBackward0", (("AccumulateGrad", ()),)),
                        ),
                    ),
                ),
            ),
        ),
        (
            (5, 4, 3),
            False,
            (
                "UnsafeViewBackward0",
                (
                    (
                        "MmBackward0",
                        (("ViewBackward0", (("AccumulateGrad", ()),)), ("TBackward0", (("AccumulateGrad", ()),))),
                    ),
                ),
            ),
        ),
    ],
)
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
    with pytest.raises(
        RuntimeError,
        match=r"The expanded size of the tensor \(2\) must match the existing size \(3\) "
        r"at non-singleton dimension 1.  Target sizes: \[4, 2\].  Tensor sizes: \[3\]",
    ):
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
    assert loss.item() == pytest.approx(want, rel=1e-6)
    loss.backward()
    p = np.exp(a) / np.exp(a).sum(1, keepdims=True)
    p[[0, 1], [2, 0]] -= 1
    np.testing.assert_allclose(x.grad.numpy(), p / 2, rtol=1e-5, atol=1e-7)


def test_cross_entropy_is_stable_for_huge_logits():
    x = torch.tensor([[1e4, 0.0, -1e4]], requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor([2]))
    loss.backward()
    assert loss.item() == 20000.0
    assert x.grad.tolist() == [[1.0, 0.0, -1.0]]
    y = torch.tensor([[1e4, 1e4]], requires_grad=True)
    loss = F.cross_entropy(y, torch.tensor([0]))
    loss.backward()
    assert loss.item() == pytest.approx(np.log(2)) and np.isfinite(y.grad.numpy()).all()


def test_nll_loss_reductions_weight_ignore_index():
    x = torch.randn(4, 3, requires_grad=True)
    lp = x.log_softmax(1)
    t = torch.tensor([0, 1, 2, 1])
    a = lp.detach().numpy()
    picked = a[np.arange(4), t.numpy()]
    assert F.nll_loss(lp, t, reduction="none").tolist() == pytest.approx((-picked).tolist())
    assert F.nll_loss(lp, t, reduction="sum").item() == pytest.approx(-picked.sum(), rel=1e-6)
    w = torch.tensor([1.0, 2.0, 3.0])
    wt = np.array([1.0, 2.0, 3.0])[t.numpy()]
    assert F.nll_loss(lp, t, weight=w).item() == pytest.approx(-(picked * wt).sum() / wt.sum(), rel=1e-6)
    t2 = torch.tensor([0, -100, 2, -100])
    assert F.nll_loss(lp, t2).item() == pytest.approx(-(picked[0] + picked[2]) / 2, rel=1e-6)
    assert np.isnan(F.nll_loss(lp, torch.tensor([-100] * 4)).item())
    loss = F.nll_loss(lp, t2, weight=w)
    loss.backward()
    assert x.grad.shape == x.shape and np.isfinite(x.grad.numpy()).all()


def test_nll_loss_ignored_rows_are_left_out_not_multiplied_by_zero():
    # PyTorch 2.13: an ignored row's nan/inf never reaches the loss or the gradient
    x = torch.tensor([[-1.0, -2.0], [float("nan"), float("inf")], [-0.5, -3.0]], requires_grad=True)
    t = torch.tensor([1, -100, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.nll_loss(x, t)
        assert loss.item() == pytest.approx(1.25)
        loss.backward()
    assert x.grad.tolist() == [[0.0, -0.5], [0.0, 0.0], [-0.5, 0.0]]
    assert not np.signbit(x.grad.numpy()[1]).any()  # 0., not -0.
    # with weights too
    x.grad = None
    F.nll_loss(x, t, weight=torch.tensor([2.0, 3.0]), reduction="sum").backward()
    assert x.grad.tolist() == [[0.0, -3.0], [0.0, 0.0], [-2.0, 0.0]]
    # reduction="none": an ignored row's loss is 0. (printed "0.", never "-0." or nan)
    x.grad = None
    per = F.nll_loss(x, t, reduction="none")
    assert str(per) == "tensor([2.0000, 0.0000, 0.5000], grad_fn=<NllLossBackward0>)"
    per.sum().backward()
    assert str(x.grad) == "tensor([[ 0., -1.],\n        [ 0.,  0.],\n        [-1.,  0.]])"


def test_cross_entropy_ignored_nan_row_gives_finite_loss():
    x = torch.tensor([[1.0, 2.0], [float("nan"), 0.1]], requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor([1, -100]))
    assert loss.item() == pytest.approx(0.31326169)  # PyTorch: tensor(0.3133)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy()[0], [0.26894142, -0.26894142], rtol=1e-6)


@pytest.mark.parametrize("reduction,value", [("mean", "nan"), ("sum", "0."), ("none", "[0., 0.]")])
def test_nll_loss_all_ignored_batch(reduction, value):
    # PyTorch: the mean over no samples is nan (0/0), the sum is 0.; the gradients are all 0.
    x = torch.tensor([[1.0, float("inf")], [float("nan"), 2.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "divide by zero" / "invalid value" RuntimeWarning
        loss = F.nll_loss(x, torch.tensor([-100, -100]), reduction=reduction)
        assert str(loss) == f"tensor({value}, grad_fn=<NllLossBackward0>)"
        loss.sum().backward()
    assert str(x.grad) == "tensor([[0., 0.],\n        [0., 0.]])"


def test_nll_loss_all_ignored_unbatched_and_empty_batch():
    x = torch.tensor([1.0, 3.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.nll_loss(x, torch.tensor(-100))
        assert np.isnan(loss.item())
        loss.backward()
        assert str(F.nll_loss(x, torch.tensor(-100), reduction="sum")) == "tensor(0., grad_fn=<NllLossBackward0>)"
        assert str(F.nll_loss(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long), reduction="sum")) == "tensor(0.)"
        assert str(F.nll_loss(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long))) == "tensor(nan)"
    assert x.grad.tolist() == [0.0, 0.0] and not np.signbit(x.grad.numpy()).any()


def test_nll_loss_zero_loss_prints_zero_not_minus_zero():
    # PyTorch sums from 0 and subtracts each term: a zero loss is 0., not -0.
    x = torch.tensor([[0.0, 1.0]])
    assert str(F.nll_loss(x, torch.tensor([0]))) == "tensor(0.)"
    assert str(F.nll_loss(x, torch.tensor([0]), reduction="sum")) == "tensor(0.)"
    assert str(F.nll_loss(x, torch.tensor([0]), reduction="none")) == "tensor([-0.])"  # -input, as in PyTorch


@pytest.mark.parametrize(
    "weight,shape", [([1.0, 2.0], "[2]"), ([1.0, 2.0, 3.0, 4.0], "[4]"), ([[1.0], [2.0], [3.0]], "[3, 1]"), (1.0, "[]")]
)
def test_nll_loss_weight_must_cover_all_classes(weight, shape):
    x = torch.randn(4, 3)
    msg = (
        "weight tensor should be defined either for all 3 classes or no classes but got weight tensor of "
        f"shape: {shape}"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        F.nll_loss(x, torch.tensor([0, 1, 0, 1]), weight=torch.tensor(weight))
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        F.cross_entropy(x, torch.tensor([0, 1, 0, 1]), weight=torch.tensor(weight))


def test_nll_loss_weight_dtype_must_match_input():
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.nll_loss(torch.randn(2, 2), torch.tensor([0, 1]), weight=torch.ones(2, dtype=torch.float64))


def test_nll_loss_saved_values_are_named_as_in_pytorch():
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.tensor([1.0, 2.0, 3.0])
    fn = F.nll_loss(x, torch.tensor([0, 2]), weight=w).grad_fn
    assert fn._saved_self.tolist() == x.tolist()
    assert fn._saved_target.tolist() == [0, 2]
    assert fn._saved_weight.tolist() == [1.0, 2.0, 3.0]
    assert float(fn._saved_total_weight) == 4.0
    assert F.nll_loss(x, torch.tensor([0, 2])).grad_fn._saved_weight is None


def test_nll_loss_unbatched():
    x = torch.randn(3, requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor(1))
    assert loss.shape == torch.Size([])
    loss.backward()
    assert x.grad.shape == torch.Size([3])


@pytest.mark.parametrize(
    "call,exc,msg",
    [
        (
            lambda x: F.nll_loss(x, torch.tensor([0.0, 1, 2, 0])),
            RuntimeError,
            "expected target dtype to be Long or Byte, but got Float",
        ),
        (
            lambda x: F.cross_entropy(x, torch.tensor([0, 1, 2, 0]).int()),
            RuntimeError,
            "expected target dtype to be Long or Byte, but got Int",
        ),
        (lambda x: F.nll_loss(x, torch.tensor([0, 1, 5, 0])), IndexError, "Target 5 is out of bounds."),
        (lambda x: F.cross_entropy(x, torch.tensor([0, 1, -3, 0])), IndexError, "Target -3 is out of bounds."),
        (
            lambda x: F.nll_loss(x, torch.tensor([0, 1, 2])),
            ValueError,
            r"Expected input batch_size \(4\) to match target batch_size \(3\).",
        ),
        (
            lambda x: F.cross_entropy(x, torch.tensor([0, 1, 2, 0]), reduction="foo"),
            ValueError,
            "foo is not a valid value for reduction",
        ),
        (
            lambda x: F.mse_loss(x, torch.randn(5, 3)),
            RuntimeError,
            r"The size of tensor a \(4\) must match the size of tensor b \(5\) at non-singleton dimension 0",
        ),
    ],
)
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
    assert loss.item() == pytest.approx((d**2).mean(), rel=1e-6)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * d / d.size, rtol=1e-5)
    np.testing.assert_allclose(y.grad.numpy(), -2 * d / d.size, rtol=1e-5)
    assert F.mse_loss(x, y, reduction="sum").item() == pytest.approx((d**2).sum(), rel=1e-6)
    assert F.mse_loss(x, y, reduction="none").shape == torch.Size([4, 3])
    assert names(F.mse_loss(x, torch.zeros(4, 3)).grad_fn) == ["AccumulateGrad", None]


def test_mse_loss_target_grad_has_no_minus_zero():
    # PyTorch computes the target's gradient as 2 * (target - input) * grad: 0., never -0.
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([1.0, 3.0], requires_grad=True)
    F.mse_loss(a, b).backward()
    assert str(a.grad) == "tensor([ 0., -1.])" and str(b.grad) == "tensor([0., 1.])"
    a.grad = b.grad = None
    F.mse_loss(a, b, reduction="none").sum().backward()
    assert str(b.grad) == "tensor([0., 2.])"


def test_mse_loss_inf_and_empty_inputs_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning (PyTorch prints nothing)
        assert str(F.mse_loss(torch.tensor([]), torch.tensor([]))) == "tensor(nan)"
        assert str(F.mse_loss(torch.tensor([]), torch.tensor([]), reduction="sum")) == "tensor(0.)"
        inf = float("inf")
        x = torch.tensor([inf, 1.0], requires_grad=True)
        loss = F.mse_loss(x, torch.tensor([inf, 1.0]))
        assert np.isnan(loss.item())
        loss.backward()
        assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == 0.0


def test_mse_loss_broadcast_warns_and_expands():
    x = torch.randn(4, 3, requires_grad=True)
    t = torch.randn(4, 1, requires_grad=True)
    with pytest.warns(
        UserWarning,
        match=r"Using a target size \(torch.Size\(\[4, 1\]\)\) that is different to the "
        r"input size \(torch.Size\(\[4, 3\]\)\)",
    ):
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
