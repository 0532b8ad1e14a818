"""Elementwise operations: arithmetic, powers, exp/log, trigonometry, activations, rounding, where, maximum.

Each ``defop`` entry is one operation: its forward on arrays and one
derivative formula per differentiable input, written as PyTorch's
``derivatives.yaml`` writes it (so a recorded backward pass has PyTorch's
node names: ``grad * self.cos()`` is a ``MulBackward0`` over a
``CosBackward0``).  Python numbers are inputs too: ``a + 2`` has
``next_functions`` of ``((AccumulateGrad, 0), (None, 0))``, as in PyTorch.

The ``*_backward`` ops (``tanh_backward`` ...) are what the first
derivative of some ops calls; their own formulas give second derivatives
(``TanhBackwardBackward0``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._device import CPU as _CPU
from .._tensor import Tensor
from ._base import (
    array_module,
    as_array,
    as_operand,
    broadcast_shapes,
    check_tensor,
    is_number,
    num,
    operand,
    prep,
    promote,
    result_type,
    result_type_many,
    to_float,
    type_name,
)
from ._batch_rules import declare, logical_front, pointwise
from ._batched import BatchedTensor, per_sample
from ._registry import SPECS, apply, defop, public
from .inplace import inplace


# -- building blocks for the public surface -------------------------------------------------------------------
def unary(name, forward, *, node=None, method=True, function=True, in_place=True, doc=None, **formulas):
    """An op of one tensor: the entry, ``Tensor.<name>()``, ``torch.<name>(input)`` and ``Tensor.<name>_()``."""
    spec = defop(name, forward, node=node, doc=doc, batch=pointwise, **formulas)

    def op(self):
        return apply(spec, (self,))

    def fn(input):
        check_tensor(name, "input", input)
        return apply(spec, (input,))

    def op_(self):
        return inplace(self, spec, (self,))

    op.__name__, fn.__name__, op_.__name__ = name, name, name + "_"
    op.__doc__ = fn.__doc__ = doc or f"Elementwise ``{name}`` (``{spec.node_cls.__name__}``)."
    op_.__doc__ = f"In-place :meth:`{name}` (node ``{spec.node_cls.__name__}``; PyTorch's in-place rules)."
    if method:
        public(name, function=False)(op)
    if function:
        public(name, method=False)(fn)
    if in_place:
        public(name + "_", function=False)(op_)
    return spec


def _float_unary(np_fn, errors=False):
    """Forward of a float-valued function of one tensor (integers give the default float dtype).

    Every forward runs without NumPy's floating-point warnings (``_base.quiet``); ``errors`` is accepted for
    entries written when each op silenced them itself, and changes nothing."""

    def forward(self):
        return np_fn(self if self.dtype.kind == "f" else to_float(self))

    return forward


def _no_bool(name):
    def check(a):
        if a.dtype.kind == "b":
            raise RuntimeError(f"\"{name}_cpu\" not implemented for 'Bool'")

    return check


# -- scalar helpers that derivative formulas use (PyTorch's Scalar overloads: MulBackward1 ...) ---------------
mul_scalar = defop(
    "mul_scalar",
    lambda self, other: as_array(self * other),
    node="MulBackward1",
    self=lambda F, grad, other: F.mul_scalar(grad, other),
)
div_scalar = defop(
    "div_scalar",
    lambda self, other: as_array(self / other),
    node="DivBackward1",
    self=lambda F, grad, other: F.div_scalar(grad, other),
)
add_scalar = defop(
    "add_scalar",
    lambda self, other, alpha=1: as_array(self + other * alpha),
    node="AddBackward1",
    self=lambda F, grad: grad,
)
sub_scalar = defop(
    "sub_scalar",
    lambda self, other, alpha=1: as_array(self - other * alpha),
    node="SubBackward1",
    self=lambda F, grad: grad,
)


# -- unary -------------------------------------------------------------------------------------------------------
def _neg(self):
    if self.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return as_array(-self)


neg = unary("neg", _neg, self=lambda F, grad: -grad, doc="Negation, ``-self`` (``NegBackward0``).")
unary(
    "exp",
    _float_unary(np.exp, errors=True),
    self=lambda F, grad, result: grad * result,
    doc="Elementwise e**x (``ExpBackward0``, saves the result). Integer input gives the default float dtype.",
)
unary(
    "log",
    _float_unary(np.log, errors=True),
    self=lambda F, grad, self: grad / self,
    doc="Elementwise natural log (``LogBackward0``); log of 0 is -inf and of a negative number nan.",
)
unary(
    "log1p",
    _float_unary(np.log1p, errors=True),
    node="Log1PBackward0",
    self=lambda F, grad, self: grad / F.add_scalar(self, 1),
    doc="Elementwise log(1 + x) (``Log1PBackward0``, saves ``self``), accurate for small x where ``log(1 + x)`` "
    "rounds to 0. Same shape and device as the input; float input keeps its dtype, integer and bool input "
    "give the default float dtype (the in-place form on them raises RuntimeError, as in PyTorch); a "
    "non-tensor raises TypeError. log1p(-1) is -inf and below -1 nan. The derivative is PyTorch's "
    "``log1p_backward``, ``grad / (self + 1)``: recorded, a ``DivBackward0`` over an ``AddBackward1``.",
)
unary(
    "sqrt",
    _float_unary(np.sqrt, errors=True),
    self=lambda F, grad, result: grad / F.mul_scalar(result, 2),
    doc="Elementwise square root (``SqrtBackward0``); negative input gives nan.",
)
unary(
    "sin",
    _float_unary(np.sin, errors=True),
    self=lambda F, grad, self: grad * F.cos(self),
    doc="Elementwise sine (``SinBackward0``).",
)
unary(
    "cos",
    _float_unary(np.cos, errors=True),
    self=lambda F, grad, self: grad * -F.sin(self),
    doc="Elementwise cosine (``CosBackward0``).",
)
unary(
    "tanh",
    _float_unary(np.tanh),
    self=lambda F, grad, result: F.tanh_backward(grad, result),
    doc="Elementwise tanh (``TanhBackward0``; its derivative is the op ``tanh_backward``).",
)


def _sigmoid(self):
    a = to_float(self)
    if a.dtype == np.float16:  # PyTorch computes half in float and rounds once
        return as_array((1 / (1 + np.exp(-a.astype(np.float32)))).astype(np.float16))
    return as_array(1 / (1 + np.exp(-a)))


unary(
    "sigmoid",
    _sigmoid,
    self=lambda F, grad, result: F.sigmoid_backward(grad, result),
    doc="1 / (1 + e**-x) elementwise (``SigmoidBackward0``).",
)


def _reciprocal(self):
    return as_array(1 / to_float(self))


unary(
    "reciprocal",
    _reciprocal,
    self=lambda F, grad, result: -grad * (result * result),
    doc="1 / x elementwise (``ReciprocalBackward0``).",
)


def _abs(self):
    if self.dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return as_array(np.abs(self))


def _sign(self):
    if self.dtype.kind == "b":
        return as_array(self.copy())
    return as_array((self > 0).astype(self.dtype) - (self < 0).astype(self.dtype))  # sign(nan) is 0, as in PyTorch


unary(
    "abs",
    _abs,
    self=lambda F, grad, self: grad * F.sgn(self),
    doc="Elementwise absolute value (``AbsBackward0``); the gradient at 0 (and at nan) is 0, as in PyTorch.",
)
unary(
    "sgn",
    _sign,
    self=lambda F, grad: F.zeros_like(grad),
    in_place=True,
    doc="The sign of each element (``SgnBackward0``); zero gradient.",
)
unary(
    "sign",
    _sign,
    self=lambda F, grad: F.zeros_like(grad),
    doc="The sign of each element, -1, 0 or 1 (``SignBackward0``); its gradient is zero everywhere.",
)


def _rounding(np_fn, name):
    def forward(self):
        if self.dtype.kind == "b":
            raise NotImplementedError(f"\"{name}_vml_cpu\" not implemented for 'Bool'")
        return as_array(np_fn(self)) if self.dtype.kind == "f" else as_array(self.copy())

    return forward


_ROUNDING = {}
for _name, _fn in (("round", np.round), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc)):
    _ROUNDING[_name] = unary(
        _name,
        _rounding(_fn, _name),
        self=lambda F, grad: F.zeros_like(grad),
        method=_name != "round",
        function=_name != "round",
        in_place=_name != "round",  # round has a public form of its own (decimals)
        doc=f"Elementwise ``{_name}`` (``{_name.capitalize()}Backward0``); its gradient is zero everywhere, as in "
        "PyTorch (the function is flat between its jumps). Integer input is copied; bool input raises "
        "NotImplementedError.",
    )


def _frac(self):
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{_dtype.word(self.dtype)}'")
    return as_array(self - np.trunc(self))


unary(
    "frac",
    _frac,
    self=lambda F, grad: grad,
    doc="The fractional part ``x - trunc(x)``, with the sign of ``x`` (``FracBackward0``); its gradient is 1, as in "
    "PyTorch (which ignores the jumps at the integers). Integer and bool input raise NotImplementedError.",
)


def _round_decimals(self, decimals):
    """PyTorch's kernel: ``nearbyint(x * 10**d) / 10**d`` (``nearbyint(x / 10**-d) * 10**-d`` for d < 0), in the
    input's dtype (float32 for float16)."""
    if self.dtype.kind != "f":
        raise NotImplementedError(
            f"\"{'round_vml_cpu' if decimals == 0 else 'round_cpu'}\" not implemented for '{_dtype.word(self.dtype)}'"
        )
    xp = array_module(self)
    op = np.dtype(np.float32) if self.dtype == np.float16 else self.dtype
    ten = op.type(10.0 ** abs(decimals))
    a = self.astype(op, copy=False)
    out = xp.rint(a / ten) * ten if decimals < 0 else xp.rint(a * ten) / ten
    return as_array(out.astype(self.dtype, copy=False))


round_spec = _ROUNDING["round"]
round_decimals_spec = defop(
    "round_decimals", _round_decimals, node="RoundBackward1", self=lambda F, grad: F.zeros_like(grad)
)


@public("round")
def round(input, *, decimals=None):  # noqa: A001 - PyTorch's name
    """Round to the nearest integer, halves to even (``RoundBackward0``), or to ``decimals`` decimal places
    (``RoundBackward1``; negative ``decimals`` round to tens, hundreds ...), as PyTorch computes it:
    ``nearbyint(x * 10**decimals) / 10**decimals``.  Same shape, dtype and device as ``input``; the gradient is
    zero everywhere.  Integer input is copied without ``decimals``; with ``decimals`` integer and bool input
    raise NotImplementedError, as bool input always does."""
    check_tensor("round", "input", input)
    if decimals is None:
        return apply(round_spec, (input,))
    return apply(round_decimals_spec, (input, int(decimals)))


