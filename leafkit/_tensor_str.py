"""Tensor printing that reproduces PyTorch's ``repr(tensor)`` character for character.

This module mirrors the behaviour of ``torch/_tensor_str.py`` (PyTorch 2.13) for
dense, strided tensors, but works on plain NumPy arrays so that the leafkit
engine can print ``tensor([1., 2.], requires_grad=True)`` exactly as PyTorch
does.  The rules reproduced here are:

* one formatter per tensor decides the element style from the non-zero finite
  values: integer style (``1.``), fixed point with ``precision`` digits
  (``1.0000``) or scientific (``1.0000e-05``); all elements are right-aligned
  to the widest one;
* rows are wrapped at ``linewidth`` and nested dimensions are separated by
  ``dim - 1`` newlines and indented under their opening bracket;
* tensors with more than ``threshold`` elements are summarised with ``...``,
  keeping ``edgeitems`` entries at both ends of every dimension;
* ``device=``, ``size=`` (empty tensors) and ``dtype=`` (non-default dtypes)
  suffixes, followed by the caller's ``grad_fn=``/``requires_grad=`` suffix,
  wrapped onto a new line when they would pass ``linewidth``.

Only the public names :func:`format_tensor`, :func:`set_printoptions`,
:func:`get_printoptions` and :func:`printoptions` are meant to be used from
outside.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

__all__ = ["format_tensor", "set_printoptions", "get_printoptions", "printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


#: The module-wide options honoured by :func:`format_tensor` (PyTorch's ``PRINT_OPTS``).
PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
) -> None:
    """Set the options used when printing tensors, as ``torch.set_printoptions`` does.

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point for floating point output (default 4).
    threshold : int or float, optional
        Tensors with more elements than this are summarised with ``...``
        (default 1000).
    edgeitems : int, optional
        Number of items kept at the start and end of each dimension in a
        summary (default 3).  ``0`` prints only ``...`` plus a ``size=`` suffix.
    linewidth : int, optional
        Characters per line used to wrap rows and suffixes (default 80).
    profile : {"default", "short", "full"}, optional
        Reset the four options above to a preset first; explicit arguments are
        applied afterwards.  ``"short"`` is precision 2 / edgeitems 2,
        ``"full"`` never summarises.
    sci_mode : bool or None, optional
        Force (True) or forbid (False) scientific notation.  ``None`` lets the
        formatter choose.  As in PyTorch this option is *always* assigned, so
        any call that omits it resets it to ``None``.

    Notes
    -----
    An unknown ``profile`` name is silently ignored, like in PyTorch.

    Examples
    --------
    >>> set_printoptions(precision=2)
    >>> format_tensor(np.array([1.12345], dtype=np.float32), dtype_name="float32")
    'tensor([1.12])'
    >>> set_printoptions(profile="default")
    """
    if profile is not None and profile in _PROFILES:
        for key, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, key, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as a dict, like ``torch._tensor_str.get_printoptions``.

    Returns
    -------
    dict
        Keys ``precision``, ``threshold``, ``edgeitems``, ``linewidth`` and
        ``sci_mode``; it can be passed back as ``set_printoptions(**opts)``.
    """
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs) -> Iterator[None]:
    """Temporarily change the print options, like ``torch._tensor_str.printoptions``.

    Parameters
    ----------
    **kwargs
        Same arguments as :func:`set_printoptions`.
    """
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# --------------------------------------------------------------------------- dtypes

_ALIASES = {
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "short": "int16",
    "int": "int32",
    "long": "int64",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "chalf": "complex32",
}


def _dtype_kind(name: str) -> str:
    """Classify a dtype name as 'bool', 'int', 'float' or 'complex'."""
    if name == "bool":
        return "bool"
    if name.startswith("complex"):
        return "complex"
    if name.startswith(("float", "bfloat")):
        return "float"
    if name.startswith(("int", "uint")):
        return "int"
    raise ValueError(f"format_tensor: unknown dtype name {name!r}")


# --------------------------------------------------------------------- formatting


