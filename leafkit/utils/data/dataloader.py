"""``DataLoader``: batches from a dataset, with PyTorch's arguments, argument checks, lengths and collation.

leafkit loads every batch in the main process, one after another.  ``num_workers > 0`` is accepted (so that
tutorials run unchanged) and gives the same batches in the same order as ``num_workers=0``; leafkit says so with
a ``UserWarning``, once per process, instead of starting worker processes.  ``pin_memory=True`` gives PyTorch's
warning for a machine without an accelerator: leafkit has no page-locked memory (``torch.accelerator`` is
unavailable on the simulated GPU); with a real GPU it warns that leafkit has no page-locked memory.
"""

from __future__ import annotations

import math
import warnings

from ... import accelerator
from ..._random import _rng
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

NUM_WORKERS_WARNING = (
    "leafkit's DataLoader has no worker processes: num_workers={n} loads the batches in the main process, one "
    "after another, as num_workers=0 does (the same batches in the same order){extra}."
)
_warned_workers = [False]  # once per process


def get_worker_info():
    """Information about the current worker process: always None in leafkit, which loads data in the main
    process (as PyTorch's ``get_worker_info()`` is in the main process)."""
    return None


class _InfiniteConstantSampler:
    """The sampler of an iterable-style dataset: None forever (the dataset's iterator decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over a dataset in batches (``torch.utils.data.DataLoader``).

    Parameters
    ----------
    dataset : Dataset or IterableDataset
        Map-style (``dataset[i]``, ``len``) or iterable-style.
    batch_size : int or None
        Samples per batch (default 1); ``None`` turns batching off (samples are only converted,
        :func:`default_convert`).
    shuffle : bool, optional
        A new random order every epoch (a :class:`RandomSampler`; map-style datasets only).
    sampler : Sampler or iterable, optional
        The order of the indices (excludes ``shuffle``).
    batch_sampler : Sampler or iterable of lists, optional
        The indices of whole batches (excludes ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``).
    num_workers : int
        leafkit loads in the main process; ``> 0`` warns once and gives the same batches as 0.
    collate_fn : callable, optional
        Makes a batch from a list of samples (default :func:`default_collate`).
    pin_memory : bool
        Accepted; warns as PyTorch does without an accelerator.
    drop_last : bool
        Drop the last, incomplete batch.
    timeout, worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers, pin_memory_device, in_order
        Checked as PyTorch checks them; with no worker processes they change nothing.
    generator : Generator, optional
        The generator of ``shuffle`` (and of the base seed PyTorch draws at every epoch).

    Raises
    ------
    ValueError
        PyTorch's argument errors: "sampler option is mutually exclusive with shuffle", "batch_sampler option is
        mutually exclusive with batch_size, shuffle, sampler, and drop_last", "batch_size=None option disables
        auto-batching and is mutually exclusive with drop_last", "num_workers option should be non-negative; use
        num_workers=0 to disable multiprocessing.", "DataLoader with IterableDataset: expected unspecified shuffle
        option, but got shuffle=True", "batch_size attribute should not be set after DataLoader is initialized"...
    TypeError
        ``len()`` of a loader over an iterable dataset without ``__len__``.
    """

    _initialized = False

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn=None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
                "multiprocessing, otherwise set prefetch_factor to None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process loading (num_workers > 0), but got "
                f"num_workers={num_workers}"
            )
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._iterable = True
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                    f"batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._iterable = False
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._initialized = True
        if num_workers > 0:
            self._warn_no_workers()

    def _warn_no_workers(self) -> None:
        if _warned_workers[0]:
            return
        _warned_workers[0] = True
        extra = ""
        if self.worker_init_fn is not None:
            extra = "; worker_init_fn is not called (there is no worker)"
        warnings.warn(NUM_WORKERS_WARNING.format(n=self.num_workers, extra=extra), UserWarning, stacklevel=3)

    def __setattr__(self, attr, val) -> None:
        if self._initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        return _DataLoaderIter(self)

    def __len__(self) -> int:
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """PyTorch warns when more workers are asked for than CPUs; leafkit starts none, so there is nothing to
        check."""


class _DataLoaderIter:
    """One pass over a :class:`DataLoader` (PyTorch's ``_SingleProcessDataLoaderIter``)."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the device,"
                f"ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=3,
            )
        if loader.pin_memory:
            if not accelerator.is_available():
                message = (
                    "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                    "won't be used."
                )
            else:
                message = "leafkit has no page-locked memory: pin_memory=True loads the same batches as False"
            warnings.warn(message, stacklevel=3)
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # PyTorch draws a base seed for its workers at every epoch; drawing it here keeps the generator's stream
        # in step with PyTorch's pattern of use
        self._base_seed = int(_rng(loader.generator).integers(0, 2**63 - 1))
        self._num_yielded = 0
        self._dataset_iter = iter(self._dataset) if self._iterable else None
        self._ended = False

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _fetch(self, index):
        if self._iterable:
            if self._auto_collation:
                data = []
                for _ in index:
                    try:
                        data.append(next(self._dataset_iter))
                    except StopIteration:
                        self._ended = True
                        break
                if len(data) == 0 or (self._drop_last and len(data) < len(index)):
                    raise StopIteration
            else:
                data = next(self._dataset_iter)
            return self._collate_fn(data)
        if self._auto_collation:
            getitems = getattr(self._dataset, "__getitems__", None)
            if getitems:
                data = getitems(index)
            else:
                data = [self._dataset[i] for i in index]
        else:
            data = self._dataset[index]
        return self._collate_fn(data)

    def __next__(self):
        if self._ended:
            raise StopIteration
        index = next(self._sampler_iter)
        data = self._fetch(index)
        self._num_yielded += 1
        if (
            self._iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            warnings.warn(
                f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ",
                stacklevel=2,
            )
        return data

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)
