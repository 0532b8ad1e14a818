"""The layering of ARCHITECTURE.md, checked on the code.

The rules live on the page, in three tables this module parses (so the page and the test cannot
drift): the layers and what each may import, the exceptions (an import inside a function, or one
that goes up a layer, each with its reason), and the import cycles allowed.  The import graph is
read with ``ast`` from the source of every module of ``leafkit/`` (nothing is imported), so a
function's imports and those under ``if TYPE_CHECKING:`` count too.  The page also states the
size limits: no function of ``leafkit/`` over N lines, no file of ``leafkit/widgets/`` over M.

The checks are written as functions of ``{module name: source}`` so that ``test_the_checks_catch_*``
can feed them small made-up packages and see them fail.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "ARCHITECTURE.md"
PACKAGE = ROOT / "leafkit"


# ------------------------------------------------------------------ the page --
def _table(text: str, name: str) -> list:
    """The rows of the Markdown table between ``<!-- begin name -->`` and ``<!-- end name -->``, as lists of cells."""
    m = re.search(rf"<!-- begin {name} -->\n(.*?)<!-- end {name} -->", text, re.S)
    assert m, f"ARCHITECTURE.md has no <!-- begin {name} --> table"
    lines = [ln.strip() for ln in m.group(1).strip().splitlines()]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]  # after the header and the rule
    return rows


def _codes(cell: str) -> list:
    """The `backticked` items of a cell."""
    return re.findall(r"`([^`]+)`", cell)


@dataclass
class Rules:
    layers: dict  # layer name -> (module patterns, allowed layer names)
    exceptions: dict  # (module, imported) -> "module" or "function"
    cycles: list  # frozensets of module names
    max_function_lines: int
    max_widget_file_lines: int

    def layer_of(self, module: str):
        """The layer of ``module``: the row naming it exactly, else the longest ``prefix.*`` that matches."""
        best, best_len = None, -1
        for layer, (patterns, _) in self.layers.items():
            for p in patterns:
                if p == module:
                    return layer
                if p.endswith(".*") and module.startswith(p[:-1]) and len(p) > best_len:
                    best, best_len = layer, len(p)
        return best


def read_rules(text: str) -> Rules:
    layers = {}
    for name, modules, allowed in _table(text, "layers"):
        layers[name] = (_codes(modules), [a.strip() for a in allowed.split(",")])
    exceptions = {}
    for module, imported, where, why in _table(text, "exceptions"):
        assert where in ("module", "function") and why, (module, imported, where)
        exceptions[(_codes(module)[0], _codes(imported)[0])] = where
    cycles = [frozenset(_codes(mods)) for mods, why in _table(text, "cycles") if why]
    sizes = re.search(r"longer than \*\*(\d+)\*\* lines, and no file .* longer than \*\*(\d+)\*\* lines", text)
    assert sizes, "ARCHITECTURE.md states the size limits"
    return Rules(layers, exceptions, cycles, int(sizes.group(1)), int(sizes.group(2)))


@pytest.fixture(scope="module")
def rules() -> Rules:
    return read_rules(PAGE.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ the import graph --
@dataclass(frozen=True)
class Import:
    module: str  # the importer
    target: str  # the leafkit module imported
    line: int
    in_function: bool
    type_checking: bool


def package_sources(root: Path = PACKAGE) -> dict:
    """``{module name: source}`` for every ``.py`` file of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = (path.read_text(encoding="utf-8"), path.name == "__init__.py")
    return out


def _resolve(module: str, is_package: bool, node, modules) -> list:
    """The modules an import statement names (``from . import x`` is the module ``x`` when there is one)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(sources: dict, root: str = "leafkit") -> list:
    """Every import of a ``root`` module in ``sources``, with where it is (in a function, under TYPE_CHECKING)."""
    out = []
    for module, (source, is_package) in sources.items():
        tree = ast.parse(source)

        def visit(node, in_function, type_checking, module=module, is_package=is_package):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for target in _resolve(module, is_package, child, sources):
                        if target == root or target.startswith(root + "."):
                            out.append(Import(module, target, child.lineno, in_function, type_checking))
                    continue
                fn = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                tc = type_checking or (isinstance(child, ast.If) and _is_type_checking(child.test))
                visit(child, fn, tc)

        visit(tree, False, False)
    return out


def upward_imports(imports, rules: Rules) -> list:
    """Imports of a layer the importer's layer may not import (and no exception allows)."""
    bad = []
    for imp in imports:
        mine, theirs = rules.layer_of(imp.module), rules.layer_of(imp.target)
        if mine is None or theirs is None or theirs in rules.layers[mine][1]:
            continue
        if (imp.module, imp.target) in rules.exceptions:
            continue
        bad.append(f"{imp.module}:{imp.line} ({mine}) imports {imp.target} ({theirs})")
    return bad


def imports_in_functions(imports, rules: Rules) -> list:
    """Imports of leafkit modules inside a function that the exceptions table does not allow."""
    return [
        f"{imp.module}:{imp.line} imports {imp.target} inside a function"
        for imp in imports
        if imp.in_function and rules.exceptions.get((imp.module, imp.target)) != "function"
    ]


def cycles(imports) -> list:
    """The import cycles (strongly connected components of two or more modules) among module-level imports."""
    graph: dict = {}
    for imp in imports:
        if not imp.in_function and not imp.type_checking and imp.module != imp.target:
            graph.setdefault(imp.module, set()).add(imp.target)
            graph.setdefault(imp.target, set())
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def connect(v):  # Tarjan's algorithm, iteratively
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


@pytest.fixture(scope="module")
def sources() -> dict:
    return package_sources()


@pytest.fixture(scope="module")
def imports(sources) -> list:
    return imports_of(sources)


