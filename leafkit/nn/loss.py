"""Loss modules: ``CrossEntropyLoss``, ``NLLLoss``, ``MSELoss`` (thin wrappers of :mod:`.functional`)."""
from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss"]


class _Loss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    """``F.cross_entropy`` as a module: logits ``(N, C)``, int64 targets ``(N,)``; ``NllLossBackward0``."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """``F.nll_loss`` as a module: log-probabilities ``(N, C)``, int64 targets ``(N,)``."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    """``F.mse_loss`` as a module (``MseLossBackward0``)."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)
