"""Binary arithmetic: add, sub, mul, div, pow, matmul (and rsub, reciprocal).

Python numbers are inputs too: ``a + 2`` has ``next_functions`` of
``((AccumulateGrad, 0), (None, 0))``, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from ._base import Op, broadcast_check, promote


def _prep(a, b):
    """Promote dtypes and check broadcasting (fast path: two arrays of one dtype and shape)."""
    if type(b) is float and a.dtype.kind == "f":
        return a, b
    if hasattr(b, "dtype") and hasattr(a, "dtype"):
        if a.dtype != b.dtype:
            a, b = promote(a, b)
        if a.shape != b.shape:
            broadcast_check(a, b)
        return a, b
    return promote(a, b)


def _out(x):
    """ufuncs on 0-d arrays give NumPy scalars; keep arrays."""
    return np.asarray(x) if isinstance(x, np.generic) else x


class AddBackward0(Op):
    """``a + alpha * b``."""

    _n_slots = 2

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        a, b = _prep(a, b)
        ctx.alpha = alpha
        return _out(a + b if alpha == 1 else a + alpha * b)

    @staticmethod
    def backward(ctx, g):
        n = ctx.needs_input_grad
        return (g if n[0] else None,
                (g if ctx.alpha == 1 else g * ctx.alpha) if n[1] else None)


class SubBackward0(Op):
    """``a - alpha * b``."""

    _n_slots = 2

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        a, b = _prep(a, b)
        ctx.alpha = alpha
        return _out(a - b if alpha == 1 else a - alpha * b)

    @staticmethod
    def backward(ctx, g):
        n = ctx.needs_input_grad
        return (g if n[0] else None, (-g if ctx.alpha == 1 else g * -ctx.alpha) if n[1] else None)


class RsubBackward1(Op):
    """``number - tensor`` (PyTorch's node for ``2 - a``)."""

    _n_slots = 1

    @staticmethod
    def forward(ctx, a, number):
        a, number = _prep(a, number)
        return _out(number - a)

    @staticmethod
    def backward(ctx, g):
        return -g, None


class MulBackward0(Op):
    """``a * b``."""

    _n_slots = 2
    _names_saved = ("self", "other")

    @staticmethod
    def forward(ctx, a, b):
        a, b = _prep(a, b)
        n = ctx.needs_input_grad
        if n:
            ctx.save_for_backward(a if n[1] else None, b if n[0] and hasattr(b, "shape") else None)
            if n[0] and not hasattr(b, "shape"):
                ctx.scalar = b
        return _out(a * b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        if b is None and n[0]:
            b = ctx.scalar
        return (g * b if n[0] else None, g * a if n[1] else None)


class DivBackward0(Op):
    """``a / b`` (true division: integers give the default float dtype)."""

    _n_slots = 2
    _names_saved = ("self", "other")

    @staticmethod
    def forward(ctx, a, b):
        a, b = _prep(a, b)
        if a.dtype.kind in "biu" and getattr(b, "dtype", np.dtype("i8")).kind in "biu" and not isinstance(b, float):
            from .._dtype import get_default_dtype
            ft = get_default_dtype().np  # true division of integers gives the default float dtype
            a = a.astype(ft)
            b = b.astype(ft) if hasattr(b, "astype") else ft.type(b)
        n = ctx.needs_input_grad
        if n:
            ctx.save_for_backward(a if n[1] else None, b if hasattr(b, "shape") else None)
            if not hasattr(b, "shape"):
                ctx.scalar = b
        with np.errstate(all="ignore"):
            return _out(a / b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        if b is None:
            b = ctx.scalar
        n = ctx.needs_input_grad
        with np.errstate(all="ignore"):
            return (g / b if n[0] else None, -g * (a / b) / b if n[1] else None)


class PowBackward0(Op):
    """``tensor ** number``."""

    _n_slots = 1
    _names_saved = ("self", "exponent")

    @staticmethod
    def forward(ctx, a, exponent):
        if a.dtype.kind == "b":
            raise RuntimeError("\"pow_cpu\" not implemented for 'Bool'")
        if a.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if a.dtype.kind in "biu" and isinstance(exponent, float):
            from .._dtype import get_default_dtype
            a = a.astype(get_default_dtype().np)
        ctx.save_for_backward(a)
        ctx._extra_saved = {"exponent": exponent}
        ctx.exponent = exponent
        if exponent == 2:
            return _out(a * a)
        with np.errstate(all="ignore"):
            return _out(a ** a.dtype.type(exponent) if a.dtype.kind == "f" else a ** exponent)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        p = ctx.exponent
        if p == 0:  # PyTorch: exactly zero, whatever the base
            return g * 0, None
        if p == 2:
            return g * (2 * a), None
        with np.errstate(all="ignore"):
            return g * (p * a ** a.dtype.type(p - 1)), None


def _pow_exponent_grad(g, out, base):
    """d(base**e)/de = base**e * log(base); callers mask base == 0, e >= 0 to 0, as PyTorch does."""
    with np.errstate(all="ignore"):
        return g * out * np.log(base)


class PowBackward1(Op):
    """``tensor ** tensor``."""

    _n_slots = 2
    _names_saved = ("self", "exponent", "result")

    @staticmethod
    def forward(ctx, a, b):
        a, b = _prep(a, b)
        if a.dtype.kind == "b":
            raise RuntimeError("\"pow_cpu\" not implemented for 'Bool'")
        with np.errstate(all="ignore"):
            out = _out(a ** b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        n = ctx.needs_input_grad
        ga = gb = None
        with np.errstate(all="ignore"):
            if n[0]:
                ga = np.where(b == 0, 0, g * b * a ** (b - 1)).astype(g.dtype)
            if n[1]:
                gb = np.where((a == 0) & (b >= 0), 0, _pow_exponent_grad(g, out, a)).astype(g.dtype)
        return ga, gb


class PowBackward2(Op):
    """``number ** tensor``."""

    _n_slots = 2
    _slot_args = (1,)
    _names_saved = ("self", "exponent", "result")

    @staticmethod
    def forward(ctx, base, b):
        b2, base2 = _prep(b, base)
        with np.errstate(all="ignore"):
            out = _out(base2 ** b2)
        ctx.save_for_backward(out, b2)
        ctx.base = base
        return out

    @staticmethod
    def backward(ctx, g):
        out, b = ctx.saved_tensors
        base = np.asarray(ctx.base, dtype=g.dtype)
        with np.errstate(all="ignore"):
            return None, np.where((base == 0) & (b >= 0), 0, _pow_exponent_grad(g, out, base)).astype(g.dtype)


class ReciprocalBackward0(Op):
    """``1 / a``."""

    _names_saved = ("result",)

    @staticmethod
    def forward(ctx, a):
        if a.dtype.kind != "f":
            from .._dtype import get_default_dtype
            a = a.astype(get_default_dtype().np)
        out = _out(1 / a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return -g * out * out


def _mm_check(a, b):
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")


class MmBackward0(Op):
    """Matrix product of two 2-D tensors, ``(n, m) @ (m, p) -> (n, p)``."""

    _names_saved = ("self", "mat2")

    @staticmethod
    def forward(ctx, a, b):
        if a.ndim != 2 or b.ndim != 2:
            raise RuntimeError(f"self must be a matrix" if a.ndim != 2 else "mat2 must be a matrix")
        _mm_check(a, b)
        if a.dtype != b.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_tname(a)} != {_tname(b)}")
        n = ctx.needs_input_grad
        if n:
            ctx.save_for_backward(a if n[1] else None, b if n[0] else None)
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (g @ b.T if n[0] else None, a.T @ g if n[1] else None)


class AddmmBackward0(Op):
    """``bias + a @ b`` for 2-D ``a`` and ``b`` (``nn.Linear`` on a batch)."""

    _names_saved = ("mat1", "mat2")

    @staticmethod
    def forward(ctx, bias, a, b):
        _mm_check(a, b)
        n = ctx.needs_input_grad
        if n:
            ctx.save_for_backward(a if n[2] else None, b if n[1] else None)
        out = a @ b
        broadcast_check(out, bias)
        out += bias
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (g if n[0] else None, g @ b.T if n[1] else None, a.T @ g if n[2] else None)


class MvBackward0(Op):
    """Matrix-vector product ``(n, m) @ (m,) -> (n,)``."""

    _names_saved = ("self", "vec")

    @staticmethod
    def forward(ctx, a, v):
        if a.shape[1] != v.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
                               f"vec ({v.shape[0]})")
        if a.dtype != v.dtype:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_word(v)}, {_word(a)}, and "
                               f"{_word(v)}")
        ctx.save_for_backward(a, v)
        return a @ v

    @staticmethod
    def backward(ctx, g):
        a, v = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (np.multiply.outer(g, v) if n[0] else None, a.T @ g if n[1] else None)


class DotBackward0(Op):
    """Dot product of two 1-D tensors."""

    _names_saved = ("self", "tensor")

    @staticmethod
    def forward(ctx, a, b):
        if a.shape != b.shape:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                               f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                               "respectively")
        if a.dtype != b.dtype:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_word(a)} and {_word(b)}")
        ctx.save_for_backward(a, b)
        return _out(a @ b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (g * b if n[0] else None, g * a if n[1] else None)


class BmmBackward0(Op):
    """Batched matrix product ``(B, n, m) @ (B, m, p) -> (B, n, p)``."""

    _names_saved = ("self", "mat2")

    @staticmethod
    def forward(ctx, a, b):
        if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
        if a.dtype != b.dtype:
            raise RuntimeError(f"expected scalar type {_word(a)} but found {_word(b)}")
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (g @ b.transpose(0, 2, 1) if n[0] else None, a.transpose(0, 2, 1) @ g if n[1] else None)


def _word(a):
    """PyTorch's short dtype word in error messages: Float, Double, Long ..."""
    return {"f2": "Half", "f4": "Float", "f8": "Double", "i8": "Long", "i4": "Int", "b1": "Bool"}.get(
        a.dtype.str[1:], str(a.dtype))


def _tname(a):
    from .._dtype import from_numpy_dtype

    n = from_numpy_dtype(a.dtype).name
    return {"float32": "float", "float64": "double", "int64": "long", "int32": "int", "float16": "c10::Half"}.get(n, n)
