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
    call: object                      # call(lib, *tensors) -> tensor
    inputs: object                    # hypothesis strategy of a tuple of float64 arrays
    gradgrad: bool = True             # has a second derivative worth checking
    differentiable: bool = True       # False: zero gradient everywhere (rounding)
    backward_raises: str = ""         # backward raises this (an op PyTorch has no derivative for)
    program: object = None            # call(lib, t) on a (3, 4) float32 tensor, for the random programs
    arity: int = 1                    # tensors the program form takes
    rtol: float = 1e-4
    atol: float = 1e-5
    tags: tuple = field(default_factory=tuple)


# -- input strategies -------------------------------------------------------------------------------------------
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
shapes_1d_up = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)


def _elems(domain):
    if domain == "positive":
        return st.floats(0.3, 3, allow_nan=False, width=64)
    if domain == "away_from_zero":  # kinks at 0 (abs, relu, sign): stay clear of them for finite differences
        return st.one_of(st.floats(-3, -0.05, width=64), st.floats(0.05, 3, width=64))
    if domain == "away_from_half":   # round's jumps at k + 0.5
        return st.floats(-3, 3, width=64).filter(lambda v: abs(v - np.floor(v) - 0.5) > 0.05)
    if domain == "away_from_int":    # floor/ceil/trunc jump at integers
        return st.floats(-3, 3, width=64).filter(lambda v: 0.05 < v - np.floor(v) < 0.95)
    return st.floats(-3, 3, allow_nan=False, width=64)


@st.composite
def same(draw, n=1, domain="real", shape=shapes):
    s = draw(shape)
    return tuple(draw(hnp.arrays(np.float64, s, elements=_elems(domain))) for _ in range(n))


@st.composite
def broadcast_pair(draw, domain="real", domain2=None):
    s = draw(shapes)
    other = [1 if draw(st.booleans()) else d for d in s]
    other = tuple(other[draw(st.integers(0, len(other))):])
    if draw(st.booleans()):
        s, other = other, tuple(s)
    return (draw(hnp.arrays(np.float64, tuple(s), elements=_elems(domain))),
            draw(hnp.arrays(np.float64, other, elements=_elems(domain2 or domain))))


