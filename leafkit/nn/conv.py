"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d`` (``torch.nn``).

Each holds a ``weight`` of shape ``(out_channels, in_channels / groups,
*kernel_size)`` (transposed: ``(in_channels, out_channels / groups,
*kernel_size)``) and an optional ``bias`` of ``out_channels``, both
:class:`~leafkit.nn.Parameter` leaves, and calls
:mod:`leafkit.nn.functional`'s convolution in ``forward``: the output's
``grad_fn`` is ``ConvolutionBackward0``, whose ``next_functions`` lead to
the input and to the two parameters' ``AccumulateGrad`` nodes.

They print as PyTorch prints them (``Conv2d(1, 6, kernel_size=(5, 5),
stride=(1, 1))``), keep PyTorch's attributes (``kernel_size``, ``stride``,
``padding``, ``dilation``, ``groups``, ``padding_mode``, ``transposed``,
``output_padding``, ``_reversed_padding_repeated_twice``) and start from
PyTorch's initialisation: ``kaiming_uniform_(weight, a=sqrt(5))``, i.e.
uniform on ``±1/sqrt(fan_in)`` with ``fan_in = in_channels / groups *
prod(kernel_size)``, and the bias uniform on the same bound, drawn from
leafkit's generator (``leafkit.manual_seed``).
"""

from __future__ import annotations

import math

from .._creation import empty
from .._tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]


def _ntuple(v, n):
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """What the convolution layers share: checks, parameters, initialisation and ``extra_repr``."""

    _n = 2

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        bias,
        padding_mode,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):  # what F.pad would add before and after each dim, last dim first
            pads = []
            for d, k in reversed(list(zip(dilation, kernel_size))):
                total = d * (k - 1) if padding == "same" else 0
                pads += [total // 2, total - total // 2]
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = tuple(p for p in reversed(padding) for _ in range(2))
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's initialisation: ``kaiming_uniform_(weight, a=sqrt(5))`` and the bias uniform on
        ``±1/sqrt(fan_in)`` (zero bound for ``fan_in == 0``), in place under ``no_grad``."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        """``1, 6, kernel_size=(5, 5), stride=(1, 1)``, then whatever differs from the defaults, as PyTorch prints."""
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _pad_mode(self, input):
        return F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)


_CONV_DOC = """Applies a {n}-D convolution over an input of ``in_channels`` channels (``torch.nn.Conv{n}d``).

    Parameters
    ----------
    in_channels, out_channels : int
        Channels of the input and of the output (both divisible by ``groups``).
    kernel_size : int or tuple
        The window, one size per spatial dim.
    stride, dilation : int or tuple
        Default 1.
    padding : int, tuple, ``'valid'`` or ``'same'``
        Zeros on both sides of each spatial dim (default 0); ``'same'``
        keeps the spatial size and needs stride 1.
    groups : int
        Independent groups of channels (default 1).
    bias : bool
        Learn a bias (default True).
    padding_mode : str
        ``'zeros'``.  PyTorch's ``'reflect'``, ``'replicate'`` and
        ``'circular'`` are accepted here but their ``F.pad`` modes are not
        in leafkit: ``forward`` then raises ``NotImplementedError``.
    device, dtype : optional
        Where and of what dtype the parameters are (default cpu, float32).

    Shapes: input ``(N, C_in, {shape})`` or unbatched ``(C_in, {shape})``,
    output ``(N, C_out, {oshape})``; see :func:`leafkit.nn.functional.conv{n}d`.

    Raises
    ------
    ValueError
        "groups must be a positive integer"; "in_channels must be divisible
        by groups"; "out_channels must be divisible by groups"; "Invalid
        padding string 'foo', should be one of {{'valid', 'same'}}";
        "padding='same' is not supported for strided convolutions";
        "padding_mode must be one of {{...}}, but got padding_mode='foo'".
    """


class Conv1d(_ConvNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, 1),
            _ntuple(stride, 1),
            padding if isinstance(padding, str) else _ntuple(padding, 1),
            _ntuple(dilation, 1),
            False,
            (0,),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def forward(self, input: Tensor) -> Tensor:
        """``F.conv1d(input, weight, bias, ...)`` (``ConvolutionBackward0``)."""
        if self.padding_mode != "zeros":
            return F.conv1d(
                self._pad_mode(input), self.weight, self.bias, self.stride, (0,), self.dilation, self.groups
            )
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, 2),
            _ntuple(stride, 2),
            padding if isinstance(padding, str) else _ntuple(padding, 2),
            _ntuple(dilation, 2),
            False,
            (0, 0),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def forward(self, input: Tensor) -> Tensor:
        """``F.conv2d(input, weight, bias, ...)`` (``ConvolutionBackward0``)."""
        if self.padding_mode != "zeros":
            return F.conv2d(
                self._pad_mode(input), self.weight, self.bias, self.stride, (0, 0), self.dilation, self.groups
            )
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


Conv1d.__doc__ = _CONV_DOC.format(n=1, shape="L", oshape="L_out")
Conv2d.__doc__ = _CONV_DOC.format(n=2, shape="H, W", oshape="H_out, W_out")


class _ConvTransposeNd(_ConvNd):
    def __init__(
        self,
        n,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        output_padding,
        groups,
        bias,
        dilation,
        padding_mode,
        device,
        dtype,
    ):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, n),
            _ntuple(stride, n),
            _ntuple(padding, n),
            _ntuple(dilation, n),
            True,
            _ntuple(output_padding, n),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(self, input, output_size, num_spatial_dims):
        """The output padding that gives ``output_size`` (PyTorch's check of the sizes it can reach)."""
        if output_size is None:
            return self.output_padding
        has_batch = input.dim() == num_spatial_dims + 2
        output_size = list(output_size)
        if len(output_size) == num_spatial_dims + (2 if has_batch else 1):
            output_size = output_size[-num_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                f"{num_spatial_dims} or {num_spatial_dims + (2 if has_batch else 1)} elements "
                f"(got {len(output_size)})"
            )
        lo, hi = [], []
        for d in range(num_spatial_dims):
            dim_size = (
                (input.size(d + (2 if has_batch else 1)) - 1) * self.stride[d]
                - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1)
                + 1
            )
            lo.append(dim_size)
            hi.append(dim_size + self.stride[d] - 1)
        for i in range(len(output_size)):
            if not lo[i] <= output_size[i] <= hi[i]:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {lo} to {hi} (for an "
                    f"input of {input.size()[2:] if has_batch else input.size()[1:]})"
                )
        return tuple(output_size[d] - lo[d] for d in range(num_spatial_dims))


