"""Which operations count against a tenant's month, and the one place that counts them.

The table sits next to the permission table (services/tenancy/permissions.py) and is applied the same way:
each service entry calls `Meter.charge` right after `authorize`, before any work, so a refused
request stores nothing and enqueues nothing. Counting costs one DynamoDB write per metered request
(an atomic conditional UpdateItem on the tenant's item, which also checks its status and limits);
a refusal costs nothing more (the failed write returns the item as it was). docs/tenancy.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime

from mnemo.domain.models import Principal
from mnemo.domain.tenancy import Counter, Tenant, TenantStatus, Usage, month_end, month_of
from mnemo.domain.timestamps import utcnow
from mnemo.errors import (
    IntentLimitError,
    PaymentRequiredError,
    QuotaExceededError,
    RetrievalLimitError,
    TenantSuspendedError,
    ValidationFailed,
    WriteLimitError,
)
from mnemo.ports import TenantStore
from mnemo.services.tenancy.permissions import Operation

__all__ = ["METERED", "Meter"]

# Writes: capture (episodes, store, add and every import item are captures), edits, recorded facts,
# an extraction without storing (r3 extract_entities: the same model call a capture's enrichment makes).
# Retrievals: get, browse/list, search, fact and entity reads, and each duplicate check that runs (a
# similarity search: services/duplicates.find, an import's per distinct text). Intents: counted per annotated edge
# (`Meter.count_intents`). Archive (MemoryService.archive: a DELETE, a
# delete tool, deduplication's archives), erasure, status and key admin are never counted.
METERED: dict[Operation, Counter] = {
    Operation.CAPTURE: Counter.WRITES,
    Operation.EDIT: Counter.WRITES,
    Operation.RECORD_FACT: Counter.WRITES,
    Operation.EXTRACT: Counter.WRITES,
    Operation.READ: Counter.RETRIEVALS,
    Operation.BROWSE: Counter.RETRIEVALS,
    Operation.SEARCH: Counter.RETRIEVALS,
    Operation.READ_FACTS: Counter.RETRIEVALS,
    Operation.TRAVERSE_FACTS: Counter.RETRIEVALS,
    Operation.FIND_DUPLICATES: Counter.RETRIEVALS,
}
_LIMIT_ERRORS: dict[Counter, type[QuotaExceededError]] = {
    Counter.WRITES: WriteLimitError, Counter.RETRIEVALS: RetrievalLimitError, Counter.INTENTS: IntentLimitError,
}
_WORDS = {Counter.WRITES: "write", Counter.RETRIEVALS: "retrieval", Counter.INTENTS: "intents"}


class Meter:
    """Counts metered operations against the caller's tenant; without a store (tests that build a
    service by hand) nothing is counted or refused."""

    def __init__(self, store: TenantStore | None = None, *, clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._clock = clock

    def charge(self, principal: Principal, operation: Operation, *, count: int = 1) -> None:
        """Count `operation` against the caller's tenant, or raise why not. `count`: how many
        operations at once (an import chunk), admitted whole or refused whole."""
        counter = METERED.get(operation)
        if self._store is None or counter is None or count == 0:
            return
        now = self._clock()
        refused = self._store.charge(principal.tenant, month_of(now), [counter], count)
        if refused is not None:
            raise _error(refused, now)

    def require_room(self, principal: Principal, operation: Operation, *, count: int = 1) -> None:
        """Raise what `charge` would if `count` more `operation`s were charged now, counting nothing
        (one consistent GetItem): the gate in front of work that only precedes a write, such as a
        duplicate check (docs/tenancy.md "Duplicate checks"), so a tenant at its cap gets no free work."""
        counter = METERED.get(operation)
        if self._store is None or counter is None or count == 0:
            return
        now = self._clock()
        plan, used = self._store.get(principal.tenant, month_of(now))
        if plan.status != TenantStatus.ACTIVE:
            raise _error(plan.status, now)
        limit = plan.limits.get(counter)
        if limit is not None and used.get(counter, 0) + count > limit:
            raise _limit(counter, now)

    def count_intents(self, tenant: str, edge_uuids: Sequence[str], *, capped: bool = False) -> int:
        """One `intents` credit per annotated edge, each edge counted once however often the call that
        annotated it is replayed (an SQS redelivery, a reindex, a retried transaction); returns how many
        were counted now. `capped` (record_fact, before it stores the edge): raise the plan's refusal
        instead of counting past it; the worker counts edges of an episode already accepted, uncapped."""
        if self._store is None or not edge_uuids:
            return 0
        now = self._clock()
        charged, refused = self._store.charge_units(tenant, month_of(now), Counter.INTENTS, edge_uuids, capped=capped)
        if refused is not None:
            raise _error(refused, now)
        return charged

    def usage(self, tenant: str) -> Usage:
        now = self._clock()
        plan, used = self._store.get(tenant, month_of(now)) if self._store else (Tenant(tenant=tenant), {})
        return Usage(tenant=tenant, month=month_of(now), used={c: used.get(c, 0) for c in Counter},
                     limits=plan.limits, status=plan.status, resets_at=month_end(now))

    def configure(self, tenant: str, limits: dict[Counter, int | None], status: TenantStatus | None) -> Tenant:
        """The operator's change of a plan (CLI only): limits ≥ 0 (None lifts one), a known status."""
        if not tenant.strip():
            raise ValidationFailed("tenant: must not be empty")
        for counter, limit in limits.items():
            if limit is not None and limit < 0:
                raise ValidationFailed(f"{counter.value}: must be at least 0, or 'unlimited'")
        if self._store is None:
            raise ValidationFailed("tenant: no tenant store is configured")
        return self._store.configure(tenant, limits, status)


def _error(refused: Counter | TenantStatus, now: datetime) -> Exception:
    if refused == TenantStatus.PAST_DUE:
        return PaymentRequiredError("subscription past due")
    if refused == TenantStatus.SUSPENDED:
        return TenantSuspendedError("this tenant is suspended; its operator can reactivate it")
    return _limit(Counter(refused), now)


def _limit(counter: Counter, now: datetime) -> QuotaExceededError:
    resets_at = month_end(now)
    wait = max(1, math.ceil((resets_at - now).total_seconds()))
    return _LIMIT_ERRORS[counter](f"monthly {_WORDS[counter]} limit reached", resets_at, wait)
