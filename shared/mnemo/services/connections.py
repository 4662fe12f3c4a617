"""r3's reads of the fact graph by entity name: a neighbourhood, and the connections from one entity.

A thin layer over `GraphTraversal` (services/graph_traversal.py), the one walk the REST routes use
too: this module resolves names to nodes and shapes r3's answers; every hop, bound and namespace
check is the traversal's.
"""

from __future__ import annotations

from pydantic import BaseModel

from mnemo.domain.graph import Entity, Fact
from mnemo.domain.models import Principal
from mnemo.domain.namespace import Namespace
from mnemo.ports import FactStore
from mnemo.services.graph_traversal import FANOUT, MAX_DEPTH, GraphTraversal

__all__ = ["MAX_DEPTH", "Connection", "ConnectionService", "Neighbourhood"]


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
    def __init__(self, facts: FactStore, traversal: GraphTraversal | None = None) -> None:
        self._facts = facts
        self._traversal = traversal or GraphTraversal(facts)

    def neighbourhood(self, principal: Principal, namespace: Namespace, entity_name: str, *, entity_type: str | None,
                      predicate: str | None, limit: int) -> Neighbourhood:
        """The entity `entity_name` names and its active facts, optionally only one predicate and
        only edges whose other end has `entity_type`."""
        entity = self._traversal.named(principal, namespace, entity_name)
        # A type filter drops edges after the read, so read wider than `limit` when there is one.
        width = FANOUT * 4 if entity_type is not None else max(limit, 1)
        facts = []
        for found in self._traversal.neighbours(principal, namespace, entity.id, predicate=predicate, limit=width):
            other = found.fact.object if found.direction == "out" else found.fact.subject
            if entity_type is None or other.type == entity_type:
                facts.append(found.fact)
        return Neighbourhood(entity=entity, facts=facts[:limit])

    def connections(self, principal: Principal, namespace: Namespace, start: str, target: str | None,
                    max_depth: int) -> list[Connection]:
        """Breadth first from `start`, at most `max_depth` hops: every entity reached with the
        shortest path to it, or, given `target`, only the path to the target (empty if none)."""
        origin = self._traversal.named(principal, namespace, start)
        goal = self._traversal.named(principal, namespace, target).id if target else None
        walk = self._traversal.reach(principal, namespace, origin.id, max_depth, goal)
        reached = [e for e in walk.paths if e != origin.id and (goal is None or e == goal)]
        facts = {f.uuid: f for f in self._facts.get_many(namespace.tenant, sorted({u for e in reached for u in walk.paths[e]}))}
        names = {e.id: e.name for e in self._facts.entities(namespace, reached)}
        return sorted(
            (Connection(entity=names.get(e, e), entity_id=e, depth=len(walk.paths[e]),
                        facts=[facts[u] for u in walk.paths[e] if u in facts])
             for e in reached),
            key=lambda c: (c.depth, c.entity.casefold()),
        )
