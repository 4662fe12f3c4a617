"""Ranking maths as pure functions, shared by every SearchIndex adapter. Scores reaching a caller
lie in [0, 1]. docs/scoring.md explains the shape of each piece and the measurements behind it.

An index adapter runs two legs — lexical (BM25) and semantic (cosine k-NN) — and returns the union of
their hits as `Candidate`s with raw signals; the memory service ranks them here (`score`, then graph
`expand`), so ranking has one owner whatever the adapter.
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

BM25_K1 = 1.2
BM25_B = 0.75
# A BM25 score of this size maps to 0.5: raw BM25 is unbounded, a threshold needs a fixed scale.
LEXICAL_HALF_SCORE = 6.0


@dataclass(frozen=True)
class Weights:
    """How much each signal contributes to the fused score (they sum to 1)."""

    lexical: float = 0.5
    semantic: float = 0.4
    importance: float = 0.05
    recency: float = 0.05
    graph_decay: float = 0.5  # a neighbour inherits this share of its parent's score × link weight
    graph_parents: int = 5  # how many top hits lend their neighbours a score
    recency_half_life_days: float = 180.0
    length_pivot: float = 2.0  # a text this many times the candidates' mean length keeps its full cosine
    # Calibration: a monotone piecewise-linear map from the weighted sum onto the score callers see, so a
    # threshold means something (docs/scoring.md, bench/score_calibration.py). Knots (raw, calibrated):
    # a near-verbatim match (raw ≥ 0.54) reads ≥ 0.9; raw 0.37, above 90% of the hits for questions about
    # another conversation on LoCoMo, reads as RELEVANCE_FLOOR. Monotone: the ranking is the raw one's,
    # except where `SEMANTIC_EVIDENCE` lifts a hit (LoCoMo recall@5 unchanged, docs/scoring.md).
    calibration: tuple[tuple[float, float], ...] = ((0.0, 0.0), (0.37, 0.3), (0.54, 0.9), (1.0, 1.0))


DEFAULT_WEIGHTS = Weights()
# Calibrated scores below this are unrelated to the query (measured: bench/score_calibration.py). The
# thought tools drop them by default; a graph neighbour below it cannot be lifted above it.
RELEVANCE_FLOOR = 0.3
# Unrelated texts never reach this cosine (MiniLM, LoCoMo dev: hits for another conversation's questions
# peak at 0.50, p99 0.45), so a hit at or above it that also shares a word with the query is about the
# query even when the store is too small for BM25 to say so (a term's idf in a one-memory store is 0.29):
# its cosine lifts it, from RELEVANCE_FLOOR here to 0.9 at cosine 1 (a verbatim query in a store of one).
SEMANTIC_EVIDENCE = 0.59


@dataclass(frozen=True)
class Candidate:
    """One memory found by at least one leg, with its raw signals."""

    memory_id: str
    lexical: float = 0.0  # raw BM25 (0 when the lexical leg did not find it)
    semantic: float | None = None  # cosine similarity in [-1, 1] (None when the semantic leg did not run/find it)
    importance: float | None = None
    captured_at: datetime | None = None
    text_tokens: int | None = None  # tokens of the memory's text (`text.tokenize`); None: unknown, not discounted
    links: tuple[tuple[str, float], ...] = field(default=())  # (other memory id, link weight)


@dataclass(frozen=True)
class Ranked:
    memory_id: str
    score: float
    components: dict[str, float]


def leg_size(top_k: int) -> int:
    """How many hits each leg (lexical, semantic) hands to fusion, in every adapter. Deep on
    purpose: a candidate found by one leg carries the other leg's signal only if that leg reached
    it too (LoCoMo recall@5: 0.58 at depth 50, 0.60 at 100, 0.62 at 200, 0.63 at 400; docs/scoring.md)."""
    return min(1000, max(400, 40 * top_k))


def bm25_idf(doc_count: int, doc_freq: int) -> float:
    return math.log(1.0 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5))


def bm25_term(tf: Any, idf: float, doc_len: Any, avg_len: float) -> Any:
    """One term's BM25 contribution; plain arithmetic, so numpy arrays of tf/doc_len work too."""
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * doc_len / max(avg_len, 1e-9))
    return idf * tf * (BM25_K1 + 1.0) / (tf + norm)


def saturate(value: float, half: float) -> float:
    """Map [0, inf) onto [0, 1) monotonically; `half` maps to 0.5."""
    return value / (value + half) if value > 0 else 0.0


def lexical_score(bm25: float) -> float:
    return saturate(bm25, LEXICAL_HALF_SCORE)


def semantic_score(cosine: float | None) -> float:
    """Cosine of unrelated sentences sits near 0 for sentence encoders; negative says nothing more."""
    return 0.0 if cosine is None else max(0.0, min(1.0, cosine))


def length_factor(text_tokens: int | None, pivot_tokens: float) -> float:
    """How much of its cosine a text keeps: sqrt(tokens / pivot), at most 1. Sentence encoders give a
    short generic text ("Cool! What did it look like?") a high cosine to almost any question; BM25
    normalises for length, a cosine does not, so the semantic leg gets a pivoted length prior."""
    if text_tokens is None or pivot_tokens <= 0:
        return 1.0
    return math.sqrt(min(1.0, text_tokens / pivot_tokens))


def calibrate(raw: float, knots: Sequence[tuple[float, float]] = DEFAULT_WEIGHTS.calibration, *,
              cosine: float | None = None) -> float:
    """The calibrated score of a raw weighted sum: linear between the knots, clamped to [0, 1]; at least
    the `SEMANTIC_EVIDENCE` lift of the hit's `cosine` when one is given."""
    return max(_through_knots(clamp01(raw), knots), semantic_evidence(cosine))


