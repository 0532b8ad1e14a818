"""Indexing: ``select`` (an int), ``slice`` (a slice), ``index`` (index arrays / masks)."""
from __future__ import annotations

import numpy as np

from ._base import Op, array_module, as_array, zeros_like_module


class _BasicIndex(Op):
    """A view picked by a basic index ``ctx.key``; backward writes the gradient into zeros at that key."""

    _is_view = True

    @staticmethod
    def backward(ctx, g):
        out = zeros_like_module(ctx.shape, g)
        out[ctx.key] = g
        return out, None, None


class SelectBackward0(_BasicIndex):
    """``a[..., i, ...]`` along one dim: a view."""

    @staticmethod
    def forward(ctx, a, dim, index):
        size = a.shape[dim]
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
        ctx.shape, ctx.key = a.shape, (slice(None),) * dim + (index,)
        return a[ctx.key + (Ellipsis,)]  # with the Ellipsis a 0-d result is a view too, not a NumPy scalar


class SliceBackward0(_BasicIndex):
    """``a[..., start:stop:step, ...]`` along one dim: a view."""

    @staticmethod
    def forward(ctx, a, dim, sl):
        if sl.step is not None and sl.step <= 0:
            raise ValueError("step must be greater than zero")
        ctx.shape, ctx.key = a.shape, (slice(None),) * dim + (sl,)
        return a[ctx.key]


class IndexBackward0(Op):
    """Advanced indexing (integer arrays, boolean masks): a copy; repeated indices add up in backward."""

    _names_saved = ("indices",)

    @staticmethod
    def forward(ctx, a, key):
        ctx.shape, ctx.key = a.shape, key
        try:
            return as_array(a[key])
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None

    @staticmethod
    def backward(ctx, g):
        out = zeros_like_module(ctx.shape, g)
        array_module(g).add.at(out, ctx.key, g)
        return out, None
