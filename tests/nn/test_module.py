"""nn.Parameter and nn.Module: registration, iteration, modes, state_dict, devices, repr (PyTorch's behaviour)."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import leafkit as torch
import leafkit.nn as nn
import leafkit.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


# -- Parameter ---------------------------------------------------------------------------------------
def test_parameter_is_a_leaf_that_requires_grad():
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    assert isinstance(p, torch.Tensor) and isinstance(p, nn.Parameter)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_parameter_repr():
    assert repr(nn.Parameter(torch.tensor([1.0, 2.0]))) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert (
        repr(nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False)) == "Parameter containing:\ntensor([1., 2.])"
    )
    assert (
        str(nn.Parameter(torch.zeros(1).cuda()))
        == "Parameter containing:\ntensor([0.], device='cuda:0', requires_grad=True)"
    )


def test_parameter_shares_storage_and_drops_history():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    p = nn.Parameter(y)
    assert p.is_leaf and p.data_ptr() == y.data_ptr()
    t = torch.zeros(3)
    assert nn.Parameter(t).data_ptr() == t.data_ptr()


def test_parameter_errors():
    with pytest.raises(AttributeError, match="'list' object has no attribute 'detach'"):
        nn.Parameter([1.0])
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(torch.tensor([1, 2]))
    assert not nn.Parameter(torch.tensor([1, 2]), requires_grad=False).requires_grad


def test_ops_on_parameters_give_plain_tensors():
    p = nn.Parameter(torch.ones(2))
    y = p * 2
    assert type(y) is torch.Tensor and y.grad_fn.name() == "MulBackward0"
    assert type(p.detach()) is torch.Tensor


def test_parameter_deepcopy_and_pickle():
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.requires_grad and r.tolist() == [1.0, 2.0]


# -- registration ------------------------------------------------------------------------------------
def test_named_parameters_children_modules():
    n = Net()
    assert [k for k, _ in n.named_parameters()] == ["fc.weight", "fc.bias"]
    assert [k for k, _ in n.named_modules()] == ["", "fc", "act"]
    assert [type(m).__name__ for m in n.children()] == ["Linear", "ReLU"]
    assert len(list(n.modules())) == 3
    assert all(p.is_leaf and p.requires_grad for p in n.parameters())
    assert [id(p) for p in n.fc.parameters()] == [id(n.fc.weight), id(n.fc.bias)]


def test_shared_parameter_listed_once():
    n = nn.Module()
    n.a = nn.Linear(2, 2)
    n.b = n.a
    assert len(list(n.parameters())) == 2
    assert [k for k, _ in n.named_modules()] == ["", "a"]


def test_plain_tensor_attribute_is_not_a_parameter():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))
            self.c = torch.ones(2)

    m = M()
    assert [k for k, _ in m.named_parameters()] == ["w"]


def test_setattr_errors_match_pytorch():
    n = Net()
    with pytest.raises(
        TypeError, match=r"cannot assign 'int' as child module 'fc' \(torch.nn.Module or None expected\)"
    ):
        n.fc = 3
    with pytest.raises(
        TypeError,
        match=r"cannot assign 'torch.FloatTensor' as parameter 'weight' "
        r"\(torch.nn.Parameter or None expected\)",
    ):
        n.fc.weight = torch.zeros(2, 2)
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nothing'"):
        n.nothing  # noqa: B018
    with pytest.raises(KeyError, match="attribute 'fc' already exists"):
        n.register_parameter("fc", nn.Parameter(torch.zeros(1)))

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(torch.zeros(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_parameter_can_be_set_to_none_and_replaced():
    lin = nn.Linear(2, 3)
    lin.bias = None
    assert [k for k, _ in lin.named_parameters()] == ["weight"]
    assert repr(lin) == "Linear(in_features=2, out_features=3, bias=False)"
    lin.bias = nn.Parameter(torch.zeros(3))
    assert [k for k, _ in lin.named_parameters()] == ["weight", "bias"]


def test_forward_is_required():
    class E(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match=r'Module \[E\] is missing the required "forward" function'):
        E()(1)
    assert repr(E()) == "E()"


def test_call_runs_forward_and_hooks():
    n = Net()
    seen = []
    h = n.fc.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    n(torch.ones(3, 2))
    h.remove()
    n(torch.ones(3, 2))
    assert seen == [torch.Size([3, 2])]


# -- modes, grads -------------------------------------------------------------------------------------
def test_train_eval():
    n = Net()
    assert n.training and n.fc.training
    assert n.eval() is n and not n.training and not n.fc.training
    n.train()
    assert n.act.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        n.train("x")


def test_zero_grad_sets_none_or_zero():
    n = Net()
    n(torch.ones(3, 2)).sum().backward()
    assert n.fc.weight.grad is not None
    n.zero_grad(set_to_none=False)
    assert n.fc.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    n.zero_grad()
    assert n.fc.weight.grad is None and n.fc.bias.grad is None


def test_requires_grad_freezes():
    n = Net()
    assert n.requires_grad_(False) is n
    assert not any(p.requires_grad for p in n.parameters())
    out = n(torch.ones(1, 2))
    assert out.grad_fn is None


# -- state_dict ---------------------------------------------------------------------------------------
def test_state_dict_is_detached_and_shares_storage():
    n = Net()
    sd = n.state_dict()
    assert list(sd) == ["fc.weight", "fc.bias"]
    assert not sd["fc.weight"].requires_grad and type(sd["fc.weight"]) is torch.Tensor
    assert sd["fc.weight"].data_ptr() == n.fc.weight.data_ptr()
    assert type(n.state_dict(keep_vars=True)["fc.weight"]) is nn.Parameter


def test_load_state_dict_copies_in_place_and_reports():
    a, b = Net(), Net()
    w = b.fc.weight
    res = b.load_state_dict(a.state_dict())
    assert repr(res) == "<All keys matched successfully>"
    assert b.fc.weight is w and w.is_leaf and w.requires_grad
    assert np.array_equal(b.fc.weight.detach().numpy(), a.fc.weight.detach().numpy())
    assert w.data_ptr() != a.fc.weight.data_ptr()


def test_load_state_dict_errors_match_pytorch():
    n = Net()
    with pytest.raises(RuntimeError) as e:
        n.load_state_dict({"fc.weight": torch.zeros(2, 2)})
    assert str(e.value) == 'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.bias". '
    with pytest.raises(RuntimeError) as e:
        n.load_state_dict({"fc.weight": torch.zeros(2, 2), "fc.bias": torch.zeros(2), "x": torch.zeros(1)})
    assert str(e.value) == 'Error(s) in loading state_dict for Net:\n\tUnexpected key(s) in state_dict: "x". '
    with pytest.raises(RuntimeError) as e:
        n.load_state_dict({"fc.weight": torch.zeros(3, 2), "fc.bias": torch.zeros(2)})
    assert str(e.value) == (
        "Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param "
        "with shape torch.Size([3, 2]) from checkpoint, the shape in current model is "
        "torch.Size([2, 2])."
    )
    res = n.load_state_dict({"fc.weight": torch.zeros(2, 2)}, strict=False)
    assert res.missing_keys == ["fc.bias"] and res.unexpected_keys == []
    assert repr(res) == "_IncompatibleKeys(missing_keys=['fc.bias'], unexpected_keys=[])"


def test_load_state_dict_across_devices_and_deepcopy():
    a = Net().cuda()
    b = Net()
    b.load_state_dict(a.state_dict())
    assert b.fc.weight.device == torch.device("cpu")
    c = copy.deepcopy(a)
    assert type(c.fc.weight) is nn.Parameter and c.fc.weight.device == torch.device("cuda:0")
    assert c.fc.weight.data_ptr() != a.fc.weight.data_ptr()


# -- devices ------------------------------------------------------------------------------------------
def test_module_to_cuda_keeps_parameter_objects_and_leaves():
    n = Net()
    w = n.fc.weight
    n(torch.ones(1, 2)).sum().backward()
    assert n.cuda() is n
    assert n.fc.weight is w and w.is_leaf and w.requires_grad and type(w) is nn.Parameter
    assert w.device == torch.device("cuda:0") and w.grad.device == torch.device("cuda:0")
    assert "device='cuda:0'" in repr(w)
    out = n(torch.ones(1, 2, device="cuda"))
    assert out.device == torch.device("cuda:0")
    n.to("cpu")
    assert w.device == torch.device("cpu")


def test_module_to_dtype():
    n = Net().double()
    assert n.fc.weight.dtype == torch.float64 and n.fc.weight.is_leaf
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        n.to(torch.int64)


def test_optimizer_built_before_move_still_updates():
    n = nn.Linear(2, 2)
    opt = torch.optim.SGD(n.parameters(), lr=0.1)
    n.cuda()
    before = n.weight.detach().cpu().numpy().copy()
    n(torch.ones(4, 2, device="cuda")).sum().backward()
    opt.step()
    np.testing.assert_allclose(n.weight.detach().cpu().numpy(), before - 0.4, rtol=1e-6)
    assert n.weight.device == torch.device("cuda:0") and n.weight.is_leaf


# -- layers -------------------------------------------------------------------------------------------
def test_reprs_match_pytorch():
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    assert repr(m) == (
        "Sequential(\n  (0): Linear(in_features=64, out_features=128, bias=True)\n  (1): ReLU()\n"
        "  (2): Linear(in_features=128, out_features=10, bias=True)\n)"
    )
    assert repr(Net()) == "Net(\n  (fc): Linear(in_features=2, out_features=2, bias=True)\n  (act): ReLU()\n)"
    assert repr(nn.Tanh()) == "Tanh()" and repr(nn.Sigmoid()) == "Sigmoid()"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    outer = nn.Sequential(nn.Sequential(nn.Tanh()))
    assert repr(outer) == "Sequential(\n  (0): Sequential(\n    (0): Tanh()\n  )\n)"


def test_linear_default_init_bounds_and_leaves():
    torch.manual_seed(0)
    lin = nn.Linear(64, 128)
    bound = 1 / math.sqrt(64)
    w = lin.weight.detach().numpy()
    b = lin.bias.detach().numpy()
    assert w.shape == (128, 64) and b.shape == (128,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound  # really spread over the whole interval
    assert lin.weight.is_leaf and lin.bias.is_leaf and lin.weight.dtype == torch.float32
    torch.manual_seed(0)
    assert np.array_equal(nn.Linear(64, 128).weight.detach().numpy(), w)  # seeded


def test_linear_without_bias_and_on_device():
    lin = nn.Linear(3, 2, bias=False, device="cuda", dtype=torch.float64)
    assert lin.bias is None and lin.weight.device == torch.device("cuda:0") and lin.weight.dtype == torch.float64
    assert [k for k, _ in lin.named_parameters()] == ["weight"]


def test_sequential_indexing():
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(m) == 3 and isinstance(m[-1], nn.Linear) and isinstance(m[1], nn.ReLU)
    sub = m[0:2]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2 and sub[0] is m[0]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        m[5]
    assert [type(x).__name__ for x in m] == ["Linear", "ReLU", "Linear"]
    m.append(nn.Sigmoid())
    assert len(m) == 4 and list(m._modules) == ["0", "1", "2", "3"]
    del m[1]
    assert list(m._modules) == ["0", "1", "2"] and isinstance(m[1], nn.Linear)


def test_activation_modules_build_pytorch_nodes():
    x = torch.randn(3, requires_grad=True)
    assert nn.ReLU()(x).grad_fn.name() == "ReluBackward0"
    assert nn.Tanh()(x).grad_fn.name() == "TanhBackward0"
    assert nn.Sigmoid()(x).grad_fn.name() == "SigmoidBackward0"


def test_loss_modules():
    x = torch.randn(4, 3, requires_grad=True)
    t = torch.tensor([0, 1, 2, 0])
    assert nn.CrossEntropyLoss()(x, t).grad_fn.name() == "NllLossBackward0"
    assert nn.MSELoss()(x, torch.zeros(4, 3)).grad_fn.name() == "MseLossBackward0"
    assert nn.CrossEntropyLoss(reduction="sum")(x, t).item() == pytest.approx(
        F.cross_entropy(x, t, reduction="sum").item()
    )
