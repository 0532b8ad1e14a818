"""What the op families share: running an op, PyTorch's type promotion, broadcasting checks, argument checks.

Running an op (the end of this module) is what every ``Tensor`` method and ``torch.*`` function of the registry
does: :func:`apply` runs the op's forward on arrays and, when grad mode is on and an input requires grad,
records its node (:func:`record`); the node's backward (:class:`OpNode`) runs the op's derivative formulas.
The ops themselves are declared in :mod:`._registry`.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
import sys
import warnings

import numpy as np

from .. import _dtype
from .._device import array_module, to_device_array  # noqa: F401  (array_module: re-exported for the op families)
from .._dtype import DIFFERENTIABLE_KINDS
from .._tensor import Tensor
from ..autograd.grad_mode import _state
from ..autograd.graph import (
    RELEASED_MESSAGE,
    RUN_FIRST,
    Node,
    SavedTensor,
    SavedVariable,
    connect,
    save_input,
    save_output,
)

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}

try:  # NumPy 2: np.errstate sets this context variable; setting it directly costs a fifth as much per call
    from numpy._core.umath import _extobj_contextvar as _FP_STATE
    from numpy._core.umath import _make_extobj

    _QUIET = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # NumPy 1.x
    _FP_STATE = _QUIET = None


def quiet(fn):
    """``fn`` with NumPy's floating-point warnings off while it runs (``np.errstate(all="ignore")``).

    PyTorch computes ``inf * 0``, ``inf - inf``, overflow in a cast to
    float16, the mean of nothing ... silently (nan, inf); NumPy warns with a
    ``RuntimeWarning``.  Every registered op's forward runs through this
    (see :func:`._namespace.add_op`); backward passes run under one
    ``np.errstate`` each (``leafkit.autograd``).  Only the thread's own
    NumPy state changes, and only while ``fn`` runs: the user's
    ``np.seterr`` settings stay as they are.
    """
    if _FP_STATE is None:

        def run(*args, **kwargs):
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)
    else:
        enter, leave, state = _FP_STATE.set, _FP_STATE.reset, _QUIET

        def run(*args, **kwargs):
            token = enter(state)
            try:
                return fn(*args, **kwargs)
            finally:
                leave(token)

    run.__name__ = getattr(fn, "__name__", "forward")
    run.__doc__ = fn.__doc__
    run.__wrapped__ = fn
    return run


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def warn_user(message, category=UserWarning) -> None:
    """``warnings.warn`` pointing at the first line outside leafkit (the user's), however deep the op was."""
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def as_array(x):
    """A NumPy scalar (what full reductions return) as a 0-d array; arrays unchanged (CuPy's too, unlike np.asarray)."""
    return np.asarray(x) if isinstance(x, np.generic) else x


def is_number(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, complex)


def num(x):
    """A NumPy scalar as a Python number; anything else unchanged."""
    return x.item() if isinstance(x, np.generic) else x


def result_type(a, b):
    """PyTorch's type promotion for two operands (arrays or Python numbers).

    Categories rank bool < integer < floating.  A Python number only raises
    the category (an int tensor times 2.5 is ``float32``, the default dtype);
    0-d arrays count as lower priority than arrays with dimensions, as in
    PyTorch.
    """
    a_arr = hasattr(a, "dtype") and not isinstance(a, np.generic)
    b_arr = hasattr(b, "dtype") and not isinstance(b, np.generic)
    if a_arr and b_arr:
        da, db = a.dtype, b.dtype
        if da == db:
            return da
        ka, kb = _KIND_RANK[da.kind], _KIND_RANK[db.kind]
        if ka != kb:
            return da if ka > kb else db
        za, zb = a.ndim == 0, b.ndim == 0
        if za != zb:  # a dimensioned operand of the same category wins
            return db if za else da
        return np.promote_types(da, db)
    if not a_arr and not b_arr:
        if isinstance(a, np.generic) or isinstance(b, np.generic):  # a NumPy scalar: a 0-d result inside an op
            return np.result_type(a, b)
        # two Python numbers: bool, int64 or the default float dtype, as torch.tensor(n) has
        return _NUMBER_DTYPES[max(_number_rank(a), _number_rank(b))]()
    arr, n = (a, b) if a_arr else (b, a)
    d = arr.dtype
    kn = _number_rank(n)
    if kn > _KIND_RANK[d.kind]:
        return _NUMBER_DTYPES[kn]()
    return d


def promote_types(a, b):
    """PyTorch's ``promote_types`` of two dtypes: across categories (bool < integer < floating) the higher
    category's dtype (``int64`` and ``float16`` give ``float16``, where NumPy says ``float64``)."""
    if a == b:
        return a
    ka, kb = _KIND_RANK[a.kind], _KIND_RANK[b.kind]
    if ka != kb:
        return a if ka > kb else b
    return np.promote_types(a, b)


def result_type_many(*operands):
    """PyTorch's ``result_type`` of any number of operands (arrays, numbers, ``None`` skipped).

    As ``at::native::result_type``: dimensioned arrays, 0-d arrays and numbers
    are promoted within each group; a lower group's dtype counts only when its
    category (bool < integer < floating) is higher.  A float number stands for
    the default dtype, an int for int64.
    """
    groups = [None, None, None]  # dimensioned, 0-d, numbers
    for x in operands:
        if x is None:
            continue
        if hasattr(x, "dtype") and not isinstance(x, np.generic):
            g, d = (0 if x.ndim else 1), x.dtype
        else:
            g, d = 2, _NUMBER_DTYPES[_number_rank(x)]()
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)
    out = None
    for d in reversed(groups):  # combine_categories(higher, lower), from the lowest group up
        if d is None:
            continue
        if out is None or d.kind == "f":
            out = d
        elif d.kind == "b" or out.kind == "f":
            out = promote_types(d, out)
        else:  # an integer group over an integer or bool one keeps its own dtype
            out = d
    return out


