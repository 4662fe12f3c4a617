"""Late interaction (adapters/local/late_interaction.py): the MaxSim arithmetic on hand-made token
vectors, and on the real MiniLM the case it exists for: an aside that answers the question, in a
message about something else, outscores the same message without it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from mnemo.adapters.local.late_interaction import (
    LateInteractionReranker,
    StoredStates,
    max_sim,
    max_sims,
    stored_max_sims,
)
from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder, TokenStates
from mnemo.domain.models import Memory
from mnemo.domain.scoring import Candidate, Ranked, kth, prescored, reranked, score

AXES = {"bake": [1, 0, 0], "sale": [0, 1, 0], "kitchen": [0, 0, 1], "the": [1, 1, 0], "?": [0, 1, 1]}


def states(text: str) -> TokenStates:
    tokens = tuple(text.split())
    vectors = np.array([AXES[t] for t in tokens], dtype=np.float32).reshape(len(tokens), 3)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return TokenStates(tokens, vectors / np.maximum(norms, 1e-12))


def memories(*texts: str, tenant: str = "t") -> list[Memory]:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return [Memory(id=f"m{i}", tenant=tenant, raw=text, normalized_text=text, captured_at=at, created_at=at,
                   updated_at=at, content_hash=str(i)) for i, text in enumerate(texts)]


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
    hits = memories("kitchen bake", "sale bake", "kitchen", "")
    assert reranker.rerank("the bake sale ?", hits) == [0.5, 1.0, 0.0, 0.0]
    assert encoder.calls == [["the bake sale ?", "kitchen bake", "sale bake", "kitchen", ""]]  # one batch
    assert reranker.rerank("the bake", []) == [] and len(encoder.calls) == 1  # nothing to score: no model run


def test_a_query_of_stopwords_only_keeps_all_its_tokens_and_relevance_stays_in_the_unit_interval() -> None:
    reranker = LateInteractionReranker(Axes())
    assert reranker.rerank("the", memories("the", "kitchen")) == pytest.approx([1.0, 0.0])
    opposite = np.array([[-1.0, 0.0, 0.0]], dtype=np.float32)
    assert max_sim(states("bake").vectors, opposite) == 0.0  # a negative cosine is no relevance, not less


class Held:
    """A `StateSource` holding states per (tenant, memory id), as the local index does; records lookups."""

    def __init__(self, held: dict[tuple[str, str], StoredStates]) -> None:
        self.held, self.lookups = held, []

    def token_states_of(self, tenant: str, memory_ids: Sequence[str]) -> Mapping[str, StoredStates]:
        self.lookups.append((tenant, list(memory_ids)))
        return {mid: self.held[(tenant, mid)] for mid in memory_ids if (tenant, mid) in self.held}


def test_stored_states_stand_in_for_the_model_only_while_they_are_of_the_memorys_current_text() -> None:
    hits = memories("kitchen bake", "sale bake", "kitchen")
    source = Held({("t", "m0"): StoredStates.of("kitchen bake", states("kitchen bake")),  # current
                   ("t", "m1"): StoredStates.of("sale", states("sale")),  # of an older text: stale
                   ("other", "m2"): StoredStates.of("kitchen", states("kitchen"))})  # another tenant's m2
    encoder = Axes()
    relevance = LateInteractionReranker(encoder, stored=source).rerank("the bake sale ?", hits)
    assert relevance == pytest.approx([0.5, 1.0, 0.0], abs=0.01)  # as the model alone (first test), to int8 rounding
    assert encoder.calls == [["the bake sale ?", "sale bake", "kitchen"]]  # the query, the stale and the unheld ones
    assert source.lookups == [("t", ["m0", "m1", "m2"])]  # in the memories' own tenant only
    assert LateInteractionReranker(encoder).rerank("the bake sale ?", hits) == [0.5, 1.0, 0.0]  # control: no source


def test_prescore_scores_the_held_candidates_in_their_tenant_and_the_rerank_after_it_reuses_the_querys_rows() -> None:
    source = Held({("t", "m0"): StoredStates.of("kitchen bake", states("kitchen bake")),
                   ("t", "m1"): StoredStates.of("sale", states("sale")),  # of an older text: still its best guess
                   ("other", "m2"): StoredStates.of("kitchen", states("kitchen"))})  # another tenant's m2
    encoder = Axes()
    reranker = LateInteractionReranker(encoder, stored=source)
    assert reranker.prescore("the bake sale ?", "t", ["m0", "m1", "m2"]) == pytest.approx({"m0": 0.5, "m1": 0.5}, abs=0.01)
    assert source.lookups == [("t", ["m0", "m1", "m2"])] and encoder.calls == [["the bake sale ?"]]
    assert reranker.prescore("the bake sale ?", "other", ["m2"]) == pytest.approx({"m2": 0.0})  # control: its own
    hits = memories("kitchen bake", "sale bake")
    reranker.prescore("the bake sale ?", "t", ["m0"])
    encoder.calls.clear()
    assert reranker.rerank("the bake sale ?", hits) == pytest.approx([0.5, 1.0], abs=0.01)  # m1's text is checked
    assert encoder.calls == [["sale bake"]]  # the stale one alone: the query's rows came from the prescore ...
    assert reranker.rerank("the bake sale ?", hits) == pytest.approx([0.5, 1.0], abs=0.01)
    assert encoder.calls[-1] == ["the bake sale ?", "sale bake"]  # ... once: a second rerank encodes it again
    assert LateInteractionReranker(encoder).prescore("the bake sale ?", "t", ["m0"]) == {}  # nothing held, no model run
    assert len(encoder.calls) == 2


def test_max_sims_scores_many_memories_as_one_product_as_max_sim_scores_each() -> None:
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(4, 8)).astype(np.float32)
    many = [rng.normal(size=(n, 8)).astype(np.float32) for n in (3, 0, 1, 7)]  # an empty memory scores 0
    assert max_sims(rows, many) == pytest.approx([max_sim(rows, m) for m in many])
    assert max_sims(rows, []) == [] and max_sims(rows[:0], many) == [0.0] * 4
    stored = [StoredStates.of("x", TokenStates(("t",) * len(m), m)) for m in many]  # the prescore's path
    assert stored_max_sims(rows, stored) == pytest.approx(max_sims(rows, [s.vectors() for s in stored]), abs=1e-6)


def test_stored_states_keep_each_row_to_within_half_a_step_of_its_own_scale() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(5, 384)).astype(np.float32)
    vectors[2] = 0.0  # a zero row stays zero (no division by a zero scale)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    stored = StoredStates.of("x", TokenStates(tuple("abcde"), vectors))
    assert stored.codes.dtype == np.int8 and stored.codes.nbytes == 5 * 384  # a quarter of float32's bytes
    step = np.abs(vectors).max(axis=1, keepdims=True) / 127.0
    assert np.all(np.abs(stored.vectors() - vectors) <= step / 2 + 1e-7)
    assert not stored.vectors()[2].any()


def test_the_rerankers_share_blends_its_relevance_with_the_fused_score_and_ties_keep_the_fused_order() -> None:
    hits = [Ranked("a", 0.75, {}), Ranked("b", 0.5, {}), Ranked("c", 0.25, {})]  # fused order, exact in binary
    relevance = [0.25, 0.75, 0.75]
    assert [h.memory_id for h in reranked(hits, relevance)] == ["b", "c", "a"]  # share 1: its order alone
    assert [h.memory_id for h in reranked(hits, relevance, share=0.5)] == ["b", "a", "c"]  # .625, .5, .5
    assert [h.memory_id for h in reranked(hits, relevance, share=0.0)] == ["a", "b", "c"]  # share 0: fused
    out = reranked(hits, relevance, share=0.5)  # the scores stay the fused ones; `rerank` joins the parts
    assert [(h.score, h.components["rerank"]) for h in out] == [(0.5, 0.75), (0.75, 0.25), (0.25, 0.75)]


def test_a_repeat_keeps_the_share_of_its_relevance_it_kept_of_its_score_so_the_reranker_cannot_lift_it_back() -> None:
    original, repeat = Ranked("a", 0.5, {}), Ranked("b", 0.1, {"repeat": -0.4})  # b kept a fifth of its 0.5
    other = Ranked("c", 0.3, {})
    order = reranked([original, other, repeat], [0.6, 0.5, 0.6], share=1.0)
    assert [h.memory_id for h in order] == ["a", "c", "b"]  # b's relevance counts 0.12: below c's 0.5
    assert order[2].components["rerank"] == 0.6  # what the reranker said is reported as it said it
    unmarked = Ranked("b", 0.1, {})  # control: the same score without the mark is judged on its relevance
    assert [h.memory_id for h in reranked([original, other, unmarked], [0.6, 0.5, 0.6], share=1.0)] == ["a", "b", "c"]


def test_prescored_orders_the_best_rows_by_the_blend_and_leaves_the_rest_and_the_scores_alone() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    scored = score([Candidate(memory_id=m, lexical=v, captured_at=at) for m, v in
                    [("a", 0.9), ("b", 0.7), ("c", 0.55), ("d", 0.5), ("e", 0.1)]], now=at)
    assert scored.best_ids(5) == ["a", "b", "c", "d", "e"]
    ordered = prescored(scored, {"c": 1.0, "a": 0.0}, share=0.5, depth=4)  # b and d unheld: at their own score
    assert ordered.best_ids(5) == ["c", "b", "d", "a", "e"]  # e, past the depth, keeps its place
    assert ordered.scores == scored.scores and ordered.parts == scored.parts
    assert prescored(scored, {}, share=0.5).best_ids(5) == scored.best_ids(5)  # control: nothing held, no change
    # The bar a graph neighbour must reach stays the k-th best score among the hits read, in any order.
    assert kth(ordered, ordered.best_ids(4), 1) == kth(scored, scored.best_ids(4), 1) == scored.score_of("a")


REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = Path(os.environ.get("MNEMO_MODEL_DIR") or REPO_ROOT / "models" / "minilm")


@pytest.mark.skipif(not (MODEL_DIR / "model.safetensors").is_file(), reason="`make model` fetches MiniLM")
def test_on_minilm_an_aside_that_answers_outscores_the_same_message_without_it_where_the_mean_vector_barely_moves() -> None:
    embedder = LocalMiniLmEmbedder(MODEL_DIR)
    query = "How much money did I raise at the charity bake sale?"
    message = ("I spent the weekend repainting the kitchen cabinets a pale green and fixing the hinges. Then we had "
               "dinner with my sister, watched a movie about pirates and walked along the river.")
    with_aside = message + " By the way, I raised $500 at the charity bake sale."
    relevance = LateInteractionReranker(embedder).rerank(query, memories(message, with_aside))
    assert relevance[1] > 0.75 and relevance[0] < 0.25  # the aside's words answer the question's
    vectors = np.asarray(embedder.embed([query, message, with_aside]))
    cosines = vectors[1:] @ vectors[0]
    assert relevance[1] - relevance[0] > 1.2 * (cosines[1] - cosines[0])  # wider than the mean vector's gap
