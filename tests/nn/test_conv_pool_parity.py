"""Convolution, padding, pooling, Flatten/Unflatten and channel dropout next to real PyTorch.

Every test runs one program on leafkit and on torch (``both``) and compares
what a learner sees: values, gradients and second derivatives, ``grad_fn``
trees and saved attributes, module reprs and attributes, the default
initialisation's bounds, and the class and message of every error and
warning.  The op rows in ``tests/op_db.py`` add gradcheck, gradgradcheck
and random shapes.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import warnings
import zlib

import numpy as np
import pytest

import leafkit
import leafkit.nn._functional_cnn as LCNN

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RNG = np.random.default_rng(20260118)


def both(fn, *args):
    return fn(leafkit, *args), fn(torch, *args)


def tree(t):
    def walk(fn):
        if fn is None:
            return None
        name = "AccumulateGrad" if fn.name().endswith("AccumulateGrad") else fn.name()
        return (name, tuple(walk(n) for n, _ in fn.next_functions))

    return walk(t.grad_fn)


def _signed(v):
    """PyTorch 2.13 shows a negative int saved in a size list as its unsigned 64-bit value (``_saved_pad`` of
    ``F.pad(x, (-1, 1))`` is ``(18446744073709551615, 1)``); leafkit shows the number itself."""
    if isinstance(v, tuple):
        return tuple(_signed(e) for e in v)
    if isinstance(v, int) and not isinstance(v, bool) and v >= 2**63:
        return v - 2**64
    return v


def saved(fn):
    """The node's ``_saved_*`` attributes: plain values as they are, tensors as (shape, dtype name)."""
    out = {}
    for name in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        v = getattr(fn, name)
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            v = (tuple(v.shape), str(v.dtype))
        out[name] = _signed(v)
    return out


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def np_(t):
    return None if t is None else t.detach().numpy().copy()


def error_of(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e).__name__, str(e).split("\nException raised from")[0]
    return None


def warnings_of(call):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        call()
    return [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in ws]


def assert_close(a, b, rtol=1e-6, atol=1e-8):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_close(x, y, rtol, atol)
    elif a is None or b is None:
        assert a is None and b is None
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ========================================================================= convolution ==========
CONV_CASES = {
    "conv2d": ("conv2d", (2, 3, 7, 6), (4, 3, 3, 2), True, {}),
    "conv2d_stride_pad_dilation": (
        "conv2d",
        (2, 3, 9, 8),
        (4, 3, 3, 3),
        True,
        dict(stride=(2, 1), padding=(1, 2), dilation=2),
    ),
    "conv2d_groups": ("conv2d", (2, 4, 6, 6), (6, 2, 3, 3), True, dict(groups=2, stride=2, padding=1)),
    "conv2d_depthwise": ("conv2d", (1, 3, 5, 5), (3, 1, 3, 3), False, dict(groups=3, padding=1)),
    "conv2d_same_odd": ("conv2d", (2, 3, 5, 6), (4, 3, 3, 5), True, dict(padding="same")),
    "conv2d_same_even": ("conv2d", (2, 3, 5, 6), (4, 3, 4, 2), True, dict(padding="same")),
    "conv2d_same_dilated": ("conv2d", (1, 2, 7, 7), (3, 2, 2, 3), False, dict(padding="same", dilation=(3, 2))),
    "conv2d_valid": ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), True, dict(padding="valid")),
    "conv2d_unbatched": ("conv2d", (3, 6, 5), (4, 3, 2, 2), True, dict(padding=1)),
    "conv2d_1x1": ("conv2d", (2, 5, 3, 3), (2, 5, 1, 1), True, {}),
    "conv2d_kernel_is_input": ("conv2d", (2, 2, 3, 4), (3, 2, 3, 4), True, {}),
    "conv1d": ("conv1d", (2, 3, 9), (4, 3, 3), True, dict(stride=2, padding=1)),
    "conv1d_groups_dilation": ("conv1d", (2, 4, 11), (2, 2, 3), True, dict(groups=2, dilation=3)),
    "conv1d_same_even": ("conv1d", (2, 3, 7), (4, 3, 2), True, dict(padding="same", dilation=3)),
    "conv1d_unbatched": ("conv1d", (3, 8), (5, 3, 4), False, dict(stride=3)),
    "conv_transpose2d": (
        "conv_transpose2d",
        (2, 3, 4, 5),
        (3, 2, 3, 3),
        True,
        dict(stride=2, padding=1, output_padding=1),
    ),
    "conv_transpose2d_groups": ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 2, 3), True, dict(groups=2, dilation=2)),
    "conv_transpose1d": ("conv_transpose1d", (2, 3, 5), (3, 2, 4), True, dict(stride=3, padding=2)),
    "conv_transpose1d_unbatched": ("conv_transpose1d", (3, 5), (3, 2, 2), False, dict(stride=2)),
}


def _conv_program(lib, name, with_second=True):
    fn, xs, ws, has_bias, kw = CONV_CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = lib.tensor(rng.standard_normal(xs), requires_grad=True)
    w = lib.tensor(rng.standard_normal(ws), requires_grad=True)
    out_ch = ws[1] * kw.get("groups", 1) if "transpose" in fn else ws[0]
    b = lib.tensor(rng.standard_normal(out_ch), requires_grad=True) if has_bias else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # padding='same' with an even kernel warns once per process
        y = getattr(lib.nn.functional, fn)(x, w, b, **kw)
    inputs = [x, w] + ([b] if has_bias else [])
    g = lib.tensor(rng.standard_normal(tuple(y.shape)))
    grads = lib.autograd.grad((y * g).sum(), inputs, create_graph=True)
    obs = {
        "y": np_(y),
        "tree": tree(y),
        "grads": [np_(t) for t in grads],
        "grad_trees": [tree(t) for t in grads],
    }
    conv = y.grad_fn
    while conv.name() != "ConvolutionBackward0":
        conv = conv.next_functions[0][0]
    obs["saved"] = saved(conv)
    obs["double_saved"] = saved(grads[0].grad_fn)
    if with_second:
        total = sum((t * t).sum() for t in grads)
        obs["second"] = [np_(t) for t in lib.autograd.grad(total, inputs, allow_unused=True)]
    return obs


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_convolution_values_gradients_second_derivatives_and_nodes_match_pytorch(name):
    lk, th = both(_conv_program, name)
    assert lk["tree"] == th["tree"]
    assert lk["grad_trees"] == th["grad_trees"]
    assert lk["saved"] == th["saved"]
    assert lk["double_saved"] == th["double_saved"]
    assert_close(lk["y"], th["y"], 1e-10, 1e-10)
    assert_close(lk["grads"], th["grads"], 1e-10, 1e-10)
    assert_close(lk["second"], th["second"], 1e-9, 1e-9)


