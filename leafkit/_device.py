"""Devices: ``cpu`` (NumPy) and ``cuda`` (CuPy on a real GPU, or a simulated GPU).

A :class:`device` names where a tensor's storage lives, exactly as
``torch.device`` does.  Each device has an *array module*:

* ``cpu``: :mod:`numpy`.
* ``cuda`` with a usable GPU: :mod:`cupy`.
* ``cuda`` without one: a *simulated* GPU.  Arrays are NumPy arrays in host
  memory, but every move to or from the device is a real copy into a buffer
  of its own, so ``.cuda()`` has its own ``data_ptr()``, mixing devices in one
  op raises, and ``repr`` shows ``device='cuda:0'``.  The simulation is on by
  default; set the environment variable ``LEAFKIT_SIMULATE_CUDA=0`` to turn it
  off, and ``.cuda()`` then raises ``AssertionError("Torch not compiled with
  CUDA enabled")`` as a CPU-only PyTorch build does.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["device"]


class device:
    """Where a tensor lives, mirroring ``torch.device``.

    Parameters
    ----------
    type : str
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
    index : int, optional
        Device ordinal for ``cuda``; leafkit has one GPU, ``0``.

    Raises
    ------
    RuntimeError
        For an unknown device type ("Expected one of cpu, cuda ... device type").

    Examples
    --------
    >>> device("cuda", 0)
    device(type='cuda', index=0)
    >>> str(device("cuda:0"))
    'cuda:0'
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type!r})")
        t = type
        if ":" in t:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {t}")
            t, _, idx = t.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if t not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
                f"vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {type}"
            )
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = t
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")
CUDA0 = device("cuda", 0)
_DEFAULT = [CPU]  # where factories put new tensors (set_default_device)


def get_default_device() -> device:
    """The device factory functions use when none is given (``torch.get_default_device()``): ``cpu`` unless
    :func:`set_default_device` changed it."""
    return _DEFAULT[0]


def set_default_device(dev) -> None:
    """Make factory functions (``tensor``, ``zeros``, ``randn``, ``arange`` ..., and so the parameters of new
    ``nn`` layers) create tensors on ``dev`` when no ``device`` is given (``torch.set_default_device``).

    ``None`` restores ``cpu``.  ``cuda`` is accepted as in PyTorch even when it cannot be used; the error ("Torch
    not compiled with CUDA enabled") comes when a tensor is created.  Functions that take a tensor
    (``zeros_like``, ``from_numpy``, operations) keep following their input.
    """
    _DEFAULT[0] = CPU if dev is None else canonical(dev)


_probe: dict = {}


def _cupy_usable() -> bool:
    """Import CuPy and run one tiny kernel on the GPU; cached after the first call."""
    if "cupy" not in _probe:
        ok = False
        try:
            import cupy  # noqa: F401

            x = cupy.arange(4, dtype=cupy.float32)
            ok = float((x * 2).sum().get()) == 12.0
        except Exception:  # no CuPy, no driver, no device: all mean "not usable"
            ok = False
        _probe["cupy"] = ok
    return _probe["cupy"]


def cuda_backend() -> str | None:
    """``"cupy"``, ``"simulated"``, or ``None`` when cuda is unavailable and simulation is off."""
    if _cupy_usable():
        return "cupy"
    if os.environ.get("LEAFKIT_SIMULATE_CUDA", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    return "simulated"


def canonical(dev) -> device:
    """Turn ``None``/str/int/device into a concrete device (``cuda`` gets index 0; ``None`` is the default device,
    see :func:`set_default_device`)."""
    if dev is None:
        return _DEFAULT[0]
    if isinstance(dev, int):
        dev = device("cuda", dev)
    elif not isinstance(dev, device):
        dev = device(dev)
    if dev.type == "cpu":
        return CPU
    if dev.index not in (None, 0):
        raise RuntimeError(f"CUDA error: invalid device ordinal (leafkit has one GPU, asked for {dev})")
    return CUDA0


def check_available(dev: device) -> None:
    """Raise PyTorch's error when ``dev`` is cuda and no cuda backend exists."""
    if dev.type == "cuda" and cuda_backend() is None:
        raise AssertionError("Torch not compiled with CUDA enabled")


def array_module(x):
    """The array module (NumPy or CuPy) of a device or of an array.

    NumPy for cpu, for simulated cuda and for NumPy arrays; CuPy for real
    cuda and for CuPy arrays.  This is the one place that chooses.
    """
    if isinstance(x, device):
        if x.type == "cuda" and cuda_backend() == "cupy":
            import cupy

            return cupy
        return np
    if isinstance(x, (np.ndarray, np.generic)) or not hasattr(x, "__cuda_array_interface__"):
        return np
    import cupy

    return cupy


def data_ptr(arr) -> int:
    """The address of an array's first element (NumPy or CuPy)."""
    if isinstance(arr, np.ndarray):
        return arr.__array_interface__["data"][0]
    return int(arr.data.ptr)


def to_device_array(arr, src: device, dst: device):
    """Copy ``arr`` from ``src`` to ``dst``; always a fresh buffer of its own."""
    if src.type == "cuda" and array_module(src) is not np:
        arr = arr.get()
        return arr if dst.type == "cpu" or array_module(dst) is np else _to_cupy(arr)
    if dst.type == "cuda" and array_module(dst) is not np:
        return _to_cupy(arr)
    return np.array(arr, copy=True)


def _to_cupy(arr):
    import cupy

    return cupy.array(arr, copy=True)


def to_host(arr):
    """A NumPy view or copy of ``arr`` (CuPy arrays are copied to the host)."""
    if isinstance(arr, np.ndarray):
        return arr
    get = getattr(arr, "get", None)
    return get() if get is not None else np.asarray(arr)
