"""leafkit's non-reentrant checkpoint from the inside: what the graph keeps, when it recomputes, what it frees.

(What PyTorch shows a learner, the same on both libraries, is in tests/parity/test_checkpoint_parity.py.)
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import leafkit as torch
from leafkit.autograd.graph import SavedVariable
from leafkit.utils import checkpoint as cp


def saved_arrays(out):
    """The arrays the graph of ``out`` keeps (placeholders keep none), read without triggering a recomputation."""
    found, stack, seen = [], [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stash = node._stash
        if not isinstance(stash, cp._Recomputable):
            found += [v.data for v in stash or () if isinstance(v, SavedVariable)]
        stack += [n for n, _ in node.next_functions]
    return found


def chain(t):
    return t.exp().sin().tanh() * t


def counting(fn, calls):
    def wrapped(*a, **k):
        calls.append(1)
        return fn(*a, **k)

    return wrapped


def test_the_region_keeps_no_saved_tensor_until_backward_needs_one():
    x = torch.tensor([0.3, -0.7, 1.1], requires_grad=True)
    plain = chain(x)
    assert len(saved_arrays(plain)) >= 4
    calls = []
    out = cp.checkpoint(counting(chain, calls), x, use_reentrant=False)
    assert saved_arrays(out) == [] and len(calls) == 1
    out.sum().backward()
    assert len(calls) == 2  # one recomputation for the whole region
    x2 = x.detach().requires_grad_()
    chain(x2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())


def test_each_recomputed_tensor_is_handed_out_once():
    x = torch.tensor([0.3, -0.7], requires_grad=True)
    calls = []
    out = cp.checkpoint(counting(lambda t: t.exp(), calls), x, use_reentrant=False)
    a = out.grad_fn._saved_result
    b = out.grad_fn._saved_result  # read again: recomputed again, as PyTorch's unpack hook does
    assert len(calls) == 3
    assert torch.equal(a, b) and a is not b
    placeholder = out.grad_fn._stash
    assert isinstance(placeholder, cp._Recomputable) and placeholder.values[0] is cp._TAKEN


def test_the_graph_frees_the_frame_with_its_nodes():
    import gc
    import weakref

    x = torch.ones(3, requires_grad=True)
    out = cp.checkpoint(chain, x, use_reentrant=False)
    frame = weakref.ref(out.grad_fn._stash.frame)
    del out
    gc.collect()
    assert frame() is None


def test_no_grad_runs_the_function_once_and_keeps_nothing():
    calls = []
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        out = cp.checkpoint(counting(chain, calls), x, use_reentrant=False)
    assert out.grad_fn is None and len(calls) == 1


def test_context_fn_wraps_the_forward_and_the_recomputation():
    log = []

    @contextlib.contextmanager
    def ctx(name):
        log.append(f"{name} in")
        yield
        log.append(f"{name} out")

    x = torch.ones(2, requires_grad=True)
    out = cp.checkpoint(chain, x, use_reentrant=False, context_fn=lambda: (ctx("forward"), ctx("recompute")))
    out.sum().backward()
    assert log == ["forward in", "forward out", "recompute in", "recompute out"]


def test_a_context_that_swallows_the_forward_error():
    class Swallow:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return True

    def boom(t):
        raise ValueError("boom")

    with pytest.raises(RuntimeError, match="the forward context provided by context_fn suppressed an exception"):
        cp.checkpoint(
            boom, torch.ones(1, requires_grad=True), use_reentrant=False, context_fn=lambda: (Swallow(), Swallow())
        )


def nondeterministic():
    calls = []

    def fn(t):
        calls.append(1)
        return t.sin() if len(calls) == 1 else t[:1].sin()

    return fn


def test_debug_lists_the_recorded_operations():
    x = torch.ones(3, requires_grad=True)
    out = cp.checkpoint(nondeterministic(), x, use_reentrant=False, debug=True)
    with pytest.raises(cp.CheckpointError) as err:
        out.sum().backward()
    text = str(err.value)
    assert "Operations recorded during the original forward:\n  1: SinBackward0   saves f32[3]" in text
    assert "Operations recorded during recomputation:\n  1: SliceBackward0\n  2: SinBackward0   saves f32[1]" in text
    assert "Recomputed values for the following tensors have different metadata" in text
    with cp.set_checkpoint_debug_enabled(True):
        out = cp.checkpoint(nondeterministic(), x, use_reentrant=False)
    with pytest.raises(cp.CheckpointError, match="Operations recorded"):
        out.sum().backward()
    with pytest.raises(ValueError, match="debug=True is incompatible with non-default context_fn"):
        cp.checkpoint(chain, x, use_reentrant=False, debug=True, context_fn=lambda: cp.noop_context_fn())


def test_determinism_check_none_still_refuses_other_operations():
    x = torch.ones(3, requires_grad=True)
    calls = []

    def fn(t):
        calls.append(1)
        return t.sin() if len(calls) == 1 else t.cos()

    out = cp.checkpoint(fn, x, use_reentrant=False, determinism_check="none")
    with pytest.raises(cp.CheckpointError, match="recorded other operations than the original forward"):
        out.sum().backward()


def test_nested_checkpoints():
    def inner(t):
        return t.sin() * t

    def outer(t):
        return cp.checkpoint(inner, t * 2, use_reentrant=False).exp()

    x = torch.tensor([0.2, 0.4], dtype=torch.float64, requires_grad=True)
    cp.checkpoint(outer, x, use_reentrant=False).sum().backward()
    y = x.detach().requires_grad_()
    (((y * 2).sin() * (y * 2)).exp()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy())


def test_detach_variable_and_its_error():
    x = torch.ones(2, requires_grad=True)
    (d, n) = cp.detach_variable((x * 2, 3))
    assert d.is_leaf and d.requires_grad and n == 3
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got Unsupported input type: list"):
        cp.detach_variable([x])
