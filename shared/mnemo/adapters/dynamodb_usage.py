"""Usage meters on the memories table: one atomic counter per tenant, meter and month, and one
marker per unit charged, so a unit (an annotated edge) is counted once however often the call
that produced it is replayed (an SQS redelivery, a reconciler re-enqueue). Layout:
docs/table-design.md ("usage").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.adapters.dynamodb_codec import deserialize, serialize
from mnemo.errors import DependencyError

logger = logging.getLogger(__name__)
_TRIES = 3


def usage_pk(tenant: str) -> str:
    return f"T#{tenant}#USAGE"


def counter_sk(meter: str, month: str) -> str:
    return f"C#{meter}#{month}"


def marker_sk(meter: str, unit: str) -> str:
    return f"U#{meter}#{unit}"


class DynamoDbUsageCounter:
    def __init__(self, client: Any, table_name: str) -> None:
        self._db = client
        self._table = table_name

    def charge(self, tenant: str, meter: str, month: str, units: Sequence[str]) -> int:
        """Per unit one transaction: the marker (only if absent) and `ADD used 1` on the month's
        counter. A unit charged before cancels its transaction and is skipped."""
        charged = 0
        for unit in dict.fromkeys(units):
            writes = [
                {"Put": {"TableName": self._table, "ConditionExpression": "attribute_not_exists(pk)",
                         "Item": serialize({"pk": usage_pk(tenant), "sk": marker_sk(meter, unit), "month": month})}},
                {"Update": {"TableName": self._table, "Key": serialize({"pk": usage_pk(tenant), "sk": counter_sk(meter, month)}),
                            "UpdateExpression": "ADD used :one", "ExpressionAttributeValues": serialize({":one": 1})}},
            ]
            charged += self._once(writes)
        return charged

    def _once(self, writes: list[dict[str, Any]]) -> int:
        """1 if this unit was charged now, 0 if it had been before; a transaction conflict with
        another charge of the same counter is retried (ADD commutes, so a retry is safe)."""
        for attempt in range(_TRIES):
            try:
                self._db.transact_write_items(TransactItems=writes)
                return 1
            except ClientError as exc:
                if _code(exc) in ("TransactionCanceledException", "ConditionalCheckFailedException") and _already(exc):
                    return 0  # charged before: a replay
                if _code(exc) not in ("TransactionCanceledException", "TransactionConflictException") or attempt == _TRIES - 1:
                    raise _dependency(exc) from exc
            except BotoCoreError as exc:
                raise _dependency(exc) from exc
        return 0  # not reached: the last attempt returns or raises

    def used(self, tenant: str, meter: str, month: str) -> int:
        try:
            response = self._db.get_item(TableName=self._table, ConsistentRead=True,
                                         Key=serialize({"pk": usage_pk(tenant), "sk": counter_sk(meter, month)}))
        except (ClientError, BotoCoreError) as exc:
            raise _dependency(exc) from exc
        item = response.get("Item")
        return int(deserialize(item)["used"]) if item else 0


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _already(exc: ClientError) -> bool:
    """The marker's condition failed (rather than a conflict with a concurrent transaction)."""
    if _code(exc) == "ConditionalCheckFailedException":
        return True
    reasons = exc.response.get("CancellationReasons") or []
    return bool(reasons) and reasons[0].get("Code") == "ConditionalCheckFailed"


def _dependency(exc: Exception) -> DependencyError:
    code = _code(exc) if isinstance(exc, ClientError) else type(exc).__name__
    logger.warning("usage counter call failed", extra={"error_code": code})
    return DependencyError("usage counter unavailable; retry shortly")
