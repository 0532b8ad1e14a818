"""``torch.nn.parallel``: :class:`DataParallel` (leafkit has at most one GPU, so it never splits a batch)."""

from __future__ import annotations

from .data_parallel import DataParallel

__all__ = ["DataParallel"]
