"""The convolutional part of ``leafkit.nn.functional``: convolution, padding, pooling and channel dropout.

================================================  =====================================================
call                                              ``grad_fn`` of the result
================================================  =====================================================
``conv1d(x, w, b)``, ``conv2d(x, w, b)``          ``ConvolutionBackward0`` (``ConstantPadNdBackward0``
                                                  under it for ``padding='same'`` with an odd total)
``conv_transpose1d``, ``conv_transpose2d``        ``ConvolutionBackward0`` (``_saved_transposed=True``)
``pad(x, (1, 2))``                                ``ConstantPadNdBackward0``
``max_pool2d(x, 2)``                              ``MaxPool2DWithIndicesBackward0``
``avg_pool2d(x, 2)``                              ``AvgPool2DBackward0``
``adaptive_avg_pool2d(x, (5, 7))``                ``AdaptiveAvgPool2DBackward0`` (``MeanBackward1`` for
                                                  size 1)
``max_pool1d``, ``avg_pool1d``,                   the 2-D node between ``UnsqueezeBackward0`` and
``adaptive_avg_pool1d``                           ``SqueezeBackward1``
``dropout1d(x)``, ``dropout2d(x)``                ``MulBackward0`` (``x * mask``, one mask value per channel)
================================================  =====================================================

An unbatched input (no N dim) gives ``SqueezeBackward1`` over the node over
``UnsqueezeBackward0`` for the convolutions; the 2-D poolings take it as
it is.  Second derivatives of every node work (``create_graph=True``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype
from .._creation import _finish, zeros
from .._functions import conv as _conv
from .._functions import pooling as _pool
from .._functions._args import checked
from .._functions._base import warn_user
from .._random import _rng
from .._tensor import Tensor

conv1d = _conv.conv1d
conv2d = _conv.conv2d
conv_transpose1d = _conv.conv_transpose1d
conv_transpose2d = _conv.conv_transpose2d
avg_pool1d = _pool.avg_pool1d
adaptive_avg_pool1d = _pool.adaptive_avg_pool1d

__all__ = [
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "pad",
    "max_pool1d",
    "max_pool2d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "dropout1d",
    "dropout2d",
]


# -- padding -----------------------------------------------------------------------------------------------------------
def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims of ``input`` (``torch.nn.functional.pad``).

    Parameters
    ----------
    input : Tensor
        Any shape and dtype.
    pad : sequence of int
        ``(left, right)`` for the last dim, then ``(top, bottom)`` for the one
        before, ...; negative amounts cut elements off.
    mode : str
        ``'constant'`` (``ConstantPadNdBackward0``).  PyTorch's
        ``'reflect'``, ``'replicate'`` and ``'circular'`` are not in leafkit
        and raise ``NotImplementedError`` saying so.
    value : float, optional
        The constant (default 0), cast to ``input``'s dtype.

    Returns
    -------
    Tensor
        A new tensor (even for a zero padding, as in PyTorch).

    Raises
    ------
    RuntimeError
        "Padding length must be divisible by 2"; "Padding length should be
        less than or equal to two times the input dimension ..."; 'Padding
        mode "reflect" doesn't take in value argument'.
    NotImplementedError
        "Unrecognised padding mode foo".
    TypeError
        "pad(): argument 'pad' (position 2) must be tuple of ints, but found
        element of type float at pos 0".
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if isinstance(pad, (int, np.integer)) and not isinstance(pad, bool):
        pad = (pad,)
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError(
                f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                f"{type(p).__name__} at pos {i}"
            )
    if mode == "constant":
        return _conv._pad_checked(input, pad, value)
    if mode in ("reflect", "replicate", "circular"):
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        raise NotImplementedError(
            f"pad(mode='{mode}') is not implemented in leafkit; only mode='constant' is (PyTorch's "
            f"{mode} padding has its own node, which leafkit does not have)"
        )
    raise NotImplementedError(f"Unrecognised padding mode {mode}")


# -- pooling -----------------------------------------------------------------------------------------------------------
def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """2-D max pooling over ``(C, H, W)`` or ``(N, C, H, W)`` (``MaxPool2DWithIndicesBackward0``).

    Parameters
    ----------
    input : Tensor
        3-D or 4-D, any dtype but bool.
    kernel_size : int or (int, int)
        The window.
    stride : int or (int, int), optional
        Step between windows; default ``kernel_size``.
    padding : int or (int, int)
        -inf added on both sides (at most half the effective kernel).
    dilation : int or (int, int)
        Spacing between a window's elements.
    ceil_mode : bool
        Round the output size up: a last window may hang over the end.
    return_indices : bool
        Also return the position of each maximum within its ``H * W``
        plane (int64), as ``nn.MaxUnpool2d`` reads them.

    Returns
    -------
    Tensor or (Tensor, Tensor)
        ``(..., H_out, W_out)`` with ``H_out = (H + 2p - d(k - 1) - 1) // s +
        1`` (rounded up with ``ceil_mode``).  The gradient goes to the first
        maximum of each window in row-major order (a NaN beats everything),
        summed where windows overlap; the node saves the input and the
        indices (``_saved_self``, ``_saved_result1``).

    Raises
    ------
    RuntimeError
        PyTorch's: "max_pool2d: kernel_size must either be a single int, or
        a tuple of two ints"; "non-empty 3D or 4D (batch mode) tensor
        expected for input"; "pad should be at most half of effective kernel
        size ..."; "Given input size: (3x6x6). Calculated output size:
        (3x0x0). Output size is too small" ...
    NotImplementedError
        For bool input.
    """
    name = "max_pool2d_with_indices" if return_indices else "max_pool2d"
    _pool._max_pool2d_types(name, input, kernel_size, stride, padding, dilation, ceil_mode)
    out, indices = _pool.max_pool2d_impl(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False):
    """:func:`max_pool2d` with ``return_indices=True``: ``(values, indices)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """1-D max pooling over ``(C, L)`` or ``(N, C, L)``: :func:`max_pool2d` over a unit dim (``SqueezeBackward1``
    over ``MaxPool2DWithIndicesBackward0`` over ``UnsqueezeBackward0``), with PyTorch's ``max_pool1d`` checks
    ("max_pool1d() padding should be at most half of kernel size, but got padding=2 and kernel_size=2", "max_pool1d()
    Invalid computed output size: 0", ...).  ``return_indices`` gives positions along L."""
    name = "max_pool1d_with_indices" if return_indices else "max_pool1d"
    _pool._max_pool2d_types(name, input, kernel_size, stride, padding, dilation, ceil_mode)
    out, indices = _pool.max_pool1d_impl(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False):
    """:func:`max_pool1d` with ``return_indices=True``: ``(values, indices)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@checked("avg_pool2d", _pool._avg_signature("avg_pool2d"))
def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override=None,
) -> Tensor:
    """2-D average pooling over ``(C, H, W)`` or ``(N, C, H, W)`` (``AvgPool2DBackward0``).

    Parameters
    ----------
    input : Tensor
        3-D or 4-D; floating, or int64 (an integer mean, rounded toward zero).
    kernel_size, stride, padding : int or (int, int)
        As :func:`max_pool2d` (no dilation); the padding is zeros.
    ceil_mode : bool
        Round the output size up.
    count_include_pad : bool
        Count the zeros of the padding in each window's divisor (default).
    divisor_override : int, optional
        Divide every window's sum by this instead.

    Returns
    -------
    Tensor
        ``(..., H_out, W_out)``; each input element's gradient is the sum of
        the gradients of the windows that hold it over their divisors.

    Raises
    ------
    RuntimeError
        "avg_pool2d: kernel_size must either be a single int, or a tuple of
        two ints"; "divisor must be not zero"; the padding and output-size
        errors of :func:`max_pool2d`.
    IndexError
        For a 1-D or 2-D input (PyTorch reads ``size(-3)``).
    NotImplementedError
        '"avg_pool2d" not implemented for 'Int'' (integers other than int64, bool).
    """
    return _pool.avg_pool2d_impl(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, "avg_pool2d"
    )


def _list_with_default(out_size, defaults):
    """PyTorch's reading of an adaptive pooling's output size: ``None`` keeps the input's size."""
    if isinstance(out_size, numbers.Integral) and not isinstance(out_size, bool):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :])]


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average pooling of ``(C, H, W)`` or ``(N, C, H, W)`` to ``output_size`` (``AdaptiveAvgPool2DBackward0``).

    Output row ``i`` averages input rows ``floor(i * H / H_out)`` to
    ``ceil((i + 1) * H / H_out) - 1`` (the same for columns), so the windows
    cover the input whatever the sizes.  ``output_size`` is an int, or a
    pair in which ``None`` keeps the input's size.  Size ``(1, 1)`` is the
    mean over H and W (``MeanBackward1``), as PyTorch computes it.

    Raises
    ------
    RuntimeError
        "adaptive_avg_pool2d: output_size must be 2"; "adaptive_avg_pool2d:
        elements of output_size must be greater than or equal to 0 but
        received {-1, -1}"; "adaptive_avg_pool2d(): Expected 3D or 4D tensor,
        but got [6, 6]"; an empty non-batch dim.
    ValueError
        "Input dimension should be at least 3" (an ``output_size`` longer
        than the input's dims allow).
    NotImplementedError
        For integer and bool input.
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"adaptive_avg_pool2d(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    size = _list_with_default(output_size, tuple(input.shape))
    if not isinstance(size, numbers.Integral):
        for i, v in enumerate(size):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool):
                raise TypeError(
                    f"adaptive_avg_pool2d(): argument 'output_size' failed to unpack the object at pos {i + 1} with "
                    f'error "type must be tuple of ints,but got {type(v).__name__}"'
                )
    return _pool.adaptive_avg_pool2d_impl(input, size)


