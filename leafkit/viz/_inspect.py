"""Read-only, duck-typed access to autograd tensors and graph nodes.

Everything here uses PyTorch's public autograd API (``grad_fn``,
``next_functions``, ``AccumulateGrad.variable``, ``_saved_*`` attributes ...),
which leafkit mirrors, so the drawing layer works on real ``torch`` tensors and
on leafkit tensors alike.  Nothing in this module imports torch or leafkit, and
nothing here changes a graph: ``viz`` only reads it.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import sys
import warnings

SAVED_PREFIX = "_saved_"

__all__ = [
    "gc_paused",
    "is_tensor",
    "node_name",
    "next_nodes",
    "is_accumulate_grad",
    "saved_names",
    "saved_items",
    "node_freed",
    "shape_of",
    "shape_str",
    "device_str",
    "safe_grad",
    "storage_ptr",
    "hook_count",
    "retains_grad",
    "format_values",
    "short_sig",
]


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while a drawing is built.

    Walking a 100,000-node graph allocates many small objects; each automatic
    collection would then traverse the whole autograd graph again (it halves
    the time for big graphs).  Nothing here creates garbage cycles.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def is_tensor(obj) -> bool:
    """True for objects that look like an autograd tensor (torch or leafkit).

    Classes themselves (``torch.Tensor``) are rejected: their attributes are
    descriptors, not values.
    """
    if isinstance(obj, type):
        return False
    try:
        return (
            hasattr(obj, "grad_fn")
            and hasattr(obj, "is_leaf")
            and hasattr(obj, "requires_grad")
            and hasattr(obj, "shape")
        )
    except Exception:  # a property that raises is not a tensor we can draw
        return False


def node_name(fn) -> str:
    """The node's name as PyTorch prints it (``fn.name()``, e.g. ``MulBackward0``)."""
    name = getattr(fn, "name", None)
    if callable(name):
        try:
            return str(name())
        except Exception:
            pass
    return type(fn).__name__


def next_nodes(fn):
    """``fn.next_functions`` as a list of ``(node, input_nr)`` with ``None`` nodes kept."""
    try:
        nf = fn.next_functions
    except Exception:
        return []
    return list(nf or ())


_TYPE_ACC: dict = {}


def is_accumulate_grad(fn) -> bool:
    """True for ``AccumulateGrad`` nodes: they hold the leaf tensor as ``.variable``.

    Decided once per node class (as torchviz, by the ``variable`` attribute).
    """
    t = type(fn)
    acc = _TYPE_ACC.get(t)
    if acc is None:
        acc = _TYPE_ACC[t] = hasattr(fn, "variable")
    return acc


_TYPE_SAVED: dict = {}
# leafkit's own bookkeeping shares the prefix; these are not saved values.
_NOT_SAVED = frozenset()  # leafkit keeps its own bookkeeping under other prefixes


def _saved_filter(names) -> list:
    return [a for a in names if a.startswith(SAVED_PREFIX) and a not in _NOT_SAVED]


def saved_names(fn, per_instance: bool = True) -> list:
    """Names of the ``_saved_<name>`` attributes of a node, as torchviz finds them.

    With ``per_instance=False`` the list is cached per node class (PyTorch
    defines saved attributes on the class), which is what the cheap "is this
    node freed?" probe uses.
    """
    if not per_instance:
        t = type(fn)
        names = _TYPE_SAVED.get(t)
        if names is None:
            names = _TYPE_SAVED[t] = _saved_filter(dir(t))
        if names or not hasattr(fn, "__dict__"):
            return names
    try:
        return _saved_filter(dir(fn))
    except Exception:
        return []


def _freed_error(exc: BaseException) -> bool:
    msg = str(exc)
    return "second time" in msg or "freed" in msg


def node_freed(fn) -> bool:
    """Whether the node's saved tensors were freed by ``backward()``.

    leafkit sets ``node._released``; PyTorch has no such flag, so for torch
    nodes the saved attributes are read and the "backward through the graph a
    second time" ``RuntimeError`` is caught, as the seed experiments show.
    A node without saved values is never "freed" (PyTorch can run it again).
    """
    released = getattr(fn, "_released", None)
    if released is not None:
        # leafkit flags every node backward ran through; only a node that had saved
        # tensors lost anything (PyTorch can rerun a CloneBackward0, or a SumBackward0
        # that kept only the input's sizes)
        return bool(released) and bool(getattr(fn, "_had_saved", False))
    for attr in saved_names(fn, per_instance=False):
        try:
            getattr(fn, attr)
        except RuntimeError as exc:
            if _freed_error(exc):
                return True
        except Exception:
            continue
    return False


