"""The everyday ops of task M1 beyond their op_db rows: dtypes, shapes, values, ``grad_fn`` names, errors, warnings
and in-place rules, on leafkit and on PyTorch.

Each case is a function of the library; both runs are described the same way (a tensor by its dtype, shape,
values to 5 decimals, ``requires_grad`` and node name; an error by its class and message; the warnings it gave)
and must agree.
"""

from __future__ import annotations

import math
import warnings

import pytest

import leafkit

torch = pytest.importorskip("torch")


def _i(L):
    return L.tensor([5, -7, 3])


def _f(L):
    return L.tensor([5.0, -7.0, 3.0])


def _b(L):
    return L.tensor([True, False, True])


def _m(L):
    return L.arange(6.0).reshape(2, 3)


def _r(L):
    return L.tensor([[1.0, 3.0], [3.0, 2.0]], requires_grad=True)


CASES = {
    # elementwise: dtypes, in-place forms and their rules, errors
    "fmod int": lambda L: L.fmod(_i(L), 2),
    "fmod int by float": lambda L: L.fmod(_i(L), 2.5),
    "fmod int by zero": lambda L: L.fmod(_i(L), 0),
    "fmod float by zero": lambda L: L.fmod(_f(L), 0),
    "fmod int tensor with a zero": lambda L: L.fmod(_i(L), L.tensor([1, 0, 1])),
    "fmod bool": lambda L: L.fmod(_b(L), 1),
    "fmod by a 0-d double": lambda L: _f(L).fmod(L.tensor(2.0, dtype=L.float64)),
    "fmod_ on a non-leaf": lambda L: (L.ones(2, requires_grad=True) * 1).fmod_(0.5),
    "rsqrt of 0 and -1": lambda L: L.tensor([0.0, -1.0]).rsqrt(),
    "exp2 of int": lambda L: _i(L).exp2(),
    "log2 of bool": lambda L: _b(L).log2(),
    "log10 in place on int": lambda L: _i(L).log10_(),
    "erf of float16": lambda L: L.tensor([0.5], dtype=L.float16).erf(),
    "asin outside its domain": lambda L: L.tensor([2.0]).asin(),
    "arcsin_ on a leaf": lambda L: L.tensor([0.5], requires_grad=True).arcsin_(),
    "asinh_ records a node without derivative": lambda L: (L.tensor([0.5], requires_grad=True) * 1).asinh_(),
    "arccosh_ is acosh_": lambda L: (L.tensor([1.5], requires_grad=True) * 1).arccosh_(),
    "atanh_ under no_grad": lambda L: _no_grad(L, lambda: L.tensor([0.5], requires_grad=True).atanh_()),
    "negative of bool": lambda L: _b(L).negative(),
    "negative_": lambda L: (L.ones(2, requires_grad=True) * 1).negative_(),
    "fix of int": lambda L: _i(L).fix(),
    "fix_": lambda L: (L.tensor([1.5, -1.5], requires_grad=True) * 1).fix_(),
    "atan2 of ints": lambda L: L.atan2(_i(L), _i(L)),
    "atan2 float and double": lambda L: L.atan2(_f(L), _f(L).double()),
    "atan2 at the origin": lambda L: _grads(L, lambda a, b: L.atan2(a, b), [0.0, 1e-200], [0.0, 1e-200]),
    "arctan2_": lambda L: _f(L).arctan2_(_i(L)),
    "atan2_ on int": lambda L: _i(L).atan2_(_i(L)),
    "hypot of ints": lambda L: L.hypot(_i(L), _i(L)),
    "hypot float and int": lambda L: L.hypot(_f(L), _i(L)),
    "hypot shapes that do not broadcast": lambda L: L.hypot(_f(L), L.ones(2)),
    "lerp of ints": lambda L: L.lerp(_i(L), _i(L), 0.5),
    "lerp float and double": lambda L: L.lerp(_f(L), _f(L).double(), 0.5),
    "lerp with a 0-d double weight": lambda L: L.lerp(_f(L), _f(L) * 2, L.tensor(0.5, dtype=L.float64)),
    "lerp with a double weight": lambda L: L.lerp(_f(L), _f(L), L.tensor([0.5], dtype=L.float64)),
    "lerp of int tensors": lambda L: L.lerp(_i(L), _i(L), _i(L)),
    "lerp broadcasts": lambda L: L.lerp(_f(L), L.tensor([[1.0], [2.0]]), 0.5),
    "lerp_ cannot grow": lambda L: L.tensor([1.0]).lerp_(L.tensor([3.0]), L.tensor([[0.5], [0.25]])),
    "lerp weights either side of 0.5": lambda L: _f(L).lerp(_f(L) * 0, L.tensor([0.1, 0.6, 0.9])),
    "lerp_ on a non-leaf": lambda L: (L.ones(2, requires_grad=True) * 1).lerp_(L.zeros(2), 0.5),
    "addcmul of ints": lambda L: L.addcmul(_i(L), _i(L), _i(L), value=2),
    "addcmul int with a float value": lambda L: L.addcmul(_i(L), _i(L), _i(L), value=0.5),
    "addcmul mixed dtypes": lambda L: L.addcmul(_f(L), _i(L), _i(L)),
    "addcmul_": lambda L: (L.ones(2, requires_grad=True) * 1).addcmul_(L.ones(2), L.ones(2), value=-1),
    "addcdiv of ints": lambda L: L.addcdiv(_i(L), _i(L), _i(L)),
    "addcdiv float by int": lambda L: L.addcdiv(_f(L), _f(L), _i(L)),
    "addcdiv by zero": lambda L: L.addcdiv(_f(L), _f(L), _f(L) * 0),
    "clamp_min int with a float bound": lambda L: _i(L).clamp_min(0.5),
    "clamp_max int": lambda L: _i(L).clamp_max(1),
    "clamp_min with an int tensor bound": lambda L: _f(L).clamp_min(L.tensor([0, 0, 4])),
    "clamp_min of nan": lambda L: L.tensor([float("nan"), 1.0]).clamp_min(0.5),
    "clamp_min to nan": lambda L: L.tensor([2.0, 1.0]).clamp_min(float("nan")),
    "clamp_min_ on a non-leaf": lambda L: (L.ones(2, requires_grad=True) * 1).clamp_min_(0.5),
    "clamp_max with a tensor bound": lambda L: _grads(L, lambda a, b: L.clamp_max(a, b), [1.0, 2.0], [1.5, 2.0]),
    "rsub int": lambda L: L.rsub(_i(L), 1),
    "rsub int and float": lambda L: L.rsub(_i(L), 1.5),
    "rsub two tensors": lambda L: L.rsub(_f(L), _i(L), alpha=2),
    "rsub two bool tensors": lambda L: L.rsub(_b(L), _b(L)),
    # reductions
    "amax of int": lambda L: _i(L).amax(),
    "amax of bool": lambda L: _b(L).amax(),
    "amax of nothing": lambda L: L.zeros(0).amax(),
    "amax over a non-empty dim": lambda L: L.zeros(0, 2).amax(1),
    "amax over an empty dim": lambda L: L.zeros(0, 2).amax(0),
    "amax repeated dim": lambda L: _f(L).amax((0, 0)),
    "amax with nan": lambda L: L.tensor([1.0, float("nan")]).amax(),
    "amax dim out of range": lambda L: _f(L).amax(1),
    "amin keepdim": lambda L: _m(L).amin(-1, keepdim=True),
    "amax ties share the gradient": lambda L: _grads(L, lambda x: x.amax(), [[1.0, 3.0], [3.0, 2.0]]),
    "amin ties along a dim": lambda L: _grads(L, lambda x: x.amin(0), [[1.0, 3.0], [1.0, 2.0]]),
    "prod of int": lambda L: _i(L).prod(),
    "prod of bool": lambda L: _b(L).prod(),
    "prod of int32": lambda L: L.tensor([5, -7, 3], dtype=L.int32).prod(),
    "prod with dtype": lambda L: _i(L).prod(dtype=L.float32),
    "prod of nothing": lambda L: L.zeros(0).prod(),
    "prod over an empty dim": lambda L: L.zeros(2, 0).prod(1),
    "prod with one and two zeros": lambda L: _grads(L, lambda x: x.prod(1), [[2.0, 0.0, 3.0], [0.0, 0.0, 4.0]]),
    "prod second derivative with zeros": lambda L: _second(L, lambda x: x.prod(), [2.0, 0.0, 3.0]),
    "cumsum of int": lambda L: _i(L).cumsum(0),
    "cumsum of bool": lambda L: _b(L).cumsum(0),
    "cumsum with dtype": lambda L: _i(L).cumsum(0, dtype=L.float64),
    "cumsum of a 0-d tensor": lambda L: L.tensor(3.0).cumsum(0),
    "cumsum of float16": lambda L: _f(L).half().cumsum(0),
    "cumsum_ keeps the dtype": lambda L: L.tensor([5, -7, 3], dtype=L.int32).cumsum_(0),
    "cumsum_ with another dtype": lambda L: _i(L).cumsum_(0, dtype=L.float32),
    "cumsum_ on a leaf": lambda L: L.ones(2, requires_grad=True).cumsum_(0),
    "cumprod of bool": lambda L: _b(L).cumprod(0),
    "cumprod with zeros": lambda L: _grads(L, lambda x: x.cumprod(1), [[2.0, 0.0, 3.0, 0.5], [0.0, 0.0, 4.0, 1.0]]),
    "cumprod second derivative with zeros": lambda L: _second(L, lambda x: x.cumprod(0), [2.0, 0.0, 3.0, 0.0]),
    "std of int": lambda L: _i(L).std(),
    "std unbiased=False": lambda L: _f(L).std(unbiased=False),
    "std dim and unbiased positionally": lambda L: _f(L).std(0, False),
    "var dim and unbiased positionally": lambda L: _f(L).var(0, True),
    "std(False)": lambda L: _f(L).std(False),
    "std correction": lambda L: _f(L).std(correction=2),
    "var of one element": lambda L: L.tensor([2.0]).var(),
    "std of one element": lambda L: L.tensor([1.0]).std(),
    "var of nothing": lambda L: L.zeros(0).var(),
    "var of float16": lambda L: _f(L).half().var(),
    "var keepdim without dim": lambda L: _m(L).var(keepdim=True),
    "var over two dims": lambda L: _m(L).var((0, 1)),
    "var fractional correction": lambda L: _f(L).var(correction=0.5),
    "var gradient without degrees of freedom": lambda L: _grads(L, lambda x: x.var(), [1.0]),
    "std gradient at zero spread": lambda L: _grads(L, lambda x: x.std(1), [[1.0, 1.0], [1.0, 2.0]]),
    "logsumexp of int": lambda L: _i(L).logsumexp(0),
    "logsumexp with inf": lambda L: L.tensor([float("inf"), 1.0]).logsumexp(0),
    "logsumexp of -inf": lambda L: L.tensor([-float("inf"), -float("inf")]).logsumexp(0),
    "logsumexp of large values": lambda L: L.tensor([1000.0, 1000.0]).logsumexp(0),
    "logsumexp of an empty slice": lambda L: L.zeros(0, 2).logsumexp(0),
    "logsumexp of bool": lambda L: _b(L).logsumexp(0),
    "logsumexp over no dims": lambda L: L.ones(2, 3).logsumexp(()),
    # sort / topk
    "sort descending": lambda L: tuple(_m(L).sort(0, True)),
    "sort with nan": lambda L: tuple(L.tensor([1.0, float("nan"), 0.0]).sort()),
    "sort descending with nan": lambda L: tuple(L.tensor([1.0, float("nan"), 0.0]).sort(descending=True)),
    "sort ties descending": lambda L: tuple(L.tensor([1.0, 3.0, 3.0, 1.0]).sort(descending=True)),
    "sort of bool": lambda L: tuple(L.tensor([True, False]).sort()),
    "sort of a 0-d tensor": lambda L: tuple(L.tensor(3.0).sort()),
    "sort repr": lambda L: repr(L.tensor([2.0, 1.0]).sort()),
    "sort stable keyword": lambda L: tuple(L.sort(_r(L), dim=0, descending=True, stable=True)),
    "argsort": lambda L: _f(L).argsort(descending=True),
    "argsort stable": lambda L: L.tensor([1, 1, 0]).argsort(stable=True),
    "msort": lambda L: L.msort(_m(L)),
    "topk": lambda L: tuple(_f(L).topk(2)),
    "topk smallest": lambda L: tuple(_f(L).topk(2, largest=False)),
    "topk too many": lambda L: _f(L).topk(4),
    "topk negative": lambda L: _f(L).topk(-1),
    "topk none": lambda L: tuple(_f(L).topk(0)),
    "topk with nan": lambda L: tuple(L.tensor([1.0, float("nan"), 0.0]).topk(1)),
    "topk ties": lambda L: tuple(L.tensor([1.0, 3.0, 3.0, 2.0]).topk(1)),
    "topk of a 0-d tensor": lambda L: tuple(L.tensor(2.0).topk(1)),
    "topk repr": lambda L: repr(L.tensor([2.0, 1.0]).topk(1)),
    # shapes
    "repeat with too few sizes": lambda L: _m(L).repeat(2),
    "repeat negative": lambda L: _f(L).repeat(-1),
    "repeat a list": lambda L: _f(L).repeat([2, 1]),
    "repeat zero times": lambda L: _grads(L, lambda x: x.repeat(0, 1), [[1.0, 2.0]]),
    "flip a repeated dim": lambda L: _m(L).flip(0, 0),
    "flip a dim out of range": lambda L: _m(L).flip(2),
    "flip a 0-d tensor": lambda L: L.tensor(1.0).flip(0),
    "flip no dims": lambda L: _m(L).flip(()),
    "flip is contiguous": lambda L: _m(L).flip(1).is_contiguous(),
    "fliplr of 1-d": lambda L: _f(L).fliplr(),
    "flipud of 0-d": lambda L: L.tensor(1.0).flipud(),
    "roll flattened": lambda L: _m(L).roll(1),
    "roll misaligned": lambda L: _m(L).roll((1, 2), 0),
    "roll two shifts without dims": lambda L: _m(L).roll((1, 2)),
    "roll empty": lambda L: L.zeros(0).roll(1),
    "roll beyond the size": lambda L: _f(L).roll(7),
    "movedim": lambda L: L.ones(2, 3, 4).movedim((0, 1), (2, 0)).shape,
    "movedim repeated": lambda L: L.ones(2, 2).movedim((0, 0), (0, 1)),
    "movedim of a 0-d tensor": lambda L: L.tensor(1.0, requires_grad=True).movedim(0, 0),
    "narrow past the end": lambda L: L.ones(3).narrow(0, 2, 2),
    "narrow from the end": lambda L: L.arange(3).narrow(0, -1, 1),
    "narrow negative length": lambda L: L.arange(3).narrow(0, 0, -1),
    "narrow a 0-d tensor": lambda L: L.tensor(1.0).narrow(0, 0, 1),
    "narrow records a slice": lambda L: _r(L).narrow(1, 1, 1),
    "diag of 0-d": lambda L: L.diag(L.tensor(1.0)),
    "diag of 3-d": lambda L: L.diag(L.ones(2, 2, 2)),
    "diag above a rectangle": lambda L: L.diag(_m(L), 1),
    "diag far outside": lambda L: L.diag(_m(L), 5),
    "diag below a vector": lambda L: L.diag(_f(L), -1),
    "diag of int": lambda L: _i(L).diag(),
    "diagonal over other dims": lambda L: L.arange(8.0).reshape(2, 2, 2).diagonal(0, 0, 2),
    "diagonal of one dim twice": lambda L: L.ones(2, 2).diagonal(0, 0, 0),
    "diagonal writes through": lambda L: _filled_diagonal(L),
    "diagonal far outside": lambda L: _m(L).diagonal(7),
    "diag_embed shape": lambda L: L.diag_embed(L.ones(2, 2), 1).shape,
    "diag_embed of one dim twice": lambda L: L.diag_embed(L.ones(2, 2), 0, 0, 0),
    "trace of a rectangle": lambda L: _m(L).trace(),
    "trace of 1-d": lambda L: _f(L).trace(),
    "trace of int32": lambda L: L.tensor([[1, 2], [3, 4]], dtype=L.int32).trace(),
    "trace of bool": lambda L: L.tensor([[True]]).trace(),
    "trace of a tall matrix": lambda L: _grads(L, lambda x: x.trace(), [[1.0], [2.0], [3.0]]),
    "triu of 1-d": lambda L: _f(L).triu(),
    "triu of 3-d": lambda L: L.ones(2, 2, 2).triu(1),
    "tril_": lambda L: _m(L).tril_(-1),
    "split size 0": lambda L: _f(L).split(0),
    "split negative": lambda L: _f(L).split(-1),
    "split sizes that do not add up": lambda L: _f(L).split([1, 1]),
    "split negative sizes": lambda L: _f(L).split([4, -1]),
    "split a 0-d tensor": lambda L: L.tensor(1.0).split(1),
    "split larger than the tensor": lambda L: _f(L).split(5),
    "split an empty dim": lambda L: L.zeros(0, 2).split(2),
    "split with sizes": lambda L: L.split(_r(L), [1, 1], dim=1),
    "chunk": lambda L: _f(L).chunk(2),
    "chunk more than elements": lambda L: _f(L).chunk(5),
    "chunk 4 of 6": lambda L: L.arange(6).chunk(4),
    "chunk 0": lambda L: _f(L).chunk(0),
    "chunk an empty dim": lambda L: L.zeros(0, 2).chunk(3),
    "chunk requires grad": lambda L: L.chunk(_r(L), 2, 1),
    "split piece changed in place": lambda L: _split_piece_inplace(L),
    "split base changed in place": lambda L: _split_base_inplace(L),
    "split pieces of a plain tensor change in place": lambda L: _split_plain_inplace(L),
    # in-place view ops
    "t_ rules": lambda L: _t_rules(L),
    "t_ errors": lambda L: _t_errors(L),
    "t_ on an inference tensor": lambda L: _t_inference(L),
    # indexing
    "index_select float index": lambda L: _f(L).index_select(0, L.tensor([0.0])),
    "index_select out of range": lambda L: _f(L).index_select(0, L.tensor([5])),
    "index_select negative": lambda L: _f(L).index_select(0, L.tensor([-1])),
    "index_select 2-d index": lambda L: _f(L).index_select(0, L.tensor([[0]])),
    "index_select int32 index": lambda L: _f(L).index_select(0, L.tensor([0], dtype=L.int32)),
    "index_select 0-d index": lambda L: L.tensor([1.0, 2, 3]).index_select(0, L.tensor(1)),
    "index_select of a 0-d tensor": lambda L: L.tensor(3.0).index_select(0, L.tensor([0, 0])),
    "index_select repeated": lambda L: _grads(L, lambda x: x.index_select(1, L.tensor([1, 1, 0])), [[1.0, 2.0]]),
    "index_fill negative index": lambda L: _m(L).index_fill(1, L.tensor([-1]), 9.0),
    "index_fill int32 index": lambda L: _m(L).index_fill(1, L.tensor([0], dtype=L.int32), 9.0),
    "index_fill out of range": lambda L: _m(L).index_fill(1, L.tensor([3]), 9.0),
    "index_fill 2-d index": lambda L: _m(L).index_fill(1, L.tensor([[0]]), 9.0),
    "index_fill 0-d index": lambda L: _m(L).index_fill(1, L.tensor(0), 9.0),
    "index_fill 1-d value": lambda L: _m(L).index_fill(1, L.tensor([0]), L.tensor([9.0])),
    "index_fill int with a float": lambda L: _m(L).long().index_fill(1, L.tensor([0]), 2.5),
    "index_fill_": lambda L: (L.ones(2, requires_grad=True) * 1).index_fill_(0, L.tensor([0]), 2.0),
    "index_add with alpha": lambda L: _m(L).index_add(1, L.tensor([0, 0]), L.ones(2, 2), alpha=2),
    "index_add negative": lambda L: _m(L).index_add(1, L.tensor([-1]), L.ones(2, 1)),
    "index_add out of range": lambda L: _m(L).index_add(1, L.tensor([3]), L.ones(2, 1)),
    "index_add too few indices": lambda L: _m(L).index_add(1, L.tensor([0, 1]), L.ones(2, 1)),
    "index_add wrong source shape": lambda L: _m(L).index_add(1, L.tensor([0]), L.ones(3, 1)),
    "index_add float index": lambda L: _m(L).index_add(1, L.tensor([0.0]), L.ones(2, 1)),
    "index_add other dtype": lambda L: _m(L).index_add(1, L.tensor([0]), L.ones(2, 1, dtype=L.float64)),
    "index_add_": lambda L: (L.ones(2, requires_grad=True) * 1).index_add_(0, L.tensor([0]), L.ones(1)),
    # einsum
    "einsum sizes that do not broadcast": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(2, 3)),
    "einsum unknown output subscript": lambda L: L.einsum("ij->ik", L.ones(2, 3)),
    "einsum output subscript twice": lambda L: L.einsum("ij->ii", L.ones(2, 2)),
    "einsum too many operands": lambda L: L.einsum("ij", L.ones(2, 3), L.ones(2)),
    "einsum too few operands": lambda L: L.einsum("i,j", L.ones(2)),
    "einsum bad subscript": lambda L: L.einsum("i1", L.ones(2)),
    "einsum wrong number of dims": lambda L: L.einsum("ijk", L.ones(2, 3)),
    "einsum diagonal of a rectangle": lambda L: L.einsum("ii", L.ones(2, 3)),
    "einsum two ellipses": lambda L: L.einsum("......", _f(L)),
    "einsum broken ellipsis": lambda L: L.einsum("i..", _f(L)),
    "einsum no operands": lambda L: L.einsum("i"),
    "einsum mixed dtypes": lambda L: L.einsum("i,i", L.ones(2), L.ones(2, dtype=L.float64)),
    "einsum of int": lambda L: L.einsum("i,i", L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)),
    "einsum operands as a list": lambda L: L.einsum("i,i", [L.ones(2), L.ones(2)]),
    "einsum implicit output": lambda L: L.einsum("ba", _m(L)),
    "einsum capitals first": lambda L: L.einsum("Ab,bc->Ac", _m(L), _m(L).t()),
    "einsum with spaces": lambda L: L.einsum(" i j , j k -> i k ", _m(L), _m(L).t()),
    "einsum ellipsis": lambda L: L.einsum("i...->...", _m(L)),
    "einsum ellipses broadcast": lambda L: L.einsum("...ij,...jk", L.ones(2, 1, 2, 3), L.ones(4, 3, 2)).shape,
    "einsum ellipses that do not broadcast": lambda L: L.einsum("...i,...i", L.ones(2, 3), L.ones(4, 3)),
    "einsum sublist format": lambda L: L.einsum(_m(L), [0, 1], _m(L), [2, 1], [0, 2]),
    "einsum sublist ellipsis": lambda L: L.einsum(_m(L), [Ellipsis, 1], [1]),
    "einsum three operands": lambda L: L.einsum("i,i,i->", _f(L), _f(L), _f(L)),
    "einsum with a 0-d operand": lambda L: L.einsum(",i->i", L.tensor(2.0), _f(L)),
    "einsum of empty operands": lambda L: L.einsum("ij,jk->ik", L.ones(2, 0), L.ones(0, 2)),
    # bit shifts
    "bool >> 1": lambda L: L.tensor([True]) >> 1,
    "bool << 1": lambda L: L.tensor([True]) << 1,
    "-8 >> 70": lambda L: L.tensor([-8]) >> 70,
    "-8 << -1": lambda L: L.tensor([-8]) << -1,
    "int32 >> int64 tensor": lambda L: L.tensor([3], dtype=L.int32) >> L.tensor([1]),
    "int32 >> 1": lambda L: L.tensor([3], dtype=L.int32) >> 1,
    "int32 << 40": lambda L: L.tensor([1], dtype=L.int32) << 40,
    "3 >> tensor": lambda L: 3 >> L.tensor([1]),
    "3 << tensor": lambda L: 3 << L.tensor([1]),
    ">> a 0-d tensor": lambda L: L.tensor([8]) >> L.tensor(1),
    ">> a float tensor": lambda L: L.tensor([8]) >> L.tensor([1.0]),
    "bool >> bool": lambda L: L.tensor([True]) >> L.tensor([True]),
    "float >> 1": lambda L: L.tensor([8.0]) >> 1,
    "float >> 1 requiring grad": lambda L: L.tensor([1.0], requires_grad=True) >> 1,
    "2.5 >> tensor": lambda L: 2.5 >> L.tensor([8, 3]),
    ">> broadcasts": lambda L: L.tensor([[8], [16]]) >> L.tensor([1, 2]),
    ">> shapes that do not broadcast": lambda L: L.tensor([8, 3]) >> L.tensor([1, 2, 3]),
    "bitwise_right_shift": lambda L: L.bitwise_right_shift(L.tensor([8]), 2),
    "bitwise_left_shift of a number": lambda L: L.bitwise_left_shift(2, L.tensor([1])),
    "bitwise_left_shift_": lambda L: L.tensor([8]).bitwise_left_shift_(1),
    "in-place shifts": lambda L: _inplace_shifts(L),
    # new_* and storage_offset
    "new_zeros": lambda L: _f(L).requires_grad_().new_zeros(2, 3),
    "new_zeros of a tuple": lambda L: _i(L).new_zeros((2,)),
    "new_zeros with dtype": lambda L: _i(L).new_zeros(2, dtype=L.float64),
    "new_zeros requiring grad": lambda L: _f(L).new_zeros(2, requires_grad=True),
    "new_ones": lambda L: _i(L).new_ones(2),
    "new_ones of a Size": lambda L: _f(L).new_ones(L.Size([2])),
    "new_ones int requiring grad": lambda L: _i(L).new_ones(2, requires_grad=True),
    "new_full": lambda L: _i(L).new_full((2,), 1.5),
    "new_full of an int size": lambda L: _f(L).new_full(2, 1.0),
    "new_empty": lambda L: _i(L).new_empty(2).shape,
    "new_tensor": lambda L: _i(L).new_tensor([1.5, 2.5]),
    "new_tensor from a tensor": lambda L: _f(L).new_tensor(L.tensor([1, 2])),
    "new_tensor requiring grad": lambda L: _f(L).new_tensor([1, 2], requires_grad=True),
    "storage_offset of a row": lambda L: _m(L)[1].storage_offset(),
    "storage_offset of a transposed row": lambda L: _m(L).t()[1].storage_offset(),
    "storage_offset of a detached slice": lambda L: _m(L)[1, 1:].detach().storage_offset(),
    "storage_offset of an expanded row": lambda L: _m(L)[1].expand(2, 3).storage_offset(),
    "storage_offset of a diagonal": lambda L: _m(L).diagonal(1).storage_offset(),
    "storage_offset of a split piece": lambda L: _m(L).split(1)[1].storage_offset(),
}


