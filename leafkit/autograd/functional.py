"""``leafkit.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``vhp``, ``hvp``.

Mirrors ``torch.autograd.functional``: the same signatures, output shapes and
strict-mode errors; ``jacobian``/``hessian`` with ``vectorize=True`` run through
:func:`leafkit.func.vmap` (and ``strategy="forward-mode"`` through
:func:`leafkit.func.jvp`), as PyTorch's run through its vmap.  Everything is
built on :func:`leafkit.autograd.grad`; ``jvp`` and ``hvp`` use the
"double backward" trick (the gradient of a vector-Jacobian product with
respect to its vector), so they need ``create_graph`` support in every op
involved.

Shapes: for an input of shape ``I`` and an output of shape ``O``,
``jacobian`` is ``O + I``; ``hessian`` of a scalar function is ``I + I``.
With tuples of inputs (or outputs) the results are tuples (of tuples).

This is a front door of the autograd core: like ``torch.autograd``'s, it
uses the tensor API.
"""

from __future__ import annotations

from .. import _tensor
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _check_tuple(inp, arg_name, fn_name):
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, _tensor.Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                f"the {where} has type {type(el)}."
            )
    return is_tuple, items


def _unpack(res, is_tuple):
    """Undo the tupling for a user who passed a single tensor (``is_tuple`` may be a pair: outputs, inputs)."""
    if isinstance(is_tuple, tuple):
        outer, inner = is_tuple
        if not inner:
            res = tuple(el[0] for el in res)
        return res if outer else res[0]
    return res if is_tuple else res[0]


