"""Type promotion as functions: ``torch.result_type``, ``torch.promote_types``, ``torch.can_cast``.

PyTorch's rules, which every binary op follows (:func:`._base.result_type`):
the categories rank bool < integer < floating; a higher category wins
outright (``int64`` with ``float16`` gives ``float16``, where NumPy gives
``float64``); within a category the wider type wins (``uint8`` with ``int8``
gives ``int16``).  Python numbers and 0-d tensors only raise the category
(``int_tensor * 2.5`` is ``float32``, the default dtype; ``uint8_tensor + 300``
stays ``uint8``, wrapping around as PyTorch's does).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._base import _KIND_RANK, is_number
from ._base import result_type as _array_result_type
from ._registry import public

_RESULT_TYPE_USAGE = (
    " * (Tensor tensor, Tensor other)\n * (Number scalar, Tensor tensor)\n"
    " * (Tensor tensor, Number other)\n * (Number scalar1, Number scalar2)\n"
)


def _check_dtype(fn, name, pos, d):
    if not isinstance(d, _dtype.dtype):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be torch.dtype, not {type(d).__name__}")


def _number_rank(x):
    return 0 if isinstance(x, (bool, np.bool_)) else (1 if isinstance(x, numbers.Integral) else 2)


@public("result_type", method=False)
def result_type(tensor, other):
    """The dtype an arithmetic op on ``tensor`` and ``other`` returns, by PyTorch's promotion rules.

    Parameters
    ----------
    tensor, other : Tensor or number
        Tensors (a 0-d tensor counts less than one with dimensions, unless
        its category is higher) or Python numbers (bool, int, float; they
        only raise the category: a float gives the default dtype).

    Returns
    -------
    leafkit.dtype
        E.g. ``torch.result_type(torch.tensor([1]), 2.5)`` is ``torch.float32``.

    Raises
    ------
    TypeError
        An argument that is neither a tensor nor a number (PyTorch's
        "received an invalid combination of arguments" message), or a
        complex number (leafkit has no complex dtypes).
    """
    args = (tensor, other)
    if not all(isinstance(a, Tensor) or is_number(a) for a in args):
        got = ", ".join(type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args)
        raise TypeError(
            f"result_type() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n{_RESULT_TYPE_USAGE}"
        )
    if not isinstance(tensor, Tensor) and not isinstance(other, Tensor):
        rank = max(_number_rank(tensor), _number_rank(other))
        return (_dtype.bool, _dtype.int64, _dtype.get_default_dtype())[rank]
    a = tensor._data if isinstance(tensor, Tensor) else tensor
    b = other._data if isinstance(other, Tensor) else other
    return _dtype.from_numpy_dtype(np.dtype(_array_result_type(a, b)))


@public("promote_types", method=False)
def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing their category.

    A higher category (bool < integer < floating) wins outright:
    ``promote_types(torch.int32, torch.float16)`` is ``torch.float16`` (NumPy
    says ``float64``); within a category the wider type wins, and ``uint8``
    with ``int8`` gives ``int16``.

    Raises
    ------
    TypeError
        An argument that is not a dtype ("promote_types(): argument 'type2'
        (position 2) must be torch.dtype, not str").
    """
    _check_dtype("promote_types", "type1", 1, type1)
    _check_dtype("promote_types", "type2", 2, type2)
    if type1 is type2:
        return type1
    k1, k2 = _KIND_RANK[type1.np.kind], _KIND_RANK[type2.np.kind]
    if k1 != k2:
        return type1 if k1 > k2 else type2
    return _dtype.from_numpy_dtype(np.promote_types(type1.np, type2.np))


@public("can_cast", method=False)
def can_cast(from_, to):
    """Whether PyTorch's casting rules let an in-place op write a ``from_`` result into a ``to`` tensor.

    Not allowed: floating to integer (``torch.can_cast(torch.float32,
    torch.int32)`` is False) and anything but bool to bool; everything else
    is (narrowing within a category too: ``can_cast(torch.int64, torch.int8)``
    is True).

    Raises
    ------
    TypeError
        An argument that is not a dtype.
    """
    _check_dtype("can_cast", "from", 1, from_)
    _check_dtype("can_cast", "to", 2, to)
    if from_.is_floating_point and not to.is_floating_point and to is not _dtype.bool:
        return False
    if from_ is not _dtype.bool and to is _dtype.bool:
        return False
    return True
