"""Views and in-place changes against PyTorch 2.13's values (recorded), so they hold without PyTorch installed."""

from __future__ import annotations

import pytest
from engine import review_cases as rc

import leafkit as lk


def test_select_is_a_view():
    a, v = rc.select_is_a_view(lk)
    assert a.tolist() == [2.0, 7.0, 9.0] and v.item() == 2.0


def test_view_regenerated_after_base_changed_in_place():
    grad, name = rc.view_after_base_inplace(lk)
    assert grad.tolist() == [6.0, 6.0] and name == "AsStridedBackward0"


def test_inplace_on_view_makes_copyslices():
    grad, (view_fn, base_fn, nexts) = rc.inplace_on_a_view(lk)
    assert grad.tolist() == [1.0, 5.0, 5.0, 1.0]
    assert (view_fn, base_fn, nexts) == ("AsStridedBackward0", "torch::autograd::CopySlices", ["MulBackward0", None])


def test_setitem_records_history():
    assert rc.setitem_scalar_tensor(lk)[1].item() == 1.0
    name, g = rc.setitem_index_tensor(lk)
    assert name == "IndexPutBackward0" and g.tolist() == [3.0, 9.0]
    b, g = rc.setitem_column(lk)
    assert g.tolist() == [8.0, 8.0]
    y, g = rc.setitem_number_on_non_leaf(lk)
    assert y.tolist() == [5.0, 1.0, 1.0] and g.tolist() == [0.0, 2.0, 2.0]


def test_retained_grads_follow_the_tensor():
    h_grad, x_grad = rc.retain_grad_with_inputs(lk)
    assert h_grad.tolist() == [6.0, 12.0] and x_grad is None
    y_grad, x_grad = rc.retain_grad_then_inplace(lk)
    assert y_grad.tolist() == [1.0, 1.0, 1.0] and x_grad.tolist() == [6.0, 6.0, 6.0]
    assert rc.inputs_marks_retains_grad(lk)[0] is True


def test_changed_saved_result_is_caught():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        rc.saved_result_then_inplace(lk)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        rc.view_inplace_saved(lk)


def test_grad_leaves_its_input_node_alone():
    g, xg = rc.grad_does_not_run_its_input(lk)
    assert g.tolist() == [1.0, 1.0] and xg is not None


def test_switched_off_leaf_gets_no_grad():
    assert rc.switched_off_leaf(lk) is None


def test_custom_function_mark_dirty():
    same, grad, name, text = rc.custom_mark_dirty(lk)
    assert same and grad.tolist() == [2.0, 2.0] and name == "InpBackward" and "grad_fn=<InpBackward>" in text


def test_leaf_semantics_of_transpose_and_unbind():
    assert rc.transpose_of_vector(lk) == (False, "PermuteBackward0")
    assert rc.unpacking(lk) == "UnbindBackward0"
    assert rc.slice_nodes(lk) == ("SliceBackward0", "AliasBackward0", "SliceBackward0", "SelectBackward0")


def test_second_review_round():
    assert rc.index_with_0d_tensor_is_a_view(lk).tolist() == [[50.0, 2.0], [30.0, 40.0]]
    h_grad, x_grad = rc.base_retain_grad_then_view_inplace(lk)
    assert h_grad.tolist() == [1.0, 2.0, 3.0, 4.0] and x_grad.tolist() == [1.0, 4.0, 6.0, 4.0]
    v_grad, x_grad, seen = rc.view_retain_grad_after_base_inplace(lk)
    assert v_grad.tolist() == [5.0, 7.0] and x_grad.tolist() == [0.0, 10.0, 14.0, 0.0] and seen == [[5.0, 7.0]]
    assert [round(v, 4) for v in rc.hook_changes_broadcast_grad_in_place(lk).tolist()] == [0.6667] * 3


def test_mark_dirty_on_a_view_raises_instead_of_a_wrong_gradient():
    class Double(lk.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            ctx.mark_dirty(v)
            return v.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    h = lk.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
    with pytest.raises(NotImplementedError, match="mark_dirty on a view"):
        Double.apply(h[1:])


def test_no_grad_view_of_a_base_changed_later_is_invalid():
    x = lk.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    h = x * 1
    with lk.no_grad():
        v = h[1:]
    h.mul_(2)
    assert repr(v) == "tensor([4., 6., 8.], grad_fn=<Invalid>)" and v.requires_grad  # as PyTorch prints it
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base"):
        v * v
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base"):
        v[0] = 5.0
