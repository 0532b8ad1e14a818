"""Convolution, pooling and nn.utils on leafkit's own: the cuda device (simulated here, CuPy on a GPU), the
registry entries, and the layers in a training loop.  Parity with PyTorch is in ``test_conv_pool_parity.py``."""

from __future__ import annotations

import numpy as np
import pytest

import leafkit as torch
import leafkit.nn.functional as F
from leafkit._functions import SPECS

NEW_OPS = {
    "convolution": "ConvolutionBackward0",
    "convolution_backward": "ConvolutionBackwardBackward0",
    "constant_pad_nd": "ConstantPadNdBackward0",
    "max_pool2d_with_indices": "MaxPool2DWithIndicesBackward0",
    "max_pool2d_with_indices_backward": "MaxPool2DWithIndicesBackwardBackward0",
    "avg_pool2d": "AvgPool2DBackward0",
    "avg_pool2d_backward": "AvgPool2DBackwardBackward0",
    "_adaptive_avg_pool2d": "AdaptiveAvgPool2DBackward0",
    "_adaptive_avg_pool2d_backward": "AdaptiveAvgPool2DBackwardBackward0",
}


@pytest.mark.parametrize("name", sorted(NEW_OPS))
def test_each_op_is_a_registry_entry_with_pytorchs_node_name_and_a_docstring(name):
    spec = SPECS[name]
    assert spec.node_cls.__name__ == NEW_OPS[name]
    assert spec.doc and spec.node_cls.__doc__ == spec.doc


def _program(dev):
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((2, 3, 9, 8)).astype(np.float32), device=dev, requires_grad=True)
    conv = torch.nn.Conv2d(3, 4, 3, padding=1, device=dev)
    with torch.no_grad():
        conv.weight.copy_(torch.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32)))
        conv.bias.copy_(torch.tensor(rng.standard_normal(4).astype(np.float32)))
    h = F.max_pool2d(conv(x).relu(), 2, ceil_mode=True)
    h = F.avg_pool2d(F.pad(h, (1, 1)), 2, 1) + 0
    y = F.adaptive_avg_pool2d(h, (2, 3)).flatten(1)
    y = torch.nn.Unflatten(1, (4, 6))(y).sum()
    (gx,) = torch.autograd.grad(y, [x], create_graph=True)
    (gx * gx).sum().backward()
    norm = torch.nn.utils.clip_grad_norm_(conv.parameters(), 0.1)
    return {
        "devices": {str(t.device) for t in (y, gx, x.grad, conv.weight.grad, conv.bias.grad, norm)},
        "values": [t.detach().cpu().numpy() for t in (y, gx, x.grad, conv.weight.grad, conv.bias.grad, norm)],
    }


def test_convolution_and_pooling_run_on_the_cuda_device_with_the_cpus_numbers():
    cpu, cuda = _program("cpu"), _program("cuda")
    assert cpu["devices"] == {"cpu"} and cuda["devices"] == {"cuda:0"}
    for a, b in zip(cpu["values"], cuda["values"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_conv_module_moves_with_to_and_refuses_an_input_on_another_device():
    conv = torch.nn.Conv2d(1, 2, 3).to("cuda")
    assert conv.weight.device == torch.device("cuda", 0) and conv.weight.is_leaf
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        conv(torch.randn(1, 1, 5, 5))
    out = conv(torch.randn(1, 1, 5, 5, device="cuda"))
    assert out.device == torch.device("cuda", 0) and out.grad_fn.name() == "ConvolutionBackward0"


def test_lenet_learns_a_toy_task():
    """Two training epochs of a small CNN on a task only convolution sees easily (where the bright pixel is)."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    X = rng.random((128, 1, 8, 8)).astype(np.float32) * 0.1
    y = rng.integers(0, 2, 128)
    X[np.arange(128), 0, 1 + 5 * y, 3] += 1.0  # the top or the bottom half lights up
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Dropout2d(0.1),
        torch.nn.Flatten(),
        torch.nn.Linear(64, 2),
    )
    opt = torch.optim.SGD(net.parameters(), lr=0.2, momentum=0.9)
    xt, yt = torch.tensor(X), torch.tensor(y)
    for _ in range(30):
        opt.zero_grad()
        loss = F.cross_entropy(net(xt), yt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
    net.eval()
    with torch.no_grad():
        acc = (net(xt).argmax(1) == yt).float().mean().item()
    assert acc > 0.95 and all(p.is_leaf for p in net.parameters())
