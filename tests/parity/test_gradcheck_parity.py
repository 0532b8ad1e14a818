"""``torch.autograd.gradcheck`` / ``gradgradcheck`` on leafkit and on PyTorch: results, whole failure messages,
warnings.

Inputs are fixed values (the two libraries draw different random numbers),
so even the Jacobians printed in a failure message must be the same text.
Fast mode's random vectors are PyTorch's own (leafkit draws them from the same
Mersenne Twister stream), so its messages match too.
"""

from __future__ import annotations

import re

import pytest
from hooks_harness import compare

import leafkit

torch = pytest.importorskip("torch")

X = [[0.3, -0.7, 1.1], [0.5, 2.0, -1.3]]


def x_of(lib, dtype=None, rg=True):
    return lib.tensor(X, dtype=dtype or lib.float64, requires_grad=rg)


def functions(lib):
    """Custom Functions, right and wrong, written once for both libraries."""
    F = lib.autograd.Function

    class Cube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    class WrongCube(F):  # the classic slip: forgot the factor 3
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return x**2 * g

    class IgnoresGradOutput(F):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return lib.ones(2, 3, dtype=lib.float64)

    calls = [0]

    class Drifting(F):  # a backward that gives another answer each time
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls[0] += 1
            return g * (2 + calls[0] * 1e-8)

    class MulAdd(F):  # two inputs (one a number), two outputs
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.save_for_backward(a, b)
            ctx.k = k
            return a * b * k, a + b

        @staticmethod
        def backward(ctx, g1, g2):
            a, b = ctx.saved_tensors
            return g1 * b * ctx.k + g2, None, g1 * a * ctx.k + g2

    class TakesNone(F):  # set_materialize_grads(False): an output without gradient gives None
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            if g1 is None:
                return None if g2 is None else g2 * 3
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    class OnceDiff(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.exp()

    class DetachedBackward(F):  # a first derivative right, but not differentiable again
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.detach().cos()

    return locals()


def gradcheck_passes(lib, obs):
    fs = functions(lib)
    gc = lib.autograd.gradcheck
    obs.v("sin", gc(lib.sin, x_of(lib)))
    obs.v("a lambda of two inputs", gc(lambda a, b: (a * b).exp(), (x_of(lib), x_of(lib) * 0.5)))
    obs.v("Cube", gc(fs["Cube"].apply, x_of(lib)))
    obs.v("Cube, fast mode", gc(fs["Cube"].apply, x_of(lib), fast_mode=True))
    obs.v("MulAdd with a number", gc(fs["MulAdd"].apply, (x_of(lib), 2.5, x_of(lib) * 2)))
    obs.v("MulAdd, fast mode", gc(fs["MulAdd"].apply, (x_of(lib), 2.5, x_of(lib) * 2), fast_mode=True))
    obs.v("a list of inputs", gc(lambda a, b: a * b, [x_of(lib), x_of(lib, rg=False)]))
    obs.v("batched grad", gc(lambda a: (a.tanh(), a.sum()), x_of(lib), check_batched_grad=True))
    obs.v("0-d input", gc(lambda a: a * a, lib.tensor(1.5, dtype=lib.float64, requires_grad=True)))
    obs.v("mean over a dim", gc(lambda a: a.mean(1), x_of(lib), fast_mode=True))


def test_gradcheck_passes():
    compare(gradcheck_passes, torch, leafkit)


def gradcheck_failures(lib, obs):
    fs = functions(lib)
    gc = lib.autograd.gradcheck
    obs.err("wrong backward", lambda: gc(fs["WrongCube"].apply, x_of(lib)))
    obs.err("wrong backward, fast mode", lambda: gc(fs["WrongCube"].apply, x_of(lib), fast_mode=True))
    obs.v("raise_exception=False", gc(fs["WrongCube"].apply, x_of(lib), raise_exception=False))
    obs.err("grad_output ignored", lambda: gc(fs["IgnoresGradOutput"].apply, x_of(lib)))
    obs.err("not reentrant", lambda: gc(fs["Drifting"].apply, x_of(lib)))
    obs.v("not reentrant, within nondet_tol", gc(functions(lib)["Drifting"].apply, x_of(lib), nondet_tol=1e-6))
    obs.v("a backward that takes None", gc(fs["TakesNone"].apply, x_of(lib)))
    obs.err("no differentiable output", lambda: gc(lambda a: a.detach() * 2, x_of(lib)))
    obs.v("an output that does not depend on the input", gc(lambda a: a.detach() * 0, x_of(lib)))
    obs.err("wrong gradient of the second input", lambda: gc(lambda a, b: a * b.detach(), (x_of(lib), x_of(lib))))


def test_gradcheck_failures():
    compare(gradcheck_failures, torch, leafkit)


def gradcheck_input_checks(lib, obs):
    gc = lib.autograd.gradcheck
    obs.err("float32 input: warns, then fails", lambda: gc(lambda a: a * a * 10, x_of(lib, lib.float32)))
    obs.err("float32, passing", lambda: gc(lambda a: a * 2, x_of(lib, lib.float32), atol=1e-2, rtol=1e-2))
    obs.err("no input requires grad", lambda: gc(lib.sin, x_of(lib, rg=False)))
    expanded = lib.tensor([1.0], dtype=lib.float64, requires_grad=True).expand(3)
    obs.err("stride 0", lambda: gc(lib.sin, expanded))
    obs.err("forward AD and backward AD both off", lambda: gc(lib.sin, x_of(lib), check_backward_ad=False))
    obs.err("eps too small for float64", lambda: gc(lambda a: a.exp(), x_of(lib), eps=1e-13, atol=1e-9))


def test_gradcheck_input_checks():
    compare(gradcheck_input_checks, torch, leafkit)


def gradgradcheck_cases(lib, obs):
    fs = functions(lib)
    ggc = lib.autograd.gradgradcheck
    go = lib.tensor([[1.0, -0.5, 0.25], [2.0, 0.1, -1.0]], dtype=lib.float64, requires_grad=True)
    obs.v("sin", ggc(lib.sin, x_of(lib)))
    obs.v("x * exp(x), given grad_outputs", ggc(lambda a: a * a.exp(), x_of(lib), go))
    obs.v("Cube", ggc(fs["Cube"].apply, x_of(lib), go))
    obs.v("Cube, fast mode", ggc(fs["Cube"].apply, x_of(lib), go, fast_mode=True))
    obs.v("non-contiguous random grad_outputs", ggc(lib.tanh, x_of(lib), gen_non_contig_grad_outputs=True))
    obs.err("a backward that is not differentiable", lambda: ggc(fs["DetachedBackward"].apply, x_of(lib), go))
    obs.err("fast mode", lambda: ggc(fs["DetachedBackward"].apply, x_of(lib), go, fast_mode=True))
    obs.err("once_differentiable", lambda: ggc(fs["OnceDiff"].apply, x_of(lib), go))
    obs.err("flags", lambda: ggc(lib.sin, x_of(lib), check_rev_over_rev=False))


def test_gradgradcheck():
    compare(gradgradcheck_cases, torch, leafkit)


def test_gradcheck_error_is_a_runtime_error():
    from leafkit.autograd.gradcheck import GradcheckError

    assert issubclass(GradcheckError, RuntimeError)
    with pytest.raises(GradcheckError, match=re.escape("Jacobian mismatch for output 0 with respect to input 0,\n")):
        leafkit.autograd.gradcheck(functions(leafkit)["WrongCube"].apply, x_of(leafkit))


def test_forward_mode_checks_say_what_is_missing():
    with pytest.raises(NotImplementedError, match="no forward-mode AD"):
        leafkit.autograd.gradcheck(leafkit.sin, x_of(leafkit), check_forward_ad=True)
    with pytest.raises(NotImplementedError, match="no forward-mode AD"):
        leafkit.autograd.gradgradcheck(leafkit.sin, x_of(leafkit), check_fwd_over_rev=True)


def test_undefined_grad_of_a_function_no_gradient_reaches():
    """PyTorch calls a Function's backward with ``None`` when no gradient reached any of its outputs (so
    ``check_undefined_grad`` fails for a backward that cannot take it); leafkit's engine does not run such a node at
    all (see leafkit.autograd.gradcheck), so there the backward is never given None and the check passes."""
    F = leafkit.autograd.Function

    class Double(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(TypeError):
        torch.autograd.gradcheck(_torch_double(), x_of(torch))
    assert leafkit.autograd.gradcheck(Double.apply, x_of(leafkit))


def _torch_double():
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double.apply
