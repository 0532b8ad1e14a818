"""Reductions: sum, mean, max/min (all elements or along a dim), norm, softmax, log_softmax; scatter and gather.

Formulas follow PyTorch's: the gradient of ``sum`` is ``grad.expand(sizes)``
(``ExpandBackward0``), of ``mean`` that divided by the count
(``DivBackward1``), of a whole-tensor ``max`` the gradient shared evenly
among the tied elements (``MaskedFillBackward1``), of ``max(dim)`` the
gradient scattered to the chosen indices (``ScatterBackward0``).
"""
from __future__ import annotations

import numpy as np

from .. import _dtype, return_types
from .._tensor import Tensor
from ._base import array_module, as_array, check_tensor, dim as _dim, dims as _dims, numpy_names
from ._registry import apply, defop, public
from .inplace import inplace
from .elementwise import maximum, minimum


def _unsqueeze_multiple(F, grad, dim, keepdim):
    if not keepdim:
        for d in sorted(dim):
            grad = F.unsqueeze(grad, d)
    return grad


def _sum_dtype(a):
    return np.int64 if a.dtype.kind in "biu" else None


sum_spec = defop("sum", lambda self: as_array(self.sum(dtype=_sum_dtype(self))),
                 self=lambda F, grad, self_sym_sizes: F.expand(grad, self_sym_sizes))
sum_dim_spec = defop(
    "sum_dim", lambda self, dim, keepdim=False: as_array(self.sum(axis=dim, keepdims=keepdim, dtype=_sum_dtype(self))),
    node="SumBackward1",
    self=lambda F, grad, self_sym_sizes, dim, keepdim: F.expand(_unsqueeze_multiple(F, grad, dim, keepdim),
                                                                self_sym_sizes))


def _need_float(a, name):
    if a.dtype.kind != "f":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.word(a.dtype)}")


def _acc(a):
    """Accumulation dtype: float16 sums in float32 (as PyTorch's CPU kernels do), others in their own dtype."""
    return np.float32 if a.dtype == np.float16 else a.dtype


def _mean(self):
    _need_float(self, "mean")
    if not self.size:  # the mean of nothing is nan, without NumPy's "Mean of empty slice" warning
        return as_array(array_module(self).full((), np.nan, dtype=self.dtype))
    return as_array(self.mean(dtype=_acc(self)).astype(self.dtype))


def _mean_dim(self, dim, keepdim=False):
    _need_float(self, "mean")
    if not self.size:  # nan where nothing is averaged; 0 elements stay 0 elements
        return as_array((self.sum(axis=dim, keepdims=keepdim, dtype=_acc(self)) / 0).astype(self.dtype))
    return as_array(self.mean(axis=dim, keepdims=keepdim, dtype=_acc(self)).astype(self.dtype))


mean_spec = defop("mean", _mean,
                  self=lambda F, grad, self_sym_sizes, self_sym_numel: F.div_scalar(F.expand(grad, self_sym_sizes),
                                                                                    self_sym_numel))
mean_dim_spec = defop(
    "mean_dim", _mean_dim, node="MeanBackward1",
    self=lambda F, grad, self_sym_sizes, dim, keepdim: F.div_scalar(
        F.expand(_unsqueeze_multiple(F, grad, dim, keepdim), self_sym_sizes),
        int(np.prod([self_sym_sizes[d] for d in dim])) if dim else 1))


@public("sum")
@numpy_names
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - PyTorch's name
    """Sum of all elements (``SumBackward0``, a 0-d tensor) or along ``dim`` (an int or tuple;
    ``SumBackward1``), keeping reduced dims of size 1 when ``keepdim``.  Integer and bool input sums to int64.

    Raises ``IndexError`` for a dim out of range, ``RuntimeError`` for a repeated dim."""
    check_tensor("sum", "input", input)
    src = input.to(dtype) if dtype is not None else input
    if dim is None:
        return apply(sum_spec, (src,))
    return apply(sum_dim_spec, (src, _dims(dim, src._data.ndim), bool(keepdim)))


