"""The everyday surface that PyTorch itself composes from other ops (issue 18): no registry entries of their own.

Each function here is written as PyTorch writes it (``broadcast_to`` is ``expand``, ``hstack`` is ``cat`` of
``atleast_1d``, ``repeat_interleave`` with a number is ``unsqueeze``/``expand``/``clone``/``flatten``,
``take_along_dim`` is ``gather`` of broadcast operands ...), so a graph through one shows PyTorch's node names,
or has no history at all where PyTorch's has none (``nonzero``, ``count_nonzero``, ``isclose``, the random draws,
the predicates).  Also here: the ``torch.*`` forms of in-place methods (``torch.relu_(t)``), the ``Tensor``
aliases (``multiply_``, ``subtract_`` ...), ``bitwise_*``/``logical_xor`` and ``Tensor.apply_``/``map_``.
(The ``torch.*`` forms of ``nn.functional``'s ops, ``torch.celu``, ``torch.dropout``, ``torch.kl_div`` ..., live
beside their entries, in ``activation.py``, ``nn_ops.py``, ``loss.py`` and ``distance.py``: ``nn.functional``
calls them, as PyTorch's calls its ``torch.*`` ops.)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _device, _dtype
from .._creation import _finish, as_tensor, linspace, rand, randint, randn, tensor
from .._random import _rng
from .._sampling import multinomial as _multinomial
from .._tensor import Size, Tensor
from ._base import broadcast_shapes as _broadcast_shapes
from ._base import check_tensor
from ._base import dim as _dim
from ._registry import public
from .elementwise import floor_divide_scalar_spec, floor_divide_spec
from .inplace import inplace
from .shape import cat, diag_embed

__all__: list = []


# -- torch.* forms of in-place methods ------------------------------------------------------------------------------
_INPLACE_FUNCTIONS = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ clip_ cos_ "
    "cosh_ detach_ erf_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ log10_ log1p_ log2_ log_ neg_ negative_ "
    "reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ zero_ index_put_ clamp_ "
    "clamp_min_ clamp_max_ nan_to_num_ xlogy_ logit_"
).split()


def _inplace_function(name):
    def fn(input, *args, **kwargs):
        check_tensor(name, "input", input)
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(t, ...)`` is ``t.{name}(...)``: in place, PyTorch's in-place rules."
    return fn


for _name in _INPLACE_FUNCTIONS:
    if hasattr(Tensor, _name):
        public(_name, method=False)(_inplace_function(_name))


def _aliased(name, target):
    def op(self, *args, **kwargs):
        return getattr(self, target)(*args, **kwargs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"PyTorch's alias of :meth:`{target}`."
    return op


for _name, _target in (
    ("multiply_", "mul_"),
    ("subtract_", "sub_"),
    ("divide_", "div_"),
    ("true_divide_", "div_"),
):
    public(_name, function=False)(_aliased(_name, _target))


@public("floor_divide_", function=False)
def floor_divide_(self, other):
    """In-place :meth:`floor_divide` (a ``NotImplemented`` node when recorded: PyTorch has no derivative for it)."""
    spec = floor_divide_spec if isinstance(other, Tensor) else floor_divide_scalar_spec
    return inplace(self, spec, (self, other))


# -- predicates and sizes ----------------------------------------------------------------------------------------------
@public("is_floating_point", method=False)
def is_floating_point(input) -> bool:
    """True for float16/32/64 tensors."""
    check_tensor("is_floating_point", "input", input)
    return input.is_floating_point()


@public("is_inference", method=False)
def is_inference(input) -> bool:
    """True for a tensor made in ``inference_mode``."""
    check_tensor("is_inference", "input", input)
    return input.is_inference()


@public("is_complex")
def is_complex(input) -> bool:
    """False: leafkit has no complex dtypes."""
    check_tensor("is_complex", "input", input)
    return False


@public("is_signed")
def is_signed(input) -> bool:
    """True for the signed dtypes (floats and signed integers), False for uint8 and bool."""
    check_tensor("is_signed", "input", input)
    return input.dtype.is_signed


@public("is_nonzero")
def is_nonzero(input) -> bool:
    """The truth of a one-element tensor.

    Raises
    ------
    RuntimeError
        "Boolean value of Tensor with no values is ambiguous"; "Boolean value of Tensor with more than one value is
        ambiguous".
    """
    check_tensor("is_nonzero", "input", input)
    return bool(input)


@public("is_same_size")
def is_same_size(input, other) -> bool:
    """True when both tensors have the same shape."""
    check_tensor("is_same_size", "input", input)
    return tuple(input.shape) == tuple(other.shape)


@public("square_", function=False)
def square_(self):
    """In-place :meth:`square` (``self.pow_(2)``, ``PowBackward0``)."""
    return self.pow_(2)


public("square_", method=False)(_inplace_function("square_"))


@public("get_device", function=False)
def get_device(self) -> int:
    """The cuda device index (0), or -1 for a cpu tensor."""
    return 0 if self.device.type == "cuda" else -1


for _name, _value in (("is_sparse", False), ("is_quantized", False), ("is_meta", False), ("is_nested", False)):
    setattr(Tensor, _name, property(lambda self, v=_value: v, doc="False: leafkit has only dense strided tensors."))
Tensor.is_cpu = property(lambda self: self.device.type == "cpu", doc="True for a cpu tensor.")


Tensor.itemsize = property(lambda self: self._data.dtype.itemsize, doc="Bytes per element (``element_size()``).")
Tensor.nbytes = property(lambda self: int(self._data.size * self._data.dtype.itemsize), doc="Bytes of the elements.")


@public("positive")
def positive(input):
    """``input`` itself (``+t``).

    Raises
    ------
    RuntimeError
        On a bool tensor ("The `+` operator, on a bool tensor is not supported.").
    """
    check_tensor("positive", "input", input)
    if input.dtype == _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# -- bitwise and logical ops -----------------------------------------------------------------------------------------
def _bitwise(name, np_fn):
    def fn(input, other):
        if not isinstance(input, Tensor):
            check_tensor(name, "other", other, 2)
            return fn(as_tensor(input, device=other.device), other)
        check_tensor(name, "input", input)
        o = other if isinstance(other, Tensor) else None
        for t in (input, o):
            if t is not None and t._data.dtype.kind not in "biu":
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{t.dtype.word}'")
        if isinstance(other, float):
            raise RuntimeError(f"\"{name}_cpu\" not implemented for 'Float'")
        res = np_fn(input, other)
        return res

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Elementwise ``{name}`` of integer or bool tensors (not differentiable); floats raise NotImplementedError."
    )
    return fn


def _bitwise_inplace(name, fn):
    def op(self, other):
        res = fn(self, other)
        self.copy_(res) if res.dtype == self.dtype else self.copy_(res.to(self.dtype))
        return self

    op.__name__ = op.__qualname__ = name + "_"
    op.__doc__ = f"In-place :meth:`{name}`."
    return op


for _name, _fn in (
    ("bitwise_and", lambda a, b: a & b),
    ("bitwise_or", lambda a, b: a | b),
    ("bitwise_xor", lambda a, b: a ^ b),
):
    _f = _bitwise(_name, _fn)
    public(_name)(_f)
    public(_name + "_", function=False)(_bitwise_inplace(_name, _f))


@public("bitwise_not")
def bitwise_not(input):
    """Elementwise not of an integer or bool tensor (``~t``)."""
    check_tensor("bitwise_not", "input", input)
    if input._data.dtype.kind not in "biu":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{input.dtype.word}'")
    return ~input


@public("bitwise_not_", function=False)
def bitwise_not_(self):
    """In-place :meth:`bitwise_not`."""
    return self.copy_(bitwise_not(self))


@public("logical_xor")
def logical_xor(input, other):
    """Elementwise exclusive or of the truth values, a bool tensor.

    Raises
    ------
    TypeError
        A number as ``other`` ("logical_xor(): argument 'other' (position 2) must be Tensor, not int").
    """
    check_tensor("logical_xor", "input", input)
    check_tensor("logical_xor", "other", other, 2)
    return input.bool() ^ other.bool()


def _logical_inplace(name, fn):
    def op(self, *args):
        return self.copy_(fn(self, *args).to(self.dtype))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In-place ``{name[:-1]}``: the truth values written in this tensor's dtype (1/0)."
    return op


public("logical_and_", function=False)(_logical_inplace("logical_and_", lambda a, b: a.logical_and(b)))
public("logical_or_", function=False)(_logical_inplace("logical_or_", lambda a, b: a.logical_or(b)))
public("logical_xor_", function=False)(_logical_inplace("logical_xor_", lambda a, b: logical_xor(a, b)))
public("logical_not_", function=False)(_logical_inplace("logical_not_", lambda a: a.logical_not()))


# -- shapes: broadcast, ravel, tile, unflatten, atleast_*, stacks, splits --------------------------------------------
@public("broadcast_to")
def broadcast_to(input, *size):
    """``input.expand(size)`` (``ExpandBackward0``): a view, PyTorch's expand errors."""
    check_tensor("broadcast_to", "input", input)
    return input.expand(*size)


