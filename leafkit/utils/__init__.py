"""``leafkit.utils``: helpers outside the autograd core, with ``torch.utils``'s names.

- :mod:`leafkit.utils.data`: datasets, samplers and ``DataLoader``;
- :mod:`leafkit.utils.checkpoint`: activation checkpointing (``checkpoint``,
  ``checkpoint_sequential``), trading a second forward pass for memory;
- :mod:`leafkit.utils.hooks`: ``RemovableHandle`` and the machinery behind
  ``nn.Module``'s full backward hooks.

``checkpoint`` and ``hooks`` load on first use (``torch.utils.checkpoint`` works right
after ``import leafkit as torch``, as it does after ``import torch``).
"""

from __future__ import annotations

import importlib

from . import data

__all__ = ["data", "checkpoint", "hooks"]

_SUBMODULES = ("checkpoint", "hooks")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'leafkit.utils' has no attribute '{name}'")
