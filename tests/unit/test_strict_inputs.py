"""Strict inputs (issue 13, and issue 16 item 5): every argument is understood or rejected with
`field: what is wrong`, never silently reinterpreted, dropped or turned into a 500."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from mnemo.domain.commands import CaptureCommand, EditCommand, RetrieveCommand
from mnemo.domain.timestamps import ISO_HINT
from mnemo.surfaces.errors import describe_validation


def failure(model: Any, **fields: Any) -> str:
    with pytest.raises(ValidationError) as exc:
        model(**fields)
    return describe_validation(exc.value)


@pytest.mark.parametrize("value", ["20210304", "0", "-1", "1614834367", 1614834367, 0, 1.5, "yesterday", "2021-3-4",
                                   "04/03/2021", "2021-03-04T10", "2021-03-04 junk", "", True])
def test_captured_at_that_is_not_iso_8601_is_refused_never_a_unix_time(value: Any) -> None:
    # Given a value pydantic's lax datetime parsing would read as a Unix time (or nonsense)
    # Then the capture fails naming the field and the accepted forms
    assert failure(CaptureCommand, raw="x", captured_at=value) == f"captured_at: must be {ISO_HINT}"


@pytest.mark.parametrize("value", ["2021-02-30", "2021-13-01", "2021-03-04T25:00"])
def test_impossible_calendar_values_are_refused(value: str) -> None:
    assert failure(CaptureCommand, raw="x", captured_at=value).startswith("captured_at: is not a valid calendar date or time")


@pytest.mark.parametrize(("value", "expected"), [
    ("2021-03-04", datetime(2021, 3, 4, tzinfo=UTC)),  # a date: its midnight, UTC
    ("2021-03-04T10:00", datetime(2021, 3, 4, 10, tzinfo=UTC)),  # naive: UTC
    ("2021-03-04T10:00:00Z", datetime(2021, 3, 4, 10, tzinfo=UTC)),
    ("2021-03-04T10:00:00.250+02:00", datetime(2021, 3, 4, 8, 0, 0, 250000, tzinfo=UTC)),
    ("2021-03-04 10:00:00-0530", datetime(2021, 3, 4, 15, 30, tzinfo=UTC)),
])
def test_iso_dates_and_date_times_are_accepted_in_utc(value: str, expected: datetime) -> None:
    # Positive control for the refusals above: the documented forms parse, offsets convert to UTC.
    assert CaptureCommand(raw="x", captured_at=value).captured_at == expected


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_out_of_range_instants_are_validation_errors_not_overflow(value: str) -> None:
    # Given instants that exist in their offset but not in UTC (astimezone would raise OverflowError)
    capture = failure(CaptureCommand, raw="x", captured_at=value)
    cursor = failure(RetrieveCommand, cursor_created_at=value, cursor_id="abc")
    assert capture.startswith("captured_at: is outside the representable range once converted to UTC")
    assert cursor.startswith("cursor_created_at: is outside the representable range once converted to UTC")
    # Positive control: the same extremes in UTC itself are fine.
    assert RetrieveCommand(cursor_created_at="9999-12-31T23:59:59Z", cursor_id="abc").cursor is not None


@pytest.mark.parametrize("query", ["", " ", "\t\n"])
def test_empty_or_whitespace_query_is_an_error_not_a_browse(query: str) -> None:
    assert failure(RetrieveCommand, query=query) == "query: must not be empty or whitespace; omit query to browse"
    assert RetrieveCommand().is_browse  # positive control: omitting it browses


def test_raw_text_with_edit_request_names_both() -> None:
    text = failure(EditCommand, edit_request="mark complete", raw_text="New text")
    assert text.startswith("raw_text and edit_request: give one of them")
    assert EditCommand(raw_text="New text").raw_text == "New text"  # each alone is fine
    assert EditCommand(edit_request="mark complete").edit_request == "mark complete"


@pytest.mark.parametrize(("fields", "names"), [
    ({"threshold": 0.5}, "threshold:"),
    ({"order": "created_at", "threshold": 0.5}, "threshold:"),
    ({"query": "tea", "cursor_created_at": "2024-05-08T00:00:00Z", "cursor_id": "x"}, "cursor_created_at and cursor_id:"),
    ({"include_agent": True, "author": "agent"}, "include_agent and author:"),
])
def test_combinations_that_would_be_ignored_are_errors_naming_the_arguments(fields: dict[str, Any], names: str) -> None:
    assert failure(RetrieveCommand, **fields).startswith(names)


def test_meaningful_combinations_still_pass() -> None:
    assert not RetrieveCommand(query="tea", order="created_at").is_browse  # a search, newest first
    assert RetrieveCommand(query="tea", threshold=0.5).threshold == 0.5
    assert RetrieveCommand(cursor_created_at="2024-05-08T00:00:00Z", cursor_id="x").is_browse
    assert RetrieveCommand(include_agent=True).authors == ["user", "agent"]
    assert RetrieveCommand(include_agent=True, author="user").authors == ["user", "agent"]
