"""Tiny helpers to read the DOT source the drawings write (tests only)."""

from __future__ import annotations

import re

_NODE = re.compile(r"^\s*(n\d+) \[label=(.*)\]$")
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)(?: \[(.*)\])?$")


def nodes(src: str) -> dict:
    """``{id: rest of the line after 'label='}`` for every node statement."""
    out = {}
    for line in src.splitlines():
        m = _NODE.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def edges(src: str) -> list:
    """``[(src, dst, attrs)]`` in source order (attrs is '' when none)."""
    out = []
    for line in src.splitlines():
        m = _EDGE.match(line)
        if m:
            out.append((m.group(1), m.group(2), m.group(3) or ""))
    return out


def find(src: str, needle: str) -> str:
    """The id of the single node whose statement contains ``needle``."""
    hits = [k for k, v in nodes(src).items() if needle in v]
    assert len(hits) == 1, f"{needle!r} matched {hits} in\n{src}"
    return hits[0]


def fn(src: str, name: str) -> list:
    """Ids of the backward nodes named ``name`` (their label starts with it)."""
    return [k for k, v in nodes(src).items() if v.startswith(name) or v.startswith('"' + name)]


def var(src: str, name: str) -> str:
    """The id of the variables-view box named ``name``."""
    return find(src, f'<FONT POINT-SIZE="13">{name}</FONT>')


def attrs_of(src: str, node_id: str) -> str:
    return nodes(src)[node_id]


def has_edge(src: str, a: str, b: str, contains: str = "") -> bool:
    return any(s == a and d == b and contains in at for s, d, at in edges(src))


def cluster_members(src: str, cluster: str) -> list:
    """Node ids declared inside ``subgraph cluster_<cluster> {...}``."""
    lines = src.splitlines()
    out, depth, inside = [], 0, False
    for line in lines:
        s = line.strip()
        if s.startswith(f"subgraph cluster_{cluster} {{"):
            inside, depth = True, 1
            continue
        if inside:
            if s.endswith("{"):
                depth += 1
            elif s == "}":
                depth -= 1
                if depth == 0:
                    break
            m = _NODE.match(line)
            if m:
                out.append(m.group(1))
    return out
