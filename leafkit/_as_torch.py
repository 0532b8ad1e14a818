"""``import leafkit as torch``, then ``from torch.func import grad``: the import finds leafkit's module.

An import statement names a module, not a variable, so after ``import leafkit
as torch`` the line ``from torch.func import grad`` would load real PyTorch
(or fail without it).  leafkit wraps Python's ``__import__`` once: when the
code that imports has bound the name ``torch`` to leafkit (its globals say
so), ``from torch.X import ...``, ``import torch.X`` and ``from torch import
X`` import ``leafkit.X`` instead.  Code that bound ``torch`` to real PyTorch,
and every other import, is untouched; a plain ``import torch`` still imports
PyTorch.
"""

from __future__ import annotations

import builtins
import sys

_original_import = builtins.__import__


def _import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002 - __import__'s signature
    if (
        level == 0
        and globals is not None
        and name[:5] == "torch"
        and (name[5:6] == "." or (not name[5:] and fromlist))
        and globals.get("torch") is sys.modules.get("leafkit")
        and "leafkit" in sys.modules
    ):
        return _original_import("leafkit" + name[5:], globals, locals, fromlist, 0)
    return _original_import(name, globals, locals, fromlist, level)


def install() -> None:
    """Wrap ``builtins.__import__`` (once)."""
    if builtins.__import__ is not _import:
        builtins.__import__ = _import
