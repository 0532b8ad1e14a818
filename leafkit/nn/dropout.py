"""``Dropout``: zero random elements while training, pass the input through in evaluation."""

from __future__ import annotations

from .._tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d"]


class Dropout(Module):
    """Zero each element with probability ``p`` in training and scale the rest by ``1/(1-p)``
    (``torch.nn.Dropout``).

    ``model.train()`` (the default) turns it on, ``model.eval()`` off: in
    evaluation ``forward`` returns its input itself, with no node.  In
    training the output is ``input * mask`` (``MulBackward0``; the mask of
    ``0`` and ``1/(1-p)`` values is its ``_saved_other``), so a dropped
    element passes no gradient back.  See :func:`leafkit.nn.functional.dropout`.

    Parameters
    ----------
    p : float
        The probability of zeroing an element (default 0.5), in ``[0, 1]``.
    inplace : bool
        Multiply the input in place.

    Raises
    ------
    ValueError
        "dropout probability has to be between 0 and 1, but got 1.5", when
        the module is built (and again in ``forward`` if ``p`` is changed).

    Notes
    -----
    Shapes: any input shape; the output has the input's shape, dtype and
    device.  The mask comes from leafkit's generator
    (:func:`leafkit.manual_seed`), not from PyTorch's stream.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``F.dropout(input, self.p, self.training, self.inplace)``."""
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        """``p=0.5, inplace=False``, as PyTorch prints it."""
        return f"p={self.p}, inplace={self.inplace}"


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        """``p=0.5, inplace=False``, as PyTorch prints it."""
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` with probability ``p`` in training
    (``torch.nn.Dropout1d``); see :func:`leafkit.nn.functional.dropout1d`.  ``eval()`` turns it off."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels (feature maps) of ``(N, C, H, W)`` with probability ``p`` in training and scale the
    rest by ``1/(1-p)`` (``torch.nn.Dropout2d``).

    Neighbouring pixels of a feature map are strongly correlated, so
    dropping single elements (``Dropout``) barely regularises a CNN;
    dropping whole channels does.  ``forward`` is
    :func:`leafkit.nn.functional.dropout2d`: ``input * mask`` with one mask
    value per (sample, channel), ``MulBackward0``; in ``eval()`` the input
    itself.  A 3-D input is read as ``(N, C, L)`` with PyTorch's UserWarning.

    Raises ValueError "dropout probability has to be between 0 and 1, but got 1.5" when built.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)
