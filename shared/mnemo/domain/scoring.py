"""Ranking maths as pure functions. Every score that reaches a caller lies in [0, 1].

See docs/scoring.md for why each piece is shaped as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

BM25_K1 = 1.2
BM25_B = 0.75
# A BM25 score of this size maps to 0.5: raw BM25 is unbounded, a threshold needs a fixed scale.
LEXICAL_HALF_SCORE = 6.0


def bm25_idf(doc_count: int, doc_freq: int) -> float:
    return math.log(1.0 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5))


def bm25_term(tf: int, idf: float, doc_len: int, avg_len: float) -> float:
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * doc_len / max(avg_len, 1e-9))
    return idf * tf * (BM25_K1 + 1.0) / (tf + norm)


def saturate(value: float, half: float) -> float:
    """Map [0, inf) onto [0, 1) monotonically; `half` maps to 0.5."""
    return value / (value + half) if value > 0 else 0.0


def lexical_score(bm25: float) -> float:
    return saturate(bm25, LEXICAL_HALF_SCORE)


def top_k(scores: Mapping[str, float], k: int) -> list[tuple[str, float]]:
    """Best first; ties broken by id so results are deterministic."""
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def clamp01(values: Sequence[float]) -> list[float]:
    return [min(1.0, max(0.0, v)) for v in values]
