"""Device helpers shared by the drawing tests (a module of its own: test files must not import conftest)."""

from __future__ import annotations


def to_other_device(torch, t):
    """Move ``t`` "to the other device": ``.cuda()`` where cuda exists (leafkit
    always, simulated without a GPU), else a float64 copy, which makes the same
    autograd point (a differentiable copy is a ``ToCopyBackward0`` non-leaf)."""
    if has_cuda(torch):
        return t.cuda()
    return t.to(torch.float64)


def has_cuda(torch) -> bool:
    """A real GPU, or leafkit's cuda (simulated in host memory without one)."""
    return bool(torch.cuda.is_available() or getattr(torch.cuda, "backend", lambda: None)() is not None)
