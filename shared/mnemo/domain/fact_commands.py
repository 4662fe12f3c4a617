"""Validated inputs of the fact service (every surface builds these, so the rules live once)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mnemo.domain.commands import as_utc
from mnemo.domain.models import NamespaceId


class FactScope(BaseModel):
    """Where in the tenant a fact is written or read: the graph is keyed by user and group."""

    model_config = ConfigDict(extra="forbid")

    user_id: NamespaceId | None = None  # None: the key's own user if it is bound to one, else "default"
    group_id: NamespaceId = "default"


class RecordFactCommand(FactScope):
    """One subject-predicate-object triple written directly (no extraction)."""

    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=100)
    object: str = Field(min_length=1, max_length=300)
    valid_at: datetime | None = None  # when it became true in the world; default: now
    intent_meta: dict[str, Any] | None = None

    @field_validator("subject", "predicate", "object")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        text = " ".join(value.split())
        if not text:
            raise ValueError("must be non-empty after trimming whitespace")
        return text

    @field_validator("valid_at")
    @classmethod
    def _valid_at(cls, value: datetime | None) -> datetime | None:
        return as_utc(value) if value else None
