"""The speed-ups: faster versions of the reference path's hot functions, installed when leafkit is imported.

leafkit's reference path is written to be read: :func:`._base.apply`, :func:`._base.record` and
:meth:`._base.OpNode._backward` for the ops, and :mod:`leafkit.autograd.engine` for the pass.  This module does
the same work with less Python, and :func:`install` puts it in their place:

* **recording** (:func:`apply`): one- and two-input ops on plain tensors of one device (``x * y``, ``x + 1``,
  ``x.exp()``) skip the general bookkeeping; every other op is recorded by :func:`_record`, by code written out
  for that op on its first use (:func:`_compile_record`), which builds the node without ``Node.__init__``,
  shares interned tuples, and keeps no input metadata where the engine needs no check (an input with the
  output's shape and dtype);
* **backward code** (:func:`_compile_backward`): each op's node class gets a ``_backward`` written out for that
  op on its first use (its formulas called directly, its saved values unpacked once);
* **the pass** (:func:`backward`, :func:`run_backward`): a loop without the generator and the trace, which
  adds gradients in place into sums it allocated itself and hands such a sum to a leaf's ``.grad`` without a
  copy (the reference engine always makes a new sum and copies); the formulas call the ops' forwards
  without each one's ``np.errstate`` wrapper (:func:`add_op`: the whole pass runs under one).

``BackwardStep`` traces (``autograd.backward_steps``, the BackwardStepper) always run the reference engine.

``LEAFKIT_FAST=0`` in the environment, read once when leafkit is imported, leaves the reference path in place:
the two paths must give the same results, which the gradient suites check under both
(``make test`` runs them a second time with ``LEAFKIT_FAST=0``).
"""

from __future__ import annotations

import heapq
import operator
import os
from functools import partial, update_wrapper

import numpy as np

from .._dtype import DIFFERENTIABLE_KINDS
from .._tensor import Tensor
from ..autograd import anomaly_mode
from ..autograd import engine as _engine
from ..autograd.grad_mode import _state
from ..autograd.graph import (
    RELEASED_MESSAGE,
    RUN_FIRST,
    SAVED_HOOKS,
    AccumulateGrad,
    SavedVariable,
    _sequence,
    api,
    nrs,
)
from . import _base, _namespace, _registry
from ._base import OpNode, _arrays, _check_saved_inputs, _plain

__all__ = ["ENABLED", "install", "install_operators", "installed"]

ENABLED = os.environ.get("LEAFKIT_FAST", "1").strip().lower() not in ("0", "false", "no", "off")
_REFERENCE = {}  # what install() replaced: (module or class, name) -> the reference function


def install() -> None:
    """Put the fast functions in place of the reference ones (once; before the op families import ``apply``)."""
    if _REFERENCE:
        return
    _registry.OpSpec._fast_apply = None  # an op's own recorder (_compile_simple), written on its first use
    for owner, name, fast in (
        (_base, "apply", apply),
        (_registry, "apply", apply),
        (OpNode, "_backward", _compile_on_first_call),
        (_engine, "backward", backward),
        (_engine, "run_backward", run_backward),
        (_namespace, "add_op", add_op),
    ):
        _REFERENCE[owner, name] = getattr(owner, name)
        setattr(owner, name, fast)


def install_operators(specs) -> None:
    """Give ``Tensor``'s arithmetic operators (``specs``: operator name -> op) a short way to their op's recorder
    (:func:`_compile_simple`) for a tensor or Python number on the right; anything else as before."""
    for name, spec in specs.items():
        before = getattr(Tensor, name)
        _REFERENCE[Tensor, name] = before
        setattr(Tensor, name, _operator(spec, before))


def _operator(spec, before):
    if not spec.simple:
        raise ValueError(f"{spec.name} is no op of one or two inputs and one output")
    simple = spec._fast_apply = spec._fast_apply or _compile_simple(spec)

    def op(self, other):
        c = other.__class__
        if c is float or c is Tensor or c is int:
            return simple((self, other))
        return before(self, other)

    return update_wrapper(op, before)


def installed() -> bool:
    """Whether the fast functions are in place (``LEAFKIT_FAST`` was not ``0`` when leafkit was imported)."""
    return bool(_REFERENCE)


# ops the formulas call most, as the arrays' own (NumPy or CuPy) ``.T`` and ``@``: a formula always gives them
# valid arguments (2-D matrices of one dtype), so they need none of the forward's checks
_LEAN = {"t": operator.attrgetter("T"), "mm": operator.matmul}


def add_op(spec, apply) -> None:
    """:func:`._namespace.add_op`, whose array namespace holds the forwards without their ``np.errstate`` wrapper
    (formulas run on arrays only inside a backward pass, which runs under ``np.errstate(all="ignore")`` as a
    whole), and ``t`` and ``mm`` as the arrays' own ``.T`` and ``@``."""
    _REFERENCE[_namespace, "add_op"](spec, apply)
    raw = _LEAN.get(spec.name) or getattr(spec.forward, "__wrapped__", None)
    if raw is not None and getattr(_namespace.array_ns, spec.name, None) is spec.forward:
        setattr(_namespace.array_ns, spec.name, raw)


def _define(lines, ns, spec, kind):
    """The function whose source is ``lines`` (code written above from an op's own inputs, saved names and
    formulas), defined in the namespace ``ns``.  Its frames name a file inside leafkit, so that anomaly mode's
    forward traceback leaves them out as it leaves out leafkit's other frames (and profiles name the op)."""
    code = compile("\n".join(lines), os.path.join(_HERE, f"<{kind} of {spec.name}>"), "exec")
    exec(code, ns)  # noqa: S102 - code built by this module's compilers, from the op's registry entry only
    return ns[lines[0][4 : lines[0].index("(")]]


_HERE = os.path.dirname(os.path.abspath(__file__))
_FP_STATE = _base._FP_STATE  # NumPy's floating-point error state (None: NumPy 1.x, where np.errstate is used)
_QUIET_CODE = _base.quiet(len).__code__  # the code of every _base.quiet wrapper


