"""``torch.autograd.Variable``: the name old tutorials use, which has made plain tensors since PyTorch 0.4.

``Variable(t)`` returns a new leaf Tensor on ``t``'s storage (``t.detach()``), requiring grad when asked;
``isinstance(x, Variable)`` is True for every tensor.  The removed ``volatile`` flag warns and changes nothing,
as in PyTorch 2.13 (``Tensor.volatile`` reads False, with a warning).
"""

from __future__ import annotations

import warnings

from .. import _tensor

__all__ = ["Variable"]

VOLATILE_ARG_WARNING = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: a Tensor (PyTorch 2.13's behaviour).

    Parameters
    ----------
    data : Tensor, optional
        Default: an empty float tensor.
    requires_grad : bool
        The new leaf requires grad (floating dtypes only).
    volatile : bool
        Removed in PyTorch 0.4: warns "volatile was removed and now has no effect. Use `with torch.no_grad():`
        instead." and is ignored, as in PyTorch.

    Returns
    -------
    Tensor
        A leaf sharing ``data``'s storage (and version counter), without its history.

    Raises
    ------
    TypeError
        "Variable data has to be a tensor, but got list"; "'foo' is an invalid keyword argument for this function".
    RuntimeError
        ``requires_grad=True`` on an integer tensor ("Only Tensors of floating point and complex dtype can require
        gradients").
    """

    def __new__(cls, *args, **kwargs):
        names = ("data", "requires_grad", "volatile", "_grad_fn")
        for k in kwargs:
            if k not in names:
                raise TypeError(f"'{k}' is an invalid keyword argument for this function")
        bound = dict(zip(names, args))
        bound.update(kwargs)
        data = bound.get("data")
        if bound.get("volatile"):
            warnings.warn(VOLATILE_ARG_WARNING, UserWarning, stacklevel=2)
        if data is None:
            from .._creation import empty

            data = empty(0)
        if not isinstance(data, _tensor.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if bound.get("requires_grad"):
            if out._data.dtype.kind not in "fc":
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            out.requires_grad_(True)
        return out


Variable.__module__ = "leafkit.autograd.variable"
