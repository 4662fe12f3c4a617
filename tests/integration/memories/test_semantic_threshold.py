"""The semantic threshold is the embedder's (issue 54, domain/semantic_thresholds.py): a search lifts a
hit that shares a word with the query by its cosine only from the threshold measured for the model that
embedded the query. MiniLM's is measured (0.59); a model nobody measured (Bedrock Titan V2) lifts nothing.
Real MiniLM vectors both times: only the model the embedder reports differs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest

from mnemo.domain.commands import CaptureCommand, RetrieveCommand
from mnemo.domain.scoring import RELEVANCE_FLOOR
from tests.conftest import FixedClock
from tests.integration.surfaces.test_profile_thrindex import enrich

# Every memory says "coffee", so the word weighs almost nothing of "coffee habits" (whose "habits" no memory
# holds): the espresso note shares a word with the query and has MiniLM cosine 0.63 to it, but its sum alone
# (recency spent: searched ten years on) stays under the floor.
ESPRESSO = "Every morning I have a coffee, a strong espresso"
OTHERS = ("Coffee with Tom on Friday about the budget", "Bought a new coffee grinder",
          "The coffee machine at the office is broken", "Coffee stain on the blue shirt")
QUERY = "coffee habits"


class Unmeasured:
    """The local MiniLM's vectors under a model id nobody measured a threshold for (Titan V2's)."""

    model_id = "amazon.titan-embed-text-v2:0"
    dimension = 1024

    def __init__(self, minilm) -> None:
        self._minilm = minilm

    def embed(self, texts: Sequence[str], *, keep_states: bool = False) -> list[list[float]]:
        return self._minilm.embed(texts, keep_states=keep_states)


@pytest.fixture
def stored(container, principal, aws) -> str:
    espresso = container.memories.capture(principal, CaptureCommand(raw=ESPRESSO, user_id="alice", as_user=True))
    for text in OTHERS:
        container.memories.capture(principal, CaptureCommand(raw=text, user_id="alice", as_user=True))
    enrich(aws)
    return espresso.id


def scores(container, principal, **command) -> dict[str, tuple[float, dict[str, float]]]:
    later = FixedClock.START + timedelta(days=3650)
    hits = container.memories.search(principal, RetrieveCommand(query=QUERY, user_id="alice", mode="fast",
                                                                now=later, **command))
    return {h.memory.id: (h.score, h.components) for h in hits}


def test_an_unmeasured_embedders_cosine_lifts_no_weak_word_hit_and_minilms_does(stored, container, principal) -> None:
    # Given MiniLM (measured, 0.59): the espresso note passes the floor on its cosine's lift
    minilm = scores(container, principal, threshold=RELEVANCE_FLOOR)
    assert stored in minilm and minilm[stored][0] >= RELEVANCE_FLOOR
    score, parts = minilm[stored]
    assert parts["cosine"] >= 0.59 and parts["lexical"] > 0 and parts["raw"] < 0.23  # the lift, not the sum
    # When the same store is searched with an embedder whose model nobody measured
    container.memories._embedder = Unmeasured(container.embedder)
    unmeasured = scores(container, principal, threshold=RELEVANCE_FLOOR)
    # Then its cosine lifts nothing: the note is under the floor, with the same signals and its sum's score
    assert stored not in unmeasured
    below = scores(container, principal, threshold=0)
    assert below[stored][0] < RELEVANCE_FLOOR and below[stored][1]["cosine"] == pytest.approx(parts["cosine"])
