"""Data types, named and printed as PyTorch's (``torch.float32`` ...).

Each :class:`dtype` wraps one NumPy dtype.  Floating types may require
gradients; integer and bool types may not, as in PyTorch.
"""

from __future__ import annotations

import builtins

import numpy as np

__all__ = [
    "dtype",
    "float16",
    "float32",
    "float64",
    "int32",
    "int64",
    "bool",
    "uint8",
    "int8",
    "int16",
    "half",
    "float",
    "double",
    "int",
    "long",
    "short",
    "get_default_dtype",
    "set_default_dtype",
    "is_differentiable",
]


class dtype:
    """A tensor element type, mirroring ``torch.dtype``.

    Attributes
    ----------
    is_floating_point : bool
        True for float16/32/64 (the types that may require grad).
    itemsize : int
        Bytes per element.
    """

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "word", "ctype", "tensor_type")

    def __init__(self, name: str, np_dtype, word: str, ctype: str, tensor_type: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.itemsize = self.np.itemsize
        self.word = word  # PyTorch's ScalarType name in messages: "Float", "Long"
        self.ctype = ctype  # the C++ type some messages name: "float", "long int"
        self.tensor_type = tensor_type  # the legacy type name: "FloatTensor"

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


# The one table of dtype facts: name, NumPy dtype, and PyTorch's three spellings of it.
float16 = half = dtype("float16", np.float16, "Half", "c10::Half", "HalfTensor")
float32 = float = dtype("float32", np.float32, "Float", "float", "FloatTensor")
float64 = double = dtype("float64", np.float64, "Double", "double", "DoubleTensor")
int32 = int = dtype("int32", np.int32, "Int", "int", "IntTensor")
int64 = long = dtype("int64", np.int64, "Long", "long int", "LongTensor")
bool = dtype("bool", np.bool_, "Bool", "bool", "BoolTensor")
uint8 = dtype("uint8", np.uint8, "Byte", "unsigned char", "ByteTensor")
int8 = dtype("int8", np.int8, "Char", "signed char", "CharTensor")
int16 = short = dtype("int16", np.int16, "Short", "short int", "ShortTensor")

_ALL = (float16, float32, float64, int32, int64, bool, uint8, int8, int16)
_FROM_NP = {d.np: d for d in _ALL}
_DEFAULT = [float32]


def word(np_dtype) -> str:
    """PyTorch's name of a dtype in error messages: ``Float``, ``Double``, ``Long``, ``Bool`` ..."""
    d = _FROM_NP.get(np.dtype(np_dtype))
    return d.word if d is not None else str(np_dtype)


def ctype(np_dtype) -> str:
    """The C++ type name some PyTorch messages use: ``float``, ``double``, ``long int`` ..."""
    d = _FROM_NP.get(np.dtype(np_dtype))
    return d.ctype if d is not None else str(np_dtype)


def type_string(np_dtype, device=None) -> str:
    """``torch.FloatTensor`` / ``torch.cuda.FloatTensor`` for a NumPy dtype on a device."""
    d = _FROM_NP.get(np.dtype(np_dtype))
    name = d.tensor_type if d is not None else "Tensor"
    return ("torch.cuda." if device is not None and device.type == "cuda" else "torch.") + name


DIFFERENTIABLE_KINDS = "fc"  # the NumPy dtype kinds that may require grad: floating and complex (see below)


def is_differentiable(np_dtype) -> builtins.bool:
    """Whether tensors of this NumPy dtype may require grad (PyTorch: floating and complex types only).

    The one place that says so: ``requires_grad=True`` on an integer or bool tensor raises "Only Tensors of
    floating point and complex dtype can require gradients", and an op's integer outputs get no ``grad_fn``
    (the recording of a node reads :data:`DIFFERENTIABLE_KINDS` directly: it runs for every op).
    """
    return np_dtype.kind in DIFFERENTIABLE_KINDS


def _by_name(name: str) -> dtype:
    for d in _ALL:
        if d.name == name:
            return d
    raise TypeError(f"unknown dtype {name!r}")


def from_numpy_dtype(np_dtype) -> dtype:
    """Map a NumPy dtype onto a leafkit dtype, or raise ``TypeError``."""
    d = _FROM_NP.get(np_dtype)
    if d is not None:
        return d
    nd = np.dtype(np_dtype)
    try:
        return _FROM_NP[nd]
    except KeyError:
        if nd.kind in "iu":
            return int64
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{nd.name}. The only supported types are: "
            "float64, float32, float16, int64, int32, and bool."
        ) from None


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (``torch.float32`` by default)."""
    return _DEFAULT[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32, float64 or float16, as PyTorch 2.13 accepts; leafkit has no
    bfloat16): the dtype of tensors made from Python floats.

    Raises
    ------
    TypeError
        "only floating-point types are supported as the default type".
    """
    if d not in (float32, float64, float16):
        raise TypeError("only floating-point types are supported as the default type")
    _DEFAULT[0] = d
