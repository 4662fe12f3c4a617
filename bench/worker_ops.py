"""Where one enrichment's time goes on the local stack: wall time per AWS operation and per embedding
call while the worker drains `--memories` captured memories, in process, one poller.

Each DynamoDB call is keyed by its operation and the part of the request that tells the callers
apart (an UpdateItem's expression, a Query's index and key condition, a PutItem's sort key kind),
so a slow access pattern shows by name. Run it from a `git archive` folder with `--code` to compare
two commits in the same run.

    PYTHONPATH=shared:. .venv/bin/python bench/worker_ops.py [--memories 600] [--data LOCOMO.json] [--code DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import platform
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def operation(name: str, params: dict[str, Any]) -> str:
    if name == "UpdateItem":
        return f"UpdateItem {params.get('UpdateExpression', '')[:48]}"
    if name == "Query":
        return f"Query {params.get('IndexName', 'table')} {params.get('KeyConditionExpression', '')[:40]}"
    if name == "PutItem":
        return f"PutItem {re.sub(r'#.*', '#…', params.get('Item', {}).get('sk', {}).get('S', '?'))}"
    return name


def measure(memories: int, data: Path | None) -> tuple[float, dict[str, float], Counter[str]]:
    import botocore.client

    from mnemo.adapters.aws import client
    from mnemo.domain.commands import CaptureCommand
    from mnemo.local.inprocess import answer_in_process
    from mnemo.local.poller import QueuePoller
    from mnemo.local.server import LocalStack

    costs = importlib.import_module("aws_costs")  # after mnemo: importing it puts REPO/shared first on sys.path

    with contextlib.redirect_stdout(sys.stderr):
        stack = LocalStack(costs.KEY)
        stack.start()
    stack.poller.stop()
    services = stack.container
    principal = services.keys.authenticate(costs.KEY)
    services.embedder.embed(["warm up the model"])
    for text, at in costs.texts(data, memories):
        services.memories.capture(principal, CaptureCommand(raw=text, as_user=True, captured_at=at))

    seconds: dict[str, float] = defaultdict(float)
    calls: Counter[str] = Counter()
    make_api_call = getattr(botocore.client.BaseClient, "_make_api_call")  # noqa: B009 - private

    def timed(self: Any, name: str, params: dict[str, Any]) -> Any:
        started = time.perf_counter()
        try:
            return make_api_call(self, name, params)
        finally:
            key = operation(name, params)
            seconds[key] += time.perf_counter() - started
            calls[key] += 1

    embedder, embed = services.embedder, services.embedder.embed

    def timed_embed(batch: Any, **options: Any) -> Any:
        started = time.perf_counter()
        try:
            return embed(batch, **options)
        finally:
            seconds["embed (local MiniLM, GIL released)"] += time.perf_counter() - started
            calls["embed (local MiniLM, GIL released)"] += 1

    setattr(botocore.client.BaseClient, "_make_api_call", timed)  # noqa: B010
    embedder.embed = timed_embed
    poller = QueuePoller(answer_in_process(client("sqs")), services.settings.queue_url, stack.poller._handler,
                         wait_seconds=0)
    started = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):
        while poller.poll_once():
            pass
    drain = time.perf_counter() - started
    setattr(botocore.client.BaseClient, "_make_api_call", make_api_call)  # noqa: B010
    stack.stop(forget=True)
    return drain, seconds, calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=600)
    parser.add_argument("--data", type=Path, help="LoCoMo JSON: its turns instead of synthetic notes")
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout whose shared/ is measured")
    args = parser.parse_args()
    sys.path[:0] = [str(args.code / "shared"), str(REPO / "bench"), str(REPO)]
    os.environ.update({"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "MNEMO_MODEL_DIR": str(REPO / "models" / "minilm")})
    n = args.memories
    drain, seconds, calls = measure(n, args.data)
    print(f"{args.code}: {n} memories drained in {drain:.1f} s, {drain / n * 1000:.1f} ms a memory "
          f"({platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()})")
    print(f"  {'ms/memory':>9} {'calls/memory':>12} {'ms/call':>8}  operation")
    for key, total in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {total / n * 1000:>9.2f} {calls[key] / n:>12.2f} {total / calls[key] * 1000:>8.2f}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
