"""Random numbers: one global generator, seeded by ``manual_seed``.

leafkit cannot reproduce PyTorch's random streams (a different algorithm),
but a seed gives the same numbers on every run, on ``cpu`` and ``cuda``
alike (values are drawn on the host, then moved).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator"]

DEFAULT_SEED = 67280421310721  # PyTorch's default seed, for the same reason: reproducible runs


class Generator:
    """A random-number generator (``torch.Generator``), backed by NumPy's PCG64."""

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = DEFAULT_SEED
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        self._seed = seed
        self._rng = np.random.default_rng(seed & 0xFFFFFFFFFFFFFFFF)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        return self._rng.bit_generator.state

    def set_state(self, state) -> None:
        self._rng.bit_generator.state = state


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the global generator; returns it, as PyTorch does."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    s = int(np.random.SeedSequence().entropy) & 0xFFFFFFFFFFFF
    default_generator.manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


batched_rng = None  # set by vmap (leafkit._functions._batched): its randomness rules for the generator


def _rng(generator):
    if batched_rng is not None:
        return batched_rng((generator or default_generator)._rng)
    return (generator or default_generator)._rng


def uniform_array(shape, a, b, np_dtype, generator=None):
    return _rng(generator).uniform(a, b, size=tuple(shape)).astype(np_dtype)


def normal_array(shape, mean, std, np_dtype, generator=None):
    return (_rng(generator).standard_normal(size=tuple(shape)) * std + mean).astype(np_dtype)