def _is_quiet(fw) -> bool:
    """Whether ``fw`` is :func:`._base.quiet`'s wrapper, which compiled code may write out around the function it
    wraps.  Another wrapper (the profiler's timer, which sets ``__wrapped__`` too) is called as it is, so that an
    op first run inside a ``profile`` block is still timed."""
    return _FP_STATE is not None and getattr(fw, "__code__", None) is _QUIET_CODE


# -- recording ------------------------------------------------------------------------------------------------------
def apply(spec, args):
    """:func:`._base.apply`, by code written out for the op on its first use: ``spec.simple`` ops by their own
    recorder (:func:`_compile_simple`), other ops with a fixed number of inputs by :func:`_compile_apply`, ops
    with any number of inputs by :func:`_apply`."""
    f = spec._fast_apply
    if f is None:
        f = spec._fast_apply = (
            _compile_simple(spec) if spec.simple else partial(_apply, spec) if spec.variadic else _compile_apply(spec)
        )
    return f(args)


def _apply(spec, args):
    """:func:`._base.apply` for ops with a fixed number of inputs that are plain tensors on one device (or not
    tensors): the arrays unwrapped in one loop; anything else as the reference does it."""
    if _base.VMAP_LEVELS:  # inside torch.func.vmap: batched inputs go to the op's batching rule
        out = _base.batched(spec, args)
        if out is not NotImplemented:
            return out
    if spec.variadic:
        return _apply_general(spec, args)
    fargs = list(args)
    dev = None
    need = inference = False
    for i in range(spec.n_in):
        a = args[i]
        cls = a.__class__
        if cls is float or cls is int or a is None:
            continue
        if cls is not Tensor and not isinstance(a, Tensor):
            continue
        if a._base is not None:
            if a._version_counter[0] != a._attr_version or a._grad_fn.__class__ is _INVALID[0]:
                return _apply_general(spec, args)  # a view to bring up to date (or to refuse): as the reference
            if a._grad_fn is None:
                a._follow_base()  # a view without history requires grad when its base does
        d = a._device
        if dev is None:
            dev = d
        elif d is not dev:
            return _apply_general(spec, args)
        fargs[i] = a._data
        if a._requires_grad:
            need = True
        if a._inference:
            inference = True
    record = need and _state.enabled
    if record and inference:
        _check_saved_inputs(spec, args)
    out = spec.forward(*fargs)
    if spec.device_from is not None:
        dev = args[spec.device_from]
    if record:
        return _record(spec, args, out, dev)
    return _plain(spec, args, out, dev, need)


def _forward_lines(spec, xs):
    """The lines of a written-out apply or recorder that run the forward on the arrays ``xs`` (source text), its
    attributes passed on when given, into ``out``: :func:`._base.quiet`'s wrapper written out, or the forward as it
    is when something else wraps it (the profiler's timer).  The names they read: :func:`_forward_names`."""

    def call(f):
        if len(spec.params) == spec.n_in:
            return f"{f}({xs})"
        return f"{f}({xs}) if len(args) == {spec.n_in} else {f}({xs}, *args[{spec.n_in}:])"

    return [
        "    fw = spec.forward",
        "    if fw is WRAPPED:  # _base.quiet's wrapper, written out",
        "        token = enter(QUIET)",
        "        try:",
        f"            out = {call('RAW')}",
        "        finally:",
        "            leave(token)",
        "    else:",
        f"        out = {call('fw')}",
    ]


def _forward_names(spec) -> dict:
    """The names :func:`_forward_lines` reads, for ``spec``'s forward as it is now."""
    fw = spec.forward
    return {
        "WRAPPED": fw if _is_quiet(fw) else _MISSING,
        "RAW": getattr(fw, "__wrapped__", None),
        "enter": getattr(_FP_STATE, "set", None),
        "leave": getattr(_FP_STATE, "reset", None),
        "QUIET": _base._QUIET,
    }


def _compile_apply(spec):
    """:func:`_apply` written out for one op with a fixed number of inputs: the loop over the inputs unrolled, the
    forward's ``np.errstate`` wrapper written out, and the op's recorder (:func:`_compile_record`) called
    directly."""
    n = spec.n_in
    lines = [
        "def apply_op(args):",
        "    if VMAP:  # inside torch.func.vmap: batched inputs go to the op's batching rule",
        "        out = base.batched(spec, args)",
        "        if out is not NotImplemented:",
        "            return out",
        "    dev = None",
        "    need = inference = False",
    ]
    for i in range(n):
        lines += [
            f"    a = args[{i}]",
            "    c = a.__class__",
            "    if c is T or (c is not float and c is not int and a is not None and isinstance(a, T)):",
            "        if a._base is not None:",
            "            if a._version_counter[0] != a._attr_version or a._grad_fn.__class__ is INVALID[0]:",
            "                return general(spec, args)  # a view to bring up to date (or to refuse)",
            "            if a._grad_fn is None:",
            "                a._follow_base()  # a view without history requires grad when its base does",
            "        d = a._device",
            "        if dev is None:",
            "            dev = d",
            "        elif d is not dev:",
            "            return general(spec, args)",
            f"        x{i} = a._data",
            "        if a._requires_grad:",
            "            need = True",
            "        if a._inference:",
            "            inference = True",
            "    else:",
            f"        x{i} = a",
        ]
    lines += [
        "    record = need and state.enabled",
        "    if record and inference:",
        "        check_saved(spec, args)",
        *_forward_lines(spec, ", ".join(f"x{i}" for i in range(n))),
    ]
    if spec.device_from is not None:
        lines.append(f"    dev = args[{spec.device_from}]")
    lines += [
        "    if record:",
        "        return rec(spec, args, out, dev)",
        "    return plain(spec, args, out, dev, need)",
    ]
    rec = spec.__dict__.get("_fast_record")
    if rec is None:
        rec = spec._fast_record = _compile_record(spec) or _record_any
    ns = {
        "spec": spec,
        "VMAP": _base.VMAP_LEVELS,
        "base": _base,
        "T": Tensor,
        "INVALID": _INVALID,
        "general": _apply_general,
        "state": _state,
        "check_saved": _check_saved_inputs,
        "rec": rec,
        "plain": _plain,
        **_forward_names(spec),
    }
    return _define(lines, ns, spec, "apply")


