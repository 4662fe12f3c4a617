"""Strict timestamps for every input: an ISO-8601 date or date-time, nothing else.

pydantic's own datetime parsing also takes numbers and digit strings as Unix times, so
`captured_at: "20210304"` silently became 1970-08-22. Inputs here accept `2024-05-08`,
`2024-05-08T13:56`, `2024-05-08T13:56:00.123Z` or `...+02:00`; a value without an offset is UTC
(a date alone is its midnight, UTC). Every value is converted to UTC at validation time, so a date
that leaves the representable range in UTC (`0001-01-01T00:00:00+14:00`) is a validation error
here rather than an OverflowError later. `SaidAt` (a memory's `captured_at`) is checked the same way
but keeps the offset it was given: "yesterday" counts from the day it was in that offset.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

ISO_HINT = "an ISO-8601 date or date-time, e.g. 2024-05-08 or 2024-05-08T13:56:00+02:00 (no offset = UTC)"
_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|z|[+-]\d{2}(?::?\d{2})?)?)?$"
)


def utcnow() -> datetime:
    """The wall clock, in UTC: the default clock of every service (tests inject theirs)."""
    return datetime.now(UTC)


def to_utc(value: datetime) -> datetime:
    """Naive = UTC. Raises ValueError (not OverflowError) when the instant has no UTC representation."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"is outside the representable range once converted to UTC (0001-01-01 to 9999-12-31); "
                         f"it must be {ISO_HINT}") from None


def parse_timestamp(value: Any) -> datetime:
    """The strict parser behind `IsoTimestamp`: ISO-8601 text, or a `datetime`/`date` from Python callers."""
    if isinstance(value, datetime):
        return to_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str) or not _ISO.match(value.strip()):
        raise ValueError(f"must be {ISO_HINT}")
    try:
        parsed = datetime.fromisoformat(value.strip().replace("z", "Z"))
    except ValueError:
        raise ValueError(f"is not a valid calendar date or time; it must be {ISO_HINT}") from None
    return to_utc(parsed)


def parse_said_at(value: Any) -> datetime:
    """`parse_timestamp`'s checks, but the instant in the offset it was given (naive or a date: UTC)."""
    instant = parse_timestamp(value)
    given = datetime.fromisoformat(value.strip().replace("z", "Z")) if isinstance(value, str) else value
    return given if isinstance(given, datetime) and given.tzinfo is not None else instant


IsoTimestamp = Annotated[
    datetime,
    BeforeValidator(parse_timestamp),
    WithJsonSchema({"type": "string", "format": "date-time", "description": ISO_HINT}),
]
SaidAt = Annotated[
    datetime,
    BeforeValidator(parse_said_at),
    WithJsonSchema({"type": "string", "format": "date-time", "description": ISO_HINT}),
]
