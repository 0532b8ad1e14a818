"""Activations: gelu, silu, elu, leaky_relu, softplus, hardtanh, log_sigmoid, logit, and their
``*_backward`` ops.

As in PyTorch, most of these are functions of ``torch.nn.functional`` only
(``torch._C._nn`` in PyTorch), not ``torch.*`` functions or Tensor methods;
:mod:`leafkit.nn.functional` calls the entries here.  ``logit`` is also
``torch.logit`` / ``Tensor.logit`` (``clamp_min`` lives with the other
bounds in :mod:`.elementwise`), and ``celu``, ``selu``, ``threshold`` (with
their in-place twins), ``hardshrink`` and ``prelu`` are ``torch.*``
functions too, defined at the end of this file: ``nn.functional`` calls
them (``F.celu(x, inplace=True)`` is ``torch.celu_(x)``), as in PyTorch.

Each activation's first derivative is an op of its own (``gelu_backward``,
``elu_backward`` ...), as in PyTorch's ``derivatives.yaml``, so a backward
pass recorded with ``create_graph=True`` shows PyTorch's node names
(``GeluBackwardBackward0`` ...) and can be differentiated again.  The
second-derivative formulas are those of PyTorch's ``FunctionsManual.cpp``
(``gelu_double_backward``, ``elu_double_backward``,
``softplus_double_backward``, ``log_sigmoid_double_backward``), written
against the namespace ``F``.

The forwards compute what PyTorch's CPU kernels compute, in the input's
dtype: floating input only (integer or bool input raises PyTorch's
``NotImplementedError`` "\\"silu_cpu\\" not implemented for 'Long'"), except
``hardtanh`` (integers too, as ``clamp``) and ``logit`` (integers give the
default float dtype).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import no_grad
from ._base import array_module, as_array, check_tensor, to_float
from ._registry import apply, defop, public
from .inplace import inplace

_SQRT1_2 = math.sqrt(0.5)
_GELU_PDF = 1.0 / math.sqrt(2.0 * math.pi)  # M_2_SQRTPI * M_SQRT1_2 * 0.5
_GELU_TANH_BETA = math.sqrt(2.0 / math.pi)  # M_SQRT2 * M_2_SQRTPI * 0.5
_GELU_TANH_KAPPA = 0.044715


def _floating(kernel, a):
    """PyTorch's dispatch error for a kernel that takes floating types only."""
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.word(a.dtype)}'")


def type_as(F, mask, like):
    """PyTorch's ``mask.type_as(like)`` in either namespace (a tensor that needs no gradient)."""
    return F.cast(mask, like._data.dtype if F.records else like.dtype)


def one_minus(F, t):
    """``1 - t`` as PyTorch's C++ formulas write it: ``SubBackward0`` with no edge for the 1 (not ``RsubBackward1``)."""
    return F.ones_like(t) - t


def _opmath(forward):
    """Run ``forward`` on float16 input in float32 and round the result once, as PyTorch's CPU kernels do
    (``opmath_t``); NumPy's float16 arithmetic rounds after every step."""

    @functools.wraps(forward)
    def wrapped(*args):
        a = args[0]
        if a.dtype.char != "e":
            return forward(*args)
        out = forward(*[x.astype(np.float32) if getattr(x, "dtype", None) == np.float16 else x for x in args])
        if isinstance(out, tuple):
            return tuple(as_array(o.astype(np.float16)) for o in out)
        return as_array(out.astype(np.float16))

    return wrapped


_math_erf = np.frompyfunc(math.erf, 1, 1)


def erf(a):
    """The error function of a float array, elementwise, correctly rounded in float64 (C's ``erf``)."""
    xp = array_module(a)
    if xp is not np:  # CuPy
        from cupyx.scipy.special import erf as cupy_erf

        return cupy_erf(a)
    return np.asarray(_math_erf(a), dtype=a.dtype)


# -- gelu ----------------------------------------------------------------------------------------------------------
def _check_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


@_opmath
def _gelu(self, approximate="none"):
    _floating("GeluKernelImpl", self)
    _check_approximate(approximate)
    t = self.dtype.type
    if approximate == "tanh":
        inner = t(_GELU_TANH_BETA) * (self + t(_GELU_TANH_KAPPA) * (self * self * self))
        return as_array(t(0.5) * self * (1 + array_module(self).tanh(inner)))
    return as_array(self * t(0.5) * (1 + erf(self * t(_SQRT1_2))))


