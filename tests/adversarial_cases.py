"""Where leafkit and PyTorch 2.13 part ways: one minimal case per discrepancy, grouped by kind.

Found by trying to break the engine (issues 9 and 10): random programs
(``adversarial_programs.py``), public bug reports and forum questions, and
edge values.  Each case is a function ``(torch, rec, dev)`` in the style of
``cases.py``; ``tests/parity/test_adversarial.py`` runs it on both libraries
and compares the observations.  Every case here failed on leafkit when it
was written; ``KIND`` maps each case to its kind, so a fix can take a whole
kind at once.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

CASES = {}
KIND = {}


def case(kind):
    def register(fn):
        CASES[fn.__name__] = fn
        KIND[fn.__name__] = kind
        return fn

    return register


def attempt(rec, label, fn, key=""):
    """Record the result of ``fn()``, or its error class and whether ``key`` is in the message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
    except Exception as e:  # noqa: BLE001 - the error is the observation
        rec.obs.append((label, "error", type(e).__name__, key in str(e)))
    else:
        rec.value(label, out)


def signs(t):
    """The sign bits of a float tensor's elements (``-0.0`` and ``0.0`` differ; ``==`` does not see it)."""
    return [math.copysign(1.0, v) for v in t.detach().reshape(-1).tolist()]


