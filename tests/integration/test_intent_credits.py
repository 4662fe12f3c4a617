"""`intents` credits (issue 10): each edge annotated by `extract_intent=true` counts one credit per
tenant and month, on an atomic counter, once however often the call that annotated it is replayed.
Enforcing a cap comes with quotas; this proves the count."""

from __future__ import annotations

from mnemo.domain.commands import CaptureCommand
from mnemo.domain.fact_commands import RecordFactCommand
from mnemo.ports import EnrichmentTask
from tests.integration.test_fact_timeline_enrichment import drain  # noqa: F401  (the worker fixture)

MONTH = "2025-06"  # the FixedClock's month


def test_record_fact_counts_an_annotated_edge_once_per_tenant_and_month(container, principal) -> None:  # noqa: ANN001
    facts, usage = container.facts, container.usage
    annotated = facts.record_triple(principal, RecordFactCommand(subject="Carol", predicate="prefers", object="tea"),
                                    extract_intent=True).edge
    assert annotated.intent_meta is not None and usage.used("local", "intents", MONTH) == 1
    # Not asked for, or asked for but nothing found: no credit
    facts.record_triple(principal, RecordFactCommand(subject="Carol", predicate="prefers", object="coffee"))
    facts.record_triple(principal, RecordFactCommand(subject="Carol", predicate="owns", object="a bike"), extract_intent=True)
    assert usage.used("local", "intents", MONTH) == 1
    # A replay of the same edge charges nothing; another edge does (positive control)
    assert container.fact_upkeep.count_intents([annotated], container.clock()) == 0
    facts.record_triple(principal, RecordFactCommand(subject="Dan", predicate="wants to", object="learn Go"), extract_intent=True)
    assert usage.used("local", "intents", MONTH) == 2
    # Other tenants and other months are separate counters
    assert usage.used("other", "intents", MONTH) == 0 and usage.used("local", "intents", "2025-07") == 0


def test_the_counter_charges_each_unit_once(container) -> None:  # noqa: ANN001
    usage = container.usage
    assert usage.charge("t1", "intents", "2025-01", ["a", "b", "a"]) == 2
    assert usage.charge("t1", "intents", "2025-01", ["b", "c"]) == 1  # b was charged
    assert usage.used("t1", "intents", "2025-01") == 3 and usage.used("t2", "intents", "2025-01") == 0
    assert usage.charge("t2", "intents", "2025-01", ["a"]) == 1  # a unit of another tenant is its own
    assert usage.used("t2", "intents", "2025-01") == 1


def test_an_episode_counts_its_annotated_edges_and_a_redelivery_does_not(container, principal, drain) -> None:  # noqa: ANN001, F811
    memory = container.memories.capture(principal, CaptureCommand(raw="Erin prefers green tea.", as_user=True,
                                                                  metadata={"extract_intent": True}))
    plain = container.memories.capture(principal, CaptureCommand(raw="Finn prefers black tea.", as_user=True))
    drain()
    derived = container.fact_store.for_memory("local", memory.id)
    assert [f.intent_meta is not None for f in derived] == [True]
    assert container.fact_store.for_memory("local", plain.id)[0].intent_meta is None  # control: not asked for
    assert container.usage.used("local", "intents", MONTH) == 1
    # The worker derives the memory's facts again (a reindex task, or a redelivery that got past the
    # enriched check): the same edges, nothing more charged
    task = EnrichmentTask(tenant="local", memory_id=memory.id, version=memory.version, reindex=True)
    upkeep, counted = container.fact_upkeep, []
    original = upkeep.count_intents
    upkeep.count_intents = lambda facts, at: counted.append(original(facts, at)) or counted[-1]
    for item in container.enrichment.prepare([task]):
        container.enrichment.complete(item)
    assert counted == [0]  # the count ran on the re-derived annotated edge, and charged nothing
    assert [f.uuid for f in container.fact_store.for_memory("local", memory.id)] == [derived[0].uuid]
    assert container.usage.used("local", "intents", MONTH) == 1
