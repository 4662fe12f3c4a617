"""Scores a threshold can use: the calibration map, the floor, and graph neighbours that must earn their place."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.domain.scoring import DEFAULT_WEIGHTS, RELEVANCE_FLOOR, Candidate, calibrate, fuse

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_calibration_is_monotone_and_hits_its_knots() -> None:
    values = [calibrate(x / 1000) for x in range(1001)]
    assert values == sorted(values) and values[0] == 0.0 and values[-1] == 1.0
    for raw, expected in DEFAULT_WEIGHTS.calibration:
        assert calibrate(raw) == pytest.approx(expected)
    assert calibrate(-1.0) == 0.0 and calibrate(2.0) == 1.0


def test_a_near_verbatim_match_scores_at_least_0_9_and_an_unrelated_one_falls_below_the_floor() -> None:
    # Signals as the local stack measures them (bench/score_calibration.py): verbatim = strong BM25 and cosine ~0.95.
    verbatim = Candidate("verbatim", lexical=9.0, semantic=0.95, importance=0.5, captured_at=NOW, text_tokens=8)
    unrelated = Candidate("unrelated", lexical=0.0, semantic=0.18, importance=0.5, captured_at=NOW, text_tokens=8)
    scores = {r.memory_id: r.score for r in fuse([verbatim, unrelated], top_k=10, now=NOW, expand_graph=False)}
    assert scores["verbatim"] >= 0.9
    assert scores["unrelated"] < RELEVANCE_FLOOR


def test_a_neighbour_with_no_own_relevance_is_kept_below_the_floor_and_below_direct_matches() -> None:
    # Given a verbatim hit linked (conversational predecessor, 0.6) to a memory unrelated to the query
    parent = Candidate("parent", lexical=9.0, semantic=0.95, importance=0.5, captured_at=NOW, text_tokens=8,
                       links=(("injected", 0.6),))
    weak_direct = Candidate("weak", lexical=1.5, semantic=0.35, captured_at=NOW, text_tokens=8)
    ranked = fuse([parent, weak_direct], top_k=10, now=NOW, admitted={"injected"})
    by_id = {r.memory_id: r for r in ranked}
    # Then its lent score stays under the floor and under the direct match above the floor
    assert by_id["injected"].score < RELEVANCE_FLOOR <= by_id["weak"].score
    assert [r.memory_id for r in ranked] == ["parent", "weak", "injected"]


def test_a_neighbour_that_is_relevant_itself_can_still_rise_on_its_link() -> None:
    # Positive control: a neighbour above the floor on its own keeps the best of its own and the lent score.
    parent = Candidate("parent", lexical=12.0, semantic=0.97, importance=1.0, captured_at=NOW, text_tokens=8,
                       links=(("related", 0.9),))
    related = Candidate("related", lexical=1.0, semantic=0.3, captured_at=NOW, text_tokens=8)
    plain = {r.memory_id: r.score for r in fuse([parent, related], top_k=10, now=NOW, expand_graph=False)}
    expanded = {r.memory_id: r for r in fuse([parent, related], top_k=10, now=NOW, admitted={"related"})}
    assert plain["related"] >= RELEVANCE_FLOOR
    assert expanded["related"].score > plain["related"] and "graph" in expanded["related"].components
