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
from .._tensor import Tensor
from ._base import (array_module, as_array, as_operand, broadcast_shapes, check_tensor, is_number, num, operand, prep,
                    promote, result_type, to_float)
from ._registry import apply, defop, public
from .inplace import inplace

_ERR = {"all": "ignore"}


# -- building blocks for the public surface -------------------------------------------------------------------
def unary(name, forward, *, node=None, method=True, function=True, in_place=True, doc=None, **formulas):
    """An op of one tensor: the entry, ``Tensor.<name>()``, ``torch.<name>(input)`` and ``Tensor.<name>_()``."""
    spec = defop(name, forward, node=node, doc=doc, **formulas)

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
    """Forward of a float-valued function of one tensor (integers give the default float dtype)."""
    if errors:
        def forward(self):
            with np.errstate(**_ERR):
                return np_fn(self if self.dtype.kind == "f" else to_float(self))
    else:
        def forward(self):
            return np_fn(self if self.dtype.kind == "f" else to_float(self))
    return forward


def _no_bool(name):
    def check(a):
        if a.dtype.kind == "b":
            raise RuntimeError(f"\"{name}_cpu\" not implemented for 'Bool'")
    return check


# -- scalar helpers that derivative formulas use (PyTorch's Scalar overloads: MulBackward1 ...) ---------------
mul_scalar = defop("mul_scalar", lambda self, other: as_array(self * other), node="MulBackward1",
                   self=lambda F, grad, other: F.mul_scalar(grad, other))
div_scalar = defop("div_scalar", lambda self, other: as_array(self / other), node="DivBackward1",
                   self=lambda F, grad, other: F.div_scalar(grad, other))
add_scalar = defop("add_scalar", lambda self, other, alpha=1: as_array(self + other * alpha), node="AddBackward1",
                   self=lambda F, grad: grad)
sub_scalar = defop("sub_scalar", lambda self, other, alpha=1: as_array(self - other * alpha), node="SubBackward1",
                   self=lambda F, grad: grad)


# -- unary -------------------------------------------------------------------------------------------------------
def _neg(self):
    if self.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return as_array(-self)


neg = unary("neg", _neg, self=lambda F, grad: -grad, doc="Negation, ``-self`` (``NegBackward0``).")
unary("exp", _float_unary(np.exp, errors=True), self=lambda F, grad, result: grad * result,
      doc="Elementwise e**x (``ExpBackward0``, saves the result). Integer input gives the default float dtype.")
unary("log", _float_unary(np.log, errors=True), self=lambda F, grad, self: grad / self,
      doc="Elementwise natural log (``LogBackward0``); log of 0 is -inf and of a negative number nan.")
unary("log1p", _float_unary(np.log1p, errors=True), node="Log1PBackward0",
      self=lambda F, grad, self: grad / F.add_scalar(self, 1),
      doc="Elementwise log(1 + x) (``Log1PBackward0``, saves ``self``), accurate for small x where ``log(1 + x)`` "
          "rounds to 0. Same shape and device as the input; float input keeps its dtype, integer and bool input "
          "give the default float dtype (the in-place form on them raises RuntimeError, as in PyTorch); a "
          "non-tensor raises TypeError. log1p(-1) is -inf and below -1 nan. The derivative is PyTorch's "
          "``log1p_backward``, ``grad / (self + 1)``: recorded, a ``DivBackward0`` over an ``AddBackward1``.")
unary("sqrt", _float_unary(np.sqrt, errors=True), self=lambda F, grad, result: grad / F.mul_scalar(result, 2),
      doc="Elementwise square root (``SqrtBackward0``); negative input gives nan.")
unary("sin", _float_unary(np.sin, errors=True), self=lambda F, grad, self: grad * F.cos(self),
      doc="Elementwise sine (``SinBackward0``).")
unary("cos", _float_unary(np.cos, errors=True), self=lambda F, grad, self: grad * -F.sin(self),
      doc="Elementwise cosine (``CosBackward0``).")
unary("tanh", _float_unary(np.tanh), self=lambda F, grad, result: F.tanh_backward(grad, result),
      doc="Elementwise tanh (``TanhBackward0``; its derivative is the op ``tanh_backward``).")


def _sigmoid(self):
    a = to_float(self)
    with np.errstate(**_ERR):
        return as_array(1 / (1 + np.exp(-a)))


unary("sigmoid", _sigmoid, self=lambda F, grad, result: F.sigmoid_backward(grad, result),
      doc="1 / (1 + e**-x) elementwise (``SigmoidBackward0``).")


def _reciprocal(self):
    with np.errstate(**_ERR):
        return as_array(1 / to_float(self))


unary("reciprocal", _reciprocal, self=lambda F, grad, result: -grad * (result * result),
      doc="1 / x elementwise (``ReciprocalBackward0``).")


def _abs(self):
    if self.dtype.kind == "b":
        raise RuntimeError("\"abs_cpu\" not implemented for 'Bool'")
    return as_array(np.abs(self))


def _sign(self):
    if self.dtype.kind == "b":
        return as_array(self.copy())
    return as_array((self > 0).astype(self.dtype) - (self < 0).astype(self.dtype))  # sign(nan) is 0, as in PyTorch


unary("abs", _abs, self=lambda F, grad, self: grad * F.sgn(self),
      doc="Elementwise absolute value (``AbsBackward0``); the gradient at 0 (and at nan) is 0, as in PyTorch.")
unary("sgn", _sign, self=lambda F, grad: F.zeros_like(grad), in_place=True,
      doc="The sign of each element (``SgnBackward0``); zero gradient.")
