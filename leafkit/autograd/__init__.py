"""``leafkit.autograd``: backward, grad, Function, grad modes, anomaly mode, graph nodes, Variable.

``torch.autograd``'s names.  This is the front door of the autograd core: it
takes tensors from the user, checks them with PyTorch's messages, and runs the
engine.  Like ``torch.autograd``'s, it is the one part of the package that
uses the tensor API (with :mod:`.functional` and :mod:`.variable`): it belongs
to the torch namespace's layer of ARCHITECTURE.md, not to the core's.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _tensor
from . import graph  # noqa: F401
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import REFERENCE_CYCLE_WARNING, execute, run_backward
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck  # the functions shadow the module, as in PyTorch
from .graph import AccumulateGrad, Node  # noqa: F401

__all__ = [
    "backward",
    "backward_steps",
    "grad",
    "Function",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "graph",
    "Node",
    "AccumulateGrad",
    "functional",
    "Variable",
    "gradcheck",
    "gradgradcheck",
]

_warned_cycle = [False]  # PyTorch warns once per process (TORCH_WARN_ONCE)
_checkpoint_valid = [True]  # False while a pass with inputs (autograd.grad, backward(inputs=...)) runs


def _is_checkpoint_valid() -> bool:
    """Whether the running backward pass may be re-entered by a reentrant checkpoint
    (``torch.autograd._is_checkpoint_valid``): not inside ``autograd.grad`` or ``backward(inputs=...)``."""
    return _checkpoint_valid[0]


def _run(roots, retain_graph, create_graph, edges, **kw):
    """Run the engine, telling a reentrant checkpoint met on the way whether this pass has ``inputs``."""
    prev = _checkpoint_valid[0]
    _checkpoint_valid[0] = edges is None
    try:
        return run_backward(roots, retain_graph, create_graph, edges, **kw)
    finally:
        _checkpoint_valid[0] = prev


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _tensor.Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads, create_graph):
    """The gradient each root starts with: the given one (cast to the root's dtype) or ones for a scalar root."""
    Tensor = _tensor.Tensor
    if grads is None:
        grads = (None,) * len(outputs)
    if len(grads) < len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    grads = grads[: len(outputs)]  # PyTorch pairs them with zip: extra gradients are ignored
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward(): tensors must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            ones = (
                np.ones(t._data.shape, dtype=t._data.dtype)
                if isinstance(t._data, np.ndarray)
                else __import__("cupy").ones(t._data.shape, dtype=t._data.dtype)
            )
            out.append(Tensor._make(ones, t._device) if create_graph else ones)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if g._data.shape != t._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                f"shape of {t.shape}."
            )
        if g._device is not t._device:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"{t._device} and {g._device}!"
            )
        if create_graph:
            out.append(g.to(t.dtype) if g._data.dtype != t._data.dtype else g)
        else:
            arr = g._data
            out.append(arr.astype(t._data.dtype) if arr.dtype != t._data.dtype else arr)
    return out


def _root_edges(outputs, grads):
    for t in outputs:
        t._fresh()
        if t._invalid:
            t._raise_invalid()
    return [(*t._edge(), g) for t, g in zip(outputs, grads)]


def _input_edges(inputs, for_backward):
    edges = []
    for t in inputs:
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            if for_backward:  # PyTorch's backward(inputs=) retains the grad of each input first
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(t._edge())
    return edges


