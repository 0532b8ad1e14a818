"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``, ``hessian`` (``torch.func``).

Each call of a transform opens a *grad level* on the transform stack (as
PyTorch's ``grad_increment_nesting`` does).  The level's inputs become
tensors of their own: a fresh leaf that requires grad, or, when the input
requires grad outside, an alias of it recorded in the outer graph (so that
the outer autograd still sees through the transform).  Inside the function an
input shows ``requires_grad=True``, ``grad_fn=None`` and ``is_leaf=True``,
as in PyTorch, and a tensor the function closes over stays an outer tensor:
``grad(lambda t: (t * x).sum())(x)`` is ``x``.

The level's gradients are computed with :func:`leafkit.autograd.grad`.  When
the function's result depends on tensors outside the level (its inputs'
history, tensors it closes over, an enclosing transform's inputs) the
gradients are computed with ``create_graph=True`` and stay connected: the
results of ``grad(f)(x)`` for an ``x`` that requires grad have a ``grad_fn``,
and ``grad(grad(f))`` differentiates the inner gradient.  Otherwise they are
computed as a plain backward pass and have no history.  Under ``no_grad``
outside, the results have no history either.

Inside ``vmap`` the level's inputs are made batched over every active vmap
level (an input that is the same for every sample gets a copy per sample, a
stride-0 view), so that one backward pass of all samples' outputs gives each
sample's own gradient: per-sample gradients with ``vmap(grad(loss),
in_dims=(None, 0, 0))``.  ``jvp`` and ``jacfwd`` use the double-vjp trick (the
vjp is linear in its cotangent, so the vjp of the vjp is the jvp), as
``torch.autograd.functional.jvp`` does; ``jacrev`` is ``vmap`` over ``vjp``'s
function, and ``jacfwd`` ``vmap`` over ``jvp``, as in PyTorch.
"""

from __future__ import annotations

import contextlib
import functools

from .. import _tensor
from .._creation import ones_like, zeros_like
from .._functions import SPECS, _batched, apply, cat, split
from .._functions._batched import BatchedTensor, chain, rewrap, unwrap_level, wrap_level
from .._tensor import Tensor
from ..autograd import grad as _autograd_grad_fn
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.graph import AccumulateGrad, Node
from ._pytree import pprint, tree_flatten, tree_map, tree_unflatten
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]

JVP_STR = "jvp(f, primals, tangents)"


# -- how an input of a grad level looks inside it ----------------------------------------------------------------------
class _GradInput(Tensor):
    """An input of a grad level that requires grad outside too: an alias in the outer graph, shown inside the
    function as the leaf it is at its level (``grad_fn`` None, ``is_leaf`` True), as PyTorch shows it."""

    __slots__ = ()

    @property
    def grad_fn(self):
        return None

    @property
    def is_leaf(self) -> bool:
        return True


_GradInput.__name__ = _GradInput.__qualname__ = "Tensor"
_GradInput.__module__ = Tensor.__module__


class _Input:
    """One input of a grad level: the tensor the function sees, its physical tensor and its vmap wrapping."""

    __slots__ = ("tensor", "phys", "wrapping")

    def __init__(self, tensor, phys, wrapping):
        self.tensor = tensor
        self.phys = phys
        self.wrapping = wrapping


LEVELS: list = []  # the active grad levels, innermost last


class _Level:
    """One grad level: its layer on the transform stack, the first sequence number of the nodes made under it,
    its fresh leaves and the alias nodes that connect its inputs to the outer graph."""

    def __init__(self):
        self.outer_grad = is_grad_enabled()
        self.layer = _batched.push("grad")
        self.start = Node()._sequence_nr()
        LEVELS.append(self)
        self.aliases = set()
        self.originals = {}  # id(alias) -> the input it aliases (an output that is the input itself unwraps to it)
        self.alias_of = {}  # id(alias) -> the physical tensor it aliases

    def close(self) -> None:
        LEVELS.remove(self)
        _batched.pop(self.layer)

    # -- inputs --------------------------------------------------------------------------------------------------------
    def lift(self, x) -> _Input:
        """``x`` as an input of this level (batched over every active vmap level, see the module docstring)."""
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        wrapping, phys = chain(x)
        present = {lvl for lvl, _ in wrapping}
        for layer in _batched.vmap_levels():
            if layer.level in present or layer.level > self.layer.level:
                continue
            phys = phys.unsqueeze(0).expand(layer.size, *phys.shape)
            wrapping = sorted(
                [(lvl, b + 1 if lvl < layer.level else b) for lvl, b in wrapping] + [(layer.level, 0)], reverse=True
            )
            present.add(layer.level)
        if phys.requires_grad:
            inner = apply(SPECS["alias"], (phys,))
            self.aliases.add(inner._grad_fn)
            self.alias_of[id(inner)] = phys
            if not wrapping and phys is x:
                self.originals[id(inner)] = x
            if not wrapping:
                inner.__class__ = _GradInput
        else:
            inner = phys.detach()
            inner._set_requires_grad(True)
            inner._transform_start = self.start  # made by this level (see _inner_leaf)
        tensor = rewrap(inner, wrapping)
        if tensor.__class__ is BatchedTensor:
            tensor._lifted = True
        return _Input(tensor, inner, wrapping)

    # -- what the outer level sees ------------------------------------------------------------------------------------
    def reaches_outer(self, t) -> bool:
        """Whether the history of the physical tensor ``t`` reaches beyond this level (outer tensors, the inputs'
        own history, an enclosing transform's inputs)."""
        fn = t.grad_fn
        if fn is None:
            return t._requires_grad and not self._inner_leaf(t)
        stack, seen = [fn], set()
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, AccumulateGrad):
                if not self._inner_leaf(node.variable):
                    return True
                continue
            if node._sequence_nr() < self.start:
                return True
            stack.extend(n for n, _ in node.next_functions if n is not None and n not in seen)
        return False

    def tracks(self, t) -> bool:
        """Whether the physical tensor ``t`` was made inside this level (one of its inputs, or the result of an op
        recorded since it began): PyTorch shows it as a ``GradTrackingTensor`` of this level.  (A tensor made inside
        without any history, ``torch.ones(2)``, cannot be told from an outer one and prints plainly.)"""
        start = getattr(t, "_transform_start", None)
        if start is not None and start >= self.start:
            return True
        fn = t._grad_fn
        return fn is not None and (fn in self.aliases or fn._sequence_nr() >= self.start)

    def _inner_leaf(self, v) -> bool:
        """A leaf made by this level or one nested in it (an enclosing level's inputs are outer tensors)."""
        start = getattr(v, "_transform_start", None)
        return start is not None and start >= self.start

    def lower(self, t, bypass=False):
        """An output of the level as the outer level sees it: still connected when it depends on the outer
        level (and grad mode was on outside), detached otherwise; the level's own input is the outer tensor."""
        if not isinstance(t, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
        wrapping, phys = chain(t)
        original = self.originals.get(id(phys))
        if original is not None:
            return original
        if not phys.requires_grad:
            return t
        if self.outer_grad and self.reaches_outer(phys):
            if bypass and self.aliases:
                self._bypass(phys)
            return t
        return rewrap(phys.detach(), wrapping)

    def _bypass(self, t) -> None:
        """The alias nodes leave the graph the outer level sees: an edge into one goes to what it aliases."""
        stack, seen = [t.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or node in seen or isinstance(node, AccumulateGrad) or node._sequence_nr() < self.start:
                continue
            seen.add(node)
            edges = node.next_functions
            if any(n in self.aliases for n, _ in edges):
                node.next_functions = tuple(n.next_functions[0] if n in self.aliases else (n, k) for n, k in edges)
            stack.extend(n for n, _ in node.next_functions)


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=True):
    """``autograd.grad`` over the outputs that require grad; zeros for inputs nothing reaches (PyTorch's
    ``_autograd_grad`` of torch.func).  A recorded pass keeps the graph: an enclosing level differentiates through
    it again."""
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    keep = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not keep:
        return tuple(zeros_like(x) for x in inputs)
    outs, gos = zip(*keep)
    if any(g.__class__ is BatchedTensor for g in gos):
        create_graph = True  # batched cotangents run the formulas on tensors (their batching rules)
    res = _autograd_grad_fn(outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    return tuple(zeros_like(x) if r is None else r for r, x in zip(res, inputs))


def _materialize(t, wrapping):
    """A cotangent (or tangent) of the tensor with vmap ``wrapping``, as a cotangent of its physical tensor."""
    for level, bdim in wrapping:
        t = unwrap_level(t, level, bdim)
    return t


def _rewrap_grad(g, wrapping):
    for level, bdim in reversed(wrapping):
        g = wrap_level(g, level, bdim)
    return g


def _repr_inside(t):
    """How ``t`` prints inside grad levels, as PyTorch prints its wrappers: ``GradTrackingTensor(lvl=1, value=...)``
    around the value at the outer level (nested with ``BatchedTensor`` by level); None for a tensor no grad level
    tracks."""
    if not LEVELS:
        return None
    wrapping, phys = chain(t)
    grads = [(level.layer.level, level) for level in LEVELS if level.tracks(phys)]
    if not grads:
        return None
    wrappers = sorted(
        [("BatchedTensor", lvl, b) for lvl, b in wrapping] + [("GradTrackingTensor", lvl, None) for lvl, _ in grads],
        key=lambda w: -w[1],
    )
    return _batched.wrapped_repr(_outer_value(phys), wrappers)


def _outer_value(phys):
    """How the tensor a grad level wraps prints at the outermost level: an alias as what it aliases, a level's
    fresh leaf without autograd state, anything else with its history when that reaches beyond every level."""
    while True:
        source = next((lv.alias_of[id(phys)] for lv in LEVELS if id(phys) in lv.alias_of), None)
        if source is None:
            break
        phys = source
    outermost = LEVELS[0]
    if getattr(phys, "_transform_start", None) is None and (
        phys._grad_fn is None or (outermost.outer_grad and outermost.reaches_outer(phys))
    ):
        return phys._plain_repr()
    return Tensor._make(phys._data, phys._device)._plain_repr()


_tensor.repr_hook = _repr_inside


# -- argnums -----------------------------------------------------------------------------------------------------------
def _wrap_argnum(argnum, num_args) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _slice_argnums(args, argnums, as_tuple=True):
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        k = _wrap_argnum(argnums, len(args))
        return (args[k],) if as_tuple else args[k]
    argnums = tuple(_wrap_argnum(a, len(args)) for a in argnums)
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(args[k] for k in argnums)


def _replace_args(args, new, argnums):
    if isinstance(argnums, int):
        k = _wrap_argnum(argnums, len(args))
        return tuple(new[0] if i == k else a for i, a in enumerate(args))
    ks = [_wrap_argnum(a, len(args)) for a in argnums]
    return tuple(new[ks.index(i)] if i in ks else a for i, a in enumerate(args))


# -- grad, grad_and_value ----------------------------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the arguments ``argnums``, and its value (``torch.func.grad_and_value``).

    Parameters
    ----------
    func : callable
        Returns a 0-d tensor (and with ``has_aux`` a tuple ``(output, aux)``, ``aux`` a structure of tensors
        that is returned as it is).
    argnums : int or tuple of int
        The positional arguments to differentiate (each a tensor or a structure of tensors).
    has_aux : bool

    Returns
    -------
    callable
        ``(grad, value)`` (``(grad, (value, aux))`` with ``has_aux``); ``grad`` has the structure of the
        arguments ``argnums`` (a tuple of them for a tuple ``argnums``).  See the module docstring for when
        the results have a ``grad_fn``.

    Raises
    ------
    RuntimeError
        PyTorch's messages: "Expected f(*args) to return a scalar Tensor, got tensor with 1 dims", a non-tensor
        output, ``has_aux`` without an ``(output, aux)`` tuple, ``argnums`` out of range.
    ValueError
        "Thing passed to transform API must be Tensor" for a differentiated argument that is not a tensor.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function (``torch.func.grad``): ``grad(f)(x)`` is ``df/dx`` at ``x``.

    Composes with itself and the other transforms to any depth (``grad(grad(f))``, ``vmap(grad(f))``,
    ``jacrev(grad(f))``).  Arguments, results and errors as :func:`grad_and_value`, without the value
    (``(grad, aux)`` with ``has_aux``).
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, rest = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (grads, rest[1]) if has_aux else grads

    return wrapper


def _grad_and_value(func, argnums, has_aux, args, kwargs):
    level = _Level()
    try:
        with enable_grad():
            diff_args = _slice_argnums(args, argnums, as_tuple=False)
            flat_diff, spec = tree_flatten(diff_args)
            inputs = [level.lift(x) for x in flat_diff]
            new = tree_unflatten([i.tensor for i in inputs], spec)
            args = _replace_args(args, new if isinstance(argnums, tuple) else (new,), argnums)
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                        "if has_aux is True"
                    )
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            _, out_phys = chain(output)
            connected = level.reaches_outer(out_phys) if out_phys.requires_grad else False
            ones = ones_like(out_phys) if out_phys.requires_grad else None
            grads = _autograd_grad([out_phys], [i.phys for i in inputs], [ones], create_graph=connected)
            grads = [_rewrap_grad(g, i.wrapping) for g, i in zip(grads, inputs)]
            grads = [level.lower(g, bypass=True) for g in grads]
            value = level.lower(output, bypass=True)
            if has_aux:
                aux = tree_map(level.lower, aux)
    finally:
        level.close()
    grad_input = tree_unflatten(grads, spec)
    return grad_input, ((value, aux) if has_aux else value)


# -- vjp ---------------------------------------------------------------------------------------------------------------
def _assert_non_empty_tensor_output(output, api) -> None:
    if (len(output) == 1 and output[0] is None) or len(output) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {output})")
    for o in output:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def vjp(func, *primals, has_aux=False):
    """``func(*primals)`` and a function that computes vector-Jacobian products with it (``torch.func.vjp``).

    Returns
    -------
    (output, vjp_fn) or (output, vjp_fn, aux)
        ``vjp_fn(cotangents, retain_graph=True, create_graph=None)`` takes cotangents with the structure of
        ``output`` and returns a tuple with one vjp per primal; it may be called many times, and under
        ``vmap`` (``jacrev`` does).  ``create_graph`` defaults to whether grad mode is on.

    Raises
    ------
    RuntimeError
        PyTorch's messages: outputs that are not floating point, no output, cotangents of another structure
        ("Expected pytree structure of cotangents to be the same ..."), cotangents of another shape.
    ValueError
        A primal that is not a tensor.
    """
    return _vjp(func, primals, None, has_aux)


