"""The adversarial review's snippets give the same printed result, or the same error, on PyTorch and leafkit."""

from __future__ import annotations

import warnings

import pytest
from engine.review_cases import ERROR_CASES, VALUE_CASES

import leafkit

torch = pytest.importorskip("torch")


def outcome(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "value", repr(fn(lib))
        except Exception as e:  # noqa: BLE001 - the error is the observation
            return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_same_result(name):
    assert outcome(VALUE_CASES[name], leafkit) == outcome(VALUE_CASES[name], torch)


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_same_error(name):
    got, want = outcome(ERROR_CASES[name], leafkit), outcome(ERROR_CASES[name], torch)
    assert want[0] != "value", "PyTorch raised nothing: the case is wrong"
    assert got[0] == want[0]
    # PyTorch's key phrase: the message up to its first sentence end, tracebacks' file paths aside
    key = want[1].split(" (Triggered internally")[0][:60]
    assert key in got[1]
