"""Activation modules: ``GELU``, ``SiLU``, ``ELU``, ``LeakyReLU``, ``Softplus``, ``Hardtanh``, ``ReLU6``,
``LogSigmoid`` (``torch.nn``'s, with PyTorch's arguments and reprs).

Each is a thin wrapper of :mod:`leafkit.nn.functional`: no parameters, no
buffers; the graph is the functional's (``GeluBackward0`` ...).  ``ReLU``,
``Tanh`` and ``Sigmoid`` live in :mod:`leafkit.nn.linear`.
"""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["GELU", "SiLU", "ELU", "LeakyReLU", "Softplus", "Hardtanh", "ReLU6", "LogSigmoid"]


class GELU(Module):
    """GELU, ``x * Φ(x)`` elementwise (``GeluBackward0``); ``approximate='tanh'`` uses PyTorch's tanh formula.

    Shapes: any input shape, same output shape; floating dtypes.  Repr:
    ``GELU(approximate='none')``.
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """SiLU (swish), ``x * sigmoid(x)`` elementwise (``SiluBackward0``); ``inplace=True`` writes into the input."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ELU(Module):
    """ELU: ``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise (``EluBackward0``; ``EluBackward1`` in place).

    Repr: ``ELU(alpha=1.0)`` (``, inplace=True`` when set).
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class LeakyReLU(Module):
    """``x`` for x > 0, ``negative_slope * x`` otherwise (``LeakyReluBackward0``; ``LeakyReluBackward1`` in place).

    Repr: ``LeakyReLU(negative_slope=0.01)`` (``, inplace=True`` when set).
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold`` (``SoftplusBackward0``).

    Repr: ``Softplus(beta=1.0, threshold=20.0)``.
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """The input clamped to ``[min_val, max_val]`` (``HardtanhBackward0``).

    Parameters
    ----------
    min_val, max_val : float
        The limits (default -1 and 1).
    inplace : bool
        Write into the input.
    min_value, max_value : float, optional
        PyTorch's deprecated spellings (a FutureWarning).

    Raises
    ------
    AssertionError
        ``max_val <= min_val`` ("max_val (1.0) must be greater than min_val (2.0)"), as PyTorch's.
    """

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ):
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning, stacklevel=2
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning, stacklevel=2
            )
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``: a :class:`Hardtanh` from 0 to 6 (``HardtanhBackward0``). Repr: ``ReLU6()``."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LogSigmoid(Module):
    """``log(sigmoid(x))``, computed stably (``LogSigmoidBackward0``)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)
