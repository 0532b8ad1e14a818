"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_`` and the two steps of the first (``torch.nn.utils``)."""

from __future__ import annotations

import functools
import inspect
import math
import warnings

import numpy as np

from ..._creation import tensor
from ..._device import array_module
from ..._functions.shape import stack
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _no_grad(fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)

    return run


def _tensors(parameters, warn_empty=False):
    """A single tensor as a list of one; any other iterable read once into a list (a generator is consumed).

    ``warn_empty``: PyTorch's UserWarning for a generator that gives nothing (``clip_grad_norm_(model.parameters()
    ...)`` on a model without parameters)."""
    if isinstance(parameters, Tensor):
        return [parameters]
    out = list(parameters)
    if warn_empty and not out and inspect.isgenerator(parameters):
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    return out


def _vector_norm(t: Tensor, ord: float) -> Tensor:
    """``torch.linalg.vector_norm(t, ord)`` of all of ``t``'s elements, as a 0-d tensor of its dtype (half in float).

    ``ord`` 0 counts the non-zero elements, ``inf``/``-inf`` take the largest/smallest absolute value, any other
    value the ``ord``-th root of the sum of ``|x| ** ord``; an empty tensor has norm 0 (inf and -inf: PyTorch's
    error is not reproduced, an empty gradient has no maximum)."""
    a = t._data
    xp = array_module(a)
    acc = np.float32 if a.dtype == np.float16 else a.dtype
    x = xp.abs(a.astype(acc, copy=False))
    if not x.size:
        out = xp.zeros((), dtype=acc)
    elif ord == math.inf:
        out = x.max()
    elif ord == -math.inf:
        out = x.min()
    elif ord == 0:
        out = (x != 0).sum().astype(acc)
    elif ord == 1:
        out = x.sum()
    elif ord == 2:
        out = xp.sqrt((x * x).sum())
    else:
        out = (x**ord).sum() ** (1.0 / ord)
    return Tensor._make(xp.asarray(out).astype(a.dtype), t.device)


@_no_grad
def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """The norm of the norms of ``tensors`` (as if they were one vector), ``torch.nn.utils.get_total_norm``.

    Parameters
    ----------
    tensors : Tensor or iterable of Tensor
        Usually gradients.
    norm_type : float or str
        The order: 2 (default), 1, ``inf`` (or ``'inf'``), 0, ``-inf`` or
        any float; read with ``float()``, so ``'fro'`` raises ValueError.
    error_if_nonfinite : bool
        Raise when the total is nan or inf.
    foreach : bool, optional
        Accepted for PyTorch's signature; leafkit has one implementation.

    Returns
    -------
    Tensor
        0-d, of the first tensor's device and of the promoted dtype of the
        tensors; ``tensor(0.)`` when there are none.

    Raises
    ------
    RuntimeError
        "The total norm of order 2.0 for gradients from `parameters` is
        non-finite, so it cannot be clipped. To disable this error and scale
        the gradients by the non-finite norm anyway, set
        `error_if_nonfinite=False`".
    """
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    first = tensors[0].device
    norms = [_vector_norm(t, norm_type).to(first) for t in tensors]
    total = _vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and not bool(array_module(total._data).isfinite(total._data)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


@_no_grad
def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Multiply every gradient in place by ``min(max_norm / (total_norm + 1e-6), 1)``
    (``torch.nn.utils.clip_grads_with_norm_``); parameters whose ``grad`` is None are skipped.

    ``total_norm`` must be a tensor (PyTorch's TypeError from ``clamp`` otherwise)."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    if not isinstance(total_norm, Tensor):
        raise TypeError(
            "clamp() received an invalid combination of arguments - got (float, max=float), but expected one of:\n"
            " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
            " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n"
        )
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.to(g.device))


@_no_grad
def clip_grad_norm_(
    parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None
):
    """Scale the gradients of ``parameters`` together so that their total norm is at most ``max_norm``
    (``torch.nn.utils.clip_grad_norm_``).

    Every ``p.grad`` is multiplied in place (its ``_version`` goes up) by
    ``max_norm / (total_norm + 1e-6)`` clamped to at most 1, so gradients
    already small enough stay as they are (multiplied by 1.0); the direction
    of the whole gradient never changes.  Parameters with ``grad`` None are
    skipped.  Call it between ``loss.backward()`` and ``optimizer.step()``.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        ``model.parameters()`` (a generator is read once) or one tensor.
    max_norm : float
        The largest total norm allowed (a number or a 0-d tensor).
    norm_type, error_if_nonfinite, foreach
        As :func:`get_total_norm`.

    Returns
    -------
    Tensor
        The total norm of the gradients before clipping (0-d, no grad).

    Raises
    ------
    RuntimeError
        The non-finite error of :func:`get_total_norm` (the gradients are
        then left unchanged).
    ValueError
        A ``norm_type`` or ``max_norm`` that ``float()`` cannot read.
    """
    parameters = _tensors(parameters, warn_empty=True)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None):
    """The old name of :func:`clip_grad_norm_`: the same, with PyTorch's FutureWarning."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element to ``[-clip_value, clip_value]`` in place (``torch.nn.utils.clip_grad_value_``).

    Parameters with ``grad`` None are skipped; a single tensor is accepted.
    A negative ``clip_value`` sets every element to ``clip_value``, as in
    PyTorch.  As PyTorch's foreach path (the default), each gradient is
    clamped from below, then from above: two in-place ops, ``_version`` up
    by 2; ``foreach=False`` clamps once.  Returns None.  Raises ValueError
    when ``float(clip_value)`` fails."""
    parameters = _tensors(parameters)
    clip_value = float(clip_value)
    for p in parameters:
        g = p.grad
        if g is None:
            continue
        if foreach is False:
            g.clamp_(min=-clip_value, max=clip_value)
        else:
            g.clamp_min_(-clip_value)
            g.clamp_max_(clip_value)
