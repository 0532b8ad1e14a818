"""``Optimizer``: the base class of ``SGD`` and ``Adam``, as ``torch.optim.Optimizer``.

An optimizer holds *leaves*: the tensors whose ``.grad`` backward fills.
``step()`` changes them in place, outside the graph (as under ``no_grad``),
so they stay leaves that require grad; a parameter whose ``.grad`` is None
(it got no gradient) is skipped.  ``zero_grad()`` sets every ``.grad`` back
to None (PyTorch's default since 2.0) or to zeros.
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict

import numpy as np

from .. import _dtype
from .._functions._base import _FP_STATE, _QUIET, broadcast_shapes
from .._tensor import Tensor
from ..autograd.grad_mode import _set, _state, enable_grad

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a hyper-parameter without a default (PyTorch's ``required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return obj._type_string()
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


class Optimizer:
    """Base class of optimizers (``torch.optim.Optimizer``).

    Parameters
    ----------
    params : iterable of Tensor, or iterable of dict
        The leaves to optimise (``model.parameters()``), or parameter groups:
        dicts with a ``"params"`` entry and per-group hyper-parameters.
    defaults : dict
        Hyper-parameters for groups that do not set them.

    Attributes
    ----------
    param_groups : list of dict
        One dict per group: ``"params"`` (a list of tensors) and every
        hyper-parameter (``"lr"``, ...).  Change ``group["lr"]`` to change
        the learning rate.
    state : dict
        Per-parameter state (``"momentum_buffer"``, ``"exp_avg"`` ...),
        keyed by the parameter tensor.

    Raises
    ------
    TypeError
        ``params`` is a single Tensor ("params argument given to the
        optimizer should be an iterable of Tensors or dicts, but got
        torch.FloatTensor"), or holds something that is not a Tensor.
    ValueError
        An empty parameter list ("optimizer got an empty parameter list"); a
        non-leaf tensor ("can't optimize a non-leaf Tensor"); a parameter in
        two groups.
    """

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                f"got {_typename(params)}"
            )
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (e.g. unfreezing layers while training).

        Raises
        ------
        TypeError, ValueError
            As for the constructor; also a missing required hyper-parameter.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of "
                "tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
            param_group["params"] = [p[1] for p in param_group["params"]]
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        ps = param_group["params"]
        if len({id(p) for p in ps}) != len(ps):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                "an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in ps):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to None (default), or to zeros in place (``set_to_none=False``)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """Update every parameter that has a ``.grad``; returns ``closure()``'s loss when a closure is given.

        The closure (re-evaluate the model, call backward, return the loss)
        runs with grad mode on; the update itself runs as under ``no_grad``.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        # what ``with no_grad(), np.errstate(all="ignore"):`` does (inf/nan gradients give inf/nan parameters,
        # silently, as in PyTorch), without the two context managers' Python calls: this runs once per step
        prev = _state.grad
        _set(False)
        token = _quiet_on()
        try:
            for group in self.param_groups:
                self._update_group(group)
        finally:
            _quiet_off(token)
            _set(prev)
        return loss

    def _update_group(self, group: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- saving and loading ---------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}`` as in PyTorch.

        Parameters are named by their position across groups; the state
        tensors are the optimizer's own (not copies).
        """
        index = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {index[id(p)]: v for p, v in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyper-parameters and state saved by :meth:`state_dict`, as PyTorch does.

        The parameter groups are deep-copied from ``state_dict`` (keeping this optimizer's parameters).  Each
        parameter's state is a new dict whose tensors follow the parameter: ``value.to(dtype=p.dtype,
        device=p.device)`` for a floating-point parameter (``.to(device=p.device)`` otherwise), so a tensor
        that already has that dtype and device is *shared* with ``state_dict``, not copied; ``"step"`` is kept
        as it is (not cast, PyTorch issue 74424), unless the group is ``fused`` or ``capturable`` (then a
        float32 tensor on the parameter's device).  Lists and tuples in the state are rebuilt element by element;
        state for a key that names no parameter is kept under that key.

        Raises
        ------
        ValueError
            "loaded state dict has a different number of parameter groups"; "loaded state dict contains a
            parameter group that doesn't match the size of optimizer's group".
        """
        state_dict = dict(state_dict)  # shallow copy, as PyTorch
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for idx, p in zip(s["params"], g["params"]):
                id_map[idx] = p
        state = defaultdict(dict)
        for idx, st in state_dict["state"].items():
            if idx in id_map:
                p = id_map[idx]
                state[p] = _cast_state(p, st, idx, state_dict["param_groups"])
            else:
                state[idx] = st
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.__setstate__({"state": state, "param_groups": new_groups})

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"


def _cast_state(param, value, param_id, param_groups, key=None):
    """A parameter's loaded state, cast as PyTorch's ``Optimizer.load_state_dict`` casts it (see there)."""
    if isinstance(value, Tensor):
        if key == "step":
            for g in param_groups:
                if param_id in g["params"]:
                    if g.get("fused") or g.get("capturable"):
                        return value.to(dtype=_dtype.float32, device=param.device)
                    break
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, param_id, param_groups, key=k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, param_id, param_groups) for v in value)
    return value


