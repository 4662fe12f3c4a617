"""An erasure that lands while the worker enriches a *neighbour* of the erased memory (issue 26,
item 3): the neighbour's enrichment planned its links (to the erased memory too) before the erasure
and writes them after it. Nothing keyed by the erased id may come back (no link item under its
partition), the neighbour lists no link to it, and its index document neither links it nor carries
its words. The same enrichment without the erasure writes the links both ways (positive control)."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.domain.namespace import NamespaceFilter
from mnemo.ports import SearchQuery
from tests.integration.conftest import auth
from tests.integration.erasure.test_erasure import every_item, mentions
from tests.integration.surfaces.test_profile_thrindex import enrich

ERASED = "Quentin Marlowe visited the Ravensholm observatory."
NEIGHBOUR = "Quentin Marlowe loves the Ravensholm observatory at night."


def found(container, words: str) -> Any:
    query = SearchQuery(scope=NamespaceFilter(tenant="local", user_id=None), text=words, authors=["user", "agent"])
    return container.index().search(query)


def neighbour_document(container, memory_id: str) -> dict[str, Any]:
    """The neighbour's index document as ranking reads it (links), and whether the word only the erased
    memory says ("visited") finds it: its context holds the text of the memory captured before it."""
    rows = found(container, "Quentin Marlowe Ravensholm observatory")
    return {"found": memory_id in {c.memory_id for c in rows},
            "links": dict(next((c.links for c in rows if c.memory_id == memory_id), ())),
            "context": memory_id in {c.memory_id for c in found(container, "visited")}}


@pytest.mark.parametrize("erase", [True, False])
def test_a_neighbours_enrichment_racing_the_erasure_recreates_no_link(erase: bool, http, container, principal, aws,
                                                                      monkeypatch) -> None:
    erased = http.post("/v1/memories", json={"content": ERASED}, headers=auth()).json()["id"]
    enrich(aws)
    neighbour = http.post("/v1/memories", json={"content": NEIGHBOUR}, headers=auth()).json()["id"]
    graph = container.enrichment._graph
    original = graph.apply
    done: list[Any] = []

    def erase_before_the_links_land(changes):
        planned = [link.other_id for change in changes for link in change.links]
        if erase and erased in planned and not done:  # the DELETE ?hard=true arrives right now
            done.append(container.erasure.erase_memory(principal, erased))
        return original(changes)

    monkeypatch.setattr(graph, "apply", erase_before_the_links_land)
    enrich(aws)
    items = every_item(aws)
    links_of_neighbour = [i["sk"]["S"] for i in items if i["pk"]["S"] == f"T#local#M#{neighbour}" and i["sk"]["S"].startswith("L#")]
    document = neighbour_document(container, neighbour)
    assert document["found"]
    if not erase:  # positive control: the links exist both ways, and the document links the other
        assert f"L#{erased}" in links_of_neighbour
        assert [i for i in items if i["pk"]["S"] == f"T#local#M#{erased}" and i["sk"]["S"] == f"L#{neighbour}"]
        assert erased in document["links"] and document["context"]
        return
    assert done and done[0].memory_ids == [erased]
    assert [i["sk"]["S"] for i in items if i["pk"]["S"] == f"T#local#M#{erased}"] == []  # nothing under its key
    assert f"L#{erased}" not in links_of_neighbour
    assert [i["pk"]["S"] for i in mentions(items, erased)] == [f"T#local#ERASED#{erased}"]  # the tombstone only
    assert erased not in document["links"] and not document["context"]
    assert http.get(f"/v1/memories/{neighbour}", headers=auth()).json()["links"] == []


def test_an_erasure_rebuilds_the_neighbours_documents_without_its_id_and_words(http, container, principal, aws) -> None:
    erased = http.post("/v1/memories", json={"content": ERASED}, headers=auth()).json()["id"]
    enrich(aws)
    neighbour = http.post("/v1/memories", json={"content": NEIGHBOUR}, headers=auth()).json()["id"]
    enrich(aws)
    before = neighbour_document(container, neighbour)
    assert erased in before["links"] and before["context"]  # control: its document links it and holds its text

    container.erasure.erase_memory(principal, erased)
    enrich(aws)  # the neighbours' re-enrichment the erasure queued
    after = neighbour_document(container, neighbour)
    assert after["found"] and erased not in after["links"] and not after["context"]
    assert [i["pk"]["S"] for i in mentions(every_item(aws), erased)] == [f"T#local#ERASED#{erased}"]
    assert found(container, "visited") == [] or {c.memory_id for c in found(container, "visited")} == set()


def test_the_refresh_asks_no_extractor_and_keeps_the_neighbours_facts(http, container, principal, aws,
                                                                        monkeypatch) -> None:
    """The refresh re-links and re-indexes a neighbour from its reading on record: the extractor (an
    LLM in production) is never asked again, so an unrelated erasure cannot change the neighbour's
    facts. The same counter sees the extractor read a memory captured afterwards (control)."""
    erased = http.post("/v1/memories", json={"content": ERASED}, headers=auth()).json()["id"]
    enrich(aws)
    neighbour = http.post("/v1/memories", json={"content": "Quentin Marlowe works at Ravensholm Observatory."},
                          headers=auth()).json()["id"]
    enrich(aws)
    facts = [(f.uuid, f.revision) for f in container.fact_store.for_memory("local", neighbour)]
    stored = http.get(f"/v1/memories/{neighbour}", headers=auth()).json()
    assert facts and erased in neighbour_document(container, neighbour)["links"]  # control: a fact, and the link
    extractor = container.enrichment._extractor
    read: list[str] = []
    original = extractor.extract

    def counted(text: str, **kwargs: Any) -> Any:
        read.append(text)
        return original(text, **kwargs)

    monkeypatch.setattr(extractor, "extract", counted)

    container.erasure.erase_memory(principal, erased)
    enrich(aws)
    after = neighbour_document(container, neighbour)
    assert after["found"] and erased not in after["links"] and not after["context"]  # refreshed
    assert read == []
    assert [(f.uuid, f.revision) for f in container.fact_store.for_memory("local", neighbour)] == facts
    served = http.get(f"/v1/memories/{neighbour}", headers=auth()).json()
    assert served["enrichment"]["state"] == "enriched" and served["facts"] == stored["facts"]
    assert (served["category"], served["entities"]) == (stored["category"], stored["entities"])

    http.post("/v1/memories", json={"content": "Quentin Marlowe moved to Oslo."}, headers=auth())
    enrich(aws)
    assert read == ["Quentin Marlowe moved to Oslo."]  # control: the counter sees a reading