@_opmath
def _gelu_backward(grad_output, self, approximate="none"):
    _floating("GeluBackwardKernelImpl", self)
    _check_approximate(approximate)
    t = self.dtype.type
    xp = array_module(self)
    if approximate == "tanh":
        x_sq = self * self
        inner = t(_GELU_TANH_BETA) * (self + t(_GELU_TANH_KAPPA) * x_sq * self)
        tanh_inner = xp.tanh(inner)
        left_derivative = t(0.5) * (1 + tanh_inner)
        right_derivative = (
            t(0.5) * self * (1 - tanh_inner * tanh_inner) * t(_GELU_TANH_BETA) * (1 + t(3 * _GELU_TANH_KAPPA) * x_sq)
        )
        return as_array(grad_output * (left_derivative + right_derivative))
    cdf = t(0.5) * (1 + erf(self * t(_SQRT1_2)))
    pdf = t(_GELU_PDF) * xp.exp(self * self * t(-0.5))
    return as_array(grad_output * (cdf + self * pdf))


def _gelu_double_backward(F, grad, grad_output, self, approximate):
    """PyTorch's ``gelu_double_backward(ggI, gO, input, approximate)``."""
    if approximate == "tanh":
        beta, kappa = _GELU_TANH_BETA, _GELU_TANH_KAPPA
        inner = F.mul_scalar(self + F.mul_scalar(F.pow(self, 3), kappa), beta)
        tanh_inner = F.tanh(inner)
        f = F.mul_scalar(self, 0.5)
        g = one_minus(F, tanh_inner * tanh_inner)
        h = F.mul_scalar(F.add_scalar(F.mul_scalar(self, 3 * kappa) * self, 1), beta)
        f_prime_gh = F.mul_scalar(g, 0.5) * h
        # PyTorch: (2 * sech(inner)) * (-sech(inner) * tanh(inner)) * h; sech**2 is 1 - tanh**2, which is g
        g_prime = F.mul_scalar(g, -2) * tanh_inner * h
        g_prime_fh = f * h * g_prime
        h_prime = F.mul_scalar(F.mul_scalar(self, 6 * kappa), beta)
        h_prime_fg = f * g * h_prime
        return grad * grad_output * (F.mul_scalar(f_prime_gh, 2) + g_prime_fh + h_prime_fg)
    input_sq = self * self
    pdf = F.mul_scalar(F.exp(F.mul_scalar(input_sq, -0.5)), _GELU_PDF)
    return grad * grad_output * (F.mul_scalar(pdf, 2) - input_sq * pdf)


gelu_spec = defop(
    "gelu",
    _gelu,
    self=lambda F, grad, self, approximate: F.gelu_backward(grad, self, approximate),
    doc="GELU, ``x * Φ(x)`` (``GeluBackward0``; ``approximate='tanh'``: PyTorch's tanh formula).",
)
defop(
    "gelu_backward",
    _gelu_backward,
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, self, approximate: F.gelu_backward(grad, self, approximate),
    self=_gelu_double_backward,
)


# -- silu ----------------------------------------------------------------------------------------------------------
@_opmath
def _silu(self):
    _floating("silu_cpu", self)
    return as_array(self / (1 + array_module(self).exp(-self)))


def _silu_backward(F, grad, self):
    """PyTorch's ``infinitely_differentiable_silu_backward``: ``grad * σ(x) * (1 + x * (1 - σ(x)))``."""
    sigmoid = F.sigmoid(self)
    return grad * sigmoid * F.add_scalar(self * one_minus(F, sigmoid), 1.0)


silu_spec = defop("silu", _silu, self=_silu_backward, doc="SiLU (swish), ``x * sigmoid(x)`` (``SiluBackward0``).")


# -- elu -----------------------------------------------------------------------------------------------------------
@_opmath
def _elu(self, alpha=1.0, scale=1, input_scale=1):
    _floating("elu_cpu", self)
    t = self.dtype.type
    xp = array_module(self)
    neg = xp.expm1(self * t(input_scale)) * t(alpha * scale)
    return as_array(xp.where(self <= 0, neg, self * t(scale)))


@_opmath
def _elu_backward(grad_output, self_or_result, alpha, scale, input_scale, is_result):
    _floating("elu_backward_cpu", self_or_result)
    t = grad_output.dtype.type
    x = self_or_result
    xp = array_module(x)
    negcoef, poscoef, negiptcoef = t(alpha * scale), t(scale), t(input_scale)
    if is_result:
        neg = grad_output * negiptcoef * (x + negcoef)
    else:
        neg = grad_output * negiptcoef * negcoef * xp.exp(x * negiptcoef)
    return as_array(xp.where(x <= 0, neg, grad_output * poscoef))


