"""``BackwardStepper``: one backward pass, one node at a time, on a graph the learner built.

``BackwardStepper(loss)`` takes any leafkit tensor that requires grad (the
learner builds the graph in the notebook; nothing is typed into the explorer
and nothing is ``eval``-ed) and runs ``loss.backward()`` through
:func:`leafkit.autograd.backward_steps`, the engine's generator of
:class:`~leafkit.autograd.engine.BackwardStep`, so the order is the engine's,
which is PyTorch's (the tests check it against PyTorch's node pre-hooks).  After
each step it shows:

* the node that ran, highlighted in the drawing, and the gradient that arrived
  for each of its outputs (with the gradients that were added up to make it);
* what it sent along each edge, written on the edge; a gradient for an input
  that was broadcast arrives summed back to that input's shape, and says so;
* for ``AccumulateGrad``: the leaf's ``.grad`` before and after;
* the hooks that fired (and what they printed), the ``retain_grad()`` copies,
  and whether the node freed its saved tensors.

Controls: **Step**, **Run to end**, **Back one step** and **Reset**; from
Python: :meth:`BackwardStepper.step`, :meth:`~BackwardStepper.run`,
:meth:`~BackwardStepper.back`, :meth:`~BackwardStepper.reset` and
:attr:`~BackwardStepper.finished`.

How "Back one step" works, and why
----------------------------------
A backward pass consumes the learner's graph: without ``retain_graph=True``
each node frees its saved tensors as it runs, and the learner's hooks are code
with side effects (a print, a list that grows).  So the pass runs **once**, for
real, with the learner's own ``retain_graph``, and every step is recorded:
copies of the gradients it received and sent, what the hooks printed, and the
``.grad`` of every leaf and every tensor that retains its gradient before and
after the step.  *Back one step* rebuilds the state after step ``k - 1`` by
replaying that record from the start: every ``.grad`` is put back to what it
was before the pass (same tensor objects, values copied in), then the recorded
effects of steps ``1 .. k - 1`` are applied in order.  *Step* after *Back*
replays the record again, and once it catches up, the real pass goes on.

The alternative, running the pass with ``retain_graph=True`` behind the
learner's back and re-running the nodes on every Back, was rejected: it would
fire every hook again on each replay, it could never show a node really freeing
its saved tensors, and after *Run to end* it would leave a graph that
``loss.backward()`` would have freed.  With the record, *Run to end* leaves
exactly what ``loss.backward()`` leaves (``.grad`` values, retained gradients,
freed graph).  While the view is behind the real pass (after Back), the
explanation says so: the nodes after the view already ran.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re
import sys
import warnings

import ipywidgets as W

from leafkit.viz import _inspect as I
from leafkit.viz._graph import FLOW, Model, to_digraph
from leafkit.viz.dot import CJK_FONTNAME, COLORS, walk

from ._program import error_text, format_value
from ._view import FONT, MONO, MUTED, Control, Explorer, code_html, esc, table_html

__all__ = ["BackwardStepper", "StepRecord", "PassDrawing"]

#: How many step rows the table shows (the latest ones).
MAX_ROWS = 12
#: Up to this many elements, a gradient is written on an edge with its values; above, its shape.
EDGE_VALUES = 4
#: ... in the table; sentences write up to 8.
TABLE_VALUES = 12

CURRENT = "#ef6c00"  # the node that just ran, and the edges it sent along
READY = "#ef6c00"
SENT = "#1565c0"  # an edge that carried a gradient
PENDING = "#9e9e9e"
OUTPUT_CSS = "#caff70"  # COLORS["output"] (Graphviz's darkolivegreen1) as CSS knows it

#: Everything this explorer writes, per language; the Chinese sentences mark code with backticks.
TEXT = {
    "en": {
        "title": "Backward stepper",
        "subtitle": (
            "One backward pass, one node at a time: the gradient each node receives, what it sends "
            "along each edge, and where it ends up."
        ),
        "summary": (
            "steps through `backward()` on any graph you build, one node at a time: gradients on the "
            "edges, `AccumulateGrad`, hooks, freed saved tensors"
        ),
        "step": "Step",
        "run": "Run to end",
        "back": "Back one step",
        "tip_step": "run the next node of the pass",
        "tip_run": "run every remaining node",
        "tip_back": "show the state after the previous step (replayed from the start)",
        "tip_reset": "every .grad back to what it was before the pass",
        "code": "The pass being stepped through",
        "at_start": "not started",
        "at_step": "step {k}",
        "at_end": "done: {n} steps",
        "at_error": "raised {error}",
        "table": "What each node did",
        "columns": ("#", "node", "gradient in", "sent along each edge", "also"),
        "hidden_rows": "(steps 1\u2013{n} scrolled away)",
        "sum_of": "sum of {n}:",
        "root_in": "start",
        "nothing_sent": "(no input needs a gradient)",
        "summed": "summed {frm} \u2192 {to}",
        "skipped_cell": "skipped: no gradient arrived",
        "freed_cell": "saved tensors freed",
        "hook_cell": "{kind} ran",
        "retained_cell": "{t}.grad = {v}",
        "acc_cell": "{leaf}.grad: {before} \u2192 {after}",
        "printed_cell": "printed: {text}",
        "tensor_hook": "tensor hook",
        "pre-hook": "pre-hook",
        "post-hook": "post-hook",
        "printed": "Printed by hooks so far",
        "leaf": "leaf",
        "output": "output",
        "step_no": "step {k}",
        "now": "now",
        "ready": "ready",
        "freed_mark": "(freed)",
        "skipped_mark": "(skipped)",
        "shape": "shape {shape}",
        "big": "a tensor of shape {shape}",
        "caption": "Backward graph \u00b7 gradients flow down to the leaves",
        "legend_now": "ran at this step",
        "legend_done": "ran earlier",
        "legend_wait": "waiting",
        "legend_ready": "ready: every gradient it waits for has arrived",
        "legend_leaf": "leaf tensor (AccumulateGrad)",
        "legend_out": "where backward starts",
        "legend_freed": "saved tensors freed",
        "legend_retains": "double border: it made a tensor that keeps its gradient (retain_grad())",
        "legend_edge": "gradient sent along the edge",
        "start": (
            "Nothing has run yet. The first Step runs {root}, the grad_fn of `{loss}`, with the gradient "
            "{g}{why}. After that, a node runs only when every gradient it waits for has arrived; of the "
            "nodes that are ready, the engine runs the one created last (an AccumulateGrad as soon as it "
            "is ready)."
        ),
        "why_one": " (d{loss}/d{loss} = 1)",
        "why_vector": " that you passed as `gradient=`: the vector of a vector-Jacobian product",
        "start_leaf": (
            "Nothing has run yet. `{loss}` is a leaf, so the pass has one node: its AccumulateGrad, "
            "which adds {g} into `{loss}.grad`."
        ),
        "ran": "Step {k}: {node} received {gin}{added}. {sent}",
        "added": (
            ", the sum of the {n} gradients that arrived for it ({parts}): gradients that flow into one "
            "tensor along several paths add up"
        ),
        "sent": "It sent {sends}.",
        "send": "{g} to {target}",
        "send_join": ", ",
        "send_and": " and ",
        "send_summed": (
            "The gradient for {target} was summed from shape {frm} back to {to}: that input was "
            "broadcast in the forward pass, so the gradients of all its copies add up."
        ),
        "sent_nothing": "None of its inputs needs a gradient, so it sends nothing.",
        "freed": (
            " It ran without retain_graph=True, so it freed its saved tensors: a second backward through it would fail."
        ),
        "kept": " retain_graph=True: it keeps its saved tensors.",
        "acc": "Step {k}: AccumulateGrad added {g} into `{leaf}.grad`: {before} \u2192 {after}.",
        "acc_hooked": (
            "Step {k}: AccumulateGrad received {g} for `{leaf}`. The hook on `{leaf}` ran first{printed}; "
            "then the gradient (what the hook returned, if anything) went into `{leaf}.grad`: "
            "{before} \u2192 {after}."
        ),
        "acc_prev": (
            " `{leaf}.grad` already held {before}, so the new gradient was added to it, not written "
            "over it: call `zero_grad()` (or set `.grad = None`) between passes to start from zero."
        ),
        "acc_off": " `{leaf}` no longer requires grad, so its .grad was left as it was.",
        "hooks": " The hook on `{t}` ran first{printed}.",
        "hook_node": " {kind} on {node} ran{printed}.",
        "hook_printed": " and printed {text}",
        "retained": " `{t}.retain_grad()` kept a copy: `{t}.grad` is now {v}.",
        "skipped": "Step {k}: no gradient reached {node}, so it did not run.",
        "next": " Next: {node}.",
        "next_many": (
            " Next: {node}. {n} nodes are ready; the engine takes AccumulateGrad nodes first, then the "
            "node created last."
        ),
        "done": "Done after {n} steps. {grads}. That is exactly what `{stmt}` leaves.",
        "done_none": "Done after {n} steps.",
        "grad_is": "`{t}.grad` = {v}",
        "done_freed": " The graph's saved tensors are freed: another backward through it raises an error.",
        "replayed": (
            " (Shown again from the record: Back put every .grad back to what it was after step {k}; "
            "the pass itself has already run {n} steps.)"
        ),
        "reset_note": (
            " (Shown again from the record: Reset put every .grad back to what it was before the pass; "
            "the pass itself has already run {n} steps.)"
        ),
        "error": "The pass stopped at step {k} with an error, exactly as `{stmt}` stops.",
        "error_start": "The pass could not start, exactly as `{stmt}` cannot.",
        "hint_scalar": (
            " backward() makes the starting gradient 1 only for a one-element output: pass a gradient of "
            "the output's shape, e.g. `BackwardStepper({loss}, gradient=torch.ones_like({loss}))`."
        ),
        "hint_freed": (
            " An earlier backward() freed this graph's saved tensors: build the graph again, or give "
            "that earlier backward retain_graph=True."
        ),
        "hint_nograd": " `{loss}` does not require grad: nothing in its computation was recorded.",
        "raises": "{stmt} raises",
        "sep": "; ",
        "join": ", ",
        "and": " and ",
        "none": "None",
    },
    "zh": {
        "title": "反向传播单步器",
        "subtitle": "一次反向传播，一次走一个节点：每个节点收到什么梯度，沿每条边传出什么梯度，梯度最后落在哪里。",
        "summary": (
            "在你自己搭的任意计算图上，一个节点一个节点地走 `backward()`：边上的梯度、`AccumulateGrad`、"
            "钩子、释放保存的张量"
        ),
        "step": "单步",
        "run": "运行到底",
        "back": "后退一步",
        "tip_step": "运行这次反向传播的下一个节点",
        "tip_run": "运行剩下的所有节点",
        "tip_back": "显示上一步之后的状态（从头重放）",
        "tip_reset": "把每个 .grad 恢复成反向传播之前的样子",
        "code": "正在单步执行的反向传播",
        "at_start": "还没开始",
        "at_step": "第 {k} 步",
        "at_end": "完成：共 {n} 步",
        "at_error": "抛出 {error}",
        "table": "每个节点做了什么",
        "columns": ("#", "节点", "传入的梯度", "沿每条边传出", "其他"),
        "hidden_rows": "（第 1\u2013{n} 步已不在表中）",
        "sum_of": "{n} 个之和：",
        "root_in": "起点",
        "nothing_sent": "（没有输入需要梯度）",
        "summed": "求和 {frm} \u2192 {to}",
        "skipped_cell": "跳过：没有梯度传到这里",
        "freed_cell": "保存的张量已释放",
        "hook_cell": "{kind}运行了",
        "retained_cell": "{t}.grad = {v}",
        "acc_cell": "{leaf}.grad：{before} \u2192 {after}",
        "printed_cell": "打印：{text}",
        "tensor_hook": "张量钩子",
        "pre-hook": "节点前置钩子",
        "post-hook": "节点后置钩子",
        "printed": "到目前为止钩子打印的内容",
        "leaf": "叶子张量",
        "output": "输出",
        "step_no": "第 {k} 步",
        "now": "当前",
        "ready": "就绪",
        "freed_mark": "（已释放）",
        "skipped_mark": "（跳过）",
        "shape": "形状 {shape}",
        "big": "形状为 {shape} 的张量",
        "caption": "反向计算图 \u00b7 梯度自上而下流向叶子张量",
        "legend_now": "这一步运行的节点",
        "legend_done": "之前运行过",
        "legend_wait": "等待中",
        "legend_ready": "就绪：它等的梯度都到齐了",
        "legend_leaf": "叶子张量（AccumulateGrad）",
        "legend_out": "反向传播的起点",
        "legend_freed": "保存的张量已释放",
        "legend_retains": "双线边框：它产生的张量保留梯度（retain_grad()）",
        "legend_edge": "沿这条边传出的梯度",
        "start": (
            "还没有运行任何节点。第一次单步会运行 {root}，也就是 `{loss}` 的 grad_fn，传给它的梯度是 "
            "{g}{why}。之后，一个节点要等它需要的梯度全部到齐才会运行；在所有就绪的节点里，"
            "引擎先运行最后创建的那个（AccumulateGrad 一就绪就运行）。"
        ),
        "why_one": "（d{loss}/d{loss} = 1）",
        "why_vector": "，也就是你用 `gradient=` 传入的向量：向量-雅可比积（vector-Jacobian product）里的那个向量",
        "start_leaf": (
            "还没有运行任何节点。`{loss}` 是叶子张量，所以这次反向传播只有一个节点：它的 AccumulateGrad，"
            "把 {g} 加进 `{loss}.grad`。"
        ),
        "ran": "第 {k} 步：{node} 收到 {gin}{added}。{sent}",
        "added": "，这是沿不同路径传来的 {n} 个梯度之和（{parts}）：流向同一个张量的梯度会累加",
        "sent": "它传出的梯度：{sends}。",
        "send": "给 {target} 的是 {g}",
        "send_join": "；",
        "send_and": "；",
        "send_summed": (
            "给 {target} 的梯度从形状 {frm} 求和回到 {to}：前向计算时这个输入被广播（broadcast）过，"
            "它的各个副本的梯度要加在一起。"
        ),
        "sent_nothing": "它的输入都不需要梯度，所以什么也不传出。",
        "freed": "这次没有 retain_graph=True，所以它释放了保存的张量：再沿它做一次反向传播会失败。",
        "kept": "retain_graph=True：它保留了保存的张量。",
        "acc": "第 {k} 步：AccumulateGrad 把 {g} 加进 `{leaf}.grad`：{before} \u2192 {after}。",
        "acc_hooked": (
            "第 {k} 步：AccumulateGrad 收到给 `{leaf}` 的梯度 {g}。`{leaf}` 上的钩子先运行了{printed}；"
            "然后梯度（如果钩子返回了新的张量，就用返回的那个）加进 `{leaf}.grad`：{before} \u2192 {after}。"
        ),
        "acc_prev": (
            "`{leaf}.grad` 里原来就有 {before}，所以新梯度是加上去的，而不是覆盖：两次反向传播之间要调用 "
            "`zero_grad()`（或者设 `.grad = None`），才能从零开始。"
        ),
        "acc_off": "`{leaf}` 已经不再需要梯度，所以它的 .grad 保持不变。",
        "hooks": "`{t}` 上的钩子先运行了{printed}。",
        "hook_node": "{node} 上的{kind}运行了{printed}。",
        "hook_printed": "，打印了 {text}",
        "retained": "`{t}.retain_grad()` 保留了一份副本：`{t}.grad` 现在是 {v}。",
        "skipped": "第 {k} 步：没有梯度传到 {node}，所以它没有运行。",
        "next": "下一个：{node}。",
        "next_many": (
            "下一个：{node}。现在有 {n} 个节点就绪；引擎先运行 AccumulateGrad 节点，再运行最后创建的那个节点。"
        ),
        "done": "共 {n} 步，完成。{grads}。这和 `{stmt}` 留下的结果完全一样。",
        "done_none": "共 {n} 步，完成。",
        "grad_is": "`{t}.grad` = {v}",
        "done_freed": "计算图保存的张量已经释放：再沿它做一次反向传播会报错。",
        "replayed": (
            "（这是按记录重放的：“后退”把每个 .grad 恢复成第 {k} 步之后的样子；真正的反向传播已经运行了 {n} 步。）"
        ),
        "reset_note": (
            "（这是按记录重放的：“重置”把每个 .grad 恢复成反向传播之前的样子；真正的反向传播已经运行了 {n} 步。）"
        ),
        "error": "反向传播在第 {k} 步出错停下了，和 `{stmt}` 一样。",
        "error_start": "反向传播没能开始，和 `{stmt}` 一样。",
        "hint_scalar": (
            "只有输出只含一个元素时，backward() 才会自动用 1 作为起始梯度：请传入和输出形状相同的梯度，"
            "例如 `BackwardStepper({loss}, gradient=torch.ones_like({loss}))`。"
        ),
        "hint_freed": (
            "之前的一次 backward() 已经释放了这个计算图保存的张量：重新构建计算图，"
            "或者让之前那次 backward 使用 retain_graph=True。"
        ),
        "hint_nograd": "`{loss}` 不需要梯度：它的计算过程没有被记录下来。",
        "raises": "{stmt} 抛出错误",
        "sep": "；",
        "join": "、",
        "and": " 和 ",
        "none": "None",
    },
}

_ZH_SEP = {"en": " ", "zh": ""}  # how sentence pieces join: English needs a space, Chinese does not


# ------------------------------------------------------------------ records --
class StepRecord:
    """What one step of the pass did, copied when it ran (later steps and hooks cannot change it).

    Attributes
    ----------
    index : int
        1 for the first step.
    step : leafkit.autograd.engine.BackwardStep
        The engine's own record (its tensors may be shared with the engine).
    node : Node
        The node that ran (``AccumulateGrad`` for a leaf).
    grad_outputs : list of Tensor or None
        Copies of the gradient that arrived for each output of the node.
    contributions : list of (int, str, Tensor)
        ``(output number, where from, gradient)`` for every gradient sent to this node
        (``"start"`` for the gradient the pass starts with); several for one output add up.
    edges : list of (Node, int, Tensor or None, tuple or None)
        ``(next node, its output number, gradient sent, shape before summing back or None)``
        for each ``next_functions`` edge that leads somewhere.
    hooks : list of str
        ``"tensor hook"``, ``"pre-hook"``, ``"post-hook"``, as they fired.
    printed : str
        What the hooks printed during the step.
    retained : list of Tensor
        The tensors whose ``retain_grad()`` copy was taken.
    accumulated : Tensor or None
        The leaf whose ``.grad`` was added to.
    before, after : dict
        ``id(tensor) -> (tensor, grad object or None, copy of its values or None)`` for the
        tensors whose ``.grad`` this step changed.
    freed, skipped : bool
        As in :class:`~leafkit.autograd.engine.BackwardStep`.
    """

    __slots__ = (
        "index",
        "step",
        "node",
        "grad_outputs",
        "contributions",
        "edges",
        "hooks",
        "printed",
        "retained",
        "accumulated",
        "before",
        "after",
        "freed",
        "skipped",
    )

    def __init__(self, index, step):
        self.index = index
        self.step = step
        self.node = step.node
        self.grad_outputs = []
        self.contributions = []
        self.edges = []
        self.hooks = list(step.hooks)
        self.printed = ""
        self.retained = list(step.retained)
        self.accumulated = step.accumulated
        self.before: dict = {}
        self.after: dict = {}
        self.freed = bool(step.freed)
        self.skipped = bool(step.skipped)


class PassDrawing:
    """The backward graph at one moment of the pass (what :class:`BackwardStepper` shows).

    Displays in a notebook as SVG (or as a text tree without Graphviz's ``dot``).

    Attributes
    ----------
    digraph : leafkit.viz.AutogradDigraph
        The Graphviz graph (``source`` is its DOT text).
    state : dict
        ``{"variables": names drawn, "current": label of the node that just ran or None,
        "done": labels of the nodes that ran, "ready": labels of the nodes ready to run}``.
    """

    def __init__(self, digraph, state):
        self.digraph = digraph
        self.state = state

    @property
    def source(self) -> str:
        return self.digraph.source

    @property
    def text(self) -> str:
        return self.digraph.text

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        return self.digraph._repr_mimebundle_(include=include, exclude=exclude)

    def __repr__(self):
        return f"<PassDrawing: {len(self.state['done'])} nodes ran, current {self.state['current']!r}>"


class _Tee(io.TextIOBase):
    """Write to a buffer and to the stream that was there (a hook's print shows in both places)."""

    def __init__(self, other):
        self.buffer_ = io.StringIO()
        self.other = other

    def write(self, s):
        self.buffer_.write(s)
        try:
            if self.other is not None:
                self.other.write(s)
        except Exception:  # a closed stream must not break the pass
            pass
        return len(s)

    def flush(self):
        try:
            if self.other is not None:
                self.other.flush()
        except Exception:
            pass


def _tensor_type():
    import leafkit

    return leafkit.Tensor


def _copy(t):
    """A detached copy of a tensor (None stays None)."""
    if t is None:
        return None
    import leafkit

    with leafkit.no_grad():
        return t.detach().clone()


def _read_grad(t):
    """``t.grad`` without the non-leaf warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


def _grad_state(t):
    g = _read_grad(t)
    return (t, g, _copy(g))


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _shape_text(shape) -> str:
    """``(3,)``, ``(2, 3)``, ``()``: a shape as the drawings write it (torchviz's style)."""
    shape = tuple(int(s) for s in shape)
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def caller_names(skip: str = "leafkit.widgets") -> dict:
    """``{id(tensor): (name, tensor)}`` from the variables of the code that called into ``skip``.

    The frame is the first one outside the modules named ``skip...`` (the notebook cell that
    builds the explorer).  Names starting with ``_`` (IPython's ``_``, ``_3``) are left out;
    each ``nn.Module`` adds its parameters as ``model.0.weight``.
    """
    frame = inspect.currentframe()
    out: dict = {}
    try:
        f = frame.f_back if frame is not None else None
        while f is not None and str(f.f_globals.get("__name__", "")).startswith(skip):
            f = f.f_back
        if f is None:
            return out
        spaces = [dict(f.f_locals)]
        if f.f_globals is not f.f_locals:
            spaces.append(f.f_globals)
    finally:
        del frame
    return names_in(*spaces)


def names_in(*spaces) -> dict:
    """``{id(tensor): (name, tensor)}`` for the leafkit tensors (and module parameters) in ``spaces``."""
    Tensor = _tensor_type()
    try:
        from leafkit.nn import Module
    except Exception:  # pragma: no cover - nn is part of the package
        Module = ()
    out: dict = {}
    for space in spaces:
        for name, value in list(space.items()):
            if not isinstance(name, str) or name.startswith("_") or name in ("In", "Out"):
                continue
            if isinstance(value, Tensor):
                out.setdefault(id(value), (name, value))
            elif Module and isinstance(value, Module):
                try:
                    for pname, p in value.named_parameters():
                        out.setdefault(id(p), (f"{name}.{pname}", p))
                except Exception:
                    continue
    return out


# ------------------------------------------------------------------ the explorer --
class BackwardStepper(Explorer):
    """Step through ``loss.backward()`` one node at a time, on a graph built in the notebook.

    Parameters
    ----------
    loss : leafkit.Tensor
        Where the pass starts: any leafkit tensor (any shape, dtype or device).  A tensor
        that does not require grad, or a non-scalar one without ``gradient``, is accepted:
        the first Step then shows the error ``loss.backward()`` raises.
    gradient : leafkit.Tensor, optional
        ``gradient=`` of ``loss.backward``: the gradient the pass starts with, of ``loss``'s
        shape (the vector of a vector-Jacobian product).  ``None``: 1 for a one-element loss.
    retain_graph : bool, default False
        As in ``loss.backward(retain_graph=...)``: with False, each node frees its saved
        tensors as it runs, and the graph cannot be walked again afterwards.
    params : dict of str to Tensor, optional
        Names for tensors, matched by identity (as in :func:`leafkit.viz.make_dot`).  By
        default the variables of the code that builds the stepper (the notebook cell) name
        them: ``x``, ``loss``, ``model.0.weight`` for a module's parameters.
    zoom : float, default 1.0
        Scale of the drawing.
    lang : {"en", "zh"} or None, default None
        The language of the panel (``None``: :func:`leafkit.get_language`).

    Raises
    ------
    TypeError
        ``loss`` is not a leafkit tensor (real PyTorch cannot stop its engine between nodes),
        or ``params`` is not a dict.
    ValueError
        ``lang`` is not None, ``"en"`` or ``"zh"``.

    Attributes
    ----------
    step_button, run_button, back_button, reset_button : ipywidgets.Button
        Keys ``"step"``, ``"run"``, ``"back"``, ``"reset"``.
    records : list of StepRecord
        Every step the pass has run so far (also those after the view, once Back was used).
    cursor : int
        How many steps the view shows (0: before the pass).
    error : Exception or None
        The error the pass stopped with (``loss.backward()`` raises the same).
    rows : list of dict
        One per step shown: ``{"step", "node", "label", "grad_in", "contributions", "edges",
        "hooks", "printed", "retained", "accumulated", "grad", "freed", "skipped"}``, with
        tensors as their ``repr`` (``"tensor([2.])"``), the same in every language.
    grads : dict
        ``name -> repr of .grad or None`` for every named leaf and every named tensor that
        retains its gradient, as the view shows them now.
    code, explanation, message, drawing, svg, widget
        See :class:`leafkit.widgets._view.Explorer`; ``code`` is the statement being
        stepped (``"loss.backward()"``), ``drawing`` a :class:`PassDrawing`.

    Notes
    -----
    The pass runs once (see the module's docstring): Back and Reset put every ``.grad``
    back by replaying the record, so hooks never fire twice.  While you step, the stepper
    owns the ``.grad`` of the graph's leaves: change them in another cell and the next
    Back or Reset writes the recorded values over them.

    Examples
    --------
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> loss = (x * x).sum()
    >>> s = BackwardStepper(loss)          # doctest: +SKIP
    >>> s.step().name()                    # doctest: +SKIP
    'SumBackward0'
    >>> s.run(); s.finished, x.grad        # doctest: +SKIP
    (True, tensor([2., 4.]))
    """

    TEXT = TEXT
    TOUR = (
        ("step", None),
        ("step", None),
        ("back", None),
        ("run", None),
        ("back", None),
        ("reset", None),
        ("step", None),
        ("step", None),
        ("step", None),
        ("step", None),
    )
    EXAMPLE = (
        "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "w = torch.tensor(2.0, requires_grad=True)     # one number, broadcast over x\n"
        "y = w * x\n"
        "y.retain_grad()                                # keep y.grad\n"
        "z = y * y + y                                  # y is used three times\n"
        "h = x.register_hook(lambda grad: print('hook on x saw', grad))\n"
        "loss = z.sum()\n"
        "BackwardStepper(loss)"
    )
    css_class = "lk-backward-stepper"
    WIDE_DRAWINGS = True

    def __init__(self, loss, gradient=None, retain_graph=False, params=None, zoom=1.0, lang=None):
        super().__init__(zoom=zoom, lang=lang)
        Tensor = _tensor_type()
        if not isinstance(loss, Tensor):
            kind = f"{type(loss).__module__}.{type(loss).__name__}"
            raise TypeError(
                f"BackwardStepper steps through a leafkit graph (import leafkit as torch), got {kind}"
                + ("; real PyTorch cannot stop its engine between nodes" if kind.startswith("torch") else "")
            )
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"params must be a dict of names to tensors (as for make_dot), got {type(params).__name__}")
        self.loss = loss
        self.gradient = gradient
        self.retain_graph = bool(retain_graph)
        self._names = (
            caller_names()
            if params is None
            else {id(t): (str(n), t) for n, t in params.items() if isinstance(t, Tensor)}
        )
        self.records: list = []
        self.cursor = 0
        self.error = None
        self._error_printed = ""
        self._gen = None
        self._pending = None
        self._exhausted = False
        self._initial: dict = {}
        self._incoming: dict = {}
        self.grads: dict = {}
        self._shows_retained = False  # the drawing has a node with a double border (set by _draw)
        self._structure()
        self._keep_names()

        lay = W.Layout(width="auto", margin="0 10px 0 0")
        self.step_button = W.Button(
            description=self._t("step"),
            button_style="primary",
            icon="step-forward",
            tooltip=self._t("tip_step"),
            layout=lay,
        )
        self.run_button = W.Button(
            description=self._t("run"), icon="fast-forward", tooltip=self._t("tip_run"), layout=lay
        )
        self.back_button = W.Button(
            description=self._t("back"), icon="step-backward", tooltip=self._t("tip_back"), layout=lay
        )
        self.reset_button = W.Button(
            description=self._t("reset"), icon="refresh", tooltip=self._t("tip_reset"), layout=W.Layout(width="auto")
        )
        self.step_button.on_click(self._guard(lambda b: self._click(self._step_quietly)))
        self.run_button.on_click(self._guard(lambda b: self._click(self._run_quietly)))
        self.back_button.on_click(self._guard(lambda b: self._click(self._back_quietly)))
        self.reset_button.on_click(self._guard(lambda b: self._click(self._reset_quietly)))
        self.output_view = W.HTML()
        self.output_view.add_class("lk-printed")
        self.drawing_pane.legend = self._legend_html
        row = W.HBox(
            [self.step_button, self.run_button, self.back_button, self.reset_button],
            layout=W.Layout(align_items="center", flex_flow="row wrap"),
        )
        self._assemble([row], left_extra=[self.output_view], left_width="700px")
        self.refresh()

    def _controls(self) -> list:
        return [
            Control("step", self.step_button, "button"),
            Control("run", self.run_button, "button"),
            Control("back", self.back_button, "button"),
            Control("reset", self.reset_button, "button"),
        ]

    # -- the graph ----------------------------------------------------------------
    def _structure(self) -> None:
        """The nodes reachable from ``loss`` (drawing order), who sends to whom, and the leaves."""
        root = self.loss.grad_fn
        self._order, self._children = walk([root]) if root is not None else ([], [])
        self._index = {id(fn): k for k, fn in enumerate(self._order)}
        self._parents = [[] for _ in self._order]  # per node: the nodes that send it a gradient
        for k, kids in enumerate(self._children):
            for c, _ in kids:
                if c is not None:
                    self._parents[c].append(k)
        self._leaves = [fn.variable for fn in self._order if I.is_accumulate_grad(fn)]

    def _tracked(self) -> list:
        """The tensors whose ``.grad`` the pass may change: the leaves and every tensor retaining its grad."""
        out = {id(t): t for t in self._leaves}
        if self.loss.grad_fn is None and self.loss.requires_grad:
            out[id(self.loss)] = self.loss
        for fn in self._order:
            refs = getattr(fn, "_retain_refs", None) or {}
            for ref in list(refs.values()):
                t = ref() if callable(ref) else None
                if t is not None:
                    out[id(t)] = t
        for _, t in self._names.values():
            if t.grad_fn is not None and id(t.grad_fn) in self._index and getattr(t, "retains_grad", False):
                out[id(t)] = t
        return list(out.values())

    def _keep_names(self) -> None:
        """Keep only the names of tensors in this graph (and the gradient), so nothing else stays alive."""
        keep = {}
        for tid, (name, t) in self._names.items():
            fn = t.grad_fn
            if (
                t is self.loss
                or t is self.gradient
                or any(t is leaf for leaf in self._leaves)
                or (fn is not None and id(fn) in self._index)
            ):
                keep[tid] = (name, t)
        self._names = keep
        # the tensor each node made, when it has a name (the first name found wins)
        self._made = {}
        for name, t in keep.values():
            fn = t.grad_fn
            if fn is not None and id(fn) in self._index:
                self._made.setdefault((id(fn), int(getattr(t, "output_nr", 0))), name)

    def name_of(self, t, default=None):
        """The name of tensor ``t`` (from ``params`` or the calling cell), or ``default``."""
        hit = self._names.get(id(t))
        return hit[0] if hit is not None and hit[1] is t else default

    def _tensor_name(self, t) -> str:
        """A tensor's name, or for an unnamed non-leaf the node that made it (``<MulBackward0>``)."""
        name = self.name_of(t)
        if name is None:
            fn = t.grad_fn
            name = f"<{I.node_name(fn)}>" if fn is not None else "<leaf>"
        return name

    @property
    def loss_name(self) -> str:
        return self.name_of(self.loss, "loss")

    def label(self, fn, plain_name: bool = False) -> str:
        """How a node is written: ``MulBackward0 (y)``, ``AccumulateGrad (x)``."""
        if fn is None:
            return "None"
        if I.is_accumulate_grad(fn):
            name = self.name_of(fn.variable)
            base = "AccumulateGrad"
            return base if plain_name or name is None else f"{base} ({name})"
        base = I.node_name(fn)
        made = self._made.get((id(fn), 0))
        return base if plain_name or made is None else f"{base} ({made})"

    @property
    def statement(self) -> str:
        """The call being stepped through, as code: ``loss.backward()``."""
        args = []
        if self.gradient is not None:
            gname = self.name_of(self.gradient)
            if gname is None:
                try:
                    gname = f"torch.tensor({self.gradient.tolist()!r})"
                except Exception:
                    gname = "..."
            args.append(f"gradient={gname}")
        if self.retain_graph:
            args.append("retain_graph=True")
        return f"{self.loss_name}.backward({', '.join(args)})"

    # -- the pass -------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """True once the pass is over (every node ran, or it stopped with :attr:`error`) and the view shows it."""
        return self._exhausted and self.cursor == len(self.records)

    @property
    def history(self) -> list:
        """The engine's :class:`~leafkit.autograd.engine.BackwardStep` of every step shown."""
        return [r.step for r in self.records[: self.cursor]]

    @property
    def graph_nodes(self) -> list:
        """Every node reachable from ``loss.grad_fn``, in drawing order (a depth-first walk of ``next_functions``)."""
        return list(self._order)

    @property
    def nodes(self) -> list:
        """The nodes that ran, in order, up to the step shown."""
        return [r.node for r in self.records[: self.cursor]]

    def _start(self) -> None:
        from leafkit.autograd import backward_steps

        self._initial = {id(t): _grad_state(t) for t in self._tracked()}
        self._gen = backward_steps(self.loss, self.gradient, retain_graph=self.retain_graph)
        g = self.gradient
        try:
            if g is None and self.loss.numel() == 1:
                import leafkit

                g = leafkit.ones_like(self.loss)
            if self.loss.grad_fn is not None and isinstance(g, _tensor_type()):
                self._incoming.setdefault(id(self.loss.grad_fn), []).append(
                    (int(getattr(self.loss, "output_nr", 0)), self._t("root_in"), _copy(g))
                )
        except Exception:  # a gradient the engine will refuse: its error is shown at the first step
            pass

    def _advance(self):
        """Run the next node for real; ``(record, None)``, ``(None, None)`` at the end, or ``(None, error)``."""
        if self._exhausted:
            return None, None
        if self._gen is None:
            self._start()
        tee = _Tee(sys.stdout)
        st, self._pending = self._pending, None
        if st is None:
            try:
                with contextlib.redirect_stdout(tee):
                    st = next(self._gen)
            except StopIteration:
                self._exhausted = True
                return None, None
            except Exception as exc:  # the lesson's errors (PyTorch's): shown, and raised by step()
                self._exhausted = True
                self.error = exc
                self._error_printed = tee.buffer_.getvalue()
                return None, exc
        rec = StepRecord(len(self.records) + 1, st)
        rec.printed = tee.buffer_.getvalue()
        rec.grad_outputs = [_copy(g) for g in st.grad_outputs]  # None where no gradient arrived
        rec.contributions = list(self._incoming.pop(id(st.node), []))
        expand = I.node_name(st.node).startswith("Expand") and st.grad_outputs and st.grad_outputs[0] is not None
        for nxt, nr, g, frm in st.edges:  # frm: the shape the engine summed the gradient back from
            if nxt is None:
                continue
            if expand and g is not None and tuple(g.shape) != tuple(st.grad_outputs[0].shape):
                frm = tuple(st.grad_outputs[0].shape)  # ExpandBackward0 sums back over the expanded dimensions itself
            gc = _copy(g)
            rec.edges.append((nxt, nr, gc, frm))
            if gc is not None:
                self._incoming.setdefault(id(nxt), []).append((nr, self.label(st.node), gc))
        changed = list(st.retained) + ([st.accumulated] if st.accumulated is not None else [])
        for t in changed:
            tid = id(t)
            if tid not in self._initial:  # retained by a tensor we could not see before: it held no gradient
                self._initial[tid] = (t, None, None)
                rec.before[tid] = (t, None, None)
            else:
                rec.before[tid] = self._state_at(len(self.records))[tid]
            rec.after[tid] = _grad_state(t)
        self.records.append(rec)
        self.cursor = len(self.records)
        self._finish_if_done()
        return rec, None

    def _finish_if_done(self) -> None:
        """Once every node of the graph ran, end the generator now (no node is left to run), so that
        :attr:`finished` is True right after the last node, not one Step later."""
        ran = {id(r.node) for r in self.records}
        if self._order and not all(id(fn) in ran for fn in self._order):
            return
        try:
            self._pending = next(self._gen)  # never a node, since all ran; kept for the next Step if it is
        except StopIteration:
            self._exhausted = True
        except Exception as exc:  # pragma: no cover - nothing runs after the last node
            self._exhausted = True
            self.error = exc

    def _state_at(self, cursor: int) -> dict:
        """``id -> (tensor, grad object, values)`` after step ``cursor``: the state before the pass, then the
        recorded effect of each step, in order."""
        state = dict(self._initial) if self._gen is not None else {id(t): _grad_state(t) for t in self._tracked()}
        for rec in self.records[:cursor]:
            state.update(rec.after)
        return state

    def _apply(self, cursor: int) -> None:
        """Put every ``.grad`` the pass touches in the state after step ``cursor``: replayed from the start."""
        import leafkit

        state = self._state_at(cursor)
        with leafkit.no_grad():
            for t, obj, values in state.values():
                if obj is not None and values is not None:
                    obj.copy_(values)
                if _read_grad(t) is not obj:
                    t.grad = obj
        self.cursor = cursor

    def _forward_one(self):
        """One step forward: replay a recorded step, or run the next node.  ``(record or None, error or None)``;
        at the end of a pass that failed, its error again."""
        if self.cursor < len(self.records):
            self._apply(self.cursor + 1)
            return self.records[self.cursor - 1], None
        if self._exhausted:
            return None, self.error
        return self._advance()

    def step(self):
        """Run the next node of the pass and return it (``None`` once the pass is over).

        After :meth:`back`, the steps already run are replayed from the record first.

        Raises
        ------
        RuntimeError, TypeError
            What ``loss.backward()`` raises at that point (a non-scalar loss without
            ``gradient``, a graph freed by an earlier backward, a hook that raises ...);
            the panel shows it as a message.
        """
        rec, exc = self._forward_one()
        self._guard(self._update)()
        if exc is not None:
            raise exc
        return None if rec is None else rec.node

    def run(self) -> None:
        """Run the pass to its end (what ``loss.backward()`` does at once).

        Raises
        ------
        RuntimeError, TypeError
            As :meth:`step`.
        """
        exc = self._run_quietly()
        self._guard(self._update)()
        if exc is not None:
            raise exc

    def back(self) -> bool:
        """Show the state after the previous step: every ``.grad`` rebuilt by replaying the record from the start.

        Returns False at the start of the pass (nothing to undo).
        """
        moved = self._back_quietly()
        self._guard(self._update)()
        return moved

    def reset(self) -> bool:
        """Back to before the pass: every ``.grad`` as it was.  Returns False when already there."""
        moved = self._reset_quietly()
        self._guard(self._update)()
        return moved

    def _back_quietly(self) -> bool:
        if self.cursor == 0:
            return False
        self._apply(self.cursor - 1)
        return True

    def _reset_quietly(self) -> bool:
        if self.cursor == 0:
            return False
        self._apply(0)
        return True

    def _step_quietly(self):
        rec, exc = self._forward_one()
        return exc

    def _run_quietly(self):
        while True:
            rec, exc = self._forward_one()
            if exc is not None or rec is None:
                return exc

    def _click(self, action) -> None:
        action()  # the lesson's errors are kept in self.error and shown by _update (never raised here)
        self._update()

    # -- what the view shows ----------------------------------------------------------
    def _value(self, t, limit: int = 8) -> str:
        """A tensor as a sentence or the table writes it: its repr, or, above ``limit`` elements, its shape."""
        if t is None:
            return self._t("none")
        if _numel(tuple(t.shape)) > limit:
            return self._t("big", shape=_shape_text(tuple(t.shape)))
        return format_value(t)

    def _short(self, t) -> str:
        """A gradient written on an edge: its values (``[2., 4.]``) or, when big, its shape."""
        if t is None:
            return "None"
        shape = tuple(t.shape)
        if _numel(shape) > EDGE_VALUES:
            return self._t("shape", shape=_shape_text(shape))
        return I.format_values(t, EDGE_VALUES)

    def _row(self, rec) -> dict:
        node = rec.node
        acc = rec.accumulated
        return {
            "step": rec.index,
            "node": I.node_name(node),
            "label": self.label(node),
            "grad_in": [None if g is None else format_value(g) for g in rec.grad_outputs],
            "contributions": [format_value(g) for _, _, g in rec.contributions],
            "edges": [
                {
                    "to": self.label(nxt),
                    "output_nr": nr,
                    "grad": None if g is None else format_value(g),
                    "shape": None if g is None else tuple(g.shape),
                    "summed_from": frm,
                }
                for nxt, nr, g, frm in rec.edges
            ],
            "hooks": list(rec.hooks),
            "printed": rec.printed,
            "retained": {self._tensor_name(t): _repr(rec.after[id(t)][2]) for t in rec.retained},
            "accumulated": None if acc is None else self.name_of(acc, "?"),
            "grad": None if acc is None else _repr(rec.after[id(acc)][2]),
            "freed": rec.freed,
            "skipped": rec.skipped,
        }

    def _current_grads(self) -> dict:
        out = {}
        for t, _obj, values in self._state_at(self.cursor).values():
            name = self.name_of(t)
            if name is not None:
                out[name] = None if values is None else format_value(values)
        return dict(sorted(out.items()))

    def _ready(self) -> dict:
        """``{node index: (step it became ready at, edge position)}`` for the nodes not run yet whose every
        sender has run (the root: at the start of the pass)."""
        if self.finished or not self._order:
            return {}
        shown = self.records[: self.cursor]
        step_of = {id(r.node): r for r in shown}
        out = {}
        for k, fn in enumerate(self._order):
            if id(fn) in step_of:
                continue
            if k == 0 and not self._parents[0]:
                out[k] = (0, 0)
                continue
            senders = [step_of.get(id(self._order[p])) for p in self._parents[k]]
            if senders and all(r is not None for r in senders):
                last = max(senders, key=lambda r: r.index)
                pos = max(i for i, e in enumerate(last.edges) if e[0] is fn)
                out[k] = (last.index, pos)
        return out

    def _next_node(self):
        """``(node, number of ready nodes)``: the node the engine runs next, by PyTorch's rule: of the ready
        nodes, the one created last (highest sequence number; AccumulateGrad's is the highest of all), and
        among equals the one that became ready first."""
        ready = self._ready()
        if not ready:
            return None, 0
        k = max(ready, key=lambda i: (self._order[i]._sequence_nr(), -ready[i][0], -ready[i][1]))
        return self._order[k], len(ready)

    def _update(self) -> None:
        shown = self.records[: self.cursor]
        self.rows = [self._row(r) for r in shown]
        self.grads = self._current_grads()
        self.code = self.statement
        failed = self.error is not None and self.finished
        if failed:
            mark = ("error", self._t("at_error", error=type(self.error).__name__))
        elif self.finished:
            mark = ("ok", self._t("at_end", n=len(self.records)))
        elif self.cursor:
            mark = ("info", self._t("at_step", k=self.cursor))
        else:
            mark = ("info", self._t("at_start"))
        self.code_view.value = code_html(self.code, self._t("code"), {0: mark})
        self._render_table(shown)
        if failed:
            self._set_message("error", self._t("raises", stmt=self.statement), error_text(self.error))
        else:
            self._set_message(None)
        self._render_printed(shown)
        self._set_explanation(self._explain(shown))
        self.step_button.disabled = self.run_button.disabled = self.finished
        self.back_button.disabled = self.reset_button.disabled = self.cursor == 0
        self._show_drawing(self._draw(), caption=self._t("caption"))

    def _render_table(self, shown) -> None:
        t = self._t
        cells = []
        visible = shown[-MAX_ROWS:]
        for rec, row in zip(visible, self.rows[-MAX_ROWS:]):
            gin = []
            for g in rec.grad_outputs:
                gin.append(
                    mono(self._value(g, TABLE_VALUES)) if g is not None else f'<span style="color:{MUTED}">None</span>'
                )
            if len(rec.contributions) > 1:
                parts = "<br>".join(
                    f'<span style="color:{MUTED}">{esc(src)}:</span> {mono(self._value(g, TABLE_VALUES))}'
                    for _, src, g in rec.contributions
                )
                gin.append(
                    f'<div style="font-size:12px;margin-top:2px"><span style="color:{MUTED}">'
                    f"{esc(t('sum_of', n=len(rec.contributions)))}</span><br>{parts}</div>"
                )
            sent = []
            for (_nxt, _nr, g, _frm), e in zip(rec.edges, row["edges"]):
                line = f"\u2192 <b>{esc(e['to'])}</b>: {mono(self._value(g, TABLE_VALUES))}"
                if e["summed_from"] is not None:
                    line += (
                        f' <span style="color:{CURRENT};font-size:12px">'
                        f"({esc(t('summed', frm=_shape_text(e['summed_from']), to=_shape_text(e['shape'])))})"
                        f"</span>"
                    )
                sent.append(line)
            if not sent and not rec.skipped and not I.is_accumulate_grad(rec.node):
                sent.append(f'<span style="color:{MUTED}">{esc(t("nothing_sent"))}</span>')
            also = []
            if rec.accumulated is not None:
                leaf = rec.accumulated
                also.append(
                    _with_code(
                        t("acc_cell", leaf=row["accumulated"], before="\x00", after="\x01"),
                        self._value(rec.before[id(leaf)][2], TABLE_VALUES),
                        self._value(rec.after[id(leaf)][2], TABLE_VALUES),
                    )
                )
            for kind in row["hooks"]:
                also.append(esc(t("hook_cell", kind=t(_hook_key(kind)))))
            for r in rec.retained:
                also.append(
                    _with_code(
                        t("retained_cell", t=self._tensor_name(r), v="\x00"),
                        self._value(rec.after[id(r)][2], TABLE_VALUES),
                    )
                )
            if row["printed"]:
                also.append(esc(t("printed_cell", text=row["printed"].strip())))
            if row["skipped"]:
                also.append(esc(t("skipped_cell")))
            if row["freed"]:
                also.append(f'<span style="color:{MUTED}">{esc(t("freed_cell"))}</span>')
            cells.append(
                [
                    str(row["step"]),
                    f"<b>{esc(row['label'])}</b>",
                    "<br>".join(gin),
                    "<br>".join(sent),
                    "<br>".join(also),
                ]
            )
        title = t("table")
        if len(shown) > MAX_ROWS:
            title += " " + t("hidden_rows", n=len(shown) - MAX_ROWS)
        self.table_view.value = table_html(
            t("columns"),
            cells,
            title=title,
            css_class="lk-table",
            highlight={len(cells) - 1} if cells else set(),
            compact=True,
        )

    def _render_printed(self, shown) -> None:
        text = "".join(r.printed for r in shown)
        if self.error is not None and self.finished:
            text += self._error_printed
        if not text:
            self.output_view.value = ""
            return
        self.output_view.value = (
            f'<div style="font-size:12px;color:{MUTED};font-weight:600;text-transform:uppercase;'
            f'letter-spacing:.04em;margin:6px 0 3px 0">{esc(self._t("printed"))}</div>'
            f'<pre class="lk-printed-text" style="margin:0;padding:6px 10px;background:#fbfbfb;'
            f'border:1px solid #e1e4e8;border-radius:6px;font-family:{MONO};font-size:12.5px">'
            f"{esc(text.rstrip())}</pre>"
        )

    # -- sentences ----------------------------------------------------------------------
    def _join(self, items, join: str = "join", last: str = "and") -> str:
        items = list(items)
        if len(items) <= 1:
            return "".join(items)
        return self._t(join).join(items[:-1]) + self._t(last) + items[-1]

    def _explain(self, shown) -> str:
        t = self._t
        sep = _ZH_SEP[self.lang]
        loss = self.loss_name
        if self.error is not None and self.finished:
            msg = str(self.error)
            hint = ""
            if "implicitly created only for scalar" in msg:
                hint = t("hint_scalar", loss=loss)
            elif "second time" in msg:
                hint = t("hint_freed")
            elif "does not require grad" in msg:
                hint = t("hint_nograd", loss=loss)
            head = (
                t("error", k=len(self.records) + 1, stmt=self.statement)
                if self.records
                else t("error_start", stmt=self.statement)
            )
            return head + (sep + hint.strip() if hint else "")
        if not shown:
            if self.loss.grad_fn is None:
                start = t("start_leaf", loss=loss, g=self._start_gradient_text())
            else:
                why = t("why_vector") if self.gradient is not None else t("why_one", loss=loss)
                start = t(
                    "start", root=self.label(self.loss.grad_fn), loss=loss, g=self._start_gradient_text(), why=why
                )
            if self.records:  # after Reset: the real pass has run, the view replays it
                start += sep + t("reset_note", n=len(self.records)).strip()
            return start
        rec = shown[-1]
        parts = [self._step_sentence(rec)]
        if self.finished:
            grads = [t("grad_is", t=n, v=v if v is not None else "None") for n, v in self.grads.items()]
            done = (
                t("done", n=len(self.records), grads=t("sep").join(grads), stmt=self.statement)
                if grads
                else t("done_none", n=len(self.records))
            )
            if not self.retain_graph and any(r.freed for r in self.records):
                done += sep + t("done_freed").strip()
            parts.append(done)
        else:
            node, n_ready = self._next_node()
            if node is not None:
                parts.append(
                    (
                        t("next_many", node=self.label(node), n=n_ready)
                        if n_ready > 1
                        else t("next", node=self.label(node))
                    ).strip()
                )
        if self.cursor < len(self.records):
            parts.append(t("replayed", k=self.cursor, n=len(self.records)).strip())
        return sep.join(p for p in parts if p)

    def _start_gradient_text(self) -> str:
        if self.gradient is not None:
            return self._value(self.gradient)
        try:
            import leafkit

            return format_value(leafkit.ones_like(self.loss)) if self.loss.numel() == 1 else "1"
        except Exception:
            return "1"

    def _step_sentence(self, rec) -> str:
        t = self._t
        sep = _ZH_SEP[self.lang]
        node = rec.node
        if rec.skipped:
            return t("skipped", k=rec.index, node=self.label(node))
        extra = []
        if I.is_accumulate_grad(node):
            leaf = node.variable
            name = self.name_of(leaf, t("leaf"))
            g = rec.grad_outputs[0] if rec.grad_outputs else None
            hooked = "tensor hook" in rec.hooks
            if rec.accumulated is None:
                head = t("ran", k=rec.index, node=self.label(node), gin=self._value(g), added="", sent="").strip()
                extra.append(t("acc_off", leaf=name).strip())
            else:
                before = rec.before[id(leaf)][2]
                after = rec.after[id(leaf)][2]
                if hooked:  # the hook saw the gradient first and may have replaced it: say what .grad became
                    head = t(
                        "acc_hooked",
                        k=rec.index,
                        g=self._value(g),
                        leaf=name,
                        before=self._value(before),
                        after=self._value(after),
                        printed=self._printed(rec),
                    )
                else:
                    head = t(
                        "acc",
                        k=rec.index,
                        g=self._value(g),
                        leaf=name,
                        before=self._value(before),
                        after=self._value(after),
                    )
                if before is not None:
                    extra.append(t("acc_prev", leaf=name, before=self._value(before)).strip())
            if hooked and rec.accumulated is None:
                extra.insert(0, t("hooks", t=name, printed=self._printed(rec)).strip())
        else:
            gin = self._join(self._value(g) for g in rec.grad_outputs)
            added = ""
            if len(rec.contributions) > 1:
                added = t(
                    "added", n=len(rec.contributions), parts=" + ".join(self._value(g) for _, _, g in rec.contributions)
                )
            sends, summed = [], []
            for nxt, _nr, g, frm in rec.edges:
                target = self.label(nxt)
                sends.append(t("send", g=self._value(g), target=target))
                if frm is not None and g is not None:
                    summed.append(
                        t("send_summed", target=target, frm=_shape_text(frm), to=_shape_text(tuple(g.shape))).strip()
                    )
            sent = t("sent", sends=self._join(sends, "send_join", "send_and")) if sends else t("sent_nothing")
            if summed:
                sent += sep + sep.join(summed)
            head = t("ran", k=rec.index, node=self.label(node), gin=gin, added=added, sent=sent)
            for kind in rec.hooks:
                if kind == "tensor hook":
                    made = self._made.get((id(node), 0))
                    extra.append(t("hooks", t=made or self.label(node), printed=self._printed(rec)).strip())
                else:
                    extra.append(t("hook_node", kind=t(_hook_key(kind)), node=self.label(node), printed="").strip())
            for r in rec.retained:
                extra.append(t("retained", t=self.name_of(r, "?"), v=self._value(rec.after[id(r)][2])).strip())
            if rec.freed:
                extra.append(t("freed").strip())
            elif self.retain_graph and getattr(node, "_had_saved", False):
                extra.append(t("kept").strip())
        return sep.join([head, *extra])

    def _printed(self, rec) -> str:
        text = rec.printed.strip()
        return self._t("hook_printed", text=f"\u201c{text}\u201d") if text else ""

    # -- the drawing --------------------------------------------------------------------
    def _legend_html(self, lang: str) -> str:
        t = self._t

        def sw(fill, border="#555", style="solid", width=1.5):
            return (
                f'<span style="display:inline-block;width:14px;height:11px;background:{fill};border:{width}px '
                f'{style} {border};border-radius:3px;vertical-align:-1px;margin-right:4px"></span>'
            )

        items = [
            (sw("#ffe0b2", CURRENT, width=2.5), t("legend_now")),
            (sw(COLORS["backward"]), t("legend_done")),
            (sw("#ffffff", PENDING), t("legend_wait")),
            (sw("#ffffff", READY, "dashed", 2), t("legend_ready")),
            (sw(COLORS["leaf"]), t("legend_leaf")),
            (sw(OUTPUT_CSS), t("legend_out")),
            (sw(COLORS["freed"], PENDING, "dashed"), t("legend_freed")),
            *([(sw("#ffffff", "#555", "double", 3), t("legend_retains"))] if self._shows_retained else []),
            (f'<span style="color:{SENT};margin-right:4px;font-family:{MONO}">\u2193 [1.]</span>', t("legend_edge")),
        ]
        spans = "".join(
            f'<span style="white-space:nowrap;margin:0 12px 2px 0;display:inline-block">{s}{esc(x)}</span>'
            for s, x in items
        )
        return (
            f'<div class="lk-legend" style="font-family:{FONT};font-size:11.5px;color:{MUTED};'
            f'line-height:1.5;margin-top:4px">{spans}</div>'
        )

    def _draw(self) -> PassDrawing:
        t = self._t
        font = "Helvetica" if self.lang == "en" else CJK_FONTNAME
        model = Model(
            dict(rankdir="BT", nodesep="0.35", ranksep="0.4", fontname=font, fontsize="10"),
            dict(
                shape="box",
                style="filled,rounded",
                fontname=font,
                fontsize="10",
                margin="0.08,0.04",
                fillcolor="#ffffff",
                color=PENDING,
                fontcolor="#444444",
            ),
            dict(arrowsize="0.7", fontname=font, fontsize="9", dir="back", color=PENDING),
        )
        model.lang = self.lang
        shown = self.records[: self.cursor]
        done = {id(r.node): r for r in shown}
        current = shown[-1].node if shown else None
        ready = set(self._ready())
        grads = {tid: values for tid, (_tt, _obj, values) in self._state_at(self.cursor).items()}
        names = [self.loss_name]
        ids = []
        retained = False  # a node drawn with a double border: the legend explains it
        for k, fn in enumerate(self._order):
            rec = done.get(id(fn))
            attrs = {}
            if I.is_accumulate_grad(fn):
                var = fn.variable
                name = self.name_of(var)
                if name and name not in names:
                    names.append(name)
                head = f"{name or t('leaf')} {I.shape_str(var)}"
                g = grads.get(id(var))
                lines = [head, f".grad = {self._short(g)}"]
                attrs.update(fillcolor=COLORS["leaf"], color="#555555", fontcolor="#111111")
                kind = "leaf"
                text = f"{head}  .grad = {self._short(g)}"
            else:
                name = I.node_name(fn)
                made = self._made.get((id(fn), 0))
                lines = [name] + ([f"({made})"] if made else [])
                if made and made not in names:
                    names.append(made)
                for ref in list((getattr(fn, "_retain_refs", None) or {}).values()):
                    rt = ref() if callable(ref) else None
                    if rt is not None:
                        lines.append(f"{self._tensor_name(rt)}.grad = {self._short(grads.get(id(rt)))}")
                        attrs["peripheries"] = "2"
                        retained = True
                kind = "fn"
                text = " ".join(lines)
                if rec is not None:
                    attrs.update(fillcolor=COLORS["backward"], color="#555555", fontcolor="#111111")
            if rec is not None:
                mark = t("step_no", k=rec.index)
                if rec.node is current:
                    mark += " \u00b7 " + t("now")
                    attrs.update(
                        fillcolor="#ffe0b2" if kind == "fn" else attrs.get("fillcolor"),
                        color=CURRENT,
                        penwidth="3",
                        fontcolor="#111111",
                    )
                lines.append(mark)
                if rec.freed:
                    lines.append(t("freed_mark"))
                    if rec.node is not current:  # the node that runs now keeps its solid orange frame
                        attrs["style"] = "filled,rounded,dashed"
                        attrs["fillcolor"] = COLORS["freed"]
                if rec.skipped:
                    lines.append(t("skipped_mark"))
                    attrs["style"] = "filled,rounded,dotted"
                text += f" [{mark}]"
            elif k in ready:
                lines.append(t("ready"))
                attrs.update(color=READY, style="filled,rounded,dashed", penwidth="2")
                text += f" [{t('ready')}]"
            label = "\\n".join(_dot_esc(x) for x in lines)
            ids.append(model.add_node(kind, name or "", label, text, **attrs))
        # edges, drawn from input to consumer (dir=back: the arrow points the way the gradient flows)
        sent = {}
        for rec in shown:
            for nxt, _nr, g, frm in rec.edges:
                sent.setdefault((id(rec.node), id(nxt)), []).append((g, frm, rec.node is current))
        for k, kids in enumerate(self._children):
            fn = self._order[k]
            seen_pairs: dict = {}
            for c, _nr in kids:
                if c is None:
                    continue
                key = (id(fn), id(self._order[c]))
                j = seen_pairs.get(key, 0)
                seen_pairs[key] = j + 1
                carried = sent.get(key, [])
                if j < len(carried):
                    g, frm, now = carried[j]
                    label = self._short(g)
                    if frm is not None and g is not None:
                        label += "\\n" + _dot_esc(t("summed", frm=_shape_text(frm), to=_shape_text(tuple(g.shape))))
                    attrs = dict(
                        label=" " + label + " ",
                        color=CURRENT if now else SENT,
                        fontcolor=CURRENT if now else SENT,
                        penwidth="2.2" if now else "1.3",
                    )
                else:
                    attrs = {}
                model.add_edge(ids[c], ids[k], FLOW, **attrs)
        # the tensor backward starts from, on top
        out_name = self.loss_name
        root_attrs = dict(fillcolor=COLORS["output"], color="#555555", fontcolor="#111111")
        if self.loss.grad_fn is None:
            root_attrs["style"] = "filled,rounded" if self.loss.requires_grad else "rounded,dashed"
        o = model.add_node(
            "output",
            out_name,
            _dot_esc(f"{out_name} {I.shape_str(self.loss)}"),
            f"{out_name} {I.shape_str(self.loss)} ({t('output')})",
            **root_attrs,
        )
        if self._order:
            started = bool(shown)
            model.add_edge(
                ids[0],
                o,
                FLOW,
                label=" " + _dot_esc(self._start_label()) + " ",
                color=SENT if started else PENDING,
                fontcolor=SENT if started else PENDING,
            )
        self._shows_retained = retained
        dg = to_digraph(model)
        drawing_state = {
            "variables": names,
            "current": None if current is None else self.label(current),
            "done": [self.label(r.node) for r in shown],
            "ready": [self.label(self._order[k]) for k in sorted(ready)],
        }
        return PassDrawing(dg, drawing_state)

    def _start_label(self) -> str:
        if self.gradient is not None:
            return self._short(self.gradient)
        try:
            import leafkit

            if self.loss.numel() == 1:
                return self._short(leafkit.ones_like(self.loss))
        except Exception:
            pass
        return "?"


def _repr(t):
    """The tensor's repr (``None`` stays None): what the rows hold, in every language."""
    return None if t is None else format_value(t)


def _with_code(text: str, *values) -> str:
    """``text`` escaped, with its placeholders ``\\x00``, ``\\x01`` ... replaced by ``values`` in the code font."""
    out = esc(text)
    for i, v in enumerate(values):
        out = out.replace(chr(i), mono(v))
    return out


def _hook_key(kind: str) -> str:
    """The TEXT key of a hook kind of :class:`~leafkit.autograd.engine.BackwardStep` (``"tensor hook"``)."""
    return kind.replace(" ", "_")


def _dot_esc(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace('"', '\\"')


def mono(s) -> str:
    """Code font, keeping the value's layout (``pre-wrap``).

    A value breaks only at its spaces, and only when its column has no room for it: five columns of
    tensors are wider than the table's half of the explorer, and a value that never broke (``pre``)
    pushed the last column out of sight.  The padding after an opening bracket (``tensor([ 1.,``) is
    kept with it, so that no line ends in a bare ``tensor([``.
    """
    text = re.sub(r"(?<=[\[(]) +", lambda m: "\u00a0" * len(m.group(0)), esc(str(s)))
    return f'<code style="font-family:{MONO};font-size:12.5px;background:none;white-space:pre-wrap">{text}</code>'