def _number_rank(n) -> int:
    return 0 if isinstance(n, (bool, np.bool_)) else (1 if isinstance(n, (int, np.integer)) else 2)


_NUMBER_DTYPES = (lambda: np.dtype(np.bool_), lambda: np.dtype(np.int64), lambda: _dtype.get_default_dtype().np)


def promote(a, b):
    """Cast ``a`` and ``b`` (arrays or numbers) to their common PyTorch dtype."""
    rt = result_type(a, b)
    if hasattr(a, "dtype") and a.dtype != rt:
        a = a.astype(rt)
    if hasattr(b, "dtype") and b.dtype != rt:
        b = b.astype(rt)
    elif not hasattr(b, "dtype"):
        b = _scalar_as(b, rt)
    if not hasattr(a, "dtype"):
        a = _scalar_as(a, rt)
    return a, b


def _scalar_as(x, rt):
    """A Python number as a NumPy scalar of an integer or bool dtype ``rt``, wrapping around as PyTorch's cast
    does (``uint8_tensor + 300`` adds 44); floats stay Python floats."""
    if rt.kind == "f":
        return x
    return np.asarray(x).astype(rt)[()]


def prep(a, b):
    """Promote dtypes and check broadcasting (fast path: two arrays of one dtype and shape)."""
    if type(b) is float and a.dtype.kind == "f":
        return a, b
    if hasattr(b, "dtype") and hasattr(a, "dtype"):
        if a.dtype != b.dtype:
            a, b = promote(a, b)
        if a.shape != b.shape:
            broadcast_check(a, b)
        return a, b
    return promote(a, b)


def broadcast_check(a, b):
    """Raise PyTorch's RuntimeError when two array shapes do not broadcast."""
    sa, sb = a.shape, b.shape
    if sa == sb:
        return
    for i in range(1, min(len(sa), len(sb)) + 1):
        x, y = sa[-i], sb[-i]
        if x != y and x != 1 and y != 1:
            dim = max(len(sa), len(sb)) - i
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {dim}"
            )


