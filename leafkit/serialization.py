"""``torch.save`` and ``torch.load`` in PyTorch's zip format, so that a model goes from leafkit to PyTorch and back.

The file is the one PyTorch writes (since 1.6): a zip archive, stored without compression, whose records are

``<name>/data.pkl``
    a pickle (protocol 2) of the saved object, in which every tensor is a call of PyTorch's rebuild function
    ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks)``
    (``torch._utils._rebuild_parameter(...)`` around it for an ``nn.Parameter``), and every storage a
    persistent id ``("storage", torch.FloatStorage, key, location, numel)``;
``<name>/data/<key>``
    the raw bytes of each storage, little-endian, aligned to 64 bytes in the file; tensors that share a storage
    (a tensor and its views) share one record, with their own offsets and strides;
``<name>/byteorder``, ``.format_version``, ``.storage_alignment``, ``version``, ``.data/serialization_id``
    as PyTorch 2.13 writes them.

``<name>`` is the file's name without its extension (``archive`` for a file object).

Loading is safe by default, as in PyTorch 2.6 and later: ``weights_only=True`` unpickles with a restricted
unpickler that resolves only the globals PyTorch's weights-only unpickler allows (the rebuild functions, storage
types, dtypes, ``torch.Size``, ``torch.device``, ``collections.OrderedDict`` ...) and those added with
:func:`add_safe_globals`; any other global is refused with PyTorch's ``UnpicklingError`` ("Weights only load
failed ...") before it is imported or called.  ``weights_only=False`` runs an ordinary unpickler, which may run
any code the file names: use it only for files you trust.

What leafkit leaves out: the legacy (pre-1.6) format, TorchScript archives, ``safetensors`` files, and the tensor
kinds leafkit has no dtype or layout for (bfloat16, complex, quantized, sparse, nested); loading one raises an
error that says so.
"""

from __future__ import annotations

import _compat_pickle
import collections
import contextlib
import hashlib
import io
import os
import pickle
import re
import struct
import warnings
import zipfile
from collections import OrderedDict

import numpy as np

from . import _device, _dtype, _tensor_types
from ._tensor import Size, Tensor

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "StorageType",
]

DEFAULT_PROTOCOL = 2
STORAGE_ALIGNMENT = 64

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source."
)
DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with weights_only "
    "https://pytorch.org/docs/stable/generated/torch.load.html."
)

# -- PyTorch's names for what a checkpoint holds --------------------------------------------------------------------
# the legacy storage class of each dtype (the storage type in a persistent id)
STORAGE_NAMES = {
    _dtype.float32: "FloatStorage",
    _dtype.float64: "DoubleStorage",
    _dtype.float16: "HalfStorage",
    _dtype.int64: "LongStorage",
    _dtype.int32: "IntStorage",
    _dtype.int16: "ShortStorage",
    _dtype.int8: "CharStorage",
    _dtype.uint8: "ByteStorage",
    _dtype.bool: "BoolStorage",
}
_STORAGE_DTYPES = {name: d for d, name in STORAGE_NAMES.items()}
# storage types PyTorch has and leafkit has no dtype for
_OTHER_STORAGES = (
    "BFloat16Storage",
    "ComplexDoubleStorage",
    "ComplexFloatStorage",
    "QInt32Storage",
    "QInt8Storage",
    "QUInt2x4Storage",
    "QUInt4x2Storage",
    "QUInt8Storage",
)
# torch dtypes leafkit does not have (a checkpoint may name them; a tensor of one cannot be loaded)
_OTHER_DTYPES = (
    ["bfloat16", "complex32", "complex64", "complex128", "qint8", "quint8", "qint32", "quint4x2", "quint2x4"]
    + ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2"]
    + ["bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "uint16", "uint32", "uint64"]
    + [f"uint{i}" for i in range(1, 8)]
    + [f"int{i}" for i in range(1, 8)]
)
_TENSOR_TYPES = ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")
_QSCHEMES = (
    "per_tensor_affine",
    "per_tensor_symmetric",
    "per_channel_affine",
    "per_channel_symmetric",
    "per_channel_affine_float_qparams",
)
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


class StorageType:
    """A storage type named in a checkpoint (``torch.FloatStorage``): what dtype its bytes hold."""

    def __init__(self, name: str):
        self.name = name
        self._dtype = _STORAGE_DTYPES.get(name)

    @property
    def dtype(self):
        if self._dtype is None:
            raise TypeError(f"leafkit cannot load a torch.{self.name}: it has no such dtype")
        return self._dtype

    def __str__(self) -> str:
        return f"StorageType(dtype={self.dtype})"

    __repr__ = __str__


class _UntypedStorageType:
    """``torch.storage.UntypedStorage`` in a checkpoint: raw bytes whose dtype the rebuild call gives."""

    dtype = _dtype.uint8


class _Unsupported:
    """A name PyTorch's weights-only unpickler allows but leafkit cannot build (a dtype or tensor kind it lacks):
    resolving it is fine, using it raises."""

    def __init__(self, path: str):
        self.path = path

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"leafkit cannot load what this checkpoint holds: {self.path} is not supported")

    def __repr__(self) -> str:
        return self.path


