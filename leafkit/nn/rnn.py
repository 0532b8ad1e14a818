"""``RNNCell``: one step of an Elman recurrent network, ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""

from __future__ import annotations

import math

from .._creation import empty, zeros
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["RNNCell"]


def _check_cell_input(input: Tensor, input_size: int) -> None:
    if input.shape[1] != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {input_size}")


def _check_cell_hidden(input: Tensor, hx: Tensor, hidden_size: int) -> None:
    if input.shape[0] != hx.shape[0]:
        raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden0 batch size {hx.shape[0]}")
    if hx.shape[1] != hidden_size:
        raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {hx.shape[1]}, expected {hidden_size}")


def _rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, activation):
    """ATen's ``rnn_tanh_cell``/``rnn_relu_cell``: ``act(linear(hx, w_hh, b_hh).add_(linear(input, w_ih, b_ih)))``.

    The in-place ``add_`` on the hidden-to-hidden product is what gives
    PyTorch's graph: ``TanhBackward0`` over ``AddBackward0`` over two
    ``AddmmBackward0`` (hidden first, then input).
    """
    _check_cell_input(input, w_ih.shape[1])
    _check_cell_hidden(input, hx, w_hh.shape[1])
    return activation(F.linear(hx, w_hh, b_hh).add_(F.linear(input, w_ih, b_ih)))


class RNNCell(Module):
    """One step of an Elman RNN (``torch.nn.RNNCell``)::

        h' = tanh(input @ weight_ih.T + bias_ih + hx @ weight_hh.T + bias_hh)

    (``relu`` instead of ``tanh`` with ``nonlinearity="relu"``).  Unroll it
    over a sequence by feeding each step's ``h'`` back as the next ``hx``;
    the graph then runs through every step, which is why truncated
    backpropagation through time calls ``h = h.detach()`` between chunks.

    Parameters
    ----------
    input_size : int
        Features per input sample.
    hidden_size : int
        Features of the hidden state.
    bias : bool
        Learn ``bias_ih`` and ``bias_hh`` (default True).
    nonlinearity : {"tanh", "relu"}
        Checked in ``forward``, as in PyTorch.
    device, dtype
        Where the parameters live, and their dtype (default float32).

    Attributes
    ----------
    weight_ih : Parameter
        ``(hidden_size, input_size)``.
    weight_hh : Parameter
        ``(hidden_size, hidden_size)``.
    bias_ih, bias_hh : Parameter or None
        ``(hidden_size,)``.

    Notes
    -----
    PyTorch's initialisation: every parameter uniform in
    ``[-1/sqrt(hidden_size), 1/sqrt(hidden_size)]``, drawn in the order
    above from leafkit's generator (so the numbers are not PyTorch's).

    Shapes: ``input`` ``(N, input_size)`` or ``(input_size,)``; ``hx``
    ``(N, hidden_size)`` or ``(hidden_size,)`` (zeros when omitted); the
    result ``(N, hidden_size)`` or ``(hidden_size,)``.  The graph is
    PyTorch's: ``TanhBackward0`` (``ReluBackward0``) over ``AddBackward0``
    over two ``AddmmBackward0`` (``MmBackward0`` without bias), and
    ``SqueezeBackward1`` on top for unbatched input.

    Raises
    ------
    ValueError
        "RNNCell: Expected input to be 1D or 2D, got 3D instead" (also for
        ``hidden``).
    RuntimeError
        "input has inconsistent input_size: got 5 expected 3"; "Input batch
        size 2 doesn't match hidden0 batch size 3"; "hidden0 has
        inconsistent hidden_size: got 5, expected 4"; "Unknown nonlinearity:
        sigmoid".
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh", device=None, dtype=None
    ):
        super().__init__()

        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty(hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.nonlinearity = nonlinearity
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter uniform in ``±1/sqrt(hidden_size)`` (PyTorch's default), in place under ``no_grad``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        with no_grad():
            for w in self.parameters():
                w.uniform_(-stdv, stdv)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state from ``input`` and ``hx`` (see the class for shapes and graph)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity == "tanh":
            activation = F.tanh
        elif self.nonlinearity == "relu":
            activation = F.relu
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = _rnn_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, activation)
        return ret.squeeze(0) if not is_batched else ret

    def extra_repr(self) -> str:
        """``3, 4`` (and ``bias=False``, ``nonlinearity=relu`` when not the defaults), as PyTorch prints it."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s
