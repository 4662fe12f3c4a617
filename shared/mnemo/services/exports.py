"""Export a user's memories as portable records, a page at a time, for backup or a move.

A record carries what a re-import needs to rebuild the memory (content, metadata, namespace,
author, status, timestamps), and for the record its history (every change the store keeps), the
facts it supports (each with its origin and the memory ids it was derived from) and its provenance
(captured here, or imported from which source id). Never embeddings, index copies or links.
Its `id` is the memory's id; `POST /v1/import` takes it as the source id, so importing an export
twice stores each memory once. Reading a page costs the browse plus, per memory, one history Query
and one provenance Query (and one BatchGetItem for the page's facts). Pages follow the store's browse order (newest first) and a cursor,
so an export of any size runs as many short requests, none near API Gateway's 29 s or 6 MB.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from mnemo.domain.commands import RetrieveCommand
from mnemo.domain.graph import Fact, FactOrigin, FactStatus
from mnemo.domain.models import Activity, Cursor, Memory, Principal, Status
from mnemo.errors import ValidationFailed
from mnemo.ports import FactStore, MemoryStore
from mnemo.services.memories import MemoryService
from mnemo.services.permissions import Operation, authorize

__all__ = ["ExportPage", "ExportService", "ExportedFact", "ExportedMemory", "Provenance", "decode_cursor", "encode_cursor"]

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
    next_cursor: str | None = None  # pass back as `cursor`; null on the last page
    skipped: int = 0  # stored items that no longer decode (logged for an operator)


def exported(memory: Memory, history: list[Activity], facts: list[Fact]) -> ExportedMemory:
    return ExportedMemory(
        id=memory.id, content=memory.raw, metadata=memory.metadata, user_id=memory.user_id, agent_id=memory.agent_id,
        group_id=memory.group_id, author=memory.author, status=memory.status, version=memory.version,
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


def encode_cursor(cursor: Cursor | None) -> str | None:
    if cursor is None:
        return None
    raw = json.dumps([cursor.cursor_created_at.isoformat(), cursor.cursor_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(value: str | None) -> Cursor | None:
    if value is None:
        return None
    try:
        created_at, memory_id = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
        return Cursor(cursor_created_at=created_at, cursor_id=memory_id)
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, ValidationError) as exc:
        raise ValidationFailed("cursor: is not a cursor this export returned; pass next_cursor back unchanged") from exc


class ExportService:
    def __init__(self, memories: MemoryService, store: MemoryStore, facts: FactStore) -> None:
        self._memories = memories
        self._store = store
        self._facts = facts

    def page(self, principal: Principal, user_id: str, *, limit: int, cursor: str | None) -> ExportPage:
        """One page of `user_id`'s memories in the caller's tenant, every status and author."""
        authorize(principal, Operation.EXPORT)
        position = decode_cursor(cursor)
        command = RetrieveCommand(
            user_id=user_id, author="all", statuses=EVERY_STATUS, top_k=limit,
            cursor_created_at=position.cursor_created_at.isoformat() if position else None,
            cursor_id=position.cursor_id if position else None,
        )
        page = self._memories.browse(principal, command)
        records = [exported(m, self._store.history(m.tenant, m.id), self._facts.for_memory(m.tenant, m.id)) for m in page.items]
        return ExportPage(memories=records, next_cursor=encode_cursor(page.next_cursor),
                          skipped=page.skipped)
