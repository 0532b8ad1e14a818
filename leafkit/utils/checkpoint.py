"""Activation checkpointing: keep less for backward, run the forward again when backward needs it
(``torch.utils.checkpoint``).

A recorded forward pass keeps, on its nodes, every tensor the backward
formulas will need: ``x`` for ``sin``, the result for ``exp``, the input and
weight for a ``Linear`` (``grad_fn._saved_self``, ``_saved_result`` ...).
``checkpoint(function, *args)`` runs ``function`` so that what it saves is
*not* kept; only ``args`` are.  When backward reaches that part of the graph,
``function`` runs again (with the same random state, so dropout draws the same
mask) to produce what was dropped.  Memory falls from one layer's activations
per layer to one per checkpointed segment, at the price of a second forward.

Two variants, as in PyTorch:

``use_reentrant=True``
    ``function`` runs under ``no_grad`` inside a custom ``Function``
    (``grad_fn=<CheckpointFunctionBackward>``); its backward runs ``function``
    again with grad enabled and calls ``backward()`` from inside the backward
    pass (re-entering autograd).  It only works with ``.backward()`` without
    ``inputs`` (not with ``autograd.grad``), needs an input that requires
    grad, and takes no keyword arguments.

``use_reentrant=False`` (recommended)
    ``function``'s graph is recorded as usual (its outputs keep their own
    ``grad_fn``, ``AddmmBackward0`` ...), but the tensors its nodes saved are
    dropped once ``function`` returns.  The first time backward (or a
    ``_saved_*`` attribute) needs one of them, ``function`` runs again and the
    dropped values are filled back in; each is handed out once, then let go.
    Works with ``autograd.grad``, ``backward(inputs=...)``, keyword arguments,
    inputs that need no grad, and ``create_graph=True``.

How leafkit drops and refills (until the engine has saved-tensor hooks):
PyTorch builds the non-reentrant variant on ``saved_tensors_hooks``: a pack
hook stores a placeholder instead of each tensor, an unpack hook triggers the
recomputation.  leafkit's engine has no such hooks yet, so after ``function``
returns this module walks the new part of the graph (the nodes created during
the call, found from its outputs) and replaces each node's saved values by a
placeholder sequence, :class:`_Recomputable`, that recomputes on first use.
The recomputed nodes are paired with the original ones in creation order; a
saved tensor that was an intermediate of ``function`` is handed back with the
*original* node as its ``grad_fn``, as PyTorch's unpack does.  That adapter is
the only part of this module that reads the nodes' storage (``_stash`` and
``SavedVariable``); see the section "saved values" at the end.

Not built: selective checkpointing (``create_selective_checkpoint_contexts``:
it needs per-operator dispatch), ``early_stop`` (the recomputation always runs
``function`` to the end; the values are the same), ``GraphExecGroup``.  With
``debug=True`` a non-determinism error lists the nodes recorded by the forward
and by the recomputation (PyTorch lists ATen operators with their stack
traces).
"""

from __future__ import annotations

import contextlib
import warnings
import weakref

import numpy as np

from .. import _device, _dtype, _random
from .._tensor import Size, Tensor
from ..autograd import _is_checkpoint_valid, backward, enable_grad, is_grad_enabled, no_grad
from ..autograd.anomaly_mode import _stacklevel
from ..autograd.function import Function
from ..autograd.graph import AccumulateGrad, Node, SavedVariable

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]

USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)
SEQUENTIAL_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. In "
    "version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, "
    "but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for "
    "more details on the differences between the two variants."
)
NO_INPUT_REQUIRES_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"
REENTRANT_WITH_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter "
    "to .backward(). To resolve this error, you can either set use_reentrant=False, or call .backward() without "
    "passing the `inputs` argument."
)
# PyTorch's tip goes on with advice about torch.compile, which leafkit does not have
DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint\u2011debug mode globally.\n"
)


class CheckpointError(RuntimeError):
    """What the non-reentrant checkpoint raises when the recomputation does not match the forward."""