def broadcast_shapes(*shapes):
    """The shape several shapes broadcast to (PyTorch's message when they do not)."""
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        s = (1,) * (n - len(s)) + tuple(s)
        for i, (x, y) in enumerate(zip(out, s)):
            if x == 1:
                out[i] = y
            elif y != 1 and x != y:
                raise RuntimeError(
                    f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}"
                )
    return tuple(out)


def to_float(a):
    """Integer and bool arrays become the default float dtype (what PyTorch's float-only ops return)."""
    if a.dtype.kind != "f":
        return a.astype(_dtype.get_default_dtype().np)
    return a


def dim(d, ndim):
    """A dimension index checked and made non-negative (a 0-d tensor accepts 0 and -1)."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def dims(dim_arg, ndim):
    """``dim`` (an int, a sequence, or empty for every dimension) as a sorted-by-appearance tuple of dims."""
    if dim_arg is None:
        return tuple(range(ndim))
    ds = (dim_arg,) if isinstance(dim_arg, (int, np.integer)) else tuple(dim_arg)
    if not ds:  # PyTorch: an empty dim list reduces over every dimension
        return tuple(range(ndim))
    out = []
    for d in ds:
        n = max(ndim, 1)
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        if d % n in out:
            raise RuntimeError(f"dim {d % n} appears multiple times in the list of dims")
        out.append(d % n)
    return tuple(out) if ndim else ()


def wrap_dims(dim_arg, ndim):
    """A dim list as PyTorch's ``flip``/``amax``/``var``/``logsumexp`` read it: ``None`` or empty is ``()`` (unlike
    :func:`dims`, no dimension at all; each op says what that means), an int or a sequence is checked and made
    non-negative, and a 0-d tensor's ``0``/``-1`` stays ``(0,)``.

    Raises ``IndexError`` ("Dimension out of range ...") and ``RuntimeError`` for a repeated dim."""
    if dim_arg is None:
        return ()
    ds = (dim_arg,) if isinstance(dim_arg, (int, np.integer)) else tuple(dim_arg)
    n = max(ndim, 1)
    out = []
    for d in ds:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        if d % n in out:
            raise RuntimeError(f"dim {d % n} appears multiple times in the list of dims")
        out.append(d % n)
    return tuple(out)


def type_name(x) -> str:
    """The name PyTorch's messages give the type of ``x`` (CPython's ``tp_name``): ``list``, ``str``, a class
    defined in Python by its name, an extension type with its module (``numpy.ndarray``)."""
    cls = type(x)
    if cls.__module__ == "builtins" or cls.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE: a class made in Python
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


def numpy_names(fn):
    """Accept NumPy's argument names as PyTorch's argument parser does: ``axis`` for ``dim``, ``keepdims`` for
    ``keepdim``, ``x``/``a``/``x1`` for ``input``, ``x2`` for ``other`` (``t.sum(axis=0)``)."""
    params = set(inspect.signature(fn).parameters)
    names = {k: v for k, v in _NUMPY_NAMES.items() if v in params}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **(_rename(fn, kwargs, names) if kwargs else kwargs))

    return wrapper


def _rename(fn, kwargs, names):
    for k in [k for k in kwargs if k in names]:
        if names[k] in kwargs:
            raise TypeError(f"{fn.__name__}() got multiple values for argument '{names[k]}'")
        kwargs[names[k]] = kwargs.pop(k)
    return kwargs


def check_tensor(fn: str, name: str, x, pos: int = 1) -> None:
    """PyTorch's TypeError for a non-tensor argument."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type_name(x)}")


def operand(x, fn: str, name: str = "other"):
    """A tensor or a number as an op's second operand (a NumPy scalar becomes a Python number)."""
    if isinstance(x, Tensor):
        return x
    if is_number(x):
        return num(x)
    raise TypeError(f"{fn}(): argument '{name}' (position 1) must be Tensor, not {type_name(x)}")


