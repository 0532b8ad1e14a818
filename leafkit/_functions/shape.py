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
from .._tensor import INFERENCE_INPLACE_MESSAGE, Size, Tensor
from ..autograd.grad_mode import _state
from . import _base, _batched
from ._base import array_module, as_array, check_tensor, numpy_names, promote_types, wrap_dims
from ._base import dim as _dim
from ._base import dims as _dims
from ._batch_rules import SPEC, declare, dims, front, logical_front, pointwise, sizes, wrap_out
from ._batched import BatchedTensor, batch_size, per_sample
from ._registry import apply, defop, public
from .copy import clone
from .inplace import check_inplace_allowed, inplace
from .views import mark_multi_output_views

T_WARNING = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will throw "
    "an error in a future release. Consider `x.mT` to transpose batches of matrices or "
    "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor."
)
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
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape [{', '.join(map(str, shape))}] because "
                "the unspecified dimension size -1 can be any value and is ambiguous"
            )
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
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
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
unsafe_view_spec = defop(
    "unsafe_view",
    lambda self, size: as_array(self.reshape(infer_shape(size, self.size))),
    node="UnsafeViewBackward0",
    self=_reshape_back,
)


def _t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


t_spec = defop("t", _t, view=True, self=lambda F, grad: F.t(grad))
transpose_spec = defop(
    "transpose",
    lambda self, dim0, dim1: array_module(self).swapaxes(self, dim0, dim1) if self.ndim else self.view(),
    view=True,
    self=lambda F, grad, dim0, dim1: F.transpose(grad, dim0, dim1),
)


def _permute(self, dims):
    if len(dims) != self.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {self.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return array_module(self).transpose(self, dims)


permute_spec = defop(
    "permute", _permute, view=True, self=lambda F, grad, dims: F.permute(grad, tuple(int(i) for i in np.argsort(dims)))
)


def _expand(self, size):
    size = tuple(size)
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand({_dtype.type_string(self.dtype)}{{[{', '.join(map(str, self.shape))}]}}, "
            f"size=[{', '.join(map(str, size))}]): the number of sizes provided ({len(size)}) must be "
            f"greater or equal to the number of dimensions in the tensor ({self.ndim})"
        )
    lead = len(size) - self.ndim
    target = []
    for i, s in enumerate(size):
        if i >= lead and s == -1:
            s = self.shape[i - lead]
        elif s == -1:
            raise RuntimeError(
                f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
            )
        if i >= lead and self.shape[i - lead] not in (1, s):
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size "
                f"({self.shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: "
                f"[{', '.join(map(str, size))}].  Tensor sizes: [{', '.join(map(str, self.shape))}]"
            )
        target.append(s)
    return array_module(self).broadcast_to(self, tuple(target))


expand_spec = defop("expand", _expand, view=True, self=lambda F, grad, self_sym_sizes: F.sum_to(grad, self_sym_sizes))


def _unsqueeze_to(F, grad, self_sym_sizes):
    for d, s in enumerate(self_sym_sizes):
        if s == 1:
            grad = F.unsqueeze(grad, d)
    return grad


squeeze_spec = defop(
    "squeeze",
    lambda self: array_module(self).squeeze(self) if self.ndim else self.view(),
    view=True,
    self=_unsqueeze_to,
)


def _squeeze_dim(self, dim):
    if self.ndim == 0:
        return self.view()
    return array_module(self).squeeze(self, dim) if self.shape[dim] == 1 else self.view()


def _squeeze_dim_backward(F, grad, self_sym_sizes, dim):
    if self_sym_sizes and self_sym_sizes[dim] == 1:
        return F.unsqueeze(grad, dim)
    return grad


squeeze_dim_spec = defop("squeeze_dim", _squeeze_dim, node="SqueezeBackward1", view=True, self=_squeeze_dim_backward)


def _squeeze_dims(self, dims):
    if self.ndim == 0:
        return self.view()
    drop = tuple(d for d in dims if self.shape[d] == 1)
    return array_module(self).squeeze(self, drop) if drop else self.view()


def _squeeze_dims_backward(F, grad, self_sym_sizes, dims):
    for d in sorted(d for d in dims if self_sym_sizes and self_sym_sizes[d] == 1):
        grad = F.unsqueeze(grad, d)
    return grad


