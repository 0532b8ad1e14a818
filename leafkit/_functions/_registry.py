"""The operation registry: one entry per differentiable operation, and everything made from it.

An entry is a call to :func:`defop`, in the spirit of PyTorch's
``derivatives.yaml``::

    defop("sin", lambda self: xp_sin(self),
          self=lambda F, grad, self: grad * F.cos(self))

gives the forward (on NumPy/CuPy arrays) and one derivative formula per
differentiable input.  A formula's parameters say what it needs, by name:

``grad`` / ``grads``
    the gradient of the (first) output / of every output;
an input's name (``self``, ``other`` ...)
    that input, saved for backward (``_saved_self`` on the node);
an output's name (``result`` by default)
    the output, saved for backward (``_saved_result``);
an attribute's name (``dim``, ``keepdim`` ...)
    a non-tensor argument of the forward;
``<input>_sym_sizes``, ``<input>_sym_strides``, ``<input>_sym_numel``, ``<input>_scalar_type``
    an input's shape, strides (in elements), size or dtype, saved without the input itself.

Only what the formulas of the inputs that need a gradient use is saved, as
in PyTorch.  Formulas run in a namespace ``F`` (see :mod:`._namespace`): on
arrays in a plain backward pass, and on tensors when the pass is recorded
(``create_graph=True``), so one formula gives first and higher derivatives.
Every op is also available in both namespaces under its name (``F.cos``),
so a formula may call any op, including the ``*_backward`` ops whose own
derivatives give second derivatives (``F.tanh_backward``).

From an entry come: the node class (``SinBackward0``, named as PyTorch names
it), the ``Tensor`` method, the in-place method, the ``torch.*`` function,
and the rows of the gradcheck, gradgradcheck and parity suites
(``tests/op_db.py``).
"""

from __future__ import annotations

import inspect
import itertools

from .._tensor import Tensor
from . import _namespace
from ._base import VMAP_LEVELS, OpNode, _arrays, apply  # noqa: F401  (how an op runs; the op families import them from here)

__all__ = ["defop", "apply", "OpSpec", "OpNode", "SPECS", "public", "PUBLIC"]

SPECS: dict = {}  # op name -> OpSpec
PUBLIC: dict = {}  # public name -> (function, where): method / function / inplace, for docs and tests

_SIZE_SUFFIXES = ("_sym_sizes", "_sym_strides", "_sym_numel", "_scalar_type")


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_"))


class OpSpec:
    """Everything known about one differentiable operation (built by :func:`defop`)."""

    def __init__(
        self, name, forward, node, inputs, outputs, nondiff, not_differentiable, view, nondiff_outputs, formulas, doc
    ):
        self.name = name
        self.forward = forward
        sig = inspect.signature(forward).parameters
        params = [p for p in sig if sig[p].kind != inspect.Parameter.VAR_POSITIONAL]
        var = [p for p in sig if sig[p].kind == inspect.Parameter.VAR_POSITIONAL]
        self.params = list(sig)
        self.defaults = [sig[p].default for p in self.params]
        self.variadic = bool(var)  # ``forward(dim, *tensors)``: any number of tensor inputs after the attributes
        if self.variadic:
            self.inputs = tuple(var)
            self.attrs = tuple(params)
            self.n_lead = len(params)
        else:
            self.inputs = tuple(inputs) if inputs is not None else tuple(params[:1])
            if list(self.inputs) != params[: len(self.inputs)]:
                raise TypeError(f"{name}: the inputs must be the forward's first parameters")
            self.attrs = tuple(p for p in params if p not in self.inputs)
            self.n_lead = 0
        self.n_in = len(self.inputs)
        self.var_outputs = outputs == "*"  # as many outputs as the forward returns (``unbind``)
        self.outputs = ("result",) if self.var_outputs else tuple(outputs)
        self.multi = self.var_outputs or len(self.outputs) > 1
        self.view = view
        self.nondiff_outputs = frozenset(self.outputs.index(o) for o in nondiff_outputs)
        self.not_differentiable = tuple(self.inputs.index(n) for n in not_differentiable)
        skip = set(nondiff) | set(not_differentiable)
        self.diff = tuple(i for i, n in enumerate(self.inputs) if n not in skip)  # the node's next_functions
        self.doc = doc
        # the formulas and the names they read; a formula may serve several inputs ("input, weight, bias"),
        # as in derivatives.yaml: it is called once and returns one gradient per input of its group
        groups = {}
        for key in formulas:
            members = [n.strip() for n in key.split(",")]
            for k, n in enumerate(members):
                groups[n] = (key, k, members)
        self.formulas = []
        names = []
        for i in self.diff:
            g = groups.get(self.inputs[i])
            if g is None:
                self.formulas.append(None)
                continue
            key, k, members = g
            f = formulas[key]
            fp = list(inspect.signature(f).parameters)
            if fp[:1] != ["F"]:
                raise TypeError(f"{name}: a derivative formula's first parameter is the namespace F")
            for p in fp[1:]:
                if p not in ("grad", "grads", "grad_input_mask") and p not in names:
                    self._kind(p)  # raises for an unknown name
                    names.append(p)
            member_pos = tuple(self.diff.index(self.inputs.index(n)) for n in members) if len(members) > 1 else None
            self.formulas.append((f, fp[1:], key if member_pos else None, k, member_pos))
        unknown = set(groups) - {self.inputs[i] for i in self.diff}
        if unknown:
            raise TypeError(f"{name}: formulas for {sorted(unknown)}, which are not differentiable inputs")
        self.saved_names = tuple(names)
        self.saved_kinds = tuple(self._kind(p) for p in names)
        # formula arguments as indices into [grad, grads, *saved values]; -1 is the group's grad_input_mask
        env_index = {"grad": 0, "grads": 1, "grad_input_mask": -1, **{p: 2 + k for k, p in enumerate(names)}}
        self.formulas = [
            None if f is None else (f[0], tuple(env_index[p] for p in f[1]), *f[2:]) for f in self.formulas
        ]
        attrs = {"__slots__": (), "_spec": self, "__module__": "leafkit.autograd", "__doc__": doc}
        if "::" in node:  # a qualified name (torch::autograd::CopyBackwards): the class takes the last part
            attrs["name"] = lambda node_self, _n=node: _n
            node = node.rsplit("::", 1)[1]
        self.node_cls = type(node, (OpNode,), attrs)
        self.node_name = self.node_cls.name(None) if "name" in attrs else node
        # PyTorch's engine runs a NotImplemented node as soon as it is ready, as it does AccumulateGrad
        self.first = self.node_name == "torch::autograd::NotImplemented"
        self.grouped = any(f is not None and f[2] is not None for f in self.formulas)  # one formula, many inputs
        # what to save, for every combination of inputs that need a gradient (a variadic op: any or none)
        combos = [(True,), (False,)] if self.variadic else itertools.product((True, False), repeat=len(self.diff))
        self.plans = {needs: self._plan(needs) for needs in combos}

    def positions(self, n_args):
        """Where the tensor inputs are among ``n_args`` positional arguments."""
        return range(self.n_lead, n_args) if self.variadic else range(self.n_in)

    def _kind(self, p):
        if p in self.inputs:
            return ("input", -1 if self.variadic else self.inputs.index(p))
        if p in self.outputs:
            return ("output", self.outputs.index(p))
        if p in self.attrs:
            return ("attr", self.params.index(p))
        for suffix in _SIZE_SUFFIXES:
            if p.endswith(suffix) and p[: -len(suffix)] in self.inputs:
                return (suffix, -1 if self.variadic else self.inputs.index(p[: -len(suffix)]))
        raise TypeError(f"{self.name}: a derivative formula reads {p!r}, which is no input, output or attribute")

    def plan(self, needs):
        """Which saved names to save (their indices) when the inputs that need a gradient are ``needs``."""
        return self.plans[tuple(needs)]

    def _plan(self, needs):
        """As PyTorch's generated code does: an input (and its strides) is saved only when a formula of an input
        that needs a gradient reads it; outputs, attributes, sizes and dtypes are saved always."""
        used = set()
        for need, f in zip(needs, self.formulas):
            if need and f is not None:
                used.update(f[1])
        kinds = self.saved_kinds
        return tuple(
            k for k in range(len(self.saved_names)) if 2 + k in used or kinds[k][0] not in ("input", "_sym_strides")
        )

    def __repr__(self) -> str:
        return f"<op {self.name}: {self.node_cls.__name__}>"


