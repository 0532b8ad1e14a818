"""``leafkit.utils.data``: datasets, samplers and the DataLoader, with PyTorch's names (``torch.utils.data``).

Under ``import leafkit as torch``, ``from torch.utils.data import DataLoader, TensorDataset`` works as in
PyTorch.  Batches are made in the main process (see :class:`DataLoader` for ``num_workers``), and the random
samplers draw from leafkit's generator, so ``manual_seed`` fixes the order (another order than PyTorch's).
"""

from __future__ import annotations

from . import _utils  # noqa: F401 - torch.utils.data._utils.collate is a path tutorials import from
from ._utils.collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
