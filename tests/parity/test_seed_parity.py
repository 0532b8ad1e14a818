"""Run each article experiment on real PyTorch and on leafkit; every observation must agree.

Real PyTorch is the specification.  PyTorch here is the CPU build, so the
``.cuda()`` steps run as ``double()`` copies on *both* sides (the autograd
point is the same: a differentiable copy is a ``ToCopyBackward0`` non-leaf);
device-type observations are then left out of the comparison.
"""

from __future__ import annotations

import pytest
from cases import SEED_CASES, run_case

import leafkit

torch = pytest.importorskip("torch")


def _double(t):
    return t.double()


def _comparable(obs):
    return [o for o in obs if o[1] != "device"]


@pytest.mark.parametrize("name", sorted(SEED_CASES))
def test_seed_case_same_on_both(name):
    want = run_case(torch, SEED_CASES[name], dev=_double)
    got = run_case(leafkit, SEED_CASES[name], dev=_double)
    assert _comparable(got) == _comparable(want)


@pytest.mark.parametrize("name", sorted(SEED_CASES))
def test_seed_case_with_simulated_cuda_matches_double_copy(name):
    """leafkit's real ``.cuda()`` path gives the same leaf observations as the dtype copy on PyTorch."""
    want = run_case(torch, SEED_CASES[name], dev=_double)
    got = run_case(leafkit, SEED_CASES[name], dev=lambda t: t.cuda())
    assert _comparable(got) == _comparable(want)
