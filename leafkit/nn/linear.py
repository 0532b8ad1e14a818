"""Layers: ``Linear``, ``Sequential``, and the activations ``ReLU``, ``Tanh``, ``Sigmoid``."""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from itertools import islice

from .._creation import empty
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["Linear", "Sequential", "ReLU", "Tanh", "Sigmoid", "Identity"]


class Linear(Module):
    """``y = x @ weight.T + bias`` (``torch.nn.Linear``).

    Parameters
    ----------
    in_features, out_features : int
        Sizes of each input and output sample.
    bias : bool
        Learn an additive bias (default True).
    device : str or leafkit.device, optional
        Where the parameters live (default ``cpu``).
    dtype : leafkit.dtype, optional
        Default float32.

    Attributes
    ----------
    weight : Parameter
        Shape ``(out_features, in_features)``.
    bias : Parameter or None
        Shape ``(out_features,)``.

    Notes
    -----
    PyTorch's default initialisation: weight and bias drawn uniformly from
    ``[-1/sqrt(in_features), 1/sqrt(in_features)]`` (what
    ``kaiming_uniform_(a=sqrt(5))`` gives for the weight), in place under
    ``no_grad`` so both stay leaves.  The numbers come from leafkit's
    generator (seed it with ``leafkit.manual_seed``), not PyTorch's stream.

    Shapes: input ``(*, in_features)``, output ``(*, out_features)``; the
    graph is :func:`leafkit.nn.functional.linear`'s (``AddmmBackward0`` for a
    batch).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()

        for name, v in (("out_features", out_features), ("in_features", in_features)):
            if not isinstance(v, int) or isinstance(v, bool):
                if name == "out_features":  # PyTorch's messages for empty((out_features, in_features))
                    raise TypeError(
                        f"empty(): argument 'size' (position 1) must be tuple of ints, but found element "
                        f"of type {type(v).__name__} at pos 0"
                    )
                raise TypeError(
                    f"empty(): argument 'size' failed to unpack the object at pos 2 with error \"type must "
                    f'be tuple of ints,but got {type(v).__name__}"'
                )
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight and bias uniformly from ``±1/sqrt(in_features)`` (PyTorch's default), under ``no_grad``."""
        fan_in = self.in_features
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        with no_grad():
            if self.weight.numel():
                self.weight.uniform_(-bound, bound)
            if self.bias is not None and self.bias.numel():
                self.bias.uniform_(-bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        """``F.linear(input, weight, bias)``: shape ``(*, in_features)`` to ``(*, out_features)``."""
        params = self._parameters
        if self.__class__ is Linear and "weight" in params and "bias" in params:
            # self.weight and self.bias without Module.__getattr__'s detour (they are not in the instance's
            # __dict__); a subclass (a parametrization's property) or a weight moved out of _parameters (pruning,
            # weight norm) takes the attributes as they are
            return F.linear(input, params["weight"], params["bias"])
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """``in_features=64, out_features=128, bias=True``, as PyTorch prints it."""
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Sequential(Module):
    """Modules applied one after another (``torch.nn.Sequential``).

    Build it from modules (named ``"0"``, ``"1"``, ...) or from an
    ``OrderedDict`` of names to modules.  ``seq[i]`` is a layer,
    ``seq[a:b]`` a new Sequential of the same layers, ``len(seq)`` the
    number of layers.

    Raises
    ------
    IndexError
        "index 5 is out of range" for a bad index.
    TypeError
        When an element is not a Module.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return next(islice(iterator, idx % size, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx, module) -> None:
        key = self._item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._item_by_idx(self._modules.keys(), idx))
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):
        """Each layer's output is the next one's input; returns the last output."""
        for module in self._modules.values():
            input = module(input)
        return input


class ReLU(Module):
    """``max(x, 0)`` elementwise (``ReluBackward0``); ``inplace=True`` writes into the input."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """Hyperbolic tangent elementwise (``TanhBackward0``)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Sigmoid(Module):
    """Logistic sigmoid elementwise (``SigmoidBackward0``)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Identity(Module):
    """Returns its input unchanged (no node)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input
