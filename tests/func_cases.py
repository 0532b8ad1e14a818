"""``torch.func`` experiments as functions of a ``torch``-like module (leafkit or PyTorch) and a :class:`Log`.

``tests/parity/test_func_parity.py`` runs every case on both and compares what
they logged: values, shapes, dtypes, ``requires_grad`` and ``grad_fn`` names of
the results, printed tensors, error classes and messages, warnings.  Random
values are never compared, only how they behave (equal or different across
samples).
"""

from __future__ import annotations

import functools
import math
import re
import warnings


class Log:
    """What a case observed, normalised so that the two libraries' logs compare."""

    def __init__(self, torch):
        self.torch = torch
        self.items = []

    def norm(self, v):
        t = self.torch
        if isinstance(v, t.Tensor):
            fn = v.grad_fn
            return (
                "tensor",
                _round(v.detach().tolist()),
                tuple(v.shape),
                str(v.dtype),
                v.requires_grad,
                fn.name() if fn is not None else None,
            )
        if isinstance(v, dict):
            return ("dict", tuple((k, self.norm(x)) for k, x in v.items()))
        if isinstance(v, (tuple, list)):
            return (type(v).__name__, tuple(self.norm(x) for x in v))
        if isinstance(v, float):
            return _round(v)
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if hasattr(v, "next_functions"):
            return ("node", v.name())
        return repr(v)

    def value(self, label, v):
        self.items.append((label, self.norm(v)))

    def text(self, label, s):
        """A printed form, with object addresses removed."""
        self.items.append((label, re.sub(r" at 0x[0-9a-f]+", "", str(s))))

    def error(self, label, fn):
        """The error ``fn()`` raises: class and message (first line, without PyTorch's C++ location)."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
        except Exception as e:  # noqa: BLE001 - the error is the observation
            msg = str(e).split(" (Triggered internally")[0]
            self.items.append((label, "error", type(e).__name__, msg))
        else:
            self.items.append((label, "error", None, None))

    def warnings(self, label, fn):
        """The warnings ``fn()`` gives (category and first line), and what it returns."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn()
        msgs = sorted(
            {
                (w.category.__name__, str(w.message).splitlines()[0].split(" (Triggered internally")[0])
                for w in caught
                if not issubclass(w.category, DeprecationWarning)
            }
        )
        self.items.append((label, "warnings", tuple(msgs)))
        return out


def _round(x):
    if isinstance(x, list):
        return [_round(v) for v in x]
    if isinstance(x, float):
        return "nan" if math.isnan(x) else (x if math.isinf(x) else round(x, 4))
    return x


def _func(torch):
    return torch.func


# -- vmap --------------------------------------------------------------------------------------------------------------
def vmap_in_out_dims(torch, log):
    vmap = _func(torch).vmap
    x = torch.arange(24.0).reshape(2, 3, 4)
    y = torch.arange(4.0)
    log.value("in_dims=0", vmap(lambda t: t.sum(0))(x))
    log.value("in_dims=1", vmap(lambda t: t * 2, in_dims=1)(x))
    log.value("in_dims=-1", vmap(lambda t: t.sum(), in_dims=-1)(x))
    log.value("in_dims=(0, None)", vmap(lambda a, b: a * b, in_dims=(0, None))(x, y))
    log.value("in_dims=(2, 0)", vmap(lambda a, b: a * b, in_dims=(2, 0))(x, y))
    log.value("out_dims=1", vmap(lambda t: t * 1, out_dims=1)(x))
    log.value("out_dims=-1", vmap(lambda t: t + 1, out_dims=-1)(x))
    log.value("out_dims=(0, 1)", vmap(lambda t: (t, t.sum(0)), out_dims=(0, 1))(x))
    log.value("out_dims None", vmap(lambda t: (t.sum(), y), out_dims=(0, None))(x))
    log.value("unbatched output expanded", vmap(lambda t: y)(x))
    log.value("nested in_dims", vmap(lambda p: p[0] + p[1]["w"], in_dims=((0, {"w": None}),))((x, {"w": y})))
    log.value("dict output", vmap(lambda t: {"s": t.sum(), "m": t.max()})(x))
    log.value("list input", vmap(lambda ts: ts[0] - ts[1])([x, x * 2]))
    log.value("kwargs not mapped", vmap(lambda t, scale=1.0: t * scale)(x, scale=y))
    log.value("non-tensor arg", vmap(lambda t, k: t * k, in_dims=(0, None))(x, 3))
    log.value("chunk_size=1", vmap(lambda t: t.sum(0), chunk_size=1)(x))
    log.value("chunk_size=5", vmap(lambda t: t.sum(0), chunk_size=5)(x))
    log.value("chunk_size out_dims=1", vmap(lambda t: t.sum(0), chunk_size=1, out_dims=1)(x))
    log.value("torch.vmap", torch.vmap(lambda t: t.mean())(x))
    log.value("nested vmap", vmap(vmap(lambda t: t.sum()))(x))
    log.value("nested in_dims", vmap(vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(1, None))(x, y))
    log.value("nested closure", vmap(lambda a: vmap(lambda b: (a * b).sum())(x[0]))(x[1]))


