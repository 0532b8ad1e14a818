"""The everyday API of issue 9 and the faults found by trying public reports, as functions of (torch, rec).

``tests/parity/test_api_parity.py`` runs each case on leafkit and on
PyTorch and compares every observation: values, gradients, node names,
error classes and key phrases, warnings.
"""

from __future__ import annotations

import numpy as np


def _names(fn, depth=3):
    from higher_order_cases import tree

    return tree(fn, depth)


# -- 1. assignment with extra leading size-1 dims, and copy_ with any broadcastable source -------------------------
def setitem_broadcast(torch, rec, dev):
    x = torch.zeros(2, 3)
    x[1] = torch.ones(1, 3)
    rec.value("x[1] = ones(1, 3)", x)
    x[0] = torch.ones(1, 1, 3) * 2
    rec.value("x[0] = ones(1, 1, 3)", x)
    x[:, 1] = torch.tensor([[5.0, 6.0]])
    rec.value("x[:, 1] = [[5, 6]]", x)
    x[[0, 1]] = torch.ones(1, 1, 3) * 7
    rec.value("x[[0, 1]] = ones(1, 1, 3)", x)
    x[:] = torch.tensor([1.0, 2.0, 3.0])
    rec.value("x[:] = a row", x)
    rec.error("x[1] = ones(2, 3)", lambda: x.__setitem__(1, torch.ones(2, 3)), key="must be greater or equal to")
    rec.error("x[1] = ones(2)", lambda: x.__setitem__(1, torch.ones(2)), key="The expanded size of the tensor (3)")
    rec.error("x[[0, 1]] = ones(4, 3)", lambda: x.__setitem__([0, 1], torch.ones(4, 3)), key="shape mismatch")
    rec.error(
        "zeros(3).copy_(ones(1, 3))",
        lambda: torch.zeros(3).copy_(torch.ones(1, 3)),
        key="doesn't match the broadcast shape [1, 3]",
    )
    rec.value("zeros(2, 3).copy_(ones(3))", torch.zeros(2, 3).copy_(torch.arange(3.0)))


def setitem_gradient(torch, rec, dev):
    w = torch.zeros(4, requires_grad=True).clone()
    v = torch.tensor([5.0], requires_grad=True)
    w[2] = v
    (w * torch.arange(4.0)).sum().backward()
    rec.value("w.grad_fn", w.grad_fn)
    rec.value("v.grad", v.grad)
    rec.value("w graph", _names(w.grad_fn))
    a = torch.zeros(2, 3, requires_grad=True)
    b = a.clone()
    r = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    b[1] = r
    b[0, 1:] = 9.0
    (b * b).sum().backward()
    rec.value("a.grad", a.grad)
    rec.value("r.grad", r.grad)
    rec.value("b graph", _names(b.grad_fn, 4))


# -- 2. requires_grad on a non-leaf -------------------------------------------------------------------------------
def nonleaf_requires_grad(torch, rec, dev):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2

    def set_true():
        y.requires_grad = True

    def set_false():
        y.requires_grad = False

    rec.error("y.requires_grad = True", set_true, key="you can only change requires_grad flags of leaf variables")
    rec.error("y.requires_grad = False", set_false, key="var_no_grad = var.detach()")
    rec.value("y.requires_grad_(True) returns y", y.requires_grad_(True) is y)
    rec.value("y.requires_grad_() returns y", y.requires_grad_() is y)
    rec.error("y.requires_grad_(False)", lambda: y.requires_grad_(False), key="leaf variables")
    rec.value("y unchanged", (y.requires_grad, y.is_leaf, y.grad_fn))
    i = torch.tensor([1, 2])
    rec.error("int requires_grad", lambda: i.requires_grad_(), key="floating point")


# -- 3. numpy() under no_grad ---------------------------------------------------------------------------------------
def numpy_under_no_grad(torch, rec, dev):
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        rec.value("w.numpy() under no_grad", w.numpy().tolist())
        rec.value("np.asarray(w) under no_grad", np.asarray(w).tolist())
        rec.value("(w * 2).numpy() under no_grad", (w * 2).numpy().tolist())
    y = w * 3
    with torch.no_grad():
        rec.value("graph non-leaf under no_grad", y.numpy().tolist())
    rec.error("w.numpy() outside", lambda: w.numpy(), key="Can't call numpy() on Tensor that requires grad")
    rec.error("np.asarray(w) outside", lambda: np.asarray(w), key="Use tensor.detach().numpy() instead")
    with torch.inference_mode():
        rec.value("w.numpy() under inference_mode", w.numpy().tolist())


