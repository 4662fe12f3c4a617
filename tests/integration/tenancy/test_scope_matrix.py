"""The scope matrix (issues 15 and 27): every tool of every MCP profile and every REST route, called
with keys holding exactly one permission. A call succeeds exactly when the permission table
(services/tenancy/permissions.py, printed in docs/permissions.md) says that permission is enough; every refusal
is the surface's own missing-scope error (or, for a job the key may not read, the unknown job's 404)
and changes nothing (the tenant's memories and the fact are the same afterwards). The admin key
running a call no single permission allows is the positive control of its row. A tool or route
without a row fails `test_the_matrix_covers_every_tool_and_route`, so a new surface is checked too.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.routing import APIRoute
from starlette.testclient import TestClient

from mnemo.domain.models import Permission
from mnemo.services.tenancy.permissions import REQUIRED, Operation
from tests.conftest import TEST_KEY
from tests.integration.conftest import MCP_HEADERS, auth

_ids = itertools.count(1)
SINGLE = [Permission.READ, Permission.WRITE, Permission.DELETE]
PROFILES = {"/mcp": "eigen", "/mcp/thrindex": "thrindex", "/mcp/facts": "facts", "/mcp/r3": "r3"}
Call = Callable[[str], tuple[bool, str]]


@dataclass(frozen=True)
class Row:
    covers: str  # "<profile path> <tool>" or "<METHOD> <route path>"
    operations: tuple[Operation, ...]  # what the call is; () = any key of the tenant (usage)
    call: Call
    refusal: str = "scope"  # what a refused call's answer says

    @property
    def needs(self) -> set[Permission]:
        return {REQUIRED[o] for o in self.operations}

    def allowed_for(self, permission: Permission) -> bool:
        return self.needs <= {permission}


def tool(http: TestClient, path: str, name: str, arguments: dict[str, Any], key: str) -> tuple[bool, str]:
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = http.post(path, json=body, headers={**MCP_HEADERS, **auth(key), "mcp-protocol-version": "2025-06-18"})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    return not result.get("isError"), " ".join(c.get("text", "") for c in result["content"])


def rest(http: TestClient, method: str, url: str, key: str, body: Any = None) -> tuple[bool, str]:
    response = http.request(method, url, headers=auth(key), json=body)
    if response.status_code in (403, 404):
        return False, response.json()["error"]["code"]
    assert response.status_code < 300, (method, url, response.status_code, response.text)
    return True, ""


@pytest.fixture
def world(http: TestClient, container) -> dict[str, Any]:
    """Memories and a recorded fact to act on, one key per single permission, and a job of each kind."""
    def memory(text: str) -> str:
        return http.post("/v1/memories", headers=auth(), json={"content": text, "as_user": True}).json()["id"]

    recorded = http.post("/v1/facts", headers=auth(), json={"subject": "Ana", "predicate": "works at", "object": "Umbrella"}).json()
    keys = {p: container.keys.create("local", f"only-{p.value}", [p.value]).secret for p in SINGLE}
    big = [{"content": f"Imported note {i}"} for i in range(201)]  # above the synchronous limit: a queued job
    job = http.post("/v1/import", headers=auth(), json={"data": big})
    assert job.status_code == 202, job.text
    erasure = http.delete("/v1/users/nobody?hard=true", headers=auth()).json()["job_id"]
    spare = container.keys.create("local", "to-revoke", ["memory:read"]).record.prefix
    return {"memory": memory("Standups are on Tuesdays"), "edge": recorded["edge"]["uuid"], "keys": keys,
            "ana": recorded["edge"]["source"]["uuid"], "umbrella": recorded["edge"]["target"]["uuid"],
            "job": job.json()["job_id"], "erasure": erasure, "spare": spare,
            **{f"doomed{i}": memory(f"Doomed note number {i}") for i in range(8)}}


def rows(http: TestClient, w: dict[str, Any]) -> list[Row]:
    m, e = w["memory"], w["edge"]
    O = Operation  # noqa: E741

    def r(method: str, url: str, body: Any = None) -> Call:
        return lambda k: rest(http, method, url, k, body)

    def t(path: str, name: str, arguments: dict[str, Any]) -> Call:
        return lambda k: tool(http, path, name, arguments, k)

    fact = {"subject": "Bo", "predicate": "likes", "object": "jazz"}
    return [
        # -- REST ------------------------------------------------------------------------------
        Row("POST /v1/memories", (O.CAPTURE,), r("POST", "/v1/memories", {"content": "x"})),
        Row("GET /v1/memories", (O.BROWSE,), r("GET", "/v1/memories")),
        Row("GET /v1/memories", (O.READ_ALL_USERS,), r("GET", "/v1/memories?user_id=*")),
        Row("GET /v1/memories/{memory_id}", (O.READ,), r("GET", f"/v1/memories/{m}")),
        Row("GET /v1/memories/{memory_id}/history", (O.READ,), r("GET", f"/v1/memories/{m}/history")),
        Row("PATCH /v1/memories/{memory_id}", (O.EDIT,), r("PATCH", f"/v1/memories/{m}", {"content": "Standups moved"})),
        Row("POST /v1/memories/search", (O.SEARCH,), r("POST", "/v1/memories/search", {"query": "standups"})),
        Row("POST /v1/memories/search", (O.READ_ALL_USERS,),
            r("POST", "/v1/memories/search", {"query": "standups", "user_id": "*"})),
        Row("GET /v1/status", (O.STATUS,), r("GET", "/v1/status")),
        Row("GET /v1/status/failed", (O.STATUS,), r("GET", "/v1/status/failed")),
        Row("POST /v1/status/retry", (O.RETRY_ENRICHMENT,), r("POST", "/v1/status/retry")),
        Row("POST /v1/episodes", (O.CAPTURE,), r("POST", "/v1/episodes", {"content": "Bo met Cy."})),
        Row("POST /v1/facts", (O.RECORD_FACT,), r("POST", "/v1/facts", fact)),
        Row("POST /v1/search", (O.READ_FACTS,), r("POST", "/v1/search", {"query": "Umbrella"})),
        Row("GET /v1/facts/{fact_uuid}", (O.READ_FACTS,), r("GET", f"/v1/facts/{e}")),
        Row("GET /v1/entities/{entity_uuid}", (O.READ_FACTS,), r("GET", f"/v1/entities/{w['ana']}")),
        Row("GET /v1/entities/{entity_uuid}/neighbours", (O.TRAVERSE_FACTS,), r("GET", f"/v1/entities/{w['ana']}/neighbours")),
        Row("GET /v1/paths", (O.TRAVERSE_FACTS,), r("GET", f"/v1/paths?from={w['ana']}&to={w['umbrella']}")),
        Row("POST /v1/import", (O.IMPORT,), r("POST", "/v1/import", {"data": [{"content": "An imported note"}]})),
        Row("GET /v1/export", (O.EXPORT,), r("GET", "/v1/export?user_id=default")),
        Row("GET /v1/jobs/{job_id}", (O.READ_WORK_JOB,), r("GET", f"/v1/jobs/{w['job']}"), refusal="not_found"),
        Row("GET /v1/jobs/{job_id}", (O.READ_JOB,), r("GET", f"/v1/jobs/{w['erasure']}"), refusal="not_found"),
        Row("GET /v1/usage", (), r("GET", "/v1/usage")),
        Row("GET /v1/whoami", (), r("GET", "/v1/whoami")),
        Row("GET /v1/jobs", (O.READ_WORK_JOB,), r("GET", "/v1/jobs")),
        Row("POST /v1/keys", (O.MANAGE_KEYS,), r("POST", "/v1/keys", {"name": "made", "scopes": ["memory:read"]})),
        Row("GET /v1/keys", (O.MANAGE_KEYS,), r("GET", "/v1/keys")),
        # an edit that archives is two operations: no single permission is enough (admin: the control)
        Row("PATCH /v1/memories/{memory_id}", (O.EDIT, O.ARCHIVE),
            r("PATCH", f"/v1/memories/{w['doomed0']}", {"content": "Doomed, edited", "status": "archived"})),
        # -- /mcp (the thought tools) -------------------------------------------------------------
        Row("/mcp capture_thought", (O.CAPTURE,), t("/mcp", "capture_thought", {"raw": "y"})),
        Row("/mcp retrieve_thoughts", (O.SEARCH,), t("/mcp", "retrieve_thoughts", {"query": "standups"})),
        Row("/mcp retrieve_thoughts", (O.BROWSE,), t("/mcp", "retrieve_thoughts", {})),
        Row("/mcp edit_thought", (O.EDIT,), t("/mcp", "edit_thought", {"thought_id": m, "raw_text": "Standups on Fridays"})),
        Row("/mcp edit_thought", (O.EDIT, O.ARCHIVE), t("/mcp", "edit_thought", {"thought_id": w["doomed1"], "edit_request": "archive"})),
        # -- /mcp/thrindex ------------------------------------------------------------------------
        Row("/mcp/thrindex store_memory", (O.CAPTURE,), t("/mcp/thrindex", "store_memory", {"content": "z"})),
        Row("/mcp/thrindex search_memories", (O.SEARCH,), t("/mcp/thrindex", "search_memories", {"query": "standups"})),
        Row("/mcp/thrindex list_memories", (O.BROWSE,), t("/mcp/thrindex", "list_memories", {})),
        Row("/mcp/thrindex get_memory", (O.READ,), t("/mcp/thrindex", "get_memory", {"id": m})),
        # -- /mcp/facts -----------------------------------------------------------------------------
        Row("/mcp/facts add_episode", (O.CAPTURE,), t("/mcp/facts", "add_episode", {"content": "Cy met Di."})),
        Row("/mcp/facts record_fact", (O.RECORD_FACT,), t("/mcp/facts", "record_fact", {"subject": "Cy", "predicate": "likes", "object": "go"})),
        Row("/mcp/facts search", (O.READ_FACTS,), t("/mcp/facts", "search", {"query": "Umbrella"})),
        # -- /mcp/r3 --------------------------------------------------------------------------------
        Row("/mcp/r3 add_memory", (O.CAPTURE,), t("/mcp/r3", "add_memory", {"content": "A new r3 note"})),
        Row("/mcp/r3 search_memory", (O.SEARCH,), t("/mcp/r3", "search_memory", {"query": "standups"})),
        Row("/mcp/r3 get_memory", (O.READ,), t("/mcp/r3", "get_memory", {"memory_id": m})),
        Row("/mcp/r3 get_all_memories", (O.BROWSE,), t("/mcp/r3", "get_all_memories", {})),
        Row("/mcp/r3 update_memory", (O.EDIT,), t("/mcp/r3", "update_memory", {"memory_id": m, "metadata": {"k": 1}})),
        Row("/mcp/r3 deduplicate_memories", (O.FIND_DUPLICATES,), t("/mcp/r3", "deduplicate_memories", {})),
        Row("/mcp/r3 deduplicate_memories", (O.ARCHIVE,), t("/mcp/r3", "deduplicate_memories", {"dry_run": False})),
        Row("/mcp/r3 cache_stats", (O.READ_CACHE,), t("/mcp/r3", "cache_stats", {})),
        Row("/mcp/r3 optimize_cache", (O.READ_CACHE,), t("/mcp/r3", "optimize_cache", {})),
        Row("/mcp/r3 sync_status", (O.STATUS,), t("/mcp/r3", "sync_status", {})),
        Row("/mcp/r3 extract_entities", (O.EXTRACT,), t("/mcp/r3", "extract_entities", {"text": "Ana works at Umbrella."})),
        Row("/mcp/r3 get_knowledge_graph", (O.TRAVERSE_FACTS,), t("/mcp/r3", "get_knowledge_graph", {"entity_name": "Ana"})),
        Row("/mcp/r3 find_connections", (O.TRAVERSE_FACTS,), t("/mcp/r3", "find_connections", {"from_entity": "Ana"})),
        Row("/mcp/r3 import_memories", (O.IMPORT,),
            t("/mcp/r3", "import_memories", {"source": "json", "data": [{"content": "An r3 imported note"}]})),
        # -- destructive last, each on its own memory, so the rows above act on a live memory and fact
        Row("DELETE /v1/memories/{memory_id}", (O.ARCHIVE,), r("DELETE", f"/v1/memories/{w['doomed2']}")),
        Row("DELETE /v1/memories/{memory_id}", (O.ERASE,), r("DELETE", f"/v1/memories/{w['doomed3']}?hard=true")),
        Row("/mcp delete_thought", (O.ARCHIVE,), t("/mcp", "delete_thought", {"thought_id": w["doomed4"]})),
        Row("/mcp/thrindex delete_memory", (O.ARCHIVE,), t("/mcp/thrindex", "delete_memory", {"id": w["doomed5"]})),
        Row("/mcp/r3 delete_memory", (O.ARCHIVE,), t("/mcp/r3", "delete_memory", {"memory_id": w["doomed6"]})),
        Row("DELETE /v1/users/{user_id}", (O.ERASE_USER,), r("DELETE", "/v1/users/nobody-else?hard=true")),
        Row("DELETE /v1/keys/{prefix}", (O.MANAGE_KEYS,), r("DELETE", f"/v1/keys/{w['spare']}")),
        Row("POST /v1/retract", (O.RETRACT_FACT,), r("POST", "/v1/retract", {"edge_uuid": e})),
        Row("/mcp/facts retract", (O.RETRACT_FACT,), t("/mcp/facts", "retract", {"edge_uuid": e, "reason": "again"})),
    ]


def snapshot(http: TestClient, world: dict[str, Any]) -> tuple[Any, ...]:
    """What a refused call must not change: every memory of the tenant (id, version, status), the fact,
    and the tenant's keys."""
    everyone = http.get("/v1/memories?user_id=*&author=all&status=open&status=completed&status=archived&limit=100",
                        headers=auth()).json()["results"]
    fact = http.get(f"/v1/facts/{world['edge']}", headers=auth()).json()
    keys = sorted(k["prefix"] for k in http.get("/v1/keys", headers=auth()).json())
    return tuple(sorted((m["id"], m["version"], m["status"]) for m in everyone)), fact.get("edge", fact).get("status"), keys


