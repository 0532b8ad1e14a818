"""``vmap``: a function of one sample run on a whole batch at once (``torch.func.vmap``).

``vmap(f)(x)`` runs ``f`` once, on batched tensors (see
:mod:`leafkit._functions._batched`): every op inside runs its batching rule on
all samples together, and the outputs get their batch dimension back at
``out_dims``.  ``in_dims``/``out_dims`` follow the structure of the inputs and
outputs (ints, ``None`` for "not batched", nested tuples, lists and dicts);
``chunk_size`` runs the batch in pieces; ``randomness`` says what a random op
inside does.  The arguments are checked, and errors are raised, with
PyTorch's messages.
"""

from __future__ import annotations

import functools

from .. import _random
from .._functions import _batched, cat
from .._functions._batched import BatchedTensor
from .._tensor import Tensor
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a batch dimension of its inputs (``torch.func.vmap``; also ``torch.vmap``).

    ``vmap(f)(x)`` equals ``torch.stack([f(x[0]), f(x[1]), ...])``, computed in one pass: inside ``f`` each
    input is a tensor of one sample (a batched tensor: ``x.shape`` has no batch dimension), and every op
    runs its batching rule on all samples at once.  Gradients flow through it, and it composes with
    :func:`grad`, :func:`vjp`, :func:`jacrev` and itself (``vmap(vmap(f))``).

    Parameters
    ----------
    func : callable
        Takes tensors (and other values) and returns a tensor, or a tuple, list or dict of them.
    in_dims : int, None or a nested tuple of them
        For each input, the dimension that is the batch (``None``: the input is the same for every
        sample).  An int applies to every input; a tuple follows the structure of the arguments.
    out_dims : int, None or a nested tuple of them
        Where each output's batch dimension goes (``None``: an output that is not batched).
    randomness : {"error", "same", "different"}
        A random op inside ``func`` raises ("error"), draws once for all samples ("same"), or draws for
        each sample ("different").
    chunk_size : int, optional
        Run the batch ``chunk_size`` samples at a time (the outputs are concatenated); ``1`` is a loop.

    Returns
    -------
    callable
        ``func`` vectorized; outputs have the batch size at ``out_dims``.

    Raises
    ------
    ValueError
        PyTorch's messages for ``in_dims``/``out_dims`` that do not fit the inputs/outputs, a dimension out
        of range, batches of different sizes, no tensor to map over, a non-tensor output.
    RuntimeError
        From inside ``func``: ``.item()`` or ``bool()`` (Python control flow) on a batched tensor, a batched
        value written in place into a tensor that is not batched, a random op with ``randomness="error"``.
    """
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _check_randomness(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _check_out_dims(out_dims, func) -> None:
    if isinstance(out_dims, int):
        return
    leaves, _ = tree_flatten(out_dims)
    for x in leaves:
        if not (isinstance(x, int) or x is None):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                "collection of ints representing where in the outputs the vmapped dimension should appear."
            )


def _process_inputs(in_dims, args, func):
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a (potentially "
            f"nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to "
            "vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = broadcast_prefix(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure "
            f"of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has structure {args_spec}."
        )
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                "in_dim must be either an integer dimension or None."
            )
        if isinstance(in_dim, int) and not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but the "
                f"input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use None as the "
                "respective in_dim"
            )
        if in_dim is not None:
            nd = arg.dim()
            if in_dim < -nd or in_dim >= nd:
                raise ValueError(
                    f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some input, "
                    f"but that input is a Tensor of dimensionality {nd} so expected in_dim to satisfy "
                    f"-{nd} <= in_dim < {nd}."
                )
            if in_dim < 0:
                flat_in_dims[i] = in_dim % nd
    return _batch_size(flat_in_dims, flat_args), flat_in_dims, flat_args, args_spec


def _batch_size(flat_in_dims, flat_args) -> int:
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return sizes[0]


def _vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    _check_out_dims(out_dims, func)
    size, flat_in_dims, flat_args, args_spec = _process_inputs(in_dims, args, func)
    if chunk_size is not None:
        return _chunked(func, size, flat_in_dims, flat_args, args_spec, out_dims, randomness, chunk_size, kwargs)
    return _flat_vmap(func, size, flat_in_dims, flat_args, args_spec, out_dims, randomness, kwargs)


def _flat_vmap(func, size, flat_in_dims, flat_args, args_spec, out_dims, randomness, kwargs):
    layer = _batched.push("vmap", size, randomness)
    try:
        inputs = [a if d is None else _batched.wrap(a, d, layer.level) for a, d in zip(flat_args, flat_in_dims)]
        outputs = func(*tree_unflatten(inputs, args_spec), **kwargs)
        return _unwrap_outputs(outputs, out_dims, layer, func)
    finally:
        _batched.pop(layer)


def _unwrap_outputs(outputs, out_dims, layer, func):
    flat, spec = tree_flatten(outputs)

    def incompatible():
        return ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
            f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has "
            f"structure {spec}."
        )

    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_out_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_out_dims = list(out_dims)
        else:
            raise incompatible()
    else:
        flat_out_dims = broadcast_prefix(out_dims, spec)
        if flat_out_dims is None:
            raise incompatible()
    name = _name(func)
    return tree_unflatten([_unwrap_output(o, d, layer, name) for o, d in zip(flat, flat_out_dims)], spec)


def _batched_at(t, level) -> bool:
    while t.__class__ is BatchedTensor:
        if t._level == level:
            return True
        t = t._value
    return False


def _unwrap_output(o, out_dim, layer, name):
    if out_dim is None:
        if isinstance(o, Tensor) and _batched_at(o, layer.level):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return o
    if not isinstance(o, Tensor):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you mean to set "
            "out_dims= to None for output?"
        )
    return _batched.unwrap_level(o, layer.level, out_dim)


def _chunked(func, size, flat_in_dims, flat_args, args_spec, out_dims, randomness, chunk_size, kwargs):
    bounds = list(range(0, size, chunk_size)) + [size]
    state = _random.default_generator.get_state() if randomness == "same" else None
    results = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        chunk = [a if d is None else a.narrow(d, lo, hi - lo) for a, d in zip(flat_args, flat_in_dims)]
        if state is not None:  # every chunk draws the same numbers, as one vmap would
            _random.default_generator.set_state(state)
        results.append(_flat_vmap(func, hi - lo, flat_in_dims, chunk, args_spec, out_dims, randomness, kwargs))
    flats = [tree_flatten(r) for r in results]
    spec = flats[0][1]
    flat_out_dims = [out_dims] if isinstance(results[0], Tensor) else broadcast_prefix(out_dims, spec)
    merged = [
        cat([f[0][k] for f in flats], dim=d) if d is not None else flats[0][0][k] for k, d in enumerate(flat_out_dims)
    ]
    return tree_unflatten(merged, spec)
