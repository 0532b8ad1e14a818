"""``leafkit.nn``: parameters, modules, layers and losses with PyTorch's names (``torch.nn``).

The lesson the articles teach lives here: a model's weights are
:class:`Parameter` objects, leaves that require grad; ``backward()`` fills
their ``.grad``; an optimizer changes them in place under ``no_grad`` so they
stay leaves.

Layers that behave differently in training and evaluation (``Dropout``,
``BatchNorm1d``) follow ``module.training``, which ``train()`` and
``eval()`` set on a module and all its children; ``BatchNorm1d``'s running
statistics are buffers (``named_buffers()``, ``state_dict()``), not
parameters.

:mod:`leafkit.nn.init` fills parameters in place under ``no_grad``
(``kaiming_uniform_``, ``xavier_normal_`` ...), with PyTorch's fan and gain.
"""

from __future__ import annotations

from . import functional, init
from .activation import ELU, GELU, Hardtanh, LeakyReLU, LogSigmoid, ReLU6, SiLU, Softplus
from .batchnorm import BatchNorm1d
from .dropout import Dropout
from .linear import Identity, Linear, ReLU, Sequential, Sigmoid, Tanh
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .module import Module
from .parameter import Parameter
from .rnn import RNNCell

__all__ = [
    "Parameter",
    "Module",
    "Linear",
    "Sequential",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Identity",
    "Dropout",
    "BatchNorm1d",
    "RNNCell",
    "CrossEntropyLoss",
    "NLLLoss",
    "MSELoss",
    "BCEWithLogitsLoss",
    "functional",
    "GELU",
    "SiLU",
    "ELU",
    "LeakyReLU",
    "Softplus",
    "Hardtanh",
    "ReLU6",
    "LogSigmoid",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
    "init",
]

from . import modules  # noqa: E402,F401  (torch.nn.modules.module ...: PyTorch's paths to the same modules)
