"""Late interaction (adapters/local/late_interaction.py): the MaxSim arithmetic on hand-made token
vectors, and on the real MiniLM the case it exists for: an aside that answers the question, in a
message about something else, outscores the same message without it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mnemo.adapters.local.late_interaction import LateInteractionReranker, max_sim
from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder, TokenStates
from mnemo.domain.scoring import Ranked, reranked

AXES = {"bake": [1, 0, 0], "sale": [0, 1, 0], "kitchen": [0, 0, 1], "the": [1, 1, 0], "?": [0, 1, 1]}


def states(text: str) -> TokenStates:
    tokens = tuple(text.split())
    vectors = np.array([AXES[t] for t in tokens], dtype=np.float32).reshape(len(tokens), 3)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return TokenStates(tokens, vectors / np.maximum(norms, 1e-12))


class Axes:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def token_states(self, texts: Sequence[str]) -> list[TokenStates]:
        self.calls.append(list(texts))
        return [states(t) for t in texts]


def test_each_content_word_of_the_query_takes_its_best_match_and_stopwords_and_punctuation_do_not_count() -> None:
    encoder = Axes()
    reranker = LateInteractionReranker(encoder)
    # "the" and "?" would match every memory half-way: they are left out of the query's rows.
    assert reranker.rerank("the bake sale ?", ["kitchen bake", "sale bake", "kitchen", ""]) == [0.5, 1.0, 0.0, 0.0]
    assert encoder.calls == [["the bake sale ?", "kitchen bake", "sale bake", "kitchen", ""]]  # one batch
    assert reranker.rerank("the bake", []) == [] and len(encoder.calls) == 1  # nothing to score: no model run


def test_a_query_of_stopwords_only_keeps_all_its_tokens_and_relevance_stays_in_the_unit_interval() -> None:
    reranker = LateInteractionReranker(Axes())
    assert reranker.rerank("the", ["the", "kitchen"]) == pytest.approx([1.0, 0.0])
    opposite = TokenStates(("bake",), np.array([[-1.0, 0.0, 0.0]], dtype=np.float32))
    assert max_sim(states("bake").vectors, opposite) == 0.0  # a negative cosine is no relevance, not less


def test_the_rerankers_share_blends_its_relevance_with_the_fused_score_and_ties_keep_the_fused_order() -> None:
    hits = [Ranked("a", 0.75, {}), Ranked("b", 0.5, {}), Ranked("c", 0.25, {})]  # fused order, exact in binary
    relevance = [0.25, 0.75, 0.75]
    assert [h.memory_id for h in reranked(hits, relevance)] == ["b", "c", "a"]  # share 1: its order alone
    assert [h.memory_id for h in reranked(hits, relevance, share=0.5)] == ["b", "a", "c"]  # .625, .5, .5
    assert [h.memory_id for h in reranked(hits, relevance, share=0.0)] == ["a", "b", "c"]  # share 0: fused
    out = reranked(hits, relevance, share=0.5)  # the scores stay the fused ones; `rerank` joins the parts
    assert [(h.score, h.components["rerank"]) for h in out] == [(0.5, 0.75), (0.75, 0.25), (0.25, 0.75)]


REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = Path(os.environ.get("MNEMO_MODEL_DIR") or REPO_ROOT / "models" / "minilm")


@pytest.mark.skipif(not (MODEL_DIR / "model.safetensors").is_file(), reason="`make model` fetches MiniLM")
def test_on_minilm_an_aside_that_answers_outscores_the_same_message_without_it_where_the_mean_vector_barely_moves() -> None:
    embedder = LocalMiniLmEmbedder(MODEL_DIR)
    query = "How much money did I raise at the charity bake sale?"
    message = ("I spent the weekend repainting the kitchen cabinets a pale green and fixing the hinges. Then we had "
               "dinner with my sister, watched a movie about pirates and walked along the river.")
    with_aside = message + " By the way, I raised $500 at the charity bake sale."
    relevance = LateInteractionReranker(embedder).rerank(query, [message, with_aside])
    assert relevance[1] > 0.75 and relevance[0] < 0.25  # the aside's words answer the question's
    vectors = np.asarray(embedder.embed([query, message, with_aside]))
    cosines = vectors[1:] @ vectors[0]
    assert relevance[1] - relevance[0] > 1.2 * (cosines[1] - cosines[0])  # wider than the mean vector's gap
