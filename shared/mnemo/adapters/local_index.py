"""`SearchIndex` in process: the same legs, filters and fusion as the OpenSearch adapter.

Documents are partitioned by (tenant, user_id), so a query can only ever touch its own tenant's
partitions: isolation by construction, not by filtering. A query for one user reads one partition;
a tenant-wide query (no user_id) reads each of the tenant's partitions. Per partition: an inverted
index per lexical field (BM25 with the partition's own statistics, vectorised per term) and a
float32 matrix of unit vectors (exact cosine by one matrix-vector product), both filtered by a row
mask of author, status, agent and group codes.
"""

from __future__ import annotations

import bisect
import threading
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from mnemo.domain.models import Status
from mnemo.domain.scoring import Candidate, bm25_idf, bm25_term, clamp01, leg_size
from mnemo.domain.text import tokenize
from mnemo.ports import LEXICAL_FIELDS, SIMILAR_AUTHORS, SIMILAR_STATUSES, IndexDocument, SearchHit, SearchQuery

AUTHOR_CODES = {"user": 0, "agent": 1}
STATUS_CODES = {Status.OPEN: 0, Status.COMPLETED: 1, Status.ARCHIVED: 2}
_FREE = -1  # status code of a row whose document was removed or replaced
_INITIAL_ROWS = 64


@dataclass
class _Field:
    """BM25 statistics of one lexical field, by row. Postings are append-only lists turned into
    numpy arrays on first use; rows of removed documents stay in them but are masked out (their
    status is _FREE) and no longer counted in `doc_freq`."""

    postings: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)  # term -> (rows, tfs)
    arrays: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # cache of `postings`
    doc_freq: Counter[str] = field(default_factory=Counter)
    row_terms: dict[int, Counter[str]] = field(default_factory=dict)
    lengths: np.ndarray = field(default_factory=lambda: np.zeros(_INITIAL_ROWS, dtype=np.float32))
    total_len: int = 0

    def add(self, row: int, text: str) -> None:
        counts = Counter(tokenize(text))
        if row >= self.lengths.shape[0]:
            self.lengths = np.concatenate([self.lengths, np.zeros(max(row + 1, self.lengths.shape[0]), np.float32)])
        self.lengths[row] = sum(counts.values())
        self.total_len += int(self.lengths[row])
        self.row_terms[row] = counts
        for term, tf in counts.items():
            rows, tfs = self.postings.setdefault(term, ([], []))
            rows.append(row)
            tfs.append(tf)
            self.arrays.pop(term, None)
            self.doc_freq[term] += 1

    def remove(self, row: int) -> None:
        counts = self.row_terms.pop(row, None)
        if counts is None:
            return
        self.total_len -= int(self.lengths[row])
        for term in counts:
            self.doc_freq[term] -= 1

    def scores(self, terms: set[str], allowed: np.ndarray, doc_count: int, out: np.ndarray, boost: float) -> None:
        """Add `boost × BM25` of every allowed row holding any of `terms` into `out` (vectorised)."""
        avg_len = self.total_len / doc_count if doc_count else 0.0
        for term in terms:
            if self.doc_freq.get(term, 0) <= 0:
                continue
            if term not in self.arrays:
                row_list, tf_list = self.postings[term]
                self.arrays[term] = (np.asarray(row_list, dtype=np.int64), np.asarray(tf_list, dtype=np.float32))
            rows, tfs = self.arrays[term]
            keep = allowed[rows]
            rows, tfs = rows[keep], tfs[keep]
            idf = bm25_idf(doc_count, self.doc_freq[term])
            out[rows] += boost * bm25_term(tfs, idf, self.lengths[rows], avg_len)  # elementwise over the rows


