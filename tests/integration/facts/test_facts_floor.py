"""Issue 54, facts: `search` on /mcp/facts and `POST /v1/search` drop facts unrelated to the query unless
the caller passes a lower `threshold` (an extension of seed 001, optional: a seed call is unchanged), so
an answer of fewer than `limit` edges means nothing else matched. Each refusal beside the same request
accepted; each drop beside the same store answering with `threshold: 0`."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mnemo.services.facts.search import FACT_RELEVANCE_FLOOR
from tests.integration.conftest import auth
from tests.integration.facts.test_rest_facts import record, search
from tests.integration.surfaces.test_profile_facts import app, error_text, facts, structured  # noqa: F401 - the fixture

QUESTION = "Where does Quinn work?"
BAD = [(1.5, "threshold: must be at most 1.0"), (-0.1, "threshold: must be at least 0.0"),
       ("x", "threshold: must be a number"), ("0.5", "threshold: must be a number"), (True, "threshold: must be a number")]


def test_rest_search_drops_the_unrelated_fact_by_default_and_threshold_0_keeps_it(http) -> None:
    # Given a related and an unrelated fact
    related = record(http, "Quinn", "works at", "Umbrella")["edge"]["uuid"]
    unrelated = record(http, "Priya", "likes", "pottery")["edge"]["uuid"]
    # When the question is asked with no threshold, then only the related fact comes back
    assert [e["uuid"] for e in search(http, QUESTION)] == [related]
    # Control: the same request with threshold 0 fills to limit, the unrelated fact below the floor
    everything = search(http, QUESTION, threshold=0)
    assert [e["uuid"] for e in everything] == [related, unrelated]
    assert everything[1]["score"] < FACT_RELEVANCE_FLOOR <= everything[0]["score"]
    # An explicit threshold is read as given: above the related fact's score, nothing; at it, that fact
    assert search(http, QUESTION, threshold=1.0) == [] or everything[0]["score"] == 1.0
    assert [e["uuid"] for e in search(http, QUESTION, threshold=everything[0]["score"])] == [related]


def test_rest_threshold_is_a_strict_number_in_0_1_named_in_the_error(http) -> None:
    for value, message in BAD:
        refused = http.post("/v1/search", json={"query": QUESTION, "threshold": value}, headers=auth())
        assert refused.status_code == 400, (value, refused.text)
        assert refused.json()["error"] == {"code": "validation_error", "message": message}, value
    for value in (0, 0.0, 0.5, 1, None):  # positive controls: every number in range, an integer, and null
        assert http.post("/v1/search", json={"query": QUESTION, "threshold": value}, headers=auth()).status_code == 200, value


def test_mcp_search_drops_the_unrelated_fact_by_default_and_threshold_0_keeps_it(app) -> None:  # noqa: F811 - the fixture
    async def calls(client: Client) -> Any:
        related = structured(await client.call_tool("record_fact", {"subject": "Quinn", "predicate": "works at", "object": "Umbrella"}))
        unrelated = structured(await client.call_tool("record_fact", {"subject": "Priya", "predicate": "likes", "object": "pottery"}))
        default = structured(await client.call_tool("search", {"query": QUESTION}))
        control = structured(await client.call_tool("search", {"query": QUESTION, "threshold": 0}))
        return related["edge"]["uuid"], unrelated["edge"]["uuid"], default, control

    related, unrelated, default, control = facts(app, calls)
    assert [e["uuid"] for e in default["edges"]] == [related]
    assert [e["uuid"] for e in control["edges"]] == [related, unrelated]


def test_mcp_threshold_refusals_name_the_argument_beside_the_accepted_call(app) -> None:  # noqa: F811 - the fixture
    async def calls(client: Client) -> Any:
        refused = [await client.call_tool("search", {"query": QUESTION, "threshold": value}) for value, _ in BAD]
        accepted = [await client.call_tool("search", {"query": QUESTION, "threshold": value}) for value in (0, 0.5, 1.0)]
        return refused, accepted

    refused, accepted = facts(app, calls)
    assert [error_text(r) for r in refused] == [message for _, message in BAD]
    assert [r.structured_content["error"]["code"] for r in refused] == ["validation_error"] * len(BAD)
    assert not any(r.is_error for r in accepted)


def test_a_one_word_query_matching_a_fact_in_a_small_store_passes_the_floor(http) -> None:
    # Given a two-fact store whose decisions are long objects, so the query names no entity and only its words
    # and meaning count (issue 54: the lexical signal is a share of the query's own maximum, so a one-word exact
    # hit is a whole match however few facts there are; with the fixed half-score of 3, "team" here had a fifth
    # of one and its fact scored 0.19, under the floor)
    team = record(http, "user", "decided", "the team will use Postgres for the billing service")["edge"]["uuid"]
    dog = record(http, "user", "decided", "name the dog Biscuit")["edge"]["uuid"]
    # When the one word is asked with no threshold, then that fact comes back, above the floor
    default = search(http, "team")
    assert [e["uuid"] for e in default] == [team] and default[0]["score"] >= FACT_RELEVANCE_FLOOR
    # Control: the same store with threshold 0 shows the other decision too, below the floor
    everything = search(http, "team", threshold=0)
    assert [e["uuid"] for e in everything] == [team, dog]
    assert everything[1]["score"] < FACT_RELEVANCE_FLOOR