_INVALID = [None]  # views.Invalid, the grad_fn of a view that may not be used (set by install)
COPY_SLICES = None  # views.CopySlices, whose _release frees its view's node too (set by leafkit._functions)


def _apply_general(spec, args):
    fargs, dev, need = _arrays(spec, args)
    if need and _state.enabled:
        for i in range(spec.n_lead, len(args)) if spec.variadic else range(spec.n_in):
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


_NO_META1, _NO_META2 = (None,), (None, None)
_NRS1 = (nrs((0,)), nrs((1,)))
_NEEDS = {True: (True,), False: (False,)}
_NEEDS2 = {(a, b): (a, b) for a in (True, False) for b in (True, False)}


def _new_node(spec, dev):
    """A node of ``spec``'s class, its fields set directly (what ``Node.__init__`` and :func:`._base.record` set)."""
    cls = spec.node_cls
    node = cls.__new__(cls)
    node._seq = next(_sequence) if not spec.first else RUN_FIRST
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
    cls = spec.node_cls
    node = cls.__new__(cls)  # what _new_node does, written out
    node._seq = next(_sequence) if not spec.first else RUN_FIRST
    node._stash = None
    node._device = dev
    node._had_saved = node._released = False
    if anomaly_mode._enabled:
        anomaly_mode.record_traceback(node)
    shape, dtype = out.shape, out.dtype
    a = args[0]
    b = args[1] if spec.n_in == 2 else None
    if a._data.dtype != dtype or (b.__class__ is Tensor and b._data.dtype != dtype):
        shape = None  # inputs of mixed dtypes: every gradient cast back to its input's dtype (_in_meta)
    if a._requires_grad:
        fn = a._grad_fn
        if fn is None:
            ea, na_nr = a._get_accumulator(), 0
        else:
            ea, na_nr = fn, a._output_nr
        d = a._data
        ma = None if d.shape == shape and d.dtype == dtype else (d.shape, d.dtype)
        na = True
    else:
        ea, na_nr, ma, na = None, 0, None, False
    if spec.n_in == 1:
        node._next = (ea,)
        node._nrs = _NRS1[na_nr] if na_nr < 2 else nrs((na_nr,))
        node._in_meta = _NO_META1 if ma is None else (ma,)
        needs = _NEEDS[na]
    else:
        if b.__class__ is Tensor and b._requires_grad:
            fn = b._grad_fn
            if fn is None:
                eb, nb_nr = b._get_accumulator(), 0
            else:
                eb, nb_nr = fn, b._output_nr
            d = b._data
            mb = None if d.shape == shape and d.dtype == dtype else (d.shape, d.dtype)
            nb = True
        else:
            eb, nb_nr, mb, nb = None, 0, None, False
        node._next = (ea, eb)
        node._nrs = _NRS00 if na_nr == 0 and nb_nr == 0 else nrs((na_nr, nb_nr))
        node._in_meta = _NO_META2 if ma is None and mb is None else (ma, mb)
        needs = _NEEDS2[na, nb]
    node.needs_input_grad = needs
    r = Tensor._make(out, dev, node, 0) if dtype.kind in DIFFERENTIABLE_KINDS else Tensor._make(out, dev)
    savers = spec.__dict__.get("_fast_savers")
    if savers is None:
        savers = spec._fast_savers = {}
    saver = savers.get(needs, _MISSING)
    if saver is _MISSING:
        plan = spec.plans[needs]
        saver = savers[needs] = _compile_save(spec, plan) if plan else None
    if saver is not None:
        node._stash = saver(node, args, (r,))
    return r


_NRS00 = nrs((0, 0))
_MISSING = object()


def _compile_simple(spec):
    """The short way for one op (``spec.simple``: one output, one or two leading inputs, the first a tensor),
    written out for that op: the inputs unwrapped, the forward run (its ``np.errstate`` wrapper written out too),
    the node and the result tensor built, and the values to save handed to the op's saver for what needs a
    gradient (:func:`_compile_save`), with no call between.  Anything rarer (a view, another tensor class, two
    devices, a result that is not a NumPy array) goes the general way (:func:`_apply`)."""
    two = spec.n_in == 2
    lines = _simple_forward(spec, two)
    if spec.not_differentiable or len(spec.diff) != spec.n_in:  # an input without a gradient edge: recorded
        lines.append("    return record(spec, args, out, dev)")  # the general way
        return _exec_simple(spec, lines, {})
    lines += _simple_node(two, spec.first)

    def saver(needs):
        plan = spec.plans[needs]
        return _compile_save(spec, plan) if plan else None

    if two:
        ns = dict(TT=(True, True), TF=(True, False), FT=(False, True))
        ns.update(S_TT=saver((True, True)), S_TF=saver((True, False)), S_FT=saver((False, True)))
    else:
        ns = dict(T1=(True,), S_T=saver((True,)))
    return _exec_simple(spec, lines, ns)


