"""PyTorch's argument checks for functions with a C++ signature (``conv2d``, ``max_pool2d``, ``avg_pool2d`` ...).

PyTorch parses the arguments of such a function against its signature
before anything runs, and a wrong type is a ``TypeError`` worded by its
parser:

* one signature: ``max_pool2d(): argument 'kernel_size' (position 2) must
  be tuple of ints, not float`` (no position for a keyword argument);
* several signatures (``conv2d`` takes ``padding`` as ints or as a string):
  ``conv2d() received an invalid combination of arguments - got (Tensor,
  Tensor, groups=float), but expected one of:`` and the signatures.

:func:`checked` wraps a Python function with such a check; the wrapped
function keeps its own signature for ``help()``.  "tuple of ints" accepts
an int, a list or tuple of ints, or a ``Size`` (not a bool or a float, as
in PyTorch).
"""

from __future__ import annotations

import functools
import inspect
import numbers

from .._tensor import Tensor

__all__ = ["checked", "check_types", "int_tuple"]


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_ints(v) -> bool:
    if _is_int(v):
        return True
    return isinstance(v, (tuple, list)) and all(_is_int(e) for e in v)


_KINDS = {
    "Tensor": lambda v: isinstance(v, Tensor),
    "Tensor?": lambda v: v is None or isinstance(v, Tensor),
    "tuple of ints": _is_ints,
    "tuple of ints?": lambda v: v is None or _is_ints(v),
    "int": _is_int,
    "int?": lambda v: v is None or _is_int(v),
    "bool": lambda v: isinstance(v, bool),
    "float": lambda v: isinstance(v, numbers.Real),
    "float?": lambda v: v is None or isinstance(v, numbers.Real),
    "str": lambda v: isinstance(v, str),
}


def _type_name(v) -> str:
    return type(v).__name__


def int_tuple(v, n: int) -> tuple:
    """PyTorch's reading of an ``int[n]`` argument: an int repeated ``n`` times, a sequence as it is (a node saves
    it so: ``conv2d(..., stride=(2,))`` keeps ``_saved_stride == (2,)``)."""
    if _is_int(v):
        return (int(v),) * n
    return tuple(int(e) for e in v)


def checked(name: str, *overloads):
    """Check the arguments of the wrapped function against PyTorch's signature(s) before it runs.

    Each overload is a list of ``(parameter, kind, default text)`` with
    kinds from ``_KINDS``; an argument is accepted when some overload
    accepts all the arguments given.
    """

    def deco(fn):
        def accepts(overload, args, kwargs):
            names = [p for p, _, _ in overload]
            if len(args) > len(names) or any(k not in names for k in kwargs):
                return None
            kinds = dict((p, k) for p, k, _ in overload)
            for i, v in enumerate(args):
                if not _KINDS[kinds[names[i]]](v):
                    return (i, names[i], kinds[names[i]], v, True)
            for k, v in kwargs.items():
                if not _KINDS[kinds[k]](v):
                    return (names.index(k), k, kinds[k], v, False)
            return ()

        def signature_text(overload):
            parts = []
            for p, kind, default in overload:
                kind = kind.rstrip("?")
                parts.append(f"{kind} {p}" + (f" = {default}" if default is not None else ""))
            return "(" + ", ".join(parts) + ")"

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            results = [accepts(o, args, kwargs) for o in overloads]
            if () in results:
                return fn(*args, **kwargs)
            if len(overloads) == 1 and results[0] is not None:
                i, p, kind, v, positional = results[0]
                where = f" (position {i + 1})" if positional else ""
                raise TypeError(f"{name}(): argument '{p}'{where} must be {kind.rstrip('?')}, not {_type_name(v)}")
            got = [_type_name(v) for v in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
            if len(overloads) == 1:
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but expected "
                    f"{signature_text(overloads[0])}"
                )
            lines = "".join(f" * {signature_text(o)}\n" for o in overloads)
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but expected one "
                f"of:\n{lines}"
            )

        wrapper.__signature__ = inspect.signature(fn)
        return wrapper

    return deco


def check_types(name: str, args) -> None:
    """``args``: ``(parameter, kind, value)`` in signature order; PyTorch's TypeError for the first value of a wrong
    type, with its position (a Python wrapper such as ``F.max_pool2d`` passes every argument by position)."""
    for i, (p, kind, v) in enumerate(args):
        if not _KINDS[kind](v):
            raise TypeError(
                f"{name}(): argument '{p}' (position {i + 1}) must be {kind.rstrip('?')}, not {_type_name(v)}"
            )
