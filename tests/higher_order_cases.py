"""Gradients of gradients, as functions of a ``torch``-like module (leafkit or PyTorch) and a Recorder.

``tests/parity/test_higher_order.py`` runs every case on both and compares
the observations: values, gradients, the state of ``.grad`` after
``backward(create_graph=True)``, the node names of the recorded backward
graph, warnings and errors.
"""

from __future__ import annotations


def tree(fn, depth=6):
    """The graph under a node as nested tuples of names (leaves as 'AccumulateGrad')."""
    if fn is None:
        return None
    name = fn.name()
    if name.endswith("AccumulateGrad"):
        return "AccumulateGrad"
    if depth == 0:
        return name
    return (name, tuple(tree(n, depth - 1) for n, _ in fn.next_functions))


def second_derivatives(torch, rec, dev):
    x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    for name, f in [
        ("x**3", lambda t: t**3),
        ("sin", lambda t: t.sin()),
        ("exp", lambda t: t.exp()),
        ("tanh", lambda t: t.tanh()),
        ("sigmoid", lambda t: t.sigmoid()),
        ("log", lambda t: t.log()),
        ("sqrt", lambda t: t.sqrt()),
        ("x*x", lambda t: t * t),
        ("1/x", lambda t: 1 / t),
        ("relu", lambda t: (t - 1).relu()),
        ("softmax", lambda t: t.softmax(0) * t),
    ]:
        y = f(x).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        rec.value(f"{name}: dy/dx", g)
        rec.value(f"{name}: dy/dx requires_grad", g.requires_grad)
        rec.value(f"{name}: dy/dx graph", tree(g.grad_fn))
        if g.requires_grad:
            (h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
            rec.value(f"{name}: d2y/dx2", h)
            if h.requires_grad:
                (h3,) = torch.autograd.grad(h.sum(), x, allow_unused=True)
                rec.value(f"{name}: d3y/dx3", h3)


def grad_state_after_backward(torch, rec, dev):
    import warnings

    x = torch.tensor([2.0, 3.0], requires_grad=True)
    y = (x**3).sum()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        y.backward(create_graph=True)
    g = x.grad
    rec.value("x.grad", g)
    rec.value("x.grad requires_grad, is_leaf", (g.requires_grad, g.is_leaf))
    rec.value("x.grad.grad_fn", tree(g.grad_fn))
    rec.value("x.grad graph", tree(g.grad_fn))
    g.sum().backward()
    rec.value("x.grad after backward of x.grad.sum()", x.grad)
    rec.value("x.grad.grad_fn after second accumulation", tree(x.grad.grad_fn, 2))
    # retain_graph defaults to create_graph: the first graph is still there
    z = (x * x).sum()
    z.backward(create_graph=True)
    z.backward()
    rec.value("second backward allowed (retain_graph defaulted to True)", x.grad)


def retain_grad_and_hooks_recorded(torch, rec, dev):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.requires_grad))
    z = (y * x).sum()
    (gx,) = torch.autograd.grad(z, x, create_graph=True)
    rec.value("gx", gx)
    rec.value("hook saw a grad that requires grad", seen)
    rec.value("gx graph", tree(gx.grad_fn))
    y2 = x.exp()
    y2.retain_grad()
    y2.sum().backward(create_graph=True)
    rec.value("retained y2.grad", (y2.grad, y2.grad.requires_grad, tree(y2.grad.grad_fn)))


def not_differentiable_twice(torch, rec, dev):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**2).sum(), x)
    rec.value("g.requires_grad without create_graph", g.requires_grad)
    rec.error("grad of g", lambda: torch.autograd.grad(g.sum(), x), key="does not require grad")
    rec.error("backward of g", lambda: g.sum().backward(), key="element 0 of tensors does not require grad")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (gw,) = torch.autograd.grad((w * 3).sum(), w, create_graph=True)
    rec.value("linear: gradient is constant", (gw, gw.requires_grad))
    u = torch.tensor([1.0], requires_grad=True)
    rec.error("unused input", lambda: torch.autograd.grad((x * 2).sum(), [x, u]), key="appears to not have been used")
    r = torch.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    rec.value("allow_unused", r)
    r = torch.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    rec.value("materialize_grads", r)


