"""Repeats in a search (docs/scoring.md "Repeats"): through `POST /v1/memories/search`, on the local
embedder and the real worker, a memory restating a better-placed one moves below a distinct hit in
`mode=full`, says so in `explain`, and is never dropped; `mode=fast` keeps the fused order; and only
the caller's own memories can demote a hit (another user's copy of the same words counts for nothing)."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import auth
from tests.integration.surfaces.test_profile_thrindex import enrich

PLAN = "We are planning the kitchen renovation with our contractor for the spring"
AGAIN = "Kitchen renovation: planning it with our contractor for spring, again"
LAND = "The kitchen renovation contractor sent the countertop quote for March"
QUERY = "kitchen renovation contractor"


def capture(http, user: str, *texts: str) -> dict[str, str]:
    ids = {}
    for text in texts:
        created = http.post("/v1/memories", headers=auth(), json={"content": text, "user_id": user, "as_user": True})
        assert created.status_code == 201, created.text
        ids[text] = created.json()["id"]
    return ids


def search(http, user: str, **body: Any) -> list[dict[str, Any]]:
    response = http.post("/v1/memories/search", headers=auth(),
                         json={"query": QUERY, "user_id": user, "explain": True, "top_k": 5} | body)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def test_a_restatement_moves_below_a_distinct_hit_in_full_mode_only(http, aws) -> None:
    dana = capture(http, "dana", PLAN, AGAIN, LAND)
    fay = capture(http, "fay", AGAIN, LAND)  # the control: the same two, without the memory AGAIN restates
    eli = capture(http, "eli", PLAN)  # the same words as dana's PLAN, in another user's namespace
    enrich(aws)

    fast = search(http, "dana", mode="fast")  # the fused order: the two restatements first, then LAND
    first, second = (r["id"] for r in fast[:2])
    assert {first, second} == {dana[PLAN], dana[AGAIN]} and [r["id"] for r in fast] == [first, second, dana[LAND]]
    assert all("repeat" not in r["explain"] for r in fast)

    full = search(http, "dana")  # the second restatement moves below the distinct hit: moved, not dropped
    assert [r["id"] for r in full] == [first, dana[LAND], second]
    assert full[2]["explain"]["repeat"] < 0 and full[2]["score"] < full[1]["score"]
    assert "repeat" not in full[0]["explain"] and "repeat" not in full[1]["explain"]

    alone = search(http, "fay")  # without PLAN nothing is repeated: AGAIN keeps its place above LAND,
    assert [r["id"] for r in alone] == [fay[AGAIN], fay[LAND]]  # and eli's PLAN does not count for fay
    assert all("repeat" not in r["explain"] for r in alone)
    assert [r["id"] for r in search(http, "eli")] == [eli[PLAN]]  # positive control: eli's PLAN is found by eli
