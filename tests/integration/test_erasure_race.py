"""An erasure that lands while the worker is enriching the same memory: whatever the enrichment
writes afterwards (facts, entity nodes and postings, links, index documents) is undone, so the walk
of every item and index document after both finish finds nothing of the memory. A memory enriched
in the same batch is the positive control."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.domain.namespace import Namespace
from tests.integration.conftest import auth
from tests.integration.test_erasure import every_item, index_hits, mentions
from tests.integration.test_profile_thrindex import enrich

SECRET = "Ilsabet Varnholm works at Gorsewick Foundry."
CONTROL = "Tamsin Oduya works at Pellridge Mills."


@pytest.mark.parametrize("step", ["_links", "_document"])  # before any derived write; after facts and graph
def test_an_erasure_during_enrichment_leaves_nothing_behind(step: str, http, container, principal, aws, monkeypatch) -> None:  # noqa: ANN001
    secret = http.post("/v1/memories", json={"content": SECRET}, headers=auth()).json()["id"]
    control = http.post("/v1/memories", json={"content": CONTROL}, headers=auth()).json()["id"]
    enrichment = container.enrichment
    original = getattr(enrichment, step)
    erased: list[Any] = []

    def erase_midway(memory, *args, **kwargs):  # noqa: ANN001, ANN202
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
