"""Losses: ``nll_loss`` (NllLossBackward0) and ``mse_loss`` (MseLossBackward0).

``cross_entropy`` is not an operation of its own, in leafkit as in PyTorch:
it is ``nll_loss(log_softmax(input, 1), target)``, so its graph is
``NllLossBackward0`` over ``LogSoftmaxBackward0``.

Forward and backward work on NumPy/CuPy arrays, like every other op module.
"""
from __future__ import annotations

import numpy as np

from ._base import Op, array_module

_REDUCTIONS = ("none", "mean", "sum")
_TARGET_WORD = {"f": "Float", "b": "Bool", "c": "ComplexFloat"}
_INT_WORD = {1: "Char", 2: "Short", 4: "Int", 8: "Long"}


def check_reduction(reduction) -> None:
    """Raise PyTorch's ValueError for an unknown ``reduction``."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _dtype_word(d) -> str:
    if d.kind == "i":
        return _INT_WORD.get(d.itemsize, str(d))
    if d.kind == "f":
        return {2: "Half", 4: "Float", 8: "Double"}.get(d.itemsize, str(d))
    return _TARGET_WORD.get(d.kind, str(d))


class NllLossBackward0(Op):
    """Negative log-likelihood of integer class targets.

    ``input`` holds log-probabilities, shape ``(N, C)`` (or ``(C,)`` for one
    sample); ``target`` holds class indices, shape ``(N,)`` (or ``()``),
    dtype int64 or uint8.  With ``reduction="mean"`` the loss is
    ``-sum_n w[t_n] * input[n, t_n] / sum_n w[t_n]`` over the samples whose
    target is not ``ignore_index`` (NaN when every sample is ignored, as in
    PyTorch).  Only ``input`` gets a gradient, so the node has one input.

    Samples whose target is ``ignore_index`` are left out, as in PyTorch's
    kernel, not multiplied by a zero weight: a NaN or inf in an ignored row
    reaches neither the loss nor the gradient, an ignored row's loss
    (``reduction="none"``) and gradient are ``0.``, and a batch where every
    sample is ignored has zero gradients.
    """

    _n_slots = 1
    _names_saved = ("self", "target", "weight", "total_weight")

    @staticmethod
    def forward(ctx, x, target, weight, reduction, ignore_index):
        check_reduction(reduction)
        if target.dtype != np.int64 and target.dtype != np.uint8:
            raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_dtype_word(target.dtype)}")
        if x.ndim not in (1, 2):
            raise NotImplementedError(f"leafkit's nll_loss takes input of shape (N, C) or (C,); got {x.ndim}-D input "
                                      f"of shape {list(x.shape)} (PyTorch also takes (N, C, d1, ...))")
        xp = array_module(x)
        unbatched = x.ndim == 1
        if unbatched:
            if target.size != 1 or target.ndim > 1:
                raise ValueError(f"Expected input batch_size (1) to match target batch_size ({target.size}).")
            x2, t = x.reshape(1, -1), target.reshape(1)
        else:
            if target.ndim != 1 or target.shape[0] != x.shape[0]:
                n_t = target.shape[0] if target.ndim else 1
                raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({n_t}).")
            x2, t = x, target
        n_classes = x2.shape[1]
        if weight is not None:
            if weight.ndim != 1 or weight.shape[0] != n_classes:
                raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no "
                                   f"classes but got weight tensor of shape: {list(weight.shape)}")
            if weight.dtype != x.dtype:
                raise RuntimeError(f"expected scalar type {_dtype_word(x.dtype)} but found "
                                   f"{_dtype_word(weight.dtype)}")
        t = t.astype(np.int64, copy=False)
        n = t.shape[0]
        lo, hi = (int(t.min()), int(t.max())) if n else (0, -1)
        if lo >= 0 and hi < n_classes and not lo <= ignore_index <= hi:
            # the common case, two reductions: every target is a valid class and none is ignored
            keep, safe = None, t
        else:
            keep = t != ignore_index
            safe = xp.where(keep, t, 0)
            bad = (safe < 0) | (safe >= n_classes)
            if bool(bad.any()):
                raise IndexError(f"Target {int(safe[bad][0])} is out of bounds.")
        rows = xp.arange(n)
        w = None if weight is None else weight[safe]
        zero = x.dtype.type(0)
        with np.errstate(all="ignore"):  # inf/nan inputs: PyTorch prints no warning
            picked = x2[rows, safe]
            if reduction == "none" and not unbatched:
                out = -picked if w is None else -picked * w
                if keep is not None:
                    out = xp.where(keep, out, zero)  # an ignored row is 0., whatever its input holds
                total = zero
            else:
                # PyTorch's sum: start at 0 and subtract each kept term (so a zero loss is 0., never -0.)
                terms = picked if w is None else picked * w
                if keep is not None:
                    terms = terms[keep]
                out = zero - terms.sum(dtype=x.dtype)
                if w is None:
                    total = x.dtype.type(n if keep is None else int(keep.sum()))
                else:
                    total = (w if keep is None else w[keep]).sum(dtype=x.dtype)
                if reduction == "mean":
                    out = out / total  # 0/0 = nan when every sample is ignored, as in PyTorch
            out = xp.asarray(out, dtype=x.dtype)
            if reduction != "none" or unbatched:
                out = out.reshape(())
        total = xp.asarray(total, dtype=x.dtype).reshape(())
        ctx.meta = (x.shape, rows, safe, keep, w, reduction, total)
        ctx.save_for_backward(x, target, weight, total)
        return out

    @staticmethod
    def backward(ctx, g):
        ctx.saved_tensors  # noqa: B018  (raises once the graph was freed)
        shape, rows, safe, keep, w, reduction, total = ctx.meta
        xp = array_module(g)
        n_classes = shape[-1]
        grad = xp.zeros((rows.shape[0], n_classes), dtype=g.dtype)
        with np.errstate(all="ignore"):  # total 0 (zero weights) gives inf/nan, silently, as in PyTorch
            if reduction == "none":
                vals = -g.reshape(-1)
            elif reduction == "sum":
                vals = -g
            else:
                vals = -(g / total)
            if w is not None:
                vals = vals * w
        if keep is None:
            grad[rows, safe] = vals
        else:
            # only the kept rows get a value; the ignored rows stay 0.
            if vals.ndim:
                vals = vals[keep]
            grad[rows[keep], safe[keep]] = vals
        return grad.reshape(shape), None, None, None, None


class MseLossBackward0(Op):
    """Mean squared error ``(input - target) ** 2``, reduced by ``"mean"``, ``"sum"`` or ``"none"``.

    Both arguments are inputs of the node (the target may require grad too);
    they arrive broadcast to one shape by :func:`leafkit.nn.functional.mse_loss`.
    """

    _n_slots = 2
    _names_saved = ("self", "target")

    @staticmethod
    def forward(ctx, x, target, reduction):
        check_reduction(reduction)
        if x.dtype != target.dtype:
            from ._base import promote
            x, target = promote(x, target)
        if x.dtype.kind != "f":
            raise NotImplementedError(f"\"mse_cpu\" not implemented for '{_dtype_word(x.dtype)}'")
        xp = array_module(x)
        with np.errstate(all="ignore"):  # inf - inf and overflow: nan/inf, with no warning, as in PyTorch
            diff = x - target
            sq = diff * diff
            ctx.save_for_backward(diff)
            ctx.reduction = reduction
            if reduction == "none":
                return sq
            if reduction == "sum":
                out = sq.sum(dtype=x.dtype)
            elif sq.size == 0:
                out = np.nan  # the mean of nothing (NumPy would warn "Mean of empty slice")
            else:
                out = sq.mean(dtype=x.dtype)
        return xp.asarray(out, dtype=x.dtype).reshape(())

    @staticmethod
    def backward(ctx, g):
        (diff,) = ctx.saved_tensors
        # PyTorch's kernel: norm * (a - b) * grad, with norm = 2 / numel for "mean"; the
        # target's gradient is the same with a and b swapped (0 - diff is target - input,
        # including the sign of a zero: 0., not -0.)
        norm = diff.dtype.type(2.0 / diff.size if ctx.reduction == "mean" and diff.size else 2.0)
        n = ctx.needs_input_grad
        with np.errstate(all="ignore"):
            gx = (norm * diff * g).astype(diff.dtype, copy=False) if n[0] else None
            gt = (norm * (diff.dtype.type(0) - diff) * g).astype(diff.dtype, copy=False) if n[1] else None
        return gx, gt, None
