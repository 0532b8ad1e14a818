"""``leafkit.nn.init``: fill parameters in place, as ``torch.nn.init`` does.

Every function changes its tensor in place under ``no_grad`` and returns it,
so a :class:`~leafkit.nn.Parameter` stays a leaf that requires grad (its
``_version`` goes up by one; no ``grad_fn`` appears).  The random ones draw
from leafkit's generator (:func:`leafkit.manual_seed`, or ``generator=``):
the same seed gives the same numbers on every run, not PyTorch's numbers.

``xavier_*`` and ``kaiming_*`` scale the spread by the tensor's fans, as
PyTorch computes them: for a weight of shape ``(out, in, *k)``,
``fan_in = in * prod(k)`` and ``fan_out = out * prod(k)`` (a ``Linear``'s
weight ``(out_features, in_features)`` has ``fan_in = in_features``)::

    xavier_uniform_:   U(-a, a),     a   = gain * sqrt(6 / (fan_in + fan_out))
    xavier_normal_:    N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out))
    kaiming_uniform_:  U(-b, b),     b   = gain * sqrt(3 / fan)
    kaiming_normal_:   N(0, std**2), std = gain / sqrt(fan)

with ``fan`` chosen by ``mode`` and ``gain = calculate_gain(nonlinearity, a)``.
``nn.Linear``'s own initialisation is ``kaiming_uniform_(w, a=sqrt(5))``,
uniform on ``±1/sqrt(in_features)``.
"""

from __future__ import annotations

import math
import warnings

from .._creation import eye
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table).

    ======================  ===================================
    nonlinearity            gain
    ======================  ===================================
    linear, conv*, sigmoid  1
    tanh                    5/3
    relu                    sqrt(2)
    leaky_relu              sqrt(2 / (1 + negative_slope**2))
    selu                    3/4
    ======================  ===================================

    Parameters
    ----------
    nonlinearity : str
        The name, as in the table.
    param : int or float, optional
        ``leaky_relu``'s negative slope (default 0.01).

    Raises
    ------
    ValueError
        "Unsupported nonlinearity foo"; "negative_slope True not a valid
        number" (a ``param`` that is not an int or float).
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of shape ``(out, in, *kernel)``.

    Raises ``ValueError`` for fewer than 2 dimensions ("Fan in and fan out can
    not be computed for tensor with fewer than 2 dimensions")."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` with samples of U(a, b), in place under ``no_grad``; returns ``tensor``."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2), in place under ``no_grad``; returns ``tensor``."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``, in place under ``no_grad``; returns ``tensor``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with 1, in place under ``no_grad``; returns ``tensor``."""
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with 0, in place under ``no_grad``; returns ``tensor``."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D ``tensor`` with the identity matrix (ones on the diagonal), in place under ``no_grad``.

    Raises ``ValueError`` for another number of dimensions ("Only tensors with 2 dimensions are supported")."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot initialisation: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``; returns ``tensor``.

    Raises ``ValueError`` for a tensor of fewer than 2 dimensions."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot initialisation: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``; returns ``tensor``.

    Raises ``ValueError`` for a tensor of fewer than 2 dimensions."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
) -> Tensor:
    """He initialisation: U(-b, b) with ``b = gain * sqrt(3 / fan)``; returns ``tensor``.

    Parameters
    ----------
    tensor : Tensor
        At least 2-D (``(out, in, *kernel)``).
    a : float
        The negative slope of the ``leaky_relu`` after this layer (the gain's ``param``).
    mode : {"fan_in", "fan_out"}
        ``fan_in`` keeps the forward pass's variance, ``fan_out`` the backward pass's.
    nonlinearity : str
        As for :func:`calculate_gain` (``"relu"`` or ``"leaky_relu"`` recommended).

    Raises
    ------
    ValueError
        Fewer than 2 dimensions; an unknown ``mode`` ("Mode fan_avg not
        supported, please use one of ['fan_in', 'fan_out']") or nonlinearity.

    A tensor with no elements is returned unchanged, with PyTorch's
    UserWarning "Initializing zero-element tensors is a no-op".
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
) -> Tensor:
    """He initialisation: N(0, std**2) with ``std = gain / sqrt(fan)``; returns ``tensor``.

    Arguments, errors and the zero-element warning as for :func:`kaiming_uniform_`.
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)
