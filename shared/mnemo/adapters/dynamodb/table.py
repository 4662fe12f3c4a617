"""One DynamoDB table as every adapter calls it: one error policy and the batch calls (issue 31 step 1).

Every vendor error leaves through `dynamodb_codec.dependency_error` (throttling said as such, a
`ValidationException` a permanent validation error, the AWS code only in the log). A table whose
callers expect it (`conflict` set) reports a failed condition as `ConflictError` instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.adapters.dynamodb.codec import all_items, dependency_error, error_code, serialize
from mnemo.errors import ConflictError, DependencyError, MnemoError

Call = Callable[..., dict[str, Any]]

BATCH_WRITE_LIMIT = 25  # DynamoDB's BatchWriteItem maximum
BATCH_GET_LIMIT = 100  # DynamoDB's BatchGetItem maximum
# Unprocessed items (throttled partitions) are sent again after a growing pause; a table that keeps
# refusing them for this many rounds is reported busy rather than looped on forever.
_RESEND_ROUNDS = 8
_RESEND_PAUSE = 0.05  # seconds, doubled each round
_CONFLICT_CODES = ("ConditionalCheckFailedException", "TransactionCanceledException")


class DynamoDbTable:
    """The client and table name; `what` names the store in the caller's messages."""

    what = "memory store"
    # The ConflictError message for a failed condition, on tables whose callers expect one; None: a
    # failed condition is reported like any other failed call (callers that expect it catch it first).
    conflict: str | None = None

    def __init__(self, client: Any, table_name: str) -> None:
        self._db = client
        self._table = table_name

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response: dict[str, Any] = getattr(self._db, operation)(**kwargs)
            return response
        except ClientError as exc:
            if self.conflict is not None and error_code(exc) in _CONFLICT_CODES:
                raise ConflictError(self.conflict) from exc
            raise self._dependency(exc) from exc
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc

    def _conditional(self, operation: str, **kwargs: Any) -> dict[str, Any] | None:
        """A conditional write on the table: its response, or None when the condition does not hold
        (a lost race, a second use)."""
        try:
            response: dict[str, Any] = getattr(self._db, operation)(TableName=self._table, **kwargs)
            return response
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return None
            raise self._dependency(exc) from exc
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc

    def _dependency(self, exc: Exception) -> MnemoError:
        return dependency_error(exc, self.what)

    def _batch_write(self, requests: Sequence[dict[str, Any]]) -> None:
        batch_write(self._call, self._table, requests, self.what)

    def _batch_get(self, keys: Sequence[dict[str, Any]], *, consistent: bool = True,
                   projection: str | None = None) -> list[dict[str, Any]]:
        return batch_get(self._call, self._table, keys, self.what, consistent=consistent, projection=projection)


def batch_write(call: Call, table: str, requests: Sequence[dict[str, Any]], what: str = "memory store") -> None:
    """BatchWriteItem, 25 requests a call, unprocessed ones sent again (see `_RESEND_ROUNDS`)."""
    for start in range(0, len(requests), BATCH_WRITE_LIMIT):
        pending: dict[str, Any] = {table: list(requests[start : start + BATCH_WRITE_LIMIT])}
        for round_ in range(_RESEND_ROUNDS):
            if round_:
                time.sleep(_RESEND_PAUSE * 2 ** (round_ - 1))
            pending = call("batch_write_item", RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
        else:
            raise DependencyError(f"{what} is busy (throttled); retry after a short wait")


def batch_get(call: Call, table: str, keys: Sequence[dict[str, Any]], what: str = "memory store", *,
              consistent: bool = True, projection: str | None = None) -> list[dict[str, Any]]:
    """BatchGetItem of serialized keys, 100 a call, unprocessed keys asked again; the items found, as
    DynamoDB returned them (serialized), in no particular order."""
    found: list[dict[str, Any]] = []
    for start in range(0, len(keys), BATCH_GET_LIMIT):
        ask: dict[str, Any] = {"Keys": list(keys[start : start + BATCH_GET_LIMIT]), "ConsistentRead": consistent}
        if projection:
            ask["ProjectionExpression"] = projection
        request: dict[str, Any] = {table: ask}
        for round_ in range(_RESEND_ROUNDS):
            if round_:
                time.sleep(_RESEND_PAUSE * 2 ** (round_ - 1))
            response = call("batch_get_item", RequestItems=request)
            found += response.get("Responses", {}).get(table, [])
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
        else:
            raise DependencyError(f"{what} is busy (throttled); retry after a short wait")
    return found


def delete_items(call: Call, table: str, keys: Iterable[tuple[str, str]]) -> int:
    """BatchWriteItem deletes of (pk, sk) keys, each once; returns how many keys were deleted."""
    unique = list(dict.fromkeys(keys))
    batch_write(call, table, [{"DeleteRequest": {"Key": serialize({"pk": pk, "sk": sk})}} for pk, sk in unique])
    return len(unique)


def collection_keys(call: Call, table: str, pk: str) -> list[tuple[str, str]]:
    """Every item under one partition key (a memory's item collection, a fact and its audit rows)."""
    items = all_items(call, "query", TableName=table, KeyConditionExpression="pk = :pk",
                      ExpressionAttributeValues=serialize({":pk": pk}), ProjectionExpression="pk, sk")
    return [(item["pk"], item["sk"]) for item in items]
