"""The temporal rules as pure functions: predicate normalisation and classes, the timeline of one
(subject, single-valued predicate) group, `as_of` validity, and the heuristic intent annotator."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.adapters.local.heuristic_intents import HeuristicIntentAnnotator
from mnemo.domain.graph import EntityRef, Fact, FactOrigin, FactStatus
from mnemo.domain.namespace import Namespace
from mnemo.domain.predicates import PredicateTable
from mnemo.domain.timeline import ACTIVE, changes, timeline, valid_at_moment


def at(month: int) -> datetime:
    return datetime(2025, month, 1, tzinfo=UTC)


def fact(uid: str, obj: str, month: int, **extra: object) -> Fact:
    return Fact(uuid=uid, namespace=Namespace(tenant="t"), subject=EntityRef(id="alice", name="Alice"), predicate="lives in",
                object=EntityRef(id=obj, name=obj), fact=f"Alice lives in {obj}", origin=FactOrigin.RECORDED,
                valid_at=at(month), created_at=at(12), **extra)


@pytest.mark.parametrize(("said", "means", "single"), [
    ("moved_to", "lives in", True), ("Relocated  to", "lives in", True), ("joined", "works at", True),
    ("works for", "works at", True), ("married", "is married to", True), ("deadline", "deadline is", True),
    ("likes", "likes", False), ("loves", "likes", False), ("visited", "visited", False), ("knows", "knows", False),
    ("works with", "works with", False), ("is", "is", False),
])
def test_synonyms_and_classes(said: str, means: str, single: bool) -> None:
    table = PredicateTable()
    assert table.normalize(said) == means and table.is_single_valued(said) is single


def test_operators_extend_and_shrink_the_tables() -> None:
    table = PredicateTable.extended("drives", "hired by=works at; moved into=lives in", "prefers")
    assert table.normalize("hired_by") == "works at" and table.is_single_valued("moved into")
    assert table.is_single_valued("drives") and not table.is_single_valued("prefers")
    with pytest.raises(ValueError, match="expected 'wording=predicate"):
        PredicateTable.extended(synonyms="no equals sign")


def test_each_value_holds_until_the_next_different_one_whatever_the_arrival_order() -> None:
    berlin, lisbon, paris = fact("b", "Berlin", 1), fact("l", "Lisbon", 5), fact("p", "Paris", 3)
    for order in ([berlin, lisbon, paris], [paris, lisbon, berlin], [lisbon, berlin, paris]):
        wanted = timeline(order)
        assert wanted["b"] == (FactStatus.INVALIDATED, at(3), "p")
        assert wanted["p"] == (FactStatus.INVALIDATED, at(5), "l")
        assert wanted["l"] == ACTIVE


def test_the_same_value_twice_does_not_retire_itself_and_retracted_or_ended_facts_stay_out() -> None:
    again = fact("b2", "Berlin", 2)
    assert timeline([fact("b", "Berlin", 1), again]) == {"b": ACTIVE, "b2": ACTIVE}
    retracted = fact("l", "Lisbon", 5, status=FactStatus.RETRACTED)
    ended = fact("p", "Paris", 3, status=FactStatus.INVALIDATED, invalid_at=at(4))  # a caller ended it
    # Berlin was retired by Lisbon; with Lisbon retracted it comes back
    berlin = fact("b", "Berlin", 1, status=FactStatus.INVALIDATED, invalid_at=at(5), invalidated_by="l")
    assert changes([berlin, retracted, ended]) == {"b": ACTIVE}


def test_as_of_is_event_time_and_never_shows_retracted_facts() -> None:
    berlin = fact("b", "Berlin", 1, status=FactStatus.INVALIDATED, invalid_at=at(5), invalidated_by="l")
    assert valid_at_moment(berlin, at(3)) and not valid_at_moment(berlin, at(5)) and not valid_at_moment(berlin, at(1).replace(year=2024))
    assert not valid_at_moment(fact("x", "Oslo", 1, status=FactStatus.RETRACTED), at(3))


def test_heuristic_intents() -> None:
    annotate = HeuristicIntentAnnotator().annotate
    assert annotate("Dana prefers mornings", "prefers")["label"] == "preference"
    assert annotate("Team decided to ship Friday", "decided")["label"] == "decision"
    assert annotate("Report deadline is Friday", "deadline is")["label"] == "commitment"
    assert annotate("Alice lives in Berlin", "lives in") is None


def test_every_heuristic_label_is_a_documented_one_and_validates() -> None:
    from mnemo.adapters.local import heuristic_intents
    from mnemo.domain.intents import INTENT_LABELS, IntentAnnotation

    assert {label for label, _ in heuristic_intents._CUES} == set(INTENT_LABELS)
    meta = HeuristicIntentAnnotator().annotate("Dana prefers mornings", "prefers")
    assert meta is not None and IntentAnnotation.model_validate(meta).annotator == "heuristic"


def test_a_negation_retires_its_positive_fact_whatever_the_cardinality_and_a_reassertion_the_negation() -> None:
    jazz, blues = fact("j", "jazz", 1), fact("bl", "blues", 2)
    no_jazz = fact("nj", "jazz", 3, polarity="negative")
    wanted = timeline([jazz, blues, no_jazz], single_valued=False)  # "likes": multi-valued
    assert wanted["j"] == (FactStatus.INVALIDATED, at(3), "nj") and wanted["nj"] == ACTIVE
    assert wanted["bl"] == ACTIVE  # the control: another object is untouched by the negation
    wanted = timeline([jazz, blues, no_jazz], single_valued=True)  # single-valued: the newer value came first
    assert wanted["j"] == (FactStatus.INVALIDATED, at(2), "bl") and wanted["bl"] == ACTIVE and wanted["nj"] == ACTIVE
    again = fact("j2", "jazz", 6)
    wanted = timeline([jazz, no_jazz, again], single_valued=False)
    assert wanted["nj"] == (FactStatus.INVALIDATED, at(6), "j2") and wanted["j2"] == ACTIVE
