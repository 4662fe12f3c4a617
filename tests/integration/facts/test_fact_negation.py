"""Negations through the real worker (issue 29): a negation retires the positive fact of the same subject,
predicate and object whatever the predicate's cardinality, through the timeline (audit row kept); a
negation with nothing to retire is stored with polarity negative. Positive controls beside each check."""

from __future__ import annotations

from datetime import UTC, datetime

from mnemo.domain.commands import CaptureCommand
from mnemo.domain.fact_commands import RecordFactCommand
from mnemo.domain.graph import FactStatus

MAY, JUNE = datetime(2025, 5, 1, tzinfo=UTC), datetime(2025, 6, 1, tzinfo=UTC)


def _said(container, principal, text: str, at: datetime):
    return container.memories.capture(principal, CaptureCommand(raw=text, as_user=True, captured_at=at))


def test_a_negation_retires_the_positive_fact_whatever_the_cardinality(container, principal, drain) -> None:
    jazz, blues, acme = (_said(container, principal, t, MAY) for t in
                         ("Alice likes jazz.", "Alice likes blues.", "Alice works at Acme."))
    drain()
    (likes_jazz,), (likes_blues,), (at_acme,) = (container.fact_store.for_memory("local", m.id) for m in (jazz, blues, acme))
    assert {likes_jazz.status, likes_blues.status, at_acme.status} == {FactStatus.ACTIVE}  # the control: all hold
    no_jazz, left = (_said(container, principal, t, JUNE) for t in
                     ("Alice doesn't like jazz anymore.", "Alice no longer works at Acme."))
    drain()
    for positive, memory in ((likes_jazz, no_jazz), (at_acme, left)):  # "likes" is multi-valued, "works at" single
        (negation,) = container.fact_store.for_memory("local", memory.id)
        assert (negation.polarity, negation.status, negation.predicate) == ("negative", FactStatus.ACTIVE, positive.predicate)
        assert negation.fact.startswith("Alice not ")
        retired = container.facts.get(principal, positive.uuid)
        assert (retired.status, retired.invalidated_by, retired.invalid_at) == (FactStatus.INVALIDATED, negation.uuid, JUNE)
        assert [a.action for a in container.facts.history(principal, positive.uuid)][-1] == "invalidated"  # audit kept
    assert container.facts.get(principal, likes_blues.uuid).status == FactStatus.ACTIVE  # another object: untouched
    container.memories.archive(principal, no_jazz.id)  # the negation is no longer said: jazz comes back
    drain()
    assert container.facts.get(principal, likes_jazz.uuid).status == FactStatus.ACTIVE
    assert container.facts.get(principal, at_acme.uuid).status == FactStatus.INVALIDATED  # the other negation holds


def test_a_negation_with_nothing_to_retire_is_stored_negative(container, principal, drain) -> None:
    denied = _said(container, principal, "Bob is not allergic to peanuts.", MAY)
    stated = _said(container, principal, "Carol is allergic to peanuts.", MAY)
    drain()
    (negative,) = container.fact_store.for_memory("local", denied.id)
    (positive,) = container.fact_store.for_memory("local", stated.id)
    assert (negative.subject.name, negative.predicate, negative.object.name) == ("Bob", "is allergic to", "peanuts")
    assert (negative.polarity, negative.status) == ("negative", FactStatus.ACTIVE)
    assert (positive.polarity, positive.status) == ("positive", FactStatus.ACTIVE)  # the control
    assert negative.uuid != positive.uuid


def test_a_positive_fact_said_after_its_negation_retires_it_whatever_the_cardinality(container, principal, drain) -> None:
    no_jazz, no_tea = (_said(container, principal, t, MAY) for t in ("Dana doesn't like jazz.", "Dana doesn't like tea."))
    drain()
    (jazz_negation,), (tea_negation,) = (container.fact_store.for_memory("local", m.id) for m in (no_jazz, no_tea))
    assert {(f.polarity, f.status) for f in (jazz_negation, tea_negation)} == {("negative", FactStatus.ACTIVE)}
    likes = _said(container, principal, "Dana likes jazz.", JUNE)  # "likes" is multi-valued: the negation is the timeline
    drain()
    (positive,) = container.fact_store.for_memory("local", likes.id)
    assert (positive.polarity, positive.status) == ("positive", FactStatus.ACTIVE)
    retired = container.facts.get(principal, jazz_negation.uuid)
    assert (retired.status, retired.invalidated_by, retired.invalid_at) == (FactStatus.INVALIDATED, positive.uuid, JUNE)
    assert [a.action for a in container.facts.history(principal, jazz_negation.uuid)][-1] == "invalidated"  # audit kept
    assert container.facts.get(principal, tea_negation.uuid).status == FactStatus.ACTIVE  # the control: another object
    # A fact a caller records retires a negation the same way
    recorded = container.facts.record(principal, RecordFactCommand(subject="Dana", predicate="likes", object="tea", valid_at=JUNE))
    retired = container.facts.get(principal, tea_negation.uuid)
    assert (retired.status, retired.invalidated_by) == (FactStatus.INVALIDATED, recorded.uuid)
    assert container.facts.get(principal, recorded.uuid).status == FactStatus.ACTIVE


def test_a_memorys_detail_shows_its_superseded_facts_on_request(http, container, principal, drain) -> None:
    from tests.integration.conftest import auth

    initech = _said(container, principal, "Kim works at Initech.", MAY)
    globex = _said(container, principal, "Kim works at Globex.", JUNE)  # "works at" is single-valued: Initech retires
    drain()
    newer = http.get(f"/v1/memories/{globex.id}", headers=auth()).json()["facts"]
    assert [(f["object"], f["status"]) for f in newer] == [("Globex", "active")]  # the control: an active fact shows
    # By default the older memory shows only active facts: none left
    assert http.get(f"/v1/memories/{initech.id}", headers=auth()).json()["facts"] == []
    # Asked for, its superseded fact comes back with its status and what superseded it
    (old,) = http.get(f"/v1/memories/{initech.id}?include_inactive=true", headers=auth()).json()["facts"]
    assert (old["object"], old["status"], old["invalidated_by"]) == ("Initech", "invalidated", newer[0]["uuid"])
    refused = http.get(f"/v1/memories/{initech.id}?include_inactive=maybe", headers=auth())
    assert (refused.status_code, refused.json()["error"]["message"]) == (400, "include_inactive: must be true or false")
