"""The scope matrix (issue 15): every operation on every surface, called with keys holding exactly one
permission. A call succeeds exactly when the permission table (services/permissions.py, printed in
docs/permissions.md) says that permission is enough; every refusal is the surface's own
missing-scope error and changes nothing (the tenant's memories and the fact are the same afterwards).
The admin key running the same calls is the positive control for every row.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from mnemo.domain.models import Permission
from mnemo.services.permissions import REQUIRED, Operation
from tests.conftest import TEST_KEY
from tests.integration.conftest import MCP_HEADERS, auth

_ids = itertools.count(1)
SINGLE = [Permission.READ, Permission.WRITE, Permission.DELETE]


def tool(http: TestClient, path: str, name: str, arguments: dict[str, Any], key: str) -> tuple[bool, str]:
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = http.post(path, json=body, headers={**MCP_HEADERS, **auth(key), "mcp-protocol-version": "2025-06-18"})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    return not result.get("isError"), " ".join(c.get("text", "") for c in result["content"])


def rest(http: TestClient, method: str, url: str, key: str, body: Any = None) -> tuple[bool, str]:
    response = http.request(method, url, headers=auth(key), json=body)
    if response.status_code == 403:
        return False, response.json()["error"]["code"]
    assert response.status_code < 300, (method, url, response.status_code, response.text)
    return True, ""


@pytest.fixture
def world(http: TestClient, container) -> dict[str, Any]:  # noqa: ANN001
    """A memory and a recorded fact to act on, one key per single permission."""
    memory = http.post("/v1/memories", headers=auth(), json={"content": "Standups are on Tuesdays", "as_user": True}).json()
    edge = http.post("/v1/facts", headers=auth(), json={"subject": "Ana", "predicate": "likes", "object": "tea"}).json()
    keys = {p: container.keys.create("local", f"only-{p.value}", [p.value]).secret for p in SINGLE}
    big = [{"content": f"Imported note {i}"} for i in range(201)]  # above the synchronous limit: a queued job
    job = http.post("/v1/import", headers=auth(), json={"data": big})
    assert job.status_code == 202, job.text
    return {"memory": memory["id"], "edge": edge["edge"]["uuid"], "keys": keys, "job": job.json()["job_id"]}


def calls(http: TestClient, world: dict[str, Any]) -> list[tuple[str, Operation, Callable[[str], tuple[bool, str]]]]:
    m, e = world["memory"], world["edge"]
    return [
        ("REST capture", Operation.CAPTURE, lambda k: rest(http, "POST", "/v1/memories", k, {"content": "x"})),
        ("REST read", Operation.READ, lambda k: rest(http, "GET", f"/v1/memories/{m}", k)),
        ("REST browse", Operation.BROWSE, lambda k: rest(http, "GET", "/v1/memories", k)),
        ("REST search", Operation.SEARCH, lambda k: rest(http, "POST", "/v1/memories/search", k, {"query": "standups"})),
        ("REST status", Operation.STATUS, lambda k: rest(http, "GET", "/v1/status", k)),
        ("REST edit", Operation.EDIT, lambda k: rest(http, "PATCH", f"/v1/memories/{m}", k, {"content": "Standups moved"})),
        ("REST all users", Operation.READ_ALL_USERS, lambda k: rest(http, "GET", "/v1/memories?user_id=*", k)),
        ("REST record fact", Operation.RECORD_FACT,
         lambda k: rest(http, "POST", "/v1/facts", k, {"subject": "Bo", "predicate": "likes", "object": "jazz"})),
        ("REST fact search", Operation.READ_FACTS, lambda k: rest(http, "POST", "/v1/search", k, {"query": "tea"})),
        ("REST read a job", Operation.READ_WORK_JOB, lambda k: rest(http, "GET", f"/v1/jobs/{world['job']}", k)),
        ("REST export", Operation.EXPORT, lambda k: rest(http, "GET", "/v1/export?user_id=default", k)),
        ("REST keys", Operation.MANAGE_KEYS, lambda k: rest(http, "GET", "/v1/keys", k)),
        ("/mcp capture_thought", Operation.CAPTURE, lambda k: tool(http, "/mcp", "capture_thought", {"raw": "y"}, k)),
        ("/mcp retrieve (search)", Operation.SEARCH,
         lambda k: tool(http, "/mcp", "retrieve_thoughts", {"query": "standups"}, k)),
        ("/mcp retrieve (browse)", Operation.BROWSE, lambda k: tool(http, "/mcp", "retrieve_thoughts", {}, k)),
        ("/mcp edit_thought", Operation.EDIT,
         lambda k: tool(http, "/mcp", "edit_thought", {"thought_id": m, "raw_text": "Standups on Fridays"}, k)),
        ("/mcp/thrindex store_memory", Operation.CAPTURE,
         lambda k: tool(http, "/mcp/thrindex", "store_memory", {"content": "z"}, k)),
        ("/mcp/thrindex search_memories", Operation.SEARCH,
         lambda k: tool(http, "/mcp/thrindex", "search_memories", {"query": "standups"}, k)),
        ("/mcp/thrindex list_memories", Operation.BROWSE, lambda k: tool(http, "/mcp/thrindex", "list_memories", {}, k)),
        ("/mcp/thrindex get_memory", Operation.READ, lambda k: tool(http, "/mcp/thrindex", "get_memory", {"id": m}, k)),
        ("/mcp/facts record_fact", Operation.RECORD_FACT,
         lambda k: tool(http, "/mcp/facts", "record_fact", {"subject": "Cy", "predicate": "likes", "object": "go"}, k)),
        ("/mcp/facts search", Operation.READ_FACTS, lambda k: tool(http, "/mcp/facts", "search", {"query": "tea"}, k)),
        ("/mcp/r3 search_memory", Operation.SEARCH, lambda k: tool(http, "/mcp/r3", "search_memory", {"query": "standups"}, k)),
        ("/mcp/r3 get_memory", Operation.READ, lambda k: tool(http, "/mcp/r3", "get_memory", {"memory_id": m}, k)),
        ("/mcp/r3 get_all_memories", Operation.BROWSE, lambda k: tool(http, "/mcp/r3", "get_all_memories", {}, k)),
        # destructive last, so the rows above act on a live memory and fact
        ("/mcp/facts retract", Operation.RETRACT_FACT, lambda k: tool(http, "/mcp/facts", "retract", {"edge_uuid": e}, k)),
        ("/mcp/thrindex delete_memory", Operation.ARCHIVE,
         lambda k: tool(http, "/mcp/thrindex", "delete_memory", {"id": m}, k)),
    ]


def snapshot(http: TestClient, world: dict[str, Any]) -> tuple[Any, ...]:
    """What a refused call must not change: every memory of the tenant (id, version, status) and the fact."""
    everyone = http.get("/v1/memories?user_id=*&author=all&status=open&status=completed&status=archived&limit=100",
                        headers=auth()).json()["results"]
    fact = http.get(f"/v1/facts/{world['edge']}", headers=auth()).json()
    return tuple(sorted((m["id"], m["version"], m["status"]) for m in everyone)), fact.get("edge", fact).get("status")


def test_every_operation_on_every_surface_follows_the_permission_table(http: TestClient, world: dict[str, Any]) -> None:
    checked = 0
    for name, operation, call in calls(http, world):
        needed = REQUIRED[operation]
        for permission in SINGLE:
            before = snapshot(http, world)
            allowed, said = call(world["keys"][permission])
            if permission == needed:
                assert allowed, f"{name}: a key with {permission.value} was refused: {said}"
                continue
            assert not allowed, f"{name}: a key with only {permission.value} was allowed (needs {needed.value})"
            assert "scope" in said, f"{name}: the refusal is not a missing-scope error: {said!r}"
            assert snapshot(http, world) == before, f"{name}: a refused call changed something"
            checked += 1
        if needed == Permission.ADMIN:  # positive control for the admin-only rows
            assert call(TEST_KEY)[0], f"{name}: the admin key was refused"
    assert checked >= 40