def defop(
    name,
    forward,
    *,
    node=None,
    inputs=None,
    outputs=("result",),
    nondiff=(),
    not_differentiable=(),
    view=False,
    nondiff_outputs=(),
    device_from=None,
    doc=None,
    batch=None,
    **formulas,
):
    """Register one differentiable operation (see the module docstring).

    Parameters
    ----------
    name : str
        The op's name, as ATen names it (``"mul"``, ``"_softmax_backward_data"``);
        formulas call it as ``F.<name>``.
    forward : callable
        ``forward(*inputs, *attrs)`` on arrays (inputs may also be Python
        numbers): returns an array, or a tuple of arrays for several outputs.
        Its parameter names are the names formulas use.
    node : str, optional
        The node class name; default ``<Name>Backward0``.
    inputs : tuple of str, optional
        The tensor (or number) parameters; default the first parameter.
    outputs : tuple of str
        Names of the outputs (``("values", "indices")`` for ``max(dim)``).
    nondiff : tuple of str
        Inputs that are tensors but never differentiated (``where``'s
        condition): no ``next_functions`` entry, but they may be saved.
    not_differentiable : tuple of str
        Inputs that may not require grad at all (PyTorch raises "is not
        differentiable with respect to argument").
    view : bool
        The output shares the first input's storage.
    nondiff_outputs : tuple of str
        Outputs that never get a ``grad_fn`` (indices).
    device_from : str, optional
        The attribute that names the output's device (a copy to another device).
    batch : callable, optional
        The op's batching rule for ``vmap``: ``batch(spec, args, level)`` runs the op on batched inputs
        (see :mod:`._batched`); without one, ``vmap`` runs the op once per sample.
    **formulas
        One derivative formula per differentiable input, by input name.

    Returns
    -------
    OpSpec
    """
    if name in SPECS:
        raise ValueError(f"op {name!r} is registered twice")
    spec = OpSpec(
        name,
        forward,
        node or f"{_camel(name)}Backward0",
        inputs,
        outputs,
        nondiff,
        not_differentiable,
        view,
        nondiff_outputs,
        formulas,
        doc,
    )
    spec.device_from = spec.params.index(device_from) if device_from else None
    spec.batch = batch
    # the fast path of apply(): one or two leading inputs, one output, no view, no device change
    spec.simple = (
        not spec.variadic and spec.n_in in (1, 2) and not spec.view and not spec.multi and spec.device_from is None
    )
    SPECS[name] = spec
    _namespace.add_op(spec, apply)  # the namespaces learn the new op (F.<name>)
    return spec


def public(*names, method=True, function=True):
    """Register ``fn`` as ``Tensor.<name>`` and/or ``torch.<name>`` for each of ``names``."""

    def deco(fn):
        for n in names:
            if method:
                setattr(Tensor, n, fn)
            PUBLIC[n] = (fn, method, function)
        return fn

    return deco
