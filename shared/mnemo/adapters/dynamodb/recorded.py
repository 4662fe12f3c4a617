"""The recorded facts of one user (`RecordedFactStore`): a listing item per recorded fact under
`T#<tenant>#U#<user>#RFACT`, put in every transaction that writes the fact (`FactTable._commit`), so
an export or a user's erasure reads them with a paginated Query, never a Scan. Layout:
docs/table-design.md ("Fact graph").

A recorded fact is keyed by tenant and uuid (callers address it by uuid alone); this partition is
the only way from a user to their recorded facts. Facts recorded before the listing existed get
their items from `list_recorded` (`python -m mnemo.cli reindex`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from mnemo.adapters.dynamodb.codec import serialize
from mnemo.adapters.dynamodb.fact_items import AUDIT_PREFIX, FACT_SK, edge_items, fact_pk, recorded_item, recorded_pk
from mnemo.adapters.dynamodb.fact_table import FactTable, audit_of
from mnemo.adapters.dynamodb.table import collection_keys, delete_items
from mnemo.domain.graph import Fact, FactOrigin
from mnemo.ports import RecordedPage


class _Listed(NamedTuple):
    sk: str
    fact: Fact | None  # None: the listing outlived its fact (nothing else deletes one; kept harmless)


class DynamoDbRecordedFacts(FactTable):
    def record(self, fact: Fact, *, actor: str, at: datetime | None = None, reason: str = "") -> Fact:
        created = fact.model_copy(update={"revision": 1})
        self._commit(None, created, audit_of(created, "created", at or created.created_at, actor=actor, reason=reason))
        return created

    def recorded(self, tenant: str, user_id: str, *, limit: int, after: str | None = None) -> RecordedPage:
        listed, more = self._listed(tenant, user_id, limit, after)
        return RecordedPage(facts=[entry.fact for entry in listed if entry.fact is not None],
                            next=listed[-1].sk if more and listed else None)

    def erase_recorded(self, tenant: str, user_id: str, *, limit: int) -> list[str]:
        """Delete up to `limit` of the user's recorded facts outright (item, audit rows, adjacency, listing)
        and the entity nodes and names they leave without any edge; returns their uuids (empty: none left)."""
        listed, _ = self._listed(tenant, user_id, limit, None)
        facts = [entry.fact for entry in listed if entry.fact is not None]
        return self._delete(tenant, [(recorded_pk(tenant, user_id), entry.sk) for entry in listed], facts)

    def erase_recorded_facts(self, tenant: str, user_id: str, fact_uuids: Sequence[str]) -> list[str]:
        """Delete these recorded facts of the user as `erase_recorded` does (a write that lost its race
        with the user's erasure: services/erasure/user_fence.py); another user's or a derived fact is left alone."""
        facts = [f for f in self.get_many(tenant, fact_uuids)
                 if f.origin == FactOrigin.RECORDED and f.namespace.user_id == user_id]
        return self._delete(tenant, [(item["pk"], item["sk"]) for item in map(recorded_item, facts)], facts)

    def list_recorded(self, facts: Sequence[Fact]) -> int:
        """Put the listing item of each recorded fact among `facts` (idempotent: the same keys, the same
        body); returns how many were written."""
        items = [recorded_item(f) for f in facts if f.origin == FactOrigin.RECORDED]
        self._batch_write([{"PutRequest": {"Item": serialize(item)}} for item in items])
        return len(items)

    def _listed(self, tenant: str, user_id: str, limit: int, after: str | None) -> tuple[list[_Listed], bool]:
        """Up to `limit` listing items after position `after` with their facts, and whether more follow
        (one more item is asked for, so the last page is known without an empty one after it)."""
        kwargs: dict[str, Any] = {"TableName": self._table, "KeyConditionExpression": "pk = :pk", "ConsistentRead": True,
                                  "ExpressionAttributeValues": serialize({":pk": recorded_pk(tenant, user_id)})}
        if after is not None:
            kwargs["ExclusiveStartKey"] = serialize({"pk": recorded_pk(tenant, user_id), "sk": after})
        items: list[dict[str, Any]] = []
        while len(items) <= limit:
            response = self._call("query", Limit=limit + 1 - len(items), **kwargs)
            items += response.get("Items", [])
            if "LastEvaluatedKey" not in response:
                break
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        keys = [(item["sk"]["S"], item["fact_uuid"]["S"]) for item in items[:limit]]
        facts = {f.uuid: f for f in self.get_many(tenant, [uuid for _, uuid in keys])
                 if f.origin == FactOrigin.RECORDED and f.namespace.user_id == user_id}  # defence in depth
        return [_Listed(sk, facts.get(uuid)) for sk, uuid in keys], len(items) > limit

    def _delete(self, tenant: str, keys: list[tuple[str, str]], facts: Sequence[Fact]) -> list[str]:
        for fact in facts:
            pk = fact_pk(tenant, fact.uuid)
            keys += [(pk, FACT_SK), *[k for k in collection_keys(self._call, self._table, pk) if k[1].startswith(AUDIT_PREFIX)]]
            keys += [(item["pk"], item["sk"]) for item in edge_items(fact)]
        delete_items(self._call, self._table, keys)
        self._erase_orphan_entities({(f.namespace, end.id) for f in facts for end in (f.subject, f.object)})
        return [fact.uuid for fact in facts]
