"""The official MCP Python SDK client against the real local server: every tool, happy path and errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp import Client
from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e


def run(server: LocalServer, calls, *, key: str | None = None, path: str = "/mcp"):
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {key or server.key}"}
        transport = streamable_http_client(server.base + path, http_client=create_mcp_http_client(headers=headers))
        async with Client(transport) as client:
            return await calls(client)

    return asyncio.run(main())


def structured(result) -> dict[str, Any]:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error
    return " ".join(c.text for c in result.content)


def test_tools_list_matches_the_seed(server: LocalServer) -> None:
    async def calls(client):
        return await client.list_tools()

    tools = {t.name: t for t in run(server, calls).tools}
    assert set(tools) == {"capture_thought", "retrieve_thoughts", "edit_thought", "delete_thought"}
    assert set(tools["capture_thought"].input_schema["properties"]) == {"raw", "captured_at", "as_user", "author"}
    assert tools["capture_thought"].input_schema["required"] == ["raw"]
    assert set(tools["retrieve_thoughts"].input_schema["properties"]) == {
        "query", "order", "top_k", "threshold", "mode", "detail", "author", "include_agent", "cursor_created_at", "cursor_id",
    }
    top_k = tools["retrieve_thoughts"].input_schema["properties"]["top_k"]
    assert (top_k["default"], top_k["minimum"], top_k["maximum"]) == (10, 1, 100)
    assert set(tools["edit_thought"].input_schema["properties"]) == {"thought_id", "edit_request", "raw_text"}
    assert set(tools["delete_thought"].input_schema["properties"]) == {"thought_id"}
    assert all(t.description and len(t.description) > 60 for t in tools.values())


def test_capture_browse_search_edit_delete_reopen(server: LocalServer) -> None:
    async def calls(client):
        user = structured(await client.call_tool("capture_thought", {"raw": "Remember: team standups are Tuesdays at 10am.", "as_user": True}))
        agent = structured(await client.call_tool("capture_thought", {"raw": "Agent note: the user likes short answers."}))
        browse = structured(await client.call_tool("retrieve_thoughts", {}))
        browse_all = structured(await client.call_tool("retrieve_thoughts", {"include_agent": True}))
        found = None
        for _ in range(100):  # enrichment indexes in the background; wait for it (seconds)
            found = structured(await client.call_tool("retrieve_thoughts", {"query": "when are standups?"}))
            if found["results"]:
                break
            await asyncio.sleep(0.1)
        edited = structured(await client.call_tool("edit_thought", {"thought_id": user["thought"]["id"], "edit_request": "replace Tuesdays with Wednesdays"}))
        completed = structured(await client.call_tool("edit_thought", {"thought_id": user["thought"]["id"], "edit_request": "mark complete"}))
        after_complete = structured(await client.call_tool("retrieve_thoughts", {}))
        deleted = structured(await client.call_tool("delete_thought", {"thought_id": agent["thought"]["id"]}))
        reopened = structured(await client.call_tool("edit_thought", {"thought_id": agent["thought"]["id"], "edit_request": "reopen"}))
        return user, agent, browse, browse_all, found, edited, completed, after_complete, deleted, reopened

    user, agent, browse, browse_all, found, edited, completed, after_complete, deleted, reopened = run(server, calls)
    thought = user["thought"]
    assert thought["normalizedText"] == "Remember: team standups are Tuesdays at 10am."
    assert thought["author"] == "user" and thought["status"] == "open" and thought["enrichment"]["state"] == "pending"
    assert "embedding" not in json.dumps(user) and "vector" not in json.dumps(user)
    assert "Stored the user's memory" in user["summary"]
    assert agent["thought"]["author"] == "agent"
    assert thought["id"] in [t["id"] for t in browse["results"]]
    assert agent["thought"]["id"] not in [t["id"] for t in browse["results"]]
    assert agent["thought"]["id"] in [t["id"] for t in browse_all["results"]]
    assert found["results"][0]["id"] == thought["id"] and 0 < found["results"][0]["score"] <= 1
    assert edited["ok"] and edited["thought"]["normalizedText"] == "Remember: team standups are Wednesdays at 10am."
    assert edited["thought"]["version"] == 2
    assert completed["thought"]["status"] == "completed"
    assert thought["id"] not in [t["id"] for t in after_complete["results"]]
    assert deleted["ok"] and deleted["status"] == "archived"
    assert reopened["thought"]["status"] == "open"


def test_browse_pagination_through_the_cursor(server: LocalServer) -> None:
    async def calls(client):
        for i in range(3):
            await client.call_tool("capture_thought", {"raw": f"page thought {i}", "author": "mn_pager", "as_user": False})
        first = structured(await client.call_tool("retrieve_thoughts", {"author": "agent", "top_k": 2}))
        second = structured(await client.call_tool("retrieve_thoughts", {"author": "agent", "top_k": 2, **first["next_cursor"]}))
        return first, second

    first, second = run(server, calls)
    assert len(first["results"]) == 2 and first["next_cursor"]
    seen = [t["id"] for t in first["results"]]
    assert not set(seen) & {t["id"] for t in second["results"]}


def test_validation_errors_name_the_field_and_limit(server: LocalServer) -> None:
    async def calls(client):
        return (
            await client.call_tool("capture_thought", {"raw": "   "}),
            await client.call_tool("capture_thought", {"raw": "x" * 9000}),
            await client.call_tool("retrieve_thoughts", {"top_k": 101}),
            await client.call_tool("retrieve_thoughts", {"order": "relevance"}),
            await client.call_tool("edit_thought", {"thought_id": "00000000-0000-0000-0000-000000000000", "raw_text": "x"}),
            await client.call_tool("edit_thought", {"thought_id": "00000000-0000-0000-0000-000000000000"}),
            await client.call_tool("delete_thought", {"thought_id": "nope"}),
            await client.call_tool("capture_thought", {"raw": "x", "user_id": "evil", "metadata": {"a": 1}}),
        )

    empty, big, top_k, relevance, missing, nothing, delete_missing, unknown = run(server, calls)
    assert error_text(empty) == "raw: must not be empty (after trimming whitespace)"
    assert error_text(big) == "raw: must be at most 8192 bytes (8 KB); it is 9000 bytes"
    assert error_text(top_k) == "top_k: must be at most 100"
    assert error_text(relevance) == "order=relevance requires a non-empty query; omit order (or use created_at) to browse"
    assert error_text(missing) == "thought 00000000-0000-0000-0000-000000000000 not found"
    assert error_text(nothing) == "give edit_request (plain-language change) or raw_text (direct replacement)"
    assert error_text(delete_missing) == "thought nope not found"
    assert error_text(unknown) == "unknown arguments metadata, user_id; capture_thought accepts raw, captured_at, as_user, author"


def test_no_key_or_bad_key_is_a_clean_401_with_resource_metadata(server: LocalServer) -> None:
    for headers in ({}, {"Authorization": "Bearer mn_wrong_key_000000000000000000"}):
        response = httpx.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={
            "accept": "application/json, text/event-stream", **headers})
        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"' in challenge
    metadata = httpx.get(f"{server.base}/.well-known/oauth-protected-resource").json()
    assert metadata["resource"] == f"{server.base}/mcp" and metadata["bearer_methods_supported"] == ["header"]


def test_get_and_delete_on_mcp_are_405(server: LocalServer) -> None:
    for method in ("GET", "DELETE"):
        response = httpx.request(method, server.mcp_url, headers=server.headers())
        assert response.status_code == 405 and response.headers["allow"] == "POST"


def test_seed_path_api_mcp_serves_the_same_tools(server: LocalServer) -> None:
    async def calls(client):
        return await client.list_tools()

    assert {t.name for t in run(server, calls, path="/api/mcp").tools} == {
        "capture_thought", "retrieve_thoughts", "edit_thought", "delete_thought"}
