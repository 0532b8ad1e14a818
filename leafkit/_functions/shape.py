"""Shape operations: view/reshape, transpose, t, permute, expand, squeeze, unsqueeze, select, slice, cat, stack, unbind.

View operations (``view=True``) return arrays that share storage with their
input; the result shares the input's version counter, as PyTorch's views
do.  Each backward formula is PyTorch's: a view's gradient is the inverse
view of the incoming gradient (``grad.t()`` for ``t``), ``select`` and
``slice`` call the differentiable ``select_backward``/``slice_backward``,
and ``cat`` slices its gradient back apart.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor
from ._base import array_module, as_array, check_tensor, dim as _dim, dims as _dims, numpy_names, promote_types
from ._registry import apply, defop, public
from .copy import clone

T_WARNING = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will throw "
    "an error in a future release. Consider `x.mT` to transpose batches of matrices or "
    "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
T_0D_WARNING = "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
MT_0D_WARNING = "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases."
_warned = set()


def _warn_once(message) -> None:
    """PyTorch's ``TORCH_WARN_ONCE``: the first time in the process only."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def shape_arg(shape):
    """``f(2, 3)`` and ``f((2, 3))`` alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        return tuple(shape[0])
    return tuple(shape)


def infer_shape(shape, numel):
    """Resolve one ``-1`` in ``shape``; raise PyTorch's error when sizes disagree."""
    shape = tuple(int(s) for s in shape)
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if shape.index(-1) != i:
                raise RuntimeError("only one dimension can be inferred")
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape [{', '.join(map(str, shape))}]")
        else:
            known *= s
    if -1 in shape:
        if numel == 0 and known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape [{', '.join(map(str, shape))}] because "
                               "the unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


def _view(self, size):
    out = self.view()
    try:
        out.shape = infer_shape(size, self.size)  # refuses when a copy would be needed
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return out


def viewable(a, shape) -> bool:
    """Can ``a`` be seen with ``shape`` without copying?"""
    try:
        _view(a, shape)
        return True
    except RuntimeError:
        return False


def _reshape_back(F, grad, self_sym_sizes):
    return F.reshape(grad, self_sym_sizes)


view_spec = defop("view", _view, view=True, self=_reshape_back)
reshape_alias_spec = defop("reshape_alias", _view, node="ReshapeAliasBackward0", view=True, self=_reshape_back)
unsafe_view_spec = defop("unsafe_view", lambda self, size: as_array(self.reshape(infer_shape(size, self.size))),
                         node="UnsafeViewBackward0", self=_reshape_back)


def _t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


t_spec = defop("t", _t, view=True, self=lambda F, grad: F.t(grad))
transpose_spec = defop("transpose", lambda self, dim0, dim1: array_module(self).swapaxes(self, dim0, dim1)
                       if self.ndim else self.view(), view=True,
                       self=lambda F, grad, dim0, dim1: F.transpose(grad, dim0, dim1))


def _permute(self, dims):
    if len(dims) != self.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {self.ndim} is not "
                           f"equal to len(dims) = {len(dims)}")
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return array_module(self).transpose(self, dims)


permute_spec = defop("permute", _permute, view=True,
                     self=lambda F, grad, dims: F.permute(grad, tuple(int(i) for i in np.argsort(dims))))


def _expand(self, size):
    size = tuple(size)
    if len(size) < self.ndim:
        raise RuntimeError(f"expand({_dtype.type_string(self.dtype)}{{[{', '.join(map(str, self.shape))}]}}, "
                           f"size=[{', '.join(map(str, size))}]): the number of sizes provided ({len(size)}) must be "
                           f"greater or equal to the number of dimensions in the tensor ({self.ndim})")
    lead = len(size) - self.ndim
    target = []
    for i, s in enumerate(size):
        if i >= lead and s == -1:
            s = self.shape[i - lead]
        elif s == -1:
            raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                               f"dimension {i}")
        if i >= lead and self.shape[i - lead] not in (1, s):
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                               f"({self.shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: "
                               f"[{', '.join(map(str, size))}].  Tensor sizes: [{', '.join(map(str, self.shape))}]")
        target.append(s)
    return array_module(self).broadcast_to(self, tuple(target))


expand_spec = defop("expand", _expand, view=True,
                    self=lambda F, grad, self_sym_sizes: F.sum_to(grad, self_sym_sizes))


def _unsqueeze_to(F, grad, self_sym_sizes):
    for d, s in enumerate(self_sym_sizes):
        if s == 1:
            grad = F.unsqueeze(grad, d)
    return grad


