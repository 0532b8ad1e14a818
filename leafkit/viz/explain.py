"""``explain``: a plain answer to "why is my ``.grad`` None?" (or why it is set), in English or 简体中文."""

from __future__ import annotations

import html

from .._lang import resolve_language
from . import _inspect as I

__all__ = ["explain", "Explanation", "REASONS"]

#: The answers ``explain`` can give, by ``Explanation.reason``.
REASONS = (
    "non_leaf",  # made by an op: backward passes its gradient on, call retain_grad()
    "non_leaf_retained",  # a non-leaf that retains grad, .grad filled by backward
    "non_leaf_retain_pending",  # retain_grad() called, backward not called yet
    "to_copy",  # made by .to()/.cuda() from a tensor requiring grad: grad goes to the original
    "no_grad_mode",  # created under torch.no_grad() from tensors requiring grad (leafkit knows)
    "no_requires_grad",  # a tensor that does not require grad
    "no_backward_yet",  # a leaf requiring grad, .grad still None
    "has_grad",  # a leaf whose .grad was filled by backward
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

#: The sentences, per language.  ``{nm}`` is the name used in prose, ``{code}`` the one in code.
TEXT = {
    "en": {
        "titles": _TITLES,
        "this_tensor": "this tensor",
        "try": "Try:",
        "non_leaf_retained": (
            "{nm} is not a leaf (it was made by {fn}), but retain_grad() was called on it, "
            "so backward() stored its gradient in .grad. Retained gradients accumulate over "
            "backward calls like a leaf's."
        ),
        "non_leaf_retain_pending": (
            "{nm} is not a leaf (it was made by {fn}); retain_grad() was called, so .grad "
            "will be filled once backward() runs through it. It is None until then."
        ),
        "to_copy": (
            "{nm} is a copy made by .to()/.cuda() from a tensor that requires grad, so it is not a "
            "leaf (grad_fn={fn}) and its .grad stays None: backward() sends the gradient on to "
            "the original tensor's .grad. Create the tensor on the target device with "
            "requires_grad=True instead, or call {code}.retain_grad()."
        ),
        "non_leaf": (
            "{nm} is not a leaf: it was computed by an operation (grad_fn={fn}), and backward() "
            "passes a non-leaf's gradient on to the leaves without storing it, so its .grad stays None. "
            "Call {code}.retain_grad() before backward() to keep it."
        ),
        "no_grad_mode": (
            "{nm} was created inside torch.no_grad() from tensors that require grad, so autograd did "
            "not record the operation: it has no grad_fn, does not require grad, and its .grad stays "
            "None. Compute it outside the no_grad block to track it."
        ),
        "no_requires_grad": (
            "{nm} does not require grad, so autograd never computes a gradient for it and its .grad "
            "is None. If you want one, call {code}.requires_grad_() (or create it with "
            "requires_grad=True) before using it; a .detach() result or anything computed under "
            "no_grad() looks the same."
        ),
        "stale_grad": " (Its .grad holds a gradient from before requires_grad was turned off.)",
        "no_backward_yet": (
            "{nm} is a leaf that requires grad, so backward() will store its gradient in .grad, but "
            "that has not happened yet. Call backward() on a result computed from {nm}; if you "
            "already did, {nm} was not used to compute that result."
        ),
        "has_grad": (
            "{nm} is a leaf that requires grad, so backward() stored d(output)/d({code}) in its .grad "
            "({grad}). Gradients accumulate over backward calls: reset with {code}.grad = None "
            "or optimizer.zero_grad()."
        ),
    },
    "zh": {
        "titles": {
            "non_leaf": "不是叶子张量：.grad 保持为 None",
            "non_leaf_retained": "调用过 retain_grad() 的非叶子张量：.grad 有值",
            "non_leaf_retain_pending": "已调用 retain_grad()，还没有反向传播",
            "to_copy": ".to()/.cuda() 得到的副本：不是叶子张量",
            "no_grad_mode": "在 no_grad 中创建：没有被记录",
            "no_requires_grad": "不需要梯度",
            "no_backward_yet": "叶子张量，还在等 backward()",
            "has_grad": "已经有梯度的叶子张量",
        },
        "this_tensor": "这个张量",
        "try": "试试：",
        "non_leaf_retained": (
            "{nm} 不是叶子张量（它由 {fn} 产生），但对它调用过 retain_grad()，所以 backward() "
            "把它的梯度存进了 .grad。保留下来的梯度和叶子张量的一样，会在多次 backward 之间累加。"
        ),
        "non_leaf_retain_pending": (
            "{nm} 不是叶子张量（它由 {fn} 产生）。已经调用了 retain_grad()，所以等反向传播"
            "经过它时，.grad 就会有值；在那之前它是 None。"
        ),
        "to_copy": (
            "{nm} 是用 .to()/.cuda() 从一个需要梯度的张量拷贝出来的，所以它不是叶子张量（grad_fn={fn}），"
            ".grad 保持为 None：backward() 会把梯度继续传给原来那个张量的 .grad。想在目标设备上得到叶子张量，"
            "就直接在那个设备上用 requires_grad=True 创建它；或者调用 {code}.retain_grad()。"
        ),
        "non_leaf": (
            "{nm} 不是叶子张量：它是一次运算的结果（grad_fn={fn}）。反向传播时，非叶子张量的梯度只会沿计算图"
            "继续传给叶子张量，不会被存下来，所以它的 .grad 保持为 None。想保留它，就在 backward() 之前调用 "
            "{code}.retain_grad()。"
        ),
        "no_grad_mode": (
            "{nm} 是在 torch.no_grad() 里由需要梯度的张量算出来的，自动求导没有记录这一步：它没有 "
            "grad_fn，也不需要梯度，.grad 保持为 None。把这一步移到 no_grad 块外面，它才会被记录。"
        ),
        "no_requires_grad": (
            "{nm} 不需要梯度，自动求导从不为它计算梯度，所以它的 .grad 是 None。如果需要梯度，就在"
            "使用它之前调用 {code}.requires_grad_()（或者创建时写 requires_grad=True）。.detach() "
            "的结果、在 no_grad() 里算出的张量，看起来都是这样。"
        ),
        "stale_grad": "（它的 .grad 里还留着关掉 requires_grad 之前的梯度。）",
        "no_backward_yet": (
            "{nm} 是需要梯度的叶子张量，backward() 会把它的梯度存进 .grad，只是这还没有发生。对一个"
            "由 {nm} 算出的结果调用 backward()；如果已经调用过，说明那个结果的计算没有用到 {nm}。"
        ),
        "has_grad": (
            "{nm} 是需要梯度的叶子张量，所以 backward() 把 d(输出)/d({code}) 存进了它的 .grad（{grad}）。"
            "梯度会在多次 backward 之间累加：用 {code}.grad = None 或 optimizer.zero_grad() 清零。"
        ),
    },
}


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

    def __init__(self, text: str, reason: str, fix, name: str, facts: dict, lang: str = "en"):
        self.text = text
        self.reason = reason
        self.fix = fix
        self.name = name
        self.facts = facts
        self.lang = lang

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
            for k, v in self.facts.items()
        )
        words = TEXT[self.lang]
        fix = (
            f'<div style="margin-top:6px"><span style="color:#555">{html.escape(words["try"])}</span> '
            f'<code style="background:#f5f5f5;padding:1px 5px">{html.escape(self.fix)}</code></div>'
            if self.fix
            else ""
        )
        return (
            f'<div class="leafkit-explain" style="border-left:4px solid {accent};padding:6px 10px;'
            f'margin:4px 0;font-family:sans-serif;font-size:14px;line-height:1.4">'
            f'<div style="font-weight:bold;color:{accent};margin-bottom:4px">'
            f"{html.escape(self.name)}{'：' if self.lang == 'zh' else ': '}"
            f"{html.escape(words['titles'][self.reason])}</div>"
            f'<div style="margin-bottom:4px">{chips}</div>'
            f"<div>{html.escape(self.text)}</div>{fix}</div>"
        )


