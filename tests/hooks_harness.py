"""A small recorder for the hook, checkpoint and gradcheck parity tests: exact messages, normalised values.

Each scenario is a function ``scenario(torch, obs)`` run once on PyTorch and
once on leafkit; the two lists of observations must be equal.  Errors and
warnings are recorded with their class and their *whole* message (the
warnings' categories too), since these are the texts a learner reads.
"""

from __future__ import annotations

import math
import warnings


def _round(x):
    if isinstance(x, list):
        return [_round(v) for v in x]
    if isinstance(x, float):
        return "nan" if math.isnan(x) else (x if math.isinf(x) else round(x, 4))
    return x


class Obs:
    """Collects ``(label, ...)`` observations in a form both libraries produce alike."""

    def __init__(self, torch):
        self.torch = torch
        self.items = []

    def norm(self, v):
        t = self.torch
        if isinstance(v, t.Tensor):
            return ("tensor", _round(v.detach().cpu().tolist()), tuple(v.shape), str(v.dtype), v.requires_grad)
        if v is None or isinstance(v, (bool, str, int)):
            return v
        if isinstance(v, float):
            return _round(v)
        if isinstance(v, (tuple, list)):
            return (type(v).__name__, tuple(self.norm(x) for x in v))
        if isinstance(v, dict):
            return ("dict", tuple((k, self.norm(x)) for k, x in v.items()))
        if isinstance(v, t.nn.Module):
            return ("module", type(v).__name__)
        if hasattr(v, "next_functions") or type(v).__name__ == "AccumulateGrad":
            return ("node", node_name(v))
        return repr(v)

    def v(self, label, value):
        self.items.append((label, self.norm(value)))

    def err(self, label, fn):
        """Run ``fn``; record the error's class and message (or that none was raised) and its warnings."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - the class and text are the observation
                self.items.append((label, "raised", type(e).__name__, str(e)))
            else:
                self.items.append((label, "raised", None))
        self._warnings(label, caught)

    def run(self, label, fn):
        """Run ``fn``, recording its warnings (category and text); return its result."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn()
        self._warnings(label, caught)
        return out

    def _warnings(self, label, caught):
        got = [(w.category.__name__, str(w.message)) for w in caught]
        self.items.append((label, "warnings", tuple(got)))


def node_name(node):
    if node is None:
        return None
    name = node.name()
    return "AccumulateGrad" if name.endswith("AccumulateGrad") else name


def tree(fn, depth=4):
    """The names below a node, depth-limited: ``(name, (children...))``."""
    if fn is None:
        return None
    if depth == 0:
        return node_name(fn)
    return (node_name(fn), tuple(tree(n, depth - 1) for n, _ in fn.next_functions))


def compare(scenario, torch, leafkit):
    want = Obs(torch)
    scenario(torch, want)
    got = Obs(leafkit)
    scenario(leafkit, got)
    assert [o[0] for o in got.items] == [o[0] for o in want.items]
    for g, w in zip(got.items, want.items):
        assert g == w, g[0]
