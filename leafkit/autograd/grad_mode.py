"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``is_grad_enabled``.

Mirrors ``torch.autograd.grad_mode``.  The flag is thread-local: turning
gradients off in one thread leaves other threads alone.  Each mode works as a
context manager and as a decorator (a fresh context for every call, generators
included).
"""
from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


class _State(threading.local):
    enabled = True


_state = _State()


def is_grad_enabled() -> bool:
    """True when operations record a graph (PyTorch: ``torch.is_grad_enabled()``)."""
    return _state.enabled


def _set(mode: bool) -> None:
    _state.enabled = bool(mode)


class _DecoratorContextManager:
    """Base for grad modes: context manager, and decorator through ``__call__``."""

    def clone(self):
        return self.__class__()

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("Decorating classes is deprecated and will be disabled in future versions. "
                               "You should only decorate functions or methods.")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    try:
                        with self.clone():
                            response = gen.send(request)
                    except StopIteration as e:
                        return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper


class no_grad(_DecoratorContextManager):
    """Disable graph recording (PyTorch: ``torch.no_grad``).

    Results computed inside have ``requires_grad=False`` and no ``grad_fn``,
    so they are leaves.  In-place operations on leaves that require grad are
    allowed inside (that is how optimizers update weights).

    Examples
    --------
    >>> x = tensor([2.0], requires_grad=True)
    >>> with no_grad():
    ...     z = x * 2
    >>> z.requires_grad, z.grad_fn, z.is_leaf
    (False, None, True)
    """

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # used bare, as ``@no_grad``

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(False)

    def __exit__(self, *exc):
        _set(self.prev)


class enable_grad(_DecoratorContextManager):
    """Enable graph recording inside a ``no_grad`` block (PyTorch: ``torch.enable_grad``)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # used bare, as ``@enable_grad``

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(True)

    def __exit__(self, *exc):
        _set(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off (PyTorch: ``torch.set_grad_enabled``).

    Called as a function it takes effect at once; as a context manager it
    restores the previous mode on exit.

    Parameters
    ----------
    mode : bool
        True to record graphs, False not to.

    Raises
    ------
    TypeError
        When ``mode`` is not a bool.
    """

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.prev = is_grad_enabled()
        self.mode = mode
        _set(mode)

    def __call__(self, func):
        _set(self.prev)  # decorating must not change the mode now
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(self.prev)

    def clone(self):
        return self.__class__(self.mode)

    def __repr__(self) -> str:
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"