_CONV_T_DOC = """Applies a {n}-D transposed convolution (``torch.nn.ConvTranspose{n}d``): the gradient of
    ``Conv{n}d`` with respect to its input, as a layer (upsampling).

    ``weight`` has shape ``(in_channels, out_channels / groups,
    *kernel_size)``; the output size is ``(S - 1) * stride - 2 * padding +
    dilation * (k - 1) + output_padding + 1`` per spatial dim, or the
    ``output_size`` given to ``forward`` (one of the ``stride`` sizes the
    input allows; ValueError "requested an output size of ..." otherwise).
    Only ``padding_mode='zeros'`` (ValueError otherwise, as PyTorch).  The
    node is ``ConvolutionBackward0`` with ``_saved_transposed=True``.
    """


class ConvTranspose1d(_ConvTransposeNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            1,
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            bias,
            dilation,
            padding_mode,
            device,
            dtype,
        )

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        """``F.conv_transpose1d(input, weight, bias, ...)``; ``output_size`` picks the output padding."""
        output_padding = self._output_padding(input, output_size, 1)
        return F.conv_transpose1d(
            input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups, self.dilation
        )


class ConvTranspose2d(_ConvTransposeNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            2,
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            bias,
            dilation,
            padding_mode,
            device,
            dtype,
        )

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        """``F.conv_transpose2d(input, weight, bias, ...)``; ``output_size`` picks the output padding."""
        output_padding = self._output_padding(input, output_size, 2)
        return F.conv_transpose2d(
            input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups, self.dilation
        )


ConvTranspose1d.__doc__ = _CONV_T_DOC.format(n=1)
ConvTranspose2d.__doc__ = _CONV_T_DOC.format(n=2)