@public("round_", function=False)
def round_(self, *, decimals=None):
    """In-place :meth:`round` (``RoundBackward0``, or ``RoundBackward1`` with ``decimals``)."""
    if decimals is None:
        return inplace(self, round_spec, (self,))
    return inplace(self, round_decimals_spec, (self, int(decimals)))


def _relu(self):
    if self.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return as_array(np.maximum(self.dtype.type(0), self))  # NumPy returns its second operand on a tie (-0.0 stays)


unary(
    "relu",
    _relu,
    self=lambda F, grad, result: F.threshold_backward(grad, result, 0),
    doc="max(x, 0) elementwise (``ReluBackward0``); the gradient at 0 is 0.",
)


# -- more elementwise math: trigonometry, hyperbolic functions, exp/log variants, erf (task M1) ------------------
# Each formula is PyTorch's derivatives.yaml entry, written so that a recorded backward pass has PyTorch's nodes
# (``rsqrt``: ``-0.5 * grad * result.pow(3)`` is a MulBackward0 over a MulBackward1 and a PowBackward0).
_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))
_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))

_FLOAT_RULES = (
    "Same shape and device as the input; a float input keeps its dtype, integer and bool input give the "
    "default float dtype (the in-place form on them raises RuntimeError, as in PyTorch); a non-tensor "
    "raises TypeError."
)


def _float_doc(summary, node, derivative):
    return f"{summary} (``{node}``). {_FLOAT_RULES} {derivative}"


def _wrapped(F, value, like):
    """A Python number as PyTorch's "wrapped number" operand beside ``like`` (same dtype and device): in a recorded
    formula ``1 - t`` is then a ``SubBackward0`` with no edge for the number, as in PyTorch."""
    data = like._data if F.records else like
    arr = array_module(data).asarray(value, dtype=data.dtype)
    return Tensor._make(arr, like._device) if F.records else arr


def _rsqrt_array(a):
    return 1 / array_module(a).sqrt(a)


def _erf_array(a):
    xp = array_module(a)
    if xp is np:
        return np.asarray(_ERF_UFUNC(a), dtype=a.dtype)
    from cupyx.scipy.special import erf  # CuPy's own kernel on the GPU

    return erf(a)


_ERF_UFUNC = np.frompyfunc(math.erf, 1, 1)  # C's erf for each element (NumPy has none)

unary(
    "rsqrt",
    _float_unary(_rsqrt_array, errors=True),
    self=lambda F, grad, result: F.mul_scalar(grad, -0.5) * F.pow(result, 3),
    doc=_float_doc(
        "Elementwise 1 / sqrt(x)",
        "RsqrtBackward0",
        "rsqrt(0) is inf and rsqrt of a negative number nan. The derivative is "
        "``-0.5 * grad * result.pow(3)``, from the saved result.",
    ),
)
unary(
    "expm1",
    _float_unary(np.expm1, errors=True),
    node="Expm1Backward0",
    self=lambda F, grad, result: grad * F.add_scalar(result, 1),
    doc=_float_doc(
        "Elementwise e**x - 1, accurate for small x where ``exp(x) - 1`` rounds to 0",
        "Expm1Backward0",
        "The derivative is ``grad * (result + 1)``, from the saved result.",
    ),
)
unary(
    "tan",
    _float_unary(np.tan, errors=True),
    self=lambda F, grad, result: grad * F.add_scalar(F.pow(result, 2), 1),
    doc=_float_doc("Elementwise tangent", "TanBackward0", "The derivative is ``grad * (1 + result**2)``."),
)
unary(
    "asin",
    _float_unary(np.arcsin, errors=True),
    self=lambda F, grad, self: grad * F.rsqrt(F.add_scalar(-self * self, 1)),
    doc=_float_doc(
        "Elementwise arcsine",
        "AsinBackward0",
        "Outside [-1, 1] the value is nan. The derivative is ``grad * (1 - x*x).rsqrt()`` (inf at x = +-1).",
    ),
)
unary(
    "acos",
    _float_unary(np.arccos, errors=True),
    self=lambda F, grad, self: grad * -F.rsqrt(F.add_scalar(-self * self, 1)),
    doc=_float_doc(
        "Elementwise arccosine",
        "AcosBackward0",
        "Outside [-1, 1] the value is nan. The derivative is ``grad * -(1 - x*x).rsqrt()``.",
    ),
)
unary(
    "atan",
    _float_unary(np.arctan, errors=True),
    self=lambda F, grad, self: grad / F.add_scalar(self * self, 1),
    doc=_float_doc("Elementwise arctangent", "AtanBackward0", "The derivative is ``grad / (x*x + 1)``."),
)
unary(
    "sinh",
    _float_unary(np.sinh, errors=True),
    self=lambda F, grad, self: grad * F.cosh(self),
    doc=_float_doc("Elementwise hyperbolic sine", "SinhBackward0", "The derivative is ``grad * cosh(x)``."),
)
unary(
    "cosh",
    _float_unary(np.cosh, errors=True),
    self=lambda F, grad, self: grad * F.sinh(self),
    doc=_float_doc("Elementwise hyperbolic cosine", "CoshBackward0", "The derivative is ``grad * sinh(x)``."),
)
unary(
    "asinh",
    _float_unary(np.arcsinh, errors=True),
    in_place=False,
    self=lambda F, grad, self: grad * F.rsqrt(F.add_scalar(F.pow(self, 2), 1)),
    doc=_float_doc(
        "Elementwise inverse hyperbolic sine", "AsinhBackward0", "The derivative is ``grad * (x**2 + 1).rsqrt()``."
    ),
)
unary(
    "acosh",
    _float_unary(np.arccosh, errors=True),
    in_place=False,
    self=lambda F, grad, self: grad * F.rsqrt(F.sub_scalar(self * self, 1)),
    doc=_float_doc(
        "Elementwise inverse hyperbolic cosine",
        "AcoshBackward0",
        "Below 1 the value is nan. The derivative is ``grad * (x*x - 1).rsqrt()``.",
    ),
)
unary(
    "atanh",
    _float_unary(np.arctanh, errors=True),
    in_place=False,
    self=lambda F, grad, self: F.mul_scalar(grad, 1) / F.sub(_wrapped(F, 1, self), F.pow(self, 2)),
    doc=_float_doc(
        "Elementwise inverse hyperbolic tangent",
        "AtanhBackward0",
        "atanh(+-1) is +-inf and outside [-1, 1] nan. The derivative is ``grad * 1 / (1 - x**2)``.",
    ),
)