def _no_grad(L, f):
    with L.no_grad():
        return f()


def _grads(L, f, *values):
    xs = [L.tensor(v, dtype=L.float64, requires_grad=True) for v in values]
    out = f(*xs)
    return out, L.autograd.grad(out.sum(), xs, allow_unused=True)


def _second(L, f, value):
    x = L.tensor(value, dtype=L.float64, requires_grad=True)
    (g,) = L.autograd.grad(f(x).sum(), x, create_graph=True)
    return g, L.autograd.grad((g * g).sum(), x)


def _filled_diagonal(L):
    t = _m(L)
    t.diagonal().fill_(9.0)
    return t


def _split_piece_inplace(L):
    a, b = (L.ones(4, 2, requires_grad=True) * 1).split([1, 3])
    a.mul_(2)


def _split_base_inplace(L):
    w = L.ones(4, 2, requires_grad=True) * 1
    a, b = w.chunk(2)
    w.mul_(2)
    return b.grad_fn


def _split_plain_inplace(L):
    w = L.ones(4, 2)
    a, b = w.chunk(2)
    a.mul_(2)
    return w


def _t_rules(L):
    x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with L.no_grad():
        x.t_()
    out = [(x.is_leaf, x.grad_fn, x._version, x)]
    y = x * 1
    before = y._version
    y.t_()
    out.append((y._version - before, y, y.stride()))
    y = x * 1
    v = y[:, :1]
    v.t_()
    out.append((v, v._base is y, y.grad_fn.name()))
    v.sum().backward()
    out.append(x.grad)
    z = L.zeros(2, 3)
    v = z[1:]
    v.t_()
    out.append((v._base is z, v.storage_offset(), v.shape))
    y = x * 1
    y.retain_grad()
    y.transpose_(0, 1)
    (y * L.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    out.append(y.grad)
    out.append(((x * 1).unsqueeze_(-1), (x * 1).unsqueeze(0).squeeze_(0), (x * 1).unsqueeze(0).squeeze_()))
    return out


def _t_errors(L):
    x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = []
    for f in (lambda: x.t_(), lambda: x[0:1].t_(), lambda: (x * 1).split(1)[0].t_(), lambda: L.ones(2, 2, 2).t_()):
        try:
            f()
        except RuntimeError as e:
            out.append(str(e))
    w = x * 1
    with L.no_grad():
        v = w[0:1]
    try:
        v.t_()
    except RuntimeError as e:
        out.append(str(e))
    return out


def _t_inference(L):
    with L.inference_mode():
        a = L.ones(2, 3)
    try:
        a.t_()
    except RuntimeError as e:
        return str(e), a.shape
    return a.shape


def _inplace_shifts(L):
    y = L.tensor([4, 8])
    before = y._version
    y >>= 1
    out = [y, y._version - before]
    z = L.tensor([4, 8], dtype=L.int32)
    z >>= L.tensor([1, 1])
    out.append(z)
    for f in (
        lambda: L.tensor([4, 8], dtype=L.int32).__ilshift__(1.5),
        lambda: L.tensor([1.0], requires_grad=True).__irshift__(1),
    ):
        try:
            f()
        except RuntimeError as e:
            out.append(str(e))
    return out


def describe(L, v):
    if isinstance(v, L.Tensor):
        fn = v.grad_fn
        values = [
            None if isinstance(a, float) and math.isnan(a) else (round(a, 5) if isinstance(a, float) else a)
            for a in v.detach().reshape(-1).tolist()
        ]
        return (
            "tensor",
            str(v.dtype).replace("torch.", ""),
            tuple(v.shape),
            values,
            v.requires_grad,
            None if fn is None else fn.name(),
        )
    if isinstance(v, (tuple, list)):
        return tuple(describe(L, a) for a in v)
    if isinstance(v, L.Size):
        return tuple(v)
    if hasattr(v, "next_functions"):
        return ("node", v.name())
    return v.replace("leafkit", "torch") if isinstance(v, str) else v


def observe(L, name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("value", describe(L, CASES[name](L)))
        except Exception as e:  # noqa: BLE001 - the error is the observation
            out = ("error", type(e).__name__, str(e))
    # PyTorch's C++ warnings end with where in its sources they were raised; that part is not compared
    return out, sorted(
        {(w.category.__name__, str(w.message).splitlines()[0].split(" (Triggered internally")[0]) for w in caught}
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_pytorch(name):
    assert observe(leafkit, name) == observe(torch, name)