squeeze_spec = defop("squeeze", lambda self: array_module(self).squeeze(self) if self.ndim else self.view(),
                     view=True, self=_unsqueeze_to)


def _squeeze_dim(self, dim):
    if self.ndim == 0:
        return self.view()
    return array_module(self).squeeze(self, dim) if self.shape[dim] == 1 else self.view()


def _squeeze_dim_backward(F, grad, self_sym_sizes, dim):
    if self_sym_sizes and self_sym_sizes[dim] == 1:
        return F.unsqueeze(grad, dim)
    return grad


squeeze_dim_spec = defop("squeeze_dim", _squeeze_dim, node="SqueezeBackward1", view=True,
                         self=_squeeze_dim_backward)


def _squeeze_dims(self, dims):
    if self.ndim == 0:
        return self.view()
    drop = tuple(d for d in dims if self.shape[d] == 1)
    return array_module(self).squeeze(self, drop) if drop else self.view()


def _squeeze_dims_backward(F, grad, self_sym_sizes, dims):
    for d in sorted(d for d in dims if self_sym_sizes and self_sym_sizes[d] == 1):
        grad = F.unsqueeze(grad, d)
    return grad


squeeze_dims_spec = defop("squeeze_dims", _squeeze_dims, node="SqueezeBackward2", view=True,
                          self=_squeeze_dims_backward)
# matmul's ``squeeze_(0)`` after ``vector @ matrix``: PyTorch's node for the in-place squeeze
squeeze_inplace_spec = defop("squeeze_inplace_dim", _squeeze_dim, node="SqueezeBackward4",
                             self=_squeeze_dim_backward)
unsqueeze_spec = defop("unsqueeze", lambda self, dim: array_module(self).expand_dims(self, dim), view=True,
                       self=lambda F, grad, dim: F.squeeze_dim(grad, dim))
alias_spec = defop("alias", lambda self: self.view(), view=True, self=lambda F, grad: grad)


# -- select / slice and their differentiable backward ops ------------------------------------------------------
def _select(self, dim, index):
    size = self.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    return self[(slice(None),) * dim + (index, Ellipsis)]  # with the Ellipsis a 0-d result is a view, not a scalar


def _select_backward(grad_output, input_sizes, dim, index):
    out = array_module(grad_output).zeros(input_sizes, dtype=grad_output.dtype)
    out[(slice(None),) * dim + (index,)] = grad_output
    return out


def _slice(self, dim, start, end, step):
    return self[(slice(None),) * dim + (slice(start, end, step),)]


def _slice_backward(grad_output, input_sizes, dim, start, end, step):
    out = array_module(grad_output).zeros(input_sizes, dtype=grad_output.dtype)
    out[(slice(None),) * dim + (slice(start, end, step),)] = grad_output
    return out


select_spec = defop("select", _select, view=True,
                    self=lambda F, grad, self_sym_sizes, dim, index: F.select_backward(grad, self_sym_sizes, dim,
                                                                                       index))
defop("select_backward", _select_backward, inputs=("grad_output",),
      grad_output=lambda F, grad, dim, index: F.select(grad, dim, index))
slice_spec = defop("slice", _slice, view=True,
                   self=lambda F, grad, self_sym_sizes, dim, start, end, step: F.slice_backward(
                       grad, self_sym_sizes, dim, start, end, step))
defop("slice_backward", _slice_backward, inputs=("grad_output",),
      grad_output=lambda F, grad, dim, start, end, step: F.slice(grad, dim, start, end, step))


@public("select")
@numpy_names
def select(input, dim, index):
    """``input`` at ``index`` along ``dim``, as a view with one dimension fewer (``SelectBackward0``).

    Raises ``IndexError`` for ``dim`` out of range ("Dimension out of range") and for ``index`` out of range
    ("select(): index 3 out of range for tensor of size [2, 3] at dimension 0"); a 0-d tensor has nothing to
    select from ("select() cannot be applied to a 0-dim tensor.")."""
    check_tensor("select", "input", input)
    if input._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return apply(select_spec, (input, d, index % size))


def slice_dim(input, dim, sl):
    """``input[..., start:stop:step, ...]`` along ``dim``, as a view (``SliceBackward0``)."""
    if sl.step is not None and sl.step <= 0:
        raise ValueError("step must be greater than zero")
    start, end, step = sl.indices(input._data.shape[dim])
    end = max(end, start)
    return apply(slice_spec, (input, dim, start, end, step))


# -- cat / stack / unbind (any number of tensors) -----------------------------------------------------------------
def _legacy_empty(shape) -> bool:
    """PyTorch's cat skips 1-D tensors of size 0 (``torch.zeros(0)``), whatever the other tensors' shapes."""
    return len(shape) == 1 and shape[0] == 0


