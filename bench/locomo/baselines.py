"""The comparison rows, computed by the benchmark itself (not through Mnemo) on the same turns.

- BM25: plain single-field BM25 (k1 1.2, b 0.75) over `speaker: text`, with Mnemo's tokenizer and
  BM25 functions so only the retrieval design differs, not the text analysis.
- Dense: cosine between the question and `speaker: text` with the local MiniLM embedder.

Both rank turn indices; ties go to the earlier turn so runs are deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from mnemo.domain.scoring import bm25_idf, bm25_term
from mnemo.domain.text import tokenize


class Bm25Baseline:
    """An inverted index over one conversation's turns."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._terms = [Counter(tokenize(text)) for text in texts]
        self._lengths = [sum(counts.values()) for counts in self._terms]
        self._avg_len = sum(self._lengths) / len(texts) if texts else 0.0
        self._postings: dict[str, list[int]] = {}
        for doc, counts in enumerate(self._terms):
            for term in counts:
                self._postings.setdefault(term, []).append(doc)

    def scores(self, query: str) -> dict[int, float]:
        """BM25 of every turn sharing a term with the query (each distinct query term counts once)."""
        out: dict[int, float] = {}
        doc_count = len(self._terms)
        for term in set(tokenize(query)):
            docs = self._postings.get(term)
            if not docs:
                continue
            idf = bm25_idf(doc_count, len(docs))
            for doc in docs:
                out[doc] = out.get(doc, 0.0) + bm25_term(self._terms[doc][term], idf, self._lengths[doc], self._avg_len)
        return out

    def rank(self, query: str, k: int) -> list[int]:
        """The k best turns; turns sharing no term with the query are never returned."""
        return [doc for doc, _ in sorted(self.scores(query).items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


class DenseBaseline:
    """Exact cosine over unit vectors: one matrix-vector product per question."""

    def __init__(self, turn_vectors: Sequence[Sequence[float]]) -> None:
        self._matrix = np.asarray(turn_vectors, dtype=np.float32)

    def rank(self, query_vector: Sequence[float], k: int) -> list[int]:
        if self._matrix.size == 0:
            return []
        sims = self._matrix @ np.asarray(query_vector, dtype=np.float32)
        order = np.lexsort((np.arange(len(sims)), -sims))  # by similarity, then by turn order
        return [int(i) for i in order[:k]]
