"""Thrindex's result shapes (seed 003): each tool's text, line for line as the seed prints it, and the
same data as structured content; and the opaque `list_memories` cursor.

The seed's text is the contract (system prompts and parsers read it), so its words are kept even
where English would differ ("Found 1 memories"). Status words: open → `active`, archived →
`deprecated`, completed → `completed`. Importance before enrichment sets it: `DEFAULT_IMPORTANCE`.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime

from pydantic import BaseModel, Field, ValidationError

from mnemo.domain.models import Cursor, Memory, ScoredMemory, Status
from mnemo.errors import ValidationFailed
from mnemo.surfaces.views import SCOPE_WRITTEN, one_line, written_scope

DEFAULT_IMPORTANCE = 0.5  # shown until enrichment sets the memory's importance
LEVEL_STORED = 0  # a memory as stored; 1 is reserved for derived (consolidated) memories
STATUS_WORDS = {Status.OPEN: "active", Status.ARCHIVED: "deprecated", Status.COMPLETED: "completed"}
QUEUED_TEXT = "The memory will be indexed and available for search within a few seconds."


def when(moment: datetime) -> str:
    """`2026-05-24T17:00:00Z`: UTC to the second, as the seed prints times."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def importance(memory: Memory) -> float:
    return DEFAULT_IMPORTANCE if memory.importance is None else memory.importance


class Stored(BaseModel):
    id: str
    status: str = Field(description="queued: saved; extraction, embedding and indexing run in the background.")
    agent_id: str
    user_id: str
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


class Hit(BaseModel):
    id: str
    score: float = Field(description="Fused score in [0, 1]; compare within one response only.")
    importance: float
    content: str
    agent_id: str | None
    user_id: str
    created_at: str


class Found(BaseModel):
    count: int
    latency_ms: int = Field(description="Measured time this search took inside the server.")
    cache_hit: bool
    scope: dict[str, str] = Field(description="The effective namespace searched: tenant, then each pinned level.")
    memories: list[Hit]


class Listed(BaseModel):
    id: str
    status: str
    importance: float
    confidence: float
    agent_id: str | None
    user_id: str
    created_at: str


class Listing(BaseModel):
    count: int
    memories: list[Listed]
    next_cursor: str | None = None


class Record(BaseModel):
    id: str
    content: str
    status: str
    importance: float
    confidence: float
    level: int
    agent_id: str | None
    user_id: str
    source: str = Field(description="agent or user: who wrote the memory.")
    created_at: str
    updated_at: str


class Deleted(BaseModel):
    id: str
    status: str
    message: str
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


def stored(memory: Memory) -> tuple[str, Stored]:
    text = f"Memory queued for processing.\nID: {memory.id}\nStatus: queued\n{QUEUED_TEXT}"
    return text, Stored(id=memory.id, status="queued", agent_id=memory.agent_id or "", user_id=memory.user_id,
                        scope=written_scope(memory.namespace))


def found(hits: list[ScoredMemory], latency_ms: int, scope: dict[str, str]) -> tuple[str, Found]:
    rows = [
        Hit(id=h.memory.id, score=round(h.score, 3), importance=round(importance(h.memory), 2),
            content=h.memory.normalized_text, agent_id=h.memory.agent_id, user_id=h.memory.user_id,
            created_at=when(h.memory.created_at))
        for h in hits
    ]
    lines = [f"Found {len(rows)} memories (latency: {latency_ms}ms, cache_hit: false):"]
    for rank, row in enumerate(rows, 1):
        lines += [
            f"{rank}. [score: {row.score:.3f} | importance: {row.importance:.2f}]",
            f"ID: {row.id}",
            f"Content: {one_line(row.content)}",
            f"Agent: {row.agent_id or '-'} | User: {row.user_id}",
            f"Created: {row.created_at}",
        ]
    return "\n".join(lines), Found(count=len(rows), latency_ms=latency_ms, cache_hit=False, scope=scope, memories=rows)


def listing(memories: list[Memory], next_cursor: str | None) -> tuple[str, Listing]:
    rows = [
        Listed(id=m.id, status=STATUS_WORDS[m.status], importance=round(importance(m), 2), confidence=m.confidence,
               agent_id=m.agent_id, user_id=m.user_id, created_at=when(m.created_at))
        for m in memories
    ]
    lines = [f"Listing {len(rows)} memories:"]
    for rank, row in enumerate(rows, 1):
        lines += [
            f"{rank}. ID: {row.id}",
            f"Status: {row.status} | Importance: {row.importance:.2f} | Confidence: {row.confidence:.2f}",
            f"Agent: {row.agent_id or '-'} | User: {row.user_id}",
            f"Created: {row.created_at}",
        ]
    if next_cursor:
        lines.append(f"next_cursor: {next_cursor}")
    return "\n".join(lines), Listing(count=len(rows), memories=rows, next_cursor=next_cursor)


def record(memory: Memory) -> tuple[str, Record]:
    row = Record(
        id=memory.id, content=memory.raw, status=STATUS_WORDS[memory.status], importance=round(importance(memory), 2),
        confidence=memory.confidence, level=LEVEL_STORED, agent_id=memory.agent_id, user_id=memory.user_id,
        source=memory.author, created_at=when(memory.created_at), updated_at=when(memory.updated_at),
    )
    text = "\n".join([
        f"Memory: {row.id}", "Content:", one_line(row.content), "Metadata:",
        f"Status: {row.status}", f"Importance: {row.importance:.2f}", f"Confidence: {row.confidence:.2f}",
        f"Level: {row.level}", f"Agent: {row.agent_id or '-'}", f"User: {row.user_id}", f"Source: {row.source}",
        f"Created: {row.created_at}", f"Updated: {row.updated_at}",
    ])
    return text, row


def deleted(memory: Memory) -> tuple[str, Deleted]:
    text = f"Memory {memory.id} has been deleted (soft delete — status set to deprecated)."
    return text, Deleted(id=memory.id, status=STATUS_WORDS[memory.status], message=text, scope=written_scope(memory.namespace))


# -- the list cursor ---------------------------------------------------------------------------
class ListCursor(BaseModel):
    """What a cursor carries: the position (created_at, id) and the listing it belongs to. Reads are
    scoped by the caller's key whatever a cursor says; the tenant and filters it names must match
    the call's, so a cursor from another tenant or listing is refused rather than misapplied."""

    t: str
    u: str | None
    a: str | None
    c: datetime
    i: str = Field(max_length=64)


BAD_CURSOR = "cursor: is not a cursor from this list_memories listing; omit it to start from the most recent memory"


def encode_cursor(position: Cursor | None, tenant: str, user_id: str | None, agent_id: str | None) -> str | None:
    if position is None:
        return None
    body = ListCursor(t=tenant, u=user_id, a=agent_id, c=position.cursor_created_at, i=position.cursor_id)
    return base64.urlsafe_b64encode(body.model_dump_json().encode()).decode().rstrip("=")


def decode_cursor(cursor: str, tenant: str, user_id: str | None, agent_id: str | None) -> Cursor:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        body = ListCursor.model_validate(json.loads(raw))
    except (ValueError, binascii.Error, ValidationError) as exc:
        raise ValidationFailed(BAD_CURSOR) from exc
    if (body.t, body.u, body.a) != (tenant, user_id, agent_id):
        raise ValidationFailed(BAD_CURSOR)
    return Cursor(cursor_created_at=body.c, cursor_id=body.i)
