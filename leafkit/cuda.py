"""``leafkit.cuda``: is a GPU there, and which backend serves the ``cuda`` device.

``is_available()`` is True only when CuPy imports and a small kernel really
ran on the GPU (probed once, then cached).  Without a GPU the ``cuda`` device
is *simulated* in host memory (see :mod:`leafkit._device`); ``backend()``
says which: ``"cupy"``, ``"simulated"``, or ``None`` when the simulation was
turned off with ``LEAFKIT_SIMULATE_CUDA=0``.
"""

from __future__ import annotations

from . import _device
from ._random import manual_seed as _manual_seed
from ._tensor_types import CUDA_TYPES as _CUDA_TYPES

__all__ = [
    "is_available",
    "backend",
    "device_count",
    "current_device",
    "synchronize",
    "manual_seed",
    "manual_seed_all",
    "get_device_name",
]


def __getattr__(name):
    # torch.cuda.FloatTensor ...: the legacy types of cuda tensors (see leafkit._tensor_types)
    if name in _CUDA_TYPES:
        return _CUDA_TYPES[name]
    raise AttributeError(f"module 'leafkit.cuda' has no attribute '{name}'")


def is_available() -> bool:
    """True when a real GPU is usable through CuPy (never for the simulated device)."""
    return _device._cupy_usable()


def backend():
    """``"cupy"``, ``"simulated"`` or ``None``."""
    return _device.cuda_backend()


def device_count() -> int:
    return 1 if _device.cuda_backend() is not None else 0


def current_device() -> int:
    _device.check_available(_device.CUDA0)
    return 0


def get_device_name(device=None) -> str:
    b = _device.cuda_backend()
    if b == "cupy":
        import cupy

        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    if b == "simulated":
        return "leafkit simulated GPU (host memory)"
    raise AssertionError("Torch not compiled with CUDA enabled")


def synchronize(device=None) -> None:
    if _device.cuda_backend() == "cupy":
        import cupy

        cupy.cuda.Device(0).synchronize()


def manual_seed(seed: int) -> None:
    """Seeds the one generator leafkit uses for every device."""
    _manual_seed(seed)


manual_seed_all = manual_seed
