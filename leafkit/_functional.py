"""Module-level functions that mirror ``torch.exp(x)``, ``torch.sum(x, dim)`` ... by calling the Tensor methods."""
from __future__ import annotations

__all__ = ["exp", "log", "sqrt", "abs", "neg", "relu", "sigmoid", "tanh", "reciprocal", "clamp", "clip", "sum",
           "mean", "max", "min", "argmax", "argmin", "softmax", "log_softmax", "add", "sub", "mul", "div", "pow", "mm",
           "reshape", "flatten", "transpose", "t", "permute", "squeeze", "unsqueeze", "clone", "detach", "equal",
           "allclose", "eq", "ne", "lt", "le", "gt", "ge"]


def _method(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: the same as ``input.{name}(...)``."
    return fn


for _name in __all__:
    globals()[_name] = _method(_name)
del _name
