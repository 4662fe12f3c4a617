"""REST reads of the fact graph: an entity's neighbours and the paths between two entities. One
walk serves these routes and r3's graph tools: services/facts/traversal.py."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from mnemo.domain.graph import FactStatus
from mnemo.domain.models import NamespaceId, Principal
from mnemo.domain.namespace import Namespace
from mnemo.services.facts.traversal import FANOUT, MAX_DEPTH, MAX_PATHS
from mnemo.surfaces.facade import ServiceFacade
from mnemo.surfaces.fact_views import Edge, Node, edge, node
from mnemo.surfaces.rest.api import principal, services
from mnemo.surfaces.rest.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/v1", tags=["facts"], responses=ERROR_RESPONSES)
Caller = Annotated[Principal, Depends(principal)]
Services = Annotated[ServiceFacade, Depends(services)]
UserId = Annotated[NamespaceId | None, Query(description=(
    "The user whose graph is read: default `default`; a key bound to a user: that user (naming another is 403)."))]
GroupId = Annotated[NamespaceId, Query(description="The group (sub-namespace) whose graph is read.")]


class Neighbour(BaseModel):
    node: Node = Field(description="The entity at the other end of the edge.")
    edge: Edge
    direction: Literal["out", "in"] = Field(description="`out`: the entity is the edge's source; `in`: its target.")


class NeighboursResult(BaseModel):
    model_config = {"json_schema_extra": {"examples": [{"node": {"uuid": "…", "name": "Alice", "type": "person"},
                                                        "neighbours": [{"node": {"uuid": "…", "name": "Acme", "type": "organization"},
                                                                        "edge": {"uuid": "…", "fact": "Alice works at Acme"},
                                                                        "direction": "out"}]}]}}

    node: Node
    neighbours: list[Neighbour] = Field(description="Newest first.")


class GraphPath(BaseModel):
    length: int = Field(description="Hops (edges) on the path.")
    nodes: list[Node] = Field(description="From the start to the end; `edges[i]` joins `nodes[i]` and `nodes[i + 1]`.")
    edges: list[Edge]


class PathsResult(BaseModel):
    model_config = {"json_schema_extra": {"examples": [{"from": {"uuid": "…", "name": "Alice", "type": "person"},
                                                        "to": {"uuid": "…", "name": "Berlin", "type": "place"},
                                                        "max_depth": 2, "paths": [{"length": 2, "nodes": [], "edges": []}]}]}}

    from_: Node = Field(alias="from", serialization_alias="from")
    to: Node
    max_depth: int
    paths: list[GraphPath] = Field(description=f"The shortest paths (at most {MAX_PATHS}); empty when none is that short.")


@router.get("/entities/{entity_uuid}/neighbours", response_model=NeighboursResult)
def neighbours(
    entity_uuid: str, caller: Caller, container: Services, user_id: UserId = None, group_id: GroupId = "default",
    predicate: Annotated[str | None, Query(max_length=100, description="Only this relation, e.g. `works_at`.")] = None,
    direction: Annotated[Literal["out", "in"] | None, Query(description="Only outgoing or incoming edges.")] = None,
    include_inactive: Annotated[bool, Query(description="Also invalidated facts (never retracted ones).")] = False,
    limit: Annotated[int, Query(ge=1, le=FANOUT * 2)] = FANOUT,
) -> NeighboursResult:
    namespace = Namespace(tenant=caller.tenant, user_id=caller.user_for(user_id), group_id=group_id)
    graph = container.traversal
    entity = graph.entity(caller, namespace, entity_uuid)
    statuses = (FactStatus.ACTIVE, FactStatus.INVALIDATED) if include_inactive else (FactStatus.ACTIVE,)
    found = graph.neighbours(caller, namespace, entity.id, predicate=predicate, direction=direction, statuses=statuses,
                             limit=limit)
    return NeighboursResult(node=node(entity), neighbours=[
        Neighbour(node=node(n.fact.object if n.direction == "out" else n.fact.subject), edge=edge(n.fact), direction=n.direction)
        for n in found])


@router.get("/paths", response_model=PathsResult, response_model_by_alias=True)
def paths(
    caller: Caller, container: Services,
    from_: Annotated[str, Query(alias="from", min_length=1, max_length=100, description="The start entity's uuid.")],
    to: Annotated[str, Query(min_length=1, max_length=100, description="The end entity's uuid.")],
    max_depth: Annotated[int, Query(ge=1, le=MAX_DEPTH, description=f"Hops to follow, 1-{MAX_DEPTH}.")] = 2,
    user_id: UserId = None, group_id: GroupId = "default",
) -> PathsResult:
    namespace = Namespace(tenant=caller.tenant, user_id=caller.user_for(user_id), group_id=group_id)
    graph = container.traversal
    start, end = graph.entity(caller, namespace, from_), graph.entity(caller, namespace, to)
    found = graph.paths(caller, namespace, start.id, end.id, max_depth)
    nodes = {start.id: node(start), end.id: node(end)}
    for path in found:
        for fact in path.facts:
            nodes.setdefault(fact.subject.id, node(fact.subject))
            nodes.setdefault(fact.object.id, node(fact.object))
    return PathsResult.model_validate({"from": node(start), "to": node(end), "max_depth": max_depth, "paths": [
        GraphPath(length=p.length, nodes=[nodes[i] for i in p.entity_ids], edges=[edge(f) for f in p.facts])
        for p in found]})
