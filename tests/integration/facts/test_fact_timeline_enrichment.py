"""Derived facts on the timeline, through the real worker: an episode that says someone moved retires
the older value, archiving that episode gives the older value back, reopening retires it again; and
the episode's fact is found by fact search after enrichment."""

from __future__ import annotations

from datetime import UTC, datetime

from mnemo.domain.commands import CaptureCommand, EditCommand
from mnemo.domain.fact_commands import RecordFactCommand
from mnemo.domain.graph import FactStatus
from mnemo.services.facts.search import FactSearchQuery


def test_an_episode_retires_and_archiving_it_restores(container, principal, drain) -> None:
    old = container.facts.record_triple(principal, RecordFactCommand(
        subject="Bob", predicate="lives in", object="Porto", valid_at=datetime(2025, 1, 1, tzinfo=UTC))).edge
    memory = container.memories.capture(principal, CaptureCommand(
        raw="Bob moved to Lisbon.", as_user=True, captured_at=datetime(2025, 5, 1, tzinfo=UTC)))
    drain()
    (derived,) = container.fact_store.for_memory("local", memory.id)
    assert (derived.predicate, derived.object.name, derived.status) == ("lives in", "Lisbon", FactStatus.ACTIVE)
    retired = container.facts.get(principal, old.uuid)
    assert (retired.status, retired.invalidated_by, retired.invalid_at) == (
        FactStatus.INVALIDATED, derived.uuid, datetime(2025, 5, 1, tzinfo=UTC))
    found = container.fact_search.search(principal, FactSearchQuery(query="Where does Bob live?"))
    assert [s.fact.uuid for s in found][:1] == [derived.uuid] and old.uuid not in [s.fact.uuid for s in found]
    # Archive the episode: its fact is deactivated and Porto comes back
    container.memories.archive(principal, memory.id)
    drain()
    assert container.facts.get(principal, old.uuid).status == FactStatus.ACTIVE
    assert container.facts.get(principal, derived.uuid).status == FactStatus.INVALIDATED
    # Reopen it: Lisbon is said again and retires Porto again
    container.memories.edit(principal, memory.id, EditCommand(edit_request="reopen"))
    drain()
    assert container.facts.get(principal, derived.uuid).status == FactStatus.ACTIVE
    assert container.facts.get(principal, old.uuid).invalidated_by == derived.uuid


def test_add_episode_with_extract_intent_annotates_its_derived_facts(container, principal, drain) -> None:
    asked = container.memories.capture(principal, CaptureCommand(raw="Carol prefers tea.", as_user=True,
                                                                  metadata={"extract_intent": True}))
    plain = container.memories.capture(principal, CaptureCommand(raw="Dave prefers coffee.", as_user=True))
    drain()
    (annotated,) = container.fact_store.for_memory("local", asked.id)
    (unannotated,) = container.fact_store.for_memory("local", plain.id)
    assert annotated.intent_meta is not None and annotated.intent_meta["label"] == "preference"
    assert unannotated.intent_meta is None
