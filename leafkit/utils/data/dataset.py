"""Datasets, as ``torch.utils.data.dataset``: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``StackDataset``,
``ConcatDataset``, ``ChainDataset``, ``Subset`` and ``random_split``.

A *map-style* dataset (:class:`Dataset`) answers ``dataset[i]`` and ``len(dataset)``; an *iterable-style* one
(:class:`IterableDataset`) yields its samples from ``iter(dataset)``.  :class:`leafkit.utils.data.DataLoader`
reads either kind and collates samples into batches.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings

from ..._creation import randperm
from ..._random import default_generator
from ..._tensor import Tensor

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]


class Dataset:
    """A map-style dataset: subclasses give ``__getitem__(index)`` and usually ``__len__()``.

    ``dataset_a + dataset_b`` is a :class:`ConcatDataset`.  A subclass may also give ``__getitems__(indices)``
    to read a whole batch at once (the :class:`DataLoader` then calls it instead of ``__getitem__``).

    Raises
    ------
    NotImplementedError
        "Subclasses of Dataset should implement __getitem__." when a subclass gives no ``__getitem__``.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    def __class_getitem__(cls, item):  # Dataset[int] in annotations, as torch's Generic base allows
        return cls


class IterableDataset(Dataset):
    """An iterable-style dataset: subclasses give ``__iter__()`` (a stream of samples; ``len`` is optional).

    ``a + b`` is a :class:`ChainDataset`.  leafkit loads data in the main process only, so
    :func:`leafkit.utils.data.get_worker_info` is always None inside ``__iter__``.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples made of the rows of tensors: ``dataset[i]`` is ``(t0[i], t1[i], ...)``.

    Parameters
    ----------
    *tensors : Tensor
        Tensors with the same size of dimension 0 (any dtype and device).

    Raises
    ------
    AssertionError
        "Size mismatch between tensors" when the first dimensions differ, as in PyTorch.
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets of the same length read side by side: ``StackDataset(a, b)[i]`` is ``(a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i]`` is ``{"x": a[i], "y": b[i]}``.

    Raises
    ------
    ValueError
        "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, but both
        types are given."; "Size mismatch between datasets"; "At least one dataset should be passed".
    """

    def __init__(self, *args, **kwargs) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, "
                    "but both types are given."
                )
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(d) for d in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Several map-style datasets read as one, in order.

    Attributes
    ----------
    datasets : list
    cumulative_sizes : list of int
        The running total of the lengths (``[3, 8]`` for lengths 3 and 5).

    Raises
    ------
    AssertionError
        "datasets should not be an empty iterable"; "ConcatDataset does not support IterableDataset".
    ValueError
        "absolute value of index should not exceed dataset length" for a negative index past the start.
    """

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if k == 0 else idx - self.cumulative_sizes[k - 1]
        return self.datasets[k][sample_idx]


class ChainDataset(IterableDataset):
    """Iterable datasets read one after the other.

    Raises
    ------
    AssertionError
        "ChainDataset only supports IterableDataset" (when iterated or asked its length).
    """

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order: ``Subset(ds, [4, 0])[1]`` is ``ds[0]``.

    Raises
    ------
    NotImplementedError
        For a subclass that overrides ``__getitem__`` but not ``__getitems__`` (PyTorch 2.13's rule, since the
        DataLoader reads batches through ``__getitems__``).
    """

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When subclassing Subset and "
                "overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly "
                "with your custom logic. A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths, generator=default_generator):
    """Split ``dataset`` at random into non-overlapping :class:`Subset` s of the given lengths.

    Parameters
    ----------
    dataset : Dataset
        Any map-style dataset with a length.
    lengths : sequence of int or float
        The lengths, or fractions that sum to 1: each split then gets ``floor(frac * len(dataset))`` items
        and what remains is handed out one by one, round robin, from the first split (PyTorch's rule).
    generator : Generator
        The random-number generator of the permutation (default: the global one, seeded by ``manual_seed``).
        leafkit's generator is NumPy's, so a seed gives other splits than in PyTorch, but the same on every run.

    Raises
    ------
    ValueError
        "Fraction at index 1 is not between 0 and 1"; "Sum of input lengths does not equal the length of the
        input dataset!".

    Warns
    -----
    UserWarning
        "Length of split at index 2 is 0. This might result in an empty dataset." (fractions only).
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=2
                )
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)
    ]
