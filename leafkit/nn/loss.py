"""Loss modules: ``CrossEntropyLoss``, ``NLLLoss``, ``MSELoss``, ``BCEWithLogitsLoss`` (thin wrappers of
:mod:`.functional`)."""
from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "BCEWithLogitsLoss"]


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


class BCEWithLogitsLoss(_Loss):
    """``F.binary_cross_entropy_with_logits`` as a module (``torch.nn.BCEWithLogitsLoss``).

    A sigmoid and binary cross-entropy in one stable step: logits ``input``
    and targets in ``[0, 1]`` of the same shape
    (``BinaryCrossEntropyWithLogitsBackward0``).  The usual loss of a binary
    classifier, or of a GAN's discriminator.

    Parameters
    ----------
    weight : Tensor, optional
        Rescales each element's loss (broadcast to the input's shape).
    size_average, reduce
        PyTorch's deprecated arguments (a UserWarning; use ``reduction``).
    reduction : {"mean", "sum", "none"}
    pos_weight : Tensor, optional
        Weight of the positive term, one per class (broadcast along the
        last dim).

    Notes
    -----
    ``weight`` and ``pos_weight`` are registered as buffers, as in PyTorch:
    in ``state_dict()`` when given, moved by ``to()``, never learned.
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        """The loss of logits ``input`` against ``target`` (same shape); 0-d unless ``reduction="none"``."""
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)
