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

import numpy as np

from .._device import to_device_array
from .._tensor import Tensor
from ..autograd import anomaly_mode
from ..autograd.grad_mode import _state
from ..autograd.graph import RELEASED_MESSAGE, Node, SavedVariable, _sequence, nrs
from . import _namespace

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
        fast = _compile_backward(self)
        if fast is not None:
            attrs["_backward"] = fast
        self.node_cls = type(node, (OpNode,), attrs)
        self.node_name = self.node_cls.name(None) if "name" in attrs else node
        # PyTorch's engine runs a NotImplemented node as soon as it is ready, as it does AccumulateGrad
        self.first = self.node_name == "torch::autograd::NotImplemented"
        self._plans = {}

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
        """Which saved names to save for this combination of inputs that need a gradient (cached).

        As PyTorch's generated code does: an input (and its strides) is saved only when a formula of an input
        that needs a gradient reads it; outputs, attributes, sizes and dtypes are saved always.
        """
        plan = self._plans.get(needs)
        if plan is None:
            used = set()
            for need, f in zip(needs, self.formulas):
                if need and f is not None:
                    used.update(f[1])
            kinds = self.saved_kinds
            plan = tuple(
                k for k in range(len(self.saved_names)) if 2 + k in used or kinds[k][0] not in ("input", "_sym_strides")
            )
            self._plans[needs] = plan
        return plan

    def __repr__(self) -> str:
        return f"<op {self.name}: {self.node_cls.__name__}>"


def _compile_backward(spec):
    """A node ``_backward`` written out for this op (formulas called directly, saved values unpacked once).

    It does what :meth:`OpNode._backward` does, without its loops; ops with grouped formulas or any number
    of inputs keep the general one.
    """
    if spec.variadic or any(f is not None and f[2] is not None for f in spec.formulas):
        return None
    n_saved = len(spec.saved_names)
    lines = [
        "def _backward(self, grads, F):",
        "    saved = self._stash",
        "    if saved is None:",
        "        if self._released and self._had_saved:",
        "            raise RuntimeError(RELEASED_MESSAGE)",
        "        saved = EMPTY",
        "    rec = F.records",
        "    grad = grads[0]",
        "    need = self.needs_input_grad",
    ]
    for k in range(n_saved):
        lines.append(f"    s{k} = saved[{k}]")
        lines.append(f"    if s{k}.__class__ is SV:")
        lines.append(f"        s{k} = s{k}.unpack(self, rec)")
    env = {0: "grad", 1: "grads", **{2 + k: f"s{k}" for k in range(n_saved)}}
    outs = []
    ns = {"SV": SavedVariable, "RELEASED_MESSAGE": RELEASED_MESSAGE, "EMPTY": (None,) * n_saved}
    for j, f in enumerate(spec.formulas):
        if f is None:
            outs.append("None")
            continue
        ns[f"f{j}"] = f[0]
        args = ", ".join(["F"] + [env[i] for i in f[1]])
        outs.append(f"(f{j}({args}) if need[{j}] else None)")
    lines.append(f"    return [{', '.join(outs)}]")
    exec("\n".join(lines), ns)  # noqa: S102 - code built above from the op's own formula list
    fn = ns["_backward"]
    fn.__doc__ = f"The derivative formulas of ``{spec.name}``, run in the namespace ``F``."
    return fn


class OpNode(Node):
    """The node of a registered op; its backward evaluates the op's derivative formulas."""

    __slots__ = ()
    _spec = None

    def _backward(self, grads, F):
        spec = self._spec
        saved = self._stash
        if saved is None:
            if self._released and self._had_saved:
                raise RuntimeError(RELEASED_MESSAGE)
            saved = ()
        as_tensor = F.records
        env = [grads[0], grads]
        for v in saved:
            if v.__class__ is SavedVariable:
                v = v.unpack(self, as_tensor)
            env.append(v)
        needs = self.needs_input_grad
        if spec.variadic:
            fn, ids = spec.formulas[0][:2]
            res = fn(F, *[env[k] for k in ids])
            return [r if need else None for r, need in zip(res, needs)]
        out = []
        group_results = None
        for need, f in zip(needs, spec.formulas):
            if not need or f is None:
                out.append(None)
                continue
            fn, ids, group, k, members = f
            if group is None:
                out.append(fn(F, *[env[j] for j in ids]))
                continue
            if group_results is None:
                group_results = {}
            res = group_results.get(group)
            if res is None:  # one call for every input of the group
                mask = tuple(needs[m] for m in members)
                res = group_results[group] = fn(F, *[env[j] if j >= 0 else mask for j in ids])
            out.append(res[k])
        return out

    def __getattr__(self, item):
        # PyTorch exposes saved values as ``_saved_<name>`` attributes.
        if item.startswith("_saved_"):
            spec = type(self)._spec
            name = item[7:]
            if name in spec.saved_names:
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
        return list(super().__dir__()) + ["_saved_" + n for n in type(self)._spec.saved_names]


