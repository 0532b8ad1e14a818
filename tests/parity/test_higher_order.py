"""Gradients of gradients on leafkit and on PyTorch: the same values, ``.grad`` states, graphs, warnings, errors."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cases import run_case
from higher_order_cases import CASES

import leafkit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", sorted(CASES))
def test_higher_order_case_same_on_both(name):
    want = run_case(torch, CASES[name], dev=lambda t: t.double())
    got = run_case(leafkit, CASES[name], dev=lambda t: t.double())
    assert [o[0] for o in got] == [o[0] for o in want]
    for g, w in zip(got, want):
        assert g == w, g[0]


CYCLE = """
import warnings, sys
import {lib} as torch
x = torch.tensor([1.0], requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (x * x).sum().backward(create_graph=True)
    (x * x).sum().backward(create_graph=True)   # PyTorch warns once per process
    torch.autograd.grad((x * x).sum(), x, create_graph=True)  # autograd.grad makes no cycle: no warning
print([str(w.message).split(' which')[0] for w in caught])
"""


def test_reference_cycle_warning_once_per_process():
    out = {
        lib: subprocess.run(
            [sys.executable, "-c", CYCLE.format(lib=lib)], capture_output=True, text=True, check=True
        ).stdout
        for lib in ("torch", "leafkit")
    }
    assert out["leafkit"] == out["torch"]
    assert "reference cycle" in out["leafkit"]
