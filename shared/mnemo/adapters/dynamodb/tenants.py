"""`TenantStore` on the keys table: one item per tenant holds its plan and its monthly counters.

The item's key is `tenant#<name>` in the `key_hash` attribute (a SHA-256 hex digest never starts
that way) and it carries no `prefix`, so the table's sparse `by_tenant` index never lists it. A
month's counters are attributes of the same item (`writes@2026-12`), so one conditional UpdateItem
both checks the plan (status, limits) and counts: docs/tenancy.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.adapters.dynamodb.codec import deserialize, serialize
from mnemo.adapters.dynamodb.table import DynamoDbTable
from mnemo.domain.tenancy import Counter, Tenant, TenantStatus
from mnemo.errors import DependencyError

KEY_PREFIX = "tenant#"
MARKER_PREFIX = "counted#"  # `counted#<counter>#<unit>#<tenant>`: a unit already counted (docs/tenancy.md)
_TRIES = 3  # a transaction cancelled by a concurrent write to the tenant item is retried (ADD commutes)


def counter_attribute(counter: Counter, month: str) -> str:
    return f"{counter.value}@{month}"


def limit_attribute(counter: Counter) -> str:
    return f"limit_{counter.value}"


class DynamoDbTenantStore(DynamoDbTable):
    what = "tenant store"

    def _key(self, tenant: str) -> dict[str, Any]:
        return serialize({"key_hash": f"{KEY_PREFIX}{tenant}"})

    def get(self, tenant: str, month: str) -> tuple[Tenant, dict[Counter, int]]:
        item = self._call("get_item", TableName=self._table, Key=self._key(tenant), ConsistentRead=True).get("Item")
        data = deserialize(item) if item else {}
        used = {c: int(data.get(counter_attribute(c, month), 0)) for c in Counter}
        return _tenant(tenant, data), used

    def configure(self, tenant: str, limits: dict[Counter, int | None], status: TenantStatus | None) -> Tenant:
        names: dict[str, str] = {"#t": "tenant"}
        values: dict[str, Any] = {":t": tenant}
        sets, removes = ["#t = :t"], []
        for i, (counter, limit) in enumerate(limits.items()):
            names[f"#l{i}"] = limit_attribute(counter)
            if limit is None:
                removes.append(f"#l{i}")
            else:
                values[f":l{i}"] = limit
                sets.append(f"#l{i} = :l{i}")
        if status is not None:
            names["#s"], values[":s"] = "status", status.value
            sets.append("#s = :s")
        expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
        response = self._call(
            "update_item", TableName=self._table, Key=self._key(tenant), UpdateExpression=expression,
            ExpressionAttributeNames=names, ExpressionAttributeValues=serialize(values), ReturnValues="ALL_NEW",
        )
        return _tenant(tenant, deserialize(response["Attributes"]))

    def charge(self, tenant: str, month: str, counters: Sequence[Counter], amount: int = 1) -> Counter | TenantStatus | None:
        if amount != 1:
            return self._charge_many(tenant, month, counters, amount)
        # One write: ADD each counter, on condition that the tenant is active (or never configured)
        # and every counter is below its limit (or has none). DynamoDB serialises writes to one item:
        # under any concurrency, no counter passes its limit.
        update = self._counting(tenant, month, counters, capped=True)
        try:
            self._db.update_item(**update, ReturnValuesOnConditionCheckFailure="ALL_OLD")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise self._dependency(exc) from exc
            old: dict[str, Any] = exc.response.get("Item") or {}  # type: ignore[assignment]
            return _refusal(deserialize(old), month, counters)
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc
        return None

    def charge_units(self, tenant: str, month: str, counter: Counter, units: Sequence[str], *,
                     capped: bool) -> tuple[int, Counter | TenantStatus | None]:
        """Per unit one transaction: a marker written only if absent, and the counting update above
        (its condition only when `capped`). A unit counted before fails the marker and is skipped."""
        charged = 0
        for unit in dict.fromkeys(units):
            marker = {"TableName": self._table, "ConditionExpression": "attribute_not_exists(key_hash)",
                      "Item": serialize({"key_hash": f"{MARKER_PREFIX}{counter.value}#{unit}#{tenant}", "month": month})}
            update = {**self._counting(tenant, month, [counter], capped=capped),
                      **({"ReturnValuesOnConditionCheckFailure": "ALL_OLD"} if capped else {})}
            outcome, old = self._transact_once([{"Put": marker}, {"Update": update}])
            if outcome == "counted":
                charged += 1
            elif outcome == "refused":  # the counter's condition failed: the item as it was says why
                return charged, _refusal(deserialize(old) if old else self._item(tenant), month, [counter])
        return charged, None

    def _transact_once(self, writes: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        """("counted" | "before" (the marker exists) | "refused", the refusing tenant item if returned)."""
        for attempt in range(1, _TRIES + 1):
            try:
                self._db.transact_write_items(TransactItems=writes)
                return "counted", {}
            except ClientError as exc:
                cancelled: list[Any] = list(exc.response.get("CancellationReasons") or [])
                reasons = [r.get("Code") for r in cancelled]
                if reasons[:1] == ["ConditionalCheckFailed"]:
                    return "before", {}
                if reasons[1:2] == ["ConditionalCheckFailed"]:
                    return "refused", dict(cancelled[1].get("Item") or {})
                if "TransactionConflict" not in reasons or attempt == _TRIES:
                    raise self._dependency(exc) from exc
            except BotoCoreError as exc:
                raise self._dependency(exc) from exc
        raise AssertionError("unreachable")

    def _item(self, tenant: str) -> dict[str, Any]:
        item = self._call("get_item", TableName=self._table, Key=self._key(tenant), ConsistentRead=True).get("Item")
        return deserialize(item) if item else {}

    def _counting(self, tenant: str, month: str, counters: Sequence[Counter], *, capped: bool) -> dict[str, Any]:
        """The UpdateItem that adds one to each counter; `capped`: only while the tenant is active and
        every counter is below its limit. A counter that does not exist yet is 0, so it passes only a
        limit above 0."""
        names: dict[str, str] = {}
        values: dict[str, Any] = {":one": 1}
        adds, conditions = [], ["(attribute_not_exists(#s) OR #s = :active)"]
        for i, counter in enumerate(counters):
            names[f"#c{i}"], names[f"#l{i}"] = counter_attribute(counter, month), limit_attribute(counter)
            adds.append(f"#c{i} :one")
            conditions.append(f"(attribute_not_exists(#l{i}) OR (attribute_exists(#c{i}) AND #c{i} < #l{i})"
                              f" OR (attribute_not_exists(#c{i}) AND #l{i} > :zero))")
        update: dict[str, Any] = {"TableName": self._table, "Key": self._key(tenant), "UpdateExpression": "ADD " + ", ".join(adds)}
        if capped:
            names["#s"] = "status"
            values.update({":zero": 0, ":active": TenantStatus.ACTIVE.value})
            update["ConditionExpression"] = " AND ".join(conditions)
        else:
            names = {k: v for k, v in names.items() if k.startswith("#c")}
        return {**update, "ExpressionAttributeNames": names, "ExpressionAttributeValues": serialize(values)}

    def _charge_many(self, tenant: str, month: str, counters: Sequence[Counter], amount: int) -> Counter | TenantStatus | None:
        """Add `amount` (an import chunk) in one read and one write. A condition cannot do arithmetic
        (`count + amount <= limit`), so the read supplies each limit and the write is conditional on
        the limit and status being unchanged and the count at most `limit - amount`; when another
        writer moved the item in between, read again (bounded: each retry follows someone's write)."""
        for _ in range(5):
            plan, used = self.get(tenant, month)
            if plan.status != TenantStatus.ACTIVE:
                return plan.status
            over = [c for c in counters if (limit := plan.limits.get(c)) is not None and used[c] + amount > limit]
            if over:
                return over[0]
            names: dict[str, str] = {"#s": "status"}
            values: dict[str, Any] = {":n": amount, ":active": TenantStatus.ACTIVE.value}
            adds, conditions = [], ["(attribute_not_exists(#s) OR #s = :active)"]
            for i, counter in enumerate(counters):
                names[f"#c{i}"], names[f"#l{i}"] = counter_attribute(counter, month), limit_attribute(counter)
                adds.append(f"#c{i} :n")
                limit = plan.limits.get(counter)
                if limit is None:
                    conditions.append(f"attribute_not_exists(#l{i})")
                else:
                    values[f":l{i}"], values[f":max{i}"] = limit, limit - amount
                    conditions.append(f"#l{i} = :l{i} AND (attribute_not_exists(#c{i}) OR #c{i} <= :max{i})")
            try:
                self._db.update_item(
                    TableName=self._table, Key=self._key(tenant), UpdateExpression="ADD " + ", ".join(adds),
                    ConditionExpression=" AND ".join(conditions), ExpressionAttributeNames=names,
                    ExpressionAttributeValues=serialize(values),
                )
                return None
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise self._dependency(exc) from exc
            except BotoCoreError as exc:
                raise self._dependency(exc) from exc
        raise DependencyError("tenant store busy: the plan kept changing while charging; retry")



def _tenant(tenant: str, data: dict[str, Any]) -> Tenant:
    limits = {c: (int(data[limit_attribute(c)]) if limit_attribute(c) in data else None) for c in Counter}
    return Tenant(tenant=tenant, limits=limits, status=TenantStatus(data.get("status", TenantStatus.ACTIVE.value)))


def _refusal(old: dict[str, Any], month: str, counters: Sequence[Counter]) -> Counter | TenantStatus:
    """Why the conditional write failed, from the item as it was (no second read)."""
    status = TenantStatus(old.get("status", TenantStatus.ACTIVE.value))
    if status != TenantStatus.ACTIVE:
        return status
    for counter in counters:
        limit = old.get(limit_attribute(counter))
        if limit is not None and int(old.get(counter_attribute(counter, month), 0)) >= int(limit):
            return counter
    return counters[0]  # unreachable unless the item changed shape underneath; refuse rather than guess "ok"
