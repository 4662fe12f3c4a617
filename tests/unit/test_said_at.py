"""A memory's captured_at keeps the offset the caller said it in (issue 29): stored in the sortable UTC
form (ordering and range queries read it) with the offset beside it, so relative dates count from the
day in that offset, never the wall clock and not UTC."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from mnemo.adapters.dynamodb.codec import item_to_memory, memory_to_item
from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor
from mnemo.domain.commands import CaptureCommand
from mnemo.domain.models import Memory

LIMA = timezone(timedelta(hours=-5))
LATE_IN_LIMA = "2024-03-14T23:30:00-05:00"  # already 15 March in UTC


def _memory(captured_at: datetime) -> Memory:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return Memory(id="m", tenant="t", raw="x", normalized_text="x", captured_at=captured_at, created_at=now,
                  updated_at=now, content_hash="h")


def test_a_capture_keeps_the_offset_it_was_given() -> None:
    said = CaptureCommand(raw="x", captured_at=LATE_IN_LIMA).captured_at
    assert said is not None and (said.utcoffset(), said.day) == (timedelta(hours=-5), 14)
    assert CaptureCommand(raw="x", captured_at="2024-03-14").captured_at == datetime(2024, 3, 14, tzinfo=UTC)  # no offset: UTC
    for refused in ("20210304", "0001-01-01T00:00:00+14:00"):  # the strict parser's checks still hold
        with pytest.raises(ValueError, match="captured_at"):
            CaptureCommand(raw="x", captured_at=refused)


def test_the_store_keeps_utc_for_order_and_the_offset_beside_it() -> None:
    memory = _memory(datetime.fromisoformat(LATE_IN_LIMA))
    item = memory_to_item(memory)
    assert (item["captured_at"], item["captured_offset"]) == ("2024-03-15T04:30:00Z", -300)
    read = item_to_memory(item)
    assert read.captured_at == datetime(2024, 3, 15, 4, 30, tzinfo=UTC) and read.captured_at.tzinfo == UTC
    assert (read.said_at.isoformat(), read.said_at.date()) == (LATE_IN_LIMA, date(2024, 3, 14))
    in_utc = item_to_memory(memory_to_item(_memory(datetime(2024, 3, 15, 4, 30, tzinfo=UTC))))
    assert (in_utc.captured_offset, in_utc.said_at.date()) == (None, date(2024, 3, 15))  # the control: UTC stays UTC


def test_tomorrow_counts_from_the_day_in_the_offset_said() -> None:
    extract = HeuristicExtractor().extract
    late = _memory(datetime.fromisoformat(LATE_IN_LIMA))
    (fact,) = extract("Ravi is flying to Lisbon tomorrow.", captured_at=late.said_at).facts
    assert fact.valid_at == datetime(2024, 3, 15, tzinfo=LIMA)
    # The control: the same instant read in UTC is another day, the one the store used to give
    (utc_fact,) = extract("Ravi is flying to Lisbon tomorrow.", captured_at=late.captured_at).facts
    assert utc_fact.valid_at == datetime(2024, 3, 16, tzinfo=UTC)
