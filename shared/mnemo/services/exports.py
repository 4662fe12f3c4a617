"""Export a user's memories as portable records, a page at a time, for backup or a move.

A record carries what a re-import needs to rebuild the memory (content, metadata, namespace,
author, status, timestamps) and never derived data: no embeddings, no index copies, no links.
Its `id` is the memory's id; `POST /v1/import` takes it as the source id, so importing an export
twice stores each memory once. Pages follow the store's browse order (newest first) and a cursor,
so an export of any size runs as many short requests, none near API Gateway's 29 s or 6 MB.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from mnemo.domain.commands import RetrieveCommand
from mnemo.domain.models import Cursor, Memory, Principal, Status
from mnemo.errors import ValidationFailed
from mnemo.services.memories import MemoryService
from mnemo.services.permissions import Operation, authorize

__all__ = ["ExportPage", "ExportService", "ExportedMemory", "decode_cursor", "encode_cursor"]

EVERY_STATUS = [Status.OPEN, Status.COMPLETED, Status.ARCHIVED]


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


class ExportPage(BaseModel):
    memories: list[ExportedMemory]
    next_cursor: str | None = None  # pass back as `cursor`; null on the last page
    skipped: int = 0  # stored items that no longer decode (logged for an operator)


def exported(memory: Memory) -> ExportedMemory:
    return ExportedMemory(
        id=memory.id, content=memory.raw, metadata=memory.metadata, user_id=memory.user_id, agent_id=memory.agent_id,
        group_id=memory.group_id, author=memory.author, status=memory.status, version=memory.version,
        captured_at=memory.captured_at, created_at=memory.created_at, updated_at=memory.updated_at,
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
    def __init__(self, memories: MemoryService) -> None:
        self._memories = memories

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
        return ExportPage(memories=[exported(m) for m in page.items], next_cursor=encode_cursor(page.next_cursor),
                          skipped=page.skipped)
