"""The digits example: data, training to >= 95% on cpu and cuda, the CLI, and the same run on real PyTorch."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")

import leafkit  # noqa: E402
from leafkit.examples import digits  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return digits.load_data(0)


def test_load_data_split_and_standardisation(data):
    assert data["X_train"].shape == (1437, 64) and data["X_test"].shape == (360, 64)
    assert data["X_train"].dtype == np.float32 and data["y_train"].dtype == np.int64
    np.testing.assert_allclose(data["X_train"].mean(0), 0, atol=1e-5)
    std = data["X_train"].std(0)
    assert np.all((np.abs(std - 1) < 1e-4) | (std == 0))
    assert np.bincount(data["y_test"]).min() >= 35  # stratified: every digit in the test set
    again = digits.load_data(0)
    assert all(np.array_equal(data[k], again[k]) for k in data)
    again["X_train"][0, 0] = 99.0  # callers get copies
    assert digits.load_data(0)["X_train"][0, 0] != 99.0


def test_batch_order_is_a_seeded_permutation():
    a = digits.batch_order(1437, 0)
    assert sorted(a.tolist()) == list(range(1437))
    assert np.array_equal(a, digits.batch_order(1437, 0))
    assert not np.array_equal(a, digits.batch_order(1437, 1))


def test_model_shape_and_leaves():
    m = digits.make_model(0)
    assert [tuple(p.shape) for p in m.parameters()] == [(128, 64), (128,), (10, 128), (10,)]
    assert all(p.is_leaf and p.requires_grad for p in m.parameters())
    w = digits.numpy_weights(m)
    m2 = digits.make_model(5, weights=w)
    assert all(np.array_equal(w[k], v) for k, v in digits.numpy_weights(m2).items())


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_sgd_reaches_95_percent(data, device):
    model = digits.make_model(0, device=device)
    history = digits.train(model, epochs=10, optimizer="sgd", data=data, device=device)
    assert history["test_acc"][-1] >= 0.95
    assert max(history["test_acc"]) >= 0.96
    assert history["loss"][-1] < history["loss"][0]
    assert all(p.is_leaf and p.device.type == device for p in model.parameters())


def test_adam_reaches_95_percent(data):
    history = digits.train(digits.make_model(1), epochs=8, optimizer="adam", data=data)
    assert history["test_acc"][-1] >= 0.95


def test_history_and_callbacks(data):
    epochs, steps = [], []
    history = digits.train(
        digits.make_model(0),
        epochs=2,
        data=data,
        callback=lambda e, s: epochs.append((e, s)),
        on_step=lambda e, s, n, loss: steps.append((e, s, n)),
    )
    assert set(history) == {"loss", "train_acc", "test_acc", "seconds"}
    assert all(len(v) == 2 for v in history.values())
    assert [e for e, _ in epochs] == [0, 1] and epochs[1][1]["test_acc"] == history["test_acc"][1]
    assert len(steps) == 2 * 23 and steps[-1] == (1, 22, 23)


def test_cpu_and_simulated_cuda_give_the_same_run(data):
    a = digits.train(digits.make_model(0), epochs=3, data=data)
    b = digits.train(digits.make_model(0, device="cuda"), epochs=3, data=data)
    assert a["test_acc"] == b["test_acc"]
    np.testing.assert_allclose(a["loss"], b["loss"], rtol=1e-6)


def test_bad_optimizer_name():
    with pytest.raises(ValueError, match="optimizer must be 'sgd' or 'adam'"):
        digits.make_optimizer(digits.make_model(0), "rmsprop")


def test_cli_runs_and_prints_epochs():
    env = {**os.environ, "LEAFKIT_SIMULATE_CUDA": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "leafkit.examples.digits", "--epochs", "3", "--no-progress", "--device", "cuda"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    epoch_lines = [ln for ln in lines if ln.startswith("epoch")]
    assert len(epoch_lines) == 3
    assert re.fullmatch(
        r"epoch 1/3  loss \d\.\d{4}  train [ \d]\d\.\d\d%  test [ \d]\d\.\d\d%  \d+\.\d\ds", epoch_lines[0]
    ), epoch_lines[0]
    assert "\r" not in r.stdout
    assert lines[-1].startswith("final test accuracy")
    assert any("simulated" in ln for ln in lines) or leafkit.cuda.backend() == "cupy"


def _run_in_a_terminal(args, timeout=300):
    """Run the CLI with stderr on a pseudo-terminal (100 columns), as in a shell; returns (stdout, stderr text)."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    chunks = []

    def read():
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other end is closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        r = subprocess.run(
            [sys.executable, "-m", "leafkit.examples.digits", *args],
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
            timeout=timeout,
        )
    finally:
        os.close(slave)
    reader.join(10)
    os.close(master)
    assert r.returncode == 0
    return r.stdout, b"".join(chunks).decode("utf-8", "replace")


def test_cli_draws_a_tqdm_bar_on_a_terminal_and_keeps_stdout_clean():
    out, err = _run_in_a_terminal(["--epochs", "2"])
    assert "training:   0%|" in err and "0/46 [00:00<?, ?batch/s]" in err  # tqdm's first frame, on stderr
    assert "\r" in err  # redrawn in place
    epoch_lines = [ln for ln in out.splitlines() if ln.startswith("epoch")]
    assert [ln.split()[1] for ln in epoch_lines] == ["1/2", "2/2"]
    assert "\r" not in out and "batch/s" not in out and "%|" not in out
    _, quiet = _run_in_a_terminal(["--epochs", "1", "--no-progress"])
    assert quiet == ""