# -- the storages of a load -------------------------------------------------------------------------------------
class _LoadedStorage:
    """A storage read from a checkpoint: its elements (a 1-d array) and the device they are on.

    This is what a ``map_location`` callable receives (PyTorch passes its storage object): return it as it is,
    ``storage.cpu()``, ``storage.cuda()`` or ``storage.to(device)``, or None for the default placement.
    """

    def __init__(self, array, device):
        self._array = array
        self.device = device

    @property
    def dtype(self):
        return _dtype.from_numpy_dtype(self._array.dtype)

    def size(self) -> int:
        return int(self._array.size)

    def nbytes(self) -> int:
        return int(self._array.nbytes)

    def to(self, device=None, **kwargs):
        dev = _device.canonical(device)
        if dev == self.device:
            return self
        _device.check_available(dev)
        return _LoadedStorage(_device.to_device_array(self._array, self.device, dev), dev)

    def cuda(self, device=None, non_blocking=False):
        return self.to(_device.CUDA0 if device is None else device)

    def cpu(self):
        return self.to(_device.CPU)

    def __repr__(self) -> str:
        return f"leafkit storage of {self.size()} {self.dtype} on {self.device}"


def _default_restore(storage: _LoadedStorage, location: str) -> _LoadedStorage:
    """Put a storage on the device its location names, with PyTorch's errors for a device that is not there."""
    location = location.decode() if isinstance(location, bytes) else str(location)
    if location.startswith("cuda"):
        index = int(location.split(":")[1]) if ":" in location else 0
        if _device.cuda_backend() is None:
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
                "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
                "to map your storages to the CPU."
            )
        if index >= 1:
            raise RuntimeError(
                f"Attempting to deserialize object on CUDA device {index} but torch.cuda.device_count() is 1. "
                "Please use torch.load with map_location to map your storages to an existing device."
            )
        return storage.to(_device.CUDA0)
    if location == "cpu":
        return storage.to(_device.CPU)
    try:
        dev = _device.device(location)
    except RuntimeError:
        raise RuntimeError(f"don't know how to restore data location of {location}") from None
    return storage.to(dev)


def _restore_location(map_location):
    if map_location is None:
        return _default_restore
    if isinstance(map_location, dict):
        return lambda storage, location: _default_restore(storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes)):
        return lambda storage, location: _default_restore(storage, map_location)
    if isinstance(map_location, _device.device):
        return lambda storage, location: _default_restore(storage, str(map_location))

    def restore(storage, location):
        result = map_location(storage, location)
        if result is None:
            result = _default_restore(storage, location)
        if not isinstance(result, _LoadedStorage):
            raise TypeError(
                f"map_location must return the storage it was given, moved (storage.cpu(), storage.cuda()) or None, "
                f"not {type(result).__name__}"
            )
        return result

    return restore


