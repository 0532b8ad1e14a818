#!/usr/bin/env python3
"""Build the lesson notebooks in lessons/ from the text in this file.

    python scripts/build_lessons.py              # write lessons/*.ipynb (no outputs)
    python scripts/build_lessons.py --execute    # write, then run every lesson and store its outputs
    python scripts/build_lessons.py --execute 01 # only lessons whose file name starts with 01

The notebooks are generated, never edited by hand, so that they are
reproducible: cell ids are fixed, stored outputs come from really running the
notebook (nbclient, working directory lessons/), and widget state is not
stored (``metadata.widgets`` is removed).

Cell tags
---------
``parity``
    An experiment cell.  tests/test_lessons_parity.py runs these cells again
    on real PyTorch (``import leafkit as torch`` becomes ``import torch``) and
    compares what they print.
``nbval-ignore-output``
    Only on cells that display a widget (the model id and the widget's look
    are not stable).  Every other output is checked by ``pytest --nbval``.
``exercise`` / ``check``
    The learner's answer cell and the cell that checks it.

Run it with the project's interpreter (``.venv/bin/python``): executing needs
leafkit, ipykernel, matplotlib and scikit-learn.
"""
from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


class Lesson:
    """An ordered list of cells that becomes one notebook."""

    def __init__(self, filename: str):
        self.filename = filename
        self.prefix = filename.split("_", 1)[0]
        self.cells: list = []

    def _id(self) -> str:
        return f"l{self.prefix}-{len(self.cells):02d}"

    def md(self, text: str) -> None:
        cell = nbformat.v4.new_markdown_cell(textwrap.dedent(text).strip("\n"))
        cell.id = self._id()
        self.cells.append(cell)

    def code(self, text: str, *tags: str) -> None:
        cell = nbformat.v4.new_code_cell(textwrap.dedent(text).strip("\n"))
        cell.id = self._id()
        if tags:
            cell.metadata["tags"] = list(tags)
        self.cells.append(cell)

    def parity(self, text: str) -> None:
        """An experiment: its printed lines must match real PyTorch's."""
        self.code(text, "parity")

    def widget(self, text: str) -> None:
        """A cell that displays an explorer widget (its output is not compared)."""
        self.code(text, "nbval-ignore-output")

    def notebook(self):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata["language_info"] = {"name": "python"}
        nb.cells = self.cells
        return nb


# Shared snippets -------------------------------------------------------------------------------

READ_GRAD = '''
import warnings

def show_grad(name, t):
    """Print t.grad. If PyTorch warns while reading it, print the warning's first sentence too."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grad = t.grad
    print(f"{name}.grad:", grad)
    for w in caught:
        print(f"  ({w.category.__name__}: {str(w.message).split('. ')[0]}.)")
'''

CHECK_HELPER = '''
def check(answer, truth, right, hint, same=None):
    """Compare your answer with what the code really does, and say right or wrong."""
    if answer is None:
        print("Not yet: replace None with your answer, then run this cell again.")
        return
    try:
        ok = same(answer, truth) if same else answer == truth
    except (TypeError, ValueError):   # an answer of the wrong kind, e.g. a number instead of a list
        ok = False
    print(("Right! " + right) if ok else ("Not quite. " + hint))
'''


def exercises_intro(lesson: Lesson, n: int) -> None:
    lesson.md(f"""
    ## Exercises (练习)

    There are {n} exercises. Each has an **answer cell** (change it) and a **check cell**
    (just run it). The check cell runs the real code and compares the result with your
    answer, so it never gives away more than "right" or a hint. Until you answer, it says
    *Not yet*.
    """)
    lesson.code(CHECK_HELPER)


# ================================================================================================
# 00 start here
# ================================================================================================
def lesson_00() -> Lesson:
    L = Lesson("00_start_here.ipynb")
    L.md("""
    # Start here: leaf tensors and the leafkit lessons

    PyTorch computes gradients for you. Every time you compute with a tensor that
    *requires grad*, PyTorch writes the operation down in a **computational graph
    (计算图)**. Calling `.backward()` walks that graph from the result back to the start:
    this is **backpropagation (反向传播)**. The tensors at the start of the graph, the ones
    you made yourself, are the **leaf tensors (叶子张量)**, and they are where the
    **gradients (梯度)** end up, in their `.grad` attribute.

    Most surprises with autograd come from one question: *is this tensor a leaf?*
    These lessons answer it with small experiments that you run, change and predict.

    The experiments come from three Chinese articles about leaf tensors:

    | article | what it covers | lesson |
    |---|---|---|
    | "PyTorch——叶子张量" | the rules for `is_leaf`, devices, gradients of intermediate tensors | 1 |
    | "PyTorch leaf node" | which chains of `clone()`, `detach()`, `.cuda()` still give a leaf | 2 |
    | "Pytorch基础：Tensor的detach()方法" | `requires_grad`, `grad_fn`, `no_grad`, `retain_grad`, `detach()` | 3 |

    The facts and the experiments are theirs; the text and the code here are new.
    Where an article printed something that PyTorch does not print, the lesson says so.
    """)
    L.md("""
    ## How this kit works

    * **Run a cell** with <kbd>Shift</kbd>+<kbd>Enter</kbd>. Run a whole lesson with
      *Run → Run All Cells*. Cells depend on the cells above them, so run them in order.
    * Every lesson starts with `import leafkit as torch`. **leafkit** is a small autograd
      engine written with NumPy that copies PyTorch's API and PyTorch's rules for leaves,
      `grad_fn`, `.grad`, warnings and error messages. So the code you read is PyTorch code:
      change the first line to `import torch` and the experiments print the same lines.
      (Those that use `.cuda()` or `device="cuda"` need a GPU for that in real PyTorch;
      without one, `.to("cpu")` on a CPU tensor is not even a copy, see lesson 1.) A test in
      this repository checks exactly that, against real PyTorch. The digits training at the
      end of lesson 4 is the exception: its model needs `digits.make_model(..., lib=torch)`,
      and PyTorch's random starting weights differ from leafkit's, so the losses differ a
      little while the behaviour is the same.
    * **No GPU needed.** Some experiments use `.cuda()`. With an NVIDIA GPU and CuPy
      installed, leafkit really uses the GPU. Without one, it *simulates* a GPU in ordinary
      memory: `.cuda()` still makes a separate copy that reports `device='cuda:0'`, and the
      leaf rules are the same as on a real GPU.
    * **Drawings.** `leafkit.viz.draw(...)` draws your variables and the graph between them;
      `leafkit.viz.make_dot(...)` draws the backward graph the way the `torchviz` package
      does. Both also work on real PyTorch tensors.
    * **Explorers** are small interactive panels (ipywidgets): you tick boxes and pick
      operations, and they show the resulting tensor and its graph.
    """)
    L.md("""
    ## Words you will meet (术语)

    | English | 中文 | meaning |
    |---|---|---|
    | tensor | 张量 | an array of numbers that PyTorch computes with |
    | leaf tensor | 叶子张量 | `is_leaf == True`: made by you, or not requiring grad |
    | non-leaf tensor | 非叶子张量 | the result of an operation on a tensor that requires grad |
    | computational graph | 计算图 | the record of operations that `backward()` walks |
    | gradient | 梯度 | how much the result changes when an input changes a little |
    | backpropagation | 反向传播 | computing gradients from the output back to the leaves |
    | chain rule | 链式法则 | multiply the local derivatives along the path |
    | `grad_fn` | 梯度函数 | the graph node that made a non-leaf (for example `MulBackward0`) |
    | hook | 钩子 | a function called with a gradient during backpropagation |
    | parameter | 参数 | a weight of a model; a leaf that requires grad (unless you freeze it) |
    | optimizer | 优化器 | updates the parameters from their `.grad` |
    """)
    L.md("""
    ## A first look

    `w` is made by us, so it is a leaf. `y` is made by operations on `w`, so it is not a
    leaf, and its `grad_fn` names the last operation. After `y.backward()`, the gradient
    dy/dw arrives in `w.grad`.
    """)
    L.parity("""
    import leafkit as torch

    w = torch.tensor([1.0, 2.0], requires_grad=True)   # made by us: a leaf
    y = (w * 3).sum()                                   # made by operations: not a leaf

    print("w.is_leaf:", w.is_leaf, "  w.grad_fn:", w.grad_fn)
    print("y.is_leaf:", y.is_leaf, "  y.grad_fn:", y.grad_fn.name())

    y.backward()          # backpropagation: dy/dw lands in w.grad
    print("w.grad:", w.grad)
    """)
    L.md("""
    Here is the same thing as a drawing. Light blue boxes are leaves, green boxes with a red
    **NON-LEAF** badge were made by an operation, and the rounded boxes between them are the
    backward nodes (`grad_fn`) that `backward()` walks through. A dashed node marked *freed*
    has already been used by a backward pass, which released the values it had saved.
    (Lesson 1 also shows `make_dot`, which uses the colours of the `torchviz` package
    instead: there, green marks the output.)
    """)
    L.code("""
    from leafkit.viz import draw

    draw(w=w, y=y)
    """)
    L.md("""
    ## The explorers

    | explorer | lesson | what you try |
    |---|---|---|
    | `LeafExplorer` | 0, 1 | switch `requires_grad` on at creation or after, chain up to three steps (`clone()`, `detach()`, `cuda()`, `to('cpu')`, `+ 2`, `* 3`) and watch `is_leaf` at every step (`to('cpu')` on a tensor that is already on the CPU returns that same tensor) |
    | `LeafQuiz` | 2 | predict `is_leaf` and `requires_grad` for the article's eleven tensors before you see the answer |
    | `GradModeExplorer` | 3 | `requires_grad` of two inputs, an operator, and `no_grad()` on or off: does the result require grad, what is its `grad_fn`, what does `backward()` do? |
    | `BackwardExplorer` | 3 | `retain_grad()`, a hook, `retain_graph` and repeated `backward()` on a chain x → y → z → t: which `.grad` fields fill, and how they add up |
    | `DetachExplorer` | 3 | `y = x.detach()` shares memory (the same storage): edit one in place and watch the other, and see when backward refuses |

    Here is the first one. It starts with the program `t = torch.tensor([1.0], requires_grad=True).cuda().detach()`.
    Change the steps and the checkbox, and watch the table, the drawing and the sentence below them.
    """)
    L.widget("""
    from leafkit.widgets import LeafExplorer

    LeafExplorer()
    """)
    L.md("""
    ## The lessons

    | # | notebook | you learn | source article |
    |---|---|---|---|
    | 0 | [`00_start_here.ipynb`](00_start_here.ipynb) | this page: how the kit works | |
    | 1 | [`01_leaf_tensors.ipynb`](01_leaf_tensors.ipynb) | the rules for `is_leaf`; copying to another device with `.cuda()` or `.to()` makes a non-leaf; reading the gradient of an intermediate tensor with `retain_grad()` or a hook | "PyTorch——叶子张量" |
    | 2 | [`02_clone_detach_cuda.ipynb`](02_clone_detach_cuda.ipynb) | a prediction game: which of eleven `clone`/`detach`/`cuda` chains is a leaf, why, and the safe way to build a leaf | "PyTorch leaf node" |
    | 3 | [`03_detach_and_grad_modes.ipynb`](03_detach_and_grad_modes.ipynb) | `requires_grad`, `grad_fn`, `no_grad()`, the "does not require grad" error, leaves in `nn.Linear`, `retain_grad()`, `detach()` sharing memory | "Pytorch基础：Tensor的detach()方法" |
    | 4 | [`04_leaves_in_training.ipynb`](04_leaves_in_training.ipynb) | parameters are leaves; optimizers only update leaves; the `.cuda()` trap; training a small network on handwritten digits | |
    """)
    exercises_intro(L, 2)
    L.md("""
    ### Exercise 1

    `v` is made by us without `requires_grad`, and `u` is computed from it:
    ```python
    v = torch.tensor([1.0, 2.0])
    u = v * 3
    ```
    Is `u` a leaf? Set `answer_1` to `True` or `False`.
    """)
    L.code("""
    answer_1 = None   # True or False
    """, "exercise")
    L.code("""
    v = torch.tensor([1.0, 2.0])
    u = v * 3
    check(answer_1, u.is_leaf,
          right="u does not require grad, and every tensor that does not require grad is a leaf: "
                "nothing was recorded, so there is no graph to be a non-leaf of.",
          hint="Look at requires_grad first. Does v require grad? Then was the multiplication recorded?")
    """, "check")
    L.md("""
    ### Exercise 2

    For `w = torch.tensor([1.0, 2.0], requires_grad=True)` and `y = (w * 3).sum()`,
    what does `w.grad` hold after `y.backward()`? Write it as a list of two numbers,
    for example `[0.5, 0.5]`.
    """)
    L.code("""
    answer_2 = None   # a list of two numbers
    """, "exercise")
    L.code("""
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w * 3).sum()
    y.backward()
    check(answer_2, w.grad.tolist(),
          right="y = 3*w[0] + 3*w[1], so dy/dw[0] = dy/dw[1] = 3.",
          hint="Write y out as a sum and take the derivative with respect to each element of w.",
          same=lambda a, t: len(a) == len(t) and all(abs(float(x) - y) < 1e-6 for x, y in zip(a, t)))
    """, "check")
    L.md("Next: **[Lesson 1: leaf tensors](01_leaf_tensors.ipynb)**.")
    return L


