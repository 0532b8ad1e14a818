"""Property tests: checkpointing (both variants) and pass-through module hooks change no gradient.

Random programs are drawn as in ``tests/parity/test_random_programs.py``
(leaves, then operations from ``tests/op_db.py`` rows that have a
``program`` form, some under ``no_grad`` or after ``detach``).  The program is
run plainly, inside ``checkpoint`` (reentrant and not), and with every
operation wrapped in a module carrying forward hooks and full backward
(pre-)hooks that return None; every leaf's gradient must be the plain one.
"""

from __future__ import annotations

import contextlib

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from op_db import BY_NAME, PROGRAM_ROWS

import leafkit as lk
from leafkit.utils.checkpoint import checkpoint

UNARY = ["detach"] + [r.name for r in PROGRAM_ROWS if r.arity == 1]
BINARY = [r.name for r in PROGRAM_ROWS if r.arity == 2]


def apply(kind, name, a, b):
    if name == "detach":
        return a.detach()
    row = BY_NAME[name]
    return row.program(lk, a) if kind == "u" else row.program(lk, a, b)


def program_fn(program, n_leaves, wrap=None, keep=None):
    """The program as a function of its leaves, returning one scalar: the weighted sum of the results that
    require grad in a plain run (``keep``: which ones; by default, those that require grad in this run).  None when
    there is none."""

    def f(*leaves):
        pool = list(leaves)
        for kind, name, i, j, under_no_grad in program:
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            with lk.no_grad() if under_no_grad else contextlib.nullcontext():
                out = wrap(kind, name, a, b) if wrap else apply(kind, name, a, b)
            pool.append(out)
        made = pool[n_leaves:]
        kept = keep if keep is not None else [p.requires_grad for p in made]
        terms = [(p * (k + 1)).sum() for k, (p, use) in enumerate(zip(made, kept)) if use]
        return sum(terms[1:], terms[0]) if terms else None

    return f


def kept(data, program):
    """Which results of the program require grad when it runs plainly."""
    leaves = leaves_of(data)
    pool = []
    program_fn(program, len(leaves), wrap=lambda *a: pool.append(apply(*a)) or pool[-1])(*leaves)
    return [p.requires_grad for p in pool]


def leaves_of(data):
    return [lk.tensor(arr, requires_grad=rg) for arr, rg in data]


def leaf_grads(leaves, total):
    total.backward()
    return [None if x.grad is None else x.grad.numpy().copy() for x in leaves]


def assert_same(got, want, none_is_zero=False):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if none_is_zero:
            g = w if g is None and w is not None and not w.any() else g
            w = g if w is None and g is not None and not g.any() else w
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def plain(data, program):
    leaves = leaves_of(data)
    try:
        total = program_fn(program, len(leaves))(*leaves)
    except RuntimeError:  # a drawn step that does not apply (a view of an incompatible shape ...)
        assume(False)
    assume(total is not None)
    return leaf_grads(leaves, total)


arrays = st.lists(st.floats(-2, 2, allow_nan=False, width=32), min_size=12, max_size=12).map(
    lambda v: np.array(v, dtype=np.float32).reshape(3, 4)
)
leaf = st.tuples(arrays, st.booleans())
step = st.one_of(
    st.tuples(st.just("u"), st.sampled_from(UNARY), st.integers(0, 20), st.integers(0, 20), st.booleans()),
    st.tuples(st.just("b"), st.sampled_from(BINARY), st.integers(0, 20), st.integers(0, 20), st.booleans()),
)
programs = given(st.lists(leaf, min_size=1, max_size=3), st.lists(step, min_size=1, max_size=8))


@settings(max_examples=60, deadline=None)
@programs
def test_non_reentrant_checkpoint_gives_the_plain_gradients(data, program):
    want = plain(data, program)
    leaves = leaves_of(data)
    total = checkpoint(program_fn(program, len(leaves)), *leaves, use_reentrant=False)
    assert_same(leaf_grads(leaves, total), want)
    # and through autograd.grad, which the reentrant variant refuses
    leaves = leaves_of(data)
    total = checkpoint(program_fn(program, len(leaves)), *leaves, use_reentrant=False)
    wanted = [x for x in leaves if x.requires_grad]
    got = lk.autograd.grad(total, wanted, allow_unused=True)
    assert_same([None if g is None else g.numpy() for g in got], [w for w, x in zip(want, leaves) if x.requires_grad])


@settings(max_examples=60, deadline=None)
@programs
def test_reentrant_checkpoint_gives_the_plain_gradients(data, program):
    want = plain(data, program)
    leaves = leaves_of(data)
    total = checkpoint(program_fn(program, len(leaves), keep=kept(data, program)), *leaves, use_reentrant=True)
    assert_same(leaf_grads(leaves, total), want)


class Step(lk.nn.Module):
    """One operation of a program as a module (so hooks can watch it)."""

    def __init__(self, kind, name):
        super().__init__()
        self.kind, self.name = kind, name

    def forward(self, a, b):
        return apply(self.kind, self.name, a, b)


@settings(max_examples=60, deadline=None)
@programs
def test_pass_through_module_hooks_give_the_plain_gradients(data, program):
    want = plain(data, program)
    seen = []

    def wrap(kind, name, a, b):
        m = Step(kind, name)
        m.register_forward_pre_hook(lambda mod, args: None)
        m.register_forward_hook(lambda mod, args, out: None)
        m.register_full_backward_pre_hook(lambda mod, go: seen.append("pre"))
        m.register_full_backward_hook(lambda mod, gi, go: seen.append("full"))
        return m(a, b)  # (the programs' in-place steps work on copies, so no output of a hooked module is changed)

    leaves = leaves_of(data)
    total = program_fn(program, len(leaves), wrap)(*leaves)
    assert total is not None
    # a tensor given to a hooked module that does not use it gets a zero gradient (not None), as in PyTorch: the
    # module's inputs all pass through one BackwardHookFunction node
    assert_same(leaf_grads(leaves, total), want, none_is_zero=True)
    assert seen.count("pre") >= seen.count("full")
