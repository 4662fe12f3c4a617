"""`SearchIndex` in process: the same legs, filters and fusion as the OpenSearch adapter.

Documents are partitioned by (tenant, user_id), so a query can only ever touch its own tenant's
partitions: isolation by construction, not by filtering. A query for one user reads one partition;
a tenant-wide query (no user_id) reads each of the tenant's partitions. Per partition: an inverted
index per lexical field (BM25 with the partition's own statistics, vectorised per term) and a
float32 matrix of unit vectors (exact cosine by one matrix-vector product), both filtered by a row
mask of author, status, agent and group codes.

With a token encoder (the local reranker's MiniLM, `MNEMO_RERANKER=minilm`), an enriched document
also keeps its text's token states (adapters/local/late_interaction.py), computed when it is
indexed and dropped with it: a search's reranking then runs the model over the query alone.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from mnemo.adapters.local.late_interaction import StoredStates, TokenEncoder
from mnemo.domain.models import Status
from mnemo.domain.scoring import Candidates, bm25_idf, bm25_term, clamp01, leg_size, lexical_share, query_weight
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

    def terms(self, text: str) -> list[str]:
        """The field's tokens of a text (the ablation bench's stemmed field overrides this)."""
        return tokenize(text)

    def add(self, row: int, text: str) -> None:
        counts = Counter(self.terms(text))
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

    def scores(self, terms: set[str], doc_count: int, out: np.ndarray, boost: float) -> None:
        """Add `boost × BM25` of every row holding any of `terms` into `out` (vectorised per term). Rows
        are not masked here: the caller masks the sum once, cheaper than a mask per posting list."""
        avg_len = self.total_len / doc_count if doc_count else 0.0
        for term in terms:
            if self.doc_freq.get(term, 0) <= 0:
                continue
            if term not in self.arrays:
                row_list, tf_list = self.postings[term]
                self.arrays[term] = (np.asarray(row_list, dtype=np.int64), np.asarray(tf_list, dtype=np.float32))
            rows, tfs = self.arrays[term]
            idf = bm25_idf(doc_count, self.doc_freq[term])
            out[rows] += boost * bm25_term(tfs, idf, self.lengths[rows], avg_len)  # elementwise over the rows

    def query_weight(self, terms: set[str], doc_count: int) -> float:
        """The most `terms` can score in this field (`scoring.query_weight`), with its statistics."""
        return query_weight(bm25_idf(doc_count, max(0, self.doc_freq.get(term, 0))) for term in terms)


@dataclass
class _Columns:
    """What ranking reads per row besides the legs' signals (id, importance, captured_at, links), as
    numpy object arrays, so a search gathers its candidates' values with one fancy index each instead
    of a dictionary lookup per candidate. Rows are append-only and a live row's document never changes
    (a new version takes a new row), so the cache only grows: a search first copies in the rows added
    since the last one, and the write path does not know it exists."""

    filled: int = 0
    ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    importance: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    captured_at: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    links: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))

    def catch_up(self, ids: list[str | None], docs: Mapping[str, IndexDocument]) -> None:
        count = len(ids)
        if count > self.ids.shape[0]:  # grow geometrically, like the partition's row arrays
            size = max(count, 2 * self.ids.shape[0], _INITIAL_ROWS)
            for name in ("ids", "importance", "captured_at", "links"):
                grown = np.empty(size, dtype=object)
                grown[: self.filled] = getattr(self, name)[: self.filled]
                setattr(self, name, grown)
        for row in range(self.filled, count):
            mid = ids[row]
            doc = docs.get(mid) if mid is not None else None  # a row freed before any search saw it
            self.ids[row] = mid
            self.importance[row] = doc.importance if doc else None
            self.captured_at[row] = doc.captured_at if doc else None
            self.links[row] = doc.links if doc else {}
        self.filled = max(self.filled, count)


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
    columns: _Columns = field(default_factory=_Columns)  # filled by searches, see `_Columns`
    states: dict[str, StoredStates] = field(default_factory=dict)  # memory id -> its text's token states

    def __post_init__(self) -> None:
        self.fields = {name: _Field() for name in self.boosts}

    def add(self, doc: IndexDocument, states: StoredStates | None = None) -> None:
        self.remove(doc.memory_id)
        if states is not None:
            self.states[doc.memory_id] = states
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
        for name, index in self.fields.items():
            index.add(row, _field_text(doc, name))

    def remove(self, memory_id: str) -> None:
        doc = self.docs.pop(memory_id, None)
        if doc is None:
            return
        self.states.pop(memory_id, None)
        row = self.rows.pop(memory_id)
        self.ids[row] = None
        self.statuses[row] = _FREE
        for index in self.fields.values():
            index.remove(row)

    def _code(self, name: str) -> int:
        return self.codes.setdefault(name, len(self.codes))

    def mask(self, authors: Sequence[str], statuses: Sequence[Status], exclude: str | None = None, *,
             agent_id: str | None = None, group_id: str | None = None) -> np.ndarray:
        """Rows a query may see; `agent_id`/`group_id` None means any. Codes index small lookup
        tables (`_FREE` = -1 reads the tables' last, always False, entry)."""
        count = len(self.ids)
        author_ok = np.zeros(len(AUTHOR_CODES) + 1, dtype=bool)
        author_ok[[AUTHOR_CODES[a] for a in authors]] = True
        status_ok = np.zeros(len(STATUS_CODES) + 1, dtype=bool)
        status_ok[[STATUS_CODES[s] for s in statuses]] = True
        allowed = author_ok[self.authors[:count]] & status_ok[self.statuses[:count]]
        for wanted, codes in ((agent_id, self.agents), (group_id, self.groups)):
            if wanted is not None:  # an id never seen here has no code: nothing matches
                allowed &= codes[:count] == self.codes.get(wanted, -2)
        if exclude is not None and exclude in self.rows:
            allowed[self.rows[exclude]] = False
        return allowed

    def lexical(self, text: str, allowed: np.ndarray, k: int) -> tuple[np.ndarray, list[float], list[bool]]:
        """The `k` best boosted sums of per-field BM25 among allowed rows: their rows, each sum as a
        share of the query's maximum in `text` (`scoring.lexical_share`), and whether it matched only
        fields other than `text`."""
        terms = set(tokenize(text))
        own = np.zeros(len(self.ids), dtype=np.float32)
        total = np.zeros(len(self.ids), dtype=np.float32)
        for name, boost in self.boosts.items():
            if boost:
                self.fields[name].scores(terms, len(self.docs), own if name == "text" else total, boost)
        total += own
        rows, sums = _top(total, allowed & (total > 0), k)
        most = self.fields["text"].query_weight(terms, len(self.docs))
        return rows, [lexical_share(float(v), most) for v in sums], (own[rows] <= 0).tolist()

    def nearest(self, vector: Sequence[float], allowed: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The `k` best cosines among allowed rows: (rows, cosines)."""
        if self.matrix is None or not self.ids:
            return _NO_ROWS, _NO_VALUES
        sims = self.matrix[: len(self.ids)] @ np.asarray(vector, dtype=np.float32)
        return _top(sims, allowed, k)


_NO_ROWS, _NO_VALUES = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)


def _top(values: np.ndarray, keep: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the `k` largest kept values (unordered) and those values."""
    rows = np.flatnonzero(keep)
    if k <= 0 or rows.size == 0:
        return _NO_ROWS, _NO_VALUES
    if rows.size > k:
        rows = rows[np.argpartition(-values[rows], k - 1)[:k]]
    return rows, values[rows]


def _candidates(partition: _Partition, query: SearchQuery) -> Candidates:
    """Both legs over one partition's allowed rows, as candidate columns gathered with numpy."""
    allowed = partition.mask(query.authors, query.statuses, agent_id=query.scope.agent_id,
                             group_id=query.scope.group_id)
    lex_rows, lex_values, lex_context_only = partition.lexical(query.text, allowed, leg_size(query.top_k))
    sem_rows, sem_values = (partition.nearest(query.vector, allowed, leg_size(query.top_k)) if query.vector is not None
                            else (_NO_ROWS, _NO_VALUES))
    rows = np.union1d(lex_rows, sem_rows)
    lexical = np.zeros(rows.size, dtype=np.float64)  # 0: the lexical leg did not reach it
    lexical[np.searchsorted(rows, lex_rows)] = lex_values
    context_only = np.zeros(rows.size, dtype=bool)
    context_only[np.searchsorted(rows, lex_rows)] = lex_context_only
    semantic = np.full(rows.size, None, dtype=object)  # None: the semantic leg did not reach it
    semantic[np.searchsorted(rows, sem_rows)] = sem_values.astype(np.float64)
    columns = partition.columns
    columns.catch_up(partition.ids, partition.docs)
    return Candidates(
        columns.ids[rows].tolist(), lexical=lexical.tolist(), semantic=semantic.tolist(),
        importance=columns.importance[rows].tolist(), captured_at=columns.captured_at[rows].tolist(),
        text_tokens=partition.fields["text"].lengths[rows].astype(np.int64).tolist(), links=columns.links[rows].tolist(),
        context_only=context_only.tolist(),
    )


def _field_text(doc: IndexDocument, name: str) -> str:
    if name == "entities":
        return " ".join(doc.entities)
    return str(getattr(doc, name) or "")


class LocalSearchIndex:
    def __init__(self, *, fields: Mapping[str, float] = LEXICAL_FIELDS, token_encoder: TokenEncoder | None = None) -> None:
        """`fields` (lexical boosts) default to what ships; the ablation bench varies them.
        `token_encoder`: keep each enriched document's token states (for the local reranker)."""
        self._partitions: dict[tuple[str, str], _Partition] = defaultdict(lambda: _Partition(dict(fields)))
        self._owner: dict[tuple[str, str], str] = {}  # (tenant, memory id) -> user id
        self._users: dict[str, set[str]] = defaultdict(set)  # tenant -> users with a partition
        self._encoder = token_encoder
        self._lock = threading.RLock()

    def ensure_index(self) -> bool:
        return False  # nothing to create: partitions appear on first write

    def upsert(self, documents: Sequence[IndexDocument]) -> dict[str, list[str]]:
        states = self._token_states(documents)  # before the lock: the model's time holds up no search
        with self._lock:
            for doc in documents:
                previous_user = self._owner.get((doc.tenant, doc.memory_id))
                current = self._partitions[(doc.tenant, previous_user)].docs.get(doc.memory_id) if previous_user else None
                if current is not None and current.version > doc.version:
                    continue  # a stale write (a redelivered older enrichment) never replaces a newer one
                if previous_user is not None and previous_user != doc.user_id:
                    self._partitions[(doc.tenant, previous_user)].remove(doc.memory_id)
                self._partitions[(doc.tenant, doc.user_id)].add(doc, states.get(doc.memory_id))
                self._users[doc.tenant].add(doc.user_id)
                self._owner[(doc.tenant, doc.memory_id)] = doc.user_id
        return {}  # ids are ours: nothing to remember

    def _token_states(self, documents: Sequence[IndexDocument]) -> dict[str, StoredStates]:
        """Per document, the states of its text read after the words it replies to (if any): those
        already held for the same text and words (a status change, a redelivery), else computed, for
        enriched documents only (one with a vector: a lexical import document is replaced by its
        enriched one within seconds). All in one model call."""
        if self._encoder is None:
            return {}
        held = {}
        for doc in documents:
            states = self.token_states_of(doc.tenant, [doc.memory_id]).get(doc.memory_id)
            if states is not None and (states.text, states.lead) == (doc.text, doc.replies_to):
                held[doc.memory_id] = states
        todo = [d for d in documents if d.memory_id not in held and d.vector is not None and d.text]
        computed = self._encoder.token_states([f"{d.replies_to} {d.text}".lstrip() for d in todo]) if todo else []
        return held | {d.memory_id: StoredStates.of(d.text, s, d.replies_to) for d, s in zip(todo, computed, strict=True)}

    def token_states_of(self, tenant: str, memory_ids: Sequence[str]) -> dict[str, StoredStates]:
        """The token states held for those of `memory_ids` that the tenant's index has."""
        found = {}
        with self._lock:
            for mid in memory_ids:
                user = self._owner.get((tenant, mid))
                states = self._partitions[(tenant, user)].states.get(mid) if user is not None else None
                if states is not None:
                    found[mid] = states
        return found

    def delete(self, tenant: str, memory_id: str, index_ids: Sequence[str] = ()) -> None:
        with self._lock:
            user = self._owner.pop((tenant, memory_id), None)
            if user is not None:
                self._partitions[(tenant, user)].remove(memory_id)

    def search(self, query: SearchQuery) -> Candidates:
        scope = query.scope
        with self._lock:
            users = [scope.user_id] if scope.user_id is not None else sorted(self._users[scope.tenant])
            found = [_candidates(p, query) for user in users
                     if (p := self._partitions.get((scope.tenant, user))) is not None and p.docs]
        return found[0] if len(found) == 1 else Candidates.concat(found)

    def similar(self, tenant: str, user_id: str, vector: list[float], k: int, exclude: str | None = None) -> list[SearchHit]:
        with self._lock:
            partition = self._partitions.get((tenant, user_id))
            if partition is None:
                return []
            allowed = partition.mask(SIMILAR_AUTHORS, SIMILAR_STATUSES, exclude)
            rows, cosines = partition.nearest(vector, allowed, k)
            sims = {partition.ids[r]: float(c) for r, c in zip(rows.tolist(), cosines.tolist(), strict=True)}
        ranked = sorted(sims.items(), key=lambda kv: (-kv[1], kv[0]))
        return [SearchHit(memory_id=m, score=clamp01(cosine)) for m, cosine in ranked]
