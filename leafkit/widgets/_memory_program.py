"""MemoryExplorer's program and its run, without ipywidgets: the code it shows, and what that code keeps.

:func:`memory_program` writes the code of one state (a seeded MLP of three Linear+SiLU blocks and
a Linear head, any block under ``torch.utils.checkpoint.checkpoint``, saved tensors kept as they
are, as float16 copies through ``saved_tensors_hooks`` or on the CPU with ``save_on_cpu``);
:func:`run_memory` runs it with :func:`~leafkit.widgets._program.run_program`, reads what each node
keeps before ``loss.backward()`` (:func:`leafkit.viz.memory.saved_memory`) and which modules run
again during backward (forward pre-hooks).  The explorer (``memory_explorer.py``) and its oracle
(``_memory_oracle.py``) both use it.
"""

from __future__ import annotations

import leafkit
from leafkit.viz.memory import memory_dot, saved_memory

from ._program import error_text, run_program

__all__ = ["BLOCKS", "HOOKS", "MemoryResult", "hooks_available", "memory_program", "run_memory"]

BLOCKS = ((0, 2), (2, 4), (4, 6))
HEAD = 6
#: How saved tensors are kept: as they are, a float16 copy through saved_tensors_hooks, save_on_cpu.
HOOKS = ("none", "float16", "cpu")
#: The model's layers, as the shown code builds them.
WIDTHS = (16, 32, 32, 32, 1)
BATCH = 64


def hooks_available(torch=leafkit) -> bool:
    """Whether ``torch.autograd.graph`` has ``saved_tensors_hooks`` and ``save_on_cpu``."""
    graph = getattr(torch.autograd, "graph", None)
    return hasattr(graph, "saved_tensors_hooks") and hasattr(graph, "save_on_cpu")


def _block_name(b: int) -> str:
    a, c = BLOCKS[b]
    return f"model[{a}:{c}]"


def memory_program(checkpointed=(False, False, False), hooks="none") -> tuple:
    """``(setup statements, forward statements, backward statement)`` of one state.

    Examples
    --------
    >>> setup, fwd, bwd = memory_program((True, False, False), "none")
    >>> print(fwd[0])
    h = torch.utils.checkpoint.checkpoint(model[0:2], x, use_reentrant=False)
    """
    if hooks not in HOOKS:
        raise ValueError(f"hooks must be one of {HOOKS}, got {hooks!r}")
    if len(checkpointed) != len(BLOCKS):
        raise ValueError(f"checkpointed must give {len(BLOCKS)} booleans, got {checkpointed!r}")
    w = WIDTHS
    setup = [
        "torch.manual_seed(0)",
        "model = torch.nn.Sequential(\n"
        f"    torch.nn.Linear({w[0]}, {w[1]}), torch.nn.SiLU(),\n"
        f"    torch.nn.Linear({w[1]}, {w[2]}), torch.nn.SiLU(),\n"
        f"    torch.nn.Linear({w[2]}, {w[3]}), torch.nn.SiLU(),\n"
        f"    torch.nn.Linear({w[3]}, {w[4]}),\n"
        ")",
        f"x = torch.randn({BATCH}, {w[0]})",
    ]
    if hooks == "float16":
        setup += [
            "def pack(t):\n    return t.to(torch.float16)",
            "def unpack(t):\n    return t.to(torch.float32)",
        ]
    lines = []
    for b, on in enumerate(checkpointed):
        arg = "x" if b == 0 else "h"
        if on:
            lines.append(f"h = torch.utils.checkpoint.checkpoint({_block_name(b)}, {arg}, use_reentrant=False)")
        else:
            lines.append(f"h = {_block_name(b)}({arg})")
    lines.append(f"loss = model[{HEAD}](h).pow(2).mean()")
    if hooks == "none":
        fwd = lines
    else:
        head = (
            "with torch.autograd.graph.saved_tensors_hooks(pack, unpack):"
            if hooks == "float16"
            else "with torch.autograd.graph.save_on_cpu():"
        )
        fwd = [head + "".join("\n    " + ln for ln in lines)]
    return setup, fwd, "loss.backward()"


