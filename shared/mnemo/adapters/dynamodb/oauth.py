"""`OAuthStore` on the OAuth table: one item per record, `pk` = `<kind>#<ident>`, the record as JSON
in `body`, and beside it the attributes conditional writes test (`attempts`, `used_at`,
`revoked_at`, `csrf_hash`, `expires_at`). `ttl` (epoch seconds) lets DynamoDB delete what expired;
the `by_owner` index lists a (tenant, user)'s grants."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from mnemo.adapters.dynamodb.codec import deserialize, serialize, ts
from mnemo.adapters.dynamodb.table import DynamoDbTable
from mnemo.domain.oauth_records import Grant, OAuthRecord
from mnemo.errors import ConflictError

_MUTABLE = ("attempts", "used_at", "revoked_at", "csrf_hash", "expires_at")
# DynamoDB deletes expired items within days; a day's grace keeps an item readable while the service
# still answers "expired" for it (rather than "unknown").
_TTL_GRACE = timedelta(days=1)


def _pk(kind: type[OAuthRecord], ident: str) -> str:
    return f"{kind.KIND}#{ident}"


class DynamoDbOAuthStore(DynamoDbTable):
    what = "authorization store"

    def put(self, record: OAuthRecord) -> None:
        body = record.model_dump(mode="json", exclude_none=True)
        item: dict[str, Any] = {
            "pk": _pk(type(record), record.ident),
            "body": json.dumps({k: v for k, v in body.items() if k not in _MUTABLE}),
            "ttl": int((record.expires_at + _TTL_GRACE).timestamp()),
            **{k: body[k] for k in _MUTABLE if k in body},
        }
        if isinstance(record, Grant):
            item["owner"] = f"{record.tenant}#{record.user_id}"
            item["created"] = ts(record.created_at)
        if self._conditional("put_item", Item=serialize(item), ConditionExpression="attribute_not_exists(pk)") is None:
            raise ConflictError(f"{record.KIND} {record.ident[:12]} already exists")

    def get[R: OAuthRecord](self, kind: type[R], ident: str) -> R | None:
        item = self._call("get_item", TableName=self._table, Key=serialize({"pk": _pk(kind, ident)}),
                          ConsistentRead=True).get("Item")
        return _record(kind, item) if item else None

    def take[R: OAuthRecord](self, kind: type[R], ident: str, *, attempts: int | None = None) -> R | None:
        condition, values = "attribute_exists(pk)", dict[str, Any]()
        if attempts is not None:
            condition += " AND attempts = :a"
            values[":a"] = attempts
        extra = {"ExpressionAttributeValues": serialize(values)} if values else {}
        item = self._conditional("delete_item", Key=serialize({"pk": _pk(kind, ident)}), ConditionExpression=condition,
                                 ReturnValues="ALL_OLD", **extra)
        return _record(kind, item["Attributes"]) if item and item.get("Attributes") else None

    def bump(self, kind: type[OAuthRecord], ident: str, attempts: int) -> bool:
        return self._conditional(
            "update_item", Key=serialize({"pk": _pk(kind, ident)}), UpdateExpression="SET attempts = :n",
            ConditionExpression="attribute_exists(pk) AND attempts = :a",
            ExpressionAttributeValues=serialize({":a": attempts, ":n": attempts + 1})) is not None

    def mark(self, kind: type[OAuthRecord], ident: str, field: str, at: datetime) -> bool:
        return self._conditional(
            "update_item", Key=serialize({"pk": _pk(kind, ident)}), UpdateExpression="SET #f = :at",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(#f)",
            ExpressionAttributeNames={"#f": field}, ExpressionAttributeValues=serialize({":at": _iso(at)})) is not None

    def set_field(self, kind: type[OAuthRecord], ident: str, field: str, value: str) -> bool:
        return self._conditional(
            "update_item", Key=serialize({"pk": _pk(kind, ident)}), UpdateExpression="SET #f = :v",
            ConditionExpression="attribute_exists(pk)", ExpressionAttributeNames={"#f": field},
            ExpressionAttributeValues=serialize({":v": value})) is not None

    def extend(self, kind: type[OAuthRecord], ident: str, expires_at: datetime) -> None:
        self._conditional(
            "update_item", Key=serialize({"pk": _pk(kind, ident)}), UpdateExpression="SET expires_at = :e, #t = :t",
            ConditionExpression="attribute_exists(pk)", ExpressionAttributeNames={"#t": "ttl"},
            ExpressionAttributeValues=serialize({":e": _iso(expires_at), ":t": int((expires_at + _TTL_GRACE).timestamp())}))

    def grants_of(self, tenant: str, user_id: str) -> list[Grant]:
        response = self._call("query", TableName=self._table, IndexName="by_owner", KeyConditionExpression="#o = :o",
                              ExpressionAttributeNames={"#o": "owner"},
                              ExpressionAttributeValues=serialize({":o": f"{tenant}#{user_id}"}))
        return [_record(Grant, item) for item in response.get("Items", [])]

    def admit(self, counter: str, cap: int, expires_at: datetime) -> bool:
        return self._conditional(
            "update_item", Key=serialize({"pk": f"count#{counter}"}), UpdateExpression="ADD n :one SET #t = :t",
            ConditionExpression="attribute_not_exists(n) OR n < :cap", ExpressionAttributeNames={"#t": "ttl"},
            ExpressionAttributeValues=serialize({":one": 1, ":cap": cap, ":t": int((expires_at + _TTL_GRACE).timestamp())}),
        ) is not None

    def count(self, counter: str) -> int:
        item = self._call("get_item", TableName=self._table, Key=serialize({"pk": f"count#{counter}"}),
                          ConsistentRead=True).get("Item")
        return int(deserialize(item).get("n", 0)) if item else 0


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


def _record[R: OAuthRecord](kind: type[R], item: dict[str, Any]) -> R:
    plain = deserialize(item)
    body = json.loads(plain["body"])
    body.update({k: (int(plain[k]) if k == "attempts" else plain[k]) for k in _MUTABLE if k in plain})
    return kind.model_validate(body)
