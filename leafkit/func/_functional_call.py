"""A module as a function of its parameters: ``functional_call`` and ``stack_module_state`` (``torch.func``).

``functional_call(model, params, args)`` runs ``model`` with the tensors of
``params`` in place of its own parameters and buffers, and puts its own back
afterwards (also when the call raises).  With :func:`~leafkit.func.grad` and
:func:`~leafkit.func.vmap` this gives per-sample gradients
(``vmap(grad(loss), in_dims=(None, 0, 0))``) and model ensembles
(``stack_module_state`` stacks the parameters of several models, ``vmap`` runs
them together).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._functions import stack
from .._tensor import Tensor

__all__ = ["functional_call", "stack_module_state"]

_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Call ``module`` with the given tensors in place of its parameters and buffers (``torch.func.functional_call``).

    Parameters
    ----------
    module : nn.Module
    parameter_and_buffer_dicts : dict of str to Tensor, or a sequence of such dicts
        Names as ``named_parameters()``/``named_buffers()`` give them (``"0.weight"``); names the module does
        not have are set as attributes for the call.  Several dicts may not share a name.
    args : tuple or any
        The positional arguments (a single non-tuple value is one argument).
    kwargs : dict, optional
    tie_weights : bool
        A tensor the module holds under several names (tied weights) is replaced under all of them.
    strict : bool
        The dicts must name exactly the module's parameters and buffers.

    Returns
    -------
    What ``module(*args, **kwargs)`` returns.  The module's own tensors are back in place afterwards.

    Raises
    ------
    ValueError
        A name in several dicts ("appeared in multiple dictionaries; behavior of functional call is
        ambiguous"), something that is not a dict, different values for tied names ("functional_call got
        multiple values for keys [...], which are tied. Consider using tie_weights=False").
    RuntimeError
        With ``strict``: "Error(s) in reparametrizing for Net:" listing unexpected and missing keys.
    TypeError
        A value that is not a tensor.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        tensors = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    named = _untie(module, tensors) if tie_weights else tensors
    if strict:
        _check_keys(module, named)
    originals = _swap_all(module, named)
    try:
        return module(*args, **kwargs)
    finally:
        swapped_back = _swap_all(module, originals)
        tensors.update({k: swapped_back[k] for k in tensors if k in swapped_back})


def _named_tensors(module):
    out = dict(module.named_parameters(remove_duplicate=False))
    out.update(module.named_buffers(remove_duplicate=False))
    return out


def _untie(module, tensors):
    """The given tensors under every name of a tied parameter or buffer (PyTorch's ``_untie_named_tensors_map``)."""
    names_of = {}
    for name, t in _named_tensors(module).items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given = [n for n in tensors if n in tied]
    for name in given:
        names = tied[name]
        if len(names & set(given)) > 1 and len({id(tensors[n]) for n in names if n in tensors}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, which are tied. Consider using "
                "tie_weights=False"
            )
    out = dict(tensors)
    for name in given:
        for other in tied[name]:
            out[other] = tensors[name]
    return out


def _check_keys(module, tensors) -> None:
    valid = set(_named_tensors(module))
    keys = set(tensors)
    missing, unexpected = sorted(valid - keys), sorted(keys - valid)
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs))


def _swap_all(module, tensors):
    """Put each tensor in place; returns what was there (``_MISSING`` for a name the module did not have). On an
    error the tensors already swapped go back."""
    originals = {}
    try:
        for name, t in tensors.items():
            originals[name] = _swap(module, name, t)
    except Exception:
        for name, t in originals.items():
            _swap(module, name, t)
        raise
    return originals


def _swap(module, name, tensor):
    prefix, _, attr = name.rpartition(".")
    owner = module.get_submodule(prefix)
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    d = owner.__dict__
    for registry in ("_parameters", "_buffers"):
        r = d[registry]
        if attr in r:
            original = r[attr]
            if tensor is _MISSING:
                del r[attr]
            else:
                r[attr] = tensor
            return original
    original = getattr(owner, attr, _MISSING)
    if original is not _MISSING and original is not None and not isinstance(original, Tensor):
        raise TypeError(f"attribute `{attr}`: {original} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        object.__setattr__(owner, attr, tensor)
    elif attr in d:
        del d[attr]
    return original


def stack_module_state(models):
    """The parameters and buffers of several models of one class, stacked along a new first dimension
    (``torch.func.stack_module_state``), for ``vmap`` over ``functional_call``: model ensembling.

    Returns
    -------
    (params, buffers)
        Dicts from names to stacked tensors; stacked parameters that require grad are new leaves that require
        grad (``stack(...).detach().requires_grad_()``), as in PyTorch.

    Raises
    ------
    RuntimeError
        No models, models in different training/eval modes or of different classes, a parameter that requires
        grad in some models only (PyTorch's messages).
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    cls = type(models[0])
    if not all(type(m) is cls for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors, name):
    every = all(t.requires_grad for t in tensors)
    none = all(not t.requires_grad for t in tensors)
    if not every and not none:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(tensors)
    return out.detach().requires_grad_() if every else out
