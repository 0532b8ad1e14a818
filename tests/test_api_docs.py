"""The generated API reference, type stubs and coverage tables (scripts/gen_api.py) are up to date and complete.

``python scripts/gen_api.py`` writes ``docs/api.md``, ``leafkit/_tensor.pyi``, ``leafkit/__init__.pyi`` and
the coverage tables of ``README.md`` and ``README.zh-CN.md`` from the op registry; a new op (or function,
or module) makes them stale until it runs again.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

import leafkit

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_api", ROOT / "scripts" / "gen_api.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_generated_file_is_stale(gen):
    stale = [str(p.relative_to(ROOT)) for p in gen.stale()]
    assert stale == [], "run: python scripts/gen_api.py"


def test_every_public_name_is_in_the_reference_and_both_readmes(gen):
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    tables = {lang: gen.coverage_table(lang) for lang in ("en", "zh")}
    for name, _ in gen.torch_functions():
        assert f"`torch.{name}(" in api, name
    for name, _, _ in gen.tensor_members():
        assert f"`Tensor.{name}" in api, name
    for shown, _, _ in gen.public_names():
        for lang, table in tables.items():
            base = shown.lstrip(".").removesuffix("()")
            assert re.search(rf"`\.?{re.escape(base)}(\(\))?`", table), (lang, shown)
    # the names the hand-kept table had lost
    for name in ("addmm", "outer", "mv", "dot", "argmin", "masked_select", "flatten", "isnan", "logical_and"):
        assert f"`{name}`" in tables["en"] and f"`{name}`" in tables["zh"], name
    assert "`reciprocal`/`reciprocal_`" in tables["en"]


def test_the_reference_shows_node_saves_formula_and_place(gen):
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    row = next(line for line in api.splitlines() if line.startswith("| `torch.sin(input)`"))
    assert "`SinBackward0`" in row and "`self`" in row and "`grad * F.cos(self)`" in row
    assert re.search(r"\[elementwise\.py:\d+\]\(\.\./leafkit/_functions/elementwise\.py#L\d+\)", row)
    line = int(re.search(r"#L(\d+)", row).group(1))
    source = (ROOT / "leafkit" / "_functions" / "elementwise.py").read_text(encoding="utf-8").splitlines()
    assert "F.cos(self)" in source[line - 1]  # the line the link names holds the formula
    mul = next(line for line in api.splitlines() if line.startswith("| `torch.matmul("))
    assert "`MmBackward0`" in mul and "`BmmBackward0`" in mul  # a composite lists the nodes it may record


def test_the_stubs_list_everything(gen):
    """A stub beside a module hides the module from type checkers: it must have every name."""
    tensor_stub = (ROOT / "leafkit" / "_tensor.pyi").read_text(encoding="utf-8")
    namespace_stub = (ROOT / "leafkit" / "__init__.pyi").read_text(encoding="utf-8")
    for source in (tensor_stub, namespace_stub):
        ast.parse(source)
    assert "    def exp(self) -> Tensor: ..." in tensor_stub and "\ndef exp(input) -> Tensor: ..." in namespace_stub
    tree = ast.parse(tensor_stub)
    stub_names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    stub_names |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    assert set(gen._module_names(ROOT / "leafkit" / "_tensor.py")) <= stub_names
    tensor_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    members = {n.name for n in tensor_class.body if isinstance(n, ast.FunctionDef)}
    members |= {n.target.id for n in tensor_class.body if isinstance(n, ast.AnnAssign)}
    assert {n for n in dir(leafkit.Tensor) if not (n.startswith("__") and hasattr(object, n))} - members <= {
        "__dict__",
        "__weakref__",
        "__module__",
        "__slots__",
        "__array_priority__",
    }
    names = {n for n in vars(leafkit) if not n.startswith("__")} - {"annotations"}
    missing = [n for n in sorted(names) if not re.search(rf"(\b{n} as {n}\b|^def {n}\(|^{n}: )", namespace_stub, re.M)]
    assert missing == []