def _inplace_not_differentiable(name, np_fn):
    """``asinh_``/``acosh_``/``atanh_``: PyTorch records ``AsinhBackward1`` (...), whose backward raises
    NotImplementedError "the derivative for 'inplace version of asinh' is not implemented."."""

    def formula(F, grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented.")

    spec = defop(name + "_", _float_unary(np_fn, errors=True), node=f"{_camel_name(name)}Backward1", self=formula)

    def op_(self):
        return inplace(self, spec, (self,))

    op_.__name__ = op_.__qualname__ = name + "_"
    op_.__doc__ = (
        f"In-place :meth:`{name}`. As in PyTorch, the recorded node (``{spec.node_cls.__name__}``) has no "
        "derivative: backward through it raises NotImplementedError."
    )
    public(name + "_", function=False)(op_)
    return spec


def _camel_name(name):
    return name[:1].upper() + name[1:]


for _name, _fn in (("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh)):
    _inplace_not_differentiable(_name, _fn)


unary(
    "erf",
    _float_unary(_erf_array, errors=True),
    self=lambda F, grad, self: F.mul_scalar(F.exp(-F.pow(self, 2)), _TWO_OVER_SQRT_PI) * grad,
    doc=_float_doc(
        "The error function, 2/sqrt(pi) times the integral of exp(-t**2) from 0 to x",
        "ErfBackward0",
        "The derivative is ``2 / sqrt(pi) * exp(-x**2) * grad``.",
    ),
)
unary(
    "exp2",
    _float_unary(np.exp2, errors=True),
    node="Exp2Backward0",
    self=lambda F, grad, result: F.mul_scalar(grad * result, _LN2),
    doc=_float_doc("Elementwise 2**x", "Exp2Backward0", "The derivative is ``grad * result * ln(2)``."),
)
unary(
    "log2",
    _float_unary(np.log2, errors=True),
    node="Log2Backward0",
    self=lambda F, grad, self: grad / F.mul_scalar(self, _LN2),
    doc=_float_doc(
        "Elementwise base-2 logarithm",
        "Log2Backward0",
        "log2(0) is -inf and of a negative number nan. The derivative is ``grad / (x * ln(2))``.",
    ),
)
unary(
    "log10",
    _float_unary(np.log10, errors=True),
    node="Log10Backward0",
    self=lambda F, grad, self: grad / F.mul_scalar(self, _LN10),
    doc=_float_doc(
        "Elementwise base-10 logarithm",
        "Log10Backward0",
        "log10(0) is -inf and of a negative number nan. The derivative is ``grad / (x * ln(10))``.",
    ),
)


def alias(name, spec, target, inplace_spec=None):
    """PyTorch's other name for an op: ``Tensor.<name>()``, ``torch.<name>(input)`` and ``Tensor.<name>_()``, all
    recording ``spec``'s node (``negative`` is ``neg``: ``NegBackward0``)."""

    def op(self):
        return apply(spec, (self,))

    def fn(input):
        check_tensor(name, "input", input)
        return apply(spec, (input,))

    spec_ = inplace_spec or spec

    def op_(self):
        return inplace(self, spec_, (self,))

    op.__name__ = op.__qualname__ = fn.__name__ = fn.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    op.__doc__ = fn.__doc__ = f"Another name for :func:`{target}` (same node, ``{spec.node_cls.__name__}``)."
    op_.__doc__ = f"Another name for ``{target}_``: in place, node ``{spec_.node_cls.__name__}``."
    public(name, function=False)(op)
    public(name, method=False)(fn)
    public(name + "_", function=False)(op_)


def _install_aliases():
    for name, target in (
        ("negative", "neg"),
        ("absolute", "abs"),
        ("fix", "trunc"),
        ("arcsin", "asin"),
        ("arccos", "acos"),
        ("arctan", "atan"),
        ("arcsinh", "asinh"),
        ("arccosh", "acosh"),
        ("arctanh", "atanh"),
    ):
        alias(name, SPECS[target], target, SPECS.get(target + "_"))


_install_aliases()


# -- more binary elementwise ops: fmod, atan2, hypot, lerp, addcmul, addcdiv, clamp_min/clamp_max, rsub -------------
def _fmod(self, other):
    a, b = prep(self, other)
    if a.dtype.kind in "iu" and bool((b == 0).any() if hasattr(b, "shape") else b == 0):
        raise RuntimeError("ZeroDivisionError")
    return as_array(np.fmod(a, b))


fmod_spec = defop("fmod", _fmod, node="FmodBackward0", self=lambda F, grad: grad)
fmod_tensor_spec = defop(
    "fmod_tensor",
    _fmod,
    inputs=("self", "other"),
    node="FmodBackward1",
    self=lambda F, grad: grad,
    other=lambda F, grad, self, other: -grad * F.div_mode(self, other, "trunc"),
)


@public("fmod")
def fmod(input, other):
    """C's ``fmod``: the remainder of ``input / other`` with the sign of ``input`` (``%`` takes the divisor's sign).

    ``other`` is a number (``FmodBackward0``) or a tensor that broadcasts with ``input`` (``FmodBackward1``).
    Result dtype by PyTorch's promotion (integers stay integers; a float number makes an integer tensor the default
    float dtype); same device. d/dinput is 1; d/dother is ``-trunc(input / other)``. A float remainder by zero is
    nan; an integer one raises ``RuntimeError("ZeroDivisionError")``. A non-tensor ``input`` raises TypeError."""
    check_tensor("fmod", "input", input)
    o = operand(other, "fmod")
    return apply(fmod_tensor_spec if isinstance(o, Tensor) else fmod_spec, (input, o))


@public("fmod_", function=False)
def fmod_(self, other):
    """In-place :meth:`fmod` (node ``FmodBackward0`` / ``FmodBackward1``)."""
    o = operand(other, "fmod_")
    return inplace(self, fmod_tensor_spec if isinstance(o, Tensor) else fmod_spec, (self, o))


def _float_binary(np_fn, name, ints=True):
    def forward(self, other):
        a, b = prep(self, other)
        if a.dtype.kind != "f":
            if not ints:
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype.word(a.dtype)}'")
            a, b = to_float(a), to_float(b)
        return as_array(np_fn(a, b))

    return forward


def _atan2_backward(F, grad, self, other, grad_input_mask):
    """PyTorch's atan2_backward: where self**2 + other**2 is 0 the gradient is 0 (a denominator that is not 0 but
    whose reciprocal overflows gives PyTorch's inf)."""
    denom = self * self + other * other
    recip = F.masked_fill(F.reciprocal(denom), denom == 0, 0)
    return (grad * other * recip if grad_input_mask[0] else None, grad * -self * recip if grad_input_mask[1] else None)


atan2_spec = defop(
    "atan2", _float_binary(np.arctan2, "atan2"), inputs=("self", "other"), **{"self, other": _atan2_backward}
)
hypot_spec = defop(
    "hypot",
    _float_binary(np.hypot, "hypot", ints=False),
    inputs=("self", "other"),
    self=lambda F, grad, self, result: grad * self / result,
    other=lambda F, grad, other, result: grad * other / result,
)


def _two_tensors(name, spec, doc):
    def fn(input, other):
        check_tensor(name, "input", input)
        check_tensor(name, "other", other, 2)
        return apply(spec, (input, other))

    def op_(self, other):
        check_tensor(name + "_", "other", other)
        return inplace(self, spec, (self, other))

    fn.__name__ = fn.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    fn.__doc__ = doc
    op_.__doc__ = f"In-place :meth:`{name}` (node ``{spec.node_cls.__name__}``)."
    return fn, op_


_atan2, _atan2_ = _two_tensors(
    "atan2",
    atan2_spec,
    """The angle of the point (other, input), ``atan(input / other)`` in the right quadrant, in (-pi, pi]
    (``Atan2Backward0``).

    Both arguments are tensors that broadcast together; integers give the default float dtype, mixed float
    dtypes promote. d/dinput is ``other / (input**2 + other**2)``, d/dother ``-input / (input**2 + other**2)``,
    and both are 0 where ``input**2 + other**2`` is 0, as in PyTorch. A number as ``other`` raises TypeError.""",
)
public("atan2", "arctan2")(_atan2)
public("atan2_", "arctan2_", function=False)(_atan2_)
_hypot, _hypot_ = _two_tensors(
    "hypot",
    hypot_spec,
    """``sqrt(input**2 + other**2)`` elementwise without overflow (``HypotBackward0``).

    Both arguments are float tensors that broadcast together; integer ones raise NotImplementedError
    (``"hypot_cpu" not implemented for 'Long'``), a number as ``other`` TypeError. d/dinput is ``input / result``,
    d/dother ``other / result`` (nan at the origin, as in PyTorch).""",
)
public("hypot")(_hypot)
public("hypot_", function=False)(_hypot_)


def _lerp_check(self, end, weight=None):
    """PyTorch's checks, in its order: ``end``'s and ``weight``'s dtype first, then the kernel's (floating only)."""
    if end.dtype != self.dtype:
        raise RuntimeError(
            f"expected dtype {_dtype.ctype(self.dtype)} for `end` but got dtype {_dtype.ctype(end.dtype)}"
        )
    if weight is not None and weight.ndim and weight.dtype != self.dtype:
        raise RuntimeError(
            f"expected dtype {_dtype.ctype(self.dtype)} for `weight` but got dtype {_dtype.ctype(weight.dtype)}"
        )
    if self.dtype.kind != "f":
        kernel = "lerp_kernel_tensor" if weight is not None else "lerp_kernel_scalar"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.word(self.dtype)}'")
    broadcast_shapes(self.shape, end.shape, *(() if weight is None else (weight.shape,)))


def _lerp_values(xp, self, end, w):
    """PyTorch's lerp kernel: ``self + w * (end - self)`` for |w| < 0.5, else ``end - (end - self) * (1 - w)``."""
    diff = end - self
    return xp.where(xp.abs(w) < 0.5, self + w * diff, end - diff * (1 - w))


def _lerp(self, end, weight):
    _lerp_check(self, end)
    w = self.dtype.type(weight)
    out = self + w * (end - self) if abs(w) < 0.5 else end - (end - self) * (1 - w)
    return as_array(out.astype(self.dtype, copy=False))


def _lerp_tensor(self, end, weight):
    _lerp_check(self, end, weight)
    w = weight.astype(self.dtype, copy=False)
    return as_array(_lerp_values(array_module(self), self, end, w).astype(self.dtype, copy=False))


lerp_spec = defop(
    "lerp",
    _lerp,
    inputs=("self", "end"),
    node="LerpBackward0",
    self=lambda F, grad, weight: F.mul_scalar(grad, 1 - weight),
    end=lambda F, grad, weight: F.mul_scalar(grad, weight),
)
lerp_tensor_spec = defop(
    "lerp_tensor",
    _lerp_tensor,
    inputs=("self", "end", "weight"),
    node="LerpBackward1",
    self=lambda F, grad, weight: grad * F.sub(_wrapped(F, 1, weight), weight),
    end=lambda F, grad, weight: grad * weight,
    weight=lambda F, grad, self, end: grad * (end - self),
)


@public("lerp")
def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)``, computed as PyTorch's kernel computes it.

    ``weight`` is a number (``LerpBackward0``) or a tensor (``LerpBackward1``, which also passes a gradient to
    the weight: ``grad * (end - input)``); all three broadcast together, on one device. d/dinput is
    ``1 - weight``, d/dend ``weight``. ``input`` and ``end`` must be float tensors of one dtype; a weight tensor
    with dimensions must have it too (a 0-d one may differ), else RuntimeError ("expected dtype float for `end`
    but got dtype double"); integer input raises NotImplementedError."""
    check_tensor("lerp", "input", input)
    check_tensor("lerp", "end", end, 2)
    w = operand(weight, "lerp", "weight")
    if isinstance(w, Tensor):
        return apply(lerp_tensor_spec, (input, end, w))
    return apply(lerp_spec, (input, end, w))


@public("lerp_", function=False)
def lerp_(self, end, weight):
    """In-place :meth:`lerp` (node ``LerpBackward0`` / ``LerpBackward1``)."""
    check_tensor("lerp_", "end", end)
    w = operand(weight, "lerp_", "weight")
    return inplace(self, lerp_tensor_spec if isinstance(w, Tensor) else lerp_spec, (self, end, w))


def _promote3(a, b, c):
    b, c = promote(b, c)
    a, b = promote(a, b)
    a, c = promote(a, c)
    return a, b, c


def _addcmul(self, tensor1, tensor2, value=1):
    a, t1, t2 = _promote3(self, tensor1, tensor2)
    if a.dtype.kind == "b":
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    broadcast_shapes(a.shape, t1.shape, t2.shape)
    return as_array((a + a.dtype.type(value) * t1 * t2).astype(a.dtype, copy=False))


ADDCDIV_INT_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes."
)


def _addcdiv(self, tensor1, tensor2, value=1):
    if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError(ADDCDIV_INT_MESSAGE)
    a, t1, t2 = _promote3(self, tensor1, tensor2)
    broadcast_shapes(a.shape, t1.shape, t2.shape)
    return as_array((a + a.dtype.type(value) * t1 / t2).astype(a.dtype, copy=False))


addcmul_spec = defop(
    "addcmul",
    _addcmul,
    inputs=("self", "tensor1", "tensor2"),
    self=lambda F, grad: grad,
    tensor1=lambda F, grad, tensor2, value: grad * F.mul_scalar(tensor2, value),
    tensor2=lambda F, grad, tensor1, value: grad * F.mul_scalar(tensor1, value),
)
addcdiv_spec = defop(
    "addcdiv",
    _addcdiv,
    inputs=("self", "tensor1", "tensor2"),
    self=lambda F, grad: grad,
    tensor1=lambda F, grad, tensor2, value: grad * F.div(_wrapped(F, value, tensor2), tensor2),
    tensor2=lambda F, grad, tensor1, tensor2, value: -grad * (F.mul_scalar(tensor1, value) / (tensor2 * tensor2)),
)


def _addc(name, spec, formula, grads):
    def fn(input, tensor1, tensor2, *, value=1):
        check_tensor(name, "input", input)
        check_tensor(name, "tensor1", tensor1, 2)
        check_tensor(name, "tensor2", tensor2, 3)
        return apply(spec, (input, tensor1, tensor2, num(value)))

    def op_(self, tensor1, tensor2, *, value=1):
        check_tensor(name + "_", "tensor1", tensor1)
        check_tensor(name + "_", "tensor2", tensor2, 2)
        return inplace(self, spec, (self, tensor1, tensor2, num(value)))

    fn.__name__ = fn.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    fn.__doc__ = (
        f"``input + value * {formula}`` elementwise, in one op (``{spec.node_cls.__name__}``; the "
        "optimizers' update step).\n\n    The three tensors broadcast together, on one device; the result "
        "dtype is their promoted dtype, and ``value`` is cast to it (an integer result truncates a float "
        f"value). {grads}"
    )
    op_.__doc__ = f"In-place :meth:`{name}` (node ``{spec.node_cls.__name__}``)."
    public(name)(fn)
    public(name + "_", function=False)(op_)


