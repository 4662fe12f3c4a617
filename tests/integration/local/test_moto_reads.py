"""The local stack's plain-JSON item reads answer exactly what moto's own serialiser answers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from mnemo.local import moto_reads

TABLE = "moto-reads"
ITEMS = [
    {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": "1.50"}, "b": {"B": b"\x00\xffbin"}, "t": {"BOOL": True},
     "z": {"NULL": True}, "l": {"L": [{"S": "x"}, {"N": "2"}, {"M": {"deep": {"L": [{"B": b"\x01"}]}}}]},
     "m": {"M": {"k": {"S": "v"}, "e": {"M": {}}, "ss": {"SS": ["p", "q"]}}}, "ns": {"NS": ["1", "2.5"]},
     "bs": {"BS": [b"\x02", b"\x03"]}, "u": {"S": "üñí 😀"}, "empty": {"S": ""}},
    {"pk": {"S": "a"}, "sk": {"S": "2"}, "g": {"S": "one"}},
    {"pk": {"S": "b"}, "sk": {"S": "1"}, "g": {"S": "one"}, "n": {"N": "-0.001"}},
]


@pytest.fixture
def dynamodb(aws: dict[str, str]) -> Iterator[Any]:
    from mnemo.adapters.aws import client

    db = client("dynamodb")
    db.create_table(
        TableName=TABLE, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
    )
    for item in ITEMS:
        db.put_item(TableName=TABLE, Item=item)
    yield db


READS: dict[str, Callable[[Any], Any]] = {
    "GetItem": lambda db: db.get_item(TableName=TABLE, Key={"pk": {"S": "a"}, "sk": {"S": "1"}}),
    "GetItem (missing)": lambda db: db.get_item(TableName=TABLE, Key={"pk": {"S": "nope"}, "sk": {"S": "1"}}),
    "GetItem (projection)": lambda db: db.get_item(
        TableName=TABLE, Key={"pk": {"S": "a"}, "sk": {"S": "1"}}, ProjectionExpression="l[2].#m, b",
        ExpressionAttributeNames={"#m": "M"}),
    "BatchGetItem": lambda db: db.batch_get_item(RequestItems={TABLE: {"Keys": [
        {"pk": {"S": k}, "sk": {"S": s}} for k, s in (("a", "1"), ("a", "2"), ("b", "1"), ("c", "9"))]}},
        ReturnConsumedCapacity="TOTAL"),
    "Query": lambda db: db.query(TableName=TABLE, KeyConditionExpression="pk = :p",
                                 ExpressionAttributeValues={":p": {"S": "a"}}, Limit=1),
    "Query (index)": lambda db: db.query(TableName=TABLE, IndexName="by_g", KeyConditionExpression="g = :g",
                                         ExpressionAttributeValues={":g": {"S": "one"}}, Select="COUNT"),
    "Scan": lambda db: db.scan(TableName=TABLE, FilterExpression="attribute_exists(n)"),
}


def _strip(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


@pytest.mark.parametrize("read", list(READS))
def test_item_reads_parse_to_what_motos_serialiser_gives(dynamodb: Any, monkeypatch: pytest.MonkeyPatch,
                                                         read: str) -> None:
    # Given moto's own serialiser's answer (a local stack started earlier in this process installs the
    # plain-JSON path process-wide: take it out for this read; monkeypatch puts back what was there)
    monkeypatch.setattr(moto_reads.DynamoResult, "execute_result", moto_reads._original)
    assert not moto_reads.installed()
    expected = _strip(READS[read](dynamodb))
    # When the plain-JSON path answers the same read
    monkeypatch.setattr(moto_reads.DynamoResult, "execute_result", moto_reads._execute_result)  # what install() does
    assert moto_reads.installed()
    got = _strip(READS[read](dynamodb))
    # Then botocore parses the very same response
    assert got == expected


def test_errors_and_writes_still_use_motos_serialiser(dynamodb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.exceptions import ClientError

    monkeypatch.setattr(moto_reads.DynamoResult, "execute_result", moto_reads._execute_result)
    with pytest.raises(ClientError) as missing:
        dynamodb.get_item(TableName="no-such-table", Key={"pk": {"S": "a"}, "sk": {"S": "1"}})
    assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"
    put = dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": "c"}, "sk": {"S": "1"}, "n": {"N": "3"}},
                            ReturnValues="ALL_OLD", ReturnConsumedCapacity="TOTAL")
    assert put["ConsumedCapacity"]["TableName"] == TABLE
    assert Decimal(dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": "c"}, "sk": {"S": "1"}})["Item"]["n"]["N"]) == 3
