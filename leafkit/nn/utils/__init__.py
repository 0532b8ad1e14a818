"""``leafkit.nn.utils``: gradient clipping and parameter vectors, as ``torch.nn.utils``.

* :func:`clip_grad_norm_` scales every gradient by one factor so that their
  total norm is at most ``max_norm``, and returns the total norm measured
  before (a 0-d tensor); :func:`get_total_norm` and
  :func:`clip_grads_with_norm_` are its two steps.
* :func:`clip_grad_value_` clamps every gradient element to
  ``[-clip_value, clip_value]``.
* :func:`parameters_to_vector` and :func:`vector_to_parameters` turn a
  model's parameters into one flat vector and back.

Everything changes ``.grad`` (or ``.data``) in place under ``no_grad``, so
the parameters stay leaves and nothing is recorded.
"""

from __future__ import annotations

from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_norm",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
]