def _elu_double_backward(F, grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """PyTorch's ``elu_double_backward``."""
    mask = type_as(F, self_or_result < 0, grad)
    if is_result:
        return F.mul_scalar(grad * grad_output, input_scale) * mask
    return (
        F.elu_backward(
            F.mul_scalar(grad * grad_output, input_scale), self_or_result, alpha, scale, input_scale, is_result
        )
        * mask
    )


elu_spec = defop(
    "elu",
    _elu,
    self=lambda F, grad, self, alpha, scale, input_scale: F.elu_backward(grad, self, alpha, scale, input_scale, False),
    doc="ELU: ``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise (``EluBackward0``).",
)
# the in-place form saves its result, not its input (``EluBackward1``)
elu_inplace_spec = defop(
    "elu_",
    _elu,
    node="EluBackward1",
    self=lambda F, grad, result, alpha, scale, input_scale: F.elu_backward(
        grad, result, alpha, scale, input_scale, True
    ),
    doc="In-place ELU (``EluBackward1``, saves the result).",
)
defop(
    "elu_backward",
    _elu_backward,
    inputs=("grad_output", "self_or_result"),
    grad_output=lambda F, grad, alpha, scale, input_scale, is_result, self_or_result: F.elu_backward(
        grad, self_or_result, alpha, scale, input_scale, is_result
    ),
    self_or_result=_elu_double_backward,
)


# -- leaky_relu ----------------------------------------------------------------------------------------------------
@_opmath
def _leaky_relu(self, negative_slope=0.01):
    _floating("leaky_relu_cpu", self)
    return as_array(array_module(self).where(self > 0, self, self * self.dtype.type(negative_slope)))


@_opmath
def _leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    if self_is_result and negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
            "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
            "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
            "in-place leakRelu backward calculation with negative slope"
        )
    _floating("leaky_relu_backward_cpu", self)
    return as_array(
        array_module(self).where(self > 0, grad_output, grad_output * grad_output.dtype.type(negative_slope))
    )


leaky_relu_spec = defop(
    "leaky_relu",
    _leaky_relu,
    self=lambda F, grad, self, negative_slope: F.leaky_relu_backward(grad, self, negative_slope, False),
    doc="``x`` for x > 0, ``negative_slope * x`` otherwise (``LeakyReluBackward0``).",
)
leaky_relu_inplace_spec = defop(
    "leaky_relu_",
    _leaky_relu,
    node="LeakyReluBackward1",
    self=lambda F, grad, result, negative_slope: F.leaky_relu_backward(grad, result, negative_slope, True),
    doc="In-place leaky ReLU (``LeakyReluBackward1``, saves the result).",
)
defop(
    "leaky_relu_backward",
    _leaky_relu_backward,
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, self, negative_slope: F.leaky_relu_backward(grad, self, negative_slope, False),
    self=lambda F, grad: F.zeros_like(grad),
)


# -- softplus ------------------------------------------------------------------------------------------------------
@_opmath
def _softplus(self, beta=1, threshold=20):
    _floating("softplus_cpu", self)
    t = self.dtype.type
    xp = array_module(self)
    xb = self * t(beta)
    return as_array(xp.where(xb > t(threshold), self, xp.log1p(xp.exp(xb)) / t(beta)))


@_opmath
def _softplus_backward(grad_output, self, beta, threshold):
    _floating("softplus_backward_cpu", self)
    t = self.dtype.type
    xp = array_module(self)
    xb = self * t(beta)
    z = xp.exp(xb)
    return as_array(xp.where(xb > t(threshold), grad_output, grad_output * z / (z + 1)))


def _softplus_double_backward(F, grad, grad_output, self, beta, threshold):
    """PyTorch's ``softplus_double_backward(grad * grad_output, self, beta, threshold)``."""
    x = F.mul_scalar(self, beta)
    return F.mul_scalar(F.sigmoid_backward(grad * grad_output, F.sigmoid(x)) * type_as(F, x < threshold, grad), beta)


softplus_spec = defop(
    "softplus",
    _softplus,
    self=lambda F, grad, self, beta, threshold: F.softplus_backward(grad, self, beta, threshold),
    doc="``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (``SoftplusBackward0``).",
)
defop(
    "softplus_backward",
    _softplus_backward,
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, self, beta, threshold: F.softplus_backward(grad, self, beta, threshold),
    self=_softplus_double_backward,
)


