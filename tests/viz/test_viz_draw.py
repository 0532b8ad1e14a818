"""The variables view: boxes, inputs, aliases, and diffs against a previous drawing."""

from __future__ import annotations

import json

import pytest
from viz_dotparse import attrs_of, cluster_members, edges, fn, nodes, var

from leafkit.viz import VariablesDrawing, draw


def test_drawing_object(tk):
    x = tk.tensor([1.0], requires_grad=True)
    y = x * 2
    d = draw(x=x, y=y)
    assert isinstance(d, VariablesDrawing)
    assert d.source == d.digraph.source
    assert set(d.state["variables"]) == {"x", "y"}
    assert d.state["variables"]["y"] == {
        "is_leaf": False,
        "requires_grad": True,
        "grad_fn": "MulBackward0",
        "device": "cpu",
        "grad": None,
        "shape": "(1,)",
        "retains_grad": False,
        "hooks": 0,
    }
    json.dumps(d.state)  # plain data for the explorers
    assert "2 variables" in repr(d)
    assert "light blue: leaf" in d.source  # the legend caption


def test_mapping_like_locals(tk):
    a = tk.tensor([1.0], requires_grad=True)
    b = a * 2
    scope = {"a": a, "b": b, "n": 3, "_hidden": a * 3, "torch": tk, "T": tk.Tensor}
    d = draw(scope)
    assert sorted(d.state["variables"]) == ["a", "b"]
    with pytest.raises(TypeError):
        draw(a=a, n=3)
    with pytest.raises(TypeError):
        draw([a])
    with pytest.raises(TypeError):
        draw(a=a, previous=42)


def test_aliases_share_one_box(tk):
    a = tk.tensor([1.0], requires_grad=True)
    b = a
    src = draw(a=a, b=b).source
    assert '<FONT POINT-SIZE="13">a = b</FONT>' in src
    assert len([v for v in nodes(src).values() if "POINT-SIZE" in v]) == 1


def test_nonleaf_feeds_the_next_op_through_its_box(tk):
    x = tk.tensor([1.0], requires_grad=True)
    h = x * 2
    out = h + 1
    src = draw(x=x, h=h, out=out).source
    (mul,) = fn(src, "MulBackward0")
    (add,) = fn(src, "AddBackward0")
    assert (var(src, "x"), mul) in [(a, b) for a, b, _ in edges(src)]
    assert (mul, var(src, "h")) in [(a, b) for a, b, _ in edges(src)]
    assert (var(src, "h"), add) in [(a, b) for a, b, _ in edges(src)]
    assert (add, var(src, "out")) in [(a, b) for a, b, _ in edges(src)]


def test_previous_marks_flip_new_and_gone(tk):
    a = tk.tensor([1.0], requires_grad=True)
    b = a * 2
    first = draw(a=a, b=b)
    a = a * 3  # the name a now holds a non-leaf: is_leaf flipped
    c = a + b
    second = draw(a=a, c=c, previous=first)
    ch = second.changes
    assert ch["flipped"] == ["a"]
    assert ch["added_variables"] == ["c"]
    assert ch["gone_variables"] == ["b"]
    # the old tensor is unnamed now, so every node above it has a new signature
    assert sorted(s.split(":")[0] for s in ch["added_nodes"]) == [
        "AddBackward0",
        "MulBackward0",
        "MulBackward0",
        "leaf",
    ]
    assert [s.split(":")[0] for s in ch["gone_nodes"]] == ["MulBackward0"]
    src = second.source
    a_box = attrs_of(src, var(src, "a"))
    assert "is_leaf: True \u2192 False" in a_box and 'color="#d50000"' in a_box and "penwidth=4" in a_box
    assert "NEW since previous drawing" in attrs_of(src, var(src, "c"))
    gone = cluster_members(src, "gone")
    assert sorted(nodes(src)[g] for g in gone) == sorted(
        [
            '"b\\n(gone)" color="#9e9e9e" fillcolor=white fontcolor="#9e9e9e" style="dotted,rounded"',
            '"MulBackward0\\n(gone)" color="#9e9e9e" fillcolor=white fontcolor="#9e9e9e" style="dotted,rounded"',
        ]
    )
    assert "(new)" in src
    # previous may also be the plain state
    assert draw(a=a, c=c, previous=second.state).changes["added_nodes"] == []


def test_same_program_same_signatures(tk):
    def build():
        x = tk.tensor([1.0], requires_grad=True)
        y = (x * 2).sum()
        return draw(x=x, y=y)

    one, two = build(), build()
    assert one.state == two.state and one.source == two.source
    again = draw(previous=one, **{"x": tk.tensor([1.0], requires_grad=True)})
    assert again.changes["gone_variables"] == ["y"]


def test_no_warning_reading_grads(tk, recwarn):
    x = tk.tensor([1.0], requires_grad=True)
    y = x * 2
    z = y * 3
    z.backward()
    draw(x=x, y=y, z=z)
    assert not [w for w in recwarn if "leaf" in str(w.message)]


def test_empty_or_blank_name_gives_valid_dot(tk):
    # an empty <FONT></FONT> is a syntax error in Graphviz's HTML labels; the box shows the name as ''
    x = tk.ones(2, requires_grad=True)
    y = (x * 2).sum()
    d = draw({"": y, "x": x, " ": x * 3})
    assert '<FONT POINT-SIZE="13"></FONT>' not in d.source
    assert '<FONT POINT-SIZE="13">&#x27;&#x27;</FONT>' in d.source
    assert '<FONT POINT-SIZE="13">&#x27; &#x27;</FONT>' in d.source
    assert "'' [NON-LEAF]" in d.text
    assert set(d.state["variables"]) == {"", "x", " "}  # the state keeps the real names


@pytest.mark.parametrize(
    "previous,words",
    [
        ({"variables": 3, "nodes": 4}, '"variables" of type int and "nodes" of type int'),
        ({"variables": {"x": 1}, "nodes": {}}, "with entries of the wrong types"),
        ({"variables": {}, "nodes": ["a"]}, '"nodes" of type list'),
        ("x", "got str"),
    ],
)
def test_bad_previous_raises_a_clear_type_error(tk, previous, words):
    x = tk.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match=r"previous= must be an earlier draw\(\) result") as e:
        draw(x=x, previous=previous)
    assert words in str(e.value)
    d = draw(x=x)
    json_state = json.loads(json.dumps(d.state))  # a state that went through JSON is still accepted
    assert draw(x=x, previous=json_state).changes["added_variables"] == []
