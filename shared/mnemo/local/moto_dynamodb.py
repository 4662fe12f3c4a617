"""moto's DynamoDB, made to keep DynamoDB's guarantees under concurrency and to cost what a key says.

Local stack and tests only (production talks to DynamoDB). moto 5.2 has three defects the local
stack inherits (issue 14, issue 16 item 2):

- `transact_write_items` deep-copies every table it touches, applies the items one by one, and on
  a failed condition assigns the copy back: writes other requests committed meanwhile are lost, a
  concurrent write raises `dictionary changed size`, and each transaction costs O(table).
- Every `Query`, on the table or on an index, walks every item of the table: O(table) per call.
- Nothing serialises requests, and moto's server answers them on many threads.

`install()` patches moto's classes in this process (idempotent):

- one lock around each DynamoDB request (the server's threads and in-process clients alike), so
  each request is atomic and sees a consistent table, as DynamoDB's per-item linearisability promises;
- transactions that evaluate every condition first and write nothing unless all hold, then apply;
  should an apply step still fail, only the items the transaction touched are restored;
- queries that read the key's partition (table) or a maintained posting list (secondary index)
  instead of the whole table; moto's own code then sorts, filters, pages and projects as before;
- a `Select=COUNT` query without filter, `Limit` or start key is counted over the partition or
  posting list directly, in one page: moto sorts, sizes and projects every item to count them, and
  pages at 1 MB of whole items, so a tenant's `GET /v1/status` (a COUNT of its pending memories on
  `gsi2`) cost O(backlog²) — a fifth of the local stack's time while it imported a conversation.
  (DynamoDB pages a COUNT at 1 MB of index entries; `gsi2` is KEYS_ONLY, thousands per page.)
- an item's size (what moto's query adds up to page at 1 MB, twice per item it walks) is computed
  once per version of the item: kept on the item, dropped by every UpdateItem (the one write that
  changes an item in place; puts and transactions' puts make new items);
- a new item checks the 400 KB item limit once, on its total: moto sums the whole item again
  for every attribute it adds (quadratic in the attributes: 7% of the worker's time on an imported
  conversation, whose enrichment writes ~37 graph items a memory). The sum only grows as
  attributes are added, so the same items are refused; the total is the size kept above;
- a query with a `Limit` (and no start key) hands moto only the items it would walk before
  stopping, found by bisecting the partition's kept sort order (`moto_order`): moto sorts the whole
  partition with DynamoType keys first, so "the newest memory below this one" cost O(partition).
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable
from typing import Any

from moto.dynamodb.comparisons import get_filter_expression
from moto.dynamodb.exceptions import (
    ConditionalCheckFailed,
    ItemSizeTooLarge,
    MockValidationException,
    MultipleTransactionsException,
    TooManyTransactionsException,
    TransactionCanceledException,
    TransactWriteSingleOpException,
)
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoHandler

from mnemo.local import moto_order

__all__ = ["install", "installed"]

_LOCK = threading.RLock()
_REQUEST = threading.local()  # what the handler knows of the query being answered (`count_only`)
_installed = False
Key = tuple[DynamoType, DynamoType | None]
_OPS = ("ConditionCheck", "Put", "Delete", "Update")
_SIZE = "_mnemo_size"  # an item's kept size (moto's Item.size), dropped when an update changes it
_ITEM_LIMIT = 405_000  # moto's own bound for DynamoDB's 400 KB (measured between 409 and 410 KB)


def installed() -> bool:
    return _installed


def install() -> None:
    """Patch moto's DynamoDB classes (once per process)."""
    global _installed
    with _LOCK:
        if _installed:
            return
        DynamoHandler.call_action = _locked(DynamoHandler.call_action)  # type: ignore[method-assign]
        DynamoDBBackend.transact_write_items = _transact_write_items  # type: ignore[method-assign]
        DynamoDBBackend.update_item = _reindexing_update(DynamoDBBackend.update_item)  # type: ignore[method-assign]
        Table.query = _partition_query(Table.query)  # type: ignore[method-assign]
        DynamoHandler.query = _counting(DynamoHandler.query)  # type: ignore[method-assign]
        Table.put_item = _reindexing_put(Table.put_item)  # type: ignore[method-assign]
        Item.size = _sized(Item.size)  # type: ignore[method-assign,assignment]
        Item.__init__ = _item_init  # type: ignore[method-assign]
        Table.delete_item = _reindexing_delete(Table.delete_item)  # type: ignore[method-assign]
        _installed = True


