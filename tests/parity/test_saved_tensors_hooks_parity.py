"""``torch.autograd.graph.saved_tensors_hooks``, ``save_on_cpu`` and ``disable_saved_tensors_hooks`` against
PyTorch: when the hooks run and on what, their nesting, their errors, and how they meet in-place checks,
``create_graph=True``, custom ``Function``s and ``checkpoint``.  Every program runs on both libraries and what it
records is compared."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parity.test_random_inplace_programs import arrays as inplace_arrays
from parity.test_random_inplace_programs import run as run_inplace
from parity.test_random_inplace_programs import step as inplace_step
from parity.test_random_programs import leaf, run, step  # the random programs of the parity suite

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception's class and message
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", r


def _r(t):
    return None if t is None else [round(v, 4) for v in t.detach().reshape(-1).tolist()]


def _logging_hooks(lib, log, x=None, w=None):
    def pack(t):
        log.append(("pack", t is x, t is w, t.requires_grad, type(t.grad_fn).__name__, t._version))
        return t

    def unpack(t):
        log.append(("unpack", t is x, t.requires_grad))
        return t

    return lib.autograd.graph.saved_tensors_hooks(pack, unpack)


def basics(lib):
    log = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    with _logging_hooks(lib, log, x, w):
        y = x * w
        e = y.exp()
    log.append(("saved_self is x", y.grad_fn._saved_self is x, type(y.grad_fn._saved_self.grad_fn).__name__))
    log.append(("result is e", e.grad_fn._saved_result is e, type(e.grad_fn._saved_result.grad_fn).__name__))
    log.append(_outcome(lambda: y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)))
    e.sum().backward(retain_graph=True)
    log.append(_r(x.grad))
    # the example: pack, pack, unpack, unpack
    with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t):
        y = x * x
    y.sum().backward()
    log.append(x.pow(2).grad_fn._saved_self is x)
    # a view made under no_grad of a leaf: requires grad, has no gradient edge; unpacked the same
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lib.no_grad():
        v = a[1:]
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p):
        y = (v * w[:2]).sum()
    log.append(y.grad_fn.next_functions[0][0]._saved_self.requires_grad)
    y.backward()
    log.append((_r(w.grad), a.grad))
    return log


def inplace(lib):
    log = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        b = a * 1
        c = b * b
    b.add_(1)  # with hooks, no version check: the hooks own the value
    log.append(_outcome(lambda: c.sum().backward()))
    log.append(_r(a.grad))
    a.grad = None
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        b = a * 1
        c = b * b
    b.add_(1)  # the clone kept the old value
    c.sum().backward()
    log.append(_r(a.grad))
    b = a * 1
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
        log.append(_outcome(lambda: b * b))
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        c = a * a
    log.append(_outcome(lambda: c.sum().backward()))
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        c = a * a
    log.append(_outcome(lambda: (c.sum().backward(), c.grad_fn._saved_self)))
    log.append(_outcome(lambda: lib.autograd.graph.saved_tensors_hooks(1, 2).__enter__()))
    # in-place ops: the pack hook gets the written tensor itself (exp_'s result), a clone of what sin_ changes
    a.grad = None
    packs = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: packs.append((tuple(t.shape), t._version)) or t, lambda p: p):
        b = a * 1
        b.exp_()
        c = b.sin_()
        d = b[0] * 3
        e = lib.nn.functional.relu(b)
    (c.sum() + d + e.sum()).backward()
    log.append((packs, _r(a.grad)))
    return log


def nesting_and_disable(lib):
    log = []
    g = lib.autograd.graph
    x = lib.tensor([1.0, 2.0], requires_grad=True)

    def named(n):
        def pack(t):
            log.append(("pack", n))
            return (n, t)

        def unpack(p):
            log.append(("unpack", n))
            return p[1]

        return g.saved_tensors_hooks(pack, unpack)

    with named("outer"):
        with named("inner"):
            y = x * x
        z = x * x
    (y + z).sum().backward()
    log.append(_r(x.grad))
    with g.disable_saved_tensors_hooks("no hooks here"):
        log.append(_outcome(lambda: named("x").__enter__()))
        with g.disable_saved_tensors_hooks("inner message"):
            log.append(_outcome(lambda: g.save_on_cpu().__enter__()))
        log.append(_outcome(lambda: named("y").__enter__()))
        y = x * x  # recording still works
    with named("z"):
        log.append(_outcome(lambda: g.disable_saved_tensors_hooks("inside hooks").__enter__()))
    with named("after"):  # enabled again
        y = x * x
    log.append(len(log))
    return log


def create_graph(lib):
    log = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(
        lambda t: log.append("pack") or t.detach().clone(), lambda p: log.append("unpack") or p
    ):
        c = (a**3).sum()
        d = (a * a.exp()).sum()
    (g,) = lib.autograd.grad(c, a, create_graph=True)
    log.append((_r(g), type(g.grad_fn).__name__))
    g.sum().backward()
    log.append(_r(a.grad))
    (g,) = lib.autograd.grad(d, a, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), a)
    log.append((_r(g), _r(h)))
    return log


def custom_function(lib):
    log = []

    class Sq(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            log.append(("backward sees x", x is a))
            return 2 * x * g

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(
        lambda t: log.append(("pack", t is a, t.requires_grad)) or t, lambda p: log.append("unpack") or p
    ):
        s = Sq.apply(a)
    s.sum().backward()
    log.append(_r(a.grad))
    return log


def custom_function_raw(lib):
    """``ctx._raw_saved_tensors``: one ``SavedTensor`` per saved value, hooks set afterwards, freed after backward."""
    log = []

    class Sq(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, _ = ctx.saved_tensors
            return 2 * x * g

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    s = Sq.apply(a)
    raw = s.grad_fn._raw_saved_tensors
    log.append((type(raw).__name__, [type(v).__name__ for v in raw]))
    raw[0].register_hooks(lambda t: log.append(("pack", t is a, t.requires_grad)) or t, lambda p: log.append("up") or p)
    log.append(_outcome(lambda: raw[1].register_hooks(lambda t: t, lambda p: p)))
    s.sum().backward()
    log.append(_r(a.grad))
    log.append(_outcome(lambda: s.grad_fn._raw_saved_tensors))
    return log


def checkpoints(lib):
    log = []
    g = lib.autograd.graph
    ckpt = lib.utils.checkpoint.checkpoint
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    for reentrant in (False, True):
        n = []
        with g.saved_tensors_hooks(lambda t, n=n: n.append("p") or t, lambda t, n=n: n.append("u") or t):
            y = ckpt(lambda a: (a * a).exp(), x, use_reentrant=reentrant)
        log.append(("forward", reentrant, n.count("p")))
        y.sum().backward()
        log.append(("backward", reentrant, _r(x.grad)))
        x.grad = None
    with g.disable_saved_tensors_hooks("no checkpoint"):
        log.append(_outcome(lambda: ckpt(lambda a: a * a, x, use_reentrant=False)))
    return log


def save_on_cpu_program(lib):
    log = []
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lib.autograd.graph.save_on_cpu(pin_memory=True):
        y = (x * x).exp().sum()
    s = y.grad_fn.next_functions[0][0]
    log.append((str(s._saved_result.device), _r(s._saved_result)))
    y.backward()
    log.append(_r(x.grad))
    sc = lib.autograd.graph.save_on_cpu()
    log.append((sc.pin_memory if hasattr(sc, "pin_memory") else None, type(sc).__mro__[1].__name__))
    return log


@pytest.mark.parametrize(
    "program",
    [
        basics,
        inplace,
        nesting_and_disable,
        create_graph,
        custom_function,
        custom_function_raw,
        checkpoints,
        save_on_cpu_program,
    ],
)
def test_same_as_pytorch(program):
    with np.errstate(all="ignore"):
        got = program(leafkit)
    want = program(torch)
    assert got == want


def test_save_on_cpu_moves_the_simulated_cuda_tensors_to_host():
    """On leafkit's cuda (simulated here; CuPy on a GPU) the saved tensors live on the CPU between forward and
    backward, and come back to cuda for the formulas: the gradients are those of a plain pass."""
    if leafkit.cuda.backend() is None:
        pytest.skip("cuda simulation is off")
    x = leafkit.tensor([0.5, 1.0, 1.5], device="cuda", requires_grad=True)
    with leafkit.autograd.graph.save_on_cpu():
        y = (x * x.sin()).exp().sum()
    node = y.grad_fn.next_functions[0][0]
    raw = node._raw_saved_result
    assert raw.unpack_hook is not None
    assert node._saved_result.device.type == "cuda"  # unpacked back onto its device
    y.backward()
    want = (x.detach() * x.detach().sin()).exp() * (x.detach().sin() + x.detach() * x.detach().cos())
    assert np.allclose(x.grad.cpu().numpy(), want.cpu().numpy())


def _random_gradients(data, program, hooks=None):
    if hooks is None:
        return run(leafkit, data, program)
    with leafkit.autograd.graph.saved_tensors_hooks(*hooks):
        return run(leafkit, data, program)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_pass_through_hooks_change_no_gradient(data):
    """Property: with hooks that only pass tensors through (or keep copies), every gradient of a random program
    equals the plain pass's."""
    leaves = data.draw(st.lists(leaf, min_size=1, max_size=3))
    program = data.draw(st.lists(step, min_size=1, max_size=8))
    copy = data.draw(st.booleans())
    pack = (lambda t: t.detach().clone()) if copy else (lambda t: t)
    plain = _random_gradients(leaves, program)
    hooked = _random_gradients(leaves, program, (pack, lambda t: t))
    np.testing.assert_array_equal(plain["value"], hooked["value"])
    assert ("grads" in plain) == ("grads" in hooked)
    for a, b in zip(plain.get("grads", []), hooked.get("grads", [])):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(inplace_arrays, inplace_arrays), st.lists(inplace_step, min_size=1, max_size=7))
def test_random_inplace_programs_under_hooks_match_pytorch(data, program):
    """Views and in-place ops recorded under pass-through hooks: no version check is made, so both libraries
    compute with what the saved storage holds when backward runs; facts, values and gradients must agree."""

    def under_hooks(lib):
        with warnings.catch_warnings(), lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            warnings.simplefilter("ignore")
            return run_inplace(lib, data, program)

    want, got = under_hooks(torch), under_hooks(leafkit)
    assert got[0] == want[0]
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[2][0] == want[2][0], (got[2], want[2])
    if want[2][0] == "ok":
        for g, w in zip(got[2][1], want[2][1]):
            assert (g is None) == (w is None)
            if g is not None:
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
