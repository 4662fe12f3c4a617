"""Cost of one DynamoDB call on the local stack's moto as the table grows, before and after
mnemo.local.moto_dynamodb (+ in-process clients), each in a fresh process of the same run.

GetItem, a table Query, a GSI Query (Limit 5, a partition holding a tenth of the table) and a
two-item TransactWriteItems (an edit: the memory + its history item), ms per call at each size.

    PYTHONPATH=shared .venv/bin/python bench/moto_calls_bench.py [--sizes 100,1000,5000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))


def measure(mode: str, sizes: list[int]) -> list[dict[str, Any]]:
    import logging

    import boto3

    from mnemo.local.server import start_moto

    os.environ.update(AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local", AWS_DEFAULT_REGION="us-east-1")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server, endpoint = start_moto()
    db = boto3.client("dynamodb", endpoint_url=endpoint)
    if mode == "after":
        from mnemo.local.inprocess import answer_in_process
        from mnemo.local.moto_dynamodb import install

        install()
        answer_in_process(db)
    db.create_table(
        TableName="t", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]}])

    def per_call(call: Callable[[], Any], repeat: int) -> float:
        started = time.perf_counter()
        for _ in range(repeat):
            call()
        return round((time.perf_counter() - started) / repeat * 1000, 2)

    key = {"pk": {"S": "p1"}, "sk": {"S": "M"}}
    edit = [{"Put": {"TableName": "t", "Item": {**key, "body": {"S": "y"}}}},
            {"Put": {"TableName": "t", "Item": {"pk": {"S": "p1"}, "sk": {"S": "H"}}}}]
    rows, filled = [], 0
    for size in sizes:
        for i in range(filled, size):
            db.put_item(TableName="t", Item={"pk": {"S": f"p{i}"}, "sk": {"S": "M"}, "g": {"S": f"g{i % 10}"}, "body": {"S": "x" * 300}})
        filled = size
        rows.append({
            "mode": mode, "items": size,
            "get_item": per_call(lambda: db.get_item(TableName="t", Key=key), 50),
            "query": per_call(lambda: db.query(TableName="t", KeyConditionExpression="pk = :p",
                                               ExpressionAttributeValues={":p": {"S": "p1"}}), 50),
            "gsi_query": per_call(lambda: db.query(TableName="t", IndexName="gsi", KeyConditionExpression="g = :g",
                                                   ExpressionAttributeValues={":g": {"S": "g1"}}, Limit=5), 10),
            "transact_write": per_call(lambda: db.transact_write_items(TransactItems=edit), 10),
        })
    server.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--mode", choices=["before", "after"], help=argparse.SUPPRESS)  # a child process
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.mode:
        print(json.dumps(measure(args.mode, sizes)))
        return 0
    rows = []
    for mode in ("before", "after"):
        out = subprocess.run([sys.executable, __file__, "--mode", mode, "--sizes", args.sizes],
                             check=True, capture_output=True, text=True).stdout
        rows += json.loads(out.strip().splitlines()[-1])
    print(f"moto DynamoDB, ms per call ({platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()})")
    print(f"  {'mode':<7} {'items':>6} {'GetItem':>8} {'Query':>8} {'GSI Query':>10} {'Transact':>9}")
    for r in rows:
        print(f"  {r['mode']:<7} {r['items']:>6} {r['get_item']:>8} {r['query']:>8} {r['gsi_query']:>10} {r['transact_write']:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