def caught(fn):
    """``(error class or None, sorted warning categories and first lines)`` of running ``fn``."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            fn()
            err = None
        except Exception as e:  # noqa: BLE001
            err = type(e).__name__
    return err, sorted({(w.category.__name__, str(w.message).splitlines()[0][:60]) for w in got})


# == 1. result dtypes ==================================================================================================
@case("dtype")
def where_both_scalar_branches_dtype(torch, rec, dev):
    a = torch.tensor([1.0, -2.0, 3.0])
    rec.value("where(cond, 1.0, 0.0).dtype", str(torch.where(a > 0, 1.0, 0.0).dtype))  # float32 (default dtype)
    rec.value("where(cond, 1, 0).dtype", str(torch.where(a > 0, 1, 0).dtype))  # int64


@case("dtype")
def bce_with_logits_promotes_to_target_dtype(torch, rec, dev):
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    t = torch.tensor([0.7, 0.2], dtype=torch.float64)
    out = torch.nn.functional.binary_cross_entropy_with_logits(x, t)
    rec.value("dtype", str(out.dtype))  # float64, like x - t would be
    rec.value("value", out)


# == 2. argument conventions PyTorch accepts ===========================================================================
@case("arguments")
def tensor_where_method_order(torch, rec, dev):
    a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    attempt(rec, "a.where(a > 0, 0.0)", lambda: a.where(a > 0, 0.0))  # = torch.where(a > 0, a, 0.0)
    attempt(rec, "a.where(a > 0, -a)", lambda: a.where(a > 0, -a))


@case("arguments")
def scalar_first_remainder_and_round_decimals(torch, rec, dev):
    b = torch.tensor([3.0, -2.0, 1.5])
    attempt(rec, "torch.remainder(5.0, b)", lambda: torch.remainder(5.0, b))
    attempt(rec, "torch.round(b / 7, decimals=2)", lambda: torch.round(b / 7, decimals=2))
    x = torch.tensor([15.0, 25.0, 0.125], requires_grad=True)
    attempt(rec, "x.round(decimals=-1)", lambda: (x.round(decimals=-1), x.round(decimals=-1).grad_fn))
    attempt(rec, "x.round(decimals=1) gradient", lambda: torch.autograd.grad(x.round(decimals=1).sum(), x))


@case("arguments")
def copy_from_python_scalar(torch, rec, dev):
    x = torch.zeros(3)
    attempt(rec, "x.copy_(2.0)", lambda: x.copy_(2.0))


@case("arguments")
def extra_grad_tensors_are_ignored(torch, rec, dev):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    z = (x * x).sum()
    attempt(
        rec,
        "backward([z], grad_tensors=[1, 1])",
        lambda: torch.autograd.backward([z], grad_tensors=[torch.tensor(1.0), torch.tensor(1.0)]),
    )
    rec.value("x.grad", x.grad)


# == 3. signed zeros ===================================================================================================
@case("signed zero")
def remainder_zero_takes_the_dividends_sign(torch, rec, dev):
    # PyTorch: r = fmod(a, b), then r + b where the signs differ and r != 0; a zero result keeps a's sign
    rec.value("[-0., 0., 4., -4.] % 2", signs(torch.tensor([-0.0, 0.0, 4.0, -4.0]) % 2))
    rec.value("[-0., 0., 4., -4.] % -2", signs(torch.tensor([-0.0, 0.0, 4.0, -4.0]) % -2))
    rec.value("[5., -5.] % [-5., 5.]", signs(torch.tensor([5.0, -5.0]) % torch.tensor([-5.0, 5.0])))
    rec.value("repr", repr(torch.tensor([-4.0, 4.0]) % 2))


# == 4. operations PyTorch has no derivative for =======================================================================
@case("no derivative")
def scalar_remainder_tensor_has_no_derivative(torch, rec, dev):
    a = torch.tensor([5.0, -5.0, 3.5], requires_grad=True)
    r = 5 % a
    rec.value("5 % a grad_fn", r.grad_fn)
    rec.error("backward", lambda: r.sum().backward(), key="derivative for aten::remainder is not implemented")
    rec.value("a.grad", a.grad)


@case("no derivative")
def not_implemented_node_runs_first(torch, rec, dev):
    # PyTorch's engine runs a NotImplemented node ahead of the other ready nodes (like AccumulateGrad):
    # the error comes before any other leaf's .grad is written.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    a = x // 2
    b = y.abs()
    rec.error("backward", lambda: (a.sum() + b.sum()).backward(), key="floor_divide")
    rec.value("y.grad", y.grad)


# == 5. clamp with tensor bounds =======================================================================================
@case("clamp tensor bounds")
def clamp_with_tensor_bounds(torch, rec, dev):
    x = torch.tensor([0.5, 1.5, -2.0], requires_grad=True)
    lo = torch.tensor([1.0, 1.5, 3.0])
    attempt(rec, "grad through clamp(min=tensor)", lambda: torch.autograd.grad(x.clamp(min=lo).sum(), x))
    b = torch.tensor([1.0, 1.5, 3.0], requires_grad=True)
    attempt(rec, "clamp(min=b) with b requiring grad", lambda: torch.autograd.grad(x.clamp(min=b).sum(), [x, b]))
    attempt(rec, "clamp(max=b)", lambda: torch.autograd.grad(torch.clamp(x, max=b).sum(), [x, b]))


# == 6. writing into integer and bool tensors from a tensor that requires grad =========================================
@case("non-float targets")
def float_requiring_grad_into_int_or_bool(torch, rec, dev):
    v = torch.tensor([1.5, 2.5, -3.7], requires_grad=True)
    i = torch.zeros(3, dtype=torch.int64)
    attempt(rec, "i[:] = v", lambda: i.__setitem__(slice(None), v))
    rec.value("i", i)
    j = torch.zeros(3, dtype=torch.int64)
    attempt(rec, "j.copy_(v)", lambda: j.copy_(v))
    rec.value("j", j)
    b = torch.zeros(2, dtype=torch.bool)
    attempt(rec, "b[:] = float rg", lambda: b.__setitem__(slice(None), torch.tensor([1.0, 0.0], requires_grad=True)))
    rec.value("b", b)


# == 7. advanced-index assignment needs matching dtypes ================================================================
@case("index_put dtype")
def index_put_requires_matching_dtypes(torch, rec, dev):
    x = torch.zeros(3, dtype=torch.float64)
    rec.error(
        "float64[idx] = float32",
        lambda: x.__setitem__(torch.tensor([0]), torch.tensor([1.0])),
        key="Index put requires the source and destination dtypes match",
    )
    y = torch.zeros(3)
    rec.error(
        "float32[[0, 1]] = int64",
        lambda: y.__setitem__([0, 1], torch.tensor([1, 2])),
        key="Index put requires the source and destination dtypes match",
    )
    rec.error(
        "index_put_ float64 values",
        lambda: y.index_put_((torch.tensor([0]),), torch.tensor([3.0], dtype=torch.float64)),
        key="Index put requires the source and destination dtypes match",
    )
    rec.value("y unchanged", y)
    x[x == 0] = torch.tensor(1.0)  # a mask with a 0-d value is masked_fill: any dtype
    rec.value("mask with 0-d float32 into float64", x)


# == 8. NumPy's errors and messages instead of PyTorch's ===============================================================
@case("numpy errors")
def index_errors_use_pytorch_classes_and_words(torch, rec, dev):
    t = torch.arange(6.0).reshape(2, 3)
    rec.error(
        "t[tensor([5])] = 1.0",
        lambda: t.__setitem__(torch.tensor([5]), 1.0),
        key="index 5 is out of bounds for dimension 0 with size 2",
    )
    rec.error(
        "gather out of bounds",
        lambda: t.gather(1, torch.tensor([[5]])),
        key="index 5 is out of bounds for dimension 1 with size 3",
    )
    rec.error("t[2.0]", lambda: t[2.0], key="long or byte Variables are valid indices")
    rec.error(
        "arange(3.)[tensor([True, False])]",
        lambda: torch.arange(3.0)[torch.tensor([True, False])],
        key="The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3]",
    )
    rec.error("t[::0]", lambda: t[::0], key="slice step cannot be zero")
    rec.error(
        "0-d .size(0)", lambda: torch.tensor(1.0).size(0), key="Dimension specified as 0 but tensor has no dimensions"
    )


@case("numpy errors")
def index_is_checked_before_the_leaf_rule(torch, rec, dev):
    x = torch.zeros(3, requires_grad=True)
    rec.error(
        "1-D leaf: x[:, tensor([0])] = 1.0",
        lambda: x.__setitem__((slice(None), torch.tensor([0])), 1.0),
        key="too many indices for tensor of dimension 1",
    )


@case("numpy errors")
def value_shape_is_checked_before_index_bounds(torch, rec, dev):
    t = torch.zeros(2, 2)
    rec.error(
        "(2, 2)[tensor([0, 1]), tensor([2, 0])] = ones(3)",
        lambda: t.__setitem__((torch.tensor([0, 1]), torch.tensor([2, 0])), torch.ones(3)),
        key="shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]",
    )


@case("numpy errors")
def setitem_shape_errors_are_runtime_errors(torch, rec, dev):
    t = torch.zeros(2, 3)
    t[1, 2] = 0.5
    rec.error(
        "t[t > 0] = ones(3)",
        lambda: t.__setitem__(t > 0, torch.ones(3)),
        key="shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [1]",
    )
    rec.error(
        "t[[1]] = ones(2, 3)",
        lambda: t.__setitem__([1], torch.ones(2, 3)),
        key="shape mismatch: value tensor of shape [2, 3] cannot be broadcast",
    )
    rec.error(
        "t[tensor([1])] = ones(2, 3)",
        lambda: t.__setitem__(torch.tensor([1]), torch.ones(2, 3)),
        key="shape mismatch: value tensor of shape [2, 3] cannot be broadcast",
    )
    c = torch.zeros(2, 1)
    rec.error(
        "(2, 1)[tensor([1, 0])] = ones(3)",
        lambda: c.__setitem__(torch.tensor([1, 0]), torch.ones(3)),
        key="shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 1]",
    )


@case("numpy errors")
def setitem_refuses_lists_arrays_and_strings(torch, rec, dev):
    t = torch.zeros(3)
    rec.error(
        "t[:] = [1., 2., 3.]",
        lambda: t.__setitem__(slice(None), [1.0, 2.0, 3.0]),
        key="can't assign a list to a torch.FloatTensor",
    )
    rec.error(
        "t[:] = (1., 2., 3.)",
        lambda: t.__setitem__(slice(None), (1.0, 2.0, 3.0)),
        key="can't assign a tuple to a torch.FloatTensor",
    )
    rec.error(
        "t[:] = np.array",
        lambda: t.__setitem__(slice(None), np.array([1.0, 2.0, 3.0])),
        key="can't assign a numpy.ndarray to a torch.FloatTensor",
    )
    rec.error("t[0] = 'a'", lambda: t.__setitem__(0, "a"), key="can't assign a str to a torch.FloatTensor")
    rec.value("t", t)


@case("numpy errors")
def construction_errors(torch, rec, dev):
    rec.error(
        "tensor([[1, 2], [3]])",
        lambda: torch.tensor([[1, 2], [3]]),
        key="expected sequence of length 2 at dim 1 (got 1)",
    )
    rec.error("tensor(None)", lambda: torch.tensor(None), key="Could not infer dtype of NoneType")
    rec.error("tensor([2**63])", lambda: torch.tensor([2**63]), key="Overflow when unpacking long long")
    rec.error("zeros(-1)", lambda: torch.zeros(-1), key="zeros: Dimension size must be non-negative.")
    rec.error(
        "zeros(0).view(-1, 0)",
        lambda: torch.zeros(0).view(-1, 0),
        key="because the unspecified dimension size -1 can be any value and is ambiguous",
    )
    # a list in an index key is read as torch.tensor reads it (with an int64 target): the same errors
    x = torch.ones(3, 3)
    for label, key, message in (
        ("[[0, 1], [2]]", [[0, 1], [2]], "expected sequence of length 2 at dim 1 (got 1)"),
        ("[0, None]", [0, None], "Could not infer dtype of NoneType"),
        ("[[0], 1]", [[0], 1], "not a sequence"),
        ("[1, [2]]", [1, [2]], "'list' object cannot be interpreted as an integer"),
        ("[2**63]", [2**63], "Overflow when unpacking long long"),
        ("[[], [1]]", [[], [1]], ""),
    ):
        attempt(rec, f"x[{label}, 0]", lambda key=key: x[key, 0], key=message)


@case("numpy errors")
def integer_and_bool_matmul_and_powers(torch, rec, dev):
    attempt(rec, "bool @ bool", lambda: torch.tensor([True, False]) @ torch.tensor([True, True]))
    attempt(rec, "int ** negative int tensor", lambda: torch.tensor([2, 1]) ** torch.tensor([-1, -2]))


@case("numpy errors")
def message_details(torch, rec, dev):
    rec.error(
        "gather float index",
        lambda: torch.ones(2, 3).gather(1, torch.tensor([[1.0]])),
        key="gather(): Expected dtype int32/int64 for index",
    )
    x = torch.tensor([1.0], requires_grad=True)
    y = x * x
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0], gi[0]))
    rec.error(
        "node hook returns three values",
        lambda: y.sum().backward(),
        key="hook '<lambda>' has returned an incorrect number of values (got 3, but expected 2)",
    )
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    rec.error(
        "node pre-hook returns two values",
        lambda: y.sum().backward(),
        key="hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)",
    )
    y = x * 2  # MulBackward0's second input is the Python number 2: its gradient is None
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    rec.error(
        "node hook fills a None gradient",
        lambda: y.sum().backward(),
        key="can't replace a None gradient with a non-None value",
    )
    for label, attach in (
        ("tensor hook", lambda y, new: y.register_hook(lambda g: new)),
        ("node pre-hook", lambda y, new: y.grad_fn.register_prehook(lambda go: (new,))),
    ):  # PyTorch's check_single_result: the type is checked before the size
        y = x * 2
        attach(y, torch.ones(3, dtype=torch.float64))
        rec.error(
            f"{label} changes dtype and size", lambda y=y: y.sum().backward(), key="has changed the type of value"
        )
    rec.warns("0-d .T", lambda: torch.tensor(1.0).T, key="Tensor.T is deprecated on 0-D tensors")
    rec.error("bool trunc", lambda: torch.tensor([True]).trunc(), key="not implemented for 'Bool'")


# == 9. NumPy's floating-point warnings escape =========================================================================
@case("numpy warnings")
def no_numpy_runtime_warnings(torch, rec, dev):
    inf = float("inf")
    z = torch.tensor([0.0, inf, -inf, float("nan")], requires_grad=True)
    rec.value("z * 0", caught(lambda: z * 0))
    rec.value("z - z", caught(lambda: z - z))
    rec.value("backward of round with nan", caught(lambda: z.round().sum().backward()))
    rec.value("backward of maximum with nan", caught(lambda: torch.maximum(z, z.detach()).sum().backward()))
    rec.value("half overflow", caught(lambda: torch.tensor([70000.0]).half()))
    rec.value("mean of empty", caught(lambda: torch.zeros(0).mean()))
    rec.value("mean(0) of (0, 3)", caught(lambda: torch.zeros(0, 3).mean(0)))


@case("numpy warnings")
def anomaly_mode_reports_only_pytorch_warnings(torch, rec, dev):
    def run():
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            y = x * torch.tensor([float("inf"), 1.0])
            (y * 0).sum().backward()

    err, msgs = caught(run)
    rec.value("error", err)
    rec.value("warning categories", sorted({c for c, _ in msgs}))
    rec.value("count", len(msgs))


# == 10. inf/nan edges =================================================================================================
@case("edge values")
def pow_half_gradient_at_minus_inf(torch, rec, dev):
    x = torch.tensor([-float("inf"), 4.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**0.5).sum(), x)  # PyTorch: 0.5 * x ** -0.5 with x ** -0.5 = rsqrt(x)
    rec.value("grad", g)


@case("edge values")
def empty_tensors(torch, rec, dev):
    e = torch.zeros(0, requires_grad=True)
    attempt(rec, "softmax of empty", lambda: e.softmax(0))
    attempt(rec, "cat([zeros(0), ones(2, 2)])", lambda: torch.cat([torch.zeros(0), torch.ones(2, 2)]))


# == 11. overlapping writes: leafkit refuses what PyTorch does =========================================================
@case("overlap")
def fill_from_a_zero_dim_alias(torch, rec, dev):
    # a 0-d value is read first (fill_), so it may alias the target
    h = torch.arange(6.0).reshape(2, 3)
    attempt(rec, "h[:, 1] = h[1, 1]", lambda: h.__setitem__((slice(None), 1), h[1, 1]))
    rec.value("h", h)
    h = torch.arange(6.0).reshape(2, 3)
    attempt(rec, "h[0].fill_(h[0, 2])", lambda: h[0].fill_(h[0, 2]))
    rec.value("h", h)


@case("overlap")
def broadcast_source_alias(torch, rec, dev):
    t = torch.arange(6.0).reshape(2, 3)
    attempt(rec, "t[..., 0] = t[0, :1]", lambda: t.__setitem__((..., 0), t[0, :1]))
    rec.value("t", t)


@case("overlap")
def strided_partial_overlap_is_not_checked(torch, rec, dev):
    # PyTorch checks partial overlap only between non-overlapping-and-dense tensors ("too hard" otherwise)
    for label, write in [
        ("h[:, 0].copy_(h[0, :2])", lambda h: h[:, 0].copy_(h[0, :2])),
        ("h.t()[0].add_(h[0, :2])", lambda h: h.t()[0].add_(h[0, :2])),
    ]:
        h = torch.arange(6.0).reshape(2, 3)
        try:
            write(h)
            rec.value(label, ("ok", h))
        except RuntimeError as e:
            rec.value(label, ("error", "single memory location" in str(e)))


@case("overlap")
def writes_into_expanded_tensors(torch, rec, dev):
    e = torch.zeros(1, 3).expand(2, 3)
    attempt(rec, "e.fill_(1.0)", lambda: e.fill_(1.0))
    attempt(rec, "e.zero_()", lambda: e.zero_())
    e = torch.zeros(1, 3).expand(2, 3)
    attempt(rec, "e[0] = 2.5 (the row itself has no overlap)", lambda: e.__setitem__(0, 2.5))
    rec.value("e", e)
    e = torch.zeros(1, 3).expand(2, 3)
    attempt(rec, "e[0, 2] = 2.5", lambda: e.__setitem__((0, 2), 2.5))
    rec.value("e", e)
    e = torch.zeros(1, 3).expand(2, 3)
    attempt(rec, "e[0].copy_(ones(3))", lambda: e[0].copy_(torch.ones(3)))
    rec.value("e", e)
    e = torch.zeros(1, 3).expand(2, 3)
    rec.value("e[tensor([0]), 1] = 4.0", caught(lambda: e.__setitem__((torch.tensor([0]), 1), 4.0)))
    rec.value("e", e)


# == 12. inference mode ================================================================================================
@case("inference mode")
def views_of_inference_tensors_are_not_tracked(torch, rec, dev):
    with torch.inference_mode():
        a = torch.ones(2, 3)
        inside = a.t()
    outside = a.t()
    rec.value(
        "._base is None (made inside, made outside, view of a view)",
        (inside._base is None, outside._base is None, outside[0]._base is None),
    )
    rec.value("still inference tensors", (inside.is_inference(), outside.is_inference()))


@case("inference mode")
def enable_grad_inside_inference_mode(torch, rec, dev):
    x = torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        with torch.enable_grad():
            q = x * 2
            rec.value("grad enabled", torch.is_grad_enabled())
    rec.value("q: requires_grad, is_inference, grad_fn", (q.requires_grad, q.is_inference(), q.grad_fn))


@case("inference mode")
def parameters_and_inference_tensors(torch, rec, dev):
    with torch.inference_mode():
        p = torch.nn.Parameter(torch.ones(2))
        rec.value("Parameter made inside", (p.is_inference(), p.requires_grad, p.is_leaf))
        t = torch.ones(2)
    rec.error(
        "Parameter(inference tensor) outside",
        lambda: torch.nn.Parameter(t),
        key="Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
    )


@case("inference mode")
def inplace_on_inference_tensor_writes_before_raising(torch, rec, dev):
    with torch.inference_mode():
        y = torch.ones(3)
    rec.error("y.add_(1)", lambda: y.add_(1), key="Inplace update to inference tensor outside InferenceMode")
    rec.value("y after add_", y)
    rec.error("y[1] = 5", lambda: y.__setitem__(1, 5.0), key="Inplace update to inference tensor")
    rec.value("y after setitem", y)

    def under_no_grad():
        with torch.no_grad():
            y.mul_(2)

    rec.error("y.mul_(2) under no_grad", under_no_grad, key="Inplace update to inference tensor")
    rec.value("y after mul_", y)


@case("inference mode")
def view_made_in_inference_mode_of_a_plain_tensor(torch, rec, dev):
    n = torch.ones(3)
    with torch.inference_mode():
        nv = n[1:]
    attempt(rec, "nv.add_(1) outside (nothing requires grad)", lambda: nv.add_(1))
    rec.value("n", n)


@case("inference mode")
def view_made_in_inference_mode_after_base_changes(torch, rec, dev):
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    with torch.inference_mode():
        v = y[0:2]
    y.add_(1)
    rec.error(
        "v.grad_fn",
        lambda: v.grad_fn,
        key="A view was created in inference mode and its base or another view of its base has been modified",
    )
    rec.error("v * 1", lambda: v * 1, key="A view was created in inference mode")


# == 13. view bookkeeping (CreationMeta) ===============================================================================
@case("views")
def view_of_a_multi_output_view(torch, rec, dev):
    # pytorch/pytorch#36608: the ban on in-place changes of unbind's outputs reaches views of them
    root = torch.arange(9.0).reshape(3, 3).requires_grad_()
    x = root.clone()
    v1 = x.unbind()
    v2 = v1[0][0:2]
    rec.error("v2.mul_(2)", lambda: v2.mul_(2), key="This view is the output of a function that returns multiple views")
    v2.sum().backward()
    rec.value("root.grad", root.grad)


@case("views")
def no_grad_view_after_its_base_changed(torch, rec, dev):
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    with torch.no_grad():
        yv = y[0:2]
    y.mul_(3)
    rec.error(
        "yv.grad_fn",
        lambda: yv.grad_fn,
        key="A view was created in no_grad mode and its base or another view of its base has been modified",
    )
    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        wv = w[0:2]
        wv.mul_(2)
    rec.error("wv.grad_fn after wv.mul_ under no_grad", lambda: wv.grad_fn, key="A view was created in no_grad mode")
    rec.error("wv * 1", lambda: wv * 1, key="A view was created in no_grad mode")


@case("views")
def view_grad_fn_after_a_change_under_no_grad(torch, rec, dev):
    # the version counter moved, so PyTorch regenerates the view's grad_fn (as AsStridedBackward0) on access
    x = torch.ones(2, 3, requires_grad=True)
    v = x.t()
    with torch.no_grad():
        v.add_(1)
    rec.value("the view changed", v.grad_fn)
    v.sum().backward()
    rec.value("x.grad", x.grad)
    x = torch.ones(2, 3, requires_grad=True)
    v = x[0]
    with torch.no_grad():
        x.add_(1)
    rec.value("its base changed", v.grad_fn)
    y = x * 1
    a, b = y[0], y[1]
    with torch.no_grad():
        b.mul_(2)
    rec.value("a sibling view changed", (a.grad_fn, b.grad_fn, y.grad_fn))


@case("views")
def no_grad_view_of_a_tensor_that_requires_grad_is_not_connected(torch, rec, dev):
    # requires_grad is True (the base's), but the view has no gradient edge: nothing accumulates anywhere
    x = torch.ones(2, 3, requires_grad=True)
    with torch.no_grad():
        v = x[0]
    rec.value("v: requires_grad, is_leaf, grad_fn", (v.requires_grad, v.is_leaf, v.grad_fn))
    y = v * 2
    rec.value("(v * 2).grad_fn inputs", [n for n, _ in y.grad_fn.next_functions])
    y.sum().backward()
    rec.value("v.grad, x.grad", (v.grad, x.grad))
    rec.error(
        "autograd.grad(..., v)", lambda: torch.autograd.grad((v * 2).sum(), v), key="appears to not have been used"
    )


@case("views")
def custom_function_output_views(torch, rec, dev):
    class ViewOfInput(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 1)

    class ViewOfIntermediate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return (x * 2)[0:2]

        @staticmethod
        def backward(ctx, g):
            out = torch.zeros(3)
            out[0:2] = g * 2
            return out

    a = torch.ones(2, 1, requires_grad=True)
    rec.error(
        "in-place on a view of the input",
        lambda: ViewOfInput.apply(a * 1).mul_(2),
        key="This view was created inside a custom Function",
    )
    b = torch.ones(3, requires_grad=True)
    rec.error(
        "in-place on a view of an intermediate",
        lambda: ViewOfIntermediate.apply(b).mul_(2),
        key="This view was created inside a custom Function",
    )


# == 14. custom autograd.Function ======================================================================================
@case("custom Function")
def forward_returns_its_input(torch, rec, dev):
    class Ident(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.tensor([1.0, 2.0], requires_grad=True)

    def run():
        y = Ident.apply(x)
        y.sum().backward()
        return (y is x, y.is_leaf, y.grad_fn, x.grad)

    attempt(rec, "Ident.apply(x)", run)


@case("custom Function")
def gradient_for_a_non_tensor_input(torch, rec, dev):
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    rec.error(
        "backward returns a gradient for k=2.0",
        lambda: Scale.apply(x, 2.0).sum().backward(),
        key="returned a gradient different than None at position 2, but the corresponding forward input was "
        "not a Variable",
    )
    rec.value("x.grad", x.grad)


@case("custom Function")
def save_for_backward_error_names_the_argument(torch, rec, dev):
    class SaveInt(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.tensor([1.0], requires_grad=True)
    rec.error(
        "save_for_backward(x, 3)",
        lambda: SaveInt.apply(x),
        key="save_for_backward can only save variables, but argument 1 is of type int",
    )


@case("custom Function")
def setup_context_style(torch, rec, dev):
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = torch.tensor([1.0, 2.0], requires_grad=True)

    def run():
        y = Scale.apply(x, 4.0)
        y.sum().backward()
        return (y, y.grad_fn, x.grad)

    attempt(rec, "forward(x, k) + setup_context", run)


@case("custom Function")
def once_differentiable_hangs_off_detached_outputs(torch, rec, dev):
    # PyTorch's wrapper feeds DelayedError with detached copies of the outputs (fake leaves), so the recorded
    # backward graph does not reach x: the error fires for backward(), not for autograd.grad(..., x).
    class CubeOnce(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = CubeOnce.apply(x)
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)  # the incoming gradient 2y requires grad
    rec.value("g", g)
    rec.value("g.grad_fn and its inputs", (g.grad_fn, [n for n, _ in g.grad_fn.next_functions]))
    attempt(rec, "grad(g.sum(), x, allow_unused=True)", lambda: torch.autograd.grad(g.sum(), x, allow_unused=True))
    rec.error("grad(g.sum(), x)", lambda: torch.autograd.grad(g.sum(), x), key="appears to not have been used")
    rec.error("g.sum().backward()", lambda: g.sum().backward(), key="once_differentiable")


# == 15. hooks, .data, warnings ========================================================================================
@case("hooks")
def post_accumulate_grad_hook(torch, rec, dev):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def run():
        a.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
        (a * 3).sum().backward()
        (a * 3).sum().backward()
        return seen

    attempt(rec, "register_post_accumulate_grad_hook", run)
    rec.error(
        "on a non-leaf",
        lambda: (a * 2).register_post_accumulate_grad_hook(lambda p: None),
        key="post accumulate grad hooks cannot be registered on non-leaf tensors",
    )


@case("hooks")
def hook_on_a_view_is_lost_when_the_view_is_rebased(torch, rec, dev):
    # the hook sits on the view's old grad_fn (SliceBackward0); an in-place change of the view or of its base
    # regenerates the view's grad_fn, and the old node is no longer part of the graph
    for label, change in [("base changed", lambda y, v: y.mul_(2)), ("view changed", lambda y, v: v.mul_(2))]:
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[1:]
        seen = []
        v.register_hook(lambda g, seen=seen: seen.append(g.tolist()))
        change(y, v)
        (v.sum() * 3).backward()
        rec.value(label, (seen, x.grad))


@case("hooks")
def autograd_grad_of_a_hooked_non_leaf(torch, rec, dev):
    # PyTorch captures the gradient of a non-leaf input before its tensor hooks run when its node also has to run
    # (here: to reach w); when the node is not needed, the hooks run first
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    a = w * 1
    a.register_hook(lambda g: g * 2)
    rec.value("grad(out, a)", torch.autograd.grad((a * a).sum(), a))
    rec.value("grad(out, [a, w])", torch.autograd.grad((a * a).sum(), [a, w]))


@case(".data")
def data_assignment_checks_dtype(torch, rec, dev):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    rec.error(
        "x.data = int tensor",
        lambda: setattr(x, "data", torch.tensor([1, 2])),
        key="data set to a tensor that requires gradients must be floating point or complex dtype",
    )
    rec.value("x", (x, str(x.dtype), x.requires_grad))


@case("anomaly mode")
def anomaly_in_double_backward_names_the_inducing_forward(torch, rec, dev):
    def run():
        x = torch.tensor([0.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            (g,) = torch.autograd.grad((x.abs() ** 1.5).sum(), x, create_graph=True)
            g.sum().backward()

    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            run()
        except RuntimeError as e:
            rec.value("error", str(e))
    rec.value("warnings", [str(w.message).strip().splitlines()[0].split(". Traceback")[0] for w in got])


# == 16. API learners meet that leafkit does not have ==================================================================
# name -> call(lib, x, b, m): x, b are (3,) leaves and m a (2, 2) leaf, all requiring grad
MISSING = {
    "fmod": lambda lib, x, b, m: lib.fmod(x, b),
    "Tensor.fmod": lambda lib, x, b, m: x.fmod(1.5),
    "rsqrt": lambda lib, x, b, m: (x * x + 1).rsqrt(),
    "amax": lambda lib, x, b, m: m.amax(0),
    "amin": lambda lib, x, b, m: m.amin(1),
    "prod": lambda lib, x, b, m: (x * b).prod(),
    "cumsum": lambda lib, x, b, m: x.cumsum(0),
    "cumprod": lambda lib, x, b, m: x.cumprod(0),
    "std": lambda lib, x, b, m: x.std(),
    "var": lambda lib, x, b, m: x.var(),
    "logsumexp": lambda lib, x, b, m: x.logsumexp(0),
    "repeat": lambda lib, x, b, m: x.repeat(2),
    "flip": lambda lib, x, b, m: x.flip(0),
    "roll": lambda lib, x, b, m: x.roll(1),
    "sort": lambda lib, x, b, m: x.sort().values,
    "topk": lambda lib, x, b, m: x.topk(2).values,
    "argsort": lambda lib, x, b, m: x.argsort(),
    "index_select": lambda lib, x, b, m: x.index_select(0, lib.tensor([2, 0])),
    "diag": lambda lib, x, b, m: lib.diag(x),
    "trace": lambda lib, x, b, m: m.trace(),
    "triu": lambda lib, x, b, m: m.triu(),
    "tril": lambda lib, x, b, m: m.tril(),
    "log1p": lambda lib, x, b, m: (x * x).log1p(),
    "expm1": lambda lib, x, b, m: x.expm1(),
    "tan": lambda lib, x, b, m: x.tan(),
    "asin": lambda lib, x, b, m: (x / 3).asin(),
    "acos": lambda lib, x, b, m: (x / 3).acos(),
    "atan": lambda lib, x, b, m: x.atan(),
    "sinh": lambda lib, x, b, m: x.sinh(),
    "cosh": lambda lib, x, b, m: x.cosh(),
    "erf": lambda lib, x, b, m: x.erf(),
    "exp2": lambda lib, x, b, m: x.exp2(),
    "log2": lambda lib, x, b, m: b.log2(),
    "log10": lambda lib, x, b, m: b.log10(),
    "atan2": lambda lib, x, b, m: lib.atan2(x, b),
    "hypot": lambda lib, x, b, m: lib.hypot(x, b),
    "lerp": lambda lib, x, b, m: lib.lerp(x, b, 0.3),
    "addcmul": lambda lib, x, b, m: lib.addcmul(x, x, b),
    "einsum": lambda lib, x, b, m: lib.einsum("ij,jk->ik", m, m),
    "split": lambda lib, x, b, m: m.split(1)[1],
    "chunk": lambda lib, x, b, m: m.chunk(2)[0],
    "clamp_min": lambda lib, x, b, m: x.clamp_min(0.7),
    "clamp_max": lambda lib, x, b, m: x.clamp_max(0.7),
    "negative": lambda lib, x, b, m: x.negative(),
    "absolute": lambda lib, x, b, m: x.absolute(),
    "fix": lambda lib, x, b, m: lib.fix(x),
    "rsub": lambda lib, x, b, m: lib.rsub(x, 1.0),
    "t_": lambda lib, x, b, m: (m * 1).t_(),
    "new_zeros": lambda lib, x, b, m: x.new_zeros(2),
    "storage_offset": lambda lib, x, b, m: m[1].storage_offset(),
    "F.binary_cross_entropy": lambda lib, x, b, m: lib.nn.functional.binary_cross_entropy(
        x.sigmoid(), lib.tensor([1.0, 0.0, 1.0])
    ),
    "F.l1_loss": lambda lib, x, b, m: lib.nn.functional.l1_loss(x, b),
    "F.smooth_l1_loss": lambda lib, x, b, m: lib.nn.functional.smooth_l1_loss(x, b),
    "F.huber_loss": lambda lib, x, b, m: lib.nn.functional.huber_loss(x, b),
    "F.gelu": lambda lib, x, b, m: lib.nn.functional.gelu(x),
    "F.silu": lambda lib, x, b, m: lib.nn.functional.silu(x),
    "F.elu": lambda lib, x, b, m: lib.nn.functional.elu(x),
    "F.leaky_relu": lambda lib, x, b, m: lib.nn.functional.leaky_relu(x, 0.1),
    "F.softplus": lambda lib, x, b, m: lib.nn.functional.softplus(x),
    "F.hardtanh": lambda lib, x, b, m: lib.nn.functional.hardtanh(x),
    "F.relu6": lambda lib, x, b, m: lib.nn.functional.relu6(x * 3),
    "F.logsigmoid": lambda lib, x, b, m: lib.nn.functional.logsigmoid(x),
    "F.normalize": lambda lib, x, b, m: lib.nn.functional.normalize(x, dim=0),
    "F.cosine_similarity": lambda lib, x, b, m: lib.nn.functional.cosine_similarity(x, b, dim=0),
    "optim.AdamW": lambda lib, x, b, m: _adamw(lib),
    "uint8": lambda lib, x, b, m: lib.tensor([250], dtype=lib.uint8) + 10,
    "bfloat16": lambda lib, x, b, m: lib.tensor([1.5], dtype=lib.bfloat16),
    ">>": lambda lib, x, b, m: lib.tensor([8, 3]) >> 1,
    "<<": lambda lib, x, b, m: lib.tensor([8, 3]) << 1,
    "result_type": lambda lib, x, b, m: str(lib.result_type(lib.tensor([1]), 2.5)),
    "promote_types": lambda lib, x, b, m: str(lib.promote_types(lib.int32, lib.float16)),
    "can_cast": lambda lib, x, b, m: lib.can_cast(lib.float32, lib.int32),
    "is_grads_batched": lambda lib, x, b, m: lib.autograd.grad(
        x * x, x, grad_outputs=lib.eye(3), is_grads_batched=True
    )[0],
}


def _adamw(lib):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = lib.optim.AdamW([w], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (w**2).sum().backward()
        opt.step()
    return w


def missing_api(torch, rec, name):
    """Value, node name and first derivatives of one ``MISSING`` entry."""
    x = torch.tensor([0.5, 1.5, -2.0], requires_grad=True)
    b = torch.tensor([1.0, 1.5, 3.0], requires_grad=True)
    m = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)

    def run():
        out = MISSING[name](torch, x, b, m)
        if isinstance(out, torch.Tensor) and out.requires_grad:
            return out, out.grad_fn, torch.autograd.grad(out.sum(), [x, b, m], allow_unused=True)
        return out

    attempt(rec, name, run)
