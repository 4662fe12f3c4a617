"""`KeyStore` on the keys table: the SHA-256 of the secret is the key; a GSI lists a tenant's keys."""

from __future__ import annotations

from datetime import datetime

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.adapters.dynamodb.codec import deserialize, serialize, ts
from mnemo.adapters.dynamodb.table import DynamoDbTable
from mnemo.errors import ConflictError
from mnemo.ports import ApiKeyRecord


class DynamoDbKeyStore(DynamoDbTable):
    what = "key store"

    def put(self, record: ApiKeyRecord) -> None:
        item = record.model_dump(mode="json", exclude_none=True)
        try:
            self._db.put_item(
                TableName=self._table, Item=serialize(item), ConditionExpression="attribute_not_exists(key_hash)"
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise ConflictError("an API key with this secret already exists") from exc
            raise self._dependency(exc) from exc
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc

    def get(self, key_hash: str) -> ApiKeyRecord | None:
        item = self._call("get_item", TableName=self._table, Key=serialize({"key_hash": key_hash})).get("Item")
        return ApiKeyRecord.model_validate(deserialize(item)) if item else None

    def list(self, tenant: str) -> list[ApiKeyRecord]:
        response = self._call(
            "query",
            TableName=self._table,
            IndexName="by_tenant",
            KeyConditionExpression="tenant = :t",
            ExpressionAttributeValues=serialize({":t": tenant}),
        )
        return [ApiKeyRecord.model_validate(deserialize(i)) for i in response.get("Items", [])]

    def revoke(self, tenant: str, prefix: str, at: datetime) -> ApiKeyRecord | None:
        response = self._call(
            "query",
            TableName=self._table,
            IndexName="by_tenant",
            KeyConditionExpression="tenant = :t AND prefix = :p",
            ExpressionAttributeValues=serialize({":t": tenant, ":p": prefix}),
        )
        items = response.get("Items", [])
        if not items:
            return None
        record = ApiKeyRecord.model_validate(deserialize(items[0]))
        self._call(
            "update_item",
            TableName=self._table,
            Key=serialize({"key_hash": record.key_hash}),
            UpdateExpression="SET revoked_at = :at",
            ConditionExpression="attribute_exists(key_hash) AND tenant = :t",
            ExpressionAttributeValues=serialize({":at": ts(at), ":t": tenant}),
        )
        return record.model_copy(update={"revoked_at": at})

    def touch(self, key_hash: str, at: datetime, before: datetime) -> None:
        try:
            self._db.update_item(
                TableName=self._table, Key=serialize({"key_hash": key_hash}), UpdateExpression="SET last_used_at = :at",
                ConditionExpression="attribute_exists(key_hash) AND (attribute_not_exists(last_used_at) OR last_used_at < :b)",
                ExpressionAttributeValues=serialize({":at": ts(at), ":b": ts(before)}),
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise self._dependency(exc) from exc
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc

