"""The official MCP Python SDK client against the real local server at /mcp/thrindex: the seed's
system-prompt flow (search at conversation start, store, list, get, delete), with no waiting."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.conftest import LocalServer
from tests.e2e.test_mcp_python_client import run

pytestmark = pytest.mark.e2e


def text(result: Any) -> str:
    assert not result.is_error, result.content
    return result.content[0].text


def test_the_seeds_system_prompt_flow(server: LocalServer) -> None:
    fact = "User prefers weekly email digests over push notifications."
    who = {"agent_id": "e2e-agent", "user_id": "e2e-alice"}

    async def calls(client):
        names = [t.name for t in (await client.list_tools()).tools]
        opening = await client.call_tool("search_memories", {"query": "what do I know about this user", **who})
        stored = await client.call_tool("store_memory", {"content": fact, **who})
        memory_id = stored.structured_content["id"]
        # read-your-writes: the very next call finds it, before the worker has enriched it
        recalled = await client.call_tool("search_memories", {"query": "how does the user want email digests", **who, "k": 5})
        listed = await client.call_tool("list_memories", {**who, "limit": 10})
        got = await client.call_tool("get_memory", {"id": memory_id})
        forgotten = await client.call_tool("delete_memory", {"id": memory_id})
        after = await client.call_tool("search_memories", {"query": "email digests", **who})
        return names, opening, memory_id, stored, recalled, listed, got, forgotten, after

    names, opening, memory_id, stored, recalled, listed, got, forgotten, after = run(server, calls, path="/mcp/thrindex")
    assert names == ["store_memory", "search_memories", "list_memories", "get_memory", "delete_memory"]
    assert re.fullmatch(r"Found 0 memories \(latency: \d+ms, cache_hit: false\):", text(opening))
    assert text(stored).splitlines()[:3] == ["Memory queued for processing.", f"ID: {memory_id}", "Status: queued"]
    lines = text(recalled).splitlines()
    assert lines[0].startswith("Found 1 memories") and lines[2:5] == [
        f"ID: {memory_id}", f"Content: {fact}", "Agent: e2e-agent | User: e2e-alice"]
    assert text(listed).splitlines()[:2] == ["Listing 1 memories:", f"1. ID: {memory_id}"]
    assert text(got).splitlines()[1:3] == ["Content:", fact]
    assert text(forgotten) == f"Memory {memory_id} has been deleted (soft delete — status set to deprecated)."
    assert text(after).startswith("Found 0 memories")
    assert after.structured_content["count"] == 0 and recalled.structured_content["memories"][0]["id"] == memory_id


def test_errors_come_back_as_tool_errors_in_the_seeds_words(server: LocalServer) -> None:
    async def calls(client):
        return [await client.call_tool("store_memory", {}), await client.call_tool("get_memory", {"id": "nope"}),
                await client.call_tool("store_memory", {"content": "x", "confidence": 2})]

    results = run(server, calls, path="/mcp/thrindex")
    assert all(r.is_error for r in results)
    assert [r.content[0].text for r in results] == [
        "content is required", "Memory not found: nope", "confidence must be between 0.0 and 1.0"]
