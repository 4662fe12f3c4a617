"""The fact graph's pure rules: canonical names and predicates, and the ids derived from them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.domain.graph import (
    Entity,
    FactOrigin,
    FactStatus,
    canonical_form,
    canonical_key,
    canonical_predicate,
    derived_fact,
    derived_fact_id,
    embedding_text,
    entity_id,
    recorded_fact,
)
from mnemo.domain.namespace import Namespace

AT = datetime(2023, 5, 6, 9, 0, tzinfo=UTC)
NS = Namespace(tenant="t", user_id="u", group_id="g")


@pytest.mark.parametrize(("name", "key"), [
    ("Acme Corp", "acme corp"),
    ("  ACME   Corp. ", "acme corp"),
    ("acme-corp", "acme corp"),
    ("Jean_Luc / Picard", "jean luc picard"),
    ("O'Brien", "obrien"),
    ("Zoë", "zoë"),
    ("ＡＣＭＥ", "acme"),  # full-width letters (NFKC)
    ("!!!", "!!!"),  # a name made only of punctuation keeps its own form
])
def test_canonical_key_folds_case_whitespace_and_punctuation(name: str, key: str) -> None:
    assert canonical_key(name) == key


def test_predicates_fold_underscores_case_and_spaces() -> None:
    assert canonical_predicate("Lives_In") == canonical_predicate(" lives   in ") == "lives in"


def test_ids_are_deterministic_per_namespace_and_ignore_the_agent() -> None:
    assert entity_id(NS, "Acme Corp.") == entity_id(NS, "acme corp")
    assert entity_id(NS, "Acme") != entity_id(Namespace(tenant="t", user_id="u", group_id="other"), "Acme")
    assert entity_id(NS, "Acme") != entity_id(Namespace(tenant="t2", user_id="u", group_id="g"), "Acme")
    assert entity_id(NS, "Acme") == entity_id(NS.model_copy(update={"agent_id": "bot"}), "Acme")
    assert derived_fact_id(NS, "a", "Works_At", "b") == derived_fact_id(NS, "a", "works at", "b")


def test_derived_and_recorded_facts() -> None:
    alice = Entity(id=entity_id(NS, "Alice"), namespace=NS, name="Alice", key="alice", type="person", created_at=AT)
    acme = Entity(id=entity_id(NS, "Acme"), namespace=NS, name="Acme", key="acme", created_at=AT)
    derived = derived_fact(NS.model_copy(update={"agent_id": "bot"}), alice, "works_at", acme, valid_at=AT, at=AT)
    assert derived.namespace == NS and derived.origin == FactOrigin.DERIVED and derived.status == FactStatus.ACTIVE
    assert (derived.fact, derived.predicate, derived.subject.type) == ("Alice works at Acme", "works at", "person")
    recorded = recorded_fact("r-1", NS, alice, "works at", acme, valid_at=None, at=AT)
    assert recorded.provenance == ["recorded"] and recorded.valid_at == AT and recorded.uuid != derived.uuid
    assert not recorded.unsupported
    assert derived.model_copy(update={"status": FactStatus.INVALIDATED}).unsupported


def test_the_canonical_form_says_the_fact_in_its_normalised_predicate_only_when_the_sentence_does_not() -> None:
    alice = Entity(id=entity_id(NS, "Alice"), namespace=NS, name="Alice", key="alice", created_at=AT)
    acme = Entity(id=entity_id(NS, "Acme"), namespace=NS, name="Acme", key="acme", created_at=AT)
    joined = derived_fact(NS, alice, "works at", acme, valid_at=AT, at=AT, sentence="Alice joined Acme")
    assert canonical_form(joined) == "Alice works at Acme"
    said_so = derived_fact(NS, alice, "works at", acme, valid_at=AT, at=AT, sentence="alice  works at ACME")
    assert canonical_form(said_so) == ""  # the same words (case and spacing aside) are not indexed twice
    # The vector embeds both wordings, or the sentence alone when they are the same
    assert embedding_text(joined.fact, canonical_form(joined)) == "Alice joined Acme; Alice works at Acme"
    assert embedding_text(said_so.fact, canonical_form(said_so)) == "alice  works at ACME"