def vmap_errors(torch, log):
    vmap = _func(torch).vmap
    x = torch.arange(6.0).reshape(3, 2)

    def named(t):
        return t

    log.error("in_dim out of range", lambda: vmap(named, in_dims=2)(x))
    log.error("in_dims structure", lambda: vmap(lambda t: t, in_dims=(0, 0))(x))
    log.error("in_dims list", lambda: vmap(lambda t: t, in_dims=[0])(x))
    log.error("in_dims None", lambda: vmap(lambda t: t, in_dims=None)(x))
    log.error("in_dims str inside", lambda: vmap(lambda t: t, in_dims=("a",))(x))
    log.error("nothing mapped", lambda: vmap(lambda t: t, in_dims=(None,))(x))
    log.error("out_dims out of range", lambda: vmap(lambda t: t, out_dims=2)(x))
    log.error("out_dims structure", lambda: vmap(lambda t: t, out_dims=(0, 0))(x))
    log.error("out_dims str", lambda: vmap(lambda t: t, out_dims="a")(x))
    log.error("float output", lambda: vmap(lambda t: 3.0)(x))
    log.error("float in tuple", lambda: vmap(lambda t: (t, 3.0))(x))
    log.error("sizes differ", lambda: vmap(lambda a, b: a + b)(x, torch.ones(4, 2)))
    log.error("0-d input", lambda: vmap(lambda t: t)(torch.tensor(1.0)))
    log.error("no inputs", lambda: vmap(named)())
    log.error("float input", lambda: vmap(lambda t: t)(3.0))
    log.error("batched output, out_dims None", lambda: vmap(lambda t: t, out_dims=None)(x))
    log.error("randomness value", lambda: vmap(lambda t: t, randomness="bad"))
    log.error("chunk_size 0", lambda: vmap(lambda t: t, chunk_size=0))
    log.error("partial name", lambda: vmap(functools.partial(lambda t, k: t, k=1), in_dims=5)(x))
    log.error(".item()", lambda: vmap(lambda t: t.sum().item())(x))
    log.error("float()", lambda: vmap(lambda t: float(t.sum()))(x))
    log.error("int()", lambda: vmap(lambda t: int(t.sum()))(x))
    log.error("bool()", lambda: vmap(lambda t: bool(t.sum() > 0))(x))
    log.error("if tensor", lambda: vmap(lambda t: t if t.sum() > 0 else -t)(x))
    log.error(".tolist()", lambda: vmap(lambda t: t.tolist())(x))
    log.error(".numpy()", lambda: vmap(lambda t: t.numpy())(x))
    log.error("data_ptr", lambda: vmap(lambda t: t.data_ptr())(x))
    log.error("inplace into unbatched", lambda: vmap(lambda t: torch.zeros(2).add_(t))(x))
    log.error("copy_ into unbatched", lambda: vmap(lambda t: torch.zeros(2).copy_(t))(x))
    log.error("setitem into unbatched", lambda: vmap(lambda t: torch.zeros(2).__setitem__(0, t[0]))(x))
    log.error("random, error mode", lambda: vmap(lambda t: t + torch.randn(2))(x))
    log.error("rand of a shape, error mode", lambda: vmap(lambda t: torch.rand(t.shape))(x))
    log.error("dropout, error mode", lambda: vmap(lambda t: torch.nn.functional.dropout(t, 0.5))(x))
    log.error("mask index", lambda: vmap(lambda t: t[t > 2])(x))
    log.error("masked_select batched mask", lambda: vmap(lambda t: torch.masked_select(t, t > 2))(x))
    log.error("requires_grad_ inside", lambda: vmap(lambda t: t.detach().requires_grad_())(x))
    log.error("autograd.grad inside", lambda: vmap(lambda t: torch.autograd.grad((t * 2).sum(), t))(x))
    log.error("shape error", lambda: vmap(lambda t: t @ torch.ones(3))(x))
    log.error("mm shape error", lambda: vmap(lambda t: torch.mm(t.view(1, 2), torch.ones(3, 1)))(x))
    for name, f in [
        ("mm dims", lambda t: torch.mm(t, torch.ones(2, 2))),
        ("mm u-b", lambda t: torch.mm(torch.ones(1, 3), t.view(2, 1))),
        ("mm b-b", lambda t: torch.mm(t.view(1, 2), t.view(1, 2))),
        ("mv dims", lambda t: torch.mv(t, t)),
        ("mv b-u", lambda t: torch.mv(t.view(1, 2), torch.ones(3))),
        ("mv u-b", lambda t: torch.mv(torch.ones(1, 3), t)),
        ("dot dims", lambda t: torch.dot(t.view(1, 2), t.view(1, 2))),
        ("dot b-b", lambda t: torch.dot(t, torch.cat([t, t]))),
        ("dot u-b", lambda t: torch.dot(torch.ones(3), t)),
        ("bmm dims", lambda t: torch.bmm(t, t)),
        ("bmm b-u", lambda t: torch.bmm(t.view(1, 1, 2), torch.ones(1, 3, 1))),
        ("bmm b-b", lambda t: torch.bmm(t.view(1, 1, 2), t.view(1, 1, 2))),
        ("addmm", lambda t: torch.addmm(torch.ones(2), t.view(1, 2), torch.ones(3, 2))),
        ("matmul 2", lambda t: t.view(1, 2) @ torch.ones(3, 4)),
        ("dtype mm", lambda t: torch.mm(t.view(1, 2), torch.ones(2, 2, dtype=torch.float64))),
        ("mul_ into unbatched", lambda t: torch.zeros(2).mul_(t.sum())),
    ]:
        log.error(name, lambda f=f: vmap(f)(x))


