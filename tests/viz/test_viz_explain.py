"""explain(): why is my .grad None (or set)?"""

from __future__ import annotations

import pytest
from viz_devices import to_other_device

from leafkit.viz import REASONS, explain


def test_every_answer(tk):
    x = tk.tensor([2.0], requires_grad=True)
    assert explain(x, "x").reason == "no_backward_yet"
    y = x * 3
    e = explain(y, "y")
    assert e.reason == "non_leaf" and "y.retain_grad()" in e.text and "MulBackward0" in e.text
    assert e.fix == "y.retain_grad()"
    r = x * 4
    r.retain_grad()
    assert explain(r).reason == "non_leaf_retain_pending"
    moved = to_other_device(tk, x)
    m = explain(moved, "b")
    assert m.reason == "to_copy" and "original" in m.text and "ToCopyBackward0" in m.text
    (y.sum() + r.sum()).backward()
    h = explain(x, "x")
    assert h.reason == "has_grad" and "[7.]" in h.text
    assert explain(r, "r").reason == "non_leaf_retained"
    plain = tk.tensor([1.0])
    p = explain(plain, "p")
    assert p.reason == "no_requires_grad" and "p.requires_grad_()" in p.text
    assert explain(x.detach()).reason == "no_requires_grad"
    with tk.no_grad():
        q = x * 2
    expected = "no_grad_mode" if tk.__name__ == "leafkit" else "no_requires_grad"
    assert explain(q).reason == expected
    for ex in (e, m, h, p):
        assert ex.reason in REASONS
        assert 1 <= ex.text.count(". ") + 1 <= 4  # one to three sentences (+ a parenthesis)


def test_html_view(tk):
    x = tk.tensor([2.0], requires_grad=True)
    html = explain(x * 2, "y")._repr_html_()
    assert 'class="leafkit-explain"' in html and "not a leaf" in html and "retain_grad()" in html
    assert "requires_grad=True" in html
    assert str(explain(x)) == explain(x).text


def test_rejects_non_tensors():
    with pytest.raises(TypeError):
        explain([1.0])


def test_no_warning(tk, recwarn):
    x = tk.tensor([2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    explain(y)
    assert not [w for w in recwarn if "leaf" in str(w.message)]