# -- 4. custom Function nodes ----------------------------------------------------------------------------------------
def custom_function_node_type(torch, rec, dev):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torch.tensor([3.0], requires_grad=True)
    y = Square.apply(x)
    rec.value("type name", type(y.grad_fn).__name__)
    rec.value("name()", y.grad_fn.name())
    rec.value("isinstance(grad_fn, Square)", isinstance(y.grad_fn, Square))
    rec.value("_forward_cls is Square", y.grad_fn._forward_cls is Square)
    rec.value("repr has SquareBackward", "SquareBackward" in repr(y))
    y.backward()
    rec.value("x.grad", x.grad)
    rec.error(
        "wrong number of gradients",
        lambda: _bad_function(torch).apply(x).sum().backward(),
        key="returned an incorrect number of gradients",
    )

    def instantiate_and_call():
        try:
            Square()(x)
        except RuntimeError:
            pass

    rec.warns("Square() warns", instantiate_and_call, key="should not be instantiated. Methods on autograd functions")
    rec.error("Square()(x)", lambda: Square()(x), key="Legacy autograd function with non-static forward method")


def _bad_function(torch):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    return Bad


# -- 6. backward(inputs=) on a tensor that does not require grad -------------------------------------------------------
def backward_inputs_message(torch, rec, dev):
    x = torch.tensor([1.0], requires_grad=True)
    z = torch.tensor([1.0])
    rec.error(
        "backward(inputs=[z])",
        lambda: (x * 2).sum().backward(inputs=[z]),
        key="can't retain_grad on Tensor that has requires_grad=False",
    )
    rec.error(
        "autograd.grad(..., z)",
        lambda: torch.autograd.grad((x * 2).sum(), z),
        key="One of the differentiated Tensors does not require grad",
    )
    rec.error("backward(inputs=[])", lambda: (x * 2).sum().backward(inputs=[]), key="cannot be empty")
    y = x * 3
    (y * y).sum().backward(inputs=[y])
    rec.value("a non-leaf in inputs gets .grad", (y.grad, y.retains_grad, x.grad))


# -- 7. storage() warns ------------------------------------------------------------------------------------------------
def storage_warning(torch, rec, dev):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.detach()
    rec.value("storages equal (article 003)", x.storage().data_ptr() == y.storage().data_ptr())
    rec.value("untyped storages equal", x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr())
    rec.value("clone has its own storage", x.clone().untyped_storage().data_ptr() == x.untyped_storage().data_ptr())