class _Formatter:
    """Chooses one element style and width for a whole tensor (PyTorch's ``_Formatter``).

    ``values`` are the (possibly summarised) elements; for complex tensors one
    formatter is built for the real parts and one for the imaginary parts.
    """

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)

        if not floating:
            if flat.size:
                if flat.dtype == np.bool_:
                    strs = {f"{v}" for v in np.unique(flat).tolist()}
                else:
                    # the longest decimal string of an integer set is that of its min or max
                    strs = {f"{int(flat.min())}", f"{int(flat.max())}"}
                self.max_width = max(self.max_width, *(len(s) for s in strs))
            return

        flat = flat.astype(np.float64)  # exact for every float type PyTorch prints
        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return  # only zeros / nan / inf: integer style, width 1

        magnitude = np.abs(nonzero_finite)
        vmin, vmax = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        distinct = np.unique(nonzero_finite).tolist()
        if self.sci_mode:
            spec, extra = f".{PRINT_OPTS.precision}e", 0
        elif self.int_mode:
            spec, extra = ".0f", 1  # room for the trailing "."
        else:
            spec, extra = f".{PRINT_OPTS.precision}f", 0
        self.max_width = max(self.max_width, max(len(format(v, spec)) for v in distinct) + extra)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                text = format(value, f"{self.max_width}.{PRINT_OPTS.precision}e")
            elif self.int_mode:
                text = format(value, ".0f")
                if math.isfinite(value):
                    text += "."
            else:
                text = format(value, f".{PRINT_OPTS.precision}f")
        else:
            text = f"{value}"
        return text.rjust(self.max_width)