# -- channel dropout ---------------------------------------------------------------------------------------------------
def _feature_noise(input: Tensor, p: float) -> Tensor:
    """One keep-or-drop value per channel: shape ``(N, C, 1, ...)``, each ``1/(1-p)`` with probability ``1 - p``,
    else ``0`` (PyTorch's ``bernoulli_(1 - p).div_(1 - p)`` on such a tensor); from leafkit's generator.  Tests
    replace this function to give leafkit PyTorch's mask."""
    q = 1.0 - p
    dt = input._data.dtype
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = _rng(None).random(size=shape) < q
    noise = keep.astype(dt) / dt.type(q)
    return _finish(np.asarray(noise), None, input.device, False)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """PyTorch's ``feature_dropout``: ``input * mask`` with one mask value per (sample, channel)."""
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        noise = zeros((), dtype=input.dtype, device=input.device)
    else:
        if input._data.dtype.kind != "f":
            raise RuntimeError(
                f"result type Float can't be cast to the desired output type {_dtype.word(input._data.dtype)}"
            )
        noise = _feature_noise(input, p)
    return input.mul_(noise) if inplace else input * noise


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels with probability ``p`` in training and scale the rest by ``1/(1-p)``
    (``torch.nn.functional.dropout2d``).

    For ``(N, C, H, W)`` or ``(C, H, W)``... as PyTorch reads them: a 4-D
    input gets one mask value per (sample, channel), ``mask`` of shape
    ``(N, C, 1, 1)``; a 3-D input is taken as ``(N, C, L)`` (one value per
    row), with PyTorch's UserWarning that this will change; other ranks warn
    that they are deprecated and drop per element of the first two dims.
    The result is ``input * mask`` (``MulBackward0``, the mask its
    ``_saved_other``); ``input`` itself when not training, ``p == 0`` or
    empty.

    Raises
    ------
    ValueError
        "dropout probability has to be between 0 and 1, but got 1.5".
    RuntimeError
        "Feature dropout requires at least 2 dimensions in the input" (1-D).
    """
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warn_user(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs)."
        )
    if nd == 3:
        warn_user(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead."
        )
    return _feature_dropout(input, p, training, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` with probability ``p`` in training
    (``torch.nn.functional.dropout1d``): ``input * mask`` with ``mask`` of shape ``(N, C, 1)`` (``MulBackward0``);
    an unbatched input goes through ``unsqueeze(0)``/``squeeze(0)``.

    Raises ValueError for ``p`` outside ``[0, 1]`` and RuntimeError "dropout1d: Expected 2D or 3D input, but
    received a 4D input. ..." for other ranks."""
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d exists to provide "
            "channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch "
            "dimension (i.e. 2D or 3D inputs)."
        )
    if nd == 2:
        x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
        out = _feature_dropout(x, p, training, inplace)
        return out.squeeze_(0) if inplace else out.squeeze(0)
    return _feature_dropout(input, p, training, inplace)
