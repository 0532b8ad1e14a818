"""Device semantics (issue 3): cpu and cuda, the simulated cuda included, as PyTorch behaves with a GPU.

Without a GPU, leafkit's ``cuda`` device is simulated in host memory; every
test here runs on it.  With a usable GPU (CuPy) the same tests run on the
real device, except those that check the simulation itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import leafkit as torch
import leafkit.nn as nn
import leafkit.nn.functional as F

SIMULATED = torch.cuda.backend() == "simulated"
needs_simulation = pytest.mark.skipif(not SIMULATED, reason="checks the simulated cuda device (no GPU here)")


# -- .to / .cuda / .cpu -------------------------------------------------------------------------------
def test_move_that_changes_nothing_returns_self():
    x = torch.randn(3, requires_grad=True)
    assert x.to("cpu") is x and x.cpu() is x and x.to(torch.float32) is x and x.to(x) is x
    c = torch.randn(3, device="cuda")
    assert c.cuda() is c and c.to("cuda") is c and c.to("cuda:0") is c and c.to(torch.device("cuda", 0)) is c
    assert c.to(c) is c


def test_copy_of_a_requires_grad_tensor_is_a_tocopy_non_leaf():
    x = torch.randn(3, requires_grad=True)
    for y in (x.cuda(), x.to("cuda"), x.to(torch.float64), x.double(), x.cuda().cpu()):
        assert not y.is_leaf and y.requires_grad
        assert y.grad_fn.name() == "ToCopyBackward0"
    y = x.cuda()
    assert y.grad_fn.next_functions[0][0].name().endswith("AccumulateGrad")


def test_copy_without_requires_grad_is_a_leaf():
    x = torch.randn(3)
    y = x.cuda()
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    assert y.device == torch.device("cuda:0") and y.is_cuda and not x.is_cuda


def test_to_other_tensor_takes_device_and_dtype():
    x = torch.randn(2)
    other = torch.zeros(1, dtype=torch.float64, device="cuda")
    y = x.to(other)
    assert y.device == torch.device("cuda:0") and y.dtype == torch.float64


def test_the_non_leaf_copy_never_gets_a_grad():
    """The articles' trap: ``requires_grad=True`` then ``.cuda()`` leaves the weight behind on the cpu."""
    w = torch.randn(3, requires_grad=True).cuda()
    (w * 2).sum().backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert w.grad is None
    good = torch.randn(3, device="cuda", requires_grad=True)
    (good * 2).sum().backward()
    assert good.grad.tolist() == [2.0, 2.0, 2.0] and good.grad.device == torch.device("cuda:0")