def as_operand(x):
    """For operators: a tensor or number as is, ``None`` for anything else (the operator returns NotImplemented)."""
    if x.__class__ is float or x.__class__ is int or isinstance(x, Tensor):
        return x
    return num(x) if is_number(x) else None


# -- running an op ----------------------------------------------------------------------------------------------------
def apply(spec, args):
    """Run the registered op ``spec`` on ``args`` (its inputs, then its attributes): the forward on arrays, then its
    node (:func:`record`) if grad mode is on and an input requires grad.  Errors are PyTorch's (devices, dtypes)."""
    arrays, device, requires_grad = _arrays(spec, args)
    if requires_grad and _state.enabled and any(isinstance(a, Tensor) and a._inference for a in args):
        _check_saved_inputs(spec, args)  # PyTorch refuses to save an inference tensor before the forward runs
    out = spec.forward(*arrays)
    if spec.device_from is not None:  # a copy to another device: the output's device is an argument
        device = args[spec.device_from]
    if requires_grad and _state.enabled:
        return record(spec, args, out, device)
    return _plain(spec, args, out, device, requires_grad)


def _arrays(spec, args):
    """The forward's arguments (tensors unwrapped to their arrays), the device, and whether an input requires grad."""
    arrays, device, requires_grad = list(args), None, False
    for i in range(spec.n_lead, len(args)) if spec.variadic else range(spec.n_in):
        a = args[i]
        if isinstance(a, Tensor):
            if a._base is not None:
                _check_view(a)
            if device is not None and a._device is not device:
                return _mixed_devices(spec, args)
            device, arrays[i] = a._device, a._data
            requires_grad = requires_grad or a._requires_grad
    return arrays, device, requires_grad


def _check_view(a) -> None:
    """A view whose base changed in place: its history brought up to date, or PyTorch's error (recording only)."""
    a._fresh()
    if a._invalid and _state.enabled:  # under no_grad such a view may still be read
        a._raise_invalid()


def _mixed_devices(spec, args):
    """:func:`_arrays` for inputs on two devices: a CPU 0-d tensor (a "scalar tensor") may join an op on another
    device, as in PyTorch; it is copied there.  Anything else raises "Expected all tensors to be on the same
    device"."""
    positions = range(spec.n_lead, len(args)) if spec.variadic else range(spec.n_in)
    tensors = [args[i] for i in positions if isinstance(args[i], Tensor)]
    dev = tensors[0]._device
    for t in tensors[1:]:
        if t._device is not dev:
            dev = _common_device(dev, t._device, tensors)
    arrays = list(args)
    for i in positions:
        a = args[i]
        if isinstance(a, Tensor):
            if a._base is not None:
                _check_view(a)
            arrays[i] = a._data if a._device is dev else to_device_array(a._data, a._device, dev)
    return arrays, dev, any(t._requires_grad for t in tensors)


def _common_device(dev, d, tensors):
    if dev.type == "cpu" or d.type == "cpu":
        other = d if dev.type == "cpu" else dev
        if all(t._device is other or (t._device.type == "cpu" and t._data.ndim == 0) for t in tensors):
            return other
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {dev} and {d}!")


def _check_saved_inputs(spec, args) -> None:
    """PyTorch saves a node's inputs before it runs the forward: an inference tensor that would be saved raises
    "Inference tensors cannot be saved for backward" before any error of the forward (shapes, dtypes)."""
    positions = range(spec.n_lead, len(args)) if spec.variadic else spec.diff
    needs = tuple(isinstance(args[i], Tensor) and args[i]._requires_grad for i in positions)
    for k in spec.plans[(any(needs),) if spec.variadic else needs]:
        kind, idx = spec.saved_kinds[k]
        if kind == "input":
            for i in positions if idx < 0 else (idx,):
                if isinstance(args[i], Tensor):
                    args[i]._check_can_be_saved()


