"""Edge validation: messages name the field and the limit."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand
from mnemo.surfaces.errors import describe_validation


def message(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    return describe_validation(exc.value)


def test_capture_trims_and_defaults_to_agent_authorship() -> None:
    command = CaptureCommand(raw="  remember the milk  ")
    assert command.raw == "remember the milk"
    assert command.author_kind == "agent"
    assert CaptureCommand(raw="x", as_user=True).author_kind == "user"


@pytest.mark.parametrize("raw", ["", "   ", "\n\t"])
def test_capture_rejects_empty_raw(raw: str) -> None:
    with pytest.raises(ValidationError) as exc:
        CaptureCommand(raw=raw)
    assert message(exc) == "raw: must not be empty (after trimming whitespace)"


def test_capture_rejects_more_than_8kb_naming_the_limit() -> None:
    with pytest.raises(ValidationError) as exc:
        CaptureCommand(raw="é" * 5000)  # 10,000 bytes in UTF-8
    assert message(exc) == "raw: must be at most 8192 bytes (8 KB); it is 10000 bytes"


def test_capture_accepts_exactly_8kb() -> None:
    assert len(CaptureCommand(raw="a" * 8192).raw) == 8192


def test_captured_at_keeps_its_offset_and_the_memory_stores_it_in_utc() -> None:
    # The offset is the day relative dates count from (issue 29); the memory keeps the sortable UTC form
    from datetime import UTC, datetime

    from mnemo.domain.models import Principal
    from mnemo.services.memory.memories import new_memory

    command = CaptureCommand(raw="x", captured_at="2023-05-08T13:56:00+02:00")
    assert command.captured_at is not None and command.captured_at.isoformat() == "2023-05-08T13:56:00+02:00"
    principal = Principal(tenant="t", key_prefix="k")
    memory = new_memory(principal, command, "m", now=datetime(2026, 1, 1, tzinfo=UTC))
    assert (memory.captured_at.isoformat(), memory.captured_offset) == ("2023-05-08T11:56:00+00:00", 120)
    assert memory.said_at.isoformat() == "2023-05-08T13:56:00+02:00"


def test_captured_at_must_be_iso() -> None:
    with pytest.raises(ValidationError) as exc:
        CaptureCommand(raw="x", captured_at="last tuesday")
    assert message(exc) == "captured_at: must be an ISO-8601 date or date-time, e.g. 2024-05-08 or 2024-05-08T13:56:00+02:00 (no offset = UTC)"


@pytest.mark.parametrize(("top_k", "expected"), [(0, "top_k: must be at least 1"), (101, "top_k: must be at most 100"),
                                                  (-1, "top_k: must be at least 1")])
def test_retrieve_top_k_range(top_k: int, expected: str) -> None:
    with pytest.raises(ValidationError) as exc:
        RetrieveCommand(top_k=top_k)
    assert message(exc) == expected


def test_relevance_order_needs_a_query() -> None:
    with pytest.raises(ValidationError) as exc:
        RetrieveCommand(order="relevance")
    assert "order=relevance requires a non-empty query" in message(exc)


def test_browse_vs_search_mode() -> None:
    assert RetrieveCommand().is_browse
    assert RetrieveCommand(order="created_at").is_browse
    assert not RetrieveCommand(query="coffee").is_browse


def test_author_defaults_and_include_agent() -> None:
    assert RetrieveCommand().authors == ["user"]
    assert RetrieveCommand(include_agent=True).authors == ["user", "agent"]
    assert RetrieveCommand(author="agent").authors == ["agent"]


def test_cursor_fields_come_together() -> None:
    with pytest.raises(ValidationError) as exc:
        RetrieveCommand(cursor_id="abc")
    assert "cursor_created_at and cursor_id must be given together" in message(exc)


def test_edit_needs_something_to_do() -> None:
    with pytest.raises(ValidationError) as exc:
        EditCommand()
    assert "give edit_request" in message(exc)