squeeze_dims_spec = defop(
    "squeeze_dims", _squeeze_dims, node="SqueezeBackward2", view=True, self=_squeeze_dims_backward
)
# matmul's ``squeeze_(0)`` after ``vector @ matrix``: PyTorch's node for the in-place squeeze
squeeze_inplace_spec = defop("squeeze_inplace_dim", _squeeze_dim, node="SqueezeBackward4", self=_squeeze_dim_backward)
unsqueeze_spec = defop(
    "unsqueeze",
    lambda self, dim: array_module(self).expand_dims(self, dim),
    view=True,
    self=lambda F, grad, dim: F.squeeze_dim(grad, dim),
)
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
    if dim == 0:
        return self[start:end:step]
    return self[(slice(None),) * dim + (slice(start, end, step),)]


def _slice_backward(grad_output, input_sizes, dim, start, end, step):
    out = array_module(grad_output).zeros(input_sizes, dtype=grad_output.dtype)
    out[(slice(None),) * dim + (slice(start, end, step),)] = grad_output
    return out


select_spec = defop(
    "select",
    _select,
    view=True,
    self=lambda F, grad, self_sym_sizes, dim, index: F.select_backward(grad, self_sym_sizes, dim, index),
)
defop(
    "select_backward",
    _select_backward,
    inputs=("grad_output",),
    grad_output=lambda F, grad, dim, index: F.select(grad, dim, index),
)
slice_spec = defop(
    "slice",
    _slice,
    view=True,
    self=lambda F, grad, self_sym_sizes, dim, start, end, step: F.slice_backward(
        grad, self_sym_sizes, dim, start, end, step
    ),
)
defop(
    "slice_backward",
    _slice_backward,
    inputs=("grad_output",),
    grad_output=lambda F, grad, dim, start, end, step: F.slice(grad, dim, start, end, step),
)


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
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}"
        )
    return apply(select_spec, (input, d, index % size))


def slice_dim(input, dim, sl):
    """``input[..., start:stop:step, ...]`` along ``dim``, as a view (``SliceBackward0``)."""
    if sl.step is not None and sl.step <= 0:
        raise ValueError("step must be greater than zero")
    start, end, step = sl.indices(input._data.shape[dim])
    end = max(end, start)
    if input.__class__ is Tensor and input._base is None and not input._requires_grad and not _base.VMAP_LEVELS:
        # a batch of a plain tensor (``X[i:i + 64]``): nothing to record, so what ``apply`` does then, without its
        # bookkeeping: the forward (the profiler's timed one while it records) and a view of ``input``
        out = Tensor._make(slice_spec.forward(input._data, dim, start, end, step), input._device)
        out._share_view_of(input, recorded=False)
        return out
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
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{first.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list."
                )
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
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got "
                f"[{', '.join(map(str, tensors[0].shape))}] at entry 0 and "
                f"[{', '.join(map(str, a.shape))}] at entry {i}"
            )
    return array_module(tensors[0]).stack(tensors, axis=dim)


cat_spec = defop("cat", _cat, tensors=_cat_backward)
stack_spec = defop(
    "stack",
    _stack,
    tensors=lambda F, grad, dim, tensors_sym_sizes: [F.select(grad, dim, i) for i in range(len(tensors_sym_sizes))],
)


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
    return mark_multi_output_views(apply(unbind_spec, (input, _dim(dim, input._data.ndim))))


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
    if nd == 0:  # dims 0 and -1 only, as PyTorch wraps them
        _dim(start_dim, nd), _dim(end_dim, nd)
        return input.reshape(1)
    s, e = _dim(start_dim, nd), _dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input._data.shape
    n = 1
    for k in shp[s : e + 1]:
        n *= k
    return input.reshape(shp[:s] + (n,) + shp[e + 1 :])