def test_convolution_node_next_functions_and_saved_values_match_pytorch():
    """The tutorial's view of one conv node: its inputs in order (input, weight, bias; None without bias) and what it
    saved, with PyTorch's types (tuples of ints, a bool, an int, and None for a convolution without bias)."""

    def run(lib):
        x = lib.randn(1, 2, 5, 5)
        conv = lib.nn.Conv2d(2, 3, 3, padding=1)
        y = conv(x)
        plain = lib.nn.functional.conv2d(x.requires_grad_(), lib.randn(3, 2, 3, 3))
        fn = y.grad_fn
        return (
            fn.name(),
            [(n.name() if n is not None else None, i) for n, i in fn.next_functions],
            [fn.next_functions[1][0].variable is conv.weight, fn.next_functions[2][0].variable is conv.bias],
            {k: (v, type(v).__name__) for k, v in saved(fn).items() if not isinstance(v, tuple) or k != "_saved_input"},
            [(n.name() if n is not None else None) for n, _ in plain.grad_fn.next_functions],
            plain.grad_fn._saved_bias_sym_sizes_opt,
            fn._saved_weight is conv.weight,
            str(y.dtype),
        )

    lk, th = both(run)
    assert lk == th


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32"])
def test_convolution_dtypes_match_pytorch(dtype):
    X = RNG.integers(-4, 5, (2, 3, 5, 5))
    W = RNG.integers(-3, 4, (4, 3, 3, 3))
    B = RNG.integers(-3, 4, 4)

    def run(lib):
        dt = getattr(lib, dtype)
        y = lib.nn.functional.conv2d(
            lib.tensor(X, dtype=dt), lib.tensor(W, dtype=dt), lib.tensor(B, dtype=dt), padding=1
        )
        return str(y.dtype), y.double().numpy()

    (dl, vl), (dt, vt) = both(run)
    assert dl == dt
    np.testing.assert_allclose(vl, vt, rtol=1e-3 if dtype == "float16" else 1e-6)


CONV_ERRORS = {
    "input_2d": lambda lib, F: F.conv2d(lib.randn(5, 5), lib.randn(4, 3, 3, 3)),
    "input_5d": lambda lib, F: F.conv2d(lib.randn(1, 2, 3, 5, 5), lib.randn(4, 3, 3, 3)),
    "conv1d_input_4d": lambda lib, F: F.conv1d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3)),
    "conv1d_input_1d": lambda lib, F: F.conv1d(lib.randn(5), lib.randn(4, 3, 3)),
    "channels": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 2, 3, 3)),
    "channels_groups": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 1, 3, 3), groups=2),
    "channels_unbatched": lambda lib, F: F.conv2d(lib.randn(3, 5, 5), lib.randn(4, 2, 3, 3)),
    "groups_not_dividing_out": lambda lib, F: F.conv2d(lib.randn(2, 2, 5, 5), lib.randn(3, 1, 3, 3), groups=2),
    "groups_more_than_out": lambda lib, F: F.conv2d(lib.randn(2, 6, 5, 5), lib.randn(1, 3, 3, 3), groups=2),
    "groups_zero": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), groups=0),
    "empty_weight": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(0, 3, 3, 3)),
    "bias_size": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), lib.randn(5)),
    "bias_2d": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), lib.randn(4, 1)),
    "bias_dtype": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), lib.randn(4).double()),
    "bias_dtype_first": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 2, 3, 3), lib.randn(5).double()),
    "weight_dtype": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3).double()),
    "weight_dtype_half": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5).half(), lib.randn(4, 3, 3, 3)),
    "weight_dtype_double_input": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5).double(), lib.randn(4, 3, 3, 3)),
    "weight_dtype_long_input": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5).long(), lib.randn(4, 3, 3, 3)),
    "weight_int": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5).double(), lib.randn(4, 3, 3, 3).int()),
    "channels_before_dtype": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 2, 3, 3).double()),
    "bool": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5).bool(), lib.randn(4, 3, 3, 3).bool()),
    "bool_transposed": lambda lib, F: F.conv_transpose2d(lib.randn(1, 1, 3, 3).bool(), lib.randn(1, 1, 1, 1).bool()),
    "kernel_too_big": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 6, 6)),
    "kernel_too_big_dilated": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), dilation=3),
    "kernel_too_big_1d": lambda lib, F: F.conv1d(lib.randn(2, 3, 5), lib.randn(4, 3, 9)),
    "empty_spatial": lambda lib, F: F.conv2d(lib.randn(2, 3, 0, 5), lib.randn(4, 3, 3, 3)),
    "stride_zero": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), stride=0),
    "stride_zero_then_dilation": lambda lib, F: F.conv2d(
        lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), stride=0, dilation=0
    ),
    "padding_negative": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), padding=(1, -1)),
    "padding_before_stride": lambda lib, F: F.conv2d(
        lib.randn(2, 3, 5, 5), lib.randn(4, 2, 3, 3), padding=-1, stride=0
    ),
    "dilation_zero": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), dilation=0),
    "stride_length": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), stride=(1, 1, 1)),
    "padding_length": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), padding=[1, 1, 1]),
    "stride_empty": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), stride=[]),
    "weight_3d_for_conv2d": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3)),
    "weight_5d_for_conv2d": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3, 3)),
    "same_strided": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), stride=2, padding="same"),
    "same_strided_one_value": lambda lib, F: F.conv2d(
        lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), stride=(2,), padding="same"
    ),
    "same_stride_length": lambda lib, F: F.conv2d(
        lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), stride=(1, 1, 1), padding="same"
    ),
    "same_dilation_length": lambda lib, F: F.conv2d(
        lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), padding="same", dilation=(1, 1, 1)
    ),
    "same_dilation_zero": lambda lib, F: F.conv2d(
        lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), padding="same", dilation=0
    ),
    "same_weight_3d": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3), padding="same"),
    "same_channels": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 2, 3, 3), padding="same"),
    "padding_string": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), padding="SAME"),
    "type_groups": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), groups=1.0),
    "type_stride_bool": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), stride=True),
    "type_positional_float": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), None, 1, 1.5),
    "type_weight_list": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), [1.0]),
    "type_unknown_keyword": lambda lib, F: F.conv2d(lib.randn(2, 3, 5, 5), lib.randn(4, 3, 3, 3), foo=1),
    "type_conv1d_padding_float": lambda lib, F: F.conv1d(lib.randn(2, 3, 5), lib.randn(4, 3, 3), padding=1.0),
    "transposed_channels": lambda lib, F: F.conv_transpose2d(lib.randn(1, 2, 3, 3), lib.randn(1, 1, 1, 1)),
    "transposed_bias": lambda lib, F: F.conv_transpose2d(lib.randn(1, 1, 3, 3), lib.randn(1, 1, 1, 1), lib.randn(2)),
    "transposed_output_padding": lambda lib, F: F.conv_transpose2d(
        lib.randn(1, 1, 3, 3), lib.randn(1, 1, 1, 1), output_padding=(0, 1)
    ),
    "transposed_output_padding_1d": lambda lib, F: F.conv_transpose1d(
        lib.randn(1, 1, 3), lib.randn(1, 1, 1), output_padding=1
    ),
    "transposed_too_small": lambda lib, F: F.conv_transpose2d(
        lib.randn(1, 1, 1, 1), lib.randn(1, 1, 1, 1), stride=2, padding=1, output_padding=1
    ),
    "transposed_too_small_1d": lambda lib, F: F.conv_transpose1d(
        lib.randn(1, 1, 1), lib.randn(1, 1, 1), stride=2, padding=1, output_padding=1
    ),
    "convolution_dims": lambda lib, F: lib.convolution(
        lib.randn(3, 5, 5), lib.randn(4, 3, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1
    ),
    "devices": lambda lib, F: F.conv2d(
        lib.randn(1, 3, 5, 5), lib.randn(4, 3, 3, 3).to("cuda" if lib is leafkit else "meta")
    ),
}


