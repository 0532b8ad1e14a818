"""Collation: how a :class:`~leafkit.utils.data.DataLoader` turns a list of samples into a batch.

:func:`default_collate` follows PyTorch's rules, by the type of the first sample:

* a Tensor: ``torch.stack(batch, 0)`` (PyTorch's "stack expects each tensor to be equal size" for unequal sizes);
* a NumPy array: each becomes a tensor, then they are stacked (arrays of strings or objects raise TypeError);
  a NumPy scalar: ``torch.as_tensor(batch)``;
* a Python float: a float64 tensor; an int: an int64 tensor (bools: a bool tensor);
* a str or bytes: the list itself;
* a mapping: the same kind of mapping, each key collated;
* a namedtuple: the same namedtuple, each field collated;
* a tuple: a *list* of the collated positions (PyTorch's backward compatibility), another sequence the same
  kind of sequence ("each element in list of batch should be of equal size" when lengths differ);
* anything else: TypeError "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists;
  found <class ...>".

:func:`default_convert` (batches of ``batch_size=None``) only turns NumPy arrays and scalars into tensors.
:func:`collate` with a ``collate_fn_map`` lets a custom collate function reuse the walk for its own types.
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ...._creation import as_tensor, tensor
from ...._dtype import float64
from ...._functions import stack
from ...._tensor import Tensor

__all__ = [
    "collate",
    "default_collate",
    "default_convert",
    "default_collate_fn_map",
    "collate_tensor_fn",
    "collate_numpy_array_fn",
    "collate_numpy_scalar_fn",
    "collate_float_fn",
    "collate_int_fn",
    "collate_str_fn",
]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_convert(data):
    """NumPy arrays and scalars in ``data`` (walked through mappings, namedtuples and sequences) become tensors;
    tuples become lists; everything else is returned as it is."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples) by the type of its first sample; ``collate_fn_map`` maps a type (or
    a tuple of types) to the function for it, found by exact type first, then by ``isinstance``."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
                return clone
            return elem_type({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
        except TypeError:
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """A batch from a list of samples, with PyTorch's rules (see the module docstring).

    Examples
    --------
    >>> default_collate([(tensor([1.0, 2.0]), 0), (tensor([3.0, 4.0]), 1)])
    [tensor([[1., 2.],
            [3., 4.]]), tensor([0, 1])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