def _simple_forward(spec, two):
    """:func:`_compile_simple`'s first part: the inputs checked and unwrapped, the forward run, and the result
    tensor, returned as it is when nothing is recorded."""
    lines = [
        "def simple(args):",
        "    a = args[0]",
        "    if a.__class__ is not T or a._base is not None:",
        "        return general(spec, args)",
    ]
    if two:
        lines += [
            "    b = args[1]",
            "    cb = b.__class__",
            "    if cb is T:",
            "        if b._base is not None or b._device is not a._device:",
            "            return general(spec, args)",
            "        qa = a._requires_grad",
            "        qb = b._requires_grad",
            "        if (qa or qb) and (a._inference or b._inference) and state.enabled:",
            "            check_saved(spec, args)",
            "        x, y = a._data, b._data",
            "    elif cb is float or cb is int:",
            "        qa = a._requires_grad",
            "        qb = False",
            "        x, y = a._data, b",
            "    else:",
            "        return general(spec, args)",
            "    need = qa or qb",
        ]
    else:
        lines += ["    qa = need = a._requires_grad", "    x = a._data"]
    return lines + [
        *_forward_lines(spec, "x, y" if two else "x"),
        "    dev = a._device",
        "    if out.__class__ is not ND:",
        "        return finish(spec, args, out, dev, need)",
        "    r = new(T)",
        "    r._data = out",
        "    r._device = dev",
        "    r._version_counter = [0]",
        "    r._output_nr = 0",
        "    if not need or not state.enabled:",
        "        r._grad_fn = None",
        "        r._requires_grad = False",
        "        if need:",
        "            r._created_in_no_grad = True",
        "        if state.inference:",
        "            r._inference = True",
        "        return r",
    ]


def _simple_node(two, first):
    """:func:`_compile_simple`'s second part: the node (what :func:`_record_simple` builds) and the saved values."""

    def edge(t, e, n, m):  # the gradient edge of input t (e, n) and what its gradient is checked against (m)
        return [
            f"        fn = {t}._grad_fn",
            "        if fn is None:",
            f"            {e} = {t}._get_accumulator()",
            f"            {n} = 0",
            "        else:",
            f"            {e} = fn",
            f"            {n} = {t}._output_nr",
            f"        d = {t}._data",
            f"        {m} = None if d.shape == shape and d.dtype == dtype else (d.shape, d.dtype)",
        ]

    lines = [
        "    dtype = out.dtype",
        "    if dtype.kind not in KINDS:",
        "        return finish(spec, args, out, dev, need)",
        "    node = new(cls)",
        f"    node._seq = {'RUN_FIRST' if first else 'next(sequence)'}",
        "    node._stash = None",
        "    node._device = dev",
        "    node._had_saved = node._released = False",
        "    if anomaly._enabled:",
        "        anomaly.record_traceback(node)",
        "    shape = out.shape",
        # inputs of mixed dtypes: every gradient cast back to its input's dtype (_in_meta)
        f"    if x.dtype != dtype{' or (cb is T and y.dtype != dtype)' if two else ''}:",
        "        shape = None",
        "    if qa:",
        *edge("a", "ea", "na", "ma"),
        "    else:",
        "        ea = ma = None",
        "        na = 0",
    ]
    if two:
        lines += [
            "    if qb:",
            *edge("b", "eb", "nb", "mb"),
            "        needs, saver = (TT, S_TT) if qa else (FT, S_FT)",
            "    else:",
            "        eb = mb = None",
            "        nb = 0",
            "        needs, saver = TF, S_TF",
            "    node._next = (ea, eb)",
            "    node._nrs = NRS00 if na == 0 and nb == 0 else nrs((na, nb))",
            "    node._in_meta = NO_META2 if ma is None and mb is None else (ma, mb)",
        ]
    else:
        lines += [
            "    needs, saver = T1, S_T",
            "    node._next = (ea,)",
            "    node._nrs = NRS1[na] if na < 2 else nrs((na,))",
            "    node._in_meta = NO_META1 if ma is None else (ma,)",
        ]
    return lines + [
        "    node.needs_input_grad = needs",
        "    r._grad_fn = node",
        "    r._requires_grad = True",
        "    if saver is not None:",
        "        node._stash = saver(node, args, (r,))",
        "    return r",
    ]


def _exec_simple(spec, lines, ns):
    """The function :func:`_compile_simple` wrote for ``spec``, with the names its code reads."""
    ns |= {
        "spec": spec,
        "record": _record,
        "general": _apply,
        "finish": _finish,
        "check_saved": _check_saved_inputs,
        "T": Tensor,
        "ND": np.ndarray,
        "state": _state,
        "new": object.__new__,
        "cls": spec.node_cls,
        "RUN_FIRST": RUN_FIRST,
        "sequence": _sequence,
        "anomaly": anomaly_mode,
        "KINDS": DIFFERENTIABLE_KINDS,
        "nrs": nrs,
        "NRS00": _NRS00,
        "NRS1": _NRS1,
        "NO_META1": _NO_META1,
        "NO_META2": _NO_META2,
        **_forward_names(spec),
    }
    return _define(lines, ns, spec, "recorder")


def _finish(spec, args, out, dev, need):
    """The end of a compiled recorder (:func:`_compile_simple`) for a result it leaves to the general code (not a
    NumPy array, or of a dtype without gradients)."""
    if need and _state.enabled:
        return _record_simple(spec, args, out, dev)
    r = Tensor._make(out, dev)
    if need:
        r._created_in_no_grad = True
    if _state.inference:
        r._inference = True
    return r


def _record(spec, args, out, dev):
    """:func:`._base.record`: by a recorder written out for the op (:func:`_compile_record`) when it has a fixed
    number of inputs and one output, else by :func:`_record_any`."""
    rec = spec.__dict__.get("_fast_record")
    if rec is None:
        rec = spec._fast_record = _compile_record(spec) or _record_any
    return rec(spec, args, out, dev)


