"""Duplicate memories: the check before a capture, and the grouping a caller can preview and apply.

Both work inside one user's namespace of the caller's tenant (docs/deduplication.md):
- exact: the same `content_hash` (NFC, collapsed whitespace, case folded);
- near: cosine of the two texts' embeddings at or above a threshold, and every difference between
  them an allowed one (domain/duplicates.py: case, punctuation, articles, contractions, a closed list
  of equivalents; anything else, a correction above all, is its own memory, never merged).
A dry run also lists, as `similar`, the pairs that reach the threshold but that the rule keeps apart,
each with where they differ: the caller sees what the cosine alone would have merged.
Nothing is ever erased: applying a grouping archives the repeats, names the kept memory in their
metadata (`duplicate_of`) and in their history, so reopening one undoes it. Each archive is
conditional on the version the comparison read (its metadata is computed from it): a memory written
since is re-read and archived only if it is still a live repeat of a still live kept memory, else
skipped; every memory is reported archived or skipped with the reason, never lost in an error.
"""

from __future__ import annotations

import operator
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from mnemo.domain.commands import RetrieveCommand
from mnemo.domain.duplicates import difference, same_memory
from mnemo.domain.models import Cursor, Memory, Permission, Principal, Status, content_hash
from mnemo.errors import ConflictError, MnemoError, NotFoundError, RetrievalLimitError
from mnemo.ports import Embedder, MemoryStore, SearchIndex
from mnemo.services.memory.memories import MemoryService
from mnemo.services.memory.search import UNINDEXED_READ
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import CHECK_SKIPPED_AT_RETRIEVAL_CAP, Operation, authorize, content_check

# Cosine (unit vectors) at or above which a new text counts as already saved. Deliberately high: a
# wrongly skipped capture loses what the caller said, a missed duplicate only costs a dedup run.
# tests/integration/memories/test_r3_duplicates.py pins a rewording above it and a different fact below it.
CAPTURE_THRESHOLD = 0.92
NEIGHBOURS = 5  # nearest indexed memories a capture compares against
SCAN_LIMIT = 300  # memories one deduplicate call reads (newest first); the report says when more remain
JOB_NEIGHBOURS = 10  # nearest indexed memories a whole-user deduplication job compares each memory with
SIMILAR_LIMIT = 50  # similar-but-distinct pairs a report lists, most similar first
LIVE = [Status.OPEN, Status.COMPLETED]


class Withheld(BaseModel):
    """A memory a report names to a key without memory:read: its id, never its text or metadata."""

    id: str


class Duplicate(BaseModel):
    memory: Memory | Withheld
    kind: Literal["exact", "semantic"]
    similarity: float = Field(ge=0.0, le=1.0)


class DuplicateGroup(BaseModel):
    keep: Memory | Withheld
    reason: str
    repeats: list[Duplicate]


class Similar(BaseModel):
    """Two memories at or above the threshold that are not one memory: both are kept."""

    memory: Memory | Withheld
    like: Memory | Withheld  # the older of the two
    similarity: float = Field(ge=0.0, le=1.0)
    difference: str | None  # where the texts part (quotes their words: None for a key without memory:read)


class Skipped(BaseModel):
    id: str
    reason: str


class CaptureCheck(BaseModel):
    duplicate: Duplicate | None = None  # the stored memory the text repeats: nothing is saved
    skipped: str | None = None  # why no comparison ran (no memory:read, or no retrievals left), for the answer


class DedupReport(BaseModel):
    user_id: str
    threshold: float
    scanned: int
    more: bool  # more memories than SCAN_LIMIT: a rerun (after applying) continues
    groups: list[DuplicateGroup]
    archived: list[str]
    dry_run: bool
    skipped: list[Skipped] = Field(default_factory=list)  # repeats not archived after all, each with why
    similar: list[Similar] = Field(default_factory=list)  # at most SIMILAR_LIMIT, most similar first; never archived
    similar_more: bool = False  # more similar pairs than listed
    texts: bool = True  # False: the key may not read, so each memory is named by id only (Withheld)

    def withheld(self) -> DedupReport:
        """This report for a key without memory:read: ids, kinds, similarities and counts, no text."""
        groups = [DuplicateGroup(keep=Withheld(id=g.keep.id), reason=g.reason, repeats=[
            d.model_copy(update={"memory": Withheld(id=d.memory.id)}) for d in g.repeats]) for g in self.groups]
        similar = [Similar(memory=Withheld(id=p.memory.id), like=Withheld(id=p.like.id), similarity=p.similarity,
                           difference=None) for p in self.similar]
        return self.model_copy(update={"groups": groups, "similar": similar, "texts": False})


