"""The memory and its companions, as the services see them (never a storage or wire shape)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from mnemo.domain.namespace import DEFAULT, Namespace
from mnemo.domain.timestamps import to_utc
from mnemo.errors import BoundKeyError

MAX_TEXT_BYTES = 8 * 1024
MAX_METADATA_BYTES = 16 * 1024

NamespaceId = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:@\-]+$")
]
# The conversation a memory was said in, as the caller names it (a chat, a session, a transcript): the
# same shape as a namespace id, but nothing is filtered by it. It only decides which memory lends a new
# one its conversational context (services/enrichment/pipeline.py, `_previous`).
ConversationId = NamespaceId
Author = Literal["user", "agent"]


class Permission(StrEnum):
    """What an API key may do (its "scopes" on the wire); `admin` implies every other.

    Named Permission because "scope" means a namespace (tenant > user > agent > group) everywhere else."""

    READ = "memory:read"
    WRITE = "memory:write"
    DELETE = "memory:delete"
    ADMIN = "admin"


class Status(StrEnum):
    OPEN = "open"
    COMPLETED = "completed"
    ARCHIVED = "archived"


class EnrichmentState(StrEnum):
    PENDING = "pending"
    ENRICHED = "enriched"
    FAILED = "failed"


class Principal(BaseModel):
    """Who is calling: resolved from the API key, never from arguments."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    key_prefix: str
    name: str = ""
    permissions: frozenset[Permission] = frozenset()
    user_id: str | None = None  # a user-bound key: it reads and writes this user's memories only

    def allows(self, permission: Permission) -> bool:
        return Permission.ADMIN in self.permissions or permission in self.permissions

    def confine(self, user_id: str | None) -> str | None:
        """The user a request acts for, the one rule every service applies to every argument naming a user.
        Unbound key: what it asked for (None: every user, where a read allows that). User-bound key: its
        own user when it names that user or none; naming another user is refused (BoundKeyError), never
        redirected, since an answer worded for "bob" but computed on alice's memories (or the reverse,
        a duplicate check run against bob's) misleads or leaks."""
        if self.user_id is None:
            return user_id
        if user_id is not None and user_id != self.user_id:
            raise BoundKeyError(f'user_id: this key is bound to user "{self.user_id}"')
        return self.user_id

    def user_for(self, user_id: str | None) -> str:
        """The one user a write (or a one-user read) acts for: the named user, else the key's own
        user, else "default" (`confine`'s rule)."""
        return self.confine(user_id) or DEFAULT

    def sees(self, user_id: str) -> bool:
        """Whether an item of `user_id` is visible to this key (a bound key sees its own user's only)."""
        return self.user_id is None or self.user_id == user_id


class Enrichment(BaseModel):
    state: EnrichmentState = EnrichmentState.PENDING
    error: str | None = None
    attempts: int = 0
    model_id: str | None = None
    queued_at: datetime | None = None  # last time a task was sent; the reconciler's clock


class Memory(BaseModel):
    """One thought. `version` bumps on every change; writes are conditional on it."""

    id: str
    tenant: str
    user_id: str = "default"
    agent_id: str | None = None
    group_id: str = "default"
    author: Author = "agent"
    raw: str
    normalized_text: str
    category: str | None = None
    status: Status = Status.OPEN
    metadata: dict[str, Any] = Field(default_factory=dict)
    captured_at: datetime  # in UTC (sortable: ordering and ranges read it); said in the offset below
    captured_offset: int | None = None  # minutes east of UTC of the captured_at the caller gave (None: UTC)
    created_at: datetime
    updated_at: datetime
    version: int = 1  # the content version: bumps on every change a caller makes
    revision: int = 0  # the item's write counter: every conditional write checks and bumps it
    enrichment: Enrichment = Field(default_factory=Enrichment)
    content_hash: str
    entities: list[str] = Field(default_factory=list)
    importance: float | None = None
    confidence: float = 1.0  # the writer's confidence in the content, [0, 1] (Thrindex's `confidence`)
    extract: bool = True  # False: enrichment indexes the text verbatim, with no extractor (LLM) call
    index_ids: list[str] = Field(default_factory=list)  # `_id`s a Serverless index generated for its copies
    source_id: str | None = None  # the id of the item an import made it from (None: captured here)
    conversation_id: str | None = None  # the conversation it was said in, if the caller named one

    @model_validator(mode="after")
    def _captured_in_utc(self) -> Memory:
        """A captured_at given with an offset is kept in UTC, its offset beside it (stored ones come back in UTC)."""
        offset = self.captured_at.utcoffset()
        if offset and self.captured_offset is None:
            self.captured_offset = int(offset.total_seconds() // 60)
        if offset:
            self.captured_at = to_utc(self.captured_at)
        return self

    @property
    def said_at(self) -> datetime:
        """captured_at in the offset it was said in: the day "yesterday" and "next Friday" count from."""
        if not self.captured_offset:
            return self.captured_at
        return self.captured_at.astimezone(timezone(timedelta(minutes=self.captured_offset)))

    @property
    def namespace(self) -> Namespace:
        return Namespace(tenant=self.tenant, user_id=self.user_id, agent_id=self.agent_id, group_id=self.group_id)


class Activity(BaseModel):
    """One line of a memory's history: what changed, by whom, at which version."""

    memory_id: str
    version: int
    action: Literal["created", "edited", "completed", "archived", "reopened"]
    actor: str
    at: datetime
    detail: str = ""
    request_key: str | None = None  # the Idempotency-Key of the request that made the change, if any


class Cursor(BaseModel):
    """Browse position: the last (created_at, id) returned; the next page starts strictly after it."""

    cursor_created_at: datetime
    cursor_id: str


class Page(BaseModel):
    items: list[Memory]
    next_cursor: Cursor | None = None
    skipped: int = 0  # stored items that no longer decode: left out and logged, never failing the page


class ScoredMemory(BaseModel):
    memory: Memory
    score: float
    components: dict[str, float] = Field(default_factory=dict)


def normalize_text(raw: str) -> str:
    """Canonical text for hashing and display: NFC, collapsed whitespace, trimmed."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", raw)).strip()


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).casefold().encode()).hexdigest()
