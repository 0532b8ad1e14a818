"""``leafkit.nn.functional``: activations, losses and ``linear``, as ``torch.nn.functional``.

Every function builds the graph PyTorch builds, with PyTorch's node names:

==========================================  ===================================================
call                                        ``grad_fn`` of the result
==========================================  ===================================================
``relu(x)``                                 ``ReluBackward0``
``sigmoid(x)``                              ``SigmoidBackward0``
``tanh(x)``                                 ``TanhBackward0``
``softmax(x, dim)``                         ``SoftmaxBackward0``
``log_softmax(x, dim)``                     ``LogSoftmaxBackward0``
``linear(x, W, b)``                         ``AddmmBackward0`` (2-D ``x``; ``W`` enters through
                                            ``TBackward0``), ``MmBackward0`` without bias
``nll_loss(x, t)``                          ``NllLossBackward0``
``cross_entropy(x, t)``                     ``NllLossBackward0`` over ``LogSoftmaxBackward0``
``mse_loss(x, y)``                          ``MseLossBackward0``
``binary_cross_entropy_with_logits(x, t)``  ``BinaryCrossEntropyWithLogitsBackward0``
``dropout(x, p)``                           ``MulBackward0`` (``x * mask``; ``x`` itself when
                                            ``training=False`` or ``p == 0``)
``batch_norm(x, rm, rv, w, b, training)``   ``NativeBatchNormBackward0``
``gelu(x)``                                 ``GeluBackward0``
``silu(x)``                                 ``SiluBackward0``
``elu(x)``                                  ``EluBackward0`` (``EluBackward1`` in place)
``leaky_relu(x, 0.1)``                      ``LeakyReluBackward0`` (``LeakyReluBackward1`` in place)
``softplus(x)``                             ``SoftplusBackward0``
``hardtanh(x)``, ``relu6(x)``               ``HardtanhBackward0``
``logsigmoid(x)``                           ``LogSigmoidBackward0``
``l1_loss(x, y)``                           ``MeanBackward0`` over ``AbsBackward0``
``smooth_l1_loss(x, y)``                    ``SmoothL1LossBackward0``
``huber_loss(x, y)``                        ``HuberLossBackward0``
``binary_cross_entropy(p, t)``              ``BinaryCrossEntropyBackward0``
``normalize(x)``                            ``DivBackward0`` (over ``ClampMinBackward0`` of the norm)
``cosine_similarity(x, y)``                 ``SumBackward1`` (over ``MulBackward0``)
==========================================  ===================================================

Each activation's derivative is itself an op (``gelu_backward`` ...), so
``create_graph=True`` records PyTorch's ``GeluBackwardBackward0`` and the like
and second derivatives work.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype
from .._creation import _finish
from .._functions import activation as _A
from .._functions import distance as _D
from .._functions import loss as _L
from .._functions import nn_ops as _ops
from .._functions import reduction as _R
from .._functions._base import broadcast_check, broadcast_shapes
from .._functions._registry import SPECS, apply
from .._functions.activation import apply_activation as _activation
from .._functions.distance import cosine_similarity as _cosine_similarity
from .._functions.linalg import addmm, mm
from .._functions.linalg import addmm_spec as _addmm_spec
from .._functions.shape import t_spec as _t_spec
from .._functions.shape import unsafe_view_spec
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled, no_grad

__all__ = [
    "relu",
    "relu_",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "nll_loss",
    "cross_entropy",
    "mse_loss",
    "linear",
    "dropout",
    "batch_norm",
    "binary_cross_entropy_with_logits",
    "gelu",
    "silu",
    "elu",
    "elu_",
    "leaky_relu",
    "leaky_relu_",
    "softplus",
    "hardtanh",
    "hardtanh_",
    "relu6",
    "logsigmoid",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "normalize",
    "cosine_similarity",
]


_RELU = SPECS["relu"]


def _check_tensor(fn: str, name: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position 1) must be Tensor, not {type(x).__name__}")


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise (``ReluBackward0``).

    Parameters
    ----------
    input : Tensor
        Any shape, floating or integer dtype, any device.
    inplace : bool
        Write the result into ``input`` (PyTorch's ``relu_``); raises the
        leaf in-place RuntimeError on a leaf that requires grad while grad
        mode is on.

    Returns
    -------
    Tensor
        Same shape, dtype and device as ``input``.
    """
    _check_tensor("relu", "input", input)
    if inplace:
        return relu_(input)
    return apply(_RELU, (input,))  # input.relu()


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu`` (``ReluBackward0``); PyTorch's leaf in-place RuntimeError on a leaf that requires grad."""
    return input.relu_()


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))`` elementwise (``SigmoidBackward0``); integer input gives the default float dtype."""
    _check_tensor("sigmoid", "input", input)
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent elementwise (``TanhBackward0``)."""
    _check_tensor("tanh", "input", input)
    return input.tanh()


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``, computed stably (``SoftmaxBackward0``).

    Parameters
    ----------
    input : Tensor
        Floating point tensor of any shape.
    dim : int
        The dimension that sums to one.  Leaving it out warns, as PyTorch
        does, and picks 0 for 0-, 1- and 3-D input and 1 otherwise.
    dtype : leafkit.dtype, optional
        Cast ``input`` first (``ToCopyBackward0``).

    Raises
    ------
    IndexError
        "Dimension out of range" for a bad ``dim``.
    """
    _check_tensor("softmax", "input", input)
    if dim is None:
        dim = _softmax_dim("softmax", input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return input.softmax(dim)


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``x - logsumexp(x, dim)`` (``LogSoftmaxBackward0``), stable for logits of 1e4 and beyond.

    The maximum along ``dim`` is subtracted before exponentiating, so no
    ``exp`` overflows; the result and its gradient stay finite.  Arguments as
    for :func:`softmax`.
    """
    _check_tensor("log_softmax", "input", input)
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return input.log_softmax(dim)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood loss for integer class targets (``NllLossBackward0``).

    Parameters
    ----------
    input : Tensor
        Log-probabilities, shape ``(N, C)``, or ``(C,)`` for one sample;
        floating dtype.
    target : Tensor
        Class indices in ``[0, C)``, shape ``(N,)`` (or ``()``), dtype
        ``int64`` (or ``uint8``), on the same device as ``input``.
    weight : Tensor, optional
        A weight per class, shape ``(C,)``.
    ignore_index : int
        Samples with this target add nothing to the loss or to the mean's
        denominator.
    reduction : {"mean", "sum", "none"}
        ``"mean"`` divides by the summed weights of the samples kept.

    Returns
    -------
    Tensor
        0-d for ``"mean"``/``"sum"``, shape ``(N,)`` for ``"none"``.

    Raises
    ------
    RuntimeError
        A target dtype other than Long/Byte ("expected target dtype to be
        Long or Byte"); tensors on different devices ("Expected all tensors
        to be on the same device").
    ValueError
        Batch sizes that differ ("Expected input batch_size (4) to match
        target batch_size (3)."); an unknown ``reduction``.
    IndexError
        A target outside ``[0, C)`` ("Target 5 is out of bounds.").
    """
    _check_tensor("nll_loss", "input", input)
    if not isinstance(target, Tensor):
        raise TypeError(f"nll_loss(): argument 'target' (position 2) must be Tensor, not {type(target).__name__}")
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return apply(_L.nll_loss_spec, (input, target, weight, _L.reduction_enum(reduction), int(ignore_index)))[0]


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy of logits and integer class targets: ``nll_loss(log_softmax(input, 1), target)``.

    The graph is PyTorch's: ``NllLossBackward0`` over
    ``LogSoftmaxBackward0``.  The log-softmax subtracts the row maximum, so
    logits of 1e4 give a finite loss and finite gradients.

    Parameters
    ----------
    input : Tensor
        Logits, shape ``(N, C)`` or ``(C,)``, floating dtype.
    target : Tensor
        Class indices, shape ``(N,)`` or ``()``, dtype int64.  (PyTorch also
        takes class probabilities of ``input``'s shape; leafkit raises
        NotImplementedError for those rather than guess.)
    weight, ignore_index, reduction
        As for :func:`nll_loss`.
    label_smoothing : float
        Only ``0.0`` is supported (NotImplementedError otherwise).

    Raises
    ------
    As :func:`nll_loss`.
    """
    _check_tensor("cross_entropy", "input", input)
    if not isinstance(target, Tensor):
        raise TypeError(f"cross_entropy(): argument 'target' (position 2) must be Tensor, not {type(target).__name__}")
    x, t = input._data, target._data
    if t.dtype.kind == "f" and t.shape == x.shape:
        raise NotImplementedError(
            "leafkit's cross_entropy takes integer class targets; class-probability targets "
            "(PyTorch's soft labels) are not implemented"
        )
    if label_smoothing != 0.0:
        raise NotImplementedError("leafkit's cross_entropy does not implement label_smoothing")
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    red = _L.reduction_enum(reduction)
    # what log_softmax(input, dim) and nll_loss(...) run once their arguments are checked (they are, here): the
    # two ops, without the two functions' checks a second time (a training step calls this once per batch)
    log_p = apply(_R.log_softmax_spec, (input, 0 if x.ndim <= 1 else 1))
    return apply(_L.nll_loss_spec, (log_p, target, weight, red, int(ignore_index)))[0]


def mse_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean", weight=None
) -> Tensor:
    """Mean squared error (``MseLossBackward0``).

    Parameters
    ----------
    input, target : Tensor
        Floating tensors on one device.  Shapes that differ are broadcast
        (through ``ExpandBackward0``), with PyTorch's UserWarning "Using a
        target size ... that is different to the input size".
    reduction : {"mean", "sum", "none"}

    Raises
    ------
    RuntimeError
        Shapes that do not broadcast ("The size of tensor a (4) must match
        the size of tensor b (5) at non-singleton dimension 0"); different
        devices.
    ValueError
        An unknown ``reduction``.
    """
    _check_tensor("mse_loss", "input", input)
    if not isinstance(target, Tensor):
        raise TypeError(f"mse_loss(): argument 'target' (position 2) must be Tensor, not {type(target).__name__}")
    if weight is not None:
        raise NotImplementedError("leafkit's mse_loss does not implement weight")
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    red = _L.reduction_enum(reduction)
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
            "same size.",
            UserWarning,
            stacklevel=2,
        )
        broadcast_check(input._data, target._data)
        shape = _broadcast_shape(input.shape, target.shape)
        if input.shape != shape:
            input = input.expand(shape)
        if target.shape != shape:
            target = target.expand(shape)
    return apply(_L.mse_loss_spec, (input, target, red))


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(a, b))


