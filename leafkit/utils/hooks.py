"""``RemovableHandle`` and the machinery of ``nn.Module``'s full backward hooks (``torch.utils.hooks``).

A full backward hook needs two gradients that autograd never sees together:
the gradient with respect to the module's *outputs* and the one with respect
to its *inputs*.  As in PyTorch, the module's call wraps both ends of its
forward in :class:`BackwardHookFunction`, an identity ``Function`` (its node
is ``BackwardHookFunctionBackward``):

1. the tensors given to the module pass through it before ``forward`` runs;
2. the tensors ``forward`` returns pass through it again.

When backward reaches the outputs' node, :class:`BackwardHook` records the
gradients that arrived (``grad_output``) and runs the backward pre-hooks,
which may replace them.  When the inputs' node has run, it calls the full
backward hooks with ``grad_input`` and the recorded ``grad_output``; a hook may
return a new ``grad_input``.  Since the module's callers receive outputs of a
custom ``Function`` (returned as they were given), changing them in place
raises PyTorch's "Output 0 of BackwardHookFunction is a view and is being
modified inplace" error.
"""

from __future__ import annotations

import warnings
import weakref

from .._tensor import Tensor
from ..autograd.anomaly_mode import _stacklevel
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle", "BackwardHook", "BackwardHookFunction"]

NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs since no inputs "
    "require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
    "#torch.nn.Module.register_full_backward_hook for more details."
)


class _ModuleHookHandle(RemovableHandle):
    """A handle whose ``remove()`` also forgets the hook's flags (``with_kwargs``, ``always_call``).

    PyTorch's ``RemovableHandle(hooks_dict, extra_dict=...)``: the flags live in
    dicts beside the hooks, keyed by the same id.
    """

    def __init__(self, hooks_dict, *, extra_dict=None):
        super().__init__(hooks_dict)
        if extra_dict is None:
            extra = ()
        elif isinstance(extra_dict, (list, tuple)):
            extra = tuple(extra_dict)
        else:
            extra = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self) -> None:
        super().remove()
        for ref in self.extra_dict_ref:
            d = ref()
            if d is not None:
                d.pop(self.id, None)


# printed as PyTorch prints every hook handle; ``isinstance(h, RemovableHandle)`` holds for tensor and node hooks too
_ModuleHookHandle.__name__ = _ModuleHookHandle.__qualname__ = "RemovableHandle"


class BackwardHookFunction(Function):
    """The identity on a module's tensors, so that their gradients pass through one node that hooks can watch.

    Tensors that do not require grad are marked non-differentiable (their
    outputs keep no ``grad_fn``).  The node is ``BackwardHookFunctionBackward``.
    """

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """One module call's full backward hooks: wires the hooks to the nodes of that call's inputs and outputs.

    Parameters
    ----------
    module : Module
        The module whose call this is; hooks receive it first.
    user_hooks : list
        ``hook(module, grad_input, grad_output)`` (global ones first).
    user_pre_hooks : list
        ``hook(module, grad_output)`` (global ones first).
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = -1
        self.input_tensors_index = None
        self.n_outputs = -1
        self.output_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for i, v in zip(indices, values):
            res[i] = v
        return tuple(res)

    def _wrap(self, args):
        """Pass the tensors of ``args`` through :class:`BackwardHookFunction`; returns the new args, the tensors'
        positions (None when none requires grad or grad mode is off) and the node."""
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (any(args[i].requires_grad for i in index) and is_grad_enabled()):
            return args, None, None
        new = BackwardHookFunction.apply(*[args[i] for i in index])
        node = next(t.grad_fn for t in new if t.grad_fn is not None)
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), index, node

    def setup_input_hook(self, args):
        """Wrap the module's positional tensors; the full backward hooks run once their node has run."""
        args, index, node = self._wrap(args)
        self.n_inputs = len(args)
        self.input_tensors_index = index
        if node is not None:
            node.register_hook(self._on_inputs)
        return args

    def setup_output_hook(self, result):
        """Wrap the tensors ``forward`` returned; the backward pre-hooks run when their gradients arrive."""
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        outs, index, node = self._wrap(outs)
        self.n_outputs = len(outs)
        self.output_tensors_index = index
        if node is not None:
            node.register_prehook(self._on_outputs)
        return outs[0] if single else outs

    def _on_outputs(self, grad_outputs):
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_outputs, self.n_outputs)
        if self.user_pre_hooks:
            expected = len(self.grad_outputs)
            for hook in self.user_pre_hooks:
                new = hook(self.module, self.grad_outputs)
                if new is None:
                    continue
                if len(new) != expected:
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, "
                        f"got {len(new)}, but expected {expected}"
                    )
                self.grad_outputs = new
        current = self.grad_outputs
        if self.input_tensors_index is None:  # no input requires grad: the hooks fire now, with grad_input all None
            warnings.warn(NO_INPUT_GRAD_WARNING, UserWarning, stacklevel=_stacklevel())
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                r = hook(self.module, grad_inputs, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(x is None for x in r)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should always return None "
                        "or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(current[i] for i in self.output_tensors_index)

    def _on_inputs(self, grad_inputs, _grad_outputs):
        if self.grad_outputs is None:  # the gradient reached the inputs without passing the outputs (double backward)
            return None
        res = self._pack_with_none(self.input_tensors_index, grad_inputs, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(out)}, but expected {len(res)}"
                )
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not saved with the tensor (``torch.utils.hooks.unserializable_hook``)."""
    f.__torch_unserializable__ = True
    return f
