"""``RMSprop`` and ``Adagrad``: per-element step sizes from running sums of squared gradients (``torch.optim``)."""

from __future__ import annotations

from .. import _dtype
from .._creation import full_like, tensor, zeros_like
from .._device import array_module
from .optimizer import Optimizer, _bump, _check_number, check_broadcast, check_device, check_inplace, check_lerp

__all__ = ["RMSprop", "Adagrad"]


def _scalar_dtype():
    """The dtype of ``state["step"]``: float64 when the default dtype is float64, else float32 (PyTorch's
    ``_get_scalar_dtype``)."""
    return _dtype.float64 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.float32


def _lerp_(m, g, w) -> None:
    """``m.lerp_(g, w)`` with PyTorch's two formulas (the one used depends on whether ``w < 0.5``)."""
    if w < 0.5:
        m += w * (g - m)
    else:
        m[...] = g - (g - m) * (1 - w)


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture 6e; ``torch.optim.RMSprop``), with PyTorch's formulas and defaults.

    For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``)::

        g = g + weight_decay * p                   # if weight_decay != 0
        v = alpha * v + (1 - alpha) * g * g        # square_avg
        if centered:
            m = m + (1 - alpha) * (g - m)          # grad_avg
            avg = sqrt(v - m * m) + eps
        else:
            avg = sqrt(v) + eps
        if momentum > 0:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg

    Parameters
    ----------
    params : iterable of Tensor or dict
        Leaves to optimise, or parameter groups (see :class:`Optimizer`).
    lr : float
        Default 0.01.
    alpha : float
        Smoothing constant; default 0.99.
    eps : float
        Default 1e-8.
    weight_decay, momentum : float
        Default 0.
    centered : bool
        Normalise by an estimate of the gradient's variance.
    capturable, foreach, maximize, differentiable
        As in PyTorch (``differentiable=True`` raises NotImplementedError).

    Attributes
    ----------
    state : dict
        ``state[p]``: ``"step"`` (a 0-d tensor), ``"square_avg"``, and ``"momentum_buffer"`` (momentum > 0),
        ``"grad_avg"`` (centered), created at the first step.

    Raises
    ------
    ValueError
        "Invalid learning rate: ...", "Invalid epsilon value: ...", "Invalid momentum value: ...",
        "Invalid weight_decay value: ...", "Invalid alpha value: ...", and :class:`Optimizer`'s errors.
    RuntimeError
        At ``step()``, PyTorch's errors for state of the wrong shape, dtype or device.
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_number("learning rate", lr)
        _check_number("epsilon value", eps)
        _check_number("momentum value", momentum)
        _check_number("weight_decay value", weight_decay)
        _check_number("alpha value", alpha)
        if differentiable:
            raise NotImplementedError("leafkit's RMSprop does not implement differentiable=True")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update_group(self, group: dict) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        for p in group["params"]:
            gt = p._grad
            if gt is None:
                continue
            st = self.state[p]
            if not st:
                st["step"] = tensor(0.0, dtype=_scalar_dtype())
                st["square_avg"] = zeros_like(p)
                if momentum > 0:
                    st["momentum_buffer"] = zeros_like(p)
                if centered:
                    st["grad_avg"] = zeros_like(p)
            check_device(p, *(v for k, v in st.items() if k != "step"))
            d = p._data
            g = gt._data
            if group["maximize"]:
                g = -g
            st["step"]._data += 1
            st["step"]._version_counter[0] += 1  # step += 1
            if weight_decay != 0:
                g = g + weight_decay * d
            v = st["square_avg"]._data
            check_inplace(v, g, g)  # square_avg.mul_(alpha).addcmul_(g, g, value=1 - alpha)
            v *= alpha
            v += (1 - alpha) * g * g
            xp = array_module(d)
            if centered:
                m = st["grad_avg"]._data
                check_lerp(m, g)  # grad_avg.lerp_(g, 1 - alpha)
                _lerp_(m, g, 1 - alpha)
                check_broadcast(v, m)  # square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                avg = xp.sqrt(v + (-1 * m) * m)
                st["grad_avg"]._version_counter[0] += 1
            else:
                avg = xp.sqrt(v)
            avg += eps
            if momentum > 0:
                buf = st["momentum_buffer"]._data
                check_inplace(buf, g, avg)  # buf.mul_(momentum).addcdiv_(g, avg)
                buf *= momentum
                buf += g / avg
                st["momentum_buffer"]._version_counter[0] += 2  # mul_ and addcdiv_, as PyTorch counts them
                check_inplace(d, buf)  # p.add_(buf, alpha=-lr)
                d += -lr * buf
            else:
                check_inplace(d, g, avg)  # p.addcdiv_(g, avg, value=-lr)
                d += -lr * g / avg
            st["square_avg"]._version_counter[0] += 2  # mul_ and addcmul_
            _bump(p)


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011; ``torch.optim.Adagrad``), with PyTorch's formulas and defaults.

    For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``), at step ``t`` (1, 2, ...)::

        g = g + weight_decay * p                   # if weight_decay != 0
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                              # state["sum"]
        p = p - clr * g / (sqrt(s) + eps)

    As in PyTorch, the state of every parameter (``"step"`` and ``"sum"``, filled with
    ``initial_accumulator_value``) is created by the constructor, before any step.

    Parameters
    ----------
    params : iterable of Tensor or dict
        Leaves to optimise, or parameter groups.
    lr : float
        Default 0.01.
    lr_decay, weight_decay, initial_accumulator_value : float
        Default 0.
    eps : float
        Default 1e-10.
    foreach, maximize, differentiable, fused
        As in PyTorch (``differentiable``/``fused`` True raise NotImplementedError).

    Raises
    ------
    ValueError
        "Invalid learning rate: ...", "Invalid lr_decay value: ...", "Invalid weight_decay value: ...",
        "Invalid initial_accumulator_value value: ...", "Invalid epsilon value: ...", and :class:`Optimizer`'s
        errors.
    RuntimeError
        At ``step()``, PyTorch's errors for state of the wrong shape, dtype or device.
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        _check_number("learning rate", lr)
        _check_number("lr_decay value", lr_decay)
        _check_number("weight_decay value", weight_decay)
        _check_number("initial_accumulator_value value", initial_accumulator_value)
        _check_number("epsilon value", eps)
        if differentiable or fused:
            raise NotImplementedError("leafkit's Adagrad does not implement differentiable=True or fused=True")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = tensor(0.0, dtype=_scalar_dtype())
                st["sum"] = full_like(p, initial_accumulator_value)

    def _update_group(self, group: dict) -> None:
        lr, lr_decay, eps, weight_decay = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
        for p in group["params"]:
            gt = p._grad
            if gt is None:
                continue
            st = self.state[p]
            check_device(p, st["sum"])
            step_t = st["step"]
            step_t._data += 1
            step_t._version_counter[0] += 1  # step += 1
            step = float(step_t._data)
            d = p._data
            g = gt._data
            if group["maximize"]:
                g = -g
            if weight_decay != 0:
                g = g + weight_decay * d
            clr = lr / (1 + (step - 1) * lr_decay)
            s = st["sum"]._data
            check_inplace(s, g, g)  # state_sum.addcmul_(g, g, value=1)
            s += g * g
            std = array_module(s).sqrt(s)
            std += eps
            check_inplace(d, g, std)  # p.addcdiv_(g, std, value=-clr)
            d += -clr * g / std
            st["sum"]._version_counter[0] += 1
            _bump(p)
