"""Reductions: sum, mean, max/min (whole tensor or along a dim), softmax, log_softmax."""
from __future__ import annotations

import numpy as np

from ._base import Op, array_module, as_array, zeros_like_module


def _dims(dim, ndim):
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:  # PyTorch: an empty dim list reduces over every dimension
        return tuple(range(ndim)) if ndim else None
    out = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got {d})")
        if d % max(ndim, 1) in out:
            raise RuntimeError(f"dim {d % max(ndim, 1)} appears multiple times in the list of dims")
        out.append(d % max(ndim, 1))
    return tuple(out) if ndim else None


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduced gradient back over ``shape``."""
    if dims is not None and not keepdim:
        for d in sorted(dims):
            g = np.expand_dims(g, d)
    return np.broadcast_to(g, shape)


class SumBackward0(Op):
    """Sum of all elements."""

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a.shape
        dt = np.int64 if a.dtype.kind in "biu" else None
        return as_array(a.sum(dtype=dt))

    @staticmethod
    def backward(ctx, g):
        return np.broadcast_to(g, ctx.shape)


class SumBackward1(Op):
    """Sum along ``dim`` (``keepdim`` keeps it with size 1)."""

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        dims = _dims(dim, a.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        dt = np.int64 if a.dtype.kind in "biu" else None
        return as_array(a.sum(axis=dims, keepdims=keepdim, dtype=dt))

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g, ctx.shape, ctx.dims, ctx.keepdim), None, None


def _need_float(a, name):
    if a.dtype.kind != "f":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_pretty(a.dtype)}")


def _pretty(d):
    return {"i": "Long", "b": "Bool", "u": "Byte"}.get(d.kind, str(d))


def _acc(a):
    """Accumulation dtype: float16 sums in float32 (as PyTorch's CPU kernels do), others in their own dtype."""
    return np.float32 if a.dtype == np.float16 else a.dtype


class MeanBackward0(Op):
    """Mean of all elements (floating tensors only, as in PyTorch)."""

    @staticmethod
    def forward(ctx, a):
        _need_float(a, "mean")
        ctx.shape = a.shape
        with np.errstate(all="ignore"):  # the mean of nothing is nan, silently, as in PyTorch
            return as_array(a.mean(dtype=_acc(a)).astype(a.dtype))

    @staticmethod
    def backward(ctx, g):
        n = max(int(np.prod(ctx.shape)), 1)
        return np.broadcast_to(g / n, ctx.shape)


class MeanBackward1(Op):
    """Mean along ``dim``."""

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        _need_float(a, "mean")
        dims = _dims(dim, a.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        with np.errstate(all="ignore"):
            return as_array(a.mean(axis=dims, keepdims=keepdim, dtype=_acc(a)).astype(a.dtype))

    @staticmethod
    def backward(ctx, g):
        n = int(np.prod([ctx.shape[d] for d in ctx.dims])) if ctx.dims else max(int(np.prod(ctx.shape)), 1)
        return _expand_back(g / n, ctx.shape, ctx.dims, ctx.keepdim), None, None


class _ExtremumAll(Op):
    """max()/min() of all elements: the gradient is shared evenly among ties, as in PyTorch."""

    _fn = None
    _names_saved = ("self", "result")

    @classmethod
    def forward(cls, ctx, a):
        if a.size == 0:
            raise RuntimeError(f"{cls._fn.__name__}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        out = as_array(cls._fn(a))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        mask = (a == out) | (np.isnan(a) & np.isnan(out))  # a NaN maximum takes the gradient, as in PyTorch
        return g * mask / mask.sum()


class MaxBackward1(_ExtremumAll):
    _fn = staticmethod(np.max)


class MinBackward1(_ExtremumAll):
    _fn = staticmethod(np.min)


class _ExtremumDim(Op):
    """max(dim)/min(dim): values and indices; the gradient goes to the chosen index."""

    _arg = None
    _fn = None
    _names_saved = ("indices",)

    @classmethod
    def forward(cls, ctx, a, dim, keepdim=False):
        (d,) = _dims(dim, a.ndim) or (0,)
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"{cls.__name__[:3].lower()}(): Expected reduction dim {d} to have non-zero size.")
        idx = as_array(cls._arg(a, axis=d, keepdims=True)) if a.ndim else array_module(a).asarray(0)
        vals = np.take_along_axis(a, idx, axis=d) if a.ndim else a.copy()
        if not keepdim and a.ndim:
            idx, vals = np.squeeze(idx, d), np.squeeze(vals, d)
        ctx.shape, ctx.dim, ctx.keepdim = a.shape, d, keepdim
        ctx.save_for_backward(idx)
        idx = idx.astype(np.int64)
        ctx.mark_non_differentiable(idx)
        return as_array(vals), idx

    @staticmethod
    def backward(ctx, g, g_idx):
        (idx,) = ctx.saved_tensors
        if not ctx.shape:
            return g, None, None
        d = ctx.dim
        if not ctx.keepdim:
            g, idx = np.expand_dims(g, d), np.expand_dims(idx, d)
        out = zeros_like_module(ctx.shape, g)
        array_module(g).put_along_axis(out, idx, g, axis=d)
        return out, None, None


class MaxBackward0(_ExtremumDim):
    _arg = staticmethod(np.argmax)


class MinBackward0(_ExtremumDim):
    _arg = staticmethod(np.argmin)


def _softmax_dtype(a, name):
    if a.dtype.kind != "f":
        word = {"i": "Long", "b": "Bool", "u": "Byte"}.get(a.dtype.kind, str(a.dtype))
        raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{word}'")


class SoftmaxBackward0(Op):
    """``softmax(a, dim)``, computed stably (the max is subtracted first)."""

    _names_saved = ("result",)

    @staticmethod
    def forward(ctx, a, dim):
        _softmax_dtype(a, "softmax")
        (d,) = _dims(dim, a.ndim) or (None,)
        with np.errstate(all="ignore"):  # inf/nan logits give nan quietly, as in PyTorch
            z = a - a.max(axis=d, keepdims=True)
            e = np.exp(z)
            out = e / e.sum(axis=d, keepdims=True)
        ctx.save_for_backward(out)
        ctx.dim = d
        return as_array(out)

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return out * (g - (g * out).sum(axis=ctx.dim, keepdims=True)), None


class LogSoftmaxBackward0(Op):
    """``log_softmax(a, dim)`` = ``a - logsumexp(a)``, stable for logits of 1e4 and beyond."""

    _names_saved = ("result",)

    @staticmethod
    def forward(ctx, a, dim):
        _softmax_dtype(a, "log_softmax")
        (d,) = _dims(dim, a.ndim) or (None,)
        with np.errstate(all="ignore"):
            z = a - a.max(axis=d, keepdims=True)
            out = z - np.log(np.exp(z).sum(axis=d, keepdims=True))
        ctx.save_for_backward(out)
        ctx.dim = d
        return as_array(out)

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g - np.exp(out) * g.sum(axis=ctx.dim, keepdims=True), None