def _compile_record(spec):
    """A recorder written out for one op with a fixed number of inputs and of outputs: what :func:`_record_any`
    does, its loops over the inputs and outputs unrolled (``None`` for any other op)."""
    if spec.variadic or spec.var_outputs:
        return None
    lines = [
        "def record(spec, args, out, dev):",
        "    node = new(cls)",
        f"    node._seq = {'RUN_FIRST' if spec.first else 'next(sequence)'}",
        "    node._stash = None",
        "    node._device = dev",
        "    node._had_saved = False",
        "    node._released = False",
        "    if anomaly._enabled:",
        "        anomaly.record_traceback(node)",
        "    shape, dtype = (None, None) if multi else (out.shape, out.dtype)",
        "    n_args = len(args)",
    ]
    if not spec.multi:  # inputs of mixed dtypes: every gradient cast back to its input's dtype (_in_meta)
        lines += [
            f"    for a in args[:{spec.n_in}]:",
            "        if isinstance(a, T) and a._data.dtype != dtype:",
            "            shape = None",
            "            break",
        ]
    for k, i in enumerate(spec.diff):
        lines += [
            f"    a = args[{i}] if {i} < n_args else None",
            "    c = a.__class__",
            "    if (c is T or (c is not float and c is not int and isinstance(a, T))) and a._requires_grad:",
            "        fn = a._grad_fn",
            "        if fn is None:",
            f"            e{k} = a._get_accumulator()",
            f"            n{k} = 0",
            "        else:",
            f"            e{k} = fn",
            f"            n{k} = a._output_nr",
            "        d = a._data",
            f"        m{k} = None if d.shape == shape and d.dtype == dtype else (d.shape, d.dtype)",
            f"        q{k} = True",
            "    else:",
            f"        e{k} = m{k} = None",
            f"        n{k} = 0",
            f"        q{k} = False",
        ]
    n = len(spec.diff)
    tup = lambda p: "(" + "".join(f"{p}{k}, " for k in range(n)) + ")"  # noqa: E731
    lines += [
        f"    node._next = {tup('e')}",
        f"    node._nrs = nrs({tup('n')})",
        f"    node._in_meta = {tup('m')}",
        f"    needs = {tup('q')}",
        "    node.needs_input_grad = needs",
    ]
    if spec.not_differentiable:
        lines.append("    check_differentiable(spec, args)")
    if spec.multi:
        for k in range(len(spec.outputs)):
            lines.append(f"    o = out[{k}]")
            if k in spec.nondiff_outputs:
                lines.append(f"    r{k} = make(o, dev)")
            else:
                lines.append(f"    r{k} = make(o, dev, node, {k}) if o.dtype.kind in KINDS else make(o, dev)")
        lines.append("    node._out_meta = [(o.shape, o.dtype) for o in out]")
        results = "(" + "".join(f"r{k}, " for k in range(len(spec.outputs))) + ")"
    else:
        lines.append("    r0 = make(out, dev, node, 0) if dtype.kind in KINDS else make(out, dev)")
        results = "(r0,)"
    lines.append(f"    results = {results}")
    if spec.view:
        lines.append("    share_views(args[0], results)")
    lines += [
        "    saver = savers[needs]",
        "    if saver is not None:",
        "        node._stash = saver(node, args, results)",
        f"    return {'results' if spec.multi else 'r0'}",
    ]
    ns = {
        "new": spec.node_cls.__new__,
        "cls": spec.node_cls,
        "RUN_FIRST": RUN_FIRST,
        "sequence": _sequence,
        "anomaly": anomaly_mode,
        "T": Tensor,
        "nrs": nrs,
        "check_differentiable": _base._check_differentiable,
        "make": Tensor._make,
        "KINDS": DIFFERENTIABLE_KINDS,
        "share_views": _base._share_views,
        "savers": {needs: _saver(spec, plan) if plan else None for needs, plan in spec.plans.items()},
        "multi": spec.multi,
    }
    return _define(lines, ns, spec, "recorder")


def _record_any(spec, args, out, dev):
    """:func:`._base.record`, without the general helpers."""
    node = _new_node(spec, dev)
    if spec.multi:
        out_shape = out_dtype = None
    else:
        out_shape, out_dtype = out.shape, out.dtype
        for a in args[spec.n_lead :] if spec.variadic else args[: spec.n_in]:
            if isinstance(a, Tensor) and a._data.dtype != out_dtype:
                out_shape = None  # inputs of mixed dtypes: every gradient cast back to its input's dtype
                break
    positions = range(spec.n_lead, len(args)) if spec.variadic else spec.diff
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
        _base._check_differentiable(spec, args)
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
            if k in nd or o.dtype.kind not in DIFFERENTIABLE_KINDS:
                results.append(make(o, dev))
            else:
                results.append(make(o, dev, node, k))
        node._out_meta = [(o.shape, o.dtype) for o in out]
    else:
        results = (make(out, dev, node, 0) if out_dtype.kind in DIFFERENTIABLE_KINDS else make(out, dev),)
    if spec.view:
        _base._share_views(args[0], results)
    plan = spec.plans[needs]
    if plan:
        node._stash = _save(spec, node, plan, args, results)
    return tuple(results) if spec.multi else results[0]


def _save(spec, node, plan, args, results):
    """:func:`._base.save`, by a saver written out for this op and plan (:func:`_compile_save`) on its first use."""
    return _saver(spec, plan)(node, args, results)


def _saver(spec, plan):
    """The saver written out for ``spec`` and ``plan`` (:func:`_compile_save`), once per op and plan."""
    savers = spec.__dict__.get("_fast_save")
    if savers is None:
        savers = spec._fast_save = {}
    saver = savers.get(plan)
    if saver is None:
        saver = savers[plan] = _compile_save(spec, plan)
    return saver


