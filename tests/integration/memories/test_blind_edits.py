"""A key without memory:read edits without learning the text (docs/permissions.md): a span edit
("replace 'X' with ...", "delete 'X'") answers the same refusal whether or not X occurs, naming
edit_request and the scope, and changes nothing; an interpreter's refusal reason (which may quote the
text) is not shown to it. A key that may read gets the precise answers; edits that read nothing
(append, a text the request gives, status) work without read."""

from __future__ import annotations

from typing import Any

from tests.conftest import TEST_KEY
from tests.integration.conftest import auth, mcp_call

TEXT = "Standup at nine in room four"


def refusal(response: Any) -> tuple[int, str, str]:
    body = response.json()["error"]
    return response.status_code, body["code"], body["message"]


def test_a_span_edit_by_a_key_without_read_reveals_nothing_about_the_text(http, container) -> None:
    writer = container.keys.create("local", "writer", ["memory:write"]).secret
    memory = http.post("/v1/memories", headers=auth(), json={"content": TEXT}).json()["id"]
    patch = lambda key, request: http.patch(f"/v1/memories/{memory}", headers=auth(key), json={"edit_request": request})  # noqa: E731
    # control: a key that may read is told precisely whether the words occur
    assert refusal(patch(TEST_KEY, "replace 'noon' with 'ten'")) == (
        400, "unsupported_edit", "edit_request: the text 'noon' does not occur in the memory's text; nothing was changed")
    # the writer: present and absent words answer the same 403, naming edit_request, the scope and REST's field
    present, absent = refusal(patch(writer, "replace 'nine' with 'ten'")), refusal(patch(writer, "replace 'noon' with 'ten'"))
    assert present == absent == (403, "missing_scope", (
        "edit_request: changing part of the text finds words in the memory's text, which reads it; this API key needs "
        "the 'memory:read' scope for that (it has: memory:write); pass content to replace the whole text, or ask to "
        "append text, archive, complete or reopen; nothing was changed"))
    assert refusal(patch(writer, "delete 'room four'"))[:2] == (403, "missing_scope")
    assert refusal(patch(writer, "replace every 'o' with '0'"))[:2] == (403, "missing_scope")  # no "occurs 5 times"
    # an interpreter's reason that depends on the text (a positional reference it does not find) is not shown
    assert "by position" in refusal(patch(TEST_KEY, "delete the second sentence"))[2]  # control
    blind = refusal(patch(writer, "delete the second sentence"))
    assert blind[:2] == (400, "unsupported_edit") and "by position" not in blind[2] and "not shown" in blind[2]
    assert http.get(f"/v1/memories/{memory}", headers=auth()).json()["content"] == TEXT  # nothing was changed
    # edits that read nothing still work with memory:write alone
    appended = patch(writer, "append 'bring coffee'")
    assert appended.status_code == 200 and appended.json()["applied"] == ["appended 'bring coffee'"]
    assert "content" not in appended.json()  # still only what the call changed
    assert patch(writer, "set the text to: Standup at ten").status_code == 200


def test_edit_thought_words_the_same_refusal_on_mcp(http, container) -> None:
    writer = container.keys.create("local", "writer", ["memory:write"]).secret
    memory = http.post("/v1/memories", headers=auth(), json={"content": TEXT}).json()["id"]
    said = [mcp_call(http, "edit_thought", {"thought_id": memory, "edit_request": f"replace '{w}' with 'ten'"}, writer)
            for w in ("nine", "noon")]
    assert all(r["isError"] for r in said) and said[0]["content"] == said[1]["content"]
    assert "pass raw_text to replace the whole text" in said[0]["content"][0]["text"]  # /mcp's own field name
    control = mcp_call(http, "edit_thought", {"thought_id": memory, "edit_request": "replace 'noon' with 'ten'"})
    assert control["content"][0]["text"] == "edit_request: the text 'noon' does not occur in the memory's text; nothing was changed"
    assert http.get(f"/v1/memories/{memory}", headers=auth()).json()["content"] == TEXT
