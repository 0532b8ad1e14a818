"""Snippets from the adversarial review: views, in-place changes, retained grads, edge gradients, errors.

Each takes the ``torch``-like module and returns what a learner would print;
tests/parity/test_review_parity.py runs them on PyTorch and leafkit and
compares the reprs, and tests/engine/test_views_inplace.py checks the key
ones against PyTorch's values without needing PyTorch.
"""

from __future__ import annotations


def select_is_a_view(t):
    a = t.zeros(3)
    a[1].fill_(5)
    a[2].add_(7)
    for e in a:
        e.add_(1)
    v = a[0]
    a.add_(1)
    return a, v


def view_after_base_inplace(t):
    x = t.ones(2, requires_grad=True)
    h = x * 2
    v = h.view(2)
    h.mul_(3)
    v.sum().backward()
    return x.grad, v.grad_fn.name()


def inplace_on_a_view(t):
    x = t.ones(4, requires_grad=True)
    b = x * 1
    v = b[1:3]
    v.mul_(5)
    names = (
        v.grad_fn.name(),
        b.grad_fn.name(),
        [type(n).__name__ if n is not None else None for n, _ in b.grad_fn.next_functions],
    )
    b.sum().backward()
    return x.grad, names


def base_gains_history(t):
    b = t.zeros(3)
    w = t.ones(3, requires_grad=True)
    v = b[0:2]
    b.add_(w)
    return v.requires_grad, v.grad_fn.name(), v.is_leaf


def setitem_scalar_tensor(t):
    b = t.zeros(3)
    w = t.tensor(2.0, requires_grad=True)
    b[1] = w
    name = b.grad_fn.name()
    b.sum().backward()
    return name, w.grad


def setitem_index_tensor(t):
    b = t.zeros(3)
    ww = t.ones(2, requires_grad=True)
    b[t.tensor([0, 2])] = ww * 3
    name = b.grad_fn.name()
    (b * t.tensor([1.0, 2.0, 3.0])).sum().backward()
    return name, ww.grad


def setitem_column(t):
    b = t.zeros(2, 3)
    w = t.ones(2, requires_grad=True)
    b[:, 1] = w * 2
    (b * b).sum().backward()
    return b, w.grad


def setitem_number_on_non_leaf(t):
    x = t.ones(3, requires_grad=True)
    y = x * 1
    y[0] = 5
    (y * y).sum().backward()
    return y, x.grad


