"""``Flatten`` and ``Unflatten`` (``torch.nn``): the reshapes between a CNN's feature maps and its linear layers."""

from __future__ import annotations

from .._tensor import Tensor
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Merge dims ``start_dim`` to ``end_dim`` into one (``torch.nn.Flatten``): ``input.flatten(start_dim,
    end_dim)``, a view where the layout allows (``ViewBackward0``).

    The default ``start_dim=1`` keeps the batch dim: ``(N, C, H, W)`` becomes
    ``(N, C * H * W)``.  Raises IndexError for a dim out of range (a 1-D
    input has no dim 1).
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (``torch.nn.Unflatten``): ``input.unflatten(dim,
    unflattened_size)`` (``ViewBackward0``); one size may be -1.

    Raises
    ------
    TypeError
        "unflattened_size must be tuple of ints, but found element of type
        float at pos 0"; "unflattened_size must be a tuple of ints, but found
        type int"; "invalid argument type for dim parameter".
    RuntimeError
        In ``forward``, when the sizes do not multiply to the dim's size
        (see :meth:`leafkit.Tensor.unflatten`).
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(value):
        if isinstance(value, (tuple, list)):
            for i, e in enumerate(value):
                if not isinstance(e, int):
                    kind = type(e).__name__
                    raise TypeError(
                        f"unflattened_size must be tuple of ints, but found element of type {kind} at pos {i}"
                    )
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(value).__name__}")

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
