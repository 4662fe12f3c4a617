"""Tenants as records: a plan's monthly limits, a billing status, and the month a counter belongs to.

A tenant nobody configured is unlimited and active, so a single-user install meters (usage is
visible) but never refuses anything.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, Field


class Counter(StrEnum):
    """What a month counts: writes (capture, episode, fact, store, add, import item, update),
    retrievals (search, browse/list, get) and intent annotations."""

    WRITES = "writes"
    RETRIEVALS = "retrievals"
    INTENTS = "intents"


class TenantStatus(StrEnum):
    ACTIVE = "active"
    PAST_DUE = "past_due"
    SUSPENDED = "suspended"


class Tenant(BaseModel):
    """A tenant's plan: a limit per counter (None: unlimited) and its status."""

    tenant: str
    limits: dict[Counter, int | None] = Field(default_factory=lambda: dict.fromkeys(Counter))
    status: TenantStatus = TenantStatus.ACTIVE


class Usage(BaseModel):
    """One month of a tenant: what each counter used, its limit, the status, and when the month ends."""

    tenant: str
    month: str
    used: dict[Counter, int]
    limits: dict[Counter, int | None]
    status: TenantStatus
    resets_at: datetime


def month_of(at: datetime) -> str:
    """The calendar month (UTC) a request counts against: `2026-12`."""
    return at.astimezone(UTC).strftime("%Y-%m")


def month_end(at: datetime) -> datetime:
    """The first instant of the next UTC month: when every counter starts again."""
    at = at.astimezone(UTC)
    year, month = (at.year + 1, 1) if at.month == 12 else (at.year, at.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)
