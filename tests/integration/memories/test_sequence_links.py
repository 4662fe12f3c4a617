"""The "sequence" link (a memory to the one its user captured just before) comes from the store's
capture order, so it holds whichever of two concurrent batches enriches first (issue 14: with parallel
pollers, or concurrent Lambda batches, the earlier memory may not be indexed yet)."""

from __future__ import annotations

from mnemo.domain.commands import CaptureCommand
from mnemo.domain.models import EnrichmentState, Memory
from mnemo.ports import EnrichmentTask

# Nothing in common (no entity, unrelated topics): the only link between them can be the sequence one.
TEXTS = ["the quarterly invoice is due on friday", "my cat prefers the blue blanket"]


def capture(services, principal, raw: str, *, user: str = "u1", as_user: bool = True) -> Memory:
    return services.memories.capture(principal, CaptureCommand(raw=raw, user_id=user, as_user=as_user, extract=False))


def enrich(services, *memories: Memory) -> None:
    tasks = [EnrichmentTask(tenant=m.tenant, memory_id=m.id, version=m.version) for m in memories]
    prepared = services.enrichment.prepare(tasks)
    services.enrichment.complete_batch(prepared)
    assert [p.error for p in prepared] == [None] * len(prepared)


def links(services, memory: Memory) -> dict[str, str]:
    return {link.other_id: link.reason for link in services.graph.links(memory.tenant, memory.id)}


def test_the_later_memory_links_its_predecessor_before_that_one_is_indexed(container, principal) -> None:
    # Given two memories a user captured back to back, and another user's memory between them
    first = capture(container, principal, TEXTS[0])
    other = capture(container, principal, "an unrelated note", user="u2")
    second = capture(container, principal, TEXTS[1])
    # When the second is enriched while the first is not indexed yet (the race of concurrent batches)
    assert container.store.get("local", first.id).enrichment.state == EnrichmentState.PENDING  # not in the index
    enrich(container, second)
    # Then the second links the first, read from the store's capture order (not the other user's memory)
    assert links(container, second) == {first.id: "sequence"}
    assert other.id not in links(container, second)
    # and the link is stored at both ends, so the first has it before its own enrichment
    assert links(container, first) == {second.id: "sequence"}
    # When the first is enriched afterwards (it has no predecessor of its own)
    enrich(container, first)
    assert container.store.get("local", first.id).enrichment.state == EnrichmentState.ENRICHED
    # Then its enrichment keeps the link the second made (positive control: both ends still linked)
    assert links(container, first) == {second.id: "sequence"}
    assert links(container, second) == {first.id: "sequence"}


def test_the_batch_orders_a_users_memories_and_finds_what_lies_between(container, principal) -> None:
    # Given five memories of one user, the middle one written by the agent (another author partition)
    memories = [capture(container, principal, f"note {i}", as_user=i != 2) for i in range(5)]
    store = container.store
    # When a batch holds contiguous memories: each one's predecessor, within the batch or just before it
    found = store.preceding("local", "u1", memories[2:])
    assert {k: v.id if v else None for k, v in found.items()} == {m.id: p.id for m, p in zip(memories[2:], memories[1:4], strict=True)}
    # and when it holds memories far apart: the read below the latest does not reach the earliest's
    # neighbour, which is then read on its own (exact either way)
    found = store.preceding("local", "u1", [memories[1], memories[4]])
    assert found[memories[4].id].id == memories[3].id and found[memories[1].id].id == memories[0].id
    # and the user's first memory has none (another user's memories are not in its order)
    capture(container, principal, "someone else", user="u2")
    assert store.preceding("local", "u1", [memories[0]]) == {memories[0].id: None}