# -- inference_mode -------------------------------------------------------------------------------------------------
def inference_mode(torch, rec, dev):
    x = torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        y = x * 2
        rec.value("inside: enabled, grad enabled", (torch.is_inference_mode_enabled(), torch.is_grad_enabled()))
        rec.value("y: is_inference, requires_grad, grad_fn", (y.is_inference(), y.requires_grad, y.grad_fn))
        rec.value("x.is_inference()", x.is_inference())
        v = x[0]
        rec.value("a view of a normal tensor is normal", (v.is_inference(), v.requires_grad))
        rec.value("factory inside", torch.zeros(2).is_inference())
    rec.value("outside", (torch.is_inference_mode_enabled(), torch.is_grad_enabled()))
    rec.error("y._version", lambda: y._version, key="Inference tensors do not track version counter")
    rec.error("saved for backward", lambda: (y * x).sum(), key="Inference tensors cannot be saved for backward")
    rec.value("not saved: fine", (y + x).grad_fn)
    rec.error("in-place outside", lambda: y.add_(1), key="Inplace update to inference tensor outside InferenceMode")

    def inplace_under_no_grad():
        with torch.no_grad():
            y.mul_(2)

    rec.error("in-place outside, under no_grad", inplace_under_no_grad, key="Inplace update to inference tensor")
    rec.error("requires_grad_()", lambda: y.requires_grad_(), key="Setting requires_grad=True on inference tensor")
    rec.value("clone is a normal tensor", y.clone().is_inference())
    with torch.inference_mode():
        with torch.inference_mode(False):
            a = x * 2
            rec.value(
                "inference_mode(False) inside",
                (torch.is_inference_mode_enabled(), torch.is_grad_enabled(), a.requires_grad, a.is_inference()),
            )
    with torch.no_grad():
        with torch.inference_mode(False):
            rec.value("inference_mode(False) turns grad mode on", torch.is_grad_enabled())

    @torch.inference_mode()
    def f(t):
        return t * 2

    @torch.inference_mode
    def g(t):
        return t * 3

    rec.value("decorator", (f(x).is_inference(), g(x).is_inference(), f(x).requires_grad))
    with torch.no_grad():
        n = x * 2
    rec.value("no_grad result is normal and can join a graph later", (n.is_inference(), n._version))
    (n * x).sum().backward()
    rec.value("x.grad through the no_grad result", x.grad)
    with torch.inference_mode():
        vv = x.view(2)
    rec.error(
        "in-place on a view made in inference mode", lambda: vv.add_(1), key="A view was created in inference mode"
    )
    # PyTorch saves a node's inputs before its forward runs: the inference error comes before a shape error
    w = torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        b3 = torch.ones(3)
        m3 = torch.ones(3, 4)
    rec.error("w * b3 (saved, wrong shape)", lambda: w * b3, key="Inference tensors cannot be saved for backward")
    rec.error("w + b3 (not saved, wrong shape)", lambda: w + b3, key="must match the size")
    rec.error("matmul(w, m3)", lambda: torch.matmul(w, m3), key="Inference tensors cannot be saved for backward")
    rec.error("cat([w, m3])", lambda: torch.cat([w, m3]), key="Tensors must have same number of dimensions")


# -- anomaly mode ------------------------------------------------------------------------------------------------------
def _warned(torch, fn):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
            err = None
        except Exception as e:  # noqa: BLE001
            err = (type(e).__name__, str(e))
    msgs = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return err, msgs