class DuplicateService:
    def __init__(self, store: MemoryStore, memories: MemoryService, index: SearchIndex,
                 embedder: Embedder, meter: Meter | None = None) -> None:
        self._store = store
        self._meter = meter or Meter()  # a check precedes a write: none runs at the write cap
        self._memories = memories
        self._index = index
        self._embedder = embedder

    def before_capture(self, principal: Principal, user_id: str | None, text: str, *, asked: bool | None,
                       argument: str) -> CaptureCheck:
        """The check before a capture (r3 add_memory): `find`, when the caller asks for it or by default
        when the key may read (`permissions.content_check`: a key without memory:read saves as given and
        is told so; asking it explicitly to compare is refused naming `argument`). The capture's own
        permission first: a key that may not write is refused as the capture is, never told "already saved"."""
        authorize(principal, Operation.CAPTURE)
        compare, skipped = content_check(principal, asked, argument)
        if not compare:
            return CaptureCheck(skipped=skipped)
        try:
            return CaptureCheck(duplicate=self.find(principal, user_id, text))
        except RetrievalLimitError:  # a read quota never refuses the write: it proceeds unchecked, saying so
            return CaptureCheck(skipped=CHECK_SKIPPED_AT_RETRIEVAL_CAP)

    def find(self, principal: Principal, user_id: str | None, text: str, threshold: float = CAPTURE_THRESHOLD, *,
             room_checked: bool = False, charged: bool = False) -> Duplicate | None:
        """The live memory of this user that `text` repeats: an exact one first, else the nearest
        at or above `threshold`. Memories not indexed yet (just captured) are compared exactly. The user
        is the one the key may act for (`Principal.user_for`): a bound key never compares with another's.
        Refused, before any embedding, when the tenant's write limit has no room for the capture the
        check precedes (`room_checked`: the caller checked room for all its checks at once). Then charged
        one `retrievals` unit (it is a similarity search; `charged`: the caller charged all its checks at
        once): RetrievalLimitError at that cap, before any embedding, for the caller to skip the check."""
        authorize(principal, Operation.FIND_DUPLICATES)
        user_id = principal.user_for(user_id)
        if not room_checked:
            self._meter.require_room(principal, Operation.CAPTURE)
        if not charged:
            self._meter.charge(principal, Operation.FIND_DUPLICATES)
        wanted = content_hash(text)
        recent = [m for m in self._store.unindexed(principal.tenant, UNINDEXED_READ)
                  if m.user_id == user_id and m.status in LIVE]
        vector = self._embedder.embed([text])[0]
        hits = self._index.similar(principal.tenant, user_id, vector, NEIGHBOURS)
        near = {m.id: m for m in self._store.get_many(principal.tenant, [h.memory_id for h in hits])}
        candidates = [*recent, *(near[h.memory_id] for h in hits if h.memory_id in near)]
        for memory in candidates:
            if memory.content_hash == wanted and memory.user_id == user_id and memory.status in LIVE:
                return Duplicate(memory=memory, kind="exact", similarity=1.0)
        for hit in hits:
            neighbour = near.get(hit.memory_id)
            if (neighbour is not None and neighbour.user_id == user_id and neighbour.status in LIVE
                    and same_memory(text, neighbour.raw, same_hash=False, cosine=hit.score, threshold=threshold)):
                return Duplicate(memory=neighbour, kind="semantic", similarity=round(hit.score, 4))
        return None

    def deduplicate(self, principal: Principal, user_id: str | None, threshold: float, *, dry_run: bool) -> DedupReport:
        """Group the user's live memories: each group keeps its earliest captured memory (the
        original; the others repeat it). With `dry_run=False` the repeats are archived: that needs
        `memory:delete` only, and a key without `memory:read` gets the report without texts."""
        operation = Operation.FIND_DUPLICATES if dry_run else Operation.ARCHIVE
        authorize(principal, operation)
        user_id = principal.user_for(user_id)
        page = self._memories.browse(principal, RetrieveCommand(top_k=100, author="all", statuses=LIVE, user_id=user_id),
                                     operation=operation)
        memories = list(page.items)
        while page.next_cursor is not None and len(memories) < SCAN_LIMIT:
            cursor = page.next_cursor
            page = self._memories.browse(principal, RetrieveCommand(
                top_k=100, author="all", statuses=LIVE, user_id=user_id,
                cursor_created_at=cursor.cursor_created_at, cursor_id=cursor.cursor_id), operation=operation)
            memories.extend(page.items)
        more = page.next_cursor is not None or len(memories) > SCAN_LIMIT
        memories = sorted(memories[:SCAN_LIMIT], key=_age)
        similarity = self._similarities(memories)
        groups = _group(memories, similarity, threshold)
        similar = _similar(memories, similarity, threshold)
        archived: list[str] = []
        skipped: list[Skipped] = []
        if not dry_run:
            for group in groups:
                for repeat in group.repeats:
                    assert isinstance(repeat.memory, Memory) and isinstance(group.keep, Memory)  # _group's: whole memories
                    reason = self._archive(principal, repeat.memory, group.keep)
                    if reason is None:
                        archived.append(repeat.memory.id)
                    else:
                        skipped.append(Skipped(id=repeat.memory.id, reason=reason))
        report = DedupReport(user_id=user_id, threshold=threshold, scanned=len(memories), more=more, groups=groups,
                             archived=archived, dry_run=dry_run, skipped=skipped,
                             similar=similar[:SIMILAR_LIMIT], similar_more=len(similar) > SIMILAR_LIMIT)
        return report if principal.allows(Permission.READ) else report.withheld()

    def _archive(self, principal: Principal, snapshot: Memory, keep: Memory) -> str | None:
        """Archive `snapshot` as `duplicate_of` `keep`, conditional on the version compared: None when
        archived, else why not. On a conflict the memory is re-read: one whose text is unchanged and
        still live (only its metadata or enrichment moved) still repeats `keep`, so it is archived at
        its new version with its new metadata; anything else is skipped. Never overwrites."""
        memory = snapshot
        for _ in range(2):
            kept = self._store.get(principal.tenant, keep.id)
            if kept is None or kept.status not in LIVE or kept.content_hash != keep.content_hash:
                return f"the kept memory {keep.id} was changed, archived or erased since the comparison"
            try:  # an archive, like any other: never metered (docs/tenancy.md "What counts")
                self._memories.archive(principal, memory.id, metadata={**memory.metadata, "duplicate_of": keep.id},
                                       expected_version=memory.version, detail=f"duplicate of {keep.id}",
                                       duplicate_of=keep.id)  # a pointer in the kept memory's collection too
                return None
            except NotFoundError as exc:
                if exc.ident == keep.id:  # erased (or its erasure begun) after the read above
                    return f"the kept memory {keep.id} was changed, archived or erased since the comparison"
                return "erased since it was read"
            except ConflictError:
                fresh = self._store.get(principal.tenant, memory.id)
                if fresh is None:
                    return "erased since it was read"
                if fresh.status not in LIVE:
                    return f"{fresh.status.value} since it was read"
                if fresh.content_hash != snapshot.content_hash:
                    return "its text changed since the comparison; run deduplication again"
                memory = fresh
            except MnemoError as exc:  # a refusal mid-run: what was done stays reported
                return exc.message
        return "changed again while being archived; run deduplication again"

    def live_ids(self, principal: Principal, user_id: str | None, limit: int | None = None) -> list[str]:
        """The user's live memories, oldest captured first (a whole-user deduplication's plan); with
        `limit`, stop reading once more than `limit` are found (enough to tell a small user from a large one).
        Only applying a deduplication plans it, so it needs what applying needs (`memory:delete`)."""
        authorize(principal, Operation.ARCHIVE)
        user_id = principal.user_for(user_id)
        memories: list[Memory] = []
        cursor: Cursor | None = None
        while limit is None or len(memories) <= limit:
            page = self._memories.browse(principal, RetrieveCommand(
                top_k=100, author="all", statuses=LIVE, user_id=user_id,
                cursor_created_at=cursor.cursor_created_at if cursor else None, cursor_id=cursor.cursor_id if cursor else None),
                operation=Operation.ARCHIVE)
            memories.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        return [m.id for m in sorted(memories, key=_age)]

    def archive_repeats(self, principal: Principal, user_id: str, memory_ids: list[str],
                        threshold: float) -> tuple[int, int, list[Skipped]]:
        """One chunk of a whole-user deduplication job, `memory_ids` oldest first: each still live memory
        that repeats an older live memory of the user (same hash, or at least `threshold` among its
        nearest indexed neighbours) is archived as `duplicate_of` the oldest such one. Chunks run oldest
        first and an archived memory never keeps another, so the grouping is `_group`'s (never
        transitive) without comparing every pair. Answers (kept memories named, repeats archived, repeats
        skipped with why: erased or changed since they were read)."""
        authorize(principal, Operation.ARCHIVE)
        user_id = principal.user_for(user_id)
        found = {m.id: m for m in self._store.get_many(principal.tenant, memory_ids)}
        memories = [found[i] for i in memory_ids if i in found and found[i].user_id == user_id and found[i].status in LIVE]
        vectors = self._embedder.embed([m.normalized_text for m in memories]) if memories else []
        kept: set[str] = set()
        archived = 0
        skipped: list[Skipped] = []
        for memory, vector in zip(memories, vectors, strict=True):
            hits = {h.memory_id: h.score for h in self._index.similar(principal.tenant, user_id, vector, JOB_NEIGHBOURS)}
            older = [n for n in self._store.get_many(principal.tenant, list(hits))
                     if n.id != memory.id and n.user_id == user_id and n.status in LIVE and _age(n) < _age(memory)
                     and same_memory(n.raw, memory.raw, same_hash=n.content_hash == memory.content_hash, cosine=hits[n.id],
                                     threshold=threshold)]
            if older:
                keep = min(older, key=_age)
                reason = self._archive(principal, memory, keep)
                if reason is None:
                    kept.add(keep.id)
                    archived += 1
                else:
                    skipped.append(Skipped(id=memory.id, reason=reason))
        return len(kept), archived, skipped

    def _similarities(self, memories: list[Memory]) -> list[list[float]]:
        """Pairwise cosines (unit vectors: the dot product). Plain Python, as services take no numpy:
        300 memories are 45k dot products of 384-1024 floats, well under a second."""
        if len(memories) < 2:
            return [[0.0] * len(memories) for _ in memories]
        vectors = self._embedder.embed([m.normalized_text for m in memories])
        size = len(vectors)
        table = [[0.0] * size for _ in range(size)]
        for i in range(size):
            for j in range(i + 1, size):
                table[i][j] = table[j][i] = min(1.0, max(0.0, sum(map(operator.mul, vectors[i], vectors[j]))))
        return table