@pytest.mark.parametrize("name", sorted(k for k in CONV_ERRORS if k != "devices"))
def test_convolution_errors_match_pytorch(name):
    lk, th = both(lambda lib: error_of(lambda: CONV_ERRORS[name](lib, lib.nn.functional)))
    assert th is not None
    assert lk == th


def test_convolution_on_two_devices_raises_pytorchs_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        leafkit.nn.functional.conv2d(leafkit.randn(1, 3, 5, 5), leafkit.randn(4, 3, 3, 3, device="cuda"))


def test_same_padding_warning_is_pytorchs_and_comes_once(monkeypatch):
    """PyTorch warns once per process (TORCH_WARN_ONCE); its text is read from a fresh PyTorch process."""
    code = (
        "import warnings, torch\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for k in (4, 2, 6):\n"
        "        torch.nn.functional.conv1d(torch.randn(1, 1, 8), torch.randn(1, 1, k), padding='same')\n"
        "print(len(w)); print(w[0].category.__name__); print(str(w[0].message).split(' (Triggered')[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    monkeypatch.setattr(leafkit._functions.conv, "_SAME_WARNED", [False])
    got = []
    for k in (4, 2, 6):
        got += warnings_of(
            lambda k=k: leafkit.nn.functional.conv1d(leafkit.randn(1, 1, 8), leafkit.randn(1, 1, k), padding="same")
        )
    assert [str(len(got)), got[0][0], got[0][1]] == out
    assert (
        warnings_of(
            lambda: leafkit.nn.functional.conv1d(leafkit.randn(1, 1, 8), leafkit.randn(1, 1, 3), padding="same")
        )
        == []
    )


# ======================================================================= conv modules ==========
MODULES = [
    "nn.Conv2d(1, 6, 5)",
    "nn.Conv2d(6, 16, 5)",
    "nn.Conv2d(1, 6, 5, stride=2, padding=1, dilation=2, groups=1, bias=False)",
    "nn.Conv2d(4, 6, (3, 5), padding='same')",
    "nn.Conv2d(4, 6, 3, padding='valid')",
    "nn.Conv2d(4, 6, 4, padding='same', dilation=(1, 3))",
    "nn.Conv2d(2, 4, 3, padding=(1, 0))",
    "nn.Conv2d(4, 8, 3, groups=4)",
    "nn.Conv2d(2, 4, 3, padding_mode='reflect')",
    "nn.Conv2d(2, 4, 3, padding=1, padding_mode='circular')",
    "nn.Conv1d(2, 4, 3)",
    "nn.Conv1d(2, 4, 3, padding=2, groups=2)",
    "nn.Conv1d(2, 4, 4, padding='same')",
    "nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1, groups=2, dilation=2, bias=False)",
    "nn.ConvTranspose1d(2, 4, 3)",
    "nn.MaxPool2d(2)",
    "nn.MaxPool2d((2, 3), stride=1, padding=1, dilation=2, return_indices=True, ceil_mode=True)",
    "nn.MaxPool1d(3)",
    "nn.MaxPool1d(2, return_indices=True)",
    "nn.AvgPool2d(2)",
    "nn.AvgPool2d((2, 3), 1, 1, True, False, 3)",
    "nn.AvgPool1d(2)",
    "nn.AvgPool1d(3, 2, 1)",
    "nn.AdaptiveAvgPool2d((5, 7))",
    "nn.AdaptiveAvgPool2d(1)",
    "nn.AdaptiveAvgPool2d((None, 7))",
    "nn.AdaptiveAvgPool1d(3)",
    "nn.Flatten()",
    "nn.Flatten(0, -1)",
    "nn.Unflatten(1, (2, 5))",
    "nn.Unflatten(1, [3, 1])",
    "nn.Dropout2d()",
    "nn.Dropout2d(0.2, True)",
    "nn.Dropout1d(0.3)",
    "nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(), "
    "nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.Dropout2d(), nn.Linear(120, 10))",
]
ATTRS = (
    "in_channels",
    "out_channels",
    "kernel_size",
    "stride",
    "padding",
    "dilation",
    "groups",
    "padding_mode",
    "transposed",
    "output_padding",
    "_reversed_padding_repeated_twice",
    "return_indices",
    "ceil_mode",
    "count_include_pad",
    "divisor_override",
    "output_size",
    "start_dim",
    "end_dim",
    "dim",
    "unflattened_size",
    "p",
    "inplace",
    "training",
)


@pytest.mark.parametrize("expr", MODULES)
def test_module_repr_attributes_and_parameters_match_pytorch(expr):
    def run(lib):
        m = eval(expr, {"nn": lib.nn})  # noqa: S307 - the expressions above
        attrs = {a: getattr(m, a) for a in ATTRS if hasattr(m, a)}
        return (
            repr(m),
            attrs,
            [(n, tuple(p.shape), str(p.dtype), p.requires_grad, p.is_leaf) for n, p in m.named_parameters()],
            list(m.state_dict()),
        )

    assert both(run)[0] == both(run)[1]


MODULE_ERRORS = [
    "nn.Conv2d(3, 4, 3, stride=2, padding='same')",
    "nn.Conv2d(3, 4, 3, stride=(1, 2), padding='same')",
    "nn.Conv2d(3, 4, 3, padding='foo')",
    "nn.Conv2d(3, 4, 3, groups=2)",
    "nn.Conv2d(4, 3, 3, groups=2)",
    "nn.Conv2d(4, 4, 3, groups=0)",
    "nn.Conv2d(4, 4, 3, groups=-1)",
    "nn.Conv2d(4, 4, 3, padding_mode='foo')",
    "nn.Conv1d(4, 4, 3, padding='same', stride=2)",
    "nn.ConvTranspose2d(2, 4, 3, padding_mode='reflect')",
    "nn.Dropout2d(1.5)",
    "nn.Dropout1d(-0.1)",
    "nn.Unflatten(1, 3)",
    "nn.Unflatten(1, (3.0, 1))",
    "nn.Unflatten('a', ((3, 1),))",
    "nn.Unflatten('a', (3, 1))(lib.randn(2, 3))",
    "nn.Conv2d(3, 4, 3)(lib.randn(3, 4, 5, 5))",
    "nn.Conv2d(3, 4, 3)(lib.randn(5, 5))",
    "nn.Conv1d(3, 4, 3)(lib.randn(2, 3, 2))",
    "nn.MaxPool2d(7)(lib.randn(1, 3, 6, 6))",
    "nn.Flatten()(lib.randn(3))",
    "nn.Unflatten(1, (2, 2))(lib.randn(2, 3))",
    "nn.ConvTranspose2d(2, 4, 3, stride=2)(lib.randn(1, 2, 5, 5), output_size=[14, 14])",
    "nn.ConvTranspose2d(2, 4, 3, stride=2)(lib.randn(1, 2, 5, 5), output_size=[1, 12, 12, 12, 12])",
]


def _sorted_sets(message):
    """A Python set in a message in sorted order: PyTorch prints ``{'zeros', 'reflect', ...}`` in whatever order the
    set literal's compiled constant iterates in this process."""
    return re.sub(r"\{('[^{}]*')\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


@pytest.mark.parametrize("expr", MODULE_ERRORS)
def test_module_errors_match_pytorch(expr):
    lk, th = both(lambda lib: error_of(lambda: eval(expr, {"nn": lib.nn, "lib": lib})))  # noqa: S307
    assert th is not None
    assert (lk[0], _sorted_sets(lk[1])) == (th[0], _sorted_sets(th[1]))


@pytest.mark.parametrize(
    "expr",
    [
        "nn.Conv2d(2, 4, 3)",
        "nn.Conv2d(2, 4, 3, stride=2, padding='same' if False else 1, dilation=2, groups=2)",
        "nn.Conv2d(2, 4, 4, padding='same')",
        "nn.Conv1d(3, 6, 3, groups=3, bias=False)",
        "nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1)",
        "nn.ConvTranspose1d(2, 4, 3, groups=2)",
    ],
)
def test_conv_module_forward_backward_with_the_same_weights_matches_pytorch(expr):
    """PyTorch's module gets leafkit's initial weights; outputs, gradients and graphs agree (unbatched too)."""
    lm = eval(expr, {"nn": leafkit.nn})  # noqa: S307
    tm = eval(expr, {"nn": torch.nn})  # noqa: S307
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lm.state_dict().items()})
    ch = lm.in_channels
    X = arr(2, ch, 7, 6, dtype=np.float32) if "2d" in expr else arr(2, ch, 9, dtype=np.float32)
    for x_np in (X, X[0]):
        outs = []
        for lib, m in ((leafkit, lm), (torch, tm)):
            m.zero_grad()
            x = lib.tensor(x_np, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = m(x)
            (y * y).sum().backward()
            outs.append([np_(y), np_(x.grad), tree(y)] + [np_(p.grad) for p in m.parameters()])
        assert outs[0][2] == outs[1][2]
        assert_close(outs[0][:2] + outs[0][3:], outs[1][:2] + outs[1][3:], 1e-4, 1e-5)


@pytest.mark.parametrize(
    "args", [(1, 6, 5), (6, 16, 5), (16, 32, (3, 1)), (4, 8, 3, 1, 0, 1, 2), (3, 2, 2, 1, 0, 1, 1, True, "zeros")]
)
@pytest.mark.parametrize("cls", ["Conv2d", "ConvTranspose2d"])
def test_default_initialisation_has_pytorchs_bounds(cls, args):
    """kaiming_uniform_(a=sqrt(5)): weight and bias uniform on ±1/sqrt(fan_in); leafkit's draws fill the interval
    as PyTorch's do (same bound, spread and mean within sampling error).  The numbers themselves come from each
    library's generator."""
    if cls == "ConvTranspose2d" and len(args) > 6:
        args = args[:5]

    def draws(lib):
        lib.manual_seed(0)
        ws, bs = [], []
        for _ in range(40):
            m = getattr(lib.nn, cls)(*args)
            ws.append(m.weight.detach().numpy().ravel())
            bs.append(m.bias.detach().numpy().ravel())
        fan_in = m.weight.shape[1] * math.prod(m.weight.shape[2:])
        return np.concatenate(ws), np.concatenate(bs), fan_in

    (wl, bl, fl), (wt, bt, ft) = both(draws)
    assert fl == ft
    bound = 1 / math.sqrt(fl)
    for lk_v, th_v in ((wl, wt), (bl, bt)):
        assert np.abs(lk_v).max() <= bound * (1 + 1e-6) and np.abs(th_v).max() <= bound * (1 + 1e-6)
        assert np.abs(lk_v).max() > 0.9 * bound
        se = bound / math.sqrt(3 * lk_v.size)
        assert abs(lk_v.mean()) < 6 * se
        assert abs(lk_v.std() - th_v.std()) < 0.1 * bound


# ============================================================================ padding ==========
@pytest.mark.parametrize(
    "pad,value,shape",
    [
        ((1, 2), None, (2, 3, 4)),
        ((1, 2, 0, 1), 0.5, (2, 3, 4)),
        ((-1, 1), None, (3, 4)),
        ((0, 0), None, (3,)),
        ((1, 1, 1, 1, 1, 1), None, (2, 3, 4)),
        ((-2, -2), None, (2, 4)),
    ],
)
def test_pad_values_gradients_and_nodes_match_pytorch(pad, value, shape):
    X = arr(*shape)

    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = lib.nn.functional.pad(x, pad, value=value)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        return np_(y), tree(y), saved(y.grad_fn), np_(g), tree(g), y.data_ptr() == x.data_ptr()

    lk, th = both(run)
    assert lk[1] == th[1] and lk[2] == th[2] and lk[4] == th[4] and lk[5] == th[5]
    assert_close([lk[0], lk[3]], [th[0], th[3]])


@pytest.mark.parametrize(
    "call",
    [
        "F.pad(x, (1,))",
        "F.pad(x, (1, 2, 3))",
        "F.pad(x, (1, 1, 1, 1, 1, 1, 1, 1))",
        "F.pad(x, (-3, -3))",
        "F.pad(x, (-6, 2))",
        "F.pad(x, (1, 1), mode='foo')",
        "F.pad(x, (1, 1), mode='reflect', value=1)",
        "F.pad(x, [1.5, 1])",
        "lib.constant_pad_nd(x, (1, 2, 3))",
    ],
)
def test_pad_errors_match_pytorch(call):
    lk, th = both(
        lambda lib: error_of(lambda: eval(call, {"F": lib.nn.functional, "lib": lib, "x": lib.randn(2, 3, 5)}))
    )  # noqa: S307
    assert th is not None and lk == th


def test_adaptive_pooling_to_an_empty_size_works_and_its_backward_raises_like_pytorch():
    def run(lib):
        x = lib.randn(2, 3, 4, 4, requires_grad=True)
        y = lib.nn.functional.adaptive_avg_pool2d(x, (0, 2))
        return tuple(y.shape), tree(y), error_of(lambda: y.sum().backward())

    lk, th = both(run)
    assert lk == th and th[2] is not None


def test_pad_of_an_integer_tensor_casts_the_value_like_pytorch():
    lk, th = both(lambda lib: str(lib.nn.functional.pad(lib.arange(3), (1, 1), value=2.5)))
    assert lk == th


# ============================================================================ pooling ==========
POOL_CASES = {
    "max2": "F.max_pool2d(x, 2)",
    "max2_indices": "F.max_pool2d(x, 2, return_indices=True)",
    "max2_overlap_pad": "F.max_pool2d(x, 3, 1, 1, return_indices=True)",
    "max2_dilation_ceil": "F.max_pool2d(x, (2, 3), (2, 1), (1, 1), (2, 1), True, True)",
    "max2_tuple_kernel_one": "F.max_pool2d(x, (2,), stride=(1,))",
    "max2_unbatched": "F.max_pool2d(x[0], 2, ceil_mode=True)",
    "max1": "F.max_pool1d(x[0], 3, 2, 1)",
    "max1_indices": "F.max_pool1d(x[0], 2, return_indices=True)",
    "max1_2d": "F.max_pool1d(x[0, 0], 2, ceil_mode=True)",
    "torch_max2": "lib.max_pool2d(x, 3, 2, 1)",
    "torch_max1": "lib.max_pool1d(x[0], 2)",
    "avg2": "F.avg_pool2d(x, 2)",
    "avg2_pad_exclude": "F.avg_pool2d(x, 3, 2, 1, True, False)",
    "avg2_pad_include": "F.avg_pool2d(x, 3, 2, 1, True, True)",
    "avg2_divisor": "F.avg_pool2d(x, (3, 2), (1, 2), (1, 0), False, True, 5)",
    "avg2_unbatched": "F.avg_pool2d(x[0], 2, ceil_mode=True)",
    "avg1": "F.avg_pool1d(x[0], 3, 2, 1, True)",
    "torch_avg1": "lib.avg_pool1d(x[0], 2)",
    "adaptive2": "F.adaptive_avg_pool2d(x, (3, 4))",
    "adaptive2_bigger": "F.adaptive_avg_pool2d(x, (7, 9))",
    "adaptive2_none": "F.adaptive_avg_pool2d(x[0], (None, 2))",
    "adaptive2_global": "F.adaptive_avg_pool2d(x, 1)",
    "adaptive2_global_unbatched": "F.adaptive_avg_pool2d(x[0], (1, 1))",
    "adaptive1": "F.adaptive_avg_pool1d(x[0], 4)",
    "adaptive1_global": "F.adaptive_avg_pool1d(x[0], 1)",
    "module_max": "lib.nn.MaxPool2d(3, stride=2, padding=1)(x)",
    "module_avg": "lib.nn.AvgPool2d(2, ceil_mode=True)(x)",
    "module_adaptive": "lib.nn.AdaptiveAvgPool2d((2, None))(x)",
    "module_max1": "lib.nn.MaxPool1d(2, return_indices=True)(x[0])",
}


@pytest.mark.parametrize("name", sorted(POOL_CASES))
def test_pooling_values_gradients_second_derivatives_and_nodes_match_pytorch(name):
    X = arr(2, 3, 5, 6)

    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        out = eval(POOL_CASES[name], {"F": lib.nn.functional, "lib": lib, "x": x})  # noqa: S307
        y, idx = out if isinstance(out, tuple) else (out, None)
        g = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), requires_grad=True)
        (gx,) = lib.autograd.grad((y * g).sum(), x, create_graph=True)
        node = y.grad_fn
        while node.name().startswith(("Squeeze", "Unsqueeze")):
            node = node.next_functions[0][0]
        double_saved = saved(gx.grad_fn)
        second = lib.autograd.grad((gx * gx).sum(), [x, g], allow_unused=True)
        return {
            "y": np_(y),
            "idx": None if idx is None else (idx.numpy().copy(), str(idx.dtype), idx.requires_grad, idx.grad_fn),
            "tree": tree(y),
            "saved": saved(node),
            "gx": np_(gx),
            "gx_tree": tree(gx),
            "double_saved": double_saved,
            "second": [np_(s) for s in second],
            "contiguous": y.is_contiguous(),
        }

    lk, th = both(run)
    keys = ["tree", "gx_tree", "saved", "double_saved", "contiguous"]
    if th["tree"][0] == "MeanBackward1" or th["tree"][1][0][0] == "MeanBackward1":
        keys.remove("saved")  # the mean's own node: leafkit saves its dims wrapped and no numel (not this op's)
    for key in keys:
        assert lk[key] == th[key], key
    if th["idx"] is not None:
        np.testing.assert_array_equal(lk["idx"][0], th["idx"][0])
        assert lk["idx"][1:] == th["idx"][1:]
    assert_close([lk["y"], lk["gx"]] + lk["second"], [th["y"], th["gx"]] + th["second"], 1e-10, 1e-12)