def _compile_save(spec, plan):
    """What :func:`._base.save` does for one op and one plan (the saved names the inputs needing a gradient
    read), written out: one line per saved value."""
    lines = ["def save(node, args, results):", "    n_args = len(args)"]
    had = False
    for k in plan:
        kind, i = spec.saved_kinds[k]
        if kind == "attr":
            lines.append(f"    s{k} = args[{i}] if {i} < n_args else defaults[{i}]")
        elif kind == "input" and i >= 0:
            had = True
            lines += [
                f"    a = args[{i}]",
                "    c = a.__class__",
                "    if c is T or (c is not float and c is not int and isinstance(a, T)):",
                "        if a._inference:",
                "            a._check_can_be_saved()",
                *_new_saved(f"s{k}", "a._data", "a", "a._output_nr", "a._grad_fn", "a._device", indent=8),
                "        if HOOKS:",
                f"            s{k}.pack(HOOKS[-1], a)",
                "    else:",
                f"        s{k} = a",
            ]
        elif kind == "output":
            had = True
            lines += [
                f"    r = results[{i}]",
                *_new_saved(f"s{k}", "r._data", "r if r._grad_fn is None else None", str(i), "name", "r._device"),
                "    if HOOKS:",
                f"        s{k}.pack(HOOKS[-1], r)",
            ]
        elif kind in ("_sym_sizes", "_sym_strides") and i >= 0:
            lines += [
                f"    a = args[{i}]",
                "    arr = a._data if isinstance(a, T) else asarray(a)",
                f"    s{k} = arr.shape"
                if kind == "_sym_sizes"
                else f"    s{k} = tuple([st // arr.itemsize for st in arr.strides])",
            ]
        else:  # the rarer kinds (numel, dtype, the sizes of every input of a variadic op): as the reference
            had = had or kind == "input"
            lines.append(f"    s{k} = SAVE[{kind!r}](args, results, {i}, spec, node)")
    if had:
        lines.append("    node._had_saved = True")
    values = ", ".join(f"s{k}" if k in plan else "None" for k in range(len(spec.saved_names)))
    lines.append(f"    return ({values},)")
    ns = {
        "defaults": spec.defaults,
        "T": Tensor,
        "SV": SavedVariable,
        "new": object.__new__,
        "HOOKS": SAVED_HOOKS,
        "name": spec.node_name,
        "asarray": np.asarray,
        "SAVE": _base._SAVE,
        "spec": spec,
    }
    return _define(lines, ns, spec, "saver")


def _new_saved(var, data, tensor, output_nr, producer, device, indent=4):
    """Lines that set ``var`` to ``SavedVariable(data, <its counter>, tensor, output_nr, producer, device)``, built
    without ``__init__`` (``data`` is ``<tensor>._data``; the counter is that tensor's)."""
    pad = " " * indent
    counter = data.replace("._data", "._version_counter")
    return [
        f"{pad}{var} = new(SV)",
        f"{pad}{var}.data = {data}",
        f"{pad}c = {var}.counter = {counter}",
        f"{pad}{var}.version = c[0]",
        f"{pad}{var}.tensor = {tensor}",
        f"{pad}{var}.output_nr = {output_nr}",
        f"{pad}{var}.producer = {producer}",
        f"{pad}{var}.device = {device}",
    ]


# -- backward code --------------------------------------------------------------------------------------------------
def _compile_on_first_call(self, grads, F):
    """``OpNode._backward`` until a node class first runs: gives the class its own written-out ``_backward``."""
    cls = type(self)
    fn = _compile_backward(cls._spec) or _REFERENCE[OpNode, "_backward"]
    cls._backward = fn
    return fn(self, grads, F)


def _compile_backward(spec):
    """A node ``_backward`` written out for this op (formulas called directly, saved values unpacked once).

    It does what :meth:`._base.OpNode._backward` does, without its loops; ops with grouped formulas or any number
    of inputs keep the general one (``None`` here).
    """
    if spec.variadic or spec.grouped:
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
    for k in range(n_saved):  # SavedVariable.unpack's common case written out: an array not changed since saved
        lines += [
            f"    s{k} = saved[{k}]",
            f"    if s{k}.__class__ is SV:",
            f"        c = s{k}.counter",
            f"        if rec or c is None or c[0] != s{k}.version:",
            f"            s{k} = s{k}.unpack(self, rec)",
            "        else:",
            f"            s{k} = s{k}.data",
        ]
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
    fn = _define(lines, ns, spec, "backward")
    fn.__doc__ = f"The derivative formulas of ``{spec.name}``, run in the namespace ``F``."
    return fn


# -- the pass -------------------------------------------------------------------------------------------------------
def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """:func:`leafkit.autograd.engine.backward`, running :func:`run_backward`; ``loss.backward()`` on a plain
    one-element tensor with history goes straight to the pass."""
    if grad_tensors is None and inputs is None and not create_graph and len(tensors) == 1 and _FP_STATE is not None:
        t = tensors[0]
        if t.__class__ is Tensor and t._grad_fn is not None and t._base is None and t._data.size == 1:
            roots = [(t._grad_fn, t._output_nr, np.ones_like(t._data))]  # what root_grads gives for it
            token = _FP_STATE.set(_base._QUIET)  # np.errstate(all="ignore"), as _base.quiet sets it
            try:
                _run_plain(roots, bool(retain_graph), False)
            finally:
                _FP_STATE.reset(token)
            return
    roots = _engine.root_grads(tensors, grad_tensors, bool(create_graph))
    targets = None if inputs is None else _engine._backward_inputs(_engine.as_tuple(inputs))
    if create_graph:
        _engine._warn_cycle()
    with np.errstate(all="ignore"):
        keep_graph = bool(create_graph if retain_graph is None else retain_graph)
        run_backward(roots, keep_graph, bool(create_graph), targets)


