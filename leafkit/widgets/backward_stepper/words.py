"""Every word ``BackwardStepper`` writes, per language (its ``TEXT``).

The sentences (:mod:`.sentences`), the table and the buttons (:mod:`.widget`) and the drawing
(:mod:`.drawing`) read their words here; the Chinese sentences mark code with backticks.  Code,
node names and printed tensors are never translated.
"""

from __future__ import annotations

__all__ = ["TEXT", "SEP"]

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

#: How sentence pieces join: English needs a space, Chinese does not.
SEP = {"en": " ", "zh": ""}
