"""Every write echoes where it landed (issue 27, "Small"): each REST write answer and each MCP write's
structured content carries `scope`, the effective namespace written, in the shape reads and searches
echo (tenant first, then each level set); the seeds' text layouts are unchanged."""

from __future__ import annotations

from typing import Any

import mnemo.services.jobs.service as jobs_module
from tests.integration.conftest import auth, mcp_call
from tests.integration.tenancy.test_bound_key_probes import new_key, text_of


def test_rest_writes_echo_the_namespace_they_wrote(http) -> None:
    created = http.post("/v1/memories", json={"content": "Tess waters the ferns on Sundays.", "group_id": "home",
                                              "agent_id": "planner"}, headers=auth())
    assert created.status_code == 201
    scope = {"tenant": "local", "user_id": "default", "agent_id": "planner", "group_id": "home"}
    assert created.json()["scope"] == scope
    memory_id = created.json()["id"]
    assert http.patch(f"/v1/memories/{memory_id}", json={"metadata": {"k": 1}}, headers=auth()).json()["scope"] == scope
    assert http.delete(f"/v1/memories/{memory_id}", headers=auth()).json()["scope"] == scope
    # the reads echo the same shape for the same namespace (the positive control of the shape)
    listed = http.get("/v1/memories", params={"agent_id": "planner", "group_id": "home", "status": "archived"}, headers=auth())
    assert listed.json()["scope"] == {**scope, "author": "all"}

    episode = http.post("/v1/episodes", json={"content": "Uma moved to Utrecht.", "group_id": "g1"}, headers=auth()).json()
    agent = http.get(f"/v1/memories/{episode['episode']['uuid']}", headers=auth()).json()["agent_id"]  # the key's prefix
    assert episode["scope"] == {"tenant": "local", "user_id": "default", "agent_id": agent, "group_id": "g1"}
    fact = http.post("/v1/facts", json={"subject": "Uma", "predicate": "likes", "object": "tulips", "group_id": "g1"},
                     headers=auth()).json()
    assert fact["scope"] == {"tenant": "local", "user_id": "default", "group_id": "g1"}
    gone = http.post("/v1/retract", json={"edge_uuid": fact["edge"]["uuid"]}, headers=auth()).json()
    assert gone["scope"] == fact["scope"]
    imported = http.post("/v1/import", json={"user_id": "vic", "data": [{"content": "Vic sails."}]}, headers=auth()).json()
    assert imported["scope"] == {"tenant": "local", "user_id": "vic"} and len(imported["imported"]) == 1


def test_a_bound_key_sees_its_own_user_in_the_scope_it_wrote(http) -> None:
    wren = new_key(http, "wren")
    mine = http.post("/v1/memories", json={"content": "Wren's bike is blue."}, headers=auth(wren)).json()
    assert mine["scope"]["user_id"] == "wren"  # not "default": the bound user the write went to
    other = http.post("/v1/memories", json={"content": "Default's bike is red."}, headers=auth()).json()
    assert other["scope"]["user_id"] == "default"  # control: an unbound key naming no user


def structured(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), result
    return result["structuredContent"]


def stored_at(http: Any, memory_id: str) -> dict[str, str]:
    """Where the store says the memory is (REST's read of it): what its write's `scope` must say."""
    memory = http.get(f"/v1/memories/{memory_id}", headers=auth()).json()
    levels = {"tenant": "local", "user_id": memory["user_id"], "agent_id": memory["agent_id"], "group_id": memory["group_id"]}
    return {k: v for k, v in levels.items() if v is not None}


