"""`FactStore` on the memories table: entity nodes and their alias table, facts with audit rows and
adjacency items, and each memory's provenance records. Layout and access patterns:
docs/table-design.md ("Fact graph").

Every change of a fact is one `TransactWriteItems`: the fact item conditioned on the revision read,
its adjacency items moved when the status changes, an audit row that must not exist yet, and the
memory's provenance record. A lost race re-reads and re-applies (three tries), then ConflictError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from functools import partial
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.adapters import dynamodb_recorded as recorded_facts
from mnemo.adapters.dynamodb_codec import all_items, deserialize, error_code, memory_pk, serialize
from mnemo.adapters.dynamodb_erasure import backfill_producers, erase_facts, forget_facts
from mnemo.adapters.dynamodb_fact_items import (
    AUDIT_PREFIX,
    DERIVED_PREFIX,
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
    item_to_audit,
    item_to_entity,
    item_to_fact,
    name_pk,
    recorded_item,
)
from mnemo.adapters.dynamodb_table import DynamoDbTable
from mnemo.domain.graph import (
    Adjacency,
    Entity,
    EntityMention,
    Fact,
    FactAudit,
    FactOrigin,
    FactSource,
    FactStatus,
    canonical_key,
    canonical_predicate,
    entity_id,
    graph_key,
    graph_namespace,
)
from mnemo.domain.models import Memory
from mnemo.domain.namespace import Namespace
from mnemo.errors import ConflictError, NotFoundError, retry_on_conflict
from mnemo.ports import DerivedFacts, ErasedFacts, RecordedPage

ENRICHMENT_ACTOR = "enrichment"


class DynamoDbFactStore(DynamoDbTable):
    what = "fact store"

    # -- entities ------------------------------------------------------------------------
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

    def _names(self, ns: Namespace, keys: Sequence[str]) -> dict[str, str]:
        items = self._read_items([(name_pk(ns, k), NAME_SK) for k in keys])
        return {item["key"]: item["entity_id"] for item in items}

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

    def _conditional(self, operation: str, **kwargs: Any) -> dict[str, Any] | None:
        """A conditional write on the table: its response, or None when the condition does not hold."""
        try:
            response: dict[str, Any] = getattr(self._db, operation)(TableName=self._table, **kwargs)
            return response
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return None
            raise self._dependency(exc) from exc
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc

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
            self._commit(None, created, _audit(created, "created", at, memory_id=memory.id), support=memory.id)
            return created
        known = current.source_version(memory.id)
        if current.status == FactStatus.ACTIVE:
            if known == memory.version:
                return current  # a replay: already says exactly this
            sources = [s for s in current.sources if s.memory_id != memory.id] + [source]
            updated = current.model_copy(update={"sources": sources, "revision": current.revision + 1})
            audit = _audit(updated, "source_added", at, memory_id=memory.id, reason=f"version {memory.version}")
            self._commit(current, updated, audit, support=memory.id)
            return updated
        if current.unsupported:  # no memory said it any more; this one says it again
            revived = current.model_copy(update={
                "sources": [source], "status": FactStatus.ACTIVE, "expired_at": None, "revision": current.revision + 1,
            })
            self._commit(current, revived, _audit(revived, "reactivated", at, memory_id=memory.id), support=memory.id)
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
            audit = _audit(updated, "source_removed", at, memory_id=memory.id)
        else:
            updated = current.model_copy(update={
                "sources": [], "status": FactStatus.INVALIDATED, "expired_at": at, "revision": current.revision + 1,
            })
            audit = _audit(updated, "deactivated", at, memory_id=memory.id, reason="no memory says it any more")
        self._commit(current, updated, audit, unsupport=memory.id)

    # -- facts: recorded, retracted, invalidated ------------------------------------------
    def record(self, fact: Fact, *, actor: str, at: datetime | None = None, reason: str = "") -> Fact:
        created = fact.model_copy(update={"revision": 1})
        self._commit(None, created, _audit(created, "created", at or created.created_at, actor=actor, reason=reason))
        return created

    def recorded(self, tenant: str, user_id: str, *, limit: int, after: str | None = None) -> RecordedPage:
        return recorded_facts.page(self, self._call, self._table, tenant, user_id, limit=limit, after=after)

    def erase_recorded(self, tenant: str, user_id: str, *, limit: int) -> list[str]:
        return recorded_facts.erase(self, self._call, self._table, tenant, user_id, limit=limit)

    def erase_recorded_facts(self, tenant: str, user_id: str, fact_uuids: Sequence[str]) -> list[str]:
        return recorded_facts.erase_these(self, self._call, self._table, tenant, user_id, fact_uuids)

    def list_recorded(self, facts: Sequence[Fact]) -> int:
        return recorded_facts.backfill(self._call, self._table, facts)

    def record_producers(self, facts: Sequence[Fact]) -> int:
        return backfill_producers(self, self._call, self._table, facts)

    def retract(self, tenant: str, fact_uuid: str, *, actor: str, reason: str | None, at: datetime) -> Fact:
        def attempt() -> Fact:
            current = self._require(tenant, fact_uuid)
            if current.status == FactStatus.RETRACTED:
                return current
            retracted = current.model_copy(update={
                "status": FactStatus.RETRACTED, "retracted_reason": reason,
                "expired_at": current.expired_at or at, "revision": current.revision + 1,
            })
            self._commit(current, retracted, _audit(retracted, "retracted", at, actor=actor, reason=reason or ""))
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
            audit = _audit(invalidated, "invalidated", at, actor=actor, invalidated_by=invalidated_by)
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
            audit = _audit(updated, "reactivated" if active else "invalidated", at, actor=actor, invalidated_by=invalidated_by)
            self._commit(current, updated, audit)
            return updated

        return retry_on_conflict(attempt)

    # -- reads ---------------------------------------------------------------------------
    def erase_memory(self, memory: Memory, at: datetime, also: Sequence[str] = ()) -> ErasedFacts:
        return erase_facts(self, self._call, self._table, memory, at, also)

    def forget(self, tenant: str, facts: Sequence[Fact]) -> None:
        forget_facts(self, self._call, self._table, tenant, facts)

    def get(self, tenant: str, fact_uuid: str) -> Fact | None:
        response = self._call("get_item", TableName=self._table, ConsistentRead=True,
                              Key=serialize({"pk": fact_pk(tenant, fact_uuid), "sk": FACT_SK}))
        item = response.get("Item")
        return item_to_fact(deserialize(item)) if item else None

    def get_many(self, tenant: str, fact_uuids: Sequence[str]) -> list[Fact]:
        facts = {f.uuid: f for f in map(item_to_fact, self._read_items([(fact_pk(tenant, u), FACT_SK) for u in fact_uuids]))
                 if f.namespace.tenant == tenant}
        return [facts[u] for u in dict.fromkeys(fact_uuids) if u in facts]

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

    def for_entity(
        self, namespace: Namespace, entity_id: str, *, statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,),
        limit: int = 100,
    ) -> list[Fact]:
        edges = self.adjacency(namespace, entity_id, statuses=statuses, limit=limit)
        facts = self.get_many(namespace.tenant, [e.fact_uuid for e in edges])
        mine = [f for f in facts if graph_key(f.namespace) == graph_key(namespace)]  # defence in depth
        return sorted(mine, key=lambda f: (f.created_at, f.uuid), reverse=True)

    # -- helpers --------------------------------------------------------------------------
    def _require(self, tenant: str, fact_uuid: str) -> Fact:
        fact = self.get(tenant, fact_uuid)
        if fact is None:
            raise NotFoundError(f"fact {fact_uuid} not found", subject="fact", ident=fact_uuid)
        return fact

    def _provenance(self, tenant: str, memory_id: str) -> list[str]:
        items = all_items(self._call, "query", TableName=self._table,
                          KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                          ExpressionAttributeValues=serialize({":pk": memory_pk(tenant, memory_id), ":p": PROVENANCE_PREFIX}))
        return [item["fact_uuid"] for item in items]

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

    def _read_items(self, keys: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """The items at `keys` (strongly consistent, each key once), deserialized."""
        chunk = [serialize({"pk": pk, "sk": sk}) for pk, sk in dict.fromkeys(keys)]
        return [deserialize(i) for i in self._batch_get(chunk)]


def _audit(fact: Fact, action: str, at: datetime, *, actor: str = ENRICHMENT_ACTOR, memory_id: str | None = None,
           reason: str = "", invalidated_by: str | None = None) -> FactAudit:
    return FactAudit(fact_uuid=fact.uuid, revision=fact.revision, action=action, actor=actor, at=at, reason=reason,
                     memory_id=memory_id, invalidated_by=invalidated_by)



def _spellings(mention: EntityMention) -> dict[str, str]:
    """Canonical key -> the first spelling of it among the mention's name and aliases (name first)."""
    spelling: dict[str, str] = {}
    for name in [mention.name, *mention.aliases]:
        if canonical_key(name):
            spelling.setdefault(canonical_key(name), name)
    return spelling


def _read_once(prefetched: Fact | None, read: Callable[[], Fact | None]) -> Callable[[], Fact | None]:
    """The batch read's answer for a first attempt; a retry after a lost race reads again."""
    answers: list[Fact | None] = [prefetched]
    return lambda: answers.pop() if answers else read()
