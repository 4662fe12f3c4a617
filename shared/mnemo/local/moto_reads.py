"""moto's DynamoDB item reads answered as plain JSON, without moto's model-driven serialiser.

Local stack and tests only. moto 5.2 serialises every response by walking botocore's output shape
value by value; for reads that return items this is the whole cost of the call: a search's
hydration (one BatchGetItem of ~57 memories) took 240 ms, almost all in moto's serialiser
(bench/search_latency.py). For these operations moto has already put every item in DynamoDB's
wire form ({"S": ...}, {"N": ...}, ...), so the JSON body is that dict, dumped: the bytes botocore
parses are the same (tests/integration/local/test_moto_reads.py compares both serialisers on items of
every attribute type). Errors and every other operation still go through moto's serialiser.

`install()` patches moto's class in this process (idempotent).
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from moto.core.utils import unix_time
from moto.dynamodb.responses import DynamoResult

__all__ = ["ITEM_READS", "install", "installed"]

ITEM_READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan"})
_original = DynamoResult.execute_result


def installed() -> bool:
    return DynamoResult.execute_result is not _original


def install() -> None:
    DynamoResult.execute_result = _execute_result  # type: ignore[method-assign,assignment]


def _execute_result(self: DynamoResult, context: Any) -> Any:
    if context.operation_model.name not in ITEM_READS:
        return _original(self, context)
    body = json.dumps(self.result, default=_wire, separators=(",", ":"))
    version = context.service_model.metadata.get("jsonVersion", "1.0")
    return 200, {"Content-Type": f"application/x-amz-json-{version}"}, body


def _wire(value: Any) -> Any:
    """What moto's JSON serialiser writes for the two non-JSON types its results hold."""
    if isinstance(value, bytes):  # B and BS values: moto hands them over decoded
        return base64.b64encode(value).decode()
    if isinstance(value, datetime):
        return unix_time(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")
