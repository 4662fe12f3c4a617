"""Writes in flight versus a user's erasure (docs/erasure.md, "Writes in flight").

A user's erasure raises the user's fence before it lists anything; every write that creates memories
or records facts for a user (a capture, an import chunk, synchronous or in a job, a recorded fact)
reads the fence before it writes (`admit`: refused while an erasure runs) and again, strongly
consistent, after its write has landed (`settle`, `settle_facts`). If an erasure was requested since the write was admitted, or is running, the writer erases
what it just wrote and refuses. This is Dekker's pattern: the erasure writes the fence then reads
(lists) the memories, the writer writes its memory then reads the fence, so at least one of them sees
the other. Either the erasure's listing finds the memory, or the writer sees the fence.

"Since the write was admitted" compares erasure job ids, not clocks: the fence names the erasure
requested last, and the writer remembers which one it saw when it was admitted (a job keeps it from
its request on), so no clock skew between two Lambdas can let a write through.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from mnemo.domain.models import Memory
from mnemo.errors import UserErasedError
from mnemo.ports import ErasureFences
from mnemo.services.erasure.memories import ErasureService

__all__ = ["Admission", "WriteFence"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Admission:
    """What a write saw of the user's fence when it began: the erasure requested last (None: none)."""

    tenant: str
    user_id: str
    latest_job: str | None


def _running(user_id: str) -> UserErasedError:
    return UserErasedError(f'user_id: user "{user_id}" is being erased; nothing is written for the user until '
                           "the erasure ends (GET /v1/jobs/{job_id} reports it)")


def _since(user_id: str) -> UserErasedError:
    return UserErasedError(f'user_id: user "{user_id}" was erased while this write was under way; what it wrote '
                           "has been erased too")


class WriteFence:
    def __init__(self, fences: ErasureFences, erasure: ErasureService) -> None:
        self._fences = fences
        self._erasure = erasure  # deferred by the composition root: only a write that lost the race builds its adapters

    def admit(self, tenant: str, user_id: str) -> Admission:
        """Before a write: refused while an erasure of the user runs; else what the write saw."""
        fence = self._fences.read(tenant, user_id)
        if fence.up:
            raise _running(user_id)
        return Admission(tenant=tenant, user_id=user_id, latest_job=fence.latest_job)

    def check(self, admission: Admission) -> None:
        """Before the next part of a long write (a job's chunk): refused, writing nothing, if an
        erasure was requested since the write was admitted, or runs."""
        fence = self._fences.read(admission.tenant, admission.user_id)
        if fence.up:
            raise _running(admission.user_id)
        if fence.latest_job not in (None, admission.latest_job):
            raise _since(admission.user_id)

    def settle(self, admission: Admission, written: Sequence[Memory]) -> None:
        """After the write landed: if an erasure runs or was requested since admission, erase what was
        written (tombstone, derived copies, items: the erasure's own path) and refuse."""
        refusal = self._lost(admission)
        if refusal is None:
            return
        for memory in written:
            self._erasure.erase(memory)
        logger.info("write erased: its user's erasure came first", extra={"memories": len(written)})
        raise refusal

    def settle_facts(self, admission: Admission, fact_uuids: Sequence[str]) -> None:
        """`settle` for facts recorded for the user (record_fact, POST /v1/facts, an import's recorded
        facts): only these are deleted, as the erasure deletes recorded facts; a fact recorded by a write
        admitted after the erasure ended is not this write's and stays."""
        refusal = self._lost(admission)
        if refusal is None:
            return
        if fact_uuids:
            self._erasure.erase_recorded_facts(admission.tenant, admission.user_id, fact_uuids)
        logger.info("recorded facts erased: their user's erasure came first", extra={"facts": len(fact_uuids)})
        raise refusal

    def _lost(self, admission: Admission) -> UserErasedError | None:
        """The refusal if an erasure of the user runs or was requested since admission (a strongly
        consistent read after the write landed), else None."""
        fence = self._fences.read(admission.tenant, admission.user_id)
        changed = fence.latest_job not in (None, admission.latest_job)
        if not fence.up and not changed:
            return None
        return _running(admission.user_id) if fence.up and not changed else _since(admission.user_id)
