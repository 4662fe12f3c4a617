"""REST for the episodes & facts product: the same operations and JSON shapes as /mcp/facts."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, field_validator

from mnemo.domain.commands import CaptureCommand, check_text
from mnemo.domain.fact_commands import FactScope, FactUuid, RecordFactCommand
from mnemo.domain.models import NamespaceId, Principal
from mnemo.domain.timestamps import IsoTimestamp, SaidAt
from mnemo.services.facts.search import FACT_RELEVANCE_FLOOR, FactSearchQuery
from mnemo.surfaces.facade import ServiceFacade
from mnemo.surfaces.fact_views import (
    EdgeHistory,
    EntityResult,
    EpisodeResult,
    FactResult,
    RetractResult,
    SearchResult,
    edge,
    episode,
    node,
    recorded,
    retracted,
)
from mnemo.surfaces.rest.api import principal, services
from mnemo.surfaces.rest.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/v1", tags=["facts"], responses=ERROR_RESPONSES)
Caller = Annotated[Principal, Depends(principal)]
Services = Annotated[ServiceFacade, Depends(services)]


class AddEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"content": "Alice moved to Lisbon in May."}]})

    content: str = Field(description="The prose to ingest; non-empty, at most 8 KB.")
    group_id: NamespaceId = "default"
    extract_intent: StrictBool = False  # strict JSON types, as every REST body (rest/api.py)
    captured_at: SaidAt | None = Field(default=None, description="When it was said; the event time of its facts.")

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        return check_text(value, "content")


class RecordFact(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"subject": "Alice", "predicate": "lives_in", "object": "Lisbon", "valid_at": "2025-05-01T00:00:00Z"}]})

    subject: str
    predicate: str
    object: str
    group_id: NamespaceId = "default"
    extract_intent: StrictBool = False
    valid_at: IsoTimestamp | None = Field(default=None, description="When it became true in the world; default now.")


class SearchFacts(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"query": "Where does Alice live?"}, {"query": "Where did Alice live?", "as_of": "2025-03-15T00:00:00Z"}]})

    query: str = Field(min_length=1, max_length=2000)
    group_id: NamespaceId = "default"
    limit: StrictInt = Field(default=10, ge=1, le=100)
    threshold: StrictFloat | None = Field(default=None, ge=0.0, le=1.0, description=(
        f"Drop facts scoring below this, in [0, 1]. Default {FACT_RELEVANCE_FLOOR}: below it a fact is unrelated to "
        "the query, so fewer than `limit` edges, or none, means nothing else matched. 0 returns up to `limit`."))
    as_of: IsoTimestamp | None = Field(default=None, description="Event time: the facts true then (valid_at <= as_of < "
                                   "invalid_at), including ones invalidated since; retracted facts never.")


class Retract(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"edge_uuid": "…", "reason": "wrong"}]})

    edge_uuid: FactUuid
    reason: str | None = Field(default=None, max_length=1000)


@router.post("/episodes", status_code=201, response_model=EpisodeResult)
def add_episode(body: AddEpisode, caller: Caller, container: Services) -> EpisodeResult:
    metadata = {"extract_intent": True} if body.extract_intent else {}
    command = CaptureCommand(raw=body.content, group_id=body.group_id, captured_at=body.captured_at, as_user=True,
                             metadata=metadata)
    return episode(container.memories.capture(caller, command))


@router.post("/facts", status_code=201, response_model=FactResult)
def record_fact(body: RecordFact, caller: Caller, container: Services) -> FactResult:
    command = RecordFactCommand(subject=body.subject, predicate=body.predicate, object=body.object,
                                group_id=body.group_id, valid_at=body.valid_at)
    done = container.facts.record_triple(caller, command, extract_intent=body.extract_intent)
    return recorded(done.edge, done.invalidated)


@router.post("/search", response_model=SearchResult)
def search(body: SearchFacts, caller: Caller, container: Services) -> SearchResult:
    found = container.fact_search.search(caller, FactSearchQuery(**body.model_dump()))
    return SearchResult(edges=[edge(s.fact, s.score) for s in found], group_id=body.group_id)


@router.post("/retract", response_model=RetractResult)
def retract(body: Retract, caller: Caller, container: Services) -> RetractResult:
    return retracted(container.facts.retract(caller, body.edge_uuid, body.reason))


@router.get("/facts/{fact_uuid}", response_model=EdgeHistory)
def get_fact(fact_uuid: str, caller: Caller, container: Services) -> EdgeHistory:
    return EdgeHistory(edge=edge(container.facts.get(caller, fact_uuid)), history=container.facts.history(caller, fact_uuid))


@router.get("/entities/{entity_uuid}", response_model=EntityResult)
def get_entity(
    entity_uuid: str, caller: Caller, container: Services,
    user_id: Annotated[NamespaceId | None, Query(description="Default `default`; a user-bound key: its user.")] = None,
    group_id: Annotated[NamespaceId, Query()] = "default",
) -> EntityResult:
    found, edges = container.facts.entity(caller, entity_uuid, FactScope(user_id=user_id, group_id=group_id))
    return EntityResult(node=node(found), aliases=found.aliases, edges=[edge(f) for f in edges])
