"""The local reranker (`MNEMO_RERANKER=minilm`, adapters/local/late_interaction.py) through
`POST /v1/memories/search` on the local MiniLM and the real worker: in mode=full it lifts the memory
whose aside answers the question above one that only shares its topic, keeps the calibrated scores,
orders by half fused score, half relevance; mode=fast never calls it; and only the caller's own
memories reach it (another user's copy of the same words is neither scored nor returned)."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.adapters.local.late_interaction import LATE_INTERACTION_SHARE, LateInteractionReranker
from tests.integration.conftest import auth
from tests.integration.surfaces.test_profile_thrindex import enrich

QUERY = "How much money did I raise at the charity bake sale?"
ASIDE = ("I spent the weekend repainting the kitchen cabinets a pale green and fixing the hinges that squeaked. "
         "By the way, I raised $500 at the charity bake sale.")
TOPIC = "Charity bake sale on Saturday at the church hall."
OTHERS = ["My sister baked a lemon cake for the school fair.", "I gave money to the animal shelter charity last year."]


@pytest.fixture(autouse=True)
def _minilm_reranker(aws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_RERANKER", "minilm")  # before `container` reads the settings


def capture(http, user: str, *texts: str) -> dict[str, str]:
    ids = {}
    for text in texts:
        created = http.post("/v1/memories", headers=auth(), json={"content": text, "user_id": user, "as_user": True})
        assert created.status_code == 201, created.text
        ids[text] = created.json()["id"]
    return ids


def search(http, user: str, **body: Any) -> list[dict[str, Any]]:
    response = http.post("/v1/memories/search", headers=auth(),
                         json={"query": QUERY, "user_id": user, "explain": True, "top_k": 4} | body)
    assert response.status_code == 200, response.text
    return response.json()["results"]


class Recording:
    """The configured reranker, recording how many texts each call scores."""

    def __init__(self, inner: LateInteractionReranker) -> None:
        self.inner, self.share, self.sizes = inner, inner.share, []

    def rerank(self, query: str, texts: list[str]) -> list[float]:
        self.sizes.append(len(texts))
        return self.inner.rerank(query, texts)


def test_full_mode_lifts_the_memory_whose_aside_answers_and_only_the_callers_memories_reach_it(
    http, aws, container
) -> None:
    dana = capture(http, "dana", ASIDE, TOPIC, *OTHERS)
    eli = capture(http, "eli", ASIDE)  # the same words in another user's namespace
    enrich(aws)
    assert isinstance(container.reranker, LateInteractionReranker)
    assert container.reranker._encoder is container.embedder  # one MiniLM in memory, not two
    recording = Recording(container.reranker)
    container.memories._reranker = recording

    fast = search(http, "dana", mode="fast")  # the fused order: the topic's words first
    assert [r["id"] for r in fast[:2]] == [dana[TOPIC], dana[ASIDE]]
    assert all("rerank" not in r["explain"] for r in fast) and recording.sizes == []

    full = search(http, "dana")
    assert [r["id"] for r in full[:2]] == [dana[ASIDE], dana[TOPIC]]  # the answer first
    relevance = {r["id"]: r["explain"]["rerank"] for r in full}
    assert relevance[dana[ASIDE]] > relevance[dana[TOPIC]] + 0.1
    share = LATE_INTERACTION_SHARE
    keys = [(1 - share) * r["score"] + share * r["explain"]["rerank"] for r in full]
    assert keys == sorted(keys, reverse=True)  # half fused score, half relevance
    assert recording.sizes == [4]  # dana's four memories, not eli's copy
    assert eli[ASIDE] not in relevance

    container.memories._reranker = None  # the same search without the stage: same hits, same scores
    plain = search(http, "dana")
    assert sorted((r["id"], r["score"]) for r in plain) == sorted((r["id"], r["score"]) for r in full)
    assert [r["id"] for r in plain[:2]] == [dana[TOPIC], dana[ASIDE]]
    container.memories._reranker = recording
    assert [r["id"] for r in search(http, "eli")] == [eli[ASIDE]]  # control: eli finds his own copy
