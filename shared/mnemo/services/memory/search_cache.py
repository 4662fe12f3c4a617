"""The r3 cache: a per-warm-instance hot set of recent answers (searches, listing pages) per user.

r3's `prefer_cache` promises a faster repeat of the same question. Here a repeated identical request
of one user, within `ttl_seconds`, is answered from this process's memory instead of embedding the
query and asking the index again, but only after two cheap store reads prove the answer still holds:
the user's newest memory is the one it was (one Query, limit 1: nothing was added or imported
since), and every memory in the answer is at the revision and status it had (one BatchGetItem:
nothing in it was edited, enriched, archived or erased). Writes made through this process (capture,
edit, archive, erasure, on any surface) drop the user's entries at once (`WatchedStore`); a write
elsewhere that changes a memory outside the answer (another Lambda instance editing one to match)
is bounded by the TTL. Nothing is shared between instances, and a cold start begins empty.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from mnemo.domain.models import Activity, EnrichmentState, Memory, Page, Principal, Status
from mnemo.domain.namespace import NamespaceFilter
from mnemo.ports import BrowseQuery, MemoryStore
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import Operation, authorize

__all__ = ["CacheStats", "OptimizeReport", "SearchCache", "WatchedStore"]

TTL_SECONDS = 60.0
MAX_ENTRIES = 256  # per instance, every tenant: an entry is at most 100 memories (~1 MB worst case each)
EVERY_STATUS = [Status.OPEN, Status.COMPLETED, Status.ARCHIVED]


class CacheStats(BaseModel):
    """One tenant's share of this instance's cache, and the counters since the instance started."""

    scope: str = "this warm instance"
    entries: int
    memories: int
    hits: int
    misses: int
    stale: int  # lookups that found an entry but proved it out of date (counted in misses too)
    invalidations: int
    evictions: int
    ttl_seconds: float
    max_entries: int


class OptimizeReport(BaseModel):
    evicted_entries: int
    entries: int
    memories: int


@dataclass
class _Entry:
    tenant: str
    user_id: str
    value: Any
    memories: list[Memory]
    newest_id: str | None
    at: float


@dataclass
class _Counters:
    hits: int = 0
    misses: int = 0
    stale: int = 0
    invalidations: int = 0
    evictions: int = 0


@dataclass
class SearchCache:
    store: MemoryStore
    ttl_seconds: float = TTL_SECONDS
    max_entries: int = MAX_ENTRIES
    clock: Callable[[], float] = time.monotonic
    meter: Meter = field(default_factory=Meter)
    _entries: OrderedDict[tuple[str, str, str], _Entry] = field(default_factory=OrderedDict)
    _counters: dict[str, _Counters] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def through[T](self, principal: Principal, operation: Operation, user_id: str, key: str,
                   compute: Callable[[], T], memories_of: Callable[[T], list[Memory]]) -> tuple[T, bool]:
        """`compute()`'s answer for this user and key, from the cache when a still-valid entry holds
        it; returns (answer, served_from_cache). Authorizes first: a hit is a read like any other, so it
        is metered like one, and a user-bound key's entry is its own user's whatever it asked for."""
        authorize(principal, operation)
        user_id = principal.user_for(user_id)
        tenant, slot = principal.tenant, (principal.tenant, user_id, key)
        with self._lock:
            entry = self._entries.get(slot)
        if entry is not None and self._still_valid(entry):
            self.meter.charge(principal, operation)
            with self._lock:
                if slot in self._entries:
                    self._entries.move_to_end(slot)
                self._count(tenant).hits += 1
            return entry.value, True
        newest = self._newest(tenant, user_id)  # read before computing: a capture racing the search makes it stale, not wrong
        value = compute()
        with self._lock:
            counters = self._count(tenant)
            counters.misses += 1
            counters.stale += entry is not None
            self._entries[slot] = _Entry(tenant, user_id, value, memories_of(value), newest, self.clock())
            self._entries.move_to_end(slot)
            while len(self._entries) > self.max_entries:
                _, dropped = self._entries.popitem(last=False)
                self._count(dropped.tenant).evictions += 1
        return value, False

    def _still_valid(self, entry: _Entry) -> bool:
        if self.clock() - entry.at > self.ttl_seconds:
            return False
        if self._newest(entry.tenant, entry.user_id) != entry.newest_id:
            return False
        current = {m.id: m for m in self.store.get_many(entry.tenant, [m.id for m in entry.memories])}
        return all(m.id in current and (current[m.id].revision, current[m.id].status) == (m.revision, m.status)
                   for m in entry.memories)

    def _newest(self, tenant: str, user_id: str) -> str | None:
        page = self.store.browse(BrowseQuery(scope=NamespaceFilter(tenant=tenant, user_id=user_id),
                                             statuses=EVERY_STATUS, authors=["user", "agent"], limit=1))
        return page.items[0].id if page.items else None

    def _count(self, tenant: str) -> _Counters:
        return self._counters.setdefault(tenant, _Counters())

    def invalidate(self, tenant: str, user_id: str | None = None) -> None:
        """Drop the user's entries (every user of the tenant when None): a write went through here."""
        with self._lock:
            doomed = [k for k, e in self._entries.items() if e.tenant == tenant and user_id in (None, e.user_id)]
            for slot in doomed:
                del self._entries[slot]
            if doomed:
                self._count(tenant).invalidations += len(doomed)

    def stats(self, principal: Principal) -> CacheStats:
        authorize(principal, Operation.READ_CACHE)
        with self._lock:
            mine = [e for e in self._entries.values() if e.tenant == principal.tenant]
            c = self._count(principal.tenant)
            return CacheStats(entries=len(mine), memories=len({m.id for e in mine for m in e.memories}), hits=c.hits,
                              misses=c.misses, stale=c.stale, invalidations=c.invalidations, evictions=c.evictions,
                              ttl_seconds=self.ttl_seconds, max_entries=self.max_entries)

    def optimize(self, principal: Principal, *, force_refresh: bool, max_memories: int | None) -> OptimizeReport:
        """Evict the tenant's entries: all (force_refresh), else the expired ones, then the least
        recently used until at most `max_memories` distinct memories remain."""
        authorize(principal, Operation.READ_CACHE)
        now, tenant = self.clock(), principal.tenant
        with self._lock:
            mine = [k for k, e in self._entries.items() if e.tenant == tenant]  # least recently used first
            doomed = {k for k in mine if force_refresh or now - self._entries[k].at > self.ttl_seconds}
            kept = [k for k in mine if k not in doomed]
            while max_memories is not None and kept and len({m.id for k in kept for m in self._entries[k].memories}) > max_memories:
                doomed.add(kept.pop(0))
            for slot in doomed:
                del self._entries[slot]
            self._count(tenant).evictions += len(doomed)
            left = [self._entries[k] for k in kept]
            return OptimizeReport(evicted_entries=len(doomed), entries=len(left),
                                  memories=len({m.id for e in left for m in e.memories}))


