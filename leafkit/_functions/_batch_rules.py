"""Batching rules shared by the op families (``defop(..., batch=...)``; the machinery is in :mod:`._batched`).

A rule is ``rule(spec, args, level)``: ``args`` are the op's arguments, some
of them batched tensors of vmap level ``level``; it runs the op once on the
physical tensors (every sample at once) and returns batched tensors.  It is
written with leafkit's own ops, so the computation is recorded as usual and
gradients flow through it.

* :func:`pointwise`: elementwise ops; batch dimensions go first and the
  logical shapes are right-aligned (an unbatched operand broadcasts over the
  samples);
* :func:`dims`: ops with dimension arguments (reductions, views, cat, gather
  ...): the batch dimension goes first and every dim argument moves one
  along;
* :func:`front`: ops on the last dims only (``triu``), which need nothing but
  the batch dimension first;
* :func:`sizes`: ops with a target shape (``view``, ``expand``,
  ``reshape``).

The family files declare their ops' rules next to the entries; ops with rules
of their own (``mm``, ``nll_loss``, indexing) have them there too.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from ._base import result_type_many
from ._batched import (
    BatchedTensor,
    batch_size,
    expand_batch,
    movedim,
    pad,
    per_sample,
    wrap,
)
from ._registry import SPECS, apply

__all__ = ["pointwise", "dims", "front", "sizes", "wrap_out", "logical_front", "arg", "SPEC"]


def SPEC(name):
    """The registered op ``name`` (for rules that run other ops)."""
    return SPECS[name]


def wrap_out(out, level, multi):
    """The physical result(s), batch dimension first, as batched tensors."""
    if multi:
        return tuple(wrap(o, 0, level) for o in out)
    return wrap(out, 0, level)


def logical_front(a, level):
    """The physical tensor of ``a`` (batched at ``level``) with the batch first; None when not batched there."""
    if a.__class__ is BatchedTensor and a._level == level:
        v = a._value
        return v if a._bdim == 0 else movedim(v, a._bdim, 0)
    return None


def arg(spec, args, name):
    """The argument ``name`` of the op (its default when not given)."""
    k = spec.params.index(name)
    return args[k] if k < len(args) else spec.defaults[k]


def _full(spec, args):
    """``args`` with every defaulted parameter filled in (so attributes can be replaced by position)."""
    if spec.variadic or len(args) >= len(spec.params):
        return list(args)
    return list(args) + list(spec.defaults[len(args) :])


# -- pointwise ---------------------------------------------------------------------------------------------------------
def pointwise(spec, args, level):
    """An elementwise op: every batched operand with its batch dimension first and size-1 dims after it up to the
    largest logical rank, so that operands broadcast as their logical shapes do; the result has the batch first.

    A batched operand that is 0-d for the op counts as 0-d in type promotion (a 0-d float64 operand does not
    make a float32 result float64), as in PyTorch."""
    positions = spec.positions(len(args))
    rank = 0
    for i in positions:
        a = args[i]
        d = getattr(a, "_data", None)
        if d is not None and d.ndim > rank:
            rank = d.ndim
    new = list(args)
    zero_d = False
    for i in positions:
        a = args[i]
        if a.__class__ is BatchedTensor and a._level == level:
            v = a._value
            if a._bdim:
                v = movedim(v, a._bdim, 0)
            n = v._data.ndim - 1
            if n == 0 and rank:
                zero_d = True
            if n < rank:
                v = pad(v, rank - n)
            new[i] = v
    if zero_d:
        _logical_promotion(spec, args, new, level)
    return wrap_out(apply(spec, tuple(new)), level, spec.multi)


pointwise.pointwise = True


def _operand(a):
    return a._data if hasattr(a, "_data") else a


def _logical_promotion(spec, args, new, level):
    """Cast the batched operands that are 0-d for the op when their padding would change the result dtype."""
    positions = list(spec.positions(len(args)))
    operands = [args[i] for i in positions if args[i] is not None]
    if not all(hasattr(a, "_data") or isinstance(a, (int, float, bool)) for a in operands):
        return
    want = result_type_many(*[_operand(a) for a in operands])
    got = result_type_many(*[_operand(new[i]) for i in positions if new[i] is not None])
    if want == got:
        return
    dt = _dtype.from_numpy_dtype(want)
    for i in positions:
        a = args[i]
        if (
            a.__class__ is BatchedTensor
            and a._level == level
            and a._data.ndim == 0
            and a._data.dtype != want
            and a._data.dtype.kind == want.kind
        ):
            new[i] = new[i].to(dt)


# -- ops with dimension arguments ------------------------------------------------------------------------------------
def _shift(value, ndim, empty):
    """A dim argument moved one along (the batch dimension is first); ``empty`` says what an empty tuple or None
    means to the op: "all" (every logical dim) or "none"."""
    if value is None:
        return tuple(range(1, ndim + 1)) if empty == "all" else None
    if isinstance(value, (int, np.integer)):
        return int(value) % max(ndim, 1) + 1 if value < 0 else int(value) + 1
    value = tuple(value)
    if not value and empty == "all":
        return tuple(range(1, ndim + 1))
    return tuple(int(d) % max(ndim, 1) + 1 if d < 0 else int(d) + 1 for d in value)


def dims(*names, empty="none", expand=True, unbatched=(), out_ndim=0):
    """The rule of an op with dimension arguments ``names``: every tensor input with the batch dimension first
    (unbatched inputs expanded along it when ``expand``; inputs named in ``unbatched`` must not be batched, or
    the op runs once per sample), every dim argument one along.  ``out_ndim``: the dims count the output's
    dimensions, which has that many more than the input (``unsqueeze``, ``diag_embed``, ``stack``).

    On 0-d samples (a dim argument of 0 or -1 names the sample itself) the op runs once per sample."""

    def rule(spec, args, level):
        positions = spec.positions(len(args))
        new = _full(spec, args)
        ndim = None
        n = batch_size(level)
        for i in positions:
            a = args[i]
            if a is None or not hasattr(a, "_data"):
                continue
            if not spec.variadic and spec.inputs[i] in unbatched:
                if a.__class__ is BatchedTensor and a._level == level:
                    return per_sample(spec, args, level)
                continue
            v = logical_front(a, level)
            if v is None:
                if not expand:
                    continue
                v = expand_batch(a, n)
            if ndim is None:
                ndim = v._data.ndim - 1
            new[i] = v
        if ndim is None:
            return per_sample(spec, args, level)
        if ndim + out_ndim == 0:
            return per_sample(spec, args, level)
        for name in names:
            k = spec.params.index(name)
            new[k] = _shift(new[k], ndim + out_ndim, empty)
        return wrap_out(apply(spec, tuple(new)), level, spec.multi)

    return rule


def front(spec, args, level):
    """An op on the last dims of its one input (``triu``, ``tril``): the batch dimension first is enough."""
    new = list(args)
    new[0] = logical_front(args[0], level)
    return wrap_out(apply(spec, tuple(new)), level, spec.multi)


def sizes(name, pad_to_size=False):
    """An op with a target shape ``name`` (``view``, ``expand``): the batch size first in the shape.
    ``pad_to_size``: the shape may have more dims than the input (``expand``, ``repeat``), so the input gets
    size-1 dims after the batch dimension first."""

    def rule(spec, args, level):
        new = _full(spec, args)
        v = logical_front(args[0], level)
        k = spec.params.index(name)
        size = tuple(new[k])
        if pad_to_size:
            v = pad(v, len(size) - (v._data.ndim - 1))
        new[0] = v
        new[k] = (batch_size(level) if spec.name != "repeat" else 1, *size)
        return wrap_out(apply(spec, tuple(new)), level, spec.multi)

    return rule


def declare(rule, *names):
    """Give the registered ops ``names`` the batching rule ``rule`` (a family's ops that share one rule)."""
    for name in names:
        spec = SPECS[name]
        if spec.batch is not None:
            raise ValueError(f"op {name!r} has a batching rule already")
        spec.batch = rule
