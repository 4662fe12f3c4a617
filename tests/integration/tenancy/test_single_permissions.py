"""Issue 27 "Permissions: one table, on every surface": each operation (r3's above all) needs exactly
the one permission the table (services/tenancy/permissions.py) gives it, with a single-permission key; the
same call with a key lacking it is refused naming the scope and changes nothing; what a key may not
read never shows in an answer (r3, REST PATCH/DELETE, /mcp edit_thought, deduplication reports)."""

from __future__ import annotations

from typing import Any

from mnemo.domain.tenancy import Counter
from tests.integration.conftest import auth, mcp_call

R3 = "/mcp/r3"



def without_scope(answer: dict) -> dict:
    """A write answer less the namespace it echoes (every write echoes its scope: ids, never text),
    after checking that it is the memory's."""
    rest = dict(answer)
    scope = rest.pop("scope")
    assert scope["tenant"] == "local" and scope["user_id"] == "default", scope
    return rest

def keys(container, *scopes: str) -> dict[str, str]:
    return {s: container.keys.create("local", f"only-{s}", [s]).secret for s in scopes}


def text(result: dict[str, Any]) -> str:
    return " ".join(c.get("text", "") for c in result["content"])


def stored(http, memory_id: str) -> dict[str, Any]:
    return http.get(f"/v1/memories/{memory_id}", headers=auth()).json()


def test_r3_update_and_delete_need_only_write_and_only_delete(http, container) -> None:
    k = keys(container, "memory:write", "memory:delete", "memory:read")
    memory = http.post("/v1/memories", headers=auth(), json={"content": "The vault code is 4417", "metadata": {"a": 1}}).json()
    # update with memory:write alone: applied; the answer shows what it changed (metadata), not the text it kept
    done = mcp_call(http, "update_memory", {"memory_id": memory["id"], "metadata": {"a": 2}}, k["memory:write"], R3)
    assert not done.get("isError"), text(done)
    assert without_scope(done["structuredContent"]) == {"id": memory["id"], "version": 2, "metadata": {"a": 2}}
    assert "4417" not in text(done)
    assert stored(http, memory["id"])["metadata"] == {"a": 2}
    # the same call with an admin key (it may read) answers the whole memory
    full = mcp_call(http, "update_memory", {"memory_id": memory["id"], "metadata": {"a": 3}}, path=R3)
    assert full["structuredContent"]["content"] == "The vault code is 4417"
    # read-only and delete-only keys cannot update: refused naming memory:write, nothing written
    for scope in ("memory:read", "memory:delete"):
        refused = mcp_call(http, "update_memory", {"memory_id": memory["id"], "metadata": {"a": 9}}, k[scope], R3)
        assert refused.get("isError") and "'memory:write' scope" in text(refused), text(refused)
    assert stored(http, memory["id"])["version"] == 3
    # an unknown id, to the write-only key: r3's not-found
    missing = mcp_call(http, "update_memory", {"memory_id": "nope", "content": "x"}, k["memory:write"], R3)
    assert missing.get("isError") and text(missing) == "Memory not found: nope"
    # a user_id that is not the memory's: not found (its existence is not told), nothing written
    other = mcp_call(http, "update_memory", {"memory_id": memory["id"], "content": "x", "user_id": "bob"}, k["memory:write"], R3)
    assert text(other) == f"Memory not found: {memory['id']}" and stored(http, memory["id"])["version"] == 3
    # delete with memory:delete alone: archived; read and write keys refused naming memory:delete
    for scope in ("memory:read", "memory:write"):
        refused = mcp_call(http, "delete_memory", {"memory_id": memory["id"]}, k[scope], R3)
        assert refused.get("isError") and "'memory:delete' scope" in text(refused), text(refused)
    assert stored(http, memory["id"])["status"] == "open"
    deleted = mcp_call(http, "delete_memory", {"memory_id": memory["id"]}, k["memory:delete"], R3)
    assert text(deleted) == "Deleted" and stored(http, memory["id"])["status"] == "archived"
    gone = mcp_call(http, "delete_memory", {"memory_id": "nope"}, k["memory:delete"], R3)
    assert gone.get("isError") and text(gone) == "Memory not found: nope"