def vmap_inside(torch, log):
    """What a function sees inside vmap: shapes, autograd flags, printing."""
    vmap = _func(torch).vmap
    x = torch.arange(6.0).reshape(3, 2).requires_grad_()
    seen = []

    def f(t):
        y = t * 2
        seen.append((tuple(t.shape), t.dim(), t.requires_grad, t.grad_fn, t.is_leaf, y.requires_grad, y.grad_fn))
        seen.append(repr(t))
        seen.append(repr(y))
        return y

    out = vmap(f)(x)
    log.value("seen", seen[0])
    log.text("repr input", seen[1])
    log.text("repr computed", seen[2])
    log.value("output", out)
    nested = []
    vmap(vmap(lambda t: nested.append(repr(t)) or t))(torch.arange(4.0).reshape(2, 2))
    log.text("repr nested", nested[0])


def vmap_randomness(torch, log):
    vmap = _func(torch).vmap
    x = torch.zeros(4, 3)

    def rows_equal(out):
        return [bool((out[i] == out[0]).all()) for i in range(1, out.shape[0])]

    log.value("same: randn", rows_equal(vmap(lambda t: t + torch.randn(3), randomness="same")(x)))
    log.value("different: randn", rows_equal(vmap(lambda t: t + torch.randn(3), randomness="different")(x)))
    log.value("same: rand", rows_equal(vmap(lambda t: torch.rand(t.shape), randomness="same")(x)))
    log.value("different: rand", rows_equal(vmap(lambda t: torch.rand(t.shape), randomness="different")(x)))
    drop = torch.nn.functional.dropout
    ones = torch.ones(4, 50)
    log.value("same: dropout", rows_equal(vmap(lambda t: drop(t, 0.5), randomness="same")(ones)))
    log.value("different: dropout", rows_equal(vmap(lambda t: drop(t, 0.5), randomness="different")(ones)))
    log.value("same: chunks", rows_equal(vmap(lambda t: t + torch.rand(3), randomness="same", chunk_size=2)(x)))
    log.value("different: normal_", rows_equal(vmap(lambda t: t.clone().normal_(), randomness="different")(x)))
    log.error(
        "different: normal_ unbatched", lambda: vmap(lambda t: torch.zeros(3).normal_(), randomness="different")(x)
    )
    log.value("same: normal_ unbatched", rows_equal(vmap(lambda t: torch.zeros(3).normal_(), randomness="same")(x)))
    log.error("nested: outer error", lambda: vmap(vmap(lambda t: torch.rand(1), randomness="same"))(x))
    log.value("shapes", tuple(vmap(lambda t: torch.randn(2, 5), randomness="different")(x).shape))


def vmap_inplace_and_views(torch, log):
    vmap = _func(torch).vmap
    x = torch.arange(6.0).reshape(3, 2)

    def f(t):
        z = t.clone()
        z.add_(1)
        z[0] = t[1] * 10
        z.mul_(torch.tensor([1.0, -1.0]))
        return z

    log.value("in place", vmap(f)(x))

    def g(t):
        z = torch.zeros_like(t)
        z.copy_(t)
        w = t.new_zeros(2)
        w[1] = t.sum()
        return z + w

    log.value("into zeros_like, new_zeros", vmap(g)(x))
    y = x.clone()
    vmap(lambda t: t.mul_(2))(y)
    log.value("in place on the input", y)
    z = x.clone()
    vmap(lambda t: t[0].fill_(-1))(z)
    log.value("through a view", z)
    log.value("t_", vmap(lambda t: t.clone().unsqueeze_(0).t_())(x))


