"""The DataLoader's helpers, at PyTorch's paths (``torch.utils.data._utils.collate``)."""

from __future__ import annotations

from . import collate

__all__ = ["collate"]