class WatchedStore:
    """The store as the memory and erasure services use it: every write drops the cache entries of
    the user it touches (an erasure, whose user is not in the call, drops the tenant's)."""

    def __init__(self, store: MemoryStore, cache: SearchCache) -> None:
        self._inner = store
        self._cache = cache

    def put_new(self, memory: Memory, activity: Activity | None = None) -> None:
        self._inner.put_new(memory, activity)
        self._cache.invalidate(memory.tenant, memory.user_id)

    def put_new_many(self, created: Sequence[tuple[Memory, Activity]]) -> None:
        self._inner.put_new_many(created)
        for tenant, user_id in {(memory.tenant, memory.user_id) for memory, _ in created}:
            self._cache.invalidate(tenant, user_id)

    def save(self, memory: Memory, *, expected_version: int, activity: Activity | None = None,
             duplicate_of: str | None = None) -> None:
        self._inner.save(memory, expected_version=expected_version, activity=activity, duplicate_of=duplicate_of)
        self._cache.invalidate(memory.tenant, memory.user_id)

    def erase(self, tenant: str, memory_id: str) -> int:
        erased = self._inner.erase(tenant, memory_id)
        self._cache.invalidate(tenant)
        return erased

    def get(self, tenant: str, memory_id: str, *, salvage: bool = False) -> Memory | None:
        return self._inner.get(tenant, memory_id, salvage=salvage)

    def get_many(self, tenant: str, memory_ids: Sequence[str], *, consistent: bool = False) -> list[Memory]:
        return self._inner.get_many(tenant, memory_ids, consistent=consistent)

    def browse(self, query: BrowseQuery) -> Page:
        return self._inner.browse(query)

    def unindexed(self, tenant: str, limit: int) -> list[Memory]:
        return self._inner.unindexed(tenant, limit)

    def preceding(self, tenant: str, user_id: str, memories: Sequence[Memory]) -> dict[str, Memory | None]:
        return self._inner.preceding(tenant, user_id, memories)

    def history(self, tenant: str, memory_id: str) -> list[Activity]:
        return self._inner.history(tenant, memory_id)

    def repeats_of(self, tenant: str, kept_id: str) -> list[str]:
        return self._inner.repeats_of(tenant, kept_id)

    def forget_repeat(self, tenant: str, kept_id: str, repeat_id: str) -> None:
        self._inner.forget_repeat(tenant, kept_id, repeat_id)

    def scrub_history(self, tenant: str, memory_id: str, detail: str, replacement: str) -> int:
        return self._inner.scrub_history(tenant, memory_id, detail, replacement)

    def count_by_enrichment(self, tenant: str, state: EnrichmentState) -> int:
        return self._inner.count_by_enrichment(tenant, state)

    def stale_pending(self, older_than: datetime, limit: int) -> list[Memory]:
        return self._inner.stale_pending(older_than, limit)

    def every_memory(self) -> Iterator[Memory]:
        return self._inner.every_memory()
