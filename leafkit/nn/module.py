"""``Module``: the base class of layers and models, as ``torch.nn.Module``.

A module registers what it is given as attributes: a :class:`Parameter`
goes to ``_parameters``, a sub-``Module`` to ``_modules``, a tensor given to
``register_buffer`` to ``_buffers``.  Everything else is a plain attribute.
``parameters()``, ``state_dict()``, ``to()``, ``zero_grad()`` ... walk those
registries, recursively.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict, namedtuple

from .. import _dtype
from .._functions.copy import parse_to_args
from .._tensor import Tensor
from ..autograd.anomaly_mode import _stacklevel
from ..autograd.grad_mode import no_grad
from ..utils.hooks import BackwardHook, RemovableHandle, _ModuleHookHandle
from .parameter import Parameter

__all__ = [
    "Module",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_backward_hook",
]

# Hooks common to every module (PyTorch's globals of ``torch.nn.modules.module``, meant for debugging and
# profiling): they run before the module's own hooks of the same kind.
_global_backward_pre_hooks: dict = OrderedDict()
_global_backward_hooks: dict = OrderedDict()
_global_is_full_backward_hook: bool | None = None
_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()
_global_forward_hooks_always_called: dict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = OrderedDict()

_HOOK_DICTS = (
    "_backward_pre_hooks",
    "_backward_hooks",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
)


def _init_hook_dicts(d: dict) -> None:
    """A module's hook registries, as ``torch.nn.Module.__init__`` makes them (missing ones only)."""
    for name in _HOOK_DICTS:
        if name not in d:
            d[name] = OrderedDict()
    d.setdefault("_is_full_backward_hook", None)


def _add_hook(hooks, hook, *, prepend: bool = False, flags=()) -> RemovableHandle:
    """Put ``hook`` into ``hooks`` under a new handle's id.  ``flags`` are ``(dict, on)`` pairs: each dict marks the
    hook when ``on`` (``with_kwargs``, ``always_call``), and the handle forgets the marks on ``remove()``;
    ``prepend`` puts the hook before the others."""
    handle = _ModuleHookHandle(hooks, extra_dict=[d for d, _ in flags] or None)
    hooks[handle.id] = hook
    for d, on in flags:
        if on:
            d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _backward_hook_kind(current, full: bool, scope: str) -> bool:
    """PyTorch refuses to mix regular and full backward hooks (on one module, or among the global ones): the kind
    the hooks of ``scope`` now have, or its RuntimeError."""
    if current is (not full):
        raise RuntimeError(
            f"Cannot use both regular backward hooks and full backward hooks {scope}. Please use only one of them."
        )
    return full


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """Call ``hook(module, args)`` before the ``forward`` of every module, before the module's own pre-hooks
    (``torch.nn.modules.module.register_module_forward_pre_hook``; a debugging tool: global state).

    Returns
    -------
    RemovableHandle
    """
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
    """Call ``hook(module, args, output)`` after the ``forward`` of every module, before the module's own forward
    hooks (``torch.nn.modules.module.register_module_forward_hook``).  ``with_kwargs`` and ``always_call`` as in
    :meth:`Module.register_forward_hook`.

    Returns
    -------
    RemovableHandle
    """
    flags = ((_global_forward_hooks_with_kwargs, with_kwargs), (_global_forward_hooks_always_called, always_call))
    return _add_hook(_global_forward_hooks, hook, flags=flags)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """:meth:`Module.register_full_backward_pre_hook` for every module, run before the module's own
    (``torch.nn.modules.module.register_module_full_backward_pre_hook``).

    Returns
    -------
    RemovableHandle
    """
    return _add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """:meth:`Module.register_full_backward_hook` for every module, run before the module's own
    (``torch.nn.modules.module.register_module_full_backward_hook``).

    Raises
    ------
    RuntimeError
        "Cannot use both regular backward hooks and full backward hooks as a global Module hook. Please use only
        one of them." after :func:`register_module_backward_hook`.
    """
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _backward_hook_kind(_global_is_full_backward_hook, True, "as a global Module hook")
    return _add_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook) -> RemovableHandle:
    """The legacy :meth:`Module.register_backward_hook` for every module (deprecated in PyTorch in favour of
    :func:`register_module_full_backward_hook`).

    Raises
    ------
    RuntimeError
        "Cannot use both regular backward hooks and full backward hooks as a global Module hook."
    """
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _backward_hook_kind(_global_is_full_backward_hook, False, "as a global Module hook")
    return _add_hook(_global_backward_hooks, hook)