# ================================================================================================
# 01 leaf tensors (seed 000)
# ================================================================================================
def lesson_01() -> Lesson:
    L = Lesson("01_leaf_tensors.ipynb")
    L.md("""
    # Lesson 1: leaf tensors (叶子张量)

    **Source article:** "PyTorch——叶子张量" (PyTorch: leaf tensors). The rules and the two
    experiments below come from that article; the text and code are written for this kit.

    You will learn:
    1. the two kinds of leaf tensor, and what follows from being one;
    2. why copying a tensor that requires grad to *another* device (`.cuda()` on a CPU
       tensor, `.to("cpu")` on a GPU tensor) gives a **non-leaf**;
    3. how to read the gradient of an intermediate tensor, with `retain_grad()` or a hook,
       and why PyTorch prints `8.0` where the article's comments say `16.0`.
    """)
    L.parity("""
    import leafkit as torch
    """)
    L.md("""
    ## 1. The rules

    A tensor is a **leaf tensor (叶子张量)** when `tensor.is_leaf` is `True`. There are two
    kinds (the article's 类型一 and 类型二):

    1. **Every tensor with `requires_grad=False`.** Nothing about it is recorded, so it can
       only sit at the edge of a computational graph (计算图).
    2. **A tensor with `requires_grad=True` that you created yourself**, for example with
       `torch.tensor(...)`, `torch.randn(...)`, or `nn.Linear`'s weights, instead of computing
       it from other tensors.

    Everything computed from a tensor that requires grad is a **non-leaf (非叶子张量)**.

    What follows from this:

    * A leaf has `grad_fn = None`. A non-leaf's `grad_fn` is the graph node of the operation
      that made it (`AddBackward0`, `ToCopyBackward0`, ...).
    * After `backward()`, by default only the leaves that require grad (and that the result
      depends on) keep a gradient in `.grad`. Those are the numbers an optimizer needs, such
      as a network's weights. The gradients (梯度) of non-leaves are used on the way through
      backpropagation (反向传播) and then dropped to save memory, so their `.grad` stays
      `None`. (Section 4 shows how to keep one for a non-leaf.)
    * You can change `requires_grad` only on a leaf. (On a non-leaf, `requires_grad_(True)`
      is accepted because it changes nothing; switching it off raises an error.)
    * `detach()` returns a tensor cut out of the graph: a leaf with `requires_grad=False`.
    * Copying a tensor that requires grad to another device (设备), with `.cuda()` or
      `.to("cpu")`, is an operation like any other. The copy is a non-leaf. Only the tensor
      you created is a leaf, on the CPU or on the GPU alike. If the tensor is already where
      you move it, `.to()`/`.cuda()` returns the very same tensor, so nothing changes (a leaf
      stays a leaf). A change of dtype, such as `.double()`, is a recorded copy too.
    """)
    L.md("""
    ## 2. The article's experiment, step by step

    Each step prints `is_leaf` and `requires_grad`. Before you run a cell, say what you
    expect. (No GPU? leafkit simulates one, see lesson 0; the results are the same.)
    """)
    L.parity("""
    torch.manual_seed(0)                   # the same random numbers on every run
    a = torch.randn(3, 3)                  # made by us; requires_grad is False by default
    print("a:", a.is_leaf, a.requires_grad)

    a.requires_grad = True                 # allowed, because a is a leaf
    print("a:", a.is_leaf, a.requires_grad)
    """)
    L.md("""
    `a` is a leaf both times: first as kind 1 (类型一: no grad), then as kind 2 (类型二: made
    by us, requires grad). Now copy it to the GPU, and cut the copy loose with `detach()`:
    """)
    L.parity("""
    b = a.cuda()                           # a copy of a on the GPU: an operation on a
    print("b:", b.is_leaf, b.requires_grad, "grad_fn:", b.grad_fn.name(), "device:", b.device)

    c = b.detach()                         # same memory as b, but outside the graph
    print("c:", c.is_leaf, c.requires_grad, "grad_fn:", c.grad_fn, "device:", c.device)
    """)
    L.parity("""
    d = a + 2                              # an ordinary operation on a
    print("d:", d.is_leaf, d.requires_grad, "grad_fn:", d.grad_fn.name())
    """)
    L.md("""
    `b` and `d` are both non-leaves for the same reason: they were *computed* from `a`,
    which requires grad. For `b` the computation is a copy to another device, recorded as
    `ToCopyBackward0`. Now the other direction: a tensor created on the GPU, then copied to
    the CPU.
    """)
    L.parity("""
    e = torch.randn(3, 3, device="cuda", requires_grad=True)   # created on the GPU by us
    print("e:", e.is_leaf, e.requires_grad, "device:", e.device)

    f = e.to("cpu")                                             # copied to the CPU
    print("f:", f.is_leaf, f.requires_grad, "grad_fn:", f.grad_fn.name(), "device:", f.device)
    """)
    L.md("""
    | tensor | made by | `is_leaf` | `requires_grad` | why |
    |---|---|---|---|---|
    | `a` | `torch.randn(3, 3)` | True | False | kind 1: no grad |
    | `a` | `a.requires_grad = True` | True | True | kind 2: made by us |
    | `b` | `a.cuda()` | **False** | True | computed from `a` (`ToCopyBackward0`) |
    | `c` | `b.detach()` | True | False | detached: kind 1 |
    | `d` | `a + 2` | False | True | computed from `a` (`AddBackward0`) |
    | `e` | `randn(..., device="cuda", requires_grad=True)` | True | True | kind 2: made by us, on the GPU |
    | `f` | `e.to("cpu")` | **False** | True | computed from `e` (`ToCopyBackward0`) |

    The drawing shows the same thing. `c` sits in a dashed frame because it does not take
    part in any graph; the dashed arrow (*shares storage* in the legend) says it shares
    memory with `b`.
    """)
    L.code("""
    from leafkit.viz import draw, make_dot, explain

    draw(a=a, b=b, c=c, d=d, e=e, f=f)
    """)
    L.md("""
    ## 3. Why it matters: where the gradient goes

    `b` is on the GPU, so you might think of it as "the GPU version of `a`" and expect
    `b.grad` after a backward pass. But `backward()` passes through `b` and stores the
    gradient in the leaf it came from, `a`. Reading `b.grad` gives `None`, and PyTorch warns
    about it. (The helper `show_grad` below prints `.grad` and, if PyTorch warns, the warning's first sentence.)
    """)
    L.parity(READ_GRAD)
    L.parity("""
    b.sum().backward()
    print("a.grad:", a.grad)
    show_grad("b", b)
    """)
    L.md("""
    `leafkit.viz.explain` says in words why a tensor's `.grad` is `None`:
    """)
    L.code("""
    print(explain(b, "b"))
    """)
    L.md("""
    And only a leaf lets you change `requires_grad`. On a non-leaf, PyTorch refuses and
    suggests `detach()`:
    """)
    L.parity("""
    try:
        d.requires_grad = False
    except RuntimeError as err:
        print("RuntimeError:", err)
    """)
    L.md("""
    ## 4. Appendix: reading the gradient of an intermediate tensor

    Take x = 2, y = x², z = y². By the chain rule (链式法则):

    * dz/dy = 2y = 2 · 4 = **8**
    * dz/dx = dz/dy · dy/dx = 8 · 2x = **32**

    `y` is a non-leaf, so after `z.backward()` only `x.grad` is kept:
    """)
    L.parity("""
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2
    z = y ** 2
    z.backward()
    print("x.grad:", x.grad)
    show_grad("y", y)
    """)
    L.md("""
    There are two ways to see dz/dy anyway.

    **Method 1: `retain_grad()`** asks backward to keep the gradient of this one
    non-leaf in its `.grad`. We also pass `retain_graph=True`, which keeps the graph alive so
    that we can backpropagate through it a second time for method 2.
    """)
    L.parity("""
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2
    z = y ** 2

    y.retain_grad()
    z.backward(retain_graph=True)
    print("method 1, y.grad:", y.grad)
    print("x.grad:", x.grad)
    """)
    L.md("""
    **Method 2: a hook (钩子).** `register_hook` calls your function with the gradient as
    it flows through `y`. Remove the hook when you are done with it, so that it is not
    called again and does not keep things alive.
    """)
    L.parity("""
    seen = []
    handle = y.register_hook(lambda grad: seen.append(grad))
    z.backward()                 # the second pass through the same graph
    handle.remove()
    print("method 2, the hook saw:", seen[0])
    """)
    L.md("""
    **Both methods give 8.** The article's comments say `16.0` for both; PyTorch prints
    `tensor(8.)`, as the chain rule says. We cannot know where the article's 16 came from.
    One candidate: 16 is the value of `z` itself (2⁴), not a gradient.

    A `y.grad` of 16 *can* appear, though, but only after a second backward pass.
    `.grad` is not "the gradient of the last pass": every backward pass **adds (累加)** its
    gradient to what is already there, and a retained gradient of a non-leaf adds up just
    like a leaf's. The hook is different: it is called with the gradient of *one* pass, so
    it saw 8. We ran two passes through the same graph, so now:
    """)
    L.parity("""
    print("y.grad now:", y.grad, "  = 8 + 8")
    print("x.grad now:", x.grad, " = 32 + 32")
    """)
    L.md("""
    To start a new pass from zero, clear the old gradient first (`x.grad = None`, or
    `optimizer.zero_grad()` in training, lesson 4).

    And because the second pass did not pass `retain_graph=True`, the graph's saved values
    are freed now. A third pass fails:
    """)
    L.parity("""
    try:
        z.backward()
    except RuntimeError as err:
        print("RuntimeError:", err)
    """)
    L.md("""
    The backward graph of `z`, drawn the way `torchviz` draws it: the light blue box is the leaf
    `x`, the green box at the bottom is the output `z`, and the double border marks `y`, the
    non-leaf that retains its gradient. Both `PowBackward0` nodes are dashed and marked
    *freed*: the second backward pass released their saved values, which is why the third
    pass failed.
    """)
    L.code("""
    make_dot({"z": z}, params={"x": x, "y": y})
    """)
    L.md("""
    ## 5. Explore

    `LeafExplorer` builds `t` from `torch.tensor([1.0])` in up to three steps. Choose whether
    `requires_grad` is set at creation (*before* the steps) or on the result (*after*), and
    check every row of its table against the rules in section 1. Try to build a leaf on the
    GPU that requires grad.
    """)
    L.widget("""
    from leafkit.widgets import LeafExplorer

    LeafExplorer()
    """)
    exercises_intro(L, 3)
    L.md("""
    ### Exercise 1

    ```python
    w = torch.zeros(2, requires_grad=True).cuda()
    ```
    Is `w` a leaf? Set `answer_1` to `True` or `False`.
    """)
    L.code("""
    answer_1 = None   # True or False
    """, "exercise")
    L.code("""
    w = torch.zeros(2, requires_grad=True).cuda()
    check(answer_1, w.is_leaf,
          right="The tensor made by zeros() is the leaf. .cuda() on it is recorded (ToCopyBackward0), "
                "so w is a non-leaf, and w.grad would stay None.",
          hint="Which tensor did we create ourselves, and which one was computed from it?")
    """, "check")
    L.md("""
    ### Exercise 2

    ```python
    x = torch.tensor(1.0, requires_grad=True)
    z = 3 * x
    z.backward(retain_graph=True)
    z.backward()
    ```
    What number is in `x.grad` now? Set `answer_2` to a number.
    """)
    L.code("""
    answer_2 = None   # a number
    """, "exercise")
    L.code("""
    x = torch.tensor(1.0, requires_grad=True)
    z = 3 * x
    z.backward(retain_graph=True)
    z.backward()
    check(answer_2, x.grad.item(),
          right="Each pass adds dz/dx = 3 to x.grad, and there were two passes: 3 + 3 = 6.",
          hint="dz/dx is 3. What does a second backward pass do to a .grad that already holds 3?",
          same=lambda a, t: abs(float(a) - t) < 1e-6)
    """, "check")
    L.md("""
    ### Exercise 3

    Add **one line** where the comment says, so that `y3.grad` holds dz3/dy3 after
    `z3.backward()`. Then run the check. (The names end in 3 so that they cannot be confused
    with section 4's `y` and `z`: run the answer cell before the check.)
    """)
    L.code("""
    x3 = torch.tensor(3.0, requires_grad=True)
    y3 = x3 ** 3
    z3 = 2 * y3
    # your line here:

    z3.backward()
    """, "exercise")
    L.code("""
    if not y3.retains_grad:
        if z3.retains_grad:
            print("Not quite. z3 keeps its gradient now, but the exercise asks for y3's.")
        else:
            print("Not yet: y3 does not keep its gradient. Which method from section 4 keeps a non-leaf's .grad?")
    elif y3.grad is None:
        print("Not quite. y3 retains its gradient now, but only for backward passes that run after "
              "retain_grad(). Move your line above z3.backward() and run both cells again.")
    else:
        check(y3.grad.item(), 2.0,
              right="y3.retain_grad() keeps the gradient of the non-leaf y3: dz3/dy3 = 2.",
              hint="Call it once, before z3.backward(), and run the cell above again "
                   "(a second backward pass adds to .grad).")
    """, "check")
    L.md("Next: **[Lesson 2: clone, detach and cuda](02_clone_detach_cuda.ipynb)**.")
    return L