unary("sign", _sign, self=lambda F, grad: F.zeros_like(grad),
      doc="The sign of each element, -1, 0 or 1 (``SignBackward0``); its gradient is zero everywhere.")


def _rounding(np_fn, name):
    def forward(self):
        if self.dtype.kind == "b":
            raise RuntimeError(f"\"{name}\" \"_vml_cpu\" not implemented for 'Bool'")
        return as_array(np_fn(self)) if self.dtype.kind == "f" else as_array(self.copy())
    return forward


for _name, _fn in (("round", np.round), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc)):
    unary(_name, _rounding(_fn, _name), self=lambda F, grad: F.zeros_like(grad),
          doc=f"Elementwise ``{_name}`` (``{_name.capitalize()}Backward0``); its gradient is zero everywhere, as "
              "in PyTorch (the function is flat between its jumps).")


def _relu(self):
    return as_array(np.maximum(self, 0))


unary("relu", _relu, self=lambda F, grad, result: F.threshold_backward(grad, result, 0),
      doc="max(x, 0) elementwise (``ReluBackward0``); the gradient at 0 is 0.")


# -- more elementwise math: trigonometry, hyperbolic functions, exp/log variants, erf (task M1) ------------------
# Each formula is PyTorch's derivatives.yaml entry, written so that a recorded backward pass has PyTorch's nodes
# (``rsqrt``: ``-0.5 * grad * result.pow(3)`` is a MulBackward0 over a MulBackward1 and a PowBackward0).
_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))
_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))

_FLOAT_RULES = ("Same shape and device as the input; a float input keeps its dtype, integer and bool input give the "
                "default float dtype (the in-place form on them raises RuntimeError, as in PyTorch); a non-tensor "
                "raises TypeError.")


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
    "rsqrt", _float_unary(_rsqrt_array, errors=True),
    self=lambda F, grad, result: F.mul_scalar(grad, -0.5) * F.pow(result, 3),
    doc=_float_doc("Elementwise 1 / sqrt(x)", "RsqrtBackward0",
                   "rsqrt(0) is inf and rsqrt of a negative number nan. The derivative is "
                   "``-0.5 * grad * result.pow(3)``, from the saved result."))
unary("expm1", _float_unary(np.expm1, errors=True), node="Expm1Backward0",
      self=lambda F, grad, result: grad * F.add_scalar(result, 1),
      doc=_float_doc("Elementwise e**x - 1, accurate for small x where ``exp(x) - 1`` rounds to 0", "Expm1Backward0",
                     "The derivative is ``grad * (result + 1)``, from the saved result."))
unary("tan", _float_unary(np.tan, errors=True),
      self=lambda F, grad, result: grad * F.add_scalar(F.pow(result, 2), 1),
      doc=_float_doc("Elementwise tangent", "TanBackward0", "The derivative is ``grad * (1 + result**2)``."))
unary("asin", _float_unary(np.arcsin, errors=True),
      self=lambda F, grad, self: grad * F.rsqrt(F.add_scalar(-self * self, 1)),
      doc=_float_doc("Elementwise arcsine", "AsinBackward0",
                     "Outside [-1, 1] the value is nan. The derivative is ``grad * (1 - x*x).rsqrt()`` (inf at "
                     "x = +-1)."))
unary("acos", _float_unary(np.arccos, errors=True),
      self=lambda F, grad, self: grad * -F.rsqrt(F.add_scalar(-self * self, 1)),
      doc=_float_doc("Elementwise arccosine", "AcosBackward0",
                     "Outside [-1, 1] the value is nan. The derivative is ``grad * -(1 - x*x).rsqrt()``."))
unary("atan", _float_unary(np.arctan, errors=True),
      self=lambda F, grad, self: grad / F.add_scalar(self * self, 1),
      doc=_float_doc("Elementwise arctangent", "AtanBackward0", "The derivative is ``grad / (x*x + 1)``."))
unary("sinh", _float_unary(np.sinh, errors=True), self=lambda F, grad, self: grad * F.cosh(self),
      doc=_float_doc("Elementwise hyperbolic sine", "SinhBackward0", "The derivative is ``grad * cosh(x)``."))
unary("cosh", _float_unary(np.cosh, errors=True), self=lambda F, grad, self: grad * F.sinh(self),
      doc=_float_doc("Elementwise hyperbolic cosine", "CoshBackward0", "The derivative is ``grad * sinh(x)``."))
unary("asinh", _float_unary(np.arcsinh, errors=True), in_place=False,
      self=lambda F, grad, self: grad * F.rsqrt(F.add_scalar(F.pow(self, 2), 1)),
      doc=_float_doc("Elementwise inverse hyperbolic sine", "AsinhBackward0",
                     "The derivative is ``grad * (x**2 + 1).rsqrt()``."))
unary("acosh", _float_unary(np.arccosh, errors=True), in_place=False,
      self=lambda F, grad, self: grad * F.rsqrt(F.sub_scalar(self * self, 1)),
      doc=_float_doc("Elementwise inverse hyperbolic cosine", "AcoshBackward0",
                     "Below 1 the value is nan. The derivative is ``grad * (x*x - 1).rsqrt()``."))
unary("atanh", _float_unary(np.arctanh, errors=True), in_place=False,
      self=lambda F, grad, self: F.mul_scalar(grad, 1) / F.sub(_wrapped(F, 1, self), F.pow(self, 2)),
      doc=_float_doc("Elementwise inverse hyperbolic tangent", "AtanhBackward0",
                     "atanh(+-1) is +-inf and outside [-1, 1] nan. The derivative is ``grad * 1 / (1 - x**2)``."))