class _Pass:
    """The state of one pass (the reference's :class:`~leafkit.autograd.engine.GraphTask`), and the sums it owns:
    arrays the pass itself allocated, which it may add to in place and give to a leaf's ``.grad`` as they are."""

    def __init__(self, roots, keep_graph, create_graph, inputs, capture):
        self.F = api.tensor_ns if create_graph else api.array_ns
        self.keep_graph, self.create_graph, self.capture = keep_graph, create_graph, capture
        self.deps = deps = _engine.dependencies([r[0] for r in roots])
        self.targets = self.needed = None
        if inputs is not None:  # only the nodes that lead to an input of grad()/backward(inputs=) take part
            self.targets = targets = {}
            for k, (node, nr) in enumerate(inputs):
                targets.setdefault(node, []).append((k, nr))
            self.needed = needed = _engine._needed(deps, targets)
            for node in [n for n in deps if n not in needed]:
                del deps[node]
            for node in deps:  # count only the edges between needed nodes
                deps[node] = 0
            for node in deps:
                for nxt in node._next:
                    if nxt is not None and nxt in deps:
                        deps[nxt] += 1
        self.captured = [None] * len(inputs) if capture else None
        self.owned = {} if not create_graph else None  # id -> array: sums the pass allocated
        self.buffers = buffers = {}
        for node, nr, g in roots:
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * node.n_outputs
            buf[nr] = g if buf[nr] is None else buf[nr] + g
        self.heap = []
        self.tie = 0
        for node, _, _ in roots:
            if deps.get(node) == 0:
                deps[node] = -1  # queued
                heapq.heappush(self.heap, (-node._seq, self.tie, node))
                self.tie += 1

    def runs(self, node) -> bool:
        return self.needed is None or any(nxt in self.needed for nxt in node._next if nxt is not None)

    def take(self, node, grads):
        for k, nr in self.targets[node]:
            self.captured[k] = grads[nr]

    def run(self, node, grads):
        """The node's formulas: its input gradients and whether it ran (None: an input's node that does not run)."""
        run = grads is not None and (grads[0] is not None if len(grads) == 1 else any(g is not None for g in grads))
        if self.targets is not None and not self.runs(node):
            if run and self.capture and node in self.targets:  # after the tensor's hooks, as PyTorch takes it
                self.take(node, grads)
            return None, None
        if not run:
            return None, False
        F = self.F
        owned = self.owned
        if owned:  # the formulas may pass a gradient on as it is (AddBackward0): it is no longer the pass's own
            for g in grads:
                if g is not None:
                    owned.pop(id(g), None)
        if len(grads) > 1:
            grads = _engine._fill_missing(node, grads, F)
        in_grads = _engine._run_node(node, grads, F) if anomaly_mode._enabled else node._backward(grads, F)
        if node._post_hooks is not None:
            in_grads = _engine._post_hooks(node, in_grads, grads, None, F)
        return in_grads, True

    def deliver(self, node, in_grads):
        """The reference's :func:`~leafkit.autograd.engine.deliver`, adding in place into sums the pass owns."""
        buffers, deps, needed, owned = self.buffers, self.deps, self.needed, self.owned
        meta = node._in_meta
        i = -1
        for nxt, nr in zip(node._next, node._nrs):
            i += 1
            if nxt is None or (needed is not None and nxt not in needed):
                continue
            g = in_grads[i] if in_grads is not None else None
            if g is not None:
                m = meta[i]
                if m is not None:
                    shape, dtype = m
                    if g.shape != shape:
                        g = self.F.sum_to(g, shape, node, i)
                    if g.dtype != dtype:
                        g = self.F.cast(g, dtype)
                buf = buffers.get(nxt)
                if buf is None:
                    om = nxt._out_meta
                    if om is None:
                        buffers[nxt] = [g]
                    else:
                        buf = buffers[nxt] = [None] * len(om)
                        buf[nr] = g
                else:
                    old = buf[nr]
                    if old is None:
                        buf[nr] = g
                    elif (
                        owned is not None
                        and owned.get(id(old)) is old
                        and old.shape == g.shape
                        and old.dtype == g.dtype
                    ):
                        old += g
                    else:
                        old = buf[nr] = old + g
                        if (
                            owned is not None
                            and getattr(old, "flags", None) is not None
                            and old.flags.writeable
                            and old.base is None
                        ):
                            owned[id(old)] = old
            d = deps[nxt] - 1
            deps[nxt] = d
            if d == 0:
                heapq.heappush(self.heap, (-nxt._seq, self.tie, nxt))
                self.tie += 1


def run_backward(roots, keep_graph, create_graph=False, inputs=None, capture=False, allow_unused=False):
    """:func:`leafkit.autograd.engine.run_backward` (an untraced pass), as one loop."""
    if inputs is None:
        return _run_plain(roots, keep_graph, create_graph)
    p = _Pass(roots, keep_graph, create_graph, inputs, capture)
    heap, buffers, pop = p.heap, p.buffers, heapq.heappop
    targets = p.targets
    prev = (_state.grad, _state.enabled, _state.checkpoint_valid)
    _state.grad, _state.enabled, _state.checkpoint_valid = create_graph, create_graph, False  # (inputs given)
    try:
        while heap:
            node = pop(heap)[2]
            grads = buffers.pop(node, None)
            if (
                capture
                and node in targets
                and node.__class__ is not AccumulateGrad
                and grads is not None
                and p.runs(node)
                and any(g is not None for g in grads)
            ):
                p.take(node, grads)  # a node that must run too: PyTorch takes the gradient before its hooks
            if node.__class__ is AccumulateGrad:
                _accumulate(p, node, grads)
                continue
            if grads is not None and (
                node._tensor_hooks is not None or node._retain_refs is not None or node._pre_hooks is not None
            ):
                grads = _engine.call_hooks_before(node, grads, create_graph, None)
            in_grads, ran = p.run(node, grads)
            if ran is not None:
                if not keep_graph:
                    node._release()
                p.deliver(node, in_grads)
    finally:
        _state.grad, _state.enabled, _state.checkpoint_valid = prev
    if capture and not allow_unused:
        for k, g in enumerate(p.captured):
            if g is None:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
    return p.captured


def _dependencies(roots):
    """:func:`leafkit.autograd.engine.dependencies`, with one dictionary lookup per edge."""
    deps = dict.fromkeys(roots, 0)
    stack = list(deps)
    get, push = deps.get, stack.append
    while stack:
        for nxt in stack.pop()._next:
            if nxt is not None:
                c = get(nxt)
                if c is None:
                    deps[nxt] = 1
                    push(nxt)
                else:
                    deps[nxt] = c + 1
    return deps


