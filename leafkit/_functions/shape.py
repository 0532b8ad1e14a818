"""Shape operations: view/reshape, transpose, t, permute, expand, squeeze, unsqueeze, cat, stack.

View operations (``_is_view``) return arrays that share storage with their
input; the result shares the input's version counter, as PyTorch's views do.
"""
from __future__ import annotations

import numpy as np

from ._base import Op, array_module


def infer_shape(shape, numel):
    """Resolve one ``-1`` in ``shape``; raise PyTorch's error when sizes disagree."""
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


def _dim(d, ndim):
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


class ViewBackward0(Op):
    """``view``/``reshape`` of a tensor whose memory allows it without copying."""

    _is_view = True

    @staticmethod
    def forward(ctx, a, shape):
        shape = infer_shape(shape, a.size)
        ctx.shape = a.shape
        out = a.view()
        try:
            out.shape = shape  # refuses when a copy would be needed
        except AttributeError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
        return out

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


def viewable(a, shape) -> bool:
    """Can ``a`` be seen with ``shape`` without copying?"""
    try:
        v = a.view()
        v.shape = infer_shape(shape, a.size)
        return True
    except (AttributeError, RuntimeError):
        return False


class ReshapeAliasBackward0(ViewBackward0):
    """``reshape`` of a non-contiguous tensor whose layout still allows a view (PyTorch's name for it)."""


class UnbindBackward0(Op):
    """``unbind(dim)`` (also iterating or unpacking a tensor): one view per index, all from one node."""

    @staticmethod
    def forward(ctx, a, dim):
        if a.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        d = _dim(dim, a.ndim)
        ctx.shape, ctx.d = a.shape, d
        return tuple(a[(slice(None),) * d + (i, Ellipsis)]
                     for i in range(a.shape[d]))

    @staticmethod
    def backward(ctx, *grads):
        xp = array_module(grads[0])
        return xp.stack(grads, axis=ctx.d), None

    @classmethod
    def apply(cls, a, dim):
        from ..autograd.function import _share_view
        outs = super().apply(a, dim)
        for k, o in enumerate(outs):
            _share_view(o, a)
            o._requires_grad = a._requires_grad  # also under no_grad, as PyTorch's views
            o._multi_view = k  # one of several views made by one op: recorded in-place changes are refused
        return outs


class UnsafeViewBackward0(Op):
    """The reshape of a freshly cloned (contiguous) tensor, as ``reshape`` does on a non-contiguous input."""

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        return a.reshape(infer_shape(shape, a.size))

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


class TransposeBackward0(Op):
    _is_view = True

    @staticmethod
    def forward(ctx, a, d0, d1):
        d0, d1 = _dim(d0, a.ndim), _dim(d1, a.ndim)
        ctx.d = (d0, d1)
        return np.swapaxes(a, d0, d1) if a.ndim else a.view()

    @staticmethod
    def backward(ctx, g):
        return (np.swapaxes(g, *ctx.d) if g.ndim else g), None, None


class TBackward0(Op):
    _is_view = True

    @staticmethod
    def forward(ctx, a):
        if a.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
        return a.T

    @staticmethod
    def backward(ctx, g):
        return g.T


class PermuteBackward0(Op):
    _is_view = True

    @staticmethod
    def forward(ctx, a, dims):
        dims = tuple(_dim(d, a.ndim) for d in dims)
        if len(dims) != a.ndim:
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                               f"length of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not "
                               f"equal to len(dims) = {len(dims)}")
        if len(set(dims)) != len(dims):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        ctx.dims = dims
        return np.transpose(a, dims)

    @staticmethod
    def backward(ctx, g):
        return np.transpose(g, np.argsort(ctx.dims)), None


class ExpandBackward0(Op):
    """Broadcast to a larger shape without copying (``-1`` keeps a size)."""

    _is_view = True

    @staticmethod
    def forward(ctx, a, shape):
        shape = tuple(shape)
        if len(shape) < a.ndim:
            raise RuntimeError(f"expand(torch.FloatTensor{{[{', '.join(map(str, a.shape))}]}}, size=[{len(shape)}]): "
                               "the number of sizes provided must be greater or equal to the number of dimensions "
                               "in the tensor")
        lead = len(shape) - a.ndim
        target = []
        for i, s in enumerate(shape):
            if i >= lead and s == -1:
                s = a.shape[i - lead]
            elif s == -1:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            if i >= lead and a.shape[i - lead] not in (1, s):
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                                   f"({a.shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: "
                                   f"[{', '.join(map(str, shape))}].  Tensor sizes: [{', '.join(map(str, a.shape))}]")
            target.append(s)
        ctx.shape = a.shape
        return np.broadcast_to(a, tuple(target))

    @staticmethod
    def backward(ctx, g):
        return g, None  # the engine sums it back to the input's shape


class SqueezeBackward0(Op):
    """Remove every dimension of size 1."""

    _is_view = True

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a.shape
        return np.squeeze(a) if a.ndim else a.view()

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape)


class SqueezeBackward1(Op):
    """Remove dimension ``dim`` when its size is 1."""

    _is_view = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.shape = a.shape
        if a.ndim == 0:
            return a.view()
        d = _dim(dim, a.ndim)
        return np.squeeze(a, d) if a.shape[d] == 1 else a.view()

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


class SqueezeBackward4(SqueezeBackward1):
    """The squeeze PyTorch's matmul applies after ``vector @ matrix``."""


class UnsqueezeBackward0(Op):
    _is_view = True

    @staticmethod
    def forward(ctx, a, dim):
        n = a.ndim + 1
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
        ctx.d = dim % n
        return np.expand_dims(a, ctx.d)

    @staticmethod
    def backward(ctx, g):
        return np.squeeze(g, ctx.d), None


class CatBackward0(Op):
    """Concatenate tensors along ``dim``."""

    @staticmethod
    def forward(ctx, dim, *arrays):
        if not arrays:
            raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
        d = _dim(dim, arrays[0].ndim)
        for i, a in enumerate(arrays[1:], 1):
            for k in range(a.ndim):
                if k != d and a.shape[k] != arrays[0].shape[k]:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                       f"{arrays[0].shape[k]} but got size {a.shape[k]} for tensor number {i} in "
                                       "the list.")
        ctx.d, ctx.sizes = d, [a.shape[d] for a in arrays]
        return np.concatenate(arrays, axis=d)

    @staticmethod
    def backward(ctx, g):
        cuts = np.cumsum(ctx.sizes)[:-1]
        return (None, *np.split(g, cuts, axis=ctx.d))


class StackBackward0(Op):
    """Stack tensors of one shape along a new ``dim``."""

    @staticmethod
    def forward(ctx, dim, *arrays):
        if not arrays:
            raise RuntimeError("stack expects a non-empty TensorList")
        for i, a in enumerate(arrays[1:], 1):
            if a.shape != arrays[0].shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"[{', '.join(map(str, arrays[0].shape))}] at entry 0 and "
                                   f"[{', '.join(map(str, a.shape))}] at entry {i}")
        ctx.d = _dim(dim, arrays[0].ndim + 1)
        return np.stack(arrays, axis=ctx.d)

    @staticmethod
    def backward(ctx, g):
        return (None, *(np.take(g, i, axis=ctx.d) for i in range(g.shape[ctx.d])))


class AliasBackward0(Op):
    """``a[...]`` / ``a[()]``: the same elements, as a view."""

    _is_view = True

    @staticmethod
    def forward(ctx, a):
        return a.view()

    @staticmethod
    def backward(ctx, g):
        return g