# -- hardtanh (and relu6) ------------------------------------------------------------------------------------------
def _hardtanh(self, min_val=-1.0, max_val=1.0):
    if self.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if self.dtype.kind != "f":  # integer limits, truncated toward zero
        min_val, max_val = math.trunc(min_val), math.trunc(max_val)
    if self.dtype.kind == "u" and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    xp = array_module(self)
    t = self.dtype.type
    lo, hi = t(min_val), t(max_val)
    out = xp.minimum(xp.maximum(self, lo), hi)
    if self.dtype.kind == "f":
        out = xp.where(xp.isnan(self), self, out)  # nan stays nan, as in PyTorch's clamp
    return as_array(out)


def _hardtanh_backward(grad_output, self, min_val, max_val):
    """``0 where self <= min_val or self >= max_val, else grad_output`` (a NaN in ``self`` passes the gradient)."""
    xp = array_module(self)
    return as_array(xp.where((self <= min_val) | (self >= max_val), grad_output.dtype.type(0), grad_output))


hardtanh_spec = defop(
    "hardtanh",
    _hardtanh,
    self=lambda F, grad, self, min_val, max_val: F.hardtanh_backward(grad, self, min_val, max_val),
    doc="``x`` clamped to ``[min_val, max_val]`` (``HardtanhBackward0``); ``relu6`` is ``hardtanh(x, 0, 6)``.",
)
defop(
    "hardtanh_backward",
    _hardtanh_backward,
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, self, min_val, max_val: F.hardtanh_backward(grad, self, min_val, max_val),
    self=lambda F, grad: F.zeros_like(grad),
)


# -- log_sigmoid ---------------------------------------------------------------------------------------------------
@_opmath
def _log_sigmoid_forward(self):
    """``(output, buffer)``: ``min(x, 0) - log1p(exp(-|x|))`` and the ``exp(-|x|)`` the backward reuses, as
    PyTorch's CPU kernel."""
    _floating("log_sigmoid_cpu", self)
    xp = array_module(self)
    buffer = xp.exp(-xp.abs(self))
    return as_array(xp.minimum(self, 0) - xp.log1p(buffer)), as_array(buffer)


@_opmath
def _log_sigmoid_backward(grad_output, self, buffer):
    _floating("log_sigmoid_backward_cpu", self)
    xp = array_module(self)
    t = self.dtype.type
    neg = self < 0
    max_deriv = xp.where(neg, t(1), t(0))
    sign = xp.where(neg, t(1), t(-1))
    return as_array((max_deriv - sign * (buffer / (1 + buffer))) * grad_output)


def _log_sigmoid_double_backward(F, grad, grad_output, self):
    """PyTorch's ``log_sigmoid_double_backward(grad * grad_output, self)``: ``g * (σ(x) - 1) * σ(x)``."""
    z = F.sigmoid(self)
    return grad * grad_output * F.sub_scalar(z, 1) * z


log_sigmoid_spec = defop(
    "log_sigmoid_forward",
    _log_sigmoid_forward,
    outputs=("output", "buffer"),
    nondiff_outputs=("buffer",),
    node="LogSigmoidBackward0",
    self=lambda F, grad, self, buffer: F.log_sigmoid_backward(grad, self, buffer),
    doc="``log(sigmoid(x))``, computed stably (``LogSigmoidBackward0``).",
)
defop(
    "log_sigmoid_backward",
    _log_sigmoid_backward,
    inputs=("grad_output", "self", "buffer"),
    nondiff=("buffer",),
    grad_output=lambda F, grad, self, buffer: F.log_sigmoid_backward(grad, self, buffer),
    self=_log_sigmoid_double_backward,
)


def log_sigmoid(F, x):
    """``log(sigmoid(x))`` in a formula (``LogSigmoidBackward0`` when recorded)."""
    return F.log_sigmoid_forward(x)[0]


# -- logit: sigmoid's inverse --------------------------------------------------------------------------------------
@_opmath
def _logit(self, eps=None):
    x = to_float(self)
    xp = array_module(x)
    if eps is not None:
        t = x.dtype.type
        x = xp.where(xp.isnan(x), x, xp.minimum(xp.maximum(x, t(eps)), t(1 - eps)))
    return as_array(xp.log(x / (1 - x)))