_addc(
    "addcmul",
    addcmul_spec,
    "tensor1 * tensor2",
    "d/dinput is 1, d/dtensor1 ``value * tensor2``, d/dtensor2 ``value * tensor1``.",
)
_addc(
    "addcdiv",
    addcdiv_spec,
    "tensor1 / tensor2",
    "d/dinput is 1, d/dtensor1 ``value / tensor2``, d/dtensor2 ``-value * tensor1 / tensor2**2``. Integer "
    '``tensor1`` and ``tensor2`` raise RuntimeError ("Integer division with addcdiv is no longer supported"), '
    "as in PyTorch.",
)


def _rsub_tensor(self, other, alpha=1):
    a, b = prep(self, other)
    if a.dtype.kind == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    return as_array(b - a if alpha == 1 else b - alpha * a)


rsub_tensor_spec = defop(
    "rsub_tensor",
    _rsub_tensor,
    inputs=("self", "other"),
    node="RsubBackward0",
    self=lambda F, grad, alpha: -grad if alpha == 1 else F.mul_scalar(-grad, alpha),
    other=lambda F, grad: grad,
)


@public("rsub", method=False)
def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (subtraction the other way round): ``RsubBackward1`` for a number ``other`` (what
    ``2 - t`` records), ``RsubBackward0`` for a tensor. Shapes broadcast; dtype by promotion; two bool tensors raise
    RuntimeError, a non-tensor ``input`` TypeError. d/dinput is ``-alpha``, d/dother 1."""
    check_tensor("rsub", "input", input)
    o = operand(other, "rsub")
    if isinstance(o, Tensor):
        return apply(rsub_tensor_spec, (input, o, alpha))
    return apply(rsub_spec, (input, o, alpha))


# -- the *_backward ops: first derivatives that are themselves differentiable ------------------------------------
_BITS = {2: np.int16, 4: np.int32, 8: np.int64}


def _threshold_backward(grad_output, self, threshold):
    """``0 where self <= threshold, else grad_output``: a NaN in ``self`` passes the gradient, one in
    ``grad_output`` is zeroed where masked, as in PyTorch."""
    mask = self <= threshold
    bits = _BITS.get(grad_output.itemsize) if grad_output.dtype.kind == "f" else None
    if bits is None or array_module(grad_output) is not np or mask.shape != grad_output.shape:
        return as_array(array_module(grad_output).where(mask, grad_output.dtype.type(0), grad_output))
    # NumPy's where() branches per element (slow on a random mask); this ANDs the bits with 0 or ~0 instead
    out = np.empty(mask.shape, bits)
    np.subtract(mask.view(np.int8), 1, out=out)
    np.bitwise_and(out, grad_output.view(bits), out=out)
    return out.view(grad_output.dtype)


defop(
    "threshold_backward",
    _threshold_backward,
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, self, threshold: F.threshold_backward(grad, self, threshold),
    self=lambda F, grad: F.zeros_like(grad),
)


# below this many elements a formula's temporaries cost less than NumPy's ufunc calls with ``out=`` (a few µs)
_IN_PLACE_FROM = 4096


def _tanh_backward(grad_output, output):
    """``grad_output * (1 - output**2)``, in one temporary (on arrays of 4,096 elements or more)."""
    if (
        output.size < _IN_PLACE_FROM
        or not output.ndim
        or output.dtype != grad_output.dtype
        or output.shape != grad_output.shape
    ):
        return as_array(grad_output * (1 - output * output))
    xp = array_module(output)
    t = output * output
    xp.subtract(1, t, out=t)
    xp.multiply(t, grad_output, out=t)
    return t


def _sigmoid_backward(grad_output, output):
    """``grad_output * (1 - output) * output``, in one temporary (on arrays of 4,096 elements or more)."""
    if (
        output.size < _IN_PLACE_FROM
        or not output.ndim
        or output.dtype != grad_output.dtype
        or output.shape != grad_output.shape
    ):
        return as_array(grad_output * (1 - output) * output)
    xp = array_module(output)
    t = 1 - output
    xp.multiply(t, output, out=t)
    xp.multiply(t, grad_output, out=t)
    return t


defop(
    "tanh_backward",
    _tanh_backward,
    inputs=("grad_output", "output"),
    grad_output=lambda F, grad, output: F.tanh_backward(grad, output),
    output=lambda F, grad, output, grad_output: grad * (F.mul_scalar(output, -2) * grad_output),
)
defop(
    "sigmoid_backward",
    _sigmoid_backward,
    inputs=("grad_output", "output"),
    grad_output=lambda F, grad, output: F.sigmoid_backward(grad, output),
    output=lambda F, grad, output, grad_output: grad * grad_output * F.add_scalar(F.mul_scalar(output, -2), 1),
)


# -- clamp -------------------------------------------------------------------------------------------------------
# Number bounds: clamp (ClampBackward1), clamp_min (ClampMinBackward0), clamp_max (ClampMaxBackward0).  Tensor
# bounds: clamp (ClampBackward0: edges to self, min and max), clamp_min / clamp_max (ClampMinBackward1 ...); the
# bounds get a gradient where they are the result, as PyTorch's clamp_backward_min_max gives it.
_NO_BOUNDS = "torch.clamp: At least one of 'min' or 'max' must not be None"


def _clamp_kernel(self, min, max, kernel):
    """``minimum(maximum(self, min), max)`` in the promoted dtype of the three (NaN anywhere gives NaN)."""
    if min is None and max is None:
        raise RuntimeError(_NO_BOUNDS)
    broadcast_shapes(self.shape, *(b.shape for b in (min, max) if hasattr(b, "shape")))  # PyTorch's size message
    d = result_type_many(self, min, max)
    if d.kind == "b" and kernel != "clamp_min" and kernel != "clamp_max":  # one tensor bound: bool is fine
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for 'Bool'")
    xp = array_module(self)
    a = self.astype(d, copy=False)
    out = a
    if min is not None:
        out = xp.maximum(min.astype(d, copy=False) if hasattr(min, "dtype") else d.type(min), out)  # ties: self
    if max is not None:
        out = xp.minimum(max.astype(d, copy=False) if hasattr(max, "dtype") else d.type(max), out)
    if out is self:
        out = self.copy()
    return as_array(out)


def _kernel_name(min, max, scalar):
    name = "clamp" if min is not None and max is not None else ("clamp_min" if min is not None else "clamp_max")
    return name + "_scalar" if scalar else name


def _clamp(self, min=None, max=None):
    return _clamp_kernel(self, min, max, _kernel_name(min, max, True))


def _clamp_tensor(self, min, max):
    return _clamp_kernel(self, min, max, _kernel_name(min, max, False))


def _clamp_mask(self, min, max):
    if min is not None and max is not None:
        return (self >= min) & (self <= max)
    return (self >= min) if min is not None else (self <= max)


def _clamp_min_max_backward(F, grad, self, min, max, grad_input_mask):
    """PyTorch's clamp_backward_min_max: a bound gets the gradient where it is the result (``min`` only while
    ``min < max``; ``max`` also where ``max < min``)."""
    g_min = g_max = None
    if min is not None and max is not None:
        if grad_input_mask[0]:
            g_min = F.where((self < min) & (min < max), grad, 0.0)
        if grad_input_mask[1]:
            g_max = F.where((self > max) | (max < min), grad, 0.0)
    elif min is not None and grad_input_mask[0]:
        g_min = F.where(self < min, grad, 0.0)
    elif max is not None and grad_input_mask[1]:
        g_max = F.where(self > max, grad, 0.0)
    return g_min, g_max


clamp_spec = defop(
    "clamp",
    _clamp,
    node="ClampBackward1",
    self=lambda F, grad, self, min, max: F.where(_clamp_mask(self, min, max), grad, 0.0),
)
clamp_tensor_spec = defop(
    "clamp_tensor",
    _clamp_tensor,
    inputs=("self", "min", "max"),
    node="ClampBackward0",
    self=lambda F, grad, self, min, max: F.where(_clamp_mask(self, min, max), grad, 0.0),
    **{"min, max": _clamp_min_max_backward},
)
clamp_min_spec = defop(
    "clamp_min",
    lambda self, min: _clamp(self, min, None),
    self=lambda F, grad, self, min: F.where(self >= min, grad, 0.0),
)
clamp_max_spec = defop(
    "clamp_max",
    lambda self, max: _clamp(self, None, max),
    self=lambda F, grad, self, max: F.where(self <= max, grad, 0.0),
)
clamp_min_tensor_spec = defop(
    "clamp_min_tensor",
    lambda self, min: _clamp_tensor(self, min, None),
    inputs=("self", "min"),
    node="ClampMinBackward1",
    self=lambda F, grad, self, min: F.where(self >= min, grad, 0.0),
    min=lambda F, grad, self, min: F.where(self < min, grad, 0.0),
)
clamp_max_tensor_spec = defop(
    "clamp_max_tensor",
    lambda self, max: _clamp_tensor(self, None, max),
    inputs=("self", "max"),
    node="ClampMaxBackward1",
    self=lambda F, grad, self, max: F.where(self <= max, grad, 0.0),
    max=lambda F, grad, self, max: F.where(self > max, grad, 0.0),
)


def _clamp_args(min, max):
    """``(spec, bounds)`` for clamp, read as PyTorch's argument parser reads them: tensor bounds, or numbers; beside
    a number, a 0-d tensor that does not require grad counts as a number, and any other tensor is refused."""
    t_min, t_max = isinstance(min, Tensor), isinstance(max, Tensor)
    if (t_min or min is None) and (t_max or max is None) and (t_min or t_max):
        return clamp_tensor_spec, [min, max]
    bounds = []
    for b, name in ((min, "min"), (max, "max")):
        if isinstance(b, Tensor):
            if b._data.ndim or b._requires_grad:
                got = ", ".join(
                    ["Tensor"] + [type(v).__name__ if not isinstance(v, Tensor) else "Tensor" for v in (min, max)]
                )
                raise TypeError(
                    f"clamp() received an invalid combination of arguments - got ({got}), but expected "
                    "one of: (Tensor input, Tensor min = None, Tensor max = None) or (Tensor input, "
                    "Number min = None, Number max = None)"
                )
            b = b.item()
        bounds.append(None if b is None else operand(b, "clamp", name))
    return clamp_spec, bounds


@public("clamp", "clip")
def clamp(input, min=None, max=None):
    """Limit values to [min, max], elementwise; either bound may be None.

    Number bounds give ``ClampBackward1``; tensor bounds (broadcast against
    ``input``) give ``ClampBackward0``, whose ``next_functions`` are
    ``input``'s, ``min``'s and ``max``'s (``None`` for a missing bound).  The
    gradient passes to ``input`` where ``min <= x <= max``, and to a bound
    where it is the result (PyTorch's ``clamp_backward_min_max``; where
    ``min > max`` the result is ``max`` and only ``max`` gets it).  The result
    has the promoted dtype of the input and the bounds (a float bound on an
    integer tensor gives the default float dtype); NaN in the input or a
    bound gives NaN.

    Raises
    ------
    RuntimeError
        When both bounds are None; when shapes do not broadcast.
    NotImplementedError
        For a bool result with number bounds (PyTorch's "clamp_scalar_cpu" not implemented for 'Bool').
    """
    check_tensor("clamp", "input", input)
    spec, (lo, hi) = _clamp_args(min, max)
    return apply(spec, (input, lo, hi))


@public("clamp_", "clip_", function=False)
def clamp_(self, min=None, max=None):
    """In-place :meth:`clamp` (``ClampBackward1``, or ``ClampBackward0`` with tensor bounds)."""
    spec, (lo, hi) = _clamp_args(min, max)
    return inplace(self, spec, (self, lo, hi))


def _one_sided(name, scalar_spec, tensor_spec, self, bound, op=apply):
    """``clamp_min``/``clamp_max`` (and their in-place forms with ``op=inplace``): a tensor bound or a number."""
    if isinstance(bound, Tensor):
        return op(tensor_spec, (self, bound)) if op is apply else op(self, tensor_spec, (self, bound))
    b = operand(bound, name if op is apply else name + "_", name[6:])
    return op(scalar_spec, (self, b)) if op is apply else op(self, scalar_spec, (self, b))


def _one_sided_doc(name, scalar_spec, tensor_spec):
    side = "below" if name == "clamp_min" else "above"
    return (
        f"``clamp({name[6:]}=bound)``: values limited from {side} by a number "
        f"(``{scalar_spec.node_cls.__name__}``) or a tensor broadcast against ``input`` "
        f"(``{tensor_spec.node_cls.__name__}``, which also passes the gradient to the bound where it is the "
        "result).\n\n    The gradient passes to ``input`` where it is kept (ties included). Same shape as the "
        "broadcast of ``input`` and the bound, the promoted dtype (a float bound on an integer tensor gives the "
        "default float dtype); NaN in either gives NaN, as in PyTorch. Raises TypeError for a bound that is "
        "neither a number nor a tensor, NotImplementedError for a bool input with a number bound."
    )


@public("clamp_min")
def clamp_min(input, min):  # noqa: A002 - PyTorch's argument name
    check_tensor("clamp_min", "input", input)
    return _one_sided("clamp_min", clamp_min_spec, clamp_min_tensor_spec, input, min)


@public("clamp_max")
def clamp_max(input, max):  # noqa: A002 - PyTorch's argument name
    check_tensor("clamp_max", "input", input)
    return _one_sided("clamp_max", clamp_max_spec, clamp_max_tensor_spec, input, max)


@public("clamp_min_", function=False)
def clamp_min_(self, min):  # noqa: A002
    """In-place :func:`clamp_min`."""
    return _one_sided("clamp_min", clamp_min_spec, clamp_min_tensor_spec, self, min, inplace)


@public("clamp_max_", function=False)
def clamp_max_(self, max):  # noqa: A002
    """In-place :func:`clamp_max`."""
    return _one_sided("clamp_max", clamp_max_spec, clamp_max_tensor_spec, self, max, inplace)


clamp_min.__doc__ = _one_sided_doc("clamp_min", clamp_min_spec, clamp_min_tensor_spec)
clamp_max.__doc__ = _one_sided_doc("clamp_max", clamp_max_spec, clamp_max_tensor_spec)


# -- binary arithmetic -----------------------------------------------------------------------------------------
def _in_float32(op, a, b):
    """``op(a, b)`` (a multiplication or division) of a float16 array ``a`` and a Python number ``b``, computed in
    float32 and rounded once to float16, as PyTorch's CPU mul and div kernels take the number (as ``opmath_t``,
    float): NumPy would round ``b`` to float16 first (``x.half() * 0.1`` then differs from PyTorch's in a third of
    its elements, and ``x.half() * 100000`` is inf).  Add and sub round the number first, as NumPy does."""
    return as_array(op(a.astype(np.float32), b).astype(np.float16))


def _half_formula(op, grad, other):
    """``op(grad, other)`` in mul's and div's formulas for a float16 array gradient in a plain pass: a number, or a
    0-d ``other`` beside a gradient with dimensions, in float32 and rounded once, as the forward does
    (:func:`_in_float32`, :func:`_half_product`)."""
    if other.__class__ in _NUMBERS or (grad.ndim > 0 and getattr(other, "ndim", 1) == 0):
        return _in_float32(op, grad, float(other))
    return op(grad, other)


_NUMBERS = (float, int)
_F16 = np.dtype(np.float16)  # (NumPy's dtypes are one object each: an array of float16 has this one)


def _half_product(op, self, a, b, other):
    """``op(a, b)`` (mul or div) where the promoted ``a`` is float16: a Python number, or a 0-d ``other`` beside a
    ``self`` with dimensions, is read as a number, in float32, as PyTorch's CPU mul and div kernels read it
    (:func:`_in_float32`; NumPy would cast it to float16 first)."""
    if other.__class__ in _NUMBERS or (getattr(other, "ndim", 1) == 0 and self.ndim > 0):
        return _in_float32(op, a, float(other))
    return as_array(op(a, b))


def _add(self, other, alpha=1):
    if other.__class__ is float and alpha == 1 and self.dtype.kind == "f":  # prep's first case, without the call
        return self + other
    a, b = prep(self, other)
    return a + b if alpha == 1 else a + alpha * b


def _sub_check(a, b) -> None:
    """PyTorch's ``sub_check``: no bool operand (a Python bool counts as one)."""
    ba = a.dtype.kind == "b" if hasattr(a, "dtype") else isinstance(a, bool)
    bb = b.dtype.kind == "b" if hasattr(b, "dtype") else isinstance(b, bool)
    if ba and bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    if ba or bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _sub(self, other, alpha=1):
    kind = self.dtype.kind
    if other.__class__ is float and alpha == 1 and kind == "f":  # prep's first case, without the call
        return self - other
    if kind == "b" or getattr(other, "dtype", self.dtype).kind == "b" or other is True or other is False:
        _sub_check(self, other)
    a, b = prep(self, other)
    return a - b if alpha == 1 else a - alpha * b