def _backward_inputs(inputs):
    """The edges of ``backward(inputs=...)``; a non-leaf named there gets its ``.grad``, so it retains grad."""
    inputs = _as_tuple(inputs)
    if inputs is None:
        return None
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    edges = _input_edges(inputs, for_backward=True)
    for t in inputs:
        if t._grad_fn is not None:
            t.retain_grad()
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves (``torch.autograd.backward``).

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        Roots of the backward pass.
    grad_tensors : Tensor or sequence, optional
        The gradient with respect to each root (same shape); may be omitted
        for one-element roots (a gradient of 1 is used).  For a non-scalar
        root this is the vector of a vector-Jacobian product.
    retain_graph : bool, optional
        Keep saved tensors so the graph can be walked again.  Defaults to
        ``create_graph``.
    create_graph : bool
        Record the backward pass, so the gradients can be differentiated
        again.  ``.grad`` of each leaf then becomes part of a graph
        (``grad_fn=<CopyBackwards>`` at first, ``AddBackward0`` when added
        to), and PyTorch's reference-cycle warning is shown (once).
    inputs : Tensor or sequence, optional
        Only these tensors get ``.grad`` (non-leaves included).

    Raises
    ------
    RuntimeError
        "element 0 of tensors does not require grad and does not have a
        grad_fn"; "grad can be implicitly created only for scalar outputs";
        "Mismatch in shape"; "backward through the graph a second time";
        "modified by an inplace operation"; "can't retain_grad on Tensor that
        has requires_grad=False" for an ``inputs`` entry that does not
        require grad.
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors)
    create_graph = bool(create_graph)
    grads = _make_grads(outputs, _as_tuple(grad_tensors), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    edges = _backward_inputs(inputs)
    if create_graph and not _warned_cycle[0]:
        _warned_cycle[0] = True
        warnings.warn(REFERENCE_CYCLE_WARNING, UserWarning, stacklevel=_user_stacklevel())
    with np.errstate(all="ignore"):  # inf/nan gradients stay silent, as in PyTorch
        _run(_root_edges(outputs, grads), bool(retain_graph), create_graph, edges)


def backward_steps(tensors, grad_tensors=None, retain_graph=None, inputs=None):
    """Run ``backward(tensors, ...)`` one node at a time: a generator of :class:`~leafkit.autograd.engine.BackwardStep`.

    leafkit's own facility (PyTorch has none): the same pass as
    :func:`backward`, in PyTorch's execution order (the most recently created
    ready node first, ``AccumulateGrad`` as soon as it is ready), stopping
    after every node.  Each step says which node ran, the gradient that
    arrived for each of its outputs, what it sent along each edge (already
    summed back to the input's shape), the hooks that fired, the
    ``retain_grad()`` copies taken, the leaf whose ``.grad`` was added to, and
    whether its saved tensors were freed.  Run to the end, it leaves exactly
    what ``backward()`` leaves.  Grad mode, NumPy's error state and the
    caller's code between steps are not affected by the pass.

    Parameters and errors are those of :func:`backward` (without
    ``create_graph``).
    """
    outputs = _as_tuple(tensors)
    grads = _make_grads(outputs, _as_tuple(grad_tensors), False)
    edges = _backward_inputs(inputs)
    gen = execute(_root_edges(outputs, grads), bool(retain_graph), False, edges, trace=True)
    while True:
        prev = _checkpoint_valid[0]
        _checkpoint_valid[0] = edges is None
        with np.errstate(all="ignore"):
            try:
                step = next(gen)
            except StopIteration:
                return
            finally:
                _checkpoint_valid[0] = prev
        yield step


def _user_stacklevel() -> int:
    """The warning points at the user's line, whether they called ``t.backward()`` or ``autograd.backward()``."""
    import sys

    return 3 if sys._getframe(2).f_code.co_filename == _tensor.__file__ else 2


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """Return the gradients of ``outputs`` with respect to ``inputs`` without touching ``.grad``.

    Mirrors ``torch.autograd.grad``.  With ``create_graph=True`` the results
    are themselves part of a graph (they require grad when the gradient
    depends on an input), so they can be differentiated again: second
    derivatives, gradient penalties, Hessian-vector products.

    With ``is_grads_batched=True`` the first dimension of each
    ``grad_outputs`` tensor is a batch: the result is the gradient for each
    of its rows, stacked along a new first dimension (``grad_outputs=eye(n)``
    gives a whole Jacobian in one call).  PyTorch runs the rows at once with
    ``vmap``; leafkit runs one backward pass per row (the graph is kept
    until the last), with the same values and errors.

    Returns
    -------
    tuple of Tensor
        One per input (``None`` for an unused input when ``allow_unused``;
        zeros when ``materialize_grads``); with ``is_grads_batched``, each of
        shape ``(batch, *input.shape)``.

    Raises
    ------
    RuntimeError
        "One of the differentiated Tensors does not require grad"; "appears to
        not have been used in the graph" for an unused input without
        ``allow_unused``; and the errors of :func:`backward`.  With
        ``is_grads_batched``: a ``grad_outputs`` tensor whose shape after its
        first dimension is not its output's ("If `is_grads_batched=True`, we
        interpret the first dimension of each grad_output as the batch
        dimension..."), batches of different sizes.
    ValueError
        ``is_grads_batched`` with a 0-d (or missing) ``grad_outputs`` entry,
        as PyTorch's ``vmap`` ("Got in_dim=0 for some input, but that input
        is a Tensor of dimensionality 0").
    """
    Tensor = _tensor.Tensor
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads)
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if not inputs_t:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    create_graph = bool(create_graph)
    grads = _make_grads(outputs, _as_tuple(grad_outputs), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    with np.errstate(all="ignore"):
        captured = _run(
            _root_edges(outputs, grads),
            bool(retain_graph),
            create_graph,
            _input_edges(inputs_t, for_backward=False),
            capture=True,
            allow_unused=allow_unused,
        )
    result = []
    for t, g in zip(inputs_t, captured):
        if g is None:
            result.append(Tensor._make(np.zeros_like(t._data), t._device) if materialize_grads else None)
        elif isinstance(g, Tensor):
            result.append(g)
        else:
            result.append(
                Tensor._make(np.array(g, copy=True) if isinstance(g, (np.ndarray, np.generic)) else g.copy(), t._device)
            )
    return tuple(result)


_VMAP_0D = (
    "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a Tensor of "
    "dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0."
)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """:func:`grad` with ``is_grads_batched=True``: one pass per row of the batched ``grad_outputs``, stacked."""
    Tensor = _tensor.Tensor
    outs = _as_tuple(outputs)
    gos = _as_tuple(grad_outputs)
    if gos is None or any(g is None for g in gos):
        for o, g in zip(outs, gos or (None,) * len(outs)):
            if g is None:  # PyTorch's errors for a missing gradient of a non-scalar output come first
                _make_grads((o,), (None,), create_graph)
        raise ValueError(_VMAP_0D)
    if len(gos) != len(outs):
        raise RuntimeError(f"got {len(gos)} tensors and {len(outs)} gradients")
    for i, (o, g) in enumerate(zip(outs, gos)):
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if g._data.ndim == 0:
            raise ValueError(_VMAP_0D)
        if isinstance(o, Tensor) and g._data.shape[1:] != o._data.shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {g.shape[1:]} and "
                f"output[{i}] has a shape of {o.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap."
            )
    sizes = [g._data.shape[0] for g in gos]
    if len(set(sizes)) > 1:
        raise ValueError(
            f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    n = sizes[0]
    if n == 0:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    if retain_graph is None:
        retain_graph = create_graph
    rows = [
        grad(
            outs,
            inputs,
            [g[k] for g in gos],
            retain_graph=True if k < n - 1 else retain_graph,
            create_graph=create_graph,
            allow_unused=allow_unused,
        )
        for k in range(n)
    ]
    from .. import _functions

    result = []
    for j, t in enumerate(_as_tuple(inputs)):
        column = [r[j] for r in rows]
        if column[0] is None:  # unused: None, or zeros of the input's own shape (not batched), as PyTorch
            result.append(Tensor._make(np.zeros_like(t._data), t._device) if materialize_grads else None)
        else:
            result.append(_functions.stack(column))
    return tuple(result)


# -- torch.autograd.Variable -------------------------------------------------------------------------------------------
# The name old tutorials use, which has made plain tensors since PyTorch 0.4: ``Variable(t)`` returns a new leaf Tensor
# on ``t``'s storage (``t.detach()``), requiring grad when asked; ``isinstance(x, Variable)`` is True for every tensor.
# The removed ``volatile`` flag warns and changes nothing, as in PyTorch 2.13 (``Tensor.volatile`` reads False, with a
# warning).  PyTorch's path for it, ``torch.autograd.variable``, is the module :mod:`leafkit.autograd.variable`.
VOLATILE_ARG_WARNING = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: a Tensor (PyTorch 2.13's behaviour).

    Parameters
    ----------
    data : Tensor, optional
        Default: an empty float tensor.
    requires_grad : bool
        The new leaf requires grad (floating dtypes only).
    volatile : bool
        Removed in PyTorch 0.4: warns "volatile was removed and now has no effect. Use `with torch.no_grad():`
        instead." and is ignored, as in PyTorch.

    Returns
    -------
    Tensor
        A leaf sharing ``data``'s storage (and version counter), without its history.

    Raises
    ------
    TypeError
        "Variable data has to be a tensor, but got list"; "'foo' is an invalid keyword argument for this function".
    RuntimeError
        ``requires_grad=True`` on an integer tensor ("Only Tensors of floating point and complex dtype can require
        gradients").
    """

    def __new__(cls, *args, **kwargs):
        names = ("data", "requires_grad", "volatile", "_grad_fn")
        for k in kwargs:
            if k not in names:
                raise TypeError(f"'{k}' is an invalid keyword argument for this function")
        bound = dict(zip(names, args))
        bound.update(kwargs)
        data = bound.get("data")
        if bound.get("volatile"):
            warnings.warn(VOLATILE_ARG_WARNING, UserWarning, stacklevel=2)
        if data is None:
            from .._creation import empty  # _creation imports _tensor, which is still importing this package

            data = empty(0)
        if not isinstance(data, _tensor.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if bound.get("requires_grad"):
            if out._data.dtype.kind not in "fc":
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            out.requires_grad_(True)
        return out


Variable.__module__ = "leafkit.autograd.variable"


from . import functional  # noqa: E402,F401  (torch.autograd.functional)
