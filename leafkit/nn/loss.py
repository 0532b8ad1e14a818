"""Loss modules: ``CrossEntropyLoss``, ``NLLLoss``, ``MSELoss``, ``BCEWithLogitsLoss``, ``L1Loss``,
``SmoothL1Loss``, ``HuberLoss``, ``BCELoss`` (thin wrappers of :mod:`.functional`)."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = [
    "CrossEntropyLoss",
    "NLLLoss",
    "MSELoss",
    "BCEWithLogitsLoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
]


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
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


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
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class L1Loss(_Loss):
    """``F.l1_loss`` as a module: the mean (or sum) absolute error (``MeanBackward0`` over ``AbsBackward0``).

    Parameters
    ----------
    size_average, reduce
        PyTorch's deprecated arguments (a UserWarning; use ``reduction``).
    reduction : {"mean", "sum", "none"}
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        super().__init__(reduction)

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """``F.smooth_l1_loss`` as a module (``SmoothL1LossBackward0``): quadratic below ``beta``, linear above.

    Parameters
    ----------
    size_average, reduce
        PyTorch's deprecated arguments (a UserWarning; use ``reduction``).
    reduction : {"mean", "sum", "none"}
    beta : float
        Where the loss turns linear (default 1.0; 0 gives the L1 loss).
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """``F.huber_loss`` as a module (``HuberLossBackward0``): ``0.5 * d**2`` below ``delta``, linear above.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
    delta : float
        Where the loss turns linear (default 1.0, must be positive).
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_Loss):
    """``F.binary_cross_entropy`` as a module (``BinaryCrossEntropyBackward0``): probabilities in [0, 1] and
    targets of the same shape.

    Parameters
    ----------
    weight : Tensor, optional
        Rescales each element's loss; a buffer (in ``state_dict()``, moved by ``to()``), never learned.
    size_average, reduce
        PyTorch's deprecated arguments (a UserWarning; use ``reduction``).
    reduction : {"mean", "sum", "none"}

    Notes
    -----
    On logits use :class:`BCEWithLogitsLoss`: ``Sigmoid`` followed by
    ``BCELoss`` rounds probabilities to 0 or 1 for large logits (the loss
    then saturates at 100, PyTorch's clamp of the log).
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence loss (``torch.nn.KLDivLoss``): ``input`` are log-probabilities, ``target``
    probabilities (log-probabilities with ``log_target=True``); see :func:`leafkit.nn.functional.kl_div`.
    ``reduction="batchmean"`` is the KL divergence proper; the default "mean" warns, as in PyTorch."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        super().__init__(reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


__all__ += ["KLDivLoss"]
