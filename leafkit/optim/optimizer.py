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

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad

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
        with no_grad(), np.errstate(all="ignore"):  # inf/nan gradients give inf/nan parameters, silently, as in PyTorch
            for group in self.param_groups:
                self._update_group(group)
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
        """Restore hyper-parameters and state saved by :meth:`state_dict` (state moves to each parameter's device).

        Raises
        ------
        ValueError
            When the number or the sizes of the groups differ.
        """
        state_dict = copy.deepcopy(state_dict)
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
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
        self.state = defaultdict(dict)
        for idx, st in state_dict["state"].items():
            p = id_map.get(idx)
            if p is None:
                continue
            self.state[p] = {k: (v.to(p.device) if isinstance(v, Tensor) and k != "step" else v) for k, v in st.items()}
        for g, s in zip(groups, saved_groups):
            params = g["params"]
            g.clear()
            g.update({k: v for k, v in s.items() if k != "params"})
            g["params"] = params

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


def _check_number(name: str, value, low=0.0) -> None:
    if isinstance(value, Tensor):
        value = value.item()
    if not value >= low:
        raise ValueError(f"Invalid {name}: {value}")


def _bump(p: Tensor) -> None:
    """An in-place change of ``p``'s storage: bump the version counter shared by its views."""
    p._version_counter[0] += 1