@st.composite
def distinct(draw, n=1, shape=shapes_1d_up):
    """Arrays whose elements are all different (max/min/maximum: no ties inside finite differences)."""
    s = draw(shape)
    size = int(np.prod(s))
    vals = draw(st.lists(st.integers(-60, 60), min_size=size * n, max_size=size * n, unique=True))
    arr = np.array(vals, dtype=np.float64) / 20
    return tuple(arr[i * size:(i + 1) * size].reshape(s) for i in range(n))


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
    Row("reciprocal", lambda lib, x: x.reciprocal(), same(domain="positive"),
        program=lambda lib, t: (t.abs() + 1).reciprocal()),
    Row("abs", lambda lib, x: x.abs(), same(domain="away_from_zero"), program=lambda lib, t: t.abs()),
    Row("relu", lambda lib, x: x.relu(), same(domain="away_from_zero"), program=lambda lib, t: t.relu()),
    Row("clamp", lambda lib, x: x.clamp(-1.0, 1.5),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], -1.0))) and _apart((p[0], np.full_like(p[0], 1.5)))),
        program=lambda lib, t: t.clamp(-0.5, 1.0)),
    Row("clamp_min", lambda lib, x: x.clamp(min=0.5), same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5))))),
    Row("clamp_tensor", lambda lib, x, lo, hi: x.clamp(lo, hi),
        same(3).filter(lambda p: _apart(p[:2]) and _apart(p[::2]) and _apart(p[1:])),
        program=lambda lib, a, b: a.clamp(min=b * 0.5 - 0.25), arity=2),
    Row("clamp_tensor_max", lambda lib, x, hi: lib.clamp(x, max=hi), broadcast_pair().filter(_apart)),
    Row("clamp_min_number", lambda lib, x: x.clamp_min(0.5),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5)))), program=lambda lib, t: t.clamp_min(-0.5)),
    Row("clamp_max_number", lambda lib, x: lib.clamp_max(x, -0.5),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], -0.5))))),
    Row("clamp_min_tensor", lambda lib, x, lo: x.clamp_min(lo), broadcast_pair().filter(_apart),
        program=lambda lib, a, b: lib.clamp_min(a, b), arity=2),
    Row("clamp_max_tensor", lambda lib, x, hi: lib.clamp_max(x, hi), broadcast_pair().filter(_apart),
        program=lambda lib, a, b: a.clamp_max(b), arity=2),
    Row("square", lambda lib, x: x ** 2, same(), program=lambda lib, t: t ** 2),
    Row("pow3", lambda lib, x: x ** 3, same(), program=lambda lib, t: t ** 3),
    Row("pow0", lambda lib, x: x ** 0, same(), gradgrad=False),
    Row("pow_frac", lambda lib, x: x ** 1.5, same(domain="positive")),
    Row("sign", lambda lib, x: x.sign(), same(domain="away_from_zero"), differentiable=False,
        program=lambda lib, t: t.sign() * t),
    Row("round", lambda lib, x: x.round(), same(domain="away_from_half"), differentiable=False,
        program=lambda lib, t: t.round() + t),
    Row("floor", lambda lib, x: x.floor(), same(domain="away_from_int"), differentiable=False,
        program=lambda lib, t: t.floor() * t),
    Row("ceil", lambda lib, x: x.ceil(), same(domain="away_from_int"), differentiable=False,
        program=lambda lib, t: t.ceil() - t),
    Row("trunc", lambda lib, x: x.trunc(), same(domain="away_from_int"), differentiable=False,
        program=lambda lib, t: t.trunc() * 2 + t),
    Row("round_decimals", lambda lib, x: (x * 10).round(decimals=-1), same(domain="away_from_half"),
        differentiable=False, program=lambda lib, t: t.round(decimals=1) * t),
    # elementwise, two tensors (broadcasting)
    Row("add", lambda lib, a, b: a + b, broadcast_pair(), program=lambda lib, a, b: a + b, arity=2),
    Row("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2.5), broadcast_pair(),
        program=lambda lib, a, b: lib.add(a, b, alpha=-1.5), arity=2),
    Row("sub", lambda lib, a, b: a - b, broadcast_pair(), program=lambda lib, a, b: a - b, arity=2),
    Row("sub_alpha", lambda lib, a, b: lib.sub(a, b, alpha=3), broadcast_pair()),
    Row("rsub", lambda lib, a: 2.5 - a, same(), program=lambda lib, a: 1.5 - a),
    Row("mul", lambda lib, a, b: a * b, broadcast_pair(), program=lambda lib, a, b: a * b, arity=2),
    Row("mul_number", lambda lib, a: a * 2.5, same(), program=lambda lib, a: 0.5 * a),
    Row("div", lambda lib, a, b: a / b, broadcast_pair(domain2="positive"),
        program=lambda lib, a, b: a / (b.abs() + 1), arity=2),
    Row("rdiv", lambda lib, a: 2 / a, same(domain="positive"), program=lambda lib, a: 2 / (a.abs() + 1)),
    Row("pow_tensor", lambda lib, a, b: a ** b, broadcast_pair(domain="positive"),
        program=lambda lib, a, b: (a.abs() + 0.5) ** (b * 0.5), arity=2),
    Row("pow_scalar_base", lambda lib, a: 2.0 ** a, same(), program=lambda lib, a: 1.5 ** a),
    Row("remainder", lambda lib, a, b: a % b,
        broadcast_pair(domain="positive").filter(lambda p: _apart(p, ratio=True)), gradgrad=False,
        program=lambda lib, a, b: a % (b.abs() + 2), arity=2),
    Row("remainder_scalar", lambda lib, a: a % 1.7,
        same(domain="positive").filter(lambda p: _apart((p[0], np.full_like(p[0], 1.7)), ratio=True)),
        program=lambda lib, a: (a + 3) % 1.7),
    Row("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor") + a * b,
        broadcast_pair(domain="positive").filter(lambda p: _apart(p, ratio=True))),
    Row("floor_divide", lambda lib, a, b: a // b, broadcast_pair(domain="positive"),
        backward_raises="derivative for aten::floor_divide is not implemented"),
    Row("floor_divide_number", lambda lib, a: a // 1.5, same(),
        backward_raises="derivative for aten::floor_divide is not implemented"),
    Row("rfloor_divide", lambda lib, a: 2.5 // a, same(domain="positive"),
        backward_raises="derivative for aten::floor_divide is not implemented"),
    Row("rremainder", lambda lib, a: 2.5 % a, same(domain="positive"),
        backward_raises="derivative for aten::remainder is not implemented"),
    Row("where", lambda lib, a, b: lib.where(a > b, a, b * 2), broadcast_pair().filter(_apart),
        program=lambda lib, a, b: lib.where(a > 0, a, b), arity=2),
    Row("where_scalar", lambda lib, a: lib.where(a > 0.5, a, 0.25),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5)))),
        program=lambda lib, a: lib.where(a < 0, 1.5, a)),
    Row("maximum", lambda lib, a, b: lib.maximum(a, b), distinct(2),
        program=lambda lib, a, b: lib.maximum(a, b), arity=2),
    Row("minimum", lambda lib, a, b: lib.minimum(a, b), distinct(2),
        program=lambda lib, a, b: lib.minimum(a, b), arity=2),
    Row("maximum_ties", lambda lib, a: lib.maximum(a, a.detach() * 0 + 0.5), fixed([0.5, 1.0, 0.5, -2.0]),
        gradgrad=False),
    Row("masked_fill", lambda lib, a: a.masked_fill(a > 0.5, 2.0),
        same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5)))),
        program=lambda lib, a: a.masked_fill(a < 0, 0.5)),
    Row("masked_fill_tensor", lambda lib, a, b: a.masked_fill(a > 0.5, b.sum()),
        same(2).filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5))))),
    # reductions
    Row("sum", lambda lib, x: x.sum(), same(), program=lambda lib, t: t.sum() + t),
    Row("sum_dim", lambda lib, x: x.sum(_dim(x)), same(shape=shapes_1d_up),
        program=lambda lib, t: t.sum(0, keepdim=True).expand(3, 4)),
    Row("sum_dims_keepdim", lambda lib, x: x.sum((0, -1), keepdim=True),
        same(shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=3))),
    Row("mean", lambda lib, x: x.mean(), same(), program=lambda lib, t: t.mean() * t),
    Row("mean_dim", lambda lib, x: x.mean(_dim(x)), same(shape=shapes_1d_up),
        program=lambda lib, t: t.mean(1, keepdim=True) + t),
    Row("max", lambda lib, x: x.max(), distinct(), program=lambda lib, t: t.max() * t),
    Row("min", lambda lib, x: x.min(), distinct(), program=lambda lib, t: t.min() + t),
    Row("max_dim", lambda lib, x: x.max(_dim(x)).values, distinct(),
        program=lambda lib, t: t.max(1, keepdim=True).values * t),
    Row("min_dim", lambda lib, x: x.min(0).values, distinct(),
        program=lambda lib, t: t.min(0).values.expand(3, 4) - t),
    Row("max_ties", lambda lib, x: x.max(), fixed([[1.0, 3.0], [3.0, 2.0]]), gradgrad=False),
    Row("norm", lambda lib, x: x.norm(), same(domain="away_from_zero"), program=lambda lib, t: t.norm() * t),
    Row("norm_dim", lambda lib, x: x.norm(dim=-1), same(domain="away_from_zero", shape=shapes_1d_up)),
    Row("softmax", lambda lib, x: x.softmax(_dim(x)), same(), program=lambda lib, t: t.softmax(1)),
    Row("log_softmax", lambda lib, x: x.log_softmax(_dim(x)), same(), program=lambda lib, t: t.log_softmax(0)),
    # shape and views
    Row("view", lambda lib, x: x.view(-1), same(), program=lambda lib, t: t.view(4, 3).view(3, 4)),
    Row("reshape_copy", lambda lib, x: x.t().reshape(-1), matrices("nm"),
        program=lambda lib, t: t.t().reshape(3, 4)),
    Row("reshape_alias", lambda lib, x: x.t().reshape(x.shape[1], x.shape[0]), matrices("nm")),
    Row("alias", lambda lib, x: x[...] * 2, same(), program=lambda lib, t: t[...]),
    Row("t", lambda lib, x: x.t(), matrices("nm"), program=lambda lib, t: t.t().t()),
    Row("transpose", lambda lib, x: x.transpose(0, -1), same(shape=shapes_1d_up),
        program=lambda lib, t: t.transpose(0, 1).contiguous().transpose(0, 1)),
    Row("permute", lambda lib, x: x.permute(*range(x.dim() - 1, -1, -1)), same(shape=shapes_1d_up)),
    Row("masked_select", lambda lib, x, y: lib.masked_select(x, x > 0.5) * y.sum(),
        same(2).filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5))))),
    Row("expand", lambda lib, x: x.unsqueeze(0).expand(2, *x.shape), same(),
        program=lambda lib, t: t[0].expand(3, 4) * t),
    Row("squeeze", lambda lib, x: x.unsqueeze(1).squeeze(), same(shape=shapes_1d_up),
        program=lambda lib, t: t.unsqueeze(0).squeeze(0)),
    Row("squeeze_dims", lambda lib, x: x.unsqueeze(0).unsqueeze(-1).squeeze((0, -1, 1)), same(shape=shapes_1d_up),
        program=lambda lib, t: t.unsqueeze(1).squeeze((1, 0))),
    Row("select", lambda lib, x: x[0], same(shape=shapes_1d_up), program=lambda lib, t: t[1] * t),
    Row("slice", lambda lib, x: x[1:], same(shape=shapes_1d_up),
        program=lambda lib, t: t[:, 1:].sum(1, keepdim=True) * t),
    Row("index", lambda lib, x: x[lib.tensor([0, 0, -1])], same(shape=shapes_1d_up),
        program=lambda lib, t: t[lib.tensor([2, 0, 1])]),
    Row("index_mask", lambda lib, x: x[x > 0.5], same().filter(lambda p: _apart((p[0], np.full_like(p[0], 0.5))))),
    Row("cat", lambda lib, a, b: lib.cat([a, b, a], 0), same(2, shape=shapes_1d_up),
        program=lambda lib, a, b: lib.cat([a, b], 1)[:, ::2], arity=2),
    Row("stack", lambda lib, a, b: lib.stack([a, b], -1), same(2),
        program=lambda lib, a, b: lib.stack([a, b]).sum(0), arity=2),
    Row("unbind", lambda lib, x: x.unbind(0)[-1] * 2 + x.unbind(0)[0], same(shape=shapes_1d_up)),
    Row("clone", lambda lib, x: x.clone(), same(), program=lambda lib, t: t.clone()),
    Row("to_copy", lambda lib, x: x.to(lib.float64, copy=True), same(), program=lambda lib, t: t.double().float()),
    Row("gather", lambda lib, x: x.gather(0, lib.tensor([[1, 0], [0, 0]])), same(shape=st.just((2, 2)))),
    Row("scatter", lambda lib, a, b: a.scatter(0, lib.tensor([[1, 0]]), b), shaped((2, 3), (1, 2))),
    Row("scatter_add", lambda lib, a, b: a.scatter_add(1, lib.tensor([[1, 1]]), b), shaped((1, 3), (1, 2))),
    # matrix products
    Row("mm", lambda lib, a, b: a @ b, matrices("nm", "mp"), program=lambda lib, a, b: (a @ b.t()) @ a / 4,
        arity=2),
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
    Row("cross_entropy", lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2])),
        same(shape=st.just((2, 3)))),
    Row("nll_loss_sum", lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([1, 0]), reduction="sum"),
        same(shape=st.just((2, 3))), gradgrad=False),
    Row("bce_with_logits", lambda lib, x, t: BCE(lib)(x, t.sigmoid()),
        same(2)),
    Row("bce_with_logits_pos_weight", lambda lib, x, t: BCE(lib)(
        x, t.sigmoid(), pos_weight=lib.ones(x.shape, dtype=lib.float64) * 2), same(2)),
    # in-place on non-leaves and on views
    Row("inplace_mul", lambda lib, a, b: (a * 1).mul_(b), same(2), program=lambda lib, a, b: (a * 1).mul_(b),
        arity=2),
    Row("inplace_exp", lambda lib, a: (a * 1).exp_(), same()),
    Row("inplace_on_view", lambda lib, a, b: _view_inplace(lib, a, b), same(2, shape=shapes_1d_up)),
    Row("setitem", lambda lib, a, b: _setitem(lib, a, b), same(2, shape=shapes_1d_up),
        program=lambda lib, a, b: _setitem(lib, a, b), arity=2),
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


BY_NAME = {r.name: r for r in ROWS}
PROGRAM_ROWS = [r for r in ROWS if r.program is not None]


def BCE(lib):  # noqa: N802
    return lib.nn.functional.binary_cross_entropy_with_logits


def _batch_norm(lib, x, w, b):
    return lib.nn.functional.batch_norm(x, None, None, w, b, training=True) * x


ROWS += [
    Row("batch_norm", _batch_norm, matrices("nm", "m", "m"), rtol=1e-3, atol=1e-4),
    Row("batch_norm_eval", lambda lib, x, w, b: lib.nn.functional.batch_norm(
        x, lib.zeros(x.shape[1], dtype=lib.float64), lib.ones(x.shape[1], dtype=lib.float64), w, b, training=False),
        matrices("nm", "m", "m")),
]
BY_NAME = {r.name: r for r in ROWS}