def _wrapped_number(v):
    """A Python number saved for backward shows as PyTorch's "wrapped number" tensor (int64 or float64)."""
    dt = np.bool_ if isinstance(v, bool) else (np.int64 if isinstance(v, int) else np.float64)
    return Tensor._make(np.asarray(v, dtype=dt), None)


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


# -- vmap's hook (leafkit.func.vmap; the machinery is in ._batched, which installs ``batched``) ----------------
VMAP_LEVELS: list = []  # the active vmap levels, innermost last; empty outside vmap
batched = None  # ._batched.dispatch(spec, args): the batching rule's result, or NotImplemented without batched inputs


# -- running an op --------------------------------------------------------------------------------------
_CPU = None


def _common_device(dev, d, inputs):
    """PyTorch lets a CPU 0-d tensor (a "scalar tensor") join an op on another device; nothing else mixes."""
    if dev.type == "cpu" or d.type == "cpu":
        other = d if dev.type == "cpu" else dev
        if all(
            a._device is other or (a._device.type == "cpu" and a._data.ndim == 0)
            for a in inputs
            if isinstance(a, Tensor)
        ):
            return other
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {dev} and {d}!")


def _arrays(spec, args):
    """The forward's arguments (tensors unwrapped), the device, and whether any input requires grad."""
    fargs = list(args)
    dev = None
    need = False
    mixed = False
    positions = spec.positions(len(args))
    for i in positions:
        a = args[i]
        if isinstance(a, Tensor):
            if a._base is not None:
                a._fresh()
                if a._invalid and _state.enabled:  # under no_grad such a view may still be read
                    a._raise_invalid()
            d = a._device
            if dev is None:
                dev = d
            elif d is not dev:
                dev = _common_device(dev, d, [args[i] for i in positions])
                mixed = True
            fargs[i] = a._data
            if a._requires_grad:
                need = True
    if mixed:
        for i in positions:
            a = args[i]
            if isinstance(a, Tensor) and a._device is not dev:
                fargs[i] = to_device_array(a._data, a._device, dev)
    return fargs, dev, need


def apply(spec, args):
    """Run ``spec`` on ``args`` (inputs, then attributes): forward on arrays, and a node when recording.

    Raises
    ------
    RuntimeError
        "Expected all tensors to be on the same device" for inputs on
        different devices (a CPU 0-d tensor may join a cuda op); PyTorch's
        inference-tensor and "is not differentiable" errors; and whatever
        the forward raises (shapes, dtypes), with PyTorch's messages.
    """
    if spec.simple:  # the common case, without the general bookkeeping: plain tensors on one device, or numbers
        a = args[0]
        if a.__class__ is Tensor and a._base is None:
            if spec.n_in == 1:
                need = a._requires_grad
                out = spec.forward(a._data, *args[1:])
            else:
                b = args[1]
                cb = b.__class__
                if cb is Tensor:
                    if b._base is not None or b._device is not a._device:
                        return _apply(spec, args)
                    need = a._requires_grad or b._requires_grad
                    if need and (a._inference or b._inference) and _state.enabled:
                        _check_saved_inputs(spec, args)
                    out = spec.forward(a._data, b._data, *args[2:])
                elif cb is float or cb is int:
                    need = a._requires_grad
                    out = spec.forward(a._data, b, *args[2:])
                else:
                    return _apply(spec, args)
            if need and _state.enabled:
                return _record_simple(spec, args, out, a._device)
            r = Tensor._make(out, a._device)
            if need:
                r._created_in_no_grad = True
            if _state.inference:
                r._inference = True
            return r
    return _apply(spec, args)


