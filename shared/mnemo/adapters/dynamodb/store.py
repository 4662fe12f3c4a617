"""`MemoryStore` on one DynamoDB table. Design and access patterns: docs/table-design.md."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from mnemo.adapters.dynamodb import duplicates as dynamodb_duplicates
from mnemo.adapters.dynamodb import sequence as dynamodb_sequence
from mnemo.adapters.dynamodb.codec import (
    BROWSE_INDEXES,
    HISTORY_PREFIX,
    MEMORY_SK,
    RECONCILE_SHARDS,
    UnreadableItemError,
    activity_to_item,
    all_items,
    browse_pk,
    browse_sk,
    deserialize,
    enrichment_pk,
    error_code,
    item_to_activity,
    item_to_memory,
    memory_pk,
    memory_to_item,
    salvage_memory,
    serialize,
    ts,
)
from mnemo.adapters.dynamodb.table import DynamoDbTable, collection_keys, delete_items
from mnemo.domain.models import Activity, Cursor, EnrichmentState, Memory, Page
from mnemo.domain.namespace import NamespaceFilter
from mnemo.errors import ConflictError, NotFoundError, UnreadableError
from mnemo.ports import BrowseQuery

logger = logging.getLogger(__name__)

# A filtered browse reads at most this many index items per (status, author) partition per page, so
# a rare combination (e.g. one agent across the tenant) costs a bounded read, never a scan.
_FILTERED_READ_CAP = 200


def _browse_index(scope: NamespaceFilter) -> tuple[str, tuple[str, ...]]:
    """The browse GSI whose key pins the most of `scope`'s levels, and the levels left to filter."""
    pinned = {name for name, value in scope.levels().items() if name != "tenant"}
    best = max((i for i, keys in BROWSE_INDEXES.items() if set(keys) <= pinned), key=lambda i: len(BROWSE_INDEXES[i]))
    return best, tuple(sorted(pinned - set(BROWSE_INDEXES[best])))


