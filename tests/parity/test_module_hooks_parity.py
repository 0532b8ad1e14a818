"""``nn.Module`` hooks on leafkit and on PyTorch: call order, arguments, replaced values, node names, errors, warnings.

Each scenario runs on both libraries; every observation (hook calls with their
arguments, gradients, ``grad_fn`` names, the whole text of each error and
warning) must be equal.
"""

from __future__ import annotations

import numpy as np
import pytest
from hooks_harness import compare, node_name, tree

import leafkit

torch = pytest.importorskip("torch")

W1 = np.array([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]])
B1 = np.array([0.1, -0.2, 0.3])
W2 = np.array([[1.0, -2.0, 0.5]])
B2 = np.array([0.05])


def mlp(lib, inplace=False):
    """Linear(2, 3) -> ReLU -> Linear(3, 1) with fixed weights, in float64."""
    m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(inplace=inplace), lib.nn.Linear(3, 1)).double()
    with lib.no_grad():
        m[0].weight.copy_(lib.tensor(W1))
        m[0].bias.copy_(lib.tensor(B1))
        m[2].weight.copy_(lib.tensor(W2))
        m[2].bias.copy_(lib.tensor(B2))
    return m


def x_in(lib, rg=True):
    return lib.tensor([[1.0, 2.0], [-1.0, 0.5]], dtype=lib.float64, requires_grad=rg)


@pytest.fixture(autouse=True)
def _reset_global_flags():
    """A legacy global backward hook leaves a process-wide flag behind (in both libraries): reset it."""
    yield
    for lib in (torch, leafkit):
        lib.nn.modules.module._global_is_full_backward_hook = None


def run(scenario):
    compare(scenario, torch, leafkit)


# -- forward hooks ------------------------------------------------------------------------------------------------
def forward_hook_order(lib, obs):
    m = mlp(lib)
    log = []
    mm = lib.nn.modules.module
    handles = [
        mm.register_module_forward_pre_hook(lambda mod, a: log.append(("global pre", type(mod).__name__))),
        mm.register_module_forward_hook(lambda mod, a, o: log.append(("global fwd", type(mod).__name__))),
        m.register_forward_pre_hook(lambda mod, a: log.append(("seq pre", a))),
        m.register_forward_hook(lambda mod, a, o: log.append(("seq fwd", o))),
        m[0].register_forward_hook(lambda mod, a, o: log.append(("lin fwd", o))),
        m[0].register_forward_hook(lambda mod, a, o: log.append(("lin fwd first",)), prepend=True),
        m[0].register_forward_pre_hook(lambda mod, a: log.append(("lin pre", a))),
        m[0].register_forward_pre_hook(lambda mod, a: log.append(("lin pre first",)), prepend=True),
    ]
    try:
        out = m(x_in(lib))
    finally:
        for h in handles:
            h.remove()
    obs.v("log", log)
    obs.v("out", out)
    obs.v("hook dicts empty after remove", (len(m._forward_hooks), len(m[0]._forward_pre_hooks)))
    obs.v("global dicts empty after remove", (len(mm._global_forward_hooks), len(mm._global_forward_pre_hooks)))


def test_forward_hook_order():
    run(forward_hook_order)


def forward_hooks_replace_values(lib, obs):
    lin = mlp(lib)[0]
    lin.register_forward_pre_hook(lambda mod, a: a[0] * 2)  # a single value is wrapped in a tuple
    lin.register_forward_hook(lambda mod, a, o: o + 1)
    x = x_in(lib)
    out = lin(x)
    obs.v("out", out)
    obs.v("grad_fn", node_name(out.grad_fn))
    out.sum().backward()
    obs.v("x.grad", x.grad)


def test_forward_hooks_replace_values():
    run(forward_hooks_replace_values)