def vmap_ops(torch, log):
    """Ops of each family under vmap, against the loop, with batched and unbatched operands."""
    vmap = _func(torch).vmap
    F = torch.nn.functional
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
    w = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    idx = torch.tensor([2, 0])
    log.value("matmul vec", vmap(lambda t: w @ t)(x))
    log.value("matmul mat", vmap(lambda t, m: t @ m, in_dims=(0, None))(x, w.t()))
    log.value("mm both", vmap(lambda a, b: torch.mm(a.unsqueeze(0), b.unsqueeze(1)))(x, x))
    log.value("dot", vmap(torch.dot)(x, x))
    log.value("bmm", vmap(lambda a: torch.bmm(a.view(1, 1, 3), w.t().unsqueeze(0)))(x))
    log.value("linear", vmap(lambda t: F.linear(t, w, torch.tensor([0.1, 0.2])))(x))
    log.value("softmax", vmap(lambda t: t.softmax(0))(x))
    log.value("log_softmax", vmap(lambda t: F.log_softmax(t, dim=-1))(x))
    log.value("cross_entropy", vmap(lambda t, y: F.cross_entropy(t.unsqueeze(0), y.unsqueeze(0)))(x, idx))
    log.value("cross_entropy none", vmap(lambda t: F.cross_entropy(t.view(1, 3), idx[:1], reduction="none"))(x))
    log.value("nll_loss sum", vmap(lambda t, y: F.nll_loss(t.view(1, 3), y.view(1), reduction="sum"))(x, idx))
    log.value("mse_loss", vmap(lambda t: F.mse_loss(t, w[0]))(x))
    log.value("mse_loss sum", vmap(lambda t, u: F.mse_loss(t, u, reduction="sum"))(x, w))
    log.value("bce logits", vmap(lambda t: F.binary_cross_entropy_with_logits(t, torch.ones(3)))(x))
    log.value("gather", vmap(lambda t, i: t.gather(0, i.view(1)))(x, idx))
    log.value("index tensor", vmap(lambda t, i: t[i])(x, idx))
    log.value("index list", vmap(lambda t: t[[0, 2]])(x))
    log.value("index 2-d", vmap(lambda t, i: t.view(3, 1)[i, 0])(x, idx))
    log.value("index unbatched by batched", vmap(lambda i: w[0][i])(idx))
    log.value("index_select", vmap(lambda t: t.index_select(0, torch.tensor([1, 1])))(x))
    log.value("cat", vmap(lambda t: torch.cat([t, w[0]]))(x))
    log.value("stack", vmap(lambda t: torch.stack([t, w[1]], 1))(x))
    log.value("max dim", vmap(lambda t: t.max(0))(x))
    log.value("sort", vmap(lambda t: t.sort(descending=True).indices)(x))
    log.value("sum all", vmap(lambda t: t.sum())(x))
    log.value("var", vmap(lambda t: t.var())(x))
    log.value("norm", vmap(lambda t: t.norm())(x))
    log.value("where", vmap(lambda t: torch.where(t > 0, t, 0.0))(x))
    log.value("compare", vmap(lambda t: (t > 0) & (t < 1.0))(x))
    log.value("any", vmap(lambda t: (t > 1).any())(x))
    log.value("isnan", vmap(lambda t: torch.isnan(t / t))(x - x))
    log.value("expand", vmap(lambda t: t.expand(2, 3))(x))
    log.value("view", vmap(lambda t: t.view(3, 1).t())(x))
    log.value("permute", vmap(lambda t: t.view(1, 3, 1).permute(2, 0, 1))(x))
    log.value("unbind", vmap(lambda t: t.unbind(0)[1])(x))
    log.value("0-d promotion", vmap(lambda s: s * torch.ones(2))(torch.tensor([1.0, 2.0], dtype=torch.float64)))
    log.value("int sum", vmap(lambda t: t.sum())(torch.arange(6).view(2, 3)))
    bx = torch.tensor([[[0.5, -1.0], [2.0, 1.0], [0.0, 3.0]], [[1.5, 0.25], [-0.5, 2.0], [1.0, 1.0]]])
    stats = (torch.tensor([0.5, -0.5]), torch.tensor([2.0, 0.5]))
    log.value("batch_norm eval", vmap(lambda t: F.batch_norm(t, *stats))(bx))
    log.value("batch_norm train", vmap(lambda t: F.batch_norm(t, None, None, training=True))(bx))
    wb = (torch.tensor([2.0, 1.0]), torch.tensor([0.0, 1.0]))
    log.value("batch_norm weight", vmap(lambda t: F.batch_norm(t, None, None, *wb, training=True))(bx))
    log.error("batch_norm running stats", lambda: vmap(lambda t: F.batch_norm(t, *stats, training=True))(bx))
    log.value(
        "grad through batch_norm",
        torch.func.vmap(torch.func.grad(lambda t: F.batch_norm(t, None, None, training=True).pow(3).sum()))(bx),
    )


