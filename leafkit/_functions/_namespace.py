"""The two namespaces backward formulas run in.

A derivative formula is written once, against a namespace ``F``:

* :data:`array_ns` runs it on NumPy/CuPy arrays: a plain backward pass,
  nothing recorded, as fast as the arrays go;
* :data:`tensor_ns` runs it on tensors with grad mode on: the backward pass
  is itself recorded (``create_graph=True``), so its results can be
  differentiated again.

Every registered op is in both under its name (``F.mul_scalar``, ``F.cos``,
``F.tanh_backward``): its forward in :data:`array_ns`, the recorded op in
:data:`tensor_ns`.  One exception: :data:`array_ns` expands with NumPy's (or
CuPy's) ``broadcast_to`` itself, since a formula always asks for a valid
size and needs none of ``expand``'s argument checks.  Python operators (``grad * other``, ``-grad``) work in
both, since arrays and tensors both have them.  The few helpers below are
what the engine itself needs (summing a gradient back to an input's shape,
casting it, zeros for a missing gradient).
"""

from __future__ import annotations

import numpy as np

from .._device import array_module
from .._dtype import from_numpy_dtype
from .._tensor import Tensor
from ._base import quiet

__all__ = ["array_ns", "tensor_ns", "add_op"]


def _invalid_gradient(g_shape, shape, node, i):
    name = node.name() if node is not None else "backward"
    return RuntimeError(
        f"Function {name} returned an invalid gradient at index {i} - got "
        f"[{', '.join(map(str, g_shape))}] but expected shape compatible with "
        f"[{', '.join(map(str, shape))}]"
    )


def reduce_dims(g_shape, shape):
    """The dims ``at::sum_to`` sums over to bring ``g_shape`` back to ``shape`` (None if it cannot)."""
    lead = len(g_shape) - len(shape)
    if lead < 0:
        return None
    dims = list(range(lead))
    for i in range(lead, len(g_shape)):
        s = shape[i - lead]
        if s == 1 and g_shape[i] != 1:
            dims.append(i)
        elif s != g_shape[i]:
            return None
    return tuple(dims)


class ArrayNamespace:
    """Formulas on raw arrays (a plain backward pass)."""

    records = False
    expand = staticmethod(np.broadcast_to)  # CuPy arrays go to cupy.broadcast_to (NumPy's __array_function__)

    @staticmethod
    def sum_to(g, shape, node=None, i=0):
        """Sum ``g`` over broadcast dimensions so that it has ``shape`` (PyTorch's ``at::sum_to``)."""
        gs = g.shape
        if len(gs) == len(shape) + 1 and gs[1:] == shape:  # one leading dimension (a bias over a batch): the same
            return g.sum(axis=0)  # sum as below, without the dims' walk, keepdims and reshape
        dims = reduce_dims(gs, shape)
        if dims is None:
            raise _invalid_gradient(g.shape, shape, node, i)
        if dims:
            g = g.sum(axis=dims, keepdims=True)
        if g.shape != shape:
            g = g.reshape(shape)
        return g

    @staticmethod
    def cast(g, dtype):
        return g.astype(dtype)

    @staticmethod
    def zeros(shape, dtype, like):
        return array_module(like).zeros(shape, dtype=dtype)

    @staticmethod
    def has_nan(g) -> bool:
        return bool(array_module(g).isnan(g).any())

    @staticmethod
    def own(g):
        """``g`` as a writeable array of its own (a broadcast view is copied)."""
        if isinstance(g, np.generic):
            return np.asarray(g).copy()
        return g if g.flags.writeable else g.copy()


class TensorNamespace:
    """Formulas on tensors, recorded (a backward pass with ``create_graph=True``)."""

    records = True

    @staticmethod
    def sum_to(g, shape, node=None, i=0):
        dims = reduce_dims(g._data.shape, shape)
        if dims is None:
            raise _invalid_gradient(g._data.shape, shape, node, i)
        if not shape:
            return tensor_ns.sum(g)
        if dims:
            g = tensor_ns.sum_dim(g, dims, True)
        if len(g._data.shape) != len(shape):
            g = tensor_ns.view(g, shape)
        return g

    @staticmethod
    def cast(g, dtype):
        return g.to(from_numpy_dtype(dtype))

    @staticmethod
    def zeros(shape, dtype, like):
        return Tensor._make(array_module(like._data).zeros(shape, dtype=dtype), like._device)

    @staticmethod
    def has_nan(g) -> bool:
        return bool(array_module(g._data).isnan(g._data).any())

    @staticmethod
    def own(g):
        return g


array_ns = ArrayNamespace()
tensor_ns = TensorNamespace()


def add_op(spec, apply) -> None:
    """Make a registered op callable as ``F.<name>`` in both namespaces (``apply`` records it on tensors).

    The op's forward is made quiet first (:func:`._base.quiet`): NumPy's floating-point warnings never reach
    the user, as PyTorch prints none.  A view's forward does no arithmetic and stays as it is.
    """
    if not spec.view:
        spec.forward = quiet(spec.forward)
    if spec.name not in vars(ArrayNamespace):  # (expand: see the module docstring)
        setattr(array_ns, spec.name, spec.forward)
    setattr(tensor_ns, spec.name, lambda *args, _spec=spec: apply(_spec, args))
