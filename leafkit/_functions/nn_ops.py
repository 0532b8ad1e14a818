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

from .. import _dtype
from .._creation import _finish, zeros
from .._device import array_module, as_array
from .._random import _rng
from .._tensor import Tensor
from ._base import check_tensor
from ._base import dim as _dim
from ._registry import apply, defop, public

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


# -- layer normalisation (NativeLayerNormBackward0) --------------------------------------------------------------------
# ``native_layer_norm(input, normalized_shape, weight, bias, eps) -> (output, mean, rstd)`` normalises over the last
# ``len(normalized_shape)`` dims; ``mean`` and ``rstd`` keep those dims with size 1, as PyTorch's do.  Its derivative
# is the op ``native_layer_norm_backward`` (``NativeLayerNormBackwardBackward0`` when recorded), whose own
# derivatives are the second derivatives below, written with F ops.
def _ln_axes(shape, normalized_shape):
    k = len(normalized_shape)
    return tuple(range(len(shape) - k, len(shape))), int(np.prod(normalized_shape)) if k else 1


def _native_layer_norm(input, weight, bias, normalized_shape, eps):
    axes, n = _ln_axes(input.shape, normalized_shape)
    dt = input.dtype
    x = input.astype(_acc(dt), copy=False)
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=axes, keepdims=True)
    rstd = 1.0 / array_module(x).sqrt(var + eps)
    out = centred * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return as_array(out.astype(dt)), as_array(mean.astype(dt)), as_array(rstd.astype(dt))


def _native_layer_norm_backward(grad_out, input, mean, rstd, weight, bias, normalized_shape, output_mask):
    """(grad_input, grad_weight, grad_bias): ``rstd * (g - mean(g) - xhat * mean(g * xhat))`` with
    ``g = grad_out * weight``; the sums of ``grad_out * xhat`` and ``grad_out`` over the batch dims."""
    xp = array_module(grad_out)
    axes, n = _ln_axes(input.shape, normalized_shape)
    dt = input.dtype
    acc = _acc(dt)
    xhat = (input.astype(acc, copy=False) - mean.astype(acc)) * rstd.astype(acc)
    go = grad_out.astype(acc, copy=False)
    batch = tuple(range(input.ndim - len(axes)))
    wshape = tuple(normalized_shape)
    if output_mask[0]:
        g = go * weight.astype(acc) if weight is not None else go
        gi = rstd.astype(acc) * (
            g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True)
        )
        gi = gi.astype(dt)
    else:
        gi = xp.zeros(input.shape, dtype=dt)
    wdt = weight.dtype if weight is not None else dt
    gw = (go * xhat).sum(axis=batch).reshape(wshape).astype(wdt) if output_mask[1] else xp.zeros(wshape, wdt)
    bdt = bias.dtype if bias is not None else dt
    gb = go.sum(axis=batch).reshape(wshape).astype(bdt) if output_mask[2] else xp.zeros(wshape, bdt)
    return as_array(gi), as_array(gw), as_array(gb)


def _ln_first(F, grad, input, weight, bias, result1, result2, normalized_shape, grad_input_mask):
    return F.native_layer_norm_backward(grad, input, result1, result2, weight, bias, normalized_shape, grad_input_mask)


native_layer_norm_spec = defop(
    "native_layer_norm",
    _native_layer_norm,
    inputs=("input", "weight", "bias"),
    outputs=("result0", "result1", "result2"),
    nondiff_outputs=("result1", "result2"),
    doc="Layer normalisation over the last dims (``torch.native_layer_norm``): (output, mean, rstd).",
    **{"input, weight, bias": _ln_first},
)


