"""`FactStore` on the memories table, one aggregate a class on the shared `FactTable`: entity nodes
and names (`dynamodb_entities`), recorded facts (`dynamodb_recorded`), erasure (`dynamodb_erasure`),
and here the derived facts and every fact's timeline (retract, invalidate, validity, audit rows).
Layout and access patterns: docs/table-design.md ("Fact graph").

Every change of a fact is one `TransactWriteItems` (`FactTable._commit`): the fact item conditioned
on the revision read, its adjacency items moved when the status changes, an audit row that must not
exist yet, and the memory's provenance record. A lost race re-reads and re-applies (three tries),
then ConflictError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from mnemo.adapters.dynamodb.codec import all_items, memory_pk, serialize
from mnemo.adapters.dynamodb.entities import DynamoDbEntityGraph
from mnemo.adapters.dynamodb.erasure import DynamoDbFactErasure
from mnemo.adapters.dynamodb.fact_items import (
    AUDIT_PREFIX,
    FACT_SK,
    PROVENANCE_PREFIX,
    fact_pk,
    item_to_audit,
    item_to_fact,
)
from mnemo.adapters.dynamodb.fact_table import audit_of
from mnemo.adapters.dynamodb.recorded import DynamoDbRecordedFacts
from mnemo.domain.graph import Fact, FactAudit, FactSource, FactStatus
from mnemo.domain.models import Memory
from mnemo.errors import retry_on_conflict
from mnemo.ports import DerivedFacts


class DynamoDbFactStore(DynamoDbEntityGraph, DynamoDbRecordedFacts, DynamoDbFactErasure):
    # -- facts: derived ------------------------------------------------------------------
    def replace_derived(self, memory: Memory, facts: Sequence[Fact], at: datetime) -> DerivedFacts:
        """One Query (the memory's provenance) and one BatchGetItem (those facts and the wanted ones),
        then a transaction per fact that changes; a replay writes nothing."""
        wanted = {f.uuid: f for f in facts}
        previous = self._provenance(memory.tenant, memory.id)
        current = {f.uuid: f for f in self.get_many(memory.tenant, [*previous, *wanted])}
        after: list[Fact] = []
        for fact in wanted.values():
            read = _read_once(current.get(fact.uuid), partial(self.get, memory.tenant, fact.uuid))
            supported = retry_on_conflict(partial(self._support, memory, fact, at, read))
            if supported is not None and supported.status == FactStatus.ACTIVE:
                after.append(supported)
        for fact_uuid in [u for u in previous if u not in wanted]:
            read = _read_once(current.get(fact_uuid), partial(self.get, memory.tenant, fact_uuid))
            retry_on_conflict(partial(self._withdraw, memory, fact_uuid, at, read))
        return DerivedFacts(before=[current[u] for u in previous if u in current], after=after)

    def _support(self, memory: Memory, fact: Fact, at: datetime, read: Callable[[], Fact | None]) -> Fact | None:
        """The fact as this memory leaves it (None: not stored, e.g. retracted facts stay as they are)."""
        source = FactSource(memory_id=memory.id, version=memory.version)
        current = read()
        if current is None:
            created = fact.model_copy(update={"sources": [source], "status": FactStatus.ACTIVE, "revision": 1})
            self._commit(None, created, audit_of(created, "created", at, memory_id=memory.id), support=memory.id)
            return created
        known = current.source_version(memory.id)
        if current.status == FactStatus.ACTIVE:
            if known == memory.version:
                return current  # a replay: already says exactly this
            sources = [s for s in current.sources if s.memory_id != memory.id] + [source]
            updated = current.model_copy(update={"sources": sources, "revision": current.revision + 1})
            audit = audit_of(updated, "source_added", at, memory_id=memory.id, reason=f"version {memory.version}")
            self._commit(current, updated, audit, support=memory.id)
            return updated
        if current.unsupported:  # no memory said it any more; this one says it again
            revived = current.model_copy(update={
                "sources": [source], "status": FactStatus.ACTIVE, "expired_at": None, "revision": current.revision + 1,
            })
            self._commit(current, revived, audit_of(revived, "reactivated", at, memory_id=memory.id), support=memory.id)
            return revived
        return current  # retracted or superseded: left as it is

    def _withdraw(self, memory: Memory, fact_uuid: str, at: datetime, read: Callable[[], Fact | None]) -> None:
        current = read()
        if current is None:
            self._call("delete_item", TableName=self._table,
                       Key=serialize({"pk": memory_pk(memory.tenant, memory.id), "sk": PROVENANCE_PREFIX + fact_uuid}))
            return
        if current.status != FactStatus.ACTIVE or current.source_version(memory.id) is None:
            return  # only active facts follow their memories
        sources = [s for s in current.sources if s.memory_id != memory.id]
        if sources:
            updated = current.model_copy(update={"sources": sources, "revision": current.revision + 1})
            audit = audit_of(updated, "source_removed", at, memory_id=memory.id)
        else:
            updated = current.model_copy(update={
                "sources": [], "status": FactStatus.INVALIDATED, "expired_at": at, "revision": current.revision + 1,
            })
            audit = audit_of(updated, "deactivated", at, memory_id=memory.id, reason="no memory says it any more")
        self._commit(current, updated, audit, unsupport=memory.id)

    # -- facts: timeline ---------------------------------------------------------------
    def retract(self, tenant: str, fact_uuid: str, *, actor: str, reason: str | None, at: datetime) -> Fact:
        def attempt() -> Fact:
            current = self._require(tenant, fact_uuid)
            if current.status == FactStatus.RETRACTED:
                return current
            retracted = current.model_copy(update={
                "status": FactStatus.RETRACTED, "retracted_reason": reason,
                "expired_at": current.expired_at or at, "revision": current.revision + 1,
            })
            self._commit(current, retracted, audit_of(retracted, "retracted", at, actor=actor, reason=reason or ""))
            return retracted

        return retry_on_conflict(attempt)

    def invalidate(
        self, tenant: str, fact_uuid: str, *, actor: str, at: datetime, invalid_at: datetime | None,
        invalidated_by: str | None = None,
    ) -> Fact:
        def attempt() -> Fact:
            current = self._require(tenant, fact_uuid)
            if current.status != FactStatus.ACTIVE:
                return current
            invalidated = current.model_copy(update={
                "status": FactStatus.INVALIDATED, "invalid_at": invalid_at, "expired_at": at,
                "invalidated_by": invalidated_by, "revision": current.revision + 1,
            })
            audit = audit_of(invalidated, "invalidated", at, actor=actor, invalidated_by=invalidated_by)
            self._commit(current, invalidated, audit)
            return invalidated

        return retry_on_conflict(attempt)

    def set_validity(
        self, tenant: str, fact_uuid: str, *, actor: str, at: datetime, active: bool, invalid_at: datetime | None = None,
        invalidated_by: str | None = None,
    ) -> Fact:
        def attempt() -> Fact:
            current = self._require(tenant, fact_uuid)
            if current.status == FactStatus.RETRACTED:
                return current
            if active:
                change: dict[str, Any] = {"status": FactStatus.ACTIVE, "invalid_at": None, "invalidated_by": None,
                                          "expired_at": None}
            else:
                change = {"status": FactStatus.INVALIDATED, "invalid_at": invalid_at, "invalidated_by": invalidated_by,
                          "expired_at": current.expired_at or at}
            updated = current.model_copy(update={**change, "revision": current.revision + 1})
            audit = audit_of(updated, "reactivated" if active else "invalidated", at, actor=actor, invalidated_by=invalidated_by)
            self._commit(current, updated, audit)
            return updated

        return retry_on_conflict(attempt)

    # -- reads ---------------------------------------------------------------------------
    def audit(self, tenant: str, fact_uuid: str) -> list[FactAudit]:
        items = all_items(self._call, "query", TableName=self._table,
                          KeyConditionExpression="pk = :pk AND begins_with(sk, :a)",
                          ExpressionAttributeValues=serialize({":pk": fact_pk(tenant, fact_uuid), ":a": AUDIT_PREFIX}))
        return [item_to_audit(item) for item in items]

    def for_memory(self, tenant: str, memory_id: str) -> list[Fact]:
        return self.get_many(tenant, self._provenance(tenant, memory_id))

    def every_fact(self) -> Iterator[Fact]:
        items = all_items(self._call, "scan", TableName=self._table, FilterExpression="sk = :f",
                          ExpressionAttributeValues=serialize({":f": FACT_SK}))
        return (item_to_fact(item) for item in items)


def _read_once(prefetched: Fact | None, read: Callable[[], Fact | None]) -> Callable[[], Fact | None]:
    """The batch read's answer for a first attempt; a retry after a lost race reads again."""
    answers: list[Fact | None] = [prefetched]
    return lambda: answers.pop() if answers else read()