@public("unflatten")
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one of them may be -1): a view (``ViewBackward0``), the inverse of
    :func:`flatten`.  ``torch.nn.Unflatten`` calls it.

    Raises
    ------
    IndexError
        For a dim out of range.
    RuntimeError
        "unflatten: sizes must be non-empty"; "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim
        1 (3) in the input tensor"; "unflatten got an unexpected error:" followed by the size error (two -1, a
        negative size, a 0-d input), as PyTorch words them.
    """
    check_tensor("unflatten", "input", input)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"unflatten(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    shape = input._data.shape
    if not shape:
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions")
    d = _dim(dim, len(shape))
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known, infer = 1, None
    for i, s in enumerate(sizes):
        if s == -1:
            if infer is not None:
                raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(
                f"unflatten got an unexpected error:\ninvalid shape dimension {s} at index {i} of shape "
                f"[{', '.join(map(str, sizes))}]"
            )
        else:
            known *= s
    n = shape[d]
    given = list(sizes)
    if infer is not None and known and n % known == 0:
        sizes[infer] = n // known
        known = n
    if known != n or (infer is not None and sizes[infer] == -1):
        raise RuntimeError(
            f"unflatten: Provided sizes [{', '.join(map(str, given))}] don't multiply up to the size of dim {d} ({n}) "
            "in the input tensor"
        )
    return input.view(shape[:d] + tuple(sizes) + shape[d + 1 :])


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


# -- repeat, flip, roll, movedim, narrow (task M1) ---------------------------------------------------------------------
def _repeat(self, repeats):
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    shape = (1,) * (len(repeats) - self.ndim) + self.shape
    out_shape = [r * s for r, s in zip(repeats, shape)]
    for s in out_shape:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: [{', '.join(map(str, out_shape))}]"
            )
    return array_module(self).tile(self, repeats) if repeats else self.copy()


def _repeat_backward(F, grad, repeats, self_sym_sizes):
    """PyTorch's repeat_backward: sum the leading new dims away, then one reshape that splits each repeated dim into
    (repeat, size) and one sum over the repeat dims."""
    if 0 in repeats:
        return F.new_zeros(self_sym_sizes, grad)
    n_new = len(grad.shape) - len(self_sym_sizes)
    for _ in range(n_new):
        grad = F.sum_dim(grad, (0,), False)
    grad_size, sum_dims = [], []
    for d, size in enumerate(self_sym_sizes):
        if repeats[d + n_new] != 1:
            grad_size.append(repeats[d + n_new])
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(size)
    if sum_dims:
        grad = F.sum_dim(F.reshape(grad, tuple(grad_size)), tuple(sum_dims), False)
    return grad


repeat_spec = defop("repeat", _repeat, self=_repeat_backward)


@public("repeat", function=False)
def repeat(self, *sizes):
    """A new tensor that tiles ``self`` ``sizes[i]`` times along dim i (``RepeatBackward0``); extra leading sizes add
    dimensions: ``t.repeat(2, 1)`` of a (3,) tensor is (2, 3). Unlike ``expand``, the data is copied.

    Same dtype and device. The gradient sums the copies back (a ``view`` then a ``sum``, as PyTorch computes it); a
    repeat of 0 gives zero gradients. Raises RuntimeError for fewer sizes than dimensions ("Number of dimensions of
    repeat dims can not be smaller than number of dimensions of tensor") and for a negative size."""
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    return apply(repeat_spec, (self, tuple(int(s) for s in shape_arg(sizes))))


def _flip(self, dims):
    if not dims or self.ndim == 0:
        return self.copy()
    return array_module(self).flip(self, dims).copy()  # PyTorch's flip copies (no negative strides)


flip_spec = defop("flip", _flip, self=lambda F, grad, dims: F.flip(grad, dims))


@public("flip")
def flip(input, *dims_args, dims=None):
    """A copy with the order of elements reversed along ``dims`` (ints, one sequence, or the keyword ``dims``;
    ``FlipBackward0``; the gradient is flipped back).

    Same shape, dtype and device. Raises IndexError for a dim out of range, RuntimeError for a repeated dim."""
    check_tensor("flip", "input", input)
    given = shape_arg(dims_args) if dims is None else (dims if isinstance(dims, (tuple, list)) else (dims,))
    return apply(flip_spec, (input, wrap_dims(tuple(given), input._data.ndim)))


@public("fliplr")
def fliplr(input):
    """``flip(input, 1)``: left and right swapped (``FlipBackward0``). Raises RuntimeError below 2 dimensions."""
    check_tensor("fliplr", "input", input)
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return apply(flip_spec, (input, (1,)))


@public("flipud")
def flipud(input):
    """``flip(input, 0)``: up and down swapped (``FlipBackward0``). Raises RuntimeError for a 0-d tensor."""
    check_tensor("flipud", "input", input)
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return apply(flip_spec, (input, (0,)))


def _roll(self, shifts, dims):
    if self.size == 0:
        return self.copy()
    return array_module(self).roll(self, shifts if dims else shifts[0], axis=dims or None)


roll_spec = defop(
    "roll",
    _roll,
    self=lambda F, grad, shifts, dims: F.roll(grad, tuple(-s for s in reversed(shifts)), tuple(reversed(dims))),
)


@public("roll")
def roll(input, shifts, dims=None):
    """Elements shifted ``shifts`` places along ``dims``, wrapping around (``RollBackward0``; the gradient is rolled
    back). Without ``dims`` the tensor is rolled as if flattened, then given its shape again.

    ``shifts`` and ``dims`` are ints or sequences of equal length. Same shape, dtype and device. Raises RuntimeError
    "shifts and dimensions must align" when their lengths differ, IndexError for a dim out of range."""
    check_tensor("roll", "input", input)
    sh = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    nd = input._data.ndim
    ds = () if dims is None else ((dims,) if isinstance(dims, (int, np.integer)) else tuple(dims))
    if (ds and len(sh) != len(ds)) or (not ds and len(sh) != 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    return apply(roll_spec, (input, tuple(int(s) for s in sh), tuple(_dim(d, nd) for d in ds)))


@public("movedim", "moveaxis")
def movedim(input, source, destination):
    """The dimensions ``source`` moved to the positions ``destination`` (ints or sequences), the others keeping their
    order: a view, recorded as PyTorch records it, a ``permute`` (``PermuteBackward0``).

    Raises RuntimeError for a repeated dim or sequences of different lengths, IndexError for a dim out of range."""
    check_tensor("movedim", "input", input)
    nd = input._data.ndim
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
            f"the same number of dims as destination ({list(dst)} dims)"
        )
    nsrc, ndst = [_dim(d, nd) for d in src], [_dim(d, nd) for d in dst]
    for name, given, normal in (("source", src, nsrc), ("destination", dst, ndst)):
        if len(set(normal)) != len(normal):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if nd == 0:
        return apply(alias_spec, (input,))
    order = [0] * nd
    rest_src = iter(d for d in range(nd) if d not in nsrc)
    placed = dict(zip(ndst, nsrc))
    for i in range(nd):
        order[i] = placed[i] if i in placed else next(rest_src)
    return apply(permute_spec, (input, tuple(order)))


@public("narrow")
def narrow(input, dim, start, length):
    """Elements ``start .. start + length - 1`` along ``dim``, as a view (``SliceBackward0``, like ``t[start:end]``).

    ``start`` may be negative (counted from the end). Raises RuntimeError for a 0-d tensor, a negative length or a
    range past the end ("start (2) + length (2) exceeds dimension size (3)."), IndexError for a dim out of range."""
    check_tensor("narrow", "input", input)
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, nd)
    size = input._data.shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start % size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return apply(slice_spec, (input, d, start, start + length, 1))


# -- diagonals and triangles: diagonal, diag_embed, diag, trace, triu, tril (task M1) -----------------------------
def _diagonal_view(a, offset, dim1, dim2):
    """The diagonal of ``a`` over ``dim1``/``dim2`` as a writeable view (NumPy's ``diagonal`` is read-only): the
    other dims in order, then the diagonal."""
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = a.shape[dim1], a.shape[dim2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start = [slice(None)] * a.ndim
    if length:
        start[dim1] = slice(max(0, -offset), None)
        start[dim2] = slice(max(0, offset), None)
    sub = a[tuple(start)]
    rest = [i for i in range(a.ndim) if i not in (dim1, dim2)]
    shape = tuple(a.shape[i] for i in rest) + (length,)
    strides = tuple(a.strides[i] for i in rest) + (a.strides[dim1] + a.strides[dim2],)
    return array_module(a).lib.stride_tricks.as_strided(sub, shape, strides)


def _diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    out = array_module(grad_output).zeros(input_sizes, dtype=grad_output.dtype)
    _diagonal_view(out, offset, dim1, dim2)[...] = grad_output
    return out


def _diagonal_grad(F, grad, self_sym_sizes, offset, dim1, dim2):
    return F.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2)


diagonal_spec = defop(
    "diagonal",
    lambda self, offset, dim1, dim2: _diagonal_view(self, offset, dim1, dim2),
    view=True,
    self=_diagonal_grad,
)
diagonal_copy_spec = defop(
    "diagonal_copy",
    lambda self, offset, dim1, dim2: _diagonal_view(self, offset, dim1, dim2).copy(),
    node="DiagonalBackward0_copy",
    self=_diagonal_grad,
)
defop(
    "diagonal_backward",
    _diagonal_backward,
    inputs=("grad_output",),
    grad_output=lambda F, grad, offset, dim1, dim2: F.diagonal(grad, offset, dim1, dim2),
)


def _diag_embed(self, offset, dim1, dim2):
    n = self.shape[-1] if self.ndim else 1
    m = n + abs(offset)
    batch = list(self.shape[:-1])
    for d in sorted((dim1, dim2)):
        batch.insert(d, m)
    out = array_module(self).zeros(tuple(batch), dtype=self.dtype)
    _diagonal_view(out, offset, dim1, dim2)[...] = self
    return out