@dataclass
class _Partition:
    """One (tenant, user). Every document has a row; per row: its id, author and status codes and
    (if it has one) its unit vector, so both legs filter and rank inside numpy."""

    boosts: Mapping[str, float]  # lexical field -> boost
    docs: dict[str, IndexDocument] = field(default_factory=dict)
    fields: dict[str, _Field] = field(init=False)
    rows: dict[str, int] = field(default_factory=dict)  # memory id -> row
    ids: list[str | None] = field(default_factory=list)  # row -> memory id (None = free)
    matrix: np.ndarray | None = None
    authors: np.ndarray = field(default_factory=lambda: np.zeros(_INITIAL_ROWS, dtype=np.int8))
    statuses: np.ndarray = field(default_factory=lambda: np.full(_INITIAL_ROWS, _FREE, dtype=np.int8))
    agents: np.ndarray = field(default_factory=lambda: np.full(_INITIAL_ROWS, _FREE, dtype=np.int32))
    groups: np.ndarray = field(default_factory=lambda: np.full(_INITIAL_ROWS, _FREE, dtype=np.int32))
    codes: dict[str, int] = field(default_factory=dict)  # agent/group id -> its code in `agents`/`groups`
    # (created_at, memory id) of every document, sorted: `preceding` bisects it instead of scanning
    # every document (a scan per enrichment made the worker's rate fall as the tenant grew).
    by_creation: list[tuple[datetime, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.fields = {name: _Field() for name in self.boosts}

    def add(self, doc: IndexDocument) -> None:
        self.remove(doc.memory_id)
        row = len(self.ids)
        if row == self.statuses.shape[0]:  # grow geometrically: amortised O(1) inserts
            self.authors = np.concatenate([self.authors, np.zeros_like(self.authors)])
            self.statuses = np.concatenate([self.statuses, np.full_like(self.statuses, _FREE)])
            self.agents = np.concatenate([self.agents, np.full_like(self.agents, _FREE)])
            self.groups = np.concatenate([self.groups, np.full_like(self.groups, _FREE)])
            if self.matrix is not None:
                self.matrix = np.vstack([self.matrix, np.zeros_like(self.matrix)])
        if doc.vector is not None:
            if self.matrix is None:
                self.matrix = np.zeros((self.statuses.shape[0], len(doc.vector)), dtype=np.float32)
            self.matrix[row] = np.asarray(doc.vector, dtype=np.float32)
        self.authors[row] = AUTHOR_CODES[doc.author]
        self.statuses[row] = STATUS_CODES[doc.status]
        self.agents[row] = self._code(doc.agent_id) if doc.agent_id is not None else _FREE
        self.groups[row] = self._code(doc.group_id)
        self.ids.append(doc.memory_id)
        self.rows[doc.memory_id] = row
        self.docs[doc.memory_id] = doc.model_copy(update={"vector": None})  # the matrix holds it
        bisect.insort(self.by_creation, (doc.created_at, doc.memory_id))
        for name, index in self.fields.items():
            index.add(row, _field_text(doc, name))

    def remove(self, memory_id: str) -> None:
        doc = self.docs.pop(memory_id, None)
        if doc is None:
            return
        at = bisect.bisect_left(self.by_creation, (doc.created_at, memory_id))
        del self.by_creation[at]
        row = self.rows.pop(memory_id)
        self.ids[row] = None
        self.statuses[row] = _FREE
        for index in self.fields.values():
            index.remove(row)

    def preceding(self, before: datetime) -> IndexDocument | None:
        """The open document created last before `before` (ties: the greatest id)."""
        for at in range(bisect.bisect_left(self.by_creation, (before, "")) - 1, -1, -1):
            doc = self.docs[self.by_creation[at][1]]
            if doc.status == Status.OPEN:
                return doc
        return None

    def _code(self, name: str) -> int:
        return self.codes.setdefault(name, len(self.codes))

    def mask(self, authors: Sequence[str], statuses: Sequence[Status], exclude: str | None = None, *,
             agent_id: str | None = None, group_id: str | None = None) -> np.ndarray:
        """Rows a query may see; `agent_id`/`group_id` None means any."""
        count = len(self.ids)
        allowed = np.isin(self.authors[:count], [AUTHOR_CODES[a] for a in authors])
        allowed &= np.isin(self.statuses[:count], [STATUS_CODES[s] for s in statuses])
        for wanted, codes in ((agent_id, self.agents), (group_id, self.groups)):
            if wanted is not None:  # an id never seen here has no code: nothing matches
                allowed &= codes[:count] == self.codes.get(wanted, -2)
        if exclude is not None and exclude in self.rows:
            allowed[self.rows[exclude]] = False
        return allowed

    def lexical(self, text: str, allowed: np.ndarray, k: int) -> dict[str, float]:
        """The `k` best boosted sums of per-field BM25 among allowed rows."""
        terms = set(tokenize(text))
        scores = np.zeros(len(self.ids), dtype=np.float32)
        for name, boost in self.boosts.items():
            if boost:
                self.fields[name].scores(terms, allowed, len(self.docs), scores, boost)
        return self._top(scores, scores > 0, k)

    def nearest(self, vector: Sequence[float], allowed: np.ndarray, k: int) -> dict[str, float]:
        """The `k` best cosines among allowed rows."""
        if self.matrix is None or not self.ids:
            return {}
        sims = self.matrix[: len(self.ids)] @ np.asarray(vector, dtype=np.float32)
        return self._top(sims, allowed, k)

    def _top(self, values: np.ndarray, keep: np.ndarray, k: int) -> dict[str, float]:
        candidates = np.flatnonzero(keep)
        if k <= 0 or candidates.size == 0:
            return {}
        if candidates.size > k:
            candidates = candidates[np.argpartition(-values[candidates], k - 1)[:k]]
        return {self.ids[r]: float(values[r]) for r in candidates}  # type: ignore[misc]


def _candidates(partition: _Partition, query: SearchQuery) -> list[Candidate]:
    """Both legs over one partition's allowed rows, as candidates with raw signals."""
    allowed = partition.mask(query.authors, query.statuses, agent_id=query.scope.agent_id,
                             group_id=query.scope.group_id)
    lexical = partition.lexical(query.text, allowed, leg_size(query.top_k))
    semantic = partition.nearest(query.vector, allowed, leg_size(query.top_k)) if query.vector is not None else {}
    return [
        Candidate(
            memory_id=mid,
            lexical=lexical.get(mid, 0.0),
            semantic=semantic.get(mid),
            importance=partition.docs[mid].importance,
            captured_at=partition.docs[mid].captured_at,
            text_tokens=int(partition.fields["text"].lengths[partition.rows[mid]]),
            links=tuple(partition.docs[mid].links.items()),
        )
        for mid in lexical.keys() | semantic.keys()
    ]


def _field_text(doc: IndexDocument, name: str) -> str:
    if name == "entities":
        return " ".join(doc.entities)
    return str(getattr(doc, name) or "")


class LocalSearchIndex:
    def __init__(self, *, fields: Mapping[str, float] = LEXICAL_FIELDS) -> None:
        """`fields` (lexical boosts) default to what ships; the ablation bench varies them."""
        self._partitions: dict[tuple[str, str], _Partition] = defaultdict(lambda: _Partition(dict(fields)))
        self._owner: dict[tuple[str, str], str] = {}  # (tenant, memory id) -> user id
        self._users: dict[str, set[str]] = defaultdict(set)  # tenant -> users with a partition
        self._lock = threading.RLock()

    def ensure_index(self) -> bool:
        return False  # nothing to create: partitions appear on first write

    def upsert(self, documents: Sequence[IndexDocument]) -> dict[str, list[str]]:
        with self._lock:
            for doc in documents:
                previous_user = self._owner.get((doc.tenant, doc.memory_id))
                current = self._partitions[(doc.tenant, previous_user)].docs.get(doc.memory_id) if previous_user else None
                if current is not None and current.version > doc.version:
                    continue  # a stale write (a redelivered older enrichment) never replaces a newer one
                if previous_user is not None and previous_user != doc.user_id:
                    self._partitions[(doc.tenant, previous_user)].remove(doc.memory_id)
                self._partitions[(doc.tenant, doc.user_id)].add(doc)
                self._users[doc.tenant].add(doc.user_id)
                self._owner[(doc.tenant, doc.memory_id)] = doc.user_id
        return {}  # ids are ours: nothing to remember

    def delete(self, tenant: str, memory_id: str, index_ids: Sequence[str] = ()) -> None:
        with self._lock:
            user = self._owner.pop((tenant, memory_id), None)
            if user is not None:
                self._partitions[(tenant, user)].remove(memory_id)

    def search(self, query: SearchQuery) -> list[Candidate]:
        scope = query.scope
        with self._lock:
            users = [scope.user_id] if scope.user_id is not None else sorted(self._users[scope.tenant])
            candidates: list[Candidate] = []
            for user in users:
                partition = self._partitions.get((scope.tenant, user))
                if partition is not None and partition.docs:
                    candidates += _candidates(partition, query)
        return candidates

    def similar(self, tenant: str, user_id: str, vector: list[float], k: int, exclude: str | None = None) -> list[SearchHit]:
        with self._lock:
            partition = self._partitions.get((tenant, user_id))
            if partition is None:
                return []
            allowed = partition.mask(SIMILAR_AUTHORS, SIMILAR_STATUSES, exclude)
            sims = partition.nearest(vector, allowed, k)
        ranked = sorted(sims.items(), key=lambda kv: (-kv[1], kv[0]))
        return [SearchHit(memory_id=m, score=clamp01(cosine)) for m, cosine in ranked]

    def preceding(self, tenant: str, user_id: str, before: datetime) -> IndexDocument | None:
        with self._lock:
            partition = self._partitions.get((tenant, user_id))
            found = partition.preceding(before) if partition is not None else None
        return found.model_copy(update={"vector": None}) if found is not None else None
