"""``BatchNorm1d``: batch normalisation with learned scale and shift, and running statistics kept as buffers."""

from __future__ import annotations

from .. import _dtype
from .._creation import empty, ones, tensor, zeros
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d"]


class BatchNorm1d(Module):
    """Normalise each feature (channel) over the batch, then scale and shift it (``torch.nn.BatchNorm1d``).

    ``y = (x - mean) / sqrt(var + eps) * weight + bias``, per channel (dim 1).

    * In training (``train()``, the default) ``mean`` and ``var`` are the
      batch's, and the running statistics are updated:
      ``running = (1 - momentum) * running + momentum * batch_value``, the
      variance as its unbiased estimate; ``num_batches_tracked`` counts the
      batches.
    * In evaluation (``eval()``) the running statistics are used and
      nothing changes, so one sample gives the same output alone as in a
      batch.

    The learned ``weight`` and ``bias`` are :class:`Parameter` objects
    (leaves that require grad, in ``parameters()``, moved by optimizers).
    ``running_mean``, ``running_var`` and ``num_batches_tracked`` are
    *buffers*: state that is not learned, so not in ``parameters()`` and
    never given a gradient, but in ``state_dict()`` and moved by ``to()``
    and ``cuda()``.  The output's ``grad_fn`` is
    ``NativeBatchNormBackward0``.

    Parameters
    ----------
    num_features : int
        ``C``, the number of channels.
    eps : float
        Added to the variance (default 1e-5).
    momentum : float or None
        Weight of each new batch in the running statistics (default 0.1);
        ``None`` keeps a cumulative average (``1 / num_batches_tracked``).
    affine : bool
        Learn ``weight`` (ones) and ``bias`` (zeros); otherwise both are None.
    track_running_stats : bool
        Keep running statistics.  Without them (all three buffers None)
        the batch statistics are used in evaluation too.
    device, dtype
        Where the parameters and buffers live, and their floating dtype
        (``num_batches_tracked`` is always int64).
    bias : bool
        Keyword only: with ``affine``, learn a bias too (default True).

    Attributes
    ----------
    weight, bias : Parameter or None
        Shape ``(C,)``.
    running_mean, running_var : Tensor or None
        Shape ``(C,)``, zeros and ones at first.
    num_batches_tracked : Tensor or None
        0-d int64.

    Notes
    -----
    Input ``(N, C)`` or ``(N, C, L)``; output of the same shape.  Training
    needs more than one value per channel (``N * L > 1``).

    Raises
    ------
    ValueError
        In ``forward``: "expected 2D or 3D input (got 4D input)";
        "Expected more than 1 value per channel when training, got input
        size torch.Size([1, 3])".
    RuntimeError
        In ``forward``: "running_mean should contain 3 elements not 5" for
        input with the wrong number of channels.
    """

    _version = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ):
        super().__init__()

        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dtype.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean to zeros, running variance to ones, ``num_batches_tracked`` to 0 (in place)."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """:meth:`reset_running_stats`, then ``weight`` to ones and ``bias`` to zeros (in place, under no_grad)."""
        self.reset_running_stats()
        if self.affine:
            with no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input`` (``(N, C)`` or ``(N, C, L)``) with batch or running statistics (see the class)."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        """``3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True``, as PyTorch prints it."""
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm2d(BatchNorm1d):
    """Batch normalisation of images, per channel over ``(N, H, W)`` (``torch.nn.BatchNorm2d``).

    Everything as :class:`BatchNorm1d` (parameters, buffers, ``train()``/``eval()``, ``NativeBatchNormBackward0``),
    for input ``(N, C, H, W)``.

    Raises
    ------
    ValueError
        In ``forward``: "expected 4D input (got 2D input)".
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


__all__ += ["BatchNorm2d"]
