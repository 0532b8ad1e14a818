"""``Adam`` and ``AdamW`` (Adam with decoupled weight decay), as ``torch.optim.Adam`` / ``torch.optim.AdamW``."""

from __future__ import annotations

import math

from .._creation import tensor, zeros_like
from .._device import array_module
from .optimizer import Optimizer, _bump, _check_number, check_device, check_inplace, check_lerp

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, with PyTorch's formulas (its single-tensor CPU code path).

    Results agree with PyTorch's to float32 rounding, not bit for bit:
    PyTorch's kernels (``lerp_``, ``addcmul_``, ``addcdiv_``) compute some
    steps as a fused multiply-add, rounded once, where NumPy rounds the
    product and then the sum, so the last bit of some elements can differ.

    For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``),
    at step ``t`` (1, 2, ...)::

        g = g + weight_decay * p           # (decoupled: p = p * (1 - lr * weight_decay) instead)
        m = m + (1 - beta1) * (g - m)      # exp_avg.lerp_(g, 1 - beta1)
        v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) if amsgrad else v
        denom = sqrt(v_hat) / sqrt(1 - beta2 ** t) + eps
        p = p - lr / (1 - beta1 ** t) * m / denom

    Parameters
    ----------
    params : iterable of Tensor or dict
        Leaves to optimise, or parameter groups.
    lr : float
        Default 0.001.
    betas : (float, float)
        Default (0.9, 0.999), each in [0, 1).
    eps : float
        Default 1e-8.
    weight_decay : float
        Default 0.
    amsgrad : bool
        Keep the running maximum of ``v``.
    maximize : bool
    decoupled_weight_decay : bool
        AdamW's weight decay.
    foreach, capturable, differentiable, fused
        Accepted for PyTorch compatibility (``differentiable``/``fused`` True
        raise NotImplementedError).

    Attributes
    ----------
    state : dict
        ``state[p]``: ``"step"`` (a 0-d float32 tensor), ``"exp_avg"``,
        ``"exp_avg_sq"`` (and ``"max_exp_avg_sq"`` with ``amsgrad``).

    Raises
    ------
    ValueError
        "Invalid learning rate: ...", "Invalid epsilon value: ...",
        "Invalid beta parameter at index 0: 1.0", "Invalid weight_decay
        value: ...", and :class:`Optimizer`'s errors.
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        _check_number("learning rate", lr)
        _check_number("epsilon value", eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _check_number("weight_decay value", weight_decay)
        if differentiable or fused:
            raise NotImplementedError("leafkit's Adam does not implement differentiable=True or fused=True")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _update_group(self, group: dict) -> None:

        lr = group["lr"]
        beta1, beta2 = group["betas"]
        eps = group["eps"]
        weight_decay = group["weight_decay"]
        amsgrad = group["amsgrad"]
        decoupled = group["decoupled_weight_decay"]
        for p in group["params"]:
            gt = p._grad
            if gt is None:
                continue
            st = self.state[p]
            if not st:
                st["step"] = tensor(0.0)
                st["exp_avg"] = zeros_like(p)
                st["exp_avg_sq"] = zeros_like(p)
                if amsgrad:
                    st["max_exp_avg_sq"] = zeros_like(p)
            d = p._data
            g = gt._data
            if group["maximize"]:
                g = -g
            check_device(p, *(v for v in st.values() if v is not st["step"]))
            step_t = st["step"]
            step_t._data += 1
            step = float(step_t._data)
            if weight_decay != 0:
                if decoupled:
                    d *= 1 - lr * weight_decay
                    _bump(p)  # param.mul_(1 - lr * weight_decay)
                else:
                    g = g + weight_decay * d
            m = st["exp_avg"]._data
            v = st["exp_avg_sq"]._data
            check_lerp(m, g)
            w = 1 - beta1  # exp_avg.lerp_(g, w), with lerp's two formulas
            if w < 0.5:
                m += w * (g - m)
            else:
                m[...] = g - (g - m) * (1 - w)
            check_inplace(v, g, g)  # exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            v *= beta2
            v += (1 - beta2) * g * g  # addcmul_: v + (value * g) * g
            xp = array_module(d)
            bias_correction1 = 1 - beta1**step
            bias_correction2_sqrt = math.sqrt(1 - beta2**step)
            step_size = lr / bias_correction1
            if amsgrad:
                vmax = st["max_exp_avg_sq"]._data
                check_inplace(vmax, v)  # torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
                xp.maximum(vmax, v, out=vmax)
                denom = xp.sqrt(vmax) / bias_correction2_sqrt
            else:
                denom = xp.sqrt(v) / bias_correction2_sqrt
            denom += eps
            check_inplace(d, m, denom)  # p.addcdiv_(exp_avg, denom, value=-step_size)
            d += -step_size * m / denom
            # the in-place ops PyTorch counts: step += 1, exp_avg.lerp_, exp_avg_sq.mul_(...).addcmul_(...),
            # torch.maximum(..., out=max_exp_avg_sq), param.addcdiv_
            st["step"]._version_counter[0] += 1
            st["exp_avg"]._version_counter[0] += 1
            st["exp_avg_sq"]._version_counter[0] += 2
            if amsgrad:
                st["max_exp_avg_sq"]._version_counter[0] += 1
            _bump(p)


class AdamW(Adam):
    """AdamW: Adam with decoupled weight decay (``torch.optim.AdamW``).

    The same update as :class:`Adam`, except that weight decay shrinks the
    parameter itself before the Adam step, ``p = p * (1 - lr * weight_decay)``,
    instead of adding ``weight_decay * p`` to the gradient (so the decay is
    not rescaled by Adam's per-element step sizes; Loshchilov & Hutter,
    "Decoupled Weight Decay Regularization").  PyTorch's defaults differ from
    Adam's in one place: ``weight_decay=1e-2``.

    Parameters
    ----------
    params : iterable of Tensor or dict
        Leaves to optimise, or parameter groups.
    lr : float
        Default 0.001.
    betas : (float, float)
        Default (0.9, 0.999), each in [0, 1).
    eps : float
        Default 1e-8.
    weight_decay : float
        Default 0.01.
    amsgrad : bool
        Keep the running maximum of the second moment.
    maximize : bool
    foreach, capturable, differentiable, fused
        Accepted for PyTorch compatibility (``differentiable``/``fused`` True
        raise NotImplementedError).

    Attributes
    ----------
    state : dict
        As :class:`Adam`'s; every group has ``decoupled_weight_decay=True``
        (also after ``load_state_dict``), as in PyTorch.

    Raises
    ------
    ValueError
        As :class:`Adam` ("Invalid weight_decay value: -1" ...).
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def load_state_dict(self, state_dict: dict) -> None:
        """:meth:`Optimizer.load_state_dict`, keeping ``decoupled_weight_decay=True`` in every group."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
