"""Two tenants, every tool and every route: zero cross-tenant reads or writes.

Every negative check has a positive control in the same test: the owner, with the same request,
does find what the other tenant must not (an unenriched victim would make a search "isolated"
whatever isolation does, so the victim is enriched first).
"""

from __future__ import annotations

import pytest

from mnemo.adapters.aws import client
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function
from tests.integration.conftest import OTHER_KEY, auth, mcp_call


@pytest.fixture
def victim(http, aws) -> dict:
    """A memory of tenant `local`, enriched (through the real worker) so that search does find it."""
    created = http.post("/v1/memories", headers=auth(), json={"content": "The vault code is 4711", "as_user": True})
    poller = QueuePoller(client("sqs"), aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)
    while poller.poll_once():
        pass
    assert http.get(f"/v1/memories/{created.json()['id']}", headers=auth()).json()["enrichment"]["state"] == "enriched"
    return created.json()


def test_rest_routes_never_cross_tenants(http, victim) -> None:
    other = auth(OTHER_KEY)
    memory_id = victim["id"]
    assert http.get(f"/v1/memories/{memory_id}", headers=other).status_code == 404
    assert http.get(f"/v1/memories/{memory_id}/history", headers=other).status_code == 404
    assert http.patch(f"/v1/memories/{memory_id}", headers=other, json={"content": "pwned"}).status_code == 404
    assert http.delete(f"/v1/memories/{memory_id}", headers=other).status_code == 404
    assert http.get("/v1/memories", headers=other, params={"author": "all"}).json()["results"] == []
    search = {"query": "vault code"}
    assert [m["id"] for m in http.post("/v1/memories/search", headers=auth(), json=search).json()["results"]] == [memory_id]
    assert http.post("/v1/memories/search", headers=other, json=search).json()["results"] == []
    assert [m["id"] for m in http.get("/v1/memories", headers=auth(), params={"author": "all"}).json()["results"]] == [memory_id]
    assert http.get("/v1/status", headers=other).json() == {"tenant": "other", "pending": 0, "failed": 0, "dlq": 0}
    mine = http.get(f"/v1/memories/{memory_id}", headers=auth()).json()
    assert mine["content"] == "The vault code is 4711" and mine["version"] == 1 and mine["status"] == "open"


def test_mcp_tools_never_cross_tenants(http, victim) -> None:
    memory_id = victim["id"]
    browse = mcp_call(http, "retrieve_thoughts", {"include_agent": True}, key=OTHER_KEY)
    assert browse["structuredContent"]["results"] == []
    query = {"query": "vault code", "include_agent": True}
    owner = mcp_call(http, "retrieve_thoughts", query)["structuredContent"]["results"]
    assert [t["id"] for t in owner] == [memory_id]  # positive control: the same search finds it for its owner
    search = mcp_call(http, "retrieve_thoughts", query, key=OTHER_KEY)
    assert search["structuredContent"]["results"] == []
    edit = mcp_call(http, "edit_thought", {"thought_id": memory_id, "raw_text": "pwned"}, key=OTHER_KEY)
    assert edit["isError"] and "not found" in edit["content"][0]["text"]
    delete = mcp_call(http, "delete_thought", {"thought_id": memory_id}, key=OTHER_KEY)
    assert delete["isError"] and "not found" in delete["content"][0]["text"]
    captured = mcp_call(http, "capture_thought", {"raw": "other tenant's thought", "as_user": True}, key=OTHER_KEY)
    assert not captured["isError"]
    mine = mcp_call(http, "retrieve_thoughts", {"include_agent": True})["structuredContent"]["results"]
    assert [t["id"] for t in mine] == [memory_id] and mine[0]["normalizedText"] == "The vault code is 4711"


def test_tenant_comes_from_the_key_not_from_arguments(http) -> None:
    response = http.post("/v1/memories", headers=auth(OTHER_KEY), json={"content": "x", "tenant": "local"})
    assert response.status_code == 400  # unknown field: there is no way to name a tenant
    refused = mcp_call(http, "capture_thought", {"raw": "x", "tenant": "local"}, key=OTHER_KEY)
    assert refused["isError"] and refused["content"][0]["text"].startswith("unknown argument tenant;")
    result = mcp_call(http, "capture_thought", {"raw": "x"}, key=OTHER_KEY)
    stored = http.get(f"/v1/memories/{result['structuredContent']['thought']['id']}", headers=auth(OTHER_KEY))
    assert stored.status_code == 200
    assert http.get(f"/v1/memories/{result['structuredContent']['thought']['id']}", headers=auth()).status_code == 404
