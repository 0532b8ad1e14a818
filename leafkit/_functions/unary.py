"""Elementwise functions of one tensor: neg, exp, log, sqrt, abs, relu, sigmoid, tanh, clamp."""
from __future__ import annotations

import numpy as np

from ._base import Op, array_module


def _float(a):
    if a.dtype.kind != "f":
        from .._dtype import get_default_dtype
        return a.astype(get_default_dtype().np)
    return a


def _arr(x):
    return np.asarray(x) if isinstance(x, np.generic) else x


class NegBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        if a.dtype.kind == "b":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                               "invert a mask, use the `~` or `logical_not()` operator instead.")
        return _arr(-a)

    @staticmethod
    def backward(ctx, g):
        return -g


class ExpBackward0(Op):
    _names_saved = ("result",)

    @staticmethod
    def forward(ctx, a):
        with np.errstate(over="ignore"):
            out = _arr(np.exp(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out


class LogBackward0(Op):
    _names_saved = ("self",)

    @staticmethod
    def forward(ctx, a):
        a = _float(a)
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _arr(np.log(a))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            return g / a


class SqrtBackward0(Op):
    _names_saved = ("result",)

    @staticmethod
    def forward(ctx, a):
        with np.errstate(invalid="ignore"):
            out = _arr(np.sqrt(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            return g / (2 * out)


class AbsBackward0(Op):
    _names_saved = ("self",)

    @staticmethod
    def forward(ctx, a):
        if a.dtype.kind == "b":
            raise RuntimeError("\"abs_cpu\" not implemented for 'Bool'")
        ctx.save_for_backward(a)
        return _arr(np.abs(a))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        s = np.sign(a)
        return g * np.where(s == s, s, 0)  # sign(nan) counts as 0, as in PyTorch


class ReluBackward0(Op):
    _names_saved = ("result",)

    @staticmethod
    def forward(ctx, a):
        out = _arr(np.maximum(a, 0))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * ~(out <= 0)  # PyTorch's threshold rule: a NaN result passes the gradient


class SigmoidBackward0(Op):
    _names_saved = ("result",)

    @staticmethod
    def forward(ctx, a):
        a = _float(a)
        with np.errstate(over="ignore"):
            out = _arr(1 / (1 + np.exp(-a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * (1 - out)


class TanhBackward0(Op):
    _names_saved = ("result",)

    @staticmethod
    def forward(ctx, a):
        out = _arr(np.tanh(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * (1 - out * out)


class ClampBackward1(Op):
    """``clamp(a, min, max)``; the gradient passes where ``min <= a <= max``."""

    _names_saved = ("self",)

    @staticmethod
    def forward(ctx, a, lo=None, hi=None):
        if lo is None and hi is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        if a.dtype.kind in "biu" and (isinstance(lo, float) or isinstance(hi, float)):
            a = _float(a)  # PyTorch: float bounds on an integer tensor give the default float dtype
        ctx.save_for_backward(a)
        ctx.lo, ctx.hi = lo, hi
        return _arr(np.clip(a, lo, hi))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        mask = array_module(a).ones(a.shape, dtype=bool)
        if ctx.lo is not None:
            mask &= a >= ctx.lo
        if ctx.hi is not None:
            mask &= a <= ctx.hi
        return g * mask, None, None
