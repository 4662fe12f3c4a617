"""The one DynamoDB error policy and batch calls every table adapter inherits (issue 31 step 1)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from mnemo.adapters.dynamodb import table as dynamodb_table
from mnemo.adapters.dynamodb.erasure_jobs import DynamoDbErasureJobStore
from mnemo.adapters.dynamodb.graph import DynamoDbGraphStore
from mnemo.adapters.dynamodb.keys import DynamoDbKeyStore
from mnemo.adapters.dynamodb.table import DynamoDbTable
from mnemo.errors import ConflictError, DependencyError, ValidationFailed


def _client_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "vendor text"}}, "PutItem")


class _Failing:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def put_item(self, **_: Any) -> dict[str, Any]:
        raise self.exc


@pytest.mark.parametrize("store", [DynamoDbGraphStore, DynamoDbKeyStore, DynamoDbErasureJobStore])
def test_every_table_reports_throttling_as_busy_and_keeps_the_aws_code_out_of_the_message(store: type[DynamoDbTable]) -> None:
    with pytest.raises(DependencyError) as busy:
        store(_Failing(_client_error("ProvisionedThroughputExceededException")), "t")._call("put_item")
    assert "busy (throttled)" in str(busy.value) and "Exception" not in str(busy.value)
    with pytest.raises(DependencyError) as down:
        store(_Failing(_client_error("InternalServerError")), "t")._call("put_item")
    assert "unavailable; retry shortly" in str(down.value) and "InternalServerError" not in str(down.value)
    with pytest.raises(DependencyError) as unreachable:
        store(_Failing(EndpointConnectionError(endpoint_url="http://x")), "t")._call("put_item")
    assert "EndpointConnectionError" not in str(unreachable.value)
    with pytest.raises(ValidationFailed):  # a malformed request is permanent, never "retry"
        store(_Failing(_client_error("ValidationException")), "t")._call("put_item")


def test_a_failed_condition_is_a_conflict_only_where_the_callers_expect_one() -> None:
    with pytest.raises(ConflictError):
        DynamoDbErasureJobStore(_Failing(_client_error("ConditionalCheckFailedException")), "t")._call("put_item")
    with pytest.raises(DependencyError):  # the graph store's callers do not expect a conflict
        DynamoDbGraphStore(_Failing(_client_error("ConditionalCheckFailedException")), "t")._call("put_item")


class _Unprocessed:
    """Leaves the first `stubborn` rounds' requests unprocessed, then takes them."""

    def __init__(self, stubborn: int) -> None:
        self.stubborn, self.calls, self.written = stubborn, 0, 0

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.stubborn:
            self.stubborn -= 1
            return {"UnprocessedItems": RequestItems}
        self.written += len(RequestItems["t"])
        return {}


def test_batch_write_chunks_by_25_resends_unprocessed_items_and_gives_up_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynamodb_table.time, "sleep", lambda _: None)
    client = _Unprocessed(stubborn=2)
    DynamoDbTable(client, "t")._batch_write([{"PutRequest": {"Item": {}}}] * 30)
    assert client.written == 30 and client.calls == 4  # 25 (twice refused, then taken) + 5
    refusing = _Unprocessed(stubborn=1000)
    with pytest.raises(DependencyError, match="busy"):
        DynamoDbTable(refusing, "t")._batch_write([{"PutRequest": {"Item": {}}}])
    assert refusing.written == 0 and refusing.calls == 8