# -- grad and friends --------------------------------------------------------------------------------------------------
def grad_levels(torch, log):
    fn = _func(torch)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    plain = torch.tensor([1.0, 2.0])
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    cube = lambda t: (t**3).sum()  # noqa: E731
    log.value("x requires grad", fn.grad(cube)(x))
    log.value("graph", [(n.name() if n is not None else None) for n, _ in fn.grad(cube)(x).grad_fn.next_functions])
    log.value("x plain", fn.grad(cube)(plain))
    log.value("closes over w", fn.grad(lambda t: (t * w).sum())(plain))
    log.value("closes over x itself", fn.grad(lambda t: (t * x).sum())(x))
    log.value("grad of grad", fn.grad(lambda t: fn.grad(cube)(t).sum())(x))
    log.value("grad grad plain", fn.grad(lambda t: fn.grad(cube)(t).sum())(plain))
    log.value("third", fn.grad(lambda t: fn.grad(lambda u: fn.grad(cube)(u).sum())(t).sum())(plain))
    with torch.no_grad():
        log.value("under no_grad", fn.grad(cube)(x))
    seen = []

    def spy(t):
        y = t * 2
        seen.append((t.requires_grad, t.grad_fn, t.is_leaf, y.requires_grad, y.grad_fn))
        return (y**2).sum()

    fn.grad(spy)(x)
    fn.grad(spy)(plain)
    log.value("inside", seen)
    g = fn.grad(cube)(x)
    g.sum().backward()
    log.value("backward through grad", x.grad)
    log.value(
        "autograd.grad inside",
        fn.grad(lambda t: torch.autograd.grad((t**3).sum(), t, create_graph=True)[0].sum())(plain),
    )
    log.value("unused input", fn.grad(lambda a, b: (a * 2).sum(), argnums=1)(plain, plain))
    log.value("independent output", fn.grad(lambda t: torch.tensor(3.0))(plain))
    log.value("argnums tuple", fn.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(plain, w))
    log.value("argnums -1", fn.grad(lambda a, b: (a * b).sum(), argnums=-1)(plain, w))
    log.value("dict argument", fn.grad(lambda p: (p["a"] * p["b"]).sum())({"a": plain, "b": w}))
    log.value("has_aux", fn.grad(lambda t: ((t**2).sum(), t * 3), has_aux=True)(plain))
    log.value("grad_and_value", fn.grad_and_value(cube)(x))
    log.value("grad_and_value aux", fn.grad_and_value(lambda t: (cube(t), {"v": t.sum()}), has_aux=True)(x))
    log.value("kwargs", fn.grad(lambda t, scale: (t * scale).sum())(plain, scale=w))
    log.value("vmap(grad)", fn.vmap(fn.grad(cube))(torch.arange(6.0).view(3, 2)))
    log.value("grad(vmap)", fn.grad(lambda t: fn.vmap(lambda u: (u**2).sum())(t).sum())(torch.arange(6.0).view(3, 2)))
    log.value(
        "per-sample, unbatched weight",
        fn.vmap(fn.grad(lambda w_, x_: (w_ * x_).sum().sin()), in_dims=(None, 0))(plain, torch.arange(6.0).view(3, 2)),
    )
    log.value("vmap(grad(grad))", fn.vmap(fn.grad(fn.grad(lambda t: t.sin())))(torch.tensor([0.0, 1.0, 2.0])))
    seen.clear()
    fn.vmap(fn.grad(spy))(torch.arange(6.0).view(3, 2))
    log.value("inside vmap(grad)", seen)


def grad_errors(torch, log):
    fn = _func(torch)
    x = torch.tensor([1.0, 2.0])
    log.error("vector output", lambda: fn.grad(lambda t: t)(x))
    log.error("float output", lambda: fn.grad(lambda t: 3.0)(x))
    log.error("argnum out of range", lambda: fn.grad(lambda t: t.sum(), argnums=1)(x))
    log.error("argnums empty", lambda: fn.grad(lambda t: t.sum(), argnums=())(x))
    log.error("argnums repeated", lambda: fn.grad(lambda t: t.sum(), argnums=(0, 0))(x))
    log.error("argnums float", lambda: fn.grad(lambda t: t.sum(), argnums=0.5)(x))
    log.error("has_aux not a tuple", lambda: fn.grad(lambda t: t.sum(), has_aux=True)(x))
    log.error("aux not tensors", lambda: fn.grad(lambda t: (t.sum(), 1), has_aux=True)(x))
    log.error("float argument", lambda: fn.grad(lambda t: t.sum())(3.0))
    log.error("int tensor", lambda: fn.grad(lambda t: t.sum())(torch.tensor([1, 2])))
    log.error("vjp int output", lambda: fn.vjp(lambda t: t.long(), x))
    log.error("vjp no output", lambda: fn.vjp(lambda t: None, x))
    log.error("vjp float primal", lambda: fn.vjp(torch.sin, 3.0))
    log.error("vjp aux", lambda: fn.vjp(lambda t: t, x, has_aux=True))
    log.error("vjp cotangent structure", lambda: fn.vjp(torch.sin, x)[1]((x, x)))
    log.error("vjp cotangent shape", lambda: fn.vjp(torch.sin, x)[1](torch.ones(3)))
    log.error("jvp primals not tuple", lambda: fn.jvp(torch.sin, x, (x,)))
    log.error("jvp structure", lambda: fn.jvp(torch.sin, (x,), x))
    log.error("jvp tangent size", lambda: fn.jvp(torch.sin, (x,), (torch.ones(3),)))
    log.error("jvp float output", lambda: fn.jvp(lambda t: 3.0, (x,), (x,)))
    log.error("jvp strict", lambda: fn.jvp(lambda t: torch.ones(2), (x,), (x,), strict=True))
    log.error("jvp no primals", lambda: fn.jvp(torch.sin, (), ()))
    log.error("jvp float primal", lambda: fn.jvp(torch.sin, (3.0,), (x,)))
    log.error("jvp aux", lambda: fn.jvp(lambda t: t, (x,), (x,), has_aux=True))
    log.error("jacrev chunk_size", lambda: fn.jacrev(torch.sin, chunk_size=0))


