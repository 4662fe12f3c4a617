"""An erasure that lands while the worker is enriching the same memory: whatever the enrichment
writes afterwards (facts, entity nodes and postings, links, index documents) is undone, so the walk
of every item and index document after both finish finds nothing of the memory. A memory enriched
in the same batch is the positive control."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.domain.namespace import Namespace
from tests.integration.conftest import auth
from tests.integration.erasure.test_erasure import every_item, index_hits, mentions
from tests.integration.surfaces.test_profile_thrindex import enrich

SECRET = "Ilsabet Varnholm works at Gorsewick Foundry."
CONTROL = "Tamsin Oduya works at Pellridge Mills."


@pytest.mark.parametrize("step", ["_links", "_document"])  # before any derived write; after facts and graph
def test_an_erasure_during_enrichment_leaves_nothing_behind(step: str, http, container, principal, aws, monkeypatch) -> None:
    secret = http.post("/v1/memories", json={"content": SECRET}, headers=auth()).json()["id"]
    control = http.post("/v1/memories", json={"content": CONTROL}, headers=auth()).json()["id"]
    enrichment = container.enrichment
    original = getattr(enrichment, step)
    erased: list[Any] = []

    def erase_midway(memory, *args, **kwargs):
        result = original(memory, *args, **kwargs)
        if memory.id == secret and not erased:  # the user's DELETE ?hard=true arrives right now
            erased.append(container.erasure.erase_memory(principal, secret))
        return result

    monkeypatch.setattr(enrichment, step, erase_midway)
    enrich(aws)
    assert erased and erased[0].memory_ids == [secret]

    after = every_item(aws)
    assert mentions(after, "Varnholm", "Gorsewick") == []
    assert [i["pk"]["S"] for i in mentions(after, secret)] == [f"T#local#ERASED#{secret}"]  # the tombstone only
    assert secret not in index_hits(container, "Ilsabet Varnholm Gorsewick Foundry")
    assert container.fact_index().search(Namespace(tenant="local"), "Varnholm Gorsewick", None, 10) == []
    assert http.get(f"/v1/memories/{secret}", headers=auth()).status_code == 404
    # positive control: the memory enriched beside it is whole
    assert http.get(f"/v1/memories/{control}", headers=auth()).json()["facts"]
    assert control in index_hits(container, "Tamsin Oduya Pellridge Mills") and mentions(after, "Pellridge")
    assert container.fact_index().search(Namespace(tenant="local"), "Oduya Pellridge", None, 10)


def test_facts_an_enrichment_writes_between_the_erasures_purge_and_its_last_delete_go_too(http, container, principal, aws,
                                                                                          monkeypatch) -> None:
    """The erasure reads the memory's fact records, the enrichment then derives a fact (writing a
    record), the erasure deletes the memory's collection with that record: the enrichment's undo
    must find the fact without it."""
    secret = http.post("/v1/memories", json={"content": SECRET}, headers=auth()).json()["id"]
    control = http.post("/v1/memories", json={"content": CONTROL}, headers=auth()).json()["id"]
    facts = container.enrichment._facts
    original = facts.replace_derived
    erasure = container.erasure

    def erase_around_the_fact_writes(memory, *args, **kwargs):
        if memory.id != secret:
            return original(memory, *args, **kwargs)
        erasure._marks.mark("local", secret, container.clock())
        erasure.purge_derived(memory)  # its facts, index documents and graph: nothing yet
        result = original(memory, *args, **kwargs)  # the enrichment derives its fact now
        container.store.erase("local", secret)  # the erasure's last step: the collection, the new record too
        return result

    monkeypatch.setattr(facts, "replace_derived", erase_around_the_fact_writes)
    enrich(aws)
    after = every_item(aws)
    assert mentions(after, "Varnholm", "Gorsewick") == []
    assert [i["pk"]["S"] for i in mentions(after, secret)] == [f"T#local#ERASED#{secret}"]
    assert container.fact_index().search(Namespace(tenant="local"), "Varnholm Gorsewick", None, 10) == []
    assert http.get(f"/v1/memories/{control}", headers=auth()).json()["facts"]  # positive control
    assert mentions(after, "Pellridge")
