"""Ranking maths as pure functions, shared by every SearchIndex adapter. Scores reaching a caller
lie in [0, 1]. docs/scoring.md explains the shape of each piece and the measurements behind it.

An index adapter runs two legs — lexical (BM25) and semantic (cosine k-NN) — and returns the union of
their hits as `Candidates` (columns of raw signals, one row per memory); the memory service ranks them
here (`score`, then graph `expand`), so ranking has one owner whatever the adapter. Pure Python on
purpose: numpy is neither a domain dependency nor in the Lambda layer (tests/unit/test_import_contract.py).
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from itertools import accumulate
from typing import Any

BM25_K1 = 1.2
BM25_B = 0.75
# Unrelated texts never reach this cosine (MiniLM, LoCoMo dev: hits for another conversation's questions
# peak at 0.50, p99 0.45), so a hit at or above it that also shares a word with the query is about the
# query even when the store is too small for BM25 to say so (a term's idf in a one-memory store is 0.29):
# its cosine lifts it, from RELEVANCE_FLOOR here to 0.9 at cosine 1 (a verbatim query in a store of one).
# MiniLM's, and the default of `Weights`; a search uses its embedder's (domain/semantic_thresholds.py).
SEMANTIC_EVIDENCE = 0.59


@dataclass(frozen=True)
class Weights:
    """How much each signal contributes to the fused score (the four signals sum to 1), and how the
    score is then shaped (graph, recency, focus, length, calibration)."""

    lexical: float = 0.5  # of BM25 as a share of the query's maximum (`lexical_share`)
    semantic: float = 0.4
    importance: float = 0.05
    recency: float = 0.05
    graph_decay: float = 0.5  # a neighbour inherits this share of its parent's score × link weight
    graph_parents: int = 5  # how many top hits lend their neighbours a score
    recency_half_life_days: float = 180.0
    # Added to the sum of a memory captured inside the days the question names ("last week", "on 13
    # October 2023": `dates.window`), fading to nothing `focus_margin_days` + 1 days outside them (a
    # question's "a week ago" is said loosely). Where a question names a day, being said that day is
    # evidence in itself ("What did Maria plan for the evening of 7 July 2023?"). Scaled by the share of
    # the candidates the days leave out (`score`): a window holding everything found lifts nothing.
    # bench/README.md rounds 14 and 15.
    focus: float = 0.4
    focus_margin_days: int = 2
    length_pivot: float = 2.0  # a text this many times the candidates' mean length keeps its full cosine
    # Calibration: a monotone piecewise-linear map from the weighted sum onto the score callers see, so a
    # threshold means something (docs/scoring.md, bench/score_calibration.py). Knots (raw, calibrated),
    # fitted on the agent-query set's dev third with LoCoMo and LongMemEval dev (bench/README.md "Issue
    # 54"): raw 0.23 reads as RELEVANCE_FLOOR (a memory holding one word of a two-word query once, or
    # the whole query with a weak cosine), a near-verbatim match (raw ≥ 0.6) reads ≥ 0.9. Monotone: the
    # ranking is the raw one's, except where `semantic_evidence` lifts a hit or a match in `context`
    # alone is held under the floor (`score`).
    calibration: tuple[tuple[float, float], ...] = ((0.0, 0.0), (0.23, 0.3), (0.6, 0.9), (1.0, 1.0))
    # The cosine from which a hit sharing a word with the query is lifted to the floor (`semantic_evidence`):
    # measured per embedder (domain/semantic_thresholds.py), which a search sets here; None lifts nothing.
    semantic_evidence: float | None = SEMANTIC_EVIDENCE


DEFAULT_WEIGHTS = Weights()
# Calibrated scores below this are unrelated to the query (measured: bench/score_calibration.py). The
# thought tools drop them by default; a graph neighbour below it cannot be lifted above it.
RELEVANCE_FLOOR = 0.3


@dataclass(frozen=True)
class Candidate:
    """One memory found by at least one leg, with its raw signals."""

    memory_id: str
    lexical: float = 0.0  # BM25 as a share of the query's maximum (`lexical_share`), in [0, 1]
    semantic: float | None = None  # cosine similarity in [-1, 1] (None when the semantic leg did not run/find it)
    importance: float | None = None
    captured_at: datetime | None = None
    text_tokens: int | None = None  # tokens of the memory's text (`text.tokenize`); None: unknown, not discounted
    links: tuple[tuple[str, float], ...] = field(default=())  # (other memory id, link weight)
    # The lexical leg matched only the memory's other fields (the words said before it, its entities:
    # `LEXICAL_FIELDS`), not its text: such a match orders the hit but cannot lift it over the floor.
    context_only: bool = False


@dataclass(frozen=True)
class Ranked:
    memory_id: str
    score: float
    components: dict[str, float]


class Candidates(Sequence[Candidate]):
    """Candidates as columns, one row per memory: what every `SearchIndex` adapter returns. Indexing
    or iterating yields `Candidate` rows (tests, contracts); ranking reads the columns, so a search does
    not build an object per candidate. `links` are mappings (other memory id -> link weight)."""

    __slots__ = ("ids", "lexical", "semantic", "importance", "captured_at", "text_tokens", "links", "context_only")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, ids: list[str], *, lexical: list[float], semantic: list[float | None],
                 importance: list[float | None], captured_at: list[datetime | None], text_tokens: list[int | None],
                 links: Sequence[Mapping[str, float]], context_only: list[bool] | None = None) -> None:
        self.ids, self.lexical, self.semantic, self.importance = ids, lexical, semantic, importance
        self.captured_at, self.text_tokens, self.links = captured_at, text_tokens, links
        self.context_only = context_only if context_only is not None else [False] * len(ids)

    @classmethod
    def of(cls, rows: Candidates | Iterable[Candidate]) -> Candidates:
        if isinstance(rows, Candidates):
            return rows
        rows = list(rows)
        return cls([c.memory_id for c in rows], lexical=[c.lexical for c in rows], semantic=[c.semantic for c in rows],
                   importance=[c.importance for c in rows], captured_at=[c.captured_at for c in rows],
                   text_tokens=[c.text_tokens for c in rows], links=[dict(c.links) for c in rows],
                   context_only=[c.context_only for c in rows])

    @classmethod
    def concat(cls, parts: Sequence[Candidates]) -> Candidates:
        """One set of the rows of several (a tenant-wide search reads each of its users' partitions)."""
        return cls([mid for p in parts for mid in p.ids], lexical=[v for p in parts for v in p.lexical],
                   semantic=[v for p in parts for v in p.semantic], importance=[v for p in parts for v in p.importance],
                   captured_at=[v for p in parts for v in p.captured_at],
                   text_tokens=[v for p in parts for v in p.text_tokens], links=[v for p in parts for v in p.links],
                   context_only=[v for p in parts for v in p.context_only])

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, row: int) -> Candidate:  # type: ignore[override]
        return Candidate(self.ids[row], self.lexical[row], self.semantic[row], self.importance[row],
                         self.captured_at[row], self.text_tokens[row], tuple(self.links[row].items()),
                         self.context_only[row])

    def __iter__(self) -> Iterator[Candidate]:
        return (self[row] for row in range(len(self.ids)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"Candidates({list(self)!r})"


@dataclass(frozen=True)
class Scored:
    """`score`'s answer: per candidate row its calibrated score and the components, as columns, and
    the rows best first (ties by id). Rows become `Ranked` only when asked for."""

    candidates: Candidates
    scores: list[float]
    parts: dict[str, list[float]]  # component name -> column
    order: list[int]  # rows, best first
    _rows: dict[str, int] = field(default_factory=dict, repr=False)  # id -> row, built on first use

    def ranked_row(self, row: int) -> Ranked:
        """The row as a `Ranked`: its components, and its `cosine` to the query where the semantic leg
        found it (the raw signal `semantic` is shaped from, and the one an embedder's threshold is
        measured on: bench/score_calibration.py --via rest reads it through `explain`)."""
        parts = {name: col[row] for name, col in self.parts.items()}
        cosine = self.candidates.semantic[row]
        if cosine is not None:
            parts["cosine"] = cosine
        return Ranked(self.candidates.ids[row], self.scores[row], parts)

    def ranked(self, depth: int) -> list[Ranked]:
        """The best `depth`, best first."""
        return [self.ranked_row(row) for row in self.order[:depth]]

    def best_ids(self, depth: int) -> list[str]:
        return [self.candidates.ids[row] for row in self.order[:depth]]

    def row_of(self, memory_id: str) -> int:
        return self._row_index()[memory_id]

    def score_of(self, memory_id: str) -> float:
        return self.scores[self.row_of(memory_id)]

    def rows_of(self, memory_ids: Iterable[str]) -> list[int]:
        """Rows of those of `memory_ids` that are candidates (each once)."""
        rows = self._row_index()
        return [rows[mid] for mid in dict.fromkeys(memory_ids) if mid in rows]

    def _row_index(self) -> dict[str, int]:
        if not self._rows:  # only expansion and the service's visible set look rows up by id
            self._rows.update((mid, row) for row, mid in enumerate(self.candidates.ids))
        return self._rows

    def among(self, memory_ids: Iterable[str]) -> list[Ranked]:
        """Those of `memory_ids` that are candidates, ranked, best first."""
        return sorted(map(self.ranked_row, self.rows_of(memory_ids)), key=best_first)


def best_first(hit: Ranked) -> tuple[float, float, str]:
    """The order of hits: score, then the raw fused sum, then id. A cosine's lift can give two hits
    the same score (two copies of a text): their raw sum, where recency counts, puts the newer first."""
    return -hit.score, -hit.components.get("raw", 0.0), hit.memory_id


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


def lexical_share(bm25: float, most: float) -> float:
    """A BM25 score (the boosted sum over `LEXICAL_FIELDS`) as a share of the query's own maximum,
    `most`: the sum of its terms' idf in the text field (`query_weight`), what a memory of average
    length holding each term once in its text scores. A one-word query's exact hit is 1 in a store of
    25 memories as in one of 25,000; a fixed half-score gave it 0.19 in the small store (bench/README.md
    "Issue 54"). Capped at 1: repeating a word is no stronger."""
    return clamp01(bm25 / most) if most > 0 else 0.0


def query_weight(idfs: Iterable[float]) -> float:
    """`lexical_share`'s maximum: the sum of the idf of each of the query's distinct terms, those no
    memory holds included (a memory that holds half of what was asked matches half of it)."""
    return float(sum(idfs))


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
              cosine: float | None = None, lift: float = 0.0, threshold: float | None = SEMANTIC_EVIDENCE) -> float:
    """The calibrated score of a raw weighted sum: linear between the knots, clamped to [0, 1]; at least
    the lift of the hit's `cosine` from `threshold` when one is given (`semantic_evidence`). A `lift` (the
    focus) is added to the sum, or to the sum that lift stands for where it decides, so it raises a
    lifted hit too."""
    evidence = semantic_evidence(cosine, threshold)
    if not lift:
        return max(_through_knots(clamp01(raw), knots), evidence)
    return _through_knots(clamp01(max(raw, _sum_of(evidence, knots)) + lift), knots)


def semantic_evidence(cosine: float | None, threshold: float | None = SEMANTIC_EVIDENCE) -> float:
    """0 below `threshold` (the embedder's, `SEMANTIC_EVIDENCE` for MiniLM; None, unmeasured: always 0);
    from there linear from RELEVANCE_FLOOR up to 0.9 at cosine 1."""
    if cosine is None or threshold is None or cosine < threshold:
        return 0.0
    share = (min(cosine, 1.0) - threshold) / (1.0 - threshold)
    return RELEVANCE_FLOOR + (0.9 - RELEVANCE_FLOOR) * share


def _through_knots(raw: float, knots: Sequence[tuple[float, float]]) -> float:
    for (x0, y0), (x1, y1) in zip(knots, knots[1:], strict=False):
        if raw <= x1:
            return clamp01(y0 + (y1 - y0) * (raw - x0) / (x1 - x0)) if x1 > x0 else clamp01(y1)
    return clamp01(knots[-1][1])


def _sum_of(score: float, knots: Sequence[tuple[float, float]]) -> float:
    """The raw sum `_through_knots` maps onto `score` (the knots rise strictly; 0 for a score of 0)."""
    for (x0, y0), (x1, y1) in zip(knots, knots[1:], strict=False):
        if score <= y1:
            return x0 + (x1 - x0) * (score - y0) / (y1 - y0) if y1 > y0 else x0
    return knots[-1][0]


def recency_score(captured_at: datetime | None, now: datetime, half_life_days: float) -> float:
    if captured_at is None:
        return 0.0
    age_days = max(0.0, (now - captured_at).total_seconds() / 86_400)
    return float(0.5 ** (age_days / half_life_days))  # float ** float is typed Any


@dataclass(frozen=True)
class Recipe:
    """A named search configuration (Graphiti-style "recipes"): how signals are weighted and whether
    the best hits lend a score to their graph neighbours. Surfaces choose a recipe by name."""

    name: str
    weights: Weights = DEFAULT_WEIGHTS
    expand_graph: bool = True
    rerank: bool = True  # when a `Reranker` is configured, it orders the best `RERANK_DEPTH` hits
    repeats: bool = True  # a hit repeating a better-placed one is moved down (domain/repeats.py)


RECIPES: dict[str, Recipe] = {
    "full": Recipe("full"),  # hybrid + graph neighbours (+ the reranker, where one is configured): the default
    "fast": Recipe("fast", expand_graph=False, rerank=False, repeats=False),  # hybrid only (mode=fast)
}
# How many of the fused best hits a reranker reorders (one request, one text each).
RERANK_DEPTH = 20
# How many a reranker that holds what it scores (the local late-interaction one: token states stored at
# enrichment) orders before the store read: deeper reaches evidence the fused order leaves past 20
# (LoCoMo multi-hop 0.369 -> 0.397 at 100, bench/README.md round 7), and only the first top_k are read.
PRESCORE_DEPTH = 100


def blend(score: float, relevance: float, share: float) -> float:
    """The order key of a reranked hit: `share` of the reranker's relevance, the rest the fused score."""
    return (1.0 - share) * score + share * relevance


Knots = tuple[tuple[float, float], ...]


def reranked(hits: Sequence[Ranked], relevance: Sequence[float], share: float = 1.0, *,
             calibration: Knots | None = None) -> list[Ranked]:
    """`hits` ordered by `(1 - share) · score + share · relevance`: `share` 1 is the reranker's order
    alone, less keeps part of what the fused score knows (ties keep the fused order). A hit moved down
    as a repeat (domain/repeats.py) keeps the same share of its relevance as of its score: the
    reranker judges the text alone, and would otherwise lift the repeat back. `rerank` joins the
    components.

    With the reranker's `calibration` (knots measured for it and its share), that blend is the score:
    mapped through the knots, so the floor keeps its meaning, it both orders and thresholds, and the
    fused score stays as the `fused` component. Without one (a reranker nobody measured), the score
    stays the calibrated fused one (`shown_descending` then caps it for display)."""
    def kept(hit: Ranked) -> float:  # 1 unless the hit is a repeat: then its score's new share of the old
        before = hit.score - hit.components.get("repeat", 0.0)
        return hit.score / before if before > 0 else 1.0

    keys = [blend(hit.score, rel * kept(hit), share) for hit, rel in zip(hits, relevance, strict=True)]
    order = sorted(range(len(hits)), key=lambda i: (-keys[i], i))
    if calibration is None:
        return [Ranked(hits[i].memory_id, hits[i].score, {**hits[i].components, "rerank": clamp01(relevance[i])})
                for i in order]
    return [Ranked(hits[i].memory_id, _through_knots(clamp01(keys[i]), calibration),
                   {**hits[i].components, "rerank": clamp01(relevance[i]), "fused": hits[i].score}) for i in order]


def shown_descending(scores: Sequence[float]) -> list[float]:
    """The scores an answer in the reranker's order shows: each hit's calibrated score, capped by the
    score shown above it, so a response reads in descending order of its scores (seed 003 tells an agent
    to compare them) and still passes every threshold its hits passed. A hit the reranker moved down
    shows the score of the one it now follows; one it moved up keeps its own (never raised)."""
    return list(accumulate(scores, min))


def prescored(scored: Scored, relevance: Mapping[str, float], share: float, depth: int = PRESCORE_DEPTH) -> Scored:
    """`scored` with its best `depth` rows in `reranked`'s order (a row without a relevance is taken
    at its own score); the rest, the scores and the components are unchanged. What a search reads
    from the store follows this order; the score stays the calibrated fused one."""
    head, rest = scored.order[:depth], scored.order[depth:]
    ids, scores = scored.candidates.ids, scored.scores
    return replace(scored, order=sorted(head, key=lambda row: -blend(scores[row], relevance.get(ids[row], scores[row]), share))
                   + rest)


def focus_score(captured_at: datetime | None, focus: tuple[date, date], margin_days: int, now: datetime) -> float:
    """1 for a memory captured inside the `focus` days (in `now`'s offset, the asker's), falling linearly
    to 0 at `margin_days` + 1 days outside them; 0 when the capture time is unknown."""
    if captured_at is None:
        return 0.0
    day = captured_at.astimezone(now.tzinfo).date() if now.tzinfo else captured_at.date()
    first, last = focus
    gap = (first - day).days if day < first else (day - last).days if day > last else 0
    return max(0.0, 1.0 - gap / (margin_days + 1))


def score(candidates: Candidates | Sequence[Candidate], *, now: datetime, weights: Weights = DEFAULT_WEIGHTS,
          focus: tuple[date, date] | None = None) -> Scored:
    """Each candidate's weighted sum of normalised signals, as columns, with the rows best first
    (`best_first`: equal scores by raw sum, then id). Column arithmetic, one comprehension per
    signal: a search fuses up to ~800 candidates and only the few it returns become `Ranked` objects
    (bench/index_scale.py)."""
    c = Candidates.of(candidates)
    # The pivot is relative to these candidates, not a constant: a store of one-line notes is judged
    # against its own typical length, so short memories there keep their cosine.
    lengths = [t for t in c.text_tokens if t is not None]
    pivot = weights.length_pivot * sum(lengths) / len(lengths) if lengths else 0.0
    half_life = weights.recency_half_life_days
    lexical = c.lexical
    semantic = [semantic_score(v) * length_factor(t, pivot) for v, t in zip(c.semantic, c.text_tokens, strict=True)]
    importance = [v or 0.0 for v in c.importance]
    recency = [recency_score(t, now, half_life) for t in c.captured_at]
    wl, ws, wi, wr = weights.lexical, weights.semantic, weights.importance, weights.recency
    raw = [wl * a + ws * b + wi * i + wr * r for a, b, i, r in zip(lexical, semantic, importance, recency, strict=True)]
    knots, threshold = weights.calibration, weights.semantic_evidence
    # A hit that shares a word with the query is lifted by its cosine alone (semantic_evidence), from the
    # embedder's measured threshold; an unmeasured embedder's cosine lifts nothing.
    # The days the question names (`dates.window`) lift what was captured in them.
    # A window that holds most of what the search found ("in the past few months" over a few months'
    # notes) tells nothing apart: its lift shrinks by the share of the candidates it holds.
    when = [focus_score(t, focus, weights.focus_margin_days, now) for t in c.captured_at] if focus else []
    selective = weights.focus * (1.0 - sum(when) / len(when)) if when else 0.0
    lift = [selective * w for w in when] if when else [0.0] * len(raw)
    lifting = threshold is not None
    scores = [calibrate(v, knots, cosine=s if lx > 0 and lifting and not only else None, lift=f, threshold=threshold)
              for v, s, lx, only, f in zip(raw, c.semantic, c.lexical, c.context_only, lift, strict=True)]
    # Words matched only in a memory's context (the words said before it) or its entities order it, but
    # never lift it over the floor alone: "The car needs new tyres", said after "I prefer oolong tea", is
    # not about oolong tea. Held just under the floor, as a graph neighbour's lent score is, unless the
    # memory passes without them.
    for row in range(len(raw)):
        if (c.context_only[row] and scores[row] >= RELEVANCE_FLOOR
                and calibrate(raw[row] - wl * lexical[row], knots, lift=lift[row]) < RELEVANCE_FLOOR):
            scores[row] = RELEVANCE_FLOOR - _UNEARNED_GAP
    # Best first, as `best_first` orders: C-keyed stable sorts (the last key decides first) instead
    # of a tuple key per row.
    order = sorted(range(len(c.ids)), key=c.ids.__getitem__)
    kept_raw = [clamp01(v) for v in raw]
    order.sort(key=[-v for v in kept_raw].__getitem__)
    order.sort(key=[-v for v in scores].__getitem__)
    parts = {"lexical": lexical, "semantic": semantic, "importance": importance, "recency": recency, "raw": kept_raw}
    if when:
        parts["when"] = when
    return Scored(c, scores, parts, order)


def neighbours(scored: Scored, weights: Weights = DEFAULT_WEIGHTS) -> set[str]:
    """Ids that `expand` may lend a score to: the linked memories of the best `graph_parents` hits."""
    links = scored.candidates.links
    return {other for row in scored.order[: weights.graph_parents] for other in links[row]}


def reach(scored: Scored, weights: Weights = DEFAULT_WEIGHTS) -> dict[str, float]:
    """Per id `neighbours` returns, the most `expand` can give it: its own score or the best a parent
    lends it, capped as `expand` caps an unearned score. Lending only raises scores, so a neighbour
    whose reach is below the k-th visible direct hit cannot enter the first k."""
    links = scored.candidates.links
    lent: dict[str, float] = {}
    for row in scored.order[: weights.graph_parents]:
        for other, link_weight in links[row].items():
            lent[other] = max(lent.get(other, 0.0), scored.scores[row] * link_weight * weights.graph_decay)
    rows = scored.rows_of(lent)
    own = {scored.candidates.ids[row]: scored.scores[row] for row in rows}
    best: dict[str, float] = {}
    for other, most in lent.items():
        mine = own.get(other, 0.0)
        if mine < RELEVANCE_FLOOR:
            most = min(most, RELEVANCE_FLOOR - _UNEARNED_GAP)
        best[other] = max(mine, most)
    return best


def expand(scored: Scored, *, admitted: Container[str], weights: Weights = DEFAULT_WEIGHTS, depth: int = 0,
           among: Iterable[str] = ()) -> list[Ranked]:
    """Graph expansion, best first, over the best `depth` hits and those of `among`: each of the best `graph_parents` hits lends
    `score × link weight × decay` to its linked memories, a neighbour keeping the best of its own score
    and what it was lent. Only `admitted` neighbours (the caller checked they are inside the query's
    namespace, author and status) are considered, so a link can never pull in a memory the query could
    not find itself.

    A neighbour must earn its place: one whose own score is below `RELEVANCE_FLOOR` (the legs found
    nothing relating it to the query) is lent at most just under the floor, so a link alone never ranks
    it above a direct match, and the thought tools' default floor drops it.

    Only those rows, the parents and the neighbours become `Ranked` objects. Lending only raises
    scores, so the first `depth` of the answer are the first `depth` of a full expansion: they lie among
    the best `depth + len(lent to)` before it."""
    links, ids = scored.candidates.links, scored.candidates.ids
    parents = [scored.ranked_row(row) for row in scored.order[: weights.graph_parents]]
    targets = [other for parent in parents for other in links[scored.row_of(parent.memory_id)] if other in admitted]
    by_id = {r.memory_id: r for r in scored.ranked(depth + len(targets) if depth else 0)}
    by_id.update((ids[row], scored.ranked_row(row)) for row in scored.rows_of([*targets, *among]) if ids[row] not in by_id)
    for parent in parents:
        for other, link_weight in links[scored.row_of(parent.memory_id)].items():
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
    candidates: Candidates | Sequence[Candidate],
    *,
    top_k: int,
    now: datetime,
    expand_graph: bool = True,
    weights: Weights = DEFAULT_WEIGHTS,
    admitted: Container[str] | None = None,
    focus: tuple[date, date] | None = None,
) -> list[Ranked]:
    """`score` (with the days the query names, `focus`), then (optionally) `expand` over `admitted`
    neighbours (every neighbour when None: callers that have no namespace to check, such as the
    ablation bench), cut to `top_k`."""
    scored = score(candidates, now=now, weights=weights, focus=focus)
    if not expand_graph:
        return scored.ranked(top_k)
    allowed = neighbours(scored, weights) if admitted is None else admitted
    return expand(scored, admitted=allowed, depth=top_k, weights=weights)[:top_k]


_UNEARNED_GAP = 1e-3


def meets(threshold: float | None, score: float, *, enriched: bool) -> bool:
    """A memory still being indexed (not `enriched`) is scored on its words alone (no cosine, importance
    or links yet), so the relevance floor does not judge it until enrichment does (seconds); a higher
    threshold does."""
    if threshold is None or score >= threshold:
        return True
    return not enriched and threshold <= RELEVANCE_FLOOR


def kth(scored: Scored, ids: list[str], k: int) -> float:
    """The k-th best own score among `ids`: what a graph neighbour must reach to place in the first k.
    With fewer than k of them, every neighbour can. (`ids` need not be in score order: a prescored
    search reads its hits in the reranker's order.)"""
    return sorted(map(scored.score_of, ids), reverse=True)[k - 1] if len(ids) >= k else float("-inf")


def within_reach(reach: dict[str, float], bar: float, *, exclude: set[str]) -> list[str]:
    """The neighbours (`reach`) that could still reach `bar`, except those in `exclude`, sorted."""
    return sorted(mid for mid, most in reach.items() if most >= bar and mid not in exclude)


def clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))
