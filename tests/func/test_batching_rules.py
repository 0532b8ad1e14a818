"""vmap's batching rules in leafkit: which ops have one, the per-sample fallback, the machinery around them.

Values are checked against running the op sample by sample in leafkit; PyTorch parity of the
same behaviour is in ``tests/parity/test_func_parity.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import leafkit
from leafkit._functions import SPECS
from leafkit._functions._batched import STACK, BatchedTensor
from leafkit.func import grad, vmap

# ops that run once per sample under vmap, on purpose: in-place views are given the layout of the
# out-of-place op instead (leafkit._functions.shape), the others are rare enough for the fallback
WITHOUT_RULE = {
    "masked_scatter",
    "masked_scatter_backward",
    "native_batch_norm_backward",
    "t_",
    "transpose_",
    "squeeze_",
    "unsqueeze_",
}


def test_every_op_of_the_families_has_a_rule():
    """Every op registered by the families has a batching rule but the few listed above; a new op without one
    still works (the fallback), this list just says which ones run sample by sample."""
    missing = sorted(name for name, spec in SPECS.items() if spec.batch is None and name not in WITHOUT_RULE)
    known = {  # the ops this suite was written against; ops added later may come without rules at first
        "add", "mul", "sum_dim", "mm", "bmm", "index", "gather", "nll_loss_forward", "cat", "view", "softmax",
        "native_batch_norm", "mse_loss", "gelu", "clone", "copy_", "as_strided",
    }  # fmt: skip
    assert not (set(missing) & known)
    assert all(SPECS[name].batch is not None for name in known)


def test_an_op_without_a_rule_runs_per_sample_with_pytorchs_warning():
    x = leafkit.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = leafkit.tensor([True, False, True])

    def f(t):
        return t.masked_scatter(mask, t * 10)

    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet implemented the "):
        got = vmap(f)(x)
    want = leafkit.stack([f(r) for r in x])
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_gradients_flow_through_the_fallback():
    mask = leafkit.tensor([True, False, True])
    weights = leafkit.tensor([1.0, 2.0, 3.0])

    def f(t):
        return t.masked_scatter(mask, t * 10) * weights

    x = leafkit.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vmap(f)(x).sum().backward()
    rows = [leafkit.tensor(r, requires_grad=True) for r in ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])]
    for r in rows:
        f(r).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.stack([r.grad.numpy() for r in rows]))


def test_the_transform_stack_is_left_clean_after_an_error():
    x = leafkit.ones(3, 2)
    with pytest.raises(RuntimeError):
        vmap(grad(lambda t: t.sum().item()))(x)
    assert not STACK
    assert leafkit.ones(2).requires_grad_().requires_grad  # requires_grad_ works again outside


def test_batched_tensor_shows_the_logical_sample():
    seen = []
    vmap(lambda t: seen.append((type(t).__name__, isinstance(t, BatchedTensor), t.shape, t.stride())) or t)(
        leafkit.zeros(4, 3, 2)
    )
    assert seen == [("Tensor", True, leafkit.Size([3, 2]), (2, 1))]


def test_per_sample_gradients_use_one_batched_computation():
    """vmap(grad) with a weight shared by the samples: each sample's gradient, in one pass (no fallback)."""
    w = leafkit.tensor([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]])
    x = leafkit.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]])

    def loss(w_, x_):
        return (x_ @ w_).tanh().sum()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback's warning would fail the test
        got = vmap(grad(loss), in_dims=(None, 0))(w, x)
    want = leafkit.stack([grad(loss)(w, r) for r in x])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
