"""``torch.utils.checkpoint`` on leafkit and on PyTorch: gradients, node names, warnings and errors, both variants.

Weights are fixed (the two libraries draw different random numbers); where
randomness matters (dropout) we compare what must hold on each side: the
recomputed mask is the forward's mask.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from hooks_harness import compare, node_name, tree

import leafkit

torch = pytest.importorskip("torch")

W = [
    (np.array([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]]), np.array([0.1, -0.2, 0.3])),
    (np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -0.1], [-1.0, 0.4, 0.6]]), np.array([0.05, 0.0, -0.3])),
    (np.array([[0.7, -0.3, 0.2]]), np.array([0.4])),
]


def cp(lib):
    return importlib.import_module(f"{lib.__name__}.utils.checkpoint")


def mlp(lib, dropout=None):
    layers = []
    for k, (w, b) in enumerate(W):
        lin = lib.nn.Linear(w.shape[1], w.shape[0]).double()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w))
            lin.bias.copy_(lib.tensor(b))
        layers.append(lin)
        if k < len(W) - 1:
            layers.append(lib.nn.Tanh())
            if dropout:
                layers.append(lib.nn.Dropout(dropout))
    return lib.nn.Sequential(*layers)


def x_in(lib, rg=True):
    return lib.tensor([[1.0, 2.0], [-1.0, 0.5]], dtype=lib.float64, requires_grad=rg)


def grads(lib, model, x, out):
    out.sum().backward()
    return [x.grad] + [p.grad for p in model.parameters()]


def without_compile_tip(message: str) -> str:
    """PyTorch's debug tip ends with advice about torch.compile, which leafkit leaves out."""
    return message.split("\nIf this error occurs under torch.compile")[0].rstrip("\n") + "\n"


def reentrant_variant(lib, obs):
    checkpoint = cp(lib).checkpoint
    obs.run("issue example", lambda: checkpoint(lib.nn.Linear(2, 2), lib.ones(1, 2), use_reentrant=True))
    out = obs.run("again", lambda: checkpoint(lib.nn.Linear(2, 2), lib.ones(1, 2), use_reentrant=True))
    obs.v("no input requires grad: no grad_fn at all", (out.grad_fn, out.requires_grad))
    obs.run("use_reentrant not passed", lambda: checkpoint(lib.sin, x_in(lib)))
    m = mlp(lib)
    x = x_in(lib)
    out = checkpoint(m, x, use_reentrant=True)
    obs.v("graph", tree(out.grad_fn, 2))
    obs.v("gradients", grads(lib, m, x, out))
    m2, x2 = mlp(lib), x_in(lib)
    obs.v("the same without checkpoint", grads(lib, m2, x2, m2(x2)))
    out = checkpoint(m, x, use_reentrant=True)
    obs.err("autograd.grad", lambda: lib.autograd.grad(out.sum(), x))
    out = checkpoint(m, x, use_reentrant=True)
    obs.err("backward(inputs=...)", lambda: out.sum().backward(inputs=[x]))
    obs.err("keyword arguments", lambda: checkpoint(m, x, use_reentrant=True, scale=2.0, shift=1))
    obs.err("context_fn", lambda: checkpoint(m, x, use_reentrant=True, context_fn=cp(lib).noop_context_fn, debug=True))
    out = checkpoint(lambda t: t.detach() * 2, x, use_reentrant=True)
    obs.v("a detached output still gets the node", node_name(out.grad_fn))
    obs.err("no output requires grad in the recomputation", lambda: out.sum().backward())


def test_reentrant_variant():
    compare(reentrant_variant, torch, leafkit)


