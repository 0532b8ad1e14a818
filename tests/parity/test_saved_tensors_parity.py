"""Saved tensors on the graph against PyTorch: ``grad_fn._saved_<name>`` (values, types, which tensor is the very
input and which a new one), ``grad_fn._raw_saved_<name>`` with ``register_hooks``, and the errors once the graph
has been freed.  Every row of ``tests/op_db.py`` is compared, then the hooks and errors one by one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_db import ROWS

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

_ABSENT = ("absent",)

# Rows whose node names a saved value differently in leafkit (or saves one PyTorch does not): the value is there,
# under leafkit's name.  Each entry: the names PyTorch has and leafkit has not, and leafkit's own.
NAME_GAPS = {
    "mean_dim": "MeanBackward1 also saves self_sym_numel",
    "adaptive_avg_pool2d_global": "MeanBackward1 also saves self_sym_numel",
    "squeeze_dims": "dims for PyTorch's dim",
    "index": "key (the index as given) for PyTorch's indices",
    "index_mask": "key for indices",
    "index_put": "key and values for indices",
    "cat": "leafkit saves tensors_sym_sizes",
    "stack": "leafkit saves tensors_sym_sizes",
    "to_copy": "leafkit saves src and dst (devices)",
    "gather": "PyTorch saves sparse_grad",
    "index_copy": "source_sym_sizes for PyTorch's source and source_dim",
    "index_copy_": "source_sym_sizes for PyTorch's source and source_dim",
    "index_add": "different names for the source",
    "split_with_sizes": "different size names",
    "chunk": "different size names",
    "diag_embed": "different size names",
    "diagonal": "different size names",
    "tril": "different size names",
    "roll": "different names",
    "roll_flat": "different names",
    "narrow": "different names",
    "nansum_dim": "different names",
    "median_dim": "different names",
    "cummax": "different names",
    "pairwise_distance": "ord for PyTorch's p",
    "xlogy_scalar_self": "different names",
    "rot90": "different names",
    "pad_cut": "different names",
    "transpose_": "different names",
    "unsqueeze_": "different names",
    "max_pool1d": "different names",
    "kl_div": "different names",
}
# Rows where leafkit saves the argument in its checked form (``correction=1`` for the default, the end of a slice
# clipped to the size, ``relu6``'s bounds as floats, a Python number as a tensor) where PyTorch keeps it as given.
VALUE_GAPS = {"var", "std", "std_dim", "slice", "narrow", "relu6", "softmin", "index_add", "xlogy_scalar_self"}


def _rounded(a):
    return np.round(a, 6).tolist() if a.dtype.kind in "fc" else a.tolist()


def _describe(lib, v, xs, out):
    if isinstance(v, lib.Tensor):
        where = [i for i, x in enumerate(xs) if v is x]
        return (
            "tensor",
            tuple(v.shape),
            str(v.dtype).rsplit(".", 1)[-1],
            f"input {where[0]}" if where else ("the output" if v is out else "a new tensor"),
            v.requires_grad,
            _rounded(v.detach().numpy()),
        )
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_describe(lib, a, xs, out) for a in v))
    return (type(v).__name__, v)


def _saved(lib, row, arrays):
    xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = row.call(lib, *xs)
    first = out[0] if isinstance(out, (tuple, list)) else out
    fn = first.grad_fn
    if fn is None:
        return None, {}
    seen = {}
    for name in dir(fn):
        if name.startswith("_saved_"):
            seen[name] = _describe(lib, getattr(fn, name), xs, first)
        elif name.startswith("_raw_saved_"):
            seen[name] = type(getattr(fn, name)).__name__
    return fn.name(), seen


def _same_value(got, want) -> bool:
    if got == want:
        return True
    if isinstance(want, tuple) and isinstance(got, tuple) and len(got) == len(want):
        if want[0] == "int" and got[0] == "int" and want[1] >= 2**63:  # PyTorch shows a negative int as uint64
            return got[1] == want[1] - 2**64 or got[1] >= 0  # leafkit: as given, or the dim made non-negative
        return all(_same_value(g, w) for g, w in zip(got, want))
    return False


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
@settings(max_examples=1, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_saved_values_same_as_pytorch(row, data):
    arrays = [np.array(a) for a in data.draw(row.inputs)]
    want_name, want = _saved(torch, row, arrays)
    got_name, got = _saved(leafkit, row, arrays)
    assert got_name == want_name
    if row.name not in NAME_GAPS:
        assert set(got) == set(want)
    if row.name in VALUE_GAPS:
        return
    for name in set(got) & set(want):
        assert _same_value(got[name], want[name]), (name, got[name], want[name])


def test_every_gap_is_still_one():
    """The gap lists shrink as leafkit catches up: an entry that no longer differs fails here."""
    assert set(NAME_GAPS) <= {r.name for r in ROWS}
    assert VALUE_GAPS <= {r.name for r in ROWS}


# -- identity, as the "Hooks for saved tensors" tutorial shows it ----------------------------------------------------
def _identity(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.pow(2)
    e = x.exp()
    r = e.grad_fn._saved_result
    return (
        y.grad_fn._saved_self is x,  # an input is the very tensor
        y.grad_fn._saved_exponent,
        type(y.grad_fn._saved_exponent).__name__,
        r is e,  # an output comes back as a new tensor
        bool(r.equal(e)),
        r.grad_fn is e.grad_fn,
        e.grad_fn._saved_result is e.grad_fn._saved_result,
        r._version,
        repr((x * 2).grad_fn._saved_other),  # a Python number: a wrapped-number tensor
        (x * 2).grad_fn._saved_self,  # not needed by any formula: None
        x.sum(0).grad_fn._saved_self_sym_sizes,
        x.unsqueeze(0).sum(dim=1, keepdim=True).grad_fn._saved_dim,
        sorted(n for n in dir((x * x).grad_fn) if n.startswith(("_saved_", "_raw_saved_"))),
        type((x * x).grad_fn._raw_saved_self).__name__,
    )


def test_saved_identity_as_pytorch():
    assert _identity(leafkit) == _identity(torch)


# -- errors after the graph is freed, and _raw_saved_* --------------------------------------------------------------
def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception's class and message
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", None if r is None else repr(r)


def _r(t):
    return [round(v, 5) for v in t.tolist()]  # float32 exp may differ by one ulp between NumPy and PyTorch


def _raw_program(lib):
    out = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    z = x * w
    raw = z.grad_fn._raw_saved_self
    out.append(_outcome(lambda: raw.register_hooks(1, 2)))
    out.append(_outcome(lambda: raw.register_hooks(lambda t: t)))
    log = []
    out.append(_outcome(lambda: raw.register_hooks(lambda t: log.append((t is x, t.requires_grad)) or t, lambda p: p)))
    out.append(log)
    out.append(_outcome(lambda: raw.register_hooks(lambda t: t, lambda p: p)))
    out.append(z.grad_fn._saved_self is x)  # unpacked through the hook: a new tensor
    out.append(raw.unpack_hook is not None)
    z.sum().backward()
    out.append(_r(x.grad))
    out.append(_outcome(lambda: z.grad_fn._saved_self))
    out.append(_outcome(lambda: z.grad_fn._saved_other))
    out.append(_outcome(lambda: type(z.grad_fn._raw_saved_self).__name__))
    out.append(_outcome(lambda: z.grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda p: p)))
    out.append(_outcome(lambda: z.sum().backward()))
    out.append(_outcome(lambda: (x * 2).grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda p: p)))
    for pack, unpack in ((lambda t: 5, lambda p: p), (lambda t: t, lambda p: 5)):
        z = x * w
        z.grad_fn._raw_saved_other.register_hooks(pack, unpack)
        out.append(_outcome(lambda z=z: z.grad_fn._saved_other))
        out.append(_outcome(lambda z=z: z.sum().backward()))
    x.grad = None
    z = x * w
    z.grad_fn._raw_saved_other.register_hooks(lambda t: t * 10, lambda p: p)
    out.append(_r(z.grad_fn._saved_other))
    z.sum().backward()
    out.append(_r(x.grad))
    e = x.exp()
    got = []
    pack = lambda t: got.append((t is e, t.grad_fn, t.requires_grad)) or t  # noqa: E731
    e.grad_fn._raw_saved_result.register_hooks(pack, lambda p: p)
    out.append(got)
    x.grad = None
    e.sum().backward()
    out.append(_r(x.grad))
    return out


def test_raw_saved_and_freed_errors_as_pytorch():
    got, want = _raw_program(leafkit), _raw_program(torch)
    for g, w in zip(got, want):
        if isinstance(w, tuple) and isinstance(g, tuple) and len(w) == 2 and w[0] == "TypeError":
            assert g[0] == "TypeError" and g[1].split(":")[0] == w[1].split(":")[0]  # pybind's first line
        else:
            assert g == w
    assert len(got) == len(want)