def test_mcp_writes_echo_the_scope_and_keep_the_seeds_text(http) -> None:
    default = {"tenant": "local", "user_id": "default"}
    # Eigen (seed 000): capture, edit, delete
    captured = mcp_call(http, "capture_thought", {"raw": "Xena prefers window seats.", "as_user": True})
    thought_id = structured(captured)["thought"]["id"]
    where = stored_at(http, thought_id)
    assert structured(captured)["scope"] == where and where["user_id"] == "default"
    assert structured(mcp_call(http, "edit_thought", {"thought_id": thought_id, "raw_text": "Xena prefers aisle seats."}))["scope"] == where
    assert structured(mcp_call(http, "delete_thought", {"thought_id": thought_id}))["scope"] == where

    # Thrindex (seed 003): the text layout stays the seed's
    stored = mcp_call(http, "store_memory", {"content": "Yuri's locker is 12.", "user_id": "yuri"}, path="/mcp/thrindex")
    assert text_of(stored).startswith("Memory queued for processing.\nID: ")
    assert structured(stored)["scope"] == {"tenant": "local", "user_id": "yuri", "agent_id": "mcp-client", "group_id": "default"}
    deleted = mcp_call(http, "delete_memory", {"id": structured(stored)["id"]}, path="/mcp/thrindex")
    assert structured(deleted)["scope"] == structured(stored)["scope"]

    # r3 (seed 004): "Saved (id: ...)" unchanged
    saved = mcp_call(http, "add_memory", {"content": "Zoe runs on Tuesdays.", "user_id": "zoe"}, path="/mcp/r3")
    assert text_of(saved) == f"Saved (id: {structured(saved)['id']})"
    zoe = stored_at(http, structured(saved)["id"])
    assert structured(saved)["scope"] == zoe and zoe["user_id"] == "zoe"
    updated = mcp_call(http, "update_memory", {"memory_id": structured(saved)["id"], "metadata": {"k": 1}}, path="/mcp/r3")
    assert structured(updated)["scope"] == zoe and "scope" not in text_of(updated)  # the text is the memory's JSON
    assert structured(mcp_call(http, "delete_memory", {"memory_id": structured(saved)["id"]}, path="/mcp/r3"))["scope"] == zoe
    imported = mcp_call(http, "import_memories", {"source": "json", "data": [{"content": "Zoe swims."}], "user_id": "zoe"},
                        path="/mcp/r3")
    assert text_of(imported) == "Imported 1, skipped 0, failed 0"
    assert structured(imported)["scope"] == {"tenant": "local", "user_id": "zoe"}

    # facts (seed 001): the REST shapes, scope included
    episode = structured(mcp_call(http, "add_episode", {"content": "Abe lives in Aachen.", "group_id": "g2"}, path="/mcp/facts"))
    assert episode["scope"] == stored_at(http, episode["episode"]["uuid"]) and episode["scope"]["group_id"] == "g2"
    fact = structured(mcp_call(http, "record_fact", {"subject": "Abe", "predicate": "likes", "object": "tea"}, path="/mcp/facts"))
    assert fact["scope"] == {**default, "group_id": "default"}
    gone = structured(mcp_call(http, "retract", {"edge_uuid": fact["edge"]["uuid"]}, path="/mcp/facts"))
    assert gone["scope"] == fact["scope"]


def test_deduplications_and_job_receipts_echo_the_user_they_write(http, monkeypatch) -> None:
    """r3 deduplicate_memories(dry_run=false), and every job-start receipt (r3 import, r3 deduplication,
    REST 202 of POST /v1/import), carry `scope` beside their unchanged text; a bound key's own user."""
    for content in ("Cai keeps bees.", "Cai keeps bees."):
        mcp_call(http, "add_memory", {"content": content, "user_id": "cai", "skip_duplicate_check": True}, path="/mcp/r3")
    dry = mcp_call(http, "deduplicate_memories", {"user_id": "cai"}, path="/mcp/r3")
    assert "scope" not in structured(dry)  # control: a dry run writes nothing
    applied = mcp_call(http, "deduplicate_memories", {"user_id": "cai", "dry_run": False}, path="/mcp/r3")
    assert text_of(applied).startswith("Found 1 duplicate groups among 2 memories; archived 1, skipped 0.\nKeep ")
    assert structured(applied)["scope"] == {"tenant": "local", "user_id": "cai"} and structured(applied)["archived"]

    many = [{"content": f"Dee's note {i}."} for i in range(201)]
    dee = new_key(http, "dee")  # a bound key naming no user: its own user is the one written
    started = mcp_call(http, "import_memories", {"source": "json", "data": many}, key=dee, path="/mcp/r3")
    job_id = structured(started)["job_id"]
    assert text_of(started).startswith(f"Started the import as job {job_id} (import, queued). It runs in the background")
    assert structured(started)["scope"] == {"tenant": "local", "user_id": "dee"} and "scope" not in text_of(started)

    rest = http.post("/v1/import", json={"data": many}, headers=auth(dee))
    assert rest.status_code == 202 and rest.headers["location"] == f"/v1/jobs/{rest.json()['job_id']}"
    assert rest.json()["scope"] == {"tenant": "local", "user_id": "dee"} and rest.json()["user_id"] == "dee"
    unbound = http.post("/v1/import", json={"data": many, "user_id": "eve"}, headers=auth()).json()
    assert unbound["scope"] == {"tenant": "local", "user_id": "eve"}  # control: the user an unbound key named

    monkeypatch.setattr(jobs_module, "SYNC_DEDUP_LIMIT", 1)  # 2 live memories: a job
    for content in ("Fay rows.", "Fay rows!"):
        mcp_call(http, "add_memory", {"content": content, "user_id": "fay", "skip_duplicate_check": True}, path="/mcp/r3")
    job = mcp_call(http, "deduplicate_memories", {"user_id": "fay", "dry_run": False}, path="/mcp/r3")
    assert text_of(job).startswith(f"Started the deduplication as job {structured(job)['job_id']} (deduplicate, queued)")
    assert structured(job)["scope"] == {"tenant": "local", "user_id": "fay"}
