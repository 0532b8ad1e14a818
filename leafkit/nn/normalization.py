"""``LayerNorm``: normalisation over each sample's last dims, with a learned scale and shift (``torch.nn``'s)."""

from __future__ import annotations

from .._creation import empty
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last dims ``normalized_shape`` of each sample
    (``torch.nn.LayerNorm``; ``NativeLayerNormBackward0``).  The same in training and evaluation (no running
    statistics, unlike batch normalisation).

    Parameters
    ----------
    normalized_shape : int or sequence of int
    eps : float
        Default 1e-5.
    elementwise_affine : bool
        Learn ``weight`` (ones) and ``bias`` (zeros), each of shape ``normalized_shape``.
    bias : bool
        With ``elementwise_affine``, learn the bias too.
    device, dtype

    Repr ``LayerNorm((4,), eps=1e-05, elementwise_affine=True)``.
    """

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``weight`` to ones and ``bias`` to zeros (in place, under no_grad)."""
        if self.elementwise_affine:
            with no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )
