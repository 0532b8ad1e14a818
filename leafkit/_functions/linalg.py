"""Matrix products: ``mm``, ``mv``, ``dot``, ``bmm``, ``addmm``, and ``matmul`` built from them as PyTorch builds it.

``matmul`` is not an op of its own, in leafkit as in PyTorch: it folds,
expands and reshapes its operands and calls ``dot``/``mv``/``mm``/``bmm``
(``at::native::_matmul_impl``), so its graph has PyTorch's nodes
(``UnsafeViewBackward0`` over ``BmmBackward0`` over ``ExpandBackward0`` for
batched operands) and broadcast batch dimensions are summed back by
``ExpandBackward0``'s own derivative.
"""

from __future__ import annotations

from .. import _dtype
from .._tensor import Tensor
from ._base import as_array, broadcast_check, check_tensor
from ._batch_rules import declare, logical_front
from ._batched import batch_size, wrap
from ._registry import apply, defop, public
from .shape import diagonal, movedim, squeeze_dim_spec, squeeze_inplace_spec, unsafe_view_spec


def _no_bool(kernel, a):
    """PyTorch has no bool kernels for matrix products (NotImplementedError, "dot" not implemented for 'Bool')."""
    if a.dtype.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _check_mm(self, mat2):
    """``mm``'s checks, on arrays or anything with their ``ndim``, ``shape`` and ``dtype``."""
    if self.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_dtype.ctype(self.dtype)} != "
            f"{_dtype.ctype(mat2.dtype)}"
        )
    _no_bool("addmm_impl_cpu_", self)


def _mm(self, mat2):
    _check_mm(self, mat2)
    return self @ mat2


def _check_mv(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec.ndim}, {self.ndim}, {vec.ndim}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})"
        )
    if self.dtype != vec.dtype:
        w = _dtype.word
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {w(vec.dtype)}, {w(self.dtype)}, and {w(vec.dtype)}"
        )
    _no_bool("addmv_impl_cpu", self)


def _mv(self, vec):
    _check_mv(self, vec)
    return as_array(self @ vec)


def _check_dot(self, tensor):
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.shape != tensor.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src [{tensor.shape[0]}] "
            f"to have the same number of elements, but got {self.shape[0]} and {tensor.shape[0]} "
            "elements respectively"
        )
    if self.dtype != tensor.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {_dtype.word(self.dtype)} and "
            f"{_dtype.word(tensor.dtype)}"
        )
    _no_bool("dot", self)


def _dot(self, tensor):
    _check_dot(self, tensor)
    return as_array(self @ tensor)


def _check_bmm(self, mat2):
    if self.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if self.ndim != 3 else "batch2 must be a 3D tensor")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.word(self.dtype)} but found {_dtype.word(mat2.dtype)}")
    _no_bool("bmm", self)


def _bmm(self, mat2):
    _check_bmm(self, mat2)
    if self.shape[2] == 1 and self.dtype.kind == "f":  # batched outer products: NumPy's matmul is slow for k=1
        return self * mat2
    return self @ mat2


class _Shape:
    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape


def _check_addmm(self, mat1, mat2):
    _check_mm(mat1, mat2)
    if self.dtype != mat1.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_dtype.word(mat1.dtype)} and {_dtype.word(mat2.dtype)}"
            if mat1.dtype != mat2.dtype
            else f"self and mat2 must have the same dtype, but got {_dtype.word(self.dtype)} and "
            f"{_dtype.word(mat2.dtype)}"
        )
    broadcast_check(_Shape((mat1.shape[0], mat2.shape[1])), self)


def _addmm(self, mat1, mat2, beta=1, alpha=1):
    s1, s2, dt = mat1.shape, mat2.shape, mat1.dtype
    if not (  # nn.Linear's case, tested at once: matrices that multiply, one floating dtype, a bias row
        len(s1) == 2
        and len(s2) == 2
        and s1[1] == s2[0]
        and dt.kind == "f"
        and mat2.dtype == dt
        and self.dtype == dt
        and self.shape == s2[1:]
    ):
        _check_addmm(self, mat1, mat2)
    out = mat1 @ mat2
    if alpha != 1:
        out = out * alpha
    out += self if beta == 1 else beta * self
    return out