class Scaled:
    """A module whose forward takes a keyword argument."""

    @staticmethod
    def make(lib):
        class ScaledLinear(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(2, 3).double()
                with lib.no_grad():
                    self.lin.weight.copy_(lib.tensor(W1))
                    self.lin.bias.copy_(lib.tensor(B1))

            def forward(self, x, scale=1.0, *, shift=0.0):
                return self.lin(x) * scale + shift

        return ScaledLinear()


def forward_hooks_with_kwargs(lib, obs):
    m = Scaled.make(lib)
    seen = []

    def pre(mod, args, kwargs):
        seen.append(("pre", args, dict(kwargs)))
        return args, {**kwargs, "shift": 10.0}

    def post(mod, args, kwargs, out):
        seen.append(("post", dict(kwargs), out))
        return out * 2

    h1 = m.register_forward_pre_hook(pre, with_kwargs=True)
    h2 = m.register_forward_hook(post, with_kwargs=True)
    obs.v("with_kwargs dicts", (list(m._forward_pre_hooks_with_kwargs.values()), len(m._forward_hooks_with_kwargs)))
    out = m(x_in(lib), 2.0, shift=1.0)
    obs.v("seen", seen)
    obs.v("out", out)
    m.register_forward_pre_hook(lambda mod, a, k: "bad", with_kwargs=True)
    obs.err("pre-hook returns a bad value", lambda: m(x_in(lib)))
    h1.remove()
    h2.remove()
    obs.v("flags removed with the hooks", (len(m._forward_pre_hooks_with_kwargs), len(m._forward_hooks_with_kwargs)))


def test_forward_hooks_with_kwargs():
    run(forward_hooks_with_kwargs)


def always_call_hooks(lib, obs):
    class Boom(lib.nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    m = Boom()
    log = []
    m.register_forward_hook(lambda mod, a, o: log.append(("plain", o)))
    m.register_forward_hook(lambda mod, a, o: log.append(("always", a, o)), always_call=True)
    m.register_forward_hook(lambda mod, a, k, o: log.append(("always kw", k, o)), always_call=True, with_kwargs=True)

    def failing(mod, a, o):
        raise KeyError("hook failed too")

    m.register_forward_hook(failing, always_call=True)
    obs.err("forward raises", lambda: m(lib.ones(1)))
    obs.v("log", log)
    ok = lib.nn.Identity()
    ok.register_forward_hook(lambda mod, a, o: log.append(("ran once", o)), always_call=True)
    ok(lib.ones(1))
    obs.v("an always_call hook runs once when nothing fails", log[-1:])
    obs.v("always_called dict", list(ok._forward_hooks_always_called.values()))


def test_always_call_hooks():
    run(always_call_hooks)


def handles_as_context_managers(lib, obs):
    lin = mlp(lib)[0]
    log = []
    with lin.register_forward_hook(lambda mod, a, o: log.append("fwd")):
        lin(x_in(lib))
    lin(x_in(lib))
    with lin.register_full_backward_hook(lambda mod, gi, go: log.append("bwd")):
        lin(x_in(lib)).sum().backward()
    lin(x_in(lib)).sum().backward()
    obs.v("log", log)
    obs.v("dicts", (len(lin._forward_hooks), len(lin._backward_hooks)))
    h = lin.register_forward_pre_hook(lambda mod, a: None)
    h.remove()
    h.remove()  # a second remove is harmless
    obs.v("handle type", type(h).__name__)
    obs.v("is a torch.utils.hooks.RemovableHandle", isinstance(h, lib.utils.hooks.RemovableHandle))


def test_handles_as_context_managers():
    run(handles_as_context_managers)


# -- full backward hooks -----------------------------------------------------------------------------------------
def full_backward_hooks_on_sequential(lib, obs):
    m = mlp(lib)
    log = []
    for name, mod in [("seq", m), ("lin0", m[0]), ("relu", m[1]), ("lin2", m[2])]:
        mod.register_full_backward_pre_hook(lambda mod, go, name=name: log.append((name, "pre", go)))
        mod.register_full_backward_hook(lambda mod, gi, go, name=name: log.append((name, "full", gi, go)))
    x = x_in(lib)
    out = m(x)
    obs.v("out.grad_fn", tree(out.grad_fn, 3))
    obs.v("forward ran no hook", log)
    out.sum().backward()
    obs.v("log", log)
    obs.v("x.grad", x.grad)
    obs.v("weight grads", [p.grad for p in m.parameters()])


def test_full_backward_hooks_on_sequential():
    run(full_backward_hooks_on_sequential)


def full_backward_hook_replaces_grad_input(lib, obs):
    m = mlp(lib)
    m[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
    m[0].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 1,))
    x = x_in(lib)
    m(x).sum().backward()
    obs.v("x.grad from the replaced grad_input", x.grad)
    obs.v("first layer's weight grad saw the tripled grad_output", m[0].weight.grad)
    m2 = mlp(lib)
    m2[0].register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    obs.err("wrong number of grad_input", lambda: m2(x_in(lib)).sum().backward())
    m3 = mlp(lib)
    m3[2].register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    obs.err("wrong number of grad_output", lambda: m3(x_in(lib)).sum().backward())


def test_full_backward_hook_replaces_grad_input():
    run(full_backward_hook_replaces_grad_input)


def full_backward_hook_inputs_without_grad(lib, obs):
    m = mlp(lib)
    log = []
    m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("lin0", gi, go)))
    m[2].register_full_backward_hook(lambda mod, gi, go: log.append(("lin2", gi, go)))
    out = m(x_in(lib, rg=False))
    obs.v("out graph", tree(out.grad_fn, 4))
    obs.run("backward", lambda: out.sum().backward())
    obs.v("log", log)
    m2 = mlp(lib)
    m2[0].register_full_backward_hook(lambda mod, gi, go: (lib.ones(2, 2, dtype=lib.float64),))
    out = m2(x_in(lib, rg=False))
    obs.err("a hook may not return gradients then", lambda: out.sum().backward())
    with lib.no_grad():
        y = m(x_in(lib))
    obs.v("under no_grad no node is made", (y.grad_fn, y.requires_grad))


