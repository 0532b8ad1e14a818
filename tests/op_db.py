"""One row per differentiable operation: how to call it and on what inputs.

Every row feeds four suites:

* ``tests/engine/test_op_db.py``: first derivatives against finite
  differences (gradcheck) and second derivatives against finite differences
  of the gradient (gradgradcheck), float64, shapes drawn by hypothesis;
* the same file checks that every op in leafkit's registry is reached by
  some row (a new op without a row fails there);
* ``tests/parity/test_op_db_parity.py``: values, gradients, second
  derivatives and the node names of the recorded backward graph against
  real PyTorch;
* ``tests/parity/test_random_programs.py``: rows marked ``program`` join the
  random programs run on both libraries.

``call(lib, *xs)`` must read the same for ``leafkit`` and ``torch``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@dataclass
class Row:
    name: str
    call: object  # call(lib, *tensors) -> tensor
    inputs: object  # hypothesis strategy of a tuple of float64 arrays
    gradgrad: bool = True  # has a second derivative worth checking
    differentiable: bool = True  # False: zero gradient everywhere (rounding)
    backward_raises: str = ""  # backward raises this (an op PyTorch has no derivative for)
    program: object = None  # call(lib, t) on a (3, 4) float32 tensor, for the random programs
    arity: int = 1  # tensors the program form takes
    rtol: float = 1e-4
    atol: float = 1e-5
    tags: tuple = field(default_factory=tuple)


# -- input strategies -------------------------------------------------------------------------------------------
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
shapes_1d_up = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)


def _elems(domain):
    if domain == "positive":
        return st.floats(0.3, 3, allow_nan=False, width=64)
    if domain == "unit":  # asin, acos, atanh: inside (-1, 1), clear of the ends where they are singular
        return st.floats(-0.9, 0.9, allow_nan=False, width=64)
    if domain == "above_one":  # acosh
        return st.floats(1.1, 3, allow_nan=False, width=64)
    if domain == "off_grid":  # fmod's and clamp's jumps and kinks: clear of 0 and of the multiples of 1.5
        return st.one_of(
            *(st.floats(lo, hi, width=64) for lo, hi in ((-2.8, -1.6), (-1.4, -0.1), (0.1, 1.4), (1.6, 2.8)))
        )
    if domain == "near_1.5":  # divisors and bounds for "off_grid" values: a / b stays clear of integers
        return st.floats(1.45, 1.55, width=64)
    if domain == "away_from_zero":  # kinks at 0 (abs, relu, sign): stay clear of them for finite differences
        return st.one_of(st.floats(-3, -0.05, width=64), st.floats(0.05, 3, width=64))
    if domain == "away_from_half":  # round's jumps at k + 0.5
        return st.floats(-3, 3, width=64).filter(lambda v: abs(v - np.floor(v) - 0.5) > 0.05)
    if domain == "away_from_int":  # floor/ceil/trunc jump at integers
        return st.floats(-3, 3, width=64).filter(lambda v: 0.05 < v - np.floor(v) < 0.95)
    if domain == "probability":  # clear of 0 and 1 (logit, binary_cross_entropy)
        return st.floats(0.05, 0.95, width=64)
    return st.floats(-3, 3, allow_nan=False, width=64)


def _clear_of(points, elements):
    """Elements at least 0.05 away from each of ``points`` (an op's kinks and jumps)."""
    return elements.filter(lambda v: all(abs(v - p) > 0.05 for p in points)) if points else elements


@st.composite
def same(draw, n=1, domain="real", shape=shapes, avoid=(), distinct=False):
    """``n`` arrays of one shape; ``distinct``: no two elements closer than 0.1 (ops that select one element)."""
    s = draw(shape)
    elements = st.integers(-30, 30).map(lambda i: i / 10.0) if distinct else _clear_of(avoid, _elems(domain))
    return tuple(draw(hnp.arrays(np.float64, s, elements=elements, unique=distinct)) for _ in range(n))


@st.composite
def offset_pair(draw, avoid=(0.0,)):
    """``(a, b)`` of one shape with every ``|a - b|`` clear of ``avoid`` (the kinks of the l1-type losses)."""
    s = draw(shapes)
    a = draw(hnp.arrays(np.float64, s, elements=_elems("real")))
    d = draw(
        hnp.arrays(
            np.float64,
            s,
            elements=st.floats(-3, 3, width=64).filter(lambda v: all(abs(abs(v) - p) > 0.05 for p in avoid)),
        )
    )
    return a, a - d


@st.composite
def broadcast_pair(draw, domain="real", domain2=None):
    s = draw(shapes)
    other = [1 if draw(st.booleans()) else d for d in s]
    other = tuple(other[draw(st.integers(0, len(other))) :])
    if draw(st.booleans()):
        s, other = other, tuple(s)
    return (
        draw(hnp.arrays(np.float64, tuple(s), elements=_elems(domain))),
        draw(hnp.arrays(np.float64, other, elements=_elems(domain2 or domain))),
    )


@st.composite
def distinct(draw, n=1, shape=shapes_1d_up):
    """Arrays whose elements are all different (max/min/maximum: no ties inside finite differences)."""
    s = draw(shape)
    size = int(np.prod(s))
    vals = draw(st.lists(st.integers(-60, 60), min_size=size * n, max_size=size * n, unique=True))
    arr = np.array(vals, dtype=np.float64) / 20
    return tuple(arr[i * size : (i + 1) * size].reshape(s) for i in range(n))


@st.composite
def matrices(draw, *dims):
    """Arrays of the given shapes, letters shared: ``matrices("nm", "mp")``; ``o`` is always 1, ``n`` at least 2."""
    sizes = {c: draw(st.integers(1, 3)) for c in "".join(dims)}
    sizes.update(o=1, n=max(sizes.get("n", 2), 2))
    return tuple(draw(hnp.arrays(np.float64, tuple(sizes[c] for c in d), elements=_elems("real"))) for d in dims)


@st.composite
def shaped(draw, *shape_list, domain="real"):
    return tuple(draw(hnp.arrays(np.float64, s, elements=_elems(domain))) for s in shape_list)


def _apart(pair, ratio=False):
    """No element pair sits on a jump: |a - b| > 0.05, or a / b not within 0.05 of an integer."""
    a, b = np.broadcast_arrays(*pair)
    if ratio:
        q = a / b
        return bool(np.all(np.abs(q - np.round(q)) > 0.05))
    return bool(np.all(np.abs(a - b) > 0.05))


def fixed(*arrays):
    return st.just(tuple(np.asarray(a, dtype=np.float64) for a in arrays))


def _dim(x):
    return max(x.ndim - 1, 0)


# -- the rows ------------------------------------------------------------------------------------------------------
ROWS = [
    # elementwise, one tensor
    Row("neg", lambda lib, x: -x, same(), program=lambda lib, t: -t),
    Row("exp", lambda lib, x: x.exp(), same(), program=lambda lib, t: (t * 0.3).exp()),
    Row("log", lambda lib, x: x.log(), same(domain="positive"), program=lambda lib, t: (t.abs() + 1).log()),
    Row("log1p", lambda lib, x: x.log1p(), same(domain="positive"), program=lambda lib, t: t.abs().log1p()),
    Row("sqrt", lambda lib, x: x.sqrt(), same(domain="positive"), program=lambda lib, t: (t.abs() + 1).sqrt()),
    Row("sin", lambda lib, x: x.sin(), same(), program=lambda lib, t: t.sin()),
    Row("cos", lambda lib, x: x.cos(), same(), program=lambda lib, t: t.cos()),
    Row("tanh", lambda lib, x: x.tanh(), same(), program=lambda lib, t: t.tanh()),
    Row("sigmoid", lambda lib, x: x.sigmoid(), same(), program=lambda lib, t: t.sigmoid()),
    Row(
        "reciprocal",
        lambda lib, x: x.reciprocal(),
        same(domain="positive"),
        program=lambda lib, t: (t.abs() + 1).reciprocal(),
    ),
    Row("abs", lambda lib, x: x.abs(), same(domain="away_from_zero"), program=lambda lib, t: t.abs()),
    Row("relu", lambda lib, x: x.relu(), same(domain="away_from_zero"), program=lambda lib, t: t.relu()),
    Row(
        "clamp",
        lambda lib, x: x.clamp(-1.0, 1.5),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], -1.0))) and _apart((p[0], np.full_like(p[0], 1.5)))),
        program=lambda lib, t: t.clamp(-0.5, 1.0),
    ),
    Row("clamp_min", lambda lib, x: x.clamp(min=0.5), same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5))))),
    Row(
        "clamp_tensor",
        lambda lib, x, lo, hi: x.clamp(lo, hi),
        same(3).filter(lambda p: _apart(p[:2]) and _apart(p[::2]) and _apart(p[1:])),
        program=lambda lib, a, b: a.clamp(min=b * 0.5 - 0.25),
        arity=2,
    ),
    Row("clamp_tensor_max", lambda lib, x, hi: lib.clamp(x, max=hi), broadcast_pair().filter(_apart)),
    Row(
        "clamp_min_number",
        lambda lib, x: x.clamp_min(0.5),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5)))),
        program=lambda lib, t: t.clamp_min(-0.5),
    ),
    Row(
        "clamp_max_number",
        lambda lib, x: lib.clamp_max(x, -0.5),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], -0.5)))),
    ),
    Row(
        "clamp_min_tensor",
        lambda lib, x, lo: x.clamp_min(lo),
        broadcast_pair().filter(_apart),
        program=lambda lib, a, b: lib.clamp_min(a, b),
        arity=2,
    ),
    Row(
        "clamp_max_tensor",
        lambda lib, x, hi: lib.clamp_max(x, hi),
        broadcast_pair().filter(_apart),
        program=lambda lib, a, b: a.clamp_max(b),
        arity=2,
    ),
    Row("square", lambda lib, x: x**2, same(), program=lambda lib, t: t**2),
    Row("pow3", lambda lib, x: x**3, same(), program=lambda lib, t: t**3),
    Row("pow0", lambda lib, x: x**0, same(), gradgrad=False),
    Row("pow_frac", lambda lib, x: x**1.5, same(domain="positive")),
    Row(
        "sign",
        lambda lib, x: x.sign(),
        same(domain="away_from_zero"),
        differentiable=False,
        program=lambda lib, t: t.sign() * t,
    ),
    Row(
        "round",
        lambda lib, x: x.round(),
        same(domain="away_from_half"),
        differentiable=False,
        program=lambda lib, t: t.round() + t,
    ),
    Row(
        "floor",
        lambda lib, x: x.floor(),
        same(domain="away_from_int"),
        differentiable=False,
        program=lambda lib, t: t.floor() * t,
    ),
    Row(
        "ceil",
        lambda lib, x: x.ceil(),
        same(domain="away_from_int"),
        differentiable=False,
        program=lambda lib, t: t.ceil() - t,
    ),
    Row(
        "trunc",
        lambda lib, x: x.trunc(),
        same(domain="away_from_int"),
        differentiable=False,
        program=lambda lib, t: t.trunc() * 2 + t,
    ),
    Row(
        "round_decimals",
        lambda lib, x: (x * 10).round(decimals=-1),
        same(domain="away_from_half"),
        differentiable=False,
        program=lambda lib, t: t.round(decimals=1) * t,
    ),
    # elementwise, two tensors (broadcasting)
    Row("add", lambda lib, a, b: a + b, broadcast_pair(), program=lambda lib, a, b: a + b, arity=2),
    Row(
        "add_alpha",
        lambda lib, a, b: lib.add(a, b, alpha=2.5),
        broadcast_pair(),
        program=lambda lib, a, b: lib.add(a, b, alpha=-1.5),
        arity=2,
    ),
    Row("sub", lambda lib, a, b: a - b, broadcast_pair(), program=lambda lib, a, b: a - b, arity=2),
    Row("sub_alpha", lambda lib, a, b: lib.sub(a, b, alpha=3), broadcast_pair()),
    Row("rsub", lambda lib, a: 2.5 - a, same(), program=lambda lib, a: 1.5 - a),
    Row("mul", lambda lib, a, b: a * b, broadcast_pair(), program=lambda lib, a, b: a * b, arity=2),
    Row("mul_number", lambda lib, a: a * 2.5, same(), program=lambda lib, a: 0.5 * a),
    Row(
        "div",
        lambda lib, a, b: a / b,
        broadcast_pair(domain2="positive"),
        program=lambda lib, a, b: a / (b.abs() + 1),
        arity=2,
    ),
    Row("rdiv", lambda lib, a: 2 / a, same(domain="positive"), program=lambda lib, a: 2 / (a.abs() + 1)),
    Row(
        "pow_tensor",
        lambda lib, a, b: a**b,
        broadcast_pair(domain="positive"),
        program=lambda lib, a, b: (a.abs() + 0.5) ** (b * 0.5),
        arity=2,
    ),
    Row("pow_scalar_base", lambda lib, a: 2.0**a, same(), program=lambda lib, a: 1.5**a),
    Row(
        "remainder",
        lambda lib, a, b: a % b,
        broadcast_pair(domain="positive").filter(lambda p: _apart(p, ratio=True)),
        gradgrad=False,
        program=lambda lib, a, b: a % (b.abs() + 2),
        arity=2,
    ),
    Row(
        "remainder_scalar",
        lambda lib, a: a % 1.7,
        same(domain="positive").filter(lambda p: _apart((p[0], np.full_like(p[0], 1.7)), ratio=True)),
        program=lambda lib, a: (a + 3) % 1.7,
    ),
    Row(
        "div_floor",
        lambda lib, a, b: lib.div(a, b, rounding_mode="floor") + a * b,
        broadcast_pair(domain="positive").filter(lambda p: _apart(p, ratio=True)),
    ),
    Row(
        "floor_divide",
        lambda lib, a, b: a // b,
        broadcast_pair(domain="positive"),
        backward_raises="derivative for aten::floor_divide is not implemented",
    ),
    Row(
        "floor_divide_number",
        lambda lib, a: a // 1.5,
        same(),
        backward_raises="derivative for aten::floor_divide is not implemented",
    ),
    Row(
        "rfloor_divide",
        lambda lib, a: 2.5 // a,
        same(domain="positive"),
        backward_raises="derivative for aten::floor_divide is not implemented",
    ),
    Row(
        "rremainder",
        lambda lib, a: 2.5 % a,
        same(domain="positive"),
        backward_raises="derivative for aten::remainder is not implemented",
    ),
    Row(
        "where",
        lambda lib, a, b: lib.where(a > b, a, b * 2),
        broadcast_pair().filter(_apart),
        program=lambda lib, a, b: lib.where(a > 0, a, b),
        arity=2,
    ),
    Row(
        "where_scalar",
        lambda lib, a: lib.where(a > 0.5, a, 0.25),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5)))),
        program=lambda lib, a: lib.where(a < 0, 1.5, a),
    ),
    Row(
        "maximum",
        lambda lib, a, b: lib.maximum(a, b),
        distinct(2),
        program=lambda lib, a, b: lib.maximum(a, b),
        arity=2,
    ),
    Row(
        "minimum",
        lambda lib, a, b: lib.minimum(a, b),
        distinct(2),
        program=lambda lib, a, b: lib.minimum(a, b),
        arity=2,
    ),
    Row(
        "maximum_ties",
        lambda lib, a: lib.maximum(a, a.detach() * 0 + 0.5),
        fixed([0.5, 1.0, 0.5, -2.0]),
        gradgrad=False,
    ),
    Row(
        "masked_fill",
        lambda lib, a: a.masked_fill(a > 0.5, 2.0),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5)))),
        program=lambda lib, a: a.masked_fill(a < 0, 0.5),
    ),
    Row(
        "masked_fill_tensor",
        lambda lib, a, b: a.masked_fill(a > 0.5, b.sum()),
        same(2).filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5)))),
    ),
    # reductions
    Row("sum", lambda lib, x: x.sum(), same(), program=lambda lib, t: t.sum() + t),
    Row(
        "sum_dim",
        lambda lib, x: x.sum(_dim(x)),
        same(shape=shapes_1d_up),
        program=lambda lib, t: t.sum(0, keepdim=True).expand(3, 4),
    ),
    Row(
        "sum_dims_keepdim",
        lambda lib, x: x.sum((0, -1), keepdim=True),
        same(shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=3)),
    ),
    Row("mean", lambda lib, x: x.mean(), same(), program=lambda lib, t: t.mean() * t),
    Row(
        "mean_dim",
        lambda lib, x: x.mean(_dim(x)),
        same(shape=shapes_1d_up),
        program=lambda lib, t: t.mean(1, keepdim=True) + t,
    ),
    Row("max", lambda lib, x: x.max(), distinct(), program=lambda lib, t: t.max() * t),
    Row("min", lambda lib, x: x.min(), distinct(), program=lambda lib, t: t.min() + t),
    Row(
        "max_dim",
        lambda lib, x: x.max(_dim(x)).values,
        distinct(),
        program=lambda lib, t: t.max(1, keepdim=True).values * t,
    ),
    Row("min_dim", lambda lib, x: x.min(0).values, distinct(), program=lambda lib, t: t.min(0).values.expand(3, 4) - t),
    Row("max_ties", lambda lib, x: x.max(), fixed([[1.0, 3.0], [3.0, 2.0]]), gradgrad=False),
    Row("norm", lambda lib, x: x.norm(), same(domain="away_from_zero"), program=lambda lib, t: t.norm() * t),
    Row("norm_dim", lambda lib, x: x.norm(dim=-1), same(domain="away_from_zero", shape=shapes_1d_up)),
    Row("softmax", lambda lib, x: x.softmax(_dim(x)), same(), program=lambda lib, t: t.softmax(1)),
    Row("log_softmax", lambda lib, x: x.log_softmax(_dim(x)), same(), program=lambda lib, t: t.log_softmax(0)),
    # shape and views
    Row("view", lambda lib, x: x.view(-1), same(), program=lambda lib, t: t.view(4, 3).view(3, 4)),
    Row("reshape_copy", lambda lib, x: x.t().reshape(-1), matrices("nm"), program=lambda lib, t: t.t().reshape(3, 4)),
    Row("reshape_alias", lambda lib, x: x.t().reshape(x.shape[1], x.shape[0]), matrices("nm")),
    Row("alias", lambda lib, x: x[...] * 2, same(), program=lambda lib, t: t[...]),
    Row("t", lambda lib, x: x.t(), matrices("nm"), program=lambda lib, t: t.t().t()),
    Row(
        "transpose",
        lambda lib, x: x.transpose(0, -1),
        same(shape=shapes_1d_up),
        program=lambda lib, t: t.transpose(0, 1).contiguous().transpose(0, 1),
    ),
    Row("permute", lambda lib, x: x.permute(*range(x.dim() - 1, -1, -1)), same(shape=shapes_1d_up)),
    Row(
        "masked_select",
        lambda lib, x, y: lib.masked_select(x, x > 0.5) * y.sum(),
        same(2).filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5)))),
    ),
    Row(
        "expand",
        lambda lib, x: x.unsqueeze(0).expand(2, *x.shape),
        same(),
        program=lambda lib, t: t[0].expand(3, 4) * t,
    ),
    Row(
        "squeeze",
        lambda lib, x: x.unsqueeze(1).squeeze(),
        same(shape=shapes_1d_up),
        program=lambda lib, t: t.unsqueeze(0).squeeze(0),
    ),
    Row(
        "squeeze_dims",
        lambda lib, x: x.unsqueeze(0).unsqueeze(-1).squeeze((0, -1, 1)),
        same(shape=shapes_1d_up),
        program=lambda lib, t: t.unsqueeze(1).squeeze((1, 0)),
    ),
    Row("select", lambda lib, x: x[0], same(shape=shapes_1d_up), program=lambda lib, t: t[1] * t),
    Row(
        "slice",
        lambda lib, x: x[1:],
        same(shape=shapes_1d_up),
        program=lambda lib, t: t[:, 1:].sum(1, keepdim=True) * t,
    ),
    Row(
        "index",
        lambda lib, x: x[lib.tensor([0, 0, -1])],
        same(shape=shapes_1d_up),
        program=lambda lib, t: t[lib.tensor([2, 0, 1])],
    ),
    Row("index_mask", lambda lib, x: x[x > 0.5], same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5))))),
    Row(
        "cat",
        lambda lib, a, b: lib.cat([a, b, a], 0),
        same(2, shape=shapes_1d_up),
        program=lambda lib, a, b: lib.cat([a, b], 1)[:, ::2],
        arity=2,
    ),
    Row(
        "stack",
        lambda lib, a, b: lib.stack([a, b], -1),
        same(2),
        program=lambda lib, a, b: lib.stack([a, b]).sum(0),
        arity=2,
    ),
    Row("unbind", lambda lib, x: x.unbind(0)[-1] * 2 + x.unbind(0)[0], same(shape=shapes_1d_up)),
    Row("clone", lambda lib, x: x.clone(), same(), program=lambda lib, t: t.clone()),
    Row("to_copy", lambda lib, x: x.to(lib.float64, copy=True), same(), program=lambda lib, t: t.double().float()),
    Row("gather", lambda lib, x: x.gather(0, lib.tensor([[1, 0], [0, 0]])), same(shape=st.just((2, 2)))),
    Row("scatter", lambda lib, a, b: a.scatter(0, lib.tensor([[1, 0]]), b), shaped((2, 3), (1, 2))),
    Row("scatter_add", lambda lib, a, b: a.scatter_add(1, lib.tensor([[1, 1]]), b), shaped((1, 3), (1, 2))),
    # matrix products
    Row("mm", lambda lib, a, b: a @ b, matrices("nm", "mp"), program=lambda lib, a, b: (a @ b.t()) @ a / 4, arity=2),
    Row("mm_transposed", lambda lib, a, b: a.t() @ b.t(), matrices("mn", "pm")),
    Row("mv", lambda lib, a, b: a @ b, matrices("nm", "m")),
    Row("dot", lambda lib, a, b: a @ b, matrices("m", "m")),
    Row("vecmat", lambda lib, a, b: a @ b, matrices("m", "mp")),
    Row("bmm", lambda lib, a, b: a @ b, matrices("bnm", "bmp")),
    Row("matmul_broadcast", lambda lib, a, b: a @ b, matrices("cnm", "mp")),
    Row("matmul_broadcast_batch", lambda lib, a, b: a @ b, matrices("bonm", "xmp")),
    Row("matmul_vec_batch", lambda lib, a, b: a @ b, matrices("m", "bmp")),
    Row("addmm", lambda lib, c, a, b: lib.addmm(c, a, b), matrices("p", "nm", "mp")),
    Row("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), matrices("nm", "pm", "p")),
    # losses
    Row("mse_loss", lambda lib, a, b: lib.nn.functional.mse_loss(a, b), same(2)),
    Row("mse_loss_none", lambda lib, a, b: lib.nn.functional.mse_loss(a, b, reduction="none"), same(2)),
    Row(
        "cross_entropy",
        lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2])),
        same(shape=st.just((2, 3))),
    ),
    Row(
        "nll_loss_sum",
        lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([1, 0]), reduction="sum"),
        same(shape=st.just((2, 3))),
        gradgrad=False,
    ),
    Row("bce_with_logits", lambda lib, x, t: BCE(lib)(x, t.sigmoid()), same(2)),
    Row(
        "bce_with_logits_pos_weight",
        lambda lib, x, t: BCE(lib)(x, t.sigmoid(), pos_weight=lib.ones(x.shape, dtype=lib.float64) * 2),
        same(2),
    ),
    # in-place on non-leaves and on views
    Row("inplace_mul", lambda lib, a, b: (a * 1).mul_(b), same(2), program=lambda lib, a, b: (a * 1).mul_(b), arity=2),
    Row("inplace_exp", lambda lib, a: (a * 1).exp_(), same()),
    Row("inplace_on_view", lambda lib, a, b: _view_inplace(lib, a, b), same(2, shape=shapes_1d_up)),
    Row(
        "setitem",
        lambda lib, a, b: _setitem(lib, a, b),
        same(2, shape=shapes_1d_up),
        program=lambda lib, a, b: _setitem(lib, a, b),
        arity=2,
    ),
    Row("setitem_broadcast", lambda lib, a, b: _setitem_broadcast(lib, a, b), same(2, shape=st.just((2, 3)))),
    Row("index_put", lambda lib, a, b: _index_put(lib, a, b), same(2, shape=st.just((3,)))),
    Row("fill_zero", lambda lib, a: _fill_zero(lib, a), same(shape=shapes_1d_up)),
    Row("fill_tensor", lambda lib, a, b: _fill_tensor(lib, a, b), shaped((3,), ())),
    Row("copy_", lambda lib, a, b: (a * 1).copy_(b) * a, same(2)),
]


