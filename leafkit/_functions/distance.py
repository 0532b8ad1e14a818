"""Distances between tensors: ``cosine_similarity`` and ``pairwise_distance``.

Neither is an operation of its own, in leafkit as in PyTorch (``Distance.cpp``):
both are composed of registered ops, so their graphs are PyTorch's.
``cosine_similarity``: ``SumBackward1`` over ``MulBackward0`` over two
``DivBackward0`` nodes, each dividing an input by a ``CloneBackward0`` of its
``LinalgVectorNormBackward0``; ``pairwise_distance``: ``NormBackward1`` over
``AddBackward1`` and ``SubBackward0``.
"""

from __future__ import annotations

from .. import _dtype
from ..autograd.grad_mode import no_grad
from ._base import broadcast_shapes, check_tensor, result_type
from ._base import dim as _dim
from ._registry import apply, public
from .elementwise import add_scalar as _add_scalar_spec
from .reduction import norm_dim as _norm_dim


@public("cosine_similarity", method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``: ``<x1, x2> / (||x1|| * ||x2||)``.

    Computed as PyTorch computes it: each input is divided by its 2-norm
    along ``dim`` first (a ``clone()`` of the norm, raised to at least
    ``eps`` in place under ``no_grad``), then the products are summed, so
    the result stays within [-1, 1].  A zero vector gives 0.

    Parameters
    ----------
    x1, x2 : Tensor
        Shapes that broadcast (when they differ, both are expanded to the
        common shape, ``ExpandBackward0``); integer and bool inputs are
        converted to the common floating dtype.
    dim : int
        The dimension of the vectors (default 1).
    eps : float
        The smallest norm divided by (default 1e-8).

    Returns
    -------
    Tensor
        The broadcast shape without ``dim`` (``SumBackward1``), in the common
        dtype, on the inputs' device.

    Raises
    ------
    RuntimeError
        A common dtype that is not floating ("expected common dtype to be
        floating point, yet common dtype is Long"); shapes that do not
        broadcast ("The size of tensor a (3) must match the size of tensor
        b (4) at non-singleton dimension 1").
    IndexError
        ``dim`` out of range.
    TypeError
        An input that is not a Tensor.
    """
    check_tensor("cosine_similarity", "x1", x1)
    check_tensor("cosine_similarity", "x2", x2, 2)
    common = result_type(x1._data, x2._data)
    if common.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_dtype.word(common)}")
    if x1._data.dtype.kind != "f":
        x1 = x1.to(_dtype.from_numpy_dtype(common))
    if x2._data.dtype.kind != "f":
        x2 = x2.to(_dtype.from_numpy_dtype(common))
    shape = tuple(x1.shape)
    if shape != tuple(x2.shape):  # PyTorch's expand_outplace: both are expanded when the shapes differ
        shape = broadcast_shapes(shape, tuple(x2.shape))
        x1, x2 = x1.expand(shape), x2.expand(shape)
    d = _dim(dim, len(shape))
    x1_norm = x1.norm(2, d, keepdim=True).clone()
    x2_norm = x2.norm(2, d, keepdim=True).clone()
    with no_grad():
        x1_norm.clamp_(min=eps)
        x2_norm.clamp_(min=eps)
    return ((x1 / x1_norm) * (x2 / x2_norm)).sum(d)


@public("pairwise_distance", method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dimension, as PyTorch computes it (``NormBackward1`` over
    ``AddBackward1`` and ``SubBackward0``); ``p`` 1 or 2 for gradients.  0-d inputs give ``|x1 - x2 + eps|``."""
    check_tensor("pairwise_distance", "x1", x1)
    dim = max(x1.dim(), x2.dim()) - 1
    diff = apply(_add_scalar_spec, (x1 - x2, eps))  # ATen adds a C++ Scalar: AddBackward1
    return _norm_dim(diff, p, max(dim, 0) if diff.dim() else None, keepdim) if diff.dim() else diff.abs()
