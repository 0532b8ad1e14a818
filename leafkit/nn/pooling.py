"""Pooling layers: ``MaxPool1d``, ``MaxPool2d``, ``AvgPool1d``, ``AvgPool2d``, ``AdaptiveAvgPool1d``,
``AdaptiveAvgPool2d`` (``torch.nn``).

They hold no parameters; ``forward`` calls the function of the same name in
:mod:`leafkit.nn.functional` (``MaxPool2DWithIndicesBackward0``,
``AvgPool2DBackward0``, ``AdaptiveAvgPool2DBackward0``), and they print
as PyTorch prints them: ``MaxPool2d(kernel_size=2, stride=2, padding=0,
dilation=1, ceil_mode=False)``.  ``stride`` defaults to ``kernel_size``.
"""

from __future__ import annotations

from .._tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """``kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False``, the values as given."""
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling (``torch.nn.MaxPool1d``): :func:`leafkit.nn.functional.max_pool1d` on ``(N, C, L)`` or
    ``(C, L)``.  ``return_indices=True`` makes ``forward`` return ``(values, indices)``."""

    def forward(self, input: Tensor):
        return F.max_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices
        )


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling (``torch.nn.MaxPool2d``): the largest element of each window.

    Parameters
    ----------
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Default ``kernel_size``.
    padding, dilation : int or (int, int)
    return_indices : bool
        ``forward`` returns ``(values, indices)`` (int64 positions within
        each ``H * W`` plane).
    ceil_mode : bool
        Round the output size up.

    Shapes: ``(N, C, H, W)`` or ``(C, H, W)`` in, ``(..., H_out, W_out)``
    out; graph and errors as :func:`leafkit.nn.functional.max_pool2d`
    (``MaxPool2DWithIndicesBackward0``).
    """

    def forward(self, input: Tensor):
        return F.max_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices
        )


def _single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool1d(Module):
    """1-D average pooling (``torch.nn.AvgPool1d``): :func:`leafkit.nn.functional.avg_pool1d`.  Prints its sizes
    as one-element tuples, as PyTorch's: ``AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """2-D average pooling (``torch.nn.AvgPool2d``): the mean of each window (``AvgPool2DBackward0``).

    Parameters as :func:`leafkit.nn.functional.avg_pool2d` (``kernel_size``,
    ``stride`` defaulting to it, ``padding``, ``ceil_mode``,
    ``count_include_pad``, ``divisor_override``).  Prints
    ``AvgPool2d(kernel_size=2, stride=2, padding=0)``.
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """1-D adaptive average pooling to ``output_size`` (``torch.nn.AdaptiveAvgPool1d``)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """2-D adaptive average pooling to ``output_size`` (``torch.nn.AdaptiveAvgPool2d``): an int, or a pair in
    which ``None`` keeps the input's size.  ``AdaptiveAvgPool2d(1)`` (the global average pooling closing many
    CNNs) is a mean over H and W (``MeanBackward1``), as in PyTorch; other sizes give
    ``AdaptiveAvgPool2DBackward0``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)
