"""Entity nodes and their name table on the fact graph's table: `EntityGraph` (resolve a mention to
its node, claiming its names; a node's facts). Layout: docs/table-design.md ("Fact graph")."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mnemo.adapters.dynamodb.codec import deserialize, serialize
from mnemo.adapters.dynamodb.fact_items import NAME_SK, NODE_SK, entity_pk, item_to_entity, name_pk
from mnemo.adapters.dynamodb.fact_table import FactTable
from mnemo.domain.graph import (
    Entity,
    EntityMention,
    Fact,
    FactStatus,
    canonical_key,
    entity_id,
    graph_key,
    graph_namespace,
)
from mnemo.domain.namespace import Namespace
from mnemo.errors import ConflictError


class DynamoDbEntityGraph(FactTable):
    def resolve(self, namespace: Namespace, mentions: Sequence[EntityMention], at: datetime) -> dict[str, Entity]:
        """Every mention's names in one read of the name table and its nodes in one more; a write only
        for a name claimed or a node created (a worker's batch names the same few entities again and
        again: those cost the two reads, shared)."""
        ns = graph_namespace(namespace)
        spellings = [_spellings(m) for m in mentions]
        mapped = self._names(ns, [k for s in spellings for k in s])
        node_ids = [self._claim_names(ns, m, list(s), s, mapped) for m, s in zip(mentions, spellings, strict=True)]
        existing = {e.id: e for e in self.entities(ns, [node_id for node_id, _ in node_ids])}
        resolved: dict[str, Entity] = {}
        for mention, keys, (node_id, claimed) in zip(mentions, spellings, node_ids, strict=True):
            if node_id not in existing or claimed:
                existing[node_id] = self._upsert_node(ns, node_id, mention, next(iter(keys)), claimed, at,
                                                      exists=node_id in existing)
            resolved[mention.name] = existing[node_id]
        return resolved

    def for_entity(
        self, namespace: Namespace, entity_id: str, *, statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,),
        limit: int = 100,
    ) -> list[Fact]:
        edges = self.adjacency(namespace, entity_id, statuses=statuses, limit=limit)
        facts = self.get_many(namespace.tenant, [e.fact_uuid for e in edges])
        mine = [f for f in facts if graph_key(f.namespace) == graph_key(namespace)]  # defence in depth
        return sorted(mine, key=lambda f: (f.created_at, f.uuid), reverse=True)

    def _claim_names(self, ns: Namespace, mention: EntityMention, keys: list[str], spelling: dict[str, str],
                     mapped: dict[str, str]) -> tuple[str, list[str]]:
        """The mention's node (the name table's, else the one its canonical form derives) and the
        spellings claimed for it now, each with `attribute_not_exists` so a concurrent resolver agrees;
        `mapped` (the name table as read) learns the claims, so later mentions of the call see them."""
        node_id = next((mapped[k] for k in keys if k in mapped), None) or entity_id(ns, mention.name)
        claimed: list[str] = []
        for key in (k for k in keys if k not in mapped):
            if self._claim_name(ns, key, node_id):
                claimed.append(spelling[key])
                mapped[key] = node_id
            elif key == keys[0]:
                node_id = mapped[key] = self._names(ns, [key])[key]  # lost the race for the main name: use the winner
        return node_id, claimed

    def _claim_name(self, ns: Namespace, key: str, node_id: str) -> bool:
        item = {"pk": name_pk(ns, key), "sk": NAME_SK, "key": key, "entity_id": node_id}
        return self._put_if(item, "attribute_not_exists(pk) OR entity_id = :id", {":id": node_id})

    def _upsert_node(self, ns: Namespace, node_id: str, mention: EntityMention, key: str, claimed: list[str],
                     at: datetime, *, exists: bool) -> Entity:
        """Idempotent: the first name and type win; the names this resolution claimed for the node
        are added to its aliases (the one that folds to the node's own key is hidden on read). A new
        node is one conditional put, an existing one a one-clause `ADD aliases`: the write units of
        the upsert that set every attribute with if_not_exists, without its cost on the local stack,
        where moto validates an update clause by clause (that upsert was 16% of the server's GIL time
        importing a LoCoMo conversation; bench/README.md)."""
        for _ in range(3):  # since the read, a concurrent resolver created the node or an erasure removed it
            entity = self._add_aliases(ns, node_id, claimed) if exists else self._create_node(ns, node_id, mention, key,
                                                                                              claimed, at)
            if entity is not None:
                return entity
            exists = not exists
        raise ConflictError(f"entity {node_id} kept changing while it was resolved; retry")

    def _create_node(self, ns: Namespace, node_id: str, mention: EntityMention, key: str, claimed: list[str],
                     at: datetime) -> Entity | None:
        """The new node, or None if it exists already."""
        item: dict[str, Any] = {
            "pk": entity_pk(ns, node_id), "sk": NODE_SK, "entity_id": node_id, "name": mention.name, "key": key,
            "type": mention.type, "tenant": ns.tenant, "user_id": ns.user_id, "group_id": ns.group_id,
            "created_at": at.isoformat(),
        }
        if claimed:
            item["aliases"] = set(claimed)
        return item_to_entity(item) if self._put_if(item, "attribute_not_exists(pk)") else None

    def _add_aliases(self, ns: Namespace, node_id: str, claimed: list[str]) -> Entity | None:
        """The existing node with `claimed` among its aliases, or None if it does not exist."""
        key = serialize({"pk": entity_pk(ns, node_id), "sk": NODE_SK})
        if not claimed:
            item = self._call("get_item", TableName=self._table, Key=key, ConsistentRead=True).get("Item")
            return item_to_entity(deserialize(item)) if item else None
        response = self._conditional("update_item", Key=key, UpdateExpression="ADD aliases :a",
                                     ConditionExpression="attribute_exists(pk)",
                                     ExpressionAttributeValues=serialize({":a": set(claimed)}), ReturnValues="ALL_NEW")
        return item_to_entity(deserialize(response["Attributes"])) if response is not None else None

    def _put_if(self, item: dict[str, Any], condition: str, values: dict[str, Any] | None = None) -> bool:
        """A conditional PutItem: False when the condition does not hold."""
        extra = {"ExpressionAttributeValues": serialize(values)} if values else {}
        return self._conditional("put_item", Item=serialize(item), ConditionExpression=condition, **extra) is not None


def _spellings(mention: EntityMention) -> dict[str, str]:
    """Canonical key -> the first spelling of it among the mention's name and aliases (name first)."""
    spelling: dict[str, str] = {}
    for name in [mention.name, *mention.aliases]:
        if canonical_key(name):
            spelling.setdefault(canonical_key(name), name)
    return spelling
