"""``Tensor``: an array plus the autograd state PyTorch keeps beside it.

Storage is a NumPy array (CuPy on a real GPU).  The autograd state is
PyTorch's: ``requires_grad``, ``grad_fn`` (``None`` for leaves), ``is_leaf``,
``grad``, ``retains_grad``, hooks, and the ``_version`` counter that every
tensor sharing the storage (views, ``detach()``) shares.

Operators and methods call the differentiable operations of
:mod:`leafkit._functions`; nothing in this file computes a gradient.
"""
from __future__ import annotations

import numbers
import warnings
import weakref

import numpy as np

from . import _device
from . import _dtype
from ._dtype import from_numpy_dtype
from .autograd.grad_mode import _state, no_grad
from .autograd.graph import AccumulateGrad, RemovableHandle, _HookDict
from ._functions import arithmetic as _A
from ._functions import copy as _C
from ._functions import indexing as _I
from ._functions import reduction as _R
from ._functions import shape as _S
from ._functions import unary as _U
from ._functions import inplace as _IP
from ._functions._base import as_array as _as_array

__all__ = ["Tensor", "Size"]

_ndarray = np.ndarray
_FROM_NP = {d.np: d for d in (_dtype.float16, _dtype.float32, _dtype.float64, _dtype.int32, _dtype.int64, _dtype.bool)}
_CPU = _device.CPU

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")
T_WARNING = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will throw "
    "an error in a future release. Consider `x.mT` to transpose batches of matrices or "
    "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
LEAF_INPLACE_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
NONLEAF_REQUIRES_GRAD_MESSAGE = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
    "subgraph that doesn't require differentiation use var_no_grad = var.detach().")

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "bool": "BoolTensor"}


