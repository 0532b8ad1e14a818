"""leafkit's differentiable operations: the registry and its entries, one module per family.

Each family module holds ``defop`` entries (see :mod:`._registry`): an op's
forward on arrays and its derivative formulas, from which its node class
(named as PyTorch names it), its ``Tensor`` method, its in-place variant and
its ``torch.*`` function are made.  Importing this package registers every
op, installs the methods on ``Tensor``, and hands the autograd core the
interface it needs (:data:`leafkit.autograd.graph.api`).  Unless
``LEAFKIT_FAST=0``, it first puts the speed-ups of :mod:`._fast` in place of
the reference path's hot functions.

Families: :mod:`.elementwise`, :mod:`.reduction`, :mod:`.shape`,
:mod:`.linalg`, :mod:`.indexing`, :mod:`.copy`, :mod:`.loss`, :mod:`.activation`, :mod:`.distance`,
:mod:`.conv` (convolution, constant padding), :mod:`.pooling` (max, average, adaptive average),
:mod:`.inplace` (and the view machinery in :mod:`.views`), :mod:`.compare`.
"""

from __future__ import annotations

from .. import _dtype
from ..autograd import graph as _graph
from .._device import array_module
from .._tensor import Tensor
from . import _namespace  # noqa: F401 - first: the namespaces the op modules add their ops to
from . import _batched  # noqa: E402
from ._namespace import array_ns, tensor_ns
from . import _fast  # the speed-ups (LEAFKIT_FAST=0: the reference path): in place before the op families import

if _fast.ENABLED:
    _fast.install()
from ._registry import PUBLIC, SPECS, apply, defop, public  # noqa: F401
from . import inplace, elementwise, reduction, shape, linalg, copy, indexing, loss, compare  # noqa: F401,E401
from . import nn_ops  # noqa: F401,E402  (the nn layers' ops: native_batch_norm)
from . import activation  # noqa: F401,E402  (gelu, silu, elu, leaky_relu, softplus, hardtanh, log_sigmoid, logit)
from . import distance  # noqa: F401,E402  (cosine_similarity)
from . import promotion  # noqa: F401,E402  (result_type, promote_types, can_cast)
from . import conv  # noqa: F401,E402  (convolution, convolution_backward, constant_pad_nd)
from . import pooling  # noqa: F401,E402  (max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d)
from . import unique_ops  # noqa: F401,E402  (unique, unique_consecutive)
from . import composite  # noqa: F401,E402  (the surface PyTorch composes: hstack, nonzero, tensor_split ...)
from . import views  # noqa: E402

_fast._INVALID[0] = views.Invalid  # the fast recording checks a view's grad_fn for it
_fast.COPY_SLICES = views.CopySlices  # the fast pass frees other nodes' saved values itself
if _fast.installed():
    _fast.install_operators(
        {
            "__add__": elementwise.add_spec,
            "__radd__": elementwise.add_spec,
            "__sub__": elementwise.sub_spec,
            "__mul__": elementwise.mul_spec,
            "__rmul__": elementwise.mul_spec,
            "__truediv__": elementwise.div_spec,
        }
    )


# -- helpers the derivative formulas use besides the ops --------------------------------------------------------------
def _index_flat(F, x, idx):
    return F.index(x, (idx.reshape(-1),))


def _index_put_flat(F, x, idx, values, accumulate):
    return F.index_put_impl(x, values, (idx.reshape(-1),), accumulate)


array_ns.reshape = staticmethod(lambda g, size: g.reshape(size))
array_ns.zeros_like = staticmethod(lambda g: array_module(g).zeros_like(g))
array_ns.ones_like = staticmethod(lambda g: array_module(g).ones_like(g))
array_ns.new_zeros = staticmethod(lambda size, like: array_module(like).zeros(size, dtype=like.dtype))
array_ns.isnan = staticmethod(lambda g: array_module(g).isnan(g))
array_ns.isnan_item = staticmethod(lambda g: bool(array_module(g).isnan(g)))
array_ns.index_flat = lambda x, idx: _index_flat(array_ns, x, idx)
array_ns.index_put_flat = lambda x, idx, v, acc: _index_put_flat(array_ns, x, idx, v, acc)


def _filled(like, size, fill):
    """A tensor of ``size`` filled with ``fill`` (0 or 1), ``like``'s dtype and device; batched as ``like`` is inside
    vmap (a batched gradient's zeros are batched, as PyTorch's ``new_zeros`` of a batched tensor)."""

    def make(s):
        xp = array_module(like._device)
        arr = xp.zeros(s, dtype=like._data.dtype) if fill == 0 else xp.ones(s, dtype=like._data.dtype)
        return Tensor._make(arr, like._device)

    if like.__class__ is _batched.BatchedTensor:
        return _batched.batched_as(like, make, size)
    return make(size)


def _zeros_like_t(g):
    return _filled(g, g._data.shape, 0)


tensor_ns.reshape = staticmethod(lambda g, size: g.reshape(size))
tensor_ns.zeros_like = staticmethod(_zeros_like_t)
tensor_ns.ones_like = staticmethod(lambda g: _filled(g, g._data.shape, 1))
tensor_ns.new_zeros = staticmethod(lambda size, like: _filled(like, tuple(size), 0))
tensor_ns.isnan = staticmethod(lambda g: compare.isnan(g))
tensor_ns.isnan_item = staticmethod(lambda g: bool(array_module(g._data).isnan(g._data)))
tensor_ns.index_flat = lambda x, idx: _index_flat(tensor_ns, x, idx)
tensor_ns.index_put_flat = lambda x, idx, v, acc: _index_put_flat(tensor_ns, x, idx, v, acc)


# -- the interface the autograd core works through ---------------------------------------------------------------------
_graph.api.tensor_type = Tensor
_graph.api.wrap = Tensor._make
_graph.api.array_ns = array_ns
_graph.api.tensor_ns = tensor_ns
_graph.api.type_string = _dtype.type_string

# the torch.* functions
FUNCTIONS = {name: fn for name, (fn, method, function) in PUBLIC.items() if function}
__all__ = sorted(FUNCTIONS)
globals().update(FUNCTIONS)
