"""Ops for the ``nn`` layers: batch normalisation (``NativeBatchNormBackward0``) and its backward.

``native_batch_norm`` is ATen's op of the same name, the one PyTorch's
``torch.batch_norm`` runs on the CPU::

    native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
        -> (output, save_mean, save_invstd)

In training it normalises with the batch's statistics, returns them
(``save_mean``, ``save_invstd``: the node's ``_saved_result1`` and
``_saved_result2``) and, when running statistics are given, updates them in
place with ``momentum`` (the running variance from the unbiased batch
variance).  As in PyTorch, that update does not bump the buffers' version
counter, so a graph that saved them stays usable after the next forward
pass; changing a buffer yourself in place (``running_var.mul_(2)``) does
bump it, and backward through the old graph then raises PyTorch's "modified
by an inplace operation" error.  In evaluation it uses the running
statistics, and ``save_mean``/``save_invstd`` are empty (shape ``(0,)``).

Its derivative, as in ``derivatives.yaml``, is the op
``native_batch_norm_backward`` (``NativeBatchNormBackwardBackward0`` when
recorded with ``create_graph=True``), whose own derivatives are PyTorch's
``batchnorm_double_backward`` written with ``F`` ops, so second (and
higher) derivatives work.

As in ``derivatives.yaml``, one formula serves input, weight and bias
together (``input, weight, bias:``): it is called once with the mask of
the gradients needed, so a recorded backward pass has one
``NativeBatchNormBackwardBackward0`` node for all three, as PyTorch's has.
"""

from __future__ import annotations

import numpy as np

from .._device import array_module, as_array
from ._batch_rules import logical_front
from ._batched import BatchedTensor, batch_size, fallback, wrap
from ._registry import apply, defop

__all__ = ["native_batch_norm_spec", "native_batch_norm_backward_spec"]


def _layout(x):
    """The reduced dims (all but the channel dim 1), the per-channel broadcast shape and the count per channel."""
    nd = x.ndim if hasattr(x, "ndim") else len(x.shape)
    shape = tuple(x.shape)
    axes = (0,) + tuple(range(2, nd))
    bshape = (1, shape[1]) + (1,) * (nd - 2)
    m = 1
    for d in axes:
        m *= shape[d]
    return axes, bshape, m


def _acc(dtype):
    """PyTorch's CPU kernels accumulate float and half statistics in double."""
    return np.float64 if dtype.kind == "f" else dtype


# -- forward -----------------------------------------------------------------------------------------------------------
def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    xp = array_module(input)
    axes, bshape, m = _layout(input)
    dt = input.dtype
    pdt = weight.dtype if weight is not None else (running_mean.dtype if running_mean is not None else dt)
    if training:
        mean = input.mean(axis=axes, dtype=_acc(dt))
        var = ((input.astype(_acc(dt), copy=False) - mean.reshape(bshape)) ** 2).mean(axis=axes)
        invstd = 1.0 / xp.sqrt(var + eps)
        if running_mean is not None:  # in place, without a version bump: the buffers stay the same objects
            running_mean[...] = (momentum * mean + (1 - momentum) * running_mean).astype(running_mean.dtype)
        if running_var is not None:
            unbiased = var * (m / (m - 1)) if m > 1 else var * xp.inf
            running_var[...] = (momentum * unbiased + (1 - momentum) * running_var).astype(running_var.dtype)
        save_mean, save_invstd = mean.astype(pdt), invstd.astype(pdt)
        mean_b, invstd_b = mean, invstd
    else:
        mean_b = running_mean.astype(_acc(running_mean.dtype))
        invstd_b = 1.0 / xp.sqrt(running_var.astype(_acc(running_var.dtype)) + eps)
        save_mean = save_invstd = xp.zeros((0,), dtype=pdt)
    # PyTorch's transform: out = x * alpha + beta, alpha = invstd * w, beta = b - mean * alpha
    alpha = invstd_b if weight is None else invstd_b * weight.reshape(-1)
    beta = -mean_b * alpha if bias is None else bias.reshape(-1) - mean_b * alpha
    out = input * alpha.astype(dt).reshape(bshape) + beta.astype(dt).reshape(bshape)
    return as_array(out.astype(dt, copy=False)), as_array(save_mean), as_array(save_invstd)


