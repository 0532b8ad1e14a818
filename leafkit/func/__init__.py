"""``leafkit.func``: PyTorch's function transforms (``torch.func``) on leafkit's engine.

* :func:`vmap`: a function of one sample run on a batch at once, with batching
  rules for the op registry's families (:mod:`leafkit._functions._batched`);
* :func:`grad`, :func:`grad_and_value`, :func:`vjp`, :func:`jvp`,
  :func:`linearize`, :func:`jacrev`, :func:`jacfwd`, :func:`hessian`: derivatives
  as functions, composable to any depth (``jacrev(jacrev(f))``,
  ``vmap(grad(f))``, ``grad(grad(f))``);
* :func:`functional_call` and :func:`stack_module_state`: a module as a function
  of its parameters, for per-sample gradients and model ensembling.

``import leafkit as torch`` makes ``torch.func`` this module (and
``from torch.func import grad`` finds it).  Signatures, results, errors and
warnings are PyTorch 2.13's.
"""

from __future__ import annotations

from ._functional_call import functional_call, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._vmap import vmap

__all__ = [
    "vmap",
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "linearize",
    "jacrev",
    "jacfwd",
    "hessian",
    "functional_call",
    "stack_module_state",
]