# -- the rebuild functions (what the names in a checkpoint resolve to) -------------------------------------------
def _strided(storage: _LoadedStorage, offset, size, stride):
    arr = storage._array
    xp = _device.array_module(arr)
    itemsize = arr.dtype.itemsize
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if not size:
        return arr[offset : offset + 1].reshape(())
    if any(s == 0 for s in size):
        return xp.zeros(size, arr.dtype)
    strides = tuple(s * itemsize for s in stride)
    if xp is np:  # a view whose .base is the storage's array, so tensors on one storage share it as views do
        return np.ndarray(size, arr.dtype, buffer=arr, offset=int(offset) * itemsize, strides=strides)
    return xp.lib.stride_tricks.as_strided(arr[offset:], shape=size, strides=strides)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return Tensor._make(_strided(storage, storage_offset, size, stride), storage.device)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    if isinstance(dtype, _Unsupported):
        dtype()
    arr = storage._array
    if arr.dtype != dtype.np:
        arr = arr.view(dtype.np)
    return _rebuild_tensor_v2(_LoadedStorage(arr, storage.device), storage_offset, size, stride, requires_grad, None)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    for k, v in state.items():
        setattr(p, k, v)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    from .nn.parameter import Parameter

    ret = func(*args)
    if new_type is Parameter and type(ret) is not Parameter:
        ret = Parameter(ret, ret.requires_grad)
    for k, v in (state or {}).items():
        setattr(ret, k, v)
    return ret


def _get_layout(name):
    if name != "torch.strided":
        raise NotImplementedError(f"leafkit cannot load a tensor of layout {name}: it has only torch.strided")
    return name


def _torch_names():
    """The globals of PyTorch's weights-only allowlist, resolved to what leafkit builds for each."""
    from .nn.parameter import Parameter

    names = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.serialization._get_layout": _get_layout,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _device.device,
        "_codecs.encode": _codecs_encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.storage.UntypedStorage": _UntypedStorageType,
        "torch.storage.TypedStorage": _Unsupported("torch.storage.TypedStorage"),
    }
    for fn in (
        "_rebuild_qtensor",
        "_rebuild_sparse_tensor",
        "_rebuild_meta_tensor_no_storage",
        "_rebuild_nested_tensor",
        "_rebuild_wrapper_subclass",
        "_rebuild_device_tensor_from_numpy",
        "_rebuild_device_tensor_from_cpu_tensor",
    ):
        names[f"torch._utils.{fn}"] = _Unsupported(f"torch._utils.{fn}")
    for d in _dtype._ALL:
        names[f"torch.{d.name}"] = d
    for name in _OTHER_DTYPES:
        names[f"torch.{name}"] = _Unsupported(f"torch.{name}")
    for prefix in ("torch.", "torch.cuda."):
        for name in list(STORAGE_NAMES.values()) + list(_OTHER_STORAGES):
            if prefix == "torch.cuda." and name.startswith("Q"):
                continue
            names[prefix + name] = StorageType(name)
        for kind in _TENSOR_TYPES:
            cls = getattr(_tensor_types, f"{kind}Tensor", None)
            names[f"{prefix}{kind}Tensor"] = cls if cls is not None else _Unsupported(f"{prefix}{kind}Tensor")
    for prefix in ("torch.sparse.", "torch.cuda.sparse."):
        for kind in _TENSOR_TYPES:
            if kind != "Bool":
                names[f"{prefix}{kind}Tensor"] = _Unsupported(f"{prefix}{kind}Tensor")
    for q in _QSCHEMES:
        names[f"torch.{q}"] = _Unsupported(f"torch.{q}")
    return names


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    import codecs

    return codecs.encode(obj, encoding, errors)


