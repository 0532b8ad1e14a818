"""Tests for leafkit._tensor_str: PyTorch-identical tensor printing.

Two groups:

* fixed expectations (strings recorded from PyTorch 2.13), run without torch;
* parity tests that compare ``format_tensor`` with ``repr(torch.tensor(...))``
  on hand-picked tricky arrays and on hypothesis-generated ones; skipped when
  torch is not installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from leafkit._tensor_str import (
    format_tensor,
    get_printoptions,
    printoptions,
    set_printoptions,
)

NAN, INF = math.nan, math.inf
f32, f64, f16 = np.float32, np.float64, np.float16


@pytest.fixture(autouse=True)
def _default_printoptions():
    """Every test starts and ends with PyTorch's default options."""
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")


# --------------------------------------------------------------- without torch

FIXED = [
    (np.array([1.0, 2.0], f32), "float32", "tensor([1., 2.])"),
    (np.array(8.0, f32), "float32", "tensor(8.)"),
    (np.array([1.0, 2.5], f32), "float32", "tensor([1.0000, 2.5000])"),
    (np.array([1e-5, 1e5], f32), "float32", "tensor([1.0000e-05, 1.0000e+05])"),
    (np.array([1e-5, 1.0], f32), "float32", "tensor([1.0000e-05, 1.0000e+00])"),
    (np.array([1e8, 1.0], f32), "float32", "tensor([1.0000e+08, 1.0000e+00])"),
    (np.array([NAN, 1.5, -INF], f32), "float32", "tensor([   nan, 1.5000,   -inf])"),
    (np.array([-0.0, 1.0], f32), "float32", "tensor([-0., 1.])"),
    (np.array(-0.0, f32), "float32", "tensor(-0.)"),
    (np.array([True, False]), "bool", "tensor([ True, False])"),
    (np.array(True), "bool", "tensor(True)"),
    (np.array(3), "int64", "tensor(3)"),
    (np.array([1, -100, 3]), "int64", "tensor([   1, -100,    3])"),
    (np.array([[1, 2], [3, 4]], np.int32), "int32", "tensor([[1, 2],\n        [3, 4]], dtype=torch.int32)"),
    (np.array([1.0, 2.0]), "float64", "tensor([1., 2.], dtype=torch.float64)"),
    (np.array([1.5], f16), "float16", "tensor([1.5000], dtype=torch.float16)"),
    (
        np.array([[0.1234567, 12.5], [-3.0, INF]], f32),
        "float32",
        "tensor([[ 0.1235, 12.5000],\n        [-3.0000,     inf]])",
    ),
    (
        np.arange(12.0, dtype=f32).reshape(2, 2, 3) / 4,
        "float32",
        "tensor([[[0.0000, 0.2500, 0.5000],\n         [0.7500, 1.0000, 1.2500]],\n\n"
        "        [[1.5000, 1.7500, 2.0000],\n         [2.2500, 2.5000, 2.7500]]])",
    ),
    (np.arange(2000), "int64", "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (
        np.arange(30, dtype=f32) * 1.5,
        "float32",
        "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
        "        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n"
        "        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n"
        "        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])",
    ),
    (np.zeros(0, f32), "float32", "tensor([])"),
    (np.zeros((0, 3), f32), "float32", "tensor([], size=(0, 3))"),
    (np.zeros(0, np.int64), "int64", "tensor([], dtype=torch.int64)"),
    (np.array([1 + 2j, 3 - 4.5j], np.complex64), "complex64", "tensor([1.+2.0000j, 3.-4.5000j])"),
]


@pytest.mark.parametrize("array, dtype_name, expected", FIXED)
def test_fixed_strings(array, dtype_name, expected):
    assert format_tensor(array, dtype_name=dtype_name) == expected


def test_fixed_suffixes():
    a = np.array([1.0, 2.0], f32)
    assert (
        format_tensor(a, dtype_name="float32", suffixes=["requires_grad=True"])
        == "tensor([1., 2.], requires_grad=True)"
    )
    assert (
        format_tensor(a, dtype_name="float32", suffixes=["grad_fn=<CloneBackward0>"])
        == "tensor([1., 2.], grad_fn=<CloneBackward0>)"
    )
    # the suffix no longer fits on the last line, so it wraps under "tensor("
    b = np.arange(16, dtype=f32) / 3
    assert format_tensor(b, dtype_name="float32", suffixes=["requires_grad=True"]) == (
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000],\n"
        "       requires_grad=True)"
    )