def _apply(spec, args):
    if VMAP_LEVELS:  # inside vmap: batched inputs go to the op's batching rule
        out = batched(spec, args)
        if out is not NotImplemented:
            return out
    fargs, dev, need = _arrays(spec, args)
    if need and _state.enabled:
        for i in spec.positions(len(args)):
            a = args[i]
            if isinstance(a, Tensor) and a._inference:
                _check_saved_inputs(spec, args)
                break
    out = spec.forward(*fargs)
    if spec.device_from is not None:
        dev = args[spec.device_from]
    if need and _state.enabled:
        return _record(spec, args, out, dev)
    return _plain(spec, args, out, dev, need)


def _check_saved_inputs(spec, args):
    """PyTorch saves a node's inputs before it runs the forward: an inference tensor that would be saved raises
    "Inference tensors cannot be saved for backward" before any error of the forward (shapes, dtypes)."""
    positions = spec.positions(len(args)) if spec.variadic else spec.diff
    needs = tuple(isinstance(args[i], Tensor) and args[i]._requires_grad for i in positions)
    if spec.variadic:
        needs = (any(needs),)
    kinds = spec.saved_kinds
    for k in spec.plan(needs):
        kind, idx = kinds[k]
        if kind == "input":
            for i in spec.positions(len(args)) if idx < 0 else (idx,):
                if isinstance(args[i], Tensor):
                    args[i]._check_can_be_saved()


def _plain(spec, args, out, dev, need):
    make = Tensor._make
    res = tuple(make(o, dev) for o in out) if spec.multi else (make(out, dev),)
    for r in res:
        if need:
            r._created_in_no_grad = True
        if spec.view:
            r._share_view_of(args[0], recorded=False)
        elif _state.inference:
            r._inference = True
    return res if spec.multi else res[0]


_NO_EDGE = (None, 0)
_FIRST = 1 << 62  # AccumulateGrad's place in the ready queue
_NO_META1, _NO_META2 = (None,), (None, None)
_NRS1 = (nrs((0,)), nrs((1,)))
_NEEDS = {True: (True,), False: (False,)}
_NEEDS2 = {(a, b): (a, b) for a in (True, False) for b in (True, False)}


def _new_node(spec, dev):
    cls = spec.node_cls
    node = cls.__new__(cls)
    node._seq = next(_sequence) if not spec.first else _FIRST
    node._stash = None
    node._device = dev
    node._had_saved = False
    node._released = False
    if anomaly_mode._enabled:
        anomaly_mode.record_traceback(node)
    return node


def _record_simple(spec, args, out, dev):
    """:func:`_record` for ``spec.simple`` ops: one output, one or two leading inputs (the first a tensor)."""
    if spec.not_differentiable or len(spec.diff) != spec.n_in:
        return _record(spec, args, out, dev)
    node = _new_node(spec, dev)
    shape, dtype = out.shape, out.dtype
    a = args[0]
    if a._requires_grad:
        fn = a._grad_fn
        ea = (fn, a._output_nr) if fn is not None else (a._get_accumulator(), 0)
        d = a._data
        ma = None if d.shape == shape and d.dtype == dtype else (d.shape, d.dtype)
        na = True
    else:
        ea, ma, na = _NO_EDGE, None, False
    if spec.n_in == 1:
        node._next = (ea[0],)
        node._nrs = _NRS1[ea[1]] if ea[1] < 2 else nrs((ea[1],))
        node._in_meta = _NO_META1 if ma is None else (ma,)
        needs = _NEEDS[na]
    else:
        b = args[1]
        if b.__class__ is Tensor and b._requires_grad:
            fn = b._grad_fn
            eb = (fn, b._output_nr) if fn is not None else (b._get_accumulator(), 0)
            d = b._data
            mb = None if d.shape == shape and d.dtype == dtype else (d.shape, d.dtype)
            nb = True
        else:
            eb, mb, nb = _NO_EDGE, None, False
        node._next = (ea[0], eb[0])
        node._nrs = nrs((ea[1], eb[1]))
        node._in_meta = _NO_META2 if ma is None and mb is None else (ma, mb)
        needs = _NEEDS2[na, nb]
    node.needs_input_grad = needs
    r = Tensor._make(out, dev, node, 0) if dtype.kind in "fc" else Tensor._make(out, dev)
    plan = spec._plans.get(needs)
    if plan is None:
        plan = spec.plan(needs)
    if plan:
        node._stash = _save(spec, node, plan, args, (r,))
    return r


