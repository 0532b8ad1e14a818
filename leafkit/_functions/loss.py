"""Losses: ``nll_loss`` (NllLossBackward0), ``mse_loss`` (MseLossBackward0), ``smooth_l1_loss``
(SmoothL1LossBackward0), ``huber_loss`` (HuberLossBackward0), ``binary_cross_entropy``
(BinaryCrossEntropyBackward0) and ``binary_cross_entropy_with_logits``
(BinaryCrossEntropyWithLogitsBackward0), with their backward ops.  Their second-derivative formulas are
PyTorch's (``FunctionsManual.cpp``: ``binary_cross_entropy_double_backward`` ...).

``l1_loss`` is not an operation of its own either: PyTorch computes ``(input - target).abs()`` and its
mean or sum (``MeanBackward0`` over ``AbsBackward0``); see :func:`leafkit.nn.functional.l1_loss`.

``cross_entropy`` is not an operation of its own, in leafkit as in PyTorch:
it is ``nll_loss(log_softmax(input, 1), target)``, so its graph is
``NllLossBackward0`` over ``LogSoftmaxBackward0``.

``reduction`` is PyTorch's enum inside the ops (0 none, 1 mean, 2 sum; what
``grad_fn._saved_reduction`` shows); the functions of ``nn.functional`` take the strings.  The ``torch.*``
forms here (``torch.kl_div``, ``torch.binary_cross_entropy_with_logits``) take the enum, as PyTorch's do,
and ``nn.functional`` calls them.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._base import (
    array_module,
    as_array,
    broadcast_check,
    broadcast_shapes,
    check_tensor,
    promote,
    promote_types,
    warn_user,
)
from ._batch_rules import SPEC, declare, logical_front, pointwise
from ._batched import PERFORMANCE_WARNING, BatchedTensor, batch_size, expand_batch, pad, per_sample, wrap
from ._registry import apply, defop, public
from .activation import clamp_min_no_grad, log_sigmoid, one_minus, type_as
from .elementwise import xlogy

NONE, MEAN, SUM = 0, 1, 2
_REDUCTIONS = {"none": NONE, "mean": MEAN, "sum": SUM}
_REDUCTION_NAMES = {NONE: "none", MEAN: "mean", SUM: "sum"}


def reduction_enum(reduction) -> int:
    """``"mean"`` -> 1 ...; PyTorch's ValueError for an unknown reduction."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _reduce(loss, reduction):
    xp = array_module(loss)
    if reduction == NONE:
        return loss
    if reduction == SUM:
        return as_array(xp.asarray(loss.sum(dtype=loss.dtype), dtype=loss.dtype))
    if loss.size == 0:
        return as_array(xp.asarray(np.nan, dtype=loss.dtype))  # the mean of nothing, without NumPy's warning
    return as_array(xp.asarray(loss.mean(dtype=loss.dtype), dtype=loss.dtype))


# -- mse_loss --------------------------------------------------------------------------------------------------
def _mse_loss(self, target, reduction):
    if self.dtype != target.dtype:
        self, target = promote(self, target)
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{_dtype.word(self.dtype)}'")
    diff = self - target
    return _reduce(diff * diff, reduction)


def _mse_loss_backward(grad_output, self, target, reduction):
    # PyTorch's kernel: norm * (self - target) * grad, with norm = 2 / numel for "mean"
    norm = self.dtype.type(2.0 / self.size if reduction == MEAN and self.size else 2.0)
    return as_array((norm * (self - target) * grad_output).astype(self.dtype, copy=False))


def _mse_double(F, g, input, reduction):
    out = F.mul_scalar(g, 2)
    return F.div_scalar(out, int(np.prod(input.shape))) if reduction == MEAN else out


def _mse_double_grad_output(F, grad, grad_output, self, target, reduction):
    if reduction == NONE:
        return F.mse_loss_backward(grad, self, target, reduction)
    r = F.mse_loss_backward(F.ones_like(grad_output), self, target, reduction)
    return F.sum(r * grad)


