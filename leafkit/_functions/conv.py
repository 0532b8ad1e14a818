"""Convolution and constant padding on NumPy/CuPy arrays: ``convolution``, its backward, ``constant_pad_nd``.

``convolution`` is ATen's op of the same name, the one ``torch.conv1d``,
``torch.conv2d`` and the transposed convolutions all reach::

    convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)

Its node is ``ConvolutionBackward0``, whose saved values are PyTorch's
(``_saved_input``, ``_saved_weight``, ``_saved_stride`` ...,
``_saved_bias_sym_sizes_opt``).  As in ``derivatives.yaml``, one formula
serves input, weight and bias: it calls the op ``convolution_backward``
once for the gradients needed, so a recorded backward pass
(``create_graph=True``) has one ``ConvolutionBackwardBackward0`` node.  That
op's own derivative is PyTorch's ``_convolution_double_backward`` written
with ``F`` ops (convolutions of the incoming gradients, a transposed
convolution for the input, a convolution of the transposed tensors for the
weight), so second and higher derivatives work and show PyTorch's nodes.

The arithmetic is one matrix product per call: the input's sliding windows
are taken as a strided view (``as_strided``, no copy), laid out as columns
("im2col", one copy), and multiplied by the weight reshaped to a matrix,
group by group in one batched ``matmul``.  The gradient of the input runs
the product the other way and adds the columns back onto the (padded)
input, one strided addition per kernel offset ("col2im"): no Python loop
over pixels.  Arrays are NumPy on the CPU and on the simulated GPU, CuPy on
a real one; the code is the same for both.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import _dtype
from .._device import array_module
from ._args import checked, int_tuple
from ._base import warn_user
from ._registry import apply, defop, public

__all__ = ["convolution", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "constant_pad_nd"]


# -- array kernels -----------------------------------------------------------------------------------------------------
def _strided(a, shape, strides):
    """A read-only strided view of ``a`` (NumPy or CuPy)."""
    xp = array_module(a)
    if xp is np:
        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def _out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _batch_last(x, groups, lo, hi):
    """``x`` (N, C, *S) copied to the layout the products use, (G, C/G, *S_padded, N): batch last, so that every
    window row the products read and every strided addition of col2im runs over long contiguous stretches."""
    xp = array_module(x)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    out = xp.zeros((c,) + tuple(s + p + q for s, p, q in zip(sp, lo, hi)) + (n,), dtype=x.dtype)
    out[(slice(None),) + tuple(slice(p, p + s) for s, p in zip(sp, lo))] = xp.moveaxis(x, 0, -1)
    return out.reshape((groups, c // groups) + out.shape[1:])


def _columns(x, groups, ks, stride, padding, dilation, out_sp):
    """im2col: the windows of ``x`` (N, C, *S) as a (G, C/G * prod(ks), prod(out_sp) * N) array (one copy of a
    strided view; batch last, as :func:`_rows`)."""
    xt = _batch_last(x, groups, padding, padding)
    st = xt.strides
    nsp = len(ks)
    shape = xt.shape[:2] + tuple(ks) + tuple(out_sp) + (x.shape[0],)
    strides = (
        st[:2]
        + tuple(st[2 + i] * dilation[i] for i in range(nsp))
        + tuple(st[2 + i] * stride[i] for i in range(nsp))
        + (st[-1],)
    )
    win = _strided(xt, shape, strides)
    return win.reshape(groups, xt.shape[1] * math.prod(ks), -1)


def _rows(g, groups):
    """An output gradient (N, O, *out) as the (G, O/G, prod(out) * N) matrix the products use (one copy)."""
    n, o = g.shape[:2]
    xp = array_module(g)
    r = xp.moveaxis(g.reshape((n, groups, o // groups) + g.shape[2:]), 0, -1)
    return xp.ascontiguousarray(r).reshape(groups, o // groups, -1)


def _batch_first(a, n, channels, sp):
    """(G, C/G, *sp, N) back to a contiguous (N, C, *sp)."""
    xp = array_module(a)
    return xp.ascontiguousarray(xp.moveaxis(a, -1, 0)).reshape((n, channels) + tuple(sp))


def _conv_forward(x, w, stride, padding, dilation, groups):
    """``y[n, o] = sum_c x[n, c] * w[o, c]`` over the windows: (N, C, *S) and (O, C/G, *k) to (N, O, *out)."""
    xp = array_module(x)
    ks = w.shape[2:]
    n = x.shape[0]
    o = w.shape[0]
    out_sp = tuple(_out_size(x.shape[2 + i], ks[i], stride[i], padding[i], dilation[i]) for i in range(len(ks)))
    cols = _columns(x, groups, ks, stride, padding, dilation, out_sp)
    y = xp.matmul(w.reshape(groups, o // groups, -1), cols)  # (G, O/G, L * N): the one product
    return _batch_first(y.reshape((groups, o // groups) + out_sp + (n,)), n, o, out_sp)


def _conv_input_grad(rows, w, n, in_sp, out_sp, stride, padding, dilation, groups):
    """col2im: the gradient (N, C, *in_sp) of a convolution's input from its output gradient ``rows`` (``_rows``):
    one product, then one strided addition per kernel offset."""
    xp = array_module(rows)
    ks = tuple(w.shape[2:])
    nsp = len(ks)
    cg = w.shape[1]
    cols = xp.matmul(w.reshape(groups, w.shape[0] // groups, -1).transpose(0, 2, 1), rows)  # (G, K, L * N)
    cols = cols.reshape((groups, cg) + ks + tuple(out_sp) + (n,))
    full = tuple(in_sp[i] + 2 * padding[i] for i in range(nsp))
    g = xp.zeros((groups, cg) + full + (n,), dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for off in itertools.product(*(range(k) for k in ks)):
        where = tuple(
            slice(off[i] * dilation[i], off[i] * dilation[i] + stride[i] * (out_sp[i] - 1) + 1, stride[i])
            for i in range(nsp)
        )
        g[lead + where] += cols[lead + off]
    g = g[lead + tuple(slice(padding[i], padding[i] + in_sp[i]) for i in range(nsp))]
    return _batch_first(g, n, groups * cg, in_sp)


def _conv_weight_grad(x, rows, ks, out_sp, stride, padding, dilation, groups):
    """The gradient (O, C/G, *ks) of a convolution's weight: output gradient ``rows`` times the input's columns."""
    xp = array_module(x)
    cols = _columns(x, groups, ks, stride, padding, dilation, out_sp)
    gw = xp.matmul(rows, cols.transpose(0, 2, 1))  # (G, O/G, K)
    return gw.reshape((groups * rows.shape[1], x.shape[1] // groups) + tuple(ks))


def _transposed_size(in_sp, ks, stride, padding, dilation, output_padding):
    return tuple(
        (in_sp[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ks[i] - 1) + output_padding[i] + 1
        for i in range(len(ks))
    )


# -- the ops -----------------------------------------------------------------------------------------------------------
def _full(v, nsp):
    """A parameter as given (one value for every spatial dim, or one each) as one value per spatial dim."""
    v = tuple(v)
    return v * nsp if len(v) == 1 else v


def _convolution(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, bias_sym_sizes_opt=None
):
    nsp = weight.ndim - 2
    stride, padding, dilation = _full(stride, nsp), _full(padding, nsp), _full(dilation, nsp)
    output_padding = _full(output_padding, nsp)
    if transposed:
        sp = _transposed_size(input.shape[2:], weight.shape[2:], stride, padding, dilation, output_padding)
        out = _conv_input_grad(
            _rows(input, groups), weight, input.shape[0], sp, input.shape[2:], stride, padding, dilation, groups
        )
    else:
        out = _conv_forward(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * nsp)
    return out


def _zeros(xp, shape, dtype):
    """Zeros that cost nothing (a broadcast view): the output of a gradient nobody asked for."""
    return xp.broadcast_to(xp.zeros((), dtype=dtype), tuple(shape))


def _convolution_backward(
    grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask
):
    """(grad_input, grad_weight, grad_bias); an output that ``output_mask`` leaves out comes back as zeros."""
    xp = array_module(grad_output)
    n = input.shape[0]
    ks = weight.shape[2:]
    stride, padding, dilation = _full(stride, len(ks)), _full(padding, len(ks)), _full(dilation, len(ks))
    gi = gw = gb = None
    if not transposed:
        if output_mask[0] or output_mask[1]:
            rows = _rows(grad_output, groups)
            if output_mask[0]:
                gi = _conv_input_grad(
                    rows, weight, n, input.shape[2:], grad_output.shape[2:], stride, padding, dilation, groups
                )
            if output_mask[1]:
                gw = _conv_weight_grad(input, rows, ks, grad_output.shape[2:], stride, padding, dilation, groups)
    else:  # the transposed convolution is the input gradient of a plain one: the roles turn round
        if output_mask[0]:
            gi = _conv_forward(grad_output, weight, stride, padding, dilation, groups)
        if output_mask[1]:
            gw = _conv_weight_grad(
                grad_output, _rows(input, groups), ks, input.shape[2:], stride, padding, dilation, groups
            )
    if output_mask[2]:
        gb = grad_output.sum(axis=(0,) + tuple(range(2, grad_output.ndim)))
    dt = grad_output.dtype
    return (
        gi if gi is not None else _zeros(xp, input.shape, dt),
        gw if gw is not None else _zeros(xp, weight.shape, dt),
        gb if gb is not None else _zeros(xp, (grad_output.shape[1],), dt),
    )


def _conv_grads(
    F,
    grad,
    input,
    weight,
    bias_sym_sizes_opt,
    stride,
    padding,
    dilation,
    transposed,
    output_padding,
    groups,
    grad_input_mask,
):
    return F.convolution_backward(
        grad,
        input,
        weight,
        bias_sym_sizes_opt,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        tuple(grad_input_mask),
    )


convolution_spec = defop(
    "convolution",
    _convolution,
    inputs=("input", "weight", "bias"),
    doc="N-d convolution, plain or transposed, with groups (``ConvolutionBackward0``); see :mod:`._functions.conv`.",
    **{"input, weight, bias": _conv_grads},
)


# -- second derivatives: PyTorch's _convolution_double_backward, in F ops ----------------------------------------------
def _double_weight(F, ggI, gO, weight, stride, padding, dilation, transposed, groups):
    """The weight term: a convolution of the transposed (batch-as-channel) tensors, stride and dilation swapped,
    one per group, narrowed to the kernel's size.

    PyTorch 2.13 hands a transposed convolution's ``output_padding`` on to this plain convolution and so raises
    "output_padding is not supported for non-transposed convolutions" when the third derivative of a transposed
    convolution with ``output_padding`` reaches it; leafkit gives it no output padding and computes the derivative.
    """
    nsp = len(stride)
    gOt = F.transpose(gO, 0, 1)
    ggIt = F.transpose(ggI, 0, 1)
    a, b = (gOt, ggIt) if transposed else (ggIt, gOt)
    zeros = (0,) * nsp
    if groups == 1:
        gWt = F.convolution(a, b, None, dilation, padding, stride, False, zeros, 1, None)
    else:
        ca, cb = a.shape[0] // groups, b.shape[0] // groups
        parts = [
            F.convolution(
                F.slice(a, 0, g * ca, (g + 1) * ca, 1),
                F.slice(b, 0, g * cb, (g + 1) * cb, 1),
                None,
                dilation,
                padding,
                stride,
                False,
                zeros,
                1,
                None,
            )
            for g in range(groups)
        ]
        gWt = F.cat(1, *parts)
    gW = F.transpose(gWt, 0, 1)
    for i in range(nsp):
        if gW.shape[2 + i] > weight.shape[2 + i]:
            gW = F.slice(gW, 2 + i, 0, weight.shape[2 + i], 1)
    return gW


def _double_input(F, ggW, gO, input, weight, stride, padding, dilation, transposed, output_padding, groups):
    """The input term: ``ggW`` applied to ``gO`` the other way round (a transposed convolution for a plain one)."""
    if transposed:
        return F.convolution(gO, ggW, None, stride, padding, dilation, False, output_padding, groups, None)
    in_sp, out_sp, ks = input.shape[2:], gO.shape[2:], weight.shape[2:]
    extra = tuple(
        in_sp[i] - ((out_sp[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ks[i] - 1) + 1)
        for i in range(len(ks))
    )
    return F.convolution(gO, ggW, None, stride, padding, dilation, True, extra, groups, None)


def _conv_double(
    F,
    grads,
    grad_output,
    input,
    weight,
    stride,
    padding,
    dilation,
    transposed,
    output_padding,
    groups,
    grad_input_mask,
):
    """``grad_output, input, weight: _convolution_double_backward(grads[0], grads[1], grads[2], ...)``."""
    ggI, ggW, ggb = grads
    need_go, need_in, need_w = grad_input_mask
    nsp = len(weight.shape) - 2
    stride, padding, dilation = _full(stride, nsp), _full(padding, nsp), _full(dilation, nsp)
    output_padding = _full(output_padding, nsp)
    ggO = gI = gW = None
    if need_go:
        if ggI is not None:
            ggO = F.convolution(ggI, weight, None, stride, padding, dilation, transposed, output_padding, groups, None)
        if ggW is not None:
            t = F.convolution(input, ggW, None, stride, padding, dilation, transposed, output_padding, groups, None)
            ggO = t if ggO is None else ggO + t
        if ggb is not None:
            shape = [1] * len(grad_output.shape)
            shape[1] = ggb.shape[0]
            t = F.expand(F.view(ggb, tuple(shape)), tuple(grad_output.shape))
            ggO = t if ggO is None else ggO + t
    if need_w and ggI is not None:
        gW = _double_weight(F, ggI, grad_output, weight, stride, padding, dilation, transposed, groups)
    if need_in and ggW is not None:
        gI = _double_input(
            F, ggW, grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups
        )
    return ggO, gI, gW


convolution_backward_spec = defop(
    "convolution_backward",
    _convolution_backward,
    inputs=("grad_output", "input", "weight"),
    outputs=("result0", "result1", "result2"),
    doc="The derivative of ``convolution``: (grad_input, grad_weight, grad_bias) for the outputs ``output_mask`` "
    "asks for.",
    **{"grad_output, input, weight": _conv_double},
)
# As PyTorch's generated node, ConvolutionBackwardBackward0 gets no zeros for the outputs no gradient reached (the
# bias gradient of a convolution without bias): the formula leaves those terms out, and the graph has PyTorch's nodes.
convolution_backward_spec.node_cls._materialize = False


# -- constant padding --------------------------------------------------------------------------------------------------
def _constant_pad_nd(self, pad, value=0):
    xp = array_module(self)
    nd = self.ndim
    shape = list(self.shape)
    src = [slice(None)] * nd
    dst = [slice(None)] * nd
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = shape[d]
        shape[d] = size + lo + hi
        s0, s1 = max(-lo, 0), size - max(-hi, 0)
        src[d] = slice(s0, s1)
        dst[d] = slice(max(lo, 0), max(lo, 0) + max(s1 - s0, 0))
    out = xp.full(tuple(shape), value, dtype=self.dtype)
    out[tuple(dst)] = self[tuple(src)]
    return out


constant_pad_nd_spec = defop(
    "constant_pad_nd",
    _constant_pad_nd,
    self=lambda F, grad, pad: F.constant_pad_nd(grad, tuple(-p for p in pad), 0),
    doc="Pad the last dims with a constant (negative amounts cut) (``ConstantPadNdBackward0``).",
)


def _pad_checked(input, pad, value, functional=True):
    pad = tuple(int(p) for p in pad)
    nd = input._data.ndim
    if len(pad) % 2:
        raise RuntimeError(
            "Padding length must be divisible by 2"
            if functional
            else f"Length of pad must be even but instead it equals {len(pad)}"
        )
    if len(pad) > 2 * nd:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pad)} and input of dimension {nd}"
            if functional
            else "Length of pad should be no more than twice the number of dimensions of the input. Pad length is "
            f"{len(pad)}while the input has {nd}dimensions."
        )
    for i in range(len(pad) // 2):  # PyTorch cuts first (narrow), then pads
        if input._data.shape[nd - 1 - i] + min(pad[2 * i], 0) + min(pad[2 * i + 1], 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    if value is None:
        value = 0
    return apply(constant_pad_nd_spec, (input, pad, value))


@public("constant_pad_nd", method=False)
@checked("constant_pad_nd", [("input", "Tensor", None), ("pad", "tuple of ints", None), ("value", "float?", "0")])
def constant_pad_nd(input, pad, value=0):
    """Pad the last ``len(pad) // 2`` dims of ``input`` with ``value`` (``ConstantPadNdBackward0``).

    ``pad`` lists (before, after) amounts from the last dim backwards, as
    ``F.pad``; a negative amount removes elements.  Returns a new tensor of
    ``input``'s dtype and device.

    Raises
    ------
    RuntimeError
        "Padding length must be divisible by 2"; "Padding length should be
        less than or equal to two times the input dimension ..."; a padding
        that leaves a negative size (PyTorch's "narrow(): length must be
        non-negative.").
    """
    return _pad_checked(input, pad, value, functional=False)


# -- argument checks (PyTorch's check order and messages) --------------------------------------------------------------
def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _expand(name, value, nsp):
    value = tuple(value)
    if len(value) == 1:
        return value * nsp
    if len(value) != nsp:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nsp} values to match the convolution "
            f"dimensions, but got {name}={_sizes(value)}"
        )
    return value


def _check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """PyTorch's checks of ``convolution``'s arguments, in its order; returns the expanded parameters."""
    x, w = input._data, weight._data
    if bias is not None and bias._data.dtype != x.dtype:
        raise RuntimeError(
            f"Input type ({_dtype.ctype(x.dtype)}) and bias type ({_dtype.ctype(bias._data.dtype)}) should be the same"
        )
    nsp = w.ndim - 2
    stride = _expand("stride", stride, nsp)
    padding = _expand("padding", padding, nsp)
    dilation = _expand("dilation", dilation, nsp)
    output_padding = _expand("output_padding", output_padding, nsp)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if w.ndim != x.ndim:
        raise RuntimeError(
            f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight {_sizes(w.shape)}, but got "
            f"{x.ndim}-dimensional input of size {_sizes(x.shape)} instead"
        )
    if w.shape[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got weight of size "
            f"{_sizes(w.shape)} instead"
        )
    if w.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of "
            f"size [{_sizes(w.shape)}] instead"
        )
    if not transposed:
        if x.shape[1] != w.shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {_sizes(w.shape)}, expected input{_sizes(x.shape)} to have "
                f"{w.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
            )
        out_channels = w.shape[0]
    else:
        if x.shape[1] != w.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {_sizes(w.shape)}, expected input{_sizes(x.shape)} to have "
                f"{w.shape[0]} channels, but got {x.shape[1]} channels instead"
            )
        out_channels = w.shape[1] * groups
    if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != out_channels):
        lead = (
            f"Given transposed=1, weight of size {_sizes(w.shape)}"
            if transposed
            else (f"Given weight of size {_sizes(w.shape)}")
        )
        raise RuntimeError(
            f"{lead}, expected bias to be 1-dimensional with {out_channels} elements, but got bias of size "
            f"{_sizes(bias._data.shape)} instead"
        )
    if not transposed:
        padded = [x.shape[2 + i] + 2 * padding[i] for i in range(nsp)]
        kernel = [dilation[i] * (w.shape[2 + i] - 1) + 1 for i in range(nsp)]
        if any(p < k for p, k in zip(padded, kernel)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                f"({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual input size"
            )
    else:
        # PyTorch runs a 1-D transposed convolution as a 2-D one of height 1: its messages show that height
        lift = (lambda v, h: (h, *v)) if nsp == 1 else (lambda v, h: tuple(v))
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            names = ("depth", "height", "width")[-max(nsp, 2) :]
            parts = (
                [f"output_padding_{n}: {v}" for n, v in zip(names, lift(output_padding, 0))]
                + [f"stride_{n}: {v}" for n, v in zip(names, lift(stride, 1))]
                + [f"dilation_{n}: {v}" for n, v in zip(names, lift(dilation, 1))]
            )
            raise RuntimeError(
                f"output padding must be smaller than either stride or dilation, but got {' '.join(parts)}"
            )
        sp = _transposed_size(x.shape[2:], w.shape[2:], stride, padding, dilation, output_padding)
        if any(s < 1 for s in sp):
            raise RuntimeError(
                f"Given input size per channel: ({' x '.join(map(str, lift(x.shape[2:], 1)))}). Calculated output "
                f"size per channel: ({' x '.join(map(str, lift(sp, 1)))}). Output size is too small"
            )
    if w.dtype != x.dtype:
        if x.dtype.kind == "f" and x.dtype.itemsize <= 4:
            raise RuntimeError(
                f"Input type ({_dtype.type_string(x.dtype, input.device)}) and weight type "
                f"({_dtype.type_string(w.dtype, weight.device)}) should be the same or input should be a MKLDNN "
                "tensor and weight is a dense tensor"
            )
        raise RuntimeError(f"expected scalar type {_dtype.word(x.dtype)} but found {_dtype.word(w.dtype)}")
    if x.dtype.kind == "b":
        kernel = "slow_conv_transpose2d_out_cpu" if transposed else "slow_conv2d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return stride, padding, dilation, output_padding


def _convolution_checked(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """The checks, then the op; the node saves the parameters as given (``(2,)`` stays ``(2,)``), as PyTorch's."""
    stride, padding, dilation, output_padding = (tuple(stride), tuple(padding), tuple(dilation), tuple(output_padding))
    _check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    sizes = tuple(bias._data.shape) if bias is not None else (0,)  # PyTorch shows a missing bias's sizes as (0,)
    return apply(
        convolution_spec,
        (input, weight, bias, stride, padding, dilation, bool(transposed), output_padding, groups, sizes),
    )


@public("convolution", method=False)
@checked(
    "convolution",
    [
        ("input", "Tensor", None),
        ("weight", "Tensor", None),
        ("bias", "Tensor?", None),
        ("stride", "tuple of ints", None),
        ("padding", "tuple of ints", None),
        ("dilation", "tuple of ints", None),
        ("transposed", "bool", None),
        ("output_padding", "tuple of ints", None),
        ("groups", "int", None),
    ],
)
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """ATen's ``convolution`` (``ConvolutionBackward0``): the op every convolution of PyTorch reaches.

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, *S)``, batched (no unbatched form here, as in PyTorch).
    weight : Tensor
        ``(C_out, C_in / groups, *k)``; transposed: ``(C_in, C_out / groups, *k)``.
    bias : Tensor or None
        ``(C_out,)``.
    stride, padding, dilation, output_padding : sequence of int
        One value per spatial dim (or one for all).
    transposed : bool
        A transposed convolution (the gradient of a plain one, with respect to its input).
    groups : int
        Channels split into this many independent groups.

    Returns
    -------
    Tensor
        ``(N, C_out, *out)`` with ``out = (S + 2p - d(k - 1) - 1) // s + 1``
        (transposed: ``(S - 1)s - 2p + d(k - 1) + output_padding + 1``), of
        the input's dtype and device.

    Raises
    ------
    RuntimeError
        PyTorch's messages, in its order: bias dtype; parameter lengths;
        non-positive groups/stride/dilation, negative padding; dims of input
        and weight; weight and groups; channels ("Given groups=1, weight of
        size [4, 2, 3, 3], expected input[2, 3, 5, 5] to have 2 channels,
        but got 3 channels instead"); bias size; a kernel larger than the
        padded input; weight dtype.  ``NotImplementedError`` for bool.
    """
    return _convolution_checked(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


# -- conv1d, conv2d ----------------------------------------------------------------------------------------------------
def _signatures(*, transposed=False):
    head = [("input", "Tensor", None), ("weight", "Tensor", None), ("bias", "Tensor?", "None")]
    if transposed:
        return (
            head
            + [
                ("stride", "tuple of ints", "1"),
                ("padding", "tuple of ints", "0"),
                ("output_padding", "tuple of ints", "0"),
                ("groups", "int", "1"),
                ("dilation", "tuple of ints", "1"),
            ],
        )
    tail = [("dilation", "tuple of ints", "1"), ("groups", "int", "1")]
    return (
        head + [("stride", "tuple of ints", "1"), ("padding", "tuple of ints", "0")] + tail,
        head + [("stride", "tuple of ints", "1"), ("padding", "str", '"valid"')] + tail,
    )


_SAME_WARNED = [False]  # PyTorch warns once per process (TORCH_WARN_ONCE)


def _conv_same(x, weight, bias, stride, dilation, groups, nsp):
    """``padding='same'``: PyTorch's checks, and an extra zero column on the right where the total is odd."""
    w = weight._data
    if w.ndim != x._data.ndim:
        raise RuntimeError(
            f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight{_sizes(w.shape)}, but got "
            f"{x._data.ndim}-dimensional input of size {_sizes(x._data.shape)} instead"
        )
    k = w.ndim - 2
    for name, v in (("stride", stride), ("dilation", dilation)):
        if len(v) not in (1, k):
            raise RuntimeError(f"{name} cannot broadcast to {k} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dil = _full(dilation, k)
    left, extra = [], [0] * (2 * k)
    for i in range(k):
        total = dil[i] * (w.shape[2 + i] - 1)
        left.append(total // 2)
        extra[2 * (k - 1 - i) + 1] = total - 2 * (total // 2)
    if any(extra):
        if not _SAME_WARNED[0]:
            _SAME_WARNED[0] = True
            warn_user(
                "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy of "
                "the input be created"
            )
        x = apply(constant_pad_nd_spec, (x, tuple(extra), 0))
    return _convolution_checked(x, weight, bias, stride, tuple(left), dilation, False, (0,) * k, groups)


def _conv_nd(name, nsp, input, weight, bias, stride, padding, dilation, groups):
    nd = input._data.ndim
    if nd not in (nsp + 1, nsp + 2):
        raise RuntimeError(
            f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to {name}, but got input of size: "
            f"{_sizes(input._data.shape)}"
        )
    batched = nd == nsp + 2
    x = input if batched else input.unsqueeze(0)
    stride, dilation = int_tuple(stride, nsp), int_tuple(dilation, nsp)
    if isinstance(padding, str):
        if padding == "same":
            out = _conv_same(x, weight, bias, stride, dilation, groups, nsp)
        elif padding == "valid":
            out = _convolution_checked(x, weight, bias, stride, (0,), dilation, False, (0,), groups)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        out = _convolution_checked(
            x, weight, bias, stride, int_tuple(padding, nsp), dilation, False, (0,) * nsp, groups
        )
    return out if batched else out.squeeze(0)


_CONV_DOC = """{n}-D convolution over an input of ``C_in`` channels (``ConvolutionBackward0``), as ``torch.{name}``.

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, {shape})``, or unbatched ``(C_in, {shape})`` (then the
        graph is ``SqueezeBackward1`` over the convolution over
        ``UnsqueezeBackward0``, as in PyTorch).
    weight : Tensor
        ``(C_out, C_in / groups, {kshape})``, same dtype and device.
    bias : Tensor, optional
        ``(C_out,)``.
    stride, dilation : int or tuple of int
        Step between windows, and spacing of the kernel's elements.
    padding : int, tuple of int, ``'valid'`` or ``'same'``
        Zeros added on both sides of each spatial dim.  ``'valid'`` is no
        padding; ``'same'`` keeps the spatial size (stride 1 only); where the
        total padding is odd the extra zero goes on the right, through a
        ``constant_pad_nd`` (``ConstantPadNdBackward0``), with PyTorch's
        one-time UserWarning.
    groups : int
        ``C_in`` and ``C_out`` split into this many independent groups.

    Returns
    -------
    Tensor
        ``(N, C_out, {oshape})``, each output size
        ``(S + 2 * padding - dilation * (k - 1) - 1) // stride + 1``.

    Raises
    ------
    RuntimeError
        "Expected {u}D (unbatched) or {b}D (batched) input to {name}, but got
        input of size: [...]"; "Invalid padding string: 'foo'"; "padding='same'
        is not supported for strided convolutions"; and the checks of
        :func:`convolution` (channels, groups, bias, kernel larger than the
        padded input, dtypes).
    TypeError
        PyTorch's "received an invalid combination of arguments" for an
        argument of the wrong type.
    """


@public("conv1d", method=False)
@checked("conv1d", *_signatures())
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@public("conv2d", method=False)
@checked("conv2d", *_signatures())
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


conv1d.__doc__ = _CONV_DOC.format(n=1, name="conv1d", shape="L", kshape="k", oshape="L_out", u=2, b=3)
conv2d.__doc__ = _CONV_DOC.format(n=2, name="conv2d", shape="H, W", kshape="kH, kW", oshape="H_out, W_out", u=3, b=4)


def _conv_transpose_nd(name, nsp, input, weight, bias, stride, padding, output_padding, groups, dilation):
    nd = input._data.ndim
    if nd not in (nsp + 1, nsp + 2):
        raise RuntimeError(
            f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to {name}, but got input of size: "
            f"{_sizes(input._data.shape)}"
        )
    batched = nd == nsp + 2
    x = input if batched else input.unsqueeze(0)
    out = _convolution_checked(
        x,
        weight,
        bias,
        int_tuple(stride, nsp),
        int_tuple(padding, nsp),
        int_tuple(dilation, nsp),
        True,
        int_tuple(output_padding, nsp),
        groups,
    )
    return out if batched else out.squeeze(0)


@public("conv_transpose1d", method=False)
@checked("conv_transpose1d", *_signatures(transposed=True))
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution (``ConvolutionBackward0`` with ``_saved_transposed=True``): the gradient of
    ``conv1d`` with respect to its input, as an op.  ``input`` ``(N, C_in, L)`` or ``(C_in, L)``; ``weight``
    ``(C_in, C_out / groups, k)``; output length ``(L - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1``.  Errors as :func:`convolution`."""
    return _conv_transpose_nd(
        "conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@public("conv_transpose2d", method=False)
@checked("conv_transpose2d", *_signatures(transposed=True))
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution (``ConvolutionBackward0`` with ``_saved_transposed=True``), as
    :func:`conv_transpose1d` over two spatial dims: ``input`` ``(N, C_in, H, W)`` or ``(C_in, H, W)``, ``weight``
    ``(C_in, C_out / groups, kH, kW)``."""
    return _conv_transpose_nd(
        "conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation
    )