def _column_major(sizes, strides):
    return strides[0] == 1 and strides[1] == sizes[0]


def _mm_mat1_backward(F, grad, mat2, sizes, strides, alpha=1):
    """PyTorch's mm_mat1_backward: a column-major (transposed) input gets its gradient as a transpose."""
    if _column_major(sizes, strides):
        return _maybe_multiply(F, F.t(F.mm(mat2, F.t(grad))), alpha)
    return _maybe_multiply(F, F.mm(grad, F.t(mat2)), alpha)


def _mm_mat2_backward(F, grad, mat1, sizes, strides, alpha=1):
    if _column_major(sizes, strides):
        return _maybe_multiply(F, F.t(F.mm(F.t(grad), mat1)), alpha)
    return _maybe_multiply(F, F.mm(F.t(mat1), grad), alpha)


def _maybe_multiply(F, t, s):
    return t if s == 1 else F.mul_scalar(t, s)


mm_spec = defop(
    "mm",
    _mm,
    inputs=("self", "mat2"),
    self=lambda F, grad, mat2, self_sym_sizes, self_sym_strides: _mm_mat1_backward(
        F, grad, mat2, self_sym_sizes, self_sym_strides
    ),
    mat2=lambda F, grad, self, mat2_sym_sizes, mat2_sym_strides: _mm_mat2_backward(
        F, grad, self, mat2_sym_sizes, mat2_sym_strides
    ),
)
mv_spec = defop(
    "mv",
    _mv,
    inputs=("self", "vec"),
    self=lambda F, grad, vec: F.reshape(grad, (-1, 1)) * vec,
    vec=lambda F, grad, self: F.mv(F.t(self), grad),
)
dot_spec = defop(
    "dot",
    _dot,
    inputs=("self", "tensor"),
    self=lambda F, grad, tensor: grad * tensor,
    tensor=lambda F, grad, self: grad * self,
)
bmm_spec = defop(
    "bmm",
    _bmm,
    inputs=("self", "mat2"),
    self=lambda F, grad, mat2: F.bmm(grad, F.transpose(mat2, 1, 2)),
    mat2=lambda F, grad, self: F.bmm(F.transpose(self, 1, 2), grad),
)


addmm_spec = defop(
    "addmm",
    _addmm,
    inputs=("self", "mat1", "mat2"),
    self=lambda F, grad, beta: _maybe_multiply(F, grad, beta),
    mat1=lambda F, grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha: _mm_mat1_backward(
        F, grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha
    ),
    mat2=lambda F, grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha: _mm_mat2_backward(
        F, grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha
    ),
)


@public("mm")
def mm(input, mat2):
    """Matrix product of two 2-D tensors, ``(n, m) @ (m, p) -> (n, p)`` (``MmBackward0``)."""
    check_tensor("mm", "input", input)
    check_tensor("mm", "mat2", mat2, 2)
    return apply(mm_spec, (input, mat2))


@public("mv")
def mv(input, vec):
    """Matrix-vector product ``(n, m) @ (m,) -> (n,)`` (``MvBackward0``)."""
    check_tensor("mv", "input", input)
    return apply(mv_spec, (input, vec))


@public("dot")
def dot(input, tensor):
    """Dot product of two 1-D tensors (``DotBackward0``)."""
    check_tensor("dot", "input", input)
    return apply(dot_spec, (input, tensor))


@public("bmm")
def bmm(input, mat2):
    """Batched matrix product ``(B, n, m) @ (B, m, p) -> (B, n, p)`` (``BmmBackward0``)."""
    check_tensor("bmm", "input", input)
    return apply(bmm_spec, (input, mat2))


