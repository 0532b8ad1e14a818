"""``torch.nn.modules``: the module paths PyTorch code reaches into, such as
``torch.nn.modules.module.register_module_forward_hook``.

leafkit keeps its layers one level up, in ``leafkit.nn``; this package names
those same module objects under PyTorch's paths (``leafkit.nn.modules.module
is leafkit.nn.module``), so ``import leafkit.nn.modules.module`` and
attribute access through ``torch.nn.modules`` both work.
"""

from __future__ import annotations

import sys

from .. import __all__ as _nn_all
from .. import __dict__ as _nn_dict
from .. import activation, batchnorm, dropout, linear, loss, module, rnn
from ..module import Module  # noqa: F401

for _m in (module, linear, activation, batchnorm, dropout, loss, rnn):
    sys.modules[f"{__name__}.{_m.__name__.rsplit('.', 1)[1]}"] = _m
# the layer classes, as torch.nn.modules.Linear ...
globals().update({k: _nn_dict[k] for k in _nn_all if k not in ("functional", "init") and k in _nn_dict})
del _m
