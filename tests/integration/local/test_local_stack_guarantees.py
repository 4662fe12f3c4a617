"""The local stack keeps DynamoDB's guarantees (issue 16 item 2, issue 14): concurrent edits lose no
acknowledged write, transactions are all-or-nothing, and the O(key) query paths answer exactly
what moto's O(table) ones do."""

from __future__ import annotations

import functools
import random
import threading

import pytest

from mnemo.domain.commands import CaptureCommand, EditCommand
from mnemo.errors import ConflictError
from tests.integration.local.test_local_stack import clean_env  # noqa: F401 - fixture

EDITORS = 16
KEY = "mn_guarantees_0123456789abcdefghijklmnop"


@pytest.fixture
def stack(clean_env):  # noqa: F811
    from mnemo.local.server import LocalStack

    local = LocalStack(KEY)
    local.start()
    yield local
    local.stop(forget=True)


def test_concurrent_appends_keep_every_acknowledged_edit(stack) -> None:
    # Given a memory in a tenant with other data (the enrichment poller working on it meanwhile),
    # and editors both in process and over moto's HTTP server (its request threads)
    from mnemo import bootstrap

    services = stack.container
    principal = services.keys.authenticate(KEY)
    for i in range(30):
        services.memories.capture(principal, CaptureCommand(raw=f"padding note {i}", as_user=True))
    memory = services.memories.capture(principal, CaptureCommand(raw="shopping list:", as_user=True))
    over_http = bootstrap.Container(services.settings)  # clients from AWS_ENDPOINT_URL_*: the HTTP server
    acknowledged: list[str] = []
    refused: list[str] = []
    start = threading.Barrier(EDITORS)

    def edit(i: int) -> None:
        token = f"item-{i:02d}"
        memories = (services if i % 2 else over_http).memories
        start.wait()
        try:
            memories.edit(principal, memory.id, EditCommand(edit_request=f"append: {token}"))
            acknowledged.append(token)
        except ConflictError:  # 409: refused, the caller knows it was not applied
            refused.append(token)

    # When 16 editors append at once
    threads = [threading.Thread(target=edit, args=(i,)) for i in range(EDITORS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    # Then every acknowledged append is in the final text, once, and nothing refused is
    final = services.memories.get(principal, memory.id)
    assert len(acknowledged) + len(refused) == EDITORS and acknowledged
    for token in acknowledged:
        assert final.raw.count(token) == 1, (token, final.raw)
    for token in refused:
        assert token not in final.raw
    assert final.version == 1 + len(acknowledged)
    edits = [a for a in services.memories.history(principal, memory.id) if a.action == "edited"]
    assert sorted(a.version for a in edits) == list(range(2, 2 + len(acknowledged)))


@pytest.fixture
def table(aws):
    from mnemo.adapters.aws import client
    from mnemo.local import moto_dynamodb

    moto_dynamodb.install()
    return client("dynamodb"), aws["MemoriesTable"]


def _item(pk: str, sk: str, **attrs: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": pk}, "sk": {"S": sk}, **{k: {"S": v} for k, v in attrs.items()}}


def test_a_failed_transaction_writes_nothing_and_keeps_other_writes(table) -> None:
    db, name = table
    db.put_item(TableName=name, Item=_item("A", "MEMORY", text="a1"))
    db.put_item(TableName=name, Item=_item("B", "MEMORY", text="b1"))
    # Given a transaction whose first write is fine and whose second condition fails
    with pytest.raises(db.exceptions.TransactionCanceledException) as caught:
        db.transact_write_items(TransactItems=[
            {"Put": {"TableName": name, "Item": _item("A", "MEMORY", text="a2")}},
            {"Put": {"TableName": name, "Item": _item("B", "MEMORY", text="b2"),
                     "ConditionExpression": "attribute_not_exists(pk)"}},
        ])
    reasons = [r["Code"] for r in caught.value.response["CancellationReasons"]]
    assert reasons == ["None", "ConditionalCheckFailed"]
    # Then neither item changed
    assert db.get_item(TableName=name, Key=_item("A", "MEMORY"))["Item"]["text"] == {"S": "a1"}
    assert db.get_item(TableName=name, Key=_item("B", "MEMORY"))["Item"]["text"] == {"S": "b1"}
    # And a transaction failing while it applies (a type error in an update) is rolled back too
    with pytest.raises(db.exceptions.ClientError):
        db.transact_write_items(TransactItems=[
            {"Put": {"TableName": name, "Item": _item("C", "MEMORY", text="c1")}},
            {"Update": {"TableName": name, "Key": _item("A", "MEMORY"), "UpdateExpression": "SET n = n + :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        ])
    assert "Item" not in db.get_item(TableName=name, Key=_item("C", "MEMORY"))
    assert db.get_item(TableName=name, Key=_item("A", "MEMORY"))["Item"] == _item("A", "MEMORY", text="a1")


def test_keyed_queries_answer_what_moto_answers_after_random_writes(table) -> None:
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.dynamo_type import DynamoType

    db, name = table
    rng = random.Random(7)
    partitions = [f"P{i}" for i in range(6)]
    for step in range(400):  # puts, GSI-key moves by UpdateItem, deletes, transactions
        pk, sk = rng.choice(partitions), f"S{rng.randrange(12)}"
        roll = rng.random()
        if roll < 0.5:
            db.put_item(TableName=name, Item=_item(pk, sk, gsi2pk=rng.choice("xyz"), gsi2sk=f"{step:04d}"))
        elif roll < 0.7:
            db.update_item(TableName=name, Key=_item(pk, sk), UpdateExpression="SET gsi2pk = :g, gsi2sk = :s",
                           ExpressionAttributeValues={":g": {"S": rng.choice("xyz")}, ":s": {"S": f"{step:04d}"}})
        elif roll < 0.9:
            db.delete_item(TableName=name, Key=_item(pk, sk))
        else:
            db.transact_write_items(TransactItems=[
                {"Delete": {"TableName": name, "Key": _item(pk, sk)}},
                {"Put": {"TableName": name, "Item": _item(pk, "S99", gsi2pk="x", gsi2sk=f"{step:04d}")}},
            ])
        if step % 50:
            continue
        moto_table = dynamodb_backends["123456789012"]["us-east-1"].get_table(name)
        same = functools.partial(_same_answer, moto_table)
        # every read, then bounded reads (a Limit, a range condition, either direction) whose shortcut
        # must stop where moto stops, LastEvaluatedKey included
        bounded = [(None, [], None), (None, [], 1), (None, [], 3), ("<", ["0200"], 2), (">=", ["0100"], 4),
                   ("BETWEEN", ["0050", "0300"], 3), ("BEGINS_WITH", ["01"], 2), ("<=", ["0000"], 1), ("LT", ["0300"], 2)]
        for value in "xyz":
            key = DynamoType({"S": value})
            for comparison, operands, limit in bounded:
                for forward in (True, False):
                    same(key, comparison, [DynamoType({"S": o}) for o in operands], limit, None, forward, None, "gsi2",
                         hash_key_conditions=[("gsi2pk", key)])
        for pk in partitions:
            key = DynamoType({"S": pk})
            for comparison, operands, limit in [(None, [], None), (None, [], 2), ("<", ["S5"], 2), (">", ["S1"], 1)]:
                for forward in (True, False):
                    same(key, comparison, [DynamoType({"S": o}) for o in operands], limit, None, forward, None)


def test_a_limit_query_hands_moto_only_what_it_walks(table, monkeypatch) -> None:
    """"The newest item below this key" in a big partition reads Limit + 1 items, not the partition,
    on the table and on an index, and answers what moto answers reading every item."""
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.dynamo_type import DynamoType

    from mnemo.local import moto_order

    db, name = table
    for n in range(2000):  # one partition; its gsi2 posting list holds every item too
        db.put_item(TableName=name, Item=_item("P", f"S{n:05d}", gsi2pk="x", gsi2sk=f"{n:05d}"))
    handed: list[int] = []  # how many items each bounded query handed moto
    walked = moto_order.walked

    def counting(*args: object) -> object:
        items = walked(*args)  # type: ignore[arg-type]
        handed.append(-1 if items is None else len(items))
        return items

    monkeypatch.setattr(moto_order, "walked", counting)
    moto_table = dynamodb_backends["123456789012"]["us-east-1"].get_table(name)
    same = functools.partial(_same_answer, moto_table)
    for forward in (True, False):
        same(DynamoType({"S": "x"}), "<", [DynamoType({"S": "01000"})], 3, None, forward, None, "gsi2",
             hash_key_conditions=[("gsi2pk", DynamoType({"S": "x"}))])
        same(DynamoType({"S": "P"}), "BEGINS_WITH", [DynamoType({"S": "S015"})], 5, None, forward, None)
    assert handed == [4, 6, 4, 6]  # Limit items and the one moto stops at
    # And the client sees the newest items below the key, LastEvaluatedKey set
    page = db.query(TableName=name, IndexName="gsi2", KeyConditionExpression="gsi2pk = :p AND gsi2sk < :k",
                    ExpressionAttributeValues={":p": {"S": "x"}, ":k": {"S": "01000"}}, Limit=2, ScanIndexForward=False)
    assert [i["gsi2sk"]["S"] for i in page["Items"]] == ["00999", "00998"] and "LastEvaluatedKey" in page
    # Positive control for the bound: an item written after the order was built is found by it
    db.put_item(TableName=name, Item=_item("P", "S00999x", gsi2pk="x", gsi2sk="00999x"))
    page = db.query(TableName=name, IndexName="gsi2", KeyConditionExpression="gsi2pk = :p AND gsi2sk < :k",
                    ExpressionAttributeValues={":p": {"S": "x"}, ":k": {"S": "01000"}}, Limit=1, ScanIndexForward=False)
    assert [i["gsi2sk"]["S"] for i in page["Items"]] == ["00999x"]


def test_a_limit_query_over_number_keys_is_left_to_moto(table) -> None:
    """A partition whose sort key is a number (not modelled by the kept order) is answered by moto
    reading every candidate, as before; the same query on string keys uses the order."""
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.dynamo_type import DynamoType

    db, _ = table
    for name, kind in (("numbered", "N"), ("named", "S")):
        db.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": kind}])
        for n in range(30):
            db.put_item(TableName=name, Item={"pk": {"S": "P"}, "sk": {kind: str(n) if kind == "N" else f"{n:03d}"}})
        bound = {kind: "20" if kind == "N" else "020"}
        page = db.query(TableName=name, KeyConditionExpression="pk = :p AND sk < :k", Limit=2, ScanIndexForward=False,
                        ExpressionAttributeValues={":p": {"S": "P"}, ":k": bound})
        assert [i["sk"][kind] for i in page["Items"]] == (["19", "18"] if kind == "N" else ["019", "018"])
        moto_table = dynamodb_backends["123456789012"]["us-east-1"].get_table(name)
        kept = moto_table.__dict__.get("_mnemo_orders", {}).get((None, DynamoType({"S": "P"})))
        assert (kept is None) == (kind == "N")  # none for numbers, kept (and used) for strings
        _same_answer(moto_table, DynamoType({"S": "P"}), "<", [DynamoType(bound)], 2, None, False, None)


def _same_answer(moto_table: object, key: object, *args: object, **kwargs: object) -> None:
    """The patched query and moto's own answer alike: items, scanned count and LastEvaluatedKey."""
    from moto.dynamodb.models.table import Table

    original = Table.query.__wrapped__  # type: ignore[attr-defined]
    ours, theirs = Table.query(moto_table, key, *args, **kwargs), original(moto_table, key, *args, **kwargs)
    assert ([i.to_json() for i in ours[0]], ours[1:]) == ([i.to_json() for i in theirs[0]], theirs[1:]), args


def test_a_count_answers_what_reading_every_page_counts(table) -> None:
    """`Select=COUNT` is counted over the key's items directly, in one page (how `GET /v1/status`
    counts a tenant's pending memories); reading the same query's items page by page agrees."""
    db, name = table
    rng = random.Random(11)
    filler = "f" * 5000  # 700 items of 5 KB: moto pages a read at 1 MB, so the reads below page
    for step in range(700):
        db.put_item(TableName=name, Item=_item(f"P{step % 3}", f"S{step:04d}", gsi2pk=rng.choice("xy"),
                                               gsi2sk=f"{rng.randrange(1000):04d}", filler=filler))
    for step in range(0, 700, 7):  # some leave the index, some move to another key
        db.update_item(TableName=name, Key=_item(f"P{step % 3}", f"S{step:04d}"), UpdateExpression="REMOVE gsi2sk")

    def read_count(**query: object) -> int:
        pages = db.get_paginator("query").paginate(TableName=name, **query)
        return sum(len(page["Items"]) for page in pages)

    conditions = [("gsi2pk = :k", {}), ("gsi2pk = :k AND gsi2sk < :a", {":a": {"S": "0500"}}),
                  ("gsi2pk = :k AND gsi2sk BETWEEN :a AND :b", {":a": {"S": "0100"}, ":b": {"S": "0300"}}),
                  ("gsi2pk = :k AND begins_with(gsi2sk, :a)", {":a": {"S": "01"}})]
    for value in "xyz":
        for condition, values in conditions:
            query = {"IndexName": "gsi2", "KeyConditionExpression": condition,
                     "ExpressionAttributeValues": {":k": {"S": value}, **values}}
            counted = db.query(TableName=name, Select="COUNT", **query)
            assert "LastEvaluatedKey" not in counted
            assert counted["Count"] == read_count(**query), (value, condition)
    for pk in ("P0", "P1", "nobody"):
        query = {"KeyConditionExpression": "pk = :k AND sk >= :a", "ExpressionAttributeValues": {":k": {"S": pk}, ":a": {"S": "S0350"}}}
        assert db.query(TableName=name, Select="COUNT", **query)["Count"] == read_count(**query)
    # Positive controls: the counts are not trivially zero, and the full read did page
    assert db.query(TableName=name, Select="COUNT", IndexName="gsi2", KeyConditionExpression="gsi2pk = :k",
                    ExpressionAttributeValues={":k": {"S": "x"}})["Count"] > 250
    first = db.query(TableName=name, IndexName="gsi2", KeyConditionExpression="gsi2pk = :k",
                     ExpressionAttributeValues={":k": {"S": "x"}})
    assert "LastEvaluatedKey" in first


def test_an_items_kept_size_follows_its_updates(table) -> None:
    """The size moto's query pages by is kept per item and recomputed after an update changes it."""
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    db, name = table
    db.put_item(TableName=name, Item=_item("S", "MEMORY", text="short"))
    moto_table = dynamodb_backends["123456789012"]["us-east-1"].get_table(name)
    stored = moto_table.get_item(DynamoType({"S": "S"}), DynamoType({"S": "MEMORY"}))
    fresh = Item.size.__wrapped__  # type: ignore[attr-defined] - moto's own computation
    db.query(TableName=name, KeyConditionExpression="pk = :k", ExpressionAttributeValues={":k": {"S": "S"}})
    small = stored.size()
    assert small == fresh(stored)
    db.update_item(TableName=name, Key=_item("S", "MEMORY"), UpdateExpression="SET #t = :t",
                   ExpressionAttributeNames={"#t": "text"}, ExpressionAttributeValues={":t": {"S": "x" * 5000}})
    assert stored.size() == fresh(stored) > small + 4000
    # and a refused update (its condition fails) leaves a size that still matches the item
    with pytest.raises(db.exceptions.ConditionalCheckFailedException):
        db.update_item(TableName=name, Key=_item("S", "MEMORY"), UpdateExpression="SET #t = :t",
                       ConditionExpression="attribute_not_exists(pk)", ExpressionAttributeNames={"#t": "text"},
                       ExpressionAttributeValues={":t": {"S": "y"}})
    assert stored.size() == fresh(stored)


def test_the_item_size_limit_holds_at_its_boundary_for_puts_and_updates(table) -> None:
    """A new item is size-checked once, on its total (moto sums it again per attribute): the same
    items are refused, to the byte, and an update that grows an item past the limit still is."""
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.utilities import bytesize

    db, name = table
    limit = 405_000  # moto's bound for DynamoDB's 400 KB

    def item_of_total(total: int) -> dict[str, dict[str, str]]:
        attrs = {"pk": {"S": "BIG"}, "sk": {"S": "MEMORY"}, **{f"a{i}": {"S": "x" * 4000} for i in range(99)}}
        used = sum(bytesize(k) + DynamoType(v).size() for k, v in attrs.items()) + bytesize("last")
        return {**attrs, "last": {"S": "y" * (total - used)}}

    db.put_item(TableName=name, Item=item_of_total(limit))  # exactly at the limit: accepted
    got = db.get_item(TableName=name, Key=_item("BIG", "MEMORY"))["Item"]
    assert len(got) == 102 and got["last"] == item_of_total(limit)["last"]
    with pytest.raises(db.exceptions.ClientError, match="Item size has exceeded the maximum allowed size"):
        db.put_item(TableName=name, Item=item_of_total(limit + 1))
    with pytest.raises(db.exceptions.ClientError, match="Item size"):
        db.update_item(TableName=name, Key=_item("BIG", "MEMORY"), UpdateExpression="SET extra = :e",
                       ExpressionAttributeValues={":e": {"S": "z"}})
    assert "extra" not in db.get_item(TableName=name, Key=_item("BIG", "MEMORY"))["Item"]


def test_a_remembered_update_expression_applies_afresh_to_every_item(table) -> None:
    """moto_expressions shares one parsed UpdateExpression tree per expression: applying it again, to the same item or
    another, in an UpdateItem or a transaction, must give what a fresh parse gives."""
    from mnemo.local import moto_expressions

    moto_expressions.install()
    assert moto_expressions._parsed_update.cache_info().maxsize
    db, name = table
    expression = "SET n = if_not_exists(n, :zero) + :one, seen = list_append(if_not_exists(seen, :none), :me) ADD tags :t"

    def bump(sk: str, tag: str) -> None:
        db.update_item(TableName=name, Key=_item("U", sk), UpdateExpression=expression,
                       ExpressionAttributeValues={":zero": {"N": "0"}, ":one": {"N": "1"}, ":none": {"L": []},
                                                  ":me": {"L": [{"S": tag}]}, ":t": {"SS": [tag]}})

    for round_ in range(3):
        for sk in ("A", "B"):
            bump(sk, f"{sk}{round_}")
    db.transact_write_items(TransactItems=[{"Update": {
        "TableName": name, "Key": _item("U", "A"), "UpdateExpression": expression,
        "ExpressionAttributeValues": {":zero": {"N": "0"}, ":one": {"N": "1"}, ":none": {"L": []},
                                      ":me": {"L": [{"S": "tx"}]}, ":t": {"SS": ["tx"]}}}}])
    a, b = (db.get_item(TableName=name, Key=_item("U", sk))["Item"] for sk in ("A", "B"))
    assert (a["n"], b["n"]) == ({"N": "4"}, {"N": "3"})
    assert [v["S"] for v in a["seen"]["L"]] == ["A0", "A1", "A2", "tx"]
    assert [v["S"] for v in b["seen"]["L"]] == ["B0", "B1", "B2"]
    assert set(b["tags"]["SS"]) == {"B0", "B1", "B2"}
    assert moto_expressions._parsed_update.cache_info().hits >= 6
    for _ in range(2):  # a parse error is raised every time, never remembered
        with pytest.raises(db.exceptions.ClientError, match="Invalid UpdateExpression"):
            db.update_item(TableName=name, Key=_item("U", "A"), UpdateExpression="SET = broken")


def test_a_remembered_condition_expression_takes_each_requests_values(table) -> None:
    """The lexed ConditionExpression is shared; names and values are still each request's own."""
    from mnemo.local import moto_expressions

    moto_expressions.install()
    db, name = table
    condition = "attribute_not_exists(pk) OR (#v = :v AND size(#t) < :max)"

    def put(sk: str, version: int, expected: int, longest: int = 10) -> None:
        db.put_item(TableName=name, Item={**_item("C", sk, t="short"), "v": {"N": str(version)}},
                    ConditionExpression=condition, ExpressionAttributeNames={"#v": "v", "#t": "t"},
                    ExpressionAttributeValues={":v": {"N": str(expected)}, ":max": {"N": str(longest)}})

    before = moto_expressions._lexed_condition.cache_info().hits
    put("A", 1, 0)  # new items pass on attribute_not_exists
    put("B", 1, 0)
    put("A", 2, 1)  # the stored version matches this request's :v
    with pytest.raises(db.exceptions.ConditionalCheckFailedException):
        put("A", 3, 1)  # a stale :v: the previous request's value must not linger
    with pytest.raises(db.exceptions.ConditionalCheckFailedException):
        put("B", 2, 1, longest=5)  # the right :v, but the stored "short" is not shorter than this :max
    put("B", 2, 1)  # the same, with the default :max
    assert [db.get_item(TableName=name, Key=_item("C", sk))["Item"]["v"]["N"] for sk in "AB"] == ["2", "2"]
    assert moto_expressions._lexed_condition.cache_info().hits - before >= 5
    remembered = moto_expressions._lexed_condition.cache_info().currsize
    for _ in range(2):  # a lexing error is raised every time (as moto raises it), never remembered
        with pytest.raises(ValueError, match="Cannot parse condition"):
            db.put_item(TableName=name, Item=_item("C", "Z"), ConditionExpression="pk ~ :x",
                        ExpressionAttributeValues={":x": {"S": "x"}})
    assert moto_expressions._lexed_condition.cache_info().currsize == remembered
