"""Issue 27 "Words belong to their surface": services raise structured errors (NotFoundError's subject
and id, the service field names a message uses); each surface words them. One test per surface pins
the words of its not-found, validation, permission and quota errors; REST never answers in the
thought tools' vocabulary (`thought`, `raw_text`)."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.domain.tenancy import Counter
from tests.integration.conftest import auth, mcp_call

FACT = {"subject": "Ana", "predicate": "likes", "object": "tea"}
NO_EDGE = "00000000-0000-4000-8000-000000000000"


def text(result: dict[str, Any]) -> str:
    assert result.get("isError"), result
    return " ".join(c.get("text", "") for c in result["content"])


@pytest.fixture
def reader(container) -> str:
    return container.keys.create("local", "reader", ["memory:read"]).secret


def at_the_write_cap(container) -> None:
    container.meter.configure("local", {Counter.WRITES: container.meter.usage("local").used[Counter.WRITES]}, None)


def error(response: Any) -> tuple[int, str, str]:
    body = response.json()["error"]
    return response.status_code, body["code"], body["message"]


def test_rest_words(http, container, reader) -> None:
    memory = http.post("/v1/memories", headers=auth(), json={"content": "Standup at nine"}).json()["id"]
    assert error(http.get("/v1/memories/nope", headers=auth())) == (404, "not_found", "memory nope not found")
    assert error(http.patch("/v1/memories/nope", headers=auth(), json={"content": "x"})) == (404, "not_found", "memory nope not found")
    assert error(http.delete("/v1/memories/nope", headers=auth())) == (404, "not_found", "memory nope not found")
    # a service's refusal names REST's field (content), never the thought tools' raw_text or "thought"
    vague = error(http.patch(f"/v1/memories/{memory}", headers=auth(), json={"edit_request": "make it nicer please"}))
    assert vague[:2] == (400, "unsupported_edit") and "pass content to replace the whole text" in vague[2], vague
    absent = error(http.patch(f"/v1/memories/{memory}", headers=auth(), json={"edit_request": "replace 'noon' with 'ten'"}))
    assert absent == (400, "unsupported_edit", "edit_request: the text 'noon' does not occur in the memory's text; nothing was changed")
    assert "raw_text" not in vague[2] + absent[2] and "thought" not in vague[2] + absent[2]
    # a validation error names REST's field: the service checks raw_text, REST words it content
    too_long = error(http.patch(f"/v1/memories/{memory}", headers=auth(), json={"content": "z" * 9000}))
    assert too_long == (400, "validation_error", "content: must be at most 8192 bytes (8 KB); it is 9000 bytes")
    nothing = error(http.patch(f"/v1/memories/{memory}", headers=auth(), json={"edit_request": "  "}))
    assert nothing == (400, "validation_error",
                       "body: give content (replaces the whole text), edit_request (a change in plain language), metadata or status")
    assert error(http.post("/v1/memories", headers=auth(reader), json={"content": "x"})) == (
        403, "missing_scope", "to capture a memory, this API key needs the 'memory:write' scope (it has: memory:read)")
    at_the_write_cap(container)
    assert error(http.post("/v1/memories", headers=auth(), json={"content": "x"})) == (429, "quota_exceeded", "monthly write limit reached")


def test_thought_tools_words(http, container, reader) -> None:
    memory = http.post("/v1/memories", headers=auth(), json={"content": "Standup at nine"}).json()["id"]
    assert text(mcp_call(http, "edit_thought", {"thought_id": "nope", "raw_text": "x"})) == "thought nope not found"
    vague = text(mcp_call(http, "edit_thought", {"thought_id": memory, "edit_request": "make it nicer please"}))
    assert "pass raw_text to replace the whole text" in vague, vague  # /mcp's own field name: the control for REST's
    too_long = text(mcp_call(http, "edit_thought", {"thought_id": memory, "raw_text": "z" * 9000}))
    assert too_long == "raw_text: must be at most 8192 bytes (8 KB); it is 9000 bytes"  # the tool's argument, not REST's
    assert "raw_text" in text(mcp_call(http, "edit_thought", {"thought_id": memory, "edit_request": "  "}))  # REST's control
    assert text(mcp_call(http, "capture_thought", {"raw": "x"}, reader)) == (
        "to capture a memory, this API key needs the 'memory:write' scope (it has: memory:read)")
    at_the_write_cap(container)
    assert text(mcp_call(http, "capture_thought", {"raw": "x"})) == "quota_exceeded: monthly write limit reached"


def test_thrindex_words(http, container, reader) -> None:
    path = "/mcp/thrindex"
    assert text(mcp_call(http, "get_memory", {"id": "nope"}, path=path)) == "Memory not found: nope"
    assert text(mcp_call(http, "search_memories", {"query": ""}, path=path)) == "query: must not be empty"
    assert text(mcp_call(http, "store_memory", {"content": "x"}, reader, path)) == "API key is missing the memory:write scope."
    at_the_write_cap(container)
    assert text(mcp_call(http, "store_memory", {"content": "x"}, path=path)) == "Monthly write limit reached."


def test_r3_words(http, container, reader) -> None:
    path = "/mcp/r3"
    memory = http.post("/v1/memories", headers=auth(), json={"content": "x"}).json()["id"]
    assert text(mcp_call(http, "get_memory", {"memory_id": "nope"}, path=path)) == "Memory not found: nope"
    assert text(mcp_call(http, "update_memory", {"memory_id": memory, "content": "z" * 9000}, path=path)) == (
        "content: must be at most 8192 bytes (8 KB); it is 9000 bytes")
    assert text(mcp_call(http, "add_memory", {"content": "x"}, reader, path)) == (
        "to capture a memory, this API key needs the 'memory:write' scope (it has: memory:read)")
    at_the_write_cap(container)
    assert text(mcp_call(http, "add_memory", {"content": "y", "skip_duplicate_check": True}, path=path)) == (
        "quota_exceeded: monthly write limit reached")


def test_facts_words(http, container, reader) -> None:
    path = "/mcp/facts"
    assert f"edge {NO_EDGE} not found" in text(mcp_call(http, "retract", {"edge_uuid": NO_EDGE}, path=path))
    assert "query: must not be empty" in text(mcp_call(http, "search", {"query": ""}, path=path))
    assert "to record a fact, this API key needs the 'memory:write' scope" in text(mcp_call(http, "record_fact", FACT, reader, path))
    at_the_write_cap(container)
    assert "monthly write limit reached" in text(mcp_call(http, "record_fact", FACT, path=path))
