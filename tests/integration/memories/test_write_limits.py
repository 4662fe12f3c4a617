"""Issue 16, items 1 and 4: every write path holds metadata and text to the same limits, and one bad
stored item never breaks a read (it is skipped, counted and logged)."""

from __future__ import annotations

import json

import pytest

from mnemo.adapters.aws import client
from mnemo.adapters.dynamodb.codec import MEMORY_SK, memory_pk
from tests.integration.conftest import auth, mcp_call


def deep(levels: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(levels):
        value = {"a": value}
    return value


def create(http, content: str = "a memory", **extra) -> dict:
    response = http.post("/v1/memories", headers=auth(), json={"content": content, "user_id": "lim", **extra})
    assert response.status_code == 201, response.text
    return response.json()


RAW_BAD_METADATA = [  # raw JSON bodies: what a hostile client can send that json.dumps would not
    (b'{"content": "x", "metadata": {"a": "\\udc80"}}', "metadata: must be valid UTF-8 text (it contains a lone surrogate code point) (at a)"),
    (b'{"content": "x", "metadata": {"\\ud800": 1}}', "metadata: keys must be valid UTF-8 text (a key contains a lone surrogate)"),
    (b'{"content": "x", "metadata": {"n": NaN}}', "metadata: numbers must be finite (no NaN or Infinity) (at n)"),
    (b'{"content": "x", "metadata": {"n": -Infinity}}', "metadata: numbers must be finite (no NaN or Infinity) (at n)"),
    (b'{"content": "x", "metadata": {"n": 123456789012345678901234567890}}', "metadata: integers must be between -2^53 and 2^53 (at n)"),
    (b'{"content": "\\udc80 text"}', "content: must be valid UTF-8 text (it contains a lone surrogate code point)"),
]


@pytest.mark.parametrize(("body", "message"), RAW_BAD_METADATA)
def test_create_refuses_metadata_and_text_that_could_not_be_read_back(http, body: bytes, message: str) -> None:
    response = http.post("/v1/memories", headers={**auth(), "content-type": "application/json"}, content=body)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "validation_error"), response.text
    assert response.json()["error"]["message"] == message


def test_depth_and_size_limits_on_create_and_on_patch(http) -> None:
    # 40 levels: past metadata's 16, within the 64 every client JSON may nest (test_strict_bodies.py)
    too_deep = http.post("/v1/memories", headers=auth(), json={"content": "x", "metadata": deep(40)})
    assert too_deep.status_code == 400
    assert too_deep.json()["error"]["message"].startswith("metadata: must be nested at most 16 levels deep (at a.a.a")
    # Positive control: the deepest allowed nesting is stored and read back.
    ok = create(http, metadata=deep(15))
    assert http.get(f"/v1/memories/{ok['id']}", headers=auth()).json()["metadata"] == deep(15)

    memory = create(http)
    cases = [
        ({"metadata": {"blob": "x" * 100_000}}, "metadata: must be at most 16384 bytes (16 KB) as JSON; it is 100011 bytes"),
        ({"metadata": deep(40)}, "metadata: must be nested at most 16 levels deep"),
    ]
    for body, message in cases:
        response = http.patch(f"/v1/memories/{memory['id']}", headers=auth(), json=body)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["message"].startswith(message)
    patched = http.patch(f"/v1/memories/{memory['id']}", headers={**auth(), "content-type": "application/json"},
                         content=b'{"metadata": {"k": "\\udc80"}}')
    assert patched.status_code == 400 and "lone surrogate" in patched.json()["error"]["message"]
    after = http.get(f"/v1/memories/{memory['id']}", headers=auth()).json()
    assert (after["version"], after["metadata"]) == (1, {})  # nothing refused was written
    good = http.patch(f"/v1/memories/{memory['id']}", headers=auth(), json={"metadata": {"k": "v"}})
    assert (good.status_code, good.json()["metadata"]) == (200, {"k": "v"})


