"""The ranking maths every index adapter shares (`mnemo.domain.scoring`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.domain.scoring import DEFAULT_WEIGHTS, Candidate, calibrate, fuse, length_factor

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def rank(*candidates: Candidate) -> dict[str, float]:
    """Each candidate's weighted sum before calibration (the calibrated score is a monotone map of it)."""
    return {r.memory_id: r.components["raw"] for r in fuse(candidates, top_k=10, now=NOW, expand_graph=False)}


@pytest.mark.parametrize(("tokens", "pivot", "expected"), [
    (40, 20.0, 1.0),  # at or beyond the pivot: the whole cosine
    (20, 20.0, 1.0),
    (5, 20.0, 0.5),  # a quarter of the pivot keeps half
    (0, 20.0, 0.0),
    (None, 20.0, 1.0),  # unknown length: not discounted
    (5, 0.0, 1.0),  # no pivot (length prior off)
])
def test_length_factor_is_a_capped_square_root(tokens: int | None, pivot: float, expected: float) -> None:
    assert length_factor(tokens, pivot) == pytest.approx(expected)


def test_a_short_generic_text_no_longer_outranks_a_substantive_one_on_cosine_alone() -> None:
    # Given a four-token question-like turn with a slightly higher cosine than a long, on-topic memory
    short = Candidate("short", semantic=0.50, text_tokens=4)
    long = Candidate("long", semantic=0.45, text_tokens=40)

    scores = rank(short, long)

    # Then the long memory ranks first: the pivot is 2 × the mean length (44), so short keeps sqrt(4/44)
    assert scores["long"] > scores["short"]
    assert scores["short"] == pytest.approx(DEFAULT_WEIGHTS.semantic * 0.50 * (4 / 44) ** 0.5)
    assert scores["long"] == pytest.approx(DEFAULT_WEIGHTS.semantic * 0.45 * (40 / 44) ** 0.5)


def test_the_pivot_follows_the_candidates_so_a_store_of_short_notes_is_judged_on_its_own_scale() -> None:
    # Given two stores whose texts differ in length only by a constant factor
    notes = rank(Candidate("a", semantic=0.6, text_tokens=3), Candidate("b", semantic=0.5, text_tokens=6))
    essays = rank(Candidate("a", semantic=0.6, text_tokens=30), Candidate("b", semantic=0.5, text_tokens=60))

    # Then they score identically: only length relative to the mean matters
    assert notes == pytest.approx(essays)


def test_the_lexical_signal_is_not_discounted_by_length() -> None:
    # BM25 already normalises for length; the prior applies to the cosine only
    scores = rank(Candidate("short", lexical=6.0, text_tokens=2), Candidate("long", lexical=6.0, text_tokens=50))

    assert scores["short"] == pytest.approx(scores["long"]) == pytest.approx(DEFAULT_WEIGHTS.lexical * 0.5)


def test_scores_stay_in_the_unit_interval_and_components_rebuild_the_score() -> None:
    weights = DEFAULT_WEIGHTS
    ranked = fuse([
        Candidate("m1", lexical=50.0, semantic=1.0, importance=1.0, captured_at=NOW, text_tokens=10),
        Candidate("m2", lexical=0.1, semantic=-0.3, importance=0.0, text_tokens=1),
    ], top_k=10, now=NOW, expand_graph=False)

    for r in ranked:
        assert 0.0 <= r.score <= 1.0
        parts = r.components
        assert parts["raw"] == pytest.approx(weights.lexical * parts["lexical"] + weights.semantic * parts["semantic"]
                                             + weights.importance * parts["importance"] + weights.recency * parts["recency"])
        assert r.score == pytest.approx(calibrate(parts["raw"]))
