"""``leafkit.optim.adamw``: PyTorch's module path for :class:`AdamW` (defined with Adam)."""

from __future__ import annotations

from .adam import AdamW

__all__ = ["AdamW"]