def _element_str(value, real_fmt: _Formatter, imag_fmt: _Formatter | None) -> str:
    if imag_fmt is None:
        return real_fmt.format(value)
    real = real_fmt.format(value.real)
    imag = (imag_fmt.format(value.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(
    vec: np.ndarray, indent: int, summarize: bool, real_fmt: _Formatter, imag_fmt: _Formatter | None
) -> str:
    element_length = real_fmt.width() + 2
    if imag_fmt is not None:
        element_length += imag_fmt.width() + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))

    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and vec.shape[0] > 2 * edge:
        items = (
            [_element_str(v, real_fmt, imag_fmt) for v in vec[:edge].tolist()]
            + [" ..."]
            + [_element_str(v, real_fmt, imag_fmt) for v in vec[-edge:].tolist()]
        )
    else:
        items = [_element_str(v, real_fmt, imag_fmt) for v in vec.tolist()]

    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(
    arr: np.ndarray, indent: int, summarize: bool, real_fmt: _Formatter, imag_fmt: _Formatter | None
) -> str:
    if arr.ndim == 0:
        return _element_str(arr.item(), real_fmt, imag_fmt)
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, real_fmt, imag_fmt)

    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        rows = (
            [_nested_str(arr[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(edge)]
            + ["..."]
            + [_nested_str(arr[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(n - edge, n)]
        )
    else:
        rows = [_nested_str(arr[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _summarized_data(arr: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (PyTorch's ``get_summarized_data``)."""
    edge = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        if arr.shape[0] > 2 * edge:
            # note arr[-0:] is the whole vector, as in PyTorch when edgeitems == 0
            return np.concatenate((arr[:edge], arr[-edge:]))
        return arr
    if not edge:
        return arr[(slice(0, 0),) * arr.ndim]
    for axis, size in enumerate(arr.shape):
        if size > 2 * edge:
            keep = np.r_[0:edge, size - edge : size]
            arr = np.take(arr, keep, axis=axis)
    return arr


def _body_str(arr: np.ndarray, indent: int, kind: str) -> str:
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    shown = _summarized_data(arr) if summarize else arr
    if kind == "complex":
        real_fmt = _Formatter(shown.real, floating=True)
        imag_fmt = _Formatter(shown.imag, floating=True)
        return _nested_str(arr, indent, summarize, real_fmt, imag_fmt)
    return _nested_str(arr, indent, summarize, _Formatter(shown, floating=(kind == "float")), None)


def _add_suffixes(text: str, suffixes: Iterable[str], indent: int) -> str:
    """Append ``, key=value`` suffixes, wrapping at ``linewidth`` as PyTorch does."""
    parts = [text]
    # PyTorch counts two characters more than the last line really has.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(
    array, *, dtype_name: str, device_str: str = "cpu", suffixes: Iterable[str] = (), default_dtype: str = "float32"
) -> str:
    """Render a tensor's values exactly as PyTorch's ``repr(tensor)`` would.

    Mirrors ``torch._tensor_str._str`` for dense CPU/CUDA tensors with the
    current :data:`PRINT_OPTS` (see :func:`set_printoptions`): element style
    (``1.``, ``1.0000``, ``1.0000e-05``, ``nan``, ``True``), alignment, line
    wrapping, nesting, ``...`` summaries, and the suffixes ``device=...``,
    ``size=...`` (empty tensors, or ``edgeitems=0``), ``dtype=torch.<name>``
    (non-default dtypes) and the caller's own suffixes, in that order.

    Parameters
    ----------
    array : numpy.ndarray or array_like
        The tensor's values in host memory; any shape, 0-d included.  Values
        are converted to the kind ``dtype_name`` describes if needed.
    dtype_name : str
        The tensor's dtype as PyTorch names it without ``torch.``:
        ``"float32"``, ``"float64"``, ``"float16"``, ``"bfloat16"``,
        ``"int64"``, ``"int32"``, ``"int16"``, ``"int8"``, ``"uint8"``,
        ``"bool"``, ``"complex64"``, ``"complex128"``.  Aliases such as
        ``"double"`` or ``"long"`` and a ``"torch."`` prefix are accepted.
    device_str : str, default "cpu"
        The device as ``str(tensor.device)`` gives it.  Anything other than
        ``"cpu"`` adds ``device='<device_str>'``, as PyTorch does for tensors
        not on the (CPU) default device.
    suffixes : iterable of str, default ()
        Already formatted ``key=value`` strings appended last, such as
        ``"grad_fn=<MulBackward0>"`` or ``"requires_grad=True"``.
    default_dtype : {"float32", "float64"}, default "float32"
        The current default floating dtype (``torch.get_default_dtype()``);
        it, its complex counterpart, ``int64`` and ``bool`` print no
        ``dtype=`` suffix.

    Returns
    -------
    str
        The full representation, e.g. ``"tensor([1., 2.], requires_grad=True)"``.

    Examples
    --------
    >>> format_tensor(np.array([1.0, 2.5], dtype=np.float32), dtype_name="float32")
    'tensor([1.0000, 2.5000])'
    >>> format_tensor(np.array(8.0), dtype_name="float64")
    'tensor(8., dtype=torch.float64)'
    >>> format_tensor(np.zeros((0, 3), np.float32), dtype_name="float32")
    'tensor([], size=(0, 3))'
    """
    dtype_name = str(dtype_name)
    if dtype_name.startswith("torch."):
        dtype_name = dtype_name[len("torch.") :]
    dtype_name = _ALIASES.get(dtype_name, dtype_name)
    default_dtype = _ALIASES.get(str(default_dtype).replace("torch.", ""), str(default_dtype))
    kind = _dtype_kind(dtype_name)

    arr = np.asarray(array)
    if kind == "bool" and arr.dtype != np.bool_:
        arr = arr.astype(np.bool_)
    elif kind == "int" and arr.dtype.kind not in "iu":
        arr = arr.astype(np.int64)
    elif kind == "float" and arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    elif kind == "complex" and arr.dtype.kind != "c":
        arr = arr.astype(np.complex128)

    prefix = "tensor("
    indent = len(prefix)
    extra: list[str] = []
    if device_str != "cpu":
        extra.append(f"device='{device_str}'")

    default_complex = "complex128" if default_dtype == "float64" else "complex64"
    shape_str = str(tuple(int(n) for n in arr.shape))
    if arr.size == 0:
        if arr.ndim != 1:
            extra.append("size=" + shape_str)
        # nothing to infer the dtype from, so every non-default dtype (int64 too) is shown
        if dtype_name != default_dtype:
            extra.append("dtype=torch." + dtype_name)
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            extra.append("size=" + shape_str)
        if dtype_name not in (default_dtype, default_complex, "int64", "bool"):
            extra.append("dtype=torch." + dtype_name)
        body = _body_str(arr, indent, kind)

    extra.extend(suffixes)
    return _add_suffixes(prefix + body, extra, indent)