# -- first derivative: native_batch_norm_backward ----------------------------------------------------------------------
def _native_batch_norm_backward(
    grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps, output_mask
):
    """(grad_input, grad_weight, grad_bias); an output left out by ``output_mask`` comes back as zeros."""
    xp = array_module(grad_out)
    axes, bshape, m = _layout(input)
    dt = input.dtype
    if train:
        mean, invstd = save_mean.astype(_acc(dt)), save_invstd.astype(_acc(dt))
    else:
        mean = running_mean.astype(_acc(running_mean.dtype))
        invstd = 1.0 / xp.sqrt(running_var.astype(_acc(running_var.dtype)) + eps)
    g = grad_out.astype(_acc(grad_out.dtype), copy=False)
    centred = input.astype(_acc(dt), copy=False) - mean.reshape(bshape)
    sum_g = g.sum(axis=axes)
    dot = (g * centred).sum(axis=axes) if (output_mask[0] and train) or output_mask[1] else None
    w = 1.0 if weight is None else weight.reshape(-1).astype(_acc(weight.dtype))
    if output_mask[0]:
        if train:  # PyTorch's CPU kernel: (g - (x - mean) * k - mean(g)) * invstd * w, k = dot * invstd^2 / M
            k = (dot * invstd * invstd / m).reshape(bshape)
            gi = (g - centred * k - (sum_g / m).reshape(bshape)) * (invstd * w).reshape(bshape)
        else:
            gi = g * (invstd * w).reshape(bshape)
        gi = gi.astype(dt)
    else:
        gi = xp.zeros(input.shape, dtype=dt)
    wshape = weight.shape if weight is not None else (input.shape[1],)
    wdt = weight.dtype if weight is not None else dt
    gw = (dot * invstd).astype(wdt).reshape(wshape) if output_mask[1] else xp.zeros(wshape, dtype=wdt)
    gb = sum_g.astype(wdt).reshape(wshape) if output_mask[2] else xp.zeros(wshape, dtype=wdt)
    return as_array(gi), as_array(gw), as_array(gb)


def _first(F, grad, input, weight, running_mean, running_var, result1, result2, training, eps, grad_input_mask):
    return F.native_batch_norm_backward(
        grad, input, weight, running_mean, running_var, result1, result2, training, eps, grad_input_mask
    )


native_batch_norm_spec = defop(
    "native_batch_norm",
    _native_batch_norm,
    inputs=("input", "weight", "bias", "running_mean", "running_var"),
    nondiff=("running_mean", "running_var"),
    outputs=("result0", "result1", "result2"),
    nondiff_outputs=("result1", "result2"),
    doc="Batch normalisation over dim 1 (``torch.batch_norm`` on the CPU); see :mod:`leafkit._functions.nn_ops`.",
    **{"input, weight, bias": _first},
)


# -- second derivative: PyTorch's batchnorm_double_backward, in F ops --------------------------------------------------
class _DoubleBackward:
    """The shared terms of ``batchnorm_double_backward`` (FunctionsManual.cpp), on arrays or tensors."""

    def __init__(
        self, F, grads, input, weight, grad_out, running_mean, running_var, save_mean, save_invstd, train, eps
    ):
        self.F = F
        self.axes, self.bshape, self.m = _layout(input)
        self.train = train
        self.ggI, self.ggG, self.ggB = grads
        self.gO = grad_out
        self.affine = weight is not None
        self.gamma = F.reshape(weight, self.bshape) if self.affine else 1.0
        mu = save_mean if train else running_mean
        invstd = save_invstd if train else F.pow(running_var + eps, -0.5)
        self.x_mu = input - F.reshape(mu, self.bshape)
        self.invstd = F.reshape(invstd, self.bshape)  # sigma2_eps_neg_1_2
        self.invstd2 = F.pow(self.invstd, 2)  # sigma2_eps_neg_1
        self.invstd3 = F.pow(self.invstd, 3)  # sigma2_eps_neg_3_2

    def sum1(self, t, keepdim=True):
        """``sum_exclude_dim1``: sum over every dim but the channels."""
        s = self.F.sum_dim(t, self.axes, True)
        return s if keepdim else self.F.reshape(s, (s.shape[1],))

    def first_back_grad_input(self, gO, gamma):
        h0 = (gamma * self.invstd) / self.m
        h1 = gO * self.m - self.sum1(gO) - self.x_mu * self.invstd2 * self.sum1(gO * self.x_mu)
        return h0 * h1

    def grad_input(self, input):
        F, m, gO, ggI = self.F, self.m, self.gO, self.ggI
        x_mu_invstd3 = self.x_mu * self.invstd3
        gOinmu_sum = self.sum1(gO * self.x_mu)
        gO_sum = self.sum1(gO)
        gI = None
        if self.train:
            ggI_sum = self.sum1(ggI)
            ggIinmu_sum = self.sum1(ggI * self.x_mu)
            all_sub = (
                (ggI_sum * gO_sum) / m - self.sum1(gO * ggI) + (self.invstd2 * gOinmu_sum * ggIinmu_sum) * (3.0 / m)
            )
            gI_0t = (x_mu_invstd3 * all_sub) / m
            gI_1t = ((ggIinmu_sum * self.invstd3) / m) * (gO_sum / m - gO)
            gI_2t = ((gOinmu_sum * self.invstd3) / m) * (ggI_sum / m - ggI)
            gI = self.gamma * (gI_0t + gI_1t + gI_2t)
        if self.affine:
            ggG = F.reshape(self.ggG, self.bshape)
            if self.train:
                t0 = gO * self.invstd
                t1 = (self.invstd * gO_sum) / -m
                t2 = (x_mu_invstd3 * gOinmu_sum) / -m
                term = ggG * (t0 + t1 + t2)
            else:
                term = ggG * self.invstd * gO
            gI = term if gI is None else gI + term
        return F.zeros_like(input) if gI is None else gI

    def grad_weight(self):
        if self.train:
            return self.sum1(self.ggI * self.first_back_grad_input(self.gO, 1.0), keepdim=False)
        return self.sum1(self.ggI * self.gO * self.invstd, keepdim=False)

    def grad_grad_out(self):
        F = self.F
        if self.train:
            ggO = self.first_back_grad_input(self.ggI, self.gamma)
        else:
            ggO = self.ggI * self.invstd * self.gamma
        if self.affine:
            ggO = ggO + F.reshape(self.ggG, self.bshape) * self.x_mu * self.invstd
            ggO = ggO + F.reshape(self.ggB, self.bshape)  # broadcast over the batch
        return ggO


