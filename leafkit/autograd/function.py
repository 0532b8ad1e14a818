"""``Function``: a differentiable operation written by the user, and its ``ctx``.

Mirrors ``torch.autograd.Function``.  A subclass defines two static methods:

``forward(ctx, *args)``
    computes the result from tensors (run with grad mode off); may call
    ``ctx.save_for_backward(...)`` and store plain attributes on ``ctx``.
``backward(ctx, *grad_outputs)``
    returns one gradient per argument of ``forward`` (``None`` where an
    argument needs none).

``Function.apply(*args)`` runs ``forward`` and, when grad mode is on and an
input requires grad, records a node.  As in PyTorch, the ctx *is* the node:
defining ``class Square(Function)`` also defines the node class
``SquareBackward``, and ``y.grad_fn`` is an instance of it (not of
``Square``; ``y.grad_fn._forward_cls`` is ``Square``).

When the backward pass is recorded (``create_graph=True``), ``backward``
runs with grad mode on and its tensor operations are recorded too, so a
Function whose backward uses tensor operations has a second derivative.

This module is part of the autograd core: it knows tensors only through the
interface the tensor layer installs (:data:`leafkit.autograd.graph.api`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .grad_mode import _state, no_grad
from .graph import Error, Node, SavedTensor, api, connect, save_input, save_output

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """The methods ``forward`` may call on ``ctx``."""

    def save_for_backward(self, *tensors):
        """Keep ``tensors`` (or ``None``) for backward; read them back with ``ctx.saved_tensors``."""
        self._to_save = tensors

    def mark_non_differentiable(self, *outputs):
        """Declare outputs (e.g. indices) that never get a gradient."""
        self._non_diff = outputs

    def mark_dirty(self, *tensors):
        """Declare inputs that ``forward`` modified in place (they are returned as outputs)."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool):
        """With ``False``, ``backward`` may receive ``None`` for outputs that got no gradient."""
        self._materialize = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node class of a user's Function (``SquareBackward`` for ``Square``): the ctx of ``forward``.

    Attributes
    ----------
    needs_input_grad : tuple of bool
        One per ``forward`` argument: does that argument need a gradient?
    """

    _forward_cls: Any = None  # the Function subclass whose node class this is
    _materialize = True
    _slot_args: tuple = ()  # the positions of forward's tensor arguments

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{self.name()} object at {id(self):#x}>"

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, checked against their versions.

        Raises
        ------
        RuntimeError
            "backward through the graph a second time" once freed;
            "modified by an inplace operation" when a saved tensor changed.
        """
        self._check_released()
        saved = self._stash
        if not saved:
            return ()
        return tuple(s.unpack(self, as_tensor=True) if s is not None else None for s in saved)

    @property
    def _raw_saved_tensors(self):
        """The saved values as ``SavedTensor`` handles, where ``register_hooks`` can be set (PyTorch's
        ``ctx._raw_saved_tensors``); "backward through the graph a second time" once freed."""
        self._check_released()
        return tuple(SavedTensor(self, k) for k in range(len(self._stash or ())))

    def _backward(self, grads, F):
        wrap = not _state.enabled  # a plain pass hands arrays around; the user's backward takes tensors
        dev = self._device
        if wrap:
            grads = [api.wrap(g, dev) if g is not None else None for g in grads]
        res = self._forward_cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n_args = len(self.needs_input_grad)
        if len(res) != n_args:
            if len(res) > n_args and all(r is None for r in res[n_args:]):
                res = res[:n_args]  # PyTorch accepts trailing Nones
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected "
                    f"{n_args}, got {len(res)})"
                )
        slots = self._slot_args
        for i, r in enumerate(res):
            if r is not None and i not in slots:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable"
                )
        out = []
        for i in slots:
            r = res[i]
            if r is not None and not isinstance(r, api.tensor_type):
                raise TypeError(
                    f"function {self.name()} returned a gradient of type {type(r).__name__} at index "
                    f"{i}; expected a Tensor or None"
                )
            out.append(r._data if (wrap and r is not None) else r)
        return out


# set by leafkit's function transforms (leafkit._functions._batched)
transform_hook: Callable[[type, tuple], Any] | None = None


