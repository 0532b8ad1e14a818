"""Engine properties: iterative walk, freeing, reference counting, thread-local grad mode, hooks."""

from __future__ import annotations

import gc
import sys
import threading
import weakref

import pytest

import leafkit as lk


def test_100k_op_chain_does_not_recurse():
    x = lk.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # a recursive walk would fail at once
    try:
        y.sum().backward()
    finally:
        sys.setrecursionlimit(limit)
    assert x.grad.tolist() == [1.0]


def test_graph_freed_by_refcount_after_backward():
    gc.disable()
    try:
        x = lk.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        ref = weakref.ref(y.grad_fn)
        inner = weakref.ref(y.grad_fn.next_functions[0][0])
        y.backward()
        assert y.grad_fn._released and inner()._released  # saved tensors freed
        del y
        assert ref() is None and inner() is None  # no cycle kept the nodes alive
        assert x.grad is not None
    finally:
        gc.enable()


def test_retain_graph_keeps_saved_tensors():
    x = lk.tensor([3.0], requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    assert not y.grad_fn._released
    y.backward()
    assert y.grad_fn._released
    assert x.grad.tolist() == [12.0]
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        _ = y.grad_fn._saved_self


def test_leaf_outlives_nothing_it_should_not():
    gc.disable()
    try:
        x = lk.tensor([1.0], requires_grad=True)
        xr = weakref.ref(x)
        y = x * 2
        del x
        assert xr() is not None  # the graph keeps the leaf through AccumulateGrad.variable
        del y
        assert xr() is None
    finally:
        gc.enable()


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        seen["other"] = lk.is_grad_enabled()

    with lk.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        seen["here"] = lk.is_grad_enabled()
    assert seen == {"other": True, "here": False}


def test_no_grad_decorator_on_generator_and_bare():
    x = lk.tensor([1.0], requires_grad=True)

    @lk.no_grad()
    def gen():
        yield x * 2
        yield x * 3

    assert [t.requires_grad for t in gen()] == [False, False]

    @lk.no_grad
    def bare():
        return x * 2

    assert bare().requires_grad is False
    assert lk.is_grad_enabled()


def test_hook_returning_wrong_shape_raises():
    x = lk.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: lk.ones(3))
    with pytest.raises(RuntimeError, match="changed the size"):
        y.sum().backward()


def test_node_hooks():
    x = lk.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda go: seen.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, gi[1]))
    y.sum().backward()
    assert seen == ["pre"]
    assert x.grad.tolist() == [6.0, 6.0]


def test_custom_function_on_tensors():
    class Cube(lk.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    x = lk.tensor([2.0], requires_grad=True)
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward" and not y.is_leaf  # PyTorch names the node <Function>Backward
    y.backward()
    assert x.grad.tolist() == [12.0]


def test_backward_on_leaf_and_multiple_roots():
    x = lk.tensor(2.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0
    a = lk.tensor([1.0, 2.0], requires_grad=True)
    lk.autograd.backward([(a * 2).sum(), (a * a).sum()])
    assert a.grad.tolist() == [4.0, 6.0]


def test_grad_across_simulated_cuda():
    x = lk.tensor([1.0, 2.0], requires_grad=True)
    y = x.cuda()
    assert y.device.type == "cuda" and y.data_ptr() != x.data_ptr()
    (y * y).sum().backward()
    assert x.grad.device.type == "cpu" and x.grad.tolist() == [2.0, 4.0]
