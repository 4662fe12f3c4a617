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


def test_only_a_predecessor_in_the_same_conversation_lends_context(http, container, aws) -> None:
    """A chat import captures one session's first turn seconds after the previous session's last: naming
    the conversation keeps the other session's words out of its context (issue 28, round 10)."""
    said = [(BEFORE, "trip"), (AFTER, "trip"),
            ("I ordered a new desk lamp for the study and it arrives next week with the bulbs?", "study"),
            ("Great, that should brighten the corner.", "study"),
            ("Remind me to water the ferns.", None)]
    ids = []
    for text, conversation in said:
        body = {"content": text, "user_id": "erin", "as_user": True} | ({"conversation_id": conversation} if conversation else {})
        created = http.post("/v1/memories", headers=auth(), json=body)
        assert created.status_code == 201 and created.json().get("conversation_id") == conversation
        ids.append(created.json()["id"])
    enrich(aws)
    # Within a conversation the reply takes its predecessor's last words (positive controls, twice) ...
    assert found(container, "lighthouse") == {ids[0], ids[1]}
    assert found(container, "bulbs") == {ids[2], ids[3]}
    # ... across conversations it does not: the study's first turn followed the trip's last within seconds,
    # and the unnamed memory followed the study's last
    assert found(container, "chowder") == {ids[1]}
    assert found(container, "brighten") == {ids[3]}
    # and the sequence link follows the same rule
    assert {link.other_id for link in container.graph.links("local", ids[3])} >= {ids[2]}
    assert ids[1] not in {link.other_id for link in container.graph.links("local", ids[2])}
    # A stored memory shows its conversation; a malformed one is refused, naming the field
    assert http.get(f"/v1/memories/{ids[2]}", headers=auth()).json()["conversation_id"] == "study"
    refused = http.post("/v1/memories", headers=auth(), json={"content": "x", "conversation_id": "a b/c"})
    assert refused.status_code == 400 and refused.json()["error"]["message"].startswith("conversation_id: "), refused.text