def test_fixed_device():
    a = np.array([1.0, 2.0], f32)
    assert format_tensor(a, dtype_name="float32", device_str="cuda:0") == "tensor([1., 2.], device='cuda:0')"
    assert (
        format_tensor(a.astype(f64), dtype_name="float64", device_str="cuda:0", suffixes=["requires_grad=True"])
        == "tensor([1., 2.], device='cuda:0', dtype=torch.float64, requires_grad=True)"
    )
    assert (
        format_tensor(np.zeros((0, 3), np.int32), dtype_name="int32", device_str="cuda:0")
        == "tensor([], device='cuda:0', size=(0, 3), dtype=torch.int32)"
    )


def test_fixed_printoptions():
    a = np.array([1.12345], f32)
    set_printoptions(precision=2)
    assert format_tensor(a, dtype_name="float32") == "tensor([1.12])"
    set_printoptions(threshold=5)
    assert format_tensor(np.arange(10), dtype_name="int64") == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    set_printoptions(profile="default")
    assert format_tensor(a, dtype_name="float32") == "tensor([1.1235])"
    assert format_tensor(np.arange(10), dtype_name="int64") == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"
    with printoptions(sci_mode=True, precision=1):
        assert format_tensor(np.array([2.0], f32), dtype_name="float32") == "tensor([2.0e+00])"
    assert get_printoptions() == dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)


def test_aliases_and_default_dtype():
    a = np.array([1.0, 2.0])
    assert format_tensor(a, dtype_name="torch.double") == "tensor([1., 2.], dtype=torch.float64)"
    assert format_tensor(a, dtype_name="float64", default_dtype="float64") == "tensor([1., 2.])"
    assert (
        format_tensor(a.astype(f32), dtype_name="float32", default_dtype="float64")
        == "tensor([1., 2.], dtype=torch.float32)"
    )
    with pytest.raises(ValueError):
        format_tensor(a, dtype_name="string")


# ------------------------------------------------------------------ with torch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


_NP_TO_NAME = {
    np.dtype(f16): "float16",
    np.dtype(f32): "float32",
    np.dtype(f64): "float64",
    np.dtype(np.int8): "int8",
    np.dtype(np.int16): "int16",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.bool_): "bool",
    np.dtype(np.complex64): "complex64",
    np.dtype(np.complex128): "complex128",
}


def _check(torch, arr, *, grad=None, device=False, **opts):
    """Compare format_tensor with repr(torch.tensor(arr)).

    grad: None, "requires_grad" (a leaf) or "grad_fn" (a clone of a leaf).
    device: show a device suffix (PyTorch's default device patched to "cuda").
    opts: print options applied to both libraries.
    """
    arr = np.asarray(arr)
    name = _NP_TO_NAME[arr.dtype]
    t = torch.tensor(arr)
    suffixes = []
    if grad and (t.is_floating_point() or t.is_complex()):
        t.requires_grad_(True)
        if grad == "grad_fn":
            t = t.clone()
            suffixes = ["grad_fn=<CloneBackward0>"]
        else:
            suffixes = ["requires_grad=True"]
    saved_default_device = torch._C._get_default_device
    if opts:
        torch.set_printoptions(**opts)
        set_printoptions(**opts)
    try:
        if device:
            # make PyTorch print device='cpu'; ours gets a same-length name to swap in
            torch._C._get_default_device = lambda: "cuda"
            expected = repr(t)
            got = format_tensor(arr, dtype_name=name, device_str="xpu", suffixes=suffixes)
            got = got.replace("device='xpu'", "device='cpu'")
        else:
            expected = repr(t)
            got = format_tensor(arr, dtype_name=name, suffixes=suffixes)
    finally:
        torch._C._get_default_device = saved_default_device
        torch.set_printoptions(profile="default")
        set_printoptions(profile="default")
    assert got == expected, f"\nexpected:\n{expected}\ngot:\n{got}"