def test_every_operation_on_every_surface_follows_the_permission_table(http: TestClient, world: dict[str, Any]) -> None:
    wrong: list[str] = []  # every mismatch, so one run lists them all
    checked = 0
    for row in rows(http, world):
        for permission in SINGLE:
            before = snapshot(http, world)
            allowed, said = row.call(world["keys"][permission])
            if row.allowed_for(permission):
                if not allowed:
                    wrong.append(f"{row.covers} {[o.value for o in row.operations]}: {permission.value} refused: {said}")
                continue
            if allowed:
                wrong.append(f"{row.covers} {[o.value for o in row.operations]}: only {permission.value}, allowed")
            elif row.refusal not in said:
                wrong.append(f"{row.covers}: the refusal is not a {row.refusal} error: {said!r}")
            elif snapshot(http, world) != before:
                wrong.append(f"{row.covers}: a refused call changed something")
            checked += 1
        if not any(row.allowed_for(p) for p in SINGLE) and not row.call(TEST_KEY)[0]:  # the admin control
            wrong.append(f"{row.covers}: the admin key was refused")
    assert not wrong, "\n".join(wrong)
    assert checked >= 100


def test_the_matrix_covers_every_tool_and_route(http: TestClient, container, world: dict[str, Any]) -> None:
    """Every tool each profile registers and every /v1 route has at least one row above."""
    import importlib

    from mnemo.surfaces.rest import api as rest
    from mnemo.surfaces.rest import erasure as rest_erasure
    from mnemo.surfaces.rest import facts as rest_facts
    from mnemo.surfaces.rest import graph as rest_graph
    from mnemo.surfaces.rest import keys as rest_keys
    from mnemo.surfaces.rest import portability as rest_portability
    from mnemo.surfaces.rest import usage as rest_usage

    covered = {row.covers for row in rows(http, world)}
    routes = {f"{method} {route.path}" for module in (rest, rest_erasure, rest_facts, rest_graph, rest_keys, rest_portability,
                                                      rest_usage)
              for route in module.router.routes if isinstance(route, APIRoute) for method in route.methods}
    tools = {f"{path} {name}" for path, profile in PROFILES.items()
             for name in importlib.import_module(f"mnemo.surfaces.profiles.{profile}").build(container)._tool_manager._tools}
    assert len(routes) >= 24 and len(tools) >= 27  # control: both enumerations found the surfaces
    assert routes | tools <= covered, f"no scope-matrix row for: {sorted((routes | tools) - covered)}"
