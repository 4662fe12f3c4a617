"""Deduplication's pointers on the memories table (docs/table-design.md, docs/erasure.md "What
remains"): when a repeat is archived as `duplicate_of` a kept memory, the same transaction puts
`DUP#<repeat id>` (keys only, no text) in the KEPT memory's item collection, on condition that the kept
memory exists and has no tombstone. Erasing the kept memory reads these pointers (after its tombstone,
so no new one can appear) to take `duplicate_of` off each repeat that still names it, before the
collection, pointers included, is deleted; erasing a repeat deletes its pointers (the transaction also
checks the repeat has no tombstone, so none is added after its erasure read its history)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from mnemo.adapters.dynamodb.codec import HISTORY_PREFIX, MEMORY_SK, all_items, memory_pk, serialize
from mnemo.adapters.dynamodb.erasure_jobs import TOMBSTONE_SK, tombstone_pk
from mnemo.errors import DependencyError

Call = Callable[..., dict[str, Any]]
DUPLICATE_PREFIX = "DUP#"


def pointer_items(table: str, tenant: str, kept_id: str, repeat_id: str) -> list[dict[str, Any]]:
    """The transaction items that go with a repeat's archive: the pointer, the two checks that the
    kept memory is still there and no erasure of it has begun (an erased memory's key is never written
    again), and that no erasure of the repeat has begun. `refused_by` tells which check failed."""
    pk = memory_pk(tenant, kept_id)
    return [
        {"Put": {"TableName": table, "Item": serialize({"pk": pk, "sk": DUPLICATE_PREFIX + repeat_id})}},
        {"ConditionCheck": {"TableName": table, "Key": serialize({"pk": pk, "sk": MEMORY_SK}),
                            "ConditionExpression": "attribute_exists(pk)"}},
        {"ConditionCheck": {"TableName": table, "Key": serialize({"pk": tombstone_pk(tenant, kept_id), "sk": TOMBSTONE_SK}),
                            "ConditionExpression": "attribute_not_exists(pk)"}},
        {"ConditionCheck": {"TableName": table, "Key": serialize({"pk": tombstone_pk(tenant, repeat_id), "sk": TOMBSTONE_SK}),
                            "ConditionExpression": "attribute_not_exists(pk)"}},
    ]


def refused_by(exc: ClientError, first: int) -> str | None:
    """For a cancelled transaction holding `pointer_items` from index `first`: "kept" when the kept
    memory's checks failed, "repeat" when the repeat's erasure has begun, None otherwise (its version)."""
    failed = [r.get("Code") == "ConditionalCheckFailed" for r in exc.response.get("CancellationReasons") or []]
    if any(failed[first + 1:first + 3]):
        return "kept"
    return "repeat" if any(failed[first + 3:first + 4]) else None


def repeats_of(call: Call, table: str, tenant: str, kept_id: str) -> list[str]:
    items = all_items(call, "query", TableName=table, ConsistentRead=True,
                      KeyConditionExpression="pk = :pk AND begins_with(sk, :d)",
                      ExpressionAttributeValues=serialize({":pk": memory_pk(tenant, kept_id), ":d": DUPLICATE_PREFIX}),
                      ProjectionExpression="sk")
    return [item["sk"][len(DUPLICATE_PREFIX):] for item in items]


def forget_repeat(call: Call, table: str, tenant: str, kept_id: str, repeat_id: str) -> None:
    """The kept memory's pointer to an erased repeat: deleted (a delete of a missing item is a no-op)."""
    call("delete_item", TableName=table, Key=serialize({"pk": memory_pk(tenant, kept_id), "sk": DUPLICATE_PREFIX + repeat_id}))


def scrub_history(call: Call, table: str, tenant: str, memory_id: str, detail: str, replacement: str) -> int:
    """Replace `detail` in the memory's history lines that say exactly it (the archive's "duplicate of
    <kept id>"); who, when and which action stay. A line gone meanwhile needs nothing."""
    items = all_items(call, "query", TableName=table, ConsistentRead=True,
                      KeyConditionExpression="pk = :pk AND begins_with(sk, :h)",
                      ExpressionAttributeValues=serialize({":pk": memory_pk(tenant, memory_id), ":h": HISTORY_PREFIX}))
    changed = 0
    for item in (i for i in items if i.get("detail") == detail):
        try:
            call("update_item", TableName=table, Key=serialize({"pk": item["pk"], "sk": item["sk"]}),
                 UpdateExpression="SET detail = :new", ConditionExpression="detail = :old",
                 ExpressionAttributeValues=serialize({":new": replacement, ":old": detail}))
            changed += 1
        except DependencyError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, ClientError) and cause.response["Error"]["Code"] == "ConditionalCheckFailedException"):
                raise
    return changed