def _plain(spec, args, out, dev, requires_grad):
    """The outputs of an op that records nothing (grad mode off, or no input requires grad)."""
    results = tuple(Tensor._make(o, dev) for o in out) if spec.multi else (Tensor._make(out, dev),)
    for r in results:
        if requires_grad:  # made under no_grad from an input that requires grad (what viz.explain tells)
            r._created_in_no_grad = True
        if spec.view:
            r._share_view_of(args[0], recorded=False)
        elif _state.inference:
            r._inference = True
    return results if spec.multi else results[0]


def record(spec, args, out, device):
    """Record the node of ``spec``: where each input's gradient goes, the outputs (made from the forward's ``out``)
    with the node as their ``grad_fn`` (an integer output gets none), and what its formulas read."""
    node = spec.node_cls()  # Node.__init__ gives it its sequence number
    node._device = device
    if spec.first:
        node._seq = RUN_FIRST
    if spec.not_differentiable:
        _check_differentiable(spec, args)
    connect(node, [args[i] for i in (range(spec.n_lead, len(args)) if spec.variadic else spec.diff)])
    results = []
    for k, o in enumerate(out if spec.multi else (out,)):
        history = o.dtype.kind in DIFFERENTIABLE_KINDS and k not in spec.nondiff_outputs
        results.append(Tensor._make(o, device, node, k) if history else Tensor._make(o, device))
    if spec.multi:
        node._out_meta = [(o.shape, o.dtype) for o in out]
    if spec.view:
        _share_views(args[0], results)
    node._stash = save(spec, node, args, results)
    return tuple(results) if spec.multi else results[0]


def _check_differentiable(spec, args) -> None:
    for i in spec.not_differentiable:
        a = args[i]
        if isinstance(a, Tensor) and a._requires_grad:
            raise RuntimeError(
                f"The function '{spec.name}' is not differentiable with respect to argument "
                f"'{spec.inputs[i]}'. This input cannot have requires_grad True."
            )


def _share_views(base, results) -> None:
    """The outputs of a view op share ``base``'s storage and version counter; an integer view keeps no history."""
    for r in results:
        r._share_view_of(base, recorded=True)
        if r._grad_fn is None and base._requires_grad:
            r._requires_grad = False


def save(spec, node, args, results):
    """What the formulas of the inputs that need a gradient read (``spec.plans``), one value per saved name:
    tensors as :class:`SavedVariable` (with their version), attributes and sizes as they are."""
    needs = (any(node.needs_input_grad),) if spec.variadic else node.needs_input_grad
    plan = spec.plans[needs]
    if not plan:
        return None
    saved = [None] * len(spec.saved_names)
    for k in plan:
        kind, i = spec.saved_kinds[k]
        saved[k] = _SAVE[kind](args, results, i, spec, node)
        node._had_saved = node._had_saved or kind in ("input", "output")
    return tuple(saved)


def _save_input(args, results, i, spec, node):
    a = args[i]
    return save_input(a) if isinstance(a, Tensor) else a  # a number is saved as it is


def _array_of(args, i):
    a = args[i]
    return a._data if isinstance(a, Tensor) else np.asarray(a)


def _sizes(args, spec):  # the sizes of every input of a variadic op
    return [args[i]._data.shape for i in range(spec.n_lead, len(args))]


_SAVE = {  # kind of saved name -> how it is saved: (args, results, index, spec, node) -> value
    "input": _save_input,
    "output": lambda args, results, i, spec, node: save_output(results[i], node, i),
    "attr": lambda args, results, i, spec, node: args[i] if i < len(args) else spec.defaults[i],
    "_sym_sizes": lambda args, results, i, spec, node: _sizes(args, spec) if i < 0 else _array_of(args, i).shape,
    "_sym_strides": lambda args, results, i, spec, node: _strides(_array_of(args, i)),
    "_sym_numel": lambda args, results, i, spec, node: int(_array_of(args, i).size),
    "_scalar_type": lambda args, results, i, spec, node: _array_of(args, i).dtype,
}