def _record(spec, args, out, dev):
    node = _new_node(spec, dev)
    if spec.multi:
        out_shape = out_dtype = None
    else:
        out_shape, out_dtype = out.shape, out.dtype
    positions = spec.positions(len(args)) if spec.variadic else spec.diff
    n = len(positions)
    nodes = [None] * n
    numbers = [0] * n
    meta = [None] * n
    needs = [False] * n
    for k in range(n):
        a = args[positions[k]]
        cls = a.__class__
        if (cls is Tensor or (cls is not float and cls is not int and isinstance(a, Tensor))) and a._requires_grad:
            fn = a._grad_fn
            if fn is not None:
                nodes[k] = fn
                numbers[k] = a._output_nr
            else:
                nodes[k] = a._get_accumulator()
            d = a._data
            # what the engine checks a gradient against: nothing when it can only have the output's shape
            shape = d.shape
            if shape != out_shape or d.dtype != out_dtype:
                meta[k] = (shape, d.dtype)
            needs[k] = True
    if spec.not_differentiable:
        for i in spec.not_differentiable:
            a = args[i]
            if isinstance(a, Tensor) and a._requires_grad:
                raise RuntimeError(
                    f"The function '{spec.name}' is not differentiable with respect to argument "
                    f"'{spec.inputs[i]}'. This input cannot have requires_grad True."
                )
    node._next = tuple(nodes)
    node._nrs = nrs(tuple(numbers))
    node._in_meta = meta
    needs = tuple(needs)
    node.needs_input_grad = needs
    if spec.variadic:
        needs = (any(needs),)
    make = Tensor._make
    if spec.multi:
        results = []
        nd = spec.nondiff_outputs
        for k, o in enumerate(out):
            if k in nd or o.dtype.kind not in "fc":
                results.append(make(o, dev))
            else:
                results.append(make(o, dev, node, k))
        node._out_meta = [(o.shape, o.dtype) for o in out]
    else:
        results = (make(out, dev, node, 0) if out_dtype.kind in "fc" else make(out, dev),)
    if spec.view:
        base = args[0]
        for r in results:
            r._share_view_of(base, recorded=True)
            if r._grad_fn is None and base._requires_grad:  # an integer view keeps no history
                r._requires_grad = False
    plan = spec._plans.get(needs)
    if plan is None:
        plan = spec.plan(needs)
    if plan:
        node._stash = _save(spec, node, plan, args, results)
    return tuple(results) if spec.multi else results[0]


def _save(spec, node, plan, args, results):
    saved = [None] * len(spec.saved_names)
    had = False
    kinds = spec.saved_kinds
    for k in plan:
        kind, idx = kinds[k]
        if kind == "input":
            a = args[idx]
            cls = a.__class__
            if cls is Tensor or (cls is not float and cls is not int and isinstance(a, Tensor)):
                if a._inference:
                    a._check_can_be_saved()
                saved[k] = SavedVariable(a._data, a._version_counter, a, a._output_nr, a._grad_fn, a._device)
            else:
                saved[k] = a
            had = True
        elif kind == "output":
            r = results[idx]
            # an output with this node as history is saved without the tensor (no cycle); one without (indices)
            # is saved as the tensor itself
            saved[k] = SavedVariable(
                r._data, r._version_counter, r if r._grad_fn is None else None, idx, spec.node_name, r._device
            )
            had = True
        elif kind == "attr":
            saved[k] = args[idx] if idx < len(args) else spec.defaults[idx]
        elif idx < 0:  # sizes of every input of a variadic op
            saved[k] = [args[i]._data.shape for i in spec.positions(len(args))]
        else:  # a size of an input, saved without the input
            a = args[idx]
            arr = a._data if isinstance(a, Tensor) else np.asarray(a)
            if kind == "_sym_sizes":
                saved[k] = arr.shape
            elif kind == "_sym_strides":
                it = arr.itemsize
                saved[k] = tuple([st // it for st in arr.strides])
            elif kind == "_sym_numel":
                saved[k] = int(arr.size)
            else:
                saved[k] = arr.dtype
    node._had_saved = had
    return tuple(saved)