def _prepare(inputs, create_graph, need_graph):
    """Inputs the function will see: connected to the caller's graph only when ``create_graph``."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(values, create_graph):
    if values and isinstance(values[0], tuple):
        return tuple(_finish(v, create_graph) for v in values)
    return tuple(v if create_graph or v is None else v.detach() for v in values)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


_V_NONE_INPUT = "the input to the user-provided function is a single Tensor with a single element."


def _prepare_v(v, against, is_tuple, create_graph, fn_name, when_none):
    """The vector ``v`` checked against ``against`` (same count and sizes); ``None`` only for one element."""
    if v is None:
        if len(against) != 1 or against[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if {when_none}")
        return None
    _, v = _check_tuple(v, "v", fn_name)
    v = _prepare(v, create_graph, False)
    _validate_v(v, against, is_tuple)
    return v


_STRICT_MESSAGES = {
    "outputs": (
        "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
        "in a differentiable manner from the input when running in strict mode."
    ),
    "grad_inputs": (
        "The gradient with respect to input {i} is independent of the inputs of the user-provided "
        "function. This is not allowed in strict mode."
    ),
    "jacobian": (
        "While computing the hessian, found that the jacobian of the user-provided function with respect "
        "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
        "that your function is twice differentiable and that the jacobian depends on the inputs (this would "
        "be violated by a linear function for example)."
    ),
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This is not "
                "allowed in strict mode."
            )
        if not t.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad; ``None`` for inputs nothing reached."""
    from . import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    keep = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not keep:
        return (None,) * len(inputs)
    outs, gos = zip(*keep)
    return grad(outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        f"The output of the user-provided function is independent of input {i}. This "
                        "is not allowed in strict mode."
                    )
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of entry {i} in the "
                        "grad_outputs when using the double backward trick to compute forward mode "
                        "gradients. This is not allowed in strict mode."
                    )
                if stage == "double_back":
                    raise RuntimeError(
                        f"The jacobian of the user-provided function is independent of input {i}. "
                        "This is not allowed in strict mode."
                    )
                raise RuntimeError(
                    f"The hessian of the user-provided function is independent of entry {i} in the "
                    "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
                    "double backward trick to replace forward mode AD."
                )
            from .. import zeros_like

            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            if stage in ("back", "double_back"):
                what = "jacobian" if stage == "back" else "hessian"
                raise RuntimeError(
                    f"The {what} of the user-provided function is independent of input {i}. This is "
                    "not allowed in strict mode when create_graph=True."
                )
        out.append(g)
    return tuple(out)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs`` (``torch.autograd.functional.vjp``).

    Parameters
    ----------
    func : callable
        Takes the tensors of ``inputs`` and returns a tensor or a tuple of tensors.
    inputs : Tensor or tuple of Tensor
    v : Tensor or tuple of Tensor, optional
        Same shapes as ``func``'s outputs; may be left out for a single
        one-element output.
    create_graph : bool
        Make the result differentiable (connected to ``inputs``' graph).
    strict : bool
        Raise when an output does not depend on an input.

    Returns
    -------
    (outputs, vjp)
        ``func(inputs)`` and ``v^T J``, shaped like ``inputs``.
    """
    with enable_grad():
        is_in_tuple, inputs = _check_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, True)
        outputs = func(*inputs)
        is_out_tuple, outputs = _check_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(
            v,
            outputs,
            is_out_tuple,
            create_graph,
            "vjp",
            "the user-provided function returns a single Tensor with a single element.",
        )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_grad(outputs, inputs, v, create_graph=create_graph), inputs, strict, create_graph, "back")
    return _unpack(_finish(outputs, create_graph), is_out_tuple), _unpack(_finish(res, create_graph), is_in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs`` (``torch.autograd.functional.jvp``).

    Computed with the double backward trick, as PyTorch does: ``u^T J`` is
    linear in ``u``, so its vector-Jacobian product with ``v``, taken with
    respect to ``u``, is ``J v``.

    Returns
    -------
    (outputs, jvp)
        ``func(inputs)`` and ``J v``, shaped like the outputs.
    """
    from .. import zeros_like

    with enable_grad():
        is_in_tuple, inputs = _check_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, True)
        v = _prepare_v(v, inputs, is_in_tuple, create_graph, "jvp", _V_NONE_INPUT)
        outputs = func(*inputs)
        is_out_tuple, outputs = _check_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # the backward is linear in its grad_outputs: their values never reach the result
        grad_outputs = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(
            _grad(grad_inputs, grad_outputs, v, create_graph=create_graph), outputs, strict, create_graph, "back_trick"
        )
    return _unpack(_finish(outputs, create_graph), is_out_tuple), _unpack(_finish(res, create_graph), is_out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (``torch.autograd.functional.jacobian``).

    Reverse mode computes it row by row (one backward pass per output element), or, with
    ``vectorize=True``, all rows in one pass with :func:`leafkit.func.vmap` over the vector-Jacobian
    product.  ``strategy="forward-mode"`` (which needs ``vectorize=True``, as in PyTorch) computes its
    columns with ``vmap`` over :func:`leafkit.func.jvp`.

    Returns
    -------
    Tensor, or tuple (of tuples) of Tensor
        For one input of shape ``I`` and one output of shape ``O``: a tensor of
        shape ``O + I``.  ``J[i][j]`` for output ``i`` and input ``j`` when
        either is a tuple.

    Raises
    ------
    AssertionError
        An unknown ``strategy``.
    NotImplementedError
        ``strategy="forward-mode"`` without ``vectorize=True`` or with ``create_graph=True`` (PyTorch's
        messages).
    RuntimeError
        ``strict=True`` with ``vectorize=True`` or with forward mode; the strict-mode errors.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"` are not '
                'supported together (yet). Please either set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)
    from .. import stack, zeros_like

    with enable_grad():
        is_in_tuple, inputs = _check_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, True)
        outputs = func(*inputs)
        is_out_tuple, outputs = _check_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                    "together. Please either set `strict=False` or `vectorize=False`."
                )
            result = _jacobian_vectorized(outputs, inputs, create_graph)
            return _unpack(_finish(result, create_graph), (is_out_tuple, is_in_tuple))
        result = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.numel()):
                vj = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                f"The jacobian of the user-provided function is independent of input "
                                f"{i}. This is not allowed in strict mode when create_graph=True."
                            )
                        row.append(g)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of input "
                                f"{k}. This is not allowed in strict mode."
                            )
                        row.append(zeros_like(inp))
            result.append(
                tuple(
                    stack(row, 0).view(tuple(out.shape) + tuple(inputs[k].shape))
                    if row
                    else zeros_like(inputs[k]).reshape(tuple(out.shape) + tuple(inputs[k].shape))
                    for k, row in enumerate(rows)
                )
            )
        result = _finish(tuple(result), create_graph)
    return _unpack(result, (is_out_tuple, is_in_tuple))


def _standard_basis(tensors):
    """One ``(total, numel)`` block of the identity per tensor (``total`` = all their elements)."""
    numels = [t.numel() for t in tensors]
    total = sum(numels)
    blocks, start = [], 0
    for t, n in zip(tensors, numels):
        block = t.new_zeros(total, n)
        block.diagonal(-start).fill_(1)
        blocks.append(block)
        start += n
    return blocks, numels


