"""The facts product's JSON shapes (seed 001), shared by `/mcp/facts` and the REST routes: an edge,
an episode, a node; a write's answer echoes the namespace it wrote (`scope`). Pinned by tests/integration/surfaces/test_profile_facts.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from mnemo.domain.graph import Entity, EntityRef, Fact, FactAudit
from mnemo.domain.models import Memory
from mnemo.surfaces.views import SCOPE_WRITTEN, written_scope


class Node(BaseModel):
    uuid: str
    name: str
    type: str


class Edge(BaseModel):
    uuid: str
    fact: str = Field(description="The fact as a sentence.")
    predicate: str
    source: Node
    target: Node
    valid_at: datetime | None = Field(description="When it became true in the world (event time).")
    invalid_at: datetime | None = Field(description="When it stopped being true (event time); null while it holds.")
    created_at: datetime = Field(description="When Mnemo learned it (transaction time).")
    expired_at: datetime | None = Field(description="When Mnemo stopped believing it (transaction time).")
    status: Literal["active", "invalidated", "retracted"]
    episodes: list[str] = Field(description="The episode (memory) ids it came from, or [\"recorded\"].")
    invalidated_by: str | None = None
    retracted_reason: str | None = None
    score: float | None = Field(default=None, ge=0.0, le=1.0, description="Search only: relevance in [0, 1].")
    intent_meta: dict[str, Any] | None = None


class Episode(BaseModel):
    uuid: str
    content: str
    group_id: str
    created_at: datetime
    status: Literal["queued"] = "queued"


class EpisodeResult(BaseModel):
    episode: Episode
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


class FactResult(BaseModel):
    edge: Edge
    invalidated: list[str] = Field(description="The uuids of the facts this one retired.")
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


class SearchResult(BaseModel):
    edges: list[Edge]
    group_id: str


class RetractResult(BaseModel):
    edge: Edge
    scope: dict[str, str] = Field(description=SCOPE_WRITTEN)


def node(ref: EntityRef | Entity) -> Node:
    return Node(uuid=ref.id, name=ref.name, type=ref.type)


def edge(fact: Fact, score: float | None = None) -> Edge:
    return Edge(
        uuid=fact.uuid, fact=fact.fact, predicate=fact.predicate, source=node(fact.subject), target=node(fact.object),
        valid_at=fact.valid_at, invalid_at=fact.invalid_at, created_at=fact.created_at, expired_at=fact.expired_at,
        status=fact.status.value, episodes=fact.provenance, invalidated_by=fact.invalidated_by,
        retracted_reason=fact.retracted_reason, score=score, intent_meta=fact.intent_meta,
    )


def episode(memory: Memory) -> EpisodeResult:
    return EpisodeResult(episode=Episode(uuid=memory.id, content=memory.raw, group_id=memory.group_id,
                                         created_at=memory.created_at), scope=written_scope(memory.namespace))


def recorded(fact: Fact, invalidated: list[Fact]) -> FactResult:
    return FactResult(edge=edge(fact), invalidated=[f.uuid for f in invalidated], scope=written_scope(fact.namespace))


def retracted(fact: Fact) -> RetractResult:
    return RetractResult(edge=edge(fact), scope=written_scope(fact.namespace))


class EdgeHistory(BaseModel):
    edge: Edge
    history: list[FactAudit] = Field(description="Created, invalidated by which fact, retracted by whom and why.")


class EntityResult(BaseModel):
    node: Node
    aliases: list[str]
    edges: list[Edge] = Field(description="Its active edges, newest first.")
