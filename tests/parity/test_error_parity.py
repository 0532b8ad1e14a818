"""The error snippets of tests/engine/test_errors.py raise the same class, with the same key phrase, on PyTorch."""

from __future__ import annotations

import warnings

import pytest
from engine.test_errors import CASES

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("fn,cls,key", CASES, ids=[c[0].__name__ for c in CASES])
def test_pytorch_raises_the_same(fn, cls, key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(cls) as info:
            fn(torch)
    assert key in str(info.value)
