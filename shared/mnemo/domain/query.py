"""How a search request becomes index input, and how memories the index has not seen yet are
scored: pure functions, so the service stays one call per step. docs/scoring.md explains both.

- Task context (Thrindex `task_context`): its words join the lexical text, so memories mentioning
  them gain BM25; its embedding is blended into the query vector with `CONTEXT_WEIGHT`.
- Read-your-writes: a memory still pending (or failed) enrichment is not in the index; the service
  reads the newest of them from the store and scores them here with the lexical signal only.
- The days a question names ("last week", "on 13 October 2023"), read against the search's `now`:
  memories captured in them are lifted (`scoring.Weights.focus`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import date, datetime

from mnemo.domain import dates
from mnemo.domain.models import Memory
from mnemo.domain.scoring import Candidate, Candidates, bm25_idf, bm25_term, lexical_share, query_weight
from mnemo.domain.text import tokenize

# The task context's share of the query vector: enough to reorder near-ties, too little to let the
# context outvote the question (0.3 moves a hit that matches both above one matching the query only).
CONTEXT_WEIGHT = 0.3
# An unindexed memory has no corpus statistics to weigh its words by; each matched query term counts
# as a term found in 1% of a 1,000-document corpus would (idf ≈ 4.5), so one matching word scores
# like a moderately rare word in the index would.
UNINDEXED_IDF = bm25_idf(1000, 10)


def lexical_text(query: str, context: str | None) -> str:
    """The lexical leg's text: the query, plus the task context's words when there is one."""
    return f"{query} {context.strip()}" if context and context.strip() else query


def focus(query: str, now: datetime) -> tuple[date, date] | None:
    """The days (first, last) the query's first date expression names, read as the past against `now`
    ("last month", "a week ago", "in May 2023"); None without one, or when they start after `now`'s
    day ("this weekend" asks about plans, and no memory is captured in the future)."""
    days = dates.window(query, now, future=False)
    return days if days is not None and days[0] <= now.date() else None


def blend(query_vector: Sequence[float], context_vector: Sequence[float], weight: float = CONTEXT_WEIGHT) -> list[float]:
    """Unit-length `(1 - weight)·query + weight·context` (both inputs are unit vectors)."""
    mixed = [(1.0 - weight) * q + weight * c for q, c in zip(query_vector, context_vector, strict=True)]
    norm = math.sqrt(sum(v * v for v in mixed)) or 1.0
    return [v / norm for v in mixed]


def unindexed_candidates(memories: Iterable[Memory], text: str) -> list[Candidate]:
    """Lexical candidates among memories the index does not hold yet: BM25 of the query's terms in
    each memory's text (length-normalised against these memories) as a share of the query's maximum,
    only those matching a term."""
    terms = set(tokenize(text))
    documents = [(m, Counter(tokenize(m.normalized_text))) for m in memories]
    if not terms or not documents:
        return []
    avg_len = sum(sum(c.values()) for _, c in documents) / len(documents)
    most = query_weight(UNINDEXED_IDF for _ in terms)
    found = []
    for memory, counts in documents:
        length = sum(counts.values())
        bm25 = sum(bm25_term(counts[t], UNINDEXED_IDF, length, avg_len) for t in terms if counts[t])
        if bm25 > 0:
            found.append(Candidate(memory_id=memory.id, lexical=lexical_share(bm25, most), importance=memory.importance,
                                   captured_at=memory.captured_at, text_tokens=length))
    return found


def merge(indexed: Candidates | Sequence[Candidate], unindexed: Sequence[Candidate]) -> Candidates:
    """The index's candidates plus the unindexed ones it lacks. A memory in both (edited since it was
    indexed) keeps the index's signals with the better of the two lexical scores: its new text is
    findable at once, its old vector serves until re-enrichment replaces it."""
    indexed = Candidates.of(indexed)
    if not unindexed:  # the usual case: no backlog, the index's columns pass through untouched
        return indexed
    fresh = {c.memory_id: c for c in unindexed}
    merged = []
    for candidate in indexed:
        newer = fresh.pop(candidate.memory_id, None)
        if newer is not None and newer.lexical > candidate.lexical:
            candidate = replace(candidate, lexical=newer.lexical)
        merged.append(candidate)
    return Candidates.of(merged + list(fresh.values()))