def _mul(self, other):
    a, b = (self, other) if other.__class__ in _NUMBERS and self.dtype.kind == "f" else prep(self, other)
    return a * b if a.dtype is not _F16 else _half_product(np.multiply, self, a, b, other)


def _div(self, other):
    if self.dtype is _F16 and other.__class__ in _NUMBERS:
        return _in_float32(np.true_divide, self, other)
    a, b = prep(self, other)
    if a.dtype.kind in "biu" and getattr(b, "dtype", np.dtype("i8")).kind in "biu" and not isinstance(b, float):
        ft = _dtype.get_default_dtype().np  # true division of integers gives the default float dtype
        a = a.astype(ft)
        b = b.astype(ft) if hasattr(b, "astype") else ft.type(b)
    return as_array(a / b) if a.dtype is not _F16 else _half_product(np.true_divide, self, a, b, other)


add_spec = defop(
    "add",
    _add,
    inputs=("self", "other"),
    self=lambda F, grad: grad,
    other=lambda F, grad, alpha: grad if alpha == 1 else F.mul_scalar(grad, alpha),
)
sub_spec = defop(
    "sub",
    _sub,
    inputs=("self", "other"),
    self=lambda F, grad: grad,
    other=lambda F, grad, alpha: -grad if alpha == 1 else F.mul_scalar(-grad, alpha),
)


def _rsub(self, other, alpha=1):
    _sub_check(self, other)
    a, b = prep(self, other)
    return as_array(b - a if alpha == 1 else b - alpha * a)


rsub_spec = defop(
    "rsub", _rsub, node="RsubBackward1", self=lambda F, grad, alpha: -grad if alpha == 1 else F.mul_scalar(-grad, alpha)
)
mul_spec = defop(
    "mul",
    _mul,
    inputs=("self", "other"),
    self=lambda F, grad, other: grad * other if grad.dtype is not _F16 else _half_formula(np.multiply, grad, other),
    other=lambda F, grad, self: grad * self,
)
div_spec = defop(
    "div",
    _div,
    inputs=("self", "other"),
    self=lambda F, grad, other: grad / other if grad.dtype is not _F16 else _half_formula(np.true_divide, grad, other),
    other=lambda F, grad, self, other: -grad * ((self / other) / other),
)


def _check_int_divisor(b) -> None:
    """PyTorch's error for an integer division by zero (NumPy would give 0 with a warning)."""
    if array_module(b).any(b == 0) if hasattr(b, "dtype") else b == 0:
        raise RuntimeError("ZeroDivisionError")


def _div_mode(self, other, rounding_mode):
    a, b = prep(self, other)
    if rounding_mode not in ("floor", "trunc"):
        raise ValueError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )
    kind = a.dtype.kind
    if kind == "b":
        raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool'")
    xp = array_module(a)
    if kind in "iu":
        _check_int_divisor(b)
        q = as_array(xp.floor_divide(a, b))
        if rounding_mode == "trunc":  # C's integer division: round toward zero, exact for every int64
            q = as_array(q + ((xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))))
        return q
    if rounding_mode == "floor":  # NumPy's floor_divide is PyTorch's div_floor: (a - fmod(a, b)) / b, rounded
        return as_array(xp.floor_divide(a, b))
    q = a / b
    return as_array(xp.trunc(q))


div_mode_spec = defop(
    "div_mode",
    _div_mode,
    inputs=("self", "other"),
    node="DivBackward2",
    self=lambda F, grad: F.zeros_like(grad),
    other=lambda F, grad: F.zeros_like(grad),
)


def _remainder(self, other):
    """PyTorch's remainder: ``r = fmod(a, b)``, plus ``b`` where ``r`` is not zero and its sign differs from
    ``b``'s; so a zero result keeps the dividend's sign (``-4. % 2`` is ``-0.``), where NumPy's takes the
    divisor's."""
    a, b = prep(self, other)
    kind = a.dtype.kind
    if kind == "b":
        raise NotImplementedError("\"remainder_cpu\" not implemented for 'Bool'")
    xp = array_module(a)
    if kind in "iu":
        _check_int_divisor(b)
        return as_array(xp.remainder(a, b))
    r = xp.fmod(a, b)
    if not isinstance(r, xp.ndarray):
        r = xp.asarray(r)
    xp.add(r, b, out=r, where=(r != 0) & ((r < 0) != (b < 0)))
    return r