diag_embed_spec = defop(
    "diag_embed", _diag_embed, self=lambda F, grad, offset, dim1, dim2: F.diagonal(grad, offset, dim1, dim2)
)


@public("diagonal")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal over ``dim1``/``dim2`` (above it for ``offset > 0``, below for ``offset < 0``) as a view: the
    other dims in order, then the diagonal (``DiagonalBackward0``; its derivative is the op
    ``diagonal_backward``, which writes the gradient into zeros).

    Same dtype and device; writes through it change the input. Raises RuntimeError for identical dims, IndexError
    for a dim out of range."""
    check_tensor("diagonal", "input", input)
    nd = input._data.ndim
    return apply(diagonal_spec, (input, int(offset), _dim(dim1, nd), _dim(dim2, nd)))


@public("diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor with one more dimension whose diagonal over ``dim1``/``dim2`` (shifted by ``offset``) holds the last
    dimension of ``input``, zeros elsewhere (``DiagEmbedBackward0``; the gradient is that diagonal of the incoming
    gradient).

    Same dtype and device. Raises RuntimeError for identical dims, IndexError for a dim out of range."""
    check_tensor("diag_embed", "input", input)
    nd = input._data.ndim + 1
    return apply(diag_embed_spec, (input, int(offset), _dim(dim1, nd), _dim(dim2, nd)))


@public("diag")
def diag(input, diagonal=0):
    """For a 1-D tensor, the square matrix with it on the ``diagonal``-th diagonal (``DiagEmbedBackward0``); for a
    2-D tensor, a copy of that diagonal (``DiagonalBackward0_copy``), as PyTorch computes both.

    Same dtype and device. Raises RuntimeError for other dimensions ("diag(): Supports 1D or 2D tensors. Got 3D")."""
    check_tensor("diag", "input", input)
    nd = input._data.ndim
    if nd == 1:
        return apply(diag_embed_spec, (input, int(diagonal), 0, 1))
    if nd == 2:
        return apply(diagonal_copy_spec, (input, int(diagonal), 0, 1))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")


def _trace(self):
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    if self.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return as_array(array_module(self).trace(self, dtype=np.int64 if self.dtype.kind in "iu" else None))


def _trace_backward(F, grad, self_sym_sizes):
    """PyTorch's trace_backward: the gradient filled into the diagonal places (every (m + 1)-th) of a flat zero
    tensor, viewed as the input's shape."""
    n, m = self_sym_sizes
    g = grad._data if F.records else grad
    index = array_module(g).arange(min(n, m), dtype=np.int64) * (m + 1)
    return F.view(F.index_fill_tensor(F.new_zeros((n * m,), grad), index, grad, 0), self_sym_sizes)


trace_spec = defop("trace", _trace, self=_trace_backward)


@public("trace")
def trace(input):
    """The sum of the main diagonal of a 2-D tensor, as a 0-d tensor (``TraceBackward0``); integer input sums to
    int64. The gradient puts the incoming gradient on the diagonal (PyTorch's ``trace_backward``).

    Raises RuntimeError for other dimensions ("trace: expected a matrix, but got tensor with dim 1"),
    NotImplementedError for bool input."""
    check_tensor("trace", "input", input)
    return apply(trace_spec, (input,))


