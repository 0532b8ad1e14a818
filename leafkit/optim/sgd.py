"""``SGD``: stochastic gradient descent with momentum, dampening, weight decay and Nesterov (``torch.optim.SGD``)."""

from __future__ import annotations

from .._tensor import Tensor
from .optimizer import Optimizer, _check_number, check_broadcast, check_device, check_inplace

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, with PyTorch's formulas (its single-tensor CPU code path).

    Results agree with PyTorch's to float32 rounding, not bit for bit: PyTorch
    computes ``p.add_(g, alpha=-lr)`` (and the weight-decay and Nesterov
    steps) as one fused multiply-add, rounded once, while NumPy rounds the
    product and then the sum, so the last bit of some elements can differ.

    For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``)::

        g = g + weight_decay * p                       # if weight_decay != 0
        if momentum != 0:
            buf = g (first step) else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g                                 # in place

    Parameters
    ----------
    params : iterable of Tensor or dict
        Leaves to optimise, or parameter groups (see :class:`Optimizer`).
    lr : float
        Learning rate (default 0.001, as in PyTorch 2.x).
    momentum : float
        Default 0.
    dampening : float
        Default 0.
    weight_decay : float
        L2 penalty added to the gradient; default 0.
    nesterov : bool
        Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
    maximize : bool
        Ascend instead of descend.
    foreach, differentiable, fused
        Accepted for PyTorch compatibility; they change nothing here
        (``differentiable=True`` and ``fused=True`` raise NotImplementedError).

    Attributes
    ----------
    state : dict
        ``state[p]["momentum_buffer"]``: a Tensor on ``p``'s device, once a
        step with momentum ran.

    Raises
    ------
    ValueError
        "Invalid learning rate: -1", "Invalid momentum value: ...",
        "Invalid weight_decay value: ...", "Nesterov momentum requires a
        momentum and zero dampening", and :class:`Optimizer`'s errors.
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        _check_number("learning rate", lr)
        _check_number("momentum value", momentum)
        _check_number("weight_decay value", weight_decay)
        if differentiable or fused:
            raise NotImplementedError("leafkit's SGD does not implement differentiable=True or fused=True")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _update_group(self, group: dict) -> None:
        lr = group["lr"]
        momentum = group["momentum"]
        dampening = group["dampening"]
        weight_decay = group["weight_decay"]
        nesterov = group["nesterov"]
        maximize = group["maximize"]
        state = self.state
        for p in group["params"]:
            gt = p._grad
            if gt is None:
                continue
            d = p._data
            g = gt._data
            if maximize:
                g = -g
            if weight_decay != 0:
                g = g + weight_decay * d
            if momentum != 0:
                st = state[p]
                buf_t = st.get("momentum_buffer")
                if buf_t is None:
                    buf = g.copy()
                    st["momentum_buffer"] = Tensor._make(buf, p._device)
                else:
                    if buf_t._device is not p._device:
                        check_device(p, buf_t)
                    buf = buf_t._data
                    if buf.shape != g.shape or buf.dtype.kind not in "fc":  # the common case passes at once
                        check_inplace(buf, g)  # buf.mul_(momentum).add_(g, alpha=1 - dampening)
                    buf *= momentum
                    if dampening == 0:
                        buf += g
                    else:
                        buf += (1 - dampening) * g
                    buf_t._version_counter[0] += 2  # two in-place ops, mul_ and add_, as PyTorch counts them
                if nesterov:
                    check_broadcast(g, buf)
                    g = g + momentum * buf
                else:
                    g = buf
            if g.shape != d.shape or d.dtype.kind not in "fc":
                check_inplace(d, g)  # p.add_(g, alpha=-lr)
            d -= lr * g
            p._version_counter[0] += 1
