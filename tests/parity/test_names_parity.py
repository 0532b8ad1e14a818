"""The names a tutorial opens with (issue 18, part 5), on leafkit and on PyTorch: the same values, reprs, errors
and warnings.  ``torch.accelerator``, the default device, ``torch.pi``/``e``/``inf``/``nan``,
``torch.autograd.Variable``, the legacy tensor types (``torch.FloatTensor`` ...), ``torch.Tensor(...)``,
``Tensor.type``/``new``, ``set_default_tensor_type``, ``frac``, ``unique``/``unique_consecutive`` and
``nn.DataParallel`` on a machine without a GPU."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import leafkit

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _global_defaults():
    """Cases change the default device and dtype: put both libraries back afterwards (PyTorch's default device
    is a mode left on its stack, seen by every later test)."""
    yield
    for lib in (torch, leafkit):
        lib.set_default_device(None)
        lib.set_default_dtype(lib.float32)


def run(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", _text(fn()))
        except Exception as e:  # noqa: BLE001 - the class and message are the observation
            out = ("error", type(e).__name__, str(e))
    return out, [(w.category.__name__, _warning(str(w.message))) for w in caught]


def _text(v):
    return re.sub(r" at 0x[0-9a-f]+", "", repr(v))


def _warning(message):
    return message.split(" (Triggered internally at")[0]  # PyTorch's C++ warnings add where they were raised


def cases(torch, Variable):
    t = torch.ones(2)
    x = torch.tensor([3, 1, 2, 3, 1, 5])
    m = torch.tensor([[1, 2], [1, 2], [3, 4]])

    def with_default_dtype(d, fn):
        old = torch.get_default_dtype()
        torch.set_default_dtype(d)
        try:
            return fn()
        finally:
            torch.set_default_dtype(old)

    def default_tensor_type():
        try:
            torch.set_default_tensor_type(torch.DoubleTensor)
            a = torch.tensor(1.5).dtype
            torch.set_default_tensor_type("torch.FloatTensor")
            return a, torch.tensor(1.5).dtype
        finally:
            torch.set_default_dtype(torch.float32)

    def variable_grad():
        v = Variable(torch.ones(2), requires_grad=True)
        (v * 3).sum().backward()
        return v.grad, v.is_leaf

    return {
        "accelerator": lambda: (
            torch.accelerator.is_available(),
            torch.accelerator.current_accelerator(),
            torch.accelerator.device_count(),
            torch.accelerator.current_accelerator(check_available=True),
        ),
        "accelerator index without one": lambda: torch.accelerator.current_device_index(),
        "accelerator synchronize without one": lambda: torch.accelerator.synchronize(),
        "tutorial device line": lambda: (
            torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
        ),
        "constants": lambda: (torch.pi, torch.e, torch.inf, torch.nan, torch.newaxis, type(torch.pi)),
        "default device": lambda: torch.get_default_device(),
        "default device cpu": lambda: (torch.set_default_device("cpu"), torch.get_default_device())[1],
        "default device None": lambda: (torch.set_default_device(None), torch.get_default_device())[1],
        "default dtype float16": lambda: with_default_dtype(torch.float16, lambda: torch.tensor(1.5).dtype),
        "default dtype float64": lambda: with_default_dtype(
            torch.float64, lambda: (torch.tensor([1.5]).dtype, torch.Tensor(2).dtype, torch.arange(2.0).dtype)
        ),
        "default dtype int64": lambda: torch.set_default_dtype(torch.int64),
        "set_default_tensor_type": default_tensor_type,
        "set_default_tensor_type LongTensor": lambda: torch.set_default_tensor_type(torch.LongTensor),
        "Variable(t)": lambda: (Variable(t), Variable(t) is t, Variable(t).data_ptr() == t.data_ptr()),
        "Variable type": lambda: type(Variable(t)).__name__,
        "Variable requires_grad": lambda: (Variable(t, requires_grad=True), t.requires_grad),
        "Variable volatile": lambda: Variable(t, volatile=True),
        "Variable of ints requiring grad": lambda: Variable(torch.tensor([1, 2]), requires_grad=True),
        "Variable of a list": lambda: Variable([1.0, 2.0]),
        "Variable()": lambda: Variable(),
        "Variable unknown keyword": lambda: Variable(t, foo=1),
        "isinstance Variable": lambda: (isinstance(t, Variable), isinstance(3, Variable), Variable.__name__),
        "Tensor.volatile": lambda: t.volatile,
        "Variable of a non-leaf": lambda: Variable(torch.ones(2, requires_grad=True) * 2),
        "Variable of a non-leaf requiring grad": lambda: Variable(torch.ones(2, requires_grad=True) * 2, True),
        "Variable backward": variable_grad,
        "FloatTensor sizes": lambda: torch.FloatTensor(2, 3).shape,
        "FloatTensor data": lambda: torch.FloatTensor([1, 2]),
        "FloatTensor nested": lambda: torch.FloatTensor([[1, 2], [3, 4]]),
        "FloatTensor()": lambda: torch.FloatTensor(),
        "FloatTensor Size": lambda: torch.FloatTensor(torch.Size([2, 2])).shape,
        "FloatTensor ndarray": lambda: torch.FloatTensor(np.array([1, 2])),
        "FloatTensor of a float tensor": lambda: torch.FloatTensor(torch.tensor([1.0, 2.0])),
        "FloatTensor of a long tensor": lambda: torch.FloatTensor(torch.tensor([1, 2])),
        "FloatTensor device=cpu": lambda: torch.FloatTensor([1.0], device="cpu"),
        "FloatTensor dtype=": lambda: torch.FloatTensor([1.0], dtype=torch.float64),
        "FloatTensor str": lambda: torch.FloatTensor("a"),
        "FloatTensor float": lambda: torch.FloatTensor(3.5),
        "FloatTensor negative size": lambda: torch.FloatTensor(2, -1),
        "LongTensor": lambda: (torch.LongTensor([1, 2]), torch.LongTensor([1.7, 2.2]), torch.LongTensor(3).shape),
        "other types": lambda: [
            getattr(torch, n)([1, 0])
            for n in (
                "IntTensor",
                "ByteTensor",
                "BoolTensor",
                "HalfTensor",
                "DoubleTensor",
                "ShortTensor",
                "CharTensor",
            )
        ],
        "isinstance of types": lambda: (
            isinstance(torch.ones(2), torch.FloatTensor),
            isinstance(torch.ones(2).double(), torch.FloatTensor),
            isinstance(torch.ones(2), torch.DoubleTensor),
            isinstance(torch.ones(2, dtype=torch.int64), torch.LongTensor),
            isinstance(torch.nn.Parameter(torch.ones(2)), torch.FloatTensor),
            isinstance(3, torch.FloatTensor),
        ),
        "the types": lambda: (
            issubclass(torch.FloatTensor, torch.Tensor),
            repr(torch.FloatTensor),
            torch.LongTensor.__name__,
            torch.FloatTensor.dtype,
            torch.FloatTensor.is_cuda,
        ),
        "type()": lambda: (t.type(), t.long().type(), torch.tensor(True).type(), t.half().type(), t.byte().type()),
        "type(DoubleTensor)": lambda: t.type(torch.DoubleTensor),
        "type('torch.DoubleTensor')": lambda: t.type("torch.DoubleTensor"),
        "type(int64)": lambda: t.type(torch.int64),
        "type of an unknown name": lambda: t.type("torch.FooTensor"),
        "type to the same type": lambda: (t.type(torch.FloatTensor) is t, t.type("torch.FloatTensor") is t),
        "type of a tensor requiring grad": lambda: torch.ones(2, requires_grad=True).type(torch.DoubleTensor),
        "Tensor(2, 3)": lambda: torch.Tensor(2, 3).shape,
        "Tensor(list)": lambda: torch.Tensor([1, 2]),
        "Tensor()": lambda: torch.Tensor(),
        "Tensor(ndarray)": lambda: torch.Tensor(np.array([1, 2])),
        "Tensor(long tensor)": lambda: torch.Tensor(torch.tensor([1, 2])),
        "Tensor(tensor) is a new tensor": lambda: (
            lambda a: (torch.Tensor(a) is a, torch.Tensor(a).data_ptr() == a.data_ptr())
        )(torch.ones(2)),
        "Tensor(Size)": lambda: torch.Tensor(torch.Size([2])).shape,
        "Tensor(-1)": lambda: torch.Tensor(-1),
        "Tensor(2.5)": lambda: torch.Tensor(2.5),
        "isinstance(t, Tensor)": lambda: isinstance(torch.Tensor(2), torch.Tensor),
        "new": lambda: (
            torch.ones(2, dtype=torch.int64).new(2, 3).dtype,
            t.new([1, 2]),
            t.new().shape,
            t.new(torch.Size([1, 2])).shape,
        ),
        "frac": lambda: torch.frac(torch.tensor([1.5, -2.25, 3.0])),
        "frac of ints": lambda: torch.frac(torch.tensor([1, 2])),
        "frac of bools": lambda: torch.tensor([True]).frac(),
        "frac_": lambda: torch.tensor([1.5, -2.25]).frac_(),
        "frac gradient": lambda: (lambda a: (torch.frac(a).sum().backward(), a.grad, torch.frac(a).grad_fn.name()))(
            torch.tensor([1.5, -2.25], requires_grad=True)
        ),
        "unique": lambda: torch.unique(x),
        "unique method, all": lambda: x.unique(return_inverse=True, return_counts=True),
        "unique sorted=False": lambda: torch.unique(x, sorted=False),
        "unique inverse": lambda: torch.unique(x, return_inverse=True),
        "unique counts": lambda: torch.unique(x, return_counts=True),
        "unique of a matrix": lambda: torch.unique(m, return_inverse=True),
        "unique dim=0": lambda: torch.unique(m, dim=0, return_inverse=True, return_counts=True),
        "unique dim=1": lambda: torch.unique(m, dim=1),
        "unique dim=-1": lambda: torch.unique(m, dim=-1),
        "unique dim out of range": lambda: torch.unique(m, dim=3),
        "unique of a 0-d tensor": lambda: torch.unique(torch.tensor(3)),
        "unique of a 0-d tensor with dim": lambda: torch.unique(torch.tensor(3), dim=0),
        "unique with an empty dimension": lambda: torch.unique(torch.zeros(0, 2), dim=1),
        "unique of floats": lambda: torch.unique(torch.tensor([[1.5, 0.5], [0.5, 1.5]])),
        "unique with NaNs": lambda: torch.unique(torch.tensor([float("nan"), 1.0, float("nan")]), return_counts=True),
        "unique requiring grad": lambda: torch.unique(torch.tensor([1.0, 1.0, 2.0], requires_grad=True)),
        "unique backward": lambda: torch.unique(torch.tensor([1.0, 1.0, 2.0], requires_grad=True)).sum().backward(),
        "unique under no_grad": lambda: (
            lambda a: (torch.no_grad().__enter__(), torch.unique(a), torch.set_grad_enabled(True))[1]
        )(torch.tensor([1.0, 1.0], requires_grad=True)),
        "unique of bools": lambda: torch.unique(torch.tensor([True, False, True])),
        "unique of nothing": lambda: torch.unique(torch.tensor([]), return_counts=True),
        "unique_consecutive": lambda: torch.unique_consecutive(
            torch.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True, return_inverse=True
        ),
        "unique_consecutive dim": lambda: torch.unique_consecutive(
            torch.tensor([[1, 2], [1, 2], [3, 4], [1, 2]]), dim=0, return_counts=True, return_inverse=True
        ),
        "unique_consecutive method": lambda: torch.tensor([2, 2, 1]).unique_consecutive(),
        "DataParallel repr": lambda: torch.nn.DataParallel(torch.nn.Linear(2, 1)),
        "DataParallel forward": lambda: torch.nn.DataParallel(torch.nn.Linear(2, 1))(torch.ones(3, 2)).shape,
        "DataParallel state_dict keys": lambda: list(torch.nn.DataParallel(torch.nn.Linear(2, 1)).state_dict()),
        "DataParallel attributes": lambda: (
            lambda d: (d.device_ids, d.dim if hasattr(d, "dim") else None, type(d.module).__name__)
        )(torch.nn.DataParallel(torch.nn.Linear(2, 1))),
        "DataParallel output_device": lambda: torch.nn.DataParallel(torch.nn.Linear(2, 1)).output_device,
        "DataParallel parameters": lambda: [
            n for n, _ in torch.nn.DataParallel(torch.nn.Linear(2, 1)).named_parameters()
        ],
        "DataParallel keywords": lambda: torch.nn.DataParallel(torch.nn.Identity())(torch.ones(1)),
        "DataParallel load_state_dict": lambda: (
            lambda net, dp: (
                dp.load_state_dict({"module." + k: v * 0 + 1 for k, v in net.state_dict().items()}),
                net.bias,
            )
        )(*(lambda n: (n, torch.nn.DataParallel(n)))(torch.nn.Linear(2, 1))),
        "nn.parallel.DataParallel": lambda: torch.nn.parallel.DataParallel is torch.nn.DataParallel,
    }


NAMES = sorted(cases(leafkit, leafkit.autograd.Variable))


@pytest.mark.parametrize("name", NAMES)
def test_same_as_pytorch(name):
    got = run(cases(leafkit, leafkit.autograd.Variable)[name])
    want = run(cases(torch, torch.autograd.Variable)[name])
    assert got == want


def test_default_device_makes_factories_and_layers_use_it():
    """set_default_device("cuda") on leafkit's cuda (simulated without a GPU): factories and new layers follow,
    functions of a tensor and the legacy constructors do not, as PyTorch does with any default device."""
    if leafkit.cuda.backend() is None:
        pytest.skip("leafkit's cuda is off")
    try:
        leafkit.set_default_device("cuda")
        assert str(leafkit.get_default_device()) == "cuda:0"
        made = [
            leafkit.ones(1),
            leafkit.tensor([1.0]),
            leafkit.randn(2),
            leafkit.arange(3),
            leafkit.as_tensor([1]),
            leafkit.nn.Linear(2, 1).weight,
        ]
        assert all(t.device.type == "cuda" for t in made)
        cpu = leafkit.ones(1, device="cpu")
        kept = [leafkit.zeros_like(cpu), leafkit.Tensor(2), leafkit.FloatTensor(2), leafkit.from_numpy(np.ones(1))]
        assert all(t.device.type == "cpu" for t in kept)
    finally:
        leafkit.set_default_device(None)
    assert leafkit.ones(1).device.type == "cpu"


def test_cuda_legacy_types_on_leafkits_cuda():
    if leafkit.cuda.backend() is None:
        pytest.skip("leafkit's cuda is off")
    g = leafkit.cuda.FloatTensor([1.0, 2.0])
    assert g.device.type == "cuda" and g.type() == "torch.cuda.FloatTensor"
    assert isinstance(g, leafkit.cuda.FloatTensor) and not isinstance(g, leafkit.FloatTensor)
    assert repr(leafkit.cuda.LongTensor) == "<class 'torch.cuda.LongTensor'>"
    assert leafkit.ones(2).type("torch.cuda.DoubleTensor").device.type == "cuda"
