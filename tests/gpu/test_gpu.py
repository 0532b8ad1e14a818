"""Real-GPU tests (CuPy): marked ``gpu``, skipped cleanly unless ``leafkit.cuda.is_available()``.

They check that the ``cuda`` device really is the GPU (CuPy arrays), that it
behaves as the simulated device does (semantics, errors, reprs), and that
every parity program of ``bench/gpu_check.py`` gives the cpu's numbers.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import leafkit as torch
import leafkit.nn.functional as F

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no usable CUDA GPU (CuPy)")]


def _gpu_check():
    path = Path(__file__).resolve().parents[2] / "bench" / "gpu_check.py"
    spec = importlib.util.spec_from_file_location("gpu_check", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_backend_is_cupy():
    import cupy

    assert torch.cuda.backend() == "cupy" and torch.cuda.device_count() == 1
    x = torch.ones(3, device="cuda")
    assert isinstance(x._data, cupy.ndarray)
    assert isinstance(x.cpu()._data, np.ndarray)


def test_cuda_copy_is_a_tocopy_non_leaf_with_its_own_storage():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.cuda()
    assert not y.is_leaf and y.grad_fn.name() == "ToCopyBackward0"
    assert y.data_ptr() != x.data_ptr() and y.cuda() is y
    (y * y).sum().backward()
    assert x.grad.device == torch.device("cpu") and x.grad.tolist() == [2.0, 4.0]


def test_mixing_devices_raises_on_the_gpu():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(2, device="cuda") + torch.ones(2)


def test_repr_on_the_gpu():
    assert repr(torch.tensor([1.0, 2.0], device="cuda")) == "tensor([1., 2.], device='cuda:0')"


def test_optimizer_state_lives_on_the_gpu():
    import cupy

    p = torch.nn.Parameter(torch.ones(3, device="cuda"))
    opt = torch.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert isinstance(opt.state[p]["exp_avg"]._data, cupy.ndarray) and p.is_leaf


def test_cross_entropy_on_the_gpu_is_stable():
    x = torch.tensor([[1e4, 0.0, -1e4]], device="cuda", requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor([2], device="cuda"))
    loss.backward()
    assert loss.item() == 20000.0 and x.grad.cpu().tolist() == [[1.0, 0.0, -1.0]]


@pytest.mark.parametrize("name", sorted(_gpu_check().PROGRAMS) if torch.cuda.is_available() else [])
def test_parity_program_cpu_vs_gpu(name):
    mod = _gpu_check()
    fn = mod.PROGRAMS[name]
    ok, msg = mod.compare(fn("cpu"), fn("cuda"))
    assert ok, msg


def test_digits_reach_95_percent_on_the_gpu():
    from leafkit.examples import digits

    history = digits.train(digits.make_model(0, device="cuda"), epochs=10)
    assert history["test_acc"][-1] >= 0.95
