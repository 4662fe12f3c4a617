"""r3's reads of the fact graph: a neighbourhood by entity name, the connections from one entity, and,
when no entity is named, a bounded overview of the user's graph.

A thin layer over `GraphTraversal` (services/facts/traversal.py), the one walk the REST routes use
too: this module resolves names to nodes and shapes r3's answers; every hop, bound and namespace
check is the traversal's. The overview is not a walk and not a Scan: the facts of the user's
`OVERVIEW_MEMORIES` newest live memories (one Query of the user's memories, then one provenance
Query each) and up to `OVERVIEW_RECORDED` of the user's recorded facts (one Query of their listing,
which is ordered by group and uuid, not by time), active ones only, newest first.
"""

from __future__ import annotations

from pydantic import BaseModel

from mnemo.domain.graph import Entity, Fact, FactStatus, canonical_predicate
from mnemo.domain.models import Principal, Status
from mnemo.domain.namespace import Namespace, NamespaceFilter
from mnemo.ports import BrowseQuery, FactStore, MemoryStore
from mnemo.services.facts.traversal import FANOUT, MAX_DEPTH, GraphTraversal

__all__ = ["MAX_DEPTH", "OVERVIEW_MEMORIES", "Connection", "OVERVIEW_RECORDED", "ConnectionService", "Neighbourhood", "Overview"]

OVERVIEW_MEMORIES = 20  # newest live memories whose facts an overview reads (one provenance Query each)
OVERVIEW_RECORDED = 200  # recorded facts an overview reads (one Query of the user's listing)


class Neighbourhood(BaseModel):
    entity: Entity
    facts: list[Fact]


class Overview(BaseModel):
    """The user's graph when no entity is named: the newest active facts of the user's newest
    memories and recorded facts, and how far it looked (`memories_read`, `recorded_read`)."""

    facts: list[Fact]
    memories_read: int
    recorded_read: int


class Connection(BaseModel):
    """One path from the start: the entity reached, the facts walked (in order) and the hop count."""

    entity: str
    entity_id: str
    depth: int
    facts: list[Fact]


class ConnectionService:
    def __init__(self, facts: FactStore, traversal: GraphTraversal | None = None, *,
                 memories: MemoryStore | None = None) -> None:
        self._facts = facts
        self._traversal = traversal or GraphTraversal(facts)
        self._memories = memories

    def overview(self, principal: Principal, namespace: Namespace, *, entity_type: str | None, predicate: str | None,
                 limit: int) -> Overview:
        """At most `limit` active facts of the namespace's user and group, newest first: those
        derived from the user's `OVERVIEW_MEMORIES` newest live memories and up to `OVERVIEW_RECORDED`
        of the user's recorded facts; only `predicate` (as the adjacency reads it), only edges with
        an end of `entity_type`."""
        namespace = self._traversal.enter(principal, namespace)
        found: dict[str, Fact] = {}
        memories = []
        if self._memories is not None:
            memories = self._memories.browse(BrowseQuery(
                scope=NamespaceFilter(tenant=namespace.tenant, user_id=namespace.user_id, group_id=namespace.group_id),
                statuses=[Status.OPEN, Status.COMPLETED], authors=["user", "agent"], limit=OVERVIEW_MEMORIES)).items
            for memory in memories:
                found.update((f.uuid, f) for f in self._facts.for_memory(namespace.tenant, memory.id))
        recorded = self._facts.recorded(namespace.tenant, namespace.user_id, limit=OVERVIEW_RECORDED).facts
        found.update((f.uuid, f) for f in recorded)
        wanted = canonical_predicate(predicate) if predicate else None
        facts = [
            f for f in found.values()
            if f.status == FactStatus.ACTIVE and (f.namespace.user_id, f.namespace.group_id) == (namespace.user_id, namespace.group_id)
            and (wanted is None or canonical_predicate(f.predicate) == wanted)
            and (entity_type is None or entity_type in (f.subject.type, f.object.type))
        ]
        facts.sort(key=lambda f: (f.created_at, f.uuid), reverse=True)
        return Overview(facts=facts[:limit], memories_read=len(memories), recorded_read=len(recorded))

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
