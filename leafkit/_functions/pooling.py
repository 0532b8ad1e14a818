"""Pooling over the last two dims, on NumPy/CuPy arrays: max, average and adaptive average.

Three ATen ops and their derivatives, with PyTorch's node names:

======================================  ====================================  ==========================================
op                                      node                                  its derivative (``create_graph=True``)
======================================  ====================================  ==========================================
``max_pool2d_with_indices``             ``MaxPool2DWithIndicesBackward0``     ``MaxPool2DWithIndicesBackwardBackward0``
``avg_pool2d``                          ``AvgPool2DBackward0``                ``AvgPool2DBackwardBackward0``
``_adaptive_avg_pool2d``                ``AdaptiveAvgPool2DBackward0``        ``AdaptiveAvgPool2DBackwardBackward0``
======================================  ====================================  ==========================================

Each works on ``(C, H, W)`` or ``(N, C, H, W)``.  The 1-D poolings of
PyTorch are these with a unit dim inserted (``UnsqueezeBackward0`` under the
node, ``SqueezeBackward1`` over it), and ``adaptive_avg_pool2d`` to size 1
is a mean over H and W (``MeanBackward1``), as PyTorch computes them.

The windows are a strided view of the input (padded with -inf for max,
zeros for average, and far enough on the right for ``ceil_mode``), reduced
in one NumPy call.  Max pooling follows PyTorch's CPU kernel: a tie goes to
the first maximum in row-major order, NaN wins (the last NaN of a window),
and a window that holds only -inf points at its first element inside the
input.  Its indices count within each ``H * W`` plane, as PyTorch's do.
The derivatives add each output's gradient to the input elements it came
from, one strided addition per kernel offset (average) or one scatter
(max); the derivatives of those are linear in the incoming gradient, so
second derivatives are pooling (or a ``gather``) again, and the input's own
second derivative is zero (a constant), as in PyTorch.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import _dtype
from .._device import array_module
from ._args import check_types, checked
from ._base import dim as _dim
from ._registry import apply, defop, public

__all__ = [
    "max_pool2d_with_indices_spec",
    "avg_pool2d_spec",
    "adaptive_avg_pool2d_spec",
    "pool_output_size",
    "check_pool2d",
]


# -- geometry ----------------------------------------------------------------------------------------------------------
def _half_trunc(v):
    """C++ integer division by 2 (toward zero)."""
    return v // 2 if v >= 0 else -((-v) // 2)


def pool_output_size(size, k, pad, s, d, ceil_mode):
    """PyTorch's ``pooling_output_shape``; raises its errors for a zero stride and a too-large padding."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _half_trunc((k - 1) * d + 1):
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={pad}, kernel_size={k} and dilation={d}"
        )
    out = (size + 2 * pad - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + pad:
        out -= 1
    return out


def check_pool2d(shape, k, s, p, d, ceil_mode):
    """PyTorch's ``pool2d_shape_check`` after the output sizes: kernel, stride, dilation, the input's dims and sizes,
    the padding against the kernel, and an output of at least one element.  Returns (out_h, out_w)."""
    oh = pool_output_size(shape[-2], k[0], p[0], s[0], d[0], ceil_mode)
    ow = pool_output_size(shape[-1], k[1], p[1], s[1], d[1], ceil_mode)
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}")
    nd = len(shape)
    valid = (nd == 3 and all(shape)) or (nd == 4 and all(shape[1:]))
    if not valid:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:"
            f"[{', '.join(map(str, shape))}]"
        )
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got padW = {p[1]}, padH = {p[0]}, "
            f"kW = {k[1]}, kH = {k[0]}"
        )
    if oh < 1 or ow < 1:
        c, h, w = shape[-3:]
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size is too small"
        )
    return oh, ow