TRICKY = [
    np.array(0.0, f32),
    np.array(-0.0, f32),
    np.array(NAN, f32),
    np.array(-INF, f64),
    np.array(1e-30, f32),
    np.array(123456789.0, f32),
    np.array(-2.5, f16),
    np.array(7, np.int32),
    np.array([0.0, 0.0], f32),
    np.array([-0.0, 0.0], f32),
    np.array([NAN, NAN], f32),
    np.array([INF, -INF, NAN, 0.0], f32),
    np.array([NAN, 1.0, -0.0], f32),
    np.array([-0.0, 1e-5], f32),
    np.array([-0.0, 0.5], f32),
    np.array([1e-4, 1e-1], f32),
    np.array([1e-4, 0.1001], f32),
    np.array([0.99995, 1.0], f32),
    np.array([9.99995, 1.0], f64),
    np.array([1e8, 1.0], f32),
    np.array([99999999.0, 1.0], f64),
    np.array([1.0, 1000.0], f32),
    np.array([1.0, 1001.0], f32),
    np.array([1.5, 1500.0], f32),
    np.array([-1e-5, 1.0, NAN], f32),
    np.array([1e38, -1e38, 3e-38], f32),
    np.array([65504.0, -65504.0, 6e-8], f16),
    np.array([1e300, 1e-300, -5.0], f64),
    np.array([0.1, 0.2, 0.3], f64),
    np.array([123456.0, 1.0], f32),
    np.array([2**24 + 1.0, 1.0], f64),
    np.array([-1, 0, 1], np.int8),
    np.array([255, 0], np.uint8),
    np.array([-32768, 7], np.int16),
    np.array([2**63 - 1, -(2**63)], np.int64),
    np.array([[True], [False]]),
    np.array([[-1.0, 2.0], [3.0, -4.0]], f32),
    np.arange(100, dtype=f32).reshape(10, 10) - 50,
    np.arange(1001, dtype=f32),
    np.arange(1001, dtype=f32) / 1e6,
    np.arange(1000, dtype=np.int64),
    np.arange(1200, dtype=f64).reshape(30, 40) * 1.25,
    np.arange(2000).reshape(10, 10, 20),
    np.arange(4096.0, dtype=f32).reshape(16, 16, 16),
    np.ones((2, 1, 1, 2), f32),
    np.zeros((0,), bool),
    np.zeros((2, 0), f64),
    np.zeros((0, 2, 3), np.int32),
    np.zeros((1, 0), f16),
    np.arange(11, dtype=f32)[::-1] * 0.1,
    np.linspace(-1, 1, 81).astype(f32),
    np.array([1 + 2j, -0.5 - 1e-5j], np.complex64),
    np.array(3 - 4j, np.complex128),
    np.array([[NAN + 1j], [1 - INF * 1j]], np.complex64),
    np.arange(1500, dtype=np.complex64) * (1 + 0.5j),
]


@pytest.mark.parametrize("arr", TRICKY, ids=lambda a: f"{a.dtype}{list(a.shape)}")
@pytest.mark.parametrize("grad", [None, "requires_grad", "grad_fn"])
def test_tricky_matches_torch(torch, arr, grad):
    _check(torch, arr, grad=grad)


