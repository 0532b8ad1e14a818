"""The source articles' experiments, restated as functions of a ``torch``-like module.

Each case takes ``(torch, rec, dev)``:

* ``torch`` is ``leafkit`` or real PyTorch;
* ``rec`` records observations (:class:`Recorder`);
* ``dev`` moves a tensor "to the other device": ``t.cuda()`` where a cuda
  device exists (leafkit always has one, simulated when there is no GPU),
  or a ``double()`` copy on a CPU-only PyTorch, which makes the same
  autograd point (a differentiable copy is a ``ToCopyBackward0`` non-leaf).

The expected values in ``test_seed_cases.py`` are PyTorch 2.13's real
results; the parity suite runs every case on both libraries and compares.
"""

from __future__ import annotations

import math


class Recorder:
    """Collects ``(label, kind, ...)`` observations in a normalised, comparable form."""

    def __init__(self, torch):
        self.torch = torch
        self.obs = []

    def norm(self, v):
        t = self.torch
        if isinstance(v, t.Tensor):
            vals = v.detach().cpu().tolist()
            return ("tensor", _round(vals), tuple(v.shape))
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (int, float)):
            return _nan_token(float(v)) if not isinstance(v, bool) else v
        if isinstance(v, (tuple, list)):
            return tuple(self.norm(x) for x in v)
        if hasattr(v, "next_functions") or type(v).__name__ == "AccumulateGrad":
            return ("node", v.name() if type(v).__name__ != "AccumulateGrad" else "AccumulateGrad")
        return repr(v)

    def value(self, label, v):
        self.obs.append((label, "value", self.norm(v)))

    def device(self, label, v):
        """A device-type observation: compared only when both sides really ran on cuda."""
        self.obs.append((label, "device", v))

    def error(self, label, fn, key):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the class is the observation
            self.obs.append((label, "error", type(e).__name__, key in str(e)))
        else:
            self.obs.append((label, "error", None, False))

    def warns(self, label, fn, key):
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
        hits = [w for w in caught if key in str(w.message)]
        self.obs.append((label, "warns", tuple(sorted({w.category.__name__ for w in caught})), bool(hits)))


def _round(x):
    if isinstance(x, list):
        return [_round(v) for v in x]
    if isinstance(x, float):
        return _nan_token(x) if math.isnan(x) or math.isinf(x) else round(x, 4)
    return x


def _nan_token(x):
    """NaN as a string, so that two NaN observations compare equal (``nan == nan`` is False)."""
    return "nan" if math.isnan(x) else x


# -- seed 000: "PyTorch——叶子张量" -------------------------------------------------------------
def seed000_leaf_rules(torch, rec, dev):
    torch.manual_seed(0)
    a = torch.randn(3, 3)
    rec.value("a", (a.is_leaf, a.requires_grad))
    a.requires_grad = True
    rec.value("a after toggle", (a.is_leaf, a.requires_grad))
    b = dev(a)
    rec.value("b = a.cuda()", (b.is_leaf, b.requires_grad))
    rec.value("b.grad_fn", b.grad_fn)
    c = b.detach()
    rec.value("c = b.detach()", (c.is_leaf, c.requires_grad))
    d = a + 2
    rec.value("d = a + 2", (d.is_leaf, d.requires_grad))
    e = dev(torch.randn(3, 3)).requires_grad_()
    rec.value("e created on cuda", (e.is_leaf, e.requires_grad))
    f = e.to(a.dtype) if e.dtype != a.dtype else e.to("cpu")
    rec.value("f = e.to('cpu')", (f.is_leaf, f.requires_grad))
    rec.value("f.grad_fn", f.grad_fn)
    rec.device("f.device.type", f.device.type)
    rec.device("e.device.type", e.device.type)


def seed000_appendix(torch, rec, dev):
    x = torch.tensor(2.0, requires_grad=True)
    y = x**2
    z = y**2
    y.retain_grad()
    z.backward(retain_graph=True)
    rec.value("method 1: y.grad", y.grad)
    captured = []
    handle = y.register_hook(lambda g: captured.append(g))
    z.backward()
    handle.remove()
    rec.value("method 2: hook saw", captured[0])
    rec.value("y.grad after second backward (accumulated)", y.grad)
    rec.value("x.grad after two backward passes", x.grad)
    rec.value("hook count", len(captured))
    z2 = (x**2) ** 2
    z2.backward()
    rec.value("removed hook not called", len(captured))
    rec.error("third backward on freed graph", lambda: z.backward(), key="second time")


