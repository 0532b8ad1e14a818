"""Samplers, as ``torch.utils.data.sampler``: which indices a :class:`DataLoader` reads, in which order.

``SequentialSampler`` (0, 1, 2, ...), ``RandomSampler`` (a permutation, or draws with replacement),
``SubsetRandomSampler`` (a permutation of given indices), ``WeightedRandomSampler`` (draws by weight) and
``BatchSampler`` (groups another sampler's indices into lists).  The random ones draw from a leafkit
:class:`~leafkit.Generator` (NumPy's PCG64): a seed gives the same order on every run, not PyTorch's order.
"""

from __future__ import annotations

import itertools

from ... import _dtype
from ..._creation import as_tensor, randint, randperm
from ..._random import Generator, _rng
from ..._sampling import multinomial

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]


class Sampler:
    """Base class: a sampler is an iterable of indices (or of lists of indices), usually with a ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):  # Sampler[int] in annotations
        return cls


def _fresh_generator():
    """What PyTorch's RandomSampler does without a generator: draw a seed from the global generator (so
    ``manual_seed`` fixes every shuffle) and seed a new generator with it."""
    seed = int(_rng(None).integers(0, 2**63 - 1))
    return Generator().manual_seed(seed)


class SequentialSampler(Sampler):
    """The indices ``0 .. len(data_source) - 1`` in order (a DataLoader's sampler without ``shuffle``)."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of the indices (a DataLoader's sampler with ``shuffle=True``): a new permutation each time
    it is iterated, or ``num_samples`` draws with replacement.

    Parameters
    ----------
    data_source : sized
    replacement : bool
        Draw with replacement (default False).
    num_samples : int, optional
        How many indices to yield (default ``len(data_source)``); without replacement, more than the length
        chains several permutations.
    generator : Generator, optional
        Default: a generator seeded from the global one at each iteration.

    Raises
    ------
    TypeError
        "replacement should be a boolean value, but got replacement=1".
    ValueError
        "num_samples should be a positive integer value, but got num_samples=0".
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None, generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, a new one each time it is iterated."""

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (``torch.multinomial``).

    Raises
    ------
    ValueError
        "num_samples should be a positive integer value, ..."; "replacement should be a boolean value, ...";
        "weights should be a 1d sequence but given weights have shape (2, 2)".
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=_dtype.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        draws = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(draws.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter, or dropped with ``drop_last``).

    Raises
    ------
    ValueError
        "batch_size should be a positive integer value, but got batch_size=0"; "drop_last should be a boolean
        value, but got drop_last=1".
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*([it] * self.batch_size)):
                yield [*batch]
        else:
            batch = [*itertools.islice(it, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(it, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
