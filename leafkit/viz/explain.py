"""``explain``: a plain-English answer to "why is my ``.grad`` None?" (or why it is set)."""
from __future__ import annotations

import html

from . import _inspect as I

__all__ = ["explain", "Explanation", "REASONS"]

#: The answers ``explain`` can give, by ``Explanation.reason``.
REASONS = (
    "non_leaf",            # made by an op: backward passes its gradient on, call retain_grad()
    "non_leaf_retained",   # a non-leaf that retains grad, .grad filled by backward
    "non_leaf_retain_pending",  # retain_grad() called, backward not called yet
    "to_copy",             # made by .to()/.cuda() from a tensor requiring grad: grad goes to the original
    "no_grad_mode",        # created under torch.no_grad() from tensors requiring grad (leafkit knows)
    "no_requires_grad",    # a tensor that does not require grad
    "no_backward_yet",     # a leaf requiring grad, .grad still None
    "has_grad",            # a leaf whose .grad was filled by backward
)

_TITLES = {
    "non_leaf": "not a leaf: .grad stays None",
    "non_leaf_retained": "non-leaf with retain_grad(): .grad is set",
    "non_leaf_retain_pending": "retain_grad() is on; backward not called yet",
    "to_copy": "a copy made by .to()/.cuda(): not a leaf",
    "no_grad_mode": "created under no_grad: not tracked",
    "no_requires_grad": "does not require grad",
    "no_backward_yet": "leaf waiting for backward()",
    "has_grad": "leaf with a gradient",
}
_OK = {"non_leaf_retained", "has_grad"}


class Explanation:
    """What :func:`explain` returns.

    Attributes
    ----------
    text : str
        One to three plain-English sentences.
    reason : str
        A key from :data:`REASONS` (stable, for widgets and tests).
    fix : str or None
        A line of code that changes the outcome, when there is one.
    name : str
        The name used in the sentences.
    """

    def __init__(self, text: str, reason: str, fix, name: str, facts: dict):
        self.text = text
        self.reason = reason
        self.fix = fix
        self.name = name
        self.facts = facts

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        ok = self.reason in _OK
        accent = "#2e7d32" if ok else "#c62828"
        chips = "".join(
            f'<span style="display:inline-block;margin:0 6px 4px 0;padding:1px 7px;border-radius:9px;'
            f'background:#eef2f7;font-family:monospace;font-size:12px">{html.escape(k)}={html.escape(str(v))}</span>'
            for k, v in self.facts.items())
        fix = (f'<div style="margin-top:6px"><span style="color:#555">Try:</span> '
               f'<code style="background:#f5f5f5;padding:1px 5px">{html.escape(self.fix)}</code></div>'
               if self.fix else "")
        return (f'<div class="leafkit-explain" style="border-left:4px solid {accent};padding:6px 10px;'
                f'margin:4px 0;font-family:sans-serif;font-size:14px;line-height:1.4">'
                f'<div style="font-weight:bold;color:{accent};margin-bottom:4px">'
                f'{html.escape(self.name)}: {html.escape(_TITLES[self.reason])}</div>'
                f'<div style="margin-bottom:4px">{chips}</div>'
                f'<div>{html.escape(self.text)}</div>{fix}</div>')


