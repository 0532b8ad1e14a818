"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Mirrors ``torch.autograd.grad_mode``.  The flags are thread-local: turning
gradients off in one thread leaves other threads alone.  Each mode works as a
context manager and as a decorator (a fresh context for every call, generators
included).

``inference_mode`` is ``no_grad`` made stricter: tensors created inside are
*inference tensors* (``is_inference()``), which track no version counter,
may never be saved for backward, and may not be changed in place outside
the mode.  ``no_grad`` results, by contrast, are ordinary tensors that can
join a graph later.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
]


class _State(threading.local):
    grad = True  # grad mode, as is_grad_enabled() reports it
    inference = False  # inference mode
    enabled = True  # whether ops record a graph: grad mode on and inference mode off (what the ops read)
    checkpoint_valid = True  # False while a backward pass with inputs runs (autograd.grad, backward(inputs=...))


_state = _State()


def is_grad_enabled() -> bool:
    """Grad mode (PyTorch: ``torch.is_grad_enabled()``).  Operations record a graph when it is on, except inside
    ``inference_mode``, where ``enable_grad()`` turns grad mode on without recording, as in PyTorch."""
    return _state.grad


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (PyTorch: ``torch.is_inference_mode_enabled()``)."""
    return _state.inference


def _set(mode: bool) -> None:
    _state.grad = mode = bool(mode)
    _state.enabled = mode and not _state.inference


class _DecoratorContextManager:
    """Base for grad modes: context manager, and decorator through ``__call__``."""

    def clone(self):
        return self.__class__()

    def __call__(self, orig_func):
        if inspect.isclass(orig_func):
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You should only decorate "
                "functions or methods. To preserve the current behavior of class decoration, you can directly "
                "decorate the `__init__` method and nothing else.",
                FutureWarning,
                stacklevel=2,
            )

            def func(*args, **kwargs):
                return orig_func(*args, **kwargs)

        else:
            func = orig_func
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper


def _wrap_generator(mode, func):
    """A decorated generator function: each time control passes into the generator (``next``/``send``,
    ``throw``, ``close``) it runs inside a fresh ``mode()``, and the caller's mode is back whenever the
    generator yields, as PyTorch's wrapper does."""

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with mode():
                        gen.close()
                    raise
                except BaseException as exc:  # thrown in by the caller: the generator sees it inside the mode
                    with mode():
                        response = gen.throw(exc)
                else:
                    with mode():
                        response = gen.send(request)
        except StopIteration as e:  # the generator finished: return its value
            return e.value

    return generator_context


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


class inference_mode(_DecoratorContextManager):
    """Disable recording, and mark what is computed inside as inference tensors (``torch.inference_mode``).

    Parameters
    ----------
    mode : bool
        ``True`` (default) turns the mode on and grad mode off;
        ``inference_mode(False)`` turns it off *and grad mode on*, as in
        PyTorch, for a block inside an inference region that must record.

    Notes
    -----
    Inside the mode, ``is_grad_enabled()`` is False and every new tensor is
    an inference tensor (``t.is_inference()``), except views of ordinary
    tensors.  Outside it, an inference tensor raises PyTorch's errors when
    saved for backward ("Inference tensors cannot be saved for backward"),
    changed in place ("Inplace update to inference tensor outside
    InferenceMode is not allowed"), set to require grad, or asked for its
    ``_version``.  Used bare (``@inference_mode``) it decorates a function.

    Examples
    --------
    >>> x = tensor([1.0], requires_grad=True)
    >>> with inference_mode():
    ...     y = x * 2
    >>> y.requires_grad, y.is_inference()
    (False, True)
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used bare, as ``@inference_mode``

    def __init__(self, mode: bool = True):
        self.mode = mode

    def __enter__(self):
        self.prev = (_state.grad, _state.enabled, _state.inference)
        _state.grad = _state.enabled = not self.mode
        _state.inference = bool(self.mode)

    def __exit__(self, *exc):
        _state.grad, _state.enabled, _state.inference = self.prev

    def clone(self):
        return self.__class__(self.mode)