def _number_first(fn):
    """``fn(number, tensor)`` as a forward of the tensor: the number becomes a 0-d array of the result dtype."""

    def forward(other, self):
        return fn(array_module(other).asarray(self, dtype=result_type(other, self)), other)

    return forward


remainder_spec = defop(
    "remainder",
    _remainder,
    inputs=("self", "other"),
    node="RemainderBackward1",
    self=lambda F, grad: grad,
    other=lambda F, grad, self, other: -grad * F.div_mode(self, other, "floor"),
)
remainder_scalar_spec = defop(
    "remainder_scalar",
    lambda self, other: _remainder(self, other),
    node="RemainderBackward0",
    self=lambda F, grad: grad,
)


def _not_implemented(name):
    def formula(F, grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


# PyTorch records a node named ``NotImplemented`` for an op without a derivative (its backward raises), with an
# edge for each tensor input: ``a // b`` has two, ``a // 2``, ``5 // a`` and ``5 % a`` one
_NOT_IMPLEMENTED = "torch::autograd::NotImplemented"
floor_divide_spec = defop(
    "floor_divide",
    lambda self, other: _div_mode(self, other, "floor"),
    inputs=("self", "other"),
    node=_NOT_IMPLEMENTED,
    self=_not_implemented("floor_divide"),
    other=_not_implemented("floor_divide"),
)
floor_divide_scalar_spec = defop(
    "floor_divide_scalar",
    lambda self, other: _div_mode(self, other, "floor"),
    node=_NOT_IMPLEMENTED,
    self=_not_implemented("floor_divide"),
)
rfloor_divide_spec = defop(
    "rfloor_divide",
    _number_first(lambda a, b: _div_mode(a, b, "floor")),
    inputs=("other",),
    node=_NOT_IMPLEMENTED,
    other=_not_implemented("floor_divide"),
)
rremainder_spec = defop(
    "rremainder",
    _number_first(_remainder),
    inputs=("other",),
    node=_NOT_IMPLEMENTED,
    other=_not_implemented("remainder"),
)


# -- powers -----------------------------------------------------------------------------------------------------
_POW_BOOL = "\"pow\" not implemented for 'Bool'"


def _pow(self, exponent):
    if self.dtype.kind != "f":
        d = result_type(self, exponent)  # a bool tensor to an int power is int64, to a float power float32
        if d.kind == "b":  # to the power True or False: PyTorch's shortcuts (a copy, ones) need no kernel
            return as_array(self.copy() if exponent else array_module(self).ones_like(self))
        if d.kind in "iu" and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        self = self.astype(d, copy=False)
    if exponent == 2:
        return as_array(self * self)
    if self.dtype.kind != "f":
        return as_array(self**exponent)
    special = _POW_SPECIAL.get(exponent)
    if special is not None:  # PyTorch's kernel: sqrt, rsqrt, ... for these exponents ((-inf) ** 0.5 is nan)
        a = self.astype(np.float32) if self.dtype == np.float16 else self  # half: computed in float, rounded once
        return as_array(special(array_module(a), a).astype(self.dtype, copy=False))
    return as_array(self ** self.dtype.type(exponent))


_POW_SPECIAL = {
    0.5: lambda xp, a: xp.sqrt(a),
    -0.5: lambda xp, a: 1 / xp.sqrt(a),
    3: lambda xp, a: a * a * a,
    -1: lambda xp, a: 1 / a,
    -2: lambda xp, a: 1 / (a * a),
}


def _int_pow(a, b):
    """PyTorch's integer power (``powi``): a negative exponent gives 1 for a base of 1, +-1 for -1, else 0, where
    NumPy refuses."""
    xp = array_module(b if hasattr(b, "shape") else a)
    neg = b < 0
    if not xp.any(neg):
        return as_array(a**b)
    out = a ** xp.where(neg, 0, b)
    odd = (-b) % 2 == 1
    at_neg = xp.where(a == 1, 1, xp.where(a == -1, xp.where(odd, -1, 1), 0))
    return as_array(xp.where(neg, at_neg, out).astype(out.dtype, copy=False))


def _pow_backward(F, grad, self, exponent):
    if exponent == 0:  # PyTorch: exactly zero, whatever the base
        return F.zeros_like(self)
    return grad * F.mul_scalar(F.pow(self, exponent - 1), exponent)


pow_spec = defop("pow", _pow, node="PowBackward0", self=_pow_backward)


def _c_pow(a, b):
    """C's ``pow`` (PyTorch's kernel for a tensor exponent) on float arrays.  NumPy's power differs at a base of
    -inf or -0.0 with a non-integer exponent ((-inf) ** 0.5 is inf in C, nan in NumPy), and ``ndarray ** 0-d``
    would take NumPy's sqrt/square shortcuts; the ufunc is called, then those bases are put right."""
    xp = array_module(a)
    r = xp.power(a, b)
    neg = xp.isneginf(a) | ((a == 0) & xp.signbit(a))
    if not xp.any(neg):
        return as_array(r)
    a, b = xp.broadcast_arrays(a, b)
    odd = xp.abs(b) % 2 == 1
    big = (b > 0) == xp.isneginf(a)  # the magnitude is inf: -inf to a positive power, -0.0 to a negative one
    mag = xp.where(big, xp.inf, 0.0).astype(r.dtype)
    fixed = xp.where(odd, -mag, mag)
    fix = neg & (b != 0) & ~xp.isnan(b)
    return as_array(xp.where(fix, fixed, r))


def _pow_tensor(self, exponent):
    a, b = prep(self, exponent)
    kind = a.dtype.kind
    if kind == "b":
        raise NotImplementedError(_POW_BOOL)
    if kind in "iu":
        return _int_pow(a, b)
    return _c_pow(a, b)


pow_tensor_spec = defop(
    "pow_tensor",
    _pow_tensor,
    inputs=("self", "exponent"),
    node="PowBackward1",
    self=lambda F, grad, self, exponent: F.where(
        exponent == 0.0, 0.0, grad * (exponent * F.pow_tensor(self, F.sub_scalar(exponent, 1)))
    ),
    exponent=lambda F, grad, self, exponent, result: (
        grad * F.where((self == 0.0) & (exponent >= 0.0), 0.0, result * F.log(self))
    ),
)


def _pow_scalar_base(exponent, self):
    e, base = prep(exponent, self)
    kind = e.dtype.kind
    if kind == "b":
        raise NotImplementedError(_POW_BOOL)
    if kind in "iu":
        return _int_pow(base, e)
    return _c_pow(e.dtype.type(base), e)


def _pow_base_backward(F, grad, self, exponent, result):
    log_base = float(np.log(self)) if self > 0 else (float("-inf") if self == 0 else float("nan"))
    if self == 0:
        return grad * F.where(exponent >= 0.0, 0.0, F.mul_scalar(result, log_base))
    return grad * F.mul_scalar(result, log_base)


pow_base_spec = defop(
    "pow_scalar_base", _pow_scalar_base, inputs=("exponent",), node="PowBackward2", exponent=_pow_base_backward
)


@public("pow")
def pow(input, exponent):  # noqa: A001 - PyTorch's name
    """``input ** exponent`` (``PowBackward0`` for a number exponent, ``PowBackward1`` for a tensor;
    ``torch.pow(number, tensor)`` is ``PowBackward2``)."""
    if not isinstance(input, Tensor):
        if is_number(input) and isinstance(exponent, Tensor):
            return apply(pow_base_spec, (exponent, num(input)))
        check_tensor("pow", "input", input)
    e = operand(exponent, "pow", "exponent")
    if isinstance(e, Tensor):
        return apply(pow_tensor_spec, (input, e))
    return apply(pow_spec, (input, e))


@public("square")
def square(input):
    """``input ** 2`` (``PowBackward0``, as PyTorch computes it)."""
    check_tensor("square", "input", input)
    return apply(pow_spec, (input, 2))


@public("pow_", function=False)
def pow_(self, exponent):
    """In-place :meth:`pow`."""
    e = operand(exponent, "pow_", "exponent")
    if isinstance(e, Tensor):
        return inplace(self, pow_tensor_spec, (self, e))
    return inplace(self, pow_spec, (self, e))


# -- where, maximum, minimum, masked_fill ------------------------------------------------------------------------
def _where(condition, self, other):
    if condition.dtype.kind != "b":
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_dtype.word(condition.dtype)}"
        )
    xp = array_module(condition)
    if hasattr(self, "dtype") and hasattr(other, "dtype"):
        a, b = (self, other) if self.dtype == other.dtype else promote(self, other)
        if a.shape != condition.shape or b.shape != condition.shape:
            broadcast_shapes(condition.shape, a.shape, b.shape)
        return as_array(xp.where(condition, a, b))
    rt = result_type(self, other)  # a number branch: two numbers give int64 or the default float dtype
    a = self.astype(rt, copy=False) if hasattr(self, "dtype") else rt.type(self)
    b = other.astype(rt, copy=False) if hasattr(other, "dtype") else rt.type(other)
    broadcast_shapes(condition.shape, a.shape, b.shape)
    return as_array(xp.where(condition, a, b))


where_spec = defop(
    "where",
    _where,
    inputs=("condition", "self", "other"),
    nondiff=("condition",),
    self=lambda F, grad, condition: F.where(condition, grad, 0.0),
    other=lambda F, grad, condition: F.where(condition, 0.0, grad),
)


@public("where", function=False)
def _where_method(self, condition, other):
    """``self.where(condition, other)``: ``torch.where(condition, self, other)`` (``WhereBackward0``); ``other`` may
    be a number."""
    check_tensor("where", "condition", condition)
    return apply(where_spec, (condition, self, operand(other, "where", "other")))


@public("where", method=False)
def where(condition, input=None, other=None):
    """``input`` where ``condition`` holds, else ``other`` (``WhereBackward0``); either branch may be a number.

    The gradient goes to ``input`` where the condition holds and to ``other``
    elsewhere.  ``torch.where(condition)`` alone returns the indices of the
    true elements, as ``nonzero(as_tuple=True)`` does.

    Raises
    ------
    RuntimeError
        A condition that is not bool ("where expected condition to be a
        boolean tensor"); shapes that do not broadcast.
    """
    if input is None and other is None:
        check_tensor("where", "condition", condition)
        if condition.__class__ is BatchedTensor:
            raise RuntimeError(
                "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over "
                "aten::where. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
                "feature."
            )
        idx = array_module(condition._data).nonzero(condition._data)
        return tuple(Tensor._make(as_array(i).astype(np.int64), condition._device) for i in idx)
    check_tensor("where", "condition", condition)
    return apply(where_spec, (condition, operand(input, "where", "input"), operand(other, "where", "other")))