# ------------------------------------------------------------------ the tests --
def test_every_module_belongs_to_a_layer(sources, rules):
    assert [m for m in sources if rules.layer_of(m) is None] == [], "add the module to a layer of ARCHITECTURE.md"
    for name, (_, allowed) in rules.layers.items():
        assert set(allowed) <= set(rules.layers), (name, allowed)


def test_no_upward_imports(imports, rules):
    assert upward_imports(imports, rules) == []


def test_no_imports_inside_functions(imports, rules):
    assert imports_in_functions(imports, rules) == []


def test_no_new_import_cycles(imports, rules):
    found = set(cycles(imports))
    allowed = set(rules.cycles)
    assert sorted(map(sorted, found - allowed)) == [], "a new import cycle (or a known one that grew)"
    assert sorted(map(sorted, allowed - found)) == [], "a cycle ARCHITECTURE.md lists is gone: remove its row"


def test_every_exception_is_still_needed(imports, rules):
    used = {(imp.module, imp.target, "function" if imp.in_function else "module") for imp in imports}
    stale = [(m, t, w) for (m, t), w in rules.exceptions.items() if (m, t, w) not in used]
    assert stale == [], "ARCHITECTURE.md allows imports that no longer exist: remove their rows"


def _functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def test_function_and_file_sizes(sources, rules):
    long = [
        f"{module}.{fn.name} ({fn.end_lineno - fn.lineno + 1} lines)"
        for module, (source, _) in sources.items()
        for fn in _functions(ast.parse(source))
        if fn.end_lineno - fn.lineno + 1 > rules.max_function_lines
    ]
    assert long == [], f"functions over {rules.max_function_lines} lines"
    big = [
        f"{p.relative_to(ROOT)} ({n} lines)"
        for p in sorted((PACKAGE / "widgets").rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > rules.max_widget_file_lines
    ]
    assert big == [], f"widget files over {rules.max_widget_file_lines} lines"


_LESSON_IMPORT = re.compile(r"^\s*(?:from\s+(leafkit[\w.]*)\s+import|import\s+(leafkit[\w.]*))", re.M)


def test_lessons_import_only_public_modules():
    """The lessons (the top layer) use leafkit as a learner would: no ``leafkit._private`` module."""
    found = []
    for path in sorted((ROOT / "lessons").rglob("*.md")):
        for m in _LESSON_IMPORT.finditer(path.read_text(encoding="utf-8")):
            module = m.group(1) or m.group(2)
            if any(part.startswith("_") for part in module.split(".")):
                found.append(f"{path.relative_to(ROOT)}: {module}")
    assert found == []


# ------------------------------------------------------------------ the checks themselves --
TOY_RULES = """
<!-- begin layers -->
| layer | modules | may import |
|---|---|---|
| core | `toy.core.*` | core |
| tensor | `toy.tensor` | core, tensor |
| top | `toy`, `toy.core` | core, tensor, top |
<!-- end layers -->
<!-- begin exceptions -->
| module | imports | where | why |
|---|---|---|---|
| `toy.tensor` | `toy.core.engine` | function | a reason |
<!-- end exceptions -->
<!-- begin cycles -->
| modules | why |
|---|---|
<!-- end cycles -->
No function is longer than **5** lines, and no file of widgets longer than **9** lines.
"""


def _toy(**modules) -> dict:
    return {name.replace("__", "."): (src, name == "toy" or name.endswith("__init")) for name, src in modules.items()}


def test_the_checks_catch_an_upward_import_inside_a_core_function():
    rules = read_rules(TOY_RULES)
    toy = _toy(
        toy="from . import tensor\n",
        toy__tensor="from .core import engine\n",
        toy__core__engine="def backward():\n    from ..tensor import Tensor\n    return Tensor\n",
    )
    imps = imports_of(toy, root="toy")
    assert upward_imports(imps, rules) == ["toy.core.engine:2 (core) imports toy.tensor (tensor)"]
    assert imports_in_functions(imps, rules) == ["toy.core.engine:2 imports toy.tensor inside a function"]


def test_the_checks_catch_a_type_checking_import_and_allow_listed_ones():
    rules = read_rules(TOY_RULES)
    toy = _toy(
        toy__tensor="def f():\n    from .core import engine\n",
        toy__core__engine="",
        toy__core__graph="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..tensor import Tensor\n",
    )
    imps = imports_of(toy, root="toy")
    assert upward_imports(imps, rules) == ["toy.core.graph:3 (core) imports toy.tensor (tensor)"]
    assert imports_in_functions(imps, rules) == []  # the exception allows toy.tensor's
    assert cycles(imps) == []


def test_the_checks_catch_a_new_cycle():
    toy = _toy(
        toy__core__a="from . import b\n",
        toy__core__b="from .c import x\n",
        toy__core__c="from .a import y\n",
        toy__core__d="def f():\n    from . import a\n",  # inside a function: not a cycle at import
    )
    found = cycles(imports_of(toy, root="toy"))
    assert found == [frozenset({"toy.core.a", "toy.core.b", "toy.core.c"})]


def test_the_page_is_parsed_as_written(rules):
    """A few facts of the page, to see the parser read it: the core may import only what lies below it."""
    assert rules.layer_of("leafkit.autograd.engine") == "autograd core"
    assert rules.layer_of("leafkit.autograd") == "torch namespace"
    assert rules.layer_of("leafkit.widgets.backward_stepper.model") == "widgets"
    assert rules.layers["autograd core"][1] == ["dtypes and devices", "autograd core"]
    assert rules.layers["viz"][1] == ["dtypes and devices", "viz"]
    assert read_rules(TOY_RULES).max_function_lines == 5
