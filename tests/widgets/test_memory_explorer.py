"""MemoryExplorer and leafkit.viz.memory: what a graph keeps, counted by reading the graph and measured by pack hooks.

The explorer's counting (:func:`leafkit.viz.memory.saved_memory`, on the nodes' ``_saved_*``
tensors) and its oracle's measurement (every pack hook wrapped) are two ways to the same number;
here both run on real PyTorch, for every state of the explorer, hooks included, so the counting
rules (a reference is kept once per storage, a parameter's view adds nothing, a hook's copy is
kept once per save, ``save_on_cpu`` of a CPU tensor is the tensor itself) are PyTorch's.
"""

from __future__ import annotations

import itertools

import pytest

import leafkit
from leafkit.viz.memory import format_bytes, memory_dot, saved_memory
from leafkit.widgets._memory_oracle import measure
from leafkit.widgets._memory_program import HOOKS, hooks_available, memory_program, run_memory
from leafkit.widgets.memory_explorer import MemoryExplorer, _rows

STATES = [(ck, hooks) for hooks in HOOKS for ck in itertools.product([False, True], repeat=3)]


@pytest.mark.parity
@pytest.mark.parametrize("checkpointed,hooks", STATES, ids=lambda v: str(v))
def test_the_counting_is_what_pytorchs_pack_hooks_measure(checkpointed, hooks, real_torch):
    res = run_memory(checkpointed, hooks, torch_module=real_torch)
    assert res.error is None
    got = measure(real_torch, res.code, checkpointed, hooks)
    assert got["error"] is None
    assert res.memory.kept_bytes == got["kept_bytes"]
    shown = [(r["node"], r["attr"], tuple(r["shape"])) for r in _rows(res.memory) if r["attr"]]
    assert [s for s in shown if s[0] != "checkpoint"] == got["saved"]
    assert res.recomputed == got["recomputed"]
    # each checkpointed block runs its two modules again in backward, the others never
    assert len(res.recomputed) == 2 * sum(checkpointed)


def test_the_bytes_by_hand(real_torch):
    """No checkpoint, no hooks: x (64x16), three SiLU inputs and the inputs of the three Linears after
    the first (64x32), the pow's input (64x1), all float32; the weights' views add nothing."""
    res = run_memory((False, False, False), "none", torch_module=real_torch)
    assert res.memory.kept_bytes == 4 * (64 * 16 + 6 * 64 * 32 + 64)
    f16 = run_memory((False, False, False), "float16", torch_module=real_torch)
    weights = 32 * 32 + 32 * 32 + 32 * 1  # mat2 of the three Linears after the first: copied by the hook
    assert f16.memory.kept_bytes == 2 * (64 * 16 + 6 * 64 * 32 + 64 + weights)


@pytest.mark.parity
def test_leafkit_gives_the_same_rows_as_pytorch(real_torch):
    for ck in itertools.product([False, True], repeat=3):
        hooks = "float16" if hooks_available() else "none"
        mine, theirs = run_memory(ck, hooks), run_memory(ck, hooks, torch_module=real_torch)
        assert _rows(mine.memory) == _rows(theirs.memory)
        assert mine.recomputed == theirs.recomputed


def test_the_drawing_reads_real_torch_and_marks_the_checkpointed_block(real_torch):
    res = run_memory((False, True, False), "none", torch_module=real_torch, draw=True)
    src = res.drawing.source
    assert "cluster_model[2:4]" in src and "recomputed in backward" in src
    assert "8,192 B" in src and "a parameter" in src
    assert res.drawing.state["kept_bytes"] == res.memory.kept_bytes
    zh = run_memory((False, True, False), "none", draw=True, lang="zh").drawing
    assert "反向传播时重算" in zh.source


def test_saved_memory_shares_a_storage_once():
    x = leafkit.randn(8, 4, requires_grad=True)
    y = x.tanh()  # TanhBackward0 saves its result y
    z = (y * y).sum()  # MulBackward0 saves y twice: one storage
    mem = saved_memory(z)
    assert mem.kept_bytes == 8 * 4 * 4
    shared = [e for e in mem.entries if e.shared_with]
    assert len(shared) == 2 and all(e.nbytes == 0 for e in shared)
    with pytest.raises(TypeError, match="must be tensors"):
        saved_memory([x, 3])
    assert "digraph" in memory_dot(z, mem).source


def test_format_bytes():
    assert format_bytes(8192) == "8,192 B"
    assert format_bytes(3 << 20) == "3.00 MiB"


def test_bad_arguments():
    with pytest.raises(ValueError, match="hooks must be one of"):
        memory_program((False, False, False), "bf16")
    with pytest.raises(ValueError, match="three|3 booleans"):
        MemoryExplorer(checkpointed=(True,))
    with pytest.raises(ValueError, match="hooks must be one of"):
        MemoryExplorer(hooks="disk")


def test_the_explorer_shows_totals_and_recomputed_modules(no_dot):
    ex = MemoryExplorer(checkpointed=(True, False, False))
    assert ex.internal_errors == [] and ex.message is None
    assert ex.recomputed == ["model[0] Linear", "model[1] SiLU"]
    assert format_bytes(ex.kept_bytes) in ex.totals_view.value
    assert ex.act("checkpoint:0", False)
    assert ex.recomputed == [] and "none" in ex.totals_view.value