def _legacy_reduction(size_average, reduce) -> str:
    """PyTorch's ``legacy_get_string``: the reduction the deprecated arguments mean, with its UserWarning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return ret


_ADDMM_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "int64": "Long",
    "int32": "Int",
    "bool": "Bool",
}
_MM_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "int64": "long int",
    "int32": "int",
    "bool": "bool",
}


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, with the graph PyTorch builds.

    Parameters
    ----------
    input : Tensor
        Shape ``(*, in_features)``, at least 1-D.
    weight : Tensor
        Shape ``(out_features, in_features)``; enters the graph through
        ``TBackward0`` (its transpose), as in PyTorch.
    bias : Tensor, optional
        Shape ``(out_features,)``.

    Returns
    -------
    Tensor
        Shape ``(*, out_features)``.  ``grad_fn``: ``AddmmBackward0`` for
        2-D input with bias, ``MmBackward0`` without; 1-D input gives
        ``ViewBackward0`` over ``AddmmBackward0`` (or ``SqueezeBackward4``
        over ``MmBackward0``); higher dimensions fold into 2-D and unfold
        again (``ViewBackward0`` / ``UnsafeViewBackward0``).

    Raises
    ------
    RuntimeError
        "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x2)" for
        mismatched features; "mat1 and mat2 must have the same dtype" (with
        bias; "expected m1 and m2 to have the same dtype" without) when
        ``input`` and ``weight`` differ in dtype; PyTorch's "expanded size"
        message for a bias of the wrong size; different devices.
    """
    _check_tensor("linear", "input", input)
    nd = input._data.ndim
    wshape = weight._data.shape
    if nd == 0 or not wshape:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {nd}D and {len(wshape)}D")
    if input._data.dtype != weight._data.dtype:
        a, b = input._data.dtype.name, weight._data.dtype.name
        if bias is not None:
            raise RuntimeError(
                f"mat1 and mat2 must have the same dtype, but got {_ADDMM_NAMES.get(a, a)} and {_ADDMM_NAMES.get(b, b)}"
            )
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_MM_NAMES.get(a, a)} != {_MM_NAMES.get(b, b)}"
        )
    wt = apply(_t_spec, (weight,))  # weight.t(): TBackward0
    if bias is not None:
        out_f = wshape[0] if len(wshape) == 2 else 1
        bshape = bias._data.shape
        if bshape and bshape[-1] != out_f and bshape[-1] != 1:
            target = [*input._data.shape[:-1], out_f]
            raise RuntimeError(
                f"The expanded size of the tensor ({out_f}) must match the existing size "
                f"({bshape[-1]}) at non-singleton dimension {len(target) - 1}.  Target sizes: "
                f"[{', '.join(map(str, target))}].  Tensor sizes: [{', '.join(map(str, bshape))}]"
            )
    if nd == 2:
        if bias is None:
            return mm(input, wt)
        return apply(_addmm_spec, (bias, input, wt, 1, 1))  # addmm(bias, input, wt) (the three are tensors)
    if nd == 1:
        if bias is None:
            return input @ wt  # SqueezeBackward4 over MmBackward0, as PyTorch's matmul
        out = addmm(bias, input.view(1, -1), wt)
        return out.view(out.shape[-1])
    lead = tuple(input.shape[:-1])
    if bias is not None and input.is_contiguous():
        out = addmm(bias, input.view(-1, input.shape[-1]), wt)
        return out.view(*lead, out.shape[-1])
    flat = input.reshape(-1, input.shape[-1])
    out = apply(unsafe_view_spec, (mm(flat, wt), (*lead, wt.shape[-1])))
    return out if bias is None else out + bias


