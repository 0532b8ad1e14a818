"""Random autograd programs for ``tests/parity/test_adversarial.py``, written against a ``torch``-like module.

A program is plain data (drawn by hypothesis): a few leaves, then steps that
each take tensors from a pool and put their result back.  ``run(lib, ...)``
executes it on ``leafkit`` or on real PyTorch and returns every observation
in a normalised form, so the two runs compare with ``==``:

* after every step: the value, shape, dtype, ``requires_grad``, ``is_leaf``,
  the ``grad_fn`` name, ``is_inference()``; or the error class and the first
  words of its message;
* at the end: ``backward`` (maybe ``create_graph=True``) of a weighted sum,
  every leaf's ``.grad`` (and its ``requires_grad``/``grad_fn``), retained
  grads of non-leaves, the gradients the tensor hooks saw, and with
  ``create_graph`` a second derivative through the leaves' ``.grad``.

Leaf values are multiples of 0.5 and the operations are exact in binary
floating point (no division by arbitrary values, no transcendental functions
in the "exact" set), so ties (``maximum``, ``where``), halfway points
(``round``) and integer boundaries (``floor``, ``%``, ``//``) really occur and
both libraries must agree bit for bit.  The "smooth" set adds exp/tanh/
sigmoid/softmax/matmul for the higher-order programs, compared with a tolerance.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

# -- operations: name -> (arity, fn(lib, *tensors)) ---------------------------------------------------------------
EXACT_UNARY = {
    "neg": lambda lib, a: -a,
    "abs": lambda lib, a: a.abs(),
    "relu": lambda lib, a: a.relu(),
    "round": lambda lib, a: a.round(),
    "floor": lambda lib, a: a.floor(),
    "ceil": lambda lib, a: a.ceil(),
    "trunc": lambda lib, a: a.trunc(),
    "sign": lambda lib, a: a.sign() * a,
    "clamp": lambda lib, a: a.clamp(-1.0, 1.0),
    "clamp_min": lambda lib, a: a.clamp(min=0.5),
    "mod_scalar": lambda lib, a: a % 1.5,
    "mod_neg_scalar": lambda lib, a: a % -1.0,
    "floordiv_scalar": lambda lib, a: a // 2,
    "half": lambda lib, a: a * 0.5,
    "square": lambda lib, a: a * a,
    "pow2": lambda lib, a: a**2,
    "where_scalar_other": lambda lib, a: lib.where(a > 0, a, 0.0),
    "where_scalar_self": lambda lib, a: lib.where(a >= 0.5, 1.5, a),
    "where_both_scalar": lambda lib, a: lib.where(a > 0, 1.0, -1.0) * a,
    "maximum_scalar_t": lambda lib, a: lib.maximum(a, lib.tensor(0.5)),
    "max_all": lambda lib, a: a.max() * a,
    "min_dim": lambda lib, a: a.min(0).values * a,
    "max_dim_keep": lambda lib, a: a.max(1, keepdim=True).values + a,
    "sum0": lambda lib, a: a.sum(0, keepdim=True) - a,
    "mean0": lambda lib, a: a.mean(0, keepdim=True) + a,  # over 2 rows: exact
    "t": lambda lib, a: a.t().t(),
    "row_expand": lambda lib, a: a[1].expand(2, 3),
    "flip_index": lambda lib, a: a[lib.tensor([1, 0])],
    "col_step": lambda lib, a: a[:, ::2].sum(1, keepdim=True) * a,
    "mask_mul": lambda lib, a: a.masked_fill(a < 0, 0.5),
    "detach": lambda lib, a: a.detach(),
    "clone": lambda lib, a: a.clone(),
    "double_float": lambda lib, a: a.double().float(),
}
EXACT_BINARY = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "max_pair": lambda lib, a, b: lib.max(a, b),
    "where_gt": lambda lib, a, b: lib.where(a > b, a, b),
    "where_ge": lambda lib, a, b: lib.where(a >= b, b, a),
    "where_row": lambda lib, a, b: lib.where(a[0] > 0, a, b[1]),
    "mod": lambda lib, a, b: a % (b.abs() + 0.5),
    "mod_tensor_neg": lambda lib, a, b: a % (-b.abs() - 1.0),
    "floordiv": lambda lib, a, b: a // (b.abs() + 0.5),
    "clamp_t": lambda lib, a, b: a.clamp(min=b.detach()),
    "matmul": lambda lib, a, b: a @ b.t(),
    "bmatmul": lambda lib, a, b: (a.unsqueeze(0).expand(2, 2, 3) @ b.t()).sum(0),
    "cat_rows": lambda lib, a, b: lib.cat([a[:1], b[1:]]),
    "stack_sum": lambda lib, a, b: lib.stack([a, b]).sum(0),
}
SMOOTH_UNARY = {
    "exp": lambda lib, a: (a * 0.5).exp(),
    "tanh": lambda lib, a: a.tanh(),
    "sigmoid": lambda lib, a: a.sigmoid(),
    "softmax": lambda lib, a: a.softmax(1),
    "log_softmax": lambda lib, a: a.log_softmax(0),
    "sqrt": lambda lib, a: (a * a + 1).sqrt(),
    "pow3": lambda lib, a: a**3,
    "norm": lambda lib, a: a.norm() * a,
    "sin": lambda lib, a: a.sin(),
}


def _custom(lib, kind):
    """A custom ``autograd.Function`` per library (cached): a cube whose backward is written in tensor ops
    (so it can be differentiated again), or the same under ``once_differentiable``."""
    key = (lib.__name__, kind)
    if key not in _CUSTOM:

        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        if kind == "once":
            backward = lib.autograd.function.once_differentiable(backward)
        _CUSTOM[key] = type(
            "Cube" if kind == "twice" else "CubeOnce",
            (lib.autograd.Function,),
            {"forward": staticmethod(forward), "backward": staticmethod(backward)},
        )
    return _CUSTOM[key]


_CUSTOM = {}
SMOOTH_UNARY.update(
    {
        "custom_cube": lambda lib, a: _custom(lib, "twice").apply(a * 0.5),
        "custom_once": lambda lib, a: _custom(lib, "once").apply(a * 0.5),
    }
)

SMOOTH_BINARY = {
    "div": lambda lib, a, b: a / (b * b + 1),
    "mse": lambda lib, a, b: lib.nn.functional.mse_loss(a, b) * a,
    "bce": lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid(), reduction="none"),
    "linear": lambda lib, a, b: lib.nn.functional.linear(a, b),
}

# setitem keys, with the value shapes they take ("value" kinds below)
KEYS = {
    "row": lambda lib, t: 1,
    "neg_row": lambda lib, t: -1,
    "col": lambda lib, t: (slice(None), 1),
    "slice": lambda lib, t: slice(0, 1),
    "elem": lambda lib, t: (0, 2),
    "ellipsis_col": lambda lib, t: (..., 0),
    "none_row": lambda lib, t: (None, 0),
    "mask": lambda lib, t: t.detach() > 0,
    "index": lambda lib, t: lib.tensor([1, 0]),
    "index_dup": lambda lib, t: lib.tensor([0, 0]),
    "index_pair": lambda lib, t: (lib.tensor([0, 1]), lib.tensor([2, 0])),
    "list": lambda lib, t: [1],
    "index_col": lambda lib, t: (slice(None), lib.tensor([0, -1])),
}
VALUES = ["scalar", "zero_d", "row", "row_lead1", "row_lead11", "col_scalar1", "full"]


def _value(lib, kind, src):
    """A setitem value taken from ``src`` (a (2, 3) tensor), differentiable when ``src`` is."""
    if kind == "scalar":
        return 2.5
    if kind == "zero_d":
        return src[1, 1]
    if kind == "row":
        return src[0]
    if kind == "row_lead1":
        return src[:1]  # (1, 3): PyTorch drops the leading size-1 dims
    if kind == "row_lead11":
        return src[:1].unsqueeze(0)  # (1, 1, 3)
    if kind == "col_scalar1":
        return src[0, :1]  # (1,): broadcasts anywhere
    return src  # (2, 3): fits only a few keys


INPLACE = {
    "add_": lambda lib, t, o: t.add_(o),
    "mul_": lambda lib, t, o: t.mul_(o[0]),
    "sub_alpha": lambda lib, t, o: t.sub_(o, alpha=0.5),
    "clamp_": lambda lib, t, o: t.clamp_(-1.0, 0.5),
    "copy_row": lambda lib, t, o: t.copy_(o[1]),
    "copy_lead1": lambda lib, t, o: t.copy_(o[:1]),
    "zero_": lambda lib, t, o: t.zero_(),
    "fill_": lambda lib, t, o: t.fill_(1.5),
    "round_": lambda lib, t, o: t.round_(),
    "floor_": lambda lib, t, o: t.floor_(),
    "relu_": lambda lib, t, o: t.relu_(),
    "mod_": lambda lib, t, o: t.remainder_(1.5),
    "view_row_mul_": lambda lib, t, o: _then(t[0].mul_(o[1]), t),
    "view_col_add_": lambda lib, t, o: _then(t[:, 1].add_(2.0), t),
    "t_view_add_": lambda lib, t, o: _then(t.t()[0].add_(o[0, :2]), t),
}


def _then(_done, t):
    return t


MODES = ["grad", "grad", "grad", "no_grad", "inference"]


def _nan_safe(v):
    if isinstance(v, list):
        return [_nan_safe(x) for x in v]
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return v
    return v


class Observer:
    """Turns tensors and errors into comparable tuples; ``digits=None`` compares values exactly."""

    def __init__(self, lib, digits=None):
        self.lib = lib
        self.digits = digits

    def vals(self, t):
        try:
            v = t.detach().tolist()
        except RuntimeError:  # PyTorch's "efficient zero tensors" (some double-backward results) refuse tolist()
            v = (t.detach() + 0).tolist()
        if self.digits is not None:
            v = _round(v, self.digits)
        return _nan_safe(v)

    def tensor(self, t):
        fn = t.grad_fn
        inf = t.is_inference() if hasattr(t, "is_inference") else None
        return (
            "T",
            tuple(t.shape),
            str(t.dtype).split(".")[-1],
            t.requires_grad,
            t.is_leaf,
            None if fn is None else fn.name(),
            inf,
            self.vals(t),
        )

    @staticmethod
    def error(e):
        # the class only: which check fires first when several would is PyTorch's implementation detail
        return ("E", type(e).__name__)


def _round(v, digits):
    if isinstance(v, list):
        return [_round(x, digits) for x in v]
    if isinstance(v, float) and math.isfinite(v):
        return float(f"{v:.{digits}g}")
    return v


def _mode(lib, mode):
    if mode == "no_grad":
        return lib.no_grad()
    if mode == "inference":
        return lib.inference_mode()
    return lib.enable_grad()


def run(lib, leaves, steps, final, digits=None, unary=None, binary=None, skip=None):
    """Execute one program on ``lib``; see the module docstring for what is observed.

    ``skip(step, a, b)``, when given, may veto a step (it is then observed as ``"skipped"``).
    """
    unary = EXACT_UNARY if unary is None else unary
    binary = EXACT_BINARY if binary is None else binary
    ob = Observer(lib, digits)
    obs = []
    pool = []
    for arr, rg, dtype in leaves:
        pool.append(lib.tensor(arr, dtype=getattr(lib, dtype), requires_grad=rg))
    leaf_count = len(pool)
    retained = []
    hook_log = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in steps:
            kind, name, i, j, mode, extra = step
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            if skip is not None and skip(step, a, b):
                obs.append("skipped")
                continue
            try:
                with _mode(lib, mode):
                    if kind == "u":
                        out = unary[name](lib, a)
                    elif kind == "b":
                        out = binary[name](lib, a, b)
                    elif kind == "set":
                        key_name, value_kind, on_clone = extra
                        target = a.clone() if on_clone else a
                        # the value never shares memory with the target (overlapping writes have their own tests)
                        target[KEYS[key_name](lib, target)] = _value(lib, value_kind, b.clone())
                        out = target
                    elif kind == "inplace":
                        out = INPLACE[name](lib, a, b.clone())
                    elif kind == "retain":
                        a.retain_grad()
                        retained.append(a)
                        out = a
                    elif kind == "hook":
                        tag = len(hook_log)
                        hook_log.append([])
                        # torch 2.13 crashes (SIGSEGV) registering a view's first hook after an in-place change through
                        # an alias, unless its grad_fn was read first (pytorch/pytorch#196459, fixed after 2.13);
                        # reading it changes nothing that the programs observe
                        _ = a.grad_fn
                        a.register_hook(lambda g, tag=tag: hook_log[tag].append(ob.vals(g)) or g * 2)
                        out = a
                    else:
                        raise AssertionError(kind)
                obs.append(ob.tensor(out))
                if out is not a:
                    pool.append(out)
            except Exception as e:  # noqa: BLE001 - the error is the observation
                obs.append(ob.error(e))
        create_graph, weights = final
        terms = []
        result = {"steps": obs, "hooks": hook_log}
        try:  # reading requires_grad of a view regenerates its grad_fn, which may raise (PyTorch's CreationMeta)
            for k, p in enumerate(pool[leaf_count:]):
                if p.requires_grad:
                    terms.append((p * weights[k % len(weights)]).sum())
        except Exception as e:  # noqa: BLE001
            result["terms"] = ob.error(e)
            return result
        if not terms:
            return result
        try:
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            total.backward(create_graph=create_graph)
            result["backward"] = "ok"
        except Exception as e:  # noqa: BLE001
            result["backward"] = ob.error(e)
        result["grads"] = [None if x.grad is None else ob.tensor(x.grad) for x in pool[:leaf_count]]
        result["retained"] = [None if r.grad is None else ob.tensor(r.grad) for r in retained]
        result["hooks"] = hook_log
        if create_graph and result["backward"] == "ok":
            gs = [x.grad for x in pool[:leaf_count] if x.grad is not None and x.grad.requires_grad]
            # with respect to the tensors that are still leaves requiring grad (an in-place change makes a leaf
            # that did not require grad an interior node)
            wrt = [x for x in pool[:leaf_count] if x.is_leaf and x.requires_grad]
            if gs and wrt:
                try:
                    second = lib.autograd.grad(sum((g * g).sum() for g in gs), wrt, allow_unused=True)
                    result["second"] = [None if s is None else ob.tensor(s) for s in second]
                except Exception as e:  # noqa: BLE001
                    result["second"] = ob.error(e)
    return result


def leaf_array(values):
    return np.array(values, dtype=np.float64).reshape(2, 3)


def close(got, want, rtol=1e-4, atol=1e-5):
    """``got == want`` with floats compared to a tolerance (for the programs with transcendental functions)."""
    if isinstance(want, float) and isinstance(got, float):
        return math.isclose(got, want, rel_tol=rtol, abs_tol=atol) or got == want
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return (
            type(got) is type(want)
            and len(got) == len(want)
            and all(close(g, w, rtol, atol) for g, w in zip(got, want))
        )
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(close(got[k], want[k], rtol, atol) for k in want)
    return got == want


# -- small training loops ----------------------------------------------------------------------------------------------
def train(lib, cfg):
    """A few optimiser steps of Linear -> BatchNorm1d -> Dropout(p=0) -> RNNCell (x2) -> BCEWithLogitsLoss, in float64.

    ``cfg`` is plain data: (seed values for the parameters, optimiser name and options, steps, pos_weight flag,
    batch norm momentum, nonlinearity).  Returns the losses, the parameters and the running statistics, rounded.
    """
    # in float64: a weight's gradient can cancel to ~1e-8, where float32's rounding (different summation orders in
    # the two libraries) is of the gradient's own size and Adam, dividing by sqrt(v) + eps, turns it into a
    # different step; float64's rounding stays far below eps
    before = lib.get_default_dtype()
    lib.set_default_dtype(lib.float64)
    try:
        return _train(lib, cfg)
    finally:
        lib.set_default_dtype(before)


def _train(lib, cfg):
    values, (opt_name, opt_kw), steps, pos_weight, momentum, nonlinearity = cfg
    lin = lib.nn.Linear(3, 2, bias=False)  # a bias before batch norm has a zero gradient: Adam would amplify noise
    bn = lib.nn.BatchNorm1d(2, momentum=momentum)
    drop = lib.nn.Dropout(p=0.0)
    cell = lib.nn.RNNCell(2, 2, nonlinearity=nonlinearity)
    params = list(lin.parameters()) + list(bn.parameters()) + list(cell.parameters())
    with lib.no_grad():
        k = 0
        for p in params:
            n = p.numel()
            p.copy_(lib.tensor([values[(k + i) % len(values)] for i in range(n)]).reshape(p.shape))
            k += n
    opt = getattr(lib.optim, opt_name)(params, **opt_kw)
    x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-0.75, 1.0, 0.125], [0.0, 1.0, -1.0]])
    y = lib.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    loss_fn = lib.nn.BCEWithLogitsLoss(pos_weight=lib.tensor([2.0, 0.5]) if pos_weight else None)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        h = bn(drop(lin(x)))
        hx = lib.zeros(4, 2)
        for _ in range(2):
            hx = cell(h, hx)
        loss = loss_fn(hx, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    fn = loss.grad_fn
    return {
        "losses": losses,
        "params": [p.detach().tolist() for p in params],
        "grads": [None if p.grad is None else p.grad.tolist() for p in params],
        "running": [bn.running_mean.tolist(), bn.running_var.tolist(), int(bn.num_batches_tracked)],
        "loss node": None if fn is None else fn.name(),
    }


# -- torch.autograd.functional on random compositions ------------------------------------------------------------------
FUNCTIONAL_OPS = {
    "sin": lambda lib, a, b: a.sin() * b,
    "exp": lambda lib, a, b: (a * 0.5).exp() + b,
    "tanh": lambda lib, a, b: (a * b).tanh(),
    "pow": lambda lib, a, b: a**3 - b * a,
    "div": lambda lib, a, b: a / (b * b + 1),
    "sigmoid": lambda lib, a, b: (a - b).sigmoid(),
    "where": lambda lib, a, b: lib.where(a > 0, a * b, b * b),
    "maximum": lambda lib, a, b: lib.maximum(a, b) * a,
    "softmax": lambda lib, a, b: (a * b).softmax(0),
    "sqrt": lambda lib, a, b: (a * a + b * b + 1).sqrt(),
}


def functional(lib, ops, xs, vs):
    """jacobian/hessian/vjp/jvp/hvp/vhp of a composition of ``ops`` over the tuple of inputs ``xs``."""
    F = lib.autograd.functional
    inputs = tuple(lib.tensor(x, dtype=lib.float64) for x in xs)
    v_in = tuple(lib.tensor(v, dtype=lib.float64) for v in vs)

    def f(*ts):
        a, b = ts[0], ts[-1]
        for name in ops:
            a, b = FUNCTIONAL_OPS[name](lib, a, b), a
        return a

    def scalar(*ts):
        return f(*ts).sum()

    out = {}
    for name, call in [
        ("jacobian", lambda: F.jacobian(f, inputs)),
        ("jacobian strict", lambda: F.jacobian(f, inputs, strict=True)),
        ("hessian", lambda: F.hessian(scalar, inputs)),
        ("vjp", lambda: F.vjp(f, inputs, lib.ones(len(xs[0]), dtype=lib.float64))),
        ("jvp", lambda: F.jvp(f, inputs, v_in)),
        ("hvp", lambda: F.hvp(scalar, inputs, v_in)),
        ("vhp", lambda: F.vhp(scalar, inputs, v_in)),
        ("jacobian create_graph", lambda: _through(lib, F.jacobian(f, _rg(inputs), create_graph=True))),
    ]:
        try:
            out[name] = _nest(call())
        except Exception as e:  # noqa: BLE001
            out[name] = ("E", type(e).__name__)
    return out


def _rg(ts):
    return tuple(t.detach().clone().requires_grad_() for t in ts)


def _through(lib, jac):
    rows = jac if isinstance(jac, tuple) else (jac,)
    flat = [j for row in rows for j in (row if isinstance(row, tuple) else (row,))]
    return [(j.requires_grad, None if j.grad_fn is None else j.grad_fn.name()) for j in flat]


def _nest(v):
    if isinstance(v, (tuple, list)):
        return [_nest(x) for x in v]
    if hasattr(v, "detach"):
        return ("T", tuple(v.shape), _nan_safe(v.detach().tolist()))
    return v


def explain(got, want, same=None):
    """The observations that differ, for an assertion message short enough to read."""
    same = same or (lambda g, w: g == w)
    lines = []
    for k in want:
        g, w = got.get(k), want[k]
        if same(g, w):
            continue
        if isinstance(w, list) and isinstance(g, list) and len(g) == len(w):
            for i, (gi, wi) in enumerate(zip(g, w)):
                if not same(gi, wi):
                    lines.append(f"{k}[{i}]: torch {wi!r}\n{' ' * (len(k) + 6)}leafkit {gi!r}")
        else:
            lines.append(f"{k}: torch {w!r}\n    leafkit {g!r}")
    return "\n".join(lines)
