"""Scores a threshold can use: the calibration map, the floor, and graph neighbours that must earn their place."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.domain.scoring import (
    DEFAULT_WEIGHTS,
    RELEVANCE_FLOOR,
    SEMANTIC_EVIDENCE,
    Candidate,
    calibrate,
    fuse,
    semantic_evidence,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_calibration_is_monotone_and_hits_its_knots() -> None:
    values = [calibrate(x / 1000) for x in range(1001)]
    assert values == sorted(values) and values[0] == 0.0 and values[-1] == 1.0
    for raw, expected in DEFAULT_WEIGHTS.calibration:
        assert calibrate(raw) == pytest.approx(expected)
    assert calibrate(-1.0) == 0.0 and calibrate(2.0) == 1.0


def test_the_knots_put_measured_unrelated_hits_under_the_floor_and_near_verbatim_ones_at_0_9() -> None:
    # Raw (uncalibrated) percentiles measured by bench/score_calibration.py on LoCoMo dev (docs/scoring.md):
    # 90% of the hits for another conversation's questions score raw <= 0.222; near-verbatim p5 is raw 0.679.
    assert calibrate(0.222) < RELEVANCE_FLOOR
    assert calibrate(0.679) >= 0.9
    # Positive control: the median relevant hit (raw 0.428) and its p5 (raw 0.215) straddle the floor as measured.
    assert calibrate(0.428) >= RELEVANCE_FLOOR > calibrate(0.215)


def test_a_near_verbatim_match_scores_at_least_0_9_and_an_unrelated_one_falls_below_the_floor() -> None:
    # Signals as the local stack measures them (bench/score_calibration.py): verbatim = every query word, cosine ~0.95.
    verbatim = Candidate("verbatim", lexical=1.0, semantic=0.95, importance=0.5, captured_at=NOW, text_tokens=8)
    unrelated = Candidate("unrelated", lexical=0.0, semantic=0.18, importance=0.5, captured_at=NOW, text_tokens=8)
    scores = {r.memory_id: r.score for r in fuse([verbatim, unrelated], top_k=10, now=NOW, expand_graph=False)}
    assert scores["verbatim"] >= 0.9
    assert scores["unrelated"] < RELEVANCE_FLOOR


def test_a_neighbour_with_no_own_relevance_is_kept_below_the_floor_and_below_direct_matches() -> None:
    # Given a verbatim hit linked (conversational predecessor, 0.6) to a memory unrelated to the query
    parent = Candidate("parent", lexical=1.0, semantic=0.95, importance=0.5, captured_at=NOW, text_tokens=8,
                       links=(("injected", 0.6),))
    weak_direct = Candidate("weak", lexical=0.35, semantic=0.45, captured_at=NOW, text_tokens=8)
    ranked = fuse([parent, weak_direct], top_k=10, now=NOW, admitted={"injected"})
    by_id = {r.memory_id: r for r in ranked}
    # Then its lent score stays under the floor and under the direct match above the floor
    assert by_id["injected"].score < RELEVANCE_FLOOR <= by_id["weak"].score
    assert [r.memory_id for r in ranked] == ["parent", "weak", "injected"]


def test_a_neighbour_that_is_relevant_itself_can_still_rise_on_its_link() -> None:
    # Positive control: a neighbour above the floor on its own keeps the best of its own and the lent score.
    parent = Candidate("parent", lexical=1.0, semantic=0.97, importance=1.0, captured_at=NOW, text_tokens=8,
                       links=(("related", 0.9),))
    related = Candidate("related", lexical=0.15, semantic=0.45, captured_at=NOW, text_tokens=8)
    plain = {r.memory_id: r.score for r in fuse([parent, related], top_k=10, now=NOW, expand_graph=False)}
    expanded = {r.memory_id: r for r in fuse([parent, related], top_k=10, now=NOW, admitted={"related"})}
    assert plain["related"] >= RELEVANCE_FLOOR
    assert expanded["related"].score > plain["related"] and "graph" in expanded["related"].components


def test_a_high_cosine_with_a_shared_word_lifts_a_weak_lexical_hit_over_the_floor() -> None:
    # Given two old memories of equal length (no recency, no importance): one holds a little of the query
    # (a common word: share 0.05) at cosine 0.62, the other no word of it at the same cosine.
    relevant = Candidate("relevant", lexical=0.05, semantic=0.62, text_tokens=4)
    same_cosine_no_word = Candidate("no-word", lexical=0.0, semantic=0.62, text_tokens=4)
    assert calibrate(0.05 * DEFAULT_WEIGHTS.lexical + 0.62 * 0.5**0.5 * DEFAULT_WEIGHTS.semantic) < RELEVANCE_FLOOR
    scores = {r.memory_id: r.score for r in fuse([relevant, same_cosine_no_word], top_k=10, now=NOW, expand_graph=False)}
    # Then the cosine lifts the one that shares a word above the floor, and not the other
    assert scores["relevant"] >= RELEVANCE_FLOOR > scores["no-word"]
    # and a verbatim query (cosine 1) in a store of one reads 0.9 whatever BM25 says
    assert calibrate(0.42, cosine=1.0) == pytest.approx(0.9)


def test_cosines_of_unrelated_texts_lift_nothing() -> None:
    # The highest cosine of a hit for another conversation's question on LoCoMo dev was 0.50.
    assert semantic_evidence(0.50) == 0.0 and semantic_evidence(None) == 0.0
    assert calibrate(0.2, cosine=0.5) == calibrate(0.2) < RELEVANCE_FLOOR
    assert semantic_evidence(SEMANTIC_EVIDENCE) == pytest.approx(RELEVANCE_FLOOR)  # positive control: where the lift starts