def _inplace_not_differentiable(name, np_fn):
    """``asinh_``/``acosh_``/``atanh_``: PyTorch records ``AsinhBackward1`` (...), whose backward raises
    NotImplementedError "the derivative for 'inplace version of asinh' is not implemented."."""
    def formula(F, grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented.")
    spec = defop(name + "_", _float_unary(np_fn, errors=True), node=f"{_camel_name(name)}Backward1", self=formula)

    def op_(self):
        return inplace(self, spec, (self,))
    op_.__name__ = op_.__qualname__ = name + "_"
    op_.__doc__ = (f"In-place :meth:`{name}`. As in PyTorch, the recorded node (``{spec.node_cls.__name__}``) has no "
                   "derivative: backward through it raises NotImplementedError.")
    public(name + "_", function=False)(op_)
    return spec


def _camel_name(name):
    return name[:1].upper() + name[1:]


for _name, _fn in (("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh)):
    _inplace_not_differentiable(_name, _fn)


unary("erf", _float_unary(_erf_array, errors=True),
      self=lambda F, grad, self: F.mul_scalar(F.exp(-F.pow(self, 2)), _TWO_OVER_SQRT_PI) * grad,
      doc=_float_doc("The error function, 2/sqrt(pi) times the integral of exp(-t**2) from 0 to x", "ErfBackward0",
                     "The derivative is ``2 / sqrt(pi) * exp(-x**2) * grad``."))
unary("exp2", _float_unary(np.exp2, errors=True), node="Exp2Backward0",
      self=lambda F, grad, result: F.mul_scalar(grad * result, _LN2),
      doc=_float_doc("Elementwise 2**x", "Exp2Backward0", "The derivative is ``grad * result * ln(2)``."))
unary("log2", _float_unary(np.log2, errors=True), node="Log2Backward0",
      self=lambda F, grad, self: grad / F.mul_scalar(self, _LN2),
      doc=_float_doc("Elementwise base-2 logarithm", "Log2Backward0",
                     "log2(0) is -inf and of a negative number nan. The derivative is ``grad / (x * ln(2))``."))
unary("log10", _float_unary(np.log10, errors=True), node="Log10Backward0",
      self=lambda F, grad, self: grad / F.mul_scalar(self, _LN10),
      doc=_float_doc("Elementwise base-10 logarithm", "Log10Backward0",
                     "log10(0) is -inf and of a negative number nan. The derivative is ``grad / (x * ln(10))``."))


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
    from ._registry import SPECS
    for name, target in (("negative", "neg"), ("absolute", "abs"), ("fix", "trunc"), ("arcsin", "asin"),
                         ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
                         ("arctanh", "atanh")):
        alias(name, SPECS[target], target, SPECS.get(target + "_"))


_install_aliases()


# -- more binary elementwise ops: fmod, atan2, hypot, lerp, addcmul, addcdiv, clamp_min/clamp_max, rsub -------------
def _fmod(self, other):
    a, b = prep(self, other)
    if a.dtype.kind in "iu" and bool((b == 0).any() if hasattr(b, "shape") else b == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(**_ERR):
        return as_array(np.fmod(a, b))


fmod_spec = defop("fmod", _fmod, node="FmodBackward0", self=lambda F, grad: grad)
fmod_tensor_spec = defop("fmod_tensor", _fmod, inputs=("self", "other"), node="FmodBackward1",
                         self=lambda F, grad: grad,
                         other=lambda F, grad, self, other: -grad * F.div_mode(self, other, "trunc"))


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
        with np.errstate(**_ERR):
            return as_array(np_fn(a, b))
    return forward


def _atan2_backward(F, grad, self, other, grad_input_mask):
    """PyTorch's atan2_backward: where self**2 + other**2 is 0 (or underflows) the gradient is 0."""
    recip = F.reciprocal(self * self + other * other)
    recip = F.masked_fill(recip, recip == np.inf, 0)
    return (grad * other * recip if grad_input_mask[0] else None,
            grad * -self * recip if grad_input_mask[1] else None)


atan2_spec = defop("atan2", _float_binary(np.arctan2, "atan2"), inputs=("self", "other"),
                   **{"self, other": _atan2_backward})
hypot_spec = defop("hypot", _float_binary(np.hypot, "hypot", ints=False), inputs=("self", "other"),
                   self=lambda F, grad, self, result: grad * self / result,
                   other=lambda F, grad, other, result: grad * other / result)


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
    "atan2", atan2_spec,
    """The angle of the point (other, input), ``atan(input / other)`` in the right quadrant, in (-pi, pi]
    (``Atan2Backward0``).

    Both arguments are tensors that broadcast together; integers give the default float dtype, mixed float
    dtypes promote. d/dinput is ``other / (input**2 + other**2)``, d/dother ``-input / (input**2 + other**2)``,
    and both are 0 where ``input**2 + other**2`` is 0, as in PyTorch. A number as ``other`` raises TypeError.""")
public("atan2", "arctan2")(_atan2)
public("atan2_", "arctan2_", function=False)(_atan2_)
_hypot, _hypot_ = _two_tensors(
    "hypot", hypot_spec,
    """``sqrt(input**2 + other**2)`` elementwise without overflow (``HypotBackward0``).

    Both arguments are float tensors that broadcast together; integer ones raise NotImplementedError
    (``"hypot_cpu" not implemented for 'Long'``), a number as ``other`` TypeError. d/dinput is ``input / result``,
    d/dother ``other / result`` (nan at the origin, as in PyTorch).""")
public("hypot")(_hypot)
public("hypot_", function=False)(_hypot_)


def _lerp_check(self, end, weight=None):
    if self.dtype.kind != "f":
        kernel = "lerp_kernel_tensor" if weight is not None else "lerp_kernel_scalar"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.word(self.dtype)}'")
    if end.dtype != self.dtype:
        raise RuntimeError(f"expected dtype {_dtype.ctype(self.dtype)} for `end` but got dtype "
                           f"{_dtype.ctype(end.dtype)}")
    if weight is not None and weight.ndim and weight.dtype != self.dtype:
        raise RuntimeError(f"expected dtype {_dtype.ctype(self.dtype)} for `weight` but got dtype "
                           f"{_dtype.ctype(weight.dtype)}")
    broadcast_shapes(self.shape, end.shape, *(() if weight is None else (weight.shape,)))


def _lerp_values(xp, self, end, w):
    """PyTorch's lerp kernel: ``self + w * (end - self)`` for |w| < 0.5, else ``end - (end - self) * (1 - w)``."""
    diff = end - self
    with np.errstate(**_ERR):
        return xp.where(xp.abs(w) < 0.5, self + w * diff, end - diff * (1 - w))


def _lerp(self, end, weight):
    _lerp_check(self, end)
    w = self.dtype.type(weight)
    with np.errstate(**_ERR):
        out = self + w * (end - self) if abs(w) < 0.5 else end - (end - self) * (1 - w)
    return as_array(out.astype(self.dtype, copy=False))


def _lerp_tensor(self, end, weight):
    _lerp_check(self, end, weight)
    w = weight.astype(self.dtype, copy=False)
    return as_array(_lerp_values(array_module(self), self, end, w).astype(self.dtype, copy=False))


lerp_spec = defop("lerp", _lerp, inputs=("self", "end"), node="LerpBackward0",
                  self=lambda F, grad, weight: F.mul_scalar(grad, 1 - weight),
                  end=lambda F, grad, weight: F.mul_scalar(grad, weight))
lerp_tensor_spec = defop("lerp_tensor", _lerp_tensor, inputs=("self", "end", "weight"), node="LerpBackward1",
                         self=lambda F, grad, weight: grad * F.sub(_wrapped(F, 1, weight), weight),
                         end=lambda F, grad, weight: grad * weight,
                         weight=lambda F, grad, self, end: grad * (end - self))


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
    broadcast_shapes(a.shape, t1.shape, t2.shape)
    with np.errstate(**_ERR):
        return as_array((a + a.dtype.type(value) * t1 * t2).astype(a.dtype, copy=False))


ADDCDIV_INT_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes.")


def _addcdiv(self, tensor1, tensor2, value=1):
    if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError(ADDCDIV_INT_MESSAGE)
    a, t1, t2 = _promote3(self, tensor1, tensor2)
    broadcast_shapes(a.shape, t1.shape, t2.shape)
    with np.errstate(**_ERR):
        return as_array((a + a.dtype.type(value) * t1 / t2).astype(a.dtype, copy=False))


addcmul_spec = defop("addcmul", _addcmul, inputs=("self", "tensor1", "tensor2"),
                     self=lambda F, grad: grad,
                     tensor1=lambda F, grad, tensor2, value: grad * F.mul_scalar(tensor2, value),
                     tensor2=lambda F, grad, tensor1, value: grad * F.mul_scalar(tensor1, value))
addcdiv_spec = defop("addcdiv", _addcdiv, inputs=("self", "tensor1", "tensor2"),
                     self=lambda F, grad: grad,
                     tensor1=lambda F, grad, tensor2, value: grad * F.div(_wrapped(F, value, tensor2), tensor2),
                     tensor2=lambda F, grad, tensor1, tensor2, value: -grad * (F.mul_scalar(tensor1, value)
                                                                             / (tensor2 * tensor2)))


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
    fn.__doc__ = (f"``input + value * {formula}`` elementwise, in one op (``{spec.node_cls.__name__}``; the "
                  "optimizers' update step).\n\n    The three tensors broadcast together, on one device; the result "
                  "dtype is their promoted dtype, and ``value`` is cast to it (an integer result truncates a float "
                  f"value). {grads}")
    op_.__doc__ = f"In-place :meth:`{name}` (node ``{spec.node_cls.__name__}``)."
    public(name)(fn)
    public(name + "_", function=False)(op_)


_addc("addcmul", addcmul_spec, "tensor1 * tensor2",
      "d/dinput is 1, d/dtensor1 ``value * tensor2``, d/dtensor2 ``value * tensor1``.")
_addc("addcdiv", addcdiv_spec, "tensor1 / tensor2",
      "d/dinput is 1, d/dtensor1 ``value / tensor2``, d/dtensor2 ``-value * tensor1 / tensor2**2``. Integer "
      "``tensor1`` and ``tensor2`` raise RuntimeError (\"Integer division with addcdiv is no longer supported\"), "
      "as in PyTorch.")


def _clamp_bound(self, bound, np_fn):
    a, b = prep(self, bound)
    with np.errstate(**_ERR):
        return as_array(np_fn(a, b))  # NaN in either operand gives NaN, as in PyTorch


def _clamp_min(self, min):  # noqa: A002 - PyTorch's argument name, read by the formulas
    return _clamp_bound(self, min, np.maximum)


def _clamp_max(self, max):  # noqa: A002
    return _clamp_bound(self, max, np.minimum)


clamp_min_spec = defop("clamp_min", _clamp_min, self=lambda F, grad, self, min: F.where(self >= min, grad, 0.0))
clamp_max_spec = defop("clamp_max", _clamp_max, self=lambda F, grad, self, max: F.where(self <= max, grad, 0.0))
clamp_min_tensor_spec = defop("clamp_min_tensor", _clamp_min, inputs=("self", "min"),
                              node="ClampMinBackward1",
                              self=lambda F, grad, self, min: F.where(self >= min, grad, 0.0),
                              min=lambda F, grad, self, min: F.where(self < min, grad, 0.0))
clamp_max_tensor_spec = defop("clamp_max_tensor", _clamp_max, inputs=("self", "max"),
                              node="ClampMaxBackward1",
                              self=lambda F, grad, self, max: F.where(self <= max, grad, 0.0),
                              max=lambda F, grad, self, max: F.where(self > max, grad, 0.0))


def _bound_doc(name, spec, tensor_spec, word, keep):
    verb = "raised" if word == "min" else "lowered"
    return (f"``clamp(input, {word}={word})``: values {keep} ``{word}`` are {verb} to it "
            f"(``{spec.node_cls.__name__}``; ``{tensor_spec.node_cls.__name__}`` for a tensor bound, which broadcasts "
            "and gets the gradient where it wins).\n\n    The gradient passes to ``input`` where it is kept (ties "
            "included). Result dtype by promotion (a float bound makes an integer tensor the default float dtype); "
            "NaN in the input or the bound gives NaN, as in PyTorch. A bound that is neither a number nor a tensor "
            "raises TypeError.")


@public("clamp_min")
def clamp_min(input, min):  # noqa: A002 - PyTorch's argument name
    check_tensor("clamp_min", "input", input)
    b = operand(min, "clamp_min", "min")
    return apply(clamp_min_tensor_spec if isinstance(b, Tensor) else clamp_min_spec, (input, b))


@public("clamp_max")
def clamp_max(input, max):  # noqa: A002 - PyTorch's argument name
    check_tensor("clamp_max", "input", input)
    b = operand(max, "clamp_max", "max")
    return apply(clamp_max_tensor_spec if isinstance(b, Tensor) else clamp_max_spec, (input, b))


@public("clamp_min_", function=False)
def clamp_min_(self, min):  # noqa: A002
    """In-place :meth:`clamp_min`."""
    b = operand(min, "clamp_min_", "min")
    return inplace(self, clamp_min_tensor_spec if isinstance(b, Tensor) else clamp_min_spec, (self, b))


@public("clamp_max_", function=False)
def clamp_max_(self, max):  # noqa: A002
    """In-place :meth:`clamp_max`."""
    b = operand(max, "clamp_max_", "max")
    return inplace(self, clamp_max_tensor_spec if isinstance(b, Tensor) else clamp_max_spec, (self, b))


clamp_min.__doc__ = _bound_doc("clamp_min", clamp_min_spec, clamp_min_tensor_spec, "min", "below")
clamp_max.__doc__ = _bound_doc("clamp_max", clamp_max_spec, clamp_max_tensor_spec, "max", "above")


def _rsub_tensor(self, other, alpha=1):
    a, b = prep(self, other)
    if a.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    return as_array(b - a if alpha == 1 else b - alpha * a)


rsub_tensor_spec = defop("rsub_tensor", _rsub_tensor, inputs=("self", "other"), node="RsubBackward0",
                         self=lambda F, grad, alpha: -grad if alpha == 1 else F.mul_scalar(-grad, alpha),
                         other=lambda F, grad: grad)


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


defop("threshold_backward", _threshold_backward, inputs=("grad_output", "self"),
      grad_output=lambda F, grad, self, threshold: F.threshold_backward(grad, self, threshold),
      self=lambda F, grad: F.zeros_like(grad))
def _tanh_backward(grad_output, output):
    """``grad_output * (1 - output**2)``, in one temporary."""
    if not output.ndim or output.dtype != grad_output.dtype or output.shape != grad_output.shape:
        return as_array(grad_output * (1 - output * output))
    xp = array_module(output)
    t = output * output
    xp.subtract(1, t, out=t)
    xp.multiply(t, grad_output, out=t)
    return t


def _sigmoid_backward(grad_output, output):
    """``grad_output * (1 - output) * output``, in one temporary."""
    if not output.ndim or output.dtype != grad_output.dtype or output.shape != grad_output.shape:
        return as_array(grad_output * (1 - output) * output)
    xp = array_module(output)
    t = 1 - output
    xp.multiply(t, output, out=t)
    xp.multiply(t, grad_output, out=t)
    return t


defop("tanh_backward", _tanh_backward,
      inputs=("grad_output", "output"),
      grad_output=lambda F, grad, output: F.tanh_backward(grad, output),
      output=lambda F, grad, output, grad_output: grad * (F.mul_scalar(output, -2) * grad_output))
defop("sigmoid_backward", _sigmoid_backward,
      inputs=("grad_output", "output"),
      grad_output=lambda F, grad, output: F.sigmoid_backward(grad, output),
      output=lambda F, grad, output, grad_output: grad * grad_output * F.add_scalar(F.mul_scalar(output, -2), 1))


# -- clamp -------------------------------------------------------------------------------------------------------
def _clamp(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self.dtype.kind in "biu" and (isinstance(min, float) or isinstance(max, float)):
        self = to_float(self)  # PyTorch: float bounds on an integer tensor give the default float dtype
    with np.errstate(**_ERR):
        out = self
        if min is not None:
            out = np.maximum(out, self.dtype.type(min))
        if max is not None:
            out = np.minimum(out, self.dtype.type(max))
        if out is self:
            out = self.copy()
        xp = array_module(self)
        out = xp.where(xp.isnan(self), self, out) if self.dtype.kind == "f" else out  # nan stays nan
    return as_array(out)


def _clamp_mask(self, min, max):
    if min is not None and max is not None:
        return (self >= min) & (self <= max)
    return (self >= min) if min is not None else (self <= max)


clamp_spec = defop("clamp", _clamp, node="ClampBackward1",
                   self=lambda F, grad, self, min, max: F.where(_clamp_mask(self, min, max), grad, 0.0))


@public("clamp", "clip")
def clamp(input, min=None, max=None):
    """Limit values to [min, max] (``ClampBackward1``); the gradient passes where min <= x <= max.

    Raises ``RuntimeError`` when both bounds are None."""
    check_tensor("clamp", "input", input)
    return apply(clamp_spec, (input, num(min), num(max)))


@public("clamp_", "clip_", function=False)
def clamp_(self, min=None, max=None):
    """In-place :meth:`clamp` (node ``ClampBackward1``)."""
    return inplace(self, clamp_spec, (self, num(min), num(max)))


# -- binary arithmetic -----------------------------------------------------------------------------------------
def _add(self, other, alpha=1):
    a, b = prep(self, other)
    return a + b if alpha == 1 else a + alpha * b


def _sub(self, other, alpha=1):
    a, b = prep(self, other)
    if a.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    return a - b if alpha == 1 else a - alpha * b


def _mul(self, other):
    a, b = prep(self, other)
    return a * b


def _div(self, other):
    a, b = prep(self, other)
    if a.dtype.kind in "biu" and getattr(b, "dtype", np.dtype("i8")).kind in "biu" and not isinstance(b, float):
        ft = _dtype.get_default_dtype().np  # true division of integers gives the default float dtype
        a = a.astype(ft)
        b = b.astype(ft) if hasattr(b, "astype") else ft.type(b)
    with np.errstate(**_ERR):
        return as_array(a / b)


add_spec = defop("add", _add, inputs=("self", "other"),
                 self=lambda F, grad: grad,
                 other=lambda F, grad, alpha: grad if alpha == 1 else F.mul_scalar(grad, alpha))
sub_spec = defop("sub", _sub, inputs=("self", "other"),
                 self=lambda F, grad: grad,
                 other=lambda F, grad, alpha: -grad if alpha == 1 else F.mul_scalar(-grad, alpha))


def _rsub(self, other, alpha=1):
    a, b = prep(self, other)
    return as_array(b - a if alpha == 1 else b - alpha * a)


rsub_spec = defop("rsub", _rsub, node="RsubBackward1",
                  self=lambda F, grad, alpha: -grad if alpha == 1 else F.mul_scalar(-grad, alpha))
mul_spec = defop("mul", _mul, inputs=("self", "other"),
                 self=lambda F, grad, other: grad * other,
                 other=lambda F, grad, self: grad * self)
div_spec = defop("div", _div, inputs=("self", "other"),
                 self=lambda F, grad, other: grad / other,
                 other=lambda F, grad, self, other: -grad * ((self / other) / other))


def _div_mode(self, other, rounding_mode):
    a, b = prep(self, other)
    with np.errstate(**_ERR):
        if rounding_mode == "floor":
            if a.dtype.kind in "iu" and np.any(np.asarray(b) == 0):
                raise RuntimeError("ZeroDivisionError")
            return as_array(np.floor_divide(a, b))
        if rounding_mode == "trunc":
            q = a / b
            return as_array(np.trunc(q).astype(q.dtype) if a.dtype.kind == "f" else
                            (np.trunc(q)).astype(a.dtype))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                     f"'{rounding_mode}'")


div_mode_spec = defop("div_mode", _div_mode, inputs=("self", "other"), node="DivBackward2",
                      self=lambda F, grad: F.zeros_like(grad),
                      other=lambda F, grad: F.zeros_like(grad))


def _remainder(self, other):
    a, b = prep(self, other)
    if a.dtype.kind in "iu" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(**_ERR):
        return as_array(np.remainder(a, b))


remainder_spec = defop("remainder", _remainder, inputs=("self", "other"), node="RemainderBackward1",
                       self=lambda F, grad: grad,
                       other=lambda F, grad, self, other: -grad * F.div_mode(self, other, "floor"))
remainder_scalar_spec = defop("remainder_scalar", lambda self, other: _remainder(self, other),
                              node="RemainderBackward0", self=lambda F, grad: grad)


def _not_implemented(F, grad):
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


# PyTorch records a node named ``NotImplemented`` for an op without a derivative; its backward raises
floor_divide_spec = defop("floor_divide", lambda self, other: _div_mode(self, other, "floor"),
                          inputs=("self", "other"), node="torch::autograd::NotImplemented",
                          self=_not_implemented, other=_not_implemented)


# -- powers -----------------------------------------------------------------------------------------------------
def _pow(self, exponent):
    if self.dtype.kind == "b":
        raise RuntimeError("\"pow_cpu\" not implemented for 'Bool'")
    if self.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if self.dtype.kind in "biu" and isinstance(exponent, float):
        self = to_float(self)
    if exponent == 2:
        return as_array(self * self)
    with np.errstate(**_ERR):
        return as_array(self ** self.dtype.type(exponent) if self.dtype.kind == "f" else self ** exponent)


def _pow_backward(F, grad, self, exponent):
    if exponent == 0:  # PyTorch: exactly zero, whatever the base
        return F.zeros_like(self)
    return grad * F.mul_scalar(F.pow(self, exponent - 1), exponent)


pow_spec = defop("pow", _pow, node="PowBackward0", self=_pow_backward)


def _pow_tensor(self, exponent):
    a, b = prep(self, exponent)
    if a.dtype.kind == "b":
        raise RuntimeError("\"pow_cpu\" not implemented for 'Bool'")
    with np.errstate(**_ERR):
        return as_array(a ** b)


pow_tensor_spec = defop(
    "pow_tensor", _pow_tensor, inputs=("self", "exponent"), node="PowBackward1",
    self=lambda F, grad, self, exponent: F.where(exponent == 0.0, 0.0,
                                                 grad * (exponent * F.pow_tensor(self, F.sub_scalar(exponent, 1)))),
    exponent=lambda F, grad, self, exponent, result: grad * F.where((self == 0.0) & (exponent >= 0.0), 0.0,
                                                                    result * F.log(self)))


def _pow_scalar_base(exponent, self):
    e, base = prep(exponent, self)
    with np.errstate(**_ERR):
        return as_array(base ** e)


def _pow_base_backward(F, grad, self, exponent, result):
    with np.errstate(**_ERR):
        log_base = float(np.log(self)) if self > 0 else (float("-inf") if self == 0 else float("nan"))
    if self == 0:
        return grad * F.where(exponent >= 0.0, 0.0, F.mul_scalar(result, log_base))
    return grad * F.mul_scalar(result, log_base)


pow_base_spec = defop("pow_scalar_base", _pow_scalar_base, inputs=("exponent",), node="PowBackward2",
                      exponent=_pow_base_backward)


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
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_dtype.word(condition.dtype)}")
    a, b = promote(self, other) if not (hasattr(self, "dtype") and hasattr(other, "dtype")) else \
        ((self, other) if self.dtype == other.dtype else promote(self, other))
    xp = array_module(condition)
    if hasattr(a, "shape") and hasattr(b, "shape"):
        broadcast_shapes(condition.shape, a.shape, b.shape)
    return as_array(xp.where(condition, a, b))


where_spec = defop("where", _where, inputs=("condition", "self", "other"), nondiff=("condition",),
                   self=lambda F, grad, condition: F.where(condition, grad, 0.0),
                   other=lambda F, grad, condition: F.where(condition, 0.0, grad))


@public("where")
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
        idx = array_module(condition._data).nonzero(condition._data)
        return tuple(Tensor._make(as_array(i).astype(np.int64), condition._device) for i in idx)
    check_tensor("where", "condition", condition)
    return apply(where_spec, (condition, operand(input, "where", "input"), operand(other, "where", "other")))


def _extremum(np_fn):
    def forward(self, other):
        a, b = prep(self, other)
        return as_array(np_fn(a, b))
    return forward


maximum_spec = defop(
    "maximum", _extremum(np.maximum), inputs=("self", "other"),
    self=lambda F, grad, self, other: F.masked_fill(F.where(self == other, F.div_scalar(grad, 2), grad),
                                                    self < other, 0),
    other=lambda F, grad, self, other: F.masked_fill(F.where(self == other, F.div_scalar(grad, 2), grad),
                                                     self > other, 0))
minimum_spec = defop(
    "minimum", _extremum(np.minimum), inputs=("self", "other"),
    self=lambda F, grad, self, other: F.masked_fill(F.where(self == other, F.div_scalar(grad, 2), grad),
                                                    self > other, 0),
    other=lambda F, grad, self, other: F.masked_fill(F.where(self == other, F.div_scalar(grad, 2), grad),
                                                     self < other, 0))


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
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.word(mask.dtype).lower()}")
    xp = array_module(self)
    v = value if not hasattr(value, "dtype") else value.astype(self.dtype)
    return as_array(xp.where(mask, self.dtype.type(v) if not hasattr(v, "dtype") else v, self))