def test_full_backward_hook_inputs_without_grad():
    run(full_backward_hook_inputs_without_grad)


def inplace_after_hooked_module(lib, obs):
    m = mlp(lib, inplace=True)
    m[0].register_full_backward_hook(lambda mod, gi, go: None)
    obs.err("ReLU(inplace=True) after a hooked Linear", lambda: m(x_in(lib)))
    m = mlp(lib, inplace=True)
    m[1].register_full_backward_hook(lambda mod, gi, go: None)
    obs.err("a hooked ReLU(inplace=True)", lambda: m(x_in(lib)))
    m = mlp(lib)
    m[0].register_full_backward_pre_hook(lambda mod, go: None)
    out = m[0](x_in(lib))
    obs.v("output of a hooked module", (node_name(out.grad_fn), out.is_leaf))
    obs.err("changing it in place", lambda: out.add_(1))
    obs.err("a clone may change", lambda: out.clone().add_(1))


def test_inplace_after_hooked_module():
    run(inplace_after_hooked_module)


def kwargs_and_non_tensor_arguments(lib, obs):
    m = Scaled.make(lib)
    log = []
    m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
    x = x_in(lib)
    out = m(x, 3.0, shift=lib.ones(1, dtype=lib.float64, requires_grad=True))
    out.sum().backward()
    obs.v("grad_input has None for the float, nothing for kwargs", log)

    class Pair(lib.nn.Module):
        def forward(self, a, b):
            return a * 2, b * 3, "tag"

    p = Pair()
    p.register_full_backward_hook(lambda mod, gi, go: log.append(("pair", gi, go)))
    p.register_full_backward_pre_hook(lambda mod, go: log.append(("pair pre", go)))
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0])
    ra, rb, tag = p(a, b)
    obs.v("outputs", (node_name(ra.grad_fn), node_name(rb.grad_fn), rb.requires_grad, tag))
    ra.sum().backward()
    obs.v("log", log[1:])

    class Dict(lib.nn.Module):
        def forward(self, a):
            return {"y": a * 2}

    d = Dict()
    d.register_full_backward_hook(lambda mod, gi, go: None)
    obs.run("a dict output", lambda: d(a))


def test_kwargs_and_non_tensor_arguments():
    run(kwargs_and_non_tensor_arguments)


