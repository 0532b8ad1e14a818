"""``Parameter``: the tensor a module learns, a leaf that requires grad."""

from __future__ import annotations

from .._creation import empty
from .._device import to_host
from .._dtype import is_differentiable
from .._tensor import Tensor, _rebuild

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor that a :class:`~leafkit.nn.Module` registers as learnable (``torch.nn.Parameter``).

    Parameters
    ----------
    data : Tensor, optional
        The values.  The parameter shares ``data``'s storage (no copy) and is
        a leaf even when ``data`` was computed (its history is dropped, as
        ``detach()`` would).  Default: an empty float32 tensor.
    requires_grad : bool
        Default True.

    Raises
    ------
    AttributeError
        When ``data`` is not a Tensor ("'list' object has no attribute
        'detach'", PyTorch 2.13's error).
    RuntimeError
        ``requires_grad=True`` on a non-floating dtype ("Only Tensors of
        floating point and complex dtype can require gradients").

    Notes
    -----
    Assigning a Parameter as an attribute of a Module registers it (it
    shows in ``parameters()``); a plain Tensor does not.  Results of
    operations on parameters are plain Tensors, as in PyTorch.

    Examples
    --------
    >>> Parameter(tensor([1., 2.]))
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):  # PyTorch 2.13 fails on ``data.detach()``
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
        if requires_grad and not is_differentiable(data._data.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        p = object.__new__(cls)
        p._init_from(data, requires_grad)
        return p

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = Parameter(Tensor._make(self._data.copy(), self._device), self._requires_grad)
        if self._grad is not None:
            new._grad = Tensor._make(self._grad._data.copy(), self._device)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (to_host(self._data).copy(), str(self._device), self._requires_grad))


def _rebuild_parameter(arr, dev, requires_grad):
    return Parameter(_rebuild(arr, dev, False), requires_grad)