def _vjp(func, primals, argnums, has_aux):
    level = _Level()
    try:
        with enable_grad():
            if argnums is None:
                flat_diff, diff_spec = tree_flatten(primals)
                inputs = [level.lift(x) for x in flat_diff]
                primals = tree_unflatten([i.tensor for i in inputs], diff_spec)
            else:
                diff = _slice_argnums(primals, argnums, as_tuple=False)
                flat_diff, diff_spec = tree_flatten(diff)
                inputs = [level.lift(x) for x in flat_diff]
                new = tree_unflatten([i.tensor for i in inputs], diff_spec)
                primals = _replace_args(primals, new if isinstance(argnums, tuple) else (new,), argnums)
            out = func(*primals)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is True"
                    )
                out, aux = out
                aux = tree_map(level.lower, aux)
            flat_out, out_spec = tree_flatten(out)
            _assert_non_empty_tensor_output(flat_out, "vjp(f, *primals)")
            for o in flat_out:
                if not o.is_floating_point():
                    raise RuntimeError(
                        "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with "
                        f"dtype {o.dtype}"
                    )
            results = tree_unflatten([level.lower(o) for o in flat_out], out_spec)
            outs = [chain(o) for o in flat_out]
    finally:
        level.close()

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to the "
                f"function. cotangents: {pprint(ct_spec)}, primal output: {pprint(out_spec)}"
            )
        gos = [_materialize(ct, wrapping) for ct, (wrapping, _) in zip(flat_ct, outs)]
        with enable_grad() if create_graph else contextlib.nullcontext():
            grads = _autograd_grad(
                [phys for _, phys in outs],
                [i.phys for i in inputs],
                gos,
                retain_graph=retain_graph,
                create_graph=create_graph,
            )
        grads = [_rewrap_grad(g, i.wrapping) for g, i in zip(grads, inputs)]
        grads = [g if create_graph else _detach(g) for g in grads]
        grads = [level.lower(g) for g in grads]
        return tree_unflatten(grads, diff_spec)

    return (results, vjp_fn, aux) if has_aux else (results, vjp_fn)