def noop_context_fn():
    """The default ``context_fn``: two context managers that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


_debug_enabled = None
_early_stop_enabled = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Turn ``debug`` on (True) or off (False) for every checkpoint in the block, whatever they pass; None: as
    passed (``torch.utils.checkpoint.set_checkpoint_debug_enabled``)."""
    global _debug_enabled
    prev, _debug_enabled = _debug_enabled, enabled
    try:
        yield
    finally:
        _debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Accepted for PyTorch code (``torch.utils.checkpoint.set_checkpoint_early_stop``).  leafkit's recomputation
    always runs the function to its end, which gives the same values."""
    global _early_stop_enabled
    prev, _early_stop_enabled = _early_stop_enabled, enable
    try:
        yield
    finally:
        _early_stop_enabled = prev


def detach_variable(inputs):
    """Detached copies of the tensors in the tuple ``inputs``, each requiring grad as its original did.

    Raises
    ------
    RuntimeError
        "Only tuple of tensors is supported. Got Unsupported input type: list".
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """Warn "None of the inputs have requires_grad=True. Gradients will be None" when no tensor requires grad."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(NO_INPUT_REQUIRES_GRAD, UserWarning, stacklevel=_stacklevel())


@contextlib.contextmanager
def _rng_fork(state, enabled):
    """Run the block from the random state ``state``, then put back the state the caller had (PyTorch's
    ``fork_rng`` with ``set_rng_state``).  leafkit has one generator for every device."""
    if not enabled:
        yield
        return
    gen = _random.default_generator
    outer = gen.get_state()
    gen.set_state(state)
    try:
        yield
    finally:
        gen.set_state(outer)


# -- the reentrant variant -------------------------------------------------------------------------------------
class CheckpointFunction(Function):
    """``checkpoint(..., use_reentrant=True)``: the forward under ``no_grad``, the backward runs it again.

    Its node is ``CheckpointFunctionBackward``.
    """

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = _random.default_generator.get_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _is_checkpoint_valid():
            raise RuntimeError(REENTRANT_WITH_GRAD)
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _rng_fork(getattr(ctx, "fwd_rng_state", None), ctx.preserve_rng_state):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        backward([o for o, _ in with_grad], [g for _, g in with_grad])
        return (None, None, *[d.grad if isinstance(d, Tensor) else None for d in detached])


# -- the public functions -------------------------------------------------------------------------------------
def checkpoint(
    function,
    *args,
    use_reentrant: bool | None = None,
    context_fn=noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs,
):
    """Run ``function(*args, **kwargs)`` without keeping what its backward needs; recompute it in backward
    (``torch.utils.checkpoint.checkpoint``).

    Parameters
    ----------
    function : callable
        A module or a function of tensors (any shapes, dtypes, devices).
    *args
        Its inputs; the tensors among them are kept for the recomputation.
    use_reentrant : bool
        Which variant (see the module docstring).  Pass it: without it
        PyTorch 2.13 warns ("the use_reentrant parameter should be passed
        explicitly") and uses True.
    preserve_rng_state : bool, keyword
        Restore the random state for the recomputation (default True), so
        ``Dropout`` draws the same mask again.
    context_fn : callable
        Returns two context managers: the forward runs in the first, the
        recomputation in the second (``use_reentrant=False`` only).
    determinism_check : str
        ``"default"`` compares the shape, dtype and device of every
        recomputed saved tensor with the original's; ``"none"`` skips it.
    debug : bool
        Add the recorded operations of both runs to a non-determinism error.
    early_stop : bool
        Accepted; leafkit always recomputes the whole function.
    **kwargs
        Keyword arguments of ``function`` (``use_reentrant=False`` only).

    Returns
    -------
    Whatever ``function`` returns.  With ``use_reentrant=True`` its tensors
    have ``grad_fn=<CheckpointFunctionBackward>`` (and require grad only if
    an input did); otherwise their own nodes.

    Raises
    ------
    ValueError
        "Unexpected keyword arguments: scale" (reentrant with kwargs);
        "Passing `context_fn` or `debug` is only supported when
        use_reentrant=False."; a ``determinism_check`` other than
        ``"default"``/``"none"``.
    RuntimeError
        In backward (reentrant): "When use_reentrant=True,
        torch.utils.checkpoint is incompatible with .grad() or passing an
        `inputs` parameter to .backward()..."; "none of output has
        requires_grad=True, this checkpoint() is not necessary"; the
        in-place error when an input was changed after the forward.
    CheckpointError
        (non-reentrant) when the recomputation saved other tensors than the
        forward: "A different number of tensors was saved during the
        original forward and recomputation", "Recomputed values for the
        following tensors have different metadata than during the forward
        pass".

    Warns
    -----
    UserWarning
        "None of the inputs have requires_grad=True. Gradients will be None"
        (reentrant): its outputs then get no ``grad_fn`` at all, even when
        ``function`` has parameters that require grad.
    """
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint a sequential model in ``segments`` pieces (``torch.utils.checkpoint.checkpoint_sequential``).

    ``functions`` (an ``nn.Sequential`` or a list of modules/functions, each
    taking one tensor) is cut into ``segments`` runs of
    ``len(functions) // segments``; every run but the last is checkpointed,
    so only the tensor entering each run is kept (plus the last run's
    activations).  With ``n`` layers and ``√n`` segments, memory goes from
    ``n`` activations to about ``2√n``, for one extra forward pass.

    Parameters
    ----------
    functions : Sequential or list
    segments : int
    input : Tensor
    use_reentrant : bool
        As in :func:`checkpoint` (PyTorch warns when it is not passed, then uses True).
    preserve_rng_state : bool, keyword

    Raises
    ------
    ValueError
        "Unexpected keyword arguments: ..." for any other keyword.
    """
    if use_reentrant is None:
        warnings.warn(SEQUENTIAL_USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


# -- the non-reentrant variant ---------------------------------------------------------------------------------
class _SaveInputs(Function):
    """Keeps the checkpoint's tensor inputs with their versions (``ctx.saved_tensors`` raises PyTorch's in-place
    error when one changed before the recomputation).  Only its node is kept."""

    @staticmethod
    def forward(ctx, dummy, *tensors):
        ctx.save_for_backward(*tensors)
        return dummy.detach()

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * (len(ctx.needs_input_grad))


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, args, kwargs):
    if _debug_enabled if _debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        debug = True
    else:
        debug = False
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():  # nothing is recorded, so nothing to drop
        return function(*args, **kwargs)
    frame = _Frame(function, args, kwargs, preserve, recompute_context, determinism_check == "default", debug)
    start = _mark()
    failed = True
    with forward_context:
        outputs = function(*args, **kwargs)
        failed = False
    if failed:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception raised "
            "during the checkpointed forward. This is not supported because checkpoint cannot return a value for a "
            "failed forward."
        )
    frame.drop(_region(outputs, start, _mark()))
    return outputs


