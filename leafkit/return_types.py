"""Named tuples returned by ``max(dim)``, ``min(dim)``, ``sort``, ``topk``, ``median(dim)``, ``cummax`` and
``cummin``: ``values`` and ``indices``, as ``torch.return_types``."""

from __future__ import annotations

from collections import namedtuple

_max = namedtuple("max", ["values", "indices"])
_min = namedtuple("min", ["values", "indices"])
_sort = namedtuple("sort", ["values", "indices"])
_topk = namedtuple("topk", ["values", "indices"])
_median = namedtuple("median", ["values", "indices"])
_cummax = namedtuple("cummax", ["values", "indices"])
_cummin = namedtuple("cummin", ["values", "indices"])
for _t in (_max, _min, _sort, _topk, _median, _cummax, _cummin):
    _t.__module__ = "torch.return_types"
    _t.__repr__ = lambda self: (
        f"torch.return_types.{type(self).__name__}(\nvalues={self.values!r},\nindices={self.indices!r})"
    )


def max(pair):  # noqa: A001 - PyTorch's name
    return _max(*pair)


def min(pair):  # noqa: A001 - PyTorch's name
    return _min(*pair)


def sort(pair):
    return _sort(*pair)


def topk(pair):
    return _topk(*pair)


def median(pair):
    return _median(*pair)


def cummax(pair):
    return _cummax(*pair)


def cummin(pair):
    return _cummin(*pair)