def semantic_evidence(cosine: float | None) -> float:
    """0 below `SEMANTIC_EVIDENCE`; from there linear from RELEVANCE_FLOOR up to 0.9 at cosine 1."""
    if cosine is None or cosine < SEMANTIC_EVIDENCE:
        return 0.0
    share = (min(cosine, 1.0) - SEMANTIC_EVIDENCE) / (1.0 - SEMANTIC_EVIDENCE)
    return RELEVANCE_FLOOR + (0.9 - RELEVANCE_FLOOR) * share


def _through_knots(raw: float, knots: Sequence[tuple[float, float]]) -> float:
    for (x0, y0), (x1, y1) in zip(knots, knots[1:], strict=False):
        if raw <= x1:
            return clamp01(y0 + (y1 - y0) * (raw - x0) / (x1 - x0)) if x1 > x0 else clamp01(y1)
    return clamp01(knots[-1][1])


def recency_score(captured_at: datetime | None, now: datetime, half_life_days: float) -> float:
    if captured_at is None:
        return 0.0
    age_days = max(0.0, (now - captured_at).total_seconds() / 86_400)
    return 0.5 ** (age_days / half_life_days)


@dataclass(frozen=True)
class Recipe:
    """A named search configuration (Graphiti-style "recipes"): how signals are weighted and whether
    the best hits lend a score to their graph neighbours. Surfaces choose a recipe by name."""

    name: str
    weights: Weights = DEFAULT_WEIGHTS
    expand_graph: bool = True


RECIPES: dict[str, Recipe] = {
    "full": Recipe("full"),  # hybrid + graph neighbours: the default everywhere
    "fast": Recipe("fast", expand_graph=False),  # hybrid only (mode=fast)
}


def score(candidates: Sequence[Candidate], *, now: datetime, weights: Weights = DEFAULT_WEIGHTS) -> list[Ranked]:
    """Each candidate's weighted sum of normalised signals, best first (ties by id)."""
    # The pivot is relative to these candidates, not a constant: a store of one-line notes is judged
    # against its own typical length, so short memories there keep their cosine.
    lengths = [c.text_tokens for c in candidates if c.text_tokens is not None]
    pivot = weights.length_pivot * sum(lengths) / len(lengths) if lengths else 0.0
    ranked = []
    for c in candidates:
        parts = {
            "lexical": lexical_score(c.lexical),
            "semantic": semantic_score(c.semantic) * length_factor(c.text_tokens, pivot),
            "importance": c.importance or 0.0,
            "recency": recency_score(c.captured_at, now, weights.recency_half_life_days),
        }
        total = (
            weights.lexical * parts["lexical"]
            + weights.semantic * parts["semantic"]
            + weights.importance * parts["importance"]
            + weights.recency * parts["recency"]
        )
        calibrated = calibrate(total, weights.calibration, cosine=c.semantic if c.lexical > 0 else None)
        ranked.append(Ranked(c.memory_id, calibrated, {**parts, "raw": clamp01(total)}))
    return sorted(ranked, key=lambda r: (-r.score, r.memory_id))


def neighbours(ranked: Sequence[Ranked], candidates: Sequence[Candidate], weights: Weights = DEFAULT_WEIGHTS) -> set[str]:
    """Ids that `expand` may lend a score to: the linked memories of the best `graph_parents` hits."""
    links = {c.memory_id: c.links for c in candidates}
    return {other for parent in ranked[: weights.graph_parents] for other, _ in links.get(parent.memory_id, ())}


def expand(ranked: Sequence[Ranked], candidates: Sequence[Candidate], *, admitted: Container[str],
           weights: Weights = DEFAULT_WEIGHTS) -> list[Ranked]:
    """Graph expansion: each of the best `graph_parents` hits lends `score × link weight × decay` to
    its linked memories, a neighbour keeping the best of its own score and what it was lent. Only
    `admitted` neighbours (the caller checked they are inside the query's namespace, author and
    status) are considered, so a link can never pull in a memory the query could not find itself.

    A neighbour must earn its place: one whose own score is below `RELEVANCE_FLOOR` (the legs found
    nothing relating it to the query) is lent at most just under the floor, so a link alone never ranks
    it above a direct match, and the thought tools' default floor drops it."""
    links = {c.memory_id: c.links for c in candidates}
    by_id = {r.memory_id: r for r in ranked}
    for parent in list(ranked[: weights.graph_parents]):
        for other, link_weight in links.get(parent.memory_id, ()):
            if other not in admitted:
                continue
            lent = parent.score * link_weight * weights.graph_decay
            current = by_id.get(other)
            own = current.score if current is not None else 0.0
            if own < RELEVANCE_FLOOR:
                lent = min(lent, RELEVANCE_FLOOR - _UNEARNED_GAP)
            if current is None or lent > current.score:
                parts = dict(current.components) if current else {}
                parts["graph"] = lent
                by_id[other] = Ranked(other, clamp01(lent), parts)
    return sorted(by_id.values(), key=lambda r: (-r.score, r.memory_id))


def fuse(
    candidates: Sequence[Candidate],
    *,
    top_k: int,
    now: datetime,
    expand_graph: bool = True,
    weights: Weights = DEFAULT_WEIGHTS,
    admitted: Container[str] | None = None,
) -> list[Ranked]:
    """`score`, then (optionally) `expand` over `admitted` neighbours (every neighbour when None:
    callers that have no namespace to check, such as the ablation bench), cut to `top_k`."""
    ranked = score(candidates, now=now, weights=weights)
    if expand_graph:
        allowed = neighbours(ranked, candidates, weights) if admitted is None else admitted
        ranked = expand(ranked, candidates, admitted=allowed, weights=weights)
    return ranked[:top_k]


_UNEARNED_GAP = 1e-3


def clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))