def _age(memory: Memory) -> tuple[datetime, datetime, str]:
    return (memory.captured_at, memory.created_at, memory.id)


def _group(memories: list[Memory], similarity: list[list[float]], threshold: float) -> list[DuplicateGroup]:
    """Oldest first, each memory not yet placed starts a group and takes every later one that
    repeats it exactly, or reaches `threshold` against it with every difference an allowed one (not
    transitively: a chain of small rewordings never merges two different facts)."""
    placed: set[int] = set()
    groups = []
    for i, keep in enumerate(memories):
        if i in placed:
            continue
        repeats = []
        for j in range(i + 1, len(memories)):
            if j in placed:
                continue
            if memories[j].content_hash == keep.content_hash:
                repeats.append(Duplicate(memory=memories[j], kind="exact", similarity=1.0))
            elif same_memory(keep.raw, memories[j].raw, same_hash=False, cosine=similarity[i][j], threshold=threshold):
                repeats.append(Duplicate(memory=memories[j], kind="semantic", similarity=round(similarity[i][j], 4)))
            else:
                continue
            placed.add(j)
        if repeats:
            groups.append(DuplicateGroup(keep=keep, reason="earliest captured; the others repeat it", repeats=repeats))
    return groups


def _similar(memories: list[Memory], similarity: list[list[float]], threshold: float) -> list[Similar]:
    """The pairs at or above `threshold` that the rule keeps apart, most similar first: what a cosine
    alone would merge, each with where the texts differ."""
    pairs = []
    for i, older in enumerate(memories):
        for j in range(i + 1, len(memories)):
            if similarity[i][j] >= threshold and older.content_hash != memories[j].content_hash:
                differs = difference(older.raw, memories[j].raw)
                if differs is not None:
                    pairs.append(Similar(memory=memories[j], like=older, similarity=round(similarity[i][j], 4),
                                         difference=differs))
    return sorted(pairs, key=lambda p: -p.similarity)