def test_a_refused_r3_update_at_the_write_cap_charges_no_retrieval(http, container) -> None:
    memory = http.post("/v1/memories", headers=auth(), json={"content": "Lunch is at noon"}).json()
    used = container.meter.usage("local").used
    container.meter.configure("local", {Counter.WRITES: used[Counter.WRITES]}, None)  # at the cap
    refused = mcp_call(http, "update_memory", {"memory_id": memory["id"], "content": "Lunch is at one"}, path=R3)
    assert refused.get("isError") and text(refused).startswith("quota_exceeded"), text(refused)
    assert container.meter.usage("local").used == used  # nothing counted: no write, no retrieval
    container.meter.configure("local", {Counter.WRITES: None}, None)  # control: under the cap it applies, one write
    assert not mcp_call(http, "update_memory", {"memory_id": memory["id"], "content": "Lunch is at one"}, path=R3).get("isError")
    after = container.meter.usage("local").used
    assert (after[Counter.WRITES], after[Counter.RETRIEVALS]) == (used[Counter.WRITES] + 1, used[Counter.RETRIEVALS])


def test_r3_sync_status_needs_memory_read_as_the_status_route(http, container) -> None:
    k = keys(container, "memory:write", "memory:delete", "memory:read")
    for scope in ("memory:write", "memory:delete"):
        refused = mcp_call(http, "sync_status", {}, k[scope], R3)
        assert refused.get("isError") and "'memory:read' scope" in text(refused), text(refused)
        assert http.get("/v1/status", headers=auth(k[scope])).status_code == 403  # the same key, the same answer
    allowed = mcp_call(http, "sync_status", {}, k["memory:read"], R3)
    assert not allowed.get("isError") and allowed["structuredContent"].get("queue") is None  # queue depths: admin only
    assert http.get("/v1/status", headers=auth(k["memory:read"])).status_code == 200


def test_r3_extract_entities_needs_memory_write_and_counts_one_write(http, container) -> None:
    k = keys(container, "memory:write", "memory:delete", "memory:read")
    calls: list[str] = []
    real = container.extractor.extract
    container.extractor.extract = lambda t, **kw: (calls.append(t), real(t, **kw))[1]  # type: ignore[method-assign]
    said = {"text": "Ada works at Cyberdyne."}
    before = container.meter.usage("local").used[Counter.WRITES]
    for scope in ("memory:read", "memory:delete"):
        refused = mcp_call(http, "extract_entities", said, k[scope], R3)
        assert refused.get("isError") and "'memory:write' scope" in text(refused), text(refused)
    assert calls == [] and container.meter.usage("local").used[Counter.WRITES] == before
    done = mcp_call(http, "extract_entities", said, k["memory:write"], R3)
    assert not done.get("isError") and "Cyberdyne" in text(done)
    assert calls == ["Ada works at Cyberdyne."] and container.meter.usage("local").used[Counter.WRITES] == before + 1
    container.meter.configure("local", {Counter.WRITES: before + 1}, None)  # at the cap: refused in r3's words
    capped = mcp_call(http, "extract_entities", said, k["memory:write"], R3)
    assert text(capped) == "quota_exceeded: monthly write limit reached" and len(calls) == 1