def _cat(dim, *tensors):
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, a in enumerate(tensors):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = tensors[0].dtype
    for a in tensors[1:]:
        dtype = promote_types(dtype, a.dtype)
    kept = [(i, a) for i, a in enumerate(tensors) if not _legacy_empty(a.shape)]
    if not kept:
        return array_module(tensors[0]).zeros((0,), dtype=dtype)
    d = dim
    i0, first = kept[0]
    for i, a in kept[1:]:
        if a.ndim != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} and {a.ndim}")
        for k in range(a.ndim):
            if k != d and a.shape[k] != first.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{first.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
    return array_module(first).concatenate([a.astype(dtype, copy=False) for _, a in kept], axis=d)


def _cat_backward(F, grad, dim, tensors_sym_sizes):
    out, offset = [], 0
    for shape in tensors_sym_sizes:
        if _legacy_empty(shape):  # a skipped tensor gets an empty gradient
            out.append(F.new_zeros((0,), grad))
            continue
        out.append(F.slice(grad, dim, offset, offset + shape[dim], 1))
        offset += shape[dim]
    return out


def _stack(dim, *tensors):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, a in enumerate(tensors[1:], 1):
        if a.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"[{', '.join(map(str, tensors[0].shape))}] at entry 0 and "
                               f"[{', '.join(map(str, a.shape))}] at entry {i}")
    return array_module(tensors[0]).stack(tensors, axis=dim)


cat_spec = defop("cat", _cat, tensors=_cat_backward)
stack_spec = defop("stack", _stack,
                   tensors=lambda F, grad, dim, tensors_sym_sizes: [F.select(grad, dim, i)
                                                                    for i in range(len(tensors_sym_sizes))])


def _unbind(self, dim):
    if self.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return tuple(self[(slice(None),) * dim + (i, Ellipsis)] for i in range(self.shape[dim]))


unbind_spec = defop("unbind", _unbind, outputs="*", view=True, self=lambda F, grads, dim: F.stack(dim, *grads))


def _tensor_list(tensors, fn):
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


@public("cat", "concat", "concatenate", method=False)
@numpy_names
def cat(tensors, dim=0):
    """Concatenate along ``dim`` (``CatBackward0``; each input gets its slice of the gradient)."""
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    ref = next((t for t in tensors if not _legacy_empty(t._data.shape)), tensors[0])  # dim wraps against it
    return apply(cat_spec, (_dim(dim, ref._data.ndim), *tensors))