@pytest.mark.parametrize("arr", TRICKY[::4], ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_tricky_device_suffix_matches_torch(torch, arr):
    _check(torch, arr, grad="requires_grad", device=True)


@pytest.mark.parametrize(
    "opts",
    [
        dict(precision=0),
        dict(precision=8),
        dict(sci_mode=True),
        dict(sci_mode=False),
        dict(threshold=5),
        dict(threshold=5, edgeitems=0),
        dict(edgeitems=0),
        dict(edgeitems=1, threshold=3),
        dict(linewidth=20),
        dict(linewidth=200),
        dict(profile="short"),
        dict(profile="full"),
        dict(profile="short", precision=6),
    ],
)
@pytest.mark.parametrize(
    "arr",
    [
        np.arange(2000, dtype=f32) / 7,
        np.arange(60).reshape(3, 4, 5),
        np.array([1e-5, 1e5, NAN], f32),
        np.array([1e20, 1.0], f32),
        np.array(0.5, f64),
        np.arange(24, dtype=f64).reshape(2, 3, 4) - 0.5,
        np.zeros((3, 0), f32),
        np.array([True, False, True] * 5),
    ],
    ids=lambda a: f"{a.dtype}{list(a.shape)}",
)
def test_printoptions_match_torch(torch, arr, opts):
    _check(torch, arr, grad="requires_grad", **opts)


def test_default_dtype_float64_matches_torch(torch):
    cases = [
        np.array([1.0, 2.0], f64),
        np.array([1.0, 2.0], f32),
        np.zeros(0, f64),
        np.zeros(0, f32),
        np.array([1j], np.complex128),
        np.array([1j], np.complex64),
    ]
    torch.set_default_dtype(torch.float64)
    try:
        for arr in cases:
            name = _NP_TO_NAME[arr.dtype]
            assert format_tensor(arr, dtype_name=name, default_dtype="float64") == repr(torch.tensor(arr))
    finally:
        torch.set_default_dtype(torch.float32)


# ------------------------------------------------------------ hypothesis parity

_FLOAT_TYPES = [f32, f64, f16]
_SPECIALS = [NAN, INF, -INF, 0.0, -0.0]


def _shapes():
    # at most 3-d; 1-d long enough to wrap lines
    return st.one_of(
        st.just(()),
        hnp.array_shapes(min_dims=1, max_dims=1, min_side=0, max_side=40),
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=9),
        hnp.array_shapes(min_dims=3, max_dims=3, min_side=0, max_side=5),
    )


@st.composite
def float_arrays(draw):
    dtype = draw(st.sampled_from(_FLOAT_TYPES))
    shape = draw(_shapes())
    style = draw(st.sampled_from(["scaled", "integral", "raw"]))
    if style == "raw":  # any float, any magnitude
        elements = st.floats(width=16 if dtype is f16 else 32 if dtype is f32 else 64)
    elif style == "integral":
        elements = st.integers(-(10**6), 10**6).map(float)
    else:
        elements = st.floats(-1000.0, 1000.0)
    with_specials = draw(st.booleans())
    if with_specials:
        elements = st.one_of(elements, st.sampled_from(_SPECIALS))
    base = draw(hnp.arrays(np.float64, shape, elements=elements))
    scale = draw(st.sampled_from([1e-12, 1e-6, 1e-4, 1e-3, 1e-2, 1.0, 1e2, 1e4, 1e6, 1e9]))
    if style == "raw":
        scale = 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        return (base * scale).astype(dtype)


@st.composite
def int_or_bool_arrays(draw):
    dtype = draw(st.sampled_from([np.int64, np.int32, np.int16, np.uint8, np.bool_]))
    shape = draw(_shapes())
    if dtype is np.bool_:
        return draw(hnp.arrays(dtype, shape))
    info = np.iinfo(dtype)
    bound = draw(st.sampled_from([9, 1000, int(info.max)]))
    elements = st.integers(max(int(info.min), -bound), min(int(info.max), bound))
    return draw(hnp.arrays(dtype, shape, elements=elements))


_HYP = settings(
    max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@_HYP
@given(arr=float_arrays(), grad=st.sampled_from([None, "requires_grad", "grad_fn"]))
def test_hypothesis_floats_match_torch(torch, arr, grad):
    _check(torch, arr, grad=grad)


@_HYP
@given(arr=int_or_bool_arrays())
def test_hypothesis_ints_bools_match_torch(torch, arr):
    _check(torch, arr)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    arr=st.one_of(float_arrays(), int_or_bool_arrays()),
    precision=st.integers(0, 8),
    threshold=st.integers(1, 60),
    edgeitems=st.integers(0, 4),
    linewidth=st.integers(10, 120),
    sci_mode=st.sampled_from([None, True, False]),
    device=st.booleans(),
)
def test_hypothesis_printoptions_match_torch(torch, arr, precision, threshold, edgeitems, linewidth, sci_mode, device):
    _check(
        torch,
        arr,
        grad="requires_grad",
        device=device,
        precision=precision,
        threshold=threshold,
        edgeitems=edgeitems,
        linewidth=linewidth,
        sci_mode=sci_mode,
    )