@public("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1``/``mat2`` (``AddmmBackward0``; ``nn.Linear`` on a
    batch)."""
    check_tensor("addmm", "input", input)
    return apply(addmm_spec, (input, mat1, mat2, beta, alpha))


# -- matmul: PyTorch's composition -------------------------------------------------------------------------------
def _should_fold(t1, t2):
    """PyTorch's ``should_fold``: fold the batch of the larger operand into a matrix and use mm/mv."""
    t1_larger = t1.ndim >= t2.ndim
    big = t1 if t1_larger else t2.mT
    dim_small = t2.ndim if t1_larger else t1.ndim
    if not (big.ndim >= 3 and dim_small <= 2):
        return False
    if (t2 if t1_larger else t1).requires_grad:
        return True
    if t1.ndim == 2:
        return False
    if big.numel() == 0:
        return True
    shape, strides = big.shape, big.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def _broadcast_batch(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return tuple(out)


@public("matmul")
def matmul(input, other):
    """Matrix product with PyTorch's broadcasting rules and graph.

    1-D·1-D is ``dot``, 2-D·1-D ``mv``, 1-D·2-D ``unsqueeze``/``mm``/``squeeze``
    (``SqueezeBackward4``), 2-D·2-D ``mm``.  With more dimensions the batch
    dimensions broadcast: the larger operand is folded into a matrix when it
    can be (``mm``/``mv``, then ``UnsafeViewBackward0``), otherwise both are
    expanded to the common batch shape and multiplied with ``bmm``.  The
    gradient of a broadcast operand is summed over the dimensions it was
    expanded along.

    Raises
    ------
    RuntimeError
        For 0-d operands ("both arguments to matmul need to be at least 1D"),
        mismatched inner sizes (PyTorch's message names both shapes), and
        batch shapes that do not broadcast.
    """
    check_tensor("matmul", "input", input)
    check_tensor("matmul", "other", other, 2)
    t1, t2 = input, other
    d1, d2 = t1._data.ndim, t2._data.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(t1, t2)
    if d1 == 2 and d2 == 1:
        return mv(t1, t2)
    if d1 == 1 and d2 == 2:  # mm raises "mat1 and mat2 shapes cannot be multiplied (1x2 and 3x4)"
        return apply(squeeze_inplace_spec, (mm(t1.unsqueeze(0), t2), 0))
    if d1 == 2 and d2 == 2:
        return mm(t1, t2)
    if d1 == 3 and d2 == 3 and (t1._data.shape[0] == 1) != (t2._data.shape[0] == 1):
        # PyTorch 2.13: a batch of one that requires grad, against a real batch, drops its batch dimension
        # first (so its gradient is not expanded and summed back)
        if t1._data.shape[0] == 1 and t1._requires_grad:
            return matmul(apply(squeeze_dim_spec, (t1, 0)), t2)
        if t2._data.shape[0] == 1 and t2._requires_grad:
            return matmul(t1, apply(squeeze_dim_spec, (t2, 0)))
    if _should_fold(t1, t2):
        transpose = d2 > d1
        a = t2.mT if transpose else t1
        b = (t1.t() if d1 == 2 else t1) if transpose else t2
        sizes = a._data.shape
        out_shape = list(sizes[:-1])
        folded = 1
        for s in out_shape:
            folded *= s
        if b._data.ndim == 2:
            out_shape.append(b._data.shape[1])
        a_folded = a.reshape(folded, sizes[-1])
        if sizes[-1] != b._data.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({folded}x{sizes[-1]} and "
                + (f"{b._data.shape[0]}x{b._data.shape[1]})" if b._data.ndim == 2 else f"{b._data.shape[0]}x1)")
            )
        if b._data.ndim == 2:
            out = apply(unsafe_view_spec, (mm(a_folded, b), tuple(out_shape)))
            return out.mT.contiguous() if transpose else out
        return apply(unsafe_view_spec, (mv(a_folded, b), tuple(out_shape)))
    # batched: expand both to the common batch shape, then bmm
    s1, s2 = t1._data.shape, t2._data.shape
    n = s1[-2] if d1 > 1 else 1
    m1 = s1[-1]
    m2 = s2[-2] if d2 > 1 else s2[0]
    p = s2[-1] if d2 > 1 else 1
    batch = _broadcast_batch(s1[: max(d1 - 2, 0)], s2[: max(d2 - 2, 0)])
    bprod = 1
    for s in batch:
        bprod *= s
    e1 = t1.expand(*batch, n, m1).reshape(bprod, n, m1)
    if d2 == 1:
        e2 = t2.expand(*batch, m2).reshape(bprod, m2, p)
    else:
        e2 = t2.expand(*batch, m2, p).reshape(bprod, m2, p)
    out_shape = list(batch)
    if d1 > 1:
        out_shape.append(n)
    if d2 > 1:
        out_shape.append(p)
    return apply(unsafe_view_spec, (bmm(e1, e2), tuple(out_shape)))


def _matmul_op(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


def _rmatmul_op(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


Tensor.__matmul__ = _matmul_op
Tensor.__rmatmul__ = _rmatmul_op


@public("outer", "ger")
def outer(input, vec2):
    """Outer product of two 1-D tensors: ``input.reshape(-1, 1) * vec2`` (``MulBackward0`` over
    ``ViewBackward0``), as PyTorch computes it."""
    check_tensor("outer", "input", input)
    return input.reshape(input._data.shape[0], 1) * vec2


# -- einsum: PyTorch's composition (at::einsum and sumproduct_pair) -----------------------------------------------
_ELLIPSIS = 52  # the subscripts are A-Z (0-25) and a-z (26-51)


def _subscript(c):
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _label(s):
    return chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)


def _is_label(c):
    return c.isascii() and c.isalpha()


def _sublist_equation(args):
    """``einsum(op1, [0, 1], op2, [1, 2], [0, 2])``: PyTorch's sublist format as an equation and its operands."""

    def sub(n):
        if n is Ellipsis:
            return "..."
        if 0 <= n < 26:
            return chr(ord("A") + n)
        if 26 <= n < 52:
            return chr(ord("a") + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")

    equation = ",".join("".join(sub(s) for s in sl) for sl in args[1::2])
    if len(args) % 2 == 1:
        return equation + "->" + "".join(sub(s) for s in args[-1]), args[:-1:2]
    return equation, args[::2]


def _sumproduct_pair(left, right, sum_dims):
    """PyTorch's sumproduct_pair (keepdim): multiply two aligned operands and sum ``sum_dims`` with one ``bmm``
    (permute, reshape, bmm, view, permute); with nothing to sum, a plain ``mul``."""
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.dim()):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = (
        [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims) + [right.shape[d] for d in ro]
    )
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = i
    left = left.permute(*(lro + lo + list(sum_dims) + ro)).reshape(lro_size, lo_size, sum_size)
    right = right.permute(*(lro + list(sum_dims) + ro + lo)).reshape(lro_size, sum_size, ro_size)
    return bmm(left, right).view(*out_size).permute(*operm)


@public("einsum", method=False)
def einsum(*args):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``, ``"ii->i"`` a diagonal, ``"i,i->"`` a dot
    product, ``"bij,bjk->bik"`` a batched product; ``...`` stands for broadcast dimensions, and without ``->`` the
    output is the ellipsis and the subscripts seen once, in alphabetical order (capitals first).

    Composed exactly as PyTorch composes it (no node of its own): repeated subscripts become ``diagonal`` +
    ``movedim``, operands are ``unsqueeze``-d and ``permute``-d into one order, each pair is contracted with one
    ``bmm`` (``sumproduct_pair``), left to right, and the result is a ``view``; so the graph has PyTorch's nodes
    (``ViewBackward0`` over ``PermuteBackward0`` over ``ViewBackward0`` over ``BmmBackward0`` for a matrix
    product) and the gradients follow. Operands may also be given as one list, or in PyTorch's sublist format.
    Operands of different dtypes raise RuntimeError (as ``bmm`` does); so do malformed equations, with PyTorch's
    messages ("einsum(): subscript j has size 2 for operand 1 which does not broadcast with previously seen size
    3").
    """
    equation, operands = _einsum_operands(args)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _operand_subscripts(lhs, len(operands))
    label_count, ell_num_dim = _count_subscripts(operands, op_labels)
    rhs = None if arrow < 0 else equation[arrow + 2 :]
    order = _subscript_order(rhs, len(lhs), label_count, ell_num_dim)
    ops, dim_counts = _aligned(operands, op_labels, order, ell_num_dim)
    out_num_dim, perm_index = order[2], order[3]
    result = _contract(ops, dim_counts, out_num_dim, perm_index)
    if perm_index - out_num_dim > 0:
        if len(operands) > 1:  # the summed dims now have size 1
            return result.view(*result.shape[:out_num_dim])
        return result.sum(list(range(out_num_dim, perm_index)))
    return result


def _einsum_operands(args):
    """``(equation, operands)`` from einsum's arguments (an equation and tensors, a list of them, or sublists)."""
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least one "
            "operand and its subscripts list"
        )
    if not isinstance(args[0], str):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for t in operands:
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): argument 'tensors' must be tuple of Tensors, not {type(t).__name__}")
    return equation, operands


def _operand_subscripts(lhs, num_ops):
    """The subscripts of each operand (``_ELLIPSIS`` for ``...``), from the left-hand side of the equation."""
    op_labels = [[] for _ in range(num_ops)]
    ell_in_input, cur, i = False, 0, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if ell_in_input:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of any ellipsis")
            i += 2
            op_labels[cur].append(_ELLIPSIS)
            ell_in_input = True
        elif c == ",":
            cur += 1
            if cur >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ell_in_input = False
        elif c != " ":
            if not _is_label(c):
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {i} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            op_labels[cur].append(_subscript(c))
        i += 1
    if cur != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def _count_subscripts(operands, op_labels):
    """``(how often each subscript appears, the number of dimensions the ellipsis covers)``, after checking
    that each operand has as many dimensions as subscripts."""
    label_count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for k, (t, labels) in enumerate(zip(operands, op_labels)):
        ndims, nlabels, has_ell = t.dim(), len(labels), False
        for lab in labels:
            if lab == _ELLIPSIS:
                nlabels -= 1
                has_ell = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[lab] += 1
        if not (nlabels <= ndims if has_ell else nlabels == ndims):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) does not match the "
                f"number of dimensions ({ndims}) for operand {k}" + ("" if has_ell else " and no ellipsis was given")
            )
    return label_count, ell_num_dim