# -- seed 001: "PyTorch leaf node" ------------------------------------------------------------------
def seed001_clone_detach_cuda(torch, rec, dev):
    made = {
        "a": torch.tensor([1.0], requires_grad=False),
        "b": torch.tensor([1.0], requires_grad=True),
        "c": torch.tensor([1.0], requires_grad=False).clone(),
        "d": torch.tensor([1.0], requires_grad=False).detach(),
        "e": dev(torch.tensor([1.0], requires_grad=False)),
        "f": torch.tensor([1.0], requires_grad=True).clone(),
        "g": torch.tensor([1.0], requires_grad=True).detach(),
        "h": dev(torch.tensor([1.0], requires_grad=True)),
        "i": torch.tensor([1.0], requires_grad=True).clone().detach(),
        "j": torch.tensor([1.0], requires_grad=True).detach().clone(),
        "k": dev(torch.tensor([1.0], requires_grad=True)).detach(),
    }
    for name, t in made.items():
        rec.value(name + ".is_leaf", t.is_leaf)
        rec.value(name + ".requires_grad", t.requires_grad)
    rec.value("f.grad_fn", made["f"].grad_fn)
    rec.value("h.grad_fn", made["h"].grad_fn)
    rec.device("h.device.type", made["h"].device.type)


# -- seed 003: "Pytorch基础：Tensor的detach()方法" ------------------------------------------------------
def seed003_requires_grad_flag(torch, rec, dev):
    x = torch.tensor([2.0], requires_grad=True)
    rec.value("x.requires_grad", x.requires_grad)
    r = x.requires_grad_(False)
    rec.value("requires_grad_ returns self", r is x)
    rec.value("after requires_grad_(False)", x.requires_grad)
    x.requires_grad = True
    rec.value("after attribute set True", x.requires_grad)
    y = x * 3

    def set_nonleaf():
        y.requires_grad = False

    rec.error("set requires_grad on non-leaf", set_nonleaf, key="leaf")
    rec.value("non-leaf unchanged", y.requires_grad)
    rec.error(
        "integer tensor cannot require grad", lambda: torch.tensor([1, 2], requires_grad=True), key="floating point"
    )


def seed003_propagation(torch, rec, dev):
    for xr in (False, True):
        for yr in (False, True):
            x = torch.tensor([2.0], requires_grad=xr)
            y = torch.tensor([2.0], requires_grad=yr)
            z = x * y
            rec.value(f"x{int(xr)}*y{int(yr)} requires_grad", z.requires_grad)
            rec.value(f"x{int(xr)}*y{int(yr)} grad_fn", z.grad_fn)
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([2.0], requires_grad=False)
    rec.value("x/y", x / y)
    rec.value("x/y grad_fn name", (x / y).grad_fn)
    x = torch.tensor([2.0], requires_grad=False)
    y = torch.tensor([2.0], requires_grad=True)
    rec.value("x+y grad_fn", (x + y).grad_fn)
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([2.0], requires_grad=True)
    rec.value("x-y grad_fn", (x - y).grad_fn)
    rec.value("x*y is_leaf", (x * y).is_leaf)


def seed003_no_grad(torch, rec, dev):
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([2.0], requires_grad=True)
    with torch.no_grad():
        z = x * y
        rec.value("grad enabled inside no_grad", torch.is_grad_enabled())
    rec.value("grad enabled after", torch.is_grad_enabled())
    rec.value("z.requires_grad", z.requires_grad)
    rec.value("z.grad_fn", z.grad_fn)
    rec.value("z.is_leaf", z.is_leaf)
    rec.error("z.backward()", lambda: z.backward(), key="does not require grad")


