"""The official MCP Python SDK client against the real local server at /mcp/r3: add (with the id r3
never returns), search scoped by user_id, get, metadata-only update, list, delete."""

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


def test_an_r3_agent_round_trip(server: LocalServer) -> None:
    fact = "Priya prefers aisle seats on long flights."

    async def calls(client):
        names = [t.name for t in (await client.list_tools()).tools]
        added = await client.call_tool("add_memory", {"content": fact, "user_id": "e2e-priya", "priority": "high"})
        memory_id = re.fullmatch(r"Saved \(id: (.+)\)", text(added)).group(1)  # type: ignore[union-attr]
        again = await client.call_tool("add_memory", {"content": fact, "user_id": "e2e-priya"})
        mine = await client.call_tool("search_memory", {"query": "aisle seats", "user_id": "e2e-priya"})
        theirs = await client.call_tool("search_memory", {"query": "aisle seats", "user_id": "e2e-someone-else"})
        updated = await client.call_tool("update_memory", {"memory_id": memory_id, "metadata": {"topic": "travel"}})
        listed = await client.call_tool("get_all_memories", {"user_id": "e2e-priya"})
        deleted = await client.call_tool("delete_memory", {"memory_id": memory_id})
        missing = await client.call_tool("search_memory", {"query": "aisle seats", "user_id": "e2e-priya"})
        return names, memory_id, again, mine, theirs, updated, listed, deleted, missing

    names, memory_id, again, mine, theirs, updated, listed, deleted, missing = run(server, calls, path="/mcp/r3")
    assert len(names) == 14 and {"add_memory", "import_memories", "find_connections"} <= set(names)
    assert text(again) == f"Already saved (id: {memory_id})"
    assert text(mine).startswith(f"[id: {memory_id} | score: ") and text(mine).endswith(fact)
    assert text(theirs) == "No memories found"
    assert updated.structured_content["content"] == fact and updated.structured_content["metadata"] == {"topic": "travel"}
    assert [m["id"] for m in listed.structured_content["memories"]] == [memory_id]
    assert text(deleted) == "Deleted" and text(missing) == "No memories found"