def explain(tensor, name: str | None = None) -> Explanation:
    """Explain in plain English why ``tensor.grad`` is None, or why it is set.

    The answer follows PyTorch's rules for ``.grad``: only leaves that
    require grad get it from ``backward()``, plus non-leaves that called
    ``retain_grad()``.  Possible answers (``Explanation.reason``):

    - ``"non_leaf"``: the tensor was made by an op (it has a ``grad_fn``), so
      ``backward()`` passes its gradient on without storing it; call
      ``retain_grad()`` before ``backward()``.
    - ``"to_copy"``: it was made by ``.to()``/``.cuda()`` from a tensor that
      requires grad (``grad_fn`` is ``ToCopyBackward0``), so it is a non-leaf
      copy and the gradient goes to the original.
    - ``"no_grad_mode"``: it was created under ``no_grad()`` from tensors that
      require grad.  Only leafkit records this (``_created_in_no_grad``); a
      torch tensor made that way reads as ``"no_requires_grad"``.
    - ``"no_requires_grad"``: it does not require grad (a plain tensor, a
      ``.detach()`` result, or a result computed under ``no_grad``: autograd
      cannot tell these apart afterwards).
    - ``"no_backward_yet"``: a leaf requiring grad whose ``.grad`` is still
      None: ``backward()`` has not reached it yet.
    - ``"has_grad"``, ``"non_leaf_retained"``, ``"non_leaf_retain_pending"``:
      why ``.grad`` is (or will be) set.

    ``.grad`` is read only where PyTorch does not warn (leaves, and tensors
    that retain grad), so ``explain`` never triggers the non-leaf warning.

    Parameters
    ----------
    tensor : Tensor
        A torch or leafkit tensor.
    name : str, optional
        The variable name to use in the sentences (default ``"this tensor"``).

    Returns
    -------
    Explanation
        ``.text`` (1-3 sentences), ``.reason``, ``.fix`` and an HTML view
        (``_repr_html_``) for notebooks and widgets.

    Raises
    ------
    TypeError
        If ``tensor`` is not a tensor.
    """
    if not I.is_tensor(tensor):
        raise TypeError(f"explain() expects a tensor, got {type(tensor).__name__}")
    nm = name or "this tensor"
    code = name or "t"
    fn = tensor.grad_fn
    is_leaf = bool(tensor.is_leaf)
    rg = bool(tensor.requires_grad)
    retains = I.retains_grad(tensor)
    grad = I.safe_grad(tensor)
    fn_name = I.node_name(fn) if fn is not None else None
    facts = {"is_leaf": is_leaf, "requires_grad": rg, "grad_fn": fn_name}
    if retains and not is_leaf:
        facts["retains_grad"] = True
    facts["grad"] = "None" if grad is None else I.format_values(grad)
    fix = None

    if not is_leaf:
        if retains:
            if grad is not None:
                reason = "non_leaf_retained"
                text = (f"{nm} is not a leaf (it was made by {fn_name}), but retain_grad() was called on it, "
                        f"so backward() stored its gradient in .grad. Retained gradients accumulate over "
                        f"backward calls like a leaf's.")
            else:
                reason = "non_leaf_retain_pending"
                text = (f"{nm} is not a leaf (it was made by {fn_name}); retain_grad() was called, so .grad "
                        f"will be filled once backward() runs through it. It is None until then.")
                fix = "out.backward()"
        elif fn_name is not None and fn_name.startswith("ToCopyBackward"):
            reason = "to_copy"
            text = (f"{nm} is a copy made by .to()/.cuda() from a tensor that requires grad, so it is not a "
                    f"leaf (grad_fn={fn_name}) and its .grad stays None: backward() sends the gradient on to "
                    f"the original tensor's .grad. Create the tensor on the target device with "
                    f"requires_grad=True instead, or call {code}.retain_grad().")
            fix = "torch.randn(3, device='cuda', requires_grad=True)"
        else:
            reason = "non_leaf"
            text = (f"{nm} is not a leaf: it was computed by an operation (grad_fn={fn_name}), and backward() "
                    f"passes a non-leaf's gradient on to the leaves without storing it, so its .grad stays None. "
                    f"Call {code}.retain_grad() before backward() to keep it.")
            fix = f"{code}.retain_grad()"
    elif not rg:
        if getattr(tensor, "_created_in_no_grad", False):
            reason = "no_grad_mode"
            text = (f"{nm} was created inside torch.no_grad() from tensors that require grad, so autograd did "
                    f"not record the operation: it has no grad_fn, does not require grad, and its .grad stays "
                    f"None. Compute it outside the no_grad block to track it.")
        else:
            reason = "no_requires_grad"
            text = (f"{nm} does not require grad, so autograd never computes a gradient for it and its .grad "
                    f"is None. If you want one, call {code}.requires_grad_() (or create it with "
                    f"requires_grad=True) before using it; a .detach() result or anything computed under "
                    f"no_grad() looks the same.")
            fix = f"{code}.requires_grad_()"
        if grad is not None:
            text += " (Its .grad holds a gradient from before requires_grad was turned off.)"
    elif grad is None:
        reason = "no_backward_yet"
        text = (f"{nm} is a leaf that requires grad, so backward() will store its gradient in .grad, but that "
                f"has not happened yet. Call backward() on a result computed from {nm}; if you already did, "
                f"{nm} was not used to compute that result.")
        fix = "loss.backward()"
    else:
        reason = "has_grad"
        text = (f"{nm} is a leaf that requires grad, so backward() stored d(output)/d({code}) in its .grad "
                f"({facts['grad']}). Gradients accumulate over backward calls: reset with {code}.grad = None "
                f"or optimizer.zero_grad().")
    return Explanation(text, reason, fix, nm, facts)
