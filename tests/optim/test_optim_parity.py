"""SGD and Adam next to real PyTorch: same trajectories (float32), same reprs, same errors. Skipped without torch."""

from __future__ import annotations

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def trajectory(lib, name, kw, steps=8):
    rng = np.random.default_rng(0)
    W = lib.nn.Parameter(lib.tensor(rng.standard_normal((3, 4)).astype(np.float32)))
    b = lib.nn.Parameter(lib.tensor(rng.standard_normal(3).astype(np.float32)))
    frozen = lib.nn.Parameter(lib.tensor([1.0, 2.0]))  # never gets a grad: skipped
    opt = getattr(lib.optim, name)([{"params": [W, frozen]}, {"params": [b], "lr": kw["lr"] / 2}], **kw)
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((5, 4)).astype(np.float32))
        opt.zero_grad()
        loss = ((x @ W.t() + b) ** 2).mean()
        loss.backward()
        opt.step()
    return W.detach().numpy().copy(), b.detach().numpy().copy(), frozen.detach().numpy().copy()


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.3, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9))),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("AdamW", dict(lr=0.01, betas=(0.5, 0.8), eps=1e-3, weight_decay=0.0, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, maximize=True, eps=1e-3)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, eps=1e-3, maximize=True)),
]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_same_trajectory_as_pytorch(name, kw):
    got = trajectory(leafkit, name, kw)
    want = trajectory(torch, name, kw)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[2].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("name,kw", CONFIGS[:2] + CONFIGS[4:6] + CONFIGS[8:10] + CONFIGS[11:13] + CONFIGS[14:16])
def test_same_repr_as_pytorch(name, kw):
    def run(lib):
        return repr(getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(1))], **kw))

    assert run(leafkit) == run(torch)


def test_state_keys_as_pytorch():
    def run(lib, name, **kw):
        p = lib.nn.Parameter(lib.zeros(2))
        opt = getattr(lib.optim, name)([p], lr=0.1, **kw)
        p.grad = lib.ones(2)
        opt.step()
        sd = opt.state_dict()
        return sorted(opt.state[p]), sorted(sd), sorted(sd["param_groups"][0]), sorted(sd["state"])

    for name, kw in [
        ("SGD", {"momentum": 0.9}),
        ("Adam", {}),
        ("Adam", {"amsgrad": True}),
        ("AdamW", {}),
        ("AdamW", {"amsgrad": True}),
        ("RMSprop", {}),
        ("RMSprop", {"momentum": 0.9, "centered": True}),
        ("Adagrad", {}),
    ]:
        assert run(leafkit, name, **kw) == run(torch, name, **kw)


def versions(lib, name, kw, steps=3):
    """``_version`` of each parameter and of each state tensor after every step."""
    rng = np.random.default_rng(0)
    W = lib.nn.Parameter(lib.tensor(rng.standard_normal((3, 4)).astype(np.float32)))
    b = lib.nn.Parameter(lib.tensor(rng.standard_normal(3).astype(np.float32)))
    opt = getattr(lib.optim, name)([{"params": [W]}, {"params": [b], "lr": kw["lr"] / 2}], **kw)
    out = []
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((5, 4)).astype(np.float32))
        opt.zero_grad()
        ((x @ W.t() + b) ** 2).mean().backward()
        opt.step()
        state = [(k, v._version) for p in (W, b) for k, v in sorted(opt.state[p].items()) if isinstance(v, lib.Tensor)]
        out.append([W._version, b._version, *state])
    return out


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_steps_bump_versions_as_pytorch(name, kw):
    """Each in-place op of PyTorch's single-tensor update counts once: SGD's ``p.add_`` once and the momentum
    buffer's ``mul_`` and ``add_`` twice per step (the first step's buffer is a fresh clone, at version 0); Adam's
    ``exp_avg_sq.mul_().addcmul_()`` twice, ``param.mul_`` of decoupled weight decay once more; RMSprop's and
    Adagrad's ``step += 1`` once ..."""
    assert versions(leafkit, name, kw) == versions(torch, name, kw)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", dict(lr=0.1)),
        ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
        ("Adam", dict(lr=0.01)),
        ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
        ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ],
)
def test_agrees_with_pytorch_to_float32_rounding(name, kw):
    """What the docstrings promise: float32 rounding after several steps, not bit for bit (PyTorch uses fma)."""
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal(2000).astype(np.float32)
    grads = [rng.standard_normal(2000).astype(np.float32) * s for s in (1, 1e-3, 10, 0.5, 1e-6)]

    def run(lib):
        p = lib.nn.Parameter(lib.from_numpy(p0.copy()))
        opt = getattr(lib.optim, name)([p], **kw)
        for g in grads:
            p.grad = lib.from_numpy(g.copy())
            opt.step()
        return p.detach().numpy().copy()

    got, want = run(leafkit), run(torch)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_adamw_defaults_errors_and_state_dict_as_pytorch():
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        opt = lib.optim.AdamW([p])
        out = [opt.defaults["weight_decay"], opt.defaults["decoupled_weight_decay"], isinstance(opt, lib.optim.Adam)]
        for bad in ({"weight_decay": -1}, {"betas": (1.0, 0.9)}, {"decoupled_weight_decay": False}):
            try:
                lib.optim.AdamW([p], **bad)
            except (ValueError, TypeError) as e:
                out.append((type(e).__name__, str(e).split("(")[0][:40]))
        # an Adam state dict loaded into AdamW keeps the decoupled decay, as PyTorch's __setstate__ does
        adam = lib.optim.Adam([p], weight_decay=0.1)
        p.grad = lib.ones(2)
        adam.step()
        opt.load_state_dict(adam.state_dict())
        out.append(opt.param_groups[0]["decoupled_weight_decay"])
        opt.step()
        out.append([round(v, 6) for v in p.detach().tolist()])
        return out

    assert run(leafkit) == run(torch)