def _subscript_order(rhs, lhs_len, label_count, ell_num_dim):
    """Where each subscript goes: the output's first (from ``rhs``, or implicit when it is None), then the ones
    summed away.  Returns ``(label_perm_index, ell_index, out_num_dim, perm_index)``."""
    label_perm_index = [-1] * _ELLIPSIS
    perm_index = ell_index = 0
    ell_in_output = False
    if rhs is None:
        perm_index, ell_in_output = ell_num_dim, True
        for lab in range(_ELLIPSIS):
            if label_count[lab] == 1:
                label_perm_index[lab] = perm_index
                perm_index += 1
    else:
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            elif c != " ":
                s = _output_subscript(c, lhs_len + 2 + i, label_count, label_perm_index)
                label_perm_index[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for lab in range(_ELLIPSIS):
        if label_count[lab] > 0 and label_perm_index[lab] == -1:
            label_perm_index[lab] = perm_index
            perm_index += 1
    return label_perm_index, ell_index, out_num_dim, perm_index


def _output_subscript(c, index, label_count, label_perm_index):
    """The subscript of the output's character ``c`` (at ``index`` in the equation), checked."""
    if not _is_label(c):
        raise RuntimeError(
            f"einsum(): invalid subscript given at index {index} in the equation string, subscripts must be in [a-zA-Z]"
        )
    s = _subscript(c)
    if not (label_count[s] > 0 and label_perm_index[s] == -1):
        raise RuntimeError(
            f"einsum(): output subscript {c}"
            + (
                " appears more than once in the output"
                if label_perm_index[s] > -1
                else " does not appear in the equation for any input operand"
            )
        )
    return s


def _aligned(operands, op_labels, order, ell_num_dim):
    """Each operand with diagonals taken for repeated subscripts, the missing ones unsqueezed, permuted into one
    order; and, per dimension of that order, how many operands have it (of size other than 1)."""
    label_perm_index, ell_index, _, perm_index = order
    label_size = [1] * _ELLIPSIS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for k, op in enumerate(operands):
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[k]:
            if s == _ELLIPSIS:
                ndim = operands[k].dim() - (len(op_labels[k]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    if op.shape[dim] != 1:
                        if ell_sizes[j] not in (1, op.shape[dim]):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {k}has "
                                f"size {op.shape[dim]} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension"
                            )
                        ell_sizes[j] = op.shape[dim]
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                if op.shape[dim] != 1:
                    if label_size[s] not in (1, op.shape[dim]):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {op.shape[dim]} for operand {k} "
                            f"which does not broadcast with previously seen size {label_size[s]}"
                        )
                    label_size[s] = op.shape[dim]
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:
                prev = permutation[label_perm_index[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {k} but the sizes "
                        f"don't match, {op.shape[dim]} != {op.shape[prev]}"
                    )
                op = movedim(diagonal(op, 0, prev, dim), -1, prev)
        for j, val in enumerate(permutation):
            if val == -1:
                op = op.unsqueeze(dim)
                permutation[j] = dim
                dim += 1
        ops.append(op.permute(*permutation))
    return ops, dim_counts


def _contract(ops, dim_counts, out_num_dim, perm_index):
    """Contract the aligned operands left to right, summing each dimension as soon as no later operand has it."""
    ops = list(ops)
    while len(ops) > 1:
        a, b = ops[0], ops[1]
        del ops[:2]
        sum_dims, a_dims, b_dims = [], [], []
        for dim in range(out_num_dim, perm_index):
            if a.shape[dim] != 1 and b.shape[dim] != 1:
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if a.shape[dim] != 1:
                    a_dims.append(dim)
                    dim_counts[dim] = 0
                elif b.shape[dim] != 1:
                    b_dims.append(dim)
                    dim_counts[dim] = 0
        if a_dims:
            a = a.sum(a_dims, True)
        if b_dims:
            b = b.sum(b_dims, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))
    return ops[0]


# -- vmap: batching rules (leafkit.func.vmap) -------------------------------------------------------------------------
# Each product runs once on the physical tensors, as PyTorch's rules run ``matmul`` on them: a batched operand
# against an unbatched one folds the batch into a matrix dimension (one mm for every sample), two batched operands
# make a bmm.  A wrong shape raises the error of that physical product, with its sizes, as in PyTorch.
def _view(t, shape):
    return t.reshape(shape)


def _check_dims(name, a, b, want_a, want_b):
    if a._data.ndim != want_a or b._data.ndim != want_b:
        raise RuntimeError(
            f"Shape mismatch: Got incorrect dims for {name}(a, b). a has dim {a._data.ndim}and b has dim "
            f"{b._data.ndim}but expected them to have dim {want_a} and dim {want_b}"
        )


def _bmm_message(batch, k, k2):
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: [{batch}, {k2}]."
    )


