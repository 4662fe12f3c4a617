"""Dependencies point inward: the domain and the services import no vendor SDK and no outer ring."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "mnemo"
VENDORS = {"boto3", "botocore", "opensearchpy", "fastapi", "mangum", "mcp", "starlette", "aws_lambda_powertools",
           "numpy", "tokenizers", "safetensors", "uvicorn", "moto", "httpx"}
RULES = {
    "domain": VENDORS | {"mnemo.services", "mnemo.adapters", "mnemo.surfaces", "mnemo.local", "mnemo.bootstrap", "mnemo.ports"},
    "services": VENDORS | {"mnemo.adapters", "mnemo.surfaces", "mnemo.local", "mnemo.bootstrap"},
    "adapters": {"fastapi", "mangum", "mcp", "starlette", "mnemo.services", "mnemo.surfaces", "mnemo.local", "mnemo.bootstrap"},
}


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def forbidden(name: str, banned: set[str]) -> bool:
    return any(name == b or name.startswith(b + ".") for b in banned)


@pytest.mark.parametrize("ring", list(RULES))
def test_ring_imports_nothing_outward(ring: str) -> None:
    modules = sorted((PACKAGE / ring).rglob("*.py"))
    assert modules, f"no modules in {ring}"
    violations = [f"{m.relative_to(PACKAGE)} imports {name}" for m in modules for name in imports(m)
                  if forbidden(name, RULES[ring])]
    assert violations == []


def test_ports_import_only_the_domain() -> None:
    """The ports package (one module an area, issue 31) imports the domain and its own modules only."""
    modules = sorted((PACKAGE / "ports").glob("*.py"))
    assert {m.stem for m in modules} >= {"__init__", "facts", "memories"}
    names = {n for m in modules for n in imports(m)}
    assert "mnemo.ports.facts" in names and "mnemo.domain.graph" in names
    assert [n for n in names if n.startswith("mnemo") and not n.startswith(("mnemo.domain.", "mnemo.ports."))] == []
    assert not [n for n in names if forbidden(n, VENDORS)]


def test_surfaces_are_given_the_container_and_never_look_it_up() -> None:
    """Inject, don't locate: only functions/*/app.py and the CLI obtain the composition root."""
    lookups = []
    for module in sorted((PACKAGE / "surfaces").rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "mnemo.bootstrap":
                lookups += [f"{module.relative_to(PACKAGE)} imports {a.name}" for a in node.names if a.name != "Container"]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "container":
                lookups.append(f"{module.relative_to(PACKAGE)}:{node.lineno} calls container()")
    assert lookups == []


def test_profiles_and_routes_reach_services_only() -> None:
    """A profile or REST route names the services (surfaces/facade.py), never an adapter, the
    composition root or a port's protocol (a store, index, queue or model client): a rule that needs
    one belongs in a service. Records the ports define (ApiKeyRecord) are data and may pass."""
    protocols = {node.name for module in (PACKAGE / "ports").glob("*.py") for node in ast.walk(ast.parse(module.read_text()))
                 if isinstance(node, ast.ClassDef) and any(getattr(b, "id", None) == "Protocol" for b in node.bases)}
    assert {"MemoryStore", "SearchIndex", "Extractor"} <= protocols  # the check below is live
    modules = sorted([*(PACKAGE / "surfaces" / "profiles").glob("*.py"), *(PACKAGE / "surfaces" / "rest").glob("*.py")])
    assert {"profiles/r3.py", "rest/api.py", "rest/facts.py"} <= {f"{m.parent.name}/{m.name}" for m in modules}
    reached = []
    for module in modules:
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and forbidden(node.module, {"mnemo.adapters", "mnemo.bootstrap", "mnemo.local"}):
                reached.append(f"{module.relative_to(PACKAGE)} imports {node.module}")
            elif isinstance(node, ast.ImportFrom) and node.module and forbidden(node.module, {"mnemo.ports"}):
                reached += [f"{module.relative_to(PACKAGE)} imports ports.{a.name}" for a in node.names if a.name in protocols]
    assert reached == []
