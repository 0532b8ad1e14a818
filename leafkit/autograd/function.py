"""``Function``: the shape every differentiable operation has, and its ``ctx``.

Mirrors ``torch.autograd.Function``.  A subclass defines two static methods:

``forward(ctx, *args)``
    computes the result; may call ``ctx.save_for_backward(...)`` and store
    plain attributes on ``ctx``.
``backward(ctx, *grad_outputs)``
    returns one gradient per argument of ``forward`` (``None`` where an
    argument needs none).

``Function.apply(*args)`` runs ``forward`` and, when grad mode is on and an
input requires grad, makes the ctx *the node*: the output's ``grad_fn`` is an
instance of the subclass, so the class is named as PyTorch names its node
(``MulBackward0``).

leafkit's own operations set ``_array_api = True``: their ``forward`` and
``backward`` take and return NumPy/CuPy arrays, which keeps the per-op cost
low.  A user's subclass works on tensors, exactly as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from .grad_mode import _state
from .graph import Node, SavedVariable

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` given to ``forward`` when no graph is recorded (nothing needs saving)."""

    needs_input_grad = ()

    def save_for_backward(self, *tensors):
        pass

    def mark_non_differentiable(self, *outputs):
        pass

    def mark_dirty(self, *tensors):
        pass

    def set_materialize_grads(self, value: bool):
        pass


class _NoGraphCtx(FunctionCtx):
    """A throwaway ctx; attributes set on it are kept only for this call."""


def _common_device(dev, d, args):
    """PyTorch lets a CPU 0-d tensor (a "scalar tensor") join an op on another device; nothing else mixes."""
    from .._device import CPU
    Tensor = _tensor_cls()
    if CPU in (dev, d):
        other = d if dev is CPU else dev
        if all(a._device is other or (a._device is CPU and a._data.ndim == 0)
               for a in args if isinstance(a, Tensor)):
            return other
    raise _same_device_error(dev, d)


def _scalar_to(t, dev):
    """A CPU 0-d tensor's value on ``dev`` (CuPy needs its own array; the simulated GPU shares NumPy)."""
    from .._device import array_module
    xp = array_module(dev)
    return t._data if xp is np else xp.asarray(t._data)


def _same_device_error(a, b):
    return RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, {a} and {b}!")


