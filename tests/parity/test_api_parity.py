"""Issue 9's faults and new API on leafkit and on PyTorch: the same values, node names, errors and warnings."""

from __future__ import annotations

import subprocess
import sys

import pytest
from api_cases import CASES
from cases import run_case

import leafkit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", sorted(CASES))
def test_api_case_same_on_both(name):
    want = run_case(torch, CASES[name], dev=lambda t: t.double())
    got = run_case(leafkit, CASES[name], dev=lambda t: t.double())
    assert [o[0] for o in got] == [o[0] for o in want]
    for g, w in zip(got, want):
        assert g == w, g[0]


SCALARS = """
import math, warnings
import numpy as np
import {lib} as torch
p = torch.tensor(2.0, requires_grad=True)
out = {{}}
for name, f in [("{name}", lambda: {expr})] * 2:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f()
    out.setdefault(name, []).append([str(w.message).split(chr(10))[0] for w in caught])
print(out)
"""


@pytest.mark.parametrize(
    "name, expr",
    [
        ("float", "float(p)"),
        ("int", "int(p)"),
        ("bool", "bool(p)"),
        ("complex", "complex(p)"),
        ("item", "p.item()"),
        ("math.floor", "math.floor(p)"),
        ("np.float64", "np.float64(p)"),
        ("float of a non-leaf", "float(p * 2)"),
        ("tolist", "p.tolist()"),
        ("format", "f'{p:.2f}'"),
    ],
)
def test_scalar_conversion_warnings(name, expr):
    """PyTorch warns (once per process) where a conversion drops the graph through __float__/__complex__."""
    runs = {
        lib: subprocess.run(
            [sys.executable, "-c", SCALARS.format(lib=lib, name=name, expr=expr)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for lib in ("torch", "leafkit")
    }
    assert runs["leafkit"] == runs["torch"]


STORAGE = """
import warnings
import {lib} as torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
seen = []
for _ in range(2):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        same = x.storage().data_ptr() == x.detach().storage().data_ptr()
        x.untyped_storage()
    seen.append((same, [str(w.message)[:38] for w in caught]))
print(seen)
"""


def test_typed_storage_warns_once_per_process():
    runs = {
        lib: subprocess.run(
            [sys.executable, "-c", STORAGE.format(lib=lib)], capture_output=True, text=True, check=True
        ).stdout
        for lib in ("torch", "leafkit")
    }
    assert runs["leafkit"] == runs["torch"]
    assert "TypedStorage is deprecated" in runs["leafkit"]