def _detach(t):
    wrapping, phys = chain(t)
    return rewrap(phys.detach(), wrapping) if phys.requires_grad else t


# -- jvp (the double-vjp trick) ----------------------------------------------------------------------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``func(*primals)`` and the Jacobian-vector product ``J @ tangents`` (``torch.func.jvp``).

    Computed with the double-vjp trick: the vjp ``u -> u^T J`` is linear in ``u``, so its vjp with the
    tangents is ``J @ tangents``; the values are those of forward-mode AD.

    Returns
    -------
    (output, jvp_out) or (output, jvp_out, aux)

    Raises
    ------
    RuntimeError
        PyTorch's messages: ``primals`` not a tuple, primals and tangents of different structures, no tensors,
        a tangent of another size than its primal, non-tensor outputs, ``strict=True`` with an output that does
        not depend on the inputs.
    """
    return _jvp(func, primals, tangents, None, strict, has_aux)


def _check_list_of_tensors(flat, argname) -> None:
    if not flat:
        raise RuntimeError(f"{JVP_STR}: Expected {argname} to contain at least one Tensor.")
    for x in flat:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{JVP_STR}: Expected {argname} to only contain Tensors, got {type(x)}")


def _jvp(func, primals, tangents, argnums, strict, has_aux):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{JVP_STR}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    diff = primals if argnums is None else _slice_argnums(primals, argnums)
    flat_primals, primals_spec = tree_flatten(diff)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(
            f"{JVP_STR}: Expected primals and tangents to have the same python structure. For example, if primals "
            f"is a tuple of 3 tensors, tangents also must be. Got primals with structure {primals_spec} and tangents "
            f"with structure {tangents_spec}"
        )
    _check_list_of_tensors(flat_primals, "primals")
    _check_list_of_tensors(flat_tangents, "tangents")
    for p, t in zip(flat_primals, flat_tangents):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the original Tensor, "
                f"this is not supported. Tensor is of size {list(p.shape)} while the given forward gradient is of "
                f"size {list(t.shape)}."
            )
    level = _Level()
    try:
        with enable_grad():
            inputs = [level.lift(x) for x in flat_primals]
            duals = tree_unflatten([i.tensor for i in inputs], primals_spec)
            args = duals if argnums is None else _replace_args(primals, duals, argnums)
            out = func(*args)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        f"{JVP_STR}: output of function f should be a tuple: (output, aux) if has_aux is True"
                    )
                out, aux = out
                aux = tree_map(level.lower, aux)
            flat_out, out_spec = tree_flatten(out)
            _assert_non_empty_tensor_output(flat_out, JVP_STR)
            outs = [chain(o) for o in flat_out]
            tangents_out = _double_vjp(level, outs, inputs, flat_tangents, strict)
            primals_out = [_unpacked(level.lower(o)) for o in flat_out]
            tangents_out = [level.lower(t) for t in tangents_out]
    finally:
        level.close()
    result = (tree_unflatten(primals_out, out_spec), tree_unflatten(tangents_out, out_spec))
    return (*result, aux) if has_aux else result


def _double_vjp(level, outs, inputs, flat_tangents, strict):
    """``J @ t`` for every output: the vjp with a dummy cotangent ``u`` (recorded), then its vjp with respect to
    ``u`` with the tangents as cotangents.  An output that no input reaches has no tangent (zeros, or PyTorch's
    error with ``strict``)."""
    us = {k: zeros_like(phys, requires_grad=True) for k, (_, phys) in enumerate(outs) if phys.requires_grad}
    found = {}
    if us:
        ks = list(us)
        vjps = _autograd_grad_fn(
            [outs[k][1] for k in ks],
            [i.phys for i in inputs],
            [us[k] for k in ks],
            create_graph=True,
            allow_unused=True,
            retain_graph=True,
        )
        pairs = [(g, _materialize(t, i.wrapping)) for g, t, i in zip(vjps, flat_tangents, inputs) if g is not None]
        if pairs:
            gs, ts = zip(*pairs)
            jv = _autograd_grad_fn(
                list(gs), [us[k] for k in ks], list(ts), create_graph=True, allow_unused=True, retain_graph=True
            )
            found = {k: r for k, r in zip(ks, jv) if r is not None}
    tangents_out = []
    for k, (wrapping, phys) in enumerate(outs):
        r = found.get(k)
        if r is None:
            if strict:
                raise RuntimeError(
                    "jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. This is "
                    "not allowed with strict=True."
                )
            r = zeros_like(phys)
        tangents_out.append(_rewrap_grad(r, wrapping))
    return tangents_out


def _unpacked(t):
    """A primal output of ``jvp`` as PyTorch's ``unpack_dual`` gives it: an alias (``AliasBackward0`` when it
    requires grad)."""
    return apply(SPECS["alias"], (t,)) if t.requires_grad else t


# -- linearize ---------------------------------------------------------------------------------------------------------
def linearize(func, *primals):
    """``func(*primals)`` and a function that computes ``jvp`` at ``primals`` (``torch.func.linearize``).

    PyTorch traces the jvp once; leafkit computes ``jvp(func, primals, tangents)`` on each call, with the same
    values and PyTorch's checks of the tangents (shape, device, dtype)."""
    output = func(*primals)
    _, out_spec = tree_flatten(output)
    flat_primals, primals_spec = tree_flatten(primals)

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(
                f"Expected the tangents {tangents_spec} to have the same argspec as the primals {primals_spec}"
            )
        for idx, (t, p) in enumerate(zip(flat_tangents, flat_primals)):
            for what, a, b in (
                ("shape", t.shape, p.shape),
                ("device", t.device, p.device),
                ("dtype", t.dtype, p.dtype),
            ):
                if a != b:
                    raise RuntimeError(
                        f"tangent:{idx} with {what} {a} in flattened pytree doesn't match the {what} {b} of the "
                        "corresponding primal."
                    )
        return _jvp(func, tuple(primals), tuple(tangents), None, False, False)[1]

    return output, jvp_fn


