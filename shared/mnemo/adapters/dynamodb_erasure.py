"""Permanent erasure on the memories table: what `DynamoDbMemoryStore.erase` and
`DynamoDbFactStore.erase_memory` delete. Soft states (archive, retract) keep items on purpose;
erasure (GDPR) is the one path that removes them, so it lives apart from the everyday writes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from mnemo.adapters.dynamodb_codec import MEMORY_SK, all_items, error_code, memory_pk, serialize
from mnemo.adapters.dynamodb_fact_items import (
    AUDIT_PREFIX,
    DERIVED_PREFIX,
    FACT_SK,
    NAME_SK,
    NAMED_PREFIX,
    NODE_SK,
    PROVENANCE_PREFIX,
    edge_items,
    entity_pk,
    fact_pk,
    name_pk,
)
from mnemo.adapters.dynamodb_table import Call, batch_write
from mnemo.domain.graph import AuditAction, Entity, Fact, FactAudit, FactOrigin, FactStatus, canonical_key
from mnemo.domain.models import Memory
from mnemo.domain.namespace import Namespace
from mnemo.errors import ConflictError, DependencyError, retry_on_conflict
from mnemo.ports import ErasedFacts

if TYPE_CHECKING:
    from mnemo.adapters.dynamodb_facts import DynamoDbFactStore

_GROUP_LIMIT = 1000  # values of one subject's predicate whose references an erasure clears
ERASURE_ACTOR = "erasure"


def delete_items(call: Call, table: str, keys: Iterable[tuple[str, str]]) -> int:
    """BatchWriteItem deletes (`dynamodb_table.batch_write`); returns how many keys were deleted."""
    unique = list(dict.fromkeys(keys))
    requests = [{"DeleteRequest": {"Key": serialize({"pk": pk, "sk": sk})}} for pk, sk in unique]
    batch_write(call, table, requests)
    return len(unique)


def collection_keys(call: Call, table: str, pk: str) -> list[tuple[str, str]]:
    """Every item under one partition key (a memory's item collection, a fact and its audit rows)."""
    items = all_items(call, "query", TableName=table, KeyConditionExpression="pk = :pk",
                      ExpressionAttributeValues=serialize({":pk": pk}), ProjectionExpression="pk, sk")
    return [(item["pk"], item["sk"]) for item in items]


def erase_facts(store: DynamoDbFactStore, call: Call, table: str, memory: Memory, at: datetime,
                also: Sequence[str] = ()) -> ErasedFacts:
    """Every fact the memory ever produced (its `P#` and `D#` records: any version, any status): one
    that no other existing memory produced (sources and audit rows) is deleted with its audit rows
    and adjacency items; one another memory produced too loses this source and the memory's id leaves
    its audit rows. Then the entity nodes and names left without any edge, among those deletes' ends
    and the nodes of every entity name the memory ever said (now, and older versions' `G#` records)."""
    tenant, pk = memory.tenant, memory_pk(memory.tenant, memory.id)
    collection = collection_keys(call, table, pk)
    records = [k for k in collection if k[1].startswith((PROVENANCE_PREFIX, DERIVED_PREFIX))]
    named = [k for k in collection if k[1].startswith(NAMED_PREFIX)]
    erased: list[Fact] = []
    kept: list[Fact] = []
    uuids = [*(sk[len(DERIVED_PREFIX):] for _, sk in records), *also]
    for uuid in dict.fromkeys(uuids):
        deleted = retry_on_conflict(partial(_delete_if_sole, store, call, table, tenant, uuid, memory.id))
        if deleted is not None:
            erased.append(deleted)
            continue
        after = retry_on_conflict(partial(_drop_source, store, tenant, uuid, memory.id, at))
        _scrub(call, table, _audit_items(call, table, tenant, uuid), "memory_id", {memory.id})
        kept += [after] if after is not None else []
    delete_items(call, table, [*records, *named])  # a repeated erasure finds nothing left to redo
    ends = {(f.namespace, end.id) for f in erased for end in (f.subject, f.object)}
    # the nodes the memory's entity names resolve to (an older version's too), also those no fact joined
    names = [*memory.entities, *(sk[len(NAMED_PREFIX):] for _, sk in named)]
    mentioned = (store.find_entity(memory.namespace, name) for name in dict.fromkeys(names))
    ends |= {(memory.namespace, node.id) for node in mentioned if node is not None}
    erase_orphan_entities(store, call, table, ends)
    return ErasedFacts(erased=erased, kept=kept)


def forget_facts(store: DynamoDbFactStore, call: Call, table: str, tenant: str, facts: Sequence[Fact]) -> None:
    """No fact of the deleted facts' (subject, predicate) groups names them any more: a fact one of
    them had retired keeps no `invalidated_by` to it (the timeline, recomputed first, has already
    re-pointed or reactivated those on it; a retracted one keeps it otherwise), nor any audit row."""
    gone = {f.uuid for f in facts}
    for namespace, subject, predicate in {(f.namespace, f.subject.id, f.predicate) for f in facts}:
        edges = store.adjacency(namespace, subject, statuses=tuple(FactStatus), direction="out", predicate=predicate,
                                limit=_GROUP_LIMIT)
        for member in store.get_many(tenant, [e.fact_uuid for e in edges]):
            if member.invalidated_by in gone:
                retry_on_conflict(partial(_clear_invalidated_by, call, table, store, tenant, member.uuid, gone))
            _scrub(call, table, _audit_items(call, table, tenant, member.uuid), "invalidated_by", gone)


def backfill_producers(store: DynamoDbFactStore, call: Call, table: str, facts: Sequence[Fact]) -> int:
    """The `D#` record of every memory that produced each derived fact among `facts` (its sources and
    the memories its audit rows name), for facts derived before those records existed. Each put is a
    transaction with a check that the memory still exists: an erased memory's key is never written
    again. Idempotent; returns how many records were put."""
    written = 0
    for fact in (f for f in facts if f.origin == FactOrigin.DERIVED):
        tenant = fact.namespace.tenant
        audits = _audit_items(call, table, tenant, fact.uuid)
        producers = {s.memory_id for s in fact.sources} | {a["memory_id"] for a in audits if a.get("memory_id")}
        for memory_id in sorted(producers):
            pk = memory_pk(tenant, memory_id)
            record = {"pk": pk, "sk": DERIVED_PREFIX + fact.uuid, "fact_uuid": fact.uuid}
            try:
                call("transact_write_items", TransactItems=[
                    {"ConditionCheck": {"TableName": table, "Key": serialize({"pk": pk, "sk": MEMORY_SK}),
                                        "ConditionExpression": "attribute_exists(pk)"}},
                    {"Put": {"TableName": table, "Item": serialize(record)}},
                ])
                written += 1
            except DependencyError as exc:
                cause = exc.__cause__
                if not (isinstance(cause, ClientError) and error_code(cause) == "TransactionCanceledException"):
                    raise  # cancelled: the memory is gone (erased), so nothing to record
    return written


def _delete_if_sole(store: DynamoDbFactStore, call: Call, table: str, tenant: str, fact_uuid: str,
                    memory_id: str) -> Fact | None:
    """The derived fact, deleted with its audit rows and adjacency, if no other existing memory
    produced it; else None (also when it is gone). The fact item's delete is conditional on the
    revision read: a memory that says it meanwhile (a concurrent enrichment) makes this re-read."""
    fact = store.get(tenant, fact_uuid)
    if fact is None or fact.origin != FactOrigin.DERIVED:
        return None
    audits = _audit_items(call, table, tenant, fact_uuid)
    if _other_producers(store, fact, audits, memory_id):
        return None
    try:
        call("delete_item", TableName=table, Key=serialize({"pk": fact_pk(tenant, fact_uuid), "sk": FACT_SK}),
             ConditionExpression="revision = :r", ExpressionAttributeValues=serialize({":r": fact.revision}))
    except DependencyError as exc:
        cause = exc.__cause__
        if isinstance(cause, ClientError) and error_code(cause) == "ConditionalCheckFailedException":
            raise ConflictError(f"fact {fact_uuid} changed concurrently; retry") from exc
        raise
    # every status's adjacency: a status change before the read may have moved them
    keys = [(a["pk"], a["sk"]) for a in _audit_items(call, table, tenant, fact_uuid)]
    keys += [(i["pk"], i["sk"]) for s in FactStatus for i in edge_items(fact.model_copy(update={"status": s}))]
    delete_items(call, table, keys)
    return fact


def _audit_items(call: Call, table: str, tenant: str, fact_uuid: str) -> list[dict[str, Any]]:
    return list(all_items(call, "query", TableName=table, ConsistentRead=True,
                          KeyConditionExpression="pk = :pk AND begins_with(sk, :a)",
                          ExpressionAttributeValues=serialize({":pk": fact_pk(tenant, fact_uuid), ":a": AUDIT_PREFIX})))


def _other_producers(store: DynamoDbFactStore, fact: Fact, audits: list[dict[str, Any]], memory_id: str) -> bool:
    """Whether a memory other than `memory_id` that still exists said the fact (a source now, or named
    by an audit row: an archived or edited memory that said it once)."""
    others = {s.memory_id for s in fact.sources} | {a["memory_id"] for a in audits if a.get("memory_id")}
    others.discard(memory_id)
    keys = [(memory_pk(fact.namespace.tenant, other), MEMORY_SK) for other in sorted(others)]
    return bool(keys) and bool(store._read_items(keys))  # noqa: SLF001 - the same adapter, split by concern


def _drop_source(store: DynamoDbFactStore, tenant: str, fact_uuid: str, memory_id: str, at: datetime) -> Fact | None:
    """The fact without the erased memory among its sources (deactivated, as an archive would, if it
    was active and none is left); its new audit row names no memory. Conditional on the revision read."""
    current = store.get(tenant, fact_uuid)
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
    store._commit(current, updated, audit, unsupport=memory_id)  # noqa: SLF001 - the same adapter, split by concern
    return updated


def _clear_invalidated_by(call: Call, table: str, store: DynamoDbFactStore, tenant: str, fact_uuid: str,
                          gone: set[str]) -> None:
    """Drop a reference to a deleted fact, conditional on the revision read (bumped, so a writer that
    read before cannot put the reference back)."""
    current = store.get(tenant, fact_uuid)
    if current is None or current.invalidated_by not in gone:
        return
    if not _update_if(call, table, fact_pk(tenant, fact_uuid), FACT_SK, "SET revision = :n REMOVE invalidated_by",
                      "revision = :r", {":r": current.revision, ":n": current.revision + 1}):
        raise ConflictError(f"fact {fact_uuid} changed concurrently; retry")


def _scrub(call: Call, table: str, audits: list[dict[str, Any]], field: str, values: set[str]) -> None:
    """Remove `field` from the audit rows where it names one of `values` (who changed the fact, when,
    and how stay; an audit row is never rewritten otherwise). A row gone meanwhile needs nothing."""
    for audit in (a for a in audits if a.get(field) in values):
        _update_if(call, table, audit["pk"], audit["sk"], f"REMOVE {field}", "attribute_exists(pk)")


def _update_if(call: Call, table: str, pk: str, sk: str, expression: str, condition: str,
               values: dict[str, Any] | None = None) -> bool:
    """A conditional UpdateItem: False when the condition does not hold."""
    extra = {"ExpressionAttributeValues": serialize(values)} if values else {}
    try:
        call("update_item", TableName=table, Key=serialize({"pk": pk, "sk": sk}), UpdateExpression=expression,
             ConditionExpression=condition, **extra)
    except DependencyError as exc:
        cause = exc.__cause__
        if isinstance(cause, ClientError) and error_code(cause) == "ConditionalCheckFailedException":
            return False
        raise
    return True


def erase_orphan_entities(store: DynamoDbFactStore, call: Call, table: str, ends: set[tuple[Namespace, str]]) -> None:
    """Nodes (and their names) left without any edge: nothing but the erased memory named them."""
    for namespace, entity_id in ends:
        if store.adjacency(namespace, entity_id, statuses=tuple(FactStatus), limit=1):
            continue  # another fact still uses the node
        for node in store.entities(namespace, [entity_id]):
            delete_items(call, table, [(entity_pk(namespace, entity_id), NODE_SK), *_name_keys(store, node)])


def _name_keys(store: DynamoDbFactStore, node: Entity) -> list[tuple[str, str]]:
    """The node's name and aliases, only where the name table maps them to this node (a name another
    node claimed first stays theirs)."""
    keys = [k for k in {node.key, *(canonical_key(alias) for alias in node.aliases)} if k]
    owned = store._names(node.namespace, keys)  # noqa: SLF001 - the same adapter, split by concern
    return [(name_pk(node.namespace, key), NAME_SK) for key, owner in owned.items() if owner == node.id]
