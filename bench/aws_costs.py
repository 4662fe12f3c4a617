"""Requests and DynamoDB capacity units per capture, per enrichment, per search and per erasure
(what `DELETE /v1/memories/{id}?hard=true` runs, on an enriched memory; then the neighbours'
refresh it queues), counted on the local stack from the adapters' own calls, then priced
(docs/cost.md explains every assumption).

The local stack runs the production adapters against moto, so the calls are the ones Lambda makes.
For each DynamoDB call the bench computes what on-demand DynamoDB would bill, from the items moto
holds before and after it:
- reads: ceil(item or page size / 4 KB) read units, halved when eventually consistent, doubled in
  transactions; a missing item still costs one unit (half if eventually consistent);
- writes: ceil(max(old, new size) / 1 KB) write units, doubled in transactions; plus each global
  secondary index the item enters, leaves or stays in (ALL projections at the item's size,
  KEYS_ONLY at the keys' size; a changed index key is a delete and a put). Item sizes are moto's
  (attribute names + values, as DynamoDB counts them, to within a few bytes);
- items read: the keys each BatchGetItem asked for and the items each Query or Scan returned (what
  a search's hydration reads to show its top k; GetItem, one item a call, is in the request count).
The search index and the embedding model are counted as the OpenSearch / Bedrock requests they
stand for (SearchIndex.search → one _msearch, upsert → one _bulk, Embedder.embed → one call per text on
Titan V2, which takes one text per request).

    PYTHONPATH=shared:. .venv/bin/python bench/aws_costs.py [--memories 300] [--searches 100] [--erasures 30]
        [--data LOCOMO.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import sys
import threading
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from moto.dynamodb.models.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))
KEY = "mn_costbench_0123456789abcdefghijklmnop"
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


class Meter:
    """Requests and capacity units, attributed to the phase being measured."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.phase = "setup"
        self.requests: dict[str, Counter[str]] = defaultdict(Counter)
        self.units: dict[str, Counter[str]] = defaultdict(Counter)
        self._call = threading.local()  # the call in flight, per thread (a worker may call from another thread)

    # -- item access in moto's backend ---------------------------------------------------------
    def _table(self, name: str) -> Any:
        return self.backend.get_table(name)

    def _item(self, table: Any, key: dict[str, Any]) -> Any:
        hash_key, range_key = self.backend.get_keys_value(table, key)
        return table.get_item(hash_key, range_key)

    def _key_of(self, table: Any, item: dict[str, Any]) -> dict[str, Any]:
        names = [table.hash_key_attr] + ([table.range_key_attr] if table.range_key_attr else [])
        return {n: item[n] for n in names}

    def _targets(self, op: str, params: dict[str, Any]) -> list[tuple[Any, dict[str, Any], bool]]:
        """(table, key, written) of every item a write touches (a ConditionCheck reads it only)."""
        found = []
        if op == "PutItem":
            table = self._table(params["TableName"])
            found.append((table, self._key_of(table, params["Item"]), True))
        elif op in ("UpdateItem", "DeleteItem"):
            found.append((self._table(params["TableName"]), params["Key"], True))
        elif op == "BatchWriteItem":
            for name, requests in params["RequestItems"].items():
                table = self._table(name)
                for r in requests:
                    key = self._key_of(table, r["PutRequest"]["Item"]) if "PutRequest" in r else r["DeleteRequest"]["Key"]
                    found.append((table, key, True))
        elif op == "TransactWriteItems":
            for entry in params["TransactItems"]:
                kind, body = next(iter(entry.items()))
                table = self._table(body["TableName"])
                key = self._key_of(table, body["Item"]) if kind == "Put" else body["Key"]
                found.append((table, key, kind != "ConditionCheck"))
                if kind == "ConditionCheck":  # a transactional read
                    item = self._item(table, key)
                    self.units[self.phase]["RRU"] += 2 * max(1, math.ceil((item.size() if item else 1) / 4096))
        return found

    # -- botocore hooks ---------------------------------------------------------------------------
    def before(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        """botocore's before-parameter-build: the call's own parameters, before any I/O."""
        op = model.name
        self._call.params, self._call.before = dict(params), []
        if op not in WRITES:
            return
        for table, key, counts in self._targets(op, params):
            item = self._item(table, key)
            self._call.before.append((table, key, (counts, op == "TransactWriteItems", _snapshot(table, item))))

    def after(self, model: Any, parsed: dict[str, Any], **_: Any) -> None:
        op, params = model.name, self._call.params
        self.requests[self.phase][op] += 1
        units = self.units[self.phase]
        if op in WRITES:
            for table, key, (counts, transactional, old) in self._call.before:
                if not counts:
                    continue
                new = _snapshot(table, self._item(table, key))
                base = max(1, math.ceil(max(old["size"], new["size"]) / 1024))
                units["WRU"] += base * (2 if transactional else 1)
                for index, (old_key, new_key) in _index_moves(table, old, new).items():
                    size = new["index_sizes"].get(index) or old["index_sizes"].get(index) or 0
                    writes = (old_key is not None) + (new_key is not None) if old_key != new_key else 1
                    if old_key is None and new_key is None:
                        writes = 0
                    units["WRU"] += writes * max(1, math.ceil(size / 1024))
                    units["GSI WRU"] += writes * max(1, math.ceil(size / 1024))
        elif op == "GetItem":
            item = self._item(self._table(params["TableName"]), params["Key"])
            units["RRU"] += _read_units([item.size() if item else 0], params.get("ConsistentRead", False), per_item=True)
        elif op == "BatchGetItem":
            for name, request in params["RequestItems"].items():
                table = self._table(name)
                sizes = [(i.size() if (i := self._item(table, k)) else 0) for k in request["Keys"]]
                units["RRU"] += _read_units(sizes, request.get("ConsistentRead", False), per_item=True)
                units["items read"] += len(sizes)
        elif op in ("Query", "Scan"):
            table = self._table(params["TableName"])
            sizes = []
            for returned in parsed.get("Items", []):
                item = self._item(table, self._key_of(table, returned))
                sizes.append(item.size() if item else 0)
            units["RRU"] += _read_units(sizes, params.get("ConsistentRead", False), per_item=False)
            units["items read"] += len(sizes)


def stored_bytes(table: Any) -> dict[str, int]:
    """What DynamoDB bills as storage: each item plus 100 bytes of overhead, in the table and in each
    index it is projected into (ALL: the item; KEYS_ONLY: its keys)."""
    totals: Counter[str] = Counter()
    for item in Table.all_items(table):
        snap = _snapshot(table, item)
        totals["table"] += snap["size"] + 100
        totals["indexes"] += sum(size + 100 for size in snap["index_sizes"].values())
    return dict(totals)


def _snapshot(table: Any, item: Any) -> dict[str, Any]:
    if item is None:
        return {"size": 0, "index_keys": {}, "index_sizes": {}}
    keys, sizes = {}, {}
    for index in table.global_indexes:
        names = [k["AttributeName"] for k in index.schema]
        if all(n in item.attrs for n in names):
            keys[index.name] = tuple(str(item.attrs[n].value) for n in names)
            projection = index.projection.get("ProjectionType", "ALL")
            sizes[index.name] = item.size() if projection == "ALL" else 100  # KEYS_ONLY: keys + table key
    return {"size": item.size(), "index_keys": keys, "index_sizes": sizes}


def _index_moves(table: Any, old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {i.name: (old["index_keys"].get(i.name), new["index_keys"].get(i.name)) for i in table.global_indexes}


def _read_units(sizes: list[int], consistent: bool, *, per_item: bool) -> float:
    factor = 1.0 if consistent else 0.5
    if per_item:
        return sum(max(1, math.ceil(s / 4096)) * factor for s in sizes)
    return max(1, math.ceil(sum(sizes) / 4096)) * factor


class Counted:
    """Counts the calls of a port's methods (the requests they stand for on AWS)."""

    def __init__(self, meter: Meter, inner: Any, names: dict[str, str]) -> None:
        for method, label in names.items():
            original = getattr(inner, method)

            def counted(*args: Any, _original: Any = original, _label: str = label, _method: str = method,
                        **kwargs: Any) -> Any:
                amount = len(args[0]) if _method == "embed" else 1  # Titan V2: one text per request
                meter.requests[meter.phase][_label] += amount
                return _original(*args, **kwargs)

            setattr(inner, method, counted)


def texts(data: Path | None, n: int) -> list[tuple[str, Any]]:
    if data is None:
        from enrichment_bench import texts as synthetic

        return [(t, None) for t in synthetic(n)]
    from bench.locomo import data as locomo_data

    turns = [t for c in locomo_data.load(data)[0] for t in c.turns][:n]
    return [(t.content, t.date) for t in turns]


def measure(memories: int, searches: int, erasures: int, data: Path | None) -> dict[str, Any]:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    from mnemo.adapters.aws import client
    from mnemo.domain.commands import CaptureCommand, RetrieveCommand
    from mnemo.local.inprocess import answer_in_process
    from mnemo.local.poller import QueuePoller
    from mnemo.local.server import LocalStack

    with contextlib.redirect_stdout(sys.stderr):
        stack = LocalStack(KEY)
        stack.start()
    stack.poller.stop()
    services = stack.container
    principal = services.keys.authenticate(KEY)
    meter = Meter(dynamodb_backends[DEFAULT_ACCOUNT_ID][services._dynamodb.meta.region_name])
    sqs = answer_in_process(client("sqs"))
    for aws_client in (services._dynamodb, services._sqs, sqs):
        aws_client.meta.events.register("before-parameter-build.*.*", meter.before)
        aws_client.meta.events.register("after-call.*.*", meter.after)
    Counted(meter, services.embedder, {"embed": "Bedrock InvokeModel (embed)"})
    # the heuristic extractor runs here; with MNEMO_EXTRACTOR=bedrock each reading is one Converse call
    Counted(meter, services.enrichment._extractor, {"extract": "extractor readings (Bedrock Converse)"})
    Counted(meter, services.index(), {"search": "OpenSearch _msearch", "upsert": "OpenSearch _bulk",
                                      "similar": "OpenSearch _search (k-NN)"})
    corpus = texts(data, memories)
    meter.phase = "capture"
    captured = [services.memories.capture(principal, CaptureCommand(raw=text, as_user=True, captured_at=captured_at)).id
                for text, captured_at in corpus]
    meter.phase = "enrichment"
    poller = QueuePoller(sqs, services.settings.queue_url, stack.poller._handler, wait_seconds=0)

    def drain() -> None:
        with contextlib.redirect_stdout(sys.stderr):
            while poller.poll_once():
                pass

    drain()
    meter.phase = "status"
    pending = services.status.for_tenant(principal.tenant).pending
    storage = stored_bytes(meter.backend.get_table(services.settings.memories_table))
    meter.phase = "search"
    queries = [text.split(":", 1)[-1][:80] for text, _ in corpus[:: max(1, len(corpus) // searches)]][:searches]
    for query in queries:
        services.memories.search(principal, RetrieveCommand(query=query, order="relevance", top_k=10))
    meter.phase = "erasure"
    erased = captured[:: max(1, len(captured) // erasures)][:erasures]  # spread over the corpus
    for memory_id in erased:
        services.erasure.erase_memory(principal, memory_id)
    meter.phase = "refresh"  # of the erased memories' neighbours, which the erasures queued
    drain()
    stack.stop(forget=True)
    per = {"capture": len(corpus), "enrichment": len(corpus), "search": len(queries), "erasure": len(erased),
           "refresh": len(erased)}
    return {
        "memories": len(corpus), "searches": len(queries), "erasures": len(erased), "pending_after_drain": pending,
        "stored_bytes_per_memory": {k: round(v / len(corpus)) for k, v in storage.items()},
        "per_unit": {phase: {"requests": {op: round(n / count, 2) for op, n in sorted(meter.requests[phase].items())},
                             "units": {u: round(n / count, 2) for u, n in sorted(meter.units[phase].items())}}
                     for phase, count in per.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=300)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--erasures", type=int, default=30)
    parser.add_argument("--data", type=Path, help="LoCoMo JSON: capture its turns instead of synthetic notes")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "aws_costs.json")
    args = parser.parse_args()
    os.environ.update({"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "MNEMO_MODEL_DIR": os.environ.get("MNEMO_MODEL_DIR", str(REPO / "models" / "minilm"))})
    result = measure(args.memories, args.searches, args.erasures, args.data)
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"AWS requests and DynamoDB capacity units per operation, local stack ({result['memories']} memories, "
          f"{result['searches']} searches, {result['erasures']} erasures; {machine})")
    for phase, row in result["per_unit"].items():
        requests = ", ".join(f"{op} {n}" for op, n in row["requests"].items())
        units = ", ".join(f"{u} {n}" for u, n in row["units"].items())
        print(f"  per {phase:<10} {units}\n    requests: {requests}")
    stored = result["stored_bytes_per_memory"]
    print(f"  stored per memory: {stored['table']} B in the table, {stored['indexes']} B in its indexes")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, **result}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
