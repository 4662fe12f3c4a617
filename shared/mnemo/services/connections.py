"""Reading the fact graph outward from a named entity: its neighbourhood, and the paths between two.

Every hop is one `FactStore.adjacency` Query inside the caller's namespace (tenant, user, group), so
a traversal never leaves it; only active facts are walked. Reads start from a named entity: there
is no whole-graph listing (that would be a Scan).
"""

from __future__ import annotations

from collections import deque

from pydantic import BaseModel

from mnemo.domain.graph import Entity, Fact, canonical_predicate
from mnemo.domain.models import Principal
from mnemo.domain.namespace import Namespace
from mnemo.errors import NotFoundError
from mnemo.ports import FactStore
from mnemo.services.metering import Meter
from mnemo.services.permissions import Operation, authorize

MAX_DEPTH = 3
FANOUT = 50  # edges read per entity per hop
MAX_VISITED = 500  # entities one traversal may reach, whatever the depth


class Neighbourhood(BaseModel):
    entity: Entity
    facts: list[Fact]


class Connection(BaseModel):
    """One path from the start: the entity reached, the facts walked (in order) and the hop count."""

    entity: str
    entity_id: str
    depth: int
    facts: list[Fact]


class ConnectionService:
    def __init__(self, facts: FactStore, *, meter: Meter | None = None) -> None:
        self._facts = facts
        self._meter = meter or Meter()

    def neighbourhood(self, principal: Principal, namespace: Namespace, entity_name: str, *, entity_type: str | None,
                      predicate: str | None, limit: int) -> Neighbourhood:
        """The entity `entity_name` names and its active facts, optionally only one predicate and
        only edges whose other end has `entity_type`."""
        authorize(principal, Operation.READ_FACTS)
        self._meter.charge(principal, Operation.READ_FACTS)
        namespace = _confined(principal, namespace)
        entity = self._entity(namespace, entity_name)
        wanted = canonical_predicate(predicate) if predicate else None
        facts = []
        for fact in self._facts.for_entity(namespace, entity.id, limit=FANOUT * 4):
            other = fact.object if fact.subject.id == entity.id else fact.subject
            if wanted is not None and fact.predicate != wanted:
                continue
            if entity_type is not None and other.type != entity_type:
                continue
            facts.append(fact)
        return Neighbourhood(entity=entity, facts=facts[:limit])

    def connections(self, principal: Principal, namespace: Namespace, start: str, target: str | None,
                    max_depth: int) -> list[Connection]:
        """Breadth first from `start`, at most `max_depth` hops: every entity reached with the
        shortest path to it, or, given `target`, only the path to the target (empty if none)."""
        authorize(principal, Operation.READ_FACTS)
        self._meter.charge(principal, Operation.READ_FACTS)
        namespace = _confined(principal, namespace)
        origin = self._entity(namespace, start)
        goal = self._entity(namespace, target).id if target else None
        paths: dict[str, list[str]] = {origin.id: []}  # entity id -> fact uuids walked to reach it
        frontier: deque[str] = deque([origin.id])
        while frontier and len(paths) < MAX_VISITED:
            here = frontier.popleft()
            if len(paths[here]) >= max_depth or here == goal:
                continue
            for edge in self._facts.adjacency(namespace, here, limit=FANOUT):
                if edge.other_id not in paths:
                    paths[edge.other_id] = [*paths[here], edge.fact_uuid]
                    frontier.append(edge.other_id)
        reached = [e for e in paths if e != origin.id and (goal is None or e == goal)]
        facts = {f.uuid: f for f in self._facts.get_many(namespace.tenant, sorted({u for e in reached for u in paths[e]}))}
        names = {e.id: e.name for e in self._facts.entities(namespace, reached)}
        return sorted(
            (Connection(entity=names.get(e, e), entity_id=e, depth=len(paths[e]), facts=[facts[u] for u in paths[e] if u in facts])
             for e in reached),
            key=lambda c: (c.depth, c.entity.casefold()),
        )

    def _entity(self, namespace: Namespace, name: str) -> Entity:
        entity = self._facts.find_entity(namespace, name)
        if entity is None:
            raise NotFoundError(f"entity {name!r} not found")
        return entity


def _confined(principal: Principal, namespace: Namespace) -> Namespace:
    """A user-bound key reads its own user's graph, whatever namespace the surface asked for."""
    user_id = principal.confine(namespace.user_id) or namespace.user_id
    return namespace if user_id == namespace.user_id else namespace.model_copy(update={"user_id": user_id})
