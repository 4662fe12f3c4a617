"""MemoryService over the real DynamoDB/SQS semantics of moto."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from mnemo.adapters.aws import client
from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand
from mnemo.domain.models import EnrichmentState, Permission, Principal, Status
from mnemo.errors import ConflictError, ForbiddenError, NotFoundError, UnsupportedEditError
from tests.conftest import received


def capture(container, principal, text: str, **kwargs):
    return container.memories.capture(principal, CaptureCommand(raw=text, **kwargs))


def test_capture_persists_one_item_and_enqueues_one_task(container, principal, aws) -> None:
    memory = capture(container, principal, "  Remember: team standups are Tuesdays at 10am. ", as_user=True)
    assert memory.normalized_text == "Remember: team standups are Tuesdays at 10am."
    assert memory.author == "user" and memory.status == Status.OPEN and memory.version == 1
    assert memory.enrichment.state == EnrichmentState.PENDING
    assert memory.agent_id == principal.key_prefix
    stored = container.store.get("local", memory.id)
    assert stored == memory
    messages = received(client("sqs"), aws["EnrichmentQueue"])
    assert [json.loads(m["Body"]) for m in messages] == [{"tenant": "local", "memory_id": memory.id, "version": 1}]


def test_capture_without_as_user_is_agent_authored_and_author_overrides_attribution(container, principal) -> None:
    memory = capture(container, principal, "agent note", author="mn_other")
    assert memory.author == "agent"
    assert memory.agent_id == "mn_other"


def test_backdated_capture_keeps_captured_at(container, principal) -> None:
    memory = capture(container, principal, "old memory", captured_at="2023-05-08T13:56:00Z")
    assert memory.captured_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert memory.created_at > memory.captured_at


def test_browse_is_newest_first_with_a_stable_cursor(container, principal) -> None:
    ids = [capture(container, principal, f"thought {i}", as_user=True).id for i in range(5)]
    first = container.memories.browse(principal, RetrieveCommand(top_k=2))
    assert [m.id for m in first.items] == ids[4:2:-1]
    assert first.next_cursor is not None
    capture(container, principal, "inserted while paging", as_user=True)  # must not shift the next page
    cursor = first.next_cursor
    second = container.memories.browse(
        principal, RetrieveCommand(top_k=2, cursor_created_at=cursor.cursor_created_at, cursor_id=cursor.cursor_id)
    )
    assert [m.id for m in second.items] == ids[2:0:-1]
    cursor = second.next_cursor
    third = container.memories.browse(
        principal, RetrieveCommand(top_k=2, cursor_created_at=cursor.cursor_created_at, cursor_id=cursor.cursor_id)
    )
    assert [m.id for m in third.items] == ids[:1] and third.next_cursor is None


def test_browse_defaults_exclude_agent_and_closed_thoughts(container, principal) -> None:
    mine = capture(container, principal, "user thought", as_user=True)
    agent = capture(container, principal, "agent thought")
    done = capture(container, principal, "finished task", as_user=True)
    container.memories.edit(principal, done.id, EditCommand(edit_request="mark complete"))
    assert [m.id for m in container.memories.browse(principal, RetrieveCommand()).items] == [mine.id]
    everyone = container.memories.browse(principal, RetrieveCommand(include_agent=True)).items
    assert {m.id for m in everyone} == {mine.id, agent.id}


def test_edit_bumps_version_logs_history_and_re_enqueues(container, principal, aws) -> None:
    memory = capture(container, principal, "Standups are on Tuesday", as_user=True)
    received(client("sqs"), aws["EnrichmentQueue"])
    edited = container.memories.edit(principal, memory.id, EditCommand(edit_request="replace Tuesday with Wednesday"))
    assert edited.raw == "Standups are on Wednesday" and edited.version == 2
    done = container.memories.edit(principal, memory.id, EditCommand(edit_request="mark complete"))
    assert done.status == Status.COMPLETED and done.version == 3
    reopened = container.memories.edit(principal, memory.id, EditCommand(edit_request="reopen"))
    assert reopened.status == Status.OPEN and reopened.version == 4
    history = container.memories.history(principal, memory.id)
    assert [(a.version, a.action) for a in history] == [(1, "created"), (2, "edited"), (3, "completed"), (4, "reopened")]
    tasks = [json.loads(m["Body"])["version"] for m in received(client("sqs"), aws["EnrichmentQueue"])]
    assert sorted(tasks) == [2, 3, 4]


def test_raw_text_replaces_directly(container, principal) -> None:
    memory = capture(container, principal, "old text", as_user=True)
    edited = container.memories.edit(principal, memory.id, EditCommand(raw_text="  new text "))
    assert edited.raw == "new text" and edited.normalized_text == "new text"


def test_unsupported_edit_is_an_error_and_changes_nothing(container, principal) -> None:
    memory = capture(container, principal, "keep me", as_user=True)
    with pytest.raises(UnsupportedEditError):
        container.memories.edit(principal, memory.id, EditCommand(edit_request="make it poetic"))
    assert container.store.get("local", memory.id).version == 1


def test_conditional_write_refuses_a_stale_version(container, principal) -> None:
    memory = capture(container, principal, "race", as_user=True)
    container.memories.edit(principal, memory.id, EditCommand(raw_text="winner"))
    with pytest.raises(ConflictError):
        container.store.save(memory.model_copy(update={"raw": "loser", "version": 2}), expected_version=1)
    assert container.store.get("local", memory.id).raw == "winner"


def test_delete_archives_and_reopen_restores(container, principal) -> None:
    memory = capture(container, principal, "to archive", as_user=True)
    archived = container.memories.archive(principal, memory.id)
    assert archived.status == Status.ARCHIVED
    assert container.memories.browse(principal, RetrieveCommand()).items == []
    restored = container.memories.edit(principal, memory.id, EditCommand(edit_request="reopen"))
    assert restored.status == Status.OPEN


def test_not_found_and_scopes(container, principal) -> None:
    with pytest.raises(NotFoundError, match="not found"):
        container.memories.get(principal, "00000000-0000-0000-0000-000000000000")
    reader = Principal(tenant="local", key_prefix="mn_reader", permissions=frozenset({Permission.READ}))
    with pytest.raises(ForbiddenError, match="memory:write"):
        container.memories.capture(reader, CaptureCommand(raw="nope"))
    memory = capture(container, principal, "x", as_user=True)
    with pytest.raises(ForbiddenError, match="memory:delete"):
        container.memories.archive(reader, memory.id)


def test_failed_enqueue_still_accepts_the_write(container, principal, monkeypatch) -> None:
    from mnemo.errors import DependencyError

    def broken(task):
        raise DependencyError("enrichment queue unavailable")

    monkeypatch.setattr(container.queue, "send", broken)
    memory = capture(container, principal, "persisted even if the queue is down", as_user=True)
    stored = container.store.get("local", memory.id)
    assert stored is not None and stored.enrichment.state == EnrichmentState.PENDING
    stale = container.store.stale_pending(container.clock() + timedelta(seconds=1), limit=10)
    assert memory.id in [m.id for m in stale]
