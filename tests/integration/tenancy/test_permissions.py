"""Issue 16, item 6: the operation × permission table of docs/permissions.md, end to end over REST and MCP."""

from __future__ import annotations

import pytest

from tests.integration.conftest import auth, mcp_call

KEYS = {
    "read": ("mn_readonly_0123456789abcdefghijklmnop", ["memory:read"]),
    "write": ("mn_writeonly_0123456789abcdefghijklmnop", ["memory:write"]),
    "write+delete": ("mn_writedel_0123456789abcdefghijklmnop", ["memory:write", "memory:delete"]),
}


@pytest.fixture
def keys(http, container) -> dict[str, str]:
    for secret, scopes in KEYS.values():
        container.keys.ensure("local", "perm", scopes, secret)
    return {name: secret for name, (secret, _) in KEYS.items()}


def memory(http) -> str:
    return http.post("/v1/memories", headers=auth(), json={"content": "a memory to change"}).json()["id"]


def test_write_key_edits_but_cannot_archive_any_way(http, keys) -> None:
    mid = memory(http)
    write = auth(keys["write"])
    edited = http.patch(f"/v1/memories/{mid}", headers=write, json={"content": "changed by a write-only key"})
    assert edited.status_code == 200, edited.text  # positive control: write alone suffices to edit
    refusals = [
        http.patch(f"/v1/memories/{mid}", headers=write, json={"status": "archived"}),
        http.patch(f"/v1/memories/{mid}", headers=write, json={"edit_request": "archive"}),
        http.delete(f"/v1/memories/{mid}", headers=write),
    ]
    for response in refusals:
        assert response.status_code == 403, response.text
        assert response.json()["error"] == {
            "code": "missing_scope",
            "message": "to archive (delete) a memory, this API key needs the 'memory:delete' scope (it has: memory:write)",
        }
    mcp = mcp_call(http, "edit_thought", {"thought_id": mid, "edit_request": "archive"}, key=keys["write"])
    assert mcp["isError"] and "'memory:delete'" in mcp["content"][0]["text"]
    after = http.get(f"/v1/memories/{mid}", headers=auth()).json()
    assert (after["status"], after["version"]) == ("open", 2)  # nothing the refusals asked for was written


def test_write_delete_key_without_read_edits_and_deletes(http, keys) -> None:
    mid = memory(http)
    key = auth(keys["write+delete"])
    assert http.patch(f"/v1/memories/{mid}", headers=key, json={"edit_request": "mark complete"}).status_code == 200
    assert http.delete(f"/v1/memories/{mid}", headers=key).json()["status"] == "archived"
    assert http.patch(f"/v1/memories/{mid}", headers=key, json={"edit_request": "reopen"}).json()["status"] == "open"
    # ...but it cannot read (the negative of the same key).
    read = http.get(f"/v1/memories/{mid}", headers=key)
    assert read.status_code == 403 and "'memory:read'" in read.json()["error"]["message"]


def test_read_key_reads_but_cannot_write(http, keys) -> None:
    mid = memory(http)
    key = auth(keys["read"])
    assert http.get(f"/v1/memories/{mid}", headers=key).status_code == 200
    refused = http.patch(f"/v1/memories/{mid}", headers=key, json={"content": "nope"})
    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == (
        "to edit a memory's text, metadata or status, this API key needs the 'memory:write' scope (it has: memory:read)")
    assert http.post("/v1/memories", headers=key, json={"content": "x"}).status_code == 403


def test_write_key_cannot_unarchive(http, keys) -> None:
    mid = memory(http)
    assert http.delete(f"/v1/memories/{mid}", headers=auth()).status_code == 200
    refused = http.patch(f"/v1/memories/{mid}", headers=auth(keys["write"]), json={"status": "open"})
    assert refused.status_code == 403 and "reopen an archived memory" in refused.json()["error"]["message"]
