"""Reductions: sum, mean, max/min (all elements or along a dim), norm, softmax, log_softmax; scatter and gather.

Formulas follow PyTorch's: the gradient of ``sum`` is ``grad.expand(sizes)``
(``ExpandBackward0``), of ``mean`` that divided by the count
(``DivBackward1``), of a whole-tensor ``max`` the gradient shared evenly
among the tied elements (``MaskedFillBackward1``), of ``max(dim)`` the
gradient scattered to the chosen indices (``ScatterBackward0``).
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype, return_types
from .._tensor import Tensor
from ._base import array_module, as_array, check_tensor, numpy_names, to_float, wrap_dims
from ._base import dim as _dim
from ._base import dims as _dims
from ._batch_rules import declare, dims, logical_front, wrap_out
from ._batched import per_sample
from ._registry import apply, defop, public
from .elementwise import maximum, minimum
from .inplace import inplace
from .shape import select


def _unsqueeze_multiple(F, grad, dim, keepdim):
    if not keepdim:
        for d in sorted(dim):
            grad = F.unsqueeze(grad, d)
    return grad


def _sum_dtype(a):
    return np.int64 if a.dtype.kind in "biu" else None


sum_spec = defop(
    "sum",
    lambda self: as_array(self.sum(dtype=_sum_dtype(self))),
    self=lambda F, grad, self_sym_sizes: F.expand(grad, self_sym_sizes),
)
sum_dim_spec = defop(
    "sum_dim",
    lambda self, dim, keepdim=False: as_array(self.sum(axis=dim, keepdims=keepdim, dtype=_sum_dtype(self))),
    node="SumBackward1",
    self=lambda F, grad, self_sym_sizes, dim, keepdim: F.expand(
        _unsqueeze_multiple(F, grad, dim, keepdim), self_sym_sizes
    ),
)


def _need_float(a, name):
    if a.dtype.kind != "f":
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_dtype.word(a.dtype)}"
        )


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


mean_spec = defop(
    "mean",
    _mean,
    self=lambda F, grad, self_sym_sizes, self_sym_numel: F.div_scalar(F.expand(grad, self_sym_sizes), self_sym_numel),
)
mean_dim_spec = defop(
    "mean_dim",
    _mean_dim,
    node="MeanBackward1",
    self=lambda F, grad, self_sym_sizes, dim, keepdim: F.div_scalar(
        F.expand(_unsqueeze_multiple(F, grad, dim, keepdim), self_sym_sizes),
        int(np.prod([self_sym_sizes[d] for d in dim])) if dim else 1,
    ),
)


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
        raise RuntimeError(
            f"mean(): could not infer output dtype. Optional dtype must be either a floating point or "
            f"complex dtype. Got: {_dtype.word(dtype.np)}"
        )
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
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                "reduction dim with the 'dim' argument."
            )
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


max_dim_spec = defop(
    "max_dim",
    _extremum_dim(np.argmax, "max"),
    node="MaxBackward0",
    outputs=("values", "indices"),
    nondiff_outputs=("indices",),
    self=_value_selecting_backward,
)
min_dim_spec = defop(
    "min_dim",
    _extremum_dim(np.argmin, "min"),
    node="MinBackward0",
    outputs=("values", "indices"),
    nondiff_outputs=("indices",),
    self=_value_selecting_backward,
)


def _extremum(spec_all, spec_dim, result_type, name):
    def fn(input, dim=None, keepdim=False):
        check_tensor(name, "input", input)
        if isinstance(dim, Tensor):
            return (maximum if name == "max" else minimum)(input, dim)
        if dim is None:
            return apply(spec_all, (input,))
        return result_type(apply(spec_dim, (input, _dim(dim, input._data.ndim), bool(keepdim))))

    fn.__name__ = name
    fn.__doc__ = (
        f"Whole-tensor {name} (``{spec_all.node_cls.__name__}``, a 0-d tensor; tied elements share the "
        f"gradient evenly), or with ``dim`` a ``(values, indices)`` named tuple "
        f"(``{spec_dim.node_cls.__name__}``; indices are int64 and never require grad).  With a tensor "
        f"as second argument, the elementwise {name}imum."
    )
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
    fn.__doc__ = (
        f"Index of the {name[3:]}imum element (flattened, or along ``dim``) as an int64 tensor; not differentiable."
    )
    return fn


public("argmax")(numpy_names(_arg_extremum(np.argmax, "argmax")))
public("argmin")(numpy_names(_arg_extremum(np.argmin, "argmin")))


# -- amax/amin, prod, cumsum/cumprod, var/std, logsumexp (task M1) --------------------------------------------------
# Formulas from PyTorch's derivatives.yaml and FunctionsManual.cpp (restore_reduced_dims, scale_grad_by_count,
# prod_backward, cumsum_backward, cumprod_backward, var_backward, std_backward, logsumexp_backward), written out so
# a recorded backward pass has PyTorch's nodes.
def _numel(t):
    n = 1
    for s in t.shape:
        n *= s
    return n


def _constant(F, arr, like):
    """An array as a formula operand that needs no gradient: itself on arrays, a tensor when recorded."""
    return Tensor._make(arr, like._device) if F.records else arr


def _raw(F, t):
    return t._data if F.records else t


def _ones(F, shape, like):
    return F.ones_like(F.new_zeros(tuple(shape), like))


def _to_type(F, grad, dtype):
    """``grad.to(self.scalar_type())``: a ``ToCopyBackward0`` only when the dtype differs."""
    return grad if _raw(F, grad).dtype == dtype else F.cast(grad, dtype)


def _restore_reduced_dims(F, t, dim, keepdim):
    """PyTorch's restore_reduced_dims: ``t`` reshaped with size-1 dims where ``dim`` reduced (a ``view``)."""
    if keepdim:
        return t
    sizes = iter(tuple(t.shape))
    total = len(t.shape) + len(dim)
    return F.reshape(t, tuple(1 if j in dim else next(sizes) for j in range(total)))