# ================================================================================================
# 02 clone / detach / cuda (seed 001)
# ================================================================================================
def lesson_02() -> Lesson:
    L = Lesson("02_clone_detach_cuda.ipynb")
    L.md("""
    # Lesson 2: clone, detach and cuda: which ones keep a leaf?

    **Source article:** "PyTorch leaf node". Its author was surprised that some tensors
    were no longer leaves after `.clone()` or `.cuda()`, and wrote down eleven small cases,
    `a` to `k`, with what PyTorch 1.3.1 printed. Current PyTorch prints the same `is_leaf`
    values. (The `grad_fn` names printed below are today's; PyTorch 1.3 named them
    differently, for example `CopyBackwards`.)

    This lesson is a prediction game. First you predict, then you see the answer, then the
    rule that explains it, and finally the safe way to build a leaf.
    """)
    L.parity("""
    import leafkit as torch
    """)
    L.md("""
    ## 1. Predict

    The quiz below lists the article's eleven tensors, `a` to `k`. Every one starts from
    `torch.tensor([1.0])`, with or without `requires_grad=True`, and then goes through
    `clone()` (a copy), `detach()` (cut from the computational graph, 计算图) or `.cuda()`
    (a copy on the GPU).

    For each one, predict `is_leaf` (is it a leaf tensor, 叶子张量?) and `requires_grad`,
    then press **Check** to see how you did. Do not scroll further before you have answered.
    """)
    L.widget("""
    from leafkit.widgets import LeafQuiz

    LeafQuiz()
    """)
    L.md("""
    ## 2. The reveal

    The same eleven lines, run for real:
    """)
    L.parity("""
    a = torch.tensor([1.0], requires_grad=False)
    b = torch.tensor([1.0], requires_grad=True)
    c = torch.tensor([1.0], requires_grad=False).clone()
    d = torch.tensor([1.0], requires_grad=False).detach()
    e = torch.tensor([1.0], requires_grad=False).cuda()
    f = torch.tensor([1.0], requires_grad=True).clone()
    g = torch.tensor([1.0], requires_grad=True).detach()
    h = torch.tensor([1.0], requires_grad=True).cuda()
    i = torch.tensor([1.0], requires_grad=True).clone().detach()
    j = torch.tensor([1.0], requires_grad=True).detach().clone()
    k = torch.tensor([1.0], requires_grad=True).cuda().detach()

    tensors = {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "g": g, "h": h, "i": i, "j": j, "k": k}
    for name, t in tensors.items():
        grad_fn = t.grad_fn.name() if t.grad_fn is not None else None
        print(f"{name}.is_leaf = {t.is_leaf!s:5}   requires_grad = {t.requires_grad!s:5}   grad_fn = {grad_fn}")
    """)
    L.md("""
    Only **`f`** and **`h`** are not leaves: they are **non-leaf tensors (非叶子张量)**. They
    are also the only ones that still require grad after the last step and have a `grad_fn`.

    ## 3. The rule that explains f and h

    > autograd records an operation when grad mode (梯度模式) is on and **at least one input
    > requires grad**. The result is then a non-leaf with a `grad_fn`.
    > `detach()` is never recorded: its result is a leaf that does not require grad.

    Grad mode is on unless you are inside `torch.no_grad()` (lesson 3). Operations whose
    result cannot carry a gradient, such as comparisons, `argmax` or a cast to an integer
    type, are not recorded either: their results are leaves that do not require grad.

    `clone()` and `.cuda()` are ordinary, differentiable (可微) operations, like `+` or `*`:
    the article's point is that they are recorded because they are differentiable.
    Applied to a tensor that requires grad, they are recorded, as `CloneBackward0` and
    `ToCopyBackward0`. Going through the list with this rule:

    | | last step | its input requires grad? | result |
    |---|---|---|---|
    | a, b | created by us | | leaf |
    | c, d, e | clone / detach / cuda | no | leaf, nothing recorded |
    | **f** | `clone()` | **yes** | **non-leaf**, `CloneBackward0` |
    | g | `detach()` | (never recorded) | leaf, no grad |
    | **h** | `.cuda()` | **yes** | **non-leaf**, `ToCopyBackward0` |
    | i, k | `detach()` | (never recorded) | leaf, no grad |
    | j | `clone()` | no: `detach()` came first | leaf, no grad |

    So the order matters only through `requires_grad`: after `detach()`, nothing later is
    recorded. In the drawing, the leaves behind `f` and `h` have no names: each is the
    tensor that `torch.tensor(...)` created on that line, which we never stored in a variable.
    """)
    L.code("""
    from leafkit.viz import draw, make_dot

    make_dot({"f": f, "h": h})
    """)
    L.md("""
    ## 4. Why it matters: the gradient goes to the hidden leaf

    `h` looks like "our tensor on the GPU". Train with it, and its `.grad` stays `None`:
    backward passes through `ToCopyBackward0` and stores the gradient in the hidden CPU
    leaf. We can reach that leaf through the graph: `h.grad_fn.next_functions` lists the
    next nodes, and the `AccumulateGrad` node there holds the leaf as `.variable`.
    """)
    L.parity(READ_GRAD)
    L.parity("""
    h.sum().backward()
    show_grad("h", h)

    hidden = h.grad_fn.next_functions[0][0].variable
    print("the leaf behind h:", hidden.is_leaf, hidden.device, "grad:", hidden.grad)
    """)
    L.md("""
    ## 5. The safe way to build a leaf

    The article's advice: **create, copy and move the tensor first, and switch on
    `requires_grad` last.** While `requires_grad` is off, nothing is recorded, so whatever
    you do to the tensor, the result is a leaf. Three ways that work:
    """)
    L.parity("""
    w1 = torch.tensor([1.0]).cuda()        # moved while requires_grad is off: not recorded
    w1.requires_grad_()                    # then switched on: a leaf that requires grad

    w2 = torch.tensor([1.0], device="cuda", requires_grad=True)   # created where it will live

    src = torch.tensor([1.0], requires_grad=True)
    w3 = src.detach().clone().requires_grad_()   # a separate leaf copy of an existing tensor

    for name, t in {"w1": w1, "w2": w2, "w3": w3}.items():
        print(f"{name}: is_leaf={t.is_leaf} requires_grad={t.requires_grad} device={t.device}")
    """)
    L.md("""
    Now `backward()` fills the gradient of the very tensor we hold:
    """)
    L.parity("""
    (3 * w1).sum().backward()
    print("w1.grad:", w1.grad)
    """)
    L.md("""
    `src.detach().clone()` gives a copy with its own memory that is not connected to `src`;
    `requires_grad_()` then makes it a leaf that requires grad. This is the recipe PyTorch
    itself recommends: `src.detach().clone().requires_grad_(True)`. The older order
    `src.clone().detach()` also gives a leaf, but it records a `clone` that is thrown away at
    once.
    """)
    exercises_intro(L, 3)
    L.md("""
    ### Exercise 1

    ```python
    p = torch.ones(2, requires_grad=True).detach().cuda()
    ```
    Is `p` a leaf? Set `answer_1` to `True` or `False`.
    """)
    L.code("""
    answer_1 = None   # True or False
    """, "exercise")
    L.code("""
    p = torch.ones(2, requires_grad=True).detach().cuda()
    check(answer_1, p.is_leaf,
          right="After detach() the tensor does not require grad, so .cuda() is not recorded: p is a leaf "
                "(that does not require grad).",
          hint="What is requires_grad right after detach()? Is an operation on such a tensor recorded?")
    """, "check")
    L.md("""
    ### Exercise 2

    Which of these give a leaf **that requires grad**? Put the letters in a set, for
    example `{"p", "q"}` (or `set()` for none).
    ```python
    p = torch.ones(2).cuda().requires_grad_()
    q = torch.ones(2, requires_grad=True).cuda()
    r = torch.ones(2, device="cuda", requires_grad=True)
    s = torch.ones(2, requires_grad=True).clone()
    t = torch.ones(2, requires_grad=True).detach().requires_grad_()
    ```
    """)
    L.code("""
    answer_2 = None   # a set of letters
    """, "exercise")
    L.code("""
    candidates = {
        "p": torch.ones(2).cuda().requires_grad_(),
        "q": torch.ones(2, requires_grad=True).cuda(),
        "r": torch.ones(2, device="cuda", requires_grad=True),
        "s": torch.ones(2, requires_grad=True).clone(),
        "t": torch.ones(2, requires_grad=True).detach().requires_grad_(),
    }
    truth = {name for name, tensor in candidates.items() if tensor.is_leaf and tensor.requires_grad}
    check(answer_2, truth,
          right="requires_grad was switched on last (p, t) or at creation on the right device (r); "
                "q and s were recorded operations on a tensor that requires grad.",
          hint="For each line, find the last step and ask whether its input required grad.",
          same=lambda a, t: set(a) == t)
    """, "check")
    L.md("""
    ### Exercise 3

    Make `weight`: a leaf on the GPU that requires grad and holds a copy of `start`'s values.
    `start` is on the CPU, and it must stay as it is.
    """)
    L.code("""
    start = torch.tensor([0.5, -0.5])
    weight = None   # your code: build the leaf from start
    """, "exercise")
    L.code("""
    if weight is None:
        print("Not yet: replace None with code that builds the tensor.")
    elif not isinstance(weight, torch.Tensor):
        print("Not quite. weight should be a tensor, not a", type(weight).__name__)
    elif not (weight.is_leaf and weight.requires_grad):
        print("Not quite. weight must be a leaf that requires grad: switch requires_grad on last.")
    elif weight.device.type != "cuda":
        print("Not quite. weight is on", weight.device, "but should be on the GPU (cuda).")
    elif weight.tolist() != start.tolist() or start.requires_grad:
        print("Not quite. weight should hold start's values, and start should not require grad.")
    else:
        print("Right! A leaf on cuda that requires grad: backward() will fill weight.grad itself.")
    """, "check")
    L.md("Next: **[Lesson 3: detach and grad modes](03_detach_and_grad_modes.ipynb)**.")
    return L


