"""The model of the stepper: one backward pass, run once for real and recorded, replayed for Back.

:class:`BackwardPass` knows nothing of widgets (it imports no ipywidgets, and is tested on its
own): it runs ``loss.backward()`` one node at a time through the engine's own generator,
:func:`leafkit.autograd.backward_steps`, and keeps a :class:`StepRecord` of each step.  Going back
puts every ``.grad`` back by replaying those records from the start (see the package docstring
for why).  Everything here is the same in every language: the words are the view's.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import sys
import warnings

import leafkit
from leafkit.autograd import backward_steps
from leafkit.nn import Module
from leafkit.viz import _inspect as I
from leafkit.viz.dot import walk

from .._program import format_value

__all__ = ["BackwardPass", "StepRecord", "START", "caller_names", "names_in", "numel", "shape_text"]

#: Where the gradient the pass starts with comes from (the first ``contributions`` of the root).
START = "start"


class StepRecord:
    """What one step of the pass did, copied when it ran (later steps and hooks cannot change it).

    Attributes
    ----------
    index : int
        1 for the first step.
    step : leafkit.autograd.engine.BackwardStep
        The engine's own record (its tensors may be shared with the engine).
    node : Node
        The node that ran (``AccumulateGrad`` for a leaf).
    grad_outputs : list of Tensor or None
        Copies of the gradient that arrived for each output of the node.
    contributions : list of (int, str, Tensor)
        ``(output number, where from, gradient)`` for every gradient sent to this node
        (:data:`START`, ``"start"``, for the gradient the pass starts with); several for one output add up.
    edges : list of (Node, int, Tensor or None, tuple or None)
        ``(next node, its output number, gradient sent, shape before summing back or None)``
        for each ``next_functions`` edge that leads somewhere.
    hooks : list of str
        ``"tensor hook"``, ``"pre-hook"``, ``"post-hook"``, as they fired.
    printed : str
        What the hooks printed during the step.
    retained : list of Tensor
        The tensors whose ``retain_grad()`` copy was taken.
    accumulated : Tensor or None
        The leaf whose ``.grad`` was added to.
    before, after : dict
        ``id(tensor) -> (tensor, grad object or None, copy of its values or None)`` for the
        tensors whose ``.grad`` this step changed.
    freed, skipped : bool
        As in :class:`~leafkit.autograd.engine.BackwardStep`.
    """

    __slots__ = (
        "index",
        "step",
        "node",
        "grad_outputs",
        "contributions",
        "edges",
        "hooks",
        "printed",
        "retained",
        "accumulated",
        "before",
        "after",
        "freed",
        "skipped",
    )

    def __init__(self, index, step):
        self.index = index
        self.step = step
        self.node = step.node
        self.grad_outputs = []
        self.contributions = []
        self.edges = []
        self.hooks = list(step.hooks)
        self.printed = ""
        self.retained = list(step.retained)
        self.accumulated = step.accumulated
        self.before: dict = {}
        self.after: dict = {}
        self.freed = bool(step.freed)
        self.skipped = bool(step.skipped)


class _Tee(io.TextIOBase):
    """Write to a buffer and to the stream that was there (a hook's print shows in both places)."""

    def __init__(self, other):
        self.buffer_ = io.StringIO()
        self.other = other

    def write(self, s):
        self.buffer_.write(s)
        try:
            if self.other is not None:
                self.other.write(s)
        except Exception:  # a closed stream must not break the pass
            pass
        return len(s)

    def flush(self):
        try:
            if self.other is not None:
                self.other.flush()
        except Exception:
            pass


def _copy(t):
    """A detached copy of a tensor (None stays None)."""
    if t is None:
        return None
    with leafkit.no_grad():
        return t.detach().clone()


def _read_grad(t):
    """``t.grad`` without the non-leaf warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


def _grad_state(t):
    g = _read_grad(t)
    return (t, g, _copy(g))


def _repr(t):
    """The tensor's repr (``None`` stays None): what the rows hold, in every language."""
    return None if t is None else format_value(t)


def numel(shape) -> int:
    """The number of elements of a tensor of ``shape``."""
    n = 1
    for s in shape:
        n *= int(s)
    return n


def shape_text(shape) -> str:
    """``(3,)``, ``(2, 3)``, ``()``: a shape as the drawings write it (torchviz's style)."""
    shape = tuple(int(s) for s in shape)
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def caller_names(skip: str = "leafkit.widgets") -> dict:
    """``{id(tensor): (name, tensor)}`` from the variables of the code that called into ``skip``.

    The frame is the first one outside the modules named ``skip...`` (the notebook cell that
    builds the explorer).  Names starting with ``_`` (IPython's ``_``, ``_3``) are left out;
    each ``nn.Module`` adds its parameters as ``model.0.weight``.
    """
    frame = inspect.currentframe()
    out: dict = {}
    try:
        f = frame.f_back if frame is not None else None
        while f is not None and str(f.f_globals.get("__name__", "")).startswith(skip):
            f = f.f_back
        if f is None:
            return out
        spaces = [dict(f.f_locals)]
        if f.f_globals is not f.f_locals:
            spaces.append(f.f_globals)
    finally:
        del frame
    return names_in(*spaces)


def names_in(*spaces) -> dict:
    """``{id(tensor): (name, tensor)}`` for the leafkit tensors (and module parameters) in ``spaces``."""
    out: dict = {}
    for space in spaces:
        for name, value in list(space.items()):
            if not isinstance(name, str) or name.startswith("_") or name in ("In", "Out"):
                continue
            if isinstance(value, leafkit.Tensor):
                out.setdefault(id(value), (name, value))
            elif isinstance(value, Module):
                try:
                    for pname, p in value.named_parameters():
                        out.setdefault(id(p), (f"{name}.{pname}", p))
                except Exception:
                    continue
    return out


class BackwardPass:
    """``loss.backward()`` run one node at a time, recorded, and replayable (no widgets).

    Parameters
    ----------
    loss : leafkit.Tensor
        Where the pass starts.
    gradient : leafkit.Tensor, optional
        ``gradient=`` of ``loss.backward``.
    retain_graph : bool, default False
        As in ``loss.backward(retain_graph=...)``.
    names : dict, optional
        ``{id(tensor): (name, tensor)}`` (see :func:`names_in`); default: the variables of the code
        that builds the pass (:func:`caller_names`).

    Attributes
    ----------
    records : list of StepRecord
        Every step the pass has run so far (also those after the view, once :meth:`back` was used).
    cursor : int
        How many steps the view shows (0: before the pass).
    error : Exception or None
        The error the pass stopped with (``loss.backward()`` raises the same).
    error_printed : str
        What the hooks printed in the step that raised.

    Examples
    --------
    >>> x = leafkit.tensor([1.0, 2.0], requires_grad=True)
    >>> p = BackwardPass((x * x).sum())
    >>> p.forward()[0].node.name(), p.run_all(), p.finished, x.grad   # doctest: +SKIP
    ('SumBackward0', None, True, tensor([2., 4.]))
    """

    def __init__(self, loss, gradient=None, retain_graph=False, names=None):
        self.loss = loss
        self.gradient = gradient
        self.retain_graph = bool(retain_graph)
        self._names = caller_names() if names is None else dict(names)
        self.records: list = []
        self.cursor = 0
        self.error = None
        self.error_printed = ""
        self._gen = None
        self._pending = None
        self._exhausted = False
        self._initial: dict = {}
        self._incoming: dict = {}
        self._structure()
        self._keep_names()

    # -- the graph ----------------------------------------------------------------------------------
    def _structure(self) -> None:
        """The nodes reachable from ``loss`` (drawing order), who sends to whom, and the leaves."""
        root = self.loss.grad_fn
        self.order, self.children = walk([root]) if root is not None else ([], [])
        self._index = {id(fn): k for k, fn in enumerate(self.order)}
        self.parents = [[] for _ in self.order]  # per node: the nodes that send it a gradient
        for k, kids in enumerate(self.children):
            for c, _ in kids:
                if c is not None:
                    self.parents[c].append(k)
        self.leaves = [fn.variable for fn in self.order if I.is_accumulate_grad(fn)]

    def _tracked(self) -> list:
        """The tensors whose ``.grad`` the pass may change: the leaves and every tensor retaining its grad."""
        out = {id(t): t for t in self.leaves}
        if self.loss.grad_fn is None and self.loss.requires_grad:
            out[id(self.loss)] = self.loss
        for fn in self.order:
            for t in self.retained_by(fn):
                out[id(t)] = t
        for _, t in self._names.values():
            if t.grad_fn is not None and id(t.grad_fn) in self._index and getattr(t, "retains_grad", False):
                out[id(t)] = t
        return list(out.values())

    @staticmethod
    def retained_by(fn) -> list:
        """The tensors made by ``fn`` that called ``retain_grad()`` (still alive)."""
        refs = getattr(fn, "_retain_refs", None) or {}
        out = []
        for ref in list(refs.values()):
            t = ref() if callable(ref) else None
            if t is not None:
                out.append(t)
        return out

    def _keep_names(self) -> None:
        """Keep only the names of tensors in this graph (and the gradient), so nothing else stays alive."""
        keep = {}
        for tid, (name, t) in self._names.items():
            fn = t.grad_fn
            if (
                t is self.loss
                or t is self.gradient
                or any(t is leaf for leaf in self.leaves)
                or (fn is not None and id(fn) in self._index)
            ):
                keep[tid] = (name, t)
        self._names = keep
        # the tensor each node made, when it has a name (the first name found wins)
        self._made = {}
        for name, t in keep.values():
            fn = t.grad_fn
            if fn is not None and id(fn) in self._index:
                self._made.setdefault((id(fn), int(getattr(t, "output_nr", 0))), name)

    def name_of(self, t, default=None):
        """The name of tensor ``t`` (from ``names`` or the calling cell), or ``default``."""
        hit = self._names.get(id(t))
        return hit[0] if hit is not None and hit[1] is t else default

    def made_by(self, fn):
        """The name of the tensor node ``fn`` made (its first output), or ``None``."""
        return self._made.get((id(fn), 0))

    def tensor_name(self, t) -> str:
        """A tensor's name, or for an unnamed non-leaf the node that made it (``<MulBackward0>``)."""
        name = self.name_of(t)
        if name is None:
            fn = t.grad_fn
            name = f"<{I.node_name(fn)}>" if fn is not None else "<leaf>"
        return name

    @property
    def loss_name(self) -> str:
        return self.name_of(self.loss, "loss")

    def label(self, fn, plain_name: bool = False) -> str:
        """How a node is written: ``MulBackward0 (y)``, ``AccumulateGrad (x)``."""
        if fn is None:
            return "None"
        if I.is_accumulate_grad(fn):
            name = self.name_of(fn.variable)
            base = "AccumulateGrad"
            return base if plain_name or name is None else f"{base} ({name})"
        base = I.node_name(fn)
        made = self.made_by(fn)
        return base if plain_name or made is None else f"{base} ({made})"

    @property
    def statement(self) -> str:
        """The call being stepped through, as code: ``loss.backward()``."""
        args = []
        if self.gradient is not None:
            gname = self.name_of(self.gradient)
            if gname is None:
                try:
                    gname = f"torch.tensor({self.gradient.tolist()!r})"
                except Exception:
                    gname = "..."
            args.append(f"gradient={gname}")
        if self.retain_graph:
            args.append("retain_graph=True")
        return f"{self.loss_name}.backward({', '.join(args)})"

    def start_gradient(self):
        """The gradient the pass starts with: ``gradient``, ones for a one-element loss, or ``None``."""
        if self.gradient is not None:
            return self.gradient
        try:
            return leafkit.ones_like(self.loss) if self.loss.numel() == 1 else None
        except Exception:
            return None

    # -- the pass -----------------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """True once the pass is over (every node ran, or it stopped with :attr:`error`) and the view shows it."""
        return self._exhausted and self.cursor == len(self.records)

    @property
    def shown(self) -> list:
        """The records of the steps the view shows."""
        return self.records[: self.cursor]

    def _start(self) -> None:
        self._initial = {id(t): _grad_state(t) for t in self._tracked()}
        self._gen = backward_steps(self.loss, self.gradient, retain_graph=self.retain_graph)
        g = self.gradient
        try:
            if g is None and self.loss.numel() == 1:
                g = leafkit.ones_like(self.loss)
            if self.loss.grad_fn is not None and isinstance(g, leafkit.Tensor):
                self._incoming.setdefault(id(self.loss.grad_fn), []).append(
                    (int(getattr(self.loss, "output_nr", 0)), START, _copy(g))
                )
        except Exception:  # a gradient the engine will refuse: its error is shown at the first step
            pass

    def _next_step(self):
        """``(the engine's next step or None at the end, what its hooks printed, its error or None)``."""
        st, self._pending = self._pending, None
        if st is not None:
            return st, "", None
        tee = _Tee(sys.stdout)
        try:
            with contextlib.redirect_stdout(tee):
                st = next(self._gen)
        except StopIteration:
            return None, "", None
        except Exception as exc:  # the lesson's errors (PyTorch's): shown, and raised by step()
            return None, tee.buffer_.getvalue(), exc
        return st, tee.buffer_.getvalue(), None

    def _advance(self):
        """Run the next node for real; ``(record, None)``, ``(None, None)`` at the end, or ``(None, error)``."""
        if self._exhausted:
            return None, None
        if self._gen is None:
            self._start()
        st, printed, exc = self._next_step()
        if exc is not None:
            self._exhausted = True
            self.error = exc
            self.error_printed = printed
            return None, exc
        if st is None:
            self._exhausted = True
            return None, None
        rec = self._record(st, printed)
        self.records.append(rec)
        self.cursor = len(self.records)
        self._finish_if_done()
        return rec, None

    def _record(self, st, printed) -> StepRecord:
        """The :class:`StepRecord` of the engine's step ``st``: copies of everything it received and sent."""
        rec = StepRecord(len(self.records) + 1, st)
        rec.printed = printed
        rec.grad_outputs = [_copy(g) for g in st.grad_outputs]  # None where no gradient arrived
        rec.contributions = list(self._incoming.pop(id(st.node), []))
        expand = I.node_name(st.node).startswith("Expand") and st.grad_outputs and st.grad_outputs[0] is not None
        for nxt, nr, g, frm in st.edges:  # frm: the shape the engine summed the gradient back from
            if nxt is None:
                continue
            if expand and g is not None and tuple(g.shape) != tuple(st.grad_outputs[0].shape):
                frm = tuple(st.grad_outputs[0].shape)  # ExpandBackward0 sums back over the expanded dimensions itself
            gc = _copy(g)
            rec.edges.append((nxt, nr, gc, frm))
            if gc is not None:
                self._incoming.setdefault(id(nxt), []).append((nr, self.label(st.node), gc))
        changed = list(st.retained) + ([st.accumulated] if st.accumulated is not None else [])
        for t in changed:
            tid = id(t)
            if tid not in self._initial:  # retained by a tensor we could not see before: it held no gradient
                self._initial[tid] = (t, None, None)
                rec.before[tid] = (t, None, None)
            else:
                rec.before[tid] = self.state_at(len(self.records))[tid]
            rec.after[tid] = _grad_state(t)
        return rec

    def _finish_if_done(self) -> None:
        """Once every node of the graph ran, end the generator now (no node is left to run), so that
        :attr:`finished` is True right after the last node, not one Step later."""
        ran = {id(r.node) for r in self.records}
        if self.order and not all(id(fn) in ran for fn in self.order):
            return
        try:
            self._pending = next(self._gen)  # never a node, since all ran; kept for the next Step if it is
        except StopIteration:
            self._exhausted = True
        except Exception as exc:  # pragma: no cover - nothing runs after the last node
            self._exhausted = True
            self.error = exc

    def state_at(self, cursor: int) -> dict:
        """``id -> (tensor, grad object, values)`` after step ``cursor``: the state before the pass, then the
        recorded effect of each step, in order."""
        state = dict(self._initial) if self._gen is not None else {id(t): _grad_state(t) for t in self._tracked()}
        for rec in self.records[:cursor]:
            state.update(rec.after)
        return state

    def _apply(self, cursor: int) -> None:
        """Put every ``.grad`` the pass touches in the state after step ``cursor``: replayed from the start."""
        state = self.state_at(cursor)
        with leafkit.no_grad():
            for t, obj, values in state.values():
                if obj is not None and values is not None:
                    obj.copy_(values)
                if _read_grad(t) is not obj:
                    t.grad = obj
        self.cursor = cursor

    def forward(self):
        """One step forward: replay a recorded step, or run the next node.  ``(record or None, error or None)``;
        at the end of a pass that failed, its error again."""
        if self.cursor < len(self.records):
            self._apply(self.cursor + 1)
            return self.records[self.cursor - 1], None
        if self._exhausted:
            return None, self.error
        return self._advance()

    def run_all(self):
        """Step to the end of the pass; the error it stopped with, or ``None``."""
        while True:
            rec, exc = self.forward()
            if exc is not None or rec is None:
                return exc

    def back(self) -> bool:
        """Show the state after the previous step (replayed from the start); False at the start."""
        if self.cursor == 0:
            return False
        self._apply(self.cursor - 1)
        return True

    def reset(self) -> bool:
        """Back to before the pass: every ``.grad`` as it was.  False when already there."""
        if self.cursor == 0:
            return False
        self._apply(0)
        return True

    # -- what the view reads ----------------------------------------------------------------------
    def row(self, rec) -> dict:
        """The language-independent row of a step (see ``BackwardStepper.rows``)."""
        node = rec.node
        acc = rec.accumulated
        return {
            "step": rec.index,
            "node": I.node_name(node),
            "label": self.label(node),
            "grad_in": [None if g is None else format_value(g) for g in rec.grad_outputs],
            "contributions": [format_value(g) for _, _, g in rec.contributions],
            "edges": [
                {
                    "to": self.label(nxt),
                    "output_nr": nr,
                    "grad": None if g is None else format_value(g),
                    "shape": None if g is None else tuple(g.shape),
                    "summed_from": frm,
                }
                for nxt, nr, g, frm in rec.edges
            ],
            "hooks": list(rec.hooks),
            "printed": rec.printed,
            "retained": {self.tensor_name(t): _repr(rec.after[id(t)][2]) for t in rec.retained},
            "accumulated": None if acc is None else self.name_of(acc, "?"),
            "grad": None if acc is None else _repr(rec.after[id(acc)][2]),
            "freed": rec.freed,
            "skipped": rec.skipped,
        }

    def current_grads(self) -> dict:
        """``name -> repr of .grad or None`` for every named tensor the pass may change, as the view shows them."""
        out = {}
        for t, _obj, values in self.state_at(self.cursor).values():
            name = self.name_of(t)
            if name is not None:
                out[name] = None if values is None else format_value(values)
        return dict(sorted(out.items()))

    def ready(self) -> dict:
        """``{node index: (step it became ready at, edge position)}`` for the nodes not run yet whose every
        sender has run (the root: at the start of the pass)."""
        if self.finished or not self.order:
            return {}
        step_of = {id(r.node): r for r in self.shown}
        out = {}
        for k, fn in enumerate(self.order):
            if id(fn) in step_of:
                continue
            if k == 0 and not self.parents[0]:
                out[k] = (0, 0)
                continue
            senders = [step_of.get(id(self.order[p])) for p in self.parents[k]]
            if senders and all(r is not None for r in senders):
                last = max(senders, key=lambda r: r.index)
                pos = max(i for i, e in enumerate(last.edges) if e[0] is fn)
                out[k] = (last.index, pos)
        return out

    def next_node(self):
        """``(node, number of ready nodes)``: the node the engine runs next, by PyTorch's rule: of the ready
        nodes, the one created last (highest sequence number; AccumulateGrad's is the highest of all), and
        among equals the one that became ready first."""
        ready = self.ready()
        if not ready:
            return None, 0
        k = max(ready, key=lambda i: (self.order[i]._sequence_nr(), -ready[i][0], -ready[i][1]))
        return self.order[k], len(ready)