mse_loss_spec = defop(
    "mse_loss",
    _mse_loss,
    inputs=("self", "target"),
    self=lambda F, grad, self, target, reduction: F.mse_loss_backward(grad, self, target, reduction),
    target=lambda F, grad, self, target, reduction: F.mse_loss_backward(grad, target, self, reduction),
)
defop(
    "mse_loss_backward",
    _mse_loss_backward,
    inputs=("grad_output", "self", "target"),
    grad_output=_mse_double_grad_output,
    self=lambda F, grad, grad_output, self, reduction: _mse_double(F, grad * grad_output, self, reduction),
    target=lambda F, grad, grad_output, target, reduction: -_mse_double(F, grad * grad_output, target, reduction),
)


# -- smooth_l1_loss and huber_loss ---------------------------------------------------------------------------------
def _elementwise_loss_args(self, target, kernel):
    if self.dtype != target.dtype:
        self, target = promote(self, target)
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.word(self.dtype)}'")
    return self, target


def _norm(self, reduction):
    """The factor PyTorch's loss kernels scale a gradient by: ``1 / numel`` for "mean", else 1."""
    return 1.0 / self.size if reduction == MEAN and self.size else 1.0


def _smooth_l1_loss(self, target, reduction, beta):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    self, target = _elementwise_loss_args(self, target, "smooth_l1_cpu")
    xp = array_module(self)
    t = self.dtype.type
    z = xp.abs(self - target)
    loss = xp.where(z < beta, t(0.5) * z * z / t(beta) if beta else z, z - t(0.5 * beta))
    return _reduce(as_array(loss.astype(self.dtype, copy=False)), reduction)


def _smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    self, target = _elementwise_loss_args(self, target, "smooth_l1_backward_cpu")
    xp = array_module(self)
    t = self.dtype.type
    norm = t(_norm(self, reduction))
    x = self - target
    inner = norm * x * grad_output / t(beta) if beta else x * 0
    out = xp.where(x < -beta, -norm * grad_output, xp.where(x > beta, norm * grad_output, inner))
    return as_array(xp.asarray(out, dtype=self.dtype))


def _smooth_l1_double_backward(F, grad, self, target, reduction, beta):
    """PyTorch's ``smooth_l1_loss_double_backward``: ``grad * (|self - target| < beta) / beta`` (/ numel for
    "mean"); zeros for ``beta == 0``."""
    if beta == 0:
        return F.zeros_like(grad)
    d = F.abs(self - target)
    g = F.div_scalar(grad * type_as(F, d < beta, grad), beta)
    if reduction == MEAN:
        g = F.div_scalar(g, int(np.prod(self.shape)))
    return g


smooth_l1_loss_spec = defop(
    "smooth_l1_loss",
    _smooth_l1_loss,
    inputs=("self", "target"),
    self=lambda F, grad, self, target, reduction, beta: F.smooth_l1_loss_backward(grad, self, target, reduction, beta),
    target=lambda F, grad, self, target, reduction, beta: F.smooth_l1_loss_backward(
        grad, target, self, reduction, beta
    ),
)
defop(
    "smooth_l1_loss_backward",
    _smooth_l1_loss_backward,
    inputs=("grad_output", "self", "target"),
    # a (N,)-shaped result for a 0-d grad_output is summed back by the engine (SumBackward0), as in PyTorch
    grad_output=lambda F, grad, self, target, reduction, beta: F.smooth_l1_loss_backward(
        grad, self, target, reduction, beta
    ),
    self=lambda F, grad, grad_output, self, target, reduction, beta: _smooth_l1_double_backward(
        F, grad * grad_output, self, target, reduction, beta
    ),
    target=lambda F, grad, grad_output, self, target, reduction, beta: (
        -_smooth_l1_double_backward(F, grad * grad_output, self, target, reduction, beta)
    ),
)


def _huber_loss(self, target, reduction, delta):
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    out_dtype = self.dtype  # PyTorch writes into empty_like(input): the input's dtype, computed in the common one
    self, target = _elementwise_loss_args(self, target, "huber_cpu")
    xp = array_module(self)
    t = self.dtype.type
    z = xp.abs(self - target)
    loss = xp.where(z < delta, t(0.5) * z * z, t(delta) * (z - t(0.5 * delta)))
    return _reduce(as_array(loss.astype(out_dtype, copy=False)), reduction)


