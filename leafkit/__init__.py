"""leafkit: a small autograd engine on NumPy with PyTorch's API and PyTorch's leaf semantics.

Write ``import leafkit as torch`` and PyTorch snippets about autograd run and
print what PyTorch prints: ``is_leaf``, ``requires_grad``, ``grad_fn``
names, gradients, errors and warnings.
"""

from __future__ import annotations

from . import _malloc
from math import e, inf, nan, pi  # noqa: F401 - PyTorch's constants (Python floats, as in torch)

from ._device import device, get_default_device, set_default_device
from ._dtype import (
    bool,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,  # noqa: A004
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from ._tensor import Size, Tensor
from ._functions import *  # noqa: F401,F403  (torch.exp, torch.sum, torch.where ...: made from the op registry)
from ._functions import __all__ as _functions_all
from ._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    is_tensor,
    linspace,
    numel,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from ._random import Generator, initial_seed, manual_seed, seed
from ._tensor_types import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from . import autograd
from . import cuda
from . import accelerator
from . import serialization
from .serialization import load, save
from ._tensor_str import set_printoptions
from ._lang import get_language, set_language  # noqa: F401 - the teaching UI's language (explorers, explain, legends)

# PyTorch's constants (Python floats, as in torch; newaxis is None, as in NumPy)
newaxis = None

_malloc.tune()  # reuse large freed buffers (see leafkit/_malloc.py; LEAFKIT_MALLOC_TUNING=0 turns it off)

__version__ = "0.1.0"

__all__ = [
    "Tensor",
    "Size",
    "device",
    "dtype",
    "float16",
    "float32",
    "float64",
    "int32",
    "int64",
    "bool",
    "half",
    "float",
    "double",
    "int",
    "long",
    "uint8",
    "int8",
    "int16",
    "short",
    "get_default_dtype",
    "set_default_dtype",
    "get_default_device",
    "set_default_device",
    "set_default_tensor_type",
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
    "accelerator",
    "pi",
    "e",
    "inf",
    "nan",
    "newaxis",
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "arange",
    "linspace",
    "eye",
    "randn",
    "rand",
    "randint",
    "randperm",
    "manual_seed",
    "seed",
    "initial_seed",
    "Generator",
    "is_tensor",
    "numel",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "autograd",
    "cuda",
    "set_printoptions",
    "save",
    "load",
    "serialization",
    *_functions_all,
]


def __getattr__(name):
    # subpackages that import heavier dependencies load on first use
    import importlib

    if name in ("nn", "optim", "viz", "widgets", "examples", "utils", "profiler"):
        return importlib.import_module(f".{name}", __name__)
    if name in ("make_dot", "draw", "explain"):
        return getattr(importlib.import_module(".viz", __name__), name)
    raise AttributeError(f"module 'leafkit' has no attribute '{name}'")