def _view_inplace(lib, a, b):
    c = a * 1
    c[0].mul_(b[0])
    return c


def _setitem(lib, a, b):
    c = a * 1
    c[0] = b[-1]
    return c


def _setitem_broadcast(lib, a, b):
    c = a * 1
    c[1] = b[:1]  # a (1, 3) value into a (3,) row: the leading size-1 dim is dropped
    return c


def _index_put(lib, a, b):
    c = a * 1
    c[lib.tensor([0, 2])] = b[:2] * b[1]
    return c


def _fill_tensor(lib, a, b):
    c = a * 1
    c[1:] = b * 2  # a 0-d value fills the slice (FillBackward3 inside CopySlices)
    return c


def _fill_zero(lib, a):
    c = a * 1
    c[0].zero_()
    c[-1:].fill_(2.0)
    return c * a


def _fn(lib):
    return lib.nn.functional


ROWS += [
    # activations (torch.nn.functional), each with its *_backward op
    Row("gelu", lambda lib, x: _fn(lib).gelu(x), same(), program=lambda lib, t: _fn(lib).gelu(t)),
    Row(
        "gelu_tanh",
        lambda lib, x: _fn(lib).gelu(x, approximate="tanh"),
        same(),
        program=lambda lib, t: _fn(lib).gelu(t, approximate="tanh"),
    ),
    Row("silu", lambda lib, x: _fn(lib).silu(x), same(), program=lambda lib, t: _fn(lib).silu(t)),
    Row("silu_inplace", lambda lib, x: _fn(lib).silu(x * 1, inplace=True), same()),
    Row("elu", lambda lib, x: _fn(lib).elu(x), same(domain="away_from_zero"), program=lambda lib, t: _fn(lib).elu(t)),
    Row("elu_alpha", lambda lib, x: _fn(lib).elu(x, alpha=0.5), same(domain="away_from_zero")),
    Row("elu_inplace", lambda lib, x: _fn(lib).elu(x * 1.5, alpha=2.0, inplace=True), same(domain="away_from_zero")),
    Row(
        "leaky_relu",
        lambda lib, x: _fn(lib).leaky_relu(x, 0.1),
        same(domain="away_from_zero"),
        program=lambda lib, t: _fn(lib).leaky_relu(t, 0.2),
    ),
    Row(
        "leaky_relu_inplace",
        lambda lib, x: _fn(lib).leaky_relu(x * 2, 0.3, inplace=True),
        same(domain="away_from_zero"),
    ),
    Row("softplus", lambda lib, x: _fn(lib).softplus(x), same(), program=lambda lib, t: _fn(lib).softplus(t)),
    Row("softplus_beta", lambda lib, x: _fn(lib).softplus(x, beta=2.0, threshold=1.0), same(avoid=(0.5,))),
    Row(
        "hardtanh",
        lambda lib, x: _fn(lib).hardtanh(x),
        same(avoid=(-1.0, 1.0)),
        program=lambda lib, t: _fn(lib).hardtanh(t, -0.5, 0.5),
    ),
    Row(
        "relu6",
        lambda lib, x: _fn(lib).relu6(x * 3),
        same(avoid=(0.0, 2.0)),
        program=lambda lib, t: _fn(lib).relu6(t * 4),
    ),
    Row("hardtanh_inplace", lambda lib, x: _fn(lib).hardtanh(x * 1, -0.5, 2.0, inplace=True), same(avoid=(-0.5, 2.0))),
    Row("logsigmoid", lambda lib, x: _fn(lib).logsigmoid(x), same(), program=lambda lib, t: _fn(lib).logsigmoid(t)),
    Row("logit", lambda lib, x: x.logit(), same(domain="probability"), program=lambda lib, t: t.sigmoid().logit()),
    Row("logit_eps", lambda lib, x: lib.logit(x, eps=0.2), same(domain="probability", avoid=(0.2, 0.8))),
    # losses
    Row("l1_loss", lambda lib, a, b: _fn(lib).l1_loss(a, b), offset_pair()),
    Row("l1_loss_none", lambda lib, a, b: _fn(lib).l1_loss(a, b, reduction="none"), offset_pair()),
    Row("smooth_l1_loss", lambda lib, a, b: _fn(lib).smooth_l1_loss(a, b), offset_pair((0.0, 1.0))),
    Row(
        "smooth_l1_loss_sum_beta",
        lambda lib, a, b: _fn(lib).smooth_l1_loss(a, b, reduction="sum", beta=0.5),
        offset_pair((0.0, 0.5)),
    ),
    Row(
        "smooth_l1_loss_none",
        lambda lib, a, b: _fn(lib).smooth_l1_loss(a, b, reduction="none", beta=2.0),
        offset_pair((0.0, 2.0)),
    ),
    Row("huber_loss", lambda lib, a, b: _fn(lib).huber_loss(a, b), offset_pair((1.0,))),
    Row(
        "huber_loss_none_delta",
        lambda lib, a, b: _fn(lib).huber_loss(a, b, reduction="none", delta=0.5),
        offset_pair((0.5,)),
    ),
    Row("huber_loss_sum", lambda lib, a, b: _fn(lib).huber_loss(a, b, reduction="sum", delta=2.0), offset_pair((2.0,))),
    Row("binary_cross_entropy", lambda lib, p, t: _fn(lib).binary_cross_entropy(p, t), same(2, domain="probability")),
    Row(
        "binary_cross_entropy_none",
        lambda lib, p, t: _fn(lib).binary_cross_entropy(p, t, reduction="none"),
        same(2, domain="probability"),
    ),
    Row(
        "binary_cross_entropy_weight_sum",
        lambda lib, p, t: _fn(lib).binary_cross_entropy(
            p, t, weight=lib.full(tuple(p.shape[-1:]), 1.5, dtype=lib.float64), reduction="sum"
        ),
        same(2, domain="probability"),
    ),
    # normalisation and distance
    Row("normalize", lambda lib, x: _fn(lib).normalize(x, dim=-1), same(domain="away_from_zero", shape=shapes_1d_up)),
    Row(
        "normalize_p1",
        lambda lib, x: _fn(lib).normalize(x, p=1, dim=0),
        same(domain="away_from_zero", shape=shapes_1d_up),
    ),
    Row(
        "cosine_similarity",
        lambda lib, a, b: _fn(lib).cosine_similarity(a, b, dim=-1),
        same(2, domain="away_from_zero", shape=shapes_1d_up),
    ),
    Row(
        "cosine_similarity_broadcast",
        lambda lib, a, b: lib.cosine_similarity(a, b[:1], dim=-1),
        same(2, domain="away_from_zero", shape=hnp.array_shapes(min_dims=2, max_dims=2, min_side=2, max_side=3)),
    ),
]
BY_NAME = {r.name: r for r in ROWS}
PROGRAM_ROWS = [r for r in ROWS if r.program is not None]


