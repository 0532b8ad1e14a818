"""Handwritten digits: an MLP (64-128-10) trained with SGD or Adam, on leafkit or on real PyTorch.

The data are scikit-learn's bundled 8x8 digits (1,797 images, no download):
a fixed, stratified 80/20 split (1,437 train, 360 test), features
standardised with the training set's mean and standard deviation.

Every function takes ``lib``, the module that plays ``torch``: leafkit
(default) or PyTorch itself.  The functions that take a model default to the
library of the model's parameters, so ``digits.train(digits.make_model(lib=torch))``
trains on PyTorch.  The training code is the same for both, which
is the point: given the same initial weights (``weights=``) and the same
batch order (``batch_order``), the two reach the same accuracy.

Run it from a shell::

    python -m leafkit.examples.digits                 # SGD on cpu, 10 epochs
    python -m leafkit.examples.digits --device cuda   # the cuda device (simulated without a GPU)
    python -m leafkit.examples.digits --optimizer adam --epochs 5
    python -m leafkit.examples.digits --torch         # the same script on PyTorch

or from a lesson::

    from leafkit.examples import digits
    model = digits.make_model(seed=0, lib=torch)              # torch: leafkit or PyTorch
    history = digits.train(model, epochs=10, progress=True)   # a tqdm bar (a widget in Jupyter)
    history["test_acc"][-1]          # about 0.97

Progress bars come from tqdm (``tqdm.auto``: a widget bar in Jupyter, a text
bar in a terminal); it is installed with the ``examples`` and ``lab``
extras.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

__all__ = [
    "load_data",
    "make_model",
    "numpy_weights",
    "batch_order",
    "make_optimizer",
    "train_epoch",
    "evaluate",
    "train",
    "progress_bar",
    "blas_threads",
    "main",
    "SIZES",
    "DEFAULT_LR",
]

SIZES = (64, 128, 10)
"""Input, hidden and output widths of the MLP."""

DEFAULT_LR = {"sgd": 0.1, "adam": 3e-3}
"""Learning rates that reach 95% test accuracy within a few epochs (SGD also uses momentum 0.9)."""

SGD_MOMENTUM = 0.9

_DATA_CACHE: dict = {}


def _lib(lib, model=None):
    """The module that plays ``torch``: ``lib`` if given, else the library ``model``'s parameters come
    from (a model built by ``make_model(lib=torch)`` trains on PyTorch without ``lib=`` again), else
    leafkit."""
    if lib is not None:
        return lib
    if model is not None:
        first = next(iter(model.parameters()), None)
        if first is not None and type(first).__module__.split(".")[0] == "torch":
            import torch

            return torch
    import leafkit

    return leafkit


def _zh() -> bool:
    """Whether leafkit's teaching UI speaks Chinese (``leafkit.set_language("zh")``): the progress bar does too."""
    import leafkit

    return leafkit.get_language() == "zh"


def load_data(seed: int = 0, test_size: float = 0.2) -> dict:
    """The digits, split and standardised, as NumPy arrays.

    Parameters
    ----------
    seed : int
        Seeds the stratified split (``train_test_split(random_state=seed)``);
        0 is the fixed split the examples and tests use.
    test_size : float
        Fraction held out for testing (0.2: 360 images).

    Returns
    -------
    dict
        ``X_train`` (1437, 64) float32, ``y_train`` (1437,) int64,
        ``X_test`` (360, 64) float32, ``y_test`` (360,) int64.  Each feature
        is standardised with the training mean and standard deviation
        (pixels that are always 0 stay 0).

    Raises
    ------
    ImportError
        When scikit-learn is missing (``pip install 'leafkit[examples]'``).
    """
    key = (seed, test_size)
    if key not in _DATA_CACHE:
        try:
            from sklearn.datasets import load_digits
            from sklearn.model_selection import train_test_split
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("the digits example needs scikit-learn: pip install 'leafkit[examples]'") from e
        X, y = load_digits(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, random_state=seed, stratify=y)
        mean = X_tr.mean(axis=0)
        std = X_tr.std(axis=0)
        std[std == 0] = 1.0
        _DATA_CACHE[key] = {
            "X_train": ((X_tr - mean) / std).astype(np.float32),
            "y_train": y_tr.astype(np.int64),
            "X_test": ((X_te - mean) / std).astype(np.float32),
            "y_test": y_te.astype(np.int64),
        }
    return {k: v.copy() for k, v in _DATA_CACHE[key].items()}


