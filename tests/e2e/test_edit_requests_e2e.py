"""Issue 13's quoted edit requests, through the official MCP client against the local server: each
is applied exactly (and `applied` says so) or refused with the thought left as it was."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import LocalServer
from tests.e2e.test_mcp_python_client import error_text, run, structured

pytestmark = pytest.mark.e2e
TEXT = "Standups are daily at 10am."


def test_quoted_edit_requests_are_understood_or_refused(server: LocalServer) -> None:
    async def calls(client: Any) -> dict[str, Any]:
        async def fresh() -> str:
            result = await client.call_tool("capture_thought", {"raw": TEXT, "as_user": True})
            return str(structured(result)["thought"]["id"])

        async def edit(thought_id: str, request: str) -> Any:
            return await client.call_tool("edit_thought", {"thought_id": thought_id, "edit_request": request})

        out: dict[str, Any] = {}
        first = await fresh()
        out["say"] = structured(await edit(first, "Update it to say standups are on Fridays"))
        second = await fresh()
        out["compound"] = structured(await edit(second, "replace daily with weekly and mark complete"))
        third = await fresh()
        for request in ("Don't archive this, just mark it complete", "Archive the second sentence",
                        "The standup is done on Mondays now"):
            out[request] = await edit(third, request)
        out["both"] = await client.call_tool("edit_thought", {"thought_id": third, "edit_request": "archive",
                                                              "raw_text": "x"})
        browsed = structured(await client.call_tool("retrieve_thoughts", {"top_k": 50}))
        out["third"] = next(t for t in browsed["results"] if t["id"] == third)
        out["german"] = structured(await edit(third, "als erledigt markieren"))
        out["reopen"] = structured(await edit(third, "wieder öffnen"))
        for thought_id in (first, third):  # the server is shared by the session: leave no open thoughts behind
            structured(await client.call_tool("delete_thought", {"thought_id": thought_id}))
        return out

    out = run(server, calls)
    assert out["say"]["thought"]["normalizedText"] == "standups are on Fridays"
    assert out["say"]["applied"] == ["set text to 'standups are on Fridays'"]
    assert out["compound"]["thought"]["normalizedText"] == "Standups are weekly at 10am."
    assert out["compound"]["thought"]["status"] == "completed"
    assert out["compound"]["applied"] == ["replaced 'daily' with 'weekly'", "status open -> completed"]
    assert "negation" in error_text(out["Don't archive this, just mark it complete"])
    assert "'the second sentence' refers to part of the text" in error_text(out["Archive the second sentence"])
    assert "not in a form this interpreter understands" in error_text(out["The standup is done on Mondays now"])
    assert error_text(out["both"]).startswith("raw_text and edit_request: give one of them")
    # The refusals changed nothing: the thought is still open, at version 1, with its text.
    assert (out["third"]["status"], out["third"]["version"], out["third"]["normalizedText"]) == ("open", 1, TEXT)
    assert out["german"]["thought"]["status"] == "completed" and out["german"]["applied"] == ["status open -> completed"]
    assert out["reopen"]["thought"]["status"] == "open"