def BCE(lib):  # noqa: N802
    return lib.nn.functional.binary_cross_entropy_with_logits


def _batch_norm(lib, x, w, b):
    return lib.nn.functional.batch_norm(x, None, None, w, b, training=True) * x


ROWS += [
    Row("batch_norm", _batch_norm, matrices("nm", "m", "m"), rtol=1e-3, atol=1e-4),
    Row(
        "batch_norm_eval",
        lambda lib, x, w, b: lib.nn.functional.batch_norm(
            x, lib.zeros(x.shape[1], dtype=lib.float64), lib.ones(x.shape[1], dtype=lib.float64), w, b, training=False
        ),
        matrices("nm", "m", "m"),
    ),
]
BY_NAME = {r.name: r for r in ROWS}


# -- task M1: the everyday math, reductions and shape ops ------------------------------------------------------------
shapes_2_up = hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=3)  # var/std: at least 2 per slice
shapes_2d_up = hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=3)
vectors = hnp.array_shapes(min_dims=1, max_dims=1, min_side=1, max_side=4)
squares = st.integers(1, 3).map(lambda n: (n, n))


ROWS += [
    # elementwise, one tensor
    Row("rsqrt", lambda lib, x: x.rsqrt(), same(domain="positive"), program=lambda lib, t: (t.abs() + 1).rsqrt()),
    Row("expm1", lambda lib, x: x.expm1(), same(), program=lambda lib, t: (t * 0.3).expm1()),
    Row("tan", lambda lib, x: x.tan(), same(domain="unit")),
    Row("asin", lambda lib, x: x.asin(), same(domain="unit"), program=lambda lib, t: (t * 0.4).tanh().asin()),
    Row("acos", lambda lib, x: x.acos(), same(domain="unit")),
    Row("atan", lambda lib, x: x.atan(), same(), program=lambda lib, t: t.atan()),
    Row("sinh", lambda lib, x: x.sinh(), same(), program=lambda lib, t: (t * 0.3).sinh()),
    Row("cosh", lambda lib, x: x.cosh(), same()),
    Row("asinh", lambda lib, x: x.asinh(), same(), program=lambda lib, t: t.asinh()),
    Row("acosh", lambda lib, x: x.acosh(), same(domain="above_one")),
    Row("atanh", lambda lib, x: x.atanh(), same(domain="unit")),
    Row(
        "asinh_",
        lambda lib, x: (x * 1).asinh_(),
        same(),
        backward_raises="the derivative for 'inplace version of asinh' is not implemented",
    ),
    Row(
        "acosh_",
        lambda lib, x: (x * 1).arccosh_(),
        same(domain="above_one"),
        backward_raises="the derivative for 'inplace version of acosh' is not implemented",
    ),
    Row(
        "atanh_",
        lambda lib, x: (x * 1).atanh_(),
        same(domain="unit"),
        backward_raises="the derivative for 'inplace version of atanh' is not implemented",
    ),
    Row("erf", lambda lib, x: x.erf(), same(), program=lambda lib, t: t.erf()),
    Row("exp2", lambda lib, x: x.exp2(), same(), program=lambda lib, t: (t * 0.3).exp2()),
    Row("log2", lambda lib, x: x.log2(), same(domain="positive"), program=lambda lib, t: (t.abs() + 1).log2()),
    Row("log10", lambda lib, x: x.log10(), same(domain="positive")),
    Row("negative", lambda lib, x: x.negative(), same()),
    Row("absolute", lambda lib, x: lib.absolute(x), same(domain="away_from_zero")),
    Row("fix", lambda lib, x: x.fix() * x, same(domain="away_from_int")),
    Row("fmod", lambda lib, x: lib.fmod(x, 1.5), same(domain="off_grid"), program=lambda lib, t: lib.fmod(t, 1.5)),
    Row("inplace_tan", lambda lib, x: (x * 1).tan_(), same(domain="unit")),
    # elementwise, two or three tensors
    Row("fmod_tensor", lambda lib, a, b: lib.fmod(a, b), broadcast_pair(domain="off_grid", domain2="near_1.5")),
    Row(
        "atan2",
        lambda lib, a, b: lib.atan2(a, b),
        broadcast_pair(domain="away_from_zero"),
        program=lambda lib, a, b: lib.atan2(a, b),
        arity=2,
    ),
    Row(
        "hypot",
        lambda lib, a, b: lib.hypot(a, b),
        broadcast_pair(domain="away_from_zero"),
        program=lambda lib, a, b: lib.hypot(a, b),
        arity=2,
    ),
    Row("lerp", lambda lib, a, b: lib.lerp(a, b, 0.3), same(2), program=lambda lib, a, b: lib.lerp(a, b, 0.3), arity=2),
    Row("lerp_far", lambda lib, a, b: a.lerp(b, 0.75), broadcast_pair()),
    Row("lerp_tensor", lambda lib, a, b, w: lib.lerp(a, b, w), same(3)),
    Row(
        "addcmul",
        lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5),
        same(3),
        program=lambda lib, a, b: lib.addcmul(a, a, b, value=0.5),
        arity=2,
    ),
    Row("addcmul_broadcast", lambda lib, a, b: lib.addcmul(a, b, a, value=2), broadcast_pair()),
    Row("addcdiv", lambda lib, a, b, c: lib.addcdiv(a, b, c * c + 0.5, value=-2), same(3)),
    Row(
        "rsub_tensor",
        lambda lib, a, b: lib.rsub(a, b, alpha=2),
        broadcast_pair(),
        program=lambda lib, a, b: lib.rsub(a, b),
        arity=2,
    ),
    # reductions
    Row("amax", lambda lib, x: x.amax(_dim(x)), distinct(), program=lambda lib, t: t.amax(1, keepdim=True) * t),
    Row("amax_all", lambda lib, x: x.amax(), distinct()),
    Row(
        "amin",
        lambda lib, x: x.amin((0, -1), keepdim=True),
        distinct(shape=shapes_2d_up),
        program=lambda lib, t: t.amin(0) + t,
    ),
    Row("amax_ties", lambda lib, x: x.amax(0), fixed([[1.0, 3.0], [3.0, 2.0], [3.0, 3.0]]), gradgrad=False),
    Row(
        "prod",
        lambda lib, x: x.prod(),
        same(domain="away_from_zero"),
        program=lambda lib, t: t.prod(1, keepdim=True) + t,
    ),
    Row("prod_dim", lambda lib, x: x.prod(_dim(x)), same(domain="away_from_zero", shape=shapes_1d_up)),
    Row("prod_zeros", lambda lib, x: x.prod(), fixed([[2.0, 0.0, 3.0], [1.5, 0.5, 4.0]])),
    Row("prod_dim_zeros", lambda lib, x: x.prod(1), fixed([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]])),
    Row("cumsum", lambda lib, x: x.cumsum(_dim(x)), same(), program=lambda lib, t: t.cumsum(1)),
    Row(
        "cumprod",
        lambda lib, x: x.cumprod(0),
        same(domain="away_from_zero", shape=shapes_1d_up),
        program=lambda lib, t: (t * 0.5).cumprod(1),
    ),
    Row(
        "cumprod_zeros",
        lambda lib, x: x.cumprod(1),
        fixed([[2.0, 0.0, 3.0, 0.5], [0.0, 0.0, 4.0, 1.0], [1.0, 2.0, 3.0, 4.0]]),
    ),
    Row("var", lambda lib, x: x.var(), same(shape=shapes_2_up), program=lambda lib, t: t.var(1, keepdim=True) * t),
    Row("var_dim", lambda lib, x: x.var(0, correction=0), same(shape=shapes_2_up)),
    Row("std", lambda lib, x: x.std(), distinct(shape=shapes_2_up), program=lambda lib, t: t.std(0) + t),
    Row("std_dim", lambda lib, x: x.std(-1, keepdim=True), distinct(shape=shapes_2_up)),
    Row(
        "logsumexp",
        lambda lib, x: x.logsumexp(_dim(x)),
        same(),
        program=lambda lib, t: t.logsumexp(1, keepdim=True) - t,
    ),
    Row("sort", lambda lib, x: x.sort(descending=True).values, distinct(), program=lambda lib, t: t.sort(1).values),
    Row("sort_stable", lambda lib, x: lib.sort(x, dim=0, stable=True).values, distinct()),
    Row("topk", lambda lib, x: x.topk(1, 0).values, distinct()),
    # shapes, diagonals, indexing
    Row("repeat", lambda lib, x: x.repeat(2, *([1] * x.dim())), same(), program=lambda lib, t: t.repeat(2, 1)[1:4]),
    Row("repeat_split", lambda lib, x: x.repeat(*([2] * x.dim())), same(shape=shapes_1d_up)),
    Row("flip", lambda lib, x: x.flip(0), same(shape=shapes_1d_up), program=lambda lib, t: t.flip(0)),
    Row("roll", lambda lib, x: x.roll(1, -1), same(shape=shapes_1d_up), program=lambda lib, t: t.roll(1, 1)),
    Row("roll_flat", lambda lib, x: x.roll(-2), same()),
    Row("diag_embed", lambda lib, x: lib.diag(x, 1), same(shape=vectors)),
    Row("diag_copy", lambda lib, x: lib.diag(x), matrices("nm"), program=lambda lib, t: lib.diag(t, 1).sum() + t),
    Row("diagonal", lambda lib, x: x.diagonal(0, 0, -1), same(shape=shapes_2d_up)),
    Row("trace", lambda lib, x: x.trace(), matrices("nm"), program=lambda lib, t: t.trace() * t),
    Row("triu", lambda lib, x: x.triu(), matrices("nm"), program=lambda lib, t: t.triu()),
    Row("tril", lambda lib, x: x.tril(-1), same(shape=shapes_2d_up), program=lambda lib, t: t.tril(1)),
    Row(
        "split",
        lambda lib, x: x.split(1)[-1] * x.split(1)[0],
        same(shape=shapes_1d_up),
        program=lambda lib, t: lib.cat(t.split(3, 1)[::-1], 1),
    ),
    Row("split_with_sizes", lambda lib, x: x.split([1, x.shape[0] - 1])[1], same(shape=shapes_1d_up)),
    Row(
        "chunk",
        lambda lib, x: x.chunk(2, -1)[0],
        same(shape=shapes_1d_up),
        program=lambda lib, t: t.chunk(2, 1)[1].repeat(1, 2),
    ),
    Row(
        "index_select",
        lambda lib, x: x.index_select(0, lib.tensor([0, 0, -1]) % x.shape[0]),
        same(shape=shapes_1d_up),
        program=lambda lib, t: t.index_select(1, lib.tensor([3, 0, 0, 1])),
    ),
    Row("index_add", lambda lib, a, b: a.index_add(0, lib.tensor([1, 1, 0]), b, alpha=2.0), shaped((2, 3), (3, 3))),
    Row("index_fill", lambda lib, x: x.index_fill(1, lib.tensor([0, 2]), -1.0), shaped((2, 3))),
    Row("index_fill_tensor", lambda lib, a, b: a.index_fill(0, lib.tensor([1, 1]), b), shaped((3, 2), ())),
    Row("t_", lambda lib, x: (x * 1).t_(), matrices("nm"), program=lambda lib, t: (t * 1).t_().t_()),
    Row("transpose_", lambda lib, x: (x * 1).transpose_(0, -1), same(shape=shapes_1d_up)),
    Row("squeeze_", lambda lib, x: (x * 1).unsqueeze(1).squeeze_() * 1, same(shape=shapes_1d_up)),
    Row("unsqueeze_", lambda lib, x: (x * 1).unsqueeze_(-1), same()),
    Row(
        "movedim", lambda lib, x: x.movedim(0, -1), same(shape=shapes_1d_up), program=lambda lib, t: t.movedim(0, 1).t()
    ),
    Row("narrow", lambda lib, x: x.narrow(-1, 0, 1), same(shape=shapes_1d_up)),
    Row("einsum_mm", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), matrices("nm", "mp")),
    Row("einsum_bmm", lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), matrices("bnm", "bmp")),
    Row("einsum_dot", lambda lib, a, b: lib.einsum("i,i->", a, b), matrices("m", "m")),
    Row("einsum_transpose", lambda lib, a: lib.einsum("ij->ji", a), matrices("nm")),
    Row("einsum_diagonal", lambda lib, a: lib.einsum("ii->i", a), matrices("mm")),
    Row("einsum_outer_sum", lambda lib, a, b: lib.einsum("ij,ik->j", a, b), matrices("nm", "np")),
    Row(
        "einsum_chain",
        lambda lib, a, b: lib.einsum("ij,kj,kl->il", a, b, a) / 10,
        same(2, shape=st.just((3, 4))),
        program=lambda lib, a, b: lib.einsum("ij,kj,kl->il", a, b, a) / 10,
        arity=2,
    ),
]
# -- issue 18: frac, unique ---------------------------------------------------------------------------------------
ROWS += [
    Row("frac", lambda lib, x: x.frac(), same(domain="away_from_int"), program=lambda lib, t: t.frac() * t),
    Row(
        "unique",
        lambda lib, x: lib.unique(x.round(), return_counts=True)[0],
        same(),
        backward_raises="the derivative for '_unique2' is not implemented",
    ),
    Row(
        "unique_dim",
        lambda lib, x: x.round().unique(dim=-1),
        same(shape=shapes_1d_up),
        backward_raises="the derivative for 'unique_dim' is not implemented",
    ),
    Row(
        "unique_consecutive",
        lambda lib, x: lib.unique_consecutive(x.round()),
        same(),
        backward_raises="the derivative for 'unique_consecutive' is not implemented",
    ),
    Row(
        "unique_dim_consecutive",
        lambda lib, x: lib.unique_consecutive(x.round(), dim=0, return_inverse=True)[0],
        same(shape=shapes_1d_up),
        backward_raises="the derivative for 'unique_consecutive' is not implemented",
    ),
    # activations
    Row(
        "hardswish",
        lambda lib, x: _fn(lib).hardswish(x),
        same(avoid=(-3.0, 3.0)),
        program=lambda lib, t: _fn(lib).hardswish(t * 4),
    ),
    Row("hardswish_inplace", lambda lib, x: _fn(lib).hardswish(x * 2, inplace=True), same(avoid=(-1.5, 1.5))),
    Row("hardsigmoid", lambda lib, x: _fn(lib).hardsigmoid(x * 2), same(avoid=(-1.5, 1.5)), gradgrad=False),
    Row(
        "softshrink",
        lambda lib, x: _fn(lib).softshrink(x),
        same(avoid=(-0.5, 0.5)),
        program=lambda lib, t: _fn(lib).softshrink(t, 0.3),
    ),
    Row("hardshrink", lambda lib, x: _fn(lib).hardshrink(x, 0.7) * x, same(avoid=(-0.7, 0.7))),
    Row("threshold", lambda lib, x: _fn(lib).threshold(x, 0.1, 2.0) * x, same(avoid=(0.1,))),
    Row(
        "threshold_inplace", lambda lib, x: _fn(lib).threshold(x * 1, -0.5, 3.0, inplace=True) * x, same(avoid=(-0.5,))
    ),
    Row(
        "celu",
        lambda lib, x: _fn(lib).celu(x, 1.5),
        same(domain="away_from_zero"),
        program=lambda lib, t: _fn(lib).celu(t),
    ),
    Row("celu_inplace", lambda lib, x: _fn(lib).celu(x * 2, 0.5, inplace=True), same(domain="away_from_zero")),
    Row(
        "selu", lambda lib, x: _fn(lib).selu(x), same(domain="away_from_zero"), program=lambda lib, t: _fn(lib).selu(t)
    ),
    Row("selu_inplace", lambda lib, x: _fn(lib).selu(x * 1, inplace=True), same(domain="away_from_zero")),
    Row("mish", lambda lib, x: _fn(lib).mish(x), same(), program=lambda lib, t: _fn(lib).mish(t)),
    Row(
        "glu",
        lambda lib, x: _fn(lib).glu(x.reshape(-1, 2), 1),
        same(shape=st.sampled_from([(2,), (4,), (2, 3), (3, 2, 2)])),
        program=lambda lib, t: _fn(lib).glu(lib.cat([t, t * 2], 1), 1),
    ),
    Row("glu_dim0", lambda lib, x: _fn(lib).glu(x, 0), shaped((4, 3))),
    Row("prelu", lambda lib, x, w: _fn(lib).prelu(x, w), shaped((2, 3, 2), (3,), domain="away_from_zero")),
    Row("prelu_scalar_weight", lambda lib, x, w: _fn(lib).prelu(x, w), shaped((3, 2), (1,), domain="away_from_zero")),
    Row("prelu_1d", lambda lib, x, w: _fn(lib).prelu(x, w), shaped((4,), (1,), domain="away_from_zero")),
    Row("softsign", lambda lib, x: _fn(lib).softsign(x), same(domain="away_from_zero")),
    Row("tanhshrink", lambda lib, x: _fn(lib).tanhshrink(x), same()),
    Row("softmin", lambda lib, x: _fn(lib).softmin(x, -1), same(shape=shapes_1d_up)),
    # normalisation and lookup layers
    Row(
        "layer_norm",
        lambda lib, x: _fn(lib).layer_norm(x, x.shape[-1:]),
        same(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=3)),
        program=lambda lib, t: _fn(lib).layer_norm(t, (4,)),
    ),
    Row(
        "layer_norm_affine",
        lambda lib, x, w, b: _fn(lib).layer_norm(x, (2, 3), w, b, eps=1e-3),
        shaped((2, 2, 3), (2, 3), (2, 3)),
    ),
    Row("layer_norm_weight_only", lambda lib, x, w: _fn(lib).layer_norm(x * 2, (3,), w), shaped((2, 3), (3,))),
    Row(
        "embedding",
        lambda lib, w: _fn(lib).embedding(lib.tensor([[0, 2], [2, 1]]), w) * w[:1],
        shaped((3, 2)),
        program=lambda lib, t: _fn(lib).embedding(lib.tensor([2, 0, 2]), t),
    ),
]
ROWS += [
    # elementwise and reductions of issue 18
    Row(
        "logaddexp", lambda lib, a, b: lib.logaddexp(a, b), broadcast_pair(), program=lambda lib, t: t.logaddexp(t * 2)
    ),
    Row("xlogy", lambda lib, a, b: lib.xlogy(a, b), broadcast_pair(domain="away_from_zero", domain2="positive")),
    Row("xlogy_scalar_self", lambda lib, b: lib.xlogy(2.5, b), same(domain="positive")),
    Row("xlogy_scalar_other", lambda lib, a: a.xlogy(1.5), same(domain="away_from_zero")),
    Row(
        "nan_to_num",
        lambda lib, x: x.log().nan_to_num(nan=0.5, neginf=-9.0) * x,
        same(domain="away_from_zero"),
    ),
    Row("nansum", lambda lib, x: x.nansum(), same(), program=lambda lib, t: t.nansum(1, keepdim=True) * t),
    Row("nansum_dim", lambda lib, x: lib.nansum(x, -1), same(shape=shapes_1d_up)),
    Row("nanmean", lambda lib, x: x.nanmean(0), same(shape=shapes_1d_up)),
    Row("median", lambda lib, x: x.median(), same(distinct=True), program=lambda lib, t: t.median() * t),
    Row("median_dim", lambda lib, x: x.median(-1).values, same(shape=shapes_1d_up, distinct=True)),
    Row("cummax", lambda lib, x: x.cummax(-1).values, same(shape=shapes_1d_up, distinct=True)),
    Row("cummin", lambda lib, x: lib.cummin(x, 0)[0], same(shape=shapes_1d_up, distinct=True)),
    Row(
        "pairwise_distance",
        lambda lib, a, b: _fn(lib).pairwise_distance(a, -b),
        same(2, domain="positive", shape=shapes_1d_up),
    ),
    Row(
        "kl_div",
        lambda lib, a, b: _fn(lib).kl_div(a, b, reduction="batchmean"),
        same(2, domain="positive", shape=shapes_1d_up),
    ),
    Row(
        "kl_div_log_target",
        lambda lib, a, b: _fn(lib).kl_div(a, b, reduction="sum", log_target=True),
        same(2, shape=shapes_1d_up),
    ),
]
ROWS += [
    Row("rot90", lambda lib, x: x.rot90(1, (0, -1)), matrices("nm"), program=lambda lib, t: lib.rot90(t, 2)),
    Row("rot90_neg", lambda lib, x: lib.rot90(x, -1, [1, 0]) * 2, shaped((2, 3, 2))),
    Row(
        "index_copy",
        lambda lib, a, s: a.index_copy(0, lib.tensor([2, 0]), s),
        shaped((3, 2), (2, 2)),
        program=lambda lib, t: t.index_copy(1, lib.tensor([3, 1]), t[:, :2] * 2),
    ),
    Row("index_copy_", lambda lib, a, s: (a * 1).index_copy_(1, lib.tensor([1]), s), shaped((2, 3), (2, 1))),
]
BY_NAME = {r.name: r for r in ROWS}
PROGRAM_ROWS = [r for r in ROWS if r.program is not None]


