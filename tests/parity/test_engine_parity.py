"""Engine behaviour beyond the articles (hooks, accumulation, next_functions, views, grad modes, reprs) vs PyTorch."""

from __future__ import annotations

import pytest
from cases import ENGINE_CASES, run_case

import leafkit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", sorted(ENGINE_CASES))
def test_engine_case_same_on_both(name):
    want = run_case(torch, ENGINE_CASES[name], dev=lambda t: t.double())
    got = run_case(leafkit, ENGINE_CASES[name], dev=lambda t: t.double())
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == w