def seed003_leaves_linear(torch, rec, dev):
    x = torch.tensor([2.0], requires_grad=True)
    linear = torch.nn.Linear(1, 1)
    y = x * 2
    rec.value("x.is_leaf", x.is_leaf)
    rec.value("weight.is_leaf", linear.weight.is_leaf)
    rec.value("bias.is_leaf", linear.bias.is_leaf)
    rec.value("weight.requires_grad", linear.weight.requires_grad)
    rec.value("y.is_leaf", y.is_leaf)
    out = linear(x)
    rec.value("linear(x).is_leaf", out.is_leaf)
    out.sum().backward()
    rec.value("weight.grad", linear.weight.grad)
    rec.value("bias.grad", linear.bias.grad)
    rec.value("x.grad is weight", x.grad.item() == linear.weight.item())
    rec.value("weight.shape", list(linear.weight.shape))


def seed003_retain_grad(torch, rec, dev):
    x = torch.tensor([2.0], requires_grad=True)
    y = x**2
    z = y**2
    t = z**2
    z.retain_grad()
    t.backward()
    rec.value("x.grad", x.grad)
    rec.warns("y.grad warns", lambda: y.grad, key="not a leaf")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec.value("y.grad", y.grad)
    rec.value("z.grad", z.grad)
    rec.value("z.retains_grad", z.retains_grad)
    rec.value("y.retains_grad", y.retains_grad)
    rec.value("t.grad_fn", t.grad_fn)


def seed003_detach_shares_storage(torch, rec, dev):
    import warnings

    x = torch.tensor([2.0], requires_grad=True)
    y = x.detach()
    rec.value("y.requires_grad", y.requires_grad)
    rec.value("y.is_leaf", y.is_leaf)
    z1 = y**2
    z2 = x**2
    rec.value("z1.requires_grad", z1.requires_grad)
    rec.value("z1.grad_fn", z1.grad_fn)
    rec.error("z1.backward()", lambda: z1.backward(), key="does not require grad")
    rec.value("z2.requires_grad", z2.requires_grad)
    rec.value("z2.grad_fn", z2.grad_fn)
    z2.backward()
    rec.value("x.grad", x.grad)
    rec.value("different objects", x is not y and id(x) != id(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch deprecates TypedStorage; the pointer is what matters
        rec.value("same storage", x.storage().data_ptr() == y.storage().data_ptr())
    rec.value("same data_ptr", x.data_ptr() == y.data_ptr())
    y.add_(1.0)
    rec.value("in-place on detached changes original", x)


SEED_CASES = {
    "seed000_leaf_rules": seed000_leaf_rules,
    "seed000_appendix": seed000_appendix,
    "seed001_clone_detach_cuda": seed001_clone_detach_cuda,
    "seed003_requires_grad_flag": seed003_requires_grad_flag,
    "seed003_propagation": seed003_propagation,
    "seed003_no_grad": seed003_no_grad,
    "seed003_leaves_linear": seed003_leaves_linear,
    "seed003_retain_grad": seed003_retain_grad,
    "seed003_detach_shares_storage": seed003_detach_shares_storage,
}


def run_case(torch, fn, dev=None):
    rec = Recorder(torch)
    if dev is None:
        dev = default_dev(torch)
    fn(torch, rec, dev)
    return rec.obs


def default_dev(torch):
    """``.cuda()`` where a cuda device exists (leafkit: always), else a float64 copy."""
    has_cuda = torch.cuda.is_available() or getattr(torch.cuda, "backend", lambda: None)() is not None
    return (lambda t: t.cuda()) if has_cuda else (lambda t: t.double())


# -- beyond the articles: engine behaviour the lessons rely on -------------------------------------------
def engine_hooks_and_accumulation(torch, rec, dev):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    order = []
    x.register_hook(lambda g: order.append("leaf") or g * 10)
    y = x * x
    h = y.register_hook(lambda g: order.append("y") or g + 1)
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    rec.value("x.grad after hooked backward", x.grad)
    rec.value("y.grad sees the hook's change", y.grad)
    rec.value("hook order", tuple(order))
    g_before = x.grad
    h.remove()
    y.sum().backward()
    rec.value("x.grad accumulates", x.grad)
    rec.value("accumulated in place", g_before is x.grad)
    rec.value("y.grad accumulates", y.grad)


def engine_next_functions(torch, rec, dev):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0])
    for label, t in (
        ("a+2", a + 2),
        ("2*a", 2 * a),
        ("a**2", a**2),
        ("2/a", 2 / a),
        ("2-a", 2 - a),
        ("a*b", a * b),
        ("(a*b).sum()", (a * b).sum()),
        ("a[0]", a[0]),
        ("a[[0, 1]]", a[torch.tensor([0, 1])]),
        ("a.view(2, 1)", a.view(2, 1)),
        ("a.clone()", a.clone()),
        ("a.double()", a.double()),
        ("a.expand(3, 2)", a.expand(3, 2)),
        ("a @ a", a @ a),
        ("-a", -a),
        ("a.exp()", a.exp()),
        ("a.unsqueeze(0) @ a.unsqueeze(1)", a.unsqueeze(0) @ a.unsqueeze(1)),
        ("a.max()", a.max()),
        ("a.mean()", a.mean()),
        ("a.sum(0)", a.sum(0)),
        ("a.relu()", a.relu()),
    ):
        fn = t.grad_fn
        rec.value(label + " grad_fn", fn)
        rec.value(label + " next", tuple((n, i) for n, i in fn.next_functions))
    acc = (a * 2).grad_fn.next_functions[0][0]
    rec.value("AccumulateGrad.variable is a", acc.variable is a)
    rec.value("AccumulateGrad is cached", acc is (a * 3).grad_fn.next_functions[0][0])


