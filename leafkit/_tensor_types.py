"""The legacy tensor types: ``torch.FloatTensor``, ``DoubleTensor``, ``LongTensor`` ... and ``torch.Tensor(...)``.

Old tutorials (and many Chinese ones) build tensors with ``torch.FloatTensor([1, 2])`` or ``torch.Tensor(2, 3)``,
test ``isinstance(t, torch.FloatTensor)`` and convert with ``t.type(torch.DoubleTensor)``.  In PyTorch 2.13 these
are not subclasses of ``Tensor`` but *types*: calling one makes a plain Tensor of its dtype (and device), and
``isinstance`` checks the tensor's dtype and device.  leafkit's are the same:

* ``FloatTensor(2, 3)`` or ``FloatTensor(torch.Size([2, 3]))``: a (2, 3) float32 tensor (PyTorch leaves the
  memory uninitialised; leafkit fills it with zeros);
* ``FloatTensor([1, 2])`` (a list, tuple or NumPy array): the data, converted to float32;
* ``FloatTensor(t)``: ``t`` itself as a new tensor on the same storage when its dtype and device match
  (PyTorch's TypeError otherwise); ``torch.Tensor(t)`` accepts any dtype;
* ``FloatTensor()``: an empty tensor; ``device=`` is the only keyword.

``torch.cuda.FloatTensor`` ... (in :mod:`leafkit.cuda`) make tensors on leafkit's cuda device.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _device, _dtype
from ._creation import tensor, zeros
from ._tensor import Size, Tensor, _parse_size

__all__ = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
    "legacy_new",
    "tensor_type",
    "set_default_tensor_type",
]

_SIGNATURES = (
    " * (*, torch.device device = None)\n"
    "      didn't match because some of the keywords were incorrect: {kw}\n"
    " * (torch.Storage storage)\n"
    " * (Tensor other)\n"
    " * (tuple of ints size, *, torch.device device = None)\n"
    " * (object data, *, torch.device device = None)\n"
)


def _options(d, dev) -> str:
    return (
        f"TensorOptions(dtype={d.ctype}, device={dev}, layout=Strided, requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))"
    )


def legacy_new(dtype, device_type, args, kwargs):
    """PyTorch's legacy constructor for a tensor type of ``dtype`` on ``device_type`` (``"cpu"``/``"cuda"``);
    ``dtype=None`` is ``torch.Tensor`` itself (the default dtype, any dtype for a tensor argument)."""
    for k in kwargs:
        if k != "device":
            got = ", ".join([type(a).__name__ for a in args] + [f"{key}={_kind(v)}" for key, v in kwargs.items()])
            raise TypeError(
                f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                + _SIGNATURES.format(kw=", ".join(x for x in kwargs if x != "device"))
            )
    dev = kwargs.get("device")
    if dev is not None:
        dev = _device.canonical(dev)
        if device_type is not None and dev.type != device_type:
            raise RuntimeError(
                f"legacy constructor expects device type: {device_type} but device type: {dev.type} was passed"
            )
    elif device_type == "cuda":
        dev = _device.CUDA0
    else:  # the legacy constructors ignore set_default_device, as in PyTorch
        dev = _device.CPU
    d = dtype if dtype is not None else _dtype.get_default_dtype()
    if not args:
        return zeros(0, dtype=d, device=dev)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if dtype is not None and (a._data.dtype != d.np or (dev is not None and a._device != dev)):
                raise TypeError(f"expected {_options(d, dev or a._device)} (got {_options(a.dtype, a._device)})")
            out = Tensor._make(a._data, a._device)
            out._version_counter = a._version_counter
            return out
        if isinstance(a, Size):
            return zeros(_parse_size(tuple(a)), dtype=d, device=dev)
        if isinstance(a, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(a, (list, tuple, np.ndarray)):
            return tensor(a, dtype=d, device=dev)
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
    return zeros(_parse_size(args), dtype=d, device=dev)


def _kind(v) -> str:
    if isinstance(v, _dtype.dtype):
        return "torch.dtype"
    if isinstance(v, _device.device):
        return "torch.device"
    return type(v).__name__


class _TensorType(type):
    """The metaclass of the legacy types: calling one constructs, ``isinstance`` compares dtype and device."""

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, "cuda" if cls.is_cuda else "cpu", args, kwargs)

    def __instancecheck__(cls, obj):
        if not isinstance(obj, Tensor):
            return False
        return obj._data.dtype == cls.dtype.np and (obj._device.type == "cuda") == cls.is_cuda

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make_type(d, cuda: bool):
    name = d.tensor_type
    doc = f"``torch{'.cuda' if cuda else ''}.{name}``: the legacy type of {d} tensors on {'cuda' if cuda else 'cpu'}."
    cls = _TensorType(name, (), {"dtype": d, "is_cuda": cuda, "is_sparse": False, "__doc__": doc})
    cls.__module__ = "torch.cuda" if cuda else "torch"
    return cls


_BY_DTYPE = {(d, c): _make_type(d, c) for d in _dtype._ALL for c in (False, True)}
FloatTensor = _BY_DTYPE[_dtype.float32, False]
DoubleTensor = _BY_DTYPE[_dtype.float64, False]
HalfTensor = _BY_DTYPE[_dtype.float16, False]
LongTensor = _BY_DTYPE[_dtype.int64, False]
IntTensor = _BY_DTYPE[_dtype.int32, False]
ShortTensor = _BY_DTYPE[_dtype.int16, False]
CharTensor = _BY_DTYPE[_dtype.int8, False]
ByteTensor = _BY_DTYPE[_dtype.uint8, False]
BoolTensor = _BY_DTYPE[_dtype.bool, False]
CUDA_TYPES = {d.tensor_type: _BY_DTYPE[d, True] for d in _dtype._ALL}


def tensor_type(spec):
    """The (dtype, device type) a ``type()`` argument names: a legacy type, or its name as a string
    (``'torch.DoubleTensor'``, ``'torch.cuda.FloatTensor'``); None for a dtype.

    Raises
    ------
    ValueError
        "invalid type: 'torch.FooTensor'" for an unknown name.
    """
    if isinstance(spec, _TensorType):
        return spec.dtype, "cuda" if spec.is_cuda else "cpu"
    if isinstance(spec, str):
        cuda = spec.startswith("torch.cuda.")
        name = spec[len("torch.cuda.") :] if cuda else spec[len("torch.") :] if spec.startswith("torch.") else None
        for d in _dtype._ALL:
            if d.tensor_type == name:
                return d, "cuda" if cuda else "cpu"
        raise ValueError(f"invalid type: '{spec}'")
    return None


_warned = [False]


def set_default_tensor_type(t) -> None:
    """Deprecated since PyTorch 2.1 (it warns so): set the default dtype from a floating legacy type
    (``torch.DoubleTensor`` or ``'torch.DoubleTensor'``); a cuda type also makes cuda the default device.

    Raises
    ------
    TypeError
        "only floating-point types are supported as the default type"; ValueError for an unknown name.
    """
    if not _warned[0]:  # PyTorch warns once per process (TORCH_WARN_ONCE)
        _warned[0] = True
        warnings.warn(
            "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use torch.set_default_dtype() "
            "and torch.set_default_device() as alternatives.",
            UserWarning,
            stacklevel=2,
        )
    d, dev = tensor_type(t) or (None, None)
    if d is None or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(d)
    _device.set_default_device(dev)
