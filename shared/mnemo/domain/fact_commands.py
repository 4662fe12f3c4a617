"""Validated inputs of the fact service (every surface builds these, so the rules live once)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from mnemo.domain.commands import as_utc
from mnemo.domain.models import NamespaceId


def _fact_uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))  # canonical: lowercase, hyphenated, as every stored fact's uuid is
    except ValueError:
        raise ValueError("must be a UUID (a fact's uuid, from a search result)") from None


# Every stored fact's id is a UUID (recorded: uuid4; derived and imported under another id: uuid5), so
# anything else is a wrong argument, not a fact that is missing.
FactUuid = Annotated[str, AfterValidator(_fact_uuid), WithJsonSchema({"type": "string", "format": "uuid"})]


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