def _run_plain(roots, keep_graph, create_graph):
    """An untraced pass without ``inputs`` (``backward()``): the reference's steps written out in one loop, the
    buffers of the pass added to in place."""
    F = api.tensor_ns if create_graph else api.array_ns
    deps = _dependencies([r[0] for r in roots])
    owned = {} if not create_graph else None  # id -> array: sums the pass allocated, which it may change
    buffers = {}
    for node, nr, g in roots:
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.n_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    heap = []
    tie = 0
    push, pop = heapq.heappush, heapq.heappop
    for node, _, _ in roots:
        if deps.get(node) == 0:
            deps[node] = -1  # queued
            push(heap, (-node._seq, tie, node))
            tie += 1
    # ``ready``: the one node that became ready while the heap was empty, run next without the heap (in a chain
    # every node is that one); a second ready node sends both to the heap, ``ready`` first, as they would have gone
    ready = None
    prev = (_state.grad, _state.enabled, _state.checkpoint_valid)
    _state.grad = _state.enabled = create_graph  # formulas on tensors record only when asked
    _state.checkpoint_valid = True  # no inputs: a reentrant checkpoint may run its own pass
    try:
        while True:
            if ready is not None:
                node = ready
                ready = None
            elif heap:
                node = pop(heap)[2]
            else:
                break
            grads = buffers.pop(node, None)
            cls = node.__class__
            if cls is AccumulateGrad:
                _accumulate_owned(node, grads, owned, create_graph)
                continue
            if grads is not None and (
                node._tensor_hooks is not None or node._retain_refs is not None or node._pre_hooks is not None
            ):
                grads = _engine.call_hooks_before(node, grads, create_graph, None)
            in_grads = None
            if grads is not None and (grads[0] is not None or any(g is not None for g in grads)):
                if owned:  # a formula may pass a gradient on as it is (AddBackward0): it is no longer the pass's
                    for g in grads:
                        if g is not None:
                            owned.pop(id(g), None)
                if len(grads) > 1:
                    grads = _engine._fill_missing(node, grads, F)
                in_grads = _engine._run_node(node, grads, F) if anomaly_mode._enabled else node._backward(grads, F)
                if node._post_hooks is not None:
                    in_grads = _engine._post_hooks(node, in_grads, grads, None, F)
            if not keep_graph:  # Node._release written out (CopySlices frees its view's node too)
                if cls is COPY_SLICES:
                    node._release()
                else:
                    if node._had_saved:
                        node._stash = None
                    node._released = True
            meta = node._in_meta
            i = -1
            for nxt, nr in zip(node._next, node._nrs):
                i += 1
                if nxt is None:
                    continue
                if in_grads is not None:
                    g = in_grads[i]
                    if g is not None:
                        m = meta[i]
                        if m is not None:
                            if g.shape != m[0]:
                                g = F.sum_to(g, m[0], node, i)
                            if g.dtype != m[1]:
                                g = F.cast(g, m[1])
                        buf = buffers.get(nxt)
                        if buf is None:
                            om = nxt._out_meta
                            if om is None:
                                buffers[nxt] = [g]
                            else:
                                buf = buffers[nxt] = [None] * len(om)
                                buf[nr] = g
                        else:
                            old = buf[nr]
                            if old is None:
                                buf[nr] = g
                            elif owned is not None and owned.get(id(old)) is old and old.shape == g.shape:
                                if old.dtype == g.dtype:
                                    old += g
                                else:
                                    buf[nr] = old + g
                            else:
                                old = buf[nr] = old + g
                                if owned is not None and old.__class__ is np.ndarray and old.base is None:
                                    owned[id(old)] = old
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    if ready is None and not heap:
                        ready = nxt
                    else:
                        if ready is not None:
                            push(heap, (-ready._seq, tie, ready))
                            tie += 1
                            ready = None
                        push(heap, (-nxt._seq, tie, nxt))
                        tie += 1
    finally:
        _state.grad, _state.enabled, _state.checkpoint_valid = prev


class _PlainPass:
    """What :func:`~leafkit.autograd.engine._leaf_hooks` reads of a pass without ``inputs`` and capture."""

    capture = False
    targets = None


_PLAIN_PASS = _PlainPass()


def _accumulate_owned(node, grads, owned, create_graph) -> None:
    """:func:`_accumulate` in a plain pass (no ``inputs``, no capture)."""
    if grads is None or grads[0] is None:
        return
    g = grads[0]
    taken = owned is not None and owned.pop(id(g), None) is g
    var = node.variable
    if var._hooks or node._pre_hooks is not None:
        g = _engine._leaf_hooks(_PLAIN_PASS, node, g, None)
        taken = False
    if var._requires_grad:  # a leaf switched off after the graph was built gets nothing
        if g is None:  # a pre-hook took the gradient away
            pass
        elif taken and var._grad is None:
            var._grad = Tensor._make(g, var._device)  # PyTorch steals such buffers too
        else:
            var._accumulate_grad(g, create_graph)
        if var._post_acc_hooks:
            _engine._post_accumulate_hooks(var, None)
    if node._post_hooks is not None:
        for fn in list(node._post_hooks.values()):
            _engine._call_node_hook(fn, ((), (g,)), var._device, 0)


def _accumulate(p, node, grads) -> None:
    """The reference's :func:`~leafkit.autograd.engine.accumulate`; a sum the pass owns becomes ``.grad`` as it is."""
    if grads is None or grads[0] is None:
        return
    owned = p.owned
    g = grads[0]
    taken = owned is not None and owned.pop(id(g), None) is g
    var = node.variable
    if var._hooks or node._pre_hooks is not None:
        g = _engine._leaf_hooks(p, node, g, None)
        taken = False
    if p.capture:
        for k, _ in p.targets[node]:
            p.captured[k] = g
        return
    if p.targets is not None and node not in p.targets:
        return
    if var._requires_grad:  # a leaf switched off after the graph was built gets nothing
        if g is None:  # a pre-hook took the gradient away
            pass
        elif taken and var._grad is None and (var._device.type != "cpu" or isinstance(g, np.ndarray)):
            var._grad = Tensor._make(g, var._device)  # PyTorch steals such buffers too
        else:
            var._accumulate_grad(g, p.create_graph)
        if var._post_acc_hooks:
            _engine._post_accumulate_hooks(var, None)
    if node._post_hooks is not None:
        for fn in list(node._post_hooks.values()):
            _engine._call_node_hook(fn, ((), (g,)), var._device, 0)
