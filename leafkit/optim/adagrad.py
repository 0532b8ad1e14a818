"""``leafkit.optim.adagrad``: PyTorch's module path for :class:`Adagrad` (defined with RMSprop)."""

from __future__ import annotations

from .rmsprop import Adagrad

__all__ = ["Adagrad"]
