"""Bad input gets PyTorch's error class with PyTorch's key phrase; nothing is silently wrong.

Each case is a function of the ``torch``-like module so the parity suite can
run the same snippets on real PyTorch (tests/parity/test_error_parity.py).
"""

from __future__ import annotations

import pytest

import leafkit


def backward_no_grad(t):
    t.tensor([1.0]).sum().backward()


def implicit_non_scalar(t):
    (t.tensor([1.0, 2.0], requires_grad=True) * 2).backward()


def second_backward(t):
    x = t.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def nonleaf_requires_grad(t):
    y = t.tensor([1.0], requires_grad=True) * 2
    y.requires_grad = False


def int_requires_grad(t):
    t.tensor([1, 2], requires_grad=True)


def int_requires_grad_setter(t):
    t.tensor([1, 2]).requires_grad_()


def leaf_inplace(t):
    t.tensor([1.0], requires_grad=True).add_(1)


def leaf_inplace_operator(t):
    x = t.tensor([1.0], requires_grad=True)
    x += 1


def saved_tensor_modified(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    e = x.exp()
    s = e.sum()
    e.add_(1)
    s.backward()


def saved_leaf_modified_through_detach(t):
    x = t.tensor(2.0, requires_grad=True)
    s = x * x
    x.detach().add_(1)
    s.backward()


def broadcast_mismatch(t):
    t.ones(2, 3) + t.ones(4)


def matmul_mismatch(t):
    t.ones(2, 3) @ t.ones(2, 3)


def hook_on_no_grad(t):
    t.ones(2).register_hook(lambda g: g)


def numpy_requires_grad(t):
    t.ones(2, requires_grad=True).numpy()


def retain_grad_no_grad(t):
    t.ones(2).retain_grad()


def view_incompatible(t):
    t.ones(2, 3).t().view(6)


def grad_unused_input(t):
    a = t.ones(2, requires_grad=True)
    b = t.ones(2, requires_grad=True)
    t.autograd.grad((a * 2).sum(), [a, b])


def gradient_shape_mismatch(t):
    (t.ones(3, requires_grad=True) * 2).backward(t.ones(2))


def inplace_int_from_float(t):
    t.tensor([1, 2]).add_(1.5)


def item_of_many(t):
    t.ones(2).item()


def bool_of_many(t):
    bool(t.ones(2))


def index_out_of_range(t):
    t.ones(3)[5]


def reshape_bad(t):
    t.ones(2, 3).reshape(4, 2)


def lerp_int_with_float_end(t):  # the dtypes are checked before the kernel's (integer lerp)
    t.lerp(t.tensor([1, 2]), t.tensor([1.0, 2.0]), 0.25)


def lerp_int_with_float_weight(t):
    t.lerp(t.tensor([1, 2]), t.tensor([1, 2]), t.tensor([0.5, 0.5]))


def lerp_int(t):
    t.lerp(t.tensor([1, 2]), t.tensor([1, 2]), 0.5)


def addcmul_bool(t):
    t.addcmul(t.tensor([True, False]), t.tensor([True, True]), t.tensor([True, False]))


CASES = [
    (backward_no_grad, RuntimeError, "does not require grad and does not have a grad_fn"),
    (implicit_non_scalar, RuntimeError, "grad can be implicitly created only for scalar outputs"),
    (second_backward, RuntimeError, "backward through the graph a second time"),
    (nonleaf_requires_grad, RuntimeError, "leaf variables"),
    (int_requires_grad, RuntimeError, "floating point"),
    (int_requires_grad_setter, RuntimeError, "floating point"),
    (leaf_inplace, RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"),
    (leaf_inplace_operator, RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"),
    (saved_tensor_modified, RuntimeError, "modified by an inplace operation"),
    (saved_leaf_modified_through_detach, RuntimeError, "modified by an inplace operation"),
    (broadcast_mismatch, RuntimeError, "The size of tensor a (3) must match the size of tensor b (4)"),
    (matmul_mismatch, RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    (hook_on_no_grad, RuntimeError, "cannot register a hook on a tensor that doesn't require gradient"),
    (numpy_requires_grad, RuntimeError, "Use tensor.detach().numpy() instead"),
    (retain_grad_no_grad, RuntimeError, "can't retain_grad on Tensor that has requires_grad=False"),
    (view_incompatible, RuntimeError, "view size is not compatible"),
    (grad_unused_input, RuntimeError, "appears to not have been used in the graph"),
    (gradient_shape_mismatch, RuntimeError, "Mismatch in shape"),
    (inplace_int_from_float, RuntimeError, "can't be cast to the desired output type"),
    (item_of_many, RuntimeError, "cannot be converted to Scalar"),
    (bool_of_many, RuntimeError, "Boolean value of Tensor with more than one value is ambiguous"),
    (index_out_of_range, IndexError, "out of bounds"),
    (reshape_bad, RuntimeError, "is invalid for input of size 6"),
    (lerp_int_with_float_end, RuntimeError, "expected dtype long int for `end` but got dtype float"),
    (lerp_int_with_float_weight, RuntimeError, "expected dtype long int for `weight` but got dtype float"),
    (lerp_int, NotImplementedError, "\"lerp_kernel_scalar\" not implemented for 'Long'"),
    (addcmul_bool, NotImplementedError, "\"addcmul_cpu_out\" not implemented for 'Bool'"),
]


@pytest.mark.parametrize("fn,cls,key", CASES, ids=[c[0].__name__ for c in CASES])
def test_error(fn, cls, key):
    with pytest.raises(cls) as info:
        fn(leafkit)
    assert key in str(info.value)


def test_leaf_inplace_allowed_under_no_grad():
    x = leafkit.tensor([1.0], requires_grad=True)
    with leafkit.no_grad():
        x.add_(1)
        x.mul_(3)
    assert x.tolist() == [6.0] and x.is_leaf and x.requires_grad and x._version == 2


def test_unsupported_arguments_raise():
    x = leafkit.ones(2, requires_grad=True)
    with pytest.raises(TypeError):
        x.to("cpu", bogus=True)
    with pytest.raises(TypeError):
        leafkit.zeros(2, 2.5)
