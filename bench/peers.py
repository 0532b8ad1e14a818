"""The benchmark workloads written for every library: leafkit, PyTorch, MyGrad and HIPS autograd.

Each ``BACKENDS[name]`` builds the workloads of ``bench/engine.py`` (W1, W2,
W4) and of ``bench/train.py`` (W3) in that library's own style: leafkit and
PyTorch and MyGrad record a graph as the code runs (``y.backward()``), HIPS
autograd traces a Python function (``grad(f)(x)``).  A library that is not
installed is left out (``pip install -e '.[bench]'`` installs the peers).

Every workload returns a ``run()`` callable that does one forward and one
backward pass and returns the gradient, so the benchmark can check that all
libraries computed the same thing.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict

import numpy as np

W2_SIZE = 1_000_000


def _available(module: str) -> bool:
    try:
        importlib.import_module(module)
        return True
    except ImportError:
        return False


def elementwise_chain(a, b, tanh=lambda t: t.tanh()):
    """W2's work: 20 elementwise ops (mul, add, tanh, sub, five times), then backward."""
    y = a
    for _ in range(5):
        y = y * b
        y = y + a
        y = tanh(y)
        y = y - b
    y.sum().backward()


# -- tape libraries: leafkit, PyTorch (and MyGrad, nearly the same API) ------------------------------------------------
class Tape:
    """leafkit or PyTorch: ``tensor(..., requires_grad=True)``, operators, ``.backward()``, ``.grad``."""

    def __init__(self, lib):
        self.lib = lib

    def tanh(self, t):
        return t.tanh()

    def leaf(self, arr):
        return self.lib.tensor(arr, requires_grad=True)

    def grad_of(self, t):
        g = t.grad
        t.grad = None
        return np.asarray(g.detach().numpy() if hasattr(g, "detach") else g)

    def w1(self, n):
        x = self.leaf(np.array([1.0], dtype=np.float32))
        tanh = self.tanh

        def run():
            y = x
            for _ in range(n // 4):
                y = y * 1.0001
                y = y + 0.5
                y = tanh(y)
                y = y - 0.25
            y.sum().backward()
            return self.grad_of(x)

        return run

    def w2(self, a_np, b_np):
        a, b = self.leaf(a_np), self.leaf(b_np)

        def run():
            elementwise_chain(a, b, self.tanh)
            return self.grad_of(a), self.grad_of(b)

        return run

    def w4(self, n):
        x = self.leaf(np.array([1.0], dtype=np.float32))

        def run():
            y = x
            for _ in range(n):
                y = y * 1.0
            y.sum().backward()
            return self.grad_of(x)

        return run


class MyGradTape(Tape):
    """MyGrad: ``mygrad.tensor``, ``mygrad.tanh``; ``backward()`` clears the graph as it goes."""

    def __init__(self):
        import mygrad

        super().__init__(mygrad)

    def tanh(self, t):
        return self.lib.tanh(t)

    def leaf(self, arr):
        return self.lib.tensor(arr)

    def grad_of(self, t):
        g = np.asarray(t.grad)
        t.null_grad()
        return g


# -- HIPS autograd: a traced function --------------------------------------------------------------------------------
class Traced:
    """HIPS autograd: ``grad(f)(x)`` traces ``f`` with ``autograd.numpy`` and runs its vjps backwards."""

    def __init__(self):
        import autograd
        import autograd.numpy as anp

        self.grad, self.np = autograd.grad, anp

    def w1(self, n):
        anp = self.np

        def f(x):
            y = x
            for _ in range(n // 4):
                y = y * 1.0001
                y = y + 0.5
                y = anp.tanh(y)
                y = y - 0.25
            return anp.sum(y)

        g = self.grad(f)
        x = np.array([1.0], dtype=np.float32)
        return lambda: np.asarray(g(x))

    def w2(self, a_np, b_np):
        anp = self.np

        def f(ab):
            a, b = ab
            y = a
            for _ in range(5):
                y = y * b
                y = y + a
                y = anp.tanh(y)
                y = y - b
            return anp.sum(y)

        g = self.grad(f)
        return lambda: tuple(np.asarray(v) for v in g((a_np, b_np)))

    def w4(self, n):
        def f(x):
            y = x
            for _ in range(n):
                y = y * 1.0
            return self.np.sum(y)

        g = self.grad(f)
        x = np.array([1.0], dtype=np.float32)
        return lambda: np.asarray(g(x))


def backends(torch_threads: int | None = 1) -> OrderedDict[str, object]:
    """The libraries installed here, leafkit first; PyTorch on ``torch_threads`` threads (None: its default)."""
    import leafkit

    out = OrderedDict(leafkit=Tape(leafkit))
    if _available("torch"):
        import torch

        if torch_threads is not None:
            torch.set_num_threads(torch_threads)
        out["PyTorch"] = Tape(torch)
    if _available("mygrad"):
        out["MyGrad"] = MyGradTape()
    if _available("autograd") and _available("autograd.numpy"):
        out["HIPS autograd"] = Traced()
    return out


# -- W3: one epoch of the digits MLP -----------------------------------------------------------------------------------
def mlp_epoch_numpy_peer(
    name: str,
    weights: dict,
    data: dict,
    order,
    batch_size: int = 64,
    lr: float = 0.1,
    momentum: float = 0.9,
    state: dict | None = None,
):
    """One epoch of SGD with momentum (PyTorch's formula) on the digits MLP, in MyGrad or HIPS autograd.

    ``weights`` holds PyTorch's state_dict names (``0.weight`` ...) as float32 arrays and is updated in
    place; ``state`` keeps the momentum buffers between epochs.  Returns the mean training loss.
    """
    state = {} if state is None else state
    X, y = data["X_train"][order], data["y_train"][order]
    names = ["0.weight", "0.bias", "2.weight", "2.bias"]
    total = 0.0
    if name == "MyGrad":
        import mygrad as mg
        from mygrad.nnet.losses import softmax_crossentropy

        params = {k: mg.tensor(weights[k]) for k in names}
    else:
        import autograd
        import autograd.numpy as anp

        def loss_fn(p, xb, yb):
            h = anp.maximum(anp.dot(xb, p["0.weight"].T) + p["0.bias"], 0.0)
            logits = anp.dot(h, p["2.weight"].T) + p["2.bias"]
            z = logits - anp.max(logits, axis=1, keepdims=True)
            logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
            return -anp.mean(logp[np.arange(len(yb)), yb])

        value_and_grad = autograd.value_and_grad(loss_fn)
    for start in range(0, len(y), batch_size):
        xb, yb = X[start : start + batch_size], y[start : start + batch_size]
        if name == "MyGrad":
            w1, b1, w2, b2 = (params[k] for k in names)
            h = mg.maximum(mg.matmul(xb, w1.T) + b1, 0.0)
            loss = softmax_crossentropy(mg.matmul(h, w2.T) + b2, yb)
            loss.backward()
            grads = {k: np.asarray(params[k].grad) for k in names}
            value = float(loss.item())
        else:
            value, grads = value_and_grad({k: weights[k] for k in names}, xb, yb)
            value = float(value)
        for k in names:
            buf = state.get(k)
            buf = grads[k].copy() if buf is None else buf * momentum + grads[k]
            state[k] = buf
            weights[k] -= lr * buf
            if name == "MyGrad":
                params[k] = mg.tensor(weights[k])
        total += value * len(yb)
    return total / len(y)


def mlp_accuracy(weights: dict, X, y) -> float:
    h = np.maximum(X @ weights["0.weight"].T + weights["0.bias"], 0)
    return float(((h @ weights["2.weight"].T + weights["2.bias"]).argmax(1) == y).mean())