def derivatives(torch, log):
    fn = _func(torch)
    x = torch.tensor([0.5, -1.0, 2.0])
    y = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    f = lambda t: t.sin() * t  # noqa: E731
    out, vjp_fn = fn.vjp(f, x)
    log.value("vjp", (out, vjp_fn(torch.ones(3))))
    log.value("vjp twice", vjp_fn(torch.tensor([1.0, 0.0, 2.0])))
    out2, vjp2 = fn.vjp(lambda a, b: {"s": a.sum() * b, "p": a[:2] @ b}, x, y)
    log.value("vjp dict", vjp2({"s": torch.ones(2, 2), "p": torch.ones(2)}))
    out3, vjp3, aux = fn.vjp(lambda t: (t.exp(), t.sum()), x, has_aux=True)
    log.value("vjp aux", (out3, vjp3(x), aux))
    xr = x.clone().requires_grad_()
    log.value("vjp of x that requires grad", fn.vjp(f, xr)[1](torch.ones(3)))
    log.value("jvp", fn.jvp(f, (x,), (torch.ones(3),)))
    log.value("jvp two", fn.jvp(lambda a, b: a.sum() * b, (x, y), (torch.ones(3), torch.zeros(2, 2))))
    log.value("jvp aux", fn.jvp(lambda t: (t.cos(), t * 2), (x,), (x,), has_aux=True))
    log.value("jvp requires grad", fn.jvp(f, (xr,), (torch.ones(3),)))
    out4, jvp_fn = fn.linearize(f, x)
    log.value("linearize", (out4, jvp_fn(torch.ones(3)), jvp_fn(x)))
    log.error("linearize shape", lambda: fn.linearize(f, x)[1](torch.ones(2)))
    log.value("jacrev", fn.jacrev(f)(x))
    log.value("jacfwd", fn.jacfwd(f)(x))
    g = lambda a, b: (a.exp().sum() * b, a[:2] @ b)  # noqa: E731
    log.value("jacrev argnums", fn.jacrev(g, argnums=(0, 1))(x, y))
    log.value("jacfwd argnums", fn.jacfwd(g, argnums=(0, 1))(x, y))
    log.value("jacrev chunk 1", fn.jacrev(f, chunk_size=1)(x))
    log.value("jacrev chunk 2", fn.jacrev(g, chunk_size=2)(x, y))
    log.value("jacrev aux", fn.jacrev(lambda t: (f(t), t.sum()), has_aux=True)(x))
    log.value("jacfwd aux", fn.jacfwd(lambda t: (f(t), t.sum()), has_aux=True)(x))
    log.value("jacrev dict", fn.jacrev(lambda p: p["a"] * p["b"])({"a": x, "b": x.flip(0)}))
    log.value("hessian", fn.hessian(lambda t: (t**3).sum() * t[0])(x))
    log.value("hessian two args", fn.hessian(lambda a, b: (a**2).sum() * b.sum(), argnums=(0, 1))(x, y))
    log.value("jacrev(jacrev)", fn.jacrev(fn.jacrev(lambda t: t.sin().sum()))(x))
    log.value("jacfwd(jacfwd)", fn.jacfwd(fn.jacfwd(lambda t: t.sin() * t[0]))(x))
    log.value("vmap(jacrev)", fn.vmap(fn.jacrev(torch.sin))(y))
    log.value("vmap(hessian)", fn.vmap(fn.hessian(lambda t: (t**3).prod()))(y))
    log.value("jacrev requires grad", fn.jacrev(f)(xr))
    log.value("grad(jacrev)", fn.grad(lambda t: fn.jacrev(f)(t).sum())(x))


# -- modules as functions ----------------------------------------------------------------------------------------------
def _net(torch):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for k, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (k + 1) / 4)
    return net


