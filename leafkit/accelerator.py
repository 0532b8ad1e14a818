"""``torch.accelerator``: is there an accelerator, and which one (PyTorch 2.6+), consistent with leafkit's cuda.

leafkit's one accelerator is ``cuda``.  It counts as available exactly when ``torch.cuda.is_available()`` is
True: a real GPU through CuPy.  The *simulated* cuda device (host memory, what ``.cuda()`` uses without a GPU)
is not an accelerator, so on such a machine these functions answer as PyTorch's do on a CPU-only build, and the
tutorials' ``device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else
"cpu"`` picks ``"cpu"``.
"""

from __future__ import annotations

from . import _device
from . import cuda as _cuda

__all__ = [
    "is_available",
    "current_accelerator",
    "device_count",
    "current_device_index",
    "set_device_index",
    "synchronize",
]

NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """True when a GPU is usable (``torch.cuda.is_available()``); False with the simulated cuda device."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device(type='cuda')`` when a GPU is usable, else None (the simulated device is not an accelerator)."""
    return _device.device("cuda") if is_available() else None


def device_count() -> int:
    """How many accelerator devices there are: 1 with a GPU, 0 otherwise."""
    return 1 if is_available() else 0


def current_device_index() -> int:
    """The index of the current accelerator device (0).

    Raises
    ------
    RuntimeError
        "Cannot access accelerator device when none is available."
    """
    if not is_available():
        raise RuntimeError(NO_ACCELERATOR)
    return 0


def set_device_index(device) -> None:
    """Select the accelerator device; leafkit has one, index 0.

    Raises
    ------
    RuntimeError
        Without an accelerator, as :func:`current_device_index`; an index other than 0.
    """
    if not is_available():
        raise RuntimeError(NO_ACCELERATOR)
    index = device.index if isinstance(device, _device.device) else device
    if index not in (None, 0):
        raise RuntimeError(f"CUDA error: invalid device ordinal (leafkit has one GPU, asked for {index})")


def synchronize(device=None) -> None:
    """Wait for the GPU to finish its queued work.

    Raises
    ------
    RuntimeError
        Without an accelerator, as :func:`current_device_index`.
    """
    if not is_available():
        raise RuntimeError(NO_ACCELERATOR)
    _cuda.synchronize()
