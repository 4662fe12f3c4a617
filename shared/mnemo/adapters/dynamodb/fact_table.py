"""The fact graph's table: what every part of the fact store shares (issue 31 step 2). Reads of
facts, entity nodes, names and adjacency, the one transaction that changes a fact, and the removal
of entity nodes left without an edge. Each aggregate's adapter (entities, recorded facts, erasure,
and the derived facts with their timeline in `dynamodb_facts`) extends this class, so none reaches
into another's module. Layout: docs/table-design.md ("Fact graph")."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.adapters.dynamodb.codec import all_items, deserialize, error_code, memory_pk, serialize
from mnemo.adapters.dynamodb.fact_items import (
    AUDIT_PREFIX,
    DERIVED_PREFIX,
    EDGE_PREFIX,
    FACT_SK,
    NAME_SK,
    NODE_SK,
    PROVENANCE_PREFIX,
    audit_to_item,
    edge_items,
    edge_prefix,
    entity_pk,
    fact_pk,
    fact_to_item,
    item_to_adjacency,
    item_to_entity,
    item_to_fact,
    name_pk,
    recorded_item,
)
from mnemo.adapters.dynamodb.table import DynamoDbTable, delete_items
from mnemo.domain.graph import (
    Adjacency,
    Entity,
    Fact,
    FactAudit,
    FactOrigin,
    FactStatus,
    canonical_key,
    canonical_predicate,
    graph_key,
    graph_namespace,
)
from mnemo.domain.namespace import Namespace
from mnemo.errors import ConflictError, NotFoundError

ENRICHMENT_ACTOR = "enrichment"


class FactTable(DynamoDbTable):
    what = "fact store"

    # -- reads ---------------------------------------------------------------------------
    def get(self, tenant: str, fact_uuid: str) -> Fact | None:
        response = self._call("get_item", TableName=self._table, ConsistentRead=True,
                              Key=serialize({"pk": fact_pk(tenant, fact_uuid), "sk": FACT_SK}))
        item = response.get("Item")
        return item_to_fact(deserialize(item)) if item else None

    def get_many(self, tenant: str, fact_uuids: Sequence[str]) -> list[Fact]:
        facts = {f.uuid: f for f in map(item_to_fact, self._read_items([(fact_pk(tenant, u), FACT_SK) for u in fact_uuids]))
                 if f.namespace.tenant == tenant}
        return [facts[u] for u in dict.fromkeys(fact_uuids) if u in facts]

    def find_entity(self, namespace: Namespace, name: str) -> Entity | None:
        ns = graph_namespace(namespace)
        found = self._names(ns, [canonical_key(name)]).get(canonical_key(name))
        nodes = self.entities(ns, [found]) if found else []
        return nodes[0] if nodes else None

    def entities(self, namespace: Namespace, entity_ids: Sequence[str]) -> list[Entity]:
        ns = graph_namespace(namespace)
        items = self._read_items([(entity_pk(ns, i), NODE_SK) for i in entity_ids])
        found = {e.id: e for e in map(item_to_entity, items) if graph_key(e.namespace) == graph_key(ns)}
        return [found[i] for i in dict.fromkeys(entity_ids) if i in found]

    def adjacency(
        self, namespace: Namespace, entity_id: str, *, statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,),
        direction: Literal["out", "in"] | None = None, predicate: str | None = None, limit: int = 100,
    ) -> list[Adjacency]:
        ns = graph_namespace(namespace)
        pred = canonical_predicate(predicate) if predicate else None
        found: list[Adjacency] = []
        for status in statuses:
            for way in [direction] if direction else ["out", "in"]:
                if len(found) >= limit:
                    return found
                found += self._edges(entity_pk(ns, entity_id), edge_prefix(FactStatus(status), way, pred), limit - len(found))
        return found

    def _edges(self, pk: str, prefix: str, limit: int) -> list[Adjacency]:
        found: list[Adjacency] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table, "KeyConditionExpression": "pk = :pk AND begins_with(sk, :e)",
            "ExpressionAttributeValues": serialize({":pk": pk, ":e": prefix}),
        }
        while len(found) < limit:
            response = self._call("query", Limit=limit - len(found), **kwargs)
            found += [item_to_adjacency(deserialize(i)) for i in response.get("Items", [])]
            if "LastEvaluatedKey" not in response:
                break
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        return found

    def _require(self, tenant: str, fact_uuid: str) -> Fact:
        fact = self.get(tenant, fact_uuid)
        if fact is None:
            raise NotFoundError(f"fact {fact_uuid} not found", subject="fact", ident=fact_uuid)
        return fact

    def _names(self, ns: Namespace, keys: Sequence[str]) -> dict[str, str]:
        items = self._read_items([(name_pk(ns, k), NAME_SK) for k in keys])
        return {item["key"]: item["entity_id"] for item in items}

    def _provenance(self, tenant: str, memory_id: str) -> list[str]:
        items = all_items(self._call, "query", TableName=self._table,
                          KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                          ExpressionAttributeValues=serialize({":pk": memory_pk(tenant, memory_id), ":p": PROVENANCE_PREFIX}))
        return [item["fact_uuid"] for item in items]

    def _audit_items(self, tenant: str, fact_uuid: str) -> list[dict[str, Any]]:
        return list(all_items(self._call, "query", TableName=self._table, ConsistentRead=True,
                              KeyConditionExpression="pk = :pk AND begins_with(sk, :a)",
                              ExpressionAttributeValues=serialize({":pk": fact_pk(tenant, fact_uuid), ":a": AUDIT_PREFIX})))

    def _read_items(self, keys: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """The items at `keys` (strongly consistent, each key once), deserialized."""
        chunk = [serialize({"pk": pk, "sk": sk}) for pk, sk in dict.fromkeys(keys)]
        return [deserialize(i) for i in self._batch_get(chunk)]

    # -- writes --------------------------------------------------------------------------
    def _commit(self, before: Fact | None, after: Fact, audit: FactAudit, *, support: str | None = None,
                unsupport: str | None = None) -> None:
        """One transaction: the fact (conditioned on the revision read), its adjacency items (moved
        when the status changed), the audit row, and the memory's provenance record."""
        tenant = after.namespace.tenant
        condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
        if before is not None:
            condition = {"ConditionExpression": "revision = :r", "ExpressionAttributeValues": serialize({":r": before.revision})}
        writes: list[dict[str, Any]] = [{"Put": {"TableName": self._table, "Item": serialize(fact_to_item(after)), **condition}}]
        if before is None or before.status != after.status:
            old = edge_items(before) if before is not None else []
            writes += [{"Delete": {"TableName": self._table, "Key": serialize({"pk": i["pk"], "sk": i["sk"]})}} for i in old]
            writes += [{"Put": {"TableName": self._table, "Item": serialize(i)}} for i in edge_items(after)]
        writes.append({"Put": {"TableName": self._table, "Item": serialize(audit_to_item(tenant, audit)),
                               "ConditionExpression": "attribute_not_exists(pk)"}})
        if after.origin == FactOrigin.RECORDED:  # every change re-lists it: a fact recorded before the listing heals
            writes.append({"Put": {"TableName": self._table, "Item": serialize(recorded_item(after))}})
        if support:  # what it supports now, and (never withdrawn) that it produced the fact: erasure reads both
            for prefix in (PROVENANCE_PREFIX, DERIVED_PREFIX):
                record = {"pk": memory_pk(tenant, support), "sk": prefix + after.uuid, "fact_uuid": after.uuid}
                writes.append({"Put": {"TableName": self._table, "Item": serialize(record)}})
        if unsupport:
            key = {"pk": memory_pk(tenant, unsupport), "sk": PROVENANCE_PREFIX + after.uuid}
            writes.append({"Delete": {"TableName": self._table, "Key": serialize(key)}})
        try:
            self._db.transact_write_items(TransactItems=writes)
        except ClientError as exc:
            if error_code(exc) in ("ConditionalCheckFailedException", "TransactionCanceledException"):
                raise ConflictError(f"fact {after.uuid} changed concurrently; retry") from exc
            raise self._dependency(exc) from exc
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc

    def _erase_orphan_entities(self, ends: set[tuple[Namespace, str]]) -> None:
        """Nodes (and their names) left without any edge: nothing but what was erased named them. One
        query per end (any edge, of any status and direction, under `E#`), then one read of the orphans'
        nodes and one of their names per namespace, and one batch of deletes."""
        orphans: dict[Namespace, list[str]] = {}
        for namespace, entity_id in ends:
            ns = graph_namespace(namespace)
            if not self._edges(entity_pk(ns, entity_id), EDGE_PREFIX, 1):  # any status, either direction
                orphans.setdefault(ns, []).append(entity_id)
        keys: list[tuple[str, str]] = []
        for ns, entity_ids in orphans.items():
            nodes = self.entities(ns, entity_ids)
            keys += [(entity_pk(ns, node.id), NODE_SK) for node in nodes]
            keys += self._name_keys(ns, nodes)
        delete_items(self._call, self._table, keys)

    def _name_keys(self, ns: Namespace, nodes: Sequence[Entity]) -> list[tuple[str, str]]:
        """The nodes' names and aliases, only where the name table maps them to that node (a name another
        node claimed first stays theirs)."""
        wanted = {k for node in nodes for k in (node.key, *(canonical_key(alias) for alias in node.aliases)) if k}
        owned = self._names(ns, sorted(wanted))
        ids = {node.id for node in nodes}
        return [(name_pk(ns, key), NAME_SK) for key, owner in owned.items() if owner in ids]


def audit_of(fact: Fact, action: str, at: datetime, *, actor: str = ENRICHMENT_ACTOR, memory_id: str | None = None,
             reason: str = "", invalidated_by: str | None = None) -> FactAudit:
    return FactAudit(fact_uuid=fact.uuid, revision=fact.revision, action=action, actor=actor, at=at, reason=reason,
                     memory_id=memory_id, invalidated_by=invalidated_by)