def _extremum(np_fn):
    def forward(self, other):
        a, b = prep(self, other)
        return as_array(np_fn(b, a))  # PyTorch keeps self on a tie (-0.0 and 0.0); NumPy its second operand

    return forward


maximum_spec = defop(
    "maximum",
    _extremum(np.maximum),
    inputs=("self", "other"),
    self=lambda F, grad, self, other: F.masked_fill(
        F.where(self == other, F.div_scalar(grad, 2), grad), self < other, 0
    ),
    other=lambda F, grad, self, other: F.masked_fill(
        F.where(self == other, F.div_scalar(grad, 2), grad), self > other, 0
    ),
)
minimum_spec = defop(
    "minimum",
    _extremum(np.minimum),
    inputs=("self", "other"),
    self=lambda F, grad, self, other: F.masked_fill(
        F.where(self == other, F.div_scalar(grad, 2), grad), self > other, 0
    ),
    other=lambda F, grad, self, other: F.masked_fill(
        F.where(self == other, F.div_scalar(grad, 2), grad), self < other, 0
    ),
)


@public("maximum")
def maximum(input, other):
    """Elementwise larger value of two tensors (``MaximumBackward0``); ties split the gradient evenly."""
    check_tensor("maximum", "input", input)
    check_tensor("maximum", "other", other, 2)
    return apply(maximum_spec, (input, other))


@public("minimum")
def minimum(input, other):
    """Elementwise smaller value of two tensors (``MinimumBackward0``); ties split the gradient evenly."""
    check_tensor("minimum", "input", input)
    check_tensor("minimum", "other", other, 2)
    return apply(minimum_spec, (input, other))


def _masked_fill(self, mask, value):
    if mask.dtype.kind != "b":
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {_dtype.ctype(mask.dtype)}"
        )
    xp = array_module(self)
    v = value if not hasattr(value, "dtype") else value.astype(self.dtype)
    return as_array(xp.where(mask, self.dtype.type(v) if not hasattr(v, "dtype") else v, self))


masked_fill_spec = defop(
    "masked_fill",
    lambda self, mask, value: _masked_fill(self, mask, value),
    inputs=("self", "mask"),
    nondiff=("mask",),
    node="MaskedFillBackward0",
    self=lambda F, grad, mask: F.masked_fill(grad, mask, 0),
)
masked_fill_tensor_spec = defop(
    "masked_fill_tensor",
    _masked_fill,
    inputs=("self", "mask", "value"),
    nondiff=("mask",),
    node="MaskedFillBackward1",
    self=lambda F, grad, mask: F.masked_fill(grad, mask, 0),
    value=lambda F, grad, mask: F.sum(F.masked_select(grad, mask)),
)


def _masked_select(self, mask):
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    xp = array_module(self)
    a, m = xp.broadcast_arrays(self, mask)
    return as_array(a[m])


def _masked_scatter(self, mask, source):
    if mask.dtype.kind != "b":
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {_dtype.word(mask.dtype)}"
        )
    xp = array_module(self)
    out = self.copy()
    m = xp.broadcast_to(mask, self.shape)
    n = int(m.sum())
    if n > source.size:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    out[m] = source.reshape(-1)[:n]
    return out


def _masked_scatter_backward(grad_output, mask, sizes):
    xp = array_module(grad_output)
    sel = grad_output[xp.broadcast_to(mask, grad_output.shape)]
    out = xp.zeros(int(np.prod(sizes)), dtype=grad_output.dtype)
    out[: sel.size] = sel
    return out.reshape(sizes)


masked_select_spec = defop(
    "masked_select",
    _masked_select,
    inputs=("self", "mask"),
    nondiff=("mask",),
    self=lambda F, grad, self_sym_sizes, mask: F.masked_scatter(F.new_zeros(self_sym_sizes, grad), mask, grad),
)
masked_scatter_spec = defop(
    "masked_scatter",
    _masked_scatter,
    inputs=("self", "mask", "source"),
    nondiff=("mask",),
    self=lambda F, grad, mask: F.masked_fill(grad, mask, 0),
    source=lambda F, grad, mask, source_sym_sizes: F.masked_scatter_backward(grad, mask, source_sym_sizes),
)
defop(
    "masked_scatter_backward",
    _masked_scatter_backward,
    inputs=("grad_output", "mask"),
    nondiff=("mask",),
    grad_output=lambda F, grad, mask, grad_output_sym_sizes: F.masked_scatter(
        F.new_zeros(grad_output_sym_sizes, grad), mask, grad
    ),
)


