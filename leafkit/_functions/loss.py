"""Losses: ``nll_loss`` (NllLossBackward0), ``mse_loss`` (MseLossBackward0) and
``binary_cross_entropy_with_logits`` (BinaryCrossEntropyWithLogitsBackward0), with their backward ops.

``cross_entropy`` is not an operation of its own, in leafkit as in PyTorch:
it is ``nll_loss(log_softmax(input, 1), target)``, so its graph is
``NllLossBackward0`` over ``LogSoftmaxBackward0``.

``reduction`` is PyTorch's enum inside the ops (0 none, 1 mean, 2 sum; what
``grad_fn._saved_reduction`` shows); the public functions take the strings.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ._base import array_module, as_array, promote, promote_types
from ._registry import defop

NONE, MEAN, SUM = 0, 1, 2
_REDUCTIONS = {"none": NONE, "mean": MEAN, "sum": SUM}


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


mse_loss_spec = defop("mse_loss", _mse_loss, inputs=("self", "target"),
                      self=lambda F, grad, self, target, reduction: F.mse_loss_backward(grad, self, target, reduction),
                      target=lambda F, grad, self, target, reduction: F.mse_loss_backward(grad, target, self,
                                                                                         reduction))
defop("mse_loss_backward", _mse_loss_backward, inputs=("grad_output", "self", "target"),
      grad_output=_mse_double_grad_output,
      self=lambda F, grad, grad_output, self, reduction: _mse_double(F, grad * grad_output, self, reduction),
      target=lambda F, grad, grad_output, target, reduction: -_mse_double(F, grad * grad_output, target, reduction))


# -- nll_loss --------------------------------------------------------------------------------------------------
def _check_nll(self, target, weight):
    if target.dtype != np.int64 and target.dtype != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_dtype.word(target.dtype)}")
    if self.ndim not in (1, 2):
        raise NotImplementedError(f"leafkit's nll_loss takes input of shape (N, C) or (C,); got {self.ndim}-D input "
                                  f"of shape {list(self.shape)} (PyTorch also takes (N, C, d1, ...))")
    if self.ndim == 1:
        if target.size != 1 or target.ndim > 1:
            raise ValueError(f"Expected input batch_size (1) to match target batch_size ({target.size}).")
    elif target.ndim != 1 or target.shape[0] != self.shape[0]:
        n_t = target.shape[0] if target.ndim else 1
        raise ValueError(f"Expected input batch_size ({self.shape[0]}) to match target batch_size ({n_t}).")
    n_classes = self.shape[-1]
    if weight is not None:
        if weight.ndim != 1 or weight.shape[0] != n_classes:
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no "
                               f"classes but got weight tensor of shape: {list(weight.shape)}")
        if weight.dtype != self.dtype:
            raise RuntimeError(f"expected scalar type {_dtype.word(self.dtype)} but found {_dtype.word(weight.dtype)}")


def _nll_rows(self, target, ignore_index):
    """(2-D input, targets, kept-rows mask or None, targets safe to index with)."""
    xp = array_module(self)
    x2 = self.reshape(1, -1) if self.ndim == 1 else self
    t = target.reshape(1) if self.ndim == 1 else target
    t = t.astype(np.int64, copy=False)
    n, n_classes = t.shape[0], x2.shape[1]
    lo, hi = (int(t.min()), int(t.max())) if n else (0, -1)
    if lo >= 0 and hi < n_classes and not lo <= ignore_index <= hi:
        return x2, t, None, t  # the common case: every target is a valid class and none is ignored
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
    rows = xp.arange(t.shape[0])
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
    if reduction != NONE or self.ndim == 1:
        out = out.reshape(())
    return as_array(out), as_array(xp.asarray(total, dtype=self.dtype).reshape(()))


def _nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    xp = array_module(grad_output)
    x2, t, keep, safe = _nll_rows(self, target, ignore_index)
    rows = xp.arange(t.shape[0])
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
    "nll_loss_forward", _nll_loss, inputs=("self", "target", "weight"), nondiff=("target",),
    not_differentiable=("weight",), outputs=("result", "total_weight"), nondiff_outputs=("total_weight",),
    node="NllLossBackward0",
    self=lambda F, grad, self, target, weight, reduction, ignore_index, total_weight: F.nll_loss_backward(
        grad, self, target, weight, total_weight, reduction, ignore_index))
defop("nll_loss_backward",
      lambda grad_output, self, target, weight, total_weight, reduction, ignore_index: _nll_loss_backward(
          grad_output, self, target, weight, reduction, ignore_index, total_weight),
      inputs=("grad_output", "self", "target", "weight", "total_weight"), nondiff=("target", "weight", "total_weight"),
      grad_output=lambda F, grad, target, weight, reduction, ignore_index: F.nll_loss_forward(
          grad, target, weight, reduction, ignore_index)[0],
      self=lambda F, grad: F.zeros_like(grad))


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
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if td.kind != "f":
        raise RuntimeError(f"result type {_dtype.word(promote_types(self.dtype, td))} can't be cast to the desired "
                           f"output type {_dtype.word(td)}")
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


def _bce_self(F, grad, self, target, weight, pos_weight, reduction, self_scalar_type):
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
    return _as_input_dtype(F, g, self_scalar_type)


def _bce_target(F, grad, self, target_sym_sizes, target_scalar_type, weight, pos_weight, reduction):
    """PyTorch's binary_cross_entropy_with_logits_target_backward: ``-x * grad`` (with ``pos_weight``:
    ``(log_sigmoid(-x) - log_sigmoid(x) * p) * grad``), times ``weight``, over ``numel`` for "mean"."""
    if pos_weight is not None:
        a = F.log_sigmoid(-self)
        b = F.log_sigmoid(self)
        g = _step(F, a - _step(F, b * pos_weight, b), a)
        g = _step(F, g * grad, g)
    else:
        g = -self * grad
    if weight is not None:
        g = _step(F, g * weight, g)
    if reduction == MEAN:
        g = F.div_scalar(g, int(np.prod(target_sym_sizes)))
    return _as_input_dtype(F, g, target_scalar_type)


bce_with_logits_spec = defop(
    "binary_cross_entropy_with_logits", _bce_with_logits, inputs=("self", "target", "weight", "pos_weight"),
    not_differentiable=("weight", "pos_weight"), self=_bce_self, target=_bce_target)
defop("log_sigmoid", lambda self: as_array(_log_sigmoid(self)), node="LogSigmoidBackward0",
      self=lambda F, grad, self: grad * F.sigmoid(-self))
