"""``leafkit.utils``: PyTorch's ``torch.utils`` helpers a tutorial needs (:mod:`leafkit.utils.data`)."""

from __future__ import annotations

from . import data

__all__ = ["data"]