class _WrappedHook:
    """A legacy backward hook as a node hook: called ``hook(module, grad_input, grad_output)``; holds the module
    by weak reference, as PyTorch's ``_WrappedHook`` does."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)


def _typename(value) -> str:
    if isinstance(value, Tensor):
        return value._type_string()
    t = type(value)
    mod = t.__module__
    return t.__qualname__ if mod in ("builtins", None) else f"{mod}.{t.__qualname__}"


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join((n * " ") + line if line.strip() else "" for line in lines)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns; prints ``<All keys matched successfully>`` when both lists are empty."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    __str__ = __repr__


class Module:
    """Base class for layers and models (``torch.nn.Module``).

    Subclass it, call ``super().__init__()`` first in ``__init__``, assign
    layers and :class:`Parameter` objects as attributes, and define
    ``forward``.  Calling the module calls ``forward``.

    Attributes
    ----------
    training : bool
        True after ``train()`` (the default), False after ``eval()``.

    Examples
    --------
    >>> class Net(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> [name for name, _ in Net().named_parameters()]
    ['fc.weight', 'fc.bias']
    """

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        _init_hook_dicts(d)

    # -- forward --------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        """The computation; subclasses define it and callers call the module (``model(x)``), not ``forward``.

        Raises
        ------
        NotImplementedError
            'Module [Net] is missing the required "forward" function' when a
            subclass did not define it.
        """
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if not (
            self._forward_hooks
            or self._forward_pre_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _global_forward_hooks
            or _global_forward_pre_hooks
            or _global_backward_hooks
            or _global_backward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        box = [args, kwargs, None]  # the arguments and result as the hooks left them (read again after an error)
        ran = set()  # ids of always_call forward hooks that already ran
        try:
            return self._call_with_hooks(box, ran)
        except Exception:
            self._call_always_hooks_after_error(box, ran)
            raise

    def _call_with_hooks(self, box, ran):
        """``__call__`` with hooks, in PyTorch's order: forward pre-hooks (global ones first), the backward hooks'
        wrapping of the inputs, ``forward``, forward hooks (global first), the wrapping of the outputs, and the
        legacy backward hooks on the last node of the output."""
        args, kwargs = box[0], box[1]
        pre = self._get_backward_pre_hooks() if (self._backward_pre_hooks or _global_backward_pre_hooks) else []
        if self._backward_hooks or _global_backward_hooks:
            full, legacy = self._get_backward_hooks()
        else:
            full, legacy = [], []
        for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError(
                            f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got {r}."
                        )
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
            box[0], box[1] = args, kwargs
        bw_hook = None
        if full or pre:
            bw_hook = BackwardHook(self, full, pre)
            args = box[0] = bw_hook.setup_input_hook(args)
        result = box[2] = self.forward(*args, **kwargs)
        for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                ran.add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                r = hook(self, args, kwargs, result)
            else:
                r = hook(self, args, result)
            if r is not None:
                result = box[2] = r
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a tuple of Tensors but "
                    f"received {type(result)}",
                    UserWarning,
                    stacklevel=_stacklevel(),
                )
            result = box[2] = bw_hook.setup_output_hook(result)
        if legacy:
            var = result
            while not isinstance(var, Tensor):
                var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
            grad_fn = var.grad_fn
            if grad_fn is not None:
                for hook in legacy:
                    grad_fn.register_hook(_WrappedHook(hook, self))
                self._maybe_warn_non_full_backward_hook(args, result, grad_fn)
        return result

    def _call_always_hooks_after_error(self, box, ran):
        """Run the ``always_call=True`` forward hooks that did not run before an error; their own errors become
        warnings, and the original error is raised (by the caller).  As PyTorch does, a global hook is called
        ``hook(module, args, result)`` here even when it was registered ``with_kwargs``."""
        args, kwargs = box[0], box[1]
        for hook_id, hook in list(_global_forward_hooks.items()):
            if hook_id in _global_forward_hooks_always_called and hook_id not in ran:
                try:
                    r = hook(self, args, box[2])
                    if r is not None:
                        box[2] = r
                except Exception as e:  # noqa: BLE001 - silenced into a warning, as PyTorch does
                    warnings.warn(
                        "global module forward hook with ``always_call=True`` raised an exception that was "
                        f"silenced as another error was raised in forward: {e}",
                        UserWarning,
                        stacklevel=_stacklevel(),
                    )
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called and hook_id not in ran:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        r = hook(self, args, kwargs, box[2])
                    else:
                        r = hook(self, args, box[2])
                    if r is not None:
                        box[2] = r
                except Exception as e:  # noqa: BLE001
                    warnings.warn(
                        "module forward hook with ``always_call=True`` raised an exception that was silenced as "
                        f"another error was raised in forward: {e}",
                        UserWarning,
                        stacklevel=_stacklevel(),
                    )

    # -- hooks ---------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """Call ``hook(module, args)`` before every ``forward`` (``torch.nn.Module.register_forward_pre_hook``).

        ``args`` holds the positional arguments only.  A returned value
        replaces them (a single value is wrapped in a tuple).  With
        ``with_kwargs=True`` the hook is ``hook(module, args, kwargs)`` and
        returns None or a pair ``(new_args, new_kwargs)``.  With
        ``prepend=True`` it runs before this module's other pre-hooks; global
        pre-hooks (:func:`register_module_forward_pre_hook`) always run first.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` unregisters the hook; ``with handle:`` removes it on exit.

        Raises
        ------
        RuntimeError
            At call time, "forward pre-hook must return None or a tuple of
            (new_args, new_kwargs), but got ..." from a ``with_kwargs`` hook.
        """
        flags = ((self._forward_pre_hooks_with_kwargs, with_kwargs),)
        return _add_hook(self._forward_pre_hooks, hook, prepend=prepend, flags=flags)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False, always_call=False):
        """Call ``hook(module, args, output)`` after every ``forward`` (``torch.nn.Module.register_forward_hook``).

        A returned value replaces the output.  With ``with_kwargs=True`` the
        hook is ``hook(module, args, kwargs, output)``.  With
        ``always_call=True`` it runs even when ``forward`` (or an earlier hook)
        raised; an error it raises then becomes a warning and the original
        error propagates.  ``prepend=True`` puts it before this module's other
        forward hooks; global ones (:func:`register_module_forward_hook`) run
        first.

        Returns
        -------
        RemovableHandle
        """
        flags = ((self._forward_hooks_with_kwargs, with_kwargs), (self._forward_hooks_always_called, always_call))
        return _add_hook(self._forward_hooks, hook, prepend=prepend, flags=flags)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs arrive
        (``torch.nn.Module.register_full_backward_pre_hook``).

        ``grad_output`` is a tuple with one entry per output (``None`` for a
        non-tensor output or one that got no gradient).  A returned tuple of
        the same length replaces it.  As in PyTorch, the module's forward then
        receives, and its caller gets back, the tensors as outputs of
        ``BackwardHookFunction`` (``grad_fn=<BackwardHookFunctionBackward>``), so
        changing them in place raises.

        Returns
        -------
        RemovableHandle

        Raises
        ------
        RuntimeError
            In backward, "Backward pre hook returned an invalid number of grad_output, got 2, but expected 1".
        """
        return _add_hook(self._backward_pre_hooks, hook, prepend=prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """Call ``hook(module, grad_input, grad_output)`` once the gradients with respect to the module's inputs are
        computed (``torch.nn.Module.register_full_backward_hook``).

        ``grad_input`` has one entry per positional argument (``None`` for
        non-tensors; keyword arguments are not included), ``grad_output`` one
        per output.  A returned tuple of the same length replaces
        ``grad_input``.  When no input requires grad the hook fires as soon as
        the outputs' gradients arrive, with ``grad_input`` all ``None`` and
        PyTorch's "Full backward hook is firing when gradients are computed
        with respect to module outputs since no inputs require gradients"
        warning.  Inputs and outputs pass through ``BackwardHookFunction``
        (see :meth:`register_full_backward_pre_hook`): an in-place change of
        them (``nn.ReLU(inplace=True)`` right after the module) raises
        "Output 0 of BackwardHookFunction is a view and is being modified
        inplace".

        Returns
        -------
        RemovableHandle

        Raises
        ------
        RuntimeError
            "Cannot use both regular backward hooks and full backward hooks on
            a single Module. Please use only one of them." after
            :meth:`register_backward_hook`; in backward, "Backward hook
            returned an invalid number of grad_input, got 1, but expected 2".
        """
        self._is_full_backward_hook = _backward_hook_kind(self._is_full_backward_hook, True, "on a single Module")
        return _add_hook(self._backward_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook):
        """The legacy module backward hook (``torch.nn.Module.register_backward_hook``, deprecated).

        The hook is attached to the ``grad_fn`` of the module's (first)
        output, the last operation of ``forward``, and called
        ``hook(module, grad_input, grad_output)`` with *that node's*
        gradients: for ``Linear`` those of ``AddmmBackward0`` (bias, input,
        transposed weight), not the module's.  When the forward has more than
        one node, PyTorch's FutureWarning says so at each call ("Using a
        non-full backward hook when the forward contains multiple autograd
        Nodes is deprecated ...").  Prefer :meth:`register_full_backward_hook`.

        Raises
        ------
        RuntimeError
            "Cannot use both regular backward hooks and full backward hooks on a single Module."
        """
        self._is_full_backward_hook = _backward_hook_kind(self._is_full_backward_hook, False, "on a single Module")
        return _add_hook(self._backward_hooks, hook)

    def _get_backward_hooks(self):
        """The full and the legacy backward hooks that apply to this module (global ones first)."""
        full, legacy = [], []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        elif _global_is_full_backward_hook is False:
            legacy += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            legacy += self._backward_hooks.values()
        return full, legacy

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn) -> None:
        """PyTorch's FutureWarnings for a legacy backward hook that will not see the module's whole gradients."""

        def warn(msg):
            warnings.warn(msg, FutureWarning, stacklevel=_stacklevel())

        if isinstance(result, Tensor):
            result = (result,)
        elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            return warn(
                "Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                "Tensors is deprecated and will be removed in future versions. This hook will be missing some of "
                "the grad_output. Please use register_full_backward_hook to get the documented behavior."
            )
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            return warn(
                "Using non-full backward hooks on a Module that does not take as input a single Tensor or a tuple "
                "of Tensors is deprecated and will be removed in future versions. This hook will be missing some "
                "of the grad_input. Please use register_full_backward_hook to get the documented behavior."
            )
        out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
            warn(
                "Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                "and will be removed in future versions. This hook will be missing some grad_output."
            )
        elif len(out_fns) > 1:
            warn(
                "Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
                "Please use register_full_backward_hook to get the documented behavior."
            )
        elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n for n, _ in grad_fn.next_functions}:
            warn(
                "Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
                "and will be removed in future versions. This hook will be missing some grad_input. Please use "
                "register_full_backward_hook to get the documented behavior."
            )

    # -- registration ------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` as ``name`` (``None`` keeps the name with no parameter).

        Raises
        ------
        AttributeError
            Before ``Module.__init__()`` ran.
        KeyError
            When ``name`` is an attribute already, or contains ``"."``.
        TypeError
            When ``param`` is neither a Parameter nor None.
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' (torch.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                "explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (kept in ``state_dict`` when ``persistent``)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as the child ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                self._remove_from(name, d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(torch.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)"
                        )
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name, *containers) -> None:
        for c in containers:
            if name in c:
                if isinstance(c, dict):
                    del c[name]
                else:
                    c.discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            r = d.get(registry)
            if r is not None and name in r:
                return r[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            r = self.__dict__.get(registry)
            if r is not None and name in r:
                del r[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__()) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # -- iteration ---------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Yield ``(name, module)`` for this module and every descendant, depth first (this one is ``""``)."""
        if memo is None:
            memo = set()
        if self in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        """This module and every descendant (each once)."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """Yield ``(name, module)`` for the direct children."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        """The direct children."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        memo = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, v in getattr(mod, registry).items():
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + name, v

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield ``(name, parameter)``, e.g. ``("0.weight", Parameter)``; a shared parameter comes once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """Every parameter of this module and its descendants, each once: what an optimizer is given."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield ``(name, buffer)`` for the tensors registered with :meth:`register_buffer`."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        """The tensors registered with :meth:`register_buffer` (state that is not learned)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The descendant named by a dotted path (``"0"``, ``"encoder.fc"``); ``""`` is this module.

        Raises
        ------
        AttributeError
            "Sequential has no attribute `7`" for a missing name.
        """
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter named by a dotted path (``"0.weight"``), as ``named_parameters`` names it."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        return mod._parameters[name]

    # -- modes -------------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set ``training`` on this module and every descendant; returns ``self``.

        Raises
        ------
        ValueError
            "training mode is expected to be boolean".
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (freeze with False); returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the ``.grad`` of every parameter: to None (default), or to zeros in place."""
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p._grad = None
                else:
                    g = p._grad
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ``OrderedDict`` from names (``"0.weight"``) to tensors: parameters, then persistent buffers.

        The values share storage with the parameters but are detached
        (``requires_grad=False``) unless ``keep_vars=True``.
        """
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values from ``state_dict`` into the parameters and buffers, in place (under ``no_grad``).

        Parameters are kept (same objects, still leaves); values may come
        from another device or a NumPy-backed tensor of another dtype.

        Returns
        -------
        _IncompatibleKeys
            ``missing_keys`` and ``unexpected_keys`` (both empty when all matched).

        Raises
        ------
        RuntimeError
            "Error(s) in loading state_dict for Net: ..." listing size
            mismatches, and, when ``strict``, missing and unexpected keys.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        if assign:
            raise NotImplementedError("leafkit's load_state_dict does not implement assign=True")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict:  # PyTorch lists missing keys, then unexpected keys, then size mismatches
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        for k, target in own.items():
            if k not in state_dict:
                continue
            src = state_dict[k]
            if not isinstance(src, Tensor):
                errors.append(
                    f'While copying the parameter named "{k}", expected torch.Tensor or Tensor-like '
                    f"object from checkpoint but received {type(src)}"
                )
                continue
            if src.shape != target.shape:
                errors.append(
                    f"size mismatch for {k}: copying a param with shape {src.shape} from checkpoint, the "
                    f"shape in current model is {target.shape}."
                )
                continue
            with no_grad():
                target.copy_(src)
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # -- devices and dtypes ---------------------------------------------------------------------
    def _apply(self, fn) -> Module:
        """Apply ``fn`` to every parameter (keeping the Parameter objects), gradient, and buffer."""
        for m in self.children():
            m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            if new is not p:
                p._data = new._data
                p._device = new._device
            g = p._grad
            if g is not None:
                with no_grad():
                    new_g = fn(g)
                if new_g is not g:
                    g._data = new_g._data
                    g._device = new_g._device
        for name, b in self._buffers.items():
            if b is not None:
                with no_grad():
                    self._buffers[name] = fn(b)
        return self

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every descendant, then on this module (e.g. custom initialisation)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers in place; returns ``self``.

        ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``.
        Parameters stay the same objects (and leaves): their storage is
        replaced, as ``param.data = param.to(...)`` does, so an optimizer
        built before the move still holds them.  Only floating tensors are
        cast to a new dtype.

        Raises
        ------
        AssertionError
            "Torch not compiled with CUDA enabled" for ``cuda`` when it is
            unavailable (``LEAFKIT_SIMULATE_CUDA=0`` and no GPU).
        """

        dtype, dev, _ = parse_to_args(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )

        def convert(t):
            if dtype is not None and t.is_floating_point():
                return t.to(dev, dtype) if dev is not None else t.to(dtype)
            return t.to(dev) if dev is not None else t

        return self._apply(convert)

    def cuda(self, device=None) -> Module:
        """Move every parameter and buffer to ``cuda`` (see :meth:`to`)."""
        return self.to("cuda" if device is None else device if not isinstance(device, int) else f"cuda:{device}")

    def cpu(self) -> Module:
        """Move every parameter and buffer to the cpu (see :meth:`to`)."""
        return self.to("cpu")

    def float(self) -> Module:
        """Cast floating parameters and buffers to float32, in place (see :meth:`to`)."""
        return self.to(_dtype.float32)

    def double(self) -> Module:
        """Cast floating parameters and buffers to float64, in place (see :meth:`to`)."""
        return self.to(_dtype.float64)

    def half(self) -> Module:
        """Cast floating parameters and buffers to float16, in place (see :meth:`to`)."""
        return self.to(_dtype.float16)

    # -- printing ---------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of ``repr`` (override in layers, e.g. ``in_features=64, ...``)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        _init_hook_dicts(self.__dict__)  # a module pickled before the hooks existed
