"""r3's reads through its hot set (`prefer_cache`): a search, and offset pages over the store's cursors
(r3 `get_all_memories` takes offset and limit; the store pages by cursor). What counts as the same
request (the cache key) is decided here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mnemo.domain.commands import RetrieveCommand
from mnemo.domain.models import Memory, Principal, ScoredMemory, Status
from mnemo.services.memory.memories import MemoryService
from mnemo.services.memory.search_cache import SearchCache
from mnemo.services.tenancy.permissions import Operation

LIVE = [Status.OPEN, Status.COMPLETED]
STORE_PAGE = 100  # memories one browse reads


@dataclass(frozen=True)
class OffsetPage:
    items: list[Memory]
    next_offset: int | None  # None: this is the last page
    total: int | None  # known once the listing reached its end
    cache: Cache


Cache = Literal["hit", "miss", "off"]


class HotReads:
    def __init__(self, memories: MemoryService, cache: SearchCache) -> None:
        self._memories = memories
        self._cache = cache

    def search(self, principal: Principal, user_id: str, command: RetrieveCommand, *,
               prefer_cache: bool) -> tuple[list[ScoredMemory], Cache]:
        """`memories.search`, answered from the hot set when `prefer_cache` and the same command of the
        same user was answered there and still holds."""
        if not prefer_cache:
            return self._memories.search(principal, command), "off"
        hits, cached = self._cache.through(principal, Operation.SEARCH, user_id, "search " + command.model_dump_json(),
                                           lambda: self._memories.search(principal, command), lambda found: [h.memory for h in found])
        return hits, "hit" if cached else "miss"

    def page(self, principal: Principal, user_id: str, offset: int, limit: int, *, prefer_cache: bool) -> OffsetPage:
        """The user's live memories `offset` to `offset + limit`, newest first: every memory up to the
        page's end (and one past it, to know whether more remain) is read. Cached, the entry holds every
        memory read, so an archive before the page also makes it stale."""
        wanted = offset + limit

        def read() -> tuple[list[Memory], bool]:  # every memory up to the page (and one past it), and whether that is all
            items, cursor = list[Memory](), None
            while len(items) <= wanted:
                page = self._memories.browse(principal, RetrieveCommand(
                    top_k=STORE_PAGE, author="all", statuses=LIVE, user_id=user_id,
                    cursor_created_at=cursor.cursor_created_at if cursor else None, cursor_id=cursor.cursor_id if cursor else None))
                items.extend(page.items)
                cursor = page.next_cursor
                if cursor is None:
                    break
            return items, cursor is None and len(items) <= wanted

        if prefer_cache:
            (items, done), cached = self._cache.through(
                principal, Operation.BROWSE, user_id, f"list {wanted}", read, lambda listed: listed[0])
        else:
            (items, done), cached = read(), False
        return OffsetPage(items=items[offset:wanted], next_offset=None if done else wanted,
                          total=len(items) if done else None,
                          cache=("hit" if cached else "miss") if prefer_cache else "off")