def retain_grad_with_inputs(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward(inputs=[h])
    return h.grad, x.grad


def retain_grad_then_inplace(t):
    x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    y.sum().backward()
    return y.grad, x.grad


def saved_result_then_inplace(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    t.nn.functional.relu(h, inplace=True)
    h.mul_(3)
    h.sum().backward()
    return x.grad


def inputs_marks_retains_grad(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (y * 3).sum().backward(inputs=[y])
    return y.retains_grad, y.grad


def grad_does_not_run_its_input(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    (g,) = t.autograd.grad(h.sum(), h)
    h.sum().backward()
    return g, x.grad


def switched_off_leaf(t):
    x = t.ones(2, requires_grad=True)
    y = (x * 2).sum()
    x.requires_grad_(False)
    y.backward()
    return x.grad


def transpose_of_vector(t):
    import warnings

    x = t.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.T.is_leaf, x.T.grad_fn.name()


def unpacking(t):
    a, b = t.ones(2, requires_grad=True) * 1
    (a * 2 + b).backward()
    return a.grad_fn.name()


def reshape_keeps_view(t):
    x = t.arange(12.0).reshape(3, 4)
    y = x[:, ::2].reshape(-1)
    y[0] = 100.0
    return x[0, 0]


def slice_nodes(t):
    x = t.ones(2, 3, requires_grad=True)
    return x[:].grad_fn.name(), x[:, 0:3].grad_fn.name(), x[:, 1:].grad_fn.name(), x[0, :].grad_fn.name()


def nested_list_index(t):
    x = t.arange(12.0).reshape(3, 4)
    return x[[[0, 1], [1, 0]]], x[[[0, 1]]].shape


def view_inplace_saved(t):
    x = t.ones(2, requires_grad=True)
    h = x * 2
    v = h.view(2)
    h.mul_(h)
    v.sum().backward()


def custom_mark_dirty(t):
    class Inp(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x.mul_(2)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = Inp.apply(y)
    (y * 1).sum().backward()
    return z is y, x.grad, y.grad_fn.name(), repr(z)


def float64_from_python(t):
    return t.tensor([0.1, 1e-300], dtype=t.float64).tolist()


def int_true_division(t):
    n = t.tensor([1, 2, 3])
    return n / 2, n / n, t.tensor([-1, 5, 2]).clamp(0.5, 1.5)


def pow_edges(t):
    x = t.tensor([0.0], requires_grad=True)
    b = t.tensor([0.0], requires_grad=True)
    (x**b).sum().backward()
    e = t.tensor([0.5, -1.0, 2.0], requires_grad=True)
    ((-2.0) ** e).sum().backward()
    e2 = t.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (0.0**e2).sum().backward()
    return x.grad, b.grad, e.grad, e2.grad


def nan_max_abs_relu(t):
    x = t.tensor([1.0, float("nan"), 3.0], requires_grad=True)
    x.max().backward()
    y = t.tensor([float("nan"), -1.0, 2.0], requires_grad=True)
    (y.abs() + y.relu()).sum().backward()
    return x.grad, y.grad


def tiny_division(t):
    a = t.tensor([1e-30], requires_grad=True)
    b = t.tensor([1e-25], requires_grad=True)
    (a / b).backward()
    return b.grad


def reductions_edges(t):
    h = t.tensor([60000.0, 60000.0], dtype=t.float16)
    m = t.tensor([[1.0, 2.0], [3.0, 4.0]])
    return h.mean(), m.mean(dim=()), m.sum(dim=())


def size_slices(t):
    s = t.ones(2, 3).shape
    return repr(s[1:]), repr(s + (4,))


def hook_changes_dtype(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g.double())
    x.sum().backward()


ERROR_CASES = {
    "stack_dim_out_of_range": lambda t: t.stack([t.ones(2, 3), t.ones(2, 3)], dim=3),
    "dot_dtype_mismatch": lambda t: t.ones(2) @ t.ones(2, dtype=t.float64),
    "mv_dtype_mismatch": lambda t: t.ones(2, 2) @ t.ones(2, dtype=t.float64),
    "max_dim_empty": lambda t: t.zeros(2, 0).max(dim=1),
    "argmax_empty": lambda t: t.tensor([]).argmax(),
    "cat_sizes": lambda t: t.cat([t.ones(2, 3), t.ones(3, 3)], 1),
    "cat_empty": lambda t: t.cat([]),
    "permute_duplicate": lambda t: t.ones(2, 3).permute(0, 0),
    "flatten_order": lambda t: t.randn(2, 3).flatten(1, 0),
    "add_string": lambda t: t.ones(2).add("a"),
    "neg_bool": lambda t: -t.tensor([True]),
    "int_negative_power": lambda t: t.tensor([4, 2]) ** -1,
    "detach_view_inplace": lambda t: t.tensor([1.0, 2.0])[:1].detach_(),
    "int_of_many": lambda t: int(t.tensor([3.7, 2.0])),
    "bool_of_empty": lambda t: bool(t.tensor([])),
    "index_0d": lambda t: t.tensor(3.0)[0],
    "index_out_of_range_dim": lambda t: t.ones(2, 3)[0, 5],
    "softmax_int": lambda t: t.tensor([1, 2]).softmax(0),
    "grad_empty_inputs": lambda t: t.autograd.grad((t.ones(2, requires_grad=True) * 2).sum(), []),
    "materialize_without_unused": lambda t: t.autograd.grad(
        (t.ones(2, requires_grad=True) * 2).sum(),
        [t.ones(2, requires_grad=True)],
        allow_unused=False,
        materialize_grads=True,
    ),
    "requires_grad_not_bool": lambda t: setattr(t.ones(2), "requires_grad", 1),
    "requires_grad_int_tensor": lambda t: t.tensor([1, 2]).requires_grad_(),
    "hook_returns_int": lambda t: _hook_returns(t, lambda g: 3),
    "view_of_leaf_inplace": lambda t: t.ones(3, requires_grad=True)[:1].add_(1),
    "setitem_on_leaf": lambda t: t.ones(3, requires_grad=True).__setitem__(0, 5.0),
    "no_grad_view_inplace": lambda t: _no_grad_view_inplace(t),
    "grad_wrong_size": lambda t: setattr(t.ones(2, requires_grad=True), "grad", t.ones(3)),
    "grad_wrong_dtype": lambda t: setattr(t.ones(2, requires_grad=True), "grad", t.ones(2, dtype=t.float64)),
    "grad_itself": lambda t: _grad_itself(t),
    "hook_changes_dtype": hook_changes_dtype,
    "view_inplace_saved": view_inplace_saved,
}


def _hook_returns(t, fn):
    x = t.ones(2, requires_grad=True)
    x.register_hook(fn)
    (x * 1).sum().backward()


def _no_grad_view_inplace(t):
    x = t.ones(3, requires_grad=True)
    with t.no_grad():
        v = x[:2]
    v.add_(1)


def _grad_itself(t):
    x = t.ones(2, requires_grad=True)
    x.grad = x


VALUE_CASES = {
    name: fn
    for name, fn in list(globals().items())
    if callable(fn)
    and not name.startswith("_")
    and fn.__module__ == __name__
    and name not in ERROR_CASES
    and name not in ("hook_changes_dtype", "view_inplace_saved")
}


# -- second review round --------------------------------------------------------------------------------
def index_with_0d_tensor_is_a_view(t):
    h = t.tensor([[1.0, 2.0], [3.0, 4.0]])
    h[t.tensor(1)].mul_(10)
    h[t.tensor(0)][0] = 50.0
    return h


def base_retain_grad_then_view_inplace(t):
    x = t.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    h = x * 1
    h.retain_grad()
    h[1:3].mul_(2)
    (h * t.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    return h.grad, x.grad


def view_retain_grad_after_base_inplace(t):
    x = t.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    h = x * 1
    v = h[1:3]
    h.mul_(2)
    v.retain_grad()
    seen = []
    v.register_hook(lambda g: seen.append(g.tolist()))
    (v * t.tensor([5.0, 7.0])).sum().backward()
    return v.grad, x.grad, seen


def hook_changes_broadcast_grad_in_place(t):
    x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    m = x * 1
    m.register_hook(lambda g: g.mul_(2))
    m.mean().backward()
    return x.grad


VALUE_CASES.update(
    {
        f.__name__: f
        for f in (
            index_with_0d_tensor_is_a_view,
            base_retain_grad_then_view_inplace,
            view_retain_grad_after_base_inplace,
            hook_changes_broadcast_grad_in_place,
        )
    }
)


def unbind_outputs(t):
    x = t.ones(2, 2, requires_grad=True)
    h = x * 1
    with t.no_grad():
        c, d = h
    z = t.zeros(3)
    for e in z:
        e.add_(1)
    return c.requires_grad, z


VALUE_CASES[unbind_outputs.__name__] = unbind_outputs
ERROR_CASES["unbind_output_inplace"] = lambda t: (t.ones(2, 2, requires_grad=True) * 1).unbind(0)[0].add_(1)
