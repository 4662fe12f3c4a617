"""No import cycles among mnemo's modules (issue 31): a module-level import (an `if TYPE_CHECKING:`
one included, since the type checker follows it) is an edge; an import inside a function is a
deliberate deferral and is not. Each strongly connected component of more than one module is a cycle."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "shared"
PACKAGE = ROOT / "mnemo"

# Cycles allowed, each with what removes it; none is left since issue 31's step 5 (enrichment as
# stages) removed the last: any cycle fails the test.
ALLOWED: set[frozenset[str]] = set()


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path, modules: set[str]) -> set[str]:
    """The mnemo modules `path` imports at module level (a `from package import module` names the
    module; a `from module import name` the module)."""
    found: set[str] = set()
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    body = list(ast.parse(path.read_text()).body)
    while body:
        node = body.pop(0)
        if isinstance(node, ast.If | ast.Try):  # `if TYPE_CHECKING:`, `try: import ...`
            body += [*node.body, *getattr(node, "orelse", []), *[s for h in getattr(node, "handlers", []) for s in h.body]]
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found |= {f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules}
            if base in modules and not any(f"{base}.{a.name}" in modules for a in node.names):
                found.add(base)
    found.discard(me)
    return found


@cache  # parsed once for the module's tests
def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: top_level_imports(path, set(paths)) for name, path in paths.items()}


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_and_passes_a_chain() -> None:
    """The positive control: a planted cycle is found, named, and a chain beside it is not one."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}) == [frozenset({"a", "b", "c"})]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_the_package_and_its_imports() -> None:
    edges = graph()
    assert "mnemo.adapters.dynamodb.facts" in edges
    assert "mnemo.adapters.dynamodb.fact_table" in edges["mnemo.adapters.dynamodb.erasure"]
    assert "mnemo.ports" in edges["mnemo.adapters.dynamodb.recorded"]


def test_no_import_cycles_but_the_listed_ones() -> None:
    edges = graph()
    planted = {name: set(imported) for name, imported in edges.items()}  # the control: one edge back makes a cycle
    planted["mnemo.adapters.dynamodb.table"].add("mnemo.adapters.dynamodb.facts")
    assert any({"mnemo.adapters.dynamodb.table", "mnemo.adapters.dynamodb.facts"} <= c for c in cycles(planted))
    found = cycles(edges)
    assert [sorted(c) for c in found if any(m.startswith("mnemo.adapters.") for m in c)] == []
    assert sorted(sorted(c) for c in found if c not in ALLOWED) == []
