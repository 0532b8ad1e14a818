"""Activation modules: ``GELU``, ``SiLU``, ``ELU``, ``LeakyReLU``, ``Softplus``, ``Hardtanh``, ``ReLU6``,
``LogSigmoid`` (``torch.nn``'s, with PyTorch's arguments and reprs).

Each is a thin wrapper of :mod:`leafkit.nn.functional`: no parameters, no
buffers; the graph is the functional's (``GeluBackward0`` ...).  ``ReLU``,
``Tanh`` and ``Sigmoid`` live in :mod:`leafkit.nn.linear`.
"""

from __future__ import annotations

import warnings

from .._creation import empty
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import functional as F
from .module import Module
from .parameter import Parameter

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


# -- issue 18: softmax family and more activations ---------------------------------------------------------------------
class _DimModule(Module):
    """A module of one optional ``dim`` (``Softmax(dim=1)``); ``dim=None`` warns at call time, as PyTorch."""

    _fn = None

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """``softmax(x, dim)``: each slice along ``dim`` becomes a distribution (``SoftmaxBackward0``).

    Repr ``Softmax(dim=1)``; without ``dim`` the call warns (PyTorch's "Implicit dimension choice for softmax has
    been deprecated") and picks 0 for 0-, 1- and 3-D input, 1 otherwise.
    """

    _fn = staticmethod(F.softmax)


class LogSoftmax(_DimModule):
    """``log_softmax(x, dim)`` (``LogSoftmaxBackward0``); pair it with ``NLLLoss``."""

    _fn = staticmethod(F.log_softmax)


class Softmin(_DimModule):
    """``softmax(-x, dim)`` (``SoftmaxBackward0`` over ``NegBackward0``)."""

    _fn = staticmethod(F.softmin)


class _Plain(Module):
    """An activation without arguments (``Softsign()``)."""

    _fn = None

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input)


class _Inplace(Module):
    """An activation with only ``inplace`` (``Hardswish(inplace=True)``)."""

    _fn = None

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softsign(_Plain):
    """``x / (1 + |x|)``."""

    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    """``x - tanh(x)``."""

    _fn = staticmethod(F.tanhshrink)


class SELU(_Inplace):
    """SELU, ``scale * elu(x, alpha)`` (``EluBackward0``); repr ``SELU()``."""

    _fn = staticmethod(F.selu)


class Mish(_Inplace):
    """Mish, ``x * tanh(softplus(x))`` (``MishBackward0``)."""

    _fn = staticmethod(F.mish)


class Hardswish(_Inplace):
    """Hardswish, ``x * relu6(x + 3) / 6`` (``HardswishBackward0``)."""

    _fn = staticmethod(F.hardswish)


class Hardsigmoid(_Inplace):
    """Hardsigmoid, ``relu6(x + 3) / 6`` (``HardsigmoidBackward0``)."""

    _fn = staticmethod(F.hardsigmoid)


class CELU(Module):
    """CELU (``CeluBackward0``); repr ``CELU(alpha=1.0)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """GLU: the first half of ``x`` along ``dim`` times the sigmoid of the second (``GluBackward0``)."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softshrink(Module):
    """Soft shrinkage by ``lambd`` (``SoftshrinkBackward0``); repr ``Softshrink(0.5)``."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """Hard shrinkage by ``lambd`` (``HardshrinkBackward0``); repr ``Hardshrink(0.5)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """``value`` where ``x <= threshold``, ``x`` elsewhere (``ThresholdBackward0``).

    Repr ``Threshold(threshold=0.1, value=20)``.
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """PReLU with a learned slope: one (default) or one per channel (``num_parameters=C``), initialised to
    ``init`` (0.25); the node is ``PreluKernelBackward0``.

    Attributes
    ----------
    weight : Parameter
        Shape ``(num_parameters,)``.
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


__all__ += [
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "Softsign",
    "Tanhshrink",
    "SELU",
    "CELU",
    "Mish",
    "Hardswish",
    "Hardsigmoid",
    "GLU",
    "Softshrink",
    "Hardshrink",
    "Threshold",
    "PReLU",
]