def test_writes_without_memory_read_save_without_the_content_check_and_say_so(http, container) -> None:
    k = keys(container, "memory:write")
    writer = k["memory:write"]
    said = "Our office moved to Lisbon"
    first = http.post("/v1/memories", headers=auth(), json={"content": said}).json()
    # control: a key that may read gets the check (the stored memory is found, nothing saved)
    again = mcp_call(http, "add_memory", {"content": said}, path=R3)
    assert text(again) == f"Already saved (id: {first['id']})"
    # a read-only key is refused as the capture refuses it, never told "Already saved" (the check runs for writers only)
    reader = keys(container, "memory:read")["memory:read"]
    assert "'memory:write' scope" in text(mcp_call(http, "add_memory", {"content": said}, reader, R3))
    # write-only: saved as given, the answer says the check was skipped (it never names the stored memory)
    saved = mcp_call(http, "add_memory", {"content": said}, writer, R3)
    assert not saved.get("isError") and text(saved).startswith("Saved (id: ") and "duplicate check skipped" in text(saved)
    assert saved["structuredContent"]["id"] != first["id"] and "memory:read" in saved["structuredContent"]["duplicate_check"]
    # asking it explicitly for the comparison is refused, naming the argument and the scope; nothing saved
    count = len(http.get("/v1/memories?limit=100", headers=auth()).json()["results"])
    refused = mcp_call(http, "add_memory", {"content": said, "skip_duplicate_check": False}, writer, R3)
    assert refused.get("isError") and text(refused).startswith("skip_duplicate_check: ") and "'memory:read' scope" in text(refused)
    assert len(http.get("/v1/memories?limit=100", headers=auth()).json()["results"]) == count
    # skip_duplicate_check true from the write-only key: saved, no note (nothing was skipped for lack of scope)
    plain = mcp_call(http, "add_memory", {"content": said, "skip_duplicate_check": True}, writer, R3)
    assert not plain.get("isError") and "duplicate_check" not in plain["structuredContent"]

    items = [{"content": said}, {"content": "Badge office opens at 8", "id": "src-1"}]
    assert mcp_call(http, "import_memories", {"source": "json", "data": items[1:]}, path=R3)["structuredContent"]["imported"]
    # r3 import_memories and POST /v1/import, write-only, defaults: the repeat of stored text is imported,
    # the item whose source id was imported is still skipped, and the answer says the check was skipped
    r3 = mcp_call(http, "import_memories", {"source": "json", "data": items}, writer, R3)
    assert len(r3["structuredContent"]["imported"]) == 1 and len(r3["structuredContent"]["skipped"]) == 1, text(r3)
    assert "duplicate check skipped" in text(r3)
    rest = http.post("/v1/import", headers=auth(writer), json={"data": [{"content": said}]})
    assert rest.status_code == 200 and len(rest.json()["imported"]) == 1 and "memory:read" in rest.json()["duplicate_check"]
    # control: the admin key's import compares content and skips the repeat
    admin = http.post("/v1/import", headers=auth(), json={"data": [{"content": said}]}).json()
    assert admin["imported"] == [] and admin["skipped"][0]["reason"].startswith("duplicate of ") and admin["duplicate_check"] is None
    # explicit skip_duplicates true from the write-only key: refused naming the argument, on both surfaces
    r3_refused = mcp_call(http, "import_memories", {"source": "json", "data": items, "skip_duplicates": True}, writer, R3)
    assert r3_refused.get("isError") and text(r3_refused).startswith("skip_duplicates: ") and "'memory:read'" in text(r3_refused)
    rest_refused = http.post("/v1/import", headers=auth(writer), json={"data": [{"content": said}], "skip_duplicates": True})
    assert rest_refused.status_code == 403 and rest_refused.json()["error"]["message"].startswith("skip_duplicates: ")
    # a job (more than 200 items) started by the write-only key says it too
    job = http.post("/v1/import", headers=auth(writer), json={"data": [{"content": f"note {i}"} for i in range(201)]})
    assert job.status_code == 202 and "memory:read" in job.json()["duplicate_check"]


