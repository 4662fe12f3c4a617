"""Retrieval metrics as pure functions: per question, then averaged per category and over 1–4.

recall@k follows LoCoMo's own definition, |gold ∩ top-k| / |gold|; hit@k is 1 when any gold id is in
the top k; the reciprocal rank is 1 / rank of the first gold id in the returned list (0 when none is
returned, so with top_k=10 it is MRR@10). Averages are over questions ("over 1–4" is the mean over
every question of categories 1–4, not a mean of the four category means).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
HEADLINE_CATEGORIES = (1, 2, 3, 4)
HEADLINE = "1-4"  # the key of the aggregate over HEADLINE_CATEGORIES
GROUPS = ("1", "2", "3", "4", HEADLINE, "5")  # report order; category 5 stays apart from the headline


def _check(gold: Sequence[str], k: int | None = None) -> None:
    if not gold:
        raise ValueError("a question needs at least one gold evidence id")
    if k is not None and k < 1:
        raise ValueError("k must be at least 1")


def recall_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    _check(gold, k)
    wanted = set(gold)
    return len(wanted & set(ranked[:k])) / len(wanted)


def hit_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    _check(gold, k)
    return 1.0 if set(gold) & set(ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str]) -> float:
    _check(gold)
    wanted = set(gold)
    for position, item in enumerate(ranked, start=1):
        if item in wanted:
            return 1.0 / position
    return 0.0


@dataclass(frozen=True)
class QuestionScore:
    category: int
    recall_at_5: float
    recall_at_10: float
    hit_at_10: float
    reciprocal_rank: float


def score_question(ranked: Sequence[str], gold: Sequence[str], category: int) -> QuestionScore:
    return QuestionScore(
        category=category,
        recall_at_5=recall_at_k(ranked, gold, 5),
        recall_at_10=recall_at_k(ranked, gold, 10),
        hit_at_10=hit_at_k(ranked, gold, 10),
        reciprocal_rank=reciprocal_rank(ranked, gold),
    )


@dataclass(frozen=True)
class Summary:
    """Means over a group of questions; all zero (with n=0) for an empty group."""

    n: int
    recall_at_5: float
    recall_at_10: float
    hit_at_10: float
    mrr: float

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


METRIC_LABELS = {"recall_at_5": "recall@5", "recall_at_10": "recall@10", "hit_at_10": "hit@10", "mrr": "MRR"}


def summarise(scores: Iterable[QuestionScore]) -> Summary:
    items = list(scores)
    if not items:
        return Summary(0, 0.0, 0.0, 0.0, 0.0)

    def mean(values: Iterable[float]) -> float:
        return math.fsum(values) / len(items)

    return Summary(
        n=len(items),
        recall_at_5=mean(s.recall_at_5 for s in items),
        recall_at_10=mean(s.recall_at_10 for s in items),
        hit_at_10=mean(s.hit_at_10 for s in items),
        mrr=mean(s.reciprocal_rank for s in items),
    )


def by_category(scores: Iterable[QuestionScore]) -> dict[str, Summary]:
    """One summary per category ("1" … "5") and one over categories 1–4 ("1-4"), in report order."""
    items = list(scores)
    out = {str(c): summarise(s for s in items if s.category == c) for c in CATEGORY_NAMES}
    out[HEADLINE] = summarise(s for s in items if s.category in HEADLINE_CATEGORIES)
    return {group: out[group] for group in GROUPS}


def group_label(group: str) -> str:
    return "cats 1-4" if group == HEADLINE else CATEGORY_NAMES[int(group)]


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0–100) with linear interpolation between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= p <= 100.0:
        raise ValueError("p must lie in [0, 100]")
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_summary(seconds: Sequence[float]) -> dict[str, float | int]:
    """p50/p95/mean in milliseconds."""
    if not seconds:
        return {"n": 0}
    return {
        "n": len(seconds),
        "p50_ms": percentile(seconds, 50) * 1000,
        "p95_ms": percentile(seconds, 95) * 1000,
        "mean_ms": math.fsum(seconds) / len(seconds) * 1000,
    }