def double_backward_through_hooks(lib, obs):
    m = mlp(lib)
    m[1] = lib.nn.Tanh()
    log = []
    m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("lin0", gi)))
    x = x_in(lib)
    (g,) = lib.autograd.grad(m(x).sum(), x, create_graph=True)
    obs.v("first-order gradient", g)
    obs.v("log after first", log)
    (gg,) = lib.autograd.grad(g.sum(), x)
    obs.v("second-order gradient", gg)
    obs.v("log after second", log)


def test_double_backward_through_hooks():
    run(double_backward_through_hooks)


# -- legacy and global backward hooks ----------------------------------------------------------------------------
def legacy_backward_hook(lib, obs):
    m = mlp(lib)
    log = []
    m[0].register_backward_hook(lambda mod, gi, go: log.append(("lin0", type(mod).__name__, gi, go)))
    m[1].register_backward_hook(lambda mod, gi, go: log.append(("relu", gi, go)))
    x = x_in(lib)
    out = obs.run("forward warns where the hook will miss gradients", lambda: m(x))
    obs.v("no BackwardHookFunction node", tree(out.grad_fn, 4))
    out.sum().backward()
    obs.v("log: the last node's own gradients", log)
    obs.err("then a full hook", lambda: m[0].register_full_backward_hook(lambda *a: None))
    m2 = mlp(lib)
    m2[0].register_full_backward_hook(lambda *a: None)
    obs.err("a legacy hook after a full one", lambda: m2[0].register_backward_hook(lambda *a: None))
    m3 = mlp(lib)
    m3[2].register_backward_hook(lambda mod, gi, go: (gi[0] * 0, gi[1], gi[2]))
    x = x_in(lib)
    obs.run("forward", lambda: m3(x).sum().backward())
    obs.v("bias grad replaced by the legacy hook", m3[2].bias.grad)


def test_legacy_backward_hook():
    run(legacy_backward_hook)


def global_backward_hooks(lib, obs):
    mm = lib.nn.modules.module
    log = []
    handles = [
        mm.register_module_full_backward_pre_hook(lambda mod, go: log.append(("global pre", type(mod).__name__))),
        mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(("global", type(mod).__name__, gi))),
    ]
    try:
        m = mlp(lib)
        m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("lin0 own", gi)))
        x = x_in(lib)
        m(x).sum().backward()
        obs.err("a legacy global hook now", lambda: mm.register_module_backward_hook(lambda *a: None))
    finally:
        for h in handles:
            h.remove()
    obs.v("log", log)
    obs.v("x.grad", x.grad)
    mm._global_is_full_backward_hook = None
    h = mm.register_module_backward_hook(lambda mod, gi, go: log.append(("legacy global", type(mod).__name__)))
    try:
        obs.err("a full global hook after a legacy one", lambda: mm.register_module_full_backward_hook(print))
        lin = mlp(lib)[0]
        obs.run("forward", lambda: lin(x_in(lib)).sum().backward())
    finally:
        h.remove()
    obs.v("legacy log", log[-1:])


def test_global_backward_hooks():
    run(global_backward_hooks)


def test_module_paths_exist():
    import leafkit.nn.modules.module as mm

    assert mm is leafkit.nn.module
    assert leafkit.nn.modules.module.Module is leafkit.nn.Module
    assert leafkit.nn.modules.Linear is leafkit.nn.Linear
    for name in (
        "register_module_forward_pre_hook",
        "register_module_forward_hook",
        "register_module_full_backward_pre_hook",
        "register_module_full_backward_hook",
        "register_module_backward_hook",
    ):
        assert callable(getattr(mm, name)) and callable(getattr(torch.nn.modules.module, name))
    assert sorted(k for k in vars(leafkit.nn.Linear(1, 1)) if "hook" in k) == sorted(
        k for k in vars(torch.nn.Linear(1, 1)) if "hook" in k and "state_dict" not in k
    )


def node_post_hook_sees_validated_gradients(lib, obs):
    """What the legacy module hook builds on: a node's post-hook sees each gradient at its input's shape and dtype."""
    a = lib.ones(3, requires_grad=True)
    b = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    c = a + b
    seen = []
    c.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
    (c * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
    obs.v("grad_inputs, grad_outputs", seen)
    obs.v("grads", (a.grad, b.grad))


def test_node_post_hook_sees_validated_gradients():
    run(node_post_hook_sees_validated_gradients)
