"""``Tensor``: an array plus the autograd state PyTorch keeps beside it.

Storage is a NumPy array (CuPy on a real GPU).  The autograd state is
PyTorch's: ``requires_grad``, ``grad_fn`` (``None`` for leaves), ``is_leaf``,
``grad``, ``retains_grad``, hooks, and the ``_version`` counter that every
tensor sharing the storage (views, ``detach()``) shares.

This module holds the state and the protocol (printing, conversion, the
``requires_grad`` and ``.grad`` rules).  The operations (``+``, ``exp``,
``sum``, indexing, ``to`` ...) are installed on the class by the operation
registry (:mod:`leafkit._functions`), one entry per op; ``backward`` by the
:mod:`leafkit.autograd` front door.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import _device, _dtype
from . import autograd as _autograd
from ._tensor_str import format_tensor
from .autograd.grad_mode import _state
from .autograd.graph import AccumulateGrad, _HookDict, add_hook

__all__ = ["Tensor", "Size"]

_ndarray = np.ndarray
_CPU = _device.CPU

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)
LEAF_INPLACE_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
NONLEAF_REQUIRES_GRAD_MESSAGE = "you can only change requires_grad flags of leaf variables."
NONLEAF_REQUIRES_GRAD_FALSE_MESSAGE = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
    "subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)
SCALAR_WARNING = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first."
)
TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
    "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
    "directly, use tensor.untyped_storage() instead of tensor.storage()"
)
INFERENCE_SAVED_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)
INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)
INFERENCE_REQUIRES_GRAD_MESSAGE = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
NO_GRAD_VIEW_BASE_CHANGED = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace with "
    "grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block (if you don't want "
    "the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
)

_UNCONNECTED = ("no_grad", "inference")
# the active function transforms (leafkit.func: vmap and grad levels, innermost last); leafkit.func keeps it
TRANSFORMS: list = []
REQUIRES_GRAD_IN_TRANSFORM_MESSAGE = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using torch.autograd.functional.* APIs) inside of "
    "a function being transformed by a functorch transform. This is unsupported, please attempt to use the functorch "
    "transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function being "
    "transformed instead."
)
BACKWARD_IN_TRANSFORM_MESSAGE = (
    "backward() called inside a functorch transform. This is not supported, please use functorch.grad or "
    "functorch.vjp instead or call backward() outside of functorch transforms."
)
repr_hook = None  # set by leafkit.func: how a tensor prints inside grad levels (GradTrackingTensor(lvl=1, ...))
# array types that are not arrays but stand for tensors of another kind: {type: wrap(arr, device, grad_fn)}
# (leafkit._functions._batched registers its batched arrays, so that an op computing on them makes a batched tensor)
ARRAY_WRAPPERS: dict = {}
batched_grad = None  # set while vmap runs (leafkit._functions._batched): what autograd.grad does with batched tensors
_warned_scalar = [False]  # PyTorch warns once per process (TORCH_WARN_ONCE)
_warned_storage = [False]  # likewise for TypedStorage (torch.storage warns once)


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


class _Storage:
    """What ``tensor.untyped_storage()`` returns: the buffer under a tensor and its views."""

    def __init__(self, arr):
        root = arr
        while getattr(root, "base", None) is not None and hasattr(root.base, "dtype"):
            root = root.base
        self._root = root

    def data_ptr(self) -> int:
        return _device.data_ptr(self._root)

    def nbytes(self) -> int:
        return int(self._root.nbytes)

    def size(self) -> int:
        return int(self._root.nbytes)

    def __len__(self) -> int:
        return int(self._root.nbytes)


class _TypedStorage(_Storage):
    """What the deprecated ``tensor.storage()`` returns (counts elements, not bytes)."""

    def size(self) -> int:
        return int(self._root.size)

    def __len__(self) -> int:
        return int(self._root.size)


def _parse_size(size, negative=None):
    """A size given as ints or one sequence, checked as PyTorch's factories check it (``negative``: the factory's
    own message for a negative size, ``zeros``' "Dimension size must be non-negative.")."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"empty(): argument 'size' must be tuple of ints, but found element of type {type(s).__name__} at pos 0"
            )
        if s < 0:
            if negative:
                raise RuntimeError(negative)
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
        only ("leaf variables" RuntimeError otherwise, for True as for
        False) and only for floating dtypes ("floating point" RuntimeError).
    grad_fn : Node or None
        The backward node that made this tensor; ``None`` for leaves.
    is_leaf : bool
        ``grad_fn is None``: made by the user, by a ``no_grad`` op, by
        ``detach()``, or anything that does not require grad.
    grad : Tensor or None
        Filled by backward on leaves that require grad (accumulating), and
        on non-leaves that called ``retain_grad()``.
    """

    __slots__ = (
        "_data",
        "_device",
        "_requires_grad",
        "_grad_fn",
        "_output_nr",
        "_version_counter",
        "__weakref__",
        "__dict__",
    )

    __array_priority__ = 1000
    __array_ufunc__ = None  # numpy defers to our reflected operators

    # rarely set state: class defaults, instance values only when set
    _grad = None
    _acc_ref = None
    _hooks = None
    _post_acc_hooks = None  # register_post_accumulate_grad_hook's hooks (leaves only)
    _retains_grad = False
    _base = None  # for a view: the tensor whose storage it shares
    _inference = False  # made in inference mode
    _created_in_no_grad = False
    # for a view, PyTorch's CreationMeta: None (DEFAULT), "no_grad" (made under no_grad of a tensor that requires
    # grad), "inference" (made in inference mode of an ordinary tensor), "multi" (one of several views made by one
    # op: unbind, split), "custom" (an output of a custom Function); a view of such a view inherits it
    _creation_meta = None
    _attr_version = 0  # for a view: the version its grad_fn was made at (PyTorch's attr_version)
    # for a view without history: it requires grad only because its base does (PyTorch's view requires_grad() is
    # its own flag, its grad_fn, or its base's requires_grad()); such a view has no gradient edge of its own
    _rg_from_base = False

    def __new__(cls, *args, **kwargs):
        if cls is Tensor:  # the legacy constructor: torch.Tensor(2, 3), torch.Tensor([1, 2]), torch.Tensor()
            from ._tensor_types import legacy_new

            return legacy_new(None, None, args, kwargs)
        return object.__new__(cls)

    # -- construction --------------------------------------------------------
    @staticmethod
    def _make(arr, device, grad_fn=None, output_nr=0, counter=None):
        """A tensor around ``arr`` on ``device`` (None: cpu); ``grad_fn`` and a shared version ``counter`` if given."""
        if arr.__class__ is not _ndarray:
            if isinstance(arr, np.generic):
                arr = np.asarray(arr)
            elif arr.__class__ in ARRAY_WRAPPERS:  # a batched array (vmap): a batched tensor
                return ARRAY_WRAPPERS[arr.__class__](arr, device, grad_fn)
        t = object.__new__(Tensor)
        t._data = arr
        t._device = device or _CPU
        t._version_counter = [0] if counter is None else counter
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        t._requires_grad = grad_fn is not None
        return t

    def _init_from(self, data: Tensor, requires_grad: bool) -> None:
        """Fill a subclass instance (``Parameter``) as a leaf on ``data``'s storage and version counter (an
        inference tensor stays one, and may require grad only inside inference mode, as in PyTorch)."""
        if data._inference:
            if requires_grad and not _state.inference:
                raise RuntimeError(INFERENCE_REQUIRES_GRAD_MESSAGE)
            self._inference = True
        self._data = data._data
        self._device = data._device
        self._version_counter = data._version_counter
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = bool(requires_grad)

    def _get_accumulator(self) -> AccumulateGrad:
        """This leaf's ``AccumulateGrad`` node: made on first use, then kept by weak reference, as in PyTorch."""
        if self._base is not None and (self._rg_from_base or self._creation_meta in _UNCONNECTED):
            # a view made under no_grad (or in inference mode), or one that requires grad only through its base,
            # has no gradient edge (PyTorch's grad_accumulator() reads the view's own requires_grad flag)
            return None
        acc = self._acc_ref() if self._acc_ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc_ref = weakref.ref(acc)
        return acc

    def _edge(self):
        """The (node, output_nr) pair that receives this tensor's gradient, or (None, 0)."""
        if not self._requires_grad:
            return (None, 0)
        fn = self._grad_fn
        return (fn, self._output_nr) if fn is not None else (self._get_accumulator(), 0)

    def _set_history(self, node, output_nr: int) -> None:
        self._grad_fn = node
        self._output_nr = output_nr
        self._requires_grad = True

    def _type_string(self) -> str:
        return _dtype.type_string(self._data.dtype, self._device)

    # -- views -------------------------------------------------------------------
    def _share_view_of(self, src: Tensor, recorded: bool) -> None:
        """This tensor is a view of ``src``: it shares the storage's version counter, its base, and how it was made.

        A view of an inference tensor is an inference tensor and is not tracked as a view (``_base`` stays
        None), as in PyTorch.
        """
        self._version_counter = src._version_counter
        if src._inference:
            self._inference = True
            return
        self._base = src._base if src._base is not None else src
        self._attr_version = self._version_counter[0]
        meta = None
        if _state.inference:
            meta = "inference"  # a view of an ordinary tensor made in inference mode
        elif not _state.grad:
            # PyTorch (CreationMeta::NO_GRAD_MODE): a view made under no_grad of a tensor that requires grad (now
            # or later) reports requires_grad=True and is a leaf, with no gradient edge; in-place changes of it
            # or its base with grad mode on are then refused
            meta = "no_grad"
        if meta is not None and src._requires_grad:
            self._requires_grad = True
            self._rg_from_base = True
        inherited = src._creation_meta if src._base is not None else None
        self._creation_meta = inherited if inherited is not None else meta

    def _alias(self) -> Tensor:
        """A new tensor on the same storage, not recorded (what a custom Function's output is when its forward
        returned an input as it is)."""
        prev = _state.enabled
        _state.enabled = False
        try:
            return self.view_as(self)
        finally:
            _state.enabled = prev

    def _fresh(self) -> Tensor:
        """Bring a view up to date: regenerate its grad_fn when its storage changed in place since it was made
        (PyTorch does this lazily, when the grad_fn is next read: ``AsStridedBackward0`` on the base's current
        history), and, for a view without history, follow its base's ``requires_grad`` (see
        :meth:`_follow_base`)."""
        if self._base is not None:
            if self._version_counter[0] != self._attr_version:
                self._refresh_view()  # installed by leafkit._functions.views
            elif self._grad_fn is None:
                self._follow_base()
        return self

    def _follow_base(self) -> None:
        """A view without history requires grad when its base does, also when the base's ``requires_grad`` was
        switched on after the view was taken (``v = x[:2]; x.requires_grad_()``), as in PyTorch: the view then
        reports ``requires_grad=True``, stays a leaf without a gradient edge of its own, and in-place changes of it
        raise "a view of a leaf Variable that requires grad ..." (or the no_grad/inference-mode view error)."""
        if self._base._requires_grad:
            if not self._requires_grad and self._data.dtype.kind in "fc":
                self._requires_grad = True
                self._rg_from_base = True
        elif self._rg_from_base:
            self._requires_grad = False
            self._rg_from_base = False

    @property
    def _invalid(self) -> bool:
        fn = self._grad_fn
        return fn is not None and fn.name() == "Invalid"

    def _raise_invalid(self):
        raise RuntimeError(self._grad_fn.message)

    def _valid_fn(self):
        """The grad_fn, brought up to date; PyTorch's error for a view whose base changed in place when that
        view may not be rebased (made under no_grad or in inference mode, or one of several views)."""
        if self._base is not None:
            self._fresh()
            if self._invalid:
                self._raise_invalid()
        return self._grad_fn

    # -- metadata --------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape (a :class:`Size`), or the size of dimension ``dim``.

        Raises IndexError for a ``dim`` out of range ("Dimension specified as 0 but tensor has no dimensions" on a
        0-d tensor, as in PyTorch)."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_dim_of_shape(dim, self._data.ndim)]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def dtype(self):
        return _dtype.from_numpy_dtype(self._data.dtype)

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
        return st if dim is None else st[_dim_of_shape(dim, self._data.ndim)]

    def data_ptr(self) -> int:
        """Address of the first element (shared by ``detach()`` and views)."""
        return _device.data_ptr(self._data)

    def untyped_storage(self) -> _Storage:
        """The storage under this tensor and its views (``data_ptr()`` compares storages)."""
        return _Storage(self._data)

    def storage(self) -> _TypedStorage:
        """The deprecated typed storage; warns (once per process) as PyTorch does, pointing to
        :meth:`untyped_storage`."""
        if not _warned_storage[0]:
            _warned_storage[0] = True
            warnings.warn(TYPED_STORAGE_WARNING, UserWarning, stacklevel=2)
        return _TypedStorage(self._data)

    @property
    def _version(self) -> int:
        """How many in-place changes the storage saw (shared with views and ``detach()``).

        Raises
        ------
        RuntimeError
            For an inference tensor ("Inference tensors do not track version counter.").
        """
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    @property
    def volatile(self) -> bool:
        """Removed in PyTorch 0.4 (use ``no_grad``): always False, with PyTorch's warning "volatile was removed
        (Variable.volatile is always False)"."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    def is_inference(self) -> bool:
        """True for a tensor made in ``inference_mode`` (PyTorch: ``Tensor.is_inference()``)."""
        return self._inference

    def _check_can_be_saved(self) -> None:
        if self._inference and not _state.inference:
            raise RuntimeError(INFERENCE_SAVED_MESSAGE)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """With no argument, the legacy type name (``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``); with a
        dtype, a legacy type (``torch.DoubleTensor``) or its name (``'torch.DoubleTensor'``), this tensor converted
        to it (``self`` when it already is).

        Raises
        ------
        ValueError
            "invalid type: 'torch.FooTensor'" for an unknown name.
        """
        if dtype is None:
            return self._type_string()
        from ._tensor_types import tensor_type

        spec = tensor_type(dtype)
        if spec is None:
            return self if self._data.dtype == dtype.np else self.to(dtype)
        d, dev = spec
        if self._data.dtype == d.np and self._device.type == dev:
            return self
        return self.to(device=dev if dev != self._device.type else None, dtype=d, non_blocking=non_blocking)

    def new(self, *args, **kwargs):
        """PyTorch's legacy constructor on this tensor's dtype and device: ``t.new(2, 3)`` (sizes), ``t.new([1, 2])``
        (data), ``t.new()`` (empty); prefer ``new_zeros``/``new_tensor``."""
        from ._tensor_types import legacy_new

        return legacy_new(self.dtype, self._device.type, args, kwargs)

    # -- autograd state -----------------------------------------------------------
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
        if self._grad_fn is not None:  # PyTorch refuses both True and False on a non-leaf
            raise RuntimeError(NONLEAF_REQUIRES_GRAD_FALSE_MESSAGE if not value else NONLEAF_REQUIRES_GRAD_MESSAGE)
        self._set_requires_grad(value)

    def _set_requires_grad(self, value: bool) -> None:
        if value and not _dtype.is_differentiable(self._data.dtype):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if value and self._inference and not _state.inference:
            raise RuntimeError(INFERENCE_REQUIRES_GRAD_MESSAGE)
        self._requires_grad = value
        if self._rg_from_base:
            self._rg_from_base = False  # the view's own flag now (a view of a base that requires grad stays True)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return ``self``.

        On a non-leaf, ``requires_grad_(True)`` changes nothing and returns
        ``self`` (it already requires grad); ``requires_grad_(False)`` raises
        PyTorch's "you can only change requires_grad flags of leaf
        variables" RuntimeError.  Inside a function transform (``leafkit.func``) it raises PyTorch's
        "You are attempting to call Tensor.requires_grad_() ... inside of a function being transformed".
        """
        if TRANSFORMS:
            raise RuntimeError(REQUIRES_GRAD_IN_TRANSFORM_MESSAGE)
        self._fresh()
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(NONLEAF_REQUIRES_GRAD_FALSE_MESSAGE)
            return self
        self._set_requires_grad(bool(requires_grad))
        return self

    @property
    def grad_fn(self):
        return self._valid_fn() if self._base is not None else self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return (self._valid_fn() if self._base is not None else self._grad_fn) is None

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
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                    "the same size"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dtype.ctype(value._data.dtype)}' to a tensor "
                    f"with grad_dtype '{_dtype.word(self._data.dtype)}'. The gradient must match the tensor's "
                    "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute "
                    "with a specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the "
                    "dtypes of a tensor and its gradient may break downstream systems that assume they match."
                )
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

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` each time backward has added into this leaf's ``.grad`` (PyTorch 2.1+), for
        example to step an optimizer per parameter.  Not called by ``autograd.grad``.

        Returns
        -------
        RemovableHandle

        Raises
        ------
        RuntimeError
            "cannot register a hook on a tensor that doesn't require gradient"; "post accumulate grad hooks
            cannot be registered on non-leaf tensors"; at backward time, "Tensor post accumulate grad hooks
            should return None." for a hook that returns a tensor (a TypeError for any other value).
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = _HookDict()
        return add_hook(self._post_acc_hooks, hook)

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
        return add_hook(hooks, hook)

    # what the engine calls ------------------------------------------------------------
    def _accumulate_grad(self, g, create_graph: bool) -> None:
        """Add the gradient ``g`` into ``.grad`` (PyTorch's ``AccumulateGrad``): copied first, then added in place."""
        if isinstance(g, Tensor):
            return self._accumulate_recorded(g, create_graph)
        if not isinstance(g, _ndarray) and self._device.type == "cpu":
            g = _device.to_host(g)  # a CPU scalar tensor used in a cuda op (or a NumPy scalar)
        if self._grad is None:
            self._grad = Tensor._make(g.copy(), self._device)
        elif self._grad._data.shape == g.shape and self._grad._data.dtype == g.dtype:
            self._grad._data += g
            self._grad._version_counter[0] += 1
        else:
            self._grad = Tensor._make(self._grad._data + g, self._device)

    def _accumulate_recorded(self, g: Tensor, create_graph: bool) -> None:
        """``.grad`` in a recorded pass: a copy of ``g`` (``grad_fn=<CopyBackwards>``), then sums (``AddBackward0``)."""
        if self._grad is None:
            out = Tensor._make(_device.array_module(g._data).empty_like(g._data), self._device)
            self._grad = out.copy_(g) if create_graph else Tensor._make(g._data.copy(), self._device)
        else:
            self._grad = self._grad + g

    def _retain_grad_value(self, g, create_graph: bool) -> None:
        """The ``retain_grad()`` hook: ``.grad`` becomes a copy of ``g``, or adds it."""
        if isinstance(g, Tensor):
            self._grad = g.clone() if self._grad is None else self._grad + g
            return
        if self._grad is None:
            self._grad = Tensor._make(
                np.array(g, copy=True) if isinstance(g, (np.generic, _ndarray)) else g.copy(), self._device
            )
        else:
            self._grad = Tensor._make(self._grad._data + g, self._device)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Compute the gradient of this tensor with respect to graph leaves (see :func:`leafkit.autograd.backward`).

        For a non-scalar tensor, ``gradient`` (same shape) is required: the
        result is the vector-Jacobian product ``gradient^T @ J``.
        """
        if TRANSFORMS:
            raise RuntimeError(BACKWARD_IN_TRANSFORM_MESSAGE)
        gradients = None if gradient is None else (gradient,)
        _autograd.engine.backward((self,), gradients, retain_graph, create_graph, inputs)

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's storage and version counter, with ``requires_grad=False``."""
        t = Tensor._make(self._data, self._device)
        t._version_counter = self._version_counter
        if self._inference:
            t._inference = True
        return t

    def detach_(self) -> Tensor:
        """Make this tensor a leaf that does not require grad, in place."""
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """The same storage as a tensor that does not require grad, with its own version counter."""
        t = Tensor._make(self._data, self._device)
        if self._inference:
            t._inference = True
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        """Swap the storage under this tensor (any shape, dtype or device), keeping its autograd state.

        Raises
        ------
        TypeError
            When ``value`` is not a tensor.
        RuntimeError
            When this tensor requires grad and ``value`` is not floating point or complex ("data set to a
            tensor that requires gradients must be floating point or complex dtype").
        """
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and not _dtype.is_differentiable(value._data.dtype):
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        self._data = value._data
        self._device = value._device

    # -- conversion ------------------------------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number (no warning, unlike ``float(t)``)."""
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
            When the tensor requires grad and grad mode is on ("Use
            tensor.detach().numpy() instead"); under ``no_grad`` (or
            ``inference_mode``) it is allowed, as in PyTorch 2.13.
        TypeError
            For a cuda tensor ("Use Tensor.cpu() to copy the tensor to host memory first").
        """
        if force:
            return _device.to_host(self._data).copy()
        if self._requires_grad and _state.enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                "tensor to host memory first."
            )
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr.astype(dtype) if dtype is not None else arr

    # -- printing ------------------------------------------------------------------------
    def __repr__(self) -> str:
        if TRANSFORMS and repr_hook is not None:  # inside a function transform: PyTorch's wrappers show
            shown = repr_hook(self)
            if shown is not None:
                return shown
        return self._plain_repr()

    def _plain_repr(self) -> str:
        """``tensor([...], grad_fn=<...>)``, as PyTorch prints a tensor."""
        self._fresh()
        suffixes = []
        if self._grad_fn is not None:
            suffixes.append(f"grad_fn=<{type(self._grad_fn).__name__}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        return format_tensor(
            _device.to_host(self._data),
            dtype_name=self.dtype.name,
            device_str=str(self._device),
            suffixes=suffixes,
            default_dtype=_dtype.get_default_dtype().name,
        )

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

    def __bool__(self) -> bool:
        if self._data.size != 1:
            which = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {which} is ambiguous")
        return bool(self.item())

    def _scalar(self, warn: bool):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if warn and self._requires_grad and not _warned_scalar[0]:
            _warned_scalar[0] = True
            warnings.warn(SCALAR_WARNING, UserWarning, stacklevel=3)
        return self.item()

    def __float__(self) -> float:
        """``float(t)``; warns once per process when ``t`` requires grad, as PyTorch does (``item()`` does not)."""
        return float(self._scalar(warn=True))

    def __complex__(self) -> complex:
        return complex(self._scalar(warn=True))

    def __int__(self) -> int:
        return int(self._scalar(warn=False))

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __reduce_ex__(self, protocol):
        return (_rebuild, (_device.to_host(self._data).copy(), str(self._device), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        new = Tensor._make(self._data.copy(), self._device)
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = Tensor._make(self._grad._data.copy(), self._device)
        memo[id(self)] = new
        return new

    def _on_device(self, host_array):
        """Values drawn on the host (random numbers), copied to this tensor's device."""
        if self._device.type == "cpu":
            return host_array
        return _device.to_device_array(host_array, _CPU, self._device)


def _dim_of_shape(d, ndim):
    """``dim`` for ``size(dim)``/``stride(dim)``: a 0-d tensor has no dimension to ask about (PyTorch's
    ``maybe_wrap_dim`` with ``wrap_scalar=false``)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return _dim(d, ndim)


def _dim(d, ndim):
    """A dimension index checked and made non-negative (a 0-d tensor accepts 0 and -1)."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def _rebuild(arr, dev, requires_grad):
    t = Tensor._make(arr, _device.canonical(dev))
    t._requires_grad = requires_grad
    return t
