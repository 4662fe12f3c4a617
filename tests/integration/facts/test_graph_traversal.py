"""The fact-graph walk (services/facts/traversal.py) over moto, through REST and the service:
neighbours by relation and status, shortest paths up to a depth, isolation by tenant and group
(each with its positive control), the fan-out and visit bounds, and the scope it needs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mnemo.domain.graph import EntityMention, recorded_fact
from mnemo.domain.models import Permission, Principal
from mnemo.domain.namespace import Namespace
from mnemo.services.facts.traversal import GraphTraversal
from tests.integration.conftest import OTHER_KEY, auth

WRITER_KEY = "mn_writeronly_0123456789abcdefghijklmnop"
AT = datetime(2025, 6, 1, tzinfo=UTC)


def record(http: Any, subject: str, predicate: str, obj: str, **extra: Any) -> dict[str, Any]:
    response = http.post("/v1/facts", json={"subject": subject, "predicate": predicate, "object": obj, **extra}, headers=auth())
    assert response.status_code == 201, response.text
    edge: dict[str, Any] = response.json()["edge"]
    return edge


def names(body: dict[str, Any]) -> set[str]:
    return {n["node"]["name"] for n in body["neighbours"]}


def test_neighbours_by_relation_direction_and_status(http) -> None:
    berlin = record(http, "Alice", "lives in", "Berlin", valid_at="2025-01-01T00:00:00Z")
    record(http, "Alice", "moved to", "Lisbon", valid_at="2025-05-01T00:00:00Z")  # retires Berlin
    works = record(http, "Alice", "works_at", "Acme")
    record(http, "Bob", "knows", "Alice")
    alice = works["source"]["uuid"]

    # Given Alice's graph, when her neighbours are read, then only the active edges come back
    body = http.get(f"/v1/entities/{alice}/neighbours", headers=auth()).json()
    assert body["node"]["name"] == "Alice" and names(body) == {"Lisbon", "Acme", "Bob"}
    assert {n["node"]["name"]: n["direction"] for n in body["neighbours"]}["Bob"] == "in"
    assert all(n["edge"]["status"] == "active" for n in body["neighbours"])
    # by relation type (the seed's underscore spelling), by direction, and with the retired facts
    only = http.get(f"/v1/entities/{alice}/neighbours?predicate=works_at", headers=auth()).json()
    assert [n["edge"]["uuid"] for n in only["neighbours"]] == [works["uuid"]]
    assert names(http.get(f"/v1/entities/{alice}/neighbours?direction=in", headers=auth()).json()) == {"Bob"}
    every = http.get(f"/v1/entities/{alice}/neighbours?include_inactive=true", headers=auth()).json()
    assert names(every) == {"Lisbon", "Acme", "Bob", "Berlin"}
    assert {n["edge"]["uuid"]: n["edge"]["status"] for n in every["neighbours"]}[berlin["uuid"]] == "invalidated"


def test_paths_are_the_shortest_within_max_depth(http) -> None:
    ab = record(http, "Ann", "knows", "Ben")
    record(http, "Ann", "knows", "Dee")
    record(http, "Ben", "works with", "Cy")
    record(http, "Dee", "works with", "Cy")
    record(http, "Cy", "lives in", "Oslo")
    ann, ben = ab["source"]["uuid"], ab["target"]["uuid"]
    cy = http.get(f"/v1/entities/{ben}/neighbours?predicate=works_with", headers=auth()).json()["neighbours"][0]["node"]
    oslo = http.get(f"/v1/entities/{cy['uuid']}/neighbours?predicate=lives_in", headers=auth()).json()["neighbours"][0]["node"]["uuid"]

    def paths(start: str, end: str, depth: int, key: str | None = None) -> Any:
        return http.get(f"/v1/paths?from={start}&to={end}&max_depth={depth}", headers=auth(key) if key else auth())

    # Two shortest paths Ann -> Cy (via Ben and via Dee), each with its facts in order
    two = paths(ann, cy["uuid"], 2).json()
    assert two["from"]["name"] == "Ann" and two["to"]["name"] == "Cy"
    assert sorted([n["name"] for n in p["nodes"]] for p in two["paths"]) == [["Ann", "Ben", "Cy"], ["Ann", "Dee", "Cy"]]
    assert all(p["length"] == 2 == len(p["edges"]) for p in two["paths"])
    assert [e["fact"] for e in two["paths"][0]["edges"]][0].startswith("Ann knows")
    # Oslo is three hops away: not within 2, found within 3
    assert paths(ann, oslo, 2).json()["paths"] == []
    assert {p["length"] for p in paths(ann, oslo, 3).json()["paths"]} == {3}
    # The depth is bounded (1-3) and named in the error
    too_deep = paths(ann, oslo, 4)
    assert too_deep.status_code == 400 and "max_depth" in too_deep.json()["error"]["message"]
    # A start equal to the end is a path of no hops
    assert paths(ann, ann, 1).json()["paths"] == [{"length": 0, "nodes": [two["from"]], "edges": []}]


def test_tenant_and_group_isolation_with_positive_controls(http, container, principal) -> None:
    edge = record(http, "Eve", "knows", "Fay")
    record(http, "Fay", "knows", "Gus", group_id="side")  # another group: its own Fay
    eve, fay = edge["source"]["uuid"], edge["target"]["uuid"]
    route = f"/v1/paths?from={eve}&to={fay}&max_depth=1"

    # Positive controls: the owner sees the neighbours and the path
    assert names(http.get(f"/v1/entities/{eve}/neighbours", headers=auth()).json()) == {"Fay"}
    assert len(http.get(route, headers=auth()).json()["paths"]) == 1
    # Another tenant, even knowing the uuids, finds nothing
    assert http.get(f"/v1/entities/{eve}/neighbours", headers=auth(OTHER_KEY)).json()["error"]["code"] == "not_found"
    assert http.get(route, headers=auth(OTHER_KEY)).status_code == 404
    # Another group of the same tenant neither
    assert http.get(f"/v1/entities/{eve}/neighbours?group_id=side", headers=auth()).status_code == 404
    assert http.get(route + "&group_id=side", headers=auth()).status_code == 404
    # Every hop stays in the namespace walked: Gus (group "side") is reached from side's Fay only
    me = principal
    default, side = Namespace(tenant="local", user_id="default"), Namespace(tenant="local", user_id="default", group_id="side")
    graph = container.traversal
    walked = graph.reach(me, default, eve, 3)
    assert set(walked.paths) == {eve, fay}
    side_fay = graph.named(me, side, "Fay")
    assert side_fay.id != fay and {e.name for e in container.fact_store.entities(side, list(graph.reach(me, side, side_fay.id, 3).paths))} == {"Fay", "Gus"}


def test_walking_needs_the_read_scope(http, container) -> None:
    edge = record(http, "Hal", "knows", "Ida")
    container.keys.ensure("local", "writer", ["memory:write"], WRITER_KEY)
    refused = http.get(f"/v1/entities/{edge['source']['uuid']}/neighbours", headers=auth(WRITER_KEY))
    assert refused.status_code == 403 and "memory:read" in refused.json()["error"]["message"]
    assert http.get(f"/v1/entities/{edge['source']['uuid']}/neighbours", headers=auth()).status_code == 200  # control


class CountingStore:
    """The fact store, counting the adjacency Queries a walk makes."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.queries = inner, 0

    def adjacency(self, *args: Any, **kwargs: Any) -> Any:
        self.queries += 1
        return self.inner.adjacency(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_fan_out_and_visits_are_bounded(container) -> None:
    ns = Namespace(tenant="local", user_id="default")
    me = Principal(tenant="local", key_prefix="k", permissions=frozenset({Permission.READ}))
    spokes = [f"Spoke{i:02d}" for i in range(30)]
    nodes = container.fact_store.resolve(ns, [EntityMention(name=n) for n in ["Hub", *spokes, "Rim"]], AT)
    for i, spoke in enumerate(spokes):
        container.fact_store.record(recorded_fact(f"hub-{i}", ns, nodes["Hub"], "knows", nodes[spoke], valid_at=AT, at=AT), actor="t")
        container.fact_store.record(recorded_fact(f"rim-{i}", ns, nodes[spoke], "knows", nodes["Rim"], valid_at=AT, at=AT), actor="t")
    hub = nodes["Hub"].id

    # Given a hub with 30 spokes: the default bounds reach every spoke and the rim (control)
    full = GraphTraversal(container.fact_store).reach(me, ns, hub, 2)
    assert len(full.paths) == 32 and not full.truncated
    # When each entity may read 5 edge ends per hop, then at most 5 spokes are reached at depth 1
    store = CountingStore(container.fact_store)
    narrow = GraphTraversal(store, fanout=5).reach(me, ns, hub, 1)
    assert len(narrow.paths) == 1 + 5 and store.queries == 1
    assert len(GraphTraversal(container.fact_store, fanout=5).neighbours(me, ns, hub, limit=5)) == 5
    # When a walk may visit 10 entities, it stops there and says so
    capped = GraphTraversal(container.fact_store, max_visited=10).reach(me, ns, hub, 3)
    assert len(capped.paths) == 10 and capped.truncated
    # One adjacency Query per entity expanded, never more (2 hops: the hub, then each of 30 spokes)
    store = CountingStore(container.fact_store)
    GraphTraversal(store).reach(me, ns, hub, 2)
    assert store.queries == 1 + 30
    # Many shortest paths are capped (30 run Hub -> Spoke -> Rim)
    paths = GraphTraversal(container.fact_store).paths(me, ns, hub, nodes["Rim"].id, 2)
    assert len(paths) == 10 and {p.length for p in paths} == {2}


def test_a_negation_is_listed_at_its_entities_but_never_walked(container) -> None:
    # "Bob is not allergic to peanuts" is a fact about Bob and peanuts, not a link between them (issue 29)
    ns = Namespace(tenant="local", user_id="default")
    me = Principal(tenant="local", key_prefix="k", permissions=frozenset({Permission.READ}))
    nodes = container.fact_store.resolve(ns, [EntityMention(name=n) for n in ["Bob", "Carol", "peanuts"]], AT)
    denied = recorded_fact("bob-peanuts", ns, nodes["Bob"], "is allergic to", nodes["peanuts"], valid_at=AT, at=AT)
    denied = denied.model_copy(update={"polarity": "negative"})
    container.fact_store.record(denied, actor="t")
    container.fact_store.record(recorded_fact("carol-peanuts", ns, nodes["Carol"], "is allergic to", nodes["peanuts"],
                                              valid_at=AT, at=AT), actor="t")
    walk = GraphTraversal(container.fact_store)
    bob, carol, peanuts = nodes["Bob"].id, nodes["Carol"].id, nodes["peanuts"].id
    # The positive control: Carol reaches peanuts (and through them nobody: Bob's edge is a negation)
    assert set(walk.reach(me, ns, carol, 2).paths) == {carol, peanuts}
    assert [p.length for p in walk.paths(me, ns, carol, peanuts, 1)] == [1]
    # Bob reaches nothing, and there is no path from Bob to peanuts or to Carol
    assert set(walk.reach(me, ns, bob, 3).paths) == {bob}
    assert walk.paths(me, ns, bob, peanuts, 3) == [] and walk.paths(me, ns, bob, carol, 3) == []
    # Yet the negation is listed at Bob, with its polarity (what a reader of Bob's facts needs)
    (listed,) = walk.neighbours(me, ns, bob)
    assert (listed.fact.uuid, listed.fact.polarity, listed.entity_id) == (denied.uuid, "negative", peanuts)