def _locked(call: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(call)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return call(self, *args, **kwargs)

    return locked


# -- transactions: validate everything, then apply ------------------------------------------------
def _transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    targets: list[tuple[str, dict[str, Any], Table, dict[str, Any]]] = []  # (op type, op, table, key)
    seen: set[tuple[str, str]] = set()
    errors: list[Any] = []
    for entry in transact_items:
        if len(entry) > 1:
            raise TransactWriteSingleOpException
        op_type, op = next(iter(entry.items()))
        if op_type not in _OPS:
            raise MockValidationException("Unsupported transaction operation")
        table = self.get_table(op["TableName"])
        if op_type == "Put":
            key = {table.hash_key_attr: op["Item"][table.hash_key_attr]}
            if table.range_key_attr is not None:
                key[table.range_key_attr] = op["Item"][table.range_key_attr]
        else:
            key = op["Key"]
        marker = (table.name, str(dict(sorted(key.items()))))
        if marker in seen:
            raise MultipleTransactionsException()
        seen.add(marker)
        targets.append((op_type, op, table, key))
        current = self.get_item(table.name, key)
        condition = op.get("ConditionExpression")
        if condition is not None and not get_filter_expression(
            condition, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
        ).expr(current):
            old = current.to_json()["Attributes"] if current and op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" else None
            errors.append(("ConditionalCheckFailed", ConditionalCheckFailed().message, old))
        else:
            errors.append((None, None, None))
    if any(code is not None for code, _, _ in errors):
        raise TransactionCanceledException(errors)  # nothing was written
    before = [(table, self.get_keys_value(table, key), copy.deepcopy(self.get_item(table.name, key)))
              for _, _, table, key in targets]
    for position, (op_type, op, table, key) in enumerate(targets):
        try:
            _apply(self, op_type, op, table.name, key)
        except Exception as exc:
            for target_table, item_key, item in before:  # restore only what this transaction touched
                _restore(target_table, item_key, item)
            if isinstance(exc, MockValidationException):
                raise
            reasons: list[Any] = [(None, None, None)] * len(targets)
            reasons[position] = (type(exc).__name__, str(exc), None)
            raise TransactionCanceledException(reasons) from exc


def _apply(backend: DynamoDBBackend, op_type: str, op: dict[str, Any], table_name: str, key: dict[str, Any]) -> None:
    names: Any = op.get("ExpressionAttributeNames")  # None when absent, as moto's own transaction passes them
    values: Any = op.get("ExpressionAttributeValues")
    condition = op.get("ConditionExpression")
    if op_type == "Put":
        backend.put_item(table_name, op["Item"], condition_expression=condition,
                         expression_attribute_names=names, expression_attribute_values=values)
    elif op_type == "Delete":
        backend.delete_item(table_name, key, condition_expression=condition,
                            expression_attribute_names=names, expression_attribute_values=values)
    elif op_type == "Update":
        backend.update_item(table_name, key, update_expression=op["UpdateExpression"], condition_expression=condition,
                            expression_attribute_names=names, expression_attribute_values=values)


def _restore(table: Table, key: Key, item: Item | None) -> None:
    hash_value, range_value = key
    if item is None:
        table.delete_item(hash_value, range_value)
    elif range_value is not None:
        table.items[hash_value][range_value] = item
        _reindex(table, key, item)
    else:
        table.items[hash_value] = item  # type: ignore[assignment]  # moto types items for range-key tables
        _reindex(table, key, item)


# -- queries: read the partition or the index's posting list, not the table ----------------------
def _partition_query(query: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(query)
    def partition_query(self: Table, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name") if "index_name" in kwargs else (args[6] if len(args) > 6 else None)
        conditions = kwargs.get("hash_key_conditions") or []
        if index_name:
            if not conditions:
                return query(self, hash_key, *args, **kwargs)
            postings = _postings(self)
            wanted = dict(conditions)
            names = _index_hash_names(self, index_name)
            if names is None or set(names) != set(wanted):
                return query(self, hash_key, *args, **kwargs)
            place: moto_order.Place = (index_name, tuple(wanted[n] for n in names))
            source: dict[Any, Item] = postings.get(index_name, {}).get(place[1], {})
        elif hash_key is None:
            return query(self, hash_key, *args, **kwargs)
        elif self.range_key_attr:
            place, source = (None, hash_key), self.items.get(hash_key, {}) if hash_key in self.items else {}
        else:
            single: Any = self.items.get(hash_key) if hash_key in self.items else None  # an Item: moto types range tables
            place, source = (None, hash_key), {hash_key: single} if single is not None else {}
        if getattr(_REQUEST, "count_only", False) and len(args) >= 2 and len(kwargs.get("range_key_conditions") or []) <= 1:
            counted = _in_range(self, list(source.values()), index_name, args[0], args[1])
            return counted, len(counted), None  # the handler answers len(items) and returns no item
        walked = moto_order.walked(self, place, source, index_name, args)
        candidates = walked if walked is not None else list(source.values())
        with _LOCK:  # the override below is visible to this call only: requests are serialised
            self.all_items = lambda: candidates  # type: ignore[method-assign]
            try:
                return query(self, hash_key, *args, **kwargs)
            finally:
                del self.all_items

    return partition_query


def _counting(handler_query: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(handler_query)
    def query(self: DynamoHandler) -> Any:
        body = self.body
        _REQUEST.count_only = body.get("Select") == "COUNT" and not any(
            name in body for name in ("FilterExpression", "QueryFilter", "Limit", "ExclusiveStartKey"))
        try:
            return handler_query(self)
        finally:
            _REQUEST.count_only = False

    return query


def _in_range(table: Table, candidates: list[Item], index_name: str | None, comparison: str | None,
              operands: list[DynamoType]) -> list[Item]:
    """The candidates a query's range condition keeps (moto's own comparison); an index holds only
    items that carry its range key."""
    if index_name:
        index = next(i for i in table.all_indexes() if i.name == index_name)
        ranges = [k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE"]
        candidates = [item for item in candidates if all(item.attrs.get(name) for name in ranges)]
        range_name = ranges[0] if ranges else None
    else:
        range_name = table.range_key_attr
    if not comparison:
        return candidates
    return [item for item in candidates
            if range_name and (value := item.attrs.get(range_name)) and value.compare(comparison, operands)]


def _index_hash_names(table: Table, index_name: str) -> list[str] | None:
    for index in table.all_indexes():
        if index.name == index_name:
            return [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
    return None


def _postings(table: Table) -> dict[str, dict[tuple[Any, ...], dict[Key, Item]]]:
    """index name → hash value(s) → items, built on the first index query (one walk of the table),
    then kept current by every write."""
    postings = table.__dict__.get("_mnemo_postings")
    if postings is None:
        postings = table.__dict__["_mnemo_postings"] = {}
        table.__dict__["_mnemo_posted"] = {}
        for item in list(Table.all_items(table)):
            _reindex(table, (item.hash_key, item.range_key), item)
    return postings


def _reindex(table: Table, key: Key, item: Item | None) -> None:
    """Follow a write (item None: a delete) in the table partition's order and the index postings."""
    if table.range_key_attr is not None:
        if item is None:
            moto_order.forget(table, (None, key[0]), (key[1].value,) if key[1] is not None and key[1].type == "S" else None)
        else:
            moto_order.remember(table, (None, key[0]), item, [table.range_key_attr])
    postings = table.__dict__.get("_mnemo_postings")
    if postings is None:
        return
    posted: dict[Key, list[tuple[str, tuple[Any, ...], moto_order.Sort | None]]] = table.__dict__["_mnemo_posted"]
    for index_name, hash_values, sort in posted.pop(key, []):
        postings[index_name].get(hash_values, {}).pop(key, None)
        moto_order.forget(table, (index_name, hash_values), sort)
    if item is None:
        return
    places = []
    for index in table.all_indexes():
        names = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
        values = tuple(item.attrs.get(n) for n in names)
        if all(v is not None for v in values):
            postings.setdefault(index.name, {}).setdefault(values, {})[key] = item
            sort = moto_order.remember(table, (index.name, values), item, moto_order.sort_names(table, index.name))
            places.append((index.name, values, sort))
    if places:
        posted[key] = places


def _reindexing_put(put: Callable[..., Item]) -> Callable[..., Item]:
    @functools.wraps(put)
    def reindexing_put(self: Table, *args: Any, **kwargs: Any) -> Item:
        item = put(self, *args, **kwargs)
        _reindex(self, (item.hash_key, item.range_key), item)
        return item

    return reindexing_put


def _reindexing_delete(delete: Callable[..., Item | None]) -> Callable[..., Item | None]:
    @functools.wraps(delete)
    def reindexing_delete(self: Table, hash_key: DynamoType, range_key: DynamoType | None) -> Item | None:
        item = delete(self, hash_key, range_key)
        if item is not None:
            _reindex(self, (item.hash_key, item.range_key), None)
        return item

    return reindexing_delete


def _reindexing_update(update: Callable[..., Item]) -> Callable[..., Item]:
    """update_item changes an item in place, so its postings and its kept size follow after the fact."""

    @functools.wraps(update)
    def reindexing_update(self: DynamoDBBackend, table_name: str, key: dict[str, Any], *args: Any, **kwargs: Any) -> Item:
        try:
            item = update(self, table_name, key, *args, **kwargs)
        finally:  # a failed update may have changed the item before moto refused it
            stored = self.get_item(table_name, key)
            if stored is not None:
                stored.__dict__.pop(_SIZE, None)
        if item is not None:
            _reindex(self.get_table(table_name), (item.hash_key, item.range_key), item)
        return item

    return reindexing_update


def _item_init(self: Item, hash_key: DynamoType, range_key: DynamoType | None, attrs: dict[str, Any]) -> None:
    """moto's Item.__init__ with one size check of the whole item instead of one per attribute."""
    self.hash_key = hash_key
    self.range_key = range_key
    self.attrs = LimitedSizeDict.__new__(LimitedSizeDict)  # LimitedSizeDict still guards later updates
    dict.__init__(self.attrs, ((name, DynamoType(value)) for name, value in attrs.items()))
    if self.size() > _ITEM_LIMIT:  # moto's own sum, then kept for the queries that page by it
        raise ItemSizeTooLarge


def _sized(size: Callable[[Item], int]) -> Callable[[Item], int]:
    @functools.wraps(size)
    def sized(self: Item) -> int:
        known = self.__dict__.get(_SIZE)
        if known is None:
            known = self.__dict__[_SIZE] = size(self)
        return known

    return sized