@public("mean")
@numpy_names
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements (``MeanBackward0``) or along ``dim`` (``MeanBackward1``).

    Raises ``RuntimeError`` for integer input ("Input dtype must be either a floating point"), as PyTorch does."""
    check_tensor("mean", "input", input)
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.word(dtype.np)}")
    src = input.to(dtype) if dtype is not None else input
    if dim is None:
        return apply(mean_spec, (src,))
    return apply(mean_dim_spec, (src, _dims(dim, src._data.ndim), bool(keepdim)))


# -- max / min ----------------------------------------------------------------------------------------------------
def _evenly_distribute(F, grad, self, result):
    """PyTorch's evenly_distribute_backward: tied extremes share the gradient."""
    mask = F.isnan(self) if F.isnan_item(result) else (self == result)
    return F.masked_fill_tensor(F.new_zeros(tuple(self.shape), grad), mask, grad / F.sum(mask))


def _extremum_all(np_fn, name):
    def forward(self):
        if self.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.")
        return as_array(np_fn(self))
    return forward


max_spec = defop("max", _extremum_all(np.max, "max"), node="MaxBackward1", self=_evenly_distribute)
min_spec = defop("min", _extremum_all(np.min, "min"), node="MinBackward1", self=_evenly_distribute)


def _value_selecting_backward(F, grad, dim, indices, self_sym_sizes, keepdim):
    if not self_sym_sizes:
        return grad
    if not keepdim:
        grad, indices = F.unsqueeze(grad, dim), F.unsqueeze(indices, dim)
    return F.scatter(F.new_zeros(self_sym_sizes, grad), indices, grad, dim)


def _extremum_dim(arg_fn, name):
    def forward(self, dim, keepdim=False):
        xp = array_module(self)
        if self.ndim and self.shape[dim] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
        if not self.ndim:
            return self.copy(), xp.asarray(0, dtype=np.int64)
        idx = as_array(arg_fn(self, axis=dim, keepdims=True))
        vals = xp.take_along_axis(self, idx, axis=dim)
        if not keepdim:
            idx, vals = xp.squeeze(idx, dim), xp.squeeze(vals, dim)
        return as_array(vals), as_array(idx.astype(np.int64))
    return forward


max_dim_spec = defop("max_dim", _extremum_dim(np.argmax, "max"), node="MaxBackward0", outputs=("values", "indices"),
                     nondiff_outputs=("indices",), self=_value_selecting_backward)
min_dim_spec = defop("min_dim", _extremum_dim(np.argmin, "min"), node="MinBackward0", outputs=("values", "indices"),
                     nondiff_outputs=("indices",), self=_value_selecting_backward)


def _extremum(spec_all, spec_dim, result_type, name):
    def fn(input, dim=None, keepdim=False):
        check_tensor(name, "input", input)
        if isinstance(dim, Tensor):
            return (maximum if name == "max" else minimum)(input, dim)
        if dim is None:
            return apply(spec_all, (input,))
        return result_type(apply(spec_dim, (input, _dim(dim, input._data.ndim), bool(keepdim))))
    fn.__name__ = name
    fn.__doc__ = (f"Whole-tensor {name} (``{spec_all.node_cls.__name__}``, a 0-d tensor; tied elements share the "
                  f"gradient evenly), or with ``dim`` a ``(values, indices)`` named tuple "
                  f"(``{spec_dim.node_cls.__name__}``; indices are int64 and never require grad).  With a tensor "
                  f"as second argument, the elementwise {name}imum.")
    return fn


public("max")(numpy_names(_extremum(max_spec, max_dim_spec, return_types.max, "max")))
public("min")(numpy_names(_extremum(min_spec, min_dim_spec, return_types.min, "min")))


def _arg_extremum(np_fn, name):
    def fn(input, dim=None, keepdim=False):
        check_tensor(name, "input", input)
        d = input._data
        if d.dtype.kind == "b":
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if d.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return Tensor._make(as_array(np_fn(d)).astype(np.int64), input._device)
        axis = _dim(dim, d.ndim)
        if d.ndim and d.shape[axis] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
        out = np_fn(d, axis=axis) if d.ndim else np_fn(d)
        if keepdim and d.ndim:
            out = array_module(d).expand_dims(out, axis)
        return Tensor._make(as_array(out).astype(np.int64), input._device)
    fn.__name__ = name
    fn.__doc__ = f"Index of the {name[3:]}imum element (flattened, or along ``dim``) as an int64 tensor; not " \
                 "differentiable."
    return fn


