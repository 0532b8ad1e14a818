"""Sampling from distributions given by tensors: ``multinomial`` (and, with the surface of issue 18, the other
random draws that take a tensor of parameters).

The values come from leafkit's generator (NumPy's PCG64), so they differ from PyTorch's for the same seed; the
shapes, dtypes, checks and error messages are PyTorch's.  None of these draws is differentiable: the results
are int64 (``multinomial``) or carry no history.
"""

from __future__ import annotations

import numpy as np

from . import _device
from ._random import _rng
from ._tensor import Tensor

__all__ = ["multinomial"]


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categorical distributions in the rows of ``input`` (``torch.multinomial``).

    Parameters
    ----------
    input : Tensor
        Non-negative weights, shape ``(n,)`` or ``(m, n)`` (they need not sum to 1), floating point.
    num_samples : int
        Draws per row; without replacement at most the number of non-zero weights.
    replacement : bool
        Draw with replacement.
    generator : Generator, optional

    Returns
    -------
    Tensor
        int64 indices of shape ``(num_samples,)`` or ``(m, num_samples)``, on ``input``'s device.

    Raises
    ------
    RuntimeError
        PyTorch's checks: "prob_dist must be 1 or 2 dim", "multinomial only supports floating-point dtypes for
        input, got: Long", "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        "cannot sample n_sample <= 0 samples", "probability tensor contains either `inf`, `nan` or element < 0",
        "invalid multinomial distribution (sum of probabilities <= 0)", "invalid multinomial distribution
        (with replacement=False, not enough non-negative category to sample)".
    """
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.is_floating_point():
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype.word}")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    w = _device.to_host(input._data).astype(np.float64).reshape(-1, n)
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = w.sum(axis=1)
    if np.any(sums <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and np.any((w > 0).sum(axis=1) < num_samples):
        raise RuntimeError(
            "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)"
        )
    rng = _rng(generator)
    rows = [rng.choice(n, size=num_samples, replace=replacement, p=row / s) for row, s in zip(w, sums)]
    res = np.stack(rows).astype(np.int64)
    if input.dim() == 1:
        res = res[0]
    t = Tensor._make(_device.to_device_array(res, _device.CPU, input.device), input.device)
    if out is not None:
        out.copy_(t)
        return out
    return t