def _double(F, grads, input, weight, grad_out, running_mean, running_var, save_mean, save_invstd, train, eps):
    return _DoubleBackward(
        F, grads, input, weight, grad_out, running_mean, running_var, save_mean, save_invstd, train, eps
    )


def _double_backward(
    F, grads, grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps, grad_input_mask
):
    """PyTorch's ``grad_out, input, weight: batchnorm_double_backward(...)``: one call, three gradients."""
    d = _double(F, grads, input, weight, grad_out, running_mean, running_var, save_mean, save_invstd, train, eps)
    need_go, need_in, need_w = grad_input_mask
    return (
        d.grad_grad_out() if need_go else None,
        d.grad_input(input) if need_in else None,
        F.reshape(d.grad_weight(), tuple(weight.shape)) if need_w else None,
    )


native_batch_norm_backward_spec = defop(
    "native_batch_norm_backward",
    _native_batch_norm_backward,
    inputs=("grad_out", "input", "weight", "running_mean", "running_var", "save_mean", "save_invstd"),
    nondiff=("running_mean", "running_var"),
    outputs=("result0", "result1", "result2"),
    doc="The derivative of ``native_batch_norm``: (grad_input, grad_weight, grad_bias).",
    **{"grad_out, input, weight": _double_backward},
)


# -- vmap: batching rule (leafkit.func.vmap) -------------------------------------------------------------------------
BATCH_NORM_VMAP_MESSAGE = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated in place, "
    "were not batched.\nIf you are using a module and do not need eval mode, please set `track_running_stats` to be "
    "False.If you are using a prebuilt module and do not need eval mode, please see the functorch website for "
    "resources on how to patch your module to work with vmap"
)


def _batch_norm_batched(spec, args, level):
    """Batch norm of batched samples (each sample a batch of its own): in evaluation, every sample's rows in one
    call (the statistics are shared); in training without running statistics, the samples' channels side by side
    (``(N, B*C, ...)``), so each sample gets its own statistics.  Training with unbatched running statistics
    raises PyTorch's error (they would be updated in place with every sample's statistics)."""
    x, weight, bias, running_mean, running_var, training, momentum, eps = args
    if any(t.__class__ is BatchedTensor and t._level == level for t in (weight, bias, running_mean, running_var)):
        return fallback(spec, args, level)
    if training and (running_mean is not None or running_var is not None):
        raise RuntimeError(BATCH_NORM_VMAP_MESSAGE)
    v = logical_front(x, level)
    n = batch_size(level)
    shape = tuple(x._data.shape)
    if not training:
        out, mean, invstd = apply(spec, (v.reshape(n * shape[0], *shape[1:]), *args[1:]))
        return wrap(out.reshape(n, *shape), 0, level), mean, invstd
    rows = v.transpose(0, 1).reshape(shape[0], n * shape[1], *shape[2:])
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    out, mean, invstd = apply(spec, (rows, w, b, None, None, True, momentum, eps))
    out = out.reshape(shape[0], n, *shape[1:]).transpose(0, 1)
    return wrap(out, 0, level), wrap(mean.reshape(n, shape[1]), 0, level), wrap(invstd.reshape(n, shape[1]), 0, level)


native_batch_norm_spec.batch = _batch_norm_batched
