"""``unique`` and ``unique_consecutive``: the distinct values (or rows, with ``dim``) of a tensor.

PyTorch defines no derivative for them, but records a node on a tensor that requires grad, so a backward pass
through one raises NotImplementedError "the derivative for '_unique2' is not implemented." (``Unique2Backward0``,
``UniqueDimBackward0``, ``UniqueConsecutiveBackward0`` also with ``dim``), as leafkit's
entries do.  The inverse indices and counts are int64 and never require grad.
"""

from __future__ import annotations

import numpy as np

from .._tensor import _dim
from ._base import array_module, check_tensor
from ._registry import apply, defop, public


def _no_derivative(name):
    def formula(F, grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    return formula


def _empty_index(xp):
    return xp.zeros((0,), dtype=np.int64)


def _unique_flat(self, return_inverse, return_counts):
    xp = array_module(self)
    flat = self.reshape(-1)
    kw = {"equal_nan": False} if self.dtype.kind == "f" else {}
    vals, inv, cnt = xp.unique(flat, return_inverse=True, return_counts=True, **kw)
    inverse = inv.reshape(self.shape).astype(np.int64) if return_inverse else _empty_index(xp)
    counts = cnt.astype(np.int64) if return_counts else _empty_index(xp)
    return vals, inverse, counts


def _unique2(self, sorted=True, return_inverse=False, return_counts=False):
    """Distinct values, sorted (PyTorch's CPU kernel sorts also for ``sorted=False``)."""
    return _unique_flat(self, return_inverse, return_counts)


def _check_dim_sizes(self, dim):
    if any(n == 0 for k, n in enumerate(self.shape) if k != dim):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")


def _unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    """Distinct slices along ``dim``, in lexicographic order."""
    xp = array_module(self)
    _check_dim_sizes(self, dim)
    if self.shape[dim] == 0:
        return self.copy(), xp.zeros((0,), dtype=np.int64), xp.zeros((0,), dtype=np.int64)
    vals, inv, cnt = xp.unique(self, axis=dim, return_inverse=True, return_counts=True)
    inverse = inv.reshape(-1).astype(np.int64) if return_inverse else _empty_index(xp)
    counts = cnt.astype(np.int64) if return_counts else _empty_index(xp)
    return vals, inverse, counts


def _runs(keys, xp):
    """Where each run of equal consecutive keys starts (a bool mask) for a 2-d array of keys (one row per item)."""
    if keys.shape[0] == 0:
        return xp.zeros((0,), dtype=bool)
    change = xp.any(keys[1:] != keys[:-1], axis=1)
    return xp.concatenate([xp.ones((1,), dtype=bool), change])


def _consecutive(self, return_inverse, return_counts, dim):
    xp = array_module(self)
    if dim is None:
        moved = self.reshape(-1)
        keys = moved.reshape(-1, 1)
    else:
        _check_dim_sizes(self, dim)
        moved = xp.moveaxis(self, dim, 0)
        keys = moved.reshape(moved.shape[0], -1)
    starts = _runs(keys, xp)
    vals = moved[starts]
    if dim is not None:
        vals = xp.moveaxis(vals, 0, dim)
    run_id = xp.cumsum(starts) - 1
    if return_inverse:
        inverse = run_id.reshape(self.shape if dim is None else (-1,)).astype(np.int64)
    else:
        inverse = _empty_index(xp)
    if return_counts:
        idx = xp.flatnonzero(starts)
        counts = xp.diff(xp.concatenate([idx, xp.asarray([keys.shape[0]])])).astype(np.int64)
    else:
        counts = _empty_index(xp)
    return vals, inverse, counts


def _unique_consecutive(self, return_inverse=False, return_counts=False):
    return _consecutive(self, return_inverse, return_counts, None)


def _unique_dim_consecutive(self, dim, return_inverse=False, return_counts=False):
    return _consecutive(self, return_inverse, return_counts, dim)


_OUTS = dict(outputs=("output", "inverse_indices", "counts"), nondiff_outputs=("inverse_indices", "counts"))
unique2_spec = defop("_unique2", _unique2, node="Unique2Backward0", self=_no_derivative("_unique2"), **_OUTS)
unique_dim_spec = defop("unique_dim", _unique_dim, self=_no_derivative("unique_dim"), **_OUTS)
unique_consecutive_spec = defop(
    "unique_consecutive", _unique_consecutive, self=_no_derivative("unique_consecutive"), **_OUTS
)
unique_dim_consecutive_spec = defop(  # PyTorch runs unique_consecutive(dim=...) through the same node
    "unique_dim_consecutive",
    _unique_dim_consecutive,
    node="UniqueConsecutiveBackward0",
    self=_no_derivative("unique_consecutive"),
    **_OUTS,
)


def _pick(res, return_inverse, return_counts):
    out = [res[0]]
    if return_inverse:
        out.append(res[1])
    if return_counts:
        out.append(res[2])
    return out[0] if len(out) == 1 else tuple(out)


@public("unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (a 1-d tensor, sorted), or with ``dim`` its distinct slices along
    ``dim`` in lexicographic order (``torch.unique``).

    Parameters
    ----------
    sorted : bool
        Accepted; the result is sorted either way, as PyTorch's CPU kernel sorts.
    return_inverse : bool
        Also return, for each element (each slice), the index of its value in the output: int64, ``input``'s
        shape (``(input.size(dim),)`` with ``dim``).
    return_counts : bool
        Also return how often each distinct value occurs (int64).
    dim : int, optional

    Returns
    -------
    Tensor, or a tuple ``(output, inverse_indices, counts)`` of the parts asked for.  NaNs are all distinct.
    On a tensor that requires grad the output has a ``Unique2Backward0`` (``UniqueDimBackward0``) node whose
    backward raises NotImplementedError, as in PyTorch.

    Raises
    ------
    IndexError
        A ``dim`` out of range ("Dimension out of range ..."; "Dimension specified as 0 but tensor has no
        dimensions" for a 0-d input).
    RuntimeError
        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied".
    """
    check_tensor("unique", "input", input)
    if dim is None:
        res = apply(unique2_spec, (input, sorted, return_inverse, return_counts))
    else:
        if input.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        res = apply(unique_dim_spec, (input, _dim(dim, input.dim()), sorted, return_inverse, return_counts))
    return _pick(res, return_inverse, return_counts)


@public("unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal consecutive elements (slices along ``dim``) into one, keeping the order
    (``torch.unique_consecutive``); ``return_inverse``/``return_counts`` as in :func:`unique`."""
    check_tensor("unique_consecutive", "input", input)
    if dim is None:
        res = apply(unique_consecutive_spec, (input, return_inverse, return_counts))
    else:
        if input.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        res = apply(unique_dim_consecutive_spec, (input, _dim(dim, input.dim()), return_inverse, return_counts))
    return _pick(res, return_inverse, return_counts)
