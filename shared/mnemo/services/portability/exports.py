"""Export a user's memories as portable records, a page at a time, for backup or a move.

A record carries what a re-import needs to rebuild the memory (content, metadata, namespace,
author, status, timestamps), and for the record its history (every change the store keeps), the
facts it supports (each with its origin and the memory ids it was derived from) and its provenance
(captured here, or imported from which source id). Never embeddings, index copies or links.
Its `id` is the memory's id; `POST /v1/import` takes it as the source id, so importing an export
twice stores each memory once. After the last memories come the facts recorded for the user
(`recorded_facts`, their own pages; one listing Query and one BatchGetItem a page), which no
memory holds; the import records them again. Reading a page costs the browse plus, per memory, one history Query
and one provenance Query (and one BatchGetItem for the page's facts). Pages follow the store's browse order (newest first) and a cursor,
so an export of any size runs as many short requests, none near API Gateway's 29 s or 6 MB.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field, ValidationError, field_validator

from mnemo.domain.commands import RetrieveCommand, as_utc
from mnemo.domain.graph import Fact, FactOrigin, FactStatus
from mnemo.domain.models import Activity, Cursor, Memory, NamespaceId, Principal, Status
from mnemo.errors import ValidationFailed
from mnemo.ports import FactStore, MemoryStore
from mnemo.services.memory.memories import MemoryService
from mnemo.services.tenancy.permissions import Operation, authorize

__all__ = ["ExportPage", "ExportService", "ExportedFact", "ExportedMemory", "ExportedRecordedFact", "Provenance",
           "decode_cursor", "encode_cursor", "ndjson"]

EVERY_STATUS = [Status.OPEN, Status.COMPLETED, Status.ARCHIVED]


class HistoryLine(BaseModel):
    """One change the store kept: what, at which version, by which key, when."""

    version: int
    action: str
    actor: str
    at: datetime
    detail: str = ""


class ExportedFact(BaseModel):
    """A fact the memory supports: `origin` derived (from the memories in `memory_ids`) or recorded."""

    uuid: str
    fact: str
    subject: str
    predicate: str
    object: str
    origin: FactOrigin
    status: FactStatus
    memory_ids: list[str]
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime


class ExportedRecordedFact(BaseModel):
    """A fact recorded for the user (record_fact, POST /v1/facts): no memory holds it, so it travels on
    its own. `POST /v1/import` records it again, with this uuid when it is free, this status and times."""

    uuid: str = Field(min_length=1, max_length=100)
    group_id: NamespaceId
    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=100)
    object: str = Field(min_length=1, max_length=300)
    fact: str = Field(min_length=1, max_length=1000)
    status: FactStatus
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    created_at: datetime
    retracted_reason: str | None = Field(default=None, max_length=1000)
    intent_meta: dict[str, Any] | None = None

    @field_validator("valid_at", "invalid_at", "created_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return as_utc(value) if value else None


def exported_recorded(fact: Fact) -> ExportedRecordedFact:
    return ExportedRecordedFact(
        uuid=fact.uuid, group_id=fact.namespace.group_id, subject=fact.subject.name, predicate=fact.predicate,
        object=fact.object.name, fact=fact.fact, status=fact.status, valid_at=fact.valid_at, invalid_at=fact.invalid_at,
        created_at=fact.created_at, retracted_reason=fact.retracted_reason, intent_meta=fact.intent_meta,
    )


class Provenance(BaseModel):
    """How the memory came to be: captured here, or imported from the item `source_id`, by `created_by`."""

    origin: Literal["captured", "imported"]
    source_id: str | None
    created_by: str | None  # the key prefix of the first history line


class ExportedMemory(BaseModel):
    """One memory as `POST /v1/import` reads it back (the `id` becomes the source id)."""

    id: str
    content: str
    metadata: dict[str, Any]
    user_id: str
    agent_id: str | None
    group_id: str
    conversation_id: str | None = None
    author: str
    status: Status
    version: int
    captured_at: datetime
    created_at: datetime
    updated_at: datetime
    history: list[HistoryLine]
    facts: list[ExportedFact]
    provenance: Provenance


class ExportPage(BaseModel):
    memories: list[ExportedMemory]
    # After the last memories: the user's recorded facts, `limit` a page (the pages before hold none).
    recorded_facts: list[ExportedRecordedFact] = Field(default_factory=list)
    next_cursor: str | None = None  # pass back as `cursor`; null on the last page
    skipped: int = 0  # stored items that no longer decode (logged for an operator)


def exported(memory: Memory, history: list[Activity], facts: list[Fact]) -> ExportedMemory:
    return ExportedMemory(
        id=memory.id, content=memory.raw, metadata=memory.metadata, user_id=memory.user_id, agent_id=memory.agent_id,
        group_id=memory.group_id, conversation_id=memory.conversation_id, author=memory.author, status=memory.status, version=memory.version,
        captured_at=memory.captured_at, created_at=memory.created_at, updated_at=memory.updated_at,
        history=[HistoryLine(version=a.version, action=a.action, actor=a.actor, at=a.at, detail=a.detail) for a in history],
        facts=[ExportedFact(
            uuid=f.uuid, fact=f.fact, subject=f.subject.name, predicate=f.predicate, object=f.object.name, origin=f.origin,
            status=f.status, memory_ids=[s.memory_id for s in f.sources], valid_at=f.valid_at, invalid_at=f.invalid_at,
            created_at=f.created_at,
        ) for f in facts],
        provenance=Provenance(origin="imported" if memory.source_id else "captured", source_id=memory.source_id,
                              created_by=history[0].actor if history else None),
    )


class FactsPosition(NamedTuple):
    """Past every memory: the recorded facts from `after` (the store's page position)."""

    after: str


def ndjson(page: ExportPage) -> str:
    """The page as JSON Lines: a memory per line, then `{"recorded_fact": {...}}` per recorded fact."""
    facts = (json.dumps({"recorded_fact": f.model_dump(mode="json")}) for f in page.recorded_facts)
    return "".join([*(m.model_dump_json() + "\n" for m in page.memories), *(line + "\n" for line in facts)])


def encode_cursor(cursor: Cursor | FactsPosition | None) -> str | None:
    if cursor is None:
        return None
    if isinstance(cursor, FactsPosition):
        raw = json.dumps(["facts", cursor.after]).encode()
    else:
        raw = json.dumps([cursor.cursor_created_at.isoformat(), cursor.cursor_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(value: str | None) -> Cursor | FactsPosition | None:
    if value is None:
        return None
    try:
        first, second = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
        if first == "facts" and isinstance(second, str):
            return FactsPosition(second)
        return Cursor(cursor_created_at=first, cursor_id=second)
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, ValidationError) as exc:
        raise ValidationFailed("cursor: is not a cursor this export returned; pass next_cursor back unchanged") from exc


class ExportService:
    def __init__(self, memories: MemoryService, store: MemoryStore, facts: FactStore) -> None:
        self._memories = memories
        self._store = store
        self._facts = facts

    def page(self, principal: Principal, user_id: str | None, *, limit: int, cursor: str | None) -> ExportPage:
        """One page of `user_id`'s memories in the caller's tenant, every status and author; the page
        with the last memories, and those after it, carry the user's recorded facts (`limit` a page).
        None: the key's own user if it is bound to one, else "default"."""
        authorize(principal, Operation.EXPORT)
        user_id = principal.user_for(user_id)
        position = decode_cursor(cursor)
        if isinstance(position, FactsPosition):
            return self._recorded(principal, user_id, ExportPage(memories=[]), limit, position.after)
        command = RetrieveCommand(
            user_id=user_id, author="all", statuses=EVERY_STATUS, top_k=limit,
            cursor_created_at=position.cursor_created_at.isoformat() if position else None,
            cursor_id=position.cursor_id if position else None,
        )
        page = self._memories.browse(principal, command)
        records = [exported(m, self._store.history(m.tenant, m.id), self._facts.for_memory(m.tenant, m.id)) for m in page.items]
        done = ExportPage(memories=records, next_cursor=encode_cursor(page.next_cursor), skipped=page.skipped)
        return done if page.next_cursor is not None else self._recorded(principal, user_id, done, limit, None)

    def _recorded(self, principal: Principal, user_id: str, page: ExportPage, limit: int, after: str | None) -> ExportPage:
        """`page` with one page of the user's recorded facts, and the cursor to the next one."""
        found = self._facts.recorded(principal.tenant, user_id, limit=limit, after=after)
        cursor = encode_cursor(FactsPosition(found.next)) if found.next is not None else None
        return page.model_copy(update={"recorded_facts": [exported_recorded(f) for f in found.facts], "next_cursor": cursor})