def reentrant_details(lib, obs):
    checkpoint = cp(lib).checkpoint
    x = x_in(lib)
    a, b, k = checkpoint(lambda t, s, n: (t * s, (t * n).exp(), n), x, x_in(lib, rg=False), 3, use_reentrant=True)
    obs.v("several outputs and a number", (node_name(a.grad_fn), node_name(b.grad_fn), b.requires_grad, k))
    (a.sum() + b.sum()).backward()
    obs.v("x.grad", x.grad)
    x = x_in(lib)
    y = checkpoint(lambda t: t.sin() * t, x, use_reentrant=True)
    with warnings.catch_warnings():  # the reference-cycle warning comes once per process: not an observation here
        warnings.simplefilter("ignore")
        y.sum().backward(create_graph=True)
    obs.v("create_graph: the inner backward is not recorded", (x.grad, x.grad.grad_fn))
    h = x_in(lib) * 1
    y = checkpoint(lambda t: t.sin(), h, use_reentrant=True)
    with lib.no_grad():
        h.mul_(2)
    obs.err("an input changed in place", lambda: y.sum().backward())


def test_reentrant_details():
    compare(reentrant_details, torch, leafkit)


def non_reentrant_variant(lib, obs):
    checkpoint = cp(lib).checkpoint
    m = mlp(lib)
    x = x_in(lib)
    out = checkpoint(m, x, use_reentrant=False)
    obs.v("the outputs keep their own nodes", tree(out.grad_fn, 5))
    obs.v("gradients", grads(lib, m, x, out))
    out = checkpoint(m, x, use_reentrant=False)
    obs.v("autograd.grad", lib.autograd.grad(out.sum(), [x, m[0].weight]))
    out = checkpoint(m, x, use_reentrant=False)
    m.zero_grad()
    out.sum().backward(inputs=[m[2].bias])
    obs.v("backward(inputs=...)", [p.grad for p in m.parameters()])

    def scaled(t, *, scale, shift=0.0):
        return m(t) * scale + shift

    obs.v("keyword arguments", lib.autograd.grad(checkpoint(scaled, x, use_reentrant=False, scale=3.0).sum(), x))
    out = checkpoint(m, x_in(lib, rg=False), use_reentrant=False)
    obs.run("inputs without grad: parameters still get gradients", lambda: out.sum().backward())
    obs.v("weight grad", m[0].weight.grad)
    with lib.no_grad():
        out = checkpoint(m, x, use_reentrant=False)
    obs.v("under no_grad", (out.grad_fn, out.requires_grad))
    obs.err("determinism_check", lambda: checkpoint(m, x, use_reentrant=False, determinism_check="shapes"))


def test_non_reentrant_variant():
    compare(non_reentrant_variant, torch, leafkit)


def non_reentrant_saved_tensors(lib, obs):
    checkpoint = cp(lib).checkpoint
    x = x_in(lib)
    y = checkpoint(lambda t: t.exp(), x, use_reentrant=False)
    r = y.grad_fn._saved_result
    obs.v("_saved_result is recomputed", (r, r is y, node_name(r.grad_fn)))
    y = checkpoint(lambda t: (t * 3).sin(), x, use_reentrant=False)
    s = y.grad_fn._saved_self
    obs.v("_saved_self has the original node", (s, s.grad_fn is y.grad_fn.next_functions[0][0]))
    y.sum().backward()
    obs.err("after backward", lambda: y.grad_fn._saved_self)

    def h(t):
        return (t.exp() * t).sin()

    y = checkpoint(h, x, use_reentrant=False)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    obs.v("first derivative", (g, node_name(g.grad_fn)))
    obs.v("second derivative", lib.autograd.grad(g.sum(), x))
    y = checkpoint(h, x, use_reentrant=False)
    x.grad = None
    y.sum().backward(retain_graph=True)
    first = x.grad.clone()
    y.sum().backward()
    obs.v("retain_graph: a second backward recomputes", (first, x.grad))
    obs.err("a third backward", lambda: y.sum().backward())
    a = x_in(lib) * 1
    y = checkpoint(lambda t: t.sin(), a, use_reentrant=False)
    with lib.no_grad():
        a.mul_(2)
    obs.err("an input changed in place", lambda: y.sum().backward())


def test_non_reentrant_saved_tensors():
    compare(non_reentrant_saved_tensors, torch, leafkit)


