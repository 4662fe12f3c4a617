"""Permanent erasure on the memories table: what `DynamoDbMemoryStore.erase` and
`DynamoDbFactStore.erase_memory` delete. Soft states (archive, retract) keep items on purpose;
erasure (GDPR) is the one path that removes them, so it lives apart from the everyday writes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mnemo.adapters.dynamodb_codec import all_items, serialize
from mnemo.adapters.dynamodb_fact_items import (
    AUDIT_PREFIX,
    FACT_SK,
    NAME_SK,
    NODE_SK,
    edge_items,
    entity_pk,
    fact_pk,
    name_pk,
)
from mnemo.domain.graph import Entity, Fact, FactOrigin, FactStatus, canonical_key
from mnemo.domain.models import Memory
from mnemo.domain.namespace import Namespace

if TYPE_CHECKING:
    from mnemo.adapters.dynamodb_facts import DynamoDbFactStore

Call = Callable[..., dict[str, Any]]
_BATCH_WRITE_LIMIT = 25


def delete_items(call: Call, table: str, keys: Iterable[tuple[str, str]]) -> int:
    """BatchWriteItem deletes, 25 a call, unprocessed ones retried; returns how many keys were deleted."""
    unique = list(dict.fromkeys(keys))
    requests = [{"DeleteRequest": {"Key": serialize({"pk": pk, "sk": sk})}} for pk, sk in unique]
    for start in range(0, len(requests), _BATCH_WRITE_LIMIT):
        pending: dict[str, Any] = {table: requests[start : start + _BATCH_WRITE_LIMIT]}
        while pending:
            pending = call("batch_write_item", RequestItems=pending).get("UnprocessedItems") or {}
    return len(unique)


def collection_keys(call: Call, table: str, pk: str) -> list[tuple[str, str]]:
    """Every item under one partition key (a memory's item collection, a fact and its audit rows)."""
    items = all_items(call, "query", TableName=table, KeyConditionExpression="pk = :pk",
                      ExpressionAttributeValues=serialize({":pk": pk}), ProjectionExpression="pk, sk")
    return [(item["pk"], item["sk"]) for item in items]


def erase_facts(store: DynamoDbFactStore, call: Call, table: str, memory: Memory, at: datetime) -> int:
    """Withdraw the memory's support the way archive does (shared facts just lose this source), then
    delete every derived fact left with no source (its item, audit rows and adjacency items) and the
    entity nodes and names those facts leave without any edge. Returns the number of facts deleted."""
    supported = store.for_memory(memory.tenant, memory.id)
    store.replace_derived(memory, [], at)
    erased: list[Fact] = []
    for fact in store.get_many(memory.tenant, [f.uuid for f in supported]):
        others = [s for s in fact.sources if s.memory_id != memory.id]
        if fact.origin == FactOrigin.DERIVED and not others:
            keys = [(fact_pk(memory.tenant, fact.uuid), FACT_SK)]
            keys += [k for k in collection_keys(call, table, fact_pk(memory.tenant, fact.uuid)) if k[1].startswith(AUDIT_PREFIX)]
            keys += [(item["pk"], item["sk"]) for item in edge_items(fact)]
            delete_items(call, table, keys)
            erased.append(fact)
    ends = {(f.namespace, end.id) for f in erased for end in (f.subject, f.object)}
    # the nodes the memory's entity names resolve to, also those no fact ever joined
    mentioned = (store.find_entity(memory.namespace, name) for name in memory.entities)
    ends |= {(memory.namespace, node.id) for node in mentioned if node is not None}
    erase_orphan_entities(store, call, table, ends)
    return len(erased)


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