class MemoryResult:
    """What :func:`run_memory` observed.

    Attributes
    ----------
    code : str
        The program shown.
    memory : leafkit.viz.memory.SavedMemory or None
        Each node's saved tensors and their bytes, read before ``loss.backward()``.
    recomputed : list of str
        The modules whose forward ran again during backward (``"model[0] Linear"``), in order.
    error : str or None
        ``"Type: message"`` when the code raised.
    namespace : dict
    """

    def __init__(self, code):
        self.code = code
        self.memory = None
        self.recomputed: list = []
        self.error = None
        self.namespace: dict = {}
        self.drawing = None


def _instrument(model, state: dict) -> None:
    """Forward hooks: each module's output node while the forward runs, and which modules run in backward."""
    for i, m in enumerate(model):
        label = f"model[{i}] {type(m).__name__}"

        def pre(mod, args, i=i, label=label):
            if state["phase"] == "backward":
                state["recomputed"].append(label)

        def post(mod, args, out, i=i):
            if state["phase"] == "forward":
                state["outputs"][i] = out

        m.register_forward_pre_hook(pre)
        m.register_forward_hook(post)


def _block_nodes(state: dict, checkpointed) -> dict:
    """``{node: block name}`` for the nodes made by the modules of the checkpointed blocks."""
    out = {}
    for b, on in enumerate(checkpointed):
        if not on:
            continue
        a, c = BLOCKS[b]
        for i in range(a, c):
            t = state["outputs"].get(i)
            fn = getattr(t, "grad_fn", None)
            if fn is None:
                continue
            out[fn] = _block_name(b)
            for child, _ in fn.next_functions:  # the weight's TBackward0
                if child is not None and not hasattr(child, "variable"):
                    if all(g is None or hasattr(g, "variable") for g, _ in child.next_functions):
                        out[child] = _block_name(b)
    return out


def _pack_of(torch, hooks: str, ns: dict):
    """What the hooks keep, for :func:`saved_memory` (the shown ``pack``, or save_on_cpu's CPU copy)."""
    if hooks == "float16":
        return ns["pack"]
    if hooks == "cpu":  # save_on_cpu without pin_memory packs (t.device, t.cpu())
        return lambda t: (t.device, t.cpu())
    return None


def run_memory(checkpointed=(False, False, False), hooks="none", torch_module=None, draw=False, lang="en"):
    """Run the program of one state, read what the graph keeps, then run ``loss.backward()``.

    Parameters
    ----------
    checkpointed : tuple of 3 bool
        Which blocks run under ``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``.
    hooks : {"none", "float16", "cpu"}
    torch_module : module, optional
        leafkit (default) or real PyTorch.
    draw : bool
        Also draw the graph (:func:`leafkit.viz.memory.memory_dot`) before backward.

    Returns
    -------
    MemoryResult
    """
    torch = leafkit if torch_module is None else torch_module
    setup, fwd, bwd = memory_program(checkpointed, hooks)
    res = MemoryResult("\n".join(setup + fwd + [bwd]))
    state = {"phase": "setup", "outputs": {}, "recomputed": []}

    def after(i, ns):
        if i == 1:
            _instrument(ns["model"], state)

    run = run_program(setup, torch, after_each=after)
    if run.error is None:
        state["phase"] = "forward"
        run = run_program(fwd, torch, namespace=run.namespace)
    ns = res.namespace = run.namespace
    if run.error is not None:
        res.error = error_text(run.error[1])
        return res
    state["phase"] = "done"
    blocks = _block_nodes(state, checkpointed)
    extra = []
    for b, on in enumerate(checkpointed):
        if on:
            extra.append((_block_name(b), ns["x"] if b == 0 else state["outputs"][BLOCKS[b][0] - 1]))
    params = dict(ns["model"].named_parameters())
    res.memory = saved_memory(
        ns["loss"], params=params, recomputed=blocks, pack=_pack_of(torch, hooks, ns), extra=extra
    )
    if draw:
        res.drawing = memory_dot(ns["loss"], res.memory, params=params, legend=False, lang=lang)
    state["phase"] = "backward"
    back = run_program([bwd], torch, namespace=ns)
    state["phase"] = "done"
    if back.error is not None:
        res.error = error_text(back.error[1])
    res.recomputed = list(state["recomputed"])
    return res