def _mm_batched(spec, args, level):
    a, b = args
    _check_dims("mm", a, b, 2, 2)
    va, vb = logical_front(a, level), logical_front(b, level)
    n = batch_size(level)
    if vb is None:  # (B, r, k) @ (k, m): one (B*r, k) @ (k, m)
        rows, k = a._data.shape
        return wrap(_view(apply(mm_spec, (_view(va, (n * rows, k)), b)), (n, rows, b._data.shape[1])), 0, level)
    if va is None:  # (r, k) @ (B, k, m): (r, k) @ (k, B*m), the batch in the middle of the result
        k, m = b._data.shape
        if a._data.shape[1] != k:
            raise _bmm_message(n, a._data.shape[1], k)
        flat = _view(vb.permute(1, 0, 2), (k, n * m))
        return wrap(_view(apply(mm_spec, (a, flat)), (a._data.shape[0], n, m)), 1, level)
    return wrap(apply(bmm_spec, (va, vb)), 0, level)


def _mv_batched(spec, args, level):
    a, x = args
    _check_dims("mv", a, x, 2, 1)
    va, vx = logical_front(a, level), logical_front(x, level)
    n = batch_size(level)
    if vx is None:  # (B, r, k) @ (k,)
        rows, k = a._data.shape
        return wrap(_view(apply(mv_spec, (_view(va, (n * rows, k)), x)), (n, rows)), 0, level)
    if va is None:  # (r, k) @ (B, k): (r, k) @ (k, B)
        return wrap(apply(mm_spec, (a, vx.t())), 1, level)
    out = apply(bmm_spec, (va, vx.unsqueeze(2)))
    return wrap(out.squeeze(2), 0, level)


