"""The fact graph as its own aggregate, over moto and the real worker: recorded facts survive any
re-enrichment, retracts are soft and stay, derived facts follow their memories, entities resolve to
one node per canonical name, and namespaces (tenant, user, group) never see each other's facts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mnemo.adapters.aws import client
from mnemo.adapters.dynamodb.fact_items import NODE_SK, entity_pk
from mnemo.domain.commands import CaptureCommand, EditCommand
from mnemo.domain.fact_commands import FactScope, RecordFactCommand
from mnemo.domain.graph import EntityMention, FactStatus, canonical_key
from mnemo.domain.models import Permission, Principal
from mnemo.domain.namespace import Namespace
from mnemo.errors import ConflictError, ForbiddenError, NotFoundError
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function
from tests.integration.conftest import OTHER_KEY

AT = datetime(2023, 5, 6, 9, 0, tzinfo=UTC)
ALL_STATUSES = tuple(FactStatus)


@pytest.fixture
def services(aws, container, principal):
    sqs = client("sqs")
    sqs.set_queue_attributes(QueueUrl=aws["EnrichmentQueue"], Attributes={"VisibilityTimeout": "0"})
    poller = QueuePoller(sqs, aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)

    def drain() -> None:
        for _ in range(10):
            if poller.poll_once() == 0:
                return

    return container, principal, drain


def capture(services: Any, principal: Principal, text: str, **kwargs: Any) -> str:
    return services.memories.capture(principal, CaptureCommand(raw=text, as_user=True, captured_at=AT, **kwargs)).id


def triples(facts: list[Any]) -> set[tuple[str, str, str]]:
    return {(f.subject.name, f.predicate, f.object.name) for f in facts}


def test_a_recorded_fact_survives_re_enrichment_of_any_memory(services) -> None:
    container, principal, drain = services
    # Given a recorded fact, and memories that mention the same entities (one says the same triple)
    recorded = container.facts.record(principal, RecordFactCommand(subject="Alice", predicate="lives_in", object="Berlin"))
    assert recorded.predicate == "lives in" and recorded.provenance == ["recorded"]
    same = capture(container, principal, "Alice lives in Berlin")
    other = capture(container, principal, "Alice works at Acme Corp")
    drain()
    derived = container.fact_store.for_memory("local", same)
    assert triples(derived) == {("Alice", "lives in", "Berlin")} and derived[0].uuid != recorded.uuid
    assert derived[0].subject.id == recorded.subject.id  # one node for Alice, whoever wrote the fact
    # When every memory is re-enriched: edited, reindexed, archived
    container.memories.edit(principal, same, EditCommand(raw_text="Alice lives in Lisbon now"))
    container.memories.edit(principal, other, EditCommand(raw_text="Alice works at Initech"))
    drain()
    assert container.recovery.reindex() >= 2
    drain()
    container.memories.archive(principal, same)
    container.memories.archive(principal, other)
    drain()
    # Then the recorded fact is exactly as it was written, and its history has one line
    assert container.facts.get(principal, recorded.uuid) == recorded
    assert [a.action for a in container.facts.history(principal, recorded.uuid)] == ["created"]
    assert recorded.uuid in {f.uuid for f in container.facts.about(principal, "alice")}
    # ...while the derived facts followed their memories (archived: none left active)
    assert container.facts.about(principal, "Alice") == [recorded]


def test_a_retracted_fact_stays_retracted_and_keeps_its_audit_row(services) -> None:
    container, principal, drain = services
    recorded = container.facts.record(principal, RecordFactCommand(subject="Bob", predicate="works at", object="Acme"))
    memory = capture(container, principal, "Bob works at Acme")
    drain()
    (derived,) = container.fact_store.for_memory("local", memory)
    # A key without write permission cannot retract: nothing changes
    reader = Principal(tenant="local", key_prefix="mn_reader", permissions=frozenset({Permission.READ}))
    with pytest.raises(ForbiddenError):
        container.facts.retract(reader, recorded.uuid, "no")
    assert container.facts.get(reader, recorded.uuid).status == FactStatus.ACTIVE
    # When both the recorded and the derived fact are retracted...
    for fact in (recorded, derived):
        retracted = container.facts.retract(principal, fact.uuid, "that's wrong")
        assert retracted.status == FactStatus.RETRACTED and retracted.retracted_reason == "that's wrong"
    # ...and the memory saying the same triple is re-enriched (edited to say it again, reindexed)
    container.memories.edit(principal, memory, EditCommand(raw_text="Bob works at Acme, still"))
    drain()
    container.recovery.reindex()
    drain()
    # Then both stay retracted, out of active reads, with their audit rows (who, when, why)
    for fact in (recorded, derived):
        stored = container.facts.get(principal, fact.uuid)
        assert stored.status == FactStatus.RETRACTED and stored.retracted_reason == "that's wrong"
        assert stored.expired_at is not None
        audit = container.facts.history(principal, fact.uuid)
        assert [a.action for a in audit][-1] == "retracted"
        assert (audit[-1].actor, audit[-1].reason) == (principal.key_prefix, "that's wrong")
    assert [a.action for a in container.facts.history(principal, recorded.uuid)] == ["created", "retracted"]
    assert container.facts.about(principal, "Bob") == []
    assert {f.uuid for f in container.facts.about(principal, "Bob", statuses=ALL_STATUSES)} == {recorded.uuid, derived.uuid}
    assert container.memories.detail(principal, memory)[2] == []
    # Retracting again is idempotent: no second audit row
    container.facts.retract(principal, recorded.uuid, "again")
    assert [a.action for a in container.facts.history(principal, recorded.uuid)] == ["created", "retracted"]


def test_derived_facts_are_replaced_on_edit_deactivated_on_archive_and_restored_on_reopen(services) -> None:
    container, principal, drain = services
    memory = capture(container, principal, "Carol lives in Berlin")
    drain()
    _, _, facts = container.memories.detail(principal, memory)
    (berlin,) = facts
    assert triples(facts) == {("Carol", "lives in", "Berlin")} and berlin.valid_at == AT
    assert berlin.provenance == [memory] and berlin.source_version(memory) == 1
    # When the memory is edited, its facts are re-derived: the old one is no longer believed
    container.memories.edit(principal, memory, EditCommand(raw_text="Carol lives in Lisbon now"))
    drain()
    _, _, facts = container.memories.detail(principal, memory)
    assert triples(facts) == {("Carol", "lives in", "Lisbon")} and facts[0].source_version(memory) == 2
    old = container.facts.get(principal, berlin.uuid)
    assert old.status == FactStatus.INVALIDATED and old.expired_at is not None and old.sources == []
    assert [a.action for a in container.facts.history(principal, berlin.uuid)] == ["created", "deactivated"]
    lisbon = facts[0]
    # When it is archived, its facts are deactivated; reopening restores them
    container.memories.archive(principal, memory)
    drain()
    assert container.memories.detail(principal, memory)[2] == []
    assert container.facts.get(principal, lisbon.uuid).status == FactStatus.INVALIDATED
    assert container.facts.about(principal, "Carol") == []
    container.memories.edit(principal, memory, EditCommand(edit_request="reopen"))
    drain()
    assert [f.uuid for f in container.facts.about(principal, "Carol")] == [lisbon.uuid]
    assert [a.action for a in container.facts.history(principal, lisbon.uuid)] == ["created", "deactivated", "reactivated"]


def test_a_fact_two_memories_say_stays_while_one_of_them_does(services) -> None:
    container, principal, drain = services
    first = capture(container, principal, "Dan works at Initech")
    second = capture(container, principal, "dan works at initech.")
    drain()
    (fact,) = container.facts.about(principal, "DAN")
    assert set(fact.provenance) == {first, second}  # one fact, both memories its sources
    container.memories.archive(principal, first)
    drain()
    (still,) = container.facts.about(principal, "Dan")
    assert still.uuid == fact.uuid and still.provenance == [second] and still.status == FactStatus.ACTIVE
    container.memories.archive(principal, second)
    drain()
    assert container.facts.about(principal, "Dan") == []


def test_entities_resolve_to_one_node_per_canonical_name_and_alias(container) -> None:
    store = container.fact_store
    ns = Namespace(tenant="local", user_id="u1", group_id="g1")
    # Case, whitespace and punctuation fold to one canonical name
    assert canonical_key(" ACME  Corp. ") == canonical_key("acme corp") == canonical_key("Acme-Corp") == "acme corp"
    spellings = ["Acme Corp", "ACME  corp.", "acme-corp", "Acme Corp!"]
    nodes = store.resolve(ns, [EntityMention(name=s, type="organization") for s in spellings], AT)
    assert len({e.id for e in nodes.values()}) == 1
    node = nodes["Acme Corp"]
    assert (node.name, node.type, node.key) == ("Acme Corp", "organization", "acme corp")
    # An alias the extractor reports maps onto the same node, now and in later resolutions
    alice = store.resolve(ns, [EntityMention(name="Alice Johnson", type="person", aliases=["Alice", "A. Johnson"])], AT)
    alice_id = alice["Alice Johnson"].id
    assert store.find_entity(ns, "alice").id == alice_id
    assert store.resolve(ns, [EntityMention(name="ALICE")], AT)["ALICE"].id == alice_id
    assert store.entities(ns, [alice_id])[0].aliases == ["A. Johnson", "Alice"]
    # An alias never steals a name that already names another node
    store.resolve(ns, [EntityMention(name="Acme Holdings", aliases=["Acme Corp"])], AT)
    assert store.find_entity(ns, "acme corp").id == node.id
    # The same name in another namespace is another node
    elsewhere = store.resolve(Namespace(tenant="local", user_id="u2", group_id="g1"), [EntityMention(name="Acme Corp")], AT)
    assert elsewhere["Acme Corp"].id != node.id
    assert store.find_entity(Namespace(tenant="local", user_id="u2", group_id="g1"), "alice") is None


def test_a_node_created_or_erased_since_the_read_is_resolved_all_the_same(container, monkeypatch) -> None:
    store = container.fact_store
    ns = Namespace(tenant="local", user_id="u1", group_id="g1")
    first = store.resolve(ns, [EntityMention(name="ALICE", type="person")], AT)["ALICE"]
    entities = store.entities
    # A resolver that read the node table before another created the node: its put loses, and it adds
    # its alias to the node that won (whose name and type are kept)
    monkeypatch.setattr(store, "entities", lambda namespace, ids: [])
    late = store.resolve(ns, [EntityMention(name="Alice", type="organization", aliases=["Al"])], AT)["Alice"]
    assert (late.id, late.name, late.type, late.aliases) == (first.id, "ALICE", "person", ["Al"])
    assert entities(ns, [first.id]) == [late]
    # A resolver that read the node before an erasure removed it: its alias update finds nothing, and it
    # creates the node again, under its own name
    monkeypatch.setattr(store, "entities", lambda namespace, ids: [first])
    client("dynamodb").delete_item(TableName=container.settings.memories_table,
                                   Key={"pk": {"S": entity_pk(ns, first.id)}, "sk": {"S": NODE_SK}})
    assert entities(ns, [first.id]) == []
    again = store.resolve(ns, [EntityMention(name="Alice", type="person", aliases=["Ally"])], AT)["Alice"]
    assert (again.id, again.name, again.aliases) == (first.id, "Alice", ["Ally"])
    assert entities(ns, [first.id]) == [again]


def test_recording_and_traversal_reads(services) -> None:
    container, principal, _ = services
    store, scope = container.fact_store, FactScope(user_id="u1", group_id="team")
    ns = Namespace(tenant="local", user_id="u1", group_id="team")
    lives = container.facts.record(principal, RecordFactCommand(subject="Eve", predicate="Lives_In", object="Paris",
                                                                valid_at=AT, **scope.model_dump()))
    knows = container.facts.record(principal, RecordFactCommand(subject="Eve", predicate="knows", object="Frank",
                                                                intent_meta={"label": "belief", "confidence": 0.8},
                                                                **scope.model_dump()))
    assert container.facts.get(principal, knows.uuid).intent_meta == {"label": "belief", "confidence": 0.8}
    assert lives.valid_at == AT and lives.namespace == ns
    eve = lives.subject.id
    # Adjacency: by direction and relation type, one hop without reading the facts
    out = store.adjacency(ns, eve, direction="out")
    assert {(a.predicate, a.other_id) for a in out} == {("lives in", lives.object.id), ("knows", knows.object.id)}
    assert [a.fact_uuid for a in store.adjacency(ns, eve, predicate="lives in")] == [lives.uuid]
    assert [a.direction for a in store.adjacency(ns, lives.object.id)] == ["in"]
    # Invalidate moves the edge out of the active adjacency, with its audit row
    container.facts.invalidate(principal, lives.uuid, invalid_at=AT)
    assert [a.fact_uuid for a in store.adjacency(ns, eve)] == [knows.uuid]
    assert [a.fact_uuid for a in store.adjacency(ns, eve, statuses=[FactStatus.INVALIDATED])] == [lives.uuid]
    assert [a.action for a in container.facts.history(principal, lives.uuid)] == ["created", "invalidated"]
    # A uuid is written once (conditional put)
    with pytest.raises(ConflictError):
        store.record(knows, actor="again")
    # Writing needs the write permission
    reader = Principal(tenant="local", key_prefix="mn_reader", permissions=frozenset({Permission.READ}))
    with pytest.raises(ForbiddenError):
        container.facts.record(reader, RecordFactCommand(subject="Eve", predicate="knows", object="Gil"))


def test_the_fact_graph_is_separated_by_tenant_user_and_group(services, monkeypatch) -> None:
    container, principal, drain = services
    operations: list[str] = []
    db = container.fact_store._db

    class Recording:
        def __getattr__(self, name: str) -> Any:
            operations.append(name)
            return getattr(db, name)

    monkeypatch.setattr(container.fact_store, "_db", Recording())
    container.keys.ensure("other", "other", ["admin"], OTHER_KEY)
    intruder = container.keys.authenticate(OTHER_KEY)
    places = {("default", "default"): "Oslo", ("u2", "default"): "Rome", ("default", "team"): "Madrid"}
    recorded = {
        where: container.facts.record(principal, RecordFactCommand(subject="Hana", predicate="lives in", object=city,
                                                                   user_id=where[0], group_id=where[1]))
        for where, city in places.items()
    }
    container.facts.record(intruder, RecordFactCommand(subject="Hana", predicate="lives in", object="Cairo"))
    # Derived facts land in their memory's namespace too
    capture(container, principal, "Hana works at Initech", group_id="team")
    drain()
    # Positive control: the same query finds the owner's facts in each namespace, and only those
    for (user_id, group_id), city in places.items():
        found = container.facts.about(principal, "Hana", FactScope(user_id=user_id, group_id=group_id))
        expected = {("Hana", "lives in", city)} | ({("Hana", "works at", "Initech")} if group_id == "team" else set())
        assert triples(found) == expected
    assert triples(container.facts.about(intruder, "Hana")) == {("Hana", "lives in", "Cairo")}
    # Another tenant can neither read nor retract the owner's fact by its uuid
    target = recorded[("default", "default")]
    with pytest.raises(NotFoundError):
        container.facts.get(intruder, target.uuid)
    with pytest.raises(NotFoundError):
        container.facts.retract(intruder, target.uuid, "mine now")
    assert container.facts.get(principal, target.uuid).status == FactStatus.ACTIVE
    # And nothing above needed a Scan
    assert operations and "scan" not in operations


def test_a_write_that_loses_a_race_re_reads_and_applies_once(services, monkeypatch) -> None:
    container, principal, _ = services
    store = container.fact_store
    fact = container.facts.record(principal, RecordFactCommand(subject="Ivy", predicate="likes", object="tea"))
    stale = store.get("local", fact.uuid)
    # Given a concurrent writer that changes the fact between our read and our write
    store.invalidate("local", fact.uuid, actor="other", at=AT, invalid_at=AT)
    store_get, reads = store.get, []

    def first_read_is_stale(tenant: str, fact_uuid: str):
        reads.append(fact_uuid)
        return stale if len(reads) == 1 else store_get(tenant, fact_uuid)

    monkeypatch.setattr(store, "get", first_read_is_stale)
    # When we retract: the write conditioned on the stale revision fails, the retry re-reads
    retracted = store.retract("local", fact.uuid, actor=principal.key_prefix, reason="race", at=AT)
    assert len(reads) == 2
    # Then the concurrent change is kept and the retract applied on top of it, once
    assert retracted.status == FactStatus.RETRACTED and retracted.invalid_at == AT
    assert [a.action for a in store.audit("local", fact.uuid)] == ["created", "invalidated", "retracted"]


def test_the_aliases_an_extractor_reports_resolve_to_one_node(services, monkeypatch) -> None:
    from mnemo.domain.extraction import Entity as Mention
    from mnemo.domain.extraction import Extraction
    from mnemo.domain.extraction import Fact as Triple

    container, principal, drain = services
    extraction = Extraction(
        normalized_text="Alice Johnson founded Acme. Alice works at Acme.",
        entities=[Mention(name="Alice Johnson", kind="person", aliases=["Alice", " ", "x" * 500])],
        facts=[Triple(subject="Alice", predicate="works at", object="Acme"),
               Triple(subject="alice johnson", predicate="founded", object="Acme")],
    )
    monkeypatch.setattr(container.enrichment._extractor, "extract", lambda text, **_: extraction)
    memory = capture(container, principal, extraction.normalized_text)
    drain()
    facts = container.fact_store.for_memory("local", memory)
    assert {f.subject.name for f in facts} == {"Alice Johnson"}  # both triples start at one node
    node = container.fact_store.find_entity(Namespace(tenant="local"), "ALICE")
    assert node.id == facts[0].subject.id and node.aliases == ["Alice"] and node.type == "person"
    assert {f.fact for f in facts} == {"Alice works at Acme", "alice johnson founded Acme"}  # the memory's own words
