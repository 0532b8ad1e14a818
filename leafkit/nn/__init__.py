"""``leafkit.nn``: parameters, modules, layers and losses with PyTorch's names (``torch.nn``).

The lesson the articles teach lives here: a model's weights are
:class:`Parameter` objects, leaves that require grad; ``backward()`` fills
their ``.grad``; an optimizer changes them in place under ``no_grad`` so they
stay leaves.
"""
from __future__ import annotations

from . import functional
from .linear import Identity, Linear, ReLU, Sequential, Sigmoid, Tanh
from .loss import CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = ["Parameter", "Module", "Linear", "Sequential", "ReLU", "Tanh", "Sigmoid", "Identity", "CrossEntropyLoss",
           "NLLLoss", "MSELoss", "functional"]