def non_determinism(lib, obs):
    checkpoint = cp(lib).checkpoint
    calls = [0]

    def shrinking(t):
        calls[0] += 1
        return t.sin() if calls[0] == 1 else t[:1].sin()

    y = checkpoint(shrinking, x_in(lib), use_reentrant=False)
    try:
        y.sum().backward()
    except Exception as e:  # noqa: BLE001
        obs.v("other shapes", (type(e).__name__, isinstance(e, RuntimeError), without_compile_tip(str(e))))
    calls[0] = 0

    def fewer(t):
        calls[0] += 1
        return t.sin().exp() if calls[0] == 1 else t.sin() + 1

    y = checkpoint(fewer, x_in(lib), use_reentrant=False)
    try:
        y.sum().backward()
    except Exception as e:  # noqa: BLE001
        obs.v("fewer tensors", (type(e).__name__, without_compile_tip(str(e))))


def test_non_determinism():
    compare(non_determinism, torch, leafkit)


def sequential(lib, obs):
    cs = cp(lib).checkpoint_sequential
    m = mlp(lib)
    x = x_in(lib)
    out = obs.run("use_reentrant not passed", lambda: cs(m, 2, x))
    obs.v("graph (reentrant)", tree(out.grad_fn, 3))
    obs.v("gradients", grads(lib, m, x, out))
    for segments in (1, 2, 3, 5):
        m2, x2 = mlp(lib), x_in(lib)
        out = cs(m2, segments, x2, use_reentrant=False)
        obs.v(f"{segments} segments", (node_name(out.grad_fn), grads(lib, m2, x2, out)))
    m3, x3 = mlp(lib), x_in(lib)
    out = cs(list(m3.children()), 2, x3, use_reentrant=False, preserve_rng_state=False)
    obs.v("a list of modules", grads(lib, m3, x3, out))
    obs.err("unknown keyword", lambda: cs(m, 2, x, use_reentrant=False, determinism_check="none"))


def test_checkpoint_sequential():
    compare(sequential, torch, leafkit)


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("lib", [torch, leafkit], ids=["torch", "leafkit"])
def test_dropout_recomputes_the_same_mask(lib, use_reentrant):
    checkpoint = cp(lib).checkpoint
    lib.manual_seed(3)
    m = mlp(lib, dropout=0.5)
    x = lib.ones(4, 2, dtype=lib.float64, requires_grad=True)
    out = checkpoint(m[:3], x, use_reentrant=use_reentrant)  # Linear, Tanh, Dropout
    (out * lib.arange(12.0, dtype=lib.float64).reshape(4, 3)).sum().backward()
    zero_out = (out == 0).numpy()
    # a dropped unit passes no gradient back: its column of the weight's gradient is zero exactly where it was dropped
    w_grad_from_dropped = (m[0].weight.grad.numpy() != 0).any(axis=1)
    assert zero_out.any() and not zero_out.all()
    assert set(np.flatnonzero(~zero_out.any(axis=0))) <= set(np.flatnonzero(w_grad_from_dropped))
    mask = lib.tensor((~zero_out).astype(np.float64)) * 2
    lib.manual_seed(3)
    m2 = mlp(lib, dropout=0.5)
    x2 = lib.ones(4, 2, dtype=lib.float64, requires_grad=True)
    plain = m2[:3](x2)
    assert np.array_equal((plain == 0).numpy(), zero_out)  # same seed, same mask, checkpoint or not
    (plain * lib.arange(12.0, dtype=lib.float64).reshape(4, 3)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())
    np.testing.assert_allclose(m[0].weight.grad.numpy(), m2[0].weight.grad.numpy())
    assert mask.shape == (4, 3)


def test_module_paths():
    import leafkit.utils.checkpoint as lk_cp

    assert leafkit.utils.checkpoint is lk_cp
    assert issubclass(lk_cp.CheckpointError, RuntimeError)
    for name in ("checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "noop_context_fn"):
        assert hasattr(torch.utils.checkpoint, name) and hasattr(lk_cp, name)