def _logit_backward(F, grad, self, eps):
    """PyTorch's ``infinitely_differentiable_logit_backward``: ``grad / (x * (1 - x))`` inside ``[eps, 1 - eps]``
    (``[0, 1]`` without ``eps``); outside, 0 with ``eps`` and nan without."""
    lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    inside = (self >= lo) & (self <= hi)
    return F.where(inside, grad / (self * one_minus(F, self)), float("nan") if eps is None else 0.0)


logit_spec = defop("logit", _logit, self=_logit_backward)


@public("logit")
def logit(input, eps=None):
    """The log-odds ``log(p / (1 - p))``, inverse of :func:`sigmoid` (``LogitBackward0``).

    Parameters
    ----------
    input : Tensor
        Probabilities, any shape and device; integer and bool input give
        the default float dtype.
    eps : float, optional
        Clamp ``input`` to ``[eps, 1 - eps]`` first (the gradient is then 0
        outside that range); without it logit(0) is -inf, logit(1) inf, and
        values outside ``[0, 1]`` give nan (and a nan gradient).

    Raises
    ------
    TypeError
        ``input`` is not a Tensor.
    """
    check_tensor("logit", "input", input)
    return apply(logit_spec, (input, None if eps is None else float(eps)))


@public("logit_", function=False)
def logit_(self, eps=None):
    """In-place :meth:`logit` (node ``LogitBackward0``; floating tensors only, as in PyTorch)."""
    return inplace(self, logit_spec, (self, None if eps is None else float(eps)))


# -- clamp_min under no_grad, for the loss formulas ----------------------------------------------------------------
def clamp_min_no_grad(F, t, value):
    """``t.clamp_min_(value)`` under ``no_grad`` in a formula (PyTorch's ``NoGradGuard`` blocks): not recorded."""
    if F.records:
        with no_grad():
            t.clamp_(min=value)
        return t
    return array_module(t).maximum(t, value)


# -- issue 18: hardswish, hardsigmoid, softshrink, hardshrink, threshold, celu, selu, mish, glu, prelu -------------
def _float_range(dtype) -> str:
    """The largest finite value of a float dtype, as C++'s ``operator<<`` prints it (6 significant digits)."""
    return f"{float(np.finfo(dtype).max):g}"


@_opmath
def _hardswish(self):
    _floating("hardswish_cpu", self)
    xp = array_module(self)
    t = self.dtype.type
    return as_array(self * xp.minimum(xp.maximum(self + t(3), t(0)), t(6)) / t(6))


@_opmath
def _hardswish_backward(grad_output, self):
    _floating("hardswish_backward_cpu", self)
    xp = array_module(self)
    t = self.dtype.type
    mid = grad_output * (self / t(3) + t(0.5))
    return as_array(xp.where(self <= t(-3), t(0), xp.where(self < t(3), mid, grad_output)))


hardswish_spec = defop(
    "hardswish",
    _hardswish,
    self=lambda F, grad, self: F.hardswish_backward(grad, self),
    doc="``x * relu6(x + 3) / 6`` (``HardswishBackward0``).",
)
defop(
    "hardswish_backward",
    _hardswish_backward,
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, self: F.hardswish_backward(grad, self),
    self=lambda F, grad, grad_output, self: F.where(
        (self > -3.0) & (self < 3.0), F.div_scalar(grad * grad_output, 3.0), 0.0
    ),
)


@_opmath
def _hardsigmoid(self):
    _floating("hardsigmoid_cpu", self)
    xp = array_module(self)
    t = self.dtype.type
    return as_array(xp.minimum(xp.maximum(self + t(3), t(0)), t(6)) / t(6))


def _hardsigmoid_backward(grad_output, self):
    _floating("hardsigmoid_backward_cpu", self)
    xp = array_module(self)
    t = grad_output.dtype.type
    return as_array(xp.where((self > -3) & (self < 3), grad_output / t(6), t(0)))


