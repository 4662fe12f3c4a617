"""The LoCoMo benchmark's metrics and evidence normalisation, on small synthetic inputs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.locomo.data import EvidenceFixes, normalise_evidence, parse_sample, parse_session_date
from bench.locomo.metrics import (
    HEADLINE,
    QuestionScore,
    by_category,
    hit_at_k,
    latency_summary,
    percentile,
    recall_at_k,
    reciprocal_rank,
    score_question,
)

KNOWN = {"D1:1", "D1:2", "D8:6", "D9:17", "D11:26", "D30:5"}


# -- metrics -----------------------------------------------------------------------------------
def test_recall_at_k_is_the_share_of_gold_in_the_top_k() -> None:
    ranked = ["a", "x", "b", "y", "z", "c"]
    assert recall_at_k(ranked, ["a", "b", "c"], 5) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, ["a", "b", "c"], 6) == 1.0
    assert recall_at_k(ranked, ["q"], 5) == 0.0


def test_recall_counts_each_gold_once_and_tolerates_short_lists() -> None:
    assert recall_at_k(["a", "a"], ["a", "b"], 5) == 0.5
    assert recall_at_k([], ["a"], 10) == 0.0


def test_hit_at_k_is_one_when_any_gold_is_in_the_top_k() -> None:
    assert hit_at_k(["x", "y", "a"], ["a", "b"], 3) == 1.0
    assert hit_at_k(["x", "y", "a"], ["a", "b"], 2) == 0.0


def test_reciprocal_rank_uses_the_first_gold_found() -> None:
    assert reciprocal_rank(["x", "b", "a"], ["a", "b"]) == 0.5
    assert reciprocal_rank(["a"], ["a"]) == 1.0
    assert reciprocal_rank(["x", "y"], ["a"]) == 0.0


@pytest.mark.parametrize("call", [lambda: recall_at_k(["a"], [], 5), lambda: hit_at_k(["a"], ["a"], 0),
                                  lambda: reciprocal_rank(["a"], [])])
def test_metrics_reject_questions_without_gold_and_empty_cut_offs(call) -> None:
    with pytest.raises(ValueError):
        call()


def test_score_question_fills_every_metric() -> None:
    score = score_question(["x", "a", "y", "z", "w", "b"], ["a", "b"], category=1)
    assert score == QuestionScore(category=1, recall_at_5=0.5, recall_at_10=1.0, hit_at_10=1.0, reciprocal_rank=0.5)


def test_by_category_averages_over_questions_and_keeps_category_5_out_of_the_headline() -> None:
    # Given three multi-hop misses, one single-hop hit and one adversarial hit
    scores = [QuestionScore(1, 0.0, 0.0, 0.0, 0.0)] * 3 + [QuestionScore(4, 1.0, 1.0, 1.0, 1.0),
                                                            QuestionScore(5, 1.0, 1.0, 1.0, 1.0)]
    # When they are aggregated
    summary = by_category(scores)
    # Then "1-4" is the mean over the four questions of categories 1-4 (a micro average), without 5
    assert list(summary) == ["1", "2", "3", "4", HEADLINE, "5"]
    assert summary[HEADLINE].n == 4
    assert summary[HEADLINE].recall_at_5 == 0.25
    assert summary["1"].recall_at_5 == 0.0 and summary["4"].mrr == 1.0
    assert summary["5"].n == 1 and summary["5"].hit_at_10 == 1.0
    # and an empty category reports n=0 with zeros rather than failing
    assert summary["2"].n == 0 and summary["2"].recall_at_10 == 0.0


def test_percentile_interpolates_linearly_like_numpy() -> None:
    values = [1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 50) == 2.5
    assert percentile(values, 95) == pytest.approx(3.85)
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 4.0
    assert percentile([7.0], 95) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_latency_summary_reports_milliseconds() -> None:
    summary = latency_summary([0.010, 0.020, 0.030])
    assert summary["n"] == 3
    assert summary["p50_ms"] == pytest.approx(20.0)
    assert summary["mean_ms"] == pytest.approx(20.0)
    assert latency_summary([]) == {"n": 0}


# -- evidence normalisation --------------------------------------------------------------------
def test_joined_ids_are_split() -> None:
    fixes = EvidenceFixes()
    assert normalise_evidence(["D8:6; D9:17"], KNOWN, fixes) == ("D8:6", "D9:17")
    assert fixes.split_joined == 1


def test_malformed_ids_are_repaired() -> None:
    fixes = EvidenceFixes()
    assert normalise_evidence(["D:11:26", "D30:05"], KNOWN, fixes) == ("D11:26", "D30:5")
    assert fixes.extra_colon == 1 and fixes.zero_padded == 1


def test_unknown_and_unreadable_ids_are_dropped_and_duplicates_removed() -> None:
    fixes = EvidenceFixes()
    assert normalise_evidence(["D1:1", "D99:1", "D", "D1:1"], KNOWN, fixes, "conv-x") == ("D1:1",)
    assert fixes.dropped_unknown == 2 and fixes.duplicates == 1
    assert fixes.dropped == ["conv-x: 'D99:1'", "conv-x: 'D'"]


def test_well_formed_evidence_is_unchanged() -> None:
    fixes = EvidenceFixes()
    assert normalise_evidence(["D1:2", "D1:1"], KNOWN, fixes) == ("D1:2", "D1:1")
    assert fixes.as_dict() == EvidenceFixes().as_dict()


def test_session_dates_parse_to_aware_utc() -> None:
    assert parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_session_date("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9, tzinfo=UTC)


def test_a_sample_parses_into_ordered_turns_and_questions_with_evidence_left() -> None:
    # Given a sample with two sessions (listed out of order), a captioned image, a dated empty
    # session, and questions whose evidence needs normalising or vanishes entirely
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_2_date_time": "9:00 am on 2 June, 2023",
            "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Look!", "blip_caption": "a photo of a cat"}],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi"},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Hello"}],
            "session_3_date_time": "9:00 am on 3 June, 2023",
        },
        "qa": [
            {"question": "q0", "answer": "a", "evidence": ["D1:02; D2:1"], "category": 4},
            {"question": "q1", "answer": "a", "evidence": [], "category": 3},
            {"question": "q2", "adversarial_answer": "a", "evidence": ["D7:1"], "category": 5},
        ],
    }
    fixes = EvidenceFixes()
    # When it is parsed
    conversation = parse_sample(sample, fixes)
    # Then turns come in session order with their session's date and the caption in the content
    assert [t.dia_id for t in conversation.turns] == ["D1:1", "D1:2", "D2:1"]
    assert conversation.turns[2].date == datetime(2023, 6, 2, 9, 0, tzinfo=UTC)
    assert conversation.turns[2].plain_text == "Bo: Look!"
    assert conversation.turns[2].content == "Bo: Look! [shared image: a photo of a cat]"
    # and only the question with evidence left remains, its ids repaired
    assert [(q.index, q.evidence) for q in conversation.questions] == [(0, ("D1:2", "D2:1"))]
    assert fixes.questions_skipped == 2 and fixes.split_joined == 1 and fixes.zero_padded == 1


# -- baselines ---------------------------------------------------------------------------------
def test_bm25_baseline_ranks_rare_term_matches_first_and_skips_non_matches() -> None:
    from bench.locomo.baselines import Bm25Baseline

    bm25 = Bm25Baseline(["Ann: I adopted a puppy", "Bo: I like the puppy park", "Ann: pottery class today"])
    assert bm25.rank("adopted puppy", 10) == [0, 1]
    assert bm25.rank("nothing matches", 10) == []


def test_dense_baseline_orders_by_cosine_then_turn_order() -> None:
    from bench.locomo.baselines import DenseBaseline

    dense = DenseBaseline([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    assert dense.rank([1.0, 0.0], 3) == [0, 2, 1]
    assert dense.rank([0.0, 1.0], 1) == [1]