# -- convolution, padding and pooling (issue 18) --------------------------------------------------------------------
def _F(lib):  # noqa: N802
    return lib.nn.functional


@st.composite
def conv_inputs(draw, nsp=2, groups=1, stride=1, padding=0, dilation=1, bias=True, transposed=False):
    """(x, w[, b]) for a convolution with these settings: N, channels per group, kernel and input sizes drawn small,
    the input at least as large as the (dilated) kernel, so that every output size is at least 1."""
    n = draw(st.integers(1, 2))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    ks = [draw(st.integers(1, 3)) for _ in range(nsp)]
    if transposed:
        sp = [draw(st.integers(2, 3)) for _ in ks]
        x_shape = (n, cg * groups, *sp)
        w_shape = (cg * groups, og, *ks)
    else:
        sp = [max(dilation * (k - 1) + 1 - 2 * padding, 1) + draw(st.integers(0, 2)) for k in ks]
        x_shape = (n, cg * groups, *sp)
        w_shape = (og * groups, cg, *ks)
    shapes = [x_shape, w_shape] + ([(og * groups,)] if bias else [])
    return tuple(draw(hnp.arrays(np.float64, s, elements=_elems("real"))) for s in shapes)


@st.composite
def pool_inputs(draw, min_side=2, max_side=4, distinct_values=False):
    """One (C, H, W) or (N, C, H, W) array; with ``distinct_values`` no two elements are equal (no ties inside
    finite differences of a max)."""
    lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    shape = lead + (
        draw(st.integers(1, 2)),
        draw(st.integers(min_side, max_side)),
        draw(st.integers(min_side, max_side)),
    )
    if not distinct_values:
        return (draw(hnp.arrays(np.float64, shape, elements=_elems("real"))),)
    size = int(np.prod(shape))
    vals = draw(st.permutations(range(size)))
    return (np.array(vals, dtype=np.float64).reshape(shape) / 10 - size / 20,)