def modules(torch, log):
    fn = _func(torch)
    net = _net(torch)
    x = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -1.0]])
    params = {k: v.detach() for k, v in net.named_parameters()}
    zeros = {k: torch.zeros_like(v) for k, v in params.items()}
    log.value("functional_call", fn.functional_call(net, zeros, (x,)))
    log.value("module unchanged", net(x))
    log.value("one tensor as args", fn.functional_call(net, {"0.bias": torch.ones(4)}, x))
    log.value(
        "tuple of dicts", fn.functional_call(net, ({"0.weight": zeros["0.weight"]}, {"2.bias": torch.ones(2)}), x)
    )
    log.error(
        "repeated key", lambda: fn.functional_call(net, ({"0.bias": torch.ones(4)}, {"0.bias": torch.ones(4)}), x)
    )
    log.error("not a dict", lambda: fn.functional_call(net, [1], x))
    log.error("strict missing", lambda: fn.functional_call(net, {"0.bias": torch.ones(4)}, x, strict=True))
    log.error("strict unexpected", lambda: fn.functional_call(net, {**params, "extra": torch.ones(1)}, x, strict=True))
    log.value("strict all", fn.functional_call(net, params, (x,), strict=True))
    log.error("not a tensor", lambda: fn.functional_call(net, {"0.bias": 3}, x))
    log.value("restored after error", [tuple(p.shape) for p in net.parameters()])

    def loss(p, xs, ys):
        out = fn.functional_call(net, p, (xs.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, ys.unsqueeze(0))

    per_sample = fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, x, torch.tensor([1, 0]))
    log.value("per-sample grads", per_sample)
    full = {k: v.clone().requires_grad_() for k, v in params.items()}
    connected = fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(full, x, torch.tensor([1, 0]))
    # their grad_fn is the last op of each library's batched computation, which need not be the same op
    log.value("per-sample, params require grad", {k: (v.detach(), v.requires_grad) for k, v in connected.items()})

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(2, 2, bias=False)
            self.b = torch.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, z):
            return self.b(self.a(z))

    tied = Tied()
    z = torch.tensor([1.0, 2.0])
    eye = torch.eye(2) * 2
    log.value("tied", fn.functional_call(tied, {"a.weight": eye}, z))
    log.value("untied", fn.functional_call(tied, {"a.weight": eye}, z, tie_weights=False).shape)
    log.error("tied, two values", lambda: fn.functional_call(tied, {"a.weight": eye, "b.weight": eye * 2}, z))

    models = [_net(torch) for _ in range(3)]
    for k, m in enumerate(models):
        with torch.no_grad():
            for p in m.parameters():
                p.mul_(k + 1)
    stacked, buffers = fn.stack_module_state(models)
    log.value("stacked", {k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in stacked.items()})
    log.value("buffers", buffers)
    base = _net(torch)
    ensemble = fn.vmap(lambda p, b, xs: fn.functional_call(base, (p, b), (xs,)), in_dims=(0, 0, None))
    log.value("ensemble", ensemble(stacked, buffers, x))
    log.error("no models", lambda: fn.stack_module_state([]))
    models[1].train(False)
    log.error("modes differ", lambda: fn.stack_module_state(models))
    models[1].train(True)
    log.error("classes differ", lambda: fn.stack_module_state([_net(torch), torch.nn.Linear(3, 2)]))


def autograd_functional(torch, log):
    AF = torch.autograd.functional
    x = torch.tensor([0.5, -1.0, 2.0])
    y = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    f = lambda t: t.sin() * t  # noqa: E731
    g = lambda a, b: (a.exp().sum() * b, a[:2] @ b)  # noqa: E731
    log.value("vectorize", AF.jacobian(f, x, vectorize=True))
    log.value("forward-mode", AF.jacobian(f, x, vectorize=True, strategy="forward-mode"))
    log.value("vectorize tuples", AF.jacobian(g, (x, y), vectorize=True))
    log.value("forward-mode tuples", AF.jacobian(g, (x, y), vectorize=True, strategy="forward-mode"))
    log.value("hessian vectorize", AF.hessian(lambda t: (t**3).sum() * t[0], x, vectorize=True))
    h = AF.hessian(lambda t: (t**3).sum() * t[0], x, vectorize=True, outer_jacobian_strategy="forward-mode")
    # PyTorch's result requires grad here (its dual inputs were made to require grad); leafkit's does not
    log.value("hessian forward-mode", h.detach())
    log.value("hessian tuples", AF.hessian(lambda a, b: (a**2).sum() * b.sum(), (x, y), vectorize=True))
    for label, kw in [
        ("forward-mode without vectorize", {"strategy": "forward-mode"}),
        ("forward-mode create_graph", {"strategy": "forward-mode", "vectorize": True, "create_graph": True}),
        ("forward-mode strict", {"strategy": "forward-mode", "vectorize": True, "strict": True}),
        ("vectorize strict", {"vectorize": True, "strict": True}),
        ("strategy", {"strategy": "x"}),
    ]:
        log.error(label, lambda kw=kw: AF.jacobian(f, x, **kw))
    log.error("hessian strategy", lambda: AF.hessian(f, x, outer_jacobian_strategy="y"))
    xr = x.clone().requires_grad_()
    r = AF.jacobian(f, xr, vectorize=True, create_graph=True)
    log.value("create_graph", (r.requires_grad, r.grad_fn is not None))
    log.value("no create_graph", AF.jacobian(f, xr, vectorize=True))