def make_model(seed: int = 0, lib=None, device="cpu", weights: dict | None = None):
    """``Sequential(Linear(64, 128), ReLU(), Linear(128, 10))`` on ``device``.

    Parameters
    ----------
    seed : int
        Seeds ``lib.manual_seed`` before the layers draw their initial
        weights (PyTorch's default initialisation, uniform in
        ±1/sqrt(fan_in)).
    lib : module, optional
        ``leafkit`` (default) or ``torch``.
    device : str
        ``"cpu"`` or ``"cuda"``.
    weights : dict of str to ndarray, optional
        Initial values by ``state_dict`` name (see :func:`numpy_weights`),
        to start two models, for example a leafkit and a PyTorch one, from
        the same point.

    Returns
    -------
    Sequential
        Parameters are leaves that require grad, on ``device``.
    """
    lib = _lib(lib)
    nn = lib.nn
    lib.manual_seed(seed)
    model = nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]))
    if weights is not None:
        model.load_state_dict({k: lib.from_numpy(np.ascontiguousarray(v)) for k, v in weights.items()})
    return model.to(device)


def numpy_weights(model) -> dict:
    """The model's ``state_dict`` as NumPy arrays (copied to the host), for :func:`make_model`'s ``weights``."""
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


def batch_order(n: int, epoch: int, seed: int = 0) -> np.ndarray:
    """The shuffled sample order of ``epoch``: a permutation of ``range(n)``, the same for every ``lib``."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def make_optimizer(model, name: str = "sgd", lr: float | None = None, lib=None):
    """``SGD(lr=0.1, momentum=0.9)`` or ``Adam(lr=3e-3)`` over ``model.parameters()``.

    Raises
    ------
    ValueError
        For a name other than ``"sgd"`` or ``"adam"``.
    """
    lib = _lib(lib, model)
    name = name.lower()
    if name not in DEFAULT_LR:
        raise ValueError(f"optimizer must be 'sgd' or 'adam', got {name!r}")
    lr = DEFAULT_LR[name] if lr is None else lr
    if name == "sgd":
        return lib.optim.SGD(model.parameters(), lr=lr, momentum=SGD_MOMENTUM)
    return lib.optim.Adam(model.parameters(), lr=lr)


def _tensors(data: dict, lib, device):
    return {k: lib.from_numpy(v).to(device) for k, v in data.items()}


def train_epoch(model, optimizer, X, y, order, batch_size: int = 64, lib=None, on_step=None) -> float:
    """One pass over ``X, y`` in ``order``, in batches: forward, cross-entropy, backward, step.

    Parameters
    ----------
    model, optimizer
        From :func:`make_model` and :func:`make_optimizer`, same ``lib``.
    X, y : Tensor
        Training features ``(N, 64)`` float32 and labels ``(N,)`` int64 on
        the model's device.
    order : ndarray
        A permutation of ``range(N)`` (see :func:`batch_order`).
    on_step : callable, optional
        ``on_step(step, n_steps, loss)`` after every batch (``loss``: float).

    Returns
    -------
    float
        The mean training loss over the epoch's samples.
    """
    lib = _lib(lib, model)
    F = lib.nn.functional
    idx = lib.from_numpy(np.ascontiguousarray(order)).to(X.device)
    Xp, yp = X[idx], y[idx]
    n = Xp.shape[0]
    n_steps = (n + batch_size - 1) // batch_size
    total = 0.0
    for step, start in enumerate(range(0, n, batch_size)):
        xb, yb = Xp[start : start + batch_size], yp[start : start + batch_size]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        value = loss.item()
        total += value * xb.shape[0]
        if on_step is not None:
            on_step(step, n_steps, value)
    return total / n


def evaluate(model, X, y, lib=None) -> float:
    """Accuracy of ``model`` on ``X, y`` (a fraction in [0, 1]), computed under ``no_grad``."""
    lib = _lib(lib, model)
    with lib.no_grad():
        pred = model(X).argmax(1)
        return (pred == y).sum().item() / y.shape[0]


def blas_threads(n: int | None):
    """A context that runs NumPy's BLAS on ``n`` threads (``threadpoolctl``), or changes nothing for ``None``.

    The MLP's matrices are small (64 x 128): one BLAS thread is faster than
    several, and much faster on a busy machine, where BLAS threads wait for
    each other.  PyTorch makes the same choice internally for small
    matrices.  Without threadpoolctl (it comes with scikit-learn) this
    changes nothing.
    """
    import contextlib

    if n is None:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn brings it
        return contextlib.nullcontext()
    return threadpool_limits(limits=n, user_api="blas")


def train(
    model,
    epochs: int = 10,
    optimizer="sgd",
    lr: float | None = None,
    batch_size: int = 64,
    device=None,
    seed: int = 0,
    data: dict | None = None,
    lib=None,
    callback=None,
    on_step=None,
    threads: int | None = 1,
    progress: bool | dict = False,
) -> dict:
    """Train ``model`` on the digits and measure it after every epoch.

    Parameters
    ----------
    model
        From :func:`make_model` (same ``lib``).
    epochs : int
        Passes over the training set (10 reach about 97% with SGD).
    optimizer : {"sgd", "adam"} or Optimizer
        A name (see :func:`make_optimizer`) or a ready optimizer.
    lr : float, optional
        Learning rate for a named optimizer.
    batch_size : int
        Default 64.
    device : str, optional
        Moves the model (``model.to(device)``) and the data there; default:
        where the model's parameters are.
    seed : int
        Seeds the split (:func:`load_data`) and the batch order.
    data : dict, optional
        Arrays from :func:`load_data` (loaded when None).
    lib : module, optional
        ``leafkit`` or ``torch``; default: the library of ``model``'s parameters
        (so a lesson that switches to ``import torch`` needs no other change).
    callback : callable, optional
        ``callback(epoch, stats)`` after every epoch, ``stats`` being that
        epoch's entry of the history (``loss``, ``train_acc``, ``test_acc``,
        ``seconds``).
    on_step : callable, optional
        ``on_step(epoch, step, n_steps, loss)`` after every batch.
    threads : int or None
        BLAS threads for leafkit while training (see :func:`blas_threads`);
        ``None`` leaves NumPy's setting alone.  Ignored for PyTorch.
    progress : bool or dict
        ``True`` shows one tqdm progress bar over every batch of every
        epoch (``tqdm.auto``: a widget in Jupyter, text on stderr in a
        terminal), whose note shows the last epoch's loss and test
        accuracy.  A dict does the same with these arguments for ``tqdm``
        (``{"file": sys.stdout, "leave": False, "disable": None}`` ...).
        ``False`` (default): no bar.

    Returns
    -------
    dict
        Lists, one entry per epoch: ``"loss"`` (mean training loss),
        ``"train_acc"``, ``"test_acc"`` (fractions), ``"seconds"`` (training
        time of the epoch, evaluation excluded).

    Raises
    ------
    ImportError
        ``progress`` without tqdm installed (``pip install 'leafkit[examples]'``).
    """
    lib = _lib(lib, model)
    if device is not None:
        model.to(device)
    dev = next(iter(model.parameters())).device
    data = load_data(seed) if data is None else data
    t = _tensors(data, lib, dev)
    opt = make_optimizer(model, optimizer, lr, lib) if isinstance(optimizer, str) else optimizer
    history = {"loss": [], "train_acc": [], "test_acc": [], "seconds": []}
    bar = None
    if progress or isinstance(progress, dict):  # {} too: a bar with the defaults
        n_steps = (len(data["y_train"]) + batch_size - 1) // batch_size
        bar = progress_bar(epochs * n_steps, **(progress if isinstance(progress, dict) else {}))
        on_step, callback = _with_bar(bar, epochs, on_step, callback)
    import leafkit

    try:
        with blas_threads(threads if lib is leafkit else None):
            _train_loop(model, opt, t, data, epochs, batch_size, seed, lib, callback, on_step, history)
    finally:
        if bar is not None:
            bar.close()
    return history


def progress_bar(total: int, **kwargs):
    """A tqdm progress bar over ``total`` batches: ``tqdm.auto.tqdm(total=total, desc="training", unit="batch")``.

    In Jupyter (and Binder) it is a widget; in a terminal a text bar on
    stderr.  ``kwargs`` are passed on to ``tqdm`` and win over the defaults.
    After ``leafkit.set_language("zh")`` the description is "训练", the unit "批"
    (the rate reads "183.9批/s") and the note of :func:`train`'s bar is Chinese
    too (as in the Chinese lessons).

    Raises
    ------
    ImportError
        When tqdm is missing (``pip install 'leafkit[examples]'``).
    """
    desc, unit = ("训练", "批") if _zh() else ("training", "batch")
    return _tqdm()(**{"total": total, "desc": desc, "unit": unit, **kwargs})


def _tqdm():
    """``tqdm.auto.tqdm``, or an ImportError that says how to install it."""
    try:
        from tqdm.auto import tqdm
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("the digits progress bar needs tqdm: pip install 'leafkit[examples]'") from e
    return tqdm


def _with_bar(bar, epochs, on_step, callback):
    """``on_step`` and ``callback`` that also advance ``bar`` and write each epoch's results into its note."""
    width = len(str(epochs))

    def step(epoch, s, n, loss):
        bar.update(1)
        if on_step is not None:
            on_step(epoch, s, n, loss)

    def done(epoch, stats):
        if _zh():
            note = f"第 {epoch + 1:>{width}}/{epochs} 轮，损失 {stats['loss']:.4f}，测试准确率 {stats['test_acc']:.2%}"
        else:
            note = f"epoch {epoch + 1:>{width}}/{epochs} loss {stats['loss']:.4f} test {stats['test_acc']:.2%}"
        bar.set_postfix_str(note)
        if callback is not None:
            callback(epoch, stats)

    return step, done