def _mark() -> int:
    """A point in the order nodes are created (a new node's number)."""
    return Node()._sequence_nr()


def _tensors_in(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors_in(o)


def _region(outputs, start, end):
    """The nodes created between ``start`` and ``end`` that lead to ``outputs``, in creation order."""
    seen, stack = set(), []
    for t in _tensors_in(outputs):
        fn = t.grad_fn
        if fn is not None and id(fn) not in seen:
            seen.add(id(fn))
            stack.append(fn)
    found = []
    while stack:
        node = stack.pop()
        seq = node._sequence_nr()
        if start < seq < end:
            found.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen and not isinstance(nxt, AccumulateGrad):
                if nxt._sequence_nr() > start:
                    seen.add(id(nxt))
                    stack.append(nxt)
    found.sort(key=lambda n: n._sequence_nr())
    return found


class _Frame:
    """One non-reentrant checkpoint: what is needed to run the function again, and the nodes waiting for it."""

    def __init__(self, function, args, kwargs, preserve, recompute_context, check, debug):
        self.function = function
        self.kwargs = kwargs
        self.preserve = preserve
        self.rng_state = _random.default_generator.get_state() if preserve else None
        self.recompute_context = recompute_context
        self.check = check
        self.debug = debug
        self.args = [None if isinstance(a, Tensor) else a for a in args]
        self.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        with enable_grad():  # kept with their versions, through a Function's saved tensors
            dummy = Tensor._make(np.zeros(0), None).requires_grad_()
            out = _SaveInputs.apply(dummy, *[a for a in args if isinstance(a, Tensor)])
        self.saved_inputs = out.grad_fn
        self.nodes = []  # weak references to the region's nodes, in creation order
        self.placeholders = []  # the _Recomputable of each node that saved tensors
        self.metadata = []  # (shape, dtype, device) of each dropped tensor, in order
        self.forward_log = []

    def drop(self, nodes):
        """Replace the saved values of ``nodes`` (the forward's region) by placeholders."""
        self.nodes = [weakref.ref(n) for n in nodes]
        for k, node in enumerate(nodes):
            entries = _saved_entries(node)
            self.forward_log.append(_describe(node, entries))
            if not entries:
                continue
            self.metadata.extend(_meta(sv) for _, sv in entries)
            placeholder = _Recomputable(self, k, len(_stash(node)))
            _set_stash(node, placeholder)
            self.placeholders.append(weakref.ref(placeholder))

    def recompute(self):
        """Run the function again and hand each placeholder the values its node saved this time."""
        inputs = list(self.args)
        for i, t in zip(self.tensor_indices, self.saved_inputs.saved_tensors):
            inputs[i] = t
        start = _mark()
        with _rng_fork(self.rng_state, self.preserve), enable_grad(), self.recompute_context:
            outputs = self.function(*inputs, **self.kwargs)
        fresh = _region(outputs, start, _mark())
        self._match(fresh)
        originals = {id(n): n for n in (r() for r in self.nodes) if n is not None}
        pairs = dict(zip((id(n) for n in fresh), (r() for r in self.nodes)))
        by_index = {}
        for k, (old_ref, new) in enumerate(zip(self.nodes, fresh)):
            if old_ref() is not None and _saved_entries(new):
                by_index[k] = _rewired(_stash(new), pairs, originals)
        for ref in self.placeholders:
            p = ref()
            if p is not None and p.index in by_index:
                p.fill(by_index[p.index])

    def _match(self, fresh):
        """The determinism check: the recomputation must save tensors of the same shapes, dtypes and devices."""
        log = [_describe(n, _saved_entries(n)) for n in fresh]
        got = [_meta(sv) for n in fresh for _, sv in _saved_entries(n)]
        if self.check:
            if len(got) < len(self.metadata):
                self._fail(
                    "torch.utils.checkpoint: A different number of tensors was saved during the original forward "
                    "and recomputation.\n"
                    f"Number of tensors saved during forward: {len(self.metadata)}\n"
                    f"Number of tensors saved during recomputation: {len(got)}.\n{DEBUG_TIP}",
                    log,
                )
            different = [(k, a, b) for k, (a, b) in enumerate(zip(self.metadata, got)) if a != b]
            if different:
                text = "".join(
                    f"tensor at position {k}:\nsaved metadata: {_meta_str(a)}\nrecomputed metadata: {_meta_str(b)}\n"
                    for k, a, b in different
                )
                self._fail(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                    f"than during the forward pass.\n{text}.\n{DEBUG_TIP}",
                    log,
                )
        old = [r() for r in self.nodes]
        if len(fresh) < len(old) or any(
            o is not None and type(o) is not type(n) for o, n in zip(old, fresh)
        ):  # leafkit's own check: the saved values are handed node by node
            self._fail(
                "torch.utils.checkpoint: the recomputation recorded other operations than the original forward "
                "(leafkit hands the recomputed values to the original nodes one by one, so they must be the same "
                f"operations, in the same order).\n{DEBUG_TIP}",
                log,
            )

    def _fail(self, message, recompute_log):
        if self.debug:
            message = (
                "An error happened while unpacking tensors; listing the operations recorded by the original "
                "forward and by the recomputation, because you passed `debug=True` to "
                "`torch.utils.checkpoint.checkpoint()`.\n\n"
                "Operations recorded during the original forward:\n"
                + "".join(f"  {k + 1}: {d}\n" for k, d in enumerate(self.forward_log))
                + "\nOperations recorded during recomputation:\n"
                + "".join(f"  {k + 1}: {d}\n" for k, d in enumerate(recompute_log))
                + "\nERROR: Detected non-determinism while running activation checkpointing\n\n"
                + message
            )
        raise CheckpointError(message)


def _meta_str(m) -> str:
    """The metadata as PyTorch prints its dict: ``{'shape': torch.Size([3]), 'dtype': torch.float32, ...}``."""
    shape, np_dtype, device = m
    return (
        f"{{'shape': {Size(shape)!r}, 'dtype': {_dtype.from_numpy_dtype(np_dtype)!r}, "
        f"'device': {device or _device.CPU!r}}}"
    )


def _describe(node, entries) -> str:
    saved = ", ".join(f"{_meta_short(_meta(sv))}" for _, sv in entries)
    return node.name() + (f"   saves {saved}" if saved else "")


def _meta_short(m) -> str:
    shape, np_dtype, _ = m
    return f"{np_dtype.kind}{np_dtype.itemsize * 8}[{', '.join(map(str, shape))}]"


_TAKEN = object()


class _Recomputable:
    """Stands in for a node's saved values until they are needed: the first read recomputes the checkpointed
    function; each saved tensor is then handed out once (a second read recomputes again, as PyTorch's unpack
    hook does).  Sizes and other plain values stay readable."""

    __slots__ = ("frame", "index", "length", "values", "__weakref__")

    def __init__(self, frame, index, length):
        self.frame = frame
        self.index = index
        self.length = length
        self.values = None

    def fill(self, values):
        self.values = list(values)

    def __len__(self):
        return self.length

    def __bool__(self):
        return self.length > 0

    def __getitem__(self, k):
        if k < 0:
            k += self.length
        if self.values is None or self.values[k] is _TAKEN:
            self.frame.recompute()
        v = self.values[k]
        if isinstance(v, SavedVariable):
            self.values[k] = _TAKEN  # handed out once: the placeholder lets it go
        return v

    def __iter__(self):
        for k in range(self.length):
            yield self[k]


# -- saved values: the one place that reads how a node keeps what it saved ----------------------------------------
# (to be replaced by torch.autograd.graph.saved_tensors_hooks once the engine has them)
def _stash(node):
    return node._stash


def _set_stash(node, value) -> None:
    node._stash = value


def _saved_entries(node):
    """``(position, SavedVariable)`` for each tensor the node saved."""
    stash = node._stash
    if stash is None or isinstance(stash, _Recomputable):
        return []
    return [(k, v) for k, v in enumerate(stash) if isinstance(v, SavedVariable)]


def _meta(sv):
    return (tuple(sv.data.shape), sv.data.dtype, sv.device)


def _rewired(stash, pairs, originals):
    """The recomputed saved values, each intermediate tensor given the original node as its ``grad_fn`` (as
    PyTorch's unpack does), so that a second backward goes through the original graph."""
    out = []
    for v in stash:
        if isinstance(v, SavedVariable) and v.tensor is not None:
            fn = v.tensor.grad_fn
            orig = pairs.get(id(fn)) if fn is not None else None
            if orig is not None and id(orig) in originals:
                t = Tensor._make(v.data, v.device, orig, v.tensor._output_nr)
                v = SavedVariable(v.data, t._version_counter, t, t._output_nr, orig, v.device)
        out.append(v)
    return out