def _huber_loss_backward(grad_output, self, target, reduction, delta):
    out_dtype = self.dtype
    self, target = _elementwise_loss_args(self, target, "huber_backward_cpu")
    xp = array_module(self)
    t = self.dtype.type
    norm = t(_norm(self, reduction))
    x = self - target
    out = xp.where(
        x < -delta,
        -norm * grad_output * t(delta),
        xp.where(x > delta, norm * grad_output * t(delta), norm * x * grad_output),
    )
    return as_array(xp.asarray(out, dtype=out_dtype))


def _huber_double_backward(F, grad, self, target, reduction, delta):
    """PyTorch's ``huber_loss_double_backward``: ``grad * (|self - target| < delta)`` (/ numel for "mean")."""
    g = grad * (F.abs(self - target) < delta)
    if reduction == MEAN:
        g = F.div_scalar(g, int(np.prod(self.shape)))
    return g


def _huber_double_backward_grad_output(F, grad, grad_output, self, target, reduction, delta):
    """PyTorch's ``huber_loss_double_backward_grad_output``."""
    if reduction == NONE:
        return F.huber_loss_backward(grad, self, target, reduction, delta)
    r = F.huber_loss_backward(F.ones_like(grad_output), self, target, reduction, delta)
    return F.sum(r * grad)


huber_loss_spec = defop(
    "huber_loss",
    _huber_loss,
    inputs=("self", "target"),
    self=lambda F, grad, self, target, reduction, delta: F.huber_loss_backward(grad, self, target, reduction, delta),
    target=lambda F, grad, self, target, reduction, delta: F.huber_loss_backward(grad, target, self, reduction, delta),
)
defop(
    "huber_loss_backward",
    _huber_loss_backward,
    inputs=("grad_output", "self", "target"),
    grad_output=_huber_double_backward_grad_output,
    self=lambda F, grad, grad_output, self, target, reduction, delta: _huber_double_backward(
        F, grad * grad_output, self, target, reduction, delta
    ),
    target=lambda F, grad, grad_output, self, target, reduction, delta: (
        -_huber_double_backward(F, grad * grad_output, self, target, reduction, delta)
    ),
)


# -- binary_cross_entropy ------------------------------------------------------------------------------------------
_BCE_EPSILON = 1e-12


def _check_bce(self, target):
    if target.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {_dtype.word(target.dtype)} but expected {_dtype.word(self.dtype)}")
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{_dtype.word(self.dtype)}'")


