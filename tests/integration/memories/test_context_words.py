"""A memory's context field holds the last words of the memory captured just before it (issue 28):
the end of a turn is what the next one answers; the body of a long predecessor is about its own
subject and only crowded searches with its followers."""

from __future__ import annotations

from mnemo.domain.namespace import NamespaceFilter
from mnemo.ports import SearchQuery
from mnemo.services.enrichment.pipeline import PREVIOUS_CONTEXT_WORDS, previous_words
from tests.integration.conftest import auth
from tests.integration.surfaces.test_profile_thrindex import enrich

BEFORE = "The zeppelin museum was closed, so we walked along the harbour and ended the day at the old lighthouse cafe?"
AFTER = "Yes, and the chowder there was excellent."


def found(container, words: str) -> set[str]:
    query = SearchQuery(scope=NamespaceFilter(tenant="local", user_id="erin"), text=words, authors=["user", "agent"])
    return {c.memory_id for c in container.index().search(query)}


def test_the_context_holds_the_predecessors_last_words_only(http, container, aws) -> None:
    ids = [http.post("/v1/memories", headers=auth(), json={"content": text, "user_id": "erin", "as_user": True}).json()["id"]
           for text in (BEFORE, AFTER)]
    enrich(aws)
    assert found(container, "lighthouse") == set(ids)  # the reply is found by the question it answers
    assert found(container, "zeppelin") == {ids[0]}  # not by the start of a long predecessor
    assert previous_words(BEFORE) == "day at the old lighthouse cafe?" and PREVIOUS_CONTEXT_WORDS == 6