@pytest.mark.parametrize(
    "values",
    [
        [[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]],
        [[1.0, math.nan, 2.0], [5.0, 1.0, math.nan], [1.0, 1.0, 1.0]],
        [[-math.inf] * 3] * 3,
        [[-math.inf, 1.0, -math.inf], [-math.inf, -math.inf, -math.inf], [2.0, -math.inf, math.inf]],
    ],
    ids=["ties", "nan", "all_minus_inf", "some_inf"],
)
@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2, stride=1),
        dict(kernel_size=2, stride=1, padding=1),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
        dict(kernel_size=2, stride=1, padding=1, dilation=2),
    ],
)
def test_max_pool_ties_nan_and_padding_choose_pytorchs_element(values, kw):
    def run(lib):
        x = lib.tensor([[values]], requires_grad=True)
        y, idx = lib.nn.functional.max_pool2d(x, return_indices=True, **kw)
        y.sum().backward()
        return np_(y), idx.numpy(), x.grad.numpy()

    lk, th = both(run)
    for a, b in zip(lk, th):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8", "float16", "float32"])
def test_max_pool_integer_and_half_inputs_match_pytorch(dtype):
    X = RNG.integers(-50, 50, (2, 3, 5, 5))
    if dtype == "uint8":
        X = np.abs(X)

    def run(lib):
        x = lib.tensor(X, dtype=getattr(lib, dtype))
        out = [lib.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)]
        out.append((lib.nn.functional.max_pool2d(x, 2, padding=1), None))
        return [(y.numpy().astype(np.float64), str(y.dtype), None if i is None else i.numpy()) for y, i in out]

    lk, th = both(run)
    for (a, da, ia), (b, db, ib) in zip(lk, th):
        assert da == db
        np.testing.assert_array_equal(a, b)
        if ia is not None:
            np.testing.assert_array_equal(ia, ib)