def test_applying_deduplication_needs_only_memory_delete_and_shows_no_text_without_read(http, container) -> None:
    k = keys(container, "memory:write", "memory:delete", "memory:read")
    ids = [http.post("/v1/memories", headers=auth(), json={"content": t, "user_id": "dd"}).json()["id"]
           for t in ("The gate code is 7731", "The gate code is 7731", "Parking is behind the bakery")]
    for scope in ("memory:read", "memory:write"):
        refused = mcp_call(http, "deduplicate_memories", {"user_id": "dd", "dry_run": False}, k[scope], R3)
        assert refused.get("isError") and "'memory:delete' scope" in text(refused), text(refused)
    assert stored(http, ids[1])["status"] == "open"
    done = mcp_call(http, "deduplicate_memories", {"user_id": "dd", "dry_run": False}, k["memory:delete"], R3)
    assert not done.get("isError"), text(done)
    report = done["structuredContent"]
    assert report["archived"] == [ids[1]] and report["texts"] is False
    assert report["groups"] == [{"keep": {"id": ids[0]}, "reason": report["groups"][0]["reason"],
                                 "repeats": [{"memory": {"id": ids[1]}, "kind": "exact", "similarity": 1.0}]}]
    assert "7731" not in text(done) and f"Keep {ids[0]}" in text(done) and f"  - {ids[1]} [exact 1.000]" in text(done)
    archived = stored(http, ids[1])
    assert archived["status"] == "archived" and archived["metadata"]["duplicate_of"] == ids[0]
    # control: a key that may read sees the texts (a dry run over another pair)
    http.post("/v1/memories", headers=auth(), json={"content": "Parking is behind the bakery", "user_id": "dd"})
    preview = mcp_call(http, "deduplicate_memories", {"user_id": "dd"}, k["memory:read"], R3)
    assert "bakery" in text(preview) and preview["structuredContent"]["texts"] is True


def test_rest_patch_and_delete_show_a_key_without_read_only_what_it_changed(http, container) -> None:
    k = keys(container, "memory:write", "memory:delete")
    memory = http.post("/v1/memories", headers=auth(), json={"content": "The safe combination is 2468", "metadata": {"a": 1}}).json()
    patched = http.patch(f"/v1/memories/{memory['id']}", headers=auth(k["memory:write"]), json={"metadata": {"a": 2}})
    assert patched.status_code == 200, patched.text
    assert without_scope(patched.json()) == {"id": memory["id"], "version": 2, "metadata": {"a": 2}, "applied": ["replaced the metadata"]}
    replaced = http.patch(f"/v1/memories/{memory['id']}", headers=auth(k["memory:write"]), json={"content": "The safe is empty"})
    assert replaced.json()["content"] == "The safe is empty" and "metadata" not in replaced.json()  # what it wrote, only
    deleted = http.delete(f"/v1/memories/{memory['id']}", headers=auth(k["memory:delete"]))
    assert deleted.status_code == 200 and without_scope(deleted.json()) == {"id": memory["id"], "version": 4, "status": "archived", "applied": []}
    # control: a key that may read gets the whole memory back from the same calls
    full = http.patch(f"/v1/memories/{memory['id']}", headers=auth(), json={"metadata": {"a": 3}}).json()
    assert full["content"] == "The safe is empty" and full["status"] == "archived"
    assert http.delete(f"/v1/memories/{memory['id']}", headers=auth()).json()["content"] == "The safe is empty"


def test_mcp_edit_thought_shows_a_key_without_read_only_what_it_changed(http, container) -> None:
    writer = keys(container, "memory:write")["memory:write"]
    memory = http.post("/v1/memories", headers=auth(), json={"content": "The alarm code is 9135"}).json()
    done = mcp_call(http, "edit_thought", {"thought_id": memory["id"], "edit_request": "mark complete"}, writer)
    assert not done.get("isError"), text(done)
    assert done["structuredContent"]["thought"] is None and "9135" not in str(done)
    assert done["structuredContent"]["changed"] == {"id": memory["id"], "version": 2, "status": "completed", "raw_text": None}
    control = mcp_call(http, "edit_thought", {"thought_id": memory["id"], "edit_request": "reopen"})
    assert control["structuredContent"]["thought"]["normalizedText"].endswith("9135")  # a key that may read: the thought