# -- the user's allowlist ----------------------------------------------------------------------------------------
_user_safe_globals: set = set()


def add_safe_globals(safe_globals) -> None:
    """Allow these functions and classes in ``weights_only`` loads (``torch.serialization.add_safe_globals``).

    Each entry is a function or class (matched by ``f"{obj.__module__}.{obj.__qualname__}"``, the name the
    pickle uses), or a pair ``(obj, "module.name")`` for an object pickled under another name.
    """
    _user_safe_globals.update(safe_globals)


def clear_safe_globals() -> None:
    """Forget every global added with :func:`add_safe_globals`."""
    _user_safe_globals.clear()


def get_safe_globals() -> list:
    """The globals added with :func:`add_safe_globals`."""
    return list(_user_safe_globals)


class safe_globals:
    """Allow these globals in ``weights_only`` loads inside a ``with`` block (``torch.serialization.safe_globals``)."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _user_safe_globals.difference_update(self.safe_globals)


def _user_allowed():
    out = {}
    for f in _user_safe_globals:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(
                    f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(f)}"
                )
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(f[1])}")
            out[f[1]] = f[0]
        else:
            out[f"{f.__module__}.{f.__qualname__}"] = f
    return out


def _display_name(path: str) -> str:
    """How PyTorch's message names a global: ``builtins.print`` as ``print``."""
    if path.startswith("builtins"):
        rest = path[len("builtins") :]
        return rest[1:] if rest.startswith(".") else "builtins" + rest
    return path


# -- unpicklers --------------------------------------------------------------------------------------------------
class _LoadContext:
    """What the unpickler's persistent ids read: the archive's storage records, each read once."""

    def __init__(self, zf, prefix, byteorder, restore, mmap_path=None):
        self.zf = zf
        self.prefix = prefix
        self.byteorder = byteorder
        self.restore = restore
        self.loaded = {}
        self.mmap_path = mmap_path

    def storage(self, pid):
        if not isinstance(pid, tuple) or not pid or _ascii(pid[0]) != "storage":
            kind = type(pid[0]) if isinstance(pid, tuple) and pid else type(pid)
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {kind}")
        storage_type, key, location, numel = pid[1:5]
        key = _ascii(key)
        if key in self.loaded:
            return self.loaded[key]
        dtype = storage_type.dtype if not isinstance(storage_type, _Unsupported) else storage_type()
        name = f"{self.prefix}data/{key}"
        np_dtype = dtype.np.newbyteorder("<" if self.byteorder == "little" else ">")
        if self.mmap_path is not None:
            info = self.zf.getinfo(name)
            arr = np.memmap(
                self.mmap_path, dtype=np_dtype, mode="c", offset=_data_offset(self.zf, info), shape=(numel,)
            )
        else:
            arr = np.frombuffer(bytearray(self.zf.read(name)), dtype=np_dtype)
        if not np_dtype.isnative:
            arr = arr.astype(dtype.np)
        storage = self.restore(_LoadedStorage(arr, _device.CPU), _ascii(location))
        self.loaded[key] = storage
        return storage


def _warn_protocol(head):
    """PyTorch's weights_only unpickler warns on reading a PROTO opcode other than 2 (what torch.save writes)."""
    if len(head) == 2 and head[0] == pickle.PROTO[0] and head[1] != 2:
        warnings.warn(
            f"Detected pickle protocol {head[1]} in the checkpoint, which was not the default pickle protocol used "
            "by `torch.load` (2). The weights_only Unpickler might not support all instructions implemented by this "
            "protocol, please file an issue for adding support if you encounter this.",
            stacklevel=3,
        )


def _ascii(v):
    return v.decode("ascii") if isinstance(v, bytes) else v


