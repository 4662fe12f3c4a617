"""Read-your-writes: an accepted memory is found by lexical search at once, before (or without)
enrichment, inside its namespace only; semantic signals join once the worker indexes it."""

from __future__ import annotations

import threading

from mnemo.domain.commands import CaptureCommand, RetrieveCommand
from mnemo.domain.namespace import NamespaceFilter
from mnemo.ports import EnrichmentTask, SearchQuery
from tests.integration.conftest import OTHER_KEY
from tests.integration.surfaces.test_profile_thrindex import enrich


def search(container, principal, query: str, **levels) -> list:
    command = RetrieveCommand(query=query, order="relevance", author="all", **levels)
    return container.memories.search(principal, command)


def test_capture_then_search_at_once_finds_it_lexically_then_semantically(container, principal, aws) -> None:
    memory = container.memories.capture(principal, CaptureCommand(raw="The boiler service is booked for March 3rd."))
    unscoped = NamespaceFilter(tenant="local", user_id=None)
    assert container.index().search(SearchQuery(scope=unscoped, text="boiler service", authors=["user", "agent"])) == []
    hits = search(container, principal, "when is the boiler service")
    assert [h.memory.id for h in hits] == [memory.id]
    assert hits[0].components["lexical"] > 0 and hits[0].components["semantic"] == 0
    enrich(aws)
    after = search(container, principal, "when is the boiler service")
    assert [h.memory.id for h in after] == [memory.id] and after[0].components["semantic"] > 0


def test_a_memory_whose_enrichment_failed_stays_findable(container, principal) -> None:
    memory = container.memories.capture(principal, CaptureCommand(raw="Passport renewal form is in the blue folder."))
    task = EnrichmentTask(tenant=memory.tenant, memory_id=memory.id, version=memory.version)
    container.enrichment.record_failure(task, RuntimeError("model unavailable"), final=True)
    assert container.store.get(memory.tenant, memory.id).enrichment.state.value == "failed"
    assert [h.memory.id for h in search(container, principal, "where is the passport renewal form")] == [memory.id]


def test_unindexed_memories_stay_inside_their_namespace_status_and_tenant(container, principal) -> None:
    other = container.keys.authenticate(container.keys.ensure("other", "other", ["admin"], OTHER_KEY) and OTHER_KEY)
    alice = container.memories.capture(principal, CaptureCommand(raw="Locker code is 4512", user_id="alice"))
    container.memories.capture(other, CaptureCommand(raw="Locker code is 9999", user_id="alice"))
    archived = container.memories.capture(principal, CaptureCommand(raw="Locker code was 1111", user_id="alice"))
    container.memories.archive(principal, archived.id)
    assert search(container, principal, "locker code", user_id="bob") == []
    assert [h.memory.id for h in search(container, principal, "locker code", user_id="alice")] == [alice.id]
    # positive control: the other tenant finds its own with the same request, and only its own
    assert [h.memory.raw for h in search(container, other, "locker code", user_id="alice")] == ["Locker code is 9999"]


def test_an_edit_is_findable_by_its_new_words_at_once(container, principal, aws) -> None:
    from mnemo.domain.commands import EditCommand

    memory = container.memories.capture(principal, CaptureCommand(raw="Dentist appointment on Friday."))
    enrich(aws)
    container.memories.edit(principal, memory.id, EditCommand(raw_text="Orthodontist appointment on Friday."))
    hits = search(container, principal, "orthodontist")
    # the index still holds the old text (its vector may still find it); the new word matches lexically
    assert [h.memory.id for h in hits] == [memory.id] and hits[0].components["lexical"] > 0


def test_the_store_is_read_while_the_query_is_embedded(container, principal, monkeypatch) -> None:
    """The unindexed read does not wait for the query's embedding (a model pass here, a Bedrock call on
    AWS): the embedding below waits until the read has begun, which a search reading after it never does."""
    memory = container.memories.capture(principal, CaptureCommand(raw="Locker code is 4512"))
    reading = threading.Event()
    read, embed = container.store.unindexed, container.embedder.embed

    def unindexed(tenant: str, limit: int) -> list:
        reading.set()
        return read(tenant, limit)

    def embed_once_the_read_began(texts, **options) -> list:
        assert reading.wait(10), "the query was embedded before the store read began"
        return embed(texts, **options)

    monkeypatch.setattr(container.store, "unindexed", unindexed)
    monkeypatch.setattr(container.embedder, "embed", embed_once_the_read_began)
    hits = search(container, principal, "locker code")
    assert [h.memory.id for h in hits] == [memory.id]  # found from the store read, not yet indexed