def gradient_penalty(torch, rec, dev):
    torch.manual_seed(0)
    lin1 = torch.nn.Linear(3, 4)
    lin2 = torch.nn.Linear(4, 1)
    with torch.no_grad():
        for k, p in enumerate(list(lin1.parameters()) + list(lin2.parameters())):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (0.3 + 0.1 * k))
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]], requires_grad=True)
    out = lin2(lin1(x).tanh())
    (gx,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    rec.value("gradient wrt input", gx)
    rec.value("its graph", tree(gx.grad_fn, 4))
    penalty = ((gx.norm(2, dim=1) - 1) ** 2).mean()
    rec.value("penalty", penalty)
    penalty.backward()
    for name, p in list(lin1.named_parameters()) + list(lin2.named_parameters()):
        rec.value(f"grad {name}", p.grad)


def newton_1d(torch, rec, dev):
    x = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    steps = []
    for _ in range(6):
        f = x**4 - 3 * x**2 + x.sin()
        (g,) = torch.autograd.grad(f, x, create_graph=True)
        (h,) = torch.autograd.grad(g, x)
        with torch.no_grad():
            x -= g / h
        steps.append(round(x.item(), 9))
    rec.value("Newton iterates", steps)


def grad_norm_regularizer(torch, rec, dev):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        model.bias.copy_(torch.tensor([0.05, -0.05]))
    x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    y = torch.tensor([0, 1])
    loss = torch.nn.functional.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()), create_graph=True)
    reg = sum((g**2).sum() for g in grads)
    rec.value("loss, reg", (loss, reg))
    rec.value("weight grad graph", tree(grads[0].grad_fn, 5))
    (loss + 0.1 * reg).backward()
    rec.value("weight.grad", model.weight.grad)
    rec.value("bias.grad", model.bias.grad)


def functional_api(torch, rec, dev):
    F = torch.autograd.functional

    def f(x):
        return (x**2).sum() * x[0]

    def g(x, y):
        return x * y.sin(), (x * y).sum()

    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    y = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    rec.value("jacobian(x**2)", F.jacobian(lambda t: t**2, x))
    rec.value("jacobian tuple", F.jacobian(g, (x, y)))
    rec.value("hessian", F.hessian(f, x))
    rec.value("hessian tuple", F.hessian(lambda a, b: (a * b * b).sum(), (x, y)))
    rec.value("vjp", F.vjp(lambda t: t**2, x, torch.ones(3, dtype=torch.float64)))
    rec.value("jvp", F.jvp(lambda t: t**2, x, torch.ones(3, dtype=torch.float64)))
    rec.value("hvp", F.hvp(f, x, torch.ones(3, dtype=torch.float64)))
    rec.value("vhp", F.vhp(f, x, torch.ones(3, dtype=torch.float64)))
    xr = x.clone().requires_grad_()
    jac = F.jacobian(lambda t: t.exp() * t, xr, create_graph=True)
    rec.value("jacobian create_graph requires_grad", jac.requires_grad)
    jac.sum().backward()
    rec.value("through the jacobian", xr.grad)
    rec.value(
        "jacobian shape (2,3) -> (4,)", tuple(F.jacobian(lambda t: t.reshape(-1)[:4] * 2, torch.ones(2, 3)).shape)
    )
    rec.error("strict independent", lambda: F.jacobian(lambda t: torch.ones(2), x, strict=True), key="independent")
    rec.error("hessian of non-scalar", lambda: F.hessian(lambda t: t * 2, x), key="single element")
    rec.error(
        "v wrong size", lambda: F.vjp(lambda t: t * 2, x, torch.ones(2, dtype=torch.float64)), key="v has invalid size"
    )


def custom_function_twice(torch, rec, dev):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    rec.value("first", g)
    (h,) = torch.autograd.grad(g.sum(), x)
    rec.value("second", h)

    class Once(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    z = Once.apply(x)
    (g2,) = torch.autograd.grad(z.sum(), x, create_graph=True)
    rec.value("once first", (g2, g2.requires_grad))
    rec.error("once twice", lambda: torch.autograd.grad(g2.sum(), x), key="once_differentiable")


def inplace_and_views_recorded(torch, rec, dev):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.mul_(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    rec.value("in-place mul_", g)
    (h,) = torch.autograd.grad(g.sum(), x)
    rec.value("in-place second", h)
    b = x.clone()
    b[1:].mul_(x[1:])
    (g,) = torch.autograd.grad(b.sum(), x, create_graph=True)
    rec.value("view in-place (CopySlices)", g)
    (h,) = torch.autograd.grad(g.sum(), x)
    rec.value("view in-place second", h)
    m = torch.stack([x, x * x]).t()
    (g,) = torch.autograd.grad((m @ m.t()).sum(), x, create_graph=True)
    rec.value("matmul of views", g)
    (h,) = torch.autograd.grad(g.sum(), x)
    rec.value("matmul of views second", h)


CASES = {
    f.__name__: f
    for f in (
        second_derivatives,
        grad_state_after_backward,
        retain_grad_and_hooks_recorded,
        not_differentiable_twice,
        gradient_penalty,
        newton_1d,
        grad_norm_regularizer,
        functional_api,
        custom_function_twice,
        inplace_and_views_recorded,
    )
}
