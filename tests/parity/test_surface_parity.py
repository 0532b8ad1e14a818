"""The everyday surface of issue 18 on leafkit and on PyTorch: modules (reprs, parameters, outputs, gradients),
containers, functions and their keyword forms, errors and warnings.

The differentiable ops among them also have rows in ``tests/op_db.py`` (gradcheck, gradgradcheck, parity of
values, gradients, second derivatives and node names); here each case runs the same code on both libraries and
compares what it returns, raises and warns.
"""

from __future__ import annotations

import collections
import re
import warnings

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")


def run(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", _norm(fn()))
        except Exception as e:  # noqa: BLE001 - the class and message are the observation
            out = ("error", type(e).__name__, str(e))
    # PyTorch's C++ warnings end with where they were raised
    return out, [(w.category.__name__, str(w.message).split(" (Triggered internally at")[0]) for w in caught]


def same(a, b) -> bool:
    """Equal, with floats compared to float32 precision (NaN equal to NaN)."""
    if isinstance(a, float) and isinstance(b, float):
        return (np.isnan(a) and np.isnan(b)) or bool(np.isclose(a, b, rtol=1e-4, atol=1e-5))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def _norm(v):
    if hasattr(v, "detach") and hasattr(v, "dtype") and not isinstance(v, type):
        grad_fn = getattr(v, "grad_fn", None)
        return (
            type(v).__name__,
            str(v.dtype),
            tuple(v.shape),
            np.asarray(v.detach().cpu().tolist(), dtype=np.float64).tolist(),
            v.requires_grad,
            None if grad_fn is None else grad_fn.name(),
        )
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [_norm(x) for x in v]
    if isinstance(v, dict):
        return [(k, _norm(x)) for k, x in v.items()]
    if isinstance(v, (bool, int, float, str, type(None))):
        return v
    return re.sub(r" at 0x[0-9a-f]+", "", repr(v))


def seeded(lib, module):
    """Give a module's parameters the same values on both libraries (its own initialisation draws differ)."""
    with lib.no_grad():
        for k, p in enumerate(module.parameters()):
            values = np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (0.5 + 0.1 * k)
            p.copy_(lib.tensor(values, dtype=p.dtype))
    return module


def cases(torch):
    nn, F = torch.nn, torch.nn.functional
    x = torch.tensor([[-2.5, -0.5, 0.0, 0.3], [1.0, 2.0, 3.5, -4.0]])

    def grad_of(f, shape=(2, 4)):
        a = torch.tensor(np.linspace(-3, 3, int(np.prod(shape))).reshape(shape), dtype=torch.float64).requires_grad_()
        y = f(a)
        y.sum().backward()
        return y, a.grad

    def module_case(make, inp):
        m = seeded(torch, make())
        out = m(inp)
        return repr(m), [(n, tuple(p.shape)) for n, p in m.named_parameters()], out

    def ml():
        m = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU()])
        m.append(nn.Tanh())
        m.insert(0, nn.Sigmoid())
        popped = m.pop(0)
        m.extend([nn.ReLU()])
        del m[0]
        return repr(m), repr(m[1:3]), len(m), repr(popped), [n for n, _ in m.named_parameters()], repr(m + m[:1])

    def ml_errors():
        return [
            run(f)[0] for f in (lambda: nn.ModuleList([1]), lambda: nn.ModuleList()[0], lambda: nn.ModuleList()["a"])
        ]

    def md():
        m = nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.ReLU()})
        m.update({"c": nn.Tanh()})
        m.update([("d", nn.Identity())])
        popped = m.pop("a")
        return repr(m), list(m.keys()), "b" in m, len(m), repr(popped), list(m), [n for n, _ in m.named_parameters()]

    def pl():
        p = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(2, 3))])
        p.append(torch.ones(1))
        return repr(p), type(p[2]).__name__, p[2].requires_grad, len(p), [n for n, _ in p.named_parameters()]

    def pd():
        p = nn.ParameterDict({"w": nn.Parameter(torch.ones(2))})
        p["b"] = torch.zeros(1)
        return repr(p), type(p["b"]).__name__, list(p.keys()), [n for n, _ in p.named_parameters()], "w" in p

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 3), nn.Linear(3, 1)])
            self.extra = nn.ParameterList([nn.Parameter(torch.ones(1))])
            self.heads = nn.ModuleDict({"h": nn.Linear(1, 1)})

        def forward(self, a):
            for layer in self.layers:
                a = torch.tanh(layer(a))
            return self.heads["h"](a * self.extra[0])

    def net():
        n = seeded(torch, Net())
        return repr(n), [k for k in n.state_dict()], n(torch.ones(2, 2))

    def embedding_grads():
        w = torch.tensor(np.linspace(-1, 1, 15).reshape(5, 3), requires_grad=True)
        y = F.embedding(torch.tensor([[0, 2], [2, 4]]), w, padding_idx=4, scale_grad_by_freq=True)
        (y * y).sum().backward()
        return y, w.grad

    def embedding_max_norm():
        w = torch.tensor(np.linspace(-3, 3, 15).reshape(5, 3))
        y = F.embedding(torch.tensor([0, 2]), w, max_norm=1.0)
        return y, w, w.norm(dim=1)

    def embedding_module():
        e = nn.Embedding(5, 3, padding_idx=-1)
        return repr(e), e.weight[4], e.padding_idx, tuple(e.weight.shape)

    def from_pretrained():
        e = nn.Embedding.from_pretrained(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        return repr(e), e.weight.requires_grad, e(torch.tensor([1, 0]))

    def layer_norm_module():
        ln = nn.LayerNorm(4)
        return repr(ln), ln(x), [(n, tuple(p.shape)) for n, p in ln.named_parameters()]

    def batchnorm2d():
        bn = nn.BatchNorm2d(3)
        inp = torch.tensor(np.linspace(-2, 2, 2 * 3 * 2 * 2).reshape(2, 3, 2, 2), dtype=torch.float32)
        out = bn(inp)
        return repr(bn), out, bn.running_mean, bn.running_var, bn.num_batches_tracked

    def scheduler_in_training():
        m = seeded(torch, nn.Linear(2, 1))
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        for _ in range(5):
            opt.zero_grad()
            m(torch.ones(3, 2)).pow(2).mean().backward()
            opt.step()
            sched.step()
        return m.weight, sched.get_last_lr()

    return {
        # modules
        "Softmax": lambda: module_case(lambda: nn.Softmax(dim=1), x),
        "Softmax without dim": lambda: module_case(nn.Softmax, x),
        "LogSoftmax": lambda: module_case(lambda: nn.LogSoftmax(1), x),
        "Softmin": lambda: module_case(lambda: nn.Softmin(0), x),
        "Softsign": lambda: module_case(nn.Softsign, x),
        "Tanhshrink": lambda: module_case(nn.Tanhshrink, x),
        "SELU": lambda: module_case(nn.SELU, x),
        "SELU inplace repr": lambda: repr(nn.SELU(inplace=True)),
        "CELU": lambda: module_case(lambda: nn.CELU(2.0), x),
        "CELU inplace repr": lambda: repr(nn.CELU(2.0, inplace=True)),
        "Mish": lambda: module_case(nn.Mish, x),
        "Hardswish": lambda: module_case(nn.Hardswish, x),
        "Hardsigmoid": lambda: module_case(nn.Hardsigmoid, x),
        "GLU": lambda: module_case(nn.GLU, x),
        "Softshrink": lambda: module_case(nn.Softshrink, x),
        "Hardshrink": lambda: module_case(lambda: nn.Hardshrink(1.0), x),
        "Threshold": lambda: module_case(lambda: nn.Threshold(0.1, 20.0), x),
        "Threshold inplace repr": lambda: repr(nn.Threshold(0.1, 2, True)),
        "PReLU": lambda: module_case(nn.PReLU, x),
        "PReLU per channel": lambda: module_case(lambda: nn.PReLU(4, init=0.1), x),
        "KLDivLoss": lambda: (
            repr(nn.KLDivLoss()),
            nn.KLDivLoss(reduction="batchmean")(x.log_softmax(1), x.softmax(1)),
        ),
        "KLDivLoss mean warns": lambda: nn.KLDivLoss()(x.log_softmax(1), x.softmax(1)),
        "CosineSimilarity": lambda: (repr(nn.CosineSimilarity()), nn.CosineSimilarity()(x, x.flip(0))),
        "PairwiseDistance": lambda: (repr(nn.PairwiseDistance()), nn.PairwiseDistance(p=1.0, keepdim=True)(x, x * 2)),
        "LayerNorm": layer_norm_module,
        "LayerNorm 2-d shape, no bias": lambda: (repr(nn.LayerNorm([2, 4], bias=False)), nn.LayerNorm([2, 4])(x)),
        "LayerNorm no affine": lambda: (
            repr(nn.LayerNorm(4, elementwise_affine=False)),
            list(nn.LayerNorm(4, elementwise_affine=False).parameters()),
        ),
        "Embedding": embedding_module,
        "Embedding repr": lambda: [
            repr(nn.Embedding(10, 3, max_norm=1.0, scale_grad_by_freq=True)),
            repr(nn.Embedding(4, 2, sparse=True)),
        ],
        "Embedding padding out of range": lambda: nn.Embedding(10, 3, padding_idx=11),
        "Embedding.from_pretrained": from_pretrained,
        "BatchNorm2d": batchnorm2d,
        "BatchNorm2d of 2-d input": lambda: nn.BatchNorm2d(3)(torch.ones(2, 3)),
        "ModuleList": ml,
        "ModuleList errors": ml_errors,
        "ModuleDict": md,
        "ParameterList": pl,
        "ParameterDict": pd,
        "ParameterList call": lambda: nn.ParameterList()(1),
        "containers in a model": net,
        "StepLR in a training loop": scheduler_in_training,
        # functional forms
        "embedding with padding_idx and scale_grad_by_freq": embedding_grads,
        "embedding max_norm renormalises in place": embedding_max_norm,
        "embedding of float indices": lambda: F.embedding(torch.tensor([1.0]), torch.ones(2, 2)),
        "embedding out of range": lambda: F.embedding(torch.tensor([7]), torch.ones(2, 2)),
        "embedding of a 3-d weight": lambda: F.embedding(torch.tensor([1]), torch.ones(2, 2, 2)),
        "one_hot": lambda: (F.one_hot(torch.tensor([0, 2]), 4), F.one_hot(torch.tensor([[0], [2]]))),
        "one_hot errors": lambda: [
            run(f)[0]
            for f in (
                lambda: F.one_hot(torch.tensor([0.0, 2.0])),
                lambda: F.one_hot(torch.tensor([-1])),
                lambda: F.one_hot(torch.tensor([5]), 3),
            )
        ],
        "layer_norm errors": lambda: [
            run(f)[0]
            for f in (
                lambda: F.layer_norm(torch.ones(2, 4), (5,)),
                lambda: F.layer_norm(torch.ones(2, 4), (4,), torch.ones(3)),
                lambda: F.layer_norm(torch.ones(2, 3, 4), (3, 4), torch.ones(3, 4), torch.ones(4)),
            )
        ],
        "softshrink negative lambda": lambda: F.softshrink(x, -0.5),
        "celu alpha 0": lambda: F.celu(x, 0.0),
        "glu odd size": lambda: F.glu(torch.ones(3)),
        "glu of a 0-d tensor": lambda: F.glu(torch.tensor(1.0)),
        "prelu channel mismatch": lambda: F.prelu(torch.ones(4, 3), torch.ones(4)),
        "activations of ints": lambda: [
            run(lambda f=f: f(torch.tensor([1, 2])))[0]
            for f in (F.hardswish, F.hardsigmoid, F.softshrink, F.hardshrink, F.celu, F.selu, F.mish, F.glu)
        ],
        "threshold of ints": lambda: F.threshold(torch.tensor([1, 2]), 1.5, 5),
        "inplace activations": lambda: [
            f(torch.ones(3, requires_grad=True) * torch.tensor([-1.0, 0.5, 4.0]))
            for f in (
                lambda t: F.hardswish(t, inplace=True),
                lambda t: F.hardsigmoid(t, inplace=True),
                lambda t: F.mish(t, inplace=True),
                lambda t: F.threshold(t, 0.1, 2.0, inplace=True),
                lambda t: F.selu(t, inplace=True),
                lambda t: F.celu(t, 1.5, inplace=True),
                lambda t: F.threshold_(t, 0.1, 2.0),
            )
        ],
        "kl_div reductions": lambda: (
            [F.kl_div(x.log_softmax(1), x.softmax(1), reduction=r) for r in ("none", "sum", "batchmean")]
            + [F.kl_div(x.log_softmax(1), x.log_softmax(1), reduction="sum", log_target=True)]
        ),
        "kl_div bad reduction": lambda: F.kl_div(x, x, reduction="batchsum"),
        "pairwise_distance": lambda: grad_of(lambda a: F.pairwise_distance(a, a.flip(0))),
        # torch.* and Tensor methods
        "frac": lambda: grad_of(lambda a: torch.frac(a * 1.3)),
        "logaddexp": lambda: grad_of(lambda a: torch.logaddexp(a, a.flip(1))),
        "logaddexp of ints": lambda: torch.logaddexp(torch.tensor([1]), torch.tensor([2])),
        "logaddexp infinities": lambda: torch.logaddexp(
            torch.tensor([float("inf"), -float("inf"), 1.0]), torch.tensor([float("inf"), -float("inf"), float("nan")])
        ),
        "xlogy": lambda: grad_of(lambda a: torch.xlogy(a.abs(), a.abs() + 1) + a.xlogy(2.0)),
        "xlogy of ints and zeros": lambda: (
            torch.xlogy(torch.tensor([0, 1]), torch.tensor([0, 2])),
            torch.xlogy(torch.tensor([0.0, 1.0]), torch.tensor([0.0, float("nan")])),
            torch.xlogy(2, torch.tensor([3.0])),
        ),
        "xlogy nodes": lambda: (
            torch.xlogy(2.0, torch.tensor([1.0], requires_grad=True)).grad_fn.name(),
            torch.xlogy(torch.tensor([1.0], requires_grad=True), 2).grad_fn.name(),
        ),
        "nan_to_num": lambda: (
            torch.nan_to_num(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])),
            torch.nan_to_num(torch.tensor([float("nan"), float("inf")]), nan=1.0, posinf=2.0),
            torch.nan_to_num(torch.tensor([float("inf")], dtype=torch.float16)),
            torch.tensor([1, 2]).nan_to_num(),
            torch.tensor([float("nan")]).nan_to_num_(),
        ),
        "nansum and nanmean": lambda: (
            torch.nansum(torch.tensor([[1.0, float("nan")], [3.0, 4.0]]), dim=1),
            torch.tensor([[1.0, float("nan")], [3.0, 4.0]]).nansum(),
            torch.tensor([[1.0, float("nan")], [3.0, 4.0]]).nanmean(0, keepdim=True),
            torch.nansum(torch.tensor([1, 2])),
            grad_of(lambda a: torch.nansum(a, 1)),
            grad_of(lambda a: a.nanmean()),
        ),
        "nanmean of ints": lambda: torch.nanmean(torch.tensor([1, 2])),
        "median": lambda: (
            torch.median(torch.tensor([3.0, 1.0, 2.0, 4.0])),
            torch.tensor([[3.0, 1.0, 5.0], [2.0, 4.0, 0.0]]).median(1),
            torch.tensor([[3.0, 1.0, 5.0], [2.0, 4.0, 0.0]]).median(dim=0, keepdim=True),
            torch.median(torch.tensor([1.0, float("nan"), 2.0])),
            torch.median(torch.tensor([3, 1, 2])),
            grad_of(lambda a: a.median()),
            grad_of(lambda a: a.median(1).values),
        ),
        "cummax and cummin": lambda: (
            torch.cummax(torch.tensor([1.0, 3.0, 2.0, 3.0, 5.0]), 0),
            torch.tensor([[1.0, 0.0], [0.5, 2.0]]).cummin(dim=1),
            torch.cummax(torch.tensor([1, 3, 2]), dim=0),
            grad_of(lambda a: a.cummax(1).values),
        ),
        "in-place functions": lambda: (
            [
                getattr(torch, n)(torch.tensor([0.5, 2.0]))
                for n in ("exp_", "sqrt_", "relu_", "sigmoid_", "zero_", "neg_")
            ]
            + [torch.fill_(torch.ones(2), 3.0), torch.abs_(torch.tensor([-1.0]))]
        ),
        "aliases": lambda: [
            torch.tensor([2.0]).multiply_(3),
            torch.tensor([2.0]).subtract_(3),
            torch.tensor([2.0]).divide_(4),
            torch.tensor([2.0]).true_divide_(4),
            torch.tensor([7.0]).floor_divide_(2),
        ],
        "predicates": lambda: (
            torch.is_floating_point(x),
            torch.is_inference(x),
            torch.is_complex(x),
            x.is_complex(),
            x.is_signed(),
            torch.tensor([1], dtype=torch.uint8).is_signed(),
            torch.is_nonzero(torch.tensor([1.0])),
            torch.is_same_size(x, x.t()),
            x.itemsize,
            x.nbytes,
            torch.tensor([1, 2], dtype=torch.int16).nbytes,
        ),
        "is_nonzero of two elements": lambda: torch.is_nonzero(torch.tensor([1.0, 2.0])),
        "positive": lambda: (torch.positive(x) is x, x.positive() is x),
        "positive of bools": lambda: torch.positive(torch.tensor([True])),
        "bitwise": lambda: (
            torch.bitwise_and(torch.tensor([3, 5]), 6),
            torch.bitwise_or(torch.tensor([3, 5]), torch.tensor([1, 2])),
            torch.bitwise_xor(torch.tensor([True, False]), torch.tensor([True, True])),
            torch.bitwise_not(torch.tensor([True, False])),
            torch.bitwise_not(torch.tensor([0, 7], dtype=torch.uint8)),
            torch.tensor([3, 5]).bitwise_and_(6),
            torch.tensor([3, 5]).bitwise_not_(),
            torch.bitwise_or(3, torch.tensor([4])),
        ),
        "bitwise of floats": lambda: [
            run(f)[0]
            for f in (
                lambda: torch.bitwise_and(x, x),
                lambda: torch.bitwise_not(x),
                lambda: x & x,
                lambda: torch.tensor([1]) | torch.tensor([1.0]),
            )
        ],
        "logical_xor": lambda: (
            torch.logical_xor(torch.tensor([0.0, 1.0, 2.0]), torch.tensor([0, 0, 3])),
            torch.tensor([0.0, 1.0]).logical_and_(torch.tensor([1, 1])),
            torch.tensor([0, 3]).logical_not_(),
            torch.tensor([1.0, 0.0]).logical_or_(torch.tensor([False, False])),
            torch.tensor([1, 0]).logical_xor_(torch.tensor([1, 1])),
        ),
        "logical_xor with a number": lambda: torch.logical_xor(x, 2),
        "broadcast": lambda: (
            grad_of(lambda a: a.broadcast_to(3, 2, 4)),
            torch.broadcast_to(torch.tensor([1, 2]), (2, 2)),
            torch.broadcast_shapes((2, 1), (3,), 1),
            torch.broadcast_tensors(torch.ones(2, 1), torch.zeros(3)),
        ),
        "broadcast_shapes mismatch": lambda: torch.broadcast_shapes((2,), (3,)),
        "ravel tile unflatten": lambda: (
            grad_of(lambda a: a.t().ravel()),
            grad_of(lambda a: a.tile(2)),
            torch.tile(torch.arange(3), (2, 2)),
            grad_of(lambda a: a.unflatten(1, (2, 2))),
            torch.arange(6).unflatten(0, (2, -1)),
        ),
        "unflatten wrong sizes": lambda: torch.arange(6).reshape(1, 6).unflatten(1, (4, 2)),
        "sum_to_size": lambda: (grad_of(lambda a: a.sum_to_size(1, 4)), x.sum_to_size((2, 1)), x.sum_to_size(4)),
        "sum_to_size wrong": lambda: x.sum_to_size(3, 4),
        "atleast": lambda: (
            torch.atleast_1d(torch.tensor(1.0)),
            torch.atleast_2d(torch.tensor([1.0, 2.0])),
            torch.atleast_3d(x),
            torch.atleast_3d(torch.tensor([1.0, 2.0])),
            torch.atleast_2d(torch.tensor(1.0), torch.ones(3)),
            torch.atleast_1d([torch.tensor(1.0), torch.ones(2)]),
            grad_of(lambda a: torch.atleast_3d(a)),
        ),
        "stacks": lambda: (
            grad_of(lambda a: torch.hstack([a, a * 2])),
            torch.hstack([torch.ones(2), torch.zeros(3)]),
            torch.vstack([torch.ones(2), torch.zeros(2)]),
            torch.row_stack((torch.ones(1, 2), torch.zeros(2))),
            torch.dstack([torch.ones(2), torch.zeros(2)]),
            torch.column_stack([torch.ones(2), torch.zeros(2, 2), torch.tensor([5.0, 6.0])]),
            grad_of(lambda a: torch.column_stack([a, a])),
        ),
        "meshgrid": lambda: (
            torch.meshgrid(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), indexing="ij"),
            torch.meshgrid(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), indexing="xy"),
            grad_of(lambda a: torch.meshgrid(a[0], a[1], indexing="ij")[0]),
        ),
        "meshgrid without indexing": lambda: torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3])),
        "meshgrid bad indexing": lambda: torch.meshgrid(torch.tensor([1]), indexing="foo"),
        "splits": lambda: (
            torch.tensor_split(torch.arange(7), 3),
            torch.arange(8).reshape(2, 4).tensor_split([1, 3], dim=1),
            torch.hsplit(torch.arange(8).reshape(2, 4), 2),
            torch.vsplit(torch.arange(8).reshape(2, 4), [1]),
            torch.dsplit(torch.arange(8).reshape(1, 2, 4), 2),
            torch.arange(5).split_with_sizes([2, 3]),
            torch.split_with_sizes(torch.arange(4), [1, 3]),
            grad_of(lambda a: a.tensor_split(2, dim=1)[0]),
        ),
        "split errors": lambda: [
            run(f)[0]
            for f in (
                lambda: torch.hsplit(torch.arange(6).reshape(2, 3), 2),
                lambda: torch.vsplit(torch.arange(3), 1),
                lambda: torch.tensor_split(torch.arange(3), 0),
            )
        ],
        "diagflat and take_along_dim": lambda: (
            torch.diagflat(torch.tensor([1.0, 2.0])),
            torch.diagflat(torch.tensor([[1, 2], [3, 4]]), 1),
            grad_of(lambda a: torch.diagflat(a[0])),
            torch.take_along_dim(x, torch.tensor([[0], [3]]), 1),
            torch.take_along_dim(x, torch.tensor([0, 7])),
            x.take_along_dim(torch.tensor([[1, 0, 1, 0]]), dim=0),
            grad_of(lambda a: torch.take_along_dim(a, torch.tensor([[0], [1]]), 1)),
        ),
        "repeat_interleave": lambda: (
            torch.repeat_interleave(torch.tensor([1, 2]), 2),
            x.repeat_interleave(2, dim=0),
            x.repeat_interleave(torch.tensor([1, 2]), dim=0),
            torch.repeat_interleave(torch.tensor([2, 0, 1])),
            grad_of(lambda a: a.repeat_interleave(2, dim=0)),
            grad_of(lambda a: a.repeat_interleave(2)),
        ),
        "nonzero argwhere count_nonzero": lambda: (
            torch.nonzero(torch.tensor([[0, 1], [2, 0]])),
            torch.tensor([0.0, 3.0, 0.0, 1.0]).nonzero(as_tuple=True),
            torch.argwhere(torch.tensor([[0, 1], [2, 0]])),
            torch.nonzero(torch.tensor(5)),
            torch.count_nonzero(x),
            x.count_nonzero(dim=1),
            torch.count_nonzero(torch.zeros(2, 3), dim=(0, 1)),
        ),
        "isclose": lambda: (
            torch.isclose(
                torch.tensor([1.0, 1.0 + 1e-7, float("nan"), float("inf")]),
                torch.tensor([1.0, 1.0, float("nan"), float("inf")]),
            ),
            torch.isclose(torch.tensor([float("nan")]), torch.tensor([float("nan")]), equal_nan=True),
            x.isclose(x + 0.01, atol=0.1),
        ),
        "factories": lambda: (
            torch.logspace(0, 2, 3),
            torch.logspace(0, 3, 4, base=2),
            torch.scalar_tensor(3),
            torch.scalar_tensor(2, dtype=torch.int64),
            torch.asarray([1, 2]),
            torch.asarray(np.array([1.5])),
            torch.asarray(x) is x,
            torch.asarray(x, copy=True) is x,
        ),
        "range (deprecated)": lambda: (torch.range(1, 4), torch.range(0, 1, 0.25)),
        "random draws: shapes and dtypes": lambda: [
            (tuple(t.shape), str(t.dtype), t.requires_grad)
            for t in (
                torch.rand_like(x),
                torch.randn_like(x, dtype=torch.float64),
                torch.randint_like(x, 5),
                torch.randint_like(x, 2, 5),
                torch.normal(torch.zeros(2, 3), torch.ones(2, 3)),
                torch.normal(0.0, torch.ones(3)),
                torch.normal(torch.zeros(4), 2.0),
                torch.normal(2.0, 3.0, size=(2, 2)),
                torch.bernoulli(torch.full((3,), 0.5)),
                torch.ones(2).bernoulli_(0.3),
                torch.tensor([0.2, 0.8]).multinomial(3, replacement=True),
            )
        ],
        "random draws: certain outcomes": lambda: (
            torch.bernoulli(torch.tensor([0.0, 1.0])),
            torch.tensor([0.0, 1.0, 0.0]).multinomial(2, replacement=True),
            torch.randint_like(torch.zeros(3), 4, 5),
        ),
        "normal negative std": lambda: torch.normal(0.0, -1.0, size=(2,)),
        "bernoulli outside [0, 1]": lambda: torch.bernoulli(torch.tensor([1.5])),
        "apply_ and map_": lambda: (
            torch.tensor([1.0, 2.0]).apply_(lambda v: v * 10),
            torch.tensor([[1, 2], [3, 4]]).map_(torch.tensor([10, 20]), lambda a, b: a + b),
        ),
        "torch.* forms of nn ops": lambda: (
            torch.celu(x, 2.0),
            torch.selu(x),
            torch.threshold(x, 0.0, -1.0),
            torch.prelu(x, torch.tensor([0.2])),
            x.hardshrink(1.0),
            x.prelu(torch.tensor([0.3])),
            torch.dropout(x, 0.0, True),
            torch.dropout(x, 0.5, False),
            torch.layer_norm(x, (4,)),
            torch.embedding(torch.ones(3, 2), torch.tensor([0, 2])),
            torch.kl_div(x.log_softmax(1), x.softmax(1)),
            torch.kl_div(x.log_softmax(1), x.softmax(1), 2),
            torch.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
            torch.binary_cross_entropy_with_logits(x, x.sigmoid()),
            torch.pairwise_distance(x, x * 2),
        ),
        "torch.* forms of nn ops: their own errors, nn.functional's through them": lambda: [
            run(f)[0]
            for f in (
                lambda: torch.celu_([1.0]),
                lambda: torch.selu_([1.0]),
                lambda: torch.threshold_([1.0], 0.1, 2.0),
                lambda: torch.dropout_([1.0], 0.5, True),
                lambda: torch.native_layer_norm([1.0], [1], None, None, 1e-5),
                lambda: torch.celu(x, inplace=True),
                lambda: torch.embedding(torch.ones(3, 2), [1]),
                lambda: torch.dropout(x, 1.5, True),
                lambda: torch.dropout(x, -0.5, False),
                lambda: torch.batch_norm(torch.ones(1, 3), None, None, None, None, True, 0.1, 1e-5, False),
                lambda: torch.batch_norm(x, None, None, None, None, True, 0.1, 0.0, False),
                lambda: F.celu([1.0], inplace=True),
                lambda: F.celu_([1.0]),
                lambda: F.selu([1.0], inplace=True),
                lambda: F.threshold([1.0], 0.1, 2.0, inplace=True),
                lambda: F.dropout([1.0], 0.5, True, True),
                lambda: F.dropout(x, 1.5, False),
                lambda: F.batch_norm(torch.ones(1, 3), None, None, training=True),
                lambda: F.batch_norm(x, None, None, training=True, eps=0.0),
                lambda: F.batch_norm(x, None, None, eps=-1.0),
            )
        ],
        "torch.embedding leaves padding_idx to F.embedding": lambda: (
            torch.embedding(torch.ones(3, 2), torch.tensor([1]), 7),
            run(lambda: F.embedding(torch.tensor([1]), torch.ones(3, 2), padding_idx=7))[0],
        ),
        "rot90": lambda: (
            torch.rot90(torch.arange(6).reshape(2, 3), 2),
            torch.rot90(torch.arange(6).reshape(2, 3), -1, (1, 0)),
            torch.arange(24).reshape(2, 3, 4).rot90(3, [0, 2]),
            grad_of(lambda a: a.rot90()),
        ),
        "rot90 errors": lambda: [
            run(f)[0]
            for f in (
                lambda: torch.rot90(torch.arange(3), 1),
                lambda: torch.rot90(torch.ones(2, 2), 1, (0, 0)),
                lambda: torch.rot90(torch.ones(2, 2), 1, (0, 5)),
                lambda: torch.rot90(torch.ones(2, 2), 1, (0, 1, 0)),
            )
        ],
        "index_copy": lambda: (
            x.index_copy(1, torch.tensor([3, 0]), torch.tensor([[10.0, 20.0], [30.0, 40.0]])),
            torch.zeros(3, 2).index_copy_(0, torch.tensor([2]), torch.ones(1, 2)),
            grad_of(lambda a: a.index_copy(0, torch.tensor([1]), a[:1] * 3)),
        ),
        "index_copy errors": lambda: [
            run(f)[0]
            for f in (
                lambda: x.index_copy(0, torch.tensor([0], dtype=torch.int32), x[:1]),
                lambda: x.index_copy(0, torch.tensor([0]), x[:1].double()),
            )
        ],
        "unravel_index": lambda: (
            torch.unravel_index(torch.tensor([4, 1, -1]), (2, 3)),
            torch.unravel_index(torch.tensor(5), (2, 3)),
        ),
        "unravel_index errors": lambda: [
            run(f)[0]
            for f in (
                lambda: torch.unravel_index(torch.tensor([1.0]), (2, 3)),
                lambda: torch.unravel_index(5, (2, 3)),
            )
        ],
        "native_layer_norm and dropout_": lambda: (
            torch.native_layer_norm(x, [4], None, None, 1e-5),
            torch.dropout_(torch.ones(3), 0.0, True),
            torch.dropout_(torch.ones(3), 0.5, False),
            torch.multinomial(torch.tensor([0.0, 1.0]), 2, True),
        ),
        "unique keyword forms": lambda: (
            x.round().unique(sorted=True, return_counts=True),
            torch.unique(torch.tensor([[1, 2], [1, 2]]), dim=0, return_inverse=True),
        ),
    }


NAMES = sorted(cases(leafkit))


@pytest.mark.parametrize("name", NAMES)
def test_same_as_pytorch(name):
    got = run(cases(leafkit)[name])
    want = run(cases(torch)[name])
    assert same(got, want), (got, want)


def test_hardsigmoid_second_derivative_is_not_implemented_as_in_pytorch():
    def case(lib):
        a = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(a).sum(), a, create_graph=True)
        return run(lambda: g.sum().backward())[0], g.grad_fn.name()

    assert case(leafkit) == case(torch)


def test_module_list_is_registered_for_the_optimizer():
    """A ModuleList's parameters reach the optimizer (a plain Python list would hide them)."""
    layers = leafkit.nn.ModuleList([leafkit.nn.Linear(2, 2), leafkit.nn.Linear(2, 1)])
    holder = leafkit.nn.Module()
    holder.layers = layers
    assert len(list(holder.parameters())) == 4
    assert collections.Counter(type(m).__name__ for m in holder.modules()) == {
        "Module": 1,
        "ModuleList": 1,
        "Linear": 2,
    }