if _FP_STATE is not None:  # NumPy 2: its floating-point state is a context variable, set and reset directly

    def _quiet_on():
        return _FP_STATE.set(_QUIET)

    def _quiet_off(token) -> None:
        _FP_STATE.reset(token)

else:  # NumPy 1.x

    def _quiet_on():
        ctx = np.errstate(all="ignore")
        ctx.__enter__()
        return ctx

    def _quiet_off(ctx) -> None:
        ctx.__exit__(None, None, None)


def _shape_str(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def check_inplace(out, *operands) -> None:
    """PyTorch's checks of an in-place update ``out.op_(*operands)`` on arrays, before NumPy runs it.

    The operands broadcast together with ``out`` (PyTorch's RuntimeError "The size of tensor a (3) must match the
    size of tensor b (2) at non-singleton dimension 0", ``a`` being the shape so far), to exactly ``out``'s shape
    ("output with shape [2] doesn't match the broadcast shape [2, 2]"); a floating result cannot be written into
    an integer or bool ``out`` ("result type Float can't be cast to the desired output type Long").  Optimizers
    call it for every in-place step of their update, in PyTorch's order, so a state tensor of the wrong shape
    or dtype (a state dict of another model) raises PyTorch's error instead of a NumPy one.
    """
    shape = out.shape
    full = shape
    for o in operands:
        s = getattr(o, "shape", ())
        if s != full:
            full = broadcast_shapes(full, s)
    if full != shape:
        raise RuntimeError(
            f"output with shape {_shape_str(shape)} doesn't match the broadcast shape {_shape_str(full)}"
        )
    if out.dtype.kind not in "fc":
        floats = [o.dtype for o in operands if getattr(o, "dtype", None) is not None and o.dtype.kind in "fc"]
        result = _dtype.word(max(floats, key=lambda d: d.itemsize)) if floats else _dtype.get_default_dtype().word
        raise RuntimeError(f"result type {result} can't be cast to the desired output type {_dtype.word(out.dtype)}")


def check_lerp(out, end) -> None:
    """PyTorch's checks of ``out.lerp_(end, weight)`` (arrays): the dtypes first ("expected dtype float for `end` but
    got dtype double"), then :func:`check_inplace`."""
    if out.dtype != end.dtype:
        raise RuntimeError(
            f"expected dtype {_dtype.ctype(out.dtype)} for `end` but got dtype {_dtype.ctype(end.dtype)}"
        )
    check_inplace(out, end)


def check_broadcast(a, b) -> None:
    """PyTorch's error when an out-of-place op's operands (arrays) do not broadcast."""
    if a.shape != b.shape:
        broadcast_shapes(a.shape, b.shape)


def check_device(p, *state) -> None:
    """PyTorch's error for a state tensor on another device than its parameter."""
    for t in state:
        if t._device is not p._device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{t._device} and {p._device}!"
            )


def _check_number(name: str, value, low=0.0) -> None:
    if isinstance(value, Tensor):
        value = value.item()
    if not value >= low:
        raise ValueError(f"Invalid {name}: {value}")


def _bump(p: Tensor) -> None:
    """An in-place change of ``p``'s storage: bump the version counter shared by its views."""
    p._version_counter[0] += 1