def _no_derivative(name):
    def formula(F, grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


hardsigmoid_spec = defop(
    "hardsigmoid",
    _hardsigmoid,
    self=lambda F, grad, self: F.hardsigmoid_backward(grad, self),
    doc="``relu6(x + 3) / 6`` (``HardsigmoidBackward0``); PyTorch has no second derivative for it.",
)
defop(  # PyTorch defines no derivative for hardsigmoid_backward: a recorded pass shows a NotImplemented node
    "hardsigmoid_backward",
    _hardsigmoid_backward,
    inputs=("grad_output", "self"),
    node="torch::autograd::NotImplemented",
    grad_output=_no_derivative("hardsigmoid_backward"),
    self=_no_derivative("hardsigmoid_backward"),
)


def _softshrink(self, lambd=0.5):
    _floating("softshrink_check", self)
    if not 0 <= lambd <= float(np.finfo(self.dtype).max):
        raise RuntimeError(
            f"lambda must be in range [0, {_float_range(self.dtype)}] for input dtype {_dtype.word(self.dtype)}, "
            f"but found {lambd:g}"
        )
    xp = array_module(self)
    t = self.dtype.type
    lam = t(lambd)
    return as_array(xp.where(self > lam, self - lam, xp.where(self < -lam, self + lam, self * t(0))))


def _shrink_backward(grad_output, self, lambd):
    xp = array_module(self)
    lam = self.dtype.type(lambd)
    return as_array(xp.where((self >= -lam) & (self <= lam), grad_output.dtype.type(0), grad_output))


softshrink_spec = defop(
    "softshrink",
    _softshrink,
    self=lambda F, grad, self, lambd: F.softshrink_backward(grad, self, lambd),
    doc="``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between (``SoftshrinkBackward0``).",
)
defop(
    "softshrink_backward",
    _shrink_backward,
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, self, lambd: F.softshrink_backward(grad, self, lambd),
    self=lambda F, grad: F.zeros_like(grad),
)


def _hardshrink(self, lambd=0.5):
    _floating("hardshrink_cpu", self)
    xp = array_module(self)
    lam = self.dtype.type(lambd)
    return as_array(xp.where((self >= -lam) & (self <= lam), self.dtype.type(0), self))


hardshrink_spec = defop(
    "hardshrink",
    _hardshrink,
    self=lambda F, grad, self, lambd: F.hardshrink_backward(grad, self, lambd),
    doc="``x`` outside ``[-lambd, lambd]``, 0 inside (``HardshrinkBackward0``).",
)
defop(
    "hardshrink_backward",
    _shrink_backward,
    inputs=("grad_output", "self"),
    grad_output=lambda F, grad, self, lambd: F.hardshrink_backward(grad, self, lambd),
    self=lambda F, grad: F.zeros_like(grad),
)


def _threshold(self, threshold, value):
    if self.dtype.kind == "b":
        raise RuntimeError("\"threshold_cpu\" not implemented for 'Bool'")
    xp = array_module(self)
    t = self.dtype.type
    return as_array(xp.where(self <= threshold, t(value), self))


threshold_spec = defop(
    "threshold",
    _threshold,
    self=lambda F, grad, self, threshold: F.threshold_backward(grad, self, threshold),
    doc="``value`` where ``x <= threshold``, ``x`` elsewhere (``ThresholdBackward0``).",
)


def _celu_check(alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


def _celu(self, alpha=1.0):
    _celu_check(alpha)
    return _elu(self, alpha, 1, 1.0 / alpha)


celu_spec = defop(
    "celu",
    _celu,
    self=lambda F, grad, self, alpha: F.elu_backward(grad, self, alpha, 1, 1.0 / alpha, False),
    doc="CELU, ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``CeluBackward0``).",
)
celu_inplace_spec = defop(
    "celu_",
    _celu,
    node="CeluBackward1",
    self=lambda F, grad, result, alpha: F.elu_backward(grad, result, alpha, 1, 1.0 / alpha, True),
    doc="In-place CELU (``CeluBackward1``, saves the result).",
)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


@_opmath
def _mish(self):
    _floating("mish_cpu", self)
    xp = array_module(self)
    return as_array(self * xp.tanh(xp.log1p(xp.exp(self))))


def _mish_backward(F, grad, self):
    """PyTorch's ``infinitely_differentiable_mish_backward``: ``grad * (tanh(sp) + x * σ(x) * (1 - tanh(sp)^2))``
    with ``sp = log1p(exp(x))``."""
    sigmoid = F.sigmoid(self)
    tanh_softplus = F.tanh(F.log1p(F.exp(self)))
    return grad * (tanh_softplus + self * sigmoid * one_minus(F, tanh_softplus * tanh_softplus))


mish_spec = defop("mish", _mish, self=_mish_backward, doc="Mish, ``x * tanh(softplus(x))`` (``MishBackward0``).")


def _glu_halves(self, dim):
    n = self.shape[dim] // 2
    xp = array_module(self)
    idx = [slice(None)] * self.ndim
    idx[dim] = slice(0, n)
    a = self[tuple(idx)]
    idx[dim] = slice(n, 2 * n)
    return a, self[tuple(idx)], xp


def _glu(self, dim=-1):
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _floating("glu_cpu", self)
    d = dim % self.ndim
    if self.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {self.shape[d]}")
    a, b, xp = _glu_halves(self, d)
    return as_array(a / (1 + xp.exp(-b)))


def _glu_backward(grad_output, self, dim):
    _floating("glu_backward_cpu", self)
    d = dim % self.ndim
    a, b, xp = _glu_halves(self, d)
    s = 1 / (1 + xp.exp(-b))
    return as_array(xp.concatenate([grad_output * s, grad_output * a * s * (1 - s)], axis=d))


def _glu_parts(F, self, dim):
    d = dim % len(self.shape)
    n = self.shape[d] // 2
    a = F.slice(self, d, 0, n, 1)
    b = F.slice(self, d, n, 2 * n, 1)
    return a, F.sigmoid(b), d, n


def _glu_double_backward_grad_output(F, grad, self, dim):
    """d(glu_backward)/d(grad_output) applied to ``grad`` (the shape of ``self``): ``g_a * σ(b) + g_b * a * σ'(b)``."""
    a, s, d, n = _glu_parts(F, self, dim)
    ga, gb = F.slice(grad, d, 0, n, 1), F.slice(grad, d, n, 2 * n, 1)
    return ga * s + gb * a * s * one_minus(F, s)


def _glu_double_backward(F, grad, grad_output, self, dim):
    """d(glu_backward)/d(self) applied to ``grad``: ``[g_b * gO * σ'(b), g_a * gO * σ'(b) + g_b * gO * a * σ''(b)]``."""
    a, s, d, n = _glu_parts(F, self, dim)
    ga, gb = F.slice(grad, d, 0, n, 1), F.slice(grad, d, n, 2 * n, 1)
    ds = s * one_minus(F, s)
    dds = ds * one_minus(F, F.mul_scalar(s, 2.0))
    return F.cat(d, gb * grad_output * ds, ga * grad_output * ds + gb * grad_output * a * dds)


glu_spec = defop(
    "glu",
    _glu,
    self=lambda F, grad, self, dim: F.glu_backward(grad, self, dim),
    doc="GLU: the first half of ``x`` along ``dim`` times the sigmoid of the second (``GluBackward0``).",
)
defop(
    "glu_backward",
    _glu_backward,
    inputs=("grad_output", "self"),
    grad_output=_glu_double_backward_grad_output,
    self=_glu_double_backward,
)


@_opmath
def _prelu_kernel(self, weight):
    xp = array_module(self)
    return as_array(xp.where(self > 0, self, weight * self))


@_opmath
def _prelu_kernel_backward(grad_output, self, weight):
    """(grad_self, grad_weight), both of the input's shape: the engine sums grad_weight down to the weight's
    broadcast shape (``SumBackward1`` when recorded), as PyTorch's does."""
    xp = array_module(self)
    pos = self > 0
    gi = xp.where(pos, grad_output, weight * grad_output)
    gw = xp.where(pos, self.dtype.type(0), self * grad_output)
    return as_array(gi), as_array(gw)


def _prelu_double_backward(F, grads, grad_output, self, weight, grad_input_mask):
    """The derivatives of ``_prelu_kernel_backward`` (gI = gO * (x > 0 ? 1 : w), gW = x <= 0 ? x * gO : 0),
    contracted with the incoming gradients ``grads = (ggI, ggW)``: for grad_output, self and weight."""
    ggi, ggw = grads[0], grads[1]
    pos = type_as(F, self > 0, grad_output)
    neg = one_minus(F, pos)
    out_go = out_self = out_w = None
    terms = []
    if ggi is not None:
        terms.append(ggi * (pos + neg * weight))
    if ggw is not None:
        terms.append(ggw * neg * self)
    if grad_input_mask[0] and terms:
        out_go = terms[0] if len(terms) == 1 else terms[0] + terms[1]
    if grad_input_mask[1] and ggw is not None:
        out_self = ggw * neg * grad_output
    if grad_input_mask[2] and ggi is not None:
        out_w = ggi * neg * grad_output  # of the input's shape; the engine sums it to the weight's
    return out_go, out_self, out_w


prelu_kernel_spec = defop(
    "_prelu_kernel",
    _prelu_kernel,
    inputs=("self", "weight"),
    node="PreluKernelBackward0",
    **{
        "self, weight": lambda F, grad, self, weight: F._prelu_kernel_backward(grad, self, weight),
    },
    doc="PReLU: ``x`` for x > 0, ``weight * x`` otherwise, ``weight`` broadcast (``PreluKernelBackward0``).",
)
defop(
    "_prelu_kernel_backward",
    _prelu_kernel_backward,
    inputs=("grad_output", "self", "weight"),
    outputs=("grad_self", "grad_weight"),
    node="PreluKernelBackwardBackward0",
    **{"grad_output, self, weight": _prelu_double_backward},
)
threshold_inplace_spec = defop(
    "threshold_",
    _threshold,
    node="ThresholdBackward1",
    self=lambda F, grad, self, threshold: F.threshold_backward(grad, self, threshold),
    doc="In-place threshold (``ThresholdBackward1``; the formula reads the input before the change).",
)


# -- the torch.* forms: torch.celu, selu, threshold (and their in-place twins), hardshrink, prelu ------------------
# PyTorch's nn.functional calls these (``F.celu(x, inplace=True)`` is ``torch.celu_(x)``), and so does leafkit's.
def apply_activation(name, spec, input, args, in_place):
    """Record the activation ``spec`` on ``input`` (in place when ``in_place``), after PyTorch's check that
    ``input`` is a Tensor (TypeError "``name``(): argument 'input' (position 1) must be Tensor, not list")."""
    check_tensor(name, "input", input)
    if in_place:
        return inplace(input, spec, (input, *args))
    return apply(spec, (input, *args))


@public("celu", method=False)
def celu(input, alpha=1.0):
    """CELU, ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``CeluBackward0``); floating input of any shape.

    Its derivative is ELU's (``EluBackwardBackward0`` when recorded).

    Raises
    ------
    RuntimeError
        ``alpha=0`` ("ZeroDivisionError: alpha cannot be 0 for CELU").
    """
    return apply_activation("celu", celu_spec, input, (float(alpha),), False)


@public("celu_", method=False)
def celu_(input, alpha=1.0):
    """In-place :func:`celu` (``CeluBackward1``, which saves the result)."""
    return apply_activation("celu_", celu_inplace_spec, input, (float(alpha),), True)


@public("selu", method=False)
def selu(input):
    """SELU, ``scale * elu(x, alpha)`` with the self-normalising constants (alpha ≈ 1.6733, scale ≈ 1.0507).

    PyTorch computes it as ``elu(x, alpha, scale)``, so the node is ``EluBackward0``.
    """
    return apply_activation("selu", elu_spec, input, (SELU_ALPHA, SELU_SCALE, 1), False)


@public("selu_", method=False)
def selu_(input):
    """In-place :func:`selu` (``EluBackward1``)."""
    return apply_activation("selu_", elu_inplace_spec, input, (SELU_ALPHA, SELU_SCALE, 1), True)


@public("threshold", method=False)
def threshold(input, threshold, value):
    """``value`` where ``x <= threshold``, ``x`` elsewhere (``ThresholdBackward0``).

    Integer input is allowed (the comparison and the value follow the input's dtype), as in PyTorch; bool input
    raises RuntimeError ("\\"threshold_cpu\\" not implemented for 'Bool'").
    """
    return apply_activation("threshold", threshold_spec, input, (threshold, value), False)


@public("threshold_", method=False)
def threshold_(input, threshold, value):
    """In-place :func:`threshold` (``ThresholdBackward1``)."""
    return apply_activation("threshold_", threshold_inplace_spec, input, (threshold, value), True)


@public("hardshrink")
def hardshrink(input, lambd=0.5):
    """``x`` outside ``[-lambd, lambd]``, 0 inside (``HardshrinkBackward0``); also ``Tensor.hardshrink``."""
    check_tensor("hardshrink", "input", input)
    return apply(hardshrink_spec, (input, float(lambd)))


@public("prelu")
def prelu(input, weight):
    """PReLU: ``x`` for x > 0, ``weight * x`` otherwise, with one slope or one per channel (dim 1); also
    ``Tensor.prelu``.

    ``weight`` (1-d, 1 or C elements) is viewed to broadcast over ``input`` (``ViewBackward0``) and the node is
    ``PreluKernelBackward0``, as in PyTorch 2.x.

    Raises
    ------
    RuntimeError
        "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and channel size = 4."
    """
    check_tensor("prelu", "input", input)
    n = weight.numel()
    channels = input.shape[1] if input.dim() >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{n} and channel size = {channels}."
        )
    if input.dim() == 1 and weight.dim() == 1:
        w = weight
    elif input.dim() == 0:
        w = weight.view(())
    else:
        w = weight.view((1, n) + (1,) * (input.dim() - 2))
    return apply(prelu_kernel_spec, (input, w))