def _amax_backward(F, grad, self, result, dim, keepdim):
    """scale_grad_by_count: tied extremes share the gradient evenly (``grad / count * mask``)."""
    g = _restore_reduced_dims(F, grad, dim, keepdim)
    if not F.records:
        g = as_array(g)  # a NumPy scalar would count as a Python number in the division's type promotion
    mask = _restore_reduced_dims(F, result, dim, keepdim) == self
    count = F.sum_dim(mask, dim or tuple(range(len(mask.shape))), True)
    out = F.mul(F.div(g, count), mask)
    if not len(self.shape) and len(out.shape):  # a 0-d input with dim=0: PyTorch sums the (1,) gradient back
        return F.sum_to(out, ())
    return out


def _amax_like(np_fn, name):
    def forward(self, dim, keepdim=False):
        if not dim and self.size == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                "the reduction dim with the 'dim' argument."
            )
        if self.ndim == 0:
            return self.copy()
        for d in dim:
            if self.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return as_array(np_fn(self, axis=dim or None, keepdims=keepdim))

    return forward


amax_spec = defop("amax", _amax_like(np.max, "amax"), self=_amax_backward)
amin_spec = defop("amin", _amax_like(np.min, "amin"), self=_amax_backward)


def _amax_public(spec, name, word):
    def fn(input, dim=(), keepdim=False):
        check_tensor(name, "input", input)
        return apply(spec, (input, wrap_dims(dim, input._data.ndim), bool(keepdim)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"The {word} over ``dim`` (an int or a tuple; empty, the default, means every dimension), without "
        f"the indices ``{word[:3]}(dim)`` returns (``{spec.node_cls.__name__}``).\n\n    Same dtype and "
        "device as the input; the reduced dims are dropped unless ``keepdim``. Tied extremes share the "
        "gradient evenly (PyTorch's ``scale_grad_by_count``, ``grad / count * mask``), where "
        f"``{word[:3]}`` picks one of them. NaN propagates. Raises RuntimeError for an empty input without "
        "``dim`` and for a repeated dim, IndexError for a dim out of range or of size 0."
    )
    public(name)(fn)


_amax_public(amax_spec, "amax", "maximum")
_amax_public(amin_spec, "amin", "minimum")


def _int64_for_integers(a):
    return np.dtype(np.int64) if a.dtype.kind in "biu" else a.dtype


def _prod(self):
    out = _int64_for_integers(self)
    return as_array(self.prod(dtype=_acc(self) if out.kind == "f" else out)).astype(out)


def _prod_dim(self, dim, keepdim=False):
    out = _int64_for_integers(self)
    if self.ndim == 0:
        return self.astype(out, copy=True)
    return as_array(self.prod(axis=dim, keepdims=keepdim, dtype=_acc(self) if out.kind == "f" else out).astype(out))


def _contiguous(F, t):
    return t.contiguous() if F.records else array_module(t).ascontiguousarray(t)


def _prod_safe_zeros_backward(F, grad, inp, dim):
    """PyTorch's prod_safe_zeros_backward: the product of all the other elements as an exclusive cumulative
    product from the left times one from the right, exact when some elements are zero."""
    shape = tuple(inp.shape)
    if 0 in shape:
        return F.expand(grad, shape)
    n = shape[dim]
    ones = _ones(F, shape[:dim] + (1,) + shape[dim + 1 :], grad)
    exclusive_normal = F.cumprod(F.cat(dim, ones, F.slice(inp, dim, 0, n - 1, 1)), dim)
    narrow_reverse = F.flip(F.slice(inp, dim, 1, n, 1), (dim,))
    exclusive_reverse = F.flip(F.cumprod(F.cat(dim, ones, narrow_reverse), dim), (dim,))
    return grad * (exclusive_normal * exclusive_reverse)


def _has_zero(self):
    return bool((self == 0).any())


def _prod_backward(F, grad, self, result):
    if not len(self.shape):
        return grad
    if not _has_zero(self):
        return grad * (result / self)
    flat = F.view(_contiguous(F, self), (-1,))
    return F.view(_prod_safe_zeros_backward(F, grad, flat, 0), tuple(self.shape))


def _prod_dim_backward(F, grad, self, result, dim, keepdim):
    if not len(self.shape):
        return grad
    if not keepdim:
        grad, result = F.unsqueeze(grad, dim), F.unsqueeze(result, dim)
    if not _has_zero(self):
        return grad * (result / self)
    return _prod_safe_zeros_backward(F, grad, self, dim)


prod_spec = defop("prod", _prod, self=_prod_backward)
prod_dim_spec = defop("prod_dim", _prod_dim, node="ProdBackward1", self=_prod_dim_backward)


@public("prod")
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements (``ProdBackward0``, a 0-d tensor) or along one ``dim`` (``ProdBackward1``, the dim
    dropped unless ``keepdim``).

    Integer and bool input multiplies in int64; ``dtype`` converts the input first. Same device. The gradient is
    PyTorch's ``prod_backward``: ``grad * result / input`` when no element is zero, otherwise the exact product of
    the other elements (one zero gets the product of the rest, several zeros give zero gradients everywhere). An
    empty product is 1. Raises IndexError for a dim out of range."""
    check_tensor("prod", "input", input)
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(
            f"prod() received an invalid combination of arguments - got ({type(dim).__name__}), but "
            "expected one of: (*, torch.dtype dtype = None) or (int dim, bool keepdim = False, *, "
            "torch.dtype dtype = None)"
        )
    src = input.to(dtype) if dtype is not None else input
    if dim is None:
        return apply(prod_spec, (src,))
    return apply(prod_dim_spec, (src, _dim(dim, src._data.ndim), bool(keepdim)))


def _cumulative(np_fn):
    def forward(self, dim, dtype=None):
        out = dtype if dtype is not None else _int64_for_integers(self)
        if self.ndim == 0:
            return self.astype(out, copy=True)
        acc = np.float32 if out == np.float16 else out
        return as_array(np_fn(self, axis=dim, dtype=acc).astype(out, copy=False))

    return forward


def _reversed_cumsum(F, w, dim):
    return F.flip(F.cumsum(F.flip(w, (dim,)), dim), (dim,))


def _cumsum_backward(F, grad, dim, self_scalar_type):
    grad = _to_type(F, grad, self_scalar_type)
    if _numel(grad) <= 1 or grad.shape[dim] == 1:
        return grad
    return _reversed_cumsum(F, grad, dim)


def _cumprod_backward(F, grad, self, dim, result, self_scalar_type):
    """PyTorch's cumprod_backward: a reversed cumulative sum divided by the input when no element is zero; with
    zeros, the O(n**2) sum over the products of the other elements (written into a zero tensor slice by slice, so
    a recorded pass shows PyTorch's ``CopySlices``)."""
    grad = _to_type(F, grad, self_scalar_type)
    if _numel(self) <= 1:
        return grad
    shape = tuple(self.shape)
    n = shape[dim]
    if n == 1:
        return grad
    if not _has_zero(self):
        return F.div(_reversed_cumsum(F, result * grad, dim), self)
    ones = _ones(F, shape[:dim] + (1,) + shape[dim + 1 :], grad)
    grad_input = F.new_zeros(shape, grad)
    for k in range(n):
        if k == 0:
            omega = F.cat(dim, ones, F.cumprod(F.slice(self, dim, 1, n, 1), dim))
        elif k == n - 1:
            omega = F.prod_dim(F.slice(self, dim, 0, k, 1), dim, True)
        else:
            until_k = F.prod_dim(F.slice(self, dim, 0, k, 1), dim, True)
            from_k_plus_1 = F.cumprod(F.slice(self, dim, k + 1, n, 1), dim)
            omega = F.cat(dim, until_k, F.expand(until_k, tuple(from_k_plus_1.shape)) * from_k_plus_1)
        value = F.sum_dim(F.slice(grad, dim, k, n, 1) * omega, (dim,), False)
        if F.records:
            select(grad_input, dim, k).copy_(value)
        else:
            grad_input[(slice(None),) * dim + (k,)] = value
    return grad_input


cumsum_spec = defop("cumsum", _cumulative(np.cumsum), self=_cumsum_backward)
cumprod_spec = defop("cumprod", _cumulative(np.cumprod), self=_cumprod_backward)


def _cumulative_public(spec, name, word, grad_doc):
    def fn(input, dim, *, dtype=None):
        check_tensor(name, "input", input)
        return apply(spec, (input, _dim(dim, input._data.ndim), None if dtype is None else dtype.np))

    def op_(self, dim, *, dtype=None):
        if dtype is not None and dtype.np != self._data.dtype:
            raise RuntimeError(
                f"Bad in-place call: input tensor dtype {_dtype.ctype(self._data.dtype)} and output "
                f"tensor dtype {_dtype.ctype(dtype.np)} should match"
            )
        return inplace(self, spec, (self, _dim(dim, self._data.ndim), None if dtype is None else dtype.np))

    fn.__name__ = fn.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    fn.__doc__ = (
        f"Running {word} along ``dim`` (``{spec.node_cls.__name__}``): element k is the {word} of elements "
        "0..k.\n\n    Same shape and device; integer and bool input accumulate in int64, ``dtype`` sets the "
        f"result dtype (the gradient is cast back to the input's). {grad_doc} Raises IndexError for a dim "
        "out of range."
    )
    op_.__doc__ = f"In-place :meth:`{name}` (node ``{spec.node_cls.__name__}``; keeps the tensor's dtype)."
    public(name)(fn)
    public(name + "_", function=False)(op_)


_cumulative_public(
    cumsum_spec,
    "cumsum",
    "sum",
    "The gradient is the reversed cumulative sum of the incoming gradient (``flip``, ``cumsum``, "
    "``flip``, as PyTorch computes it).",
)
_cumulative_public(
    cumprod_spec,
    "cumprod",
    "product",
    "The gradient is PyTorch's ``cumprod_backward``: exact also where elements are zero.",
)


VAR_DOF_WARNING = (
    "{}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
    "(input numel divided by output numel)."
)


def _variance(self, dim, correction, keepdim):
    if self.dtype.kind != "f":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    axes = dim if dim is not None and self.ndim else None
    n = self.size if axes is None else int(np.prod([self.shape[d] for d in axes]))
    a = self.astype(np.float64, copy=False)  # PyTorch's CPU kernel accumulates in double
    centred = a - a.sum(axis=axes, keepdims=True) / n
    return as_array((centred * centred).sum(axis=axes, keepdims=keepdim) / max(0, n - correction))


def _var(self, dim, correction, keepdim):
    return _variance(self, dim, correction, keepdim).astype(self.dtype)


def _std(self, dim, correction, keepdim):
    return as_array(array_module(self).sqrt(_variance(self, dim, correction, keepdim))).astype(self.dtype)


def _two_over(d):
    return 2.0 / d if d else float("inf")


def _var_backward(F, grad, self, dim, correction, keepdim):
    shape = tuple(self.shape)
    if not shape or dim is None:
        dof = _numel(self) - correction
        if dof <= 0:  # PyTorch: nan where the input equals its mean, inf elsewhere (a default-dtype where())
            s = _raw(F, self)
            nan_inf = array_module(s).where(s == s.mean(), np.nan, np.inf).astype(_dtype.get_default_dtype().np)
            return F.mul(grad, _constant(F, nan_inf, grad))
        return F.mul_scalar(grad, 2.0 / dof) * (self - F.mean(self))
    if not keepdim and len(shape) > 1:
        grad = _unsqueeze_multiple(F, grad, dim, False)
    rnumel = 1
    for d in dim:
        rnumel *= shape[d]
    return F.mul_scalar(grad, _two_over(rnumel - correction)) * (self - F.mean_dim(self, dim, True))


def _std_backward(F, grad, self, result, dim, correction, keepdim):
    grad_var = F.masked_fill(F.div(grad, F.mul_scalar(result, 2)), result == 0, 0)
    return _var_backward(F, grad_var, self, dim, correction, keepdim)


var_spec = defop("var", _var, self=_var_backward)
std_spec = defop("std", _std, self=_std_backward)


def _variance_public(spec, name, word):
    def fn(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        check_tensor(name, "input", input)
        if isinstance(dim, bool):  # PyTorch's overload std(unbiased)
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got (correction=int, "
                "unbiased=bool), but expected one of: (tuple of ints dim, bool unbiased, bool keepdim) "
                "or (tuple of ints dim, *, Number correction, bool keepdim)"
            )
        c = correction if correction is not None else (1 if unbiased is None or unbiased else 0)
        nd = input._data.ndim
        dims = wrap_dims(dim, nd) or None
        n = input._data.size if dims is None or not nd else int(np.prod([input._data.shape[d] for d in dims]))
        if n - c <= 0:
            warnings.warn(VAR_DOF_WARNING.format(name), UserWarning, stacklevel=2)
        return apply(spec, (input, dims, c, bool(keepdim)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"The {word} over all elements or along ``dim`` (an int or a tuple), with Bessel's correction by "
        f"default (``{spec.node_cls.__name__}``).\n\n    ``correction`` (keyword) is subtracted from the "
        "number of elements in the denominator; the older ``unbiased=False`` means ``correction=0`` (giving "
        "both raises TypeError). Reduced dims are dropped unless ``keepdim``. Float input only "
        '(RuntimeError "std and var only support floating point and complex dtypes" otherwise); same '
        "dtype and device. When the correction leaves no degrees of freedom, warns as PyTorch does and "
        "returns nan/inf. The gradient is PyTorch's "
        + (
            "``var_backward``, ``2 / (n - correction) * grad * (x - mean)``."
            if name == "var"
            else "``std_backward``: ``var_backward`` of ``grad / (2 * result)``, zero where the result is zero."
        )
    )
    public(name)(fn)


_variance_public(var_spec, "var", "variance")
_variance_public(std_spec, "std", "standard deviation")


def _logsumexp(self, dim, keepdim=False):
    a = self if self.dtype.kind == "f" else to_float(self)
    if a.ndim == 0:
        return a.copy()
    xp = array_module(a)
    if a.size:
        m = a.max(axis=dim, keepdims=True)
        m = xp.where(xp.abs(m) == np.inf, a.dtype.type(0), m)
    else:
        m = xp.zeros((1,) * a.ndim, dtype=a.dtype)
    out = xp.log(xp.exp(a - m).sum(axis=dim, keepdims=True)) + m
    return as_array(out if keepdim else xp.squeeze(out, axis=dim))


def _logsumexp_backward(F, grad, self, result, dim, keepdim):
    if not keepdim and len(self.shape):
        grad = _unsqueeze_multiple(F, grad, dim, False)
        result = _unsqueeze_multiple(F, result, dim, False)
    return grad * F.exp(self - result)


logsumexp_spec = defop("logsumexp", _logsumexp, self=_logsumexp_backward)


@public("logsumexp")
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` along ``dim`` (an int or a tuple), computed stably: the maximum is taken out first, so
    large inputs do not overflow (``LogsumexpBackward0``).

    Integer and bool input give the default float dtype; same device; the dims are dropped unless ``keepdim``.
    inf in a slice gives inf, a slice of -inf gives -inf, an empty slice -inf. The gradient is
    ``grad * exp(input - result)`` (the softmax of the slice). Raises IndexError for a dim out of range."""
    check_tensor("logsumexp", "input", input)
    nd = input._data.ndim
    dims = wrap_dims(dim, nd)
    if not dims and nd:
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape [{', '.join(['1'] * nd)}]")
    return apply(logsumexp_spec, (input, dims, bool(keepdim)))


# -- sort / argsort / topk -------------------------------------------------------------------------------------
def _sort_indices(a, dim, descending):
    """Stable sort indices along ``dim``; NaN sorts as the largest value (last ascending, first descending)."""
    xp = array_module(a)
    if descending:
        i = xp.argsort(xp.flip(a, dim), axis=dim, kind="stable")
        return (a.shape[dim] - 1) - xp.flip(i, dim)
    return xp.argsort(a, axis=dim, kind="stable")


def _sort(self, dim, descending=False):
    xp = array_module(self)
    if self.ndim == 0:
        return self.copy(), xp.asarray(0, dtype=np.int64)
    idx = _sort_indices(self, dim, descending)
    return as_array(xp.take_along_axis(self, idx, axis=dim)), as_array(idx.astype(np.int64, copy=False))


def _topk(self, k, dim, largest=True, sorted=True):  # noqa: A002 - PyTorch's argument name
    xp = array_module(self)
    size = self.shape[dim] if self.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if self.ndim == 0:
        return self.copy(), xp.asarray(0, dtype=np.int64)
    idx = _sort_indices(self, dim, largest)
    idx = idx[(slice(None),) * dim + (slice(0, k),)]
    return as_array(xp.take_along_axis(self, idx, axis=dim)), as_array(idx.astype(np.int64))


def _selected_backward(F, grad, dim, indices, self_sym_sizes):
    """value_selecting_reduction_backward with keepdim: the gradient scattered back to where the values came from."""
    return _value_selecting_backward(F, grad, dim, indices, self_sym_sizes, True)


sort_spec = defop("sort", _sort, outputs=("values", "indices"), nondiff_outputs=("indices",), self=_selected_backward)
sort_stable_spec = defop(
    "sort_stable",
    _sort,
    node="SortBackward1",
    outputs=("values", "indices"),
    nondiff_outputs=("indices",),
    self=_selected_backward,
)
topk_spec = defop("topk", _topk, outputs=("values", "indices"), nondiff_outputs=("indices",), self=_selected_backward)


@public("sort")
def sort(input, dim=-1, descending=False, *, stable=None):
    """The values along ``dim`` in ascending (or ``descending``) order and where they came from: a
    ``(values, indices)`` named tuple (``SortBackward0``; ``SortBackward1`` when ``stable`` is given, as PyTorch
    names its stable overload).

    ``indices`` are int64 and never require grad; values keep the input's dtype and device. Equal values keep
    their order (the sort is always stable); NaN counts as the largest value. The gradient is scattered back to
    the original positions. Raises IndexError for a dim out of range."""
    check_tensor("sort", "input", input)
    spec = sort_spec if stable is None else sort_stable_spec
    return return_types.sort(apply(spec, (input, _dim(dim, input._data.ndim), bool(descending))))


@public("argsort")
def argsort(input, dim=-1, descending=False, *, stable=False):
    """The int64 indices that sort ``input`` along ``dim`` (``sort(...).indices``); not differentiable."""
    check_tensor("argsort", "input", input)
    d = input._data
    if d.ndim == 0:
        return Tensor._make(array_module(d).asarray(0, dtype=np.int64), input._device)
    idx = _sort_indices(d, _dim(dim, d.ndim), bool(descending))
    return Tensor._make(as_array(idx.astype(np.int64, copy=False)), input._device)


@public("msort")
def msort(input):
    """``sort(input, dim=0).values`` (``SortBackward0``)."""
    check_tensor("msort", "input", input)
    return sort(input, 0).values


@public("topk")
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's argument name
    """The ``k`` largest (or, with ``largest=False``, smallest) values along ``dim`` and their int64 indices, as a
    ``(values, indices)`` named tuple (``TopkBackward0``), largest first.

    Same dtype and device; among equal values the first wins; NaN counts as the largest value. The gradient is
    scattered back to the chosen positions. Raises RuntimeError "selected index k out of range" unless
    ``0 <= k <= input.size(dim)``, IndexError for a dim out of range."""
    check_tensor("topk", "input", input)
    return return_types.topk(
        apply(topk_spec, (input, int(k), _dim(dim, input._data.ndim), bool(largest), bool(sorted)))
    )


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
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {list(index.shape)} to be no "
                    f"larger than self {list(self.shape)} apart from dimension {dim}"
                )
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
                raise RuntimeError(
                    f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
                    f"apart from dimension {dim} and to be no larger size than src {list(src.shape)}"
                )
        elif wrong:
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
                f"apart from dimension {dim}"
            )
    size = _nonempty(self.shape)[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise RuntimeError(
            f"index {int(index[bad].reshape(-1)[0])} is out of bounds for dimension {dim} with size {size}"
        )


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


scatter_spec = defop(
    "scatter",
    lambda self, index, src, dim: _scatter(self, dim, index, src),
    inputs=("self", "index", "src"),
    nondiff=("index",),
    node="ScatterBackward0",
    self=lambda F, grad, dim, index: F.scatter_value(grad, index, 0.0, dim),
    src=lambda F, grad, dim, index: F.gather(grad, index, dim),
)
scatter_value_spec = defop(
    "scatter_value",
    lambda self, index, value, dim: _scatter(self, dim, index, value),
    inputs=("self", "index"),
    nondiff=("index",),
    node="ScatterBackward1",
    self=lambda F, grad, dim, index: F.scatter_value(grad, index, 0.0, dim),
)
gather_spec = defop(
    "gather",
    lambda self, index, dim: _gather(self, dim, index),
    inputs=("self", "index"),
    nondiff=("index",),
    # PyTorch's gather_backward saves self (not only its sizes): changing it in place breaks backward
    self=lambda F, grad, self, dim, index: F.scatter_add(F.new_zeros(tuple(self.shape), grad), index, grad, dim),
)
scatter_add_spec = defop(
    "scatter_add",
    lambda self, index, src, dim: _scatter_add(self, dim, index, src),
    inputs=("self", "index", "src"),
    nondiff=("index",),
    self=lambda F, grad: grad,
    src=lambda F, grad, dim, index: F.gather(grad, index, dim),
)


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
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_dtype.word(self.dtype)}"
        )
    xp = array_module(self)
    a = xp.abs(self)
    if ord == 2:
        out = xp.sqrt((a * a).sum(axis=dim, keepdims=keepdim))
    elif ord == 1:
        out = a.sum(axis=dim, keepdims=keepdim)
    elif ord == float("inf"):
        out = a.max(axis=dim, keepdims=keepdim)
    else:
        out = (a**ord).sum(axis=dim, keepdims=keepdim) ** (1.0 / ord)
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
    return apply(
        norm_spec,
        (
            src,
            float(p) if p not in (1, 2) else p,
            _dims(dim, src._data.ndim) if dim is not None else None,
            bool(keepdim),
        ),
    )


# -- softmax / log_softmax -----------------------------------------------------------------------------------------
def _softmax_dtype(a, name):
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{_dtype.word(a.dtype)}'")


def _row_max(a, d):
    """``a.max(axis=d, keepdims=True)``.  NumPy reduces a short last axis one row at a time, slowly (6 us for the
    rows of a (64, 10) batch of logits); for a matrix of many short rows the maximum over the first axis of the
    transposed copy is one vectorised pass, three times faster, and exact all the same (NaN propagates too)."""
    if d == 1 and a.ndim == 2 and a.shape[1] <= 32 and a.shape[0] >= 16 and a.__class__ is np.ndarray:
        return np.ascontiguousarray(a.T).max(axis=0)[:, None]
    return a.max(axis=d, keepdims=True)


def _softmax(self, dim):
    _softmax_dtype(self, "softmax")
    if not self.size:  # nothing to normalise: an empty result of the same shape, as in PyTorch
        return self.copy()
    d = dim if self.ndim else None
    a = self.astype(np.float32) if self.dtype == np.float16 else self  # half is computed in float, as PyTorch does
    z = a - _row_max(a, d)
    e = np.exp(z)
    return as_array((e / e.sum(axis=d, keepdims=True)).astype(self.dtype, copy=False))


def _log_softmax(self, dim):
    _softmax_dtype(self, "log_softmax")
    if not self.size:
        return self.copy()
    d = dim if self.ndim else None
    a = self.astype(np.float32) if self.dtype == np.float16 else self
    z = a - _row_max(a, d)
    z -= np.log(np.exp(z).sum(axis=d, keepdims=True))  # z is a new array: no second allocation
    return as_array(z if z.dtype == self.dtype else z.astype(self.dtype))


softmax_spec = defop(
    "softmax",
    _softmax,
    node="SoftmaxBackward0",
    self=lambda F, grad, result, dim, self_scalar_type: F.softmax_backward_data(grad, result, dim, self_scalar_type),
)
log_softmax_spec = defop(
    "log_softmax",
    _log_softmax,
    node="LogSoftmaxBackward0",
    self=lambda F, grad, result, dim, self_scalar_type: F.log_softmax_backward_data(
        grad, result, dim, self_scalar_type
    ),
)


def _sdim(x, dim):
    return dim if len(x.shape) else ()


defop(
    "softmax_backward_data",
    lambda grad_output, output, dim, input_dtype: as_array(
        output * (grad_output - (grad_output * output).sum(axis=dim if output.ndim else None, keepdims=True))
    ),
    inputs=("grad_output", "output"),
    node="SoftmaxBackwardDataBackward0",
    grad_output=lambda F, grad, output, dim, input_dtype: F.softmax_backward_data(grad, output, dim, input_dtype),
    output=lambda F, grad, grad_output, dim, output: (
        grad_output * grad
        - F.sum_dim(output * grad_output, _sdim(output, dim), True) * grad
        - grad_output * F.sum_dim(output * grad, _sdim(output, dim), True)
    ),
)
defop(
    "log_softmax_backward_data",
    lambda grad_output, output, dim, input_dtype: as_array(
        grad_output - np.exp(output) * grad_output.sum(axis=dim if output.ndim else None, keepdims=True)
    ),
    inputs=("grad_output", "output"),
    node="LogSoftmaxBackwardDataBackward0",
    grad_output=lambda F, grad, output, dim: grad - F.sum_dim(grad * F.exp(output), _sdim(output, dim), True),
    output=lambda F, grad, grad_output, dim, output: (
        -F.sum_dim(grad_output, _sdim(output, dim), True) * F.exp(output) * grad
    ),
)


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


# -- issue 18: nansum, nanmean, median, cummax/cummin, norm(p, dim) --------------------------------------------------
def _nansum(self, dim=None, keepdim=False):
    xp = array_module(self)
    if self.dtype.kind == "b":
        return as_array(self.sum(axis=dim, keepdims=keepdim, dtype=np.int64))
    dt = np.int64 if self.dtype.kind in "iu" else self.dtype
    return as_array(xp.nansum(self, axis=dim, keepdims=keepdim).astype(dt, copy=False))


def _nansum_backward(F, grad, self, dim, keepdim):
    """``grad`` spread back over ``self`` (``expand``), zero where ``self`` is NaN (PyTorch's ``nansum_backward``)."""
    shape = tuple(self.shape)
    if dim is not None and not keepdim and shape:
        for d in sorted(dim):
            grad = F.unsqueeze(grad, d)
    keep = type_like(F, F.isnan(self), grad, invert=True)
    return F.expand(grad, shape) * keep


def type_like(F, mask, like, invert=False):
    """A bool mask as ``like``'s dtype (``1 - mask`` with ``invert``), never recorded."""
    if F.records:
        arr = mask._data if not invert else ~mask._data
        return Tensor._make(arr.astype(like._data.dtype), like._device)
    return (~mask if invert else mask).astype(like.dtype)


nansum_spec = defop("nansum", _nansum, self=_nansum_backward)


@public("nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum treating NaN as zero (``NansumBackward0``): all elements, or along ``dim``; integer and bool input
    sum to int64.  The gradient is 1 where the element is a number and 0 where it is NaN."""
    check_tensor("nansum", "input", input)
    src = input.to(dtype) if dtype is not None else input
    dims = _dims(dim, src._data.ndim) if dim is not None else None
    return apply(nansum_spec, (src, dims, bool(keepdim)))


@public("nanmean")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the elements that are not NaN, as PyTorch composes it: ``nansum(x) / count`` (``DivBackward0``
    over ``NansumBackward0``).  Floating input only ("nanmean(): expected input to have floating point or complex
    dtype but got Long")."""
    check_tensor("nanmean", "input", input)
    if not input.is_floating_point():
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {input.dtype.word}"
        )
    src = input.to(dtype) if dtype is not None else input
    count = (~src.isnan()).sum(dim=dim, keepdim=keepdim) if dim is not None else (~src.isnan()).sum()
    return nansum(src, dim, keepdim) / count


def _median_all(self):
    if self.size == 0:
        return as_array(array_module(self).asarray(np.nan, dtype=self.dtype))
    flat = self.reshape(-1)
    xp = array_module(self)
    if self.dtype.kind == "f" and bool(xp.isnan(flat).any()):
        return as_array(xp.asarray(np.nan, dtype=self.dtype))
    return as_array(xp.sort(flat)[(flat.size - 1) // 2])


median_spec = defop("median", _median_all, self=_evenly_distribute)


def _median_dim(self, dim, keepdim=False):
    xp = array_module(self)
    if not self.ndim:
        return self.copy(), xp.asarray(0, dtype=np.int64)
    if self.shape[dim] == 0:
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
    order = xp.argsort(self, axis=dim, kind="stable")
    k = (self.shape[dim] - 1) // 2
    idx = xp.take(order, [k], axis=dim)
    if self.dtype.kind == "f":  # a slice with NaN has median NaN, at the first NaN's index
        nan = xp.isnan(self)
        has_nan = nan.any(axis=dim, keepdims=True)
        first_nan = xp.argmax(nan, axis=dim, keepdims=True)
        idx = xp.where(has_nan, first_nan, idx)
    vals = xp.take_along_axis(self, idx, axis=dim)
    if not keepdim:
        idx, vals = xp.squeeze(idx, dim), xp.squeeze(vals, dim)
    return as_array(vals), as_array(idx.astype(np.int64))


median_dim_spec = defop(
    "median_dim",
    _median_dim,
    node="MedianBackward1",
    outputs=("values", "indices"),
    nondiff_outputs=("indices",),
    self=_value_selecting_backward,
)


@public("median")
def median(input, dim=None, keepdim=False):
    """The lower median of all elements (``MedianBackward0``; tied elements share the gradient; NaN if any element
    is NaN), or with ``dim`` a ``(values, indices)`` named tuple (``MedianBackward1``)."""
    check_tensor("median", "input", input)
    if dim is None:
        return apply(median_spec, (input,))
    return return_types.median(apply(median_dim_spec, (input, _dim(dim, input._data.ndim), bool(keepdim))))


def _cumextremum(better):
    def forward(self, dim):
        xp = array_module(self)
        if not self.ndim:
            return self.copy(), xp.asarray(0, dtype=np.int64)
        moved = xp.moveaxis(self, dim, 0)
        vals = moved.copy()
        idx = xp.zeros(moved.shape, dtype=np.int64)
        best, best_i = moved[0].copy(), xp.zeros(moved.shape[1:], dtype=np.int64)
        nan_seen = xp.isnan(best) if self.dtype.kind == "f" else None
        for i in range(1, moved.shape[0]):
            x = moved[i]
            take = better(x, best)
            if nan_seen is not None:  # NaN wins and stays, as in PyTorch
                take = (take | xp.isnan(x)) & ~nan_seen
                nan_seen = nan_seen | xp.isnan(x)
            best = xp.where(take, x, best)
            best_i = xp.where(take, i, best_i)
            vals[i], idx[i] = best, best_i
        return as_array(xp.moveaxis(vals, 0, dim)), as_array(xp.moveaxis(idx, 0, dim))

    return forward


def _cumextremum_backward(F, grad, dim, indices, self):
    """PyTorch's ``cummaxmin_backward``: each gradient added at the index of the running extreme it came from."""
    if not tuple(self.shape):
        return grad
    return F.scatter_add(F.new_zeros(tuple(self.shape), grad), indices, grad, dim)


cummax_spec = defop(
    "cummax",
    _cumextremum(lambda x, best: x >= best),
    outputs=("values", "indices"),
    nondiff_outputs=("indices",),
    self=_cumextremum_backward,
)
cummin_spec = defop(
    "cummin",
    _cumextremum(lambda x, best: x <= best),
    outputs=("values", "indices"),
    nondiff_outputs=("indices",),
    self=_cumextremum_backward,
)


@public("cummax")
def cummax(input, dim):
    """The running maximum along ``dim`` and where it was (``CummaxBackward0``): a ``(values, indices)`` named
    tuple; a tie takes the later index, NaN propagates."""
    check_tensor("cummax", "input", input)
    return return_types.cummax(apply(cummax_spec, (input, _dim(dim, input._data.ndim))))


@public("cummin")
def cummin(input, dim):
    """The running minimum along ``dim`` and where it was (``CumminBackward0``)."""
    check_tensor("cummin", "input", input)
    return return_types.cummin(apply(cummin_spec, (input, _dim(dim, input._data.ndim))))


norm_dim_spec = defop("norm_dim", _vector_norm, node="NormBackward1", self=_norm_backward)


def norm_dim(input, p, dim, keepdim=False):
    """ATen's ``norm(input, p, dim, keepdim)`` overload (``NormBackward1``), which ``pairwise_distance`` runs."""
    return apply(norm_dim_spec, (input, p if p in (1, 2) else float(p), _dims(dim, input._data.ndim), bool(keepdim)))


# -- vmap: the batching rules of the entries above (leafkit.func.vmap) ------------------------------------------------
def _over_sample(spec_dims, empty_sample_runs=False):
    """A reduction over every element (``sum()``, ``mean()``, ``max()``): the same reduction over every dim of a
    sample (``SumBackward1`` ... on the physical tensor).  0-d samples (and, for ``max``/``min``, empty ones, whose
    error is the op's own) run once per sample."""

    def rule(spec, args, level):
        x = args[0]
        nd = x._data.ndim
        if empty_sample_runs and (nd == 0 or x._data.size == 0):
            return per_sample(spec, args, level)
        v = logical_front(x, level)
        return wrap_out(apply(spec_dims, (v, tuple(range(1, nd + 1)), False)), level, False)

    return rule


def _prod_batched(spec, args, level):
    """``prod()`` of each sample: its elements in one dim, then ``prod(dim)``."""
    x = args[0]
    if x._data.ndim == 0:
        return per_sample(spec, args, level)
    v = logical_front(x, level)
    return wrap_out(apply(prod_dim_spec, (v.reshape(v.shape[0], -1), 1, False)), level, False)


declare(_over_sample(sum_dim_spec), "sum")
declare(_over_sample(mean_dim_spec), "mean")
declare(_over_sample(amax_spec, empty_sample_runs=True), "max")
declare(_over_sample(amin_spec, empty_sample_runs=True), "min")
declare(_prod_batched, "prod")
declare(dims("dim", expand=False), "sum_dim", "mean_dim", "max_dim", "min_dim", "prod_dim", "cumsum", "cumprod")
declare(dims("dim", expand=False), "logsumexp", "sort", "sort_stable", "topk", "softmax", "log_softmax")
declare(dims("dim", empty="all", expand=False), "amax", "amin", "var", "std", "linalg_vector_norm")
declare(dims("dim"), "scatter", "scatter_value", "gather", "scatter_add")
declare(dims("dim"), "softmax_backward_data", "log_softmax_backward_data")