# -- Jacobians and Hessians --------------------------------------------------------------------------------------------
def _error_if_complex(name, args, is_input) -> None:
    for idx, a in enumerate(tree_flatten(args)[0]):
        if isinstance(a, Tensor) and a.dtype.is_complex:
            raise RuntimeError(
                f"{name}: Expected all {'inputs' if is_input else 'outputs'} to be real but received complex tensor "
                f"at flattened input idx: {idx}"
            )


def _basis(tensors, numels, rows=None, first=0):
    """The standard basis over all elements of ``tensors`` (rows ``first`` to ``first + rows``), one tensor per
    input shaped ``(rows, *shape)``."""
    total = sum(numels)
    rows = total if rows is None else rows
    out, start = [], 0
    for t, n in zip(tensors, numels):
        chunk = t.new_zeros(rows, n)
        chunk.diagonal(first - start).fill_(1)
        out.append(chunk.view(rows, *t.shape))
        start += n
    return out


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to the arguments ``argnums``, by reverse mode (``torch.func.jacrev``):
    ``vmap`` over :func:`vjp`'s function with the standard basis as cotangents.

    Returns
    -------
    callable
        The Jacobian, shaped ``output.shape + input.shape`` (nested as the outputs and ``argnums`` are);
        ``(jacobian, aux)`` with ``has_aux``.  ``chunk_size`` computes that many rows at a time (``1``: a loop).

    Raises
    ------
    ValueError
        "jacrev: `chunk_size` should be greater than 0."
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacrev", args, True)
        res = _vjp(func, args, argnums, has_aux)
        output, vjp_fn = res[0], res[1]
        flat_output, output_spec = tree_flatten(output)
        _error_if_complex("jacrev", flat_output, False)
        numels = tuple(o.numel() for o in flat_output)
        primals = _slice_argnums(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)
        total = sum(numels)
        step = total if chunk_size is None or chunk_size >= total else chunk_size
        chunks = []
        for first in range(0, total, step):
            rows = min(step, total - first)
            basis = tree_unflatten(_basis(flat_output, numels, rows, first), output_spec)
            if chunk_size == 1:
                r = vjp_fn(tree_map(lambda t: t.squeeze(0), basis))
                chunks.append([t.unsqueeze(0) for t in tree_flatten(r)[0]])
            else:
                chunks.append(tree_flatten(vmap(vjp_fn)(basis))[0])
        flat_jac = chunks[0] if len(chunks) == 1 else [cat([c[k] for c in chunks], 0) for k in range(len(chunks[0]))]
        per_input = [split(r, list(numels), 0) for r in flat_jac]
        by_input = [
            tuple(s.view(*o.shape, *p.shape) for s, o in zip(splits, flat_output))
            for splits, p in zip(per_input, flat_primals)
        ]
        by_output = tuple(zip(*by_input))
        result = tuple(tree_unflatten(list(x), primals_spec) for x in by_output)
        if isinstance(argnums, int):
            result = tuple(r[0] for r in result)
        result = tree_unflatten(list(result), output_spec)
        return (result, res[2]) if has_aux else result

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to the arguments ``argnums``, by forward mode (``torch.func.jacfwd``):
    ``vmap`` over :func:`jvp` with the standard basis as tangents (jvp by the double-vjp trick).

    Returns
    -------
    callable
        The Jacobian, shaped ``output.shape + input.shape``; ``(jacobian, aux)`` with ``has_aux``.
    """

    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacfwd", args, True)
        primals = args if argnums is None else _slice_argnums(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)
        numels = tuple(p.numel() for p in flat_primals)
        basis = tree_unflatten(_basis(flat_primals, numels), primals_spec)

        def push_jvp(b):
            out = _jvp(func, args, b, argnums, False, has_aux)
            _error_if_complex("jacfwd", out[0], False)
            return (out[1], out[2]) if has_aux else out[1]

        results = vmap(push_jvp, randomness=randomness)(basis)
        aux = None
        if has_aux:
            results, aux = results
            flat_aux, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([a[0] for a in flat_aux], aux_spec)
        jac_outs, spec = tree_flatten(results)
        jac_outs_ins = []
        for j in jac_outs:
            moved = j.movedim(0, -1)
            pieces = split(moved, list(numels), -1)
            jac_outs_ins.append(
                tree_unflatten(
                    [_unflatten_last(piece, p.shape) for piece, p in zip(pieces, flat_primals)], primals_spec
                )
            )
        if isinstance(argnums, int):
            jac_outs_ins = [j[0] for j in jac_outs_ins]
        result = tree_unflatten(jac_outs_ins, spec)
        return (result, aux) if has_aux else result

    return wrapper


def _unflatten_last(t, shape):
    if len(shape) == 0:
        return t.squeeze(-1)
    return t.reshape(*t.shape[:-1], *shape)


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func`` with respect to ``argnums`` (``torch.func.hessian``):
    ``jacfwd(jacrev(func, argnums), argnums)``, as PyTorch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)
