"""Dropout, BatchNorm1d, RNNCell and BCEWithLogitsLoss on their own (no PyTorch needed).

What the parity tests cannot show: the statistics of leafkit's own dropout
masks, finite-difference checks of batch norm's first and second
derivatives, buffers against the running-average formulas written out in
NumPy, and the layers on the (simulated) cuda device.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import leafkit as torch
import leafkit.nn as nn
import leafkit.nn.functional as F

H = 1e-6


def numeric_grad(f, x: np.ndarray) -> np.ndarray:
    """Central differences of the scalar ``f`` at ``x`` (float64), element by element."""
    g = np.zeros_like(x)
    flat, gf = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + H
        up = f(x)
        flat[i] = old - H
        down = f(x)
        flat[i] = old
        gf[i] = (up - down) / (2 * H)
    return g


# ============================================================================ Dropout ==========
def test_dropout_mask_statistics_and_scaling():
    torch.manual_seed(0)
    p = 0.3
    x = torch.ones(100_000, requires_grad=True)
    y = F.dropout(x, p)
    mask = y.grad_fn._saved_other.numpy()
    kept = mask[mask != 0]
    assert np.all(kept == np.float32(1) / np.float32(1 - p))
    assert abs((mask == 0).mean() - p) < 5 * math.sqrt(p * (1 - p) / mask.size)
    assert abs(y.mean().item() - 1.0) < 0.02  # the expected value is kept
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), mask)  # a dropped element gets no gradient


def test_dropout_is_reproducible_with_a_seed_and_different_without():
    def draw():
        return F.dropout(torch.ones(50), 0.5).numpy()

    torch.manual_seed(7)
    a, b = draw(), draw()
    torch.manual_seed(7)
    assert np.array_equal(draw(), a)
    assert not np.array_equal(a, b)


def test_dropout_module_follows_train_and_eval():
    d = nn.Dropout(0.5)
    x = torch.randn(8, 8)
    assert d.training and d(x) is not x
    assert d.eval() is d and not d.training and d(x) is x
    d.train()
    assert d(x) is not x
    d.p = 0.0
    assert d(x) is x


def test_dropout_inplace_changes_the_input_and_bumps_its_version():
    x = torch.randn(4, 4, requires_grad=True)
    z = x * 1
    v = z._version
    out = nn.Dropout(0.5, inplace=True)(z)
    assert out is z and z._version == v + 1 and z.grad_fn.name() == "MulBackward0"


def test_dropout_on_cuda_keeps_the_device():
    x = torch.randn(4, 4, requires_grad=True)
    y = F.dropout(x.cuda(), 0.5)
    assert y.device.type == "cuda" and y.grad_fn._saved_other.device.type == "cuda"
    y.sum().backward()
    assert x.grad.device.type == "cpu"
    assert set(np.unique(x.grad.numpy()).tolist()) <= {0.0, 2.0}


def test_dropout_float64_mask_has_the_input_dtype():
    y = F.dropout(torch.ones(10, dtype=torch.float64, requires_grad=True), 0.5)
    assert y.dtype == torch.float64 and y.grad_fn._saved_other.dtype == torch.float64


# ========================================================================= BatchNorm1d ==========
def test_batchnorm_weights_are_parameters_and_running_stats_are_buffers():
    bn = nn.BatchNorm1d(3)
    assert [k for k, _ in bn.named_parameters()] == ["weight", "bias"]
    assert [k for k, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert all(p.is_leaf and p.requires_grad for p in bn.parameters())
    assert not any(b.requires_grad for b in bn.buffers())
    assert bn.num_batches_tracked.dtype == torch.int64 and bn.num_batches_tracked.dim() == 0
    np.testing.assert_array_equal(bn.weight.detach().numpy(), 1)
    np.testing.assert_array_equal(bn.bias.detach().numpy(), 0)


def test_batchnorm_running_stats_follow_the_formulas():
    """Exponential averages with ``momentum`` (the unbiased batch variance), a cumulative average with None."""
    rng = np.random.default_rng(0)
    for momentum in (0.1, 0.7, None):
        bn = nn.BatchNorm1d(2, momentum=momentum)
        rm, rv = np.zeros(2), np.ones(2)
        batches = []
        for step in range(4):
            X = (rng.standard_normal((5, 2, 3)) * (step + 1) + step).astype(np.float32)
            bn(torch.tensor(X))
            X = X.astype(np.float64)
            batches.append((X.mean(axis=(0, 2)), X.var(axis=(0, 2), ddof=1)))
            if momentum is not None:
                rm = (1 - momentum) * rm + momentum * batches[-1][0]
                rv = (1 - momentum) * rv + momentum * batches[-1][1]
        if momentum is None:  # factor 1/num_batches_tracked: the plain average of every batch's statistics
            rm = np.mean([m for m, _ in batches], axis=0)
            rv = np.mean([v for _, v in batches], axis=0)
        np.testing.assert_allclose(bn.running_mean.numpy(), rm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bn.running_var.numpy(), rv, rtol=1e-5, atol=1e-6)
        assert int(bn.num_batches_tracked) == 4


def test_batchnorm_eval_uses_running_stats_and_a_single_sample_works():
    bn = nn.BatchNorm1d(3)
    X = np.random.default_rng(1).standard_normal((16, 3)).astype(np.float32) * 3 + 2
    for _ in range(30):
        bn(torch.tensor(X))
    bn.eval()
    before = [b.numpy().copy() for b in bn.buffers()]
    one = bn(torch.tensor(X[:1]))
    want = (X[:1] - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + bn.eps)
    np.testing.assert_allclose(one.detach().numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn(torch.tensor(X)).detach().numpy()[:1], one.detach().numpy(), rtol=1e-6)
    assert all(np.array_equal(a, b.numpy()) for a, b in zip(before, bn.buffers()))


def test_optimizer_steps_parameters_never_buffers():
    bn = nn.BatchNorm1d(2)
    opt = torch.optim.SGD(bn.parameters(), lr=0.5)
    assert len(opt.param_groups[0]["params"]) == 2
    x = torch.randn(6, 2) * 4 + 1
    loss = (bn(x) * torch.tensor([1.0, -2.0])).sum()
    loss.backward()
    rm = bn.running_mean.numpy().copy()
    opt.step()
    assert np.array_equal(bn.running_mean.numpy(), rm) and bn.running_mean.grad is None
    assert not np.allclose(bn.bias.detach().numpy(), 0)


def test_batchnorm_to_cuda_moves_buffers_and_trains_there_like_on_cpu():
    X = np.random.default_rng(2).standard_normal((6, 3, 2)).astype(np.float32)
    cpu, cuda = nn.BatchNorm1d(3), nn.BatchNorm1d(3).cuda()
    assert all(b.device.type == "cuda" for b in cuda.buffers())
    assert all(p.device.type == "cuda" and p.is_leaf for p in cuda.parameters())
    for m in (cpu, cuda):
        x = torch.tensor(X, device=m.weight.device, requires_grad=True)
        m(x).pow(2).sum().backward()
    for a, b in zip(list(cpu.parameters()) + list(cpu.buffers()), list(cuda.parameters()) + list(cuda.buffers())):
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=1e-6)
        if a.grad is not None:
            np.testing.assert_allclose(b.grad.cpu().numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert cuda.running_mean.device.type == "cuda"
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        cuda(torch.tensor(X))


def test_batchnorm_double_and_state_dict_round_trip():
    bn = nn.BatchNorm1d(2).double()
    assert bn.running_mean.dtype == torch.float64 and bn.num_batches_tracked.dtype == torch.int64
    bn(torch.randn(5, 2, dtype=torch.float64) * 3)
    fresh = nn.BatchNorm1d(2).double()
    assert repr(fresh.load_state_dict(bn.state_dict())) == "<All keys matched successfully>"
    for a, b in zip(bn.state_dict().values(), fresh.state_dict().values()):
        assert np.array_equal(a.numpy(), b.numpy())
    bn.eval(), fresh.eval()
    x = torch.randn(3, 2, dtype=torch.float64)
    assert np.array_equal(bn(x).detach().numpy(), fresh(x).detach().numpy())


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    bn = nn.BatchNorm1d(2, track_running_stats=False).eval()
    x = torch.randn(8, 2) * 5 + 3
    y = bn(x).detach().numpy()
    np.testing.assert_allclose(y.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(y.std(0), 1, atol=1e-3)
    assert list(bn.state_dict()) == ["weight", "bias"]


def _bn_program(training, affine, shape):
    rng = np.random.default_rng(3)
    X = rng.standard_normal(shape)
    W, B = rng.uniform(0.5, 2, shape[1]), rng.standard_normal(shape[1])
    R = rng.standard_normal(shape)
    RM, RV = rng.standard_normal(shape[1]), rng.uniform(0.5, 2, shape[1])

    def y_of(x, w, b):
        return F.batch_norm(
            x, torch.tensor(RM), torch.tensor(RV), w if affine else None, b if affine else None, training=training
        )

    def loss_of(x, w, b):  # not linear in y, so that second derivatives are not zero
        y = y_of(x, w, b)
        return (y * torch.tensor(R)).sum() + (y * y * y).sum() / 3

    return X, W, B, loss_of


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 3)])
def test_batch_norm_gradients_match_finite_differences(training, affine, shape):
    X, W, B, loss_of = _bn_program(training, affine, shape)
    x, w, b = (torch.tensor(a, requires_grad=True) for a in (X, W, B))
    loss_of(x, w, b).backward()
    arrays = {"x": X.copy(), "w": W.copy(), "b": B.copy()}
    for name, t in (("x", x), ("w", w), ("b", b)):
        if not affine and name != "x":
            assert t.grad is None
            continue

        def f(a, name=name):
            args = {k: torch.tensor(a if k == name else v) for k, v in arrays.items()}
            with torch.no_grad():
                return float(loss_of(args["x"], args["w"], args["b"]))

        np.testing.assert_allclose(t.grad.numpy(), numeric_grad(f, arrays[name]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_second_derivatives_match_finite_differences(training, affine):
    """gradgradcheck-style: differentiate s = sum(c * grad) (the first derivatives, from create_graph=True)
    and compare with central differences of s."""
    X, W, B, loss_of = _bn_program(training, affine, (4, 3))
    rng = np.random.default_rng(4)
    C = {k: rng.standard_normal(s) for k, s in (("x", X.shape), ("w", W.shape), ("b", B.shape))}
    names = ("x", "w", "b") if affine else ("x",)

    def s_of(x, w, b, create_graph):
        ins = {"x": x, "w": w, "b": b}
        grads = torch.autograd.grad(loss_of(x, w, b), [ins[n] for n in names], create_graph=create_graph)
        return sum(
            ((g * torch.tensor(C[n])).sum() for n, g in zip(names, grads)), torch.tensor(0.0, dtype=torch.float64)
        )

    x, w, b = (torch.tensor(a, requires_grad=True) for a in (X, W, B))
    s = s_of(x, w, b, True)
    second = torch.autograd.grad(s, [{"x": x, "w": w, "b": b}[n] for n in names])
    arrays = {"x": X.copy(), "w": W.copy(), "b": B.copy()}
    for name, g in zip(names, second):

        def f(a, name=name):
            args = {k: torch.tensor(a if k == name else v, requires_grad=True) for k, v in arrays.items()}
            return float(s_of(args["x"], args["w"], args["b"], False))

        np.testing.assert_allclose(g.numpy(), numeric_grad(f, arrays[name]), rtol=2e-5, atol=2e-6)


def test_batch_norm_graph_names_and_saved_values():
    x = torch.randn(4, 3, requires_grad=True)
    bn = nn.BatchNorm1d(3)
    y = bn(x)
    fn = y.grad_fn
    assert fn.name() == "NativeBatchNormBackward0"
    assert [n.name() for n, _ in fn.next_functions] == ["torch::autograd::AccumulateGrad"] * 3
    assert sorted(a for a in dir(fn) if a.startswith("_saved_")) == [
        "_saved_eps",
        "_saved_input",
        "_saved_result1",
        "_saved_result2",
        "_saved_running_mean",
        "_saved_running_var",
        "_saved_training",
        "_saved_weight",
    ]
    np.testing.assert_allclose(fn._saved_result1.numpy(), x.detach().numpy().mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fn._saved_result2.numpy(), 1 / np.sqrt(x.detach().numpy().var(0) + 1e-5), rtol=1e-5)
    (gx,) = torch.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    assert gx.grad_fn.name() == "NativeBatchNormBackwardBackward0"
    assert len(gx.grad_fn.next_functions) == 5  # grad_out, input, weight, save_mean, save_invstd


# ============================================================================= RNNCell ==========
def test_rnncell_init_is_uniform_in_pytorchs_bound_and_seeded():
    torch.manual_seed(0)
    cell = nn.RNNCell(10, 25)
    bound = 1 / math.sqrt(25)
    values = np.concatenate([p.detach().numpy().ravel() for p in cell.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound  # the whole range is used
    torch.manual_seed(0)
    again = nn.RNNCell(10, 25)
    assert all(
        np.array_equal(a.detach().numpy(), b.detach().numpy()) for a, b in zip(cell.parameters(), again.parameters())
    )


def test_rnncell_computes_the_elman_step():
    cell = nn.RNNCell(3, 4)
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    Wih, Whh, bih, bhh = (p.detach().numpy() for p in cell.parameters())
    want = np.tanh(x.numpy() @ Wih.T + bih + h.numpy() @ Whh.T + bhh)
    np.testing.assert_allclose(cell(x, h).detach().numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cell(x).detach().numpy(), cell(x, torch.zeros(2, 4)).detach().numpy())
    relu = nn.RNNCell(3, 4, nonlinearity="relu")
    assert (relu(x, h).detach().numpy() >= 0).all()
    assert cell(torch.randn(3)).shape == (4,)


def test_rnncell_graph_grows_with_the_sequence_and_detach_cuts_it():
    cell = nn.RNNCell(2, 3)
    h = torch.zeros(1, 3)
    for _ in range(4):
        h = cell(torch.randn(1, 2), h)

    def depth(fn):
        best, stack = 0, [(fn, 1)]
        while stack:
            node, d = stack.pop()
            if node.name() == "TanhBackward0":
                best = max(best, d)
            stack.extend((n, d + (node.name() == "TanhBackward0")) for n, _ in node.next_functions if n is not None)
        return best

    assert depth(h.grad_fn) == 4
    h = cell(torch.randn(1, 2), h.detach())
    assert depth(h.grad_fn) == 1 and h.detach().is_leaf


def test_rnncell_on_cuda():
    cell = nn.RNNCell(3, 4).cuda()
    h = cell(torch.randn(2, 3, device="cuda"))
    assert h.device.type == "cuda"
    h.sum().backward()
    assert all(p.grad.device.type == "cuda" for p in cell.parameters())


# ================================================================== BCEWithLogitsLoss ==========
def test_bce_with_logits_equals_the_written_out_formula():
    rng = np.random.default_rng(5)
    X, T = rng.standard_normal((5, 3)) * 3, rng.random((5, 3))
    PW, Wt = rng.random(3) * 2, rng.random((5, 1))
    s = 1 / (1 + np.exp(-X))
    want = -(PW * T * np.log(s) + (1 - T) * np.log(1 - s)) * Wt
    got = F.binary_cross_entropy_with_logits(
        torch.tensor(X), torch.tensor(T), torch.tensor(Wt), reduction="none", pos_weight=torch.tensor(PW)
    )
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    loss = nn.BCEWithLogitsLoss()(torch.tensor(X, requires_grad=True), torch.tensor(T))
    assert loss.item() == pytest.approx((-(T * np.log(s) + (1 - T) * np.log(1 - s))).mean())
    assert loss.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"


def test_bce_with_logits_gradient_is_sigmoid_minus_target():
    x = torch.randn(6, requires_grad=True)
    t = torch.tensor([0.0, 1.0, 1.0, 0.0, 0.5, 1.0])
    F.binary_cross_entropy_with_logits(x, t, reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), torch.sigmoid(x).detach().numpy() - t.numpy(), rtol=1e-6, atol=1e-7)


def test_bce_with_logits_loss_buffers_move_with_the_module():
    loss = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0])).cuda()
    assert list(loss.state_dict()) == ["pos_weight"] and loss.pos_weight.device.type == "cuda"
    out = loss(torch.zeros(3, 2, device="cuda"), torch.ones(3, 2, device="cuda"))
    assert out.device.type == "cuda" and out.item() == pytest.approx(1.5 * math.log(2))


# ============================================================================ modes ==========
def test_train_and_eval_reach_nested_layers():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(4)
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(self.bn(x))

    model = nn.Sequential(nn.Linear(3, 4), Block(), nn.Linear(4, 1))
    assert all(m.training for m in model.modules())
    model.eval()
    assert not any(m.training for m in model.modules())
    x = torch.randn(5, 3)
    a, b = model(x), model(x)
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())  # eval is deterministic
    model.train()
    assert all(m.training for m in model.modules())