def _ln_double_backward(F, grads, grad_out, input, mean, rstd, weight, normalized_shape, grad_input_mask):
    """The derivatives of ``native_layer_norm_backward`` for grad_out, input and weight (PyTorch's
    ``layer_norm_double_backward``), given the incoming gradients ``(ggI, ggW, ggB)``.

    Per row (the normalised dims, N elements) with ``xh = (x - mean) * rstd``, ``P(v) = v - mean(v) - xh *
    mean(v * xh)`` and ``a = gO * w``: grad_input = rstd * P(a) gives, for ggI = u, ``d/dx = -rstd^2 / N * (xh *
    (sum(u a) - mean(a) sum(u) - mean(a xh) sum(u xh)) + sum(u xh) (a - mean(a) - xh mean(a xh)) + mean(a xh)
    (N u - sum(u) - xh sum(u xh)))``; grad_weight = sum(gO * xh) gives ``rstd * P(ggW * gO)``; grad_grad_out is
    ``w * rstd * P(ggI) + ggW * xh + ggB`` and grad_weight of it ``sum over the batch of gO * rstd * P(ggI)``.
    """
    ggi, ggw, ggb = grads[0], grads[1], grads[2]
    axes, n = _ln_axes(tuple(input.shape), normalized_shape)
    xh = (input - mean) * rstd

    def rsum(t):
        return F.sum_dim(t, axes, True)

    def project(v):
        return v - F.div_scalar(rsum(v), n) - xh * F.div_scalar(rsum(v * xh), n)

    a = grad_out * weight if weight is not None else grad_out
    need_go, need_in, need_w = grad_input_mask
    g_go = g_in = g_w = None
    if need_go:
        terms = []
        if ggi is not None:
            p = rstd * project(ggi)
            terms.append(p * weight if weight is not None else p)
        if ggw is not None:
            terms.append(ggw * xh)
        if ggb is not None:
            terms.append(ggb + F.zeros_like(grad_out))
        if terms:
            g_go = terms[0]
            for t in terms[1:]:
                g_go = g_go + t
    if need_in:
        terms = []
        rstd2 = rstd * rstd
        if ggi is not None:
            u = ggi
            s_u, s_ua, s_ux = rsum(u), rsum(u * a), rsum(u * xh)
            m_a, m_ax = F.div_scalar(rsum(a), n), F.div_scalar(rsum(a * xh), n)
            inner = xh * (s_ua - m_a * s_u - m_ax * s_ux) + s_ux * (a - m_a - xh * m_ax)
            inner = inner + m_ax * (F.mul_scalar(u, float(n)) - s_u - xh * s_ux)
            terms.append(F.div_scalar(-rstd2 * inner, n))
        if ggw is not None:
            terms.append(rstd * project(ggw * grad_out))
        if terms:
            g_in = terms[0] if len(terms) == 1 else terms[0] + terms[1]
    if need_w and ggi is not None and weight is not None:
        g_w = F.sum_to(grad_out * rstd * project(ggi), tuple(weight.shape))
    return g_go, g_in, g_w


native_layer_norm_backward_spec = defop(
    "native_layer_norm_backward",
    _native_layer_norm_backward,
    inputs=("grad_out", "input", "mean", "rstd", "weight", "bias"),
    outputs=("result0", "result1", "result2"),
    doc="The derivative of ``native_layer_norm``: (grad_input, grad_weight, grad_bias).",
    mean=lambda F, grad: _ln_not_implemented("mean"),
    rstd=lambda F, grad: _ln_not_implemented("rstd"),
    **{"grad_out, input, weight": _ln_double_backward},
)


def _ln_not_implemented(name):
    raise RuntimeError(f"derivative for native_layer_norm_backward {name} is not implemented")


# -- embedding (EmbeddingBackward0) ------------------------------------------------------------------------------------
# ``embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)``: the rows of ``weight`` at ``indices``.  Its
# derivative is ``embedding_dense_backward`` (``EmbeddingDenseBackwardBackward0`` when recorded): the gradient rows
# added up per index (scaled by 1 / count with ``scale_grad_by_freq``), none for ``padding_idx``.
def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    xp = array_module(weight)
    flat = indices.reshape(-1)
    n = weight.shape[0]
    if flat.size and (flat.min() < 0 or flat.max() >= n):
        raise IndexError("index out of range in self")
    return as_array(xp.take(weight, flat, axis=0).reshape(indices.shape + weight.shape[1:]))


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    xp = array_module(grad_output)
    flat = indices.reshape(-1)
    d = grad_output.shape[-1]
    g = grad_output.reshape(-1, d)
    if scale_grad_by_freq:
        counts = xp.bincount(flat, minlength=num_weights)
        g = g / counts[flat].reshape(-1, 1).astype(g.dtype)
    if padding_idx >= 0:
        g = g * (flat != padding_idx).reshape(-1, 1).astype(g.dtype)
    out = xp.zeros((num_weights, d), dtype=grad_output.dtype)
    if xp is np:
        np.add.at(out, flat, g)
    else:  # CuPy
        import cupyx

        cupyx.scatter_add(out, flat, g)
    return as_array(out)