@public("stack", method=False)
@numpy_names
def stack(tensors, dim=0):
    """Stack tensors of one shape along a new ``dim`` (``StackBackward0``)."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    return apply(stack_spec, (_dim(dim, tensors[0]._data.ndim + 1), *tensors))


@public("unbind")
@numpy_names
def unbind(input, dim=0):
    """The slices along ``dim`` as a tuple of views (one ``UnbindBackward0`` node for all, as in PyTorch).

    Recorded in-place changes of one of them are refused, as PyTorch refuses them for every function that
    returns several views."""
    check_tensor("unbind", "input", input)
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    outs = apply(unbind_spec, (input, _dim(dim, input._data.ndim)))
    for k, o in enumerate(outs):
        o._multi_view = (k, "Unbind")  # (output number, the node name in PyTorch's messages)
    return outs


# -- the public shape surface ----------------------------------------------------------------------------------------
def _sizes(args, keyword, name):
    """``f(2, 3)``, ``f((2, 3))`` and ``f(size=(2, 3))`` alike (PyTorch accepts the keyword too)."""
    if keyword is not None:
        if args:
            raise TypeError(f"{name}() got multiple values for argument")
        return tuple(keyword)
    return shape_arg(args)


@public("view", function=False)
def view(self, *shape, size=None):
    """The same storage seen with another shape (``ViewBackward0``); one size may be -1.

    Raises ``RuntimeError`` when sizes disagree ("is invalid for input of size"; "cannot reshape tensor of 0
    elements ... ambiguous" for -1 with no elements) or when the memory layout would need a copy ("view size is
    not compatible ... Use .reshape(...) instead.")."""
    if size is not None:
        shape = (tuple(size),)
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("leafkit does not support view(dtype); use .to(dtype)")
    return apply(view_spec, (self, shape_arg(shape)))


@public("reshape")
def reshape(input, *shape, **kwargs):
    """Like :meth:`view` when the layout allows (``ViewBackward0``); otherwise a contiguous copy first
    (``CloneBackward0`` then ``UnsafeViewBackward0``), exactly as PyTorch does.  The shape may also be given as
    ``shape=``."""
    shape = _sizes(shape, kwargs.pop("shape", None), "reshape")
    if kwargs:
        raise TypeError(f"reshape() got an unexpected keyword argument '{next(iter(kwargs))}'")
    d = input._data
    if d.flags.c_contiguous:
        return apply(view_spec, (input, shape))
    if viewable(d, shape):
        return apply(reshape_alias_spec, (input, shape))
    return apply(unsafe_view_spec, (clone(input), shape))


public("view_as", function=False)(lambda self, other: self.view(other.shape))
public("reshape_as", function=False)(lambda self, other: self.reshape(other.shape))
public("expand_as", function=False)(lambda self, other: self.expand(other.shape))


@public("flatten")
@numpy_names
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a ``reshape``)."""
    nd = input._data.ndim
    if nd == 0:
        return input.reshape(1)
    s, e = _dim(start_dim, nd), _dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input._data.shape
    n = 1
    for k in shp[s:e + 1]:
        n *= k
    return input.reshape(shp[:s] + (n,) + shp[e + 1:])


@public("t")
def t(input):
    """Transpose of a tensor with at most 2 dims: a view (``TBackward0``)."""
    check_tensor("t", "input", input)
    return apply(t_spec, (input,))


@public("transpose", "swapaxes", "swapdims")
def transpose(input, dim0, dim1):
    """Swap two dimensions: a view (``TransposeBackward0``)."""
    check_tensor("transpose", "input", input)
    nd = input._data.ndim
    return apply(transpose_spec, (input, _dim(dim0, nd), _dim(dim1, nd)))


@public("permute")
def permute(input, *dims, **kwargs):
    """Reorder all dimensions: a view (``PermuteBackward0``); ``permute(1, 0)``, ``permute((1, 0))`` or
    ``permute(dims=(1, 0))``."""
    dims = _sizes(dims, kwargs.pop("dims", None), "permute")
    if kwargs:
        raise TypeError(f"permute() got an unexpected keyword argument '{next(iter(kwargs))}'")
    nd = input._data.ndim
    return apply(permute_spec, (input, tuple(_dim(d, nd) for d in dims)))


@public("expand", function=False)
def expand(self, *sizes, size=None):
    """Broadcast size-1 dims to ``sizes`` without copying (``ExpandBackward0``); -1 keeps a size.
    The gradient is summed back to the original shape."""
    return apply(expand_spec, (self, _sizes(sizes, size, "expand")))


@public("squeeze")
@numpy_names
def squeeze(input, dim=None):
    """Drop dimensions of size 1: all of them (``SqueezeBackward0``), one ``dim`` (``SqueezeBackward1``), or those
    of a tuple or list of dims (``SqueezeBackward2``); a dim whose size is not 1 stays. A view."""
    if dim is None:
        return apply(squeeze_spec, (input,))
    if isinstance(dim, (tuple, list)):
        return apply(squeeze_dims_spec, (input, _dims(dim, input._data.ndim) if len(dim) else ()))
    return apply(squeeze_dim_spec, (input, _dim(dim, input._data.ndim)))


@public("unsqueeze")
@numpy_names
def unsqueeze(input, dim):
    """Insert a dimension of size 1 at ``dim``: a view (``UnsqueezeBackward0``)."""
    n = input._data.ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return apply(unsqueeze_spec, (input, dim % n))


def _T(self):
    """All dimensions reversed (``PermuteBackward0``); like PyTorch, warns (once per process) unless the tensor is
    2-D, with its own message for a 0-d tensor."""
    nd = self._data.ndim
    if nd != 2:
        _warn_once(T_0D_WARNING if nd == 0 else T_WARNING)
    return apply(permute_spec, (self, tuple(range(nd - 1, -1, -1))))


def _mT(self):
    """The last two dimensions swapped (``TransposeBackward0``); a 0-d tensor is returned as it is, with PyTorch's
    deprecation warning (once per process).

    Raises ``RuntimeError`` for a 1-D tensor."""
    nd = self._data.ndim
    if nd == 0:
        _warn_once(MT_0D_WARNING)
        return self
    if nd < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {nd}-D tensor.")
    return apply(transpose_spec, (self, nd - 2, nd - 1))


Tensor.T = property(_T)
Tensor.mT = property(_mT)


@public("contiguous", function=False)
def contiguous(self):
    """``self`` when its memory is already C-contiguous, else a contiguous copy (``CloneBackward0``)."""
    if self._data.flags.c_contiguous:
        return self
    return clone(self)