def _strides(arr):
    return tuple([st // arr.itemsize for st in arr.strides])


class OpNode(Node):
    """The node of a registered op; its backward runs the op's derivative formulas in the namespace ``F``."""

    __slots__ = ()
    _spec = None  # the op's OpSpec, set on each node class

    def _backward(self, grads, F):
        """One gradient per ``next_functions`` edge: each input's formula on the saved values (or None)."""
        spec = self._spec
        if self._stash is None:
            self._check_released()  # "backward through the graph a second time"
        saved = self._stash or [None] * len(spec.saved_names)
        values = [grads[0], grads, *[v.unpack(self, F.records) if v.__class__ is SavedVariable else v for v in saved]]
        if spec.variadic or spec.grouped:
            return _run_grouped(spec, values, self.needs_input_grad, F)
        return [
            f[0](F, *[values[j] for j in f[1]]) if need and f is not None else None
            for need, f in zip(self.needs_input_grad, spec.formulas)
        ]

    def __getattr__(self, item):
        # PyTorch exposes saved values as ``_saved_<name>`` attributes, and saved tensors also as
        # ``_raw_saved_<name>`` (a SavedTensor, where hooks can be registered)
        if item.startswith("_raw_saved_"):
            spec = type(self)._spec
            name = item[11:]
            if name in spec.saved_names:
                k = spec.saved_names.index(name)
                if spec.saved_kinds[k][0] in ("input", "output"):
                    return SavedTensor(self, k)
        elif item.startswith("_saved_"):
            spec = type(self)._spec
            name = item[7:]
            if name in spec.saved_names and not name.endswith("_scalar_type"):  # PyTorch shows no saved dtype
                k = spec.saved_names.index(name)
                saved = self._stash
                if saved is None:
                    if self._released and self._had_saved:
                        raise RuntimeError(RELEASED_MESSAGE)
                    return None
                v = saved[k] if k < len(saved) else None
                if v.__class__ is SavedVariable:
                    return v.unpack(self, as_tensor=True)
                if spec.saved_kinds[k][0] == "input" and v is not None and not isinstance(v, Tensor):
                    return _wrapped_number(v)
                return v
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{item}'")

    def __dir__(self):
        spec = type(self)._spec
        raw = [f"_raw_saved_{n}" for n, (kind, _) in zip(spec.saved_names, spec.saved_kinds) if kind in _TENSOR_KINDS]
        shown = ["_saved_" + n for n, (kind, _) in zip(spec.saved_names, spec.saved_kinds) if kind != "_scalar_type"]
        return list(super().__dir__()) + shown + raw


_TENSOR_KINDS = ("input", "output")


def _run_grouped(spec, values, needs, F) -> list:
    """The formulas of an op with any number of inputs (one formula for all), or with a formula that serves several
    inputs at once (``"input, weight, bias"``, called once with their ``grad_input_mask``)."""
    if spec.variadic:
        fn, ids = spec.formulas[0][:2]
        return [r if need else None for r, need in zip(fn(F, *[values[k] for k in ids]), needs)]
    out: list = []
    group_results: dict = {}
    for need, f in zip(needs, spec.formulas):
        if not need or f is None:
            out.append(None)
            continue
        fn, ids, group, k, members = f
        if group is None:
            out.append(fn(F, *[values[j] for j in ids]))
            continue
        if group not in group_results:  # one call for every input of the group
            mask = tuple(needs[m] for m in members)
            group_results[group] = fn(F, *[values[j] if j >= 0 else mask for j in ids])
        out.append(group_results[group][k])
    return out


def _wrapped_number(v):
    """A Python number saved for backward shows as PyTorch's "wrapped number" tensor (int64 or float64)."""
    dt = np.bool_ if isinstance(v, bool) else (np.int64 if isinstance(v, int) else np.float64)
    return Tensor._make(np.asarray(v, dtype=dt), None)