@public("broadcast_shapes", method=False)
def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to, a :class:`Size` (PyTorch's RuntimeError when they do not)."""
    norm = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    n = max((len(s) for s in norm), default=0)
    out = [1] * n
    for k, s in enumerate(norm):
        for i in range(1, len(s) + 1):
            v = s[-i]
            if out[-i] == 1:
                out[-i] = v
            elif v != 1 and v != out[-i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {v} at -{i}! Mismatching argument at index {k} "
                    f"had {s}; but expected shape should be broadcastable to {out}"
                )
    return Size(out)


@public("broadcast_tensors", method=False)
def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (views, ``ExpandBackward0``), a tuple."""
    shape = _broadcast_shapes(*[tuple(t.shape) for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


@public("ravel")
def ravel(input):
    """``input.contiguous().view(-1)``: a view of a contiguous tensor, else a copy (``CloneBackward0``) viewed."""
    check_tensor("ravel", "input", input)
    return input.contiguous().view(-1)


@public("tile")
def tile(input, dims):
    """``input.repeat(dims)`` with ``dims`` padded with leading ones to ``input.dim()`` (``RepeatBackward0``)."""
    check_tensor("tile", "input", input)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(dims)


@public("sum_to_size", function=False)
def sum_to_size(self, *size):
    """Sum this tensor down to ``size``, which it must expand from (``SumBackward1``).

    Raises
    ------
    RuntimeError
        "size {[2, 3]} is not expandable to size {[4, 3]}."
    """
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == 1 or s == shape[lead + i] for i, s in enumerate(size))
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.view(size) if lead else out


def _atleast(n, tensors, name):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    items = [tensors[0]] if single else list(tensors[0] if len(tensors) == 1 else tensors)
    out = []
    for t in items:
        check_tensor(name, "input", t)
        d = t.dim()
        if d >= n:
            out.append(t)
        elif d == 0:
            out.append(t.reshape((1,) * n))
        elif n == 2:
            out.append(t.unsqueeze(0))
        elif d == 1:
            out.append(t.unsqueeze(0).unsqueeze(-1))
        else:
            out.append(t.unsqueeze(-1))
    return out[0] if single else tuple(out)


@public("atleast_1d", method=False)
def atleast_1d(*tensors):
    """Each tensor with at least 1 dimension (a 0-d one reshaped to ``(1,)``); a tuple for several."""
    return _atleast(1, tensors, "atleast_1d")


@public("atleast_2d", method=False)
def atleast_2d(*tensors):
    """Each tensor with at least 2 dimensions (``(n,)`` becomes ``(1, n)``)."""
    return _atleast(2, tensors, "atleast_2d")


@public("atleast_3d", method=False)
def atleast_3d(*tensors):
    """Each tensor with at least 3 dimensions (``(n,)`` becomes ``(1, n, 1)``, ``(m, n)`` ``(m, n, 1)``)."""
    return _atleast(3, tensors, "atleast_3d")


def _cat(tensors, dim):
    return cat(list(tensors), dim)


@public("hstack", method=False)
def hstack(tensors):
    """Concatenate horizontally: along dim 0 for 1-d tensors, dim 1 otherwise (``CatBackward0``)."""
    ts = atleast_1d(*tensors) if len(tensors) != 1 else (atleast_1d(tensors[0]),)
    return _cat(ts, 0 if ts[0].dim() == 1 else 1)


@public("vstack", "row_stack", method=False)
def vstack(tensors):
    """Concatenate vertically, rows after rows (1-d tensors become rows) (``CatBackward0``)."""
    ts = atleast_2d(*tensors) if len(tensors) != 1 else (atleast_2d(tensors[0]),)
    return _cat(ts, 0)


@public("dstack", method=False)
def dstack(tensors):
    """Concatenate along the third dimension (``atleast_3d`` first)."""
    ts = atleast_3d(*tensors) if len(tensors) != 1 else (atleast_3d(tensors[0]),)
    return _cat(ts, 2)


@public("column_stack", method=False)
def column_stack(tensors):
    """Stack as the columns of a matrix: 0-d and 1-d tensors become columns ``(n, 1)``, then ``cat`` along 1."""
    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _cat(cols, 1)


@public("meshgrid", method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-d tensors: each viewed along its own axis and expanded (``ExpandBackward0``).

    ``indexing="ij"`` (the default, with PyTorch's warning that it will be required) or ``"xy"`` (the first two
    axes swapped, as NumPy's default).

    Raises
    ------
    RuntimeError
        "torch.meshgrid: indexing must be one of \\"xy\\" or \\"ij\\", but received: foo".
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:  # "xy": the grid of (y, x, ...), with the first two outputs swapped back
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    n = len(ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * n
        view[i] = -1
        grids.append(t.view(tuple(view)).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@public("tensor_split")
def tensor_split(input, indices_or_sections, dim=0):
    """Split into ``n`` nearly equal parts (the first ``size % n`` one longer) or at the given indices, as views
    along ``dim`` (``SliceBackward0``); a tuple.

    Raises
    ------
    RuntimeError
        "number of sections must be larger than 0, got 0".
    """
    check_tensor("tensor_split", "input", input)
    d = _dim(dim, input.dim())
    n = input.shape[d]
    if isinstance(indices_or_sections, Tensor) and indices_or_sections.dim() == 0:
        indices_or_sections = int(indices_or_sections)
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        base, extra = divmod(n, k)
        bounds, start = [], 0
        for i in range(k):
            size = base + (1 if i < extra else 0)
            bounds.append((start, start + size))
            start += size
    else:
        idx = [int(i) for i in indices_or_sections]
        edges = [0] + idx + [n]
        bounds = [(min(max(a, 0), n), min(max(b, 0), n)) for a, b in zip(edges[:-1], edges[1:])]
    return tuple(input.narrow(d, a, max(b - a, 0)) if b > a else input.narrow(d, a, 0) for a, b in bounds)


def _split_n(name, dim):
    def fn(input, indices_or_sections):
        check_tensor(name, "input", input)
        need = {"hsplit": 1, "vsplit": 2, "dsplit": 3}[name]
        if input.dim() < need:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                f"{input.dim()} dimensions!"
            )
        d = 0 if name == "hsplit" and input.dim() == 1 else dim
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                f"{input.shape[d]} is not divisible by the split_size {indices_or_sections}!"
            )
        return tensor_split(input, indices_or_sections, d)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``tensor_split`` along dim {dim} into equal parts or at indices (PyTorch's {name})."
    return fn


public("hsplit")(_split_n("hsplit", 1))
public("vsplit")(_split_n("vsplit", 0))
public("dsplit")(_split_n("dsplit", 2))


@public("diagflat")
def diagflat(input, offset=0):
    """A 2-d tensor with the flattened ``input`` on its ``offset``-th diagonal (``DiagEmbedBackward0``)."""
    check_tensor("diagflat", "input", input)
    return diag_embed(input.reshape(-1), offset)


@public("take_along_dim")
def take_along_dim(input, indices, dim=None):
    """The elements of ``input`` at ``indices`` along ``dim``, both broadcast first (``GatherBackward0`` over
    ``ExpandBackward0``); without ``dim``, of the flattened input."""
    check_tensor("take_along_dim", "input", input)
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    d = _dim(dim, input.dim())
    in_sizes, idx_sizes = list(input.shape), list(indices.shape)
    in_sizes[d] = indices.shape[d]
    idx_shape = _broadcast_shapes(tuple(in_sizes), tuple(indices.shape))
    idx_sizes[d] = input.shape[d]
    in_shape = _broadcast_shapes(tuple(idx_sizes), tuple(input.shape))
    return input.expand(in_shape).gather(d, indices.expand(idx_shape))


@public("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (each slice along ``dim``) ``repeats`` times: a number (``unsqueeze``, ``expand``,
    ``clone``, ``flatten`` as PyTorch composes it) or a tensor of counts (``index_select``).  With ``input`` an
    int64 tensor and no ``repeats``, the indices ``0, 0, 1, ...`` each repeated ``input[i]`` times."""
    if repeats is None:
        counts = input.detach().cpu().numpy()
        return tensor(np.repeat(np.arange(counts.size), counts), device=input.device)
    check_tensor("repeat_interleave", "input", input)
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    d = _dim(dim, input.dim())
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.dim() <= 1:
        repeats = int(repeats)
    if isinstance(repeats, int):
        shape = list(input.shape)
        expanded = list(shape)
        expanded.insert(d + 1, repeats)
        out = input.unsqueeze(d + 1).expand(tuple(expanded)).clone()
        shape[d] *= repeats
        return out.reshape(tuple(shape))
    counts = repeats.detach().cpu().numpy()
    if counts.shape[0] != input.shape[d]:
        raise RuntimeError("repeats must have the same size as input along dim")
    index = tensor(np.repeat(np.arange(counts.size), counts), device=input.device)
    return input.index_select(d, index)


@public("split_with_sizes")
def split_with_sizes(input, split_sizes, dim=0):
    """Views of ``input`` of the given sizes along ``dim`` (``SplitWithSizesBackward0``); a tuple."""
    check_tensor("split_with_sizes", "input", input)
    return input.split(list(split_sizes), dim)


# -- selection and comparison without gradient -----------------------------------------------------------------------
@public("nonzero")
def nonzero(input, *, as_tuple=False):
    """The indices of the non-zero elements: an int64 ``(n, input.dim())`` tensor, or with ``as_tuple`` one int64
    tensor per dimension (not differentiable)."""
    check_tensor("nonzero", "input", input)
    arr = _device.to_host(input._data)
    idx = np.nonzero(arr) if arr.ndim else np.nonzero(arr.reshape(1))
    if as_tuple:
        if not arr.ndim:
            return (tensor(idx[0].astype(np.int64), device=input.device),)
        return tuple(tensor(i.astype(np.int64), device=input.device) for i in idx)
    stacked = np.stack(idx, axis=1) if arr.ndim else np.zeros((len(idx[0]), 0), np.int64)
    return _finish(stacked.astype(np.int64), None, input.device, False)


@public("argwhere")
def argwhere(input):
    """``nonzero(input)``: the indices of the non-zero elements, ``(n, input.dim())`` int64."""
    check_tensor("argwhere", "input", input)
    return nonzero(input)


@public("count_nonzero")
def count_nonzero(input, dim=None):
    """How many elements are not zero: all, or along ``dim`` (an int or a tuple); int64, not differentiable."""
    check_tensor("count_nonzero", "input", input)
    arr = _device.to_host(input._data) != 0
    if dim is None:
        out = np.asarray(arr.sum(), dtype=np.int64)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        out = arr.sum(axis=tuple(_dim(d, input.dim()) for d in dims)).astype(np.int64)
    return _finish(np.asarray(out), None, input.device, False)


@public("isclose")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (infinities equal only to themselves; NaN equal
    to NaN with ``equal_nan``), a bool tensor.

    Raises
    ------
    RuntimeError
        "isclose(): input and other must have the same dtype" ...
    """
    check_tensor("isclose", "input", input)
    check_tensor("isclose", "other", other, 2)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype.word} did not match {other.dtype.word}")
    a, b = _device.to_host(input._data), _device.to_host(other._data)
    return _finish(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan), None, input.device, False)


# -- factories ---------------------------------------------------------------------------------------------------------
@public("logspace", method=False)
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)`` (default dtype float32)."""
    lin = linspace(start, end, steps, dtype=_dtype.float64)
    arr = np.power(float(base), _device.to_host(lin._data))
    d = dtype if dtype is not None else _dtype.get_default_dtype()
    return _finish(arr.astype(d.np), None, device, requires_grad)


@public("range", method=False)
def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated (with PyTorch's warning): the values from ``start`` to ``end`` *inclusive* by ``step``, in the
    default float dtype; use :func:`arange`."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
        "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    d = dtype if dtype is not None else _dtype.get_default_dtype()
    arr = start + np.arange(max(n, 0), dtype=np.float64) * step
    return _finish(arr.astype(d.np), None, device, requires_grad)


@public("scalar_tensor", method=False)
def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor of ``s`` (default dtype float32, whatever the number's type)."""
    d = dtype if dtype is not None else _dtype.get_default_dtype()
    return _finish(np.asarray(s, dtype=d.np), None, device, requires_grad)


@public("asarray", method=False)
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing memory when it can (a tensor, or a NumPy array on cpu), copying when asked
    (``copy=True``) or needed."""
    if copy:
        if isinstance(obj, Tensor):
            out = obj.detach().clone()
            out = out.to(device=device, dtype=dtype) if (device or dtype) else out
        else:
            out = tensor(obj, dtype=dtype, device=device)
    else:
        out = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


@public("rand_like", method=False)
def rand_like(input, *, dtype=None, device=None, requires_grad=False, generator=None):
    """Uniform samples in [0, 1) of ``input``'s shape (and dtype and device unless given)."""
    check_tensor("rand_like", "input", input)
    return rand(
        tuple(input.shape), generator=generator, dtype=dtype or input.dtype, device=device or input.device,
        requires_grad=requires_grad,
    )  # fmt: skip


@public("randn_like", method=False)
def randn_like(input, *, dtype=None, device=None, requires_grad=False, generator=None):
    """Standard-normal samples of ``input``'s shape (and dtype and device unless given)."""
    check_tensor("randn_like", "input", input)
    return randn(
        tuple(input.shape), generator=generator, dtype=dtype or input.dtype, device=device or input.device,
        requires_grad=requires_grad,
    )  # fmt: skip


@public("randint_like", method=False)
def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, generator=None):
    """Integers in ``[low, high)`` of ``input``'s shape (and dtype and device unless given)."""
    check_tensor("randint_like", "input", input)
    if high is None:
        low, high = 0, low
    return randint(
        low, high, tuple(input.shape), generator=generator, dtype=dtype or input.dtype,
        device=device or input.device, requires_grad=requires_grad,
    )  # fmt: skip


def _no_grad_draw(name, *tensors):
    if any(isinstance(t, Tensor) and t.requires_grad for t in tensors):
        raise NotImplementedError(
            f"leafkit does not differentiate torch.{name} (a random draw): pass parameters that do not require grad"
        )


@public("normal", method=False)
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Normal samples: ``normal(mean_tensor, std_tensor)`` (broadcast), ``normal(mean, std_tensor)``,
    ``normal(mean_tensor, std=1.0)``, or ``normal(mean, std, size)`` (numbers).  Values from leafkit's generator.

    Raises
    ------
    RuntimeError
        "normal expects std >= 0.0, but found std -1".
    NotImplementedError
        For a mean or std that requires grad (leafkit does not differentiate the draw).
    """
    _no_grad_draw("normal", mean, std)
    rng = _rng(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = _device.to_host(mean._data) if isinstance(mean, Tensor) else mean
        s = _device.to_host(std._data) if isinstance(std, Tensor) else std
        if np.any(np.asarray(s) < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        like = mean if isinstance(mean, Tensor) else std
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        arr = (rng.standard_normal(shape) * s + m).astype(like._data.dtype)
        return _finish(arr, None, like.device, False)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - missing size")
    d = dtype if dtype is not None else _dtype.get_default_dtype()
    shape = (size,) if isinstance(size, int) else tuple(size)
    arr = (rng.standard_normal(shape) * std + mean).astype(d.np)
    return _finish(arr, None, device, requires_grad)


@public("bernoulli")
def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with probability ``input`` (or ``p``), in ``input``'s dtype; not differentiable in leafkit
    (PyTorch records a node whose gradient is zero).

    Raises
    ------
    RuntimeError
        "Expected p_in >= 0 && p_in <= 1 to be true, but got false." for probabilities outside [0, 1].
    """
    check_tensor("bernoulli", "input", input)
    probs = _device.to_host(input._data) if p is None else np.full(tuple(input.shape), float(p))
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If "
            "so, please report an enhancement request to PyTorch.)"
        )
    arr = (_rng(generator).random(probs.shape) < probs).astype(input._data.dtype)
    return _finish(arr, None, input.device, False)


@public("bernoulli_", function=False)
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 samples, 1 with probability ``p`` (a number or a tensor), in place."""
    probs = p if isinstance(p, Tensor) else None
    drawn = bernoulli(probs.expand(self.shape) if probs is not None else self, None if probs is not None else p,
                      generator=generator)  # fmt: skip
    return self.copy_(drawn.to(self.dtype))


@public("multinomial", function=False)
def multinomial_method(self, num_samples, replacement=False, *, generator=None):
    """:func:`leafkit.multinomial` on this tensor's weights."""
    return _multinomial(self, num_samples, replacement, generator=generator)


@public("multinomial", method=False)
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categorical distributions in the rows of ``input`` (see :mod:`leafkit._sampling`)."""
    return _multinomial(input, num_samples, replacement, generator=generator, out=out)


# -- Python callables on elements ------------------------------------------------------------------------------------
@public("apply_", function=False)
def apply_(self, callable):
    """Replace each element by ``callable(element)``, in place (cpu tensors only, as in PyTorch; slow).

    Raises
    ------
    TypeError
        "apply_ is only implemented on CPU tensors" for a cuda tensor.
    """
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    arr = self._data
    flat = [callable(v) for v in arr.reshape(-1).tolist()]
    return self.copy_(tensor(np.asarray(flat, dtype=arr.dtype).reshape(arr.shape)))


@public("map_", function=False)
def map_(self, other, callable):
    """Replace each element ``a`` by ``callable(a, b)`` with ``b`` the matching element of ``other`` (broadcast),
    in place (cpu tensors only)."""
    if self.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    a = self._data
    b = np.broadcast_to(_device.to_host(other._data), a.shape)
    flat = [callable(x, y) for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())]
    return self.copy_(tensor(np.asarray(flat, dtype=a.dtype).reshape(a.shape)))


@public("unravel_index", method=False)
def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of each flat index: a tuple of int64 tensors of ``indices``' shape.

    Raises
    ------
    TypeError
        "expected 'indices' to be integer dtype, but got torch.float32"; an ``indices`` that is no tensor.
    RuntimeError
        "'indices' must be in range [-6, 5], but got ... (which is out of bounds)".
    """
    if not isinstance(indices, Tensor):
        raise AttributeError(f"'{type(indices).__name__}' object has no attribute 'is_complex'")
    if indices._data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    n = math.prod(shape)
    arr = _device.to_host(indices._data).astype(np.int64)
    if arr.size and (arr.min() < -n or arr.max() >= n):
        raise RuntimeError(f"'indices' must be in range [{-n}, {n - 1}]")
    coords = np.unravel_index(np.where(arr < 0, arr + n, arr), shape)
    return tuple(_finish(np.asarray(c, dtype=np.int64), None, indices.device, False) for c in coords)