def saved_items(fn):
    """``[(name, value)]`` for the node's saved attributes (prefix stripped); for the node of a user's
    ``autograd.Function``, ``[("saved_tensors", (...))]``: what its ``ctx.save_for_backward`` kept.

    Returns ``None`` when the saved tensors were already freed.
    """
    if getattr(fn, "_released", None) and node_freed(fn):
        return None
    out = []
    for attr in saved_names(fn):
        try:
            val = getattr(fn, attr)
        except RuntimeError as exc:
            if _freed_error(exc):
                return None
            continue
        except Exception:
            continue
        out.append((attr[len(SAVED_PREFIX) :], val))
    if not out and hasattr(type(fn), "_forward_cls"):
        # a user's autograd.Function (``CubeBackward``): what ``ctx.save_for_backward`` kept is its public
        # ``saved_tensors`` (it has no ``_saved_*`` attributes); reading it after backward() raises "freed"
        try:
            kept = tuple(fn.saved_tensors)
        except RuntimeError as exc:
            if _freed_error(exc):
                return None
            kept = ()
        except Exception:
            kept = ()
        if kept:
            out.append(("saved_tensors", kept))
    return out


def shape_of(t) -> tuple:
    try:
        return tuple(int(s) for s in t.shape)
    except Exception:
        return ()


def shape_str(t) -> str:
    """``(3, 3)`` as torchviz writes sizes; ``()`` for a scalar."""
    shp = shape_of(t)
    return "(" + ", ".join(str(s) for s in shp) + ("," if len(shp) == 1 else "") + ")"


def device_str(t) -> str:
    """``'cpu'`` / ``'cuda:0'``; ``'cuda:0 (simulated)'`` for leafkit's simulated cuda."""
    try:
        dev = str(t.device)
    except Exception:
        return "?"
    if dev.startswith("cuda"):
        root = type(t).__module__.split(".")[0]
        mod = sys.modules.get(root)
        backend = getattr(getattr(mod, "cuda", None), "backend", None)
        if callable(backend):
            try:
                if backend() == "simulated":
                    dev += " (simulated)"
            except Exception:
                pass
    return dev


def retains_grad(t) -> bool:
    try:
        return bool(getattr(t, "retains_grad", False))
    except Exception:
        return False


def safe_grad(t):
    """``t.grad``, read only where PyTorch does not warn (a leaf, or ``retains_grad``)."""
    try:
        if t.is_leaf or retains_grad(t):
            return t.grad
    except Exception:
        pass
    return None


def storage_ptr(t):
    """The address of the tensor's storage (``detach()`` shares it), or ``None``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for meth in ("untyped_storage", "storage"):
            f = getattr(t, meth, None)
            if f is None:
                continue
            try:
                ptr = int(f().data_ptr())
            except Exception:
                continue
            return ptr or None
    return None


def hook_count(t) -> int:
    """Number of hooks registered with ``register_hook`` (``_backward_hooks``)."""
    try:
        hooks = getattr(t, "_backward_hooks", None)
        return len(hooks) if hooks else 0
    except Exception:
        return 0


def _fmt_number(x) -> str:
    if isinstance(x, float):
        s = f"{x:.4g}"
        if "." not in s and "e" not in s and "n" not in s:  # 8.0 -> "8." as PyTorch prints it
            s += "."
        return s
    return str(x)


def _fmt_nested(vals) -> str:
    if not isinstance(vals, (list, tuple)):
        return _fmt_number(vals)
    return "[" + ", ".join(_fmt_nested(v) for v in vals) + "]"  # depth = ndim: small


def format_values(t, max_items: int = 4) -> str:
    """A short, deterministic rendering of a small tensor's values: ``[8.]``, ``[[2.]]``, ``4.``.

    Tensors with more than ``max_items`` elements show their shape only.
    """
    try:
        numel = 1
        for s in shape_of(t):
            numel *= s
        if numel > max_items:
            return "tensor of shape " + shape_str(t)
        v = t.detach()
        to_cpu = getattr(v, "cpu", None)
        if callable(to_cpu):
            v = to_cpu()
        vals = v.tolist()
    except Exception:
        return "tensor of shape " + shape_str(t)
    return _fmt_nested(vals)


def short_sig(text: str) -> str:
    """A short stable digest used for graph-node signatures (never ``id()``)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