ROWS += [
    Row(
        "conv2d",
        lambda lib, x, w, b: _F(lib).conv2d(x, w, b),
        conv_inputs(),
        program=lambda lib, t: _F(lib).conv1d(t, t[:, :3].reshape(3, 1, 3), padding=1, groups=3),
    ),
    Row(
        "conv2d_strided_groups",
        lambda lib, x, w, b: _F(lib).conv2d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
        conv_inputs(groups=2, stride=2, padding=1, dilation=2),
    ),
    Row("conv1d", lambda lib, x, w: _F(lib).conv1d(x, w, stride=2, dilation=2), conv_inputs(1, dilation=2, bias=False)),
    Row(
        "conv1d_same",
        lambda lib, x, w, b: _F(lib).conv1d(x, w, b, padding="same"),
        conv_inputs(1),
    ),
    Row(
        "conv2d_unbatched",
        lambda lib, x, w, b: _F(lib).conv2d(x[0], w, b, padding=(1, 0)),
        conv_inputs(),
    ),
    Row(
        "conv_transpose2d",
        lambda lib, x, w, b: _F(lib).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        conv_inputs(transposed=True),
    ),
    Row(
        "conv_transpose1d_groups",
        lambda lib, x, w: _F(lib).conv_transpose1d(x, w, stride=3, groups=2, dilation=2),
        conv_inputs(1, groups=2, bias=False, transposed=True),
    ),
    Row(
        "pad",
        lambda lib, x: _F(lib).pad(x, (1, 2, 0, 1), value=0.5),
        same(shape=shapes_2d_up),
        program=lambda lib, t: _F(lib).pad(t, (1, -1)),
    ),
    Row(
        "pad_cut",
        lambda lib, x: _F(lib).pad(x, (-1, 1)),
        same(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2)),
    ),
    Row(
        "max_pool2d",
        lambda lib, x: _F(lib).max_pool2d(x, 2),
        pool_inputs(distinct_values=True),
        program=lambda lib, t: _F(lib).max_pool1d(t, 3, 1, 1),
    ),
    Row(
        "max_pool2d_overlap",
        lambda lib, x: _F(lib).max_pool2d(x, (3, 2), stride=1, padding=1, dilation=(1, 2), ceil_mode=True),
        pool_inputs(min_side=3, distinct_values=True),
    ),
    Row("max_pool1d", lambda lib, x: _F(lib).max_pool1d(x[0], 2, 1), pool_inputs(distinct_values=True)),
    Row(
        "avg_pool2d",
        lambda lib, x: _F(lib).avg_pool2d(x, 2),
        pool_inputs(),
        program=lambda lib, t: _F(lib).avg_pool1d(t, 3, 1, 1),
    ),
    Row(
        "avg_pool2d_padded",
        lambda lib, x: _F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        pool_inputs(min_side=3),
    ),
    Row("avg_pool2d_divisor", lambda lib, x: _F(lib).avg_pool2d(x, (2, 1), divisor_override=3), pool_inputs()),
    Row(
        "adaptive_avg_pool2d",
        lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (3, 2)),
        pool_inputs(),
        program=lambda lib, t: _F(lib).adaptive_avg_pool1d(t.repeat(1, 2), 4),
    ),
    Row("adaptive_avg_pool2d_global", lambda lib, x: _F(lib).adaptive_avg_pool2d(x, 1), pool_inputs()),
]
BY_NAME = {r.name: r for r in ROWS}
PROGRAM_ROWS = [r for r in ROWS if r.program is not None]