def _embedding_dense_double_backward(F, grad, indices, padding_idx, scale_grad_by_freq):
    """The derivative of ``embedding_dense_backward`` for grad_output: the rows of ``grad`` at ``indices`` (zero at
    ``padding_idx``, divided by the counts with ``scale_grad_by_freq``), PyTorch's
    ``embedding_dense_double_backward``."""
    out = F.embedding(grad, indices, -1, False, False)
    xp_like = indices if not F.records else indices._data
    xp = array_module(xp_like)
    if scale_grad_by_freq or padding_idx >= 0:
        flat = xp_like.reshape(-1)
        scale = xp.ones(flat.shape, dtype=np.float64)
        if scale_grad_by_freq:
            counts = xp.bincount(flat, minlength=int(flat.max()) + 1 if flat.size else 0)
            scale = scale / counts[flat]
        if padding_idx >= 0:
            scale = scale * (flat != padding_idx)
        shape = tuple(xp_like.shape) + (1,)
        mask = scale.reshape(shape).astype(grad._data.dtype if F.records else grad.dtype)
        out = out * (Tensor._make(mask, out._device) if F.records else mask)
    return out


embedding_spec = defop(
    "embedding",
    _embedding,
    inputs=("weight", "indices"),
    nondiff=("indices",),
    weight=lambda F, grad, weight_sym_sizes, indices, padding_idx, scale_grad_by_freq: F.embedding_dense_backward(
        grad, indices, weight_sym_sizes[0], padding_idx, scale_grad_by_freq
    ),
    doc="The rows of ``weight`` at ``indices`` (``EmbeddingBackward0``).",
)
defop(
    "embedding_dense_backward",
    _embedding_dense_backward,
    inputs=("grad_output", "indices"),
    nondiff=("indices",),
    grad_output=lambda F, grad, indices, padding_idx, scale_grad_by_freq: _embedding_dense_double_backward(
        F, grad, indices, padding_idx, scale_grad_by_freq
    ),
)


# -- the torch.* forms nn.functional calls: dropout, batch_norm, layer_norm, embedding ---------------------------------
def _dropout_noise(input, p):
    """PyTorch's ``empty_like(input).bernoulli_(1 - p).div_(1 - p)``: each element ``1/(1-p)`` with probability
    ``1 - p``, else ``0``; drawn on the host from leafkit's generator (:func:`leafkit.manual_seed`), then moved to
    ``input``'s device.  Tests replace this function to give leafkit and PyTorch the same mask."""
    q = 1.0 - p
    dt = input._data.dtype
    keep = _rng(None).random(size=tuple(input.shape)) < q
    noise = keep.astype(dt) / dt.type(q)
    return _finish(np.asarray(noise), None, input.device, False)


def _dropout(name, input, p, train, in_place):
    if p < 0.0 or p > 1.0:  # a RuntimeError here; nn.functional.dropout checks first and raises ValueError
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    check_tensor(name, "input", input)
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        noise = zeros((), dtype=input.dtype, device=input.device)
    else:
        if input._data.dtype.kind != "f":
            raise RuntimeError(
                f"result type Float can't be cast to the desired output type {_dtype.word(input._data.dtype)}"
            )
        noise = _dropout_noise(input, p)
    return input.mul_(noise) if in_place else input * noise


