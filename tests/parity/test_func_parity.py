"""torch.func on leafkit and on PyTorch: the same values, shapes, ``requires_grad``/``grad_fn``, errors, warnings.

The experiments are in ``tests/func_cases.py``; each runs once on each library and
their logs must be equal, entry by entry.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from func_cases import CASES, Log

import leafkit

torch = pytest.importorskip("torch")


def _run(lib, case):
    log = Log(lib)
    case(lib, log)
    return log.items


@pytest.mark.parametrize("name", sorted(CASES))
def test_func_case_same_on_both(name):
    want = _run(torch, CASES[name])
    got = _run(leafkit, CASES[name])
    assert [w[0] for w in got] == [w[0] for w in want]
    for g, w in zip(got, want):
        assert g == w, g[0]


IMPORTS = """
import {lib} as torch
from torch.func import grad, vmap, functional_call
import torch.func
from torch import func as tf
from torch.autograd.functional import jacobian
x = torch.tensor([1.0, 2.0], requires_grad=True)
g = grad(lambda t: (t ** 3).sum())(x)
print(g, g.requires_grad, g.grad_fn.name())
print(torch.func.vmap is vmap, tf.jacrev(torch.sin)(x).shape, jacobian(torch.sin, x, vectorize=True).shape)
print(torch.vmap(torch.sin)(torch.zeros(2)))
try:
    vmap(lambda t: t.sum().item())(torch.ones(3, 2))
except RuntimeError as e:
    print(e)
"""


def test_imports_from_torch_func_under_import_leafkit_as_torch():
    """``import leafkit as torch`` then ``from torch.func import grad``: leafkit's, printing what PyTorch prints."""
    out = {}
    for lib in ("torch", "leafkit"):
        r = subprocess.run([sys.executable, "-c", IMPORTS.format(lib=lib)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out[lib] = r.stdout
    assert out["leafkit"] == out["torch"]
    assert "grad_fn=<MulBackward0>" in out["leafkit"]