def _triangle(np_fn, name):
    def forward(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return as_array(np_fn(self, diagonal))

    return forward


triu_spec = defop("triu", _triangle(np.triu, "triu"), self=lambda F, grad, diagonal: F.triu(grad, diagonal))
tril_spec = defop("tril", _triangle(np.tril, "tril"), self=lambda F, grad, diagonal: F.tril(grad, diagonal))


def _triangle_public(name, spec, part):
    def fn(input, diagonal=0):
        check_tensor(name, "input", input)
        return apply(spec, (input, int(diagonal)))

    def op_(self, diagonal=0):
        return inplace(self, spec, (self, int(diagonal)))

    fn.__name__ = fn.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    fn.__doc__ = (
        f"The {part} triangle of the last two dimensions (on and {'above' if name == 'triu' else 'below'} "
        f"the ``diagonal``-th diagonal), zeros elsewhere (``{spec.node_cls.__name__}``; the gradient is the "
        f"same triangle of the incoming gradient).\n\n    Same shape, dtype and device. Raises RuntimeError "
        f'below 2 dimensions ("{name}: input tensor must have at least 2 dimensions").'
    )
    op_.__doc__ = f"In-place :meth:`{name}` (node ``{spec.node_cls.__name__}``)."
    public(name)(fn)
    public(name + "_", function=False)(op_)


_triangle_public("triu", triu_spec, "upper")
_triangle_public("tril", tril_spec, "lower")


# -- split / chunk: several views at once (task M1) ------------------------------------------------------------------
def _split(self, split_size, dim):
    n = self.shape[dim]
    if n == 0:  # PyTorch: one empty piece
        return (self[(slice(None),) * dim + (slice(0, 0),)],)
    return tuple(self[(slice(None),) * dim + (slice(s, s + split_size),)] for s in range(0, n, split_size))


def _split_with_sizes(self, split_sizes, dim):
    out, s = [], 0
    for k in split_sizes:
        out.append(self[(slice(None),) * dim + (slice(s, s + k),)])
        s += k
    return tuple(out)


split_spec = defop("split", _split, outputs="*", view=True, self=lambda F, grads, dim: F.cat(dim, *grads))
split_with_sizes_spec = defop(
    "split_with_sizes", _split_with_sizes, outputs="*", view=True, self=lambda F, grads, dim: F.cat(dim, *grads)
)


@public("split")
def split(tensor, split_size_or_sections, dim=0):
    """Pieces of ``tensor`` along ``dim``, as a tuple of views: an int gives pieces of that size (the last may be
    smaller; ``SplitBackward0``), a list gives pieces of those sizes (``SplitWithSizesBackward0``).

    One node for all pieces, as in PyTorch; the gradient is the pieces' gradients concatenated (zeros for pieces
    that got none). In-place changes of a piece are refused ("Output 0 of Split is a view and is being modified
    inplace..."), as PyTorch refuses them for every function that returns several views. Raises RuntimeError for a
    0-d tensor, a negative or zero size (unless the dim is empty), or sizes that do not add up."""
    check_tensor("split", "tensor", tensor)
    nd = tensor._data.ndim
    if nd == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _dim(dim, nd)
    n = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        return mark_multi_output_views(apply(split_spec, (tensor, size, d)))
    sizes = tuple(int(s) for s in split_size_or_sections)
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes=[{', '.join(map(str, sizes))}]"
        )
    if sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
            f"dimension {d}), but got split_sizes=[{', '.join(map(str, sizes))}]"
        )
    return mark_multi_output_views(apply(split_with_sizes_spec, (tensor, sizes, d)))


@public("chunk")
def chunk(input, chunks, dim=0):
    """``chunks`` pieces of (nearly) equal size along ``dim``, as views: PyTorch's ``split`` with size
    ``ceil(size / chunks)``, so fewer pieces when the size runs out (``SplitBackward0``; see :func:`split`).

    Raises RuntimeError for a 0-d tensor ("chunk expects at least a 1-dimensional tensor") and for ``chunks < 1``."""
    check_tensor("chunk", "input", input)
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _dim(dim, nd)
    n = input._data.shape[d]
    size = (n + chunks - 1) // chunks
    if size == 0 and n == 0:
        return mark_multi_output_views(apply(split_with_sizes_spec, (input, (0,) * chunks, d)))
    return mark_multi_output_views(apply(split_spec, (input, size, d)))


# -- in-place view ops: t_, transpose_, squeeze_, unsqueeze_ (task M1) ------------------------------------------------
def _t_(self):
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


t_inplace_spec = defop("t_", _t_, node="TBackward1", self=lambda F, grad: F.t(grad))
transpose_inplace_spec = defop(
    "transpose_",
    lambda self, dim0, dim1: array_module(self).swapaxes(self, dim0, dim1) if self.ndim else self.view(),
    node="TransposeBackward1",
    self=lambda F, grad, dim0, dim1: F.transpose(grad, dim0, dim1),
)
squeeze_all_inplace_spec = defop(
    "squeeze_",
    lambda self: array_module(self).squeeze(self) if self.ndim else self.view(),
    node="SqueezeBackward3",
    self=_unsqueeze_to,
)
unsqueeze_inplace_spec = defop(
    "unsqueeze_",
    lambda self, dim: array_module(self).expand_dims(self, dim),
    node="UnsqueezeBackward1",
    self=lambda F, grad, dim: F.squeeze_dim(grad, dim),
)


