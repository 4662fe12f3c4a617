"""`GraphStore` on the memories table: links in the memory's item collection, entity postings in one
partition per (tenant, user, entity). Every key is deterministic, so replaying an enrichment
rewrites the same items instead of adding duplicates. (Facts: `DynamoDbFactStore`.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from mnemo.adapters.dynamodb.codec import all_items, deserialize, memory_pk, serialize
from mnemo.adapters.dynamodb.fact_items import NAMED_PREFIX
from mnemo.adapters.dynamodb.table import DynamoDbTable
from mnemo.domain.graph import Link, canonical_key, entity_key
from mnemo.domain.models import Memory
from mnemo.ports import GraphChange

FACT_PREFIX = "F#"  # facts stored here before they became their own aggregate: removed on the next sync
LINK_PREFIX = "L#"
ENTITY_PREFIX = "N#"  # the memory's own record of which postings it owns (to delete them later)

_Plan = tuple[dict[tuple[str, str], dict[str, Any]], list[tuple[str, str]]]  # puts, deletes


def posting_pk(tenant: str, user_id: str, entity: str) -> str:
    return f"T#{tenant}#U#{user_id}#ENT#{entity_key(entity)}"


class DynamoDbGraphStore(DynamoDbTable):
    what = "graph store"

    def sync(self, memory: Memory, entities: Sequence[str], links: Sequence[Link]) -> list[Link]:
        change = self.plan(memory, entities, links)
        self.apply([change])
        return change.links

    def plan(self, memory: Memory, entities: Sequence[str], links: Sequence[Link], dropped: Sequence[str] = ()) -> GraphChange:
        """One Query (what the memory owns now); the puts and deletes are written by `apply`."""
        pk = memory_pk(memory.tenant, memory.id)
        existing = {item["sk"]: item for item in self._collection(pk)}
        # names an older version said (docs/table-design.md): never stale, read by the memory's erasure
        wanted: dict[tuple[str, str], dict[str, Any]] = {
            (pk, NAMED_PREFIX + canonical_key(name)): {"name": name} for name in dropped if canonical_key(name)}
        for name in {entity_key(e): e for e in entities}.values():
            wanted[(pk, ENTITY_PREFIX + entity_key(name))] = {"entity": name, "user_id": memory.user_id}
            wanted[(posting_pk(memory.tenant, memory.user_id, name), f"M#{memory.id}")] = {
                "memory_id": memory.id, "created_at": memory.created_at.isoformat(),
            }
        for link in links:
            body = {"weight": str(link.weight), "reason": link.reason, "owner": memory.id}
            wanted[(pk, LINK_PREFIX + link.other_id)] = {"memory_id": memory.id, "other_id": link.other_id, **body}
            wanted[(memory_pk(memory.tenant, link.other_id), LINK_PREFIX + memory.id)] = {
                "memory_id": link.other_id, "other_id": memory.id, **body,
            }
        stale = self._owned_keys(memory, existing, incoming_links=False)
        deletes = [key for key in stale if key not in wanted]
        incoming = [
            _link(item) for sk, item in existing.items()
            if sk.startswith(LINK_PREFIX) and item.get("owner") != memory.id
        ]
        mine = {link.other_id for link in links}
        every = list(links) + [link for link in incoming if link.other_id not in mine]
        return GraphChange(memory_id=memory.id, links=every, writes=(wanted, deletes))

    def apply(self, changes: Sequence[GraphChange]) -> None:
        """The changes of several memories in shared BatchWriteItem calls (25 items each), as if written
        one after the other: a later put wins, and a stale delete (read before the batch) never removes
        what an earlier change of the batch put (written first, a later plan would have seen it)."""
        puts: dict[tuple[str, str], dict[str, Any]] = {}
        deletes: dict[tuple[str, str], None] = {}
        for change in changes:
            wanted, stale = cast(_Plan, change.writes)  # this adapter's own plan
            for key in stale:
                if key not in puts:
                    deletes[key] = None
            for key, body in wanted.items():
                deletes.pop(key, None)
                puts[key] = body
        self._write(puts=puts, deletes=list(deletes))

    def clear(self, memory: Memory) -> None:
        pk = memory_pk(memory.tenant, memory.id)
        existing = {i["sk"]: i for i in self._collection(pk)}
        self._write(puts={}, deletes=self._owned_keys(memory, existing, incoming_links=True))

    def unlink(self, tenant: str, memory_id: str, others: Sequence[str]) -> None:
        pk = memory_pk(tenant, memory_id)
        self._write(puts={}, deletes=[key for other in others
                                      for key in ((pk, LINK_PREFIX + other), (memory_pk(tenant, other), LINK_PREFIX + memory_id))])

    def entity_neighbours(self, tenant: str, user_id: str, entities: Sequence[str], limit: int) -> list[str]:
        found: dict[str, str] = {}
        for name in list(dict.fromkeys(entity_key(e) for e in entities))[:10]:
            response = self._call(
                "query",
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues=serialize({":pk": posting_pk(tenant, user_id, name)}),
                Limit=limit,
            )
            for item in response.get("Items", []):
                posting = deserialize(item)
                found.setdefault(posting["memory_id"], posting.get("created_at", ""))
        return sorted(found, key=lambda mid: found[mid], reverse=True)

    def links(self, tenant: str, memory_id: str) -> list[Link]:
        return [_link(item) for item in self._collection(memory_pk(tenant, memory_id), LINK_PREFIX)]

    # -- helpers --------------------------------------------------------------------------
    def _owned_keys(
        self, memory: Memory, existing: dict[str, dict[str, Any]], *, incoming_links: bool
    ) -> list[tuple[str, str]]:
        """The items this memory's enrichment wrote (postings, its links and their mirrors, legacy facts);
        with `incoming_links`, also the links other memories made to it."""
        pk = memory_pk(memory.tenant, memory.id)
        keys: list[tuple[str, str]] = []
        for sk, item in existing.items():
            if sk.startswith(FACT_PREFIX):
                keys.append((pk, sk))
            elif sk.startswith(ENTITY_PREFIX):
                keys.append((pk, sk))
                keys.append((posting_pk(memory.tenant, item.get("user_id", memory.user_id), item["entity"]), f"M#{memory.id}"))
            elif sk.startswith(LINK_PREFIX) and (incoming_links or item.get("owner") == memory.id):
                keys.append((pk, sk))
                keys.append((memory_pk(memory.tenant, item["other_id"]), LINK_PREFIX + memory.id))
        return keys

    def _collection(self, pk: str, prefix: str | None = None) -> list[dict[str, Any]]:
        """The derived items of one memory (one Query; the range spans F#, H#, L#, MEMORY, N#)."""
        if prefix:
            condition, values = "pk = :pk AND begins_with(sk, :prefix)", {":pk": pk, ":prefix": prefix}
        else:
            condition, values = "pk = :pk AND sk BETWEEN :lo AND :hi", {":pk": pk, ":lo": "F#", ":hi": "N#\uffff"}
        items = all_items(self._call, "query", TableName=self._table, KeyConditionExpression=condition,
                          ExpressionAttributeValues=serialize(values))
        return [i for i in items if i["sk"].startswith((FACT_PREFIX, LINK_PREFIX, ENTITY_PREFIX))]

    def _write(self, *, puts: dict[tuple[str, str], dict[str, Any]], deletes: Sequence[tuple[str, str]]) -> None:
        requests = [{"PutRequest": {"Item": serialize({"pk": pk, "sk": sk, **body})}} for (pk, sk), body in puts.items()]
        requests += [{"DeleteRequest": {"Key": serialize({"pk": pk, "sk": sk})}} for pk, sk in dict.fromkeys(deletes)]
        self._batch_write(requests)


def _link(item: dict[str, Any]) -> Link:
    return Link(memory_id=item["memory_id"], other_id=item["other_id"], weight=float(item["weight"]), reason=item["reason"])