def engine_autograd_grad(torch, rec, dev):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x * w).sum()
    (gx,) = torch.autograd.grad(y, x, retain_graph=True)
    rec.value("grad wrt x", gx)
    rec.value("x.grad untouched", x.grad)
    gx, gw = torch.autograd.grad(y, [x, w])
    rec.value("both", (gx, gw))
    z = x * 2
    q = (z * z).sum()
    q.backward(inputs=[z])
    rec.value("backward(inputs=[z]) fills z.grad", z.grad)
    rec.value("and leaves x.grad alone", x.grad)


def engine_broadcast_and_dtype(torch, rec, dev):
    a = torch.tensor([[1.0], [2.0]], requires_grad=True)
    b = torch.tensor([1.0, 2.0, 3.0], requires_grad=True, dtype=torch.float64)
    c = a * b
    rec.value("result dtype", str(c.dtype))
    c.sum().backward()
    rec.value("a.grad summed over the broadcast dim", a.grad)
    rec.value("a.grad dtype", str(a.grad.dtype))
    rec.value("b.grad", b.grad)
    i = torch.tensor([1, 2])
    rec.value("int + float", i + 2.5)
    rec.value("int / int", torch.tensor(3) / 2)
    rec.value("bool + int", torch.tensor(True) + 1)


def engine_versions_and_views(torch, rec, dev):
    x = torch.ones(2, 3, requires_grad=True)
    d = x.detach()
    v = d[0]
    rec.value("versions start at 0", (x._version, d._version, v._version))
    v.mul_(5)
    rec.value("a view's in-place bumps everyone", (x._version, d._version, v._version))
    rec.value("and changes x", x)
    rec.value(".data has its own counter", x.data._version)
    y = x * 2
    y.add_(1)
    rec.value("in-place on non-leaf rebases grad_fn", y.grad_fn)
    rec.value("y._version", y._version)
    y.sum().backward()
    rec.value("gradient through the in-place add", x.grad)
    z = x * 1
    z.zero_()
    rec.value("zero_ grad_fn", z.grad_fn)
    with torch.no_grad():
        w = x * 2
    rec.value("made under no_grad", (w.requires_grad, w.is_leaf, w.grad_fn))


def engine_grad_modes(torch, rec, dev):
    x = torch.tensor([1.0], requires_grad=True)

    @torch.no_grad()
    def f(t):
        return t * 2

    rec.value("decorated no_grad", f(x).requires_grad)
    with torch.no_grad():
        with torch.enable_grad():
            rec.value("enable_grad inside no_grad", (x * 2).requires_grad)
        rec.value("back to no_grad", (x * 2).requires_grad)
    with torch.set_grad_enabled(False):
        rec.value("set_grad_enabled(False)", torch.is_grad_enabled())
    rec.value("restored", torch.is_grad_enabled())
    torch.set_grad_enabled(False)
    rec.value("function form takes effect", torch.is_grad_enabled())
    torch.set_grad_enabled(True)
    rec.value("and back", torch.is_grad_enabled())