def explain(tensor, name: str | None = None, lang=None) -> Explanation:
    """Explain in plain words why ``tensor.grad`` is None, or why it is set.

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
        The variable name to use in the sentences (default ``"this tensor"``,
        in Chinese ``"这个张量"``).
    lang : {"en", "zh"} or None, default None
        The language of the sentences; ``None`` means :func:`leafkit.get_language`.
        ``.reason``, ``.fix`` and the facts are code and the same in both.

    Returns
    -------
    Explanation
        ``.text`` (1-3 sentences), ``.reason``, ``.fix`` and an HTML view
        (``_repr_html_``) for notebooks and widgets.

    Raises
    ------
    TypeError
        If ``tensor`` is not a tensor.
    ValueError
        If ``lang`` is not None, ``"en"`` or ``"zh"``.
    """
    lang = resolve_language(lang)
    if not I.is_tensor(tensor):
        raise TypeError(f"explain() expects a tensor, got {type(tensor).__name__}")
    words = TEXT[lang]
    nm = name or words["this_tensor"]
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
            else:
                reason = "non_leaf_retain_pending"
                fix = "out.backward()"
        elif fn_name is not None and fn_name.startswith("ToCopyBackward"):
            reason = "to_copy"
            fix = "torch.randn(3, device='cuda', requires_grad=True)"
        else:
            reason = "non_leaf"
            fix = f"{code}.retain_grad()"
    elif not rg:
        if getattr(tensor, "_created_in_no_grad", False):
            reason = "no_grad_mode"
        else:
            reason = "no_requires_grad"
            fix = f"{code}.requires_grad_()"
    elif grad is None:
        reason = "no_backward_yet"
        fix = "loss.backward()"
    else:
        reason = "has_grad"
    text = words[reason].format(nm=nm, code=code, fn=fn_name, grad=facts["grad"])
    if not rg and is_leaf and grad is not None:
        text += words["stale_grad"]
    return Explanation(text, reason, fix, nm, facts, lang)