masked_fill_spec = defop("masked_fill", lambda self, mask, value: _masked_fill(self, mask, value),
                         inputs=("self", "mask"), nondiff=("mask",), node="MaskedFillBackward0",
                         self=lambda F, grad, mask: F.masked_fill(grad, mask, 0))
masked_fill_tensor_spec = defop(
    "masked_fill_tensor", _masked_fill, inputs=("self", "mask", "value"), nondiff=("mask",),
    node="MaskedFillBackward1",
    self=lambda F, grad, mask: F.masked_fill(grad, mask, 0),
    value=lambda F, grad, mask: F.sum(F.masked_select(grad, mask)))


def _masked_select(self, mask):
    if mask.dtype.kind != "b":
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    xp = array_module(self)
    a, m = xp.broadcast_arrays(self, mask)
    return as_array(a[m])


def _masked_scatter(self, mask, source):
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.word(mask.dtype).lower()}")
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
    out[:sel.size] = sel
    return out.reshape(sizes)


masked_select_spec = defop("masked_select", _masked_select, inputs=("self", "mask"), nondiff=("mask",),
                           self=lambda F, grad, self_sym_sizes, mask: F.masked_scatter(
                               F.new_zeros(self_sym_sizes, grad), mask, grad))
masked_scatter_spec = defop(
    "masked_scatter", _masked_scatter, inputs=("self", "mask", "source"), nondiff=("mask",),
    self=lambda F, grad, mask: F.masked_fill(grad, mask, 0),
    source=lambda F, grad, mask, source_sym_sizes: F.masked_scatter_backward(grad, mask, source_sym_sizes))
