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

The convolutional layers (``Conv1d``, ``Conv2d``, ``ConvTranspose1d/2d``,
``MaxPool1d/2d``, ``AvgPool1d/2d``, ``AdaptiveAvgPool1d/2d``, ``Flatten``,
``Unflatten``, ``Dropout1d/2d``) run on leafkit's own convolution and
pooling ops; :mod:`leafkit.nn.utils` has ``clip_grad_norm_`` and the
parameter-vector helpers.
"""

from __future__ import annotations

from . import functional, init, parallel, utils
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU6,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import Dropout, Dropout1d, Dropout2d
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear, ReLU, Sequential, Sigmoid, Tanh
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .normalization import LayerNorm
from .parallel import DataParallel
from .parameter import Parameter
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .rnn import RNNCell
from .sparse import Embedding

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
    "Conv1d",
    "Conv2d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "Flatten",
    "Unflatten",
    "Dropout1d",
    "Dropout2d",
    "utils",
    "DataParallel",
    "parallel",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "Embedding",
    "LayerNorm",
    "BatchNorm2d",
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "Softsign",
    "Tanhshrink",
    "SELU",
    "CELU",
    "Mish",
    "Hardswish",
    "Hardsigmoid",
    "GLU",
    "Softshrink",
    "Hardshrink",
    "Threshold",
    "PReLU",
    "KLDivLoss",
    "CosineSimilarity",
    "PairwiseDistance",
]

from . import modules  # noqa: E402,F401  (torch.nn.modules.module ...: PyTorch's paths to the same modules)
