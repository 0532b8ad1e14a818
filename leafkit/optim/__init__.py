"""``leafkit.optim``: optimizers with PyTorch's names, defaults, errors and update formulas.

An optimizer updates *leaves*: ``step()`` changes each parameter's storage in
place, outside the graph, so parameters stay leaves that require grad, and
skips parameters whose ``.grad`` is None.
"""

from __future__ import annotations

from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