def test_cli_shows_no_bar_when_stderr_is_not_a_terminal():
    r = subprocess.run(
        [sys.executable, "-m", "leafkit.examples.digits", "--epochs", "1"], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0 and r.stderr == ""
    assert sum(ln.startswith("epoch 1/1") for ln in r.stdout.splitlines()) == 1


def test_train_progress_bar_counts_every_batch_and_notes_the_last_epoch(data):
    import io

    buf = io.StringIO()
    steps = []
    history = digits.train(
        digits.make_model(0),
        epochs=2,
        data=data,
        progress={"file": buf, "mininterval": 0, "ascii": True},
        on_step=lambda e, s, n, loss: steps.append(s),
    )
    text = buf.getvalue()
    last = text.rsplit("\r", 1)[-1]
    assert last.startswith("training: 100%|") and "46/46" in last
    assert f"epoch 2/2 loss {history['loss'][-1]:.4f} test {history['test_acc'][-1]:.2%}" in last
    assert len(steps) == 46  # the caller's on_step still runs
    assert digits.progress_bar(5, disable=True).total == 5


def test_train_progress_bar_speaks_chinese_after_set_language(data):
    import io

    buf = io.StringIO()
    from leafkit._lang import language

    with language("zh"):
        history = digits.train(
            digits.make_model(0), epochs=1, data=data, progress={"file": buf, "mininterval": 0, "ascii": True}
        )
    last = buf.getvalue().rsplit("\r", 1)[-1]
    assert last.startswith("训练: 100%|"), last
    assert "批/s" in last and "batch" not in last, last  # the rate's unit is Chinese too
    assert f"第 1/1 轮，损失 {history['loss'][-1]:.4f}，测试准确率 {history['test_acc'][-1]:.2%}" in last
    assert leafkit.get_language() == "en"


@pytest.mark.parity
def test_a_torch_model_trains_on_torch_without_lib(data):
    """A lesson that switches to ``import torch`` builds the model with ``lib=torch`` and changes nothing else:
    train() (and make_optimizer, train_epoch, evaluate) take the library from the model's parameters."""
    torch = pytest.importorskip("torch")
    model = digits.make_model(0, lib=torch)
    assert digits._lib(None, model) is torch and digits._lib(None, digits.make_model(0)) is leafkit
    history = digits.train(model, epochs=1, data=data)
    assert history["test_acc"][-1] > 0.8
    assert isinstance(digits.make_optimizer(model), torch.optim.SGD)


@pytest.mark.slow
def test_train_progress_is_a_widget_in_a_notebook_with_a_stable_text_output(tmp_path):
    """In Jupyter, tqdm.auto gives an ipywidgets bar; its text/plain form (what nbval compares) is the first
    frame, the same on every run."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from leafkit.examples import digits\n"
            "history = digits.train(digits.make_model(0), epochs=2, progress=True)\n"
            "print(len(history['loss']))"
        )
    ]
    nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = nb.cells[0].outputs
    views = [o for o in outputs if o.output_type == "display_data"]
    assert len(views) == 1
    assert "application/vnd.jupyter.widget-view+json" in views[0].data
    assert views[0].data["text/plain"] == "training:   0%|          | 0/46 [00:00<?, ?batch/s]"
    assert [o.text for o in outputs if o.output_type == "stream"] == ["2\n"]  # nothing on stderr


@pytest.mark.parity
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_same_accuracy_as_pytorch_from_the_same_start(data, optimizer):
    """Same initial weights and batch order on real PyTorch: the same accuracy after every epoch."""
    torch = pytest.importorskip("torch")
    lk_model = digits.make_model(0)
    weights = digits.numpy_weights(lk_model)
    torch_model = digits.make_model(0, lib=torch, weights=weights)
    for name, p in torch_model.named_parameters():
        assert np.array_equal(p.detach().numpy(), weights[name])
    lk = digits.train(lk_model, epochs=6, optimizer=optimizer, data=data)
    th = digits.train(torch_model, epochs=6, optimizer=optimizer, data=data, lib=torch)
    assert lk["test_acc"] == th["test_acc"]
    assert lk["train_acc"] == th["train_acc"]
    np.testing.assert_allclose(lk["loss"], th["loss"], rtol=1e-4)
    for name, w in digits.numpy_weights(torch_model).items():
        np.testing.assert_allclose(digits.numpy_weights(lk_model)[name], w, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_each_training_step_graph_is_freed_by_refcounting(data, device):
    """W5's property: with the cycle collector off, a step's whole graph dies at ``del loss``."""
    import gc
    import weakref

    F = leafkit.nn.functional
    model = digits.make_model(0, device=device)
    opt = digits.make_optimizer(model)
    X = leafkit.from_numpy(data["X_train"][:128]).to(device)
    y = leafkit.from_numpy(data["y_train"][:128]).to(device)
    gc.collect()
    gc.disable()
    try:
        for start in (0, 64, 0):
            opt.zero_grad()
            loss = F.cross_entropy(model(X[start : start + 64]), y[start : start + 64])
            nodes, stack = [], [loss.grad_fn]
            while stack:
                n = stack.pop()
                nodes.append(weakref.ref(n))
                stack.extend(m for m, _ in n.next_functions if m is not None)
            loss.backward()
            opt.step()
            del loss, n, stack
            assert [r for r in nodes if r() is not None] == []
        assert gc.collect() == 0
    finally:
        gc.enable()