def test_gradients_cross_devices():
    """A cpu leaf, moved to cuda, used there: backward delivers the gradient to the cpu leaf, on the cpu."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.cuda()
    z = (y * y).sum()
    assert z.device == torch.device("cuda:0")
    z.backward()
    assert x.grad.device == torch.device("cpu")
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    # and the other way round, through a dtype change too
    w = torch.tensor([1.0, -1.0], device="cuda", requires_grad=True)
    (w.cpu().double() * 3).sum().backward()
    assert w.grad.device == torch.device("cuda:0") and w.grad.dtype == torch.float32
    assert w.grad.tolist() == [3.0, 3.0]


def test_module_trains_across_devices():
    torch.manual_seed(0)
    model = nn.Linear(4, 2).cuda()
    x = torch.randn(8, 4).cuda()
    t = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1], device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    first = None
    for _ in range(20):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), t)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < first
    assert model.weight.device == torch.device("cuda:0") and model.weight.grad.device == torch.device("cuda:0")


# -- storage ----------------------------------------------------------------------------------------------
def test_cuda_copy_has_its_own_storage():
    x = torch.tensor([1.0, 2.0])
    y = x.cuda()
    assert y.data_ptr() != x.data_ptr()
    z = y.cpu()
    assert z.data_ptr() not in (x.data_ptr(), y.data_ptr())
    with torch.no_grad():
        y.add_(1)
    assert x.tolist() == [1.0, 2.0] and y.tolist() == [2.0, 3.0]
    assert y.detach().data_ptr() == y.data_ptr()


def test_numpy_of_cuda_tensor_raises():
    with pytest.raises(
        TypeError,
        match=r"can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu\(\) to copy "
        r"the tensor to host memory first.",
    ):
        torch.zeros(2, device="cuda").numpy()


# -- mixing devices ---------------------------------------------------------------------------------------
MIXES = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "matmul": lambda a, b: a.view(1, 3) @ b.view(3, 1),
    "linear": lambda a, b: F.linear(a.view(1, 3), b.view(1, 3)),
    "mse_loss": lambda a, b: F.mse_loss(a, b),
    "cat": lambda a, b: torch.cat([a, b]),
    "add_": lambda a, b: a.add_(b),
    "compare": lambda a, b: a < b,
}


@pytest.mark.parametrize("name", sorted(MIXES))
def test_mixing_devices_raises(name):
    a = torch.randn(3, device="cuda")
    b = torch.randn(3)
    with pytest.raises(
        RuntimeError,
        match="Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    ):
        MIXES[name](a, b)


def test_mixing_devices_in_a_model_raises():
    model = nn.Linear(3, 1).cuda()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        model(torch.randn(2, 3))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        F.cross_entropy(torch.randn(2, 3, device="cuda"), torch.tensor([0, 1]))


# -- printing ---------------------------------------------------------------------------------------------
def test_repr_shows_cuda_device():
    assert repr(torch.tensor([1.0, 2.0], device="cuda")) == "tensor([1., 2.], device='cuda:0')"
    x = torch.tensor([1.0], requires_grad=True)
    assert repr(x.cuda()) == "tensor([1.], device='cuda:0', grad_fn=<ToCopyBackward0>)"
    assert (
        repr(torch.zeros(1, device="cuda", requires_grad=True)) == "tensor([0.], device='cuda:0', requires_grad=True)"
    )
    assert (
        repr(torch.zeros(1, dtype=torch.float64, device="cuda")) == "tensor([0.], device='cuda:0', dtype=torch.float64)"
    )
    assert str(torch.zeros(1, device="cuda").device) == "cuda:0"
    assert torch.zeros(1, device="cuda").type() == "torch.cuda.FloatTensor"


def test_factories_take_device():
    for make in (
        lambda: torch.zeros(2, device="cuda"),
        lambda: torch.ones(2, device="cuda"),
        lambda: torch.randn(2, device="cuda"),
        lambda: torch.tensor([1.0], device="cuda"),
        lambda: torch.arange(3, device="cuda"),
        lambda: torch.full((2,), 1.5, device="cuda"),
        lambda: torch.zeros_like(torch.zeros(2, device="cuda")),
    ):
        assert make().device == torch.device("cuda:0")


# -- the cuda module ----------------------------------------------------------------------------------------
@needs_simulation
def test_cuda_module_reports_simulation():
    assert torch.cuda.is_available() is False
    assert torch.cuda.backend() == "simulated"
    assert torch.cuda.device_count() == 1
    assert "simulated" in torch.cuda.get_device_name()


def _run(code: str, **env):
    full_env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full_env, timeout=120
    )


@needs_simulation
def test_simulation_off_makes_cuda_raise_like_a_cpu_only_pytorch():
    r = _run(
        """
        import leafkit as torch
        import leafkit.nn as nn
        print(torch.cuda.is_available(), torch.cuda.backend(), torch.cuda.device_count())
        for make in (lambda: torch.zeros(1).cuda(), lambda: torch.zeros(1, device="cuda"),
                     lambda: torch.zeros(1).to("cuda"), lambda: nn.Linear(2, 2).cuda()):
            try:
                make()
                print("no error")
            except AssertionError as e:
                print("AssertionError:", e)
        print(torch.zeros(1).to("cpu").device)
    """,
        LEAFKIT_SIMULATE_CUDA="0",
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "False None 0"
    assert lines[1:5] == ["AssertionError: Torch not compiled with CUDA enabled"] * 4
    assert lines[5] == "cpu"


@needs_simulation
def test_simulation_is_on_by_default_in_a_fresh_process():
    env = {k: v for k, v in os.environ.items() if k != "LEAFKIT_SIMULATE_CUDA"}
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import leafkit as t; x = t.ones(1).cuda(); print(t.cuda.backend(), t.cuda.is_available(), x.device)",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["simulated", "False", "cuda:0"]


def test_parity_cpu_vs_cuda_numbers():
    """The same computation on both devices gives the same numbers (the simulated device is exact)."""
    torch.manual_seed(0)
    a = torch.randn(5, 4, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    out = {}
    for dev in ("cpu", "cuda"):
        a.grad = None
        w.grad = None
        x, W = a.to(dev), w.to(dev)
        loss = F.cross_entropy(F.linear(x.tanh(), W).relu(), torch.tensor([0, 1, 2, 0, 1], device=dev))
        loss.backward()
        out[dev] = (loss.item(), a.grad.numpy().copy(), w.grad.numpy().copy())
    assert out["cpu"][0] == pytest.approx(out["cuda"][0], rel=1e-6)
    np.testing.assert_allclose(out["cpu"][1], out["cuda"][1], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out["cpu"][2], out["cuda"][2], rtol=1e-5, atol=1e-7)


def test_gpu_check_script_runs_without_a_gpu():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run(
        [sys.executable, os.path.join(root, "bench", "gpu_check.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ALL PARITY CHECKS PASSED" in r.stdout
    if not torch.cuda.is_available():
        assert "no GPU, skipped" in r.stdout


def test_cpu_scalar_tensors_join_cuda_ops_as_in_pytorch():
    import leafkit as lk

    a = lk.ones(2, device="cuda", requires_grad=True)
    s = lk.tensor(2.0, requires_grad=True)
    y = a * s
    assert y.device.type == "cuda"
    y.sum().backward()
    assert a.grad.device.type == "cuda" and s.grad.device.type == "cpu" and s.grad.item() == 2.0
    b = lk.zeros(3, device="cuda")
    b.mul_(lk.tensor(2.0))
    assert (b > lk.tensor(-1.0)).device.type == "cuda"
    b[0] = lk.tensor(5.0)
    b[1:3] = lk.ones(2)  # assignment copies across devices, like copy_
    assert b.tolist() == [5.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a * lk.ones(2)  # only 0-d CPU tensors may join