# -- dropout -----------------------------------------------------------------------------------------------------------
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)`` (training only).

    What PyTorch computes on the CPU: ``input * noise`` with ``noise`` a
    tensor of ``0`` and ``1/(1-p)`` values, so the result's ``grad_fn`` is a
    ``MulBackward0`` that saved the mask (``grad_fn._saved_other``), and the
    gradient reaching ``input`` is ``grad * noise``: a dropped element gets
    no gradient.  The expected value of every element is unchanged.

    Parameters
    ----------
    input : Tensor
        Any shape, floating dtype, any device.
    p : float
        The probability of zeroing an element, in ``[0, 1]``.
    training : bool
        ``False`` (what :class:`~leafkit.nn.Dropout` passes after
        ``eval()``) returns ``input`` itself: no copy, no node.
    inplace : bool
        Multiply ``input`` in place (``mul_``; ``MulBackward0`` all the same).

    Returns
    -------
    Tensor
        Same shape, dtype and device as ``input``.  ``input`` itself when
        ``p == 0``, ``not training`` or ``input`` is empty, as in PyTorch.
        ``p == 1`` multiplies by a 0-d zero (``_saved_other`` is
        ``tensor(0.)``; negative inputs give ``-0.``).

    Raises
    ------
    ValueError
        "dropout probability has to be between 0 and 1, but got 1.5".
    RuntimeError
        Integer input with ``0 < p < 1`` ("result type Float can't be cast
        to the desired output type Long"); PyTorch's leaf in-place error for
        ``inplace=True`` on a leaf that requires grad.

    Notes
    -----
    The mask comes from leafkit's generator, so a seed gives the same mask
    on every run but not PyTorch's mask.  On a real CUDA GPU PyTorch uses a
    fused kernel whose node is ``NativeDropoutBackward0``; leafkit's ``cuda``
    device builds the CPU graph (``MulBackward0``).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return (_ops.dropout_ if inplace else _ops.dropout)(input, p, training)


# -- batch normalisation -----------------------------------------------------------------------------------------------
def _verify_batch_size(size) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (dim 1) to mean 0 and variance 1, then scale by ``weight`` and shift by ``bias``.

    ``y = (x - mean) / sqrt(var + eps) * weight + bias``, per channel.  In
    training (``training=True``) ``mean`` and ``var`` are the batch's
    (the biased variance, over every dim but dim 1), and the running
    statistics, when given, are updated in place::

        running_mean = (1 - momentum) * running_mean + momentum * mean
        running_var  = (1 - momentum) * running_var  + momentum * var * M / (M - 1)

    with ``M`` values per channel (the running variance is the *unbiased*
    estimate, as in PyTorch).  In evaluation ``mean`` and ``var`` are the
    running statistics and nothing is updated.

    The result's ``grad_fn`` is ``NativeBatchNormBackward0`` (next_functions:
    input, weight, bias), saving ``input``, ``weight``, ``running_mean``,
    ``running_var``, the batch mean and inverse standard deviation
    (``_saved_result1``, ``_saved_result2``; empty in evaluation),
    ``training`` and ``eps``.  Its derivative is itself differentiable
    (``NativeBatchNormBackwardBackward0``), so ``create_graph=True`` and
    second derivatives work.

    Parameters
    ----------
    input : Tensor
        Shape ``(N, C)``, ``(N, C, L)`` or more dims (channels in dim 1),
        floating dtype, any device.
    running_mean, running_var : Tensor or None
        Shape ``(C,)``, the input's dtype (float32 parameters with a
        float16 input are allowed, as on PyTorch's CPU).  Required when
        ``training`` is False.  Updated in place in training, without a
        version-counter bump (as PyTorch's kernel does).
    weight, bias : Tensor, optional
        Shape ``(C,)`` (``C`` elements): the affine scale and shift.
    training : bool
        Use (and update) the batch statistics.
    momentum : float
        The weight of the new batch in the running statistics.
    eps : float
        Added to the variance; must be positive in training.

    Returns
    -------
    Tensor
        Same shape, dtype and device as ``input``.

    Raises
    ------
    ValueError
        "Expected more than 1 value per channel when training, got input
        size torch.Size([1, 3])"; "batch_norm eps must be positive during
        training, but got 0.0" ("must be non-negative" in evaluation).
    RuntimeError
        "running_mean should contain 3 elements not 2" (likewise
        ``running_var``, ``weight``, ``bias``); "running_mean must be defined
        in evaluation mode"; PyTorch's "mixed dtype (CPU)" messages; tensors
        on different devices.
    IndexError
        1-D input ("Dimension out of range (expected to be in range of
        [-1, 0], but got 1)").
    NotImplementedError
        Integer input ("\\"batch_norm\\" not implemented for 'Long'").

    Notes
    -----
    On a real CUDA GPU PyTorch runs cuDNN (``CudnnBatchNormBackward0``);
    leafkit's ``cuda`` device builds the CPU graph.
    """
    _check_tensor("batch_norm", "input", input)
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _ops.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


# -- binary cross-entropy with logits ----------------------------------------------------------------------------------
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross-entropy of logits, ``-[t log σ(x) + (1 - t) log(1 - σ(x))]``, computed stably
    (``BinaryCrossEntropyWithLogitsBackward0``).

    The sigmoid is folded into the loss (``(1 - t) x - log σ(x)``, with
    ``log σ(x) = min(x, 0) - log1p(exp(-|x|))``), so logits of ±1e4 give a
    finite loss and finite gradients; use this instead of
    ``binary_cross_entropy(sigmoid(x), t)``.

    Parameters
    ----------
    input : Tensor
        Logits, any shape, floating dtype.
    target : Tensor
        Same shape as ``input``, values in ``[0, 1]`` (labels or
        probabilities), floating dtype.  It may require grad (PyTorch
        differentiates with respect to it too).
    weight : Tensor, optional
        Rescales each element's loss; broadcast to ``input``'s shape.
        May not require grad.
    reduction : {"mean", "sum", "none"}
    pos_weight : Tensor, optional
        Weight of the positive term ``t log σ(x)``, broadcast along the
        last dims (one per class, shape ``(C,)``); ``> 1`` raises recall.
        May not require grad.

    Returns
    -------
    Tensor
        0-d for ``"mean"``/``"sum"``, ``input``'s shape for ``"none"``.
        ``grad_fn._saved_reduction`` is PyTorch's enum (0 none, 1 mean,
        2 sum).

    Raises
    ------
    ValueError
        "Target size (torch.Size([2, 3])) must be the same as input size
        (torch.Size([4, 3]))"; an unknown ``reduction``.
    RuntimeError
        A ``weight``/``pos_weight`` that does not broadcast ("The size of
        tensor a (3) must match the size of tensor b (2) at non-singleton
        dimension 1", or "output with shape [4, 3] doesn't match the
        broadcast shape [5, 4, 3]"); one that requires grad ("The function
        'binary_cross_entropy_with_logits' is not differentiable with
        respect to argument 'weight'..."); an integer target ("result type
        Float can't be cast to the desired output type Long").
    """
    _check_tensor("binary_cross_entropy_with_logits", "input", input)
    if not isinstance(target, Tensor):
        raise TypeError(
            f"binary_cross_entropy_with_logits(): argument 'target' (position 2) must be Tensor, not "
            f"{type(target).__name__}"
        )
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _L.binary_cross_entropy_with_logits(input, target, weight, pos_weight, _L.reduction_enum(reduction))


# -- activations -------------------------------------------------------------------------------------------------------
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU, ``x * Φ(x)`` with Φ the standard normal CDF (``GeluBackward0``).

    Parameters
    ----------
    input : Tensor
        Any shape, floating dtype, any device.
    approximate : {"none", "tanh"}
        ``"tanh"``: PyTorch's approximation
        ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``.

    Returns
    -------
    Tensor
        Same shape, dtype and device.  Its derivative is the op
        ``gelu_backward`` (``GeluBackwardBackward0`` when recorded), so
        second derivatives work.

    Raises
    ------
    NotImplementedError
        Integer or bool input ("\\"GeluKernelImpl\\" not implemented for 'Long'").
    RuntimeError
        Another ``approximate`` ("approximate argument must be either none or tanh.").
    """
    return _activation("gelu", _A.gelu_spec, input, (approximate,), False)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """SiLU (swish), ``x * sigmoid(x)`` (``SiluBackward0``).

    The derivative is PyTorch's ``grad * σ(x) * (1 + x * (1 - σ(x)))``,
    recorded as ordinary ops with ``create_graph=True``.  Floating input of
    any shape and device; same shape, dtype and device out.  ``inplace=True``
    writes into ``input`` (PyTorch's leaf in-place RuntimeError on a leaf that
    requires grad).  Raises NotImplementedError for integer or bool input.
    """
    return _activation("silu", _A.silu_spec, input, (), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """ELU: ``x`` where x > 0, ``alpha * (exp(x) - 1)`` elsewhere (``EluBackward0``).

    ``inplace=True`` (or :func:`elu_`) writes into ``input``; the node is
    then ``EluBackward1``, which saves the result instead of the input, as in
    PyTorch.  Floating input of any shape and device; same shape, dtype and
    device out.  The derivative is the op ``elu_backward``
    (``EluBackwardBackward0`` when recorded).  Raises NotImplementedError for
    integer or bool input.
    """
    return _activation("elu", _A.elu_inplace_spec if inplace else _A.elu_spec, input, (float(alpha),), inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu` (``EluBackward1``)."""
    return elu(input, alpha, inplace=True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where x > 0, ``negative_slope * x`` elsewhere (``LeakyReluBackward0``).

    The gradient is 1 for x > 0 and ``negative_slope`` for x <= 0 (at 0
    too, as in PyTorch).  ``inplace=True`` (or :func:`leaky_relu_`) writes
    into ``input`` (``LeakyReluBackward1``, saving the result); its backward
    raises RuntimeError for a negative slope, as PyTorch's does.  Floating
    input of any shape and device; raises NotImplementedError for integer or
    bool input.
    """
    spec = _A.leaky_relu_inplace_spec if inplace else _A.leaky_relu_spec
    return _activation("leaky_relu", spec, input, (float(negative_slope),), inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu` (``LeakyReluBackward1``)."""
    return leaky_relu(input, negative_slope, inplace=True)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, a smooth ReLU (``SoftplusBackward0``).

    Where ``beta * x > threshold`` the result is ``x`` itself (no overflow).
    The derivative is ``sigmoid(beta * x)`` (the op ``softplus_backward``,
    ``SoftplusBackwardBackward0`` when recorded).  Floating input of any shape
    and device; raises NotImplementedError for integer or bool input.
    """
    return _activation("softplus", _A.softplus_spec, input, (beta, threshold), False)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]`` (``HardtanhBackward0``).

    The gradient passes strictly inside the interval and is 0 at and beyond
    its ends; nan passes through.  Integer input is allowed (same dtype
    out).  ``inplace=True`` (or :func:`hardtanh_`) writes into ``input``.

    Raises
    ------
    ValueError
        "min_val cannot be greater than max_val".
    RuntimeError
        Bool input ("Bool inputs not supported for hardtanh"); uint8 input
        with a negative limit.
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _activation("hardtanh", _A.hardtanh_spec, input, (min_val, max_val), inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: PyTorch computes ``hardtanh(x, 0, 6)``, so the node is ``HardtanhBackward0``."""
    _check_tensor("relu6", "input", input)
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably as ``min(x, 0) - log1p(exp(-|x|))`` (``LogSigmoidBackward0``).

    Finite for any finite input (``logsigmoid(-1000.)`` is ``-1000.``, where
    ``sigmoid(x).log()`` gives -inf).  The node saves ``self`` and a
    ``buffer`` (``exp(-|x|)``) that its derivative, the op
    ``log_sigmoid_backward``, reuses.  Floating input; NotImplementedError
    for integer or bool input.
    """
    _check_tensor("logsigmoid", "input", input)
    return apply(_A.log_sigmoid_spec, (input,))[0]


# -- losses: l1, smooth l1, huber, binary cross-entropy --------------------------------------------------------------
def _check_target(fn, target):
    if not isinstance(target, Tensor):
        raise TypeError(f"{fn}(): argument 'target' (position 2) must be Tensor, not {type(target).__name__}")


def _broadcast_pair(input: Tensor, target: Tensor):
    """PyTorch's ``torch.broadcast_tensors(input, target)`` after its size warning: each tensor whose shape
    differs from the common one is expanded (``ExpandBackward0``)."""
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
            "same size.",
            UserWarning,
            stacklevel=3,
        )
        shape = broadcast_shapes(tuple(input.shape), tuple(target.shape))
        if tuple(input.shape) != shape:
            input = input.expand(shape)
        if tuple(target.shape) != shape:
            target = target.expand(shape)
    return input, target


def l1_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean", weight: Tensor | None = None
) -> Tensor:
    """Mean absolute error: ``|input - target|``, averaged or summed.

    Not an op of its own, as in PyTorch: ``(input - target).abs()`` then
    ``mean()`` / ``sum()``, so the graph is ``MeanBackward0`` over
    ``AbsBackward0`` over ``SubBackward0`` (the gradient at equal values is
    0, ``sgn``'s).

    Parameters
    ----------
    input, target : Tensor
        Shapes that broadcast (with PyTorch's UserWarning when they differ;
        the one that differs is expanded).
    reduction : {"mean", "sum", "none"}
    weight : Tensor, optional
        Same shape as ``input``: each error is multiplied by its weight, and
        "mean" divides by ``weight.sum()`` (PyTorch 2.13's weighted form).

    Raises
    ------
    RuntimeError
        Shapes that do not broadcast; "mean" of integer tensors.
    ValueError
        An unknown ``reduction``; a ``weight`` whose size differs from
        ``input``'s ("Weights and input must have the same size.").
    """
    _check_tensor("l1_loss", "input", input)
    _check_target("l1_loss", target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        if weight.shape != input.shape:
            raise ValueError("Weights and input must have the same size.")
        errors = (input - target).abs() * weight
        if reduction == "none":
            return errors
        if reduction == "sum":
            return errors.sum()
        if reduction == "mean":
            return errors.sum() / weight.sum()
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    red = _L.reduction_enum(reduction)
    loss = (input - target).abs()
    return loss if red == _L.NONE else (loss.mean() if red == _L.MEAN else loss.sum())


def smooth_l1_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    """Smooth L1 loss (``SmoothL1LossBackward0``): ``0.5 * d**2 / beta`` where ``d = |input - target| < beta``,
    ``d - 0.5 * beta`` elsewhere.

    Quadratic near zero, linear (like L1) for large errors.  ``beta=0``
    gives :func:`l1_loss` (and its graph), as in PyTorch.  The derivative is
    the op ``smooth_l1_loss_backward`` (``SmoothL1LossBackwardBackward0``).

    Parameters
    ----------
    input, target : Tensor
        Floating tensors whose shapes broadcast (UserWarning when they
        differ); mixed floating dtypes give the promoted dtype.
    reduction : {"mean", "sum", "none"}
    beta : float
        Where the loss turns linear; must not be negative.

    Raises
    ------
    RuntimeError
        "smooth_l1_loss does not support negative values for beta."; shapes
        that do not broadcast.
    NotImplementedError
        Integer inputs.
    ValueError
        An unknown ``reduction``.
    """
    _check_tensor("smooth_l1_loss", "input", input)
    _check_target("smooth_l1_loss", target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return apply(_L.smooth_l1_loss_spec, (input, target, _L.reduction_enum(reduction), float(beta)))


def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight: Tensor | None = None
) -> Tensor:
    """Huber loss (``HuberLossBackward0``): ``0.5 * d**2`` where ``d = |input - target| < delta``,
    ``delta * (d - 0.5 * delta)`` elsewhere.

    ``huber_loss`` is ``delta * smooth_l1_loss(beta=delta)``.  The result has
    ``input``'s dtype (PyTorch writes into ``empty_like(input)``).  The
    derivative is the op ``huber_loss_backward``
    (``HuberLossBackwardBackward0``).

    Parameters
    ----------
    input, target : Tensor
        Floating tensors whose shapes broadcast (UserWarning when they differ).
    reduction : {"mean", "sum", "none"}
    delta : float
        Where the loss turns linear; must be positive.
    weight : Tensor, optional
        Same shape as ``input``: multiplies each element's loss (then
        ``mean()``/``sum()``), PyTorch 2.13's weighted form.

    Raises
    ------
    RuntimeError
        "huber_loss does not support non-positive values for delta."; shapes
        that do not broadcast.
    NotImplementedError
        Integer inputs.
    ValueError
        An unknown ``reduction``; a ``weight`` whose size differs from
        ``input``'s.
    """
    _check_tensor("huber_loss", "input", input)
    _check_target("huber_loss", target)
    input, target = _broadcast_pair(input, target)
    if weight is None:
        return apply(_L.huber_loss_spec, (input, target, _L.reduction_enum(reduction), float(delta)))
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = apply(_L.huber_loss_spec, (input, target, _L.NONE, float(delta))) * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """Binary cross-entropy of probabilities: ``-w * [t log(p) + (1 - t) log(1 - p)]``
    (``BinaryCrossEntropyBackward0``).

    Each log is clamped at -100 (PyTorch's choice), so a probability of
    exactly 0 or 1 gives a loss of 100, not inf.  Prefer
    :func:`binary_cross_entropy_with_logits` on logits: ``sigmoid`` then this
    loss rounds probabilities to 0 and 1 for large logits.  The derivative
    by ``input`` is the op ``binary_cross_entropy_backward``
    (``BinaryCrossEntropyBackwardBackward0``); by ``target`` it is
    ``-logit(input) * grad`` (``NegBackward0`` over ``LogitBackward0``).

    Parameters
    ----------
    input : Tensor
        Probabilities in [0, 1], any shape, floating dtype.
    target : Tensor
        Same shape and dtype as ``input``, values in [0, 1].  It may require
        grad.
    weight : Tensor, optional
        Broadcast to ``target``'s shape (``expand``): rescales each
        element's loss.  May not require grad.
    reduction : {"mean", "sum", "none"}

    Returns
    -------
    Tensor
        0-d for "mean"/"sum", ``input``'s shape for "none".

    Raises
    ------
    ValueError
        A target size that differs from the input size ("Using a target size
        (torch.Size([3])) that is different to the input size
        (torch.Size([2])) is deprecated. Please ensure they have the same
        size."); an unknown ``reduction``.
    RuntimeError
        "all elements of input should be between 0 and 1" (nan included),
        the same for ``target``; a target dtype that differs from the
        input's ("Found dtype Double but expected Float"); a ``weight`` that
        does not broadcast or that requires grad ("The function
        'binary_cross_entropy' is not differentiable with respect to
        argument 'weight'...").
    """
    _check_tensor("binary_cross_entropy", "input", input)
    _check_target("binary_cross_entropy", target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    red = _L.reduction_enum(reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        _check_tensor("binary_cross_entropy", "weight", weight)
        new_size = _broadcast_shapes(target.size(), weight.size())
        if tuple(weight.shape) != new_size:
            weight = weight.expand(new_size)
    return apply(_L.bce_spec, (input, target, weight, red))


def _broadcast_shapes(*shapes):
    """``torch.broadcast_shapes`` (its Python implementation's error message)."""
    common = [1] * max(len(s) for s in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if common[idx] == 1:
                common[idx] = shape[idx]
            elif shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! Mismatching "
                    f"argument at index {arg_idx} had {shape}; but expected shape should be "
                    f"broadcastable to {common}"
                )
    return tuple(common)


# -- normalize ---------------------------------------------------------------------------------------------------------
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim``: ``input / max(||input||_p, eps)``.

    PyTorch's composition: ``input.norm(p, dim, keepdim=True).clamp_min(eps)
    .expand_as(input)`` and a division, so the graph is ``DivBackward0`` over
    ``ExpandBackward0`` over ``ClampMinBackward0`` over
    ``LinalgVectorNormBackward0``.  A zero vector stays zero (its norm is
    raised to ``eps``).

    Parameters
    ----------
    input : Tensor
        Floating tensor, at least 1-D for the default ``dim=1`` ... any
        device.
    p : float
        The norm's order (1 and 2 differentiable; ``inf`` too, without
        gradient).
    dim : int
        The dimension of the vectors (default 1: the rows of a matrix).
    eps : float
        The smallest norm divided by.
    out : Tensor, optional
        Write the result here (same shape as ``input``); as in PyTorch, not
        while ``input`` requires grad with grad mode on.

    Raises
    ------
    IndexError
        ``dim`` out of range.
    RuntimeError
        Integer input ("linalg.vector_norm: Expected a floating point or
        complex tensor as input. Got Long"); ``out`` with an input that
        requires grad ("div(): functions with out=... arguments don't support
        automatic differentiation, but one of the arguments requires grad."),
        or with another shape.
    """
    _check_tensor("normalize", "input", input)
    if out is None:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
        return input / denom
    denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    if is_grad_enabled() and (input.requires_grad or out.requires_grad):
        raise RuntimeError(
            "div(): functions with out=... arguments don't support automatic differentiation, but one "
            "of the arguments requires grad."
        )
    if tuple(out.shape) != tuple(input.shape):
        raise RuntimeError(
            f"leafkit's normalize writes into an `out` of the input's shape {list(input.shape)}, not {list(out.shape)}"
        )
    return out.copy_(input / denom)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (``SumBackward1`` ...).

    Same as :func:`leafkit.cosine_similarity` (see there for shapes, dtypes
    and errors).
    """
    return _cosine_similarity(x1, x2, dim, eps)


# -- convolution, padding, pooling, channel dropout (leafkit/nn/_functional_cnn.py) ------------------------------------
from ._functional_cnn import *  # noqa: E402,F401,F403
from ._functional_cnn import __all__ as _cnn_all  # noqa: E402

__all__ += _cnn_all


# -- issue 18: more activations ----------------------------------------------------------------------------------------
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """Hardswish, ``x * relu6(x + 3) / 6`` (``HardswishBackward0``; MobileNetV3).

    Floating input of any shape and device; same shape, dtype and device out; NotImplementedError
    ("\\"hardswish_cpu\\" not implemented for 'Long'") otherwise.  ``inplace=True`` writes into ``input``.
    """
    return _activation("hardswish", _A.hardswish_spec, input, (), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """Hardsigmoid, ``relu6(x + 3) / 6`` (``HardsigmoidBackward0``).

    Its derivative has no derivative in PyTorch: a backward pass recorded with ``create_graph=True`` shows a
    ``NotImplemented`` node, and differentiating through it raises "derivative for aten::hardsigmoid_backward is
    not implemented", as in PyTorch.
    """
    return _activation("hardsigmoid", _A.hardsigmoid_spec, input, (), inplace)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` where x > lambd, ``x + lambd`` where x < -lambd, 0 between (``SoftshrinkBackward0``).

    Raises
    ------
    RuntimeError
        A negative ``lambd`` ("lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -0.5").
    """
    _check_tensor("softshrink", "input", input)
    return apply(_A.softshrink_spec, (input, float(lambd)))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` outside ``[-lambd, lambd]``, 0 inside (``HardshrinkBackward0``)."""
    return _A.hardshrink(input, lambd)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``x <= threshold``, ``x`` elsewhere (``ThresholdBackward0``; ``ThresholdBackward1`` in place).

    Integer input is allowed (the comparison and the value follow the input's dtype), as in PyTorch.
    """
    return (_A.threshold_ if inplace else _A.threshold)(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold` (``ThresholdBackward1``)."""
    return _A.threshold_(input, threshold, value)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """CELU, ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``CeluBackward0``, ``CeluBackward1`` in place).

    Its derivative is ELU's (``EluBackwardBackward0`` when recorded).

    Raises
    ------
    RuntimeError
        ``alpha=0`` ("ZeroDivisionError: alpha cannot be 0 for CELU").
    """
    return (_A.celu_ if inplace else _A.celu)(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu` (``CeluBackward1``)."""
    return _A.celu_(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """SELU, ``scale * elu(x, alpha)`` with the self-normalising constants (alpha ≈ 1.6733, scale ≈ 1.0507).

    PyTorch computes it as ``elu(x, alpha, scale)``, so the node is ``EluBackward0`` (``EluBackward1`` in place).
    """
    return (_A.selu_ if inplace else _A.selu)(input)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu` (``EluBackward1``)."""
    return _A.selu_(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """Mish, ``x * tanh(softplus(x))`` (``MishBackward0``); its derivative is recorded as ordinary ops
    (``tanh``, ``log1p``, ``exp``, ``sigmoid``), as PyTorch's is."""
    return _activation("mish", _A.mish_spec, input, (), inplace)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """GLU: split ``input`` in two halves ``a, b`` along ``dim`` and return ``a * sigmoid(b)`` (``GluBackward0``).

    Raises
    ------
    RuntimeError
        "glu does not support scalars because halving size must be even"; "Halving dimension must be even, but
        dimension 1 is size 3".
    """
    _check_tensor("glu", "input", input)
    return apply(_A.glu_spec, (input, int(dim)))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """PReLU: ``x`` for x > 0, ``weight * x`` otherwise, with one learnable slope or one per channel (dim 1).

    ``weight`` (1-d, 1 or C elements) is viewed to broadcast over ``input`` (``ViewBackward0``) and the node is
    ``PreluKernelBackward0``, as in PyTorch 2.x.

    Raises
    ------
    RuntimeError
        "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and channel size = 4."
    """
    return _A.prelu(input, weight)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, as PyTorch composes it (``DivBackward0`` over ``AddBackward0`` and ``AbsBackward0``)."""
    _check_tensor("softsign", "input", input)
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)`` (``SubBackward0``), as PyTorch composes it."""
    _check_tensor("tanhshrink", "input", input)
    return input - input.tanh()


def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x, dim)`` (``SoftmaxBackward0`` over ``NegBackward0``); ``dim=None`` warns as :func:`softmax`."""
    _check_tensor("softmin", "input", input)
    if dim is None:
        dim = _softmax_dim("softmin", input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return (-input).softmax(dim)


__all__ += [
    "hardswish",
    "hardsigmoid",
    "softshrink",
    "hardshrink",
    "threshold",
    "threshold_",
    "celu",
    "celu_",
    "selu",
    "selu_",
    "mish",
    "glu",
    "prelu",
    "softsign",
    "tanhshrink",
    "softmin",
]


# -- issue 18: layer_norm, embedding, one_hot --------------------------------------------------------------------------
def layer_norm(
    input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5
) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims: ``(x - mean) / sqrt(var + eps) * weight + bias``
    (``NativeLayerNormBackward0``; the biased variance, as in PyTorch).

    Parameters
    ----------
    input : Tensor
        Shape ``(*, *normalized_shape)``, floating dtype.
    normalized_shape : int or sequence of int
    weight, bias : Tensor, optional
        Shape ``normalized_shape``.
    eps : float

    Returns
    -------
    Tensor
        Same shape.  Its derivative is the op ``native_layer_norm_backward``
        (``NativeLayerNormBackwardBackward0`` when recorded), so second derivatives work.

    Raises
    ------
    RuntimeError
        "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 4]"; "Expected
        weight to be of same shape as normalized_shape, but got weight of shape [3] and normalized_shape = [4]".
    """
    return _ops.layer_norm(input, normalized_shape, weight, bias, eps)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """The rows of ``weight`` at the indices ``input`` (``EmbeddingBackward0``): a lookup table.

    Parameters
    ----------
    input : Tensor
        int64 or int32 indices, any shape ``S``.
    weight : Tensor
        ``(num_embeddings, embedding_dim)``.
    padding_idx : int, optional
        That row gets no gradient (negative counts from the end).
    max_norm : float, optional
        First rescale, in place and without recording, every looked-up row whose ``norm_type``-norm exceeds
        ``max_norm`` (PyTorch's ``embedding_renorm_``; it changes ``weight``).
    scale_grad_by_freq : bool
        Divide each row's gradient by how often its index occurs in ``input``.
    sparse : bool
        leafkit has no sparse gradients: True raises NotImplementedError.

    Returns
    -------
    Tensor
        Shape ``S + (embedding_dim,)``.

    Raises
    ------
    RuntimeError
        Indices of another dtype ("Expected tensor for argument #1 'indices' to have one of the following scalar
        types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)"); a weight
        that is not 2-d ("'weight' must be 2-D").
    IndexError
        "index out of range in self".
    """
    _check_tensor("embedding", "input", input)
    _ops.check_embedding(input, weight, sparse)  # before padding_idx's checks, as leafkit has always checked
    if padding_idx is not None:
        n = weight.size(0)
        if padding_idx > 0 and padding_idx >= n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, float(max_norm), float(norm_type))
    return _ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _embedding_renorm_(weight, indices, max_norm, norm_type):
    """Rescale in place, without recording, the rows at ``indices`` whose norm exceeds ``max_norm``."""
    with no_grad():
        rows = np.unique(indices.detach().cpu().numpy().reshape(-1))
        for r in rows.tolist():
            norm = float(weight[r].norm(norm_type))
            if norm > max_norm:
                weight[r].mul_(max_norm / (norm + 1e-7))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot vectors: shape ``tensor.shape + (num_classes,)`` (``num_classes=-1``: the largest value + 1).

    Raises
    ------
    RuntimeError
        "one_hot is only applicable to index tensor of type LongTensor."; "Class values must be non-negative.";
        "Class values must be smaller than num_classes."
    """
    if not isinstance(tensor, Tensor) or tensor.dtype != _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    values = tensor.detach().cpu().numpy()
    if values.size and values.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(values.max()) + 1 if values.size else 0
    elif values.size and values.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (values[..., None] == np.arange(num_classes)).astype(np.int64)
    return _finish(out, None, tensor.device, False)


__all__ += ["layer_norm", "embedding", "one_hot"]


# -- issue 18: kl_div, pairwise_distance -------------------------------------------------------------------------------
KL_DIV_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size.'batchmean' divides only "
    "by the batch size, and aligns with the KL div math definition.'mean' will be changed to behave the same as "
    "'batchmean' in the next major release."
)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from ``input`` (log-probabilities), as PyTorch composes it:
    ``xlogy(target, target) - target * input`` pointwise (``exp(target) * (target - input)`` with
    ``log_target``), then reduced.

    ``reduction="batchmean"`` divides the sum by the batch size (the KL divergence proper); "mean" (the default)
    divides by every element and warns that it will change, as PyTorch does.

    Raises
    ------
    ValueError
        An unknown reduction ("batchsum is not a valid value for reduction").
    """
    _check_tensor("kl_div", "input", input)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(KL_DIV_MEAN_WARNING, UserWarning, stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction != "batchmean":
        return _L.kl_div(input, target, _L.reduction_enum(reduction), log_target=log_target)
    total = _L.kl_div(input, target, _L.SUM, log_target=log_target)
    return total / input.size(0) if input.dim() != 0 else total


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dimension, as PyTorch computes it (``NormBackward1`` over
    ``AddBackward1`` and ``SubBackward0``); ``p`` 1 or 2 for gradients."""
    return _D.pairwise_distance(x1, x2, p, eps, keepdim)


__all__ += ["kl_div", "pairwise_distance"]