# ================================================================================================
# 03 detach and grad modes (seed 003)
# ================================================================================================
def lesson_03() -> Lesson:
    L = Lesson("03_detach_and_grad_modes.ipynb")
    L.md("""
    # Lesson 3: `requires_grad`, `grad_fn`, `no_grad` and `detach()`

    **Source article:** "Pytorch基础：Tensor的detach()方法" (PyTorch basics: the `detach()`
    method of a tensor). The article builds up to `detach()` through nine examples; this
    lesson follows the same path with its own code:

    | examples | topic |
    |---|---|
    | 1, 2 | the `requires_grad` flag: set it at creation or later (leaves only) |
    | 3, 4 | how `requires_grad` spreads through operations, and `grad_fn` names |
    | 5, 6 | `torch.no_grad()`, and the error when nothing requires grad |
    | 7 | the leaves of `nn.Linear` |
    | 8 | `retain_grad()` for a non-leaf |
    | 9 | `detach()`: a new tensor that shares memory with the old one and does not require grad |
    """)
    L.parity("""
    import leafkit as torch
    """)
    L.parity(READ_GRAD)
    L.md("""
    ## Examples 1 and 2: the `requires_grad` flag

    `requires_grad=True` means "compute gradients (梯度) with respect to this tensor".
    With `False`, backpropagation treats the tensor as a constant. You can set it when you
    create the tensor, or later with `requires_grad_()` or the attribute:
    """)
    L.parity("""
    x = torch.tensor([2.0], requires_grad=True)    # at creation
    print("created:", x.requires_grad)

    same = x.requires_grad_(False)                 # the method changes x and returns x itself
    print("requires_grad_(False):", x.requires_grad, "  returned x itself:", same is x)

    x.requires_grad = True                         # the attribute
    print("attribute set to True:", x.requires_grad)
    """)
    L.md("""
    Changing the flag works on a **leaf**. A non-leaf's flag follows from its inputs: you
    cannot switch it off, and setting the attribute always fails. (Only `requires_grad_(True)`
    is accepted on a non-leaf that requires grad, because it changes nothing.) And only
    floating point (or complex) tensors can require grad:
    """)
    L.parity("""
    y = x * 3                                      # a non-leaf
    try:
        y.requires_grad = False
    except RuntimeError as err:
        print("RuntimeError:", err)
    print("y.requires_grad is still", y.requires_grad)

    try:
        torch.tensor([1, 2], requires_grad=True)   # integers
    except RuntimeError as err:
        print("RuntimeError:", err)
    """)
    L.md("""
    ## Example 3: how `requires_grad` spreads

    The result of an operation requires grad when **at least one** input requires grad
    (and grad mode is on, see example 5). All four combinations:
    """)
    L.parity("""
    for x_rg in (False, True):
        for y_rg in (False, True):
            x = torch.tensor([2.0], requires_grad=x_rg)
            y = torch.tensor([2.0], requires_grad=y_rg)
            z = x * y
            print(f"x {x_rg!s:5}  y {y_rg!s:5}  ->  z.requires_grad = {z.requires_grad}")
    """)
    L.md("""
    One exception: operations whose result cannot carry a gradient, such as comparisons
    (`x > 0`), `argmax` or a cast to an integer type, are not recorded. Their results are
    leaves that do not require grad, even when an input requires grad.
    """)
    L.md("""
    ## Example 4: `grad_fn` names the operation

    A non-leaf that requires grad keeps the node of the operation that made it in
    `grad_fn`. Backpropagation (反向传播) calls these nodes in reverse order. The names end
    in `Backward0` (sometimes `Backward1`, for a second form of the same operation, such as
    `MaxBackward1` for `x.max()`). Printing `grad_fn` shows an object and its memory address
    (which changes from run to run); `.name()` gives just the name.
    """)
    L.parity("""
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([2.0], requires_grad=False)
    print("x / y:", (x / y).grad_fn)
    print("x + y:", (x + y).grad_fn.name())
    print("x - y:", (x - y).grad_fn.name())
    print("x * y:", (x * y).grad_fn.name())
    print("a leaf has none:", x.grad_fn)

    n = torch.tensor([2.0])
    print("no input requires grad:", (n * n).grad_fn)
    """)
    L.md("""
    ## Example 5: `torch.no_grad()`

    Inside `with torch.no_grad():` nothing is recorded. A new tensor computed there (for
    example `x * y`) has no `grad_fn` and does not require grad, whatever its inputs are, so
    it is a leaf. Use it for work that needs no gradient: evaluating a model, or updating
    weights (lesson 4).
    """)
    L.parity("""
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([2.0], requires_grad=True)
    with torch.no_grad():
        z = x * y
        print("inside no_grad, grad mode on?", torch.is_grad_enabled())
    print("after the block, grad mode on?", torch.is_grad_enabled())
    print("z:", z, " requires_grad:", z.requires_grad, " grad_fn:", z.grad_fn, " is_leaf:", z.is_leaf)
    """)
    L.md("""
    Three exceptions worth knowing: a **view** (`x[0]`, `x.view(...)`), which looks into the
    memory of another tensor, keeps the `requires_grad` of the tensor it looks into; an
    **in-place** operation (`w -= ...`) changes an existing tensor, which keeps its own flags
    (lesson 4 uses this); and a tensor you **create** with `requires_grad=True` inside the
    block still requires grad.
    """)
    L.parity("""
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    w = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        v = x[0:1]                                    # a view of x
        w -= 0.5                                      # an in-place change of w
        p = torch.tensor([1.0], requires_grad=True)   # created with requires_grad=True
    for name, t in {"v": v, "w": w, "p": p}.items():
        print(f"{name}: requires_grad={t.requires_grad}  is_leaf={t.is_leaf}  grad_fn={t.grad_fn}")
    """)
    L.md("""
    `GradModeExplorer`: choose which of `x` and `y` require grad, the operator, and whether
    `z` is computed inside `no_grad()`. It shows `z.requires_grad`, `z.grad_fn`, and what
    `z.backward()` would do (this also previews example 6).
    """)
    L.widget("""
    from leafkit.widgets import GradModeExplorer

    GradModeExplorer()
    """)
    L.md("""
    ## Example 6: calling `backward()` on a tensor that does not require grad

    `backward()` needs a graph to walk. If the tensor you call it on does not require grad
    (so it has no `grad_fn`), there is nothing to walk and PyTorch raises an error. The
    "element 0 of tensors" in the message is the first tensor you passed to backward. (`z`
    is the tensor computed inside `no_grad()` in example 5.)
    """)
    L.parity("""
    try:
        z.backward()
    except RuntimeError as err:
        print("RuntimeError:", err)
    """)
    L.md("""
    ## Example 7: the leaves of a layer

    Leaf tensors are the ones that were not computed: inputs, weights (权重) and biases
    (偏置). `nn.Linear` creates its weight and bias as parameters (参数) that require grad, so
    they are leaves, and `backward()` fills their `.grad`. We set the weight to 0.5 and the
    bias to 0.1 under `no_grad`: with grad mode on, PyTorch refuses in-place changes to a
    leaf that requires grad (lesson 4 shows the error).

    The output `out` shows `grad_fn=<ViewBackward0>`, not the layer's own operation.
    `nn.Linear` works on a 2-D batch of rows, so a 1-D input is reshaped on the way in and
    the result reshaped back: the last node is that reshape (a *view*). The node before it,
    `AddmmBackward0`, is the layer's multiply-and-add.
    """)
    L.parity("""
    x = torch.tensor([2.0], requires_grad=True)
    linear = torch.nn.Linear(1, 1)
    with torch.no_grad():
        linear.weight.fill_(0.5)
        linear.bias.fill_(0.1)
    y = x * 2

    print("x.is_leaf:", x.is_leaf)
    print("linear.weight.is_leaf:", linear.weight.is_leaf, "  requires_grad:", linear.weight.requires_grad)
    print("linear.bias.is_leaf:", linear.bias.is_leaf)
    print("y.is_leaf:", y.is_leaf)

    out = linear(x)              # out = 0.5 * 2 + 0.1
    print("out:", out)           # the last node is a reshape (a 1-D input is reshaped inside nn.Linear)
    print("the node before it:", out.grad_fn.next_functions[0][0].name())
    out.backward()
    print("weight.grad:", linear.weight.grad, " (d out / d weight = x = 2)")
    print("bias.grad:", linear.bias.grad, " (d out / d bias = 1)")
    print("x.grad:", x.grad, " (d out / d x = weight = 0.5)")
    """)
    L.md("""
    ## Example 8: `retain_grad()`

    By default a non-leaf's gradient is used during backpropagation and then thrown away,
    to save memory. `retain_grad()` keeps it for one tensor, and sets its flag
    `retains_grad` to `True`. (The article calls the flag `retain_grad`; its real name is
    `retains_grad`. The article also says that calling it on a tensor that does not require
    grad is pointless: in fact PyTorch raises an error, as the next cell shows. On a leaf it
    does nothing, because a leaf keeps its `.grad` anyway.)

    With x = 2, y = x², z = y², t = z²: z = 16, so dt/dz = 2z = 32, and
    dt/dx = 8x⁷ = 1024.
    """)
    L.parity("""
    x = torch.tensor([2.0], requires_grad=True)
    y = x ** 2
    z = y ** 2
    t = z ** 2
    z.retain_grad()
    t.backward()

    print("x.grad:", x.grad)
    show_grad("y", y)
    print("z.grad:", z.grad)
    print("z.retains_grad:", z.retains_grad, "  y.retains_grad:", y.retains_grad)
    """)
    L.parity("""
    try:
        torch.tensor([1.0]).retain_grad()             # does not require grad
    except RuntimeError as err:
        print(type(err).__name__ + ":", err)

    leaf = torch.tensor([1.0], requires_grad=True)
    leaf.retain_grad()                                # a leaf: nothing to do
    print("leaf.retains_grad:", leaf.retains_grad)
    """)
    L.md("""
    Reading `y.grad` warns: `y` is a non-leaf that does not retain its gradient, so its
    `.grad` is never filled, and PyTorch suspects you meant a leaf.

    `BackwardExplorer` runs the same chain x → y → z → t. Switch `retain_grad()` and a hook on
    for the intermediates, call `backward()` once or twice, with or without `retain_graph`,
    and see which `.grad` fields fill, how they add up, and when the graph is freed.
    """)
    L.widget("""
    from leafkit.widgets import BackwardExplorer

    BackwardExplorer()
    """)
    L.md("""

    ## Example 9: `detach()`

    `x.detach()` returns a **new tensor object** that **shares memory** with `x` (it uses
    the same storage, 共享存储; the drawings' legend says *shares storage*) but does not
    require grad. Computations on it are not recorded, so you cannot
    backpropagate through them.
    """)
    L.parity("""
    x = torch.tensor([2.0], requires_grad=True)
    y = x.detach()
    print("y.requires_grad:", y.requires_grad, "  y.is_leaf:", y.is_leaf)

    z1 = y ** 2                  # computed from the detached tensor
    z2 = x ** 2                  # computed from x
    print("z1.requires_grad:", z1.requires_grad, "  z1.grad_fn:", z1.grad_fn)
    print("z2.requires_grad:", z2.requires_grad, "  z2.grad_fn:", z2.grad_fn.name())

    try:
        z1.backward()
    except RuntimeError as err:
        print("z1.backward() -> RuntimeError:", err)

    z2.backward()
    print("x.grad:", x.grad, " (d z2 / d x = 2x = 4)")
    """)
    L.md("""
    The article compares `id(x)` with `id(y)` (different objects) and their storage
    addresses (the same). The raw numbers change on every run, so we compare them instead of
    printing them:
    """)
    L.parity("""
    print("different Python objects:", x is not y)
    print("same memory:", x.data_ptr() == y.data_ptr())

    y.add_(1.0)                  # change the detached tensor in place ...
    print("x after y.add_(1.0):", x)   # ... and x changes too
    """)
    L.md("""
    That last line is the catch: `detach()` does not copy. Changing `y` in place changes
    `x` too. The change is not part of the graph (no gradient flows through it). But `y` and
    `x` share a **version counter**, so if `backward()` needs a value of `x` that was saved
    before the change, it raises an error instead of giving a wrong gradient. The old
    `x.data` also shares memory but not the counter: the same change goes unnoticed and the
    gradient comes out wrong. That is why `detach()` is the safe choice. For an independent
    copy use `x.detach().clone()` (lesson 2).
    """)
    L.parity("""
    a = torch.tensor([2.0], requires_grad=True)
    sq = a ** 2                  # backward will need the saved value a = 2
    a.detach().add_(1.0)         # change a through a detached tensor
    try:
        sq.backward()
    except RuntimeError as err:
        print("detach(): RuntimeError:", str(err).split(" Hint:")[0])

    b = torch.tensor([2.0], requires_grad=True)
    sq = b ** 2
    b.data.add_(1.0)             # the same change through .data
    sq.backward()                # no error ...
    print(".data: no error, b.grad =", b.grad, " (wrong: 2 * 3, but at b = 2 the gradient is 4)")
    """)
    L.md("""

    `DetachExplorer`: `y = x.detach()`. Change `x` or `y` in place and watch the other follow,
    and see PyTorch's version counter at work: backward refuses when a tensor it saved was
    changed in place.
    """)
    L.widget("""
    from leafkit.widgets import DetachExplorer

    DetachExplorer()
    """)
    L.md("""
    The variables view draws the sharing as a dashed arrow: memory is shared, but no
    gradient flows along it.
    """)
    L.code("""
    from leafkit.viz import draw

    draw(x=x, y=y, z1=z1, z2=z2)
    """)
    exercises_intro(L, 3)
    L.md("""
    ### Exercise 1

    ```python
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([2.0])
    z1 = a * b
    z2 = a.detach() * b
    with torch.no_grad():
        z3 = a * b
    ```
    Give `requires_grad` of `z1`, `z2`, `z3` as a tuple of three booleans, for example
    `(True, True, True)`.
    """)
    L.code("""
    answer_1 = None   # (z1, z2, z3)
    """, "exercise")
    L.code("""
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([2.0])
    z1 = a * b
    z2 = a.detach() * b
    with torch.no_grad():
        z3 = a * b
    check(answer_1, (z1.requires_grad, z2.requires_grad, z3.requires_grad),
          right="Only z1 has an input that requires grad while grad mode is on. a.detach() does not require "
                "grad, and no_grad() switches recording off.",
          hint="Example 3: a result requires grad when one input does. Example 5: no_grad() overrides that.",
          same=lambda a, t: tuple(a) == t)
    """, "check")
    L.md("""
    ### Exercise 2

    ```python
    x = torch.tensor([3.0], requires_grad=True)
    y = x * x
    z = y + 1
    t = z * 2
    z.retain_grad()
    t.backward()
    ```
    What are `z.grad` and `x.grad`? Answer with two numbers, `(z_grad, x_grad)`.
    """)
    L.code("""
    answer_2 = None   # (z_grad, x_grad)
    """, "exercise")
    L.code("""
    x = torch.tensor([3.0], requires_grad=True)
    y = x * x
    z = y + 1
    t = z * 2
    z.retain_grad()
    t.backward()
    check(answer_2, (z.grad.item(), x.grad.item()),
          right="dt/dz = 2, and dt/dx = dt/dz * dz/dy * dy/dx = 2 * 1 * 2x = 12.",
          hint="Use the chain rule: multiply the local derivatives from t back to z, then on to x.",
          same=lambda a, t: len(a) == 2 and all(abs(float(p) - q) < 1e-6 for p, q in zip(a, t)))
    """, "check")
    L.md("""
    ### Exercise 3

    Make `y` a new tensor that **shares memory** with `x` but **does not require grad**.
    `x` itself must still require grad.
    """)
    L.code("""
    x = torch.tensor([5.0, 6.0], requires_grad=True)
    y = None   # your code
    """, "exercise")
    L.code("""
    if y is None:
        print("Not yet: replace None with an expression built from x.")
    elif not isinstance(y, torch.Tensor):
        print("Not quite. y should be a tensor, not a", type(y).__name__)
    elif y is x:
        print("Not quite. y is x itself, not a new tensor"
              + (": requires_grad_(False) and detach_() change x in place, so x no longer requires grad."
                 if not x.requires_grad else "."))
    elif not x.requires_grad:
        print("Not quite. Your code switched requires_grad off on x itself. Leave x as it is, "
              "and make a new tensor.")
    elif y.requires_grad:
        print("Not quite. y still requires grad: it is still connected to x's graph.")
    elif y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr():
        print("Not quite. y does not require grad, but it is a copy with its own memory. Drop the copy.")
    else:
        before = x._version
        with torch.no_grad():
            y.add_(0.0)                  # an in-place change through y that changes no value
        if x._version == before:         # x's version counter did not see it: y is x.data
            print("Almost. y shares x's memory, but not x's version counter, so autograd cannot see "
                  "in-place changes made through y (that is x.data). x.detach() is the safe form.")
        elif y.shape != x.shape:
            print("Right! y shares x's memory and is cut out of the graph. (It shows only part of x; "
                  "x.detach() gives all of it.)")
        else:
            print("Right! Like x.detach(), y shares x's memory (and its version counter) and is cut out "
                  "of the graph.")
    """, "check")
    L.md("Next: **[Lesson 4: leaves in training](04_leaves_in_training.ipynb)**.")
    return L


