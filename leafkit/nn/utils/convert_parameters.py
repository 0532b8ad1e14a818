"""``parameters_to_vector`` and ``vector_to_parameters`` (``torch.nn.utils``)."""

from __future__ import annotations

from ..._functions.shape import cat
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old):
    """-1 for the CPU, the GPU's index for cuda; TypeError when parameters are on different devices."""
    dev = param.device
    here = (dev.index or 0) if dev.type == "cuda" else -1
    if old is not None and here != old:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return here


def parameters_to_vector(parameters) -> Tensor:
    """All of ``parameters`` flattened into one 1-D tensor, in order (``torch.nn.utils.parameters_to_vector``).

    The result is ``torch.cat([p.view(-1) for p in parameters])``: it is
    part of the graph (``CatBackward0`` over ``ViewBackward0`` nodes), so a
    loss of it sends gradients back to the parameters.

    Raises
    ------
    TypeError
        "Found two parameters on different devices, this is currently not supported."
    ValueError
        "torch.cat(): expected a non-empty list of Tensors" for no parameters.
    """
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (``torch.nn.utils.vector_to_parameters``).

    Each parameter's ``.data`` is replaced by the next ``p.numel()``
    elements of ``vec`` viewed in its shape, so the parameters stay leaves
    (no history is recorded) and share storage with ``vec``.  Extra elements
    of ``vec`` are ignored.

    Raises
    ------
    TypeError
        "expected torch.Tensor, but got: list"; parameters on different devices.
    RuntimeError
        "shape '[2, 3]' is invalid for input of size 5" (``vec`` too short);
        "data set to a tensor that requires gradients must be floating point
        or complex dtype" (an integer ``vec``).
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer : pointer + n].view_as(param).data
        pointer += n