class Size(tuple):
    """A tensor's shape: a tuple printed as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))


def _is_number(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, complex)


def _num(x):
    return x.item() if isinstance(x, np.generic) else x


class _Storage:
    """What ``tensor.storage()`` / ``untyped_storage()`` return: the buffer under a tensor and its views."""

    def __init__(self, arr):
        root = arr
        while isinstance(getattr(root, "base", None), (_ndarray,)) or (
                root is not None and not isinstance(root, _ndarray) and getattr(root, "base", None) is not None):
            root = root.base
        self._root = root

    def data_ptr(self) -> int:
        return _data_ptr(self._root)

    def nbytes(self) -> int:
        return int(self._root.nbytes)

    def size(self) -> int:
        return int(self._root.size)

    def __len__(self) -> int:
        return int(self._root.size)


def _data_ptr(arr) -> int:
    if isinstance(arr, _ndarray):
        return arr.__array_interface__["data"][0]
    return int(arr.data.ptr)


def _parse_size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos 0")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: [{', '.join(map(str, size))}]")
    return tuple(int(s) for s in size)


class Tensor:
    """A multi-dimensional array with PyTorch's autograd state.

    Create tensors with :func:`leafkit.tensor`, :func:`leafkit.zeros`,
    :func:`leafkit.randn` and friends, as in PyTorch.

    Attributes
    ----------
    shape : Size
        The size of each dimension.
    dtype : leafkit.dtype
        ``float32`` (default for floats), ``float64``, ``int64``, ``bool``...
    device : leafkit.device
        ``cpu`` or ``cuda:0``.
    requires_grad : bool
        Record operations on this tensor for backward.  Settable on leaves
        only ("leaf variables" RuntimeError otherwise) and only for floating
        dtypes ("floating point" RuntimeError).
    grad_fn : Node or None
        The backward node that made this tensor; ``None`` for leaves.
    is_leaf : bool
        ``grad_fn is None``: made by the user, by a ``no_grad`` op, by
        ``detach()``, or anything that does not require grad.
    grad : Tensor or None
        Filled by backward on leaves that require grad (accumulating), and
        on non-leaves that called ``retain_grad()``.
    """

    __slots__ = ("_data", "_device", "_requires_grad", "_grad_fn", "_output_nr", "_grad", "_version_counter",
                 "_acc_ref", "_hooks", "_retains_grad", "_base", "__weakref__", "__dict__")

    __array_priority__ = 1000
    __array_ufunc__ = None  # numpy defers to our reflected operators

    def __new__(cls, *args, **kwargs):
        if cls is Tensor and args and not kwargs and all(isinstance(a, (int, np.integer)) for a in args):
            return cls._make(np.zeros(_parse_size(args), dtype=np.float32), _CPU)
        if cls is Tensor and len(args) == 1 and not kwargs:
            from ._creation import tensor
            return tensor(args[0], dtype=_dtype.float32)
        if cls is Tensor and not args:
            return cls._make(np.zeros((0,), dtype=np.float32), _CPU)
        return object.__new__(cls)

    # -- construction --------------------------------------------------------
    @staticmethod
    def _make(arr, device, grad_fn=None, output_nr=0):
        if arr.__class__ is not _ndarray and isinstance(arr, np.generic):
            arr = np.asarray(arr)
        t = object.__new__(Tensor)
        t._data = arr
        t._device = device or _CPU
        t._requires_grad = grad_fn is not None
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        t._grad = None
        t._version_counter = [0]
        t._acc_ref = None
        t._hooks = None
        t._retains_grad = False
        t._base = None
        return t

    @staticmethod
    def _wrap(arr, device=None):
        """A tensor around ``arr`` that requires no grad (used for hooks and saved values)."""
        return Tensor._make(arr, device or _CPU)

    def _get_accumulator(self) -> AccumulateGrad:
        ref = self._acc_ref
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc_ref = weakref.ref(acc)
        return acc

    def _type_string(self) -> str:
        name = _TYPE_NAMES.get(self.dtype.name, "Tensor")
        return ("torch.cuda." if self._device.type == "cuda" else "torch.") + name

    # -- metadata --------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_S._dim(dim, self._data.ndim)]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def dtype(self):
        return _FROM_NP.get(self._data.dtype) or from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim=None):
        st = tuple(s // self._data.dtype.itemsize for s in self._data.strides)
        return st if dim is None else st[_S._dim(dim, self._data.ndim)]

    def data_ptr(self) -> int:
        """Address of the first element (shared by ``detach()`` and views)."""
        return _data_ptr(self._data)

    def storage(self) -> _Storage:
        return _Storage(self._data)

    untyped_storage = storage

    @property
    def _version(self) -> int:
        """How many in-place changes the storage saw (shared with views and ``detach()``)."""
        return self._version_counter[0]

    def type(self, dtype=None):
        if dtype is None:
            return self._type_string()
        return self.to(dtype)

    # -- autograd state -----------------------------------------------------------
    _history = 0        # bumped when this tensor's history is rebased in place (its views then regenerate)
    _history_seen = 0   # for a view: the base's _history its grad_fn was made for

    def _fresh(self) -> "Tensor":
        """Regenerate a view's grad_fn if its base's history changed in place since (PyTorch does this lazily)."""
        base = self._base
        if base is not None and base._history != self._history_seen:
            from ._functions.views import refresh_view
            refresh_view(self)
        return self

    @property
    def requires_grad(self) -> bool:
        if self._base is not None:
            self._fresh()
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        if not isinstance(value, bool):
            raise RuntimeError("requires_grad must be a bool")
        self._fresh()
        if self._grad_fn is not None:
            if not value:
                raise RuntimeError(NONLEAF_REQUIRES_GRAD_MESSAGE)
            return
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place and return ``self`` (leaves only)."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        if self._base is not None:
            self._fresh()
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        if self._base is not None:
            self._fresh()
        return self._grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                                   f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                                   "the same size")
            if value._data.dtype != self._data.dtype:
                from ._functions.arithmetic import _word
                ctype = {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int",
                         "int32": "int", "bool": "bool"}.get(value.dtype.name, value.dtype.name)
                raise RuntimeError(f"attempting to assign a gradient with dtype '{ctype}' to a tensor with grad_dtype '{_word(self._data)}'. The gradient must match the "
                                   "tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                                   "grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
                                   "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may "
                                   "break downstream systems that assume they match.")
            if value._device is not self._device:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def _backward_hooks(self):
        return self._hooks if self._hooks else None

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf after backward (a no-op on leaves).

        Raises
        ------
        RuntimeError
            "can't retain_grad on Tensor that has requires_grad=False".
        """
        self._fresh()
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        self._grad_fn._retain(self._output_nr, self)
        self._retains_grad = True

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Raises
        ------
        RuntimeError
            "cannot register a hook on a tensor that doesn't require gradient".
        """
        self._fresh()
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            hooks = self._grad_fn._hooks_for_output(self._output_nr)
            self._hooks = hooks
        else:
            if self._hooks is None:
                self._hooks = _HookDict()
            hooks = self._hooks
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Compute the gradient of this tensor with respect to graph leaves (see :func:`leafkit.autograd.backward`)."""
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> "Tensor":
        """A new leaf sharing this tensor's storage and version counter, with ``requires_grad=False``."""
        t = Tensor._make(self._data, self._device)
        t._version_counter = self._version_counter
        return t

    def detach_(self) -> "Tensor":
        """Make this tensor a leaf that does not require grad, in place."""
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> "Tensor":
        """The same storage as a tensor that does not require grad, with its own version counter."""
        return Tensor._make(self._data, self._device)

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data
        self._device = value._device

    # -- conversion ------------------------------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return _device.to_host(self._data).reshape(()).item()

    def tolist(self):
        return _device.to_host(self._data).tolist()

    def numpy(self, *, force: bool = False):
        """The NumPy array under this tensor (shared memory).

        Raises
        ------
        RuntimeError
            When the tensor requires grad ("Use tensor.detach().numpy() instead").
        TypeError
            For a cuda tensor ("Use Tensor.cpu() to copy the tensor to host memory first").
        """
        if force:
            return _device.to_host(self._data).copy()
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr.astype(dtype) if dtype is not None else arr

    def to(self, *args, **kwargs) -> "Tensor":
        """Copy to another dtype and/or device; returns ``self`` when nothing would change.

        Accepts ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
        ``to(other_tensor)`` and the keywords ``dtype``, ``device``, ``copy``,
        ``non_blocking``.  A real copy of a tensor that requires grad is a
        non-leaf whose ``grad_fn`` is ``ToCopyBackward0``, as in PyTorch.
        """
        dtype, dev, copy = parse_to_args(args, kwargs)
        dst = _device.canonical(dev) if dev is not None else self._device
        _device.check_available(dst)
        np_dtype = dtype.np if dtype is not None else None
        if dst is self._device and (np_dtype is None or np_dtype == self._data.dtype) and not copy:
            return self
        return _C.ToCopyBackward0.apply(self, np_dtype, self._device, dst)

    def cuda(self, device=None, non_blocking=False) -> "Tensor":
        """Copy to the GPU (``cuda:0``); see :meth:`to`."""
        return self.to(_device.canonical(device if device is not None else "cuda"))

    def cpu(self) -> "Tensor":
        return self.to(_CPU)

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def bool(self):
        return self.to(_dtype.bool)

    def type_as(self, other):
        return self.to(other.dtype)

    def clone(self) -> "Tensor":
        """A copy with its own storage; differentiable (``CloneBackward0``)."""
        return _C.CloneBackward0.apply(self)

    def contiguous(self) -> "Tensor":
        return self if self._data.flags.c_contiguous else _C.CloneBackward0.apply(self)

    # -- printing ------------------------------------------------------------------------
    def __repr__(self) -> str:
        from ._tensor_str import format_tensor
        self._fresh()
        suffixes = []
        if self._grad_fn is not None:
            suffixes.append(f"grad_fn=<{self._grad_fn._repr_name()}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        return format_tensor(_device.to_host(self._data), dtype_name=self.dtype.name,
                             device_str=str(self._device), suffixes=suffixes,
                             default_dtype=_dtype.get_default_dtype().name)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec) if not spec else repr(self).__format__(spec)

    # -- Python protocol ---------------------------------------------------------------------
    __hash__ = object.__hash__

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def unbind(self, dim=0):
        """The slices along ``dim`` as a tuple of views (one ``UnbindBackward0`` node for all, as in PyTorch)."""
        return _S.UnbindBackward0.apply(self, dim)

    def __bool__(self) -> bool:
        if self._data.size != 1:
            which = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {which} is ambiguous")
        return bool(self.item())

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __reduce_ex__(self, protocol):
        return (_rebuild, (_device.to_host(self._data).copy(), str(self._device), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        new = Tensor._make(self._data.copy(), self._device)
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = Tensor._make(self._grad._data.copy(), self._device)
        memo[id(self)] = new
        return new

    # -- arithmetic -------------------------------------------------------------------------------
    def _other(self, other):
        if isinstance(other, Tensor):
            return other
        if _is_number(other):
            return _num(other)
        return None

    def __add__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.AddBackward0.apply(self, o)

    def __radd__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.AddBackward0.apply(self, o)

    def __sub__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.SubBackward0.apply(self, o)

    def __rsub__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.RsubBackward1.apply(self, o)

    def __mul__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.MulBackward0.apply(self, o)

    def __rmul__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.MulBackward0.apply(self, o)

    def __truediv__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.DivBackward0.apply(self, o)

    def __rtruediv__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.MulBackward0.apply(self.reciprocal(), o)

    def __pow__(self, other):
        o = self._other(other)
        if o is None:
            return NotImplemented
        if isinstance(o, Tensor):
            return _A.PowBackward1.apply(self, o)
        return _A.PowBackward0.apply(self, o)

    def __rpow__(self, other):
        o = self._other(other)
        return NotImplemented if o is None else _A.PowBackward2.apply(o, self)

    def __matmul__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        return matmul(self, other)

    def __rmatmul__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        return matmul(other, self)

    def __neg__(self):
        return _U.NegBackward0.apply(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def _operand(self, other, name):
        o = self._other(other)
        if o is None:
            raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return o

    def add(self, other, *, alpha=1):
        """``self + alpha * other`` (``AddBackward0``)."""
        return _A.AddBackward0.apply(self, self._operand(other, "add"), alpha)

    def sub(self, other, *, alpha=1):
        """``self - alpha * other`` (``SubBackward0``)."""
        return _A.SubBackward0.apply(self, self._operand(other, "sub"), alpha)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def pow(self, exponent):
        return self ** exponent

    def matmul(self, other):
        return matmul(self, other)

    def mm(self, other):
        return _A.MmBackward0.apply(self, other)

    def reciprocal(self):
        return _A.ReciprocalBackward0.apply(self)

    # -- comparisons (never differentiable) -------------------------------------------------------
    def _compare(self, other, fn):
        if isinstance(other, Tensor):
            if other._device is not self._device:
                if not (other._device.type == "cpu" and other._data.ndim == 0):
                    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                                       f"devices, {self._device} and {other._device}!")
                other = Tensor._make(_device.to_device_array(other._data, other._device, self._device),
                                     self._device)
            o = other._data
            if o.shape != self._data.shape:
                from ._functions._base import broadcast_check
                broadcast_check(self._data, o)
        elif _is_number(other):
            o = _num(other)
        else:
            return NotImplemented
        return Tensor._make(_as_array(fn(self._data, o)), self._device)

    def __eq__(self, other):
        return self._compare(other, np.equal)

    def __ne__(self, other):
        return self._compare(other, np.not_equal)

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def equal(self, other) -> bool:
        return self._data.shape == other._data.shape and bool((self._data == other._data).all())

    def allclose(self, other, rtol=1e-05, atol=1e-08) -> bool:
        return bool(np.allclose(_device.to_host(self._data), _device.to_host(other._data), rtol=rtol, atol=atol))

    def __invert__(self):
        if self._data.dtype.kind not in "biu":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return Tensor._make(_as_array(~self._data), self._device)

    def __and__(self, other):
        return self._compare(other, np.logical_and if self._data.dtype.kind == "b" else np.bitwise_and)

    def __or__(self, other):
        return self._compare(other, np.logical_or if self._data.dtype.kind == "b" else np.bitwise_or)

    # -- unary -----------------------------------------------------------------------------------
    def neg(self):
        """Negation, ``-self`` (``NegBackward0``). Same shape, dtype and device."""
        return _U.NegBackward0.apply(self)

    def exp(self):
        """Elementwise e**x (``ExpBackward0``, saves the result). Integer input gives the default float dtype."""
        return _U.ExpBackward0.apply(self)

    def log(self):
        """Elementwise natural log (``LogBackward0``); log of 0 is -inf and of a negative number nan, as in PyTorch."""
        return _U.LogBackward0.apply(self)

    def sqrt(self):
        """Elementwise square root (``SqrtBackward0``); negative input gives nan."""
        return _U.SqrtBackward0.apply(self)

    def abs(self):
        """Elementwise absolute value (``AbsBackward0``); the gradient at 0 is 0, as in PyTorch."""
        return _U.AbsBackward0.apply(self)

    def relu(self):
        """max(x, 0) elementwise (``ReluBackward0``); the gradient at 0 is 0."""
        return _U.ReluBackward0.apply(self)

    def sigmoid(self):
        """1 / (1 + e**-x) elementwise (``SigmoidBackward0``)."""
        return _U.SigmoidBackward0.apply(self)

    def tanh(self):
        """Elementwise tanh (``TanhBackward0``)."""
        return _U.TanhBackward0.apply(self)

    def clamp(self, min=None, max=None):
        """Limit values to [min, max] (``ClampBackward1``); the gradient passes where min <= x <= max.

        Raises ``RuntimeError`` when both bounds are None."""
        return _U.ClampBackward1.apply(self, _num(min), _num(max))

    clip = clamp

    # -- reductions -------------------------------------------------------------------------------
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        """Sum of all elements (``SumBackward0``, a 0-d tensor) or along ``dim`` (an int or tuple;
        ``SumBackward1``), keeping reduced dims of size 1 when ``keepdim``.  Integer and bool input sums to int64.

        Raises ``IndexError`` for a dim out of range, ``RuntimeError`` for a repeated dim."""
        src = self.to(dtype) if dtype is not None else self
        if dim is None:
            return _R.SumBackward0.apply(src)
        return _R.SumBackward1.apply(src, dim, keepdim)

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        """Mean of all elements (``MeanBackward0``) or along ``dim`` (``MeanBackward1``).

        Raises ``RuntimeError`` for integer input ("Input dtype must be either a floating point"), as PyTorch does."""
        src = self.to(dtype) if dtype is not None else self
        if dim is None:
            return _R.MeanBackward0.apply(src)
        return _R.MeanBackward1.apply(src, dim, keepdim)

    def max(self, dim=None, keepdim=False):
        """Largest element (``MaxBackward1``, a 0-d tensor; ties share the gradient), or with ``dim``
        a ``(values, indices)`` named tuple (``MaxBackward0``; indices are int64 and never require grad)."""
        if isinstance(dim, Tensor):
            return maximum(self, dim)
        if dim is None:
            return _R.MaxBackward1.apply(self)
        from .return_types import max as _max_t
        return _max_t(_R.MaxBackward0.apply(self, dim, keepdim))

    def min(self, dim=None, keepdim=False):
        """Smallest element (``MinBackward1``) or ``(values, indices)`` along ``dim`` (``MinBackward0``)."""
        if dim is None:
            return _R.MinBackward1.apply(self)
        from .return_types import min as _min_t
        return _min_t(_R.MinBackward0.apply(self, dim, keepdim))

    def argmax(self, dim=None, keepdim=False):
        """Index of the largest element (flattened, or along ``dim``) as an int64 tensor; not differentiable."""
        return self._arg_extremum(np.argmax, "argmax", dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        """Index of the smallest element (flattened, or along ``dim``) as an int64 tensor; not differentiable."""
        return self._arg_extremum(np.argmin, "argmin", dim, keepdim)

    def _arg_extremum(self, fn, name, dim, keepdim):
        d = self._data
        if dim is None:
            if d.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return Tensor._make(_as_array(fn(d)).astype(np.int64), self._device)
        axis = _S._dim(dim, d.ndim)
        if d.ndim and d.shape[axis] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
        out = fn(d, axis=axis) if d.ndim else fn(d)
        if keepdim and d.ndim:
            out = np.expand_dims(out, axis)
        return Tensor._make(_as_array(out).astype(np.int64), self._device)

    def softmax(self, dim):
        """exp(x) / sum(exp(x)) along ``dim``, computed stably (``SoftmaxBackward0``)."""
        return _R.SoftmaxBackward0.apply(self, dim)

    def log_softmax(self, dim):
        """x - logsumexp(x) along ``dim``, stable for very large logits (``LogSoftmaxBackward0``)."""
        return _R.LogSoftmaxBackward0.apply(self, dim)

    # -- shape -------------------------------------------------------------------------------------
    def view(self, *shape):
        """The same storage seen with another shape (``ViewBackward0``); one size may be -1.

        Raises ``RuntimeError`` when sizes disagree ("is invalid for input of size") or when the memory layout
        would need a copy ("view size is not compatible ... Use .reshape(...) instead.")."""
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            raise NotImplementedError("leafkit does not support view(dtype); use .to(dtype)")
        return _S.ViewBackward0.apply(self, _shape_arg(shape))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *shape):
        """Like :meth:`view` when the layout allows (``ViewBackward0``); otherwise a contiguous copy first
        (``CloneBackward0`` then ``UnsafeViewBackward0``), exactly as PyTorch does."""
        shape = _shape_arg(shape)
        if self._data.flags.c_contiguous:
            return _S.ViewBackward0.apply(self, shape)
        if _S.viewable(self._data, shape):
            return _S.ReshapeAliasBackward0.apply(self, shape)
        return _S.UnsafeViewBackward0.apply(_C.CloneBackward0.apply(self), shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        nd = self._data.ndim
        if nd == 0:
            return self.reshape(1)
        s, e = _S._dim(start_dim, nd), _S._dim(end_dim, nd)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return self
        shp = self._data.shape
        n = 1
        for k in shp[s:e + 1]:
            n *= k
        return self.reshape(shp[:s] + (n,) + shp[e + 1:])

    def transpose(self, dim0, dim1):
        """Swap two dimensions: a view (``TransposeBackward0``)."""
        return _S.TransposeBackward0.apply(self, dim0, dim1)

    def t(self):
        """Transpose of a tensor with at most 2 dims: a view (``TBackward0``)."""
        return _S.TBackward0.apply(self)

    @property
    def T(self):
        """All dimensions reversed (``PermuteBackward0``); like PyTorch, warns unless the tensor is 2-D."""
        if self._data.ndim != 2:
            warnings.warn(T_WARNING, UserWarning, stacklevel=2)
        return _S.PermuteBackward0.apply(self, tuple(range(self._data.ndim - 1, -1, -1)))

    def permute(self, *dims):
        """Reorder all dimensions: a view (``PermuteBackward0``)."""
        return _S.PermuteBackward0.apply(self, _shape_arg(dims))

    def expand(self, *sizes):
        """Broadcast size-1 dims to ``sizes`` without copying (``ExpandBackward0``); -1 keeps a size.
        The gradient is summed back to the original shape."""
        return _S.ExpandBackward0.apply(self, _shape_arg(sizes))

    def expand_as(self, other):
        return self.expand(other.shape)

    def squeeze(self, dim=None):
        """Drop dimensions of size 1 (all: ``SqueezeBackward0``; one dim: ``SqueezeBackward1``). A view."""
        if dim is None:
            return _S.SqueezeBackward0.apply(self)
        return _S.SqueezeBackward1.apply(self, dim)

    def unsqueeze(self, dim):
        """Insert a dimension of size 1 at ``dim``: a view (``UnsqueezeBackward0``)."""
        return _S.UnsqueezeBackward0.apply(self, dim)

    # -- indexing ------------------------------------------------------------------------------------
    def __getitem__(self, key):
        return _index(self, key)

    def __setitem__(self, key, value):
        """``t[key] = value`` in place.  Recorded like PyTorch: a basic key writes through a view
        (the base's ``grad_fn`` becomes ``CopySlices``), index tensors use ``IndexPutBackward0``.

        Raises ``RuntimeError`` ("a view of a leaf Variable that requires grad is being used in an in-place
        operation.") on a leaf that requires grad while grad mode is on."""
        if not isinstance(value, Tensor):
            if not _is_number(value):
                value = Tensor._make(np.asarray(value, dtype=self._data.dtype), self._device)
        elif value._device is not self._device:
            value = value.to(self._device)  # like copy_, assignment copies across devices (differentiably)
        key = _normalize_key(key)
        if _is_basic_key(key):
            view = _index(self, key)
            if view is self:
                view = _S.AliasBackward0.apply(self)
            if isinstance(value, Tensor):
                _IP.inplace(view, _IP.CopyBackwards, value)
            else:
                _IP.inplace(view, _IP.FillBackward2, _num(value))
            return
        self._fresh()
        if _state.enabled:
            _IP.check_inplace_allowed(self)
        if not isinstance(value, Tensor):
            value = Tensor._make(np.asarray(_num(value), dtype=self._data.dtype), self._device)
        _IP.inplace(self, _IP.IndexPutBackward0, value, _convert_key(key))

    # -- in-place ----------------------------------------------------------------------------------
    def add_(self, other, *, alpha=1):
        """In place ``self += alpha * other``; bumps ``_version``.

        Raises ``RuntimeError`` on a leaf that requires grad while grad mode is on (allowed under
        ``no_grad``), and when the result dtype cannot be stored in ``self`` ("can't be cast").
        On a non-leaf the history is rebased: ``grad_fn`` becomes ``AddBackward0``."""
        return _IP.inplace(self, _A.AddBackward0, self._other(other), alpha)

    def sub_(self, other, *, alpha=1):
        """In place ``self -= alpha * other`` (see :meth:`add_`; node ``SubBackward0``)."""
        return _IP.inplace(self, _A.SubBackward0, self._other(other), alpha)

    def mul_(self, other):
        """In place ``self *= other`` (see :meth:`add_`; node ``MulBackward0``)."""
        return _IP.inplace(self, _A.MulBackward0, self._other(other))

    def div_(self, other):
        """In place ``self /= other`` (see :meth:`add_`; node ``DivBackward0``)."""
        return _IP.inplace(self, _A.DivBackward0, self._other(other))

    def clamp_(self, min=None, max=None):
        return _IP.inplace(self, _U.ClampBackward1, _num(min), _num(max))

    def relu_(self):
        """In place :meth:`relu` (node ``ReluBackward0``; see :meth:`add_` for the in-place rules)."""
        return _IP.inplace(self, _U.ReluBackward0)

    def exp_(self):
        """In place :meth:`exp` (node ``ExpBackward0``)."""
        return _IP.inplace(self, _U.ExpBackward0)

    def sigmoid_(self):
        """In place :meth:`sigmoid` (node ``SigmoidBackward0``)."""
        return _IP.inplace(self, _U.SigmoidBackward0)

    def tanh_(self):
        """In place :meth:`tanh` (node ``TanhBackward0``)."""
        return _IP.inplace(self, _U.TanhBackward0)

    def neg_(self):
        """In place negation (node ``NegBackward0``)."""
        return _IP.inplace(self, _U.NegBackward0)

    def abs_(self):
        """In place :meth:`abs` (node ``AbsBackward0``)."""
        return _IP.inplace(self, _U.AbsBackward0)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """Zeros of ``size`` with this tensor's dtype and device unless given."""
        from ._creation import zeros
        return zeros(*size, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """Ones of ``size`` with this tensor's dtype and device unless given."""
        from ._creation import ones
        return ones(*size, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        from ._creation import full
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self._device,
                    requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        """A new leaf from ``data`` with this tensor's dtype and device unless given."""
        from ._creation import tensor
        return tensor(data, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)

    def zero_(self):
        """Fill with zeros in place (see :meth:`add_`; node ``ZeroBackward0``)."""
        return _IP.inplace(self, _IP.ZeroBackward0)

    def fill_(self, value):
        """Fill with ``value`` in place (see :meth:`add_`; node ``FillBackward2``)."""
        if isinstance(value, Tensor):
            value = value.item()
        return _IP.inplace(self, _IP.FillBackward2, value)

    def copy_(self, src, non_blocking=False):
        """Copy ``src`` (broadcast, cast, moved to this device) into this storage in place
        (node ``CopyBackwards``; the gradient flows to ``src``)."""
        if not isinstance(src, Tensor):
            raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
        if src._device is not self._device:
            src = src.to(self._device)
        return _IP.inplace(self, _IP.CopyBackwards, src)

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill in place with uniform samples from [a, b) (used by ``nn.Linear``'s initialisation)."""
        from ._random import uniform_array
        return _IP.inplace(self, _IP.FillBackward2,
                           self._on_device(uniform_array(self.shape, a, b, self._data.dtype, generator)))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill in place with normal samples of the given mean and std."""
        from ._random import normal_array
        return _IP.inplace(self, _IP.FillBackward2,
                           self._on_device(normal_array(self.shape, mean, std, self._data.dtype, generator)))

    def _on_device(self, host_array):
        """Random values are drawn on the host; a cuda tensor gets them copied to its device first."""
        if self._device.type == "cpu":
            return host_array
        return _device.to_device_array(host_array, _CPU, self._device)


def parse_to_args(args, kwargs):
    """Read ``to()``'s arguments, PyTorch style: ``(dtype)``, ``(device)``, ``(device, dtype)``, ``(tensor)``,
    keywords ``dtype``/``device``/``copy``/``non_blocking``.  Returns ``(dtype, device, copy)``.

    Raises ``TypeError`` for an argument of any other kind or an unknown keyword.
    """
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword(s) "
                        f"{sorted(kwargs)}")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a._device
        elif isinstance(a, (str, _device.device, int)) and not isinstance(a, bool):
            dev = a
        elif isinstance(a, bool):
            pass  # non_blocking given positionally
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    return dtype, dev, copy


def _rebuild(arr, dev, requires_grad):
    t = Tensor._make(arr, _device.canonical(dev))
    t._requires_grad = requires_grad
    return t


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        return tuple(shape[0])
    return tuple(shape)


def _normalize_key(key):
    """PyTorch's reading of an index: a list holding sequences, slices or tensors is a tuple of indices,
    and a 0-d integer tensor is a plain int (so ``h[torch.tensor(1)]`` is a view, like ``h[1]``)."""
    if isinstance(key, list) and any(isinstance(k, (list, tuple, slice, Tensor)) or k is None or k is Ellipsis
                                     for k in key):
        key = tuple(key)

    def one(k):
        if isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu":
            return int(k.item())
        return k
    return tuple(one(k) for k in key) if isinstance(key, tuple) else one(key)


def _is_basic_key(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all((isinstance(k, (int, np.integer)) and not isinstance(k, bool)) or isinstance(k, slice) or k is None
               or k is Ellipsis for k in items)


def _convert_key(key):
    if isinstance(key, tuple):
        return tuple(_convert_key(k) for k in key)
    if isinstance(key, Tensor):
        return _device.to_host(key._data) if key._device.type == "cpu" else key._data
    if isinstance(key, list):
        return np.asarray(key)
    return key


def _index(t, key):
    """Basic indexing becomes Select/Slice/Unsqueeze nodes (views); anything else one IndexBackward0 copy.

    Follows PyTorch: a lone slice always makes a ``SliceBackward0``; inside a
    tuple, slices that cover their whole dimension make no node; a list that
    holds sequences, slices or tensors is read as a tuple of indices.
    """
    key = _normalize_key(key)
    items = key if isinstance(key, tuple) else (key,)
    if not _is_basic_key(key):
        for k in items:
            if isinstance(k, Tensor) and k._data.dtype.kind not in "iub":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return _I.IndexBackward0.apply(t, _convert_key(key))
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
    nd = t._data.ndim
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if nd == 0 and any(isinstance(k, (int, np.integer)) for k in items):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    if consumed > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    lone_slice = isinstance(key, slice)
    out, dim, src_dim = t, 0, 0
    shape = t._data.shape
    for k in items:
        if k is Ellipsis:
            dim += nd - consumed
            src_dim += nd - consumed
        elif k is None:
            out = _S.UnsqueezeBackward0.apply(out, dim)
            dim += 1
        elif isinstance(k, slice):
            whole = k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= shape[src_dim])
            if lone_slice or not whole:
                out = _I.SliceBackward0.apply(out, dim, k)
            dim += 1
            src_dim += 1
        else:
            size = shape[src_dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {src_dim} with size {size}")
            out = _I.SelectBackward0.apply(out, dim, int(k))
            src_dim += 1
    if out is t:
        out = _S.AliasBackward0.apply(t)
    return out


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product with PyTorch's node per case: Dot (1-D·1-D), Mv, Mm, Bmm, Squeeze∘Mm (1-D @ 2-D).

    Raises
    ------
    RuntimeError
        On mismatched inner sizes (PyTorch's message names both shapes), and
        for batched shapes leafkit does not cover (it never guesses).
    """
    na, nb = a.dim(), b.dim()
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        return _A.DotBackward0.apply(a, b)
    if na == 2 and nb == 1:
        return _A.MvBackward0.apply(a, b)
    if na == 2 and nb == 2:
        return _A.MmBackward0.apply(a, b)
    if na == 1 and nb == 2:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{a.shape[0]} and "
                               f"{b.shape[0]}x{b.shape[1]})")
        return _S.SqueezeBackward4.apply(_A.MmBackward0.apply(a.unsqueeze(0), b), 0)
    if na == 3 and nb == 3:
        return _A.BmmBackward0.apply(a, b)
    raise RuntimeError(f"leafkit's matmul covers 1-D, 2-D and 3-D@3-D operands; got {na}D @ {nb}D "
                       f"(shapes {list(a.shape)} and {list(b.shape)})")


def maximum(a: Tensor, b: Tensor) -> Tensor:
    raise NotImplementedError("leafkit does not implement torch.maximum; use clamp or relu")
