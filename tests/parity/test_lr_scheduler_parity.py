"""``torch.optim.lr_scheduler`` on leafkit and on PyTorch: the same learning rates step by step (to the last bit),
the same state dicts, errors and warnings."""

from __future__ import annotations

import warnings

import pytest

import leafkit

torch = pytest.importorskip("torch")


def _opt(lib):
    a, b = lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))
    return lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)


METRICS = [1, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8, 0.9, 0.91, 0.92]
CASES = {
    "StepLR": lambda S, o: S.StepLR(o, 3, gamma=0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, [2, 5, 5], 0.3),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, 0.9),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, 4, eta_min=0.01),
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 0.95**e),
    "LambdaLR per group": lambda S, o: S.LambdaLR(o, [lambda e: 1.0 / (e + 1), lambda e: 0.5]),
    "LambdaLR wrong count": lambda S, o: S.LambdaLR(o, [lambda e: 1.0]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9),
    "MultiplicativeLR not callable": lambda S, o: S.MultiplicativeLR(o, 3),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=3),
    "ConstantLR factor > 1": lambda S, o: S.ConstantLR(o, factor=1.5),
    "LinearLR": lambda S, o: S.LinearLR(o, start_factor=0.1, total_iters=4),
    "LinearLR start 0": lambda S, o: S.LinearLR(o, start_factor=0),
    "LinearLR end > 1": lambda S, o: S.LinearLR(o, end_factor=2),
    "SequentialLR warm-up then cosine": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, 0.1, total_iters=3), S.CosineAnnealingLR(o, 5)], milestones=[3]
    ),
    "SequentialLR bad milestones": lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]),
    "SequentialLR no schedulers": lambda S, o: S.SequentialLR(o, [], milestones=[]),
    "ReduceLROnPlateau": lambda S, o: S.ReduceLROnPlateau(o, patience=1, factor=0.5),
    "ReduceLROnPlateau max abs cooldown": lambda S, o: S.ReduceLROnPlateau(
        o, mode="max", patience=0, threshold_mode="abs", cooldown=1, min_lr=[0.05, 0.2]
    ),
    "ReduceLROnPlateau factor 1": lambda S, o: S.ReduceLROnPlateau(o, factor=1.0),
    "ReduceLROnPlateau bad mode": lambda S, o: S.ReduceLROnPlateau(o, mode="avg"),
    "ReduceLROnPlateau wrong min_lr count": lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1]),
    "not an optimizer": lambda S, o: S.StepLR(3, 2),
    "resuming without initial_lr": lambda S, o: S.StepLR(o, 2, last_epoch=3),
}


def schedule(lib, name, steps=20, optimizer_first=True):
    """The learning rates after construction and each step, the state dict's keys, the warnings."""
    S = lib.optim.lr_scheduler
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            o = _opt(lib)
            s = CASES[name](S, o)
            lrs = [s.get_last_lr()]
            for i in range(steps):
                if optimizer_first:
                    o.step()
                s.step(METRICS[i % len(METRICS)]) if isinstance(s, S.ReduceLROnPlateau) else s.step()
                lrs.append(list(s.get_last_lr()))
            out = ("ok", lrs, sorted(s.state_dict()), [g["lr"] for g in o.param_groups])
        except Exception as e:  # noqa: BLE001 - the class and message are the observation
            out = ("error", type(e).__name__, str(e))
    return out, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_rates_as_pytorch(name):
    assert schedule(leafkit, name) == schedule(torch, name)


def test_scheduler_stepped_before_the_optimizer_warns():
    got, want = schedule(leafkit, "StepLR", 3, False), schedule(torch, "StepLR", 3, False)
    assert got == want and any("before `optimizer.step()`" in m for _, m in got[1])


def _misc(lib):
    S = lib.optim.lr_scheduler
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        o = _opt(lib)
        s = S.StepLR(o, 2)
        o.step()
        s.step(5)  # the deprecated epoch argument: closed form
        out.append(s.get_last_lr())
        out.append(s.get_lr())  # outside step: warns
        o2 = _opt(lib)
        s2 = S.StepLR(o2, 7)
        s2.load_state_dict(s.state_dict())
        o2.step()
        s2.step()
        out.append((s2.get_last_lr(), s2.step_size, s2.last_epoch, o2.param_groups[0]["initial_lr"]))
        o3 = _opt(lib)
        s3 = S.MultiStepLR(o3, [1, 2], 0.5)
        o3.step()
        s3.step(3)
        out.append(s3.get_last_lr())
    out.append([(w.category.__name__, str(w.message)) for w in caught])
    return out


def test_epoch_argument_get_lr_and_state_dict_as_pytorch():
    assert _misc(leafkit) == _misc(torch)
