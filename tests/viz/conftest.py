"""Fixtures for the drawing tests: every test runs on leafkit and, when it is
installed, on real PyTorch (the drawing layer reads only PyTorch's public
autograd API, so both must draw alike)."""
from __future__ import annotations

import importlib
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def _load(name):
    if name == "torch":
        return pytest.importorskip("torch")
    mod = importlib.import_module("leafkit")
    if not hasattr(mod, "tensor"):
        pytest.skip("leafkit has no tensor() yet")
    return mod


@pytest.fixture(params=["leafkit", "torch"])
def tk(request):
    """The torch-like module under test: ``leafkit`` (main) or real ``torch``."""
    return _load(request.param)


@pytest.fixture
def lk():
    return _load("leafkit")


@pytest.fixture
def real_torch():
    return _load("torch")


def to_other_device(torch, t):
    """Move ``t`` "to the other device": ``.cuda()`` where cuda exists (leafkit
    always, simulated without a GPU), else a float64 copy, which makes the same
    autograd point (a differentiable copy is a ``ToCopyBackward0`` non-leaf)."""
    if has_cuda(torch):
        return t.cuda()
    return t.to(torch.float64)


def has_cuda(torch) -> bool:
    """A real GPU, or leafkit's cuda (simulated in host memory without one)."""
    return bool(torch.cuda.is_available() or getattr(torch.cuda, "backend", lambda: None)() is not None)
