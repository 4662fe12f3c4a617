"""Wire shapes. Built from domain models here so no surface ever serialises a Memory directly
(and so no embedding or internal field can leak)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemo.domain.graph import Fact, Link
from mnemo.domain.models import Author, Cursor, Memory, Status
from mnemo.domain.namespace import Namespace, NamespaceFilter

SNIPPET_CHARS = 280
SCOPE_WRITTEN = "The effective namespace written (tenant, then each level it sets), as reads and searches echo the one they read."


def written_scope(namespace: Namespace | NamespaceFilter) -> dict[str, str]:
    """Where a write landed, in the shape reads echo as `scope` (tenant first, unset levels left out):
    a caller sees which user (a bound key's, or `default` when none was named) and group it wrote."""
    levels = namespace.model_dump()
    return NamespaceFilter(**levels).levels()


def user_scope(tenant: str, user_id: str) -> dict[str, str]:
    """Where a write over a whole user landed (an import, a deduplication, a job started for either):
    tenant and user, in `written_scope`'s shape (each memory's agent_id and group_id say the rest)."""
    return written_scope(NamespaceFilter(tenant=tenant, user_id=user_id))


def one_line(text: str) -> str:
    """Stored (or caller-given) text as it may appear inside a line-oriented text answer: every run of
    whitespace, line breaks of any kind included (\\r, \\n, U+2028, ...), becomes one space. A text
    answer's structure (r3's `---` / `[id: ... | score: ...]` hit blocks, Thrindex's `ID:` / `Content:`
    lines, report lines) is made of lines, so text confined to one line cannot forge an extra hit, field
    or instruction line. The structured content keeps the text verbatim."""
    return " ".join(text.split())


class EnrichmentView(BaseModel):
    state: str = Field(description="pending | enriched | failed")
    error: str | None = Field(default=None, description="Why enrichment failed, when state is failed.")


class Thought(BaseModel):
    """A thought as the Eigen Mesh tools return it (the seed's field names)."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    normalizedText: str
    category: str | None
    author: Author
    status: Status
    created_at: datetime
    captured_at: datetime
    updated_at: datetime
    version: int
    user_id: str
    agent_id: str | None
    metadata: dict[str, Any]
    entities: list[str]
    enrichment: EnrichmentView
    score: float | None = Field(
        default=None, description="Normalised relevance in [0, 1] (search mode only).", exclude_if=lambda v: v is None
    )


class MemoryView(BaseModel):
    """A memory as the REST API returns it."""

    id: str
    content: str
    text: str = Field(description="Normalised text.")
    category: str | None
    author: Author
    status: Status
    user_id: str
    agent_id: str | None
    group_id: str
    conversation_id: str | None = Field(default=None, exclude_if=lambda v: v is None)
    metadata: dict[str, Any]
    entities: list[str]
    importance: float | None
    captured_at: datetime
    created_at: datetime
    updated_at: datetime
    version: int
    enrichment: EnrichmentView
    score: float | None = Field(default=None, exclude_if=lambda v: v is None)
    explain: dict[str, float] | None = Field(
        default=None, description="Each normalised score component (explain=true).", exclude_if=lambda v: v is None
    )


class LinkView(BaseModel):
    id: str = Field(description="The linked memory.")
    weight: float
    reason: str = Field(description="semantic | entity | sequence")


class FactView(BaseModel):
    subject: str
    predicate: str
    object: str
    polarity: Literal["positive", "negative"] = Field(description="negative: the memory says it is not (or no longer) so.")
    version: int = Field(description="The memory version the fact was extracted from.")
    uuid: str
    status: str = Field(description="active, or (with include_inactive) invalidated / retracted.")
    invalidated_by: str | None = Field(default=None, description="The fact that superseded this one, if one did.")


class MemoryDetail(MemoryView):
    links: list[LinkView]
    facts: list[FactView]


def cursor_params(cursor: Cursor | None) -> dict[str, str] | None:
    """The next page's position as the two arguments a caller passes back."""
    if cursor is None:
        return None
    return {"cursor_created_at": cursor.cursor_created_at.isoformat(), "cursor_id": cursor.cursor_id}


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return f"{cut}…"


def _enrichment(memory: Memory) -> EnrichmentView:
    return EnrichmentView(state=memory.enrichment.state.value, error=memory.enrichment.error)


def thought_view(memory: Memory, *, score: float | None = None, detail: str = "full") -> Thought:
    text = memory.normalized_text if detail == "full" else snippet(memory.normalized_text)
    return Thought(
        id=memory.id,
        normalizedText=text,
        category=memory.category,
        author=memory.author,
        status=memory.status,
        created_at=memory.created_at,
        captured_at=memory.captured_at,
        updated_at=memory.updated_at,
        version=memory.version,
        user_id=memory.user_id,
        agent_id=memory.agent_id,
        metadata=memory.metadata,
        entities=memory.entities,
        enrichment=_enrichment(memory),
        score=None if score is None else round(score, 6),
    )


def memory_view(memory: Memory, *, score: float | None = None, explain: dict[str, float] | None = None) -> MemoryView:
    return MemoryView(
        id=memory.id,
        content=memory.raw,
        text=memory.normalized_text,
        category=memory.category,
        author=memory.author,
        status=memory.status,
        user_id=memory.user_id,
        agent_id=memory.agent_id,
        group_id=memory.group_id,
        conversation_id=memory.conversation_id,
        metadata=memory.metadata,
        entities=memory.entities,
        importance=memory.importance,
        captured_at=memory.captured_at,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        version=memory.version,
        enrichment=_enrichment(memory),
        score=None if score is None else round(score, 6),
        explain=None if explain is None else {k: round(v, 6) for k, v in explain.items()},
    )


def memory_detail(memory: Memory, links: list[Link], facts: list[Fact]) -> MemoryDetail:
    return MemoryDetail(
        **memory_view(memory).model_dump(),
        links=[LinkView(id=link.other_id, weight=link.weight, reason=link.reason) for link in links],
        facts=[FactView(subject=f.subject.name, predicate=f.predicate, object=f.object.name, polarity=f.polarity,
                        version=f.source_version(memory.id) or memory.version, uuid=f.uuid, status=f.status.value,
                        invalidated_by=f.invalidated_by) for f in facts],
    )