def inplace_view(t, spec, args):
    """Change ``t``'s shape/strides in place (its data stays where it is), as PyTorch's ``t_()`` does.

    The version counter is bumped; when recorded, ``t``'s ``grad_fn`` becomes the op's node (``TBackward1`` ...)
    over its old history (a view keeps its base, whose history does not change); a ``retain_grad()`` made before
    keeps reporting the gradient of the old shape, as in PyTorch. Raises PyTorch's in-place errors: "a leaf
    Variable that requires grad is being used in an in-place operation." (and the view-of-a-leaf, no_grad-view and
    multiple-output-view variants), and for an inference tensor outside inference mode (after the change, as
    PyTorch's kernel does)."""
    if t.__class__ is BatchedTensor:  # inside vmap: the batched tensor takes the layout of the op's result
        return _inplace_view_batched(t, spec, args)
    if t._base is not None and t._version_counter[0] != t._attr_version:
        t._refresh_view()
    record = _state.enabled and t._requires_grad
    if record:
        check_inplace_allowed(t)
    if t._inference and not _state.inference:
        t._data = spec.forward(t._data, *args)
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    if record:
        old = Tensor._make(t._data, t._device, t._grad_fn, t._output_nr)
        old._requires_grad = True
        old._version_counter = t._version_counter
        res = apply(spec, (old, *args))
        data = res._data
        t._set_history(res._grad_fn, 0)  # retain_grad() stays with the old node, as in PyTorch
    else:
        data = spec.forward(t._data, *args)
    t._data = data
    t._version_counter[0] += 1
    if t._base is not None:
        t._attr_version = t._version_counter[0]
    return t


@public("t_", function=False)
def t_(self):
    """:meth:`t` in place: ``self`` itself becomes its transpose (``TBackward1``; see :func:`inplace_view`).
    Raises RuntimeError above 2 dimensions."""
    return inplace_view(self, t_inplace_spec, ())


@public("transpose_", "swapaxes_", "swapdims_", function=False)
def transpose_(self, dim0, dim1):
    """:meth:`transpose` in place (``TransposeBackward1``; see :func:`inplace_view`)."""
    nd = self._data.ndim
    return inplace_view(self, transpose_inplace_spec, (_dim(dim0, nd), _dim(dim1, nd)))


@public("squeeze_", function=False)
def squeeze_(self, dim=None):
    """:meth:`squeeze` in place (``SqueezeBackward3``, or ``SqueezeBackward4`` with ``dim``; see
    :func:`inplace_view`)."""
    if dim is None:
        return inplace_view(self, squeeze_all_inplace_spec, ())
    return inplace_view(self, squeeze_inplace_spec, (_dim(dim, self._data.ndim),))


@public("unsqueeze_", function=False)
def unsqueeze_(self, dim):
    """:meth:`unsqueeze` in place (``UnsqueezeBackward1``; see :func:`inplace_view`)."""
    n = self._data.ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return inplace_view(self, unsqueeze_inplace_spec, (dim % n,))


@public("storage_offset", function=False)
def storage_offset(self):
    """Where this tensor's first element sits in its storage, counted in elements (``t[1].storage_offset()`` of a
    (2, 3) tensor is 3); 0 for a tensor that owns its storage. An int."""
    base = self._base if self._base is not None else self
    return (self.data_ptr() - base.untyped_storage().data_ptr()) // self._data.dtype.itemsize


# -- issue 18: rot90 --------------------------------------------------------------------------------------------------
def _rot90(self, k, dims):
    return as_array(array_module(self).rot90(self, k, axes=dims).copy())


rot90_spec = defop(
    "rot90",
    _rot90,
    self=lambda F, grad, k, dims: F.rot90(grad, -k, dims),
    doc="Rotate by ``k`` quarter turns in the plane of ``dims`` (``Rot90Backward0``), a copy.",
)


@public("rot90")
def rot90(input, k=1, dims=(0, 1)):
    """Rotate ``input`` by ``k`` quarter turns from the first of ``dims`` towards the second (``Rot90Backward0``;
    the gradient rotates back).  A copy, not a view.

    Raises
    ------
    RuntimeError
        "expected total rotation dims == 2, but got dims = 3"; "expected total dims >= 2, but got total dims = 1";
        "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0".
    """
    check_tensor("rot90", "input", input)
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = _dim(dims[0], input.dim()), _dim(dims[1], input.dim())
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return apply(rot90_spec, (input, int(k) % 4, (d0, d1)))