@public("dropout", method=False)
def dropout(input, p, train):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)`` when ``train``: ``input * noise``
    (``MulBackward0``, the mask saved as ``_saved_other``); ``input`` itself when ``p == 0``, ``not train`` or
    ``input`` is empty.  See :func:`leafkit.nn.functional.dropout`, which calls it.

    Raises
    ------
    RuntimeError
        "dropout probability has to be between 0 and 1, but got 1.5" (``nn.functional.dropout`` raises it as a
        ValueError, as PyTorch's do); integer input with ``0 < p < 1`` ("result type Float can't be cast to the
        desired output type Long").
    """
    return _dropout("dropout", input, p, train, False)


@public("dropout_", method=False)
def dropout_(input, p, train):
    """In-place :func:`dropout` (``input.mul_(noise)``, ``MulBackward0``); PyTorch's leaf in-place error on a leaf
    that requires grad."""
    return _dropout("dropout_", input, p, train, True)


@public("batch_norm", method=False)
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    """Batch normalisation over dim 1 (ATen's argument order; ``cudnn_enabled`` is ignored): ``native_batch_norm``
    (``NativeBatchNormBackward0``) after PyTorch's checks.  See :func:`leafkit.nn.functional.batch_norm`, which
    calls it, for the formulas, shapes and the running statistics; the checks of the batch size and of ``eps``
    are that function's, as in PyTorch.

    Raises
    ------
    RuntimeError
        "running_mean should contain 3 elements not 2" (likewise ``running_var``, ``weight``, ``bias``);
        "running_mean must be defined in evaluation mode"; PyTorch's "mixed dtype (CPU)" messages.
    IndexError
        1-D input ("Dimension out of range (expected to be in range of [-1, 0], but got 1)").
    NotImplementedError
        Integer input ("\\"batch_norm\\" not implemented for 'Long'").
    """
    check_tensor("batch_norm", "input", input)
    c = input.shape[_dim(1, input.dim())]
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None:
            if t.numel() != c:
                raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
        elif not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    dt = input._data.dtype
    if dt.kind != "f":
        raise NotImplementedError(f"\"batch_norm\" not implemented for '{_dtype.word(dt)}'")
    params = [t._data.dtype for t in (weight, bias, running_mean, running_var) if t is not None]
    if any(d != dt for d in params):
        if dt == np.float64:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        if not (dt == np.float16 and all(d == np.float32 for d in params)):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.numel() == 0:  # PyTorch: a copy, scaled and shifted by the first channel's parameters
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return apply(
        native_batch_norm_spec,
        (input, weight, bias, running_mean, running_var, bool(training), float(momentum), float(eps)),
    )[0]


def _layer_norm_shape(name, input, normalized_shape, weight, bias) -> tuple:
    """``normalized_shape`` as a tuple, after PyTorch's checks of the input's and the affine parameters' shapes."""
    check_tensor(name, "input", input)
    shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    k = len(shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], but "
            f"got input of size{list(input.shape)}"
        )
    for pname, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {pname} to be of same shape as normalized_shape, but got {pname} of shape "
                f"{list(t.shape)} and normalized_shape = {list(shape)}"
            )
    return shape


@public("layer_norm", method=False)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """Layer normalisation over the last ``len(normalized_shape)`` dims (``NativeLayerNormBackward0``; the biased
    variance); ``cudnn_enable`` is ignored.  See :func:`leafkit.nn.functional.layer_norm`, which calls it.

    Raises
    ------
    RuntimeError
        "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 4]"; "Expected
        weight to be of same shape as normalized_shape, but got weight of shape [3] and normalized_shape = [4]".
    """
    shape = _layer_norm_shape("layer_norm", input, normalized_shape, weight, bias)
    return apply(native_layer_norm_spec, (input, weight, bias, shape, float(eps)))[0]


@public("native_layer_norm", method=False)
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """ATen's ``native_layer_norm``: ``(output, mean, rstd)``, the statistics with the normalised dims kept as 1;
    the checks and errors of :func:`layer_norm`."""
    shape = _layer_norm_shape("native_layer_norm", input, normalized_shape, weight, bias)
    return apply(native_layer_norm_spec, (input, weight, bias, shape, float(eps)))


def check_embedding(indices, weight, sparse) -> None:
    """The checks of an embedding lookup: int64/int32 ``indices``, a 2-d ``weight``, no ``sparse``.

    Raises
    ------
    RuntimeError
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got
        torch.FloatTensor instead (while checking arguments for embedding)"; "'weight' must be 2-D".
    NotImplementedError
        ``sparse=True``: leafkit has no sparse tensors.
    """
    if indices.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"{indices.type()} instead (while checking arguments for embedding)"
        )
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if sparse:
        raise NotImplementedError("leafkit has no sparse tensors: embedding(..., sparse=True) is not supported")


@public("embedding", method=False)
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` at ``indices`` (``EmbeddingBackward0``), in ATen's argument order: shape
    ``indices.shape + (embedding_dim,)``.  ``padding_idx`` (negative: none) gets no gradient.  See
    :func:`leafkit.nn.functional.embedding`, which calls it after checking ``padding_idx`` and applying
    ``max_norm``.

    Raises
    ------
    TypeError
        "embedding(): argument 'indices' (position 2) must be Tensor, not list".
    RuntimeError, NotImplementedError
        Those of :func:`check_embedding`.
    """
    check_tensor("embedding", "indices", indices, 2)
    check_embedding(indices, weight, sparse)
    pad = int(padding_idx) if padding_idx >= 0 else -1
    return apply(embedding_spec, (weight, indices, pad, bool(scale_grad_by_freq), False))
