"""`now` on a search (issue 28): the reference time recency and relative dates are read against,
given in the body of `POST /v1/memories/search` or on the command; a value that is not an ISO-8601
time is refused naming the field."""

from __future__ import annotations

import pytest

from mnemo.domain.commands import RetrieveCommand
from tests.integration.conftest import auth
from tests.integration.surfaces.test_profile_thrindex import enrich

OLD, NEW = "2020-01-01T09:00:00Z", "2024-01-01T09:00:00Z"


def capture_two(http) -> dict[str, str]:
    """The same words captured four years apart: only time tells them apart."""
    ids = {}
    for when, word in ((OLD, "first"), (NEW, "second")):
        created = http.post("/v1/memories", headers=auth(), json={
            "content": f"The team standup moved to Tuesdays ({word} note)", "user_id": "dana", "captured_at": when,
            "as_user": True})
        assert created.status_code == 201, created.text
        ids[when] = created.json()["id"]
    return ids


def recency(http, now: str | None) -> dict[str, float]:
    body = {"query": "standup Tuesdays", "user_id": "dana", "explain": True} | ({"now": now} if now else {})
    response = http.post("/v1/memories/search", headers=auth(), json=body)
    assert response.status_code == 200, response.text
    return {r["id"]: r["explain"]["recency"] for r in response.json()["results"]}


def test_now_in_the_search_body_is_the_reference_time(http, aws) -> None:
    ids = capture_two(http)
    enrich(aws)
    as_of_old, as_of_new = recency(http, "2020-01-02T09:00:00+00:00"), recency(http, "2024-01-02T10:00:00+01:00")
    assert as_of_old[ids[OLD]] > 0.99 and as_of_new[ids[OLD]] < 0.01  # the old note is fresh only as of 2020
    assert as_of_new[ids[NEW]] > 0.99
    assert recency(http, None) == pytest.approx(recency(http, "2025-06-07T09:00:00Z"), abs=1e-6)  # default: the clock (FixedClock)
    refused = http.post("/v1/memories/search", headers=auth(), json={"query": "standup", "now": "last tuesday"})
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == ("now: must be an ISO-8601 date or date-time, e.g. 2024-05-08 or "
                                                  "2024-05-08T13:56:00+02:00 (no offset = UTC)")


def test_service_search_reads_recency_against_the_command_now(container, principal, http, aws) -> None:
    ids = capture_two(http)
    enrich(aws)

    def scores(now: str) -> dict[str, float]:
        hits = container.memories.search(principal, RetrieveCommand(query="standup Tuesdays", user_id="dana", now=now))
        return {h.memory.id: h.components["recency"] for h in hits}

    assert scores("2020-01-02")[ids[OLD]] > 0.99 and scores("2024-01-02")[ids[OLD]] < 0.01
    with pytest.raises(ValueError, match="now: only a search has a reference time"):
        RetrieveCommand(now="2024-01-02")  # a browse has no scores to read against it


def test_the_days_a_question_names_are_read_against_now(http, aws) -> None:
    """Two notes alike but for the day they were captured (5 and 12 March 2024): "a week ago", read
    against `now`, picks the one said then, and an absolute day picks its own, either way round."""
    ids = {}
    for when in ("2024-03-05T10:00:00Z", "2024-03-12T10:00:00Z"):
        created = http.post("/v1/memories", headers=auth(), json={
            "content": "We talked through the venue options for the wedding", "user_id": "dana", "captured_at": when,
            "as_user": True})
        assert created.status_code == 201, created.text
        ids[when[:10]] = created.json()["id"]
    enrich(aws)

    def first(query: str, now: str) -> tuple[str, dict[str, float]]:
        response = http.post("/v1/memories/search", headers=auth(), json={
            "query": query, "user_id": "dana", "now": now, "explain": True})
        assert response.status_code == 200, response.text
        top = response.json()["results"][0]
        return top["id"], top["explain"]

    week_ago, explain = first("What did we discuss about the wedding a week ago?", "2024-03-19T09:00:00Z")
    assert week_ago == ids["2024-03-12"] and explain["when"] == 1.0
    assert first("What did we discuss about the wedding a week ago?", "2024-03-12T09:00:00Z")[0] == ids["2024-03-05"]
    assert first("What did we discuss about the wedding on 5 March 2024?", "2024-06-01T09:00:00Z")[0] == ids["2024-03-05"]
    assert first("What did we discuss about the wedding on March 12, 2024?", "2024-06-01T09:00:00Z")[0] == ids["2024-03-12"]
    newest, plain = first("What did we discuss about the wedding?", "2024-06-01T09:00:00Z")
    assert newest == ids["2024-03-12"] and "when" not in plain  # no day named: equal scores, the newer first