public("argmax")(numpy_names(_arg_extremum(np.argmax, "argmax")))
public("argmin")(numpy_names(_arg_extremum(np.argmin, "argmin")))


# -- scatter / gather ---------------------------------------------------------------------------------------------
def _nonempty(shape):
    """PyTorch's ``ensure_nonempty_size``: a 0-d tensor counts as one element along one dimension."""
    return tuple(shape) or (1,)


def _check(name, self, dim, index, src=None):
    """PyTorch's checks of gather and scatter, in its order: the index dtype (int32 or int64, unless the index is
    empty), ``src``'s dtype, the index's number of dimensions and sizes, then the bounds of its values (negative
    indices count as out of bounds)."""
    empty = index.size == 0
    if not empty and index.dtype != np.int64 and index.dtype != np.int32:
        raise RuntimeError(f"{'gather' if name == 'gather' else 'scatter'}(): Expected dtype int32/int64 for index")
    if name == "gather":
        if empty:
            return
        s_shape, i_shape = _nonempty(self.shape), _nonempty(index.shape)
        if len(s_shape) != len(i_shape):
            raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
        for d, (i, n) in enumerate(zip(i_shape, s_shape)):
            if d != dim and i > n:
                raise RuntimeError(f"Size does not match at dimension {d} expected index {list(index.shape)} to be no "
                                   f"larger than self {list(self.shape)} apart from dimension {dim}")
    else:
        if hasattr(src, "dtype") and src.dtype != self.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        if empty:
            return
        s_shape, i_shape = _nonempty(self.shape), _nonempty(index.shape)
        if len(s_shape) != len(i_shape):
            raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
        wrong = any(d != dim and i > n for d, (i, n) in enumerate(zip(i_shape, s_shape)))
        if hasattr(src, "shape"):
            wrong = wrong or any(i > n for i, n in zip(i_shape, _nonempty(src.shape)))
            if wrong:
                raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
                                   f"apart from dimension {dim} and to be no larger size than src {list(src.shape)}")
        elif wrong:
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
                               f"apart from dimension {dim}")
    size = _nonempty(self.shape)[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise RuntimeError(f"index {int(index[bad].reshape(-1)[0])} is out of bounds for dimension {dim} with size "
                           f"{size}")


def _src_part(src, index):
    """PyTorch reads only the first ``index.shape`` elements of ``src``."""
    if not hasattr(src, "shape"):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def _along(index, dim):
    """Fancy indices that pick ``index`` along ``dim`` and the same position elsewhere (index may be smaller
    than the tensor in every dimension, as PyTorch allows)."""
    idx = list(array_module(index).indices(index.shape, sparse=True))
    idx[dim] = index
    return tuple(idx)


def _as_1d(*arrays):
    """0-d arrays as 1-element 1-d ones (PyTorch's kernels see a 0-d tensor as one element along one dimension)."""
    return [a.reshape(1) if hasattr(a, "ndim") and a.ndim == 0 else a for a in arrays]


def _scatter(self, dim, index, src):
    _check("scatter", self, dim, index, src)
    out, idx, s = _as_1d(self.copy(), index, src)
    out[_along(idx, dim)] = _src_part(s, idx) if hasattr(s, "shape") else self.dtype.type(s)
    return out.reshape(self.shape)


def _gather(self, dim, index):
    _check("gather", self, dim, index)
    a, idx = _as_1d(self, index)
    return as_array(a[_along(idx, dim)]).reshape(index.shape)


def _scatter_add(self, dim, index, src):
    _check("scatter_add", self, dim, index, src)
    out, idx, s = _as_1d(self.copy(), index, src)
    array_module(self).add.at(out, _along(idx, dim), _src_part(s, idx))
    return out.reshape(self.shape)


scatter_spec = defop("scatter", lambda self, index, src, dim: _scatter(self, dim, index, src),
                     inputs=("self", "index", "src"), nondiff=("index",), node="ScatterBackward0",
                     self=lambda F, grad, dim, index: F.scatter_value(grad, index, 0.0, dim),
                     src=lambda F, grad, dim, index: F.gather(grad, index, dim))
scatter_value_spec = defop("scatter_value", lambda self, index, value, dim: _scatter(self, dim, index, value),
                           inputs=("self", "index"), nondiff=("index",), node="ScatterBackward1",
                           self=lambda F, grad, dim, index: F.scatter_value(grad, index, 0.0, dim))
gather_spec = defop("gather", lambda self, index, dim: _gather(self, dim, index), inputs=("self", "index"),
                    nondiff=("index",),
                    # PyTorch's gather_backward saves self (not only its sizes): changing it in place breaks backward
                    self=lambda F, grad, self, dim, index: F.scatter_add(F.new_zeros(tuple(self.shape), grad),
                                                                         index, grad, dim))
scatter_add_spec = defop("scatter_add", lambda self, index, src, dim: _scatter_add(self, dim, index, src),
                         inputs=("self", "index", "src"), nondiff=("index",),
                         self=lambda F, grad: grad,
                         src=lambda F, grad, dim, index: F.gather(grad, index, dim))


def _scatter_args(input, dim, index, src, value, name):
    check_tensor(name, "index", index, 3)
    d = _dim(dim, input._data.ndim)
    if src is None:
        src = value
    if isinstance(src, Tensor):
        return scatter_spec, (input, index, src, d)
    return scatter_value_spec, (input, index, src, d)


@public("scatter")
@numpy_names
def scatter(input, dim, index, src=None, *, value=None):
    """Write ``src`` (or the number ``value``) into a copy of ``input`` at ``index`` along ``dim``
    (``ScatterBackward0`` / ``ScatterBackward1``).

    ``index`` is int64 or int32, with as many dimensions as ``input`` and no larger than it (apart from ``dim``)
    or than ``src``; PyTorch's RuntimeError otherwise, and for an index out of bounds (negative ones too) or a
    ``src`` of another dtype."""
    check_tensor("scatter", "input", input)
    spec, args = _scatter_args(input, dim, index, src, value, "scatter")
    return apply(spec, args)


@public("scatter_", function=False)
def scatter_(self, dim, index, src=None, *, value=None):
    """In-place :meth:`scatter`."""
    spec, args = _scatter_args(self, dim, index, src, value, "scatter_")
    return inplace(self, spec, args)


@public("gather")
@numpy_names
def gather(input, dim, index):
    """The elements of ``input`` at ``index`` along ``dim`` (``GatherBackward0``); the result has ``index``'s shape.

    ``index`` is int64 or int32, with as many dimensions as ``input`` and no larger than it apart from ``dim``;
    PyTorch's RuntimeError otherwise and for an index out of bounds (negative ones too)."""
    check_tensor("gather", "input", input)
    check_tensor("gather", "index", index, 3)
    return apply(gather_spec, (input, index, _dim(dim, input._data.ndim)))


@public("scatter_add")
@numpy_names
def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (``ScatterAddBackward0``); the checks of
    :func:`scatter`."""
    check_tensor("scatter_add", "input", input)
    check_tensor("scatter_add", "index", index, 3)
    return apply(scatter_add_spec, (input, index, src, _dim(dim, input._data.ndim)))


@public("scatter_add_", function=False)
def scatter_add_(self, dim, index, src):
    """In-place :meth:`scatter_add`."""
    check_tensor("scatter_add_", "index", index, 3)
    return inplace(self, scatter_add_spec, (self, index, src, _dim(dim, self._data.ndim)))


# -- norm ------------------------------------------------------------------------------------------------------------
def _vector_norm(self, ord, dim, keepdim):
    if self.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.word(self.dtype)}")
    xp = array_module(self)
    a = xp.abs(self)
    if ord == 2:
        out = xp.sqrt((a * a).sum(axis=dim, keepdims=keepdim))
    elif ord == 1:
        out = a.sum(axis=dim, keepdims=keepdim)
    elif ord == float("inf"):
        out = a.max(axis=dim, keepdims=keepdim)
    else:
        out = (a ** ord).sum(axis=dim, keepdims=keepdim) ** (1.0 / ord)
    return as_array(out.astype(self.dtype))


def _norm_backward(F, grad, self, ord, result, dim, keepdim):
    if not keepdim and dim:
        for d in sorted(dim):
            grad, result = F.unsqueeze(grad, d), F.unsqueeze(result, d)
    if ord == 2:
        return grad * F.masked_fill(self / result, result == 0, 0)
    if ord == 1:
        return F.sgn(self) * grad
    raise NotImplementedError(f"leafkit differentiates vector norms of order 1 and 2, not {ord}")


norm_spec = defop("linalg_vector_norm", _vector_norm, self=_norm_backward)


@public("norm")
@numpy_names
def norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The vector p-norm over all elements or along ``dim`` (``LinalgVectorNormBackward0``); ``p`` 1 or 2 (and
    ``inf`` without gradient).  The gradient of the 2-norm at zero is zero, as in PyTorch."""
    check_tensor("norm", "input", input)
    if p == "fro":
        p = 2
    src = input.to(dtype) if dtype is not None else input
    return apply(norm_spec, (src, float(p) if p not in (1, 2) else p, _dims(dim, src._data.ndim) if dim is not None
                             else None, bool(keepdim)))


# -- softmax / log_softmax -----------------------------------------------------------------------------------------
def _softmax_dtype(a, name):
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{_dtype.word(a.dtype)}'")


def _softmax(self, dim):
    _softmax_dtype(self, "softmax")
    if not self.size:  # nothing to normalise: an empty result of the same shape, as in PyTorch
        return self.copy()
    d = dim if self.ndim else None
    a = self.astype(np.float32) if self.dtype == np.float16 else self  # half is computed in float, as PyTorch does
    z = a - a.max(axis=d, keepdims=True)
    e = np.exp(z)
    return as_array((e / e.sum(axis=d, keepdims=True)).astype(self.dtype, copy=False))


def _log_softmax(self, dim):
    _softmax_dtype(self, "log_softmax")
    if not self.size:
        return self.copy()
    d = dim if self.ndim else None
    a = self.astype(np.float32) if self.dtype == np.float16 else self
    z = a - a.max(axis=d, keepdims=True)
    return as_array((z - np.log(np.exp(z).sum(axis=d, keepdims=True))).astype(self.dtype, copy=False))


softmax_spec = defop("softmax", _softmax, node="SoftmaxBackward0",
                     self=lambda F, grad, result, dim, self_scalar_type: F.softmax_backward_data(
                         grad, result, dim, self_scalar_type))
log_softmax_spec = defop("log_softmax", _log_softmax, node="LogSoftmaxBackward0",
                         self=lambda F, grad, result, dim, self_scalar_type: F.log_softmax_backward_data(
                             grad, result, dim, self_scalar_type))


def _sdim(x, dim):
    return dim if len(x.shape) else ()


defop("softmax_backward_data",
      lambda grad_output, output, dim, input_dtype: as_array(
          output * (grad_output - (grad_output * output).sum(axis=dim if output.ndim else None, keepdims=True))),
      inputs=("grad_output", "output"), node="SoftmaxBackwardDataBackward0",
      grad_output=lambda F, grad, output, dim, input_dtype: F.softmax_backward_data(grad, output, dim, input_dtype),
      output=lambda F, grad, grad_output, dim, output: (
          grad_output * grad - F.sum_dim(output * grad_output, _sdim(output, dim), True) * grad
          - grad_output * F.sum_dim(output * grad, _sdim(output, dim), True)))
defop("log_softmax_backward_data",
      lambda grad_output, output, dim, input_dtype: as_array(
          grad_output - np.exp(output) * grad_output.sum(axis=dim if output.ndim else None, keepdims=True)),
      inputs=("grad_output", "output"), node="LogSoftmaxBackwardDataBackward0",
      grad_output=lambda F, grad, output, dim: grad - F.sum_dim(grad * F.exp(output), _sdim(output, dim), True),
      output=lambda F, grad, grad_output, dim, output: -F.sum_dim(grad_output, _sdim(output, dim), True)
      * F.exp(output) * grad)


@public("softmax")
@numpy_names
def softmax(input, dim, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``, computed stably (``SoftmaxBackward0``)."""
    check_tensor("softmax", "input", input)
    src = input.to(dtype) if dtype is not None else input
    return apply(softmax_spec, (src, _dim(dim, src._data.ndim)))


@public("log_softmax")
@numpy_names
def log_softmax(input, dim, dtype=None):
    """x - logsumexp(x) along ``dim``, stable for very large logits (``LogSoftmaxBackward0``)."""
    check_tensor("log_softmax", "input", input)
    src = input.to(dtype) if dtype is not None else input
    return apply(log_softmax_spec, (src, _dim(dim, src._data.ndim)))