def _dot_batched(spec, args, level):
    a, b = args
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError("Got wrong shapes for dot")
    va, vb = logical_front(a, level), logical_front(b, level)
    if vb is None:
        return wrap(apply(mv_spec, (va, b)), 0, level)
    if va is None:
        return wrap(apply(mm_spec, (a.unsqueeze(0), vb.t())).squeeze(0), 0, level)
    n = batch_size(level)
    return wrap(_view(apply(bmm_spec, (va.unsqueeze(1), vb.unsqueeze(2))), (n,)), 0, level)


def _bmm_batched(spec, args, level):
    a, b = args
    _check_dims("bmm", a, b, 3, 3)
    va, vb = logical_front(a, level), logical_front(b, level)
    n = batch_size(level)
    p, rows, k = a._data.shape
    m = b._data.shape[2]
    if (va is None or vb is None) and k != b._data.shape[1]:
        raise _bmm_message(n * p, k, b._data.shape[1])
    if vb is None:  # (B, p, r, k) @ (p, k, m): (p, B*r, k) @ (p, k, m)
        flat = _view(va.permute(1, 0, 2, 3), (p, n * rows, k))
        return wrap(_view(apply(bmm_spec, (flat, b)), (p, n, rows, m)), 1, level)
    if va is None:  # (p, r, k) @ (B, p, k, m): (p, r, k) @ (p, k, B*m)
        flat = _view(vb.permute(1, 2, 0, 3), (p, k, n * m))
        return wrap(_view(apply(bmm_spec, (a, flat)), (p, rows, n, m)), 2, level)
    out = apply(bmm_spec, (_view(va, (n * p, rows, k)), _view(vb, (n * p, b._data.shape[1], m))))
    return wrap(_view(out, (n, p, rows, m)), 0, level)


def _addmm_batched(spec, args, level):
    """``addmm``: with only ``mat1`` batched (``nn.Linear`` on batched samples) one ``addmm`` for all samples;
    otherwise the product's rule, scaled and added."""
    self, mat1, mat2 = args[:3]
    beta = args[3] if len(args) > 3 else 1
    alpha = args[4] if len(args) > 4 else 1
    v1 = logical_front(mat1, level)
    if v1 is not None and logical_front(self, level) is None and logical_front(mat2, level) is None:
        n = batch_size(level)
        rows, k = mat1._data.shape
        out = apply(spec, (self, _view(v1, (n * rows, k)), mat2, beta, alpha))
        return wrap(_view(out, (n, rows, mat2._data.shape[1])), 0, level)
    _check_addmm(self._data, mat1._data, mat2._data)
    prod = apply(mm_spec, (mat1, mat2))
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # PyTorch ignores self then (nan and inf in it too)
        return prod
    return prod + (self if beta == 1 else self * beta)


declare(_mm_batched, "mm")
declare(_mv_batched, "mv")
declare(_dot_batched, "dot")
declare(_bmm_batched, "bmm")
declare(_addmm_batched, "addmm")