def _binary_cross_entropy(self, target, weight, reduction):
    _check_bce(self, target)
    xp = array_module(self)
    if not bool(((self >= 0) & (self <= 1)).all()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not bool(((target >= 0) & (target <= 1)).all()):
        raise RuntimeError("all elements of target should be between 0 and 1")
    t = self.dtype.type
    # PyTorch clamps each log at -100, so a probability of exactly 0 or 1 gives a loss of 100, not inf
    loss = (target - t(1)) * xp.maximum(xp.log1p(-self), t(-100)) - target * xp.maximum(xp.log(self), t(-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(as_array(xp.asarray(loss, dtype=self.dtype)), reduction)


def _binary_cross_entropy_backward(grad_output, self, target, weight, reduction):
    _check_bce(self, target)
    xp = array_module(self)
    t = self.dtype.type
    g = grad_output * (self - target) / xp.maximum((t(1) - self) * self, t(_BCE_EPSILON))
    if weight is not None:
        g = g * weight
    if reduction == MEAN:
        g = g / t(self.size)
    return as_array(xp.asarray(g, dtype=self.dtype))


def _numel(x):
    return int(np.prod(x.shape))


def _bce_target_backward(F, grad, self, target, weight, reduction):
    """PyTorch's ``binary_cross_entropy_target_backward``: ``-logit(self) * grad`` (* weight, / numel)."""
    g = -F.logit(self) * grad
    if weight is not None:
        g = g * weight
    if reduction == MEAN:
        g = F.div_scalar(g, _numel(target))
    return g


def _bce_double_backward(F, grad, grad_output, self, target, weight, reduction):
    """PyTorch's ``binary_cross_entropy_double_backward`` (the derivative of the backward by ``self``)."""
    eps = _BCE_EPSILON
    inp_pl_eps = F.add_scalar(self, eps)
    one_m_inp_pl_eps = F.add_scalar(one_minus(F, self), eps)
    g = (self * self - F.mul_scalar(self, 2) * target + target) / (F.pow(inp_pl_eps, 2) * F.pow(one_m_inp_pl_eps, 2))
    g = g * (grad * grad_output)
    if weight is not None:
        g = g * weight
    if reduction == MEAN:
        g = F.div_scalar(g, _numel(self))
    return g


def _bce_double_backward_target(F, grad, grad_output, self, target, weight, reduction):
    """PyTorch's ``binary_cross_entropy_double_backward_target``."""
    res = -grad * grad_output
    if weight is not None:
        res = res * weight
    denom = clamp_min_no_grad(F, one_minus(F, self) * self, _BCE_EPSILON)
    res = res / denom
    if reduction == MEAN:
        res = F.div_scalar(res, _numel(target))
    return res


def _bce_double_backward_grad_output(F, grad, self, target, weight, reduction):
    """PyTorch's ``binary_cross_entropy_double_backward_grad_output``."""
    eps = _BCE_EPSILON
    ggo = (self - target) / (F.add_scalar(self, eps) * F.add_scalar(one_minus(F, self), eps))
    ggo = ggo * grad
    if weight is not None:
        ggo = ggo * weight
    if reduction == MEAN:
        ggo = F.div_scalar(ggo, _numel(self))
    return ggo  # for "mean"/"sum" the engine sums it to the 0-d grad_output's shape (SumBackward0), as PyTorch's


bce_spec = defop(
    "binary_cross_entropy",
    _binary_cross_entropy,
    inputs=("self", "target", "weight"),
    not_differentiable=("weight",),
    self=lambda F, grad, self, target, weight, reduction: F.binary_cross_entropy_backward(
        grad, self, target, weight, reduction
    ),
    target=_bce_target_backward,
)
defop(
    "binary_cross_entropy_backward",
    _binary_cross_entropy_backward,
    inputs=("grad_output", "self", "target", "weight"),
    nondiff=("weight",),
    grad_output=_bce_double_backward_grad_output,
    self=_bce_double_backward,
    target=_bce_double_backward_target,
)


# -- nll_loss --------------------------------------------------------------------------------------------------
def _check_nll(self, target, weight):
    if target.dtype != np.int64 and target.dtype != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_dtype.word(target.dtype)}")
    if self.ndim not in (1, 2):
        raise NotImplementedError(
            f"leafkit's nll_loss takes input of shape (N, C) or (C,); got {self.ndim}-D input "
            f"of shape {list(self.shape)} (PyTorch also takes (N, C, d1, ...))"
        )
    if self.ndim == 1:
        if target.size != 1 or target.ndim > 1:
            raise ValueError(f"Expected input batch_size (1) to match target batch_size ({target.size}).")
    elif target.ndim != 1 or target.shape[0] != self.shape[0]:
        n_t = target.shape[0] if target.ndim else 1
        raise ValueError(f"Expected input batch_size ({self.shape[0]}) to match target batch_size ({n_t}).")
    n_classes = self.shape[-1]
    if weight is not None:
        if weight.ndim != 1 or weight.shape[0] != n_classes:
            raise RuntimeError(
                f"weight tensor should be defined either for all {n_classes} classes or no "
                f"classes but got weight tensor of shape: {list(weight.shape)}"
            )
        if weight.dtype != self.dtype:
            raise RuntimeError(f"expected scalar type {_dtype.word(self.dtype)} but found {_dtype.word(weight.dtype)}")


_ROWS: dict = {}  # batch size -> a read-only NumPy arange, the row indices of every batch of that size


def _arange(xp, n):
    """``xp.arange(n)``, the row indices of a batch; NumPy's are made once per size and shared (read-only)."""
    if xp is not np:
        return xp.arange(n)
    rows = _ROWS.get(n)
    if rows is None:
        rows = np.arange(n)
        rows.flags.writeable = False
        if len(_ROWS) < 64:
            _ROWS[n] = rows
    return rows


def _count_nonzero(mask) -> int:
    """The number of True in a boolean array (NumPy's or CuPy's)."""
    return int(mask.sum()) if mask.__class__ is not np.ndarray else np.count_nonzero(mask)


def _nll_rows(self, target, ignore_index):
    """(2-D input, targets, kept-rows mask or None, targets safe to index with)."""
    x2 = self.reshape(1, -1) if self.ndim == 1 else self
    t = target.reshape(1) if self.ndim == 1 else target
    t = t.astype(np.int64, copy=False)
    n_classes = x2.shape[1]
    # the common case: every target is a valid class (as unsigned, a negative one is past every class) and none
    # is ignored (count_nonzero: a third of the time of ``.any()`` on a batch of targets)
    if not _count_nonzero(t.view(np.uint64) >= n_classes) and not (
        0 <= ignore_index < n_classes and _count_nonzero(t == ignore_index)
    ):
        return x2, t, None, t
    xp = array_module(self)
    keep = t != ignore_index
    safe = xp.where(keep, t, 0)
    bad = (safe < 0) | (safe >= n_classes)
    if bool(bad.any()):
        raise IndexError(f"Target {int(safe[bad][0])} is out of bounds.")
    return x2, t, keep, safe


def _nll_loss(self, target, weight, reduction, ignore_index):
    """Negative log-likelihood of integer class targets; returns (loss, total_weight).

    Samples whose target is ``ignore_index`` are left out, as in PyTorch's
    kernel, not multiplied by a zero weight: a NaN or inf in an ignored row
    reaches neither the loss nor the gradient, an ignored row's loss
    (``reduction="none"``) and gradient are ``0.``.
    """
    _check_nll(self, target, weight)
    xp = array_module(self)
    x2, t, keep, safe = _nll_rows(self, target, ignore_index)
    rows = _arange(xp, t.shape[0])
    w = None if weight is None else weight[safe]
    zero = self.dtype.type(0)
    picked = x2[rows, safe]
    if reduction == NONE and self.ndim == 2:
        out = -picked if w is None else -picked * w
        if keep is not None:
            out = xp.where(keep, out, zero)  # an ignored row is 0., whatever its input holds
        total = zero
    else:
        # PyTorch's sum: start at 0 and subtract each kept term (so a zero loss is 0., never -0.)
        terms = picked if w is None else picked * w
        if keep is not None:
            terms = terms[keep]
        out = zero - terms.sum(dtype=self.dtype)
        if w is None:
            total = self.dtype.type(t.shape[0] if keep is None else int(keep.sum()))
        else:
            total = (w if keep is None else w[keep]).sum(dtype=self.dtype)
        if reduction == MEAN:
            out = out / total  # 0/0 = nan when every sample is ignored, as in PyTorch
    out = xp.asarray(out, dtype=self.dtype)
    if out.ndim and (reduction != NONE or self.ndim == 1):
        out = out.reshape(())
    return out, xp.asarray(total, dtype=self.dtype)  # (total is a number: a 0-d array)


def _nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    xp = array_module(grad_output)
    x2, t, keep, safe = _nll_rows(self, target, ignore_index)
    rows = _arange(xp, t.shape[0])
    w = None if weight is None else weight[safe]
    grad = xp.zeros(x2.shape, dtype=grad_output.dtype)
    if reduction == NONE:
        vals = -grad_output.reshape(-1)
    elif reduction == SUM:
        vals = -grad_output
    else:
        vals = -(grad_output / total_weight)
    if w is not None:
        vals = vals * w
    if keep is None:
        grad[rows, safe] = vals
    else:
        if getattr(vals, "ndim", 0):
            vals = vals[keep]
        grad[rows[keep], safe[keep]] = vals  # the ignored rows stay 0.
    return grad.reshape(self.shape)


nll_loss_spec = defop(
    "nll_loss_forward",
    _nll_loss,
    inputs=("self", "target", "weight"),
    nondiff=("target",),
    not_differentiable=("weight",),
    outputs=("result", "total_weight"),
    nondiff_outputs=("total_weight",),
    node="NllLossBackward0",
    self=lambda F, grad, self, target, weight, reduction, ignore_index, total_weight: F.nll_loss_backward(
        grad, self, target, weight, total_weight, reduction, ignore_index
    ),
)
defop(
    "nll_loss_backward",
    lambda grad_output, self, target, weight, total_weight, reduction, ignore_index: _nll_loss_backward(
        grad_output, self, target, weight, reduction, ignore_index, total_weight
    ),
    inputs=("grad_output", "self", "target", "weight", "total_weight"),
    nondiff=("target", "weight", "total_weight"),
    grad_output=lambda F, grad, target, weight, reduction, ignore_index: F.nll_loss_forward(
        grad, target, weight, reduction, ignore_index
    )[0],
    self=lambda F, grad: F.zeros_like(grad),
)


# -- binary_cross_entropy_with_logits ---------------------------------------------------------------------------------
def _log_sigmoid(x):
    xp = array_module(x)
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def _bce_with_logits(self, target, weight, pos_weight, reduction):
    """PyTorch's composition, step by step: ``(1 - target).mul_(input).sub_(log_sigmoid(input) [* log_weight])``
    [``.mul_(weight)``]; each in-place step computes in the promoted dtype and stores in ``target``'s, so the
    loss has ``target``'s dtype (a float64 target gives a float64 loss for float32 logits)."""
    if self.shape != target.shape:
        raise ValueError(f"Target size ({list(target.shape)}) must be the same as input size ({list(self.shape)})")
    td = target.dtype
    if td.kind == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    if td.kind != "f":
        raise RuntimeError(
            f"result type {_dtype.word(promote_types(self.dtype, td))} can't be cast to the desired "
            f"output type {_dtype.word(td)}"
        )
    ls = _log_sigmoid(self)
    if pos_weight is not None:
        ls = (ls * ((pos_weight - 1) * target + 1)).astype(self.dtype, copy=False)
    loss = ((1 - target) * self).astype(td, copy=False)
    loss = (loss - ls).astype(td, copy=False)
    if weight is not None:
        loss = (loss * weight).astype(td, copy=False)
    return _reduce(as_array(loss), reduction)


def _dtype_of(x):
    return getattr(x, "_data", x).dtype


def _step(F, out, first):
    """One of PyTorch's in-place steps (``a.sub_(b)``): computed in the promoted dtype, stored in ``a``'s.  A
    recorded backward pass (``create_graph=True``) works out of place, as PyTorch's does under grad mode."""
    if F.records or _dtype_of(out) == _dtype_of(first):
        return out
    return out.astype(_dtype_of(first))


def _as_input_dtype(F, g, dtype):
    """The engine's cast of a gradient to its input's dtype (``validate_outputs``), done here: the loss has
    ``target``'s dtype, so the engine does not expect ``self``'s gradient to differ from it."""
    return g if _dtype_of(g) == dtype else F.cast(g, dtype)


def _bce_self(F, grad, self, target, weight, pos_weight, reduction):
    """PyTorch's binary_cross_entropy_with_logits_backward: ``(sigmoid(x) - t) * grad`` (with ``pos_weight``:
    ``((p*t + 1 - t) * sigmoid(x) - p*t) * grad``), times ``weight``, over ``numel`` for "mean"."""
    if pos_weight is not None:
        t = pos_weight * target
        g = t + 1
        g = _step(F, g - target, g)
        g = _step(F, g * F.sigmoid(self), g)
        g = _step(F, g - t, g)
    else:
        s = F.sigmoid(self)
        g = _step(F, s - target, s)
    g = _step(F, g * grad, g)
    if weight is not None:
        g = _step(F, g * weight, g)
    if reduction == MEAN:
        g = F.div_scalar(g, int(np.prod(self.shape)))
    return _as_input_dtype(F, g, _dtype_of(self))


def _bce_target(F, grad, self, target, weight, pos_weight, reduction):
    """PyTorch's binary_cross_entropy_with_logits_target_backward: ``-x * grad`` (with ``pos_weight``:
    ``(log_sigmoid(-x) - log_sigmoid(x) * p) * grad``), times ``weight``, over ``numel`` for "mean"."""
    if pos_weight is not None:
        a = log_sigmoid(F, -self)
        b = log_sigmoid(F, self)
        g = _step(F, a - _step(F, b * pos_weight, b), a)
        g = _step(F, g * grad, g)
    else:
        g = -self * grad
    if weight is not None:
        g = _step(F, g * weight, g)
    if reduction == MEAN:
        g = F.div_scalar(g, int(np.prod(target.shape)))
    return _as_input_dtype(F, g, _dtype_of(target))


bce_with_logits_spec = defop(
    "binary_cross_entropy_with_logits",
    _bce_with_logits,
    inputs=("self", "target", "weight", "pos_weight"),
    not_differentiable=("weight", "pos_weight"),
    self=_bce_self,
    target=_bce_target,
)


# -- the torch.* forms nn.functional calls: kl_div, binary_cross_entropy_with_logits -----------------------------------
def _check_reduction_enum(reduction) -> None:
    if reduction not in _REDUCTION_NAMES:
        raise KeyError(reduction)


@public("kl_div", method=False)
def kl_div(input, target, reduction=NONE, *, log_target=False):
    """The Kullback-Leibler divergence of ``target`` from ``input`` (log-probabilities), as PyTorch composes it:
    ``xlogy(target, target) - target * input`` pointwise (``exp(target) * (target - input)`` with
    ``log_target``), then reduced by the enum ``reduction`` (0 none, the default here as in PyTorch's binding;
    1 mean; 2 sum).  :func:`leafkit.nn.functional.kl_div` calls it (and adds "batchmean" and the warning for "mean").
    """
    _check_reduction_enum(reduction)
    check_tensor("kl_div", "input", input)
    # PyTorch's C++ evaluates the right operand first, which fixes the order of the nodes (and so of the gradient
    # sums when ``target`` requires grad)
    if log_target:
        diff = target - input
        out = target.exp() * diff
    else:
        prod = target * input
        out = xlogy(target, target) - prod
    if reduction == NONE:
        return out
    if reduction == MEAN:
        return out.mean()
    return out.sum()


@public("binary_cross_entropy_with_logits", method=False)
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=NONE):
    """Binary cross-entropy of logits (``BinaryCrossEntropyWithLogitsBackward0``), with ``reduction`` as an enum
    (0 none, the default here as in PyTorch's binding; 1 mean; 2 sum).  See
    :func:`leafkit.nn.functional.binary_cross_entropy_with_logits`, which calls it, for the formula and shapes.

    Raises
    ------
    ValueError
        "Target size (torch.Size([2, 3])) must be the same as input size (torch.Size([4, 3]))".
    RuntimeError
        A ``weight``/``pos_weight`` that does not broadcast ("The size of tensor a (3) must match the size of tensor
        b (2) at non-singleton dimension 1", or "output with shape [4, 3] doesn't match the broadcast shape
        [5, 4, 3]"); one that requires grad; an integer target ("result type Float can't be cast to the desired
        output type Long").
    """
    _check_reduction_enum(reduction)
    check_tensor("binary_cross_entropy_with_logits", "input", input)
    if not isinstance(target, Tensor):
        raise TypeError(
            f"binary_cross_entropy_with_logits(): argument 'target' (position 2) must be Tensor, not "
            f"{type(target).__name__}"
        )
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    if target._data.dtype.kind != "f":
        raise RuntimeError(
            f"result type {_dtype.word(input._data.dtype)} can't be cast to the desired output type "
            f"{_dtype.word(target._data.dtype)}"
        )
    shape = tuple(input.shape)
    for name, t in (("pos_weight", pos_weight), ("weight", weight)):
        if t is None:
            continue
        check_tensor("binary_cross_entropy_with_logits", name, t)
        a, b = (t._data, target._data) if name == "pos_weight" else (input._data, t._data)
        broadcast_check(a, b)
        full = broadcast_shapes(shape, tuple(t.shape))
        if full != shape:
            raise RuntimeError(
                f"output with shape [{', '.join(map(str, shape))}] doesn't match the broadcast shape "
                f"[{', '.join(map(str, full))}]"
            )
    return apply(bce_with_logits_spec, (input, target, weight, pos_weight, reduction))


# -- vmap: batching rules (leafkit.func.vmap) --------------------------------------------------------------------------
def _per_element(spec, args, level):
    """The loss of every element of every sample (reduction "none"), on the physical tensors: ``self`` and
    ``target`` with the batch first (expanded when not batched), weights aligned as in a pointwise op."""
    new = list(args) + list(spec.defaults[len(args) :])
    k = spec.params.index("reduction")
    reduction = new[k]
    x = args[0]
    rank = x._data.ndim
    n = batch_size(level)
    for i in spec.positions(len(args)):
        a = args[i]
        if a is None:
            continue
        v = logical_front(a, level)
        if spec.inputs[i] in ("self", "target"):
            new[i] = v if v is not None else expand_batch(a, n)
        elif v is not None:
            new[i] = pad(v, rank - a._data.ndim)
    new[k] = NONE
    return apply(spec, tuple(new)), reduction, rank


def _loss_batched(spec, args, level):
    """An elementwise loss: every element's loss at once, then each sample's own sum or mean."""
    if spec.name == "binary_cross_entropy_with_logits" and args[0]._data.shape != args[1]._data.shape:
        raise ValueError(
            f"Target size ({list(args[1]._data.shape)}) must be the same as input size ({list(args[0]._data.shape)})"
        )
    out, reduction, rank = _per_element(spec, args, level)
    if reduction == SUM:
        out = apply(SPEC("sum_dim"), (out, tuple(range(1, rank + 1)), False))
    elif reduction == MEAN:
        out = apply(SPEC("mean_dim"), (out, tuple(range(1, rank + 1)), False))
    return wrap(out, 0, level)


def _loss_backward_batched(spec, args, level):
    """The backward op of an elementwise loss: the per-element gradient ("none"), divided by the number of
    elements of one sample for "mean" (the op's own ``1 / numel`` would count every sample)."""
    new = list(args)
    k = spec.params.index("reduction")
    reduction = new[k]
    new[k] = NONE
    out = pointwise(spec, tuple(new), level)
    if reduction == MEAN:
        numel = int(np.prod(args[1]._data.shape))
        out = out / numel if numel else out
    return out


def _nll_batched(spec, args, level):
    """``nll_loss`` of every sample: the rows of all samples in one (N*B, C) loss with reduction "none", then
    each sample's sum, or its mean over its own kept weight."""
    self, target, weight, reduction, ignore_index = (list(args) + list(spec.defaults[len(args) :]))[:5]
    _check_nll(self._data, target._data, None if weight is None else weight._data)
    if weight is not None and logical_front(weight, level) is not None:
        return per_sample(spec, args, level)
    n = batch_size(level)
    x = logical_front(self, level)
    x = x if x is not None else expand_batch(self, n)
    t = logical_front(target, level)
    t = t if t is not None else expand_batch(target, n)
    classes = self._data.shape[-1]
    rows = x.reshape(-1, classes)
    labels = t.reshape(-1)
    out, _ = apply(spec, (rows, labels, weight, NONE, ignore_index))
    kept = (labels != ignore_index).to(_dtype.from_numpy_dtype(self._data.dtype))
    w = kept if weight is None else kept * weight[labels.clamp(0, classes - 1)]
    total = w.reshape(n, -1).sum(1)
    out = out.reshape(n, -1)
    if reduction == NONE:
        result = out if self._data.ndim == 2 else out.reshape(n)
        return wrap(result, 0, level), wrap(total * 0, 0, level)
    summed = out.sum(1)
    return wrap(summed / total if reduction == MEAN else summed, 0, level), wrap(total, 0, level)


def _nll_backward_batched(spec, args, level):
    """``nll_loss_backward`` is linear in ``grad_output``: with only that batched, the gradient for a
    ``grad_output`` of ones times each sample's ``grad_output``; otherwise sample by sample."""
    grad_output = args[0]
    if any(a.__class__ is BatchedTensor for a in args[1:5]):
        warn_user(PERFORMANCE_WARNING.format(spec.name))
        return per_sample(spec, args, level)
    g = logical_front(grad_output, level)
    d = grad_output._data
    ones = Tensor._make(array_module(grad_output._device).ones(d.shape, dtype=d.dtype), grad_output._device)
    unit = apply(spec, (ones, *args[1:]))
    g = wrap(pad(g, unit._data.ndim - d.ndim, at=g._data.ndim), 0, level)
    return pointwise(SPEC("mul"), (unit, g), level)


declare(_loss_batched, "mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy")
declare(_loss_batched, "binary_cross_entropy_with_logits")
declare(_loss_backward_batched, "mse_loss_backward", "smooth_l1_loss_backward", "huber_loss_backward")
declare(_loss_backward_batched, "binary_cross_entropy_backward")
declare(_nll_batched, "nll_loss_forward")
declare(_nll_backward_batched, "nll_loss_backward")