class FunctionMeta(type):
    """Gives every Function subclass its node class, ``<Name>Backward``, as PyTorch's metaclass does."""

    def __init__(cls, name, bases, attrs):
        backward_cls: type[BackwardCFunction] = type(
            name + "Backward", (BackwardCFunction,), {"_forward_cls": cls, "__module__": cls.__module__}
        )
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of a user-defined differentiable operation (``torch.autograd.Function``).

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx,
    *grad_outputs)``, then call ``MyFunction.apply(*args)``.

    Raises
    ------
    DeprecationWarning
        When instantiated ("should not be instantiated"), as PyTorch warns.
    RuntimeError
        When instantiated and called like a module ("Legacy autograd
        function with non-static forward method is deprecated"), and from
        backward: "returned an incorrect number of gradients".
    """

    _backward_cls: type[BackwardCFunction]  # <Name>Backward, made by FunctionMeta

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so you "
            "should invoke them on the class itself. Instantiating an autograd function will raise an error in a "
            "future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            "autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """The other style (PyTorch 2.0): ``forward(*args)`` without ``ctx``, then ``setup_context(ctx, inputs,
        output)`` saves what backward needs.  A Function that overrides this is called that way."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args):
        """Run ``forward`` on ``args`` (grad mode off inside); record a node when an input requires grad.

        Inside ``leafkit.func``'s transforms, PyTorch's rules for Functions apply (see ``transform_hook``)."""
        if transform_hook is not None:
            out = transform_hook(cls, args)
            if out is not NotImplemented:
                return out
        T = api.tensor_type
        for a in args:
            if isinstance(a, T):
                a._fresh()
        record = _state.enabled and any(isinstance(a, T) and a._requires_grad for a in args)
        ctx = cls._backward_cls.__new__(cls._backward_cls)
        Node.__init__(ctx)
        ctx.needs_input_grad = tuple(isinstance(a, T) and a._requires_grad for a in args)
        with no_grad():
            if cls.setup_context is not Function.setup_context:  # forward(*args), then setup_context
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        if not record:
            return out
        _connect(ctx, args)
        outs = out if isinstance(out, tuple) else (out,)
        results = _attach_outputs(ctx, args, outs)
        to_save = ctx.__dict__.pop("_to_save", None)
        if to_save is not None:
            ctx._stash = tuple(_save(t, k, results, ctx) for k, t in enumerate(to_save))
            ctx._had_saved = any(s is not None for s in ctx._stash)
        return tuple(results) if isinstance(out, tuple) else results[0]


def _connect(ctx, args):
    """The node's inputs: one ``next_functions`` edge per tensor argument (:func:`~.graph.connect`)."""
    T = api.tensor_type
    slots = tuple(i for i, a in enumerate(args) if isinstance(a, T))
    ctx._slot_args = slots
    needs = ctx.needs_input_grad  # one per argument of forward, as PyTorch gives it
    connect(ctx, [args[i] for i in slots])
    ctx.needs_input_grad = needs
    ctx._device = args[slots[0]]._device if slots else None


def _attach_outputs(ctx, args, outs):
    """Give each differentiable output this node as its history (``mark_dirty`` inputs are rebased in place)."""
    T = api.tensor_type
    non_diff = ctx.__dict__.pop("_non_diff", ())
    dirty = ctx.__dict__.pop("_dirty", ())
    results = []
    meta: list = []
    for k, o in enumerate(outs):
        if not isinstance(o, T):
            results.append(o)
            meta.append(None)
            continue
        meta.append((o._data.shape, o._data.dtype))
        if any(o is d for d in dirty):
            if o._base is not None:
                raise NotImplementedError(
                    "leafkit does not support ctx.mark_dirty on a view (PyTorch rebases the "
                    "view's base); pass the base tensor instead"
                )
            if o._requires_grad and o._grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            o._set_history(ctx, k)
            o._version_counter[0] += 1
            results.append(o)
        elif any(o is n for n in non_diff) or not o.is_floating_point():
            results.append(o)
        else:
            if any(o is a for a in args):
                o = o._alias()  # an input returned as it is: the output is a new tensor on the same storage
            o._set_history(ctx, k)
            if o._base is not None:  # a view made inside forward: PyTorch refuses to change it in place later
                o._creation_meta = "custom"
            results.append(o)
        if ctx._device is None:
            ctx._device = o._device
    if len(outs) > 1:
        ctx._out_meta = meta
    return results


def _save(t, k_arg, results, ctx):
    if t is None:
        return None
    if not isinstance(t, api.tensor_type):
        raise TypeError(
            f"save_for_backward can only save variables, but argument {k_arg} is of type {type(t).__name__}"
        )
    for k, r in enumerate(results):
        if r is t:  # an output: saved without the tensor itself (no reference cycle)
            return save_output(t, ctx, k)
    t._check_can_be_saved()
    return save_input(t)


def _fake_leaf(o):
    f = o.detach()
    f._set_requires_grad(True)
    return f


def once_differentiable(fn):
    """Mark a Function's ``backward`` as not differentiable again (``torch.autograd.function.once_differentiable``).

    The backward runs with grad mode off.  In a recorded pass
    (``create_graph=True``) its results are tied to an ``Error`` node (PyTorch's ``DelayedError``), so
    differentiating them again raises "trying to differentiate twice a
    function that was marked with @once_differentiable".
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _state.enabled:
            return outputs
        if not any(isinstance(a, api.tensor_type) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # As PyTorch's wrapper: the error node's inputs are detached copies of the outputs made to require grad
        # (fake leaves), so the recorded graph stops there: differentiating through it raises, while
        # autograd.grad(..., x, allow_unused=True) finds no path to x
        fakes = [None if o is None else _fake_leaf(o) for o in outs]
        err = Error(
            "trying to differentiate twice a function that was marked with @once_differentiable",
            [(None, 0) if f is None else f._edge() for f in fakes],
        )
        res: list = []
        for k, f in enumerate(fakes):
            if f is None:
                res.append(None)
                continue
            o = f.detach()
            o._set_history(err, k)
            res.append(o)
        return res[0] if single else tuple(res)

    return wrapper