def transforms_rules(torch, log):
    """What a function may not do inside a transform, nesting to depth three, and autograd.Function."""
    fn = _func(torch)
    x = torch.tensor([1.0, 2.0])
    X = torch.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    log.error("grad: detach().requires_grad_()", lambda: fn.grad(lambda t: (t.detach().requires_grad_() * t).sum())(x))
    log.error("grad: ones().requires_grad_()", lambda: fn.grad(lambda t: (torch.ones(2).requires_grad_() * t).sum())(x))
    log.error("vmap: ones().requires_grad_()", lambda: fn.vmap(lambda t: torch.ones(2).requires_grad_() * t)(X))
    log.value("vmap: ones(requires_grad=True)", fn.vmap(lambda t: torch.ones(2, requires_grad=True) * t)(X))
    log.error("grad: input.requires_grad_()", lambda: fn.grad(lambda t: (t.requires_grad_() * 2).sum())(x))
    log.error("grad: backward()", lambda: fn.grad(lambda t: ((t * 2).sum().backward(), t.sum())[1])(x))
    log.error(
        "vmap: backward()", lambda: fn.vmap(lambda t: ((t * 2).sum().backward(), t)[1])(X.clone().requires_grad_())
    )

    def inner(t):
        (g,) = torch.autograd.grad((t**2).sum(), t, create_graph=True)
        return (g * t).sum()

    log.value("vmap(grad) with autograd.grad inside", fn.vmap(fn.grad(inner))(X))
    log.value("grad(vmap(grad))", fn.grad(lambda a: fn.vmap(fn.grad(lambda t: (t * a).sin().sum()))(X).sum())(x))
    log.value("vmap(grad(vmap))", fn.vmap(fn.grad(lambda a: fn.vmap(lambda t: (t * a).sum())(X).sum()))(X))
    log.value("vmap(vmap(grad))", fn.vmap(fn.vmap(fn.grad(lambda t: t.sin() * t)))(X))
    log.value("grad(grad(vmap))", fn.grad(fn.grad(lambda t: fn.vmap(lambda u: (u * t).exp())(X[:, 0]).sum()))(x[0]))

    class Old(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class New(torch.autograd.Function):
        @staticmethod
        def forward(t):
            return t * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Generated(New):
        generate_vmap_rule = True

    class OwnRule(New):
        @staticmethod
        def vmap(info, in_dims, t):
            return t * 2 + info.batch_size, in_dims[0]

    log.error("old-style Function, vmap", lambda: fn.vmap(Old.apply)(X))
    log.error("old-style Function, grad", lambda: fn.grad(lambda t: Old.apply(t).sum())(x))
    log.value("old-style Function outside", Old.apply(x))
    log.value("setup_context Function, grad", fn.grad(lambda t: New.apply(t).sum())(x))
    log.error("setup_context Function, vmap", lambda: fn.vmap(New.apply)(X))
    log.value("generate_vmap_rule", fn.vmap(Generated.apply)(X))
    log.value("generate_vmap_rule, vmap(grad)", fn.vmap(fn.grad(lambda t: Generated.apply(t).sum()))(X))
    log.value("vmap staticmethod", fn.vmap(OwnRule.apply)(X))


def printing(torch, log):
    """How tensors print inside grad levels and vmap: PyTorch's GradTrackingTensor and BatchedTensor wrappers."""
    fn = _func(torch)
    X = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    shown = []

    def f(t):
        y = t * 2
        shown.extend([repr(t), repr(y), repr(t * w), repr(w * 2)])
        return y.sum()

    fn.vmap(fn.grad(f))(X)
    fn.grad(f)(X[0])
    fn.grad(f)(x)
    fn.vmap(fn.grad(f))(X.clone().requires_grad_())
    fn.grad(lambda a: fn.vmap(lambda t: (shown.append(repr(t)), t.sum())[1])(a).sum())(X)
    fn.grad(fn.grad(lambda t: (shown.append(repr(t)), (t**3).sum())[1]))(torch.tensor(2.0))
    for k, text in enumerate(shown):
        log.text(f"repr {k}", text)


CASES = {
    name: fn
    for name, fn in list(globals().items())
    if callable(fn)
    and name
    in (
        "vmap_in_out_dims",
        "vmap_errors",
        "vmap_inside",
        "vmap_randomness",
        "vmap_inplace_and_views",
        "vmap_ops",
        "grad_levels",
        "grad_errors",
        "derivatives",
        "modules",
        "autograd_functional",
        "transforms_rules",
        "printing",
    )
}