class _WeightsOnlyUnpickler(pickle.Unpickler):
    """The restricted unpickler of ``weights_only=True``: globals resolve only through PyTorch's allowlist (and the
    user's), never by importing; anything else raises ``UnpicklingError`` before it is touched."""

    def __init__(self, file, ctx, **kwargs):
        super().__init__(file, **kwargs)
        self._ctx = ctx
        self._allowed = _torch_names()
        self._user = _user_allowed()

    def find_class(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names a protocol-2 pickle uses
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        path = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {path} whose module {module} is blocked.")
        if path in self._allowed:
            return self._allowed[path]
        if path in self._user:
            return self._user[path]
        shown = _display_name(path)
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])` "
            "context manager to allowlist this global if you trust this class/function."
        )

    def persistent_load(self, pid):
        return self._ctx.storage(pid)


class _FullUnpickler(pickle.Unpickler):
    """The unpickler of ``weights_only=False``: PyTorch's names resolve to leafkit's objects, anything else is
    imported as an ordinary pickle would (and may run code)."""

    def __init__(self, file, ctx, **kwargs):
        super().__init__(file, **kwargs)
        self._ctx = ctx
        self._torch = _torch_names()

    def find_class(self, module, name):
        path = f"{module}.{name}"
        if path in self._torch:
            return self._torch[path]
        if module == "torch" or module.startswith("torch."):
            mapped = _leafkit_object(module, name)
            if mapped is not None:
                return mapped
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._ctx.storage(pid)


def _leafkit_object(module, name):
    """The leafkit object for a PyTorch path a whole-object pickle names (``torch.nn.modules.linear.Linear`` is
    ``leafkit.nn.Linear``), or None."""
    import importlib

    for candidate in (module.replace("torch", "leafkit", 1), "leafkit.nn" if module.startswith("torch.nn.") else None):
        if candidate is None:
            continue
        try:
            obj = getattr(importlib.import_module(candidate), name)
        except (ImportError, AttributeError):
            continue
        return obj
    return None


# -- the pickler -------------------------------------------------------------------------------------------------
class _Global:
    """A global written as PyTorch names it (``GLOBAL torch._utils _rebuild_tensor_v2``), whatever leafkit's
    object for it is."""

    __slots__ = ("module", "name")
    _cache: dict = {}

    def __new__(cls, module, name):
        key = (module, name)
        g = cls._cache.get(key)
        if g is None:
            g = object.__new__(cls)
            g.module, g.name = module, name
            cls._cache[key] = g
        return g

    def __call__(self, *args):  # the pickler only checks that a reduce function is callable
        raise TypeError(f"{self.module}.{self.name} is a name in a checkpoint, not a function")


class _StorageRef:
    """A storage to write: its key, its elements (a 1-d host array) and its location."""

    __slots__ = ("key", "array", "location", "dtype")

    def __init__(self, key, array, location, dtype):
        self.key, self.array, self.location, self.dtype = key, array, location, dtype


class _Pickler(pickle._Pickler):
    """Pickles leafkit objects under PyTorch's names (tensors, parameters, dtypes, devices, sizes); the storages
    become persistent ids and are collected in ``storages`` to be written as records."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # key -> _StorageRef
        self._roots = {}  # id of a storage's root array -> (root, _StorageRef)

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            torch_type = _Global("torch", STORAGE_NAMES[obj.dtype])
            return ("storage", torch_type, obj.key, obj.location, int(obj.array.size))
        return None

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def _save_dtype(self, obj):
        self.save(_Global("torch", obj.name))

    dispatch[_dtype.dtype] = _save_dtype

    def _save_device(self, obj):
        args = (obj.type,) if obj.index is None else (obj.type, obj.index)
        self.save_reduce(_Global("torch", "device"), args, obj=obj)

    dispatch[_device.device] = _save_device

    def _save_size(self, obj):
        self.save_reduce(_Global("torch", "Size"), (tuple(int(s) for s in obj),), obj=obj)

    dispatch[Size] = _save_size

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        return NotImplemented

    def _reduce_tensor(self, t):
        from .nn.parameter import Parameter

        if isinstance(t, Parameter):
            data = Tensor._make(t._data, t._device)
            data._version_counter = t._version_counter
            state = _user_state(t)
            if state:
                return (
                    _Global("torch._utils", "_rebuild_parameter_with_state"),
                    (data, t.requires_grad, OrderedDict(), state),
                )
            return (_Global("torch._utils", "_rebuild_parameter"), (data, t.requires_grad, OrderedDict()))
        ref, offset, size, stride = self._storage_of(t)
        args = (ref, offset, size, stride, t.requires_grad, OrderedDict())
        state = _user_state(t)
        if type(t) is Tensor and not state:
            return (_Global("torch._utils", "_rebuild_tensor_v2"), args)
        plain = Tensor._make(t._data, t._device)
        plain._requires_grad = t._requires_grad
        return (
            _Global("torch._tensor", "_rebuild_from_type_v2"),
            (_Global("torch._utils", "_rebuild_tensor_v2"), _Global("torch", "Tensor"), args, state),
        )

    def _storage_of(self, t):
        """The storage record of ``t`` (shared with every tensor on the same buffer) and ``t``'s offset, size and
        stride in it, in elements."""
        arr = t._data
        if isinstance(arr, np.generic):
            arr = np.asarray(arr)
        root = arr
        while getattr(root, "base", None) is not None and hasattr(root.base, "dtype"):
            root = root.base
        item = arr.dtype.itemsize
        shared = (
            root.dtype == arr.dtype
            and root.flags.c_contiguous
            and all(s >= 0 and s % item == 0 for s in arr.strides)
            and (_device.data_ptr(arr) - _device.data_ptr(root)) % item == 0
        )
        if not shared:  # a buffer that is not one C-ordered block: the tensor gets a storage of its own
            root = arr = _device.array_module(arr).ascontiguousarray(arr)
        entry = self._roots.get(id(root))
        if entry is None:
            host = _device.to_host(root).reshape(-1)
            if host.dtype.byteorder == ">":
                host = host.astype(host.dtype.newbyteorder("<"))
            ref = _StorageRef(str(len(self.storages)), host, str(t._device), _dtype.from_numpy_dtype(root.dtype))
            self.storages[ref.key] = ref
            self._roots[id(root)] = (root, ref)
        else:
            ref = entry[1]
        offset = (_device.data_ptr(arr) - _device.data_ptr(root)) // item if arr.size else 0
        return ref, int(offset), tuple(int(s) for s in arr.shape), tuple(int(s) // item for s in arr.strides)


def _user_state(t) -> dict:
    """Attributes a user set on a tensor (PyTorch pickles a tensor's ``__dict__``); leafkit's own are private."""
    d = getattr(t, "__dict__", None)
    return {k: v for k, v in d.items() if not k.startswith("_")} if d else {}


# -- the zip archive -------------------------------------------------------------------------------------------
def _archive_name(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


class _ZipWriter:
    """Writes records as PyTorch's stream writer does: stored, each record's data starting at a multiple of 64."""

    def __init__(self, fileobj, name):
        self.zf = zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self.name = name
        self.crcs = []

    def write(self, record: str, data: bytes) -> None:
        path = f"{self.name}/{record}"
        info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        start = self.zf.fp.tell() if hasattr(self.zf, "fp") and self.zf.fp is not None else 0
        header = 30 + len(path.encode("utf-8"))
        pad = (-(start + header + 4)) % STORAGE_ALIGNMENT
        info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # an "FB" extra field of padding, as PyTorch's
        self.zf.writestr(info, data)
        self.crcs.append(zipfile.crc32(data))

    def close(self) -> None:
        digest = hashlib.sha256(b"".join(struct.pack("<I", c) for c in self.crcs)).digest()
        serial = str(int.from_bytes(digest[:16], "little")).rjust(40, "0")[:40]
        self.write(".data/serialization_id", serial.encode("ascii"))
        self.zf.close()


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:  # fmt: skip
    """Save ``obj`` to ``f`` (a path or a writable binary file object) in PyTorch's zip format (``torch.save``).

    Tensors of every leafkit dtype on cpu or cuda, ``nn.Parameter`` (with ``requires_grad``), state dicts
    (``OrderedDict``), optimizer state dicts and any nesting of dicts, lists, tuples, numbers and strings give a
    file that PyTorch 2.13 loads with its default ``weights_only=True``.  Tensors that share a storage (a tensor
    and its views) are saved once, each with its offset and strides, as in PyTorch.  Other Python objects (a
    whole ``nn.Module``) are pickled by their leafkit names: leafkit loads them back with
    ``weights_only=False``.

    Raises
    ------
    NotImplementedError
        ``_use_new_zipfile_serialization=False`` (PyTorch's legacy format) or another ``pickle_module``.
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("leafkit writes only PyTorch's zip format (_use_new_zipfile_serialization=True)")
    if pickle_module is not pickle:
        raise NotImplementedError("leafkit's torch.save pickles with the standard pickle module only")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    opened = open(f, "wb") if isinstance(f, (str, os.PathLike)) else contextlib.nullcontext(f)  # noqa: SIM115
    with opened as fileobj:
        writer = _ZipWriter(fileobj, _archive_name(f))
        writer.write("data.pkl", buf.getvalue())
        writer.write(".format_version", b"1")
        writer.write(".storage_alignment", str(STORAGE_ALIGNMENT).encode())
        if not _disable_byteorder_record:
            writer.write("byteorder", b"little")
        for key, ref in pickler.storages.items():
            writer.write(f"data/{key}", ref.array.tobytes())
        writer.write("version", b"3\n")
        writer.close()


def _data_offset(zf, info) -> int:
    """Where a stored record's data starts in the file (after its local header)."""
    zf.fp.seek(info.header_offset)
    header = zf.fp.read(30)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_len + extra_len


def _wo_message(message: str) -> str:
    """PyTorch's text around a weights-only unpickling error."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check the "
            "recommended steps in the following error message.\n\tWeightsUnpickler error: " + message + DOCS_MESSAGE
        )
    updated = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        updated += (
            "Please file an issue with the following so that we can make `weights_only=True` compatible with your "
            "use case: WeightsUnpickler error: "
        )
    return updated + "\n\n" + message + DOCS_MESSAGE


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved with ``torch.save``, by leafkit or by PyTorch (``torch.load``).

    Parameters
    ----------
    f : str, os.PathLike or binary file object
    map_location : None, str, device, dict or callable
        Where the tensors go: None puts each where it was saved (``cuda`` on leafkit's cuda, simulated when
        there is no GPU); ``"cpu"`` or a device puts them all there; a dict maps saved locations to others
        (``{"cuda:0": "cpu"}``); a callable ``f(storage, location)`` returns the storage moved
        (``storage.cpu()``, ``storage.cuda()``) or None for the default.
    pickle_module : module, optional
        Only with ``weights_only=False`` (the default then becomes False, as in PyTorch).
    weights_only : bool, optional
        Default True: only tensors, storages, dtypes, devices, sizes, ``OrderedDict`` and the other globals
        PyTorch allows (and :func:`add_safe_globals` adds) may be in the file.
    mmap : bool, optional
        Map the storages from the file (copy-on-write) instead of reading them; ``f`` must be a path.
    **pickle_load_args
        ``encoding`` ... for the unpickler (``weights_only=False`` only; with True they warn, as in PyTorch).

    Returns
    -------
    The saved object, with leafkit tensors (``nn.Parameter`` for PyTorch parameters).

    Raises
    ------
    pickle.UnpicklingError
        "Weights only load failed ..." for a global outside the allowlist (it is not imported or run), with
        PyTorch's advice; a blocked module (``os``, ``sys`` ...); a file that is not a checkpoint.
    RuntimeError
        "Can not safely load weights when explicit pickle_module is specified"; "Attempting to deserialize object
        on a CUDA device but torch.cuda.is_available() is False ..." when cuda is off; PyTorch's legacy format.
    ValueError
        ``mmap=True`` with a file object ("f must be a file path in order to use the mmap argument").
    """
    weights_only_not_set = weights_only is None
    if weights_only_not_set:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    is_path = isinstance(f, (str, os.PathLike))
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    opened = open(f, "rb") if is_path else contextlib.nullcontext(f)  # noqa: SIM115
    with opened as fileobj:
        start = fileobj.tell()
        if not zipfile.is_zipfile(fileobj):
            fileobj.seek(start)
            return _load_not_zip(fileobj, weights_only)
        fileobj.seek(start)
        with zipfile.ZipFile(fileobj) as zf:
            names = zf.namelist()
            pkl = next((n for n in names if n.endswith("data.pkl") and n.count("/") == 1), None)
            if pkl is None:
                if any(n.endswith("constants.pkl") for n in names):
                    raise RuntimeError("leafkit cannot load TorchScript archives (torch.jit.save); " + UNSAFE_MESSAGE)
                raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
            prefix = pkl[: -len("data.pkl")]
            byteorder = zf.read(prefix + "byteorder").decode() if prefix + "byteorder" in names else "little"
            if byteorder not in ("little", "big"):
                raise ValueError("Unknown endianness type: " + byteorder)
            ctx = _LoadContext(zf, prefix, byteorder, _restore_location(map_location), os.fspath(f) if mmap else None)
            data = io.BytesIO(zf.read(pkl))
            if weights_only:
                _warn_protocol(data.getbuffer()[:2])
                try:
                    return _WeightsOnlyUnpickler(data, ctx, encoding=pickle_load_args["encoding"]).load()
                except pickle.UnpicklingError as e:
                    raise pickle.UnpicklingError(_wo_message(str(e))) from None
            if pickle_module is not pickle:
                return _custom_module_load(pickle_module, data, ctx, pickle_load_args)
            return _FullUnpickler(data, ctx, **pickle_load_args).load()


def _custom_module_load(pickle_module, data, ctx, pickle_load_args):
    base = pickle_module.Unpickler

    class Unpickler(base):
        def find_class(self, module, name):
            names = _torch_names()
            path = f"{module}.{name}"
            if path in names:
                return names[path]
            mapped = _leafkit_object(module, name) if module.startswith("torch") else None
            return mapped if mapped is not None else super().find_class(module, name)

        def persistent_load(self, pid):
            return ctx.storage(pid)

    return Unpickler(data, **pickle_load_args).load()


def _load_not_zip(fileobj, weights_only):
    head = fileobj.read(1)
    if head == pickle.PROTO:
        raise RuntimeError(
            "leafkit reads PyTorch's zip checkpoints (torch.save since PyTorch 1.6); this file is in the legacy "
            "format: load it with PyTorch and save it again"
        )
    if weights_only:
        message = f"Unsupported operand {head[0] if head else 'EOF'}"
        raise pickle.UnpicklingError(_wo_message(message))
    raise pickle.UnpicklingError(f"invalid load key, {head.decode('latin-1')!r}.")


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The globals a checkpoint names that a ``weights_only`` load would refuse (read without unpickling)."""
    import pickletools

    allowed = set(_torch_names()) | set(_user_allowed())
    opened = open(f, "rb") if isinstance(f, (str, os.PathLike)) else contextlib.nullcontext(f)  # noqa: SIM115
    with opened as fileobj:
        if not zipfile.is_zipfile(fileobj):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        with zipfile.ZipFile(fileobj) as zf:
            pkl = next(n for n in zf.namelist() if n.endswith("data.pkl"))
            found = set()
            for op, arg, _ in pickletools.genops(zf.read(pkl)):
                if op.name == "GLOBAL":
                    found.add(arg.replace(" ", "."))
    return sorted(found - allowed)