@public("masked_select")
def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` (broadcast) is True, as a 1-D tensor (``MaskedSelectBackward0``)."""
    check_tensor("masked_select", "input", input)
    return apply(masked_select_spec, (input, mask))


@public("masked_scatter")
def masked_scatter(input, mask, source):
    """A copy of ``input`` with ``source``'s first elements written where ``mask`` is True
    (``MaskedScatterBackward0``)."""
    check_tensor("masked_scatter", "input", input)
    return apply(masked_scatter_spec, (input, mask, source))


@public("masked_scatter_", function=False)
def masked_scatter_(self, mask, source):
    """In-place :func:`masked_scatter` (``MaskedScatterBackward0``)."""
    return inplace(self, masked_scatter_spec, (self, mask, source))


@public("masked_fill")
def masked_fill(input, mask, value):
    """``value`` where ``mask`` is True (``MaskedFillBackward0``, or ``MaskedFillBackward1`` for a 0-d tensor
    value, which then gets the summed gradient of the filled places)."""
    check_tensor("masked_fill", "input", input)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        return apply(masked_fill_tensor_spec, (input, mask, value))
    return apply(masked_fill_spec, (input, mask, num(value)))


@public("masked_fill_", function=False)
def masked_fill_(self, mask, value):
    """In-place :meth:`masked_fill`."""
    if isinstance(value, Tensor):
        return inplace(self, masked_fill_tensor_spec, (self, mask, value))
    return inplace(self, masked_fill_spec, (self, mask, num(value)))


# -- the public arithmetic surface -------------------------------------------------------------------------------
def _input(input, other, fn):
    """``input`` of ``torch.add(2, t)`` and its kind: PyTorch wraps a number beside a tensor into a 0-d tensor (a
    "wrapped number": it takes part in type promotion as a number, and its edge in the graph is None)."""
    if not isinstance(input, Tensor) and is_number(input) and isinstance(other, Tensor):
        n = num(input)
        return Tensor._make(np.asarray(n, dtype=result_type(other._data, n)), _CPU)
    check_tensor(fn, "input", input)
    return input


@public("add")
def add(input, other, *, alpha=1):
    """``input + alpha * other`` (``AddBackward0``); either may be a number (``torch.add(2, t)``), with PyTorch's
    type promotion.  Raises RuntimeError when the shapes do not broadcast, TypeError for other arguments."""
    input = _input(input, other, "add")
    return apply(add_spec, (input, operand(other, "add"), alpha))


@public("sub", "subtract")
def sub(input, other, *, alpha=1):
    """``input - alpha * other`` (``SubBackward0``); either may be a number.  Bool operands raise PyTorch's
    RuntimeError ("Subtraction, the `-` operator, with a bool tensor is not supported")."""
    input = _input(input, other, "sub")
    return apply(sub_spec, (input, operand(other, "sub"), alpha))


@public("mul", "multiply")
def mul(input, other):
    """``input * other`` (``MulBackward0``); either may be a number."""
    input = _input(input, other, "mul")
    return apply(mul_spec, (input, operand(other, "mul")))


@public("div", "divide", "true_divide")
def div(input, other, *, rounding_mode=None):
    """``input / other``: true division (``DivBackward0``; integers give the default float dtype), or rounded
    with ``rounding_mode="floor"``/``"trunc"`` (``DivBackward2``, zero gradient); either may be a number.
    Integer division by zero with a rounding mode raises RuntimeError ("ZeroDivisionError")."""
    input = _input(input, other, "div")
    o = operand(other, "div")
    if rounding_mode is not None:
        return apply(div_mode_spec, (input, o, rounding_mode))
    return apply(div_spec, (input, o))


@public("remainder")
def remainder(input, other):
    """Python's ``%``: the remainder with the divisor's sign (``RemainderBackward1``, or
    ``RemainderBackward0`` for a number divisor).  d/dself is 1; d/dother is ``-floor(self / other)``.

    Either argument may be a number: ``torch.remainder(5.0, t)`` is ``5.0 % t``, which PyTorch does not
    differentiate (``grad_fn=<NotImplemented>``; backward raises "derivative for aten::remainder is not
    implemented").  A zero result keeps the dividend's sign (``-4. % 2`` is ``-0.``), as in PyTorch.  The
    result has the promoted dtype of the two (a float number and an integer tensor give the default dtype).

    Raises
    ------
    RuntimeError
        "ZeroDivisionError" for an integer division by zero.
    NotImplementedError
        For two bool operands ("remainder_cpu" not implemented for 'Bool').
    TypeError
        When neither argument is a tensor, or one is neither a tensor nor a number.
    """
    if not isinstance(input, Tensor) and is_number(input) and isinstance(other, Tensor):
        return apply(rremainder_spec, (other, num(input)))
    check_tensor("remainder", "input", input)
    o = operand(other, "remainder")
    return apply(remainder_spec if isinstance(o, Tensor) else remainder_scalar_spec, (input, o))


@public("floor_divide")
def floor_divide(input, other):
    """``input // other`` rounded down.  Not differentiable: as in PyTorch, on a tensor that requires grad the
    result has ``grad_fn=<NotImplemented>`` (an edge for each tensor argument) and backward raises "derivative
    for aten::floor_divide is not implemented".  Integer division by zero raises RuntimeError
    ("ZeroDivisionError"); bool operands raise NotImplementedError."""
    check_tensor("floor_divide", "input", input)
    o = operand(other, "floor_divide")
    return apply(floor_divide_spec if isinstance(o, Tensor) else floor_divide_scalar_spec, (input, o))


@public("reciprocal_", function=False)
def _reciprocal_(self):
    """In-place :meth:`reciprocal`."""
    return inplace(self, SPEC_RECIPROCAL, (self,))


SPEC_RECIPROCAL = SPECS["reciprocal"]


def _install_operators():
    """``+ - * / ** % //`` and their reflected and in-place forms, as PyTorch's Tensor has them."""

    def make(spec):
        def op(self, other):
            o = as_operand(other)
            return NotImplemented if o is None else apply(spec, (self, o))

        return op

    T = Tensor
    T.__add__ = T.__radd__ = make(add_spec)
    T.__sub__ = make(sub_spec)
    T.__mul__ = T.__rmul__ = make(mul_spec)
    T.__truediv__ = make(div_spec)

    def rsub(self, other):
        o = as_operand(other)
        return NotImplemented if o is None else apply(rsub_spec, (self, o))

    def rtruediv(self, other):
        o = as_operand(other)
        if o is None:
            return NotImplemented
        return apply(mul_spec, (apply(SPEC_RECIPROCAL, (self,)), o))  # PyTorch: reciprocal(self) * other

    def pow_(self, other):
        o = as_operand(other)
        if o is None:
            return NotImplemented
        return apply(pow_tensor_spec if isinstance(o, Tensor) else pow_spec, (self, o))

    def rpow(self, other):
        o = as_operand(other)
        return NotImplemented if o is None else apply(pow_base_spec, (self, o))

    def mod(self, other):
        o = as_operand(other)
        if o is None:
            return NotImplemented
        return apply(remainder_spec if isinstance(o, Tensor) else remainder_scalar_spec, (self, o))

    def rmod(self, other):
        o = as_operand(other)
        return NotImplemented if o is None else apply(rremainder_spec, (self, o))

    def floordiv(self, other):
        o = as_operand(other)
        if o is None:
            return NotImplemented
        return apply(floor_divide_spec if isinstance(o, Tensor) else floor_divide_scalar_spec, (self, o))

    def rfloordiv(self, other):
        o = as_operand(other)
        return NotImplemented if o is None else apply(rfloor_divide_spec, (self, o))

    def neg_(self):
        return apply(neg, (self,))

    T.__rsub__ = rsub
    T.__rtruediv__ = rtruediv
    T.__pow__ = pow_
    T.__rpow__ = rpow
    T.__mod__ = mod
    T.__rmod__ = rmod
    T.__floordiv__ = floordiv
    T.__rfloordiv__ = rfloordiv
    T.__neg__ = neg_
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: self.abs()
    T.__iadd__ = lambda self, other: self.add_(other)
    T.__isub__ = lambda self, other: self.sub_(other)
    T.__imul__ = lambda self, other: self.mul_(other)
    T.__itruediv__ = lambda self, other: self.div_(other)


def _inplace_arith(name, spec):
    def op_(self, other, *, alpha=None, rounding_mode=None):
        o = as_operand(other)
        if o is None:
            raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, not {type_name(other)}")
        if rounding_mode is not None and name == "div":
            return inplace(self, div_mode_spec, (self, o, rounding_mode))
        args = (self, o) if alpha is None else (self, o, alpha)
        return inplace(self, spec, args)

    op_.__name__ = name + "_"
    op_.__doc__ = (
        f"In place ``self {name} other``; bumps ``_version``.  Raises ``RuntimeError`` on a leaf that "
        "requires grad while grad mode is on (allowed under ``no_grad``), and when the result dtype "
        'cannot be stored in ``self`` ("can\'t be cast"). On a non-leaf the history is rebased: '
        f"``grad_fn`` becomes ``{spec.node_cls.__name__}``."
    )
    return op_


for _n, _s in (("add", add_spec), ("sub", sub_spec), ("mul", mul_spec), ("div", div_spec)):
    public(_n + "_", function=False)(_inplace_arith(_n, _s))


@public("remainder_", function=False)
def remainder_(self, other):
    """In-place :meth:`remainder`."""
    o = operand(other, "remainder_")
    return inplace(self, remainder_spec if isinstance(o, Tensor) else remainder_scalar_spec, (self, o))


_install_operators()


# -- issue 18: logaddexp, xlogy, nan_to_num ---------------------------------------------------------------------------
def _logaddexp(self, other):
    a, b = prep(self, other)
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"logaddexp_cpu\" not implemented for '{_dtype.word(a.dtype)}'")
    xp = array_module(a)
    m = xp.maximum(a, b)
    same_inf = xp.isinf(a) & (a == b)  # inf with inf (or -inf with -inf) is that infinity, not nan
    return as_array(xp.where(same_inf, a, m + xp.log1p(xp.exp(-xp.abs(a - b)))))


logaddexp_spec = defop(
    "logaddexp",
    _logaddexp,
    inputs=("self", "other"),
    self=lambda F, grad, self, other: grad / F.add_scalar(F.exp(other - self), 1),
    other=lambda F, grad, self, other: grad / F.add_scalar(F.exp(self - other), 1),
)
_logaddexp_fn, _logaddexp_ = _two_tensors(
    "logaddexp",
    logaddexp_spec,
    """``log(exp(input) + exp(other))`` without overflow (``LogaddexpBackward0``): float tensors that broadcast
    together; d/dinput is ``1 / (1 + exp(other - input))``.""",
)
public("logaddexp")(_logaddexp_fn)


def _xlogy_number(v, like):
    """A Python number beside an array: the array's float dtype, else the default float dtype."""
    dt = like.dtype if like.dtype.kind == "f" else _dtype.get_default_dtype().np
    return np.asarray(v, dtype=dt)


def _xlogy(self, other):
    if not hasattr(self, "dtype"):
        self = _xlogy_number(self, other)
    if not hasattr(other, "dtype"):
        other = _xlogy_number(other, self)
    a, b = prep(self, other)
    if a.dtype.kind != "f":
        a, b = to_float(a), to_float(b)
    xp = array_module(a)
    return as_array(xp.where((a == 0) & ~xp.isnan(b), a.dtype.type(0), a * xp.log(b)))


def _xlogy_self(F, grad, self, other):
    """PyTorch's ``xlogy(grad, other)``, 0 where ``self == 0`` and ``other <= 0`` (with a number ``other``, only
    ``xlogy(grad, other)``)."""
    if not hasattr(other, "shape"):
        return F.xlogy_scalar_other(grad, other)
    return F.masked_fill(F.xlogy(grad, other), (self == 0) & (other <= 0), 0.0)


def type_like_mask(F, mask, like):
    """A bool mask as ``like``'s dtype, not recorded."""
    if F.records:
        return Tensor._make(mask._data.astype(like._data.dtype), like._device)
    return mask.astype(like.dtype)


xlogy_spec = defop(
    "xlogy",
    _xlogy,
    inputs=("self", "other"),
    self=_xlogy_self,
    other=lambda F, grad, self, other: grad * self / other,
)
xlogy_scalar_self_spec = defop(
    "xlogy_scalar_self",
    _xlogy,
    inputs=("self", "other"),
    node="XlogyBackward1",
    nondiff=("self",),
    other=lambda F, grad, self, other: F.mul_scalar(grad, self) / other,
)
xlogy_scalar_other_spec = defop(
    "xlogy_scalar_other",
    _xlogy,
    node="XlogyBackward2",
    self=_xlogy_self,
)


@public("xlogy")
def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN) (``XlogyBackward0``; a number as
    either argument: ``XlogyBackward1``/``XlogyBackward2``).  Integer input gives the default float dtype."""
    if not isinstance(input, Tensor):
        check_tensor("xlogy", "other", other, 2)
        return apply(xlogy_scalar_self_spec, (input, other))
    check_tensor("xlogy", "input", input)
    if not isinstance(other, Tensor):
        return apply(xlogy_scalar_other_spec, (input, operand(other, "xlogy")))
    return apply(xlogy_spec, (input, other))


@public("xlogy_", function=False)
def xlogy_(self, other):
    """In-place :meth:`xlogy`."""
    if isinstance(other, Tensor):
        return inplace(self, xlogy_spec, (self, other))
    return inplace(self, xlogy_scalar_other_spec, (self, operand(other, "xlogy_")))


def _finite_mask(F, self, like):
    """``isfinite(self)`` as ``like``'s dtype, not recorded (a constant of the formula)."""
    if F.records:
        return Tensor._make(array_module(self._data).isfinite(self._data).astype(like._data.dtype), like._device)
    return array_module(self).isfinite(self).astype(like.dtype)


def _nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    if self.dtype.kind != "f":
        return as_array(self.copy())
    xp = array_module(self)
    info = np.finfo(self.dtype)
    t = self.dtype.type
    hi = t(info.max if posinf is None else posinf)
    lo = t(info.min if neginf is None else neginf)
    out = xp.where(xp.isnan(self), t(nan), self)
    out = xp.where(out == np.inf, hi, out)
    return as_array(xp.where(out == -np.inf, lo, out))


nan_to_num_spec = defop(
    "nan_to_num",
    _nan_to_num,
    self=lambda F, grad, self: grad * _finite_mask(F, self, grad),
)


@public("nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN to ``nan``, +inf to ``posinf`` (default: the dtype's largest value), -inf to ``neginf`` (its smallest)
    (``NanToNumBackward0``; the gradient is 0 where the element was not finite).  Integer input is copied."""
    check_tensor("nan_to_num", "input", input)
    return apply(nan_to_num_spec, (input, float(nan), posinf, neginf))


@public("nan_to_num_", function=False)
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """In-place :meth:`nan_to_num`."""
    return inplace(self, nan_to_num_spec, (self, float(nan), posinf, neginf))


# -- vmap: the batching rules of the entries above (leafkit.func.vmap; ``unary`` ops have theirs) ----------------------
MASKED_SELECT_VMAP_MESSAGE = (
    "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support this because for each "
    "batch this would return a differently shaped Tensor. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues if you need this feature."
)


def _masked_fill_tensor_batched(spec, args, level):
    """A batched 0-d value cannot fill as a 0-d tensor: ``where(mask, value, self)``, the value in self's dtype."""
    self, mask, value = args
    if logical_front(value, level) is None:
        return pointwise(spec, args, level)
    if value._data.dtype != self._data.dtype:
        value = value.to(self.dtype)
    return pointwise(where_spec, (mask, value, self), level)


def _masked_select_batched(spec, args, level):
    """One mask for every sample gives every sample as many elements; a batched mask would not (PyTorch's
    error)."""
    mask = args[1]
    if mask.__class__ is BatchedTensor and mask._level == level:
        raise RuntimeError(MASKED_SELECT_VMAP_MESSAGE)
    return per_sample(spec, args, level)


declare(
    pointwise,
    *("mul_scalar", "div_scalar", "add_scalar", "sub_scalar", "round_decimals", "asinh_", "acosh_", "atanh_"),
    *("fmod", "fmod_tensor", "atan2", "hypot", "lerp", "lerp_tensor", "addcmul", "addcdiv", "rsub_tensor"),
    *("threshold_backward", "tanh_backward", "sigmoid_backward", "clamp", "clamp_tensor", "clamp_min", "clamp_max"),
    *("clamp_min_tensor", "clamp_max_tensor", "add", "sub", "rsub", "mul", "div", "div_mode", "remainder"),
    *("remainder_scalar", "floor_divide", "floor_divide_scalar", "rfloor_divide", "rremainder", "pow", "pow_tensor"),
    *("pow_scalar_base", "where", "maximum", "minimum", "masked_fill"),
)
declare(_masked_fill_tensor_batched, "masked_fill_tensor")
declare(_masked_select_batched, "masked_select")