@pytest.mark.parametrize("dtype", ["int64", "float16", "float64"])
def test_avg_pool_integer_division_and_half_match_pytorch(dtype):
    X = RNG.integers(-50, 50, (2, 3, 5, 5))

    def run(lib):
        x = lib.tensor(X, dtype=getattr(lib, dtype))
        ys = [
            lib.nn.functional.avg_pool2d(x, 2, padding=1),
            lib.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
            lib.nn.functional.avg_pool2d(x, 2, divisor_override=3),
        ]
        return [(y.double().numpy(), str(y.dtype)) for y in ys]

    lk, th = both(run)
    for (a, da), (b, db) in zip(lk, th):
        assert da == db
        np.testing.assert_allclose(a, b, rtol=2e-3 if dtype == "float16" else 1e-12)


POOL_ERRORS = {
    "max_2d_input": "F.max_pool2d(x[0, 0], 2)",
    "max_5d_input": "F.max_pool2d(x.unsqueeze(0), 2)",
    "max_zero_H": "F.max_pool2d(x[:, :, :0], 1)",
    "max_zero_C": "F.max_pool2d(x[:, :0], 1)",
    "max_output_too_small": "F.max_pool2d(x, 7)",
    "max_dilated_too_small": "F.max_pool2d(x, 3, dilation=3)",
    "max_kernel_zero": "F.max_pool2d(x, 0)",
    "max_kernel_negative": "F.max_pool2d(x, -1)",
    "max_stride_zero": "F.max_pool2d(x, 2, 0)",
    "max_stride_negative": "F.max_pool2d(x, 2, -1)",
    "max_dilation_zero": "F.max_pool2d(x, 2, dilation=0)",
    "max_pad_negative": "F.max_pool2d(x, 2, padding=-1)",
    "max_pad_too_big": "F.max_pool2d(x, 2, padding=2)",
    "max_pad_half_kernel": "F.max_pool2d(x, 3, padding=(0, 2), dilation=2)",
    "max_kernel_3": "F.max_pool2d(x, (2, 2, 2))",
    "max_stride_3": "F.max_pool2d(x, 2, (2, 2, 2))",
    "max_padding_3": "F.max_pool2d(x, 2, 2, (1, 1, 1))",
    "max_dilation_3": "F.max_pool2d(x, 2, 2, 0, (1, 1, 1))",
    "max_order_params_first": "F.max_pool2d(x[0, 0], (1, 1, 1))",
    "max_order_dims_second": "F.max_pool2d(x[0, 0], 2, padding=-1)",
    "max_order_stride_before_dtype": "F.max_pool2d(x.bool(), 0)",
    "max_bool": "F.max_pool2d(x.bool(), 2)",
    "max_kernel_float": "F.max_pool2d(x, 2.5)",
    "max_stride_float": "F.max_pool2d(x, 2, stride=2.0)",
    "max_ceil_int": "F.max_pool2d(x, 2, ceil_mode=1)",
    "max_indices_kernel_float": "F.max_pool2d(x, 2.0, return_indices=True)",
    "torch_max_return_indices": "lib.max_pool2d(x, 2, return_indices=True)",
    "max1_1d_input": "F.max_pool1d(x[0, 0, 0], 2)",
    "max1_4d_input": "F.max_pool1d(x, 2)",
    "max1_zero_L": "F.max_pool1d(x[0, :, :0], 1)",
    "max1_kernel_2": "F.max_pool1d(x[0], (2, 2))",
    "max1_kernel_empty": "F.max_pool1d(x[0], ())",
    "max1_stride_2": "F.max_pool1d(x[0], 2, (2, 2))",
    "max1_padding_2": "F.max_pool1d(x[0], 2, 2, (1, 1))",
    "max1_dilation_2": "F.max_pool1d(x[0], 2, 2, 0, (1, 1))",
    "max1_kernel_zero": "F.max_pool1d(x[0], 0)",
    "max1_stride_zero": "F.max_pool1d(x[0], 2, 0)",
    "max1_padding_negative": "F.max_pool1d(x[0], 2, 2, -1)",
    "max1_padding_big": "F.max_pool1d(x[0], 2, padding=2)",
    "max1_dilation_zero": "F.max_pool1d(x[0], 2, 2, 0, 0)",
    "max1_too_small": "F.max_pool1d(x[0], 7)",
    "max1_bool": "F.max_pool1d(x[0].bool(), 2)",
    "max1_kernel_float": "F.max_pool1d(x[0], 2.0)",
    "avg_2d_input": "F.avg_pool2d(x[0, 0], 2)",
    "avg_1d_input": "F.avg_pool2d(x[0, 0, 0], 2)",
    "avg_5d_input": "F.avg_pool2d(x.unsqueeze(0), 2)",
    "avg_zero_H": "F.avg_pool2d(x[:, :, :0], 1)",
    "avg_too_small": "F.avg_pool2d(x, 7)",
    "avg_kernel_zero": "F.avg_pool2d(x, 0)",
    "avg_stride_zero": "F.avg_pool2d(x, 2, 0)",
    "avg_pad_too_big": "F.avg_pool2d(x, 2, padding=2)",
    "avg_pad_negative": "F.avg_pool2d(x, 2, padding=-1)",
    "avg_kernel_3": "F.avg_pool2d(x, (2, 2, 2))",
    "avg_stride_3": "F.avg_pool2d(x, 2, (1, 1, 1))",
    "avg_divisor_zero": "F.avg_pool2d(x, 2, divisor_override=0)",
    "avg_divisor_float": "F.avg_pool2d(x, 2, divisor_override=1.5)",
    "avg_ceil_int_keyword": "F.avg_pool2d(x, 2, ceil_mode=1)",
    "avg_count_none": "F.avg_pool2d(x, 2, count_include_pad=None)",
    "avg_kernel_none": "F.avg_pool2d(x, None)",
    "avg_order_params_first": "F.avg_pool2d(x[0, 0], (1, 1, 1))",
    "avg_order_divisor": "F.avg_pool2d(x[0, 0], 2, divisor_override=0)",
    "avg_order_stride_before_dtype": "F.avg_pool2d(x.bool(), 0)",
    "avg_bool": "F.avg_pool2d(x.bool(), 2)",
    "avg_int": "F.avg_pool2d(x.int(), 2)",
    "avg_int8": "F.avg_pool2d(x.to(lib.int8), 2)",
    "avg_uint8": "F.avg_pool2d(x.to(lib.uint8), 2)",
    "avg1_4d_input": "F.avg_pool1d(x, 2)",
    "avg1_1d_input": "F.avg_pool1d(x[0, 0, 0], 2)",
    "avg1_kernel_2": "F.avg_pool1d(x[0], (2, 2))",
    "avg1_stride_2": "F.avg_pool1d(x[0], 2, (2, 2))",
    "avg1_padding_2": "F.avg_pool1d(x[0], 2, 2, (1, 1))",
    "avg1_kernel_zero": "F.avg_pool1d(x[0], 0)",
    "avg1_pad_big": "F.avg_pool1d(x[0], 2, 2, 2)",
    "avg1_too_small": "F.avg_pool1d(x[0], 7)",
    "avg1_bool": "F.avg_pool1d(x[0].bool(), 2)",
    "avg1_int": "F.avg_pool1d(x[0].int(), 2)",
    "avg1_kernel_float": "F.avg_pool1d(x[0], 2.0)",
    "avg1_stride_float_keyword": "F.avg_pool1d(x[0], kernel_size=2, stride=2.0)",
    "adaptive_2d_input": "F.adaptive_avg_pool2d(x[0, 0], 2)",
    "adaptive_5d_input": "F.adaptive_avg_pool2d(x.unsqueeze(0), 2)",
    "adaptive_zero_H": "F.adaptive_avg_pool2d(x[:, :, :0], 2)",
    "adaptive_negative": "F.adaptive_avg_pool2d(x, -1)",
    "adaptive_negative_before_dims": "F.adaptive_avg_pool2d(x[0, 0], -1)",
    "adaptive_three": "F.adaptive_avg_pool2d(x, (1, 2, 3))",
    "adaptive_list_of_one": "F.adaptive_avg_pool2d(x, [3])",
    "adaptive_too_long_for_input": "F.adaptive_avg_pool2d(x[0], (1, 2, 3))",
    "adaptive_too_long_none": "F.adaptive_avg_pool2d(x[0, 0], (None, 2))",
    "adaptive_none": "F.adaptive_avg_pool2d(x, None)",
    "adaptive_float": "F.adaptive_avg_pool2d(x, 2.0)",
    "adaptive_str": "F.adaptive_avg_pool2d(x, (2, 'a'))",
    "adaptive_long": "F.adaptive_avg_pool2d(x.long(), 2)",
    "adaptive_long_global": "F.adaptive_avg_pool2d(x.long(), 1)",
    "adaptive_bool": "F.adaptive_avg_pool2d(x.bool(), 2)",
    "adaptive1_two": "F.adaptive_avg_pool1d(x[0], (2, 2))",
    "adaptive1_4d_input": "F.adaptive_avg_pool1d(x, 2)",
    "adaptive1_1d_input": "F.adaptive_avg_pool1d(x[0, 0, 0], 2)",
    "adaptive1_negative": "F.adaptive_avg_pool1d(x[0], -1)",
    "adaptive1_zero_L": "F.adaptive_avg_pool1d(x[0, 0, :, :0], 2)",
    "adaptive1_long": "F.adaptive_avg_pool1d(x[0].long(), 2)",
    "adaptive1_float": "F.adaptive_avg_pool1d(x[0], 2.0)",
}