def anomaly_mode(torch, rec, dev):
    rec.value("off by default", (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()))

    def nan_backward():
        x = torch.tensor([-1.0, 4.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            y = x.sqrt()  # THE FORWARD LINE
            y.sum().backward()

    err, msgs = _warned(torch, nan_backward)
    rec.value("nan error", err)
    rec.value("warnings (enabled, error detected)", [m.splitlines()[0] for m in msgs])
    rec.value("traceback names the forward line", [m.rstrip().splitlines()[-1].strip() for m in msgs[1:]])
    rec.value("restored after the block", torch.is_anomaly_enabled())

    def inplace_error(anomaly):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a.sigmoid()
        b.mul_(2)
        if anomaly:
            with torch.autograd.set_detect_anomaly(True):
                b.sum().backward()
        else:
            b.sum().backward()

    err, _ = _warned(torch, lambda: inplace_error(False))
    rec.value("in-place hint without the mode", err[1].split("Hint: ")[1])
    err, msgs = _warned(torch, lambda: inplace_error(True))
    rec.value("in-place hint with the mode", err[1].split("Hint: ")[1])
    rec.value("error detected in", [m.splitlines()[0] for m in msgs])
    ctx = torch.autograd.set_detect_anomaly(True, check_nan=False)
    rec.value(
        "set_detect_anomaly(True, check_nan=False)", (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    )
    torch.autograd.set_detect_anomaly(False)
    del ctx

    def no_nan_check():
        x = torch.tensor([0.0], requires_grad=True)
        with torch.autograd.set_detect_anomaly(True, check_nan=False):
            (x.sqrt() * 0).sum().backward()
        return x.grad

    rec.value("check_nan=False lets nan through", _warned(torch, no_nan_check)[0])


# -- new operations ---------------------------------------------------------------------------------------------------
def new_operations(torch, rec, dev):
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = torch.tensor([4.0, 2.0, 1.0, 5.0], requires_grad=True)
    for name, f in [
        ("where", lambda: torch.where(a > b, a, b)),
        ("where scalar", lambda: torch.where(a > 2, a, 0.0)),
        ("where scalar first", lambda: torch.where(a > 2, 1.5, b)),
        ("maximum", lambda: torch.maximum(a, b)),
        ("minimum", lambda: torch.minimum(a, b)),
        ("max(a, b)", lambda: a.max(b)),
        ("a % b", lambda: a % b),
        ("a % 1.5", lambda: a % 1.5),
        ("remainder", lambda: torch.remainder(a, 2.5)),
        ("round", lambda: (a / 3).round()),
        ("floor", lambda: (a / 3).floor()),
        ("ceil", lambda: (a / 3).ceil()),
        ("trunc", lambda: (-a / 3).trunc()),
        ("sign", lambda: (a - 2).sign()),
    ]:
        a.grad = b.grad = None
        out = f()
        out.sum().backward()
        rec.value(name, (out, out.grad_fn, a.grad, b.grad))
    fd = a // 2
    rec.value("a // 2", (fd, fd.grad_fn, fd.requires_grad))
    rec.error(
        "backward of a // 2", lambda: fd.sum().backward(), key="derivative for aten::floor_divide is not implemented"
    )
    rec.value("int // int", torch.tensor([7, -7]) // 2)
    rec.value("int % int", torch.tensor([7, -7]) % 3)


# -- batched and broadcast matmul --------------------------------------------------------------------------------------
def batched_matmul(torch, rec, dev):
    torch.manual_seed(0)
    cases = [
        ((2, 3, 4), (4, 5)),
        ((4,), (2, 4, 3)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((3, 4), (2, 4, 5)),
        ((2, 3, 4), (2, 4, 5)),
        ((2, 3, 4), (4,)),
        ((1, 3, 4), (2, 4, 1)),
    ]
    for sa, sb in cases:
        a = (torch.arange(float(np.prod(sa))).reshape(sa) / 10).requires_grad_()
        b = (torch.arange(float(np.prod(sb))).reshape(sb) / 7 - 1).requires_grad_()
        out = a @ b
        out.sum().backward()
        rec.value(f"{sa} @ {sb}", (tuple(out.shape), out.grad_fn, out, a.grad, b.grad))
    rec.error("batch mismatch", lambda: torch.ones(2, 3, 4) @ torch.ones(3, 4, 5), key="must match the size")
    rec.error("inner mismatch", lambda: torch.ones(2, 3, 4) @ torch.ones(2, 5, 5), key="")


# -- overlapping in-place writes ---------------------------------------------------------------------------------------
def overlapping_writes(torch, rec, dev):
    h = torch.arange(5.0)
    rec.error("h[1:].copy_(h[:-1])", lambda: h[1:].copy_(h[:-1]), key="refer to a single memory location")
    rec.error("h[1:].add_(h[:-1])", lambda: h[1:].add_(h[:-1]), key="refer to a single memory location")
    rec.error("h[1:] = h[:-1]", lambda: h.__setitem__(slice(1, None), h[:-1]), key="refer to a single memory location")
    h.copy_(h)
    h.mul_(h)
    rec.value("full overlap is fine", h)
    h[:2] = h[3:]
    rec.value("disjoint is fine", h)
    e = torch.zeros(1).expand(3)
    rec.error(
        "writing into an expanded tensor", lambda: e.add_(1), key="more than one element of the written-to tensor"
    )


# -- a view's grad_fn after its storage changed in place --------------------------------------------------------------
def view_after_inplace(torch, rec, dev):
    """PyTorch regenerates a view's grad_fn (``AsStridedBackward0``) when the storage changed in place since the view
    was made, recorded or not; views that cannot follow raise when their grad_fn is read."""
    for label, make in (("t", lambda a: a.t()), ("select", lambda a: a[0]), ("view of a view", lambda a: a.t()[0])):
        w = torch.ones(2, 3, requires_grad=True)
        v = make(w)
        with torch.no_grad():
            w.add_(1)
        rec.value(f"{label}: leaf changed under no_grad", _names(v.grad_fn))
        w = torch.ones(2, 3, requires_grad=True)
        a = w * 1
        v = make(a)
        a.add_(1)
        rec.value(f"{label}: non-leaf changed (recorded)", _names(v.grad_fn))
        (v * v).sum().backward()
        rec.value(f"{label}: w.grad through the regenerated node", w.grad)
    w = torch.ones(3, requires_grad=True)
    a = w * 1
    v, v2 = a[:2], a[1:]
    v.retain_grad()
    v2.register_hook(lambda g: g * 100)  # stays with v2's old node: PyTorch no longer runs it
    with torch.no_grad():
        a.mul_(2)
    ((v * v).sum() + v2.sum()).backward()
    rec.value("retain_grad follows the view, a hook does not", (v.grad, w.grad))
    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        v = w[:2]
        w.add_(1)
    rec.error(
        "a view made under no_grad: grad_fn",
        lambda: v.grad_fn,
        key="A view was created in no_grad mode and its base or another view of its base has been modified inplace",
    )
    rec.error("  is_leaf", lambda: v.is_leaf, key="A view was created in no_grad mode")
    rec.value("  requires_grad, repr", (v.requires_grad, repr(v)))
    with torch.no_grad():
        rec.value("  usable under no_grad", v * 2)
    rec.error("  backward", lambda: v.sum().backward(), key="A view was created in no_grad mode")
    w = torch.ones(2, 3, requires_grad=True)
    a = w * 1
    u = a.unbind(0)[1]
    a.add_(1)
    rec.error(
        "one of several views: grad_fn",
        lambda: u.grad_fn,
        key="Output 1 of Unbind is a view and its base or another view of its base has been modified inplace",
    )
    w = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        v = w[:2]
    with torch.no_grad():
        w.add_(1)
    rec.error(
        "a view made in inference mode",
        lambda: v.grad_fn,
        key="A view was created in inference mode and its "
        "base or another view of its base has been modified inplace in normal mode",
    )
    for label, make in (
        ("max()", lambda x: (x * 1).max()),
        ("exp", lambda x: x.exp()),
        ("pow(tensor)", lambda x: (x * 1).pow(torch.ones(3))),
    ):
        x = torch.ones(3, requires_grad=True)
        y = make(x)
        y.mul_(10)
        rec.error(
            f"in-place error names {label}'s node",
            lambda y=y: (y * y).sum().backward(),
            key="which is output 0 of " + {"max()": "Max1,", "exp": "Exp,", "pow(tensor)": "Pow1,"}[label],
        )

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    # a saved *input* changed in place: the message names the grad_fn the tensor has now (the in-place op's)
    for label, op, change, key in (
        ("add_", lambda h: h**2, lambda h: h.add_(1), "Add,"),
        ("mul_ then add_", lambda h: h * h, lambda h: h.mul_(2).add_(1), "Add,"),
        ("setitem", lambda h: h.sin(), lambda h: h.__setitem__(0, 5.0), "torch::autograd::CopySlices,"),
        ("a custom Function's", Cube.apply, lambda h: h.mul_(2), "Mul,"),
        ("a view's", lambda h: h[:2] ** 2, lambda h: h[:2].add_(1), "AsStrided,"),
    ):
        x = torch.ones(3, requires_grad=True)
        h = x + 1
        y = op(h)
        change(h)
        rec.error(
            f"in-place error names the changed input's grad_fn ({label})",
            lambda y=y: y.sum().backward(),
            key="which is output 0 of " + key,
        )


# -- everyday spellings learners meet ----------------------------------------------------------------------------------
def everyday(torch, rec, dev):
    x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    y = (x.square() + x.abs().sqrt()).mean()
    y.backward()
    rec.value("square/abs/sqrt/mean", (y, x.grad))
    rec.value("detach function", (torch.detach(x).requires_grad, torch.square(x.detach())))
    rec.value("norm", (x.norm(), x.norm(dim=1), x.norm(p=1)))


CASES = {
    f.__name__: f
    for f in (
        setitem_broadcast,
        setitem_gradient,
        nonleaf_requires_grad,
        numpy_under_no_grad,
        custom_function_node_type,
        backward_inputs_message,
        storage_warning,
        inference_mode,
        anomaly_mode,
        new_operations,
        batched_matmul,
        overlapping_writes,
        view_after_inplace,
        everyday,
    )
}