def _windows(x, fill, k, s, p, d, out):
    """The pooling windows of ``x`` (..., H, W) as a strided view (..., out_h, out_w, k_h, k_w), no copy: ``x``
    padded with ``fill`` first where the windows reach past its edges (padding, ``ceil_mode``)."""
    xp = array_module(x)
    lead = x.shape[:-2]
    h, w = x.shape[-2:]
    need = [(out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 for i in range(2)]
    hi = [max(need[0] - h - p[0], 0), max(need[1] - w - p[1], 0)]
    if p[0] or p[1] or hi[0] or hi[1]:
        padded = xp.full(lead + (h + p[0] + hi[0], w + p[1] + hi[1]), fill, dtype=x.dtype)
        padded[..., p[0] : p[0] + h, p[1] : p[1] + w] = x
    else:
        padded = x
    st = padded.strides
    shape = lead + (out[0], out[1], k[0], k[1])
    strides = st[:-2] + (st[-2] * s[0], st[-1] * s[1], st[-2] * d[0], st[-1] * d[1])
    if xp is np:
        return np.lib.stride_tricks.as_strided(padded, shape, strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(padded, shape=shape, strides=strides)


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


# -- max pooling -------------------------------------------------------------------------------------------------------
def _max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    xp = array_module(self)
    k, s, p, d = _params(kernel_size, stride, padding, dilation)
    h, w = self.shape[-2:]
    out = (
        pool_output_size(h, k[0], p[0], s[0], d[0], ceil_mode),
        pool_output_size(w, k[1], p[1], s[1], d[1], ceil_mode),
    )
    win = _windows(self, _lowest(self.dtype), k, s, p, d, out)
    # one pass per kernel offset over the whole batch (a reduction over a tiny last axis is slow in NumPy): a later
    # element replaces the best so far only when larger, so a tie keeps the first; a NaN always replaces, so the
    # last NaN wins, as in PyTorch's kernel
    nan = self.dtype.kind == "f" and self.size and bool(xp.isnan(self).any())
    values = win[..., 0, 0].copy()
    arg = xp.zeros(values.shape, dtype=np.int64)
    better = xp.empty(values.shape, dtype=bool)
    for off in range(1, k[0] * k[1]):
        v = win[..., off // k[1], off % k[1]]
        xp.greater(v, values, out=better)
        if nan:
            better |= xp.isnan(v)
            values = xp.where(better, v, values)
        else:
            xp.maximum(values, v, out=values)
        xp.copyto(arg, off, where=better)
    # the position within the H * W plane: the window's corner plus the offset of its maximum
    corner = (xp.arange(out[0]) * s[0] - p[0]).reshape(-1, 1) * w + (xp.arange(out[1]) * s[1] - p[1]).reshape(1, -1)
    table = xp.asarray([(o // k[1]) * d[0] * w + (o % k[1]) * d[1] for o in range(k[0] * k[1])], dtype=np.int64)
    indices = corner + table.take(arg)
    overhang = any((out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 > (h, w)[i] + p[i] for i in range(2))
    if p[0] or p[1] or overhang:  # a window of -inf only may have chosen padding: PyTorch keeps its first element
        hstart = xp.arange(out[0]).reshape(-1, 1) * s[0] - p[0]
        wstart = xp.arange(out[1]).reshape(1, -1) * s[1] - p[1]
        hi = hstart + (arg // k[1]) * d[0]
        wi = wstart + (arg % k[1]) * d[1]
        outside = (hi < 0) | (hi >= h) | (wi < 0) | (wi >= w)
        if bool(outside.any()):
            h0 = xp.where(hstart < 0, hstart + (-hstart + d[0] - 1) // d[0] * d[0], hstart)
            w0 = xp.where(wstart < 0, wstart + (-wstart + d[1] - 1) // d[1] * d[1], wstart)
            indices = xp.where(outside, h0 * w + w0, indices)
    return xp.ascontiguousarray(values), xp.ascontiguousarray(indices)


def _params(kernel_size, stride, padding, dilation):
    """(kH, kW), (sH, sW), (pH, pW), (dH, dW) from PyTorch's one-or-two-element lists (an empty stride: the kernel)."""

    def two(v):
        return (v[0], v[0]) if len(v) == 1 else (v[0], v[1])

    k = two(kernel_size)
    return k, (two(stride) if len(stride) else k), two(padding), two(dilation)


def _max_pool2d_with_indices_backward(grad_output, self, indices, kernel_size, stride, padding, dilation, ceil_mode):
    """Each output's gradient added to the input element it took (several, where windows overlap and agree)."""
    xp = array_module(grad_output)
    k, s, _, d = _params(kernel_size, stride, padding, dilation)
    h, w = self.shape[-2:]
    planes = int(np.prod(self.shape[:-2], dtype=np.int64))
    g = grad_output.reshape(planes, -1)
    flat = indices.reshape(planes, -1) + (xp.arange(planes, dtype=np.int64) * (h * w)).reshape(-1, 1)
    if s[0] >= d[0] * (k[0] - 1) + 1 and s[1] >= d[1] * (k[1] - 1) + 1:  # windows apart: each element taken once
        out = xp.zeros(planes * h * w, dtype=grad_output.dtype)
        out[flat.reshape(-1)] = g.reshape(-1)
    else:
        out = xp.bincount(flat.reshape(-1), weights=g.reshape(-1), minlength=planes * h * w)
        out = out.astype(grad_output.dtype, copy=False)
    return out.reshape(self.shape)


def _max_pool_double_backward(F, grad, indices):
    """PyTorch's ``max_pool_double_backward``: the incoming gradient read at the indices (a ``gather``)."""
    shape = tuple(indices.shape)
    g = F.reshape(grad, tuple(grad.shape[:-2]) + (-1,))
    idx = F.reshape(indices, shape[:-2] + (-1,))
    return F.view(F.gather(g, idx, len(shape) - 2), shape)


max_pool2d_with_indices_spec = defop(
    "max_pool2d_with_indices",
    _max_pool2d_with_indices,
    node="MaxPool2DWithIndicesBackward0",
    outputs=("result0", "result1"),
    nondiff_outputs=("result1",),
    self=lambda F, grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1: (
        F.max_pool2d_with_indices_backward(grad, self, result1, kernel_size, stride, padding, dilation, ceil_mode)
    ),
    doc="2-D max pooling with the positions of the maxima (``MaxPool2DWithIndicesBackward0``).",
)
max_pool2d_with_indices_backward_spec = defop(
    "max_pool2d_with_indices_backward",
    _max_pool2d_with_indices_backward,
    node="MaxPool2DWithIndicesBackwardBackward0",
    inputs=("grad_output", "self", "indices"),
    nondiff=("indices",),
    grad_output=lambda F, grad, indices: _max_pool_double_backward(F, grad, indices),
    self=lambda F, grad: F.zeros_like(grad),  # PyTorch: zeros_like(self), which has the shape of grad
    doc="The derivative of ``max_pool2d_with_indices``: the gradient scattered back to the maxima.",
)


# -- average pooling ---------------------------------------------------------------------------------------------------
def _divisors(xp, size, out, k, s, p, count_include_pad):
    """Per output position along one dim: (window length counting padding, length inside the input)."""
    start = xp.arange(out) * s - p
    end = xp.minimum(start + k, size + p)
    full = end - start
    inside = xp.minimum(end, size) - xp.maximum(start, 0)
    return full if count_include_pad else inside


def _avg_divisor(xp, shape, out, k, s, p, count_include_pad, divisor_override):
    if divisor_override is not None:
        return divisor_override
    dh = _divisors(xp, shape[-2], out[0], k[0], s[0], p[0], count_include_pad)
    dw = _divisors(xp, shape[-1], out[1], k[1], s[1], p[1], count_include_pad)
    return dh.reshape(-1, 1) * dw.reshape(1, -1)


def _acc(dtype):
    return np.float32 if dtype == np.float16 else dtype


def _avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    xp = array_module(self)
    k, s, p, _ = _params(kernel_size, stride, padding, (1,))
    h, w = self.shape[-2:]
    out = (pool_output_size(h, k[0], p[0], s[0], 1, ceil_mode), pool_output_size(w, k[1], p[1], s[1], 1, ceil_mode))
    win = _windows(self, 0, k, s, p, (1, 1), out)
    sums = win[..., 0, 0].astype(_acc(self.dtype))  # one addition per kernel offset (see max pooling)
    for off in range(1, k[0] * k[1]):
        sums += win[..., off // k[1], off % k[1]]
    div = _avg_divisor(xp, self.shape, out, k, s, p, count_include_pad, divisor_override)
    if self.dtype.kind == "f":
        return (sums / div).astype(self.dtype, copy=False)
    return xp.sign(sums) * (xp.abs(sums) // div)  # integer division toward zero, as the C++ kernel's


def _avg_pool2d_backward(
    grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    """Each output's gradient, over its divisor, added to every input element of its window."""
    xp = array_module(grad_output)
    k, s, p, _ = _params(kernel_size, stride, padding, (1,))
    h, w = self.shape[-2:]
    out = grad_output.shape[-2:]
    div = _avg_divisor(xp, self.shape, out, k, s, p, count_include_pad, divisor_override)
    g = grad_output / div
    need = [(out[i] - 1) * s[i] + k[i] for i in range(2)]
    full = (max(h + 2 * p[0], need[0]), max(w + 2 * p[1], need[1]))
    gx = xp.zeros(self.shape[:-2] + full, dtype=g.dtype)
    for i, j in itertools.product(range(k[0]), range(k[1])):
        gx[..., i : i + s[0] * (out[0] - 1) + 1 : s[0], j : j + s[1] * (out[1] - 1) + 1 : s[1]] += g
    gx = gx[..., p[0] : p[0] + h, p[1] : p[1] + w]
    return xp.ascontiguousarray(gx).astype(grad_output.dtype, copy=False)


avg_pool2d_spec = defop(
    "avg_pool2d",
    _avg_pool2d,
    node="AvgPool2DBackward0",
    self=lambda F, grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override: (
        F.avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    ),
    doc="2-D average pooling (``AvgPool2DBackward0``).",
)
avg_pool2d_backward_spec = defop(
    "avg_pool2d_backward",
    _avg_pool2d_backward,
    node="AvgPool2DBackwardBackward0",
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override: (
        F.avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    ),
    self=lambda F, grad: F.zeros_like(grad),  # PyTorch: zeros_like(self), which has the shape of grad
    doc="The derivative of ``avg_pool2d``: each gradient spread evenly over its window.",
)


# -- adaptive average pooling ------------------------------------------------------------------------------------------
def _adaptive_matrix(xp, size, out, dtype):
    """(out, size): row i averages input elements floor(i * size / out) .. ceil((i + 1) * size / out) - 1."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    cols = np.arange(size)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    m = inside / np.maximum(end - start, 1)[:, None]
    return xp.asarray(m.astype(dtype))


def _adaptive_avg_pool2d(self, output_size):
    xp = array_module(self)
    dt = _acc(self.dtype)
    ah = _adaptive_matrix(xp, self.shape[-2], output_size[0], dt)
    aw = _adaptive_matrix(xp, self.shape[-1], output_size[1], dt)
    out = xp.matmul(xp.matmul(ah, self.astype(dt, copy=False)), aw.T)
    return xp.ascontiguousarray(out.astype(self.dtype, copy=False))


def _adaptive_avg_pool2d_backward(grad_output, self, grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1):
    for i in range(1, grad_output.ndim):
        if grad_output.shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for non-batch dimensions, "
                f"but grad_output has sizes {_sizes(grad_output.shape)} with dimension {i} being empty"
            )
    xp = array_module(grad_output)
    dt = _acc(grad_output.dtype)
    ah = _adaptive_matrix(xp, self.shape[-2], grad_output.shape[-2], dt)
    aw = _adaptive_matrix(xp, self.shape[-1], grad_output.shape[-1], dt)
    g = xp.matmul(xp.matmul(ah.T, grad_output.astype(dt, copy=False)), aw)
    return xp.ascontiguousarray(g.astype(grad_output.dtype, copy=False))


adaptive_avg_pool2d_spec = defop(
    "_adaptive_avg_pool2d",
    _adaptive_avg_pool2d,
    node="AdaptiveAvgPool2DBackward0",
    self=lambda F, grad, self: F._adaptive_avg_pool2d_backward(grad, self, grad.shape[-2], grad.shape[-1]),
    doc="2-D adaptive average pooling to ``output_size`` (``AdaptiveAvgPool2DBackward0``).",
)
adaptive_avg_pool2d_backward_spec = defop(
    "_adaptive_avg_pool2d_backward",
    _adaptive_avg_pool2d_backward,
    node="AdaptiveAvgPool2DBackwardBackward0",
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1: (
        F._adaptive_avg_pool2d(grad, (grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1))
    ),
    self=lambda F, grad: F.zeros_like(grad),  # PyTorch: zeros_like(self), which has the shape of grad
    doc="The derivative of ``_adaptive_avg_pool2d``: each gradient spread evenly over its window.",
)


# -- the public functions (torch.max_pool2d, F.max_pool2d, F.avg_pool2d ...) -------------------------------------------
def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _as_list(v):
    return [int(v)] if _is_int(v) else [int(e) for e in v]


def _int2(v):
    """PyTorch's reading of an ``int[2]`` argument: an int stands for two, a sequence stays as it is."""
    return [int(v)] * 2 if _is_int(v) else [int(e) for e in v]


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _no_bool(kernel, x):
    if x.dtype.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _pool_list(name, what, v, rule):
    v = _int2(v)
    if len(v) not in ((0, 1, 2) if what == "stride" else (1, 2)):
        raise RuntimeError(f"{name}: {what} {rule}")
    return tuple(v)


def max_pool2d_impl(input, kernel_size, stride, padding, dilation, ceil_mode):
    """``max_pool2d_with_indices`` with PyTorch's checks: returns (values, indices)."""
    k = _pool_list("max_pool2d", "kernel_size", kernel_size, "must either be a single int, or a tuple of two ints")
    s = _pool_list(
        "max_pool2d",
        "stride",
        () if stride is None else stride,
        "must either be omitted, a single int, or a tuple of two ints",
    )
    p = _pool_list("max_pool2d", "padding", padding, "must either be a single int, or a tuple of two ints")
    d = _pool_list("max_pool2d", "dilation", dilation, "must be either a single int, or a tuple of two ints")
    x = input._data
    if x.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    check_pool2d(x.shape, *_params(k, s, p, d), ceil_mode)
    _no_bool("max_pool2d", x)
    return apply(max_pool2d_with_indices_spec, (input, k, s, p, d, bool(ceil_mode)))


def _max_pool2d_types(name, input, kernel_size, stride, padding, dilation, ceil_mode):
    check_types(
        name,
        [
            ("input", "Tensor", input),
            ("kernel_size", "tuple of ints", kernel_size),
            ("stride", "tuple of ints?", stride),
            ("padding", "tuple of ints", padding),
            ("dilation", "tuple of ints", dilation),
            ("ceil_mode", "bool", ceil_mode),
        ],
    )


@public("max_pool2d", method=False)
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """2-D max pooling of ``(C, H, W)`` or ``(N, C, H, W)`` (``MaxPool2DWithIndicesBackward0``): ``torch.max_pool2d``.

    See :func:`leafkit.nn.functional.max_pool2d`, which can also return the indices."""
    _max_pool2d_types("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    return max_pool2d_impl(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _check_1d(name, x):
    if x.ndim not in (2, 3) or not all(x.shape[-2:] if x.ndim == 3 else x.shape):
        raise RuntimeError(
            f"{name}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:"
            f"{_sizes(x.shape)}"
        )


def max_pool1d_impl(input, kernel_size, stride, padding, dilation, ceil_mode):
    """``max_pool1d`` with PyTorch's checks, computed as ``max_pool2d`` over a unit dim: returns (values, indices)."""
    x = input._data
    _check_1d("max_pool1d", x)
    k = _as_list(kernel_size)
    s = _as_list(() if stride is None else stride)
    p = _as_list(padding)
    d = _as_list(dilation)
    for what, v, ok, rule in (
        ("kernel_size", k, len(k) == 1, "must be an int, list of ints or tuple of ints"),
        ("stride", s, len(s) in (0, 1), "must be None, an int, list of ints, or tuple of ints"),
        ("padding", p, len(p) == 1, "must be an int, list of ints, or tuple of ints"),
        ("dilation", d, len(d) == 1, "must be an int, list of ints or tuple of ints"),
    ):
        if not ok:
            raise RuntimeError(f"max_pool1d() {what} {rule} of size 1 but got size {len(v)}")
    s = s or k
    if k[0] <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k[0]}")
    if s[0] <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s[0]}")
    if p[0] < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p[0]}")
    if p[0] > k[0] // 2:
        raise RuntimeError(
            f"max_pool1d() padding should be at most half of kernel size, but got padding={p[0]} and kernel_size={k[0]}"
        )
    if d[0] <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d[0]}")
    out = pool_output_size(x.shape[-1], k[0], p[0], s[0], d[0], ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    _no_bool("max_pool1d_impl", x)
    values, indices = apply(
        max_pool2d_with_indices_spec,
        (input.unsqueeze(-2), (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]), bool(ceil_mode)),
    )
    return values.squeeze(-2), indices.squeeze(-2)


@public("max_pool1d", method=False)
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """1-D max pooling over ``(C, L)`` or ``(N, C, L)``, as ``torch.max_pool1d``: ``max_pool2d`` over a unit dim
    (``SqueezeBackward1`` over ``MaxPool2DWithIndicesBackward0`` over ``UnsqueezeBackward0``)."""
    _max_pool2d_types("max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode)
    return max_pool1d_impl(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def avg_pool2d_impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, name):
    k = _pool_list(name, "kernel_size", kernel_size, "must either be a single int, or a tuple of two ints")
    s = _pool_list(
        name, "stride", () if stride is None else stride, "must either be omitted, a single int, or a tuple of two ints"
    )
    p = _pool_list(name, "padding", padding, "must either be a single int, or a tuple of two ints")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = input._data
    _dim(-3, x.ndim)  # PyTorch reads the channel count as size(-3) first
    check_pool2d(x.shape, *_params(k, s, p, (1,)), ceil_mode)
    if x.dtype.kind != "f" and x.dtype != np.int64:
        raise NotImplementedError(f"\"avg_pool2d\" not implemented for '{_dtype.word(x.dtype)}'")
    return apply(
        avg_pool2d_spec,
        (
            input,
            k,
            s,
            p,
            bool(ceil_mode),
            bool(count_include_pad),
            None if divisor_override is None else int(divisor_override),
        ),
    )


def _avg_signature(name, one_d=False):
    sig = [
        ("input", "Tensor", None),
        ("kernel_size", "tuple of ints", None),
        ("stride", "tuple of ints?", "None"),
        ("padding", "tuple of ints", "0"),
        ("ceil_mode", "bool", "False"),
        ("count_include_pad", "bool", "True"),
    ]
    return sig if one_d else sig + [("divisor_override", "int?", "None")]


@public("avg_pool1d", method=False)
@checked("avg_pool1d", _avg_signature("avg_pool1d", one_d=True))
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over ``(C, L)`` or ``(N, C, L)``, as ``torch.avg_pool1d``: ``avg_pool2d`` over a unit dim
    (``SqueezeBackward1`` over ``AvgPool2DBackward0`` over ``UnsqueezeBackward0``).

    Raises RuntimeError "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while
    checking arguments for avg_pool1d)", "avg_pool1d() argument 'kernel_size' should contain one int (got 2)", and
    the errors of :func:`leafkit.nn.functional.avg_pool2d`."""
    x = input._data
    if x.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 'self' (while checking "
            "arguments for avg_pool1d)"
        )
    k, s, p = _as_list(kernel_size), _as_list(() if stride is None else stride), _as_list(padding)
    for what, v, ok in (("kernel_size", k, len(k) == 1), ("stride", s, len(s) in (0, 1)), ("padding", p, len(p) == 1)):
        if not ok:
            raise RuntimeError(f"avg_pool1d() argument '{what}' should contain one int (got {len(v)})")
    s = s or k
    out = avg_pool2d_impl(
        input.unsqueeze(-2), (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad, None, "avg_pool2d"
    )
    return out.squeeze(-2)


def adaptive_avg_pool2d_impl(input, output_size):
    """``adaptive_avg_pool2d`` after Python's reading of ``output_size``: PyTorch's checks, then the mean over H and
    W for size (1, 1) (``MeanBackward1``), else ``_adaptive_avg_pool2d``."""
    size = _int2(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if size[0] < 0 or size[1] < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received "
            f"{{{size[0]}, {size[1]}}}"
        )
    x = input._data
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_sizes(x.shape)}")
    for i in (x.ndim - 2, x.ndim - 1):  # PyTorch checks the two pooled dims only
        if x.shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has "
                f"sizes {_sizes(x.shape)} with dimension {i} being empty"
            )
    if size == [1, 1]:
        return input.mean((-1, -2), keepdim=True)
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{_dtype.word(x.dtype)}'")
    return apply(adaptive_avg_pool2d_spec, (input, tuple(size)))


@public("adaptive_avg_pool1d", method=False)
def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling of ``(C, L)`` or ``(N, C, L)`` to length ``output_size``, as
    ``torch.adaptive_avg_pool1d``: the 2-D one over a unit dim (``SqueezeBackward1`` over
    ``AdaptiveAvgPool2DBackward0``, or ``MeanBackward1`` for size 1, over ``UnsqueezeBackward0``)."""
    check_types("adaptive_avg_pool1d", [("input", "Tensor", input), ("output_size", "tuple of ints", output_size)])
    x = input._data
    if x.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 'self' (while checking "
            "arguments for adaptive_avg_pool1d)"
        )
    size = _as_list(output_size)
    if len(size) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one int (got {len(size)})")
    return adaptive_avg_pool2d_impl(input.unsqueeze(-2), (1, size[0])).squeeze(-2)
