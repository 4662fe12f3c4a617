"""`SearchIndex` in process: the same legs, filters and fusion as the OpenSearch adapter.

Documents are partitioned by (tenant, user_id), so a query can only ever touch its own partition:
isolation by construction, not by filtering. Per partition: an inverted index per lexical field
(BM25) and a float32 matrix of unit vectors (exact cosine by one matrix-vector product).
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from mnemo.domain.models import Status, utcnow
from mnemo.domain.scoring import Candidate, bm25_idf, bm25_term, fuse, leg_size
from mnemo.domain.text import tokenize
from mnemo.ports import LEXICAL_FIELDS, IndexDocument, SearchHit, SearchQuery


@dataclass
class _Field:
    """BM25 statistics of one lexical field within one partition."""

    terms: dict[str, Counter[str]] = field(default_factory=dict)
    lengths: dict[str, int] = field(default_factory=dict)
    postings: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    total_len: int = 0

    def add(self, memory_id: str, text: str) -> None:
        counts = Counter(tokenize(text))
        self.terms[memory_id] = counts
        self.lengths[memory_id] = sum(counts.values())
        self.total_len += self.lengths[memory_id]
        for term in counts:
            self.postings[term].add(memory_id)

    def remove(self, memory_id: str) -> None:
        counts = self.terms.pop(memory_id, None)
        if counts is None:
            return
        self.total_len -= self.lengths.pop(memory_id)
        for term in counts:
            ids = self.postings.get(term)
            if ids is not None:
                ids.discard(memory_id)
                if not ids:
                    del self.postings[term]

    def scores(self, terms: set[str], allowed: Callable[[str], bool], doc_count: int) -> dict[str, float]:
        """BM25 of the documents holding any of `terms`; only those postings are visited."""
        avg_len = self.total_len / doc_count if doc_count else 0.0
        out: dict[str, float] = defaultdict(float)
        for term in terms:
            ids = self.postings.get(term)
            if not ids:
                continue
            idf = bm25_idf(doc_count, len(ids))
            for mid in ids:
                if allowed(mid):
                    out[mid] += bm25_term(self.terms[mid][term], idf, self.lengths[mid], avg_len)
        return out


AUTHOR_CODES = {"user": 0, "agent": 1}
STATUS_CODES = {Status.OPEN: 0, Status.COMPLETED: 1, Status.ARCHIVED: 2}
_FREE = -1  # status code of a row whose document was removed or replaced


@dataclass
class _Partition:
    """One (tenant, user): documents, per-field BM25 statistics, and a matrix of unit vectors whose
    rows carry author and status codes, so the semantic leg filters and ranks inside numpy."""

    docs: dict[str, IndexDocument] = field(default_factory=dict)
    fields: dict[str, _Field] = field(default_factory=lambda: {name: _Field() for name in LEXICAL_FIELDS})
    rows: dict[str, int] = field(default_factory=dict)  # memory id -> row
    ids: list[str | None] = field(default_factory=list)  # row -> memory id (None = free)
    matrix: np.ndarray | None = None
    authors: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    statuses: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))

    def add(self, doc: IndexDocument) -> None:
        self.remove(doc.memory_id)
        if doc.vector is not None:
            self._put_vector(doc, np.asarray(doc.vector, dtype=np.float32))
        self.docs[doc.memory_id] = doc.model_copy(update={"vector": None})  # the matrix holds it
        for name, index in self.fields.items():
            index.add(doc.memory_id, _field_text(doc, name))

    def remove(self, memory_id: str) -> None:
        if self.docs.pop(memory_id, None) is None:
            return
        for index in self.fields.values():
            index.remove(memory_id)
        row = self.rows.pop(memory_id, None)
        if row is not None:
            self.ids[row] = None
            self.statuses[row] = _FREE

    def _put_vector(self, doc: IndexDocument, vector: np.ndarray) -> None:
        if self.matrix is None:
            self.matrix = np.zeros((64, vector.shape[0]), dtype=np.float32)
            self.authors = np.zeros(64, dtype=np.int8)
            self.statuses = np.full(64, _FREE, dtype=np.int8)
        row = len(self.ids)
        if row == self.matrix.shape[0]:  # grow geometrically: amortised O(1) inserts
            self.matrix = np.vstack([self.matrix, np.zeros_like(self.matrix)])
            self.authors = np.concatenate([self.authors, np.zeros_like(self.authors)])
            self.statuses = np.concatenate([self.statuses, np.full_like(self.statuses, _FREE)])
        self.matrix[row] = vector
        self.authors[row] = AUTHOR_CODES[doc.author]
        self.statuses[row] = STATUS_CODES[doc.status]
        self.ids.append(doc.memory_id)
        self.rows[doc.memory_id] = row

    def nearest(self, vector: list[float], authors: list[str], statuses: list[Status], k: int,
                exclude: str | None = None) -> dict[str, float]:
        """The `k` best cosines among rows of the given authors and statuses."""
        count = len(self.ids)
        if self.matrix is None or count == 0 or k <= 0:
            return {}
        allowed = np.isin(self.authors[:count], [AUTHOR_CODES[a] for a in authors])
        allowed &= np.isin(self.statuses[:count], [STATUS_CODES[s] for s in statuses])
        if exclude is not None and exclude in self.rows:
            allowed[self.rows[exclude]] = False
        sims = self.matrix[:count] @ np.asarray(vector, dtype=np.float32)
        sims[~allowed] = -np.inf
        top = np.argpartition(-sims, k - 1)[:k] if k < count else np.arange(count)
        return {self.ids[r]: float(sims[r]) for r in top if np.isfinite(sims[r])}  # type: ignore[misc]


def _field_text(doc: IndexDocument, name: str) -> str:
    if name == "entities":
        return " ".join(doc.entities)
    return str(getattr(doc, name) or "")


class LocalSearchIndex:
    def __init__(self, *, clock: Callable[[], datetime] = utcnow) -> None:
        self._partitions: dict[tuple[str, str], _Partition] = defaultdict(_Partition)
        self._owner: dict[tuple[str, str], str] = {}  # (tenant, memory id) -> user id
        self._lock = threading.RLock()
        self._clock = clock

    def ensure_index(self) -> bool:
        return False  # nothing to create: partitions appear on first write

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
        size = leg_size(query.top_k)
        with self._lock:
            partition = self._partitions.get((query.tenant, query.user_id))
            if partition is None or not partition.docs:
                return []
            docs = partition.docs

            def allowed(mid: str) -> bool:
                doc = docs[mid]
                return doc.author in query.authors and doc.status in query.statuses

            lexical = self._lexical(partition, query.text, allowed)
            semantic = {}
            if query.vector is not None:
                semantic = partition.nearest(query.vector, list(query.authors), list(query.statuses), size)
            chosen = set(_best(lexical, size)) | set(_best(semantic, size))
            candidates = [
                Candidate(
                    memory_id=mid,
                    lexical=lexical.get(mid, 0.0),
                    semantic=semantic.get(mid),
                    importance=partition.docs[mid].importance,
                    captured_at=partition.docs[mid].captured_at,
                    links=tuple(partition.docs[mid].links.items()),
                )
                for mid in chosen
            ]
        ranked = fuse(candidates, top_k=query.top_k, now=self._clock(), expand_graph=query.expand_graph)
        return [SearchHit(memory_id=r.memory_id, score=r.score, components=r.components) for r in ranked]

    def similar(self, tenant: str, user_id: str, vector: list[float], k: int, exclude: str | None = None) -> list[SearchHit]:
        with self._lock:
            partition = self._partitions.get((tenant, user_id))
            if partition is None:
                return []
            sims = partition.nearest(vector, ["user", "agent"], [Status.OPEN, Status.COMPLETED], k, exclude)
        return [SearchHit(memory_id=m, score=max(0.0, min(1.0, sims[m]))) for m in _best(sims, k)]

    def preceding(self, tenant: str, user_id: str, before: datetime) -> IndexDocument | None:
        with self._lock:
            partition = self._partitions.get((tenant, user_id))
            earlier = [d for d in (partition.docs.values() if partition else ()) if d.created_at < before
                       and d.status == Status.OPEN]
        return max(earlier, key=lambda d: (d.created_at, d.memory_id)).model_copy(update={"vector": None}) if earlier else None

    @staticmethod
    def _lexical(partition: _Partition, text: str, allowed: Callable[[str], bool]) -> dict[str, float]:
        terms = set(tokenize(text))
        total: dict[str, float] = defaultdict(float)
        for name, boost in LEXICAL_FIELDS.items():
            for mid, score in partition.fields[name].scores(terms, allowed, len(partition.docs)).items():
                total[mid] += boost * score
        return total


def _best(scores: dict[str, float], k: int) -> list[str]:
    return [m for m, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]