def _jacobian_vectorized(outputs, inputs, create_graph):
    """Reverse mode with ``vectorize=True``: ``vmap`` over the vector-Jacobian product, the rows of the identity
    as its vectors (PyTorch runs ``autograd.grad`` with ``is_grads_batched=True``)."""
    from .. import zeros_like
    from ..func import vmap

    basis, out_numels = _standard_basis(outputs)
    flat_outputs = tuple(o.reshape(-1) for o in outputs)

    def vjp(*grad_outputs):
        vj = _grad(flat_outputs, inputs, grad_outputs, create_graph=create_graph, retain_graph=True)
        return tuple(zeros_like(inp) if g is None else g for g, inp in zip(vj, inputs))

    per_input = vmap(vjp)(*basis)
    by_input = [
        [jac.view(tuple(o.shape) + tuple(inp.shape)) for jac, o in zip(j.split(out_numels, 0), outputs)]
        for j, inp in zip(per_input, inputs)
    ]
    return tuple(zip(*by_input))


def _jacfwd(func, inputs, strict, vectorize):
    """Forward mode (``strategy="forward-mode"``): ``vmap`` over :func:`leafkit.func.jvp` with the columns of the
    identity as tangents."""
    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not supported '
            'together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.'
        )
    is_in_tuple, inputs = _check_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly implemented for "
            "`vectorize=True`."
        )
    from ..func import jvp, vmap

    basis, in_numels = _standard_basis(inputs)
    info = []

    def push(*tangents):
        out, jv = jvp(func, inputs, tuple(t.view_as(x) for t, x in zip(tangents, inputs)))
        is_out_tuple, outs = _check_tuple(out, "outputs of the user-provided function", "jacobian")
        info[:] = [is_out_tuple, outs]
        return tuple(jv) if is_out_tuple else (jv,)

    columns = vmap(push)(*basis)
    is_out_tuple, outputs = info
    result = []  # lists, as PyTorch's forward mode returns them
    for jac, out in zip(columns, outputs):
        row = []
        for piece, inp in zip(jac.split(in_numels, 0), inputs):
            row.append(piece.permute(*range(1, piece.dim()), 0).reshape(tuple(out.shape) + tuple(inp.shape)))
        result.append(row)
    return _unpack(result, (is_out_tuple, is_in_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function (``torch.autograd.functional.hessian``): the Jacobian of its gradient.

    Returns
    -------
    Tensor, or tuple of tuples of Tensor
        For one input of shape ``I``: a tensor of shape ``I + I``;
        ``H[i][j]`` for tuples of inputs.

    Raises
    ------
    RuntimeError
        When ``func`` does not return a single one-element tensor.
    """
    is_in_tuple, inputs = _check_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_tuple, t_out = _check_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_tuple or not isinstance(out, _tensor.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":  # the inner jacobian needs inputs that require grad
            inp = tuple(t if t.requires_grad else t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac if isinstance(jac, tuple) else (jac,), "jacobian", strict)
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack(res, (is_in_tuple, is_in_tuple))


def _second_order(func, inputs, v, create_graph, strict, name):
    is_in_tuple, inputs = _check_tuple(inputs, "inputs", name)
    inputs = _prepare(inputs, create_graph, True)
    v = _prepare_v(v, inputs, is_in_tuple, create_graph, name, _V_NONE_INPUT)
    outputs = func(*inputs)
    is_out_tuple, outputs = _check_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_out_tuple or not isinstance(outputs[0], _tensor.Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_in_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Hessian product ``v^T H`` of a scalar function (``torch.autograd.functional.vhp``).

    Returns
    -------
    (output, vhp)
    """
    with enable_grad():
        is_in_tuple, inputs, v, outputs, jac = _second_order(func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(
            _grad(jac, inputs, v, create_graph=create_graph), inputs, strict, create_graph, "double_back"
        )
    return _finish(outputs, create_graph)[0], _unpack(_finish(res, create_graph), is_in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Hessian-vector product ``H v`` of a scalar function (``torch.autograd.functional.hvp``).

    For the Hessian of a twice-differentiable scalar function ``H v`` equals
    ``v^T H``; it is computed, as PyTorch does, with the double backward
    trick.

    Returns
    -------
    (output, hvp)
    """
    from .. import zeros_like

    with enable_grad():
        is_in_tuple, inputs, v, outputs, jac = _second_order(func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(
            _grad(double_back, grad_jac, v, create_graph=create_graph),
            inputs,
            strict,
            create_graph,
            "double_back_trick",
        )
    return _finish(outputs, create_graph)[0], _unpack(_finish(res, create_graph), is_in_tuple)
