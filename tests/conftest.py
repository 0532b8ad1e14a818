"""Suite-wide markers and skips (markers are declared in pyproject.toml).

- ``gpu``:    skipped unless CuPy is importable and a CUDA device really works.
- ``parity``: skipped when ``torch`` is not installed; every test under
  tests/parity/ gets it automatically.
Keep this file small; fixtures belong next to the tests that use them.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest

PARITY_DIR = Path(__file__).resolve().parent / "parity"


@functools.cache
def _gpu_unavailable() -> str | None:
    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed (pip install -e '.[cuda]')"
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA device visible"
        int((cupy.arange(4) + 1).sum())  # a real kernel launch, not just a driver query
    except Exception as exc:  # driver missing, no device, MIG without CI, ...
        return f"no usable CUDA GPU: {type(exc).__name__}: {exc}"
    return None


@pytest.hookimpl(tryfirst=True)  # before -m deselection sees the items
def pytest_collection_modifyitems(config, items):
    torch_missing = importlib.util.find_spec("torch") is None
    for item in items:
        if PARITY_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.parity)
        if item.get_closest_marker("gpu") is not None:
            reason = _gpu_unavailable()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
        if item.get_closest_marker("parity") is not None and torch_missing:
            item.add_marker(pytest.mark.skip(reason="torch is not installed (pip install -e '.[parity]')"))