class Function(Node):
    """Base class of differentiable operations and of the node they leave in the graph.

    Attributes
    ----------
    needs_input_grad : tuple of bool
        One per ``forward`` argument: does that argument need a gradient?

    Notes
    -----
    ``_n_slots``: ``None`` means every Tensor argument is an input of the node
    (one ``next_functions`` entry each); an integer ``k`` means the first
    ``k`` arguments are, Python numbers included (they get ``(None, 0)``), as
    PyTorch does for ``a + 2``.
    """

    _array_api = False
    _is_view = False
    _n_slots = None
    _slot_args = None

    def __init__(self, *args, **kwargs):  # pragma: no cover - guard
        raise RuntimeError("Function objects are created by Function.apply(); call MyFunction.apply(...) instead")

    # names: leafkit's own ops are named like PyTorch's nodes; a user's Function "Sq" makes nodes "SqBackward"
    def name(self) -> str:
        cls = type(self)
        return cls.__name__ if cls._array_api else cls.__name__ + "Backward"

    _repr_name = name

    def __repr__(self) -> str:
        if type(self)._array_api:
            return Node.__repr__(self)
        return f"<torch.autograd.function.{self.name()} object at {id(self):#x}>"

    # ctx API ---------------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Keep ``tensors`` for backward; read them back with ``ctx.saved_tensors``."""
        self._to_save = tensors

    def mark_non_differentiable(self, *outputs):
        """Declare outputs (e.g. indices) that never get a gradient."""
        self._non_diff = tuple(id(o) for o in outputs)

    def mark_dirty(self, *tensors):
        """Declare inputs modified in place by ``forward`` (accepted for API parity)."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool):
        self._materialize = bool(value)

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    # running ---------------------------------------------------------------
    @classmethod
    def apply(cls, *args):
        """Run ``forward`` on ``args``; record a node when grad mode is on and an input requires grad.

        Raises
        ------
        RuntimeError
            "Expected all tensors to be on the same device" when tensor
            arguments live on different devices.
        """
        Tensor = _tensor_cls()
        dev = None
        needs = False
        for a in args:
            if isinstance(a, Tensor):
                if a._base is not None:
                    if a._base._history != a._history_seen:
                        a._fresh()
                    if a._grad_fn is not None and a._grad_fn.name() == "Invalid":
                        from .._functions.views import check_valid
                        check_valid(a)
                d = a._device
                if dev is None:
                    dev = d
                elif d is not dev:
                    dev = _common_device(dev, d, args)
                if a._requires_grad:
                    needs = True
        record = needs and _state.enabled
        if cls._array_api:
            fwd_args = [(a._data if a._device is dev else _scalar_to(a, dev)) if isinstance(a, Tensor) else a
                        for a in args]
        else:
            fwd_args = args
        if not record:
            ctx = _NoGraphCtx()
            if cls._array_api:
                out = cls.forward(ctx, *fwd_args)
            else:
                from .grad_mode import no_grad
                with no_grad():
                    out = cls.forward(ctx, *fwd_args)
                return out
            created_nograd = needs  # inputs needed grad but grad mode was off
            if type(out) is tuple:
                res = tuple(Tensor._make(o, dev) for o in out)
                if created_nograd:
                    for r in res:
                        r._created_in_no_grad = True
                return res
            res = Tensor._make(out, dev)
            if created_nograd:
                res._created_in_no_grad = True
            if cls._is_view:
                _share_view(res, args[0])
                # PyTorch: a view made under no_grad of a tensor that requires grad still reports
                # requires_grad=True (and is a leaf); in-place changes of it are then refused.
                res._requires_grad = args[0]._requires_grad
            return res

        node = cls.__new__(cls)
        Node.__init__(node)
        node._device = dev
        # inputs of the node, their next_functions, and the metadata the engine checks grads against
        n_slots = cls._n_slots
        if n_slots is None:
            slot_args = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
            node._slot_args = slot_args
        else:
            slot_args = cls._slot_args or tuple(range(n_slots))
        nf = []
        meta = []
        needs_input_grad = [False] * len(args)
        for i in slot_args:
            a = args[i]
            if isinstance(a, Tensor) and a._requires_grad:
                fn = a._grad_fn
                nf.append((fn if fn is not None else a._get_accumulator(), a._output_nr))
                meta.append((a._data.shape, a._data.dtype))
                needs_input_grad[i] = True
            else:
                nf.append((None, 0))
                meta.append(None)
        node.next_functions = tuple(nf)
        node._in_meta = meta
        node.needs_input_grad = tuple(needs_input_grad)

        out_objs = ()
        if cls._array_api:
            out = cls.forward(node, *fwd_args)
        else:
            from .grad_mode import no_grad
            with no_grad():
                out_t = cls.forward(node, *fwd_args)
            out = tuple(o._data for o in out_t) if isinstance(out_t, tuple) else out_t._data
            out_objs = out_t if isinstance(out_t, tuple) else (out_t,)

        multi = type(out) is tuple
        outs = out if multi else (out,)
        non_diff = node.__dict__.pop("_non_diff", ())
        results = []
        for k, o in enumerate(outs):
            if id(o) in non_diff or (getattr(o, "dtype", None) is not None and o.dtype.kind not in "fc"):
                results.append(Tensor._make(o, dev))
            else:
                results.append(Tensor._make(o, dev, node, k))
        dirty = node.__dict__.pop("_dirty", ())
        if dirty:  # ctx.mark_dirty: the modified input itself is the output, with this node as its history
            for k, o in enumerate(out_objs):
                if any(o is d for d in dirty):
                    if o._base is not None:
                        raise NotImplementedError("leafkit does not support ctx.mark_dirty on a view (PyTorch "
                                                  "rebases the view's base); pass the base tensor instead")
                    if o._requires_grad and o._grad_fn is None:
                        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                                           "operation.")
                    o._grad_fn, o._output_nr, o._requires_grad = node, k, True
                    o._version_counter[0] += 1
                    results[k] = o
        if multi:
            node._out_meta = [(r._data.shape, r._data.dtype) for r in results]

        to_save = node.__dict__.pop("_to_save", None)
        if to_save is not None:
            node._saved = _save(to_save, args, results, cls._array_api)
        if multi:
            return tuple(results)
        if cls._is_view:
            _share_view(results[0], args[0])
        return results[0]

    def _backward(self, grads):
        cls = type(self)
        if cls._array_api:
            res = cls.backward(self, *grads)
        else:
            from .._tensor import Tensor
            from .grad_mode import no_grad
            with no_grad():
                res = cls.backward(self, *[Tensor._wrap(g, self._device) if g is not None else None for g in grads])
            if not isinstance(res, tuple):
                res = (res,)
            res = tuple(r._data if isinstance(r, Tensor) else r for r in res)
        if type(res) is not tuple:
            res = (res,)
        slot_args = self._slot_args or tuple(range(len(self.next_functions)))
        if len(res) != len(self.needs_input_grad) and not cls._array_api:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {len(self.needs_input_grad)}, got {len(res)})")
        return [res[i] if i < len(res) else None for i in slot_args]

    @property
    def saved_tensors(self):
        arrays = Node.saved_tensors.fget(self)
        if type(self)._array_api:
            return arrays
        from .._tensor import Tensor
        return tuple(Tensor._wrap(a, self._device) if a is not None else None for a in arrays)


def _save(to_save, args, results, array_api):
    Tensor = _tensor_cls()
    saved = []
    for item in to_save:
        if item is None:
            saved.append(None)
            continue
        arr = item._data if (not array_api and isinstance(item, Tensor)) else item
        owner = None
        for a in args:
            if isinstance(a, Tensor) and a._data is arr:  # Parameter (a subclass) included
                owner = a
                break
        else:
            for r in results:
                if r._data is arr:
                    owner = r
                    break
        if owner is None:
            saved.append(SavedVariable(arr, None, None))
        else:
            fn = owner._grad_fn
            # what the "modified by an inplace operation" message needs, kept cheap (no tensor reference)
            saved.append(SavedVariable(arr, owner._version_counter,
                                       (owner._device, type(fn).__name__ if fn is not None else None)))
    return saved


_TENSOR = []


def _tensor_cls():
    if not _TENSOR:
        from .._tensor import Tensor
        _TENSOR.append(Tensor)
    return _TENSOR[0]


def _share_view(view, src):
    """A view shares its source's storage, so it shares the version counter too."""
    view._version_counter = src._version_counter
    base = view._base = src._base if src._base is not None else src
    view._history_seen = base._history
    if view._grad_fn is None and src._requires_grad:
        view._no_grad_view = True  # made under no_grad: recording an in-place change of it is refused


def once_differentiable(fn):
    """Accepted for API parity: leafkit never builds a graph of the backward pass."""
    return fn