class DynamoDbMemoryStore(DynamoDbTable):
    what = "memory store"

    def put_new(self, memory: Memory, activity: Activity | None = None) -> None:
        """The "created" history line first, then the memory, each a conditional PutItem.

        Ordered so that a memory never exists without its creation line: if the second put fails,
        the first leaves a history item under a key no read reaches (reads start from the memory
        item), and a retry of the same request finds its line already there. Two puts rather than
        one TransactWriteItems: half the write units (a transaction bills each item twice), and no
        exposure to moto's transaction races on the local stack (issue 16 item 2)."""
        try:
            if activity is not None:
                try:
                    self._db.put_item(TableName=self._table, Item=serialize(activity_to_item(memory.tenant, activity)),
                                      ConditionExpression="attribute_not_exists(pk)")
                except ClientError as exc:
                    if error_code(exc) != "ConditionalCheckFailedException":  # present: an earlier attempt wrote it
                        raise
            self._db.put_item(TableName=self._table, Item=serialize(memory_to_item(memory)),
                              ConditionExpression="attribute_not_exists(pk)")
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise ConflictError(f"memory {memory.id} already exists") from exc
            raise self._dependency(exc) from exc
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc

    def put_new_many(self, created: Sequence[tuple[Memory, Activity]]) -> None:
        """History lines first, then the memories (the order `put_new` keeps, one batch at a time):
        a failure part-way leaves lines no read reaches, never a memory without its line."""
        lines = [serialize(activity_to_item(memory.tenant, activity)) for memory, activity in created]
        self._put_batches(lines)
        self._put_batches([serialize(memory_to_item(memory)) for memory, _ in created])

    def _put_batches(self, items: Sequence[dict[str, Any]]) -> None:
        self._batch_write([{"PutRequest": {"Item": item}} for item in items])

    def get(self, tenant: str, memory_id: str, *, salvage: bool = False) -> Memory | None:
        response = self._call(
            "get_item",
            TableName=self._table,
            Key=serialize({"pk": memory_pk(tenant, memory_id), "sk": MEMORY_SK}),
            ConsistentRead=True,
        )
        item = response.get("Item")
        if not item:
            return None
        if salvage:
            return salvage_memory(deserialize(item))
        try:
            return item_to_memory(deserialize(item))
        except UnreadableItemError as exc:
            _report(exc)
            raise UnreadableError(f"memory {memory_id} is stored in a form that can no longer be read (logged for "
                                  "an operator); it can still be erased with a hard delete") from exc

    def get_many(self, tenant: str, memory_ids: Sequence[str], *, consistent: bool = False) -> list[Memory]:
        found: dict[str, Memory] = {}
        unique = list(dict.fromkeys(memory_ids))
        keys = [serialize({"pk": memory_pk(tenant, i), "sk": MEMORY_SK}) for i in unique]
        for memory in readable(deserialize(item) for item in self._batch_get(keys, consistent=consistent)):
            if memory.tenant == tenant:  # the key already scopes it; defence in depth
                found[memory.id] = memory
        return [found[i] for i in unique if i in found]

    def save(self, memory: Memory, *, expected_version: int, activity: Activity | None = None,
             duplicate_of: str | None = None) -> None:
        """Conditional on both the content version and the revision read (so an enrichment result
        cannot overwrite an edit, nor a stale enrichment state overwrite a newer one). `duplicate_of`
        (deduplication's archive, with its history line): the kept memory's `DUP#` pointer in the same
        transaction, refused with NotFoundError naming the kept memory if it is gone or being erased."""
        written = memory.model_copy(update={"revision": memory.revision + 1})
        put = {
            "Put": {
                "TableName": self._table,
                "Item": serialize(memory_to_item(written)),
                "ConditionExpression": "attribute_exists(pk) AND version = :v AND (revision = :r OR attribute_not_exists(revision))",
                "ExpressionAttributeValues": serialize({":v": expected_version, ":r": memory.revision}),
            }
        }
        try:
            if activity is None:
                self._db.put_item(**put["Put"])
                return
            history = {
                "Put": {
                    "TableName": self._table,
                    "Item": serialize(activity_to_item(memory.tenant, activity)),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
            pointer = ([] if duplicate_of is None else
                       dynamodb_duplicates.pointer_items(self._table, memory.tenant, duplicate_of, memory.id))
            self._db.transact_write_items(TransactItems=[put, history, *pointer])
        except ClientError as exc:
            refused = None if duplicate_of is None else dynamodb_duplicates.refused_by(exc, 2)
            if refused is not None:  # the kept memory, or this one, is gone or being erased
                gone = duplicate_of if refused == "kept" else memory.id
                raise NotFoundError(f"memory {gone} not found", subject="memory", ident=gone) from exc
            if error_code(exc) in ("ConditionalCheckFailedException", "TransactionCanceledException"):
                raise ConflictError(
                    f"memory {memory.id} changed concurrently (expected version {expected_version}); retry"
                ) from exc
            raise self._dependency(exc) from exc
        except BotoCoreError as exc:
            raise self._dependency(exc) from exc

    def browse(self, query: BrowseQuery) -> Page:
        """Newest first across the requested (status, author) partitions of the browse index that
        pins the most of the scope, merged on (created_at, id); levels that index does not pin are
        a FilterExpression, read at most `_FILTERED_READ_CAP` items per partition and page."""
        index, filtered = _browse_index(query.scope)
        levels = query.scope.levels()
        candidates: list[Memory] = []
        frontiers: list[str] = []  # where a capped partition stopped reading: the page ends there
        skipped = 0
        for status in query.statuses:
            for author in query.authors:
                found, frontier, unreadable = self._browse_partition(query, index, levels, filtered, status, author)
                candidates.extend(found)
                skipped += unreadable
                if frontier is not None:
                    frontiers.append(frontier)
        candidates.sort(key=lambda m: (m.created_at, m.id), reverse=True)
        if frontiers:  # past a capped partition's frontier (the last item it read) lie its unread ones
            stop = max(frontiers)
            candidates = [m for m in candidates if browse_sk(m.created_at, m.id) >= stop]
        items = candidates[: query.limit]
        next_cursor = None
        if len(candidates) > query.limit and items:
            next_cursor = Cursor(cursor_created_at=items[-1].created_at, cursor_id=items[-1].id)
        elif frontiers:
            created_at, _, memory_id = max(frontiers).partition("#")
            next_cursor = Cursor(cursor_created_at=datetime.fromisoformat(created_at), cursor_id=memory_id)
        return Page(items=items, next_cursor=next_cursor, skipped=skipped)

    def _browse_partition(self, query: BrowseQuery, index: str, levels: dict[str, str], filtered: tuple[str, ...],
                          status: str, author: str) -> tuple[list[Memory], str | None, int]:
        """Up to `limit + 1` matches (one extra tells whether another page exists), the sort key it
        stopped at when the read cap ended it first, and how many unreadable items it skipped."""
        values: dict[str, Any] = {":pk": browse_pk(index, query.scope.tenant, levels, status, author)}
        kwargs: dict[str, Any] = {"TableName": self._table, "IndexName": index, "ScanIndexForward": False,
                                  "Limit": query.limit + 1}
        condition = f"{index}pk = :pk"
        if query.cursor is not None:
            condition += " AND gsi1sk < :cursor"
            values[":cursor"] = browse_sk(query.cursor.cursor_created_at, query.cursor.cursor_id)
        if filtered:
            kwargs["FilterExpression"] = " AND ".join(f"{name} = :{name}" for name in filtered)
            values.update({f":{name}": levels[name] for name in filtered})
            kwargs["Limit"] = _FILTERED_READ_CAP
        kwargs["KeyConditionExpression"] = condition
        kwargs["ExpressionAttributeValues"] = serialize(values)
        response = self._call("query", **kwargs)
        items = response.get("Items", [])
        if query.salvage:  # an erasure lists every item of the user, decodable or not
            found = [salvage_memory(deserialize(item)) for item in items]
        else:
            found = readable(deserialize(item) for item in items)
        skipped = len(items) - len(found)
        last = response.get("LastEvaluatedKey")
        if filtered and last and len(found) <= query.limit:
            return found, deserialize(last)["gsi1sk"], skipped
        return found[: query.limit + 1], None, skipped

    def preceding(self, tenant: str, user_id: str, memories: Sequence[Memory]) -> dict[str, Memory | None]:
        return dynamodb_sequence.preceding(self._below, tenant, user_id, memories)

    def _below(self, pk: str, key: str, limit: int) -> tuple[list[Memory], bool]:
        response = self._call("query", TableName=self._table, IndexName="gsi1", ScanIndexForward=False, Limit=limit,
                              KeyConditionExpression="gsi1pk = :pk AND gsi1sk < :key",
                              ExpressionAttributeValues=serialize({":pk": pk, ":key": key}))
        return readable(deserialize(i) for i in response.get("Items", [])), "LastEvaluatedKey" not in response

    def unindexed(self, tenant: str, limit: int) -> list[Memory]:
        """The sparse `gsi2` holds exactly the memories whose enrichment is unfinished: per state one
        Query (newest change first, keys only) and one BatchGetItem for the lot."""
        ids: list[str] = []
        for state in (EnrichmentState.PENDING, EnrichmentState.FAILED):
            response = self._call(
                "query", TableName=self._table, IndexName="gsi2", KeyConditionExpression="gsi2pk = :pk",
                ExpressionAttributeValues=serialize({":pk": enrichment_pk(tenant, state)}),
                ScanIndexForward=False, Limit=limit,
            )
            ids.extend(deserialize(item)["gsi2sk"].rpartition("#")[2] for item in response.get("Items", []))
        return self.get_many(tenant, ids)

    def erase(self, tenant: str, memory_id: str) -> int:
        """Delete the memory's whole item collection (the memory, its history, anything left under its
        key); returns how many history items went with it."""
        keys = collection_keys(self._call, self._table, memory_pk(tenant, memory_id))
        delete_items(self._call, self._table, keys)
        return sum(1 for _, sk in keys if sk.startswith(HISTORY_PREFIX))

    def repeats_of(self, tenant: str, kept_id: str) -> list[str]:
        return dynamodb_duplicates.repeats_of(self._call, self._table, tenant, kept_id)

    def forget_repeat(self, tenant: str, kept_id: str, repeat_id: str) -> None:
        dynamodb_duplicates.forget_repeat(self._call, self._table, tenant, kept_id, repeat_id)

    def scrub_history(self, tenant: str, memory_id: str, detail: str, replacement: str) -> int:
        return dynamodb_duplicates.scrub_history(self._call, self._table, tenant, memory_id, detail, replacement)

    def history(self, tenant: str, memory_id: str) -> list[Activity]:
        items = all_items(
            self._call,
            "query",
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :h)",
            ExpressionAttributeValues=serialize({":pk": memory_pk(tenant, memory_id), ":h": HISTORY_PREFIX}),
        )
        return [item_to_activity(item) for item in items]

    def count_by_enrichment(self, tenant: str, state: EnrichmentState) -> int:
        total, start = 0, None
        while True:
            kwargs: dict[str, Any] = {
                "TableName": self._table,
                "IndexName": "gsi2",
                "KeyConditionExpression": "gsi2pk = :pk",
                "ExpressionAttributeValues": serialize({":pk": enrichment_pk(tenant, state)}),
                "Select": "COUNT",
            }
            if start:
                kwargs["ExclusiveStartKey"] = start
            response = self._call("query", **kwargs)
            total += response.get("Count", 0)
            start = response.get("LastEvaluatedKey")
            if not start:
                return total

    def stale_pending(self, older_than: datetime, limit: int) -> list[Memory]:
        found: list[Memory] = []
        for shard in range(RECONCILE_SHARDS):
            response = self._call(
                "query",
                TableName=self._table,
                IndexName="gsi3",
                KeyConditionExpression="gsi3pk = :pk AND gsi3sk < :before",
                ExpressionAttributeValues=serialize({":pk": f"PENDING#{shard}", ":before": ts(older_than)}),
                Limit=limit,
            )
            found.extend(readable(deserialize(item) for item in response.get("Items", [])))
        return sorted(found, key=lambda m: m.updated_at)[:limit]

    def every_memory(self) -> Iterator[Memory]:
        items = all_items(
            self._call,
            "scan",
            TableName=self._table,
            FilterExpression="sk = :memory",
            ExpressionAttributeValues=serialize({":memory": MEMORY_SK}),
        )
        return iter(readable(items))



def readable(items: Iterable[dict[str, Any]]) -> list[Memory]:
    """The memories of `items`, skipping (and logging) any that no longer decode: one bad stored item
    never fails a page, a batch read or the reconciler."""
    memories = []
    for item in items:
        try:
            memories.append(item_to_memory(item))
        except UnreadableItemError as exc:
            _report(exc)
    return memories


# Items already reported by this process: an unreadable pending memory is read by every search (the
# unindexed read), which must not log an error each time. Bounded; a full set starts over.
_REPORTED: set[str] = set()
_REPORTED_MAX = 10_000


def _report(exc: UnreadableItemError) -> None:
    key = str(exc)
    if key in _REPORTED:
        return
    if len(_REPORTED) >= _REPORTED_MAX:
        _REPORTED.clear()
    _REPORTED.add(key)
    logger.error("unreadable memory item (reported once per process); erase it or repair it", extra={"item": key})
