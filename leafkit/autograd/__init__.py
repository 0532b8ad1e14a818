"""``leafkit.autograd``: backward, grad, Function, grad modes, graph nodes (``torch.autograd``'s names)."""
from __future__ import annotations

import numpy as np

from . import graph  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .graph import AccumulateGrad, Node  # noqa: F401
from .engine import run_backward

__all__ = ["backward", "grad", "Function", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "graph", "Node", "AccumulateGrad"]

_CREATE_GRAPH = ("leafkit does not build a graph of the backward pass (create_graph=True, higher-order "
                 "gradients); PyTorch does")


def _as_tuple(x):
    from .._tensor import Tensor

    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads):
    from .._tensor import Tensor

    if grads is None:
        grads = (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} tensors and {len(outputs)} gradients")
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward(): tensors must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            xp = np if isinstance(t._data, np.ndarray) else __import__("cupy")
            out.append(xp.ones(t._data.shape, dtype=t._data.dtype))
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if g._data.shape != t._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                               f"shape of {t.shape}.")
        if g._device is not t._device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{t._device} and {g._device}!")
        arr = g._data
        out.append(arr.astype(t._data.dtype) if arr.dtype != t._data.dtype else arr)
    return out


def _root_edges(outputs, grads):
    from .._functions.views import check_valid

    for t in outputs:
        t._fresh()
        check_valid(t)
    return [((t._grad_fn, t._output_nr, g) if t._grad_fn is not None else (t._get_accumulator(), 0, g))
            for t, g in zip(outputs, grads)]


def _input_edges(inputs):
    edges = []
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append((t._grad_fn, t._output_nr) if t._grad_fn is not None else (t._get_accumulator(), 0))
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves (``torch.autograd.backward``).

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        Roots of the backward pass.
    grad_tensors : Tensor or sequence, optional
        The gradient with respect to each root; may be omitted for
        one-element roots (a gradient of 1 is used).
    retain_graph : bool, optional
        Keep saved tensors so the graph can be walked again.  Defaults to
        ``create_graph`` (False): saved tensors are freed.
    inputs : Tensor or sequence, optional
        Only these tensors get ``.grad`` (non-leaves included).

    Raises
    ------
    RuntimeError
        "element 0 of tensors does not require grad and does not have a
        grad_fn"; "grad can be implicitly created only for scalar outputs";
        "Mismatch in shape"; "backward through the graph a second time";
        "modified by an inplace operation".
    NotImplementedError
        ``create_graph=True`` (higher-order gradients are out of scope).
    """
    if create_graph:
        raise NotImplementedError(_CREATE_GRAPH)
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors)
    grads = _make_grads(outputs, _as_tuple(grad_tensors))
    if retain_graph is None:
        retain_graph = create_graph
    edges = None
    inputs = _as_tuple(inputs)
    if inputs is not None:
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        edges = _input_edges(inputs)
        for t in inputs:  # PyTorch: a non-leaf named in inputs= gets its .grad, so it now retains grad
            if t._grad_fn is not None:
                t.retain_grad()
    with np.errstate(all="ignore"):  # inf/nan gradients stay silent, as in PyTorch
        run_backward(_root_edges(outputs, grads), bool(retain_graph), edges)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` without touching ``.grad``.

    Mirrors ``torch.autograd.grad``.

    Returns
    -------
    tuple of Tensor
        One per input (``None`` for an unused input when ``allow_unused``;
        zeros when ``materialize_grads``).

    Raises
    ------
    RuntimeError
        "One of the differentiated Tensors does not require grad"; "appears to
        not have been used in the graph" for an unused input without
        ``allow_unused``; and the errors of :func:`backward`.
    """
    from .._tensor import Tensor

    if create_graph:
        raise NotImplementedError(_CREATE_GRAPH)
    if is_grads_batched:
        raise NotImplementedError("leafkit does not implement is_grads_batched")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if not inputs_t:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _make_grads(outputs, _as_tuple(grad_outputs))
    if retain_graph is None:
        retain_graph = create_graph
    with np.errstate(all="ignore"):
        captured = run_backward(_root_edges(outputs, grads), bool(retain_graph), _input_edges(inputs_t),
                                capture=True, allow_unused=allow_unused)
    result = []
    for t, g in zip(inputs_t, captured):
        if g is None:
            result.append(Tensor._make(np.zeros_like(t._data), t._device) if materialize_grads else None)
        else:
            result.append(Tensor._make(g.copy(), t._device))
    return tuple(result)
