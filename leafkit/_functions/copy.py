"""Copies: ``clone`` (CloneBackward0) and dtype/device moves (ToCopyBackward0)."""
from __future__ import annotations

import numpy as np

from .. import _device
from ._base import Op


class CloneBackward0(Op):
    """A copy with its own storage; the gradient passes straight through."""

    @staticmethod
    def forward(ctx, a):
        return a.copy()

    @staticmethod
    def backward(ctx, g):
        return g


class ToCopyBackward0(Op):
    """A copy to another dtype and/or device (``.to``, ``.cuda()``, ``.cpu()``, ``.double()`` ...).

    Backward casts the gradient back to the source dtype (done by the engine)
    and moves it back to the source device (done here).
    """

    @staticmethod
    def forward(ctx, a, np_dtype, src, dst):
        ctx.src, ctx.dst = src, dst
        out = a
        if src is not dst:
            out = _device.to_device_array(a, src, dst)
        if np_dtype is not None and out.dtype != np_dtype:
            out = out.astype(np_dtype)
        elif out is a:
            out = a.copy()
        return out

    @staticmethod
    def backward(ctx, g):
        if ctx.src is not ctx.dst:
            g = _device.to_device_array(g, ctx.dst, ctx.src)
        return g, None, None, None

    @classmethod
    def apply(cls, a, np_dtype, src, dst):
        out = super().apply(a, np_dtype, src, dst)
        if dst is not src:
            out._device = dst
            if out._grad_fn is not None:
                out._grad_fn._device = dst
        return out
