"""The words every explorer shares, per language (each explorer keeps its own in its ``TEXT``).

An explorer's :meth:`~leafkit.widgets._explorer.Explorer._t` looks a key up in the explorer's own
``TEXT`` first, then here.  ``"colon"`` is how a label meets its value: ``": "`` in English, the
full-width ``"："`` in Chinese, so that printed labels never mix the two.
"""

from __future__ import annotations

__all__ = ["BASE_TEXT"]

#: Words every explorer shares, per language.
BASE_TEXT = {
    "en": {
        "why": "Why: ",
        "problem_title": "The explorer hit a problem (not your code)",
        "problem_hint": "Change a control or run the cell again.",
        "no_dot_missing": "No drawing: Graphviz's dot is missing",
        "no_dot_failed": "No drawing: Graphviz's dot failed",
        "plain_repr": "<{name}: an interactive explorer; it needs a running Jupyter kernel with ipywidgets>",
        "legend_leaf": "leaf",
        "legend_nonleaf": "NON-LEAF (made by an op)",
        "legend_nograd": "requires_grad=False",
        "legend_fn": "backward node (grad_fn)",
        "legend_freed": "freed by backward()",
        "legend_new": "new / changed since last step",
        "legend_flip": "is_leaf flipped",
        "legend_share": "shares storage (detach)",
        "cuda_real": "cuda = a real GPU through CuPy ({name})",
        "cuda_simulated": "cuda is simulated in host memory (no GPU here); the autograd rules are the same",
        "cuda_off": "cuda is unavailable (simulation turned off with LEAFKIT_SIMULATE_CUDA=0)",
        "cuda_unknown": "cuda status unknown ({error})",
        "badge_cupy": "real GPU",
        "badge_simulated": "simulated GPU",
        "badge_none": "no cuda",
        "reset": "Reset",
        "colon": ": ",
        "simulated_device": "{device} (simulated)",
    },
    "zh": {
        "why": "为什么：",
        "problem_title": "探索器出了问题（不是你的代码的问题）",
        "problem_hint": "换一个选项，或者重新运行这个单元格。",
        "no_dot_missing": "没有图：没有安装 Graphviz 的 dot",
        "no_dot_failed": "没有图：Graphviz 的 dot 出错了",
        "plain_repr": "<{name}：交互式探索器，需要正在运行的 Jupyter 内核和 ipywidgets>",
        "legend_leaf": "叶子张量",
        "legend_nonleaf": "非叶子张量（由运算产生）",
        "legend_nograd": "requires_grad=False",
        "legend_fn": "反向节点（grad_fn）",
        "legend_freed": "已被 backward() 释放",
        "legend_new": "上一步之后新出现 / 有变化",
        "legend_flip": "is_leaf 变了",
        "legend_share": "共享存储（detach）",
        "cuda_real": "cuda = 通过 CuPy 使用的真实 GPU（{name}）",
        "cuda_simulated": "cuda 是在主机内存里模拟的（这里没有 GPU），自动求导的规则完全一样",
        "cuda_off": "cuda 不可用（已用 LEAFKIT_SIMULATE_CUDA=0 关掉了模拟）",
        "cuda_unknown": "cuda 状态未知（{error}）",
        "badge_cupy": "真实 GPU",
        "badge_simulated": "模拟 GPU",
        "badge_none": "没有 cuda",
        "reset": "重置",
        "colon": "：",
        "simulated_device": "{device}（模拟）",
    },
}