def _train_loop(model, opt, t, data, epochs, batch_size, seed, lib, callback, on_step, history):
    model.train()
    for epoch in range(epochs):
        step_cb = None if on_step is None else (lambda s, n, v, e=epoch: on_step(e, s, n, v))
        t0 = time.perf_counter()
        loss = train_epoch(
            model,
            opt,
            t["X_train"],
            t["y_train"],
            batch_order(len(data["y_train"]), epoch, seed),
            batch_size,
            lib,
            step_cb,
        )
        seconds = time.perf_counter() - t0
        model.eval()
        stats = {
            "loss": loss,
            "train_acc": evaluate(model, t["X_train"], t["y_train"], lib),
            "test_acc": evaluate(model, t["X_test"], t["y_test"], lib),
            "seconds": seconds,
        }
        model.train()
        for k, v in stats.items():
            history[k].append(v)
        if callback is not None:
            callback(epoch, stats)


# -- command line ---------------------------------------------------------------------------------
def main(argv=None) -> dict:
    """The CLI: train, print one line per epoch on stdout, with a tqdm bar on stderr; returns the history.

    The bar is shown only when stderr is a terminal, and never with
    ``--no-progress``; the epoch lines are the same either way.
    """
    p = argparse.ArgumentParser(
        prog="python -m leafkit.examples.digits",
        description="Train a 64-128-10 MLP on scikit-learn's handwritten digits.",
    )
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    p.add_argument("--lr", type=float, default=None, help="default: 0.1 for SGD (momentum 0.9), 0.003 for Adam")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--device", default="cpu", help="cpu or cuda (simulated in host memory without a GPU)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS threads for leafkit (default 1, fastest for these small matrices; 0: NumPy's default)",
    )
    p.add_argument("--torch", action="store_true", help="run the same script on real PyTorch instead of leafkit")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (the bar is a tqdm bar on stderr, shown only in a terminal)",
    )
    args = p.parse_args(argv)

    if args.torch:
        import torch as lib
    else:
        import leafkit as lib
    out = sys.stdout
    if str(args.device).startswith("cuda") and args.torch and not lib.cuda.is_available():
        p.error(
            "--torch --device cuda needs a PyTorch build with CUDA and a GPU (this PyTorch has none); "
            "leafkit's own cuda device works everywhere: drop --torch"
        )
    if str(args.device).startswith("cuda") and not args.torch and lib.cuda.backend() is None:
        p.error("cuda is turned off (LEAFKIT_SIMULATE_CUDA=0) and no GPU is usable: use --device cpu")
    if not args.torch and str(args.device).startswith("cuda"):
        backend = lib.cuda.backend()
        note = {"cupy": "a real GPU (CuPy)", "simulated": "simulated in host memory (no GPU)"}.get(backend)
        if note:
            out.write(f"device cuda: {note}\n")
    data = load_data(args.seed)
    model = make_model(args.seed, lib, args.device)
    out.write(f"{'PyTorch' if args.torch else 'leafkit'} | {model[0]} -> ReLU -> {model[2]}\n")
    out.write(
        f"digits: {len(data['y_train'])} train / {len(data['y_test'])} test | {args.optimizer} "
        f"lr={args.lr or DEFAULT_LR[args.optimizer]} | batch {args.batch_size} | device {args.device}\n"
    )
    width = len(str(args.epochs))
    write = out.write
    if not args.no_progress:
        tqdm = _tqdm()

        def write(line):  # above the bar, which tqdm clears and redraws
            tqdm.write(line, file=out, end="")

    def callback(epoch, s):
        write(
            f"epoch {epoch + 1:>{width}}/{args.epochs}  loss {s['loss']:.4f}  train {s['train_acc']:6.2%}  "
            f"test {s['test_acc']:6.2%}  {s['seconds']:.2f}s\n"
        )

    t0 = time.perf_counter()
    history = train(
        model,
        args.epochs,
        args.optimizer,
        args.lr,
        args.batch_size,
        None,
        args.seed,
        data,
        lib,
        callback,
        threads=args.threads or None,
        progress=False if args.no_progress else {"file": sys.stderr, "disable": None, "leave": False},
    )
    out.write(
        f"final test accuracy {history['test_acc'][-1]:.2%} | training {sum(history['seconds']):.2f}s, "
        f"total {time.perf_counter() - t0:.2f}s\n"
    )
    return history


if __name__ == "__main__":
    main()