def engine_reprs(torch, rec, dev):
    x = torch.tensor([1.0, 2.5], requires_grad=True)
    rec.value("leaf repr", repr(x))
    rec.value("non-leaf repr", repr(x * 2))
    rec.value("scalar repr", repr((x * 2).sum()))
    rec.value("int repr", repr(torch.tensor([1, 2, 3])))
    rec.value("double repr", repr(torch.tensor([1.0], dtype=torch.float64)))
    rec.value("bool repr", repr(torch.tensor([True, False])))
    rec.value("shape repr", repr(x.shape))
    rec.value("dtype repr", repr(x.dtype))
    rec.value("grad_fn name", (x * 2).grad_fn.name())
    rec.value("AccumulateGrad name", (x * 2).grad_fn.next_functions[0][0].name())
    rec.value("device repr", repr(torch.device("cuda", 0)))
    rec.value("device str", str(torch.device("cuda:0")))


def engine_sequence_numbers(torch, rec, dev):
    """Each recorded node takes the next number of the creation order; a leaf's AccumulateGrad takes none (its
    number is UINT64_MAX, so the engine runs it as soon as it is ready)."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * w  # its two AccumulateGrad nodes are made here, after y's node
    z = y.exp()
    loss = (z + y).sum()
    base = y.grad_fn._sequence_nr()
    rec.value(
        "creation order",
        tuple(f._sequence_nr() - base for f in (z.grad_fn, loss.grad_fn.next_functions[0][0], loss.grad_fn)),
    )
    acc = y.grad_fn.next_functions[0][0]
    rec.value("AccumulateGrad's number", acc._sequence_nr())
    rec.value("the next node's number", (x * 2).grad_fn._sequence_nr() - loss.grad_fn._sequence_nr())


def _listed(t):
    return None if t is None else t.tolist()


def engine_leaf_hook_order(torch, rec, dev):
    """A leaf's hooks are its AccumulateGrad's tensor pre-hooks: they run before the node's pre-hooks (which see,
    and may replace, what they return), then .grad, the post-accumulate-grad hooks and the node's post-hooks.
    Where autograd.grad captures the leaf's gradient the node does not run: only the leaf's hooks do."""

    def setup(replace):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        log = []
        x.register_hook(lambda g: log.append(("tensor hook", g.tolist())) or g * 2)
        acc = y.grad_fn.next_functions[0][0]

        def pre(grad_outputs):
            log.append(("pre-hook", grad_outputs[0].tolist()))
            if replace == "None":  # takes the gradient away: .grad stays None, the hooks after the node still run
                return (None,)
            return (grad_outputs[0] + 100,) if replace else None

        acc.register_prehook(pre)
        acc.register_hook(lambda grad_inputs, grad_outputs: log.append(("post-hook", _listed(grad_outputs[0]))))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post-accumulate", _listed(t.grad))))
        return x, y, log

    for replace in (False, True, "None"):
        x, y, log = setup(replace)
        y.sum().backward()
        rec.value(f"backward, replace={replace}", (tuple(log), x.grad))
    x, y, log = setup(False)
    (g,) = torch.autograd.grad(y.sum(), x)
    rec.value("autograd.grad", (tuple(log), g, x.grad))
    x, y, log = setup(False)
    y.sum().backward(inputs=[x])
    rec.value("backward(inputs=[x])", (tuple(log), x.grad))


ENGINE_CASES = {
    "engine_hooks_and_accumulation": engine_hooks_and_accumulation,
    "engine_next_functions": engine_next_functions,
    "engine_autograd_grad": engine_autograd_grad,
    "engine_broadcast_and_dtype": engine_broadcast_and_dtype,
    "engine_versions_and_views": engine_versions_and_views,
    "engine_grad_modes": engine_grad_modes,
    "engine_reprs": engine_reprs,
    "engine_sequence_numbers": engine_sequence_numbers,
    "engine_leaf_hook_order": engine_leaf_hook_order,
}