def test_append_cannot_grow_a_memory_past_8_kb(http) -> None:
    memory = create(http, content="x" * 8000)
    grown = http.patch(f"/v1/memories/{memory['id']}", headers=auth(), json={"edit_request": "append: " + "y" * 300})
    assert grown.status_code == 400, grown.text
    assert grown.json()["error"]["message"] == (
        "edit_request: the edited text would exceed 8192 bytes (8 KB); nothing was changed")
    assert http.get(f"/v1/memories/{memory['id']}", headers=auth()).json()["version"] == 1
    # Positive control: an append that stays within the limit is applied.
    small = http.patch(f"/v1/memories/{memory['id']}", headers=auth(), json={"edit_request": "append: yy"})
    assert small.status_code == 200 and small.json()["content"].endswith(" yy")
    grown_mcp = mcp_call(http, "edit_thought", {"thought_id": memory["id"], "edit_request": "append: " + "z" * 400})
    assert grown_mcp["isError"] and "8192 bytes" in grown_mcp["content"][0]["text"]


def plant_unreadable(aws: dict[str, str], good: dict, metadata_json: str) -> str:
    """A copy of a stored memory with metadata no write path accepts any more (legacy data, or
    written by hand): the situation a read must survive."""
    db = client("dynamodb")
    table = aws["MemoriesTable"]
    item = db.get_item(TableName=table, Key={"pk": {"S": memory_pk("local", good["id"])}, "sk": {"S": MEMORY_SK}})["Item"]
    bad_id = good["id"][:-4] + "beef"
    item["pk"] = {"S": memory_pk("local", bad_id)}
    item["id"] = {"S": bad_id}
    item["gsi1sk"] = {"S": item["gsi1sk"]["S"].replace(good["id"], bad_id)}
    item["metadata_json"] = {"S": metadata_json}
    db.put_item(TableName=table, Item=item)
    return bad_id


@pytest.mark.parametrize("metadata_json", ['{"a":"\\udc80"}', json.dumps(deep(400)), "{not json"])
def test_one_unreadable_item_never_breaks_a_read(http, aws, metadata_json: str) -> None:
    good = create(http, content="the readable memory about tea")
    bad_id = plant_unreadable(aws, good, metadata_json)

    page = http.get("/v1/memories", headers=auth(), params={"user_id": "lim"})
    assert page.status_code == 200, page.text
    assert [m["id"] for m in page.json()["results"]] == [good["id"]] and page.json()["skipped"] == 1
    browse = mcp_call(http, "retrieve_thoughts", {"include_agent": True})  # the default user: other data, same code path
    assert not browse["isError"]
    single = http.get(f"/v1/memories/{bad_id}", headers=auth())
    assert (single.status_code, single.json()["error"]["code"]) == (500, "unreadable_item")
    assert "can no longer be read" in single.json()["error"]["message"]
    # Positive control: the good memory is still fully readable on its own.
    assert http.get(f"/v1/memories/{good['id']}", headers=auth()).status_code == 200


def test_search_skips_an_unreadable_item(http, aws, container) -> None:
    good = create(http, content="green tea in the morning")
    bad_id = plant_unreadable(aws, good, '{"a":"\\udc80"}')
    found = container.memories._store.get_many("local", [bad_id, good["id"]])  # the batch read search hydrates with
    assert [m.id for m in found] == [good["id"]]


def test_an_item_dynamodb_refuses_as_invalid_is_a_permanent_400_never_retry_shortly(container, principal) -> None:
    """Issue 26 item 4: a write DynamoDB refuses as malformed (here an item past 400 KB, which the edge
    would have caught: the store is called directly, as a path that missed a limit would) is a
    validation error naming no AWS internals, never a 503 "retry shortly"; nothing is stored. Control:
    the same memory at a legal size is stored through the same call."""
    from mnemo.domain.commands import CaptureCommand
    from mnemo.domain.models import Activity
    from mnemo.errors import DependencyError, ValidationFailed
    from mnemo.services.memory.memories import new_memory

    def memory(text: str):
        built = new_memory(principal, CaptureCommand(raw="placeholder", user_id="lim"), f"id-{len(text)}", now=container.clock())
        return built.model_copy(update={"raw": text, "normalized_text": text})

    def line(m):
        return Activity(memory_id=m.id, version=1, action="created", actor="test", at=container.clock(), detail="captured")

    huge = memory("x" * 420_000)
    with pytest.raises(ValidationFailed) as refused:
        container.store.put_new(huge, line(huge))
    assert not isinstance(refused.value, DependencyError)
    assert "retry shortly" not in refused.value.message and "ValidationException" not in refused.value.message
    assert container.store.get("local", huge.id) is None
    legal = memory("a legal text")
    container.store.put_new(legal, line(legal))
    assert container.store.get("local", legal.id) is not None