# ================================================================================================
# 04 leaves in training
# ================================================================================================
def lesson_04() -> Lesson:
    L = Lesson("04_leaves_in_training.ipynb")
    L.md("""
    # Lesson 4: leaves in training

    Why do the rules of the first three lessons matter? Because training a network is
    *gradient descent on its leaves*:

    1. the model's weights are **parameters (参数)**, and every parameter is a leaf and,
       unless you freeze it, requires grad;
    2. `loss.backward()` fills their `.grad`;
    3. the **optimizer (优化器)** changes them in place, under `no_grad()`, so they stay
       leaves, and it refuses a non-leaf (unless that non-leaf retains its grad).

    This lesson has no single source article: it applies what the three articles teach
    ("PyTorch——叶子张量" notes that a network's weights are leaves because backward exists
    to compute their gradients). At the end you train a small network on real handwritten
    digits.
    """)
    L.parity("""
    import leafkit as torch
    """)
    L.parity(READ_GRAD)
    L.md("""
    ## 1. Parameters are leaves
    """)
    L.parity("""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    for name, p in model.named_parameters():
        print(f"{name:9} shape={tuple(p.shape)!s:7} is_leaf={p.is_leaf} requires_grad={p.requires_grad} "
              f"type={type(p).__name__}")
    """)
    L.md("""
    ## 2. One step of gradient descent, by hand

    Minimise loss = w₀² + w₁². Its gradient is 2w, so one step with learning rate (学习率)
    0.1 is w ← w − 0.1 · 2w. First, the gradient:
    """)
    L.parity("""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    loss = (w ** 2).sum()
    loss.backward()
    print("w.grad:", w.grad)
    """)
    L.md("""
    **Wrong way 1: update in place with grad mode on.** autograd would have to record
    "w was changed", but `w` is a leaf that requires grad: the start of the graph. PyTorch
    forbids it:
    """)
    L.parity("""
    try:
        w -= 0.1 * w.grad
    except RuntimeError as err:
        print("RuntimeError:", err)
    """)
    L.md("""
    **Wrong way 2: `w = w - 0.1 * w.grad`.** This runs, but it makes a *new* tensor, computed
    from the old `w`, and gives it the name `w`. The new `w` is a non-leaf, so the next
    backward pass leaves its `.grad` empty:
    """)
    L.parity("""
    w = w - 0.1 * w.grad          # a new tensor, now called w
    print("is_leaf:", w.is_leaf, "  grad_fn:", w.grad_fn.name())
    (w ** 2).sum().backward()
    show_grad("w", w)
    """)
    L.md("""
    **The right way: in place, under `no_grad()`.** The values change, the tensor is the same
    leaf, and we clear the gradient for the next step (gradients add up, lesson 1).
    """)
    L.parity("""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    (w ** 2).sum().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad = None
    print("w:", w, "  is_leaf:", w.is_leaf)
    """)
    L.md("""
    ## 3. Optimizers update leaves

    `torch.optim.SGD` does exactly that step for every tensor you give it. `zero_grad()`
    clears the gradients (in PyTorch 2 it sets them to `None`).
    """)
    L.parity("""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=0.1)

    for step in range(3):
        optimizer.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss before the step {loss.item():.4f}, w = {w.detach()}")

    print("w is still a leaf:", w.is_leaf, "  w.grad:", w.grad)
    optimizer.zero_grad()
    print("after zero_grad, w.grad:", w.grad)
    """)
    L.md("""
    ## 4. The `.cuda()` trap: "can't optimize a non-leaf Tensor"

    You want a weight on the GPU, so you write `torch.randn(2, 2, requires_grad=True).cuda()`.
    From lesson 2 you know what that gives: a non-leaf copy of a hidden CPU leaf. The
    optimizer notices:
    """)
    L.parity("""
    torch.manual_seed(0)
    w_gpu = torch.randn(2, 2, requires_grad=True).cuda()
    print("is_leaf:", w_gpu.is_leaf, "  grad_fn:", w_gpu.grad_fn.name())
    try:
        torch.optim.SGD([w_gpu], lr=0.1)
    except ValueError as err:
        print("ValueError:", err)
    """)
    L.md("""
    It is right to refuse: `w_gpu.grad` would stay `None`, so the optimizer would never move
    it. Three fixes:
    """)
    L.parity("""
    fix_1 = torch.randn(2, 2, device="cuda", requires_grad=True)   # create it on the GPU
    fix_2 = torch.randn(2, 2).cuda().requires_grad_()              # move first, then require grad

    model = torch.nn.Linear(2, 1)
    model.cuda()                  # modules move their parameters in place: still leaves

    optimizer = torch.optim.SGD([fix_1, fix_2, *model.parameters()], lr=0.1)
    for name, t in {"fix_1": fix_1, "fix_2": fix_2, "model.weight": model.weight}.items():
        print(f"{name:12} is_leaf={t.is_leaf}  device={t.device}")
    print("the optimizer accepted", len(optimizer.param_groups[0]["params"]), "tensors")
    """)
    L.md("""
    Moving a module (`model.cuda()` or `model.to(device)`) keeps the same parameter objects,
    so they stay leaves. Still, PyTorch's advice is to **move the model first and create the
    optimizer after it**, so that the optimizer and its state refer to the parameters where
    they will live.
    """)
    L.md("""
    ## 5. Training on real data: handwritten digits

    scikit-learn ships 1,797 small images (8×8 pixels) of handwritten digits. leafkit's
    example `leafkit.examples.digits` splits them into 1,437 for training and 360 for
    testing, and standardises each pixel position (mean 0, standard deviation 1 over the
    training images). Our network: 64 inputs → 128 hidden units (ReLU) → 10 scores, one per
    digit. We train it with SGD and follow the loss (损失).
    """)
    L.code("""
    from leafkit.examples import digits

    data = digits.load_data()
    X_train = torch.from_numpy(data["X_train"])
    y_train = torch.from_numpy(data["y_train"])
    X_test = torch.from_numpy(data["X_test"])
    y_test = torch.from_numpy(data["y_test"])
    print("train:", tuple(X_train.shape), " test:", tuple(X_test.shape))

    net = digits.make_model(seed=0)          # Sequential(Linear(64, 128), ReLU(), Linear(128, 10)); lib=torch: PyTorch
    print(net)
    print("all parameters are leaves:", all(p.is_leaf for p in net.parameters()))
    """)
    L.md("""
    The training loop is the one from section 3, with mini-batches of 64 images, the
    cross-entropy loss for classification, and momentum 0.9 (which makes SGD keep part of
    the last step's direction):
    """)
    L.code("""
    import numpy as np

    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    batch_losses = []

    for epoch in range(5):
        epoch_losses = []
        order = torch.from_numpy(digits.batch_order(len(y_train), epoch))   # a fixed shuffle per epoch
        for start in range(0, len(order), 64):
            idx = order[start:start + 64]
            optimizer.zero_grad()                         # clear last step's gradients
            loss = loss_fn(net(X_train[idx]), y_train[idx])
            loss.backward()                               # fills .grad of every parameter (a leaf)
            optimizer.step()                              # updates the leaves in place
            epoch_losses.append(loss.item())
        batch_losses += epoch_losses
        with torch.no_grad():                             # measuring needs no graph
            correct = (net(X_test).argmax(1) == y_test).sum().item()
        print(f"epoch {epoch + 1}: mean loss {np.mean(epoch_losses):.3f}, "
              f"test accuracy {correct}/{len(y_test)}")

    print("after training, all parameters are still leaves:", all(p.is_leaf for p in net.parameters()))
    """)
    L.code("""
    import matplotlib
    matplotlib.set_loglevel("error")          # keep the notebook free of font-cache notices
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3))
    ax.plot(batch_losses)
    ax.set_xlabel("training step (batch of 64 images)")
    ax.set_ylabel("cross-entropy loss")
    ax.set_title("the loss falls as SGD updates the leaves")
    fig.tight_layout()
    plt.show()
    """)
    L.md("""
    Some test images, with the network's guess above each (red where it is wrong):
    """)
    L.code("""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    images, labels = load_digits(return_X_y=True)
    _, images_test, _, _ = train_test_split(images, labels, test_size=0.2, random_state=0, stratify=labels)

    with torch.no_grad():
        guesses = net(X_test).argmax(1).tolist()
    wrong = [i for i, (g, t) in enumerate(zip(guesses, y_test.tolist())) if g != t]
    shown = [i for i in range(len(guesses)) if i not in wrong][:12 - min(len(wrong), 4)] + wrong[:4]

    fig, axes = plt.subplots(2, 6, figsize=(8, 3))
    for ax, i in zip(axes.flat, shown):
        ax.imshow(images_test[i].reshape(8, 8), cmap="gray_r")
        ok = guesses[i] == y_test[i].item()
        ax.set_title(f"{guesses[i]} (true {y_test[i].item()})", fontsize=8, color="black" if ok else "red")
        ax.axis("off")
    fig.tight_layout()
    plt.show()
    print("wrong guesses in the test set:", len(wrong))
    """)
    exercises_intro(L, 3)
    L.md("""
    ### Exercise 1

    Which of these may be given to an optimizer? Put the letters in a set.
    ```python
    p = torch.zeros(3, requires_grad=True)
    q = torch.zeros(3, requires_grad=True) * 2
    r = torch.zeros(3).cuda().requires_grad_()
    s = torch.nn.Linear(3, 1).weight
    ```
    """)
    L.code("""
    answer_1 = None   # a set of letters
    """, "exercise")
    L.code("""
    candidates = {
        "p": torch.zeros(3, requires_grad=True),
        "q": torch.zeros(3, requires_grad=True) * 2,
        "r": torch.zeros(3).cuda().requires_grad_(),
        "s": torch.nn.Linear(3, 1).weight,
    }
    accepted = set()
    for name, tensor in candidates.items():
        try:
            torch.optim.SGD([tensor], lr=0.1)
            accepted.add(name)
        except ValueError:
            pass
    check(answer_1, accepted,
          right="p, r and s are leaves (r switched requires_grad on after the move; s is a Parameter). "
                "q is the result of a multiplication: a non-leaf.",
          hint="An optimizer takes leaves only. Which lines end with an operation on a tensor that requires grad?",
          same=lambda a, t: set(a) == t)
    """, "check")
    L.md("""
    ### Exercise 2

    Write the update step by hand: after `backward()`, change `w` in place to
    `w - lr * w.grad`, so that `w` stays a leaf. (The right result is 3 − 0.25 · 6 = 1.5.)
    """)
    L.code("""
    w = torch.tensor([3.0], requires_grad=True)
    lr = 0.25
    (w ** 2).sum().backward()
    # your update here:

    """, "exercise")
    L.code("""
    if not w.is_leaf:
        print("Not quite. w is no longer a leaf: you made a new tensor. Change w in place under torch.no_grad().")
    elif w.item() == 3.0:
        print("Not yet: w still holds 3.0. Write the update, then run both cells again. (If your cell "
              "raised 'a leaf Variable that requires grad is being used in an in-place operation', "
              "wrap the update in `with torch.no_grad():`.)")
    else:
        check(w.item(), 1.5,
              right="An in-place update: new values, same leaf.",
              hint="Use w -= lr * w.grad, inside a `with torch.no_grad():` block, and run both cells again.",
              same=lambda a, t: abs(a - t) < 1e-6)
    """, "check")
    L.md("""
    ### Exercise 3

    Build `weight`: a 2×2 tensor of random numbers on the GPU that an optimizer accepts.
    """)
    L.code("""
    weight = None   # your code
    """, "exercise")
    L.code("""
    if weight is None:
        print("Not yet: replace None with code that builds the tensor.")
    elif not isinstance(weight, torch.Tensor):
        print("Not quite. weight should be a tensor, not a", type(weight).__name__)
    elif weight.device.type != "cuda" or tuple(weight.shape) != (2, 2):
        print("Not quite. weight should have shape (2, 2) and live on cuda; it is", tuple(weight.shape), "on",
              weight.device)
    else:
        try:
            torch.optim.SGD([weight], lr=0.1)
            print("Right! A leaf on cuda: the optimizer takes it." if weight.requires_grad else
                  "Almost: the optimizer takes it, but it does not require grad, so it would never get a gradient.")
        except ValueError as err:
            print("Not quite. The optimizer says:", err, "- switch requires_grad on after the move.")
    """, "check")
    L.md("""
    ## Where to go next

    * Change `import leafkit as torch` to `import torch` in any lesson and run it again: the
      experiments (in this lesson, the cells in sections 1–4) print the same lines. On a
      machine without a GPU, replace `.cuda()` with `.double()`, `device="cuda"` with
      `dtype=torch.float64` and `.to("cpu")` with `.float()`, as the kit's own test does.
      Section 5 builds a leafkit model unless you ask otherwise: the digits example has a
      `lib=` argument, so write `digits.make_model(seed=0, lib=torch)`. Its losses and
      accuracies will then differ a little, because PyTorch's random starting weights differ
      from leafkit's, while the behaviour (all parameters stay leaves, the loss falls) is the
      same.
    * Run the digits example from a shell: `python -m leafkit.examples.digits --help`.
    """)
    return L


