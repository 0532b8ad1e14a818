"""Nested containers of tensors ("pytrees") flattened to lists and rebuilt, as ``torch.utils._pytree`` does.

The function transforms take and return tuples, lists, dicts and named
tuples of tensors; ``vmap``'s ``in_dims`` and ``out_dims`` follow the same
structure.  A :class:`TreeSpec` records a structure; its ``repr`` is
PyTorch's, because PyTorch's error messages print it ("in_dims has structure
TreeSpec(tuple, None, [*, *]) but inputs has structure ...").  Anything that is
not a container is a leaf, ``None`` included.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "broadcast_prefix", "tree_map", "pprint"]


class TreeSpec:
    """The structure of a pytree: a container ``type``, its ``context`` (a dict's keys, a named tuple's class)
    and one spec per child; :data:`LEAF` for a leaf."""

    __slots__ = ("type", "context", "children")

    def __init__(self, type_, context, children):
        self.type = type_
        self.context = context
        self.children = children

    @property
    def num_leaves(self) -> int:
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, TreeSpec) or isinstance(other, _LeafSpec):
            return False
        return self.type is other.type and self.context == other.context and self.children == other.children

    __hash__ = None

    def __repr__(self, indent: int = 0) -> str:
        inner = ""
        if self.children:
            indent += 2
            inner = self.children[0].__repr__(indent)
            if len(self.children) > 1:
                inner += "," + ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        return f"TreeSpec({self.type.__name__}, {self.context}, [{inner}])"


class _LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])

    @property
    def num_leaves(self) -> int:
        return 1

    def __eq__(self, other):
        return isinstance(other, _LeafSpec)

    __hash__ = None

    def __repr__(self, indent: int = 0) -> str:
        return "*"


LEAF = _LeafSpec()


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(x):
    """``(type, context, children)`` of a container, or None for a leaf."""
    if _is_namedtuple(x):
        return type(x), type(x), list(x)
    if type(x) in (tuple, list):
        return type(x), None, list(x)
    if isinstance(x, OrderedDict):
        return OrderedDict, list(x.keys()), list(x.values())
    if type(x) is dict:
        return dict, list(x.keys()), list(x.values())
    return None


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves in order and the structure around them."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(x, leaves):
    node = _children(x)
    if node is None:
        leaves.append(x)
        return LEAF
    type_, context, children = node
    return TreeSpec(type_, context, [_flatten(c, leaves) for c in children])


def tree_unflatten(leaves, spec):
    """The pytree of ``spec`` with ``leaves`` in its places."""
    it = iter(leaves)
    return _build(spec, it)


def _build(spec, it):
    if isinstance(spec, _LeafSpec):
        return next(it)
    children = [_build(c, it) for c in spec.children]
    if spec.type is dict or spec.type is OrderedDict:
        return spec.type(zip(spec.context, children))
    if spec.type is tuple or spec.type is list:
        return spec.type(children)
    return spec.type(*children)  # a named tuple


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, spec):
    """The leaves of ``prefix`` repeated over the leaves of ``spec`` below them (``in_dims=0`` applies to every
    tensor; ``in_dims=(0, None)`` to each argument's whole subtree), or None when ``prefix`` is not a prefix of
    ``spec``'s structure."""
    out = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix, spec, out):
    node = _children(prefix)
    if node is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    type_, context, children = node
    if isinstance(spec, _LeafSpec) or type_ is not spec.type or len(children) != len(spec.children):
        return False
    if context != spec.context and type_ in (dict, OrderedDict):
        if set(context) != set(spec.context):
            return False
        lookup = dict(zip(context, children))
        children = [lookup[k] for k in spec.context]
    return all(_broadcast(c, s, out) for c, s in zip(children, spec.children))


def pprint(spec) -> str:
    """A structure as PyTorch's ``treespec_pprint`` writes it: ``(*, *)``, ``{'a': *}``, ``[*, [*]]``."""
    if isinstance(spec, _LeafSpec):
        return "*"
    inner = [pprint(c) for c in spec.children]
    if spec.type is tuple:
        return "(" + inner[0] + ",)" if len(inner) == 1 else "(" + ", ".join(inner) + ")"
    if spec.type is list:
        return "[" + ", ".join(inner) + "]"
    if spec.type in (dict, OrderedDict):
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(spec.context, inner)) + "}"
    return f"{spec.type.__name__}(" + ", ".join(inner) + ")"