# -- vmap: the batching rules of the entries above (leafkit.func.vmap) ------------------------------------------------
def _t_batched(spec, args, level):
    """``t()`` of a batch of matrices swaps their two dims; of vectors and numbers it changes nothing."""
    v = logical_front(args[0], level)
    if v._data.ndim < 3:
        return wrap_out(apply(alias_spec, (v,)), level, False)
    return wrap_out(apply(transpose_spec, (v, 1, 2)), level, False)


def _permute_batched(spec, args, level):
    v = logical_front(args[0], level)
    return wrap_out(apply(spec, (v, (0, *(d + 1 for d in args[1])))), level, False)


def _squeeze_batched(spec, args, level):
    """``squeeze()`` drops the size-1 dims of a sample, never the batch dimension (even a batch of 1)."""
    v = logical_front(args[0], level)
    ones = tuple(d + 1 for d, n in enumerate(args[0]._data.shape) if n == 1)
    return wrap_out(apply(squeeze_dims_spec, (v, ones)), level, False)


def _cat_batched(spec, args, level):
    """``cat`` with the batch dimension first; PyTorch skips 1-d empty tensors in a cat, and so does the rule."""
    tensors = [a for a in args[1:] if a.__class__ is BatchedTensor or not _legacy_empty(a._data.shape)]
    return dims("dim")(spec, (args[0], *tensors), level)


def _sized_backward(spec, args, level):
    """``select_backward``, ``slice_backward``, ``diagonal_backward``: the input sizes get the batch size first,
    the dims move one along."""
    g = logical_front(args[0], level)
    new = list(args)
    new[0] = g
    new[1] = (batch_size(level), *args[1])
    for name in ("dim", "dim1", "dim2"):
        if name in spec.params:
            k = spec.params.index(name)
            new[k] = new[k] + 1
    return wrap_out(apply(spec, tuple(new)), level, False)


def _roll_batched(spec, args, level):
    """``roll`` along dims moves them one along; a flattened roll (no dims) runs once per sample."""
    if not args[2]:
        return per_sample(spec, args, level)
    return dims("dims")(spec, args, level)


def _repeat_batched(spec, args, level):
    v = logical_front(args[0], level)
    repeats = tuple(args[1])
    v = _batched.pad(v, len(repeats) - (v._data.ndim - 1))
    return wrap_out(apply(spec, (v, (1, *repeats))), level, False)


def _trace_batched(spec, args, level):
    """The trace of each sample: its diagonal, summed (``SumBackward1`` over ``DiagonalBackward0``)."""
    v = logical_front(args[0], level)
    return wrap_out(apply(SPEC("sum_dim"), (apply(diagonal_spec, (v, 0, 1, 2)), (1,), False)), level, False)


def _inplace_view_batched(t, spec, args):
    """``t_()``, ``transpose_()``, ``squeeze_()``, ``unsqueeze_()`` on a batched tensor: it is given the layout of
    the out-of-place op's result (a view of the same samples), and its version counter moves on."""
    op = {
        "t_": lambda: t.t(),
        "transpose_": lambda: t.transpose(*args),
        "squeeze_": lambda: t.squeeze(),
        "squeeze_inplace_dim": lambda: t.squeeze(*args),
        "unsqueeze_": lambda: t.unsqueeze(*args),
    }[spec.name]
    r = op()
    t._value, t._bdim, t._arr = r._value, r._bdim, None
    t._version_counter[0] += 1
    return t


declare(sizes("size"), "view", "reshape_alias", "unsafe_view")
declare(sizes("size", pad_to_size=True), "expand")
declare(_t_batched, "t")
declare(_permute_batched, "permute")
declare(_squeeze_batched, "squeeze")
declare(dims("dim0", "dim1", expand=False), "transpose")
declare(
    dims("dim", expand=False),
    "squeeze_dim",
    "squeeze_inplace_dim",
    "select",
    "slice",
    "unbind",
    "split",
    "split_with_sizes",
)
declare(dims("dims", expand=False), "squeeze_dims", "flip")
declare(dims("dim", expand=False, out_ndim=1), "unsqueeze")
declare(dims("dim", out_ndim=1), "stack")
declare(_cat_batched, "cat")
declare(dims("dim1", "dim2", expand=False), "diagonal", "diagonal_copy")
declare(dims("dim1", "dim2", expand=False, out_ndim=1), "diag_embed")
declare(_sized_backward, "select_backward", "slice_backward", "diagonal_backward")
declare(_roll_batched, "roll")
declare(_repeat_batched, "repeat")
declare(_trace_batched, "trace")
declare(front, "triu", "tril")
declare(pointwise, "alias")
