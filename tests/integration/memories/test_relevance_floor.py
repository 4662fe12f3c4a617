"""The thought tools' relevance floor (docs/scoring.md): /mcp retrieve_thoughts drops hits scoring below
RELEVANCE_FLOOR by default, judges a memory still being indexed on its words alone, and /v1 keeps its
top_k. Real MCP client over the ASGI app, moto and the real worker underneath."""

from __future__ import annotations

from typing import Any

from mnemo.domain.scoring import RELEVANCE_FLOOR
from tests.integration.conftest import auth
from tests.integration.surfaces.test_profile_thrindex import enrich
from tests.integration.surfaces.test_r3_cross_surface import at


def thoughts(app: Any, query: str, **arguments: Any) -> dict[str, float]:
    result = at("/mcp", app, "retrieve_thoughts", {"query": query, **arguments}).structured_content
    return {t["id"]: t["score"] for t in result["results"]}


def test_unrelated_hits_fall_under_the_floor_once_indexed_and_related_ones_stay(http, aws) -> None:
    app = http.app
    tea = at("/mcp", app, "capture_thought", {"raw": "I prefer oolong tea in the morning", "as_user": True})
    tyres = at("/mcp", app, "capture_thought", {"raw": "The car needs new tyres before winter", "as_user": True})
    tea_id, tyres_id = tea.structured_content["thought"]["id"], tyres.structured_content["thought"]["id"]

    # Given: not indexed yet. Then a query sharing one word finds it (read-your-writes: words alone, no floor)
    assert tyres_id in thoughts(app, "winter holiday plans")

    enrich(aws)
    # Then, indexed: the related query scores above the floor. The tyres were captured just after the tea,
    # so their context holds "oolong tea in the morning": a match there alone stays under the floor.
    related = thoughts(app, "oolong tea")
    assert list(related) == [tea_id] and related[tea_id] >= RELEVANCE_FLOOR
    assert thoughts(app, "summer holiday plans") == {}
    # Positive control: the hits are there, under the floor, when the caller lowers the threshold
    assert tyres_id in thoughts(app, "oolong tea", threshold=0)
    below = thoughts(app, "summer holiday plans", threshold=0)
    assert tyres_id in below and below[tyres_id] < RELEVANCE_FLOOR
    # and /v1 keeps returning its top_k, floor or not
    found = http.post("/v1/memories/search", json={"query": "summer holiday plans"}, headers=auth()).json()
    assert tyres_id in [m["id"] for m in found["results"]]
