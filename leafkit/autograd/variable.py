"""``torch.autograd.variable``: the module old tutorials import ``Variable`` from
(``from torch.autograd.variable import Variable``).

``Variable`` is a name of the front door, :mod:`leafkit.autograd` (the torch namespace's layer, see
ARCHITECTURE.md), which defines it: ``Variable(t)`` returns a new leaf Tensor on ``t``'s storage, and
``isinstance(x, Variable)`` is True for every tensor, as in PyTorch 2.13.  Its ``__module__`` names this path,
as PyTorch's ``<class 'torch.autograd.variable.Variable'>`` does.
"""

from __future__ import annotations

from . import Variable

__all__ = ["Variable"]