defop("masked_scatter_backward", _masked_scatter_backward, inputs=("grad_output", "mask"), nondiff=("mask",),
      grad_output=lambda F, grad, mask, grad_output_sym_sizes: F.masked_scatter(
          F.new_zeros(grad_output_sym_sizes, grad), mask, grad))


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


@public("masked_fill")
def masked_fill(input, mask, value):
    """``value`` where ``mask`` is True (``MaskedFillBackward0``, or ``MaskedFillBackward1`` for a 0-d tensor
    value, which then gets the summed gradient of the filled places)."""
    check_tensor("masked_fill", "input", input)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return apply(masked_fill_tensor_spec, (input, mask, value))
    return apply(masked_fill_spec, (input, mask, num(value)))


@public("masked_fill_", function=False)
def masked_fill_(self, mask, value):
    """In-place :meth:`masked_fill`."""
    if isinstance(value, Tensor):
        return inplace(self, masked_fill_tensor_spec, (self, mask, value))
    return inplace(self, masked_fill_spec, (self, mask, num(value)))


# -- the public arithmetic surface -------------------------------------------------------------------------------
@public("add")
def add(input, other, *, alpha=1):
    """``input + alpha * other`` (``AddBackward0``)."""
    check_tensor("add", "input", input)
    return apply(add_spec, (input, operand(other, "add"), alpha))


