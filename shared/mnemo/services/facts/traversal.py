"""The one walk over the fact graph: an entity's neighbours, and the shortest paths between two.

Every hop is one `EntityGraph.adjacency` Query under the entity's partition, which is keyed by the
caller's namespace (tenant, user, group): a walk cannot reach another namespace's nodes, and the
facts it returns are checked against the namespace once more when they are read (defence in
depth). Fan-out is bounded twice: at most `fanout` edge ends are read per entity per hop, and at
most `max_visited` entities are reached by one walk, whatever the depth. Only active, positive
facts are walked (a negation is a fact about two entities, not a link between them); a neighbour
read may ask for other statuses, and lists negations with their polarity. Reads start from a known
entity: there is no whole-graph listing (that would be a Scan).

Both the REST routes (`/v1/entities/{uuid}/neighbours`, `/v1/paths`) and r3's graph tools
(services/facts/connections.py) read the graph through this service.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from mnemo.domain.graph import Entity, Fact, FactStatus, graph_key
from mnemo.domain.models import Principal
from mnemo.domain.namespace import Namespace
from mnemo.errors import NotFoundError
from mnemo.ports import EntityGraph
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import Operation, authorize

__all__ = ["FANOUT", "MAX_DEPTH", "MAX_PATHS", "MAX_VISITED", "GraphTraversal", "Neighbour", "Path", "Reach"]

MAX_DEPTH = 3
FANOUT = 50  # edge ends read per entity per hop
MAX_VISITED = 500  # entities one walk may reach, whatever the depth
MAX_PATHS = 10  # shortest paths returned between two entities

Direction = Literal["out", "in"]


class Neighbour(BaseModel):
    """One edge at the entity: the fact, which way it points from the entity, and the other end."""

    fact: Fact
    direction: Direction  # "out": the entity is the subject
    entity_id: str  # the other end


class Path(BaseModel):
    """A path of facts from one entity to another: `entity_ids[0]` is the start, `facts[i]` joins
    `entity_ids[i]` and `entity_ids[i + 1]`."""

    entity_ids: list[str]
    facts: list[Fact]

    @property
    def length(self) -> int:
        return len(self.facts)


class Reach(BaseModel):
    """What a breadth-first walk from `origin` found: every entity reached, each with the facts
    (uuids, in order) of one shortest path to it."""

    origin: str
    paths: dict[str, list[str]]
    truncated: bool  # the walk stopped at `max_visited`


class GraphTraversal:
    def __init__(self, facts: EntityGraph, *, fanout: int = FANOUT, max_visited: int = MAX_VISITED,
                 meter: Meter | None = None) -> None:
        self._facts = facts
        self._fanout = fanout
        self._max_visited = max_visited
        self._meter = meter or Meter()

    def _enter(self, principal: Principal, namespace: Namespace, *, walk: bool = False) -> Namespace:
        """Every entry: the permission check; the user `Principal.confine` allows (a namespace built
        without a user_id is the key's own user for a user-bound key, another user is refused); and,
        for a read that walks (neighbours, reach, paths), one retrieval metered."""
        authorize(principal, Operation.TRAVERSE_FACTS)
        if walk:
            self._meter.charge(principal, Operation.TRAVERSE_FACTS)
        user_id = principal.user_for(namespace.user_id if "user_id" in namespace.model_fields_set else None)
        return namespace if user_id == namespace.user_id else namespace.model_copy(update={"user_id": user_id})

    def enter(self, principal: Principal, namespace: Namespace) -> Namespace:
        """For a bounded read of the graph that is not a walk (services/facts/connections.py's overview):
        the same permission, user confinement and one metered retrieval as a walk."""
        return self._enter(principal, namespace, walk=True)

    # -- entities ------------------------------------------------------------------------
    def entity(self, principal: Principal, namespace: Namespace, entity_id: str) -> Entity:
        """The node with this id in this namespace; NotFoundError otherwise (another namespace's
        node is not found, not forbidden: its existence is not disclosed)."""
        namespace = self._enter(principal, namespace)
        found = self._facts.entities(namespace, [entity_id])
        if not found:
            raise NotFoundError(f"entity {entity_id} not found", subject="entity", ident=entity_id)
        return found[0]

    def named(self, principal: Principal, namespace: Namespace, name: str) -> Entity:
        """The node `name` (or one of its aliases) resolves to in this namespace."""
        namespace = self._enter(principal, namespace)
        entity = self._facts.find_entity(namespace, name)
        if entity is None:
            raise NotFoundError(f"entity {name!r} not found", subject="entity", ident=name)
        return entity

    # -- neighbours ----------------------------------------------------------------------
    def neighbours(
        self, principal: Principal, namespace: Namespace, entity_id: str, *, predicate: str | None = None,
        direction: Direction | None = None, statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,), limit: int = FANOUT,
    ) -> list[Neighbour]:
        """The edges at one entity, newest first: only `predicate` (through the sk prefix, not a
        filter), only one `direction`, active facts unless `statuses` says otherwise."""
        namespace = self._enter(principal, namespace, walk=True)
        ends = self._facts.adjacency(namespace, entity_id, statuses=statuses, direction=direction,
                                     predicate=predicate, limit=limit)
        facts = {f.uuid: f for f in self._hydrate(namespace, [e.fact_uuid for e in ends])}
        found = [Neighbour(fact=facts[e.fact_uuid], direction=e.direction, entity_id=e.other_id)
                 for e in ends if e.fact_uuid in facts]
        return sorted(found, key=lambda n: (n.fact.created_at, n.fact.uuid), reverse=True)

    # -- walks ---------------------------------------------------------------------------
    def reach(self, principal: Principal, namespace: Namespace, origin: str, max_depth: int,
              goal: str | None = None) -> Reach:
        """Breadth first from `origin` over active facts, at most `max_depth` hops; a `goal` is not
        walked through (the walk still finishes the hop it was found at)."""
        namespace = self._enter(principal, namespace, walk=True)
        layers = self._layers(namespace, origin, max_depth, goal)
        paths: dict[str, list[str]] = {origin: []}
        for layer in layers.levels:
            for node, parents in layer.items():
                previous, fact_uuid = parents[0]
                paths[node] = [*paths[previous], fact_uuid]
        return Reach(origin=origin, paths=paths, truncated=layers.truncated)

    def paths(self, principal: Principal, namespace: Namespace, start: str, goal: str, max_depth: int,
              limit: int = MAX_PATHS) -> list[Path]:
        """The shortest paths (at most `limit`) from `start` to `goal` of at most `max_depth` hops
        over active facts; [] if there is none that short."""
        namespace = self._enter(principal, namespace, walk=True)
        if start == goal:
            return [Path(entity_ids=[start], facts=[])]
        layers = self._layers(namespace, start, max_depth, goal)
        if not layers.levels or goal not in layers.levels[-1]:
            return []
        parents = {node: links for layer in layers.levels for node, links in layer.items()}
        found: list[tuple[list[str], list[str]]] = []
        self._unwind(parents, start, goal, [goal], [], found, limit)
        facts = {f.uuid: f for f in self._hydrate(namespace, sorted({u for _, us in found for u in us}))}
        return [Path(entity_ids=ids, facts=[facts[u] for u in uuids])
                for ids, uuids in found if all(u in facts for u in uuids)]

    # -- helpers -------------------------------------------------------------------------
    def _layers(self, namespace: Namespace, origin: str, max_depth: int, goal: str | None) -> _Layers:
        """Hop by hop: each level maps the entities first reached at that depth to every (previous
        entity, fact uuid) that reaches them from the level before; stops after the goal's level."""
        seen = {origin}
        frontier = [origin]
        levels: list[dict[str, list[tuple[str, str]]]] = []
        truncated = False
        for _ in range(max_depth):
            level: dict[str, list[tuple[str, str]]] = {}
            for here in frontier:
                for end in self._facts.adjacency(namespace, here, limit=self._fanout):
                    if end.polarity == "negative":  # "Alice does not work at Acme" connects nothing
                        continue
                    if end.other_id in seen and end.other_id not in level:
                        continue
                    if end.other_id not in level and len(seen) >= self._max_visited:
                        truncated = True
                        continue
                    seen.add(end.other_id)
                    level.setdefault(end.other_id, []).append((here, end.fact_uuid))
            if not level:
                break
            levels.append(level)
            if goal is not None and goal in level:
                break
            frontier = sorted(level)
        return _Layers(levels, truncated)

    def _unwind(self, parents: dict[str, list[tuple[str, str]]], start: str, node: str, ids: list[str],
                uuids: list[str], found: list[tuple[list[str], list[str]]], limit: int) -> None:
        if len(found) >= limit:
            return
        if node == start:
            found.append((ids[::-1], uuids[::-1]))
            return
        for previous, fact_uuid in parents[node]:
            self._unwind(parents, start, previous, [*ids, previous], [*uuids, fact_uuid], found, limit)

    def _hydrate(self, namespace: Namespace, fact_uuids: Sequence[str]) -> list[Fact]:
        """The facts, each checked to belong to the namespace walked (defence in depth: the
        adjacency partition is already the namespace's)."""
        return [f for f in self._facts.get_many(namespace.tenant, fact_uuids) if graph_key(f.namespace) == graph_key(namespace)]


class _Layers:
    __slots__ = ("levels", "truncated")

    def __init__(self, levels: list[dict[str, list[tuple[str, str]]]], truncated: bool) -> None:
        self.levels = levels
        self.truncated = truncated