@pytest.mark.parametrize("name", sorted(POOL_ERRORS))
def test_pooling_errors_match_pytorch(name):
    def run(lib):
        x = lib.randn(2, 3, 6, 6)
        return error_of(lambda: eval(POOL_ERRORS[name], {"F": lib.nn.functional, "lib": lib, "x": x}))  # noqa: S307

    lk, th = both(run)
    assert th is not None
    assert lk == th


def test_lenet_forward_backward_matches_pytorch_with_the_same_weights():
    """LeNet-5 as the benchmark builds it (conv, ReLU, max-pool twice, Flatten, three Linear, cross entropy)."""

    def make(lib):
        nn = lib.nn
        return nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(400, 120),
            nn.ReLU(),
            nn.Linear(120, 84),
            nn.ReLU(),
            nn.Linear(84, 10),
        )

    lm, tm = make(leafkit), make(torch)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lm.state_dict().items()})
    X = arr(8, 1, 28, 28, dtype=np.float32)
    y = RNG.integers(0, 10, 8)
    res = []
    for lib, m in ((leafkit, lm), (torch, tm)):
        loss = lib.nn.functional.cross_entropy(m(lib.tensor(X)), lib.tensor(y))
        loss.backward()
        res.append((loss.item(), tree(loss), [np_(p.grad) for p in m.parameters()]))
    assert res[0][1] == res[1][1]
    assert res[0][0] == pytest.approx(res[1][0], rel=1e-5)
    assert_close(res[0][2], res[1][2], 1e-3, 1e-5)