@public("sub", "subtract")
def sub(input, other, *, alpha=1):
    """``input - alpha * other`` (``SubBackward0``)."""
    check_tensor("sub", "input", input)
    return apply(sub_spec, (input, operand(other, "sub"), alpha))


@public("mul", "multiply")
def mul(input, other):
    """``input * other`` (``MulBackward0``)."""
    check_tensor("mul", "input", input)
    return apply(mul_spec, (input, operand(other, "mul")))


@public("div", "divide", "true_divide")
def div(input, other, *, rounding_mode=None):
    """``input / other``: true division (``DivBackward0``; integers give the default float dtype), or rounded
    with ``rounding_mode="floor"``/``"trunc"`` (``DivBackward2``, zero gradient)."""
    check_tensor("div", "input", input)
    o = operand(other, "div")
    if rounding_mode is not None:
        return apply(div_mode_spec, (input, o, rounding_mode))
    return apply(div_spec, (input, o))


@public("remainder")
def remainder(input, other):
    """Python's ``%``: the remainder with the divisor's sign (``RemainderBackward1``, or
    ``RemainderBackward0`` for a number divisor).  d/dself is 1; d/dother is ``-floor(self / other)``."""
    check_tensor("remainder", "input", input)
    o = operand(other, "remainder")
    return apply(remainder_spec if isinstance(o, Tensor) else remainder_scalar_spec, (input, o))


