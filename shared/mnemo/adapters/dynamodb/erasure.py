"""Permanent erasure of facts on the fact graph's table (the `FactErasure` port's `erase_memory` and
`forget`; the `D#` records they read, backfilled by `record_producers`). Soft states (archive,
retract) keep items on purpose; erasure (GDPR) is the one path that removes them, so it lives apart
from the everyday writes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from botocore.exceptions import ClientError

from mnemo.adapters.dynamodb.codec import MEMORY_SK, error_code, memory_pk, serialize
from mnemo.adapters.dynamodb.fact_items import (
    DERIVED_PREFIX,
    FACT_SK,
    NAMED_PREFIX,
    PROVENANCE_PREFIX,
    edge_items,
    fact_pk,
)
from mnemo.adapters.dynamodb.fact_table import FactTable
from mnemo.adapters.dynamodb.table import collection_keys, delete_items
from mnemo.domain.graph import AuditAction, Fact, FactAudit, FactOrigin, FactStatus
from mnemo.domain.models import Memory
from mnemo.errors import ConflictError, DependencyError, retry_on_conflict
from mnemo.ports import ErasedFacts

_GROUP_LIMIT = 1000  # values of one subject's predicate whose references an erasure clears
ERASURE_ACTOR = "erasure"

ReadItems = Callable[[Sequence[tuple[str, str]]], list[dict[str, Any]]]


class DynamoDbFactErasure(FactTable):
    def erase_memory(self, memory: Memory, at: datetime, also: Sequence[str] = ()) -> ErasedFacts:
        """Every fact the memory ever produced (its `P#` and `D#` records: any version, any status): one
        that no other existing memory produced (sources and audit rows) is deleted with its audit rows
        and adjacency items; one another memory produced too loses this source and the memory's id leaves
        its audit rows. Then the entity nodes and names left without any edge, among those deletes' ends
        and the nodes of every entity name the memory ever said (now, and older versions' `G#` records)."""
        tenant, pk = memory.tenant, memory_pk(memory.tenant, memory.id)
        collection = collection_keys(self._call, self._table, pk)
        records = [k for k in collection if k[1].startswith((PROVENANCE_PREFIX, DERIVED_PREFIX))]
        named = [k for k in collection if k[1].startswith(NAMED_PREFIX)]
        erased: list[Fact] = []
        kept: list[Fact] = []
        uuids = [*(sk[len(DERIVED_PREFIX):] for _, sk in records), *also]
        for uuid in dict.fromkeys(uuids):
            deleted = retry_on_conflict(partial(self._delete_if_sole, tenant, uuid, memory.id))
            if deleted is not None:
                erased.append(deleted)
                continue
            after = retry_on_conflict(partial(self._drop_source, tenant, uuid, memory.id, at))
            self._scrub(self._audit_items(tenant, uuid), "memory_id", {memory.id})
            kept += [after] if after is not None else []
        delete_items(self._call, self._table, [*records, *named])  # a repeated erasure finds nothing left to redo
        ends = {(f.namespace, end.id) for f in erased for end in (f.subject, f.object)}
        # the nodes the memory's entity names resolve to (an older version's too), also those no fact joined
        names = [*memory.entities, *(sk[len(NAMED_PREFIX):] for _, sk in named)]
        mentioned = (self.find_entity(memory.namespace, name) for name in dict.fromkeys(names))
        ends |= {(memory.namespace, node.id) for node in mentioned if node is not None}
        self._erase_orphan_entities(ends)
        return ErasedFacts(erased=erased, kept=kept)

    def forget(self, tenant: str, facts: Sequence[Fact]) -> None:
        """No fact of the deleted facts' (subject, predicate) groups names them any more: a fact one of
        them had retired keeps no `invalidated_by` to it (the timeline, recomputed first, has already
        re-pointed or reactivated those on it; a retracted one keeps it otherwise), nor any audit row."""
        gone = {f.uuid for f in facts}
        for namespace, subject, predicate in {(f.namespace, f.subject.id, f.predicate) for f in facts}:
            edges = self.adjacency(namespace, subject, statuses=tuple(FactStatus), direction="out", predicate=predicate,
                                   limit=_GROUP_LIMIT)
            for member in self.get_many(tenant, [e.fact_uuid for e in edges]):
                if member.invalidated_by in gone:
                    retry_on_conflict(partial(self._clear_invalidated_by, tenant, member.uuid, gone))
                self._scrub(self._audit_items(tenant, member.uuid), "invalidated_by", gone)

    def record_producers(self, facts: Sequence[Fact]) -> int:
        """The `D#` record of every memory that produced each derived fact among `facts` (its sources and
        the memories its audit rows name), for facts derived before those records existed. Each put is a
        transaction with a check that the memory still exists: an erased memory's key is never written
        again. Idempotent; returns how many records were put."""
        written = 0
        for fact in (f for f in facts if f.origin == FactOrigin.DERIVED):
            tenant = fact.namespace.tenant
            audits = self._audit_items(tenant, fact.uuid)
            producers = {s.memory_id for s in fact.sources} | {a["memory_id"] for a in audits if a.get("memory_id")}
            for memory_id in sorted(producers):
                pk = memory_pk(tenant, memory_id)
                record = {"pk": pk, "sk": DERIVED_PREFIX + fact.uuid, "fact_uuid": fact.uuid}
                try:
                    self._call("transact_write_items", TransactItems=[
                        {"ConditionCheck": {"TableName": self._table, "Key": serialize({"pk": pk, "sk": MEMORY_SK}),
                                            "ConditionExpression": "attribute_exists(pk)"}},
                        {"Put": {"TableName": self._table, "Item": serialize(record)}},
                    ])
                    written += 1
                except DependencyError as exc:
                    cause = exc.__cause__
                    if not (isinstance(cause, ClientError) and error_code(cause) == "TransactionCanceledException"):
                        raise  # cancelled: the memory is gone (erased), so nothing to record
        return written

    def _delete_if_sole(self, tenant: str, fact_uuid: str, memory_id: str) -> Fact | None:
        """The derived fact, deleted with its audit rows and adjacency, if no other existing memory
        produced it; else None (also when it is gone). The fact item's delete is conditional on the
        revision read: a memory that says it meanwhile (a concurrent enrichment) makes this re-read."""
        fact = self.get(tenant, fact_uuid)
        if fact is None or fact.origin != FactOrigin.DERIVED:
            return None
        audits = self._audit_items(tenant, fact_uuid)
        if _other_producers(self._read_items, fact, audits, memory_id):
            return None
        if self._conditional("delete_item", Key=serialize({"pk": fact_pk(tenant, fact_uuid), "sk": FACT_SK}),
                             ConditionExpression="revision = :r",
                             ExpressionAttributeValues=serialize({":r": fact.revision})) is None:
            raise ConflictError(f"fact {fact_uuid} changed concurrently; retry")
        # every status's adjacency: a status change before the read may have moved them
        keys = [(a["pk"], a["sk"]) for a in self._audit_items(tenant, fact_uuid)]
        keys += [(i["pk"], i["sk"]) for s in FactStatus for i in edge_items(fact.model_copy(update={"status": s}))]
        delete_items(self._call, self._table, keys)
        return fact

    def _drop_source(self, tenant: str, fact_uuid: str, memory_id: str, at: datetime) -> Fact | None:
        """The fact without the erased memory among its sources (deactivated, as an archive would, if it
        was active and none is left); its new audit row names no memory. Conditional on the revision read."""
        current = self.get(tenant, fact_uuid)
        if current is None or current.source_version(memory_id) is None:
            return current
        sources = [s for s in current.sources if s.memory_id != memory_id]
        change: dict[str, Any] = {"sources": sources, "revision": current.revision + 1}
        action: AuditAction = "source_removed"
        if not sources and current.status == FactStatus.ACTIVE:
            change |= {"status": FactStatus.INVALIDATED, "expired_at": at}
            action = "deactivated"
        updated = current.model_copy(update=change)
        audit = FactAudit(fact_uuid=fact_uuid, revision=updated.revision, action=action, actor=ERASURE_ACTOR, at=at,
                          reason="a source memory was erased")
        self._commit(current, updated, audit, unsupport=memory_id)
        return updated

    def _clear_invalidated_by(self, tenant: str, fact_uuid: str, gone: set[str]) -> None:
        """Drop a reference to a deleted fact, conditional on the revision read (bumped, so a writer that
        read before cannot put the reference back)."""
        current = self.get(tenant, fact_uuid)
        if current is None or current.invalidated_by not in gone:
            return
        if not self._update_if(fact_pk(tenant, fact_uuid), FACT_SK, "SET revision = :n REMOVE invalidated_by",
                               "revision = :r", {":r": current.revision, ":n": current.revision + 1}):
            raise ConflictError(f"fact {fact_uuid} changed concurrently; retry")

    def _scrub(self, audits: list[dict[str, Any]], field: str, values: set[str]) -> None:
        """Remove `field` from the audit rows where it names one of `values` (who changed the fact, when,
        and how stay; an audit row is never rewritten otherwise). A row gone meanwhile needs nothing."""
        for audit in (a for a in audits if a.get(field) in values):
            self._update_if(audit["pk"], audit["sk"], f"REMOVE {field}", "attribute_exists(pk)")

    def _update_if(self, pk: str, sk: str, expression: str, condition: str, values: dict[str, Any] | None = None) -> bool:
        """A conditional UpdateItem: False when the condition does not hold."""
        extra = {"ExpressionAttributeValues": serialize(values)} if values else {}
        return self._conditional("update_item", Key=serialize({"pk": pk, "sk": sk}), UpdateExpression=expression,
                                 ConditionExpression=condition, **extra) is not None


def _other_producers(read_items: ReadItems, fact: Fact, audits: list[dict[str, Any]], memory_id: str) -> bool:
    """Whether a memory other than `memory_id` that still exists said the fact (a source now, or named
    by an audit row: an archived or edited memory that said it once)."""
    others = {s.memory_id for s in fact.sources} | {a["memory_id"] for a in audits if a.get("memory_id")}
    others.discard(memory_id)
    keys = [(memory_pk(fact.namespace.tenant, other), MEMORY_SK) for other in sorted(others)]
    return bool(keys) and bool(read_items(keys))