# ================================================================== Flatten / Unflatten ==========
@pytest.mark.parametrize(
    "call",
    [
        "nn.Flatten()(x)",
        "nn.Flatten(0, -1)(x)",
        "nn.Flatten(2)(x)",
        "nn.Flatten(-3, -2)(x.transpose(1, 2))",
        "nn.Unflatten(1, (3, 1))(x)",
        "nn.Unflatten(-1, [2, -1])(x)",
        "x.unflatten(1, (3, 1))",
        "x.transpose(0, 3).unflatten(0, (2, 2))",
        "lib.unflatten(x, -1, lib.Size([2, 2]))",
        "x.unflatten(dim=2, sizes=[1, 5])",
        "lib.flatten(x, 1, 2)",
    ],
)
def test_flatten_unflatten_values_and_nodes_match_pytorch(call):
    X = arr(2, 3, 5, 4)

    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = eval(call, {"nn": lib.nn, "lib": lib, "x": x})  # noqa: S307
        (y * y).sum().backward()
        return np_(y), tree(y), np_(x.grad), tuple(y.shape)

    lk, th = both(run)
    assert lk[1] == th[1] and lk[3] == th[3]
    assert_close([lk[0], lk[2]], [th[0], th[2]])


@pytest.mark.parametrize(
    "call",
    [
        "x.unflatten(1, (2, 2))",
        "x.unflatten(1, (-1, -1))",
        "x.unflatten(1, (-2, 3))",
        "x.unflatten(1, (2, -1))",
        "x.unflatten(1, (0, -1))",
        "x.unflatten(1, ())",
        "x.unflatten(4, (1,))",
        "lib.tensor(2.0).unflatten(0, (1,))",
        "nn.Flatten()(lib.tensor(3.0))",
        "nn.Flatten(2, 1)(x)",
    ],
)
def test_unflatten_errors_match_pytorch(call):
    lk, th = both(lambda lib: error_of(lambda: eval(call, {"nn": lib.nn, "lib": lib, "x": lib.randn(2, 3, 4, 5)})))  # noqa: S307
    assert th is not None and lk == th


