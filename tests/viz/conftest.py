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
    return importlib.import_module("leafkit")


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
