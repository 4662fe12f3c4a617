"""The scalar fusion as it stood before ranking went columnar (a503de0), kept verbatim as the oracle
for `tests/unit/test_fusion_oracle.py`: one `Candidate` and one `Ranked` per candidate, every
neighbour expanded over the whole list. Not product code; the signal maps are the product's own."""

from __future__ import annotations

from collections.abc import Container, Sequence
from datetime import datetime

from mnemo.domain.scoring import (
    _UNEARNED_GAP,
    DEFAULT_WEIGHTS,
    RELEVANCE_FLOOR,
    Candidate,
    Ranked,
    Weights,
    best_first,
    calibrate,
    clamp01,
    length_factor,
    recency_score,
    semantic_score,
)


def score(candidates: Sequence[Candidate], *, now: datetime, weights: Weights = DEFAULT_WEIGHTS) -> list[Ranked]:
    """Each candidate's weighted sum of normalised signals, best first (ties by id)."""
    # The pivot is relative to these candidates, not a constant: a store of one-line notes is judged
    # against its own typical length, so short memories there keep their cosine.
    lengths = [c.text_tokens for c in candidates if c.text_tokens is not None]
    pivot = weights.length_pivot * sum(lengths) / len(lengths) if lengths else 0.0
    ranked = []
    for c in candidates:
        parts = {
            "lexical": c.lexical,
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
        score = calibrate(total, weights.calibration, cosine=c.semantic if c.lexical > 0 and not c.context_only else None,
                          threshold=weights.semantic_evidence)
        # a match in context alone stays under the floor, unless the memory passes without it
        if (c.context_only and score >= RELEVANCE_FLOOR
                and calibrate(total - weights.lexical * c.lexical, weights.calibration) < RELEVANCE_FLOOR):
            score = RELEVANCE_FLOOR - _UNEARNED_GAP
        cosine = {"cosine": c.semantic} if c.semantic is not None else {}
        ranked.append(Ranked(c.memory_id, score, {**parts, "raw": clamp01(total), **cosine}))
    return sorted(ranked, key=best_first)  # equal scores (a context match held under the floor) by raw sum


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
    return sorted(by_id.values(), key=best_first)


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
