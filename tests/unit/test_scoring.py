"""The ranking maths every index adapter shares (`mnemo.domain.scoring`)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from mnemo.domain.scoring import DEFAULT_WEIGHTS, Candidate, calibrate, fuse, length_factor, score

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
    scores = rank(Candidate("short", lexical=0.5, text_tokens=2), Candidate("long", lexical=0.5, text_tokens=50))

    assert scores["short"] == pytest.approx(scores["long"]) == pytest.approx(DEFAULT_WEIGHTS.lexical * 0.5)


def test_scores_stay_in_the_unit_interval_and_components_rebuild_the_score() -> None:
    weights = DEFAULT_WEIGHTS
    ranked = fuse([
        Candidate("m1", lexical=1.0, semantic=1.0, importance=1.0, captured_at=NOW, text_tokens=10),
        Candidate("m2", lexical=0.1, semantic=-0.3, importance=0.0, text_tokens=1),
    ], top_k=10, now=NOW, expand_graph=False)

    for r in ranked:
        assert 0.0 <= r.score <= 1.0
        parts = r.components
        assert parts["raw"] == pytest.approx(weights.lexical * parts["lexical"] + weights.semantic * parts["semantic"]
                                             + weights.importance * parts["importance"] + weights.recency * parts["recency"])
        assert r.score == pytest.approx(calibrate(parts["raw"]))


def test_the_days_a_question_names_lift_what_was_captured_in_them() -> None:
    """The same words said on 13, 14 and 20 October: without a focus the newest wins (recency); the day
    the question names decides instead, either way round. The lift fades over the margin, and the day
    is the asker's (`now`'s offset)."""
    said = {"m13": datetime(2023, 10, 13, 20, tzinfo=UTC), "m14": datetime(2023, 10, 14, 9, tzinfo=UTC),
            "m20": datetime(2023, 10, 20, 9, tzinfo=UTC)}
    rows = [Candidate(mid, lexical=0.3, semantic=0.4, captured_at=when) for mid, when in said.items()]

    def best(focus: tuple[date, date] | None, now: datetime = NOW) -> str:
        return score(rows, now=now, focus=focus).best_ids(1)[0]

    plain = score(rows, now=NOW)
    assert plain.best_ids(3) == ["m20", "m14", "m13"] and "when" not in plain.parts
    assert best((date(2023, 10, 13),) * 2) == "m13"
    assert best((date(2023, 10, 20),) * 2) == "m20"
    when = dict(zip(said, score(rows, now=NOW, focus=(date(2023, 10, 13),) * 2).parts["when"], strict=True))
    assert DEFAULT_WEIGHTS.focus_margin_days == 2
    assert when == pytest.approx({"m13": 1.0, "m14": 2 / 3, "m20": 0.0})  # a day out keeps 2/3, a week out nothing
    east = datetime(2023, 10, 21, tzinfo=timezone(timedelta(hours=5)))  # 13 October 20:00 UTC is the 14th there
    assert score(rows, now=east, focus=(date(2023, 10, 14),) * 2).parts["when"][:2] == [1.0, 1.0]


def test_a_window_that_holds_every_candidate_lifts_none() -> None:
    """"In the past few months" over a few months' notes tells nothing apart: the lift shrinks by the
    share of the candidates the window holds, so one holding them all leaves every score as it was,
    while the same rows asked about one day still rank by it (the positive control)."""
    said = [datetime(2023, 10, d, 12, tzinfo=UTC) for d in (13, 14, 20)]
    rows = [Candidate(f"m{t.day}", lexical=0.3, semantic=0.4, captured_at=t) for t in said]
    plain = score(rows, now=NOW)
    wide = score(rows, now=NOW, focus=(date(2023, 10, 1), date(2023, 10, 31)))
    assert wide.parts["when"] == [1.0, 1.0, 1.0]
    assert wide.scores == plain.scores and wide.best_ids(3) == plain.best_ids(3) == ["m20", "m14", "m13"]
    narrow = score(rows, now=NOW, focus=(date(2023, 10, 13),) * 2)
    assert narrow.best_ids(1) == ["m13"]
    share = sum(narrow.parts["when"]) / 3  # 1 + 2/3 + 0: the 14th is a day out
    m13 = narrow.candidates.ids.index("m13")
    assert narrow.scores[m13] == pytest.approx(calibrate(narrow.parts["raw"][m13] + DEFAULT_WEIGHTS.focus * (1 - share)))


def test_the_focus_raises_a_hit_its_cosine_lifted_too() -> None:
    """In a small store a hit's score is often its cosine's lift (`SEMANTIC_EVIDENCE`), above what its
    sum calibrates to; the focus is added to the sum that lift stands for, so it still tells apart
    two such hits said on different days. Without a lift the score is unchanged."""
    lifted = calibrate(0.2, cosine=0.8)
    assert lifted > calibrate(0.2) and calibrate(0.2, cosine=0.8, lift=0.0) == lifted
    assert calibrate(0.2, cosine=0.8, lift=DEFAULT_WEIGHTS.focus) > lifted + 0.1
    assert calibrate(0.2, lift=0.1) == pytest.approx(calibrate(0.3))  # no lift from the cosine: the sum's own


def test_two_copies_lifted_to_the_same_score_rank_the_newer_first() -> None:
    """Two copies of a text share a word with the query, so each scores its cosine's lift: the same
    score. Their raw sums differ by recency, and that decides (not the id, which favours the older)."""
    older = Candidate("a-older", lexical=0.1, semantic=0.8, captured_at=NOW - timedelta(days=90))
    newer = Candidate("b-newer", lexical=0.1, semantic=0.8, captured_at=NOW - timedelta(days=80))
    for candidates in ((older, newer), (newer, older)):
        hits = fuse(candidates, top_k=2, now=NOW, expand_graph=False)
        assert hits[0].score == hits[1].score and hits[0].components["raw"] > hits[1].components["raw"]
        assert [h.memory_id for h in hits] == ["b-newer", "a-older"]
        scored = score(candidates, now=NOW)
        assert [h.memory_id for h in scored.among(["a-older", "b-newer"])] == ["b-newer", "a-older"]
