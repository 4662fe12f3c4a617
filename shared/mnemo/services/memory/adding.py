"""Adding a memory as r3's `add_memory` promises: the duplicate check, the capture, and (`wait`) a
bounded wait for its enrichment. The profile keeps only r3's argument names and wording."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mnemo.domain.commands import CaptureCommand
from mnemo.domain.models import Memory, Principal
from mnemo.ports import MemoryStore
from mnemo.services.memory.awaiting import wait_for_enrichment
from mnemo.services.memory.duplicates import Duplicate, DuplicateService
from mnemo.services.memory.memories import MemoryService


@dataclass(frozen=True)
class Added:
    memory: Memory  # as its enrichment left it, when the caller waited
    skipped: str | None = None  # why no duplicate check ran, for the answer


class AddService:
    def __init__(self, memories: MemoryService, duplicates: DuplicateService, store: MemoryStore, *,
                 wait: Callable[[MemoryStore, Memory], Memory] = wait_for_enrichment) -> None:
        self._memories = memories
        self._duplicates = duplicates
        self._store = store  # the wait polls the item itself: no read is charged per poll
        self._wait = wait

    def add(self, principal: Principal, command: CaptureCommand, *, skip_duplicates: bool | None, argument: str,
            wait: bool) -> Added | Duplicate:
        """Capture `command`, or the stored memory it repeats (nothing saved) when the user already has it. `skip_duplicates` None: the default check
        (`permissions.content_check`: none for a key without memory:read, which is told so; asking such
        a key to compare is refused naming `argument`). `wait`: answer once enrichment is done or
        `awaiting.WAIT_SECONDS` have passed (the memory says which)."""
        asked = None if skip_duplicates is None else not skip_duplicates
        check = self._duplicates.before_capture(principal, command.user_id, command.raw, asked=asked, argument=argument)
        if check.duplicate is not None:
            return check.duplicate
        memory = self._memories.capture(principal, command)
        return Added(memory=self._wait(self._store, memory) if wait else memory, skipped=check.skipped)
