"""One memory, four surfaces: what /mcp/r3 adds is the same memory /mcp (thoughts), /mcp/thrindex
and /v1 read, and an edit or a deletion made on any one of them is what the others read next.
Official MCP clients over the ASGI app, moto and the real worker underneath."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client
from tests.integration.conftest import auth
from tests.integration.surfaces.test_profile_r3 import call as r3
from tests.integration.surfaces.test_profile_r3 import saved_id
from tests.integration.surfaces.test_profile_thrindex import enrich, run, text


def at(path: str, app: Any, tool: str, arguments: dict[str, Any]) -> Any:
    async def calls(client: Client) -> Any:
        return await client.call_tool(tool, arguments)

    result = run(app, calls, path=path)
    text(result)  # not an error
    return result


def data(result: Any) -> str:
    return json.dumps(result.structured_content)


def test_a_memory_added_on_r3_is_one_memory_everywhere_and_edits_travel(http, aws) -> None:
    app = http.app
    # Given: a memory added through /mcp/r3 (r3's default user), and one added through /v1 as a control
    added = saved_id(r3(app, "add_memory", {"content": "Dana keeps bees on her Quorvale roof.", "metadata": {"hive": 2}}))
    control = http.post("/v1/memories", json={"content": "Dana's Quorvale roof also has a rain barrel.", "as_user": True},
                        headers=auth()).json()["id"]
    enrich(aws)

    # Then: every surface finds the same id with the same text
    assert http.get(f"/v1/memories/{added}", headers=auth()).json()["content"] == "Dana keeps bees on her Quorvale roof."
    assert added in data(at("/mcp", app, "retrieve_thoughts", {"query": "bees on the roof"}))
    assert added in data(at("/mcp/thrindex", app, "search_memories", {"query": "bees on the roof", "user_id": "default"}))
    assert "Dana keeps bees" in data(at("/mcp/thrindex", app, "get_memory", {"id": added}))
    assert control in data(r3(app, "search_memory", {"query": "rain barrel on the roof"}))  # /v1's memory, seen on r3

    # When: /mcp edits the text; Then: r3, Thrindex and /v1 read the new text at version 2
    at("/mcp", app, "edit_thought", {"thought_id": added, "raw_text": "Dana keeps bees and hens on her Quorvale roof."})
    got = r3(app, "get_memory", {"memory_id": added}).structured_content
    assert (got["content"], got["version"], got["metadata"]) == ("Dana keeps bees and hens on her Quorvale roof.", 2, {"hive": 2})
    assert "bees and hens" in data(at("/mcp/thrindex", app, "get_memory", {"id": added}))
    assert http.get(f"/v1/memories/{added}", headers=auth()).json()["content"].endswith("bees and hens on her Quorvale roof.")

    # When: /v1 replaces the metadata; Then: r3 reads it and keeps the text
    assert http.patch(f"/v1/memories/{added}", json={"metadata": {"hive": 3}}, headers=auth()).status_code == 200
    got = r3(app, "get_memory", {"memory_id": added}).structured_content
    assert (got["metadata"], got["version"], got["content"]) == ({"hive": 3}, 3, "Dana keeps bees and hens on her Quorvale roof.")

    # When: r3 updates the text (re-embedded); Then: the new words find it on /mcp and /v1 once enriched
    r3(app, "update_memory", {"memory_id": added, "content": "Dana moved her beehives to the Quorvale orchard."})
    enrich(aws)
    assert added in data(at("/mcp", app, "retrieve_thoughts", {"query": "beehives in the orchard"}))
    found = http.post("/v1/memories/search", json={"query": "beehives in the orchard"}, headers=auth()).json()
    assert found["results"][0]["id"] == added

    # When: Thrindex deletes it (soft); Then: archived on /v1, gone from r3 and /mcp searches; the control stays
    at("/mcp/thrindex", app, "delete_memory", {"id": added})
    assert http.get(f"/v1/memories/{added}", headers=auth()).json()["status"] == "archived"
    assert added not in data(r3(app, "search_memory", {"query": "beehives orchard Quorvale"}))
    assert added not in data(at("/mcp", app, "retrieve_thoughts", {"query": "beehives orchard Quorvale"}))
    assert control in data(r3(app, "search_memory", {"query": "rain barrel on the roof"}))
    listed = r3(app, "get_all_memories", {}).structured_content["memories"]
    assert [m["id"] for m in listed] == [control]
