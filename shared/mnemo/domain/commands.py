"""Validated inputs of the services. Every surface (MCP, REST) builds these, so the rules live once.

Messages name the field and the limit, because an agent reads them and must be able to fix its call.
A field's message says what is wrong with it (`must be at most 8192 bytes`); the surface's error
writer puts the field's name in front (`raw: must be at most 8192 bytes`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mnemo.domain.limits import check_metadata, check_text, check_unicode
from mnemo.domain.models import MAX_TEXT_BYTES, Author, ConversationId, Cursor, NamespaceId, Status
from mnemo.domain.timestamps import IsoTimestamp, SaidAt

__all__ = ["CaptureCommand", "EditCommand", "RetrieveCommand", "as_utc", "check_metadata", "check_text"]

AuthorFilter = Literal["user", "agent", "all"]
Detail = Literal["snippet", "full"]
SearchMode = Literal["fast", "full"]


def as_utc(value: datetime) -> datetime:
    """Naive timestamps are taken as UTC; everything is stored in UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class CaptureCommand(BaseModel):
    model_config = ConfigDict(extra="forbid")

    raw: str
    captured_at: SaidAt | None = None  # strict ISO-8601 in the offset given (domain/timestamps.py); stored in UTC
    as_user: bool | None = None
    author: str | None = Field(default=None, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")
    user_id: NamespaceId | None = None  # None: the key's own user if it is bound to one, else "default"
    agent_id: NamespaceId | None = None
    group_id: NamespaceId = "default"
    conversation_id: ConversationId | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    extract: bool = True

    @field_validator("raw")
    @classmethod
    def _raw(cls, value: str) -> str:
        return check_text(value, "raw")

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_metadata(value)

    @property
    def author_kind(self) -> Author:
        """`as_user` true = the human's memory; omitted or false on API-key auth = agent-authored."""
        return "user" if self.as_user else "agent"


class RetrieveCommand(BaseModel):
    """Browse (no query) or search (a query). A search's `order`: relevance (the default) or created_at
    (the hits that pass, newest first, one page)."""

    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(default=None, max_length=MAX_TEXT_BYTES)
    order: Literal["relevance", "created_at"] | None = None
    top_k: int = Field(default=10, ge=1, le=100)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    mode: SearchMode = "full"
    detail: Detail = "snippet"
    author: AuthorFilter = "user"
    include_agent: bool = False
    user_id: NamespaceId | None = "default"  # None: every user of the tenant
    agent_id: NamespaceId | None = None  # None: any agent
    group_id: NamespaceId | None = None  # None: any group
    statuses: list[Status] = Field(default_factory=lambda: [Status.OPEN])
    cursor_created_at: IsoTimestamp | None = None
    cursor_id: str | None = Field(default=None, max_length=64)
    # The reference time of a search (default: the clock): recency and any relative date in the query
    # ("last week", "two months ago") are read against it, e.g. an agent replaying a past conversation.
    now: IsoTimestamp | None = None

    @field_validator("query")
    @classmethod
    def _query(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.strip():
            raise ValueError("must not be empty or whitespace; omit query to browse")
        return value.strip()

    @model_validator(mode="after")
    def _consistent(self) -> RetrieveCommand:
        if self.order == "relevance" and not self.query:
            raise ValueError("order=relevance requires a non-empty query; omit order (or use created_at) to browse")
        if (self.cursor_created_at is None) != (self.cursor_id is None):
            raise ValueError("cursor_created_at and cursor_id must be given together")
        if self.is_browse and self.threshold is not None:
            raise ValueError("threshold: only filters a search by score; browsing has no scores (give a query)")
        if self.is_browse and self.now is not None:
            raise ValueError("now: only a search has a reference time (recency, relative dates); give a query")
        if not self.is_browse and self.cursor_created_at is not None:
            raise ValueError("cursor_created_at and cursor_id: only page a browse (no query); a search returns one page")
        if self.include_agent and self.author != "user":
            raise ValueError(f"include_agent and author: include_agent is shorthand for author=all; "
                             f"it contradicts author={self.author}, give one of them")
        return self

    @property
    def is_browse(self) -> bool:
        return self.query is None

    @property
    def authors(self) -> list[Author]:
        chosen = "all" if self.include_agent else self.author
        return ["user", "agent"] if chosen == "all" else [chosen]

    @property
    def cursor(self) -> Cursor | None:
        if self.cursor_created_at is None or self.cursor_id is None:
            return None
        return Cursor(cursor_created_at=as_utc(self.cursor_created_at), cursor_id=self.cursor_id)


class EditCommand(BaseModel):
    model_config = ConfigDict(extra="forbid")

    edit_request: str | None = Field(default=None, max_length=2000)
    raw_text: str | None = None
    metadata: dict[str, Any] | None = None
    status: Status | None = None

    @field_validator("raw_text")
    @classmethod
    def _raw_text(cls, value: str | None) -> str | None:
        return None if value is None else check_text(value, "raw_text")

    @field_validator("edit_request")
    @classmethod
    def _edit_request(cls, value: str | None) -> str | None:
        return None if value is None else check_unicode(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else check_metadata(value)

    @model_validator(mode="after")
    def _something(self) -> EditCommand:
        if self.edit_request is not None and self.raw_text is not None:
            raise ValueError("raw_text and edit_request: give one of them; raw_text replaces the whole text "
                             "as given, edit_request describes a change in plain language")
        if not (self.edit_request and self.edit_request.strip()) and self.raw_text is None and self.metadata is None and self.status is None:
            raise ValueError("give edit_request (plain-language change) or raw_text (direct replacement)")
        return self
