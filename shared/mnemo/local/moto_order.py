"""Sort order for the local stack's moto queries: what a `Limit` query walks, found by bisection.

A query with a `Limit` reads a few items at one end of a range of its partition ("the newest memory
below this one", "five memories naming this entity"), which DynamoDB finds by seeking in the sort
key. moto sorts the whole partition (DynamoType keys) and walks it from the top on every call, so
those reads cost O(partition): the worker's capture-order read grew from 5 to 14 ms per enriched
memory as one user went from 1,000 to 5,000 memories, the largest cost that grew with the tenant.

Each partition of a table, and each posting list of a secondary index, gets an `Order` on its first
bounded query: its items sorted by their plain string keys, in moto's order (index range key, table
hash key, table range key; a table's range key), kept current by every write after that. `walked()`
bisects the query's range condition and hands moto only the items it would walk before stopping:
up to `Limit` items that meet the condition and the one after them in walk order (where moto breaks
and sets LastEvaluatedKey). moto skips items outside the condition without counting them, so its
answer (items, scanned count, LastEvaluatedKey) is the same; `walked()` answers None (moto reads
every candidate, as before) for number or binary keys and for anything else it does not model.
"""

from __future__ import annotations

import bisect
import operator
from typing import Any

from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table

__all__ = ["Order", "forget", "remember", "sort_names", "walked"]

_ORDERS = "_mnemo_orders"  # on a Table: place -> Order, or None once a key there was not a string
_SORT_NAMES = "_mnemo_sort_names"  # on a Table: index name (None: the table) -> `sort_names`
Place = tuple[str | None, Any]  # (index name, its hash values) or (None, a table partition's hash key)
Sort = tuple[str, ...]
_FIRST = operator.itemgetter(0)
_UNSORTABLE = ("",)  # a sentinel: some key value is not a string


class Order:
    """One partition's items by sort key: a sorted list of keys and the item of each."""

    def __init__(self, pairs: list[tuple[Sort, Item]]) -> None:
        pairs.sort(key=_FIRST)
        self.keys = [sort for sort, _ in pairs]
        self.items = dict(pairs)

    def put(self, sort: Sort, item: Item) -> None:
        if sort not in self.items:
            bisect.insort(self.keys, sort)
        self.items[sort] = item

    def discard(self, sort: Sort) -> None:
        if self.items.pop(sort, None) is not None:
            del self.keys[bisect.bisect_left(self.keys, sort)]


def sort_names(table: Table, index_name: str | None) -> list[str] | None:
    """The attributes moto sorts a query's items by, or None where this module does not model it (an
    index with no or several range keys, a table without a range key). Kept per table: every write
    asks, once per index."""
    known = table.__dict__.setdefault(_SORT_NAMES, {})
    if index_name not in known:
        known[index_name] = _sort_names(table, index_name)
    return known[index_name]


def _sort_names(table: Table, index_name: str | None) -> list[str] | None:
    if table.range_key_attr is None:
        return None
    if index_name is None:
        return [table.range_key_attr]
    ranges = [k["AttributeName"] for k in table.get_index(index_name).schema if k["KeyType"] == "RANGE"]
    return [ranges[0], table.hash_key_attr, table.range_key_attr] if len(ranges) == 1 else None


def sort_of(item: Item, names: list[str]) -> Sort | None:
    """The item's plain sort key; None when it lacks the first (not in an index's order), `_UNSORTABLE`
    when a value is not a string."""
    values = [item.attrs.get(name) for name in names]
    if values[0] is None:
        return None
    if any(v is None or v.type != "S" for v in values):
        return _UNSORTABLE
    return tuple(v.value for v in values)  # type: ignore[union-attr]


def remember(table: Table, place: Place, item: Item, names: list[str] | None) -> Sort | None:
    """Put a written item into the order of `place`, if that order exists; returns its sort key (kept
    with the item's postings, so the order can forget it after an update changed the item in place)."""
    sort = sort_of(item, names) if names else None
    orders = table.__dict__.get(_ORDERS)
    order = orders.get(place) if orders else None
    if order is not None and sort is not None:
        if sort is _UNSORTABLE:
            orders[place] = None  # type: ignore[index]
        else:
            order.put(sort, item)
    return sort


def forget(table: Table, place: Place, sort: Sort | None) -> None:
    orders = table.__dict__.get(_ORDERS)
    order = orders.get(place) if orders else None
    if order is not None and sort is not None and sort is not _UNSORTABLE:
        order.discard(sort)


def _order(table: Table, place: Place, source: dict[Any, Item], names: list[str]) -> Order | None:
    orders = table.__dict__.setdefault(_ORDERS, {})
    if place not in orders:
        pairs = []
        for item in source.values():
            sort = sort_of(item, names)
            if sort is _UNSORTABLE:
                orders[place] = None
                return None
            if sort is not None:
                pairs.append((sort, item))
        orders[place] = Order(pairs)
    return orders[place]


def _span(keys: list[Sort], comparison: str | None, operands: list[str]) -> tuple[int, int] | None:
    """The slice of `keys` whose first value meets the range condition (every supported condition on
    strings keeps a contiguous run of the sorted keys), or None for a condition not modelled here."""
    def below(value: str) -> int:
        return bisect.bisect_left(keys, value, key=_FIRST)

    def up_to(value: str) -> int:
        return bisect.bisect_right(keys, value, key=_FIRST)

    if comparison is None:
        return 0, len(keys)
    if comparison in ("<", "LT"):
        return 0, below(operands[0])
    if comparison in ("<=", "LE"):
        return 0, up_to(operands[0])
    if comparison in (">", "GT"):
        return up_to(operands[0]), len(keys)
    if comparison in (">=", "GE"):
        return below(operands[0]), len(keys)
    if comparison in ("=", "EQ"):
        return below(operands[0]), up_to(operands[0])
    if comparison == "BETWEEN":
        lo = below(operands[0])
        return lo, max(lo, up_to(operands[1]))
    if comparison == "BEGINS_WITH":
        prefix = operands[0]
        if not prefix:
            return 0, len(keys)
        if ord(prefix[-1]) == 0x10FFFF:
            return None
        return below(prefix), below(prefix[:-1] + chr(ord(prefix[-1]) + 1))  # the strings starting with it
    return None


def walked(table: Table, place: Place, source: dict[Any, Item], index_name: str | None,
           args: tuple[Any, ...]) -> list[Item] | None:
    """The items moto's `Table.query` needs to answer a `Limit` query on `source` (the partition or
    posting list of `place`), or None: hand moto every candidate. `args` are `Table.query`'s
    positional arguments after the hash key."""
    if len(args) < 5 or args[2] is None or args[3] or len(source) <= args[2]:
        return None  # no Limit, a start key, or nothing to save
    comparison, operands, limit, forward = args[0], args[1], args[2], args[4]
    names = sort_names(table, index_name)
    if names is None or (comparison and any(not isinstance(o, DynamoType) or o.type != "S" for o in operands)):
        return None
    order = _order(table, place, source, names)
    if order is None:
        return None
    span = _span(order.keys, comparison, [o.value for o in operands] if comparison else [])
    if span is None:
        return None
    lo, hi = span
    if forward:
        rows = list(range(lo, min(hi, lo + limit)))
        after = lo + limit if hi - lo >= limit and lo + limit < len(order.keys) else None
    else:
        rows = list(range(max(lo, hi - limit), hi))
        after = hi - limit - 1 if hi - lo >= limit and hi - limit - 1 >= 0 else None
    if after is not None:
        rows.append(after)
    return [order.items[order.keys[row]] for row in rows]
