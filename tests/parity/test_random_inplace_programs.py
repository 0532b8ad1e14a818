"""Random programs of views and in-place changes, on PyTorch and on leafkit: the same values, gradients,
graph facts and errors.

This is where autograd is most subtle: a view shares its base's storage, an
in-place change of either rebases history (``CopySlices``,
``AsStridedBackward0``), and a tensor saved for backward and changed since
must make backward fail.  hypothesis draws the programs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import leafkit

torch = pytest.importorskip("torch")

VIEWS = ["row0", "col1", "slice", "t", "view", "select_last"]
INPLACE = [
    "add",
    "mul",
    "mul_self",
    "zero",
    "fill",
    "copy_other",
    "setitem",
    "sub_scaled",
    "div",
    "relu_",
    "exp_",
    "abs_",
    "sigmoid_",
    "neg_",
]
PURE = ["exp", "square", "tanh", "mul_leaf"]


def make_view(t, name):
    if name == "row0":
        return t[0]
    if name == "col1":
        return t[:, 1]
    if name == "slice":
        return t[1:, :2]
    if name == "t":
        return t.t()
    if name == "view":
        return t.view(-1)
    if name == "select_last":
        return t[-1, -1]
    raise AssertionError(name)


def do_inplace(lib, t, name, other):
    if name == "add":
        return t.add_(1.5)
    if name == "mul":
        return t.mul_(2.0)
    if name == "mul_self":
        return t.mul_(t.detach() + 1)
    if name == "zero":
        return t.zero_()
    if name == "fill":
        return t.fill_(0.25)
    if name == "copy_other":
        return t.copy_(other.reshape(-1)[: t.numel()].reshape(t.shape) if t.numel() else other.sum())
    if name == "setitem":
        if t.dim() == 0:
            return t.fill_(3.0)
        t[0] = other.sum()
        return t
    if name == "sub_scaled":
        return t.sub_(other.reshape(-1)[0], alpha=0.5)
    if name == "div":
        return t.div_(4.0)
    if name == "exp_":
        return t.mul_(0.1).exp_()
    return getattr(t, name)()  # relu_, abs_, sigmoid_, neg_


def do_pure(lib, t, name, leaf):
    if name == "exp":
        return (t * 0.2).exp()
    if name == "square":
        return t * t
    if name == "tanh":
        return t.tanh()
    if name == "mul_leaf":
        return t * leaf.reshape(-1)[0]
    raise AssertionError(name)


def run(lib, data, program):
    a = lib.tensor(data[0], requires_grad=True)
    w = lib.tensor(data[1], requires_grad=True)
    base = a * 1.0  # a non-leaf we may change in place
    pool = [base, a]  # the leaf too: views of it may not change in place
    facts = []
    for kind, name, i in program:
        src = pool[i % len(pool)]
        try:
            if kind == "view":
                out = make_view(src, name)
            elif kind == "inplace":
                out = do_inplace(lib, src, name, w * 1.0)
            else:
                out = do_pure(lib, src, name, w)
        except Exception as e:  # noqa: BLE001 - the error is the observation
            facts.append(("error", type(e).__name__))
            continue
        pool.append(out)
        fn = out.grad_fn
        facts.append((out.is_leaf, out.requires_grad, fn.name() if fn is not None else None, tuple(out.shape)))
    values = [np.asarray(p.detach().tolist(), dtype=float) for p in pool]
    try:
        total = None
        for k, p in enumerate(pool):
            if p.requires_grad:
                term = (p * (k + 1)).sum()
                total = term if total is None else total + term
        total.backward()
        grads = [np.asarray(a.grad.tolist()), None if w.grad is None else np.asarray(w.grad.tolist())]
        outcome = ("ok", grads)
    except Exception as e:  # noqa: BLE001
        outcome = ("error", type(e).__name__, "modified by an inplace operation" in str(e))
    return facts, values, outcome


arrays = st.lists(st.integers(-8, 8).map(lambda i: i / 4), min_size=6, max_size=6).map(
    lambda v: np.array(v, dtype=np.float32).reshape(2, 3)
)
step = st.one_of(
    st.tuples(st.just("view"), st.sampled_from(VIEWS), st.integers(0, 9)),
    st.tuples(st.just("inplace"), st.sampled_from(INPLACE), st.integers(0, 9)),
    st.tuples(st.just("pure"), st.sampled_from(PURE), st.integers(0, 9)),
)


@settings(max_examples=150, deadline=None)
@given(st.tuples(arrays, arrays), st.lists(step, min_size=1, max_size=7))
def test_views_and_inplace_match_pytorch(data, program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = run(torch, data, program)
        got = run(leafkit, data, program)
    assert got[0] == want[0]
    assert len(got[1]) == len(want[1])
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[2][0] == want[2][0], (got[2], want[2])
    if want[2][0] == "ok":
        for g, w in zip(got[2][1], want[2][1]):
            assert (g is None) == (w is None)
            if g is not None:
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    else:
        assert got[2] == want[2]
