"""Data types, named and printed as PyTorch's (``torch.float32`` ...).

Each :class:`dtype` wraps one NumPy dtype.  Floating types may require
gradients; integer and bool types may not, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "int32", "int64", "bool",
           "half", "float", "double", "int", "long", "get_default_dtype", "set_default_dtype"]


class dtype:
    """A tensor element type, mirroring ``torch.dtype``.

    Attributes
    ----------
    is_floating_point : bool
        True for float16/32/64 (the types that may require grad).
    itemsize : int
        Bytes per element.
    """

    __slots__ = ("name", "np", "is_floating_point", "itemsize")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.itemsize = self.np.itemsize

    @property
    def is_complex(self) -> bool:
        return False

    @property
    def is_signed(self) -> bool:
        return self.np.kind in "fi"

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = half = dtype("float16", np.float16)
float32 = float = dtype("float32", np.float32)
float64 = double = dtype("float64", np.float64)
int32 = int = dtype("int32", np.int32)
int64 = long = dtype("int64", np.int64)
bool = dtype("bool", np.bool_)

_ALL = (float16, float32, float64, int32, int64, bool)
_FROM_NP = {d.np: d for d in _ALL}
_DEFAULT = [float32]


def _by_name(name: str) -> dtype:
    for d in _ALL:
        if d.name == name:
            return d
    raise TypeError(f"unknown dtype {name!r}")


def from_numpy_dtype(np_dtype) -> dtype:
    """Map a NumPy dtype onto a leafkit dtype, or raise ``TypeError``."""
    nd = np.dtype(np_dtype)
    try:
        return _FROM_NP[nd]
    except KeyError:
        if nd.kind in "iu":
            return int64
        raise TypeError(f"can't convert np.ndarray of type numpy.{nd.name}. The only supported types are: "
                        "float64, float32, float16, int64, int32, and bool.") from None


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (``torch.float32`` by default)."""
    return _DEFAULT[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; only float32 and float64 are accepted, as in PyTorch."""
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _DEFAULT[0] = d