@public("floor_divide")
def floor_divide(input, other):
    """``input // other`` rounded down.  Not differentiable: as in PyTorch, on a tensor that requires grad the
    result has ``grad_fn=<NotImplemented>`` and backward raises "derivative for aten::floor_divide is not
    implemented"."""
    check_tensor("floor_divide", "input", input)
    return apply(floor_divide_spec, (input, operand(other, "floor_divide")))


@public("reciprocal_", function=False)
def _reciprocal_(self):
    """In-place :meth:`reciprocal`."""
    return inplace(self, SPEC_RECIPROCAL, (self,))


from ._registry import SPECS  # noqa: E402

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
        if o is None:
            return NotImplemented
        return apply(remainder_spec, (Tensor._make(np.asarray(o, dtype=result_dtype(self, o)), self._device), self))

    def floordiv(self, other):
        o = as_operand(other)
        return NotImplemented if o is None else apply(floor_divide_spec, (self, o))

    def rfloordiv(self, other):
        o = as_operand(other)
        if o is None:
            return NotImplemented
        return apply(floor_divide_spec, (Tensor._make(np.asarray(o, dtype=result_dtype(self, o)), self._device),
                                         self))

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


def result_dtype(t, number):
    return result_type(t._data, number)


def _inplace_arith(name, spec):
    def op_(self, other, *, alpha=None):
        o = as_operand(other)
        if o is None:
            raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        args = (self, o) if alpha is None else (self, o, alpha)
        return inplace(self, spec, args)
    op_.__name__ = name + "_"
    op_.__doc__ = (f"In place ``self {name} other``; bumps ``_version``.  Raises ``RuntimeError`` on a leaf that "
                   "requires grad while grad mode is on (allowed under ``no_grad``), and when the result dtype "
                   "cannot be stored in ``self`` (\"can't be cast\"). On a non-leaf the history is rebased: "
                   f"``grad_fn`` becomes ``{spec.node_cls.__name__}``.")
    return op_


for _n, _s in (("add", add_spec), ("sub", sub_spec), ("mul", mul_spec), ("div", div_spec)):
    public(_n + "_", function=False)(_inplace_arith(_n, _s))


@public("remainder_", function=False)
def remainder_(self, other):
    """In-place :meth:`remainder`."""
    o = operand(other, "remainder_")
    return inplace(self, remainder_spec if isinstance(o, Tensor) else remainder_scalar_spec, (self, o))


_install_operators()
