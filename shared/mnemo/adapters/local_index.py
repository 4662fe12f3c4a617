"""`SearchIndex` in process: BM25 over the indexed text with the same filters as OpenSearch.

The embedded default for local runs and tests. Documents are partitioned by (tenant, user_id), so
a query can only ever touch its own partition: isolation by construction, not by filtering.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from mnemo.domain.scoring import bm25_idf, bm25_term, lexical_score, top_k
from mnemo.domain.text import tokenize
from mnemo.ports import IndexDocument, SearchHit, SearchQuery


@dataclass
class _Partition:
    docs: dict[str, IndexDocument] = field(default_factory=dict)
    terms: dict[str, Counter[str]] = field(default_factory=dict)  # memory id -> term frequencies
    postings: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # term -> memory ids
    total_len: int = 0

    def add(self, doc: IndexDocument) -> None:
        self.remove(doc.memory_id)
        counts = Counter(tokenize(doc.text))
        self.docs[doc.memory_id] = doc
        self.terms[doc.memory_id] = counts
        self.total_len += sum(counts.values())
        for term in counts:
            self.postings[term].add(doc.memory_id)

    def remove(self, memory_id: str) -> None:
        counts = self.terms.pop(memory_id, None)
        self.docs.pop(memory_id, None)
        if counts is None:
            return
        self.total_len -= sum(counts.values())
        for term in counts:
            ids = self.postings.get(term)
            if ids is not None:
                ids.discard(memory_id)
                if not ids:
                    del self.postings[term]


class LocalSearchIndex:
    def __init__(self) -> None:
        self._partitions: dict[tuple[str, str], _Partition] = defaultdict(_Partition)
        self._owner: dict[tuple[str, str], str] = {}  # (tenant, memory id) -> user id
        self._lock = threading.RLock()

    def upsert(self, documents: Sequence[IndexDocument]) -> None:
        with self._lock:
            for doc in documents:
                previous_user = self._owner.get((doc.tenant, doc.memory_id))
                if previous_user is not None and previous_user != doc.user_id:
                    self._partitions[(doc.tenant, previous_user)].remove(doc.memory_id)
                self._partitions[(doc.tenant, doc.user_id)].add(doc)
                self._owner[(doc.tenant, doc.memory_id)] = doc.user_id

    def delete(self, tenant: str, memory_id: str) -> None:
        with self._lock:
            user = self._owner.pop((tenant, memory_id), None)
            if user is not None:
                self._partitions[(tenant, user)].remove(memory_id)

    def search(self, query: SearchQuery) -> list[SearchHit]:
        with self._lock:
            partition = self._partitions.get((query.tenant, query.user_id))
            if partition is None or not partition.docs:
                return []
            allowed = {
                mid
                for mid, doc in partition.docs.items()
                if doc.author in query.authors and doc.status in query.statuses
            }
            scores = self._bm25(partition, tokenize(query.text), allowed)
        return [
            SearchHit(memory_id=mid, score=lexical_score(raw), components={"lexical": lexical_score(raw)})
            for mid, raw in top_k(scores, query.top_k)
        ]

    @staticmethod
    def _bm25(partition: _Partition, terms: list[str], allowed: set[str]) -> dict[str, float]:
        doc_count = len(partition.docs)
        avg_len = partition.total_len / doc_count if doc_count else 0.0
        scores: dict[str, float] = defaultdict(float)
        for term in set(terms):
            ids = partition.postings.get(term)
            if not ids:
                continue
            idf = bm25_idf(doc_count, len(ids))
            for mid in ids & allowed:
                counts = partition.terms[mid]
                scores[mid] += bm25_term(counts[term], idf, sum(counts.values()), avg_len)
        return scores