# ================================================================ Dropout2d, Dropout1d ==========
@pytest.mark.parametrize(
    "fn,shape", [("dropout2d", (4, 5, 3, 3)), ("dropout2d", (4, 5, 6)), ("dropout1d", (4, 5, 6)), ("dropout1d", (5, 6))]
)
@pytest.mark.parametrize("inplace", [False, True])
def test_channel_dropout_with_pytorchs_mask_injected_matches(monkeypatch, fn, shape, inplace):
    """PyTorch draws the channel mask; leafkit is given the same one: output, graph, saved mask and gradient agree."""
    X, R = arr(*shape, dtype=np.float32), arr(*shape, dtype=np.float32)
    torch.manual_seed(5)
    xt = torch.tensor(X, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yt = getattr(torch.nn.functional, fn)(xt * 1 if inplace else xt, 0.4, True, inplace)
    mul = yt.grad_fn
    while mul.name() != "MulBackward0":
        mul = mul.next_functions[0][0]
    mask = mul._saved_other.numpy().copy()
    (yt * torch.tensor(R)).sum().backward()
    monkeypatch.setattr(LCNN, "_feature_noise", lambda input, p: leafkit.tensor(mask))
    xl = leafkit.tensor(X, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yl = getattr(leafkit.nn.functional, fn)(xl * 1 if inplace else xl, 0.4, True, inplace)
    (yl * leafkit.tensor(R)).sum().backward()
    assert tree(yl) == tree(yt)
    np.testing.assert_array_equal(np_(yl), np_(yt))
    np.testing.assert_array_equal(xl.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout2d_mask_is_one_value_per_channel_with_pytorchs_scale_and_rate(p):
    n, c = 400, 50

    def run(lib):
        lib.manual_seed(0)
        x = lib.ones(n, c, 3, 2, requires_grad=True)
        y = lib.nn.functional.dropout2d(x, p)
        m = y.grad_fn._saved_other
        return y.detach().numpy(), tuple(m.shape), str(m.dtype), tree(y)

    (yl, sl, dl, tl), (yt, st, dt, tt) = both(run)
    assert (
        (sl, dl, tl)
        == (st, dt, tt)
        == ((n, c, 1, 1), "torch.float32", ("MulBackward0", (("AccumulateGrad", ()), None)))
    )
    for y in (yl, yt):
        per_channel = y.reshape(n, c, -1)
        assert (per_channel == per_channel[:, :, :1]).all()  # a whole channel kept or dropped
    assert set(np.unique(yl).tolist()) == set(np.unique(yt).tolist())
    tol = 5 * math.sqrt(p * (1 - p) / (n * c))
    for y in (yl, yt):
        assert abs((y[:, :, 0, 0] == 0).mean() - p) < tol


@pytest.mark.parametrize(
    "call",
    [
        "F.dropout2d(x, 0.0)",
        "F.dropout2d(x, 0.5, training=False)",
        "F.dropout2d(x[:0], 0.5)",
        "F.dropout2d(x, 1.0)",
        "F.dropout1d(x[0], 1.0)",
        "nn.Dropout2d().eval()(x)",
        "nn.Dropout1d(0.0)(x[0])",
    ],
)
def test_channel_dropout_off_p1_and_eval_match_pytorch(call):
    X = arr(3, 4, 2, 2, dtype=np.float32)

    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = eval(call, {"F": lib.nn.functional, "nn": lib.nn, "x": x})  # noqa: S307
        return y is x, tree(y), np_(y)

    lk, th = both(run)
    assert lk[:2] == th[:2]
    assert_close(lk[2], th[2])


@pytest.mark.parametrize(
    "call",
    [
        "F.dropout2d(x[0], 0.5)",
        "F.dropout2d(x[0, 0], 0.5)",
        "F.dropout2d(x.unsqueeze(0), 0.5)",
        "F.dropout2d(x, 0.5)",
        "nn.Dropout2d()(x[0])",
        "F.dropout2d(x[0, 0, 0], 0.5)",
        "F.dropout2d(x, 1.5)",
        "F.dropout2d(x.long(), 0.5)",
        "F.dropout1d(x, 0.5)",
        "F.dropout1d(x[0, 0, 0], 0.5)",
        "F.dropout1d(x[0], -1)",
        "F.dropout2d(lib.randn(2, 3, requires_grad=True), 0.5, inplace=True)",
    ],
)
def test_channel_dropout_warnings_and_errors_match_pytorch(call):
    def run(lib):
        x = lib.randn(2, 3, 4, 4)
        env = {"F": lib.nn.functional, "nn": lib.nn, "x": x, "lib": lib}
        return warnings_of(lambda: error_of(lambda: eval(call, env))), error_of(lambda: eval(call, env))  # noqa: S307

    lk, th = both(run)
    assert lk == th


# ========================================================================= the tutorial ==========
BLITZ = """
class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, self.num_flat_features(x))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

    def num_flat_features(self, x):
        size = x.size()[1:]
        num_features = 1
        for s in size:
            num_features *= s
        return num_features


net = Net()
print(net)
params = list(net.parameters())
print(len(params))
print(params[0].size())
input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)
net.zero_grad()
out.backward(torch.randn(1, 10))
output = net(input)
target = torch.arange(1, 11)
target = target.view(1, -1)
criterion = nn.MSELoss()
loss = criterion(output, target)
print(loss)
print(loss.grad_fn)
print(loss.grad_fn.next_functions[0][0])
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])
net.zero_grad()
print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)
loss.backward()
print('conv1.bias.grad after backward')
print(net.conv1.bias.grad)
learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)
optimizer = optim.SGD(net.parameters(), lr=0.01)
optimizer.zero_grad()
output = net(input)
loss = criterion(output, target)
loss.backward()
optimizer.step()
print(loss.grad_fn, output.shape, [p.is_leaf for p in net.parameters()])
"""


def test_the_60_minute_blitz_neural_networks_tutorial_prints_what_pytorch_prints():
    """PyTorch's "Neural Networks" tutorial (beginner_source/blitz/neural_networks_tutorial.py), its code as
    published, under ``import leafkit as torch``: the same lines, numbers aside (each library draws its own)."""
    printed = []
    for lib in (leafkit, torch):
        lines = []
        env = {
            "torch": lib,
            "nn": lib.nn,
            "F": lib.nn.functional,
            "optim": lib.optim,
            "print": lambda *a, lines=lines: lines.append(" ".join(map(str, a))),
        }
        lib.manual_seed(0)
        exec(BLITZ, env)  # noqa: S102 - the tutorial's code
        text = "\n".join(lines)
        text = re.sub(r"0x[0-9a-f]+", "ADDR", text)
        printed.append(re.sub(r"[ \t]+", "", re.sub(r"-?\d+\.\d+(e[-+]\d+)?", "NUM", text)))
    assert printed[0] == printed[1]
