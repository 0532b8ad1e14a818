"""Integer dtypes (uint8, int8, int16) and type promotion next to real PyTorch: ``torch.result_type``,
``torch.promote_types``, ``torch.can_cast`` over every pair of leafkit's dtypes, and uint8 arithmetic
(wrap-around, promotion with other dtypes and Python numbers, printing)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
PAIRS = list(itertools.product(DTYPES, DTYPES))


def run(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the error is the observation
        return ("error", type(e).__name__, str(e).split("\n")[0])
    if isinstance(out, lib.Tensor):
        return (out.tolist(), str(out.dtype).replace("leafkit.", "torch."), repr(out))
    return str(out).replace("leafkit.", "torch.")


def both(fn):
    got, want = run(leafkit, fn), run(torch, fn)
    assert got == want


@pytest.mark.parametrize("a,b", PAIRS)
def test_promote_types_and_can_cast(a, b):
    both(lambda lib: lib.promote_types(getattr(lib, a), getattr(lib, b)))
    both(lambda lib: lib.can_cast(getattr(lib, a), getattr(lib, b)))


@pytest.mark.parametrize("a,b", PAIRS)
def test_result_type_of_tensors_and_0d_tensors(a, b):
    def t(lib, d, dims):
        return lib.ones(2, dtype=getattr(lib, d)) if dims else lib.ones((), dtype=getattr(lib, d))

    for da, db in ((True, True), (True, False), (False, True), (False, False)):
        both(lambda lib, da=da, db=db: lib.result_type(t(lib, a, da), t(lib, b, db)))


@pytest.mark.parametrize("d", DTYPES)
@pytest.mark.parametrize("number", [True, 3, -1, 2.5], ids=["bool", "int", "negative", "float"])
def test_result_type_with_numbers_and_the_arithmetic_that_follows(d, number):
    both(lambda lib: lib.result_type(lib.ones(2, dtype=getattr(lib, d)), number))
    both(lambda lib: lib.result_type(number, lib.ones((), dtype=getattr(lib, d))))
    both(lambda lib: lib.tensor([1, 0], dtype=getattr(lib, d)) + number)
    both(lambda lib: lib.tensor([1, 0], dtype=getattr(lib, d)) * number)


@pytest.mark.parametrize(
    "case",
    [
        lambda lib: lib.result_type(2, 2.5),
        lambda lib: lib.result_type(2, True),
        lambda lib: lib.result_type(True, False),
        lambda lib: lib.result_type(lib.ones(1), "a"),
        lambda lib: lib.promote_types(lib.int32, "a"),
        lambda lib: lib.can_cast(lib.int32, 1),
        lambda lib: lib.promote_types(lib.float32, lib.float32),
    ],
    ids=["numbers", "int_bool", "bools", "str", "promote_str", "can_cast_int", "same"],
)
def test_promotion_arguments(case):
    got, want = run(leafkit, case), run(torch, case)
    if got[0] == "error" and want[0] == "error":  # the message's list of signatures differs: compare its start
        assert got[:2] == want[:2] and got[2][:40] == want[2][:40]
    else:
        assert got == want


UINT8 = {
    "add": lambda lib, u: u + 10,
    "add_wraps": lambda lib, u: u + 300,
    "add_negative": lambda lib, u: u + (-1),
    "sub": lambda lib, u: u - 251,
    "rsub": lambda lib, u: 5 - u,
    "mul": lambda lib, u: u * 2,
    "neg": lambda lib, u: -u,
    "div": lambda lib, u: u / 2,
    "floordiv": lambda lib, u: u // 3,
    "mod": lambda lib, u: u % 7,
    "add_float": lambda lib, u: u + 2.5,
    "int8": lambda lib, u: u + lib.tensor([-5, 3, 100], dtype=lib.int8),
    "int16": lambda lib, u: u + lib.tensor([1, 1, 1], dtype=lib.int16),
    "int64": lambda lib, u: u + lib.tensor([1, 2, 3]),
    "bool": lambda lib, u: u + lib.tensor([True, False, True]),
    "0d_int64": lambda lib, u: u + lib.tensor(300),
    "sum": lambda lib, u: u.sum(),
    "mean": lambda lib, u: u.mean(),
    "max": lambda lib, u: u.max(),
    "float": lambda lib, u: u.float(),
    "compare": lambda lib, u: u > 5,
    "inplace": lambda lib, u: u.clone().add_(10),
    "inplace_float": lambda lib, u: u.clone().add_(1.5),
    "pow": lambda lib, u: u**2,
    "abs": lambda lib, u: u.abs(),
    "relu": lambda lib, u: u.relu(),
    "clamp": lambda lib, u: u.clamp(1, 100),
    "matmul": lambda lib, u: u @ lib.tensor([1, 1, 1], dtype=lib.uint8),
    "requires_grad": lambda lib, u: lib.tensor([1], dtype=lib.uint8, requires_grad=True),
    "from_float": lambda lib, u: lib.tensor([300.7, 2.9]).to(lib.uint8),
    "byte": lambda lib, u: lib.tensor([1.7]).byte(),
    "char": lambda lib, u: lib.tensor([1.7, -3.2]).char(),
    "short": lambda lib, u: lib.tensor([7.9]).short(),
    "type": lambda lib, u: u.type(),
    "where": lambda lib, u: lib.where(u > 5, u, 0),
    "exp": lambda lib, u: u.exp(),
    "zeros": lambda lib, u: lib.zeros(2, dtype=lib.uint8),
    "arange": lambda lib, u: lib.arange(3, dtype=lib.uint8),
    "attrs": lambda lib, u: (lib.uint8.itemsize, lib.uint8.is_signed, lib.uint8.is_floating_point, str(lib.short)),
    "int8_wraps": lambda lib, u: lib.tensor([100, -100], dtype=lib.int8) * 2,
}


@pytest.mark.parametrize("name", sorted(UINT8))
def test_uint8_arithmetic(name):
    both(lambda lib: UINT8[name](lib, lib.tensor([250, 3, 0], dtype=lib.uint8)))


def _grads(lib, build):
    x = lib.tensor([1.5, -2.0], requires_grad=True)
    build(lib, x).sum().backward()
    return x.grad


MIXED_GRADIENTS = {  # a float32 leaf meets an operand whose dtype the result does not have
    "int tensor * x": lambda lib, x: lib.tensor([2, 3]) * x,
    "x * int tensor": lambda lib, x: x * lib.tensor([2, 3]),
    "int tensor / x": lambda lib, x: lib.tensor([2, 3]) / x,
    "x * float64 0-d": lambda lib, x: x * lib.tensor(3.0, dtype=lib.float64),
    "x - int16 tensor": lambda lib, x: x - lib.tensor([2, 3], dtype=lib.int16),
    "x ** int tensor": lambda lib, x: x.pow(lib.tensor([2, 3])),
    "0-d int * x, exp": lambda lib, x: (lib.tensor(2) * x).exp(),
    "addcmul int tensor": lambda lib, x: lib.addcmul(x, lib.tensor([2, 3]), x),
    "lerp float64 0-d weight": lambda lib, x: lib.lerp(x, lib.ones(2), lib.tensor(0.5, dtype=lib.float64)),
    "where float64 0-d": lambda lib, x: lib.where(x > 0, x * lib.tensor(2.0, dtype=lib.float64), x),
}


@pytest.mark.parametrize("name", MIXED_GRADIENTS)
def test_gradient_keeps_the_leaf_dtype_next_to_other_dtypes(name):
    """The gradient reaching a float32 leaf is float32 even where its formula meets an int64 tensor or a float64
    0-d tensor (which NumPy would promote the gradient to float64)."""
    both(lambda lib: _grads(lib, MIXED_GRADIENTS[name]))


HALF_WITH_NUMBERS = {
    "x * 0.1": lambda x: x * 0.1,
    "0.3 * x": lambda x: 0.3 * x,
    "x / 0.3": lambda x: x / 0.3,
    "0.7 / x": lambda x: 0.7 / x,
    "x.mul(1e-4)": lambda x: x.mul(1e-4),
    "x * 100000 * 1e-5": lambda x: x * 100000 * 1e-5,
    "x + 0.1 - 0.3": lambda x: x + 0.1 - 0.3,
    "0.3 - x": lambda x: 0.3 - x,
    "x * 0-d float32": lambda x: x * x.new_tensor(0.1, dtype=_lib(x).float32),
    "x / 0-d float64": lambda x: x / x.new_tensor(0.3, dtype=_lib(x).float64),
    "0-d float32 * x": lambda x: x.new_tensor(0.1, dtype=_lib(x).float32) * x,
    "x * 0-d int64": lambda x: x * x.new_tensor(100000, dtype=_lib(x).int64) * 1e-5,
}


def _lib(x):
    return leafkit if isinstance(x, leafkit.Tensor) else torch


@pytest.mark.parametrize("name", HALF_WITH_NUMBERS)
def test_float16_with_a_python_number_bit_for_bit(name):
    """A float16 tensor times or over a Python number (or a 0-d tensor on the right): PyTorch's CPU kernels take the
    number in float32 and round the product once (NumPy would round 0.1 to float16 first, and 100000 to inf); the
    gradient alike."""
    values = np.random.default_rng(0).standard_normal(64).astype(np.float16)
    got = {}
    for lib in (leafkit, torch):
        x = lib.tensor(values, requires_grad=True)
        y = HALF_WITH_NUMBERS[name](x)
        y.backward(lib.tensor(values[::-1].copy()))
        got[lib.__name__] = (y.dtype.itemsize, y.detach().numpy().tobytes(), x.grad.numpy().tobytes())
    assert got["leafkit"] == got["torch"]