ALL = [lesson_00, lesson_01, lesson_02, lesson_03, lesson_04]


def strip(nb) -> None:
    """Remove what must not be stored (widget state, timing metadata) and join split streams.

    A kernel may send one ``print`` as several stream messages; consecutive
    messages of the same stream are joined into one output, as nbval does before
    comparing, so that rebuilding does not churn the stored notebooks.
    """
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        joined = []
        for out in cell.get("outputs", []):
            out.get("metadata", {}).pop("execution", None)
            prev = joined[-1] if joined else None
            if (out.output_type == "stream" and prev is not None and prev.output_type == "stream"
                    and prev.name == out.name):
                prev.text += out.text
            else:
                joined.append(out)
        cell.outputs = joined


def execute(path: Path, timeout: int = 600) -> None:
    from nbclient import NotebookClient

    nb = nbformat.read(str(path), as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    strip(nb)
    nbformat.write(nb, str(path))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--execute", action="store_true", help="run the notebooks and store their outputs")
    ap.add_argument("only", nargs="*", help="file name prefixes (e.g. 01); default: all lessons")
    args = ap.parse_args(argv)
    LESSONS.mkdir(exist_ok=True)
    for make in ALL:
        lesson = make()
        if args.only and not any(lesson.filename.startswith(p) for p in args.only):
            continue
        path = LESSONS / lesson.filename
        nb = lesson.notebook()
        nbformat.validate(nb)
        nbformat.write(nb, str(path))
        if args.execute:
            execute(path)
        print(f"{path.relative_to(ROOT)}: {len(nb.cells)} cells{' (executed)' if args.execute else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
