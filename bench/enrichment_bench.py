"""Enrichment throughput of the worker on the local providers, and AWS calls per enriched memory.

Captures N memories through the service, then drains the queue with the local poller in batches
of 10 exactly as Lambda's event source mapping would, twice in the same run: with the worker's
batched embedding (one embedder call per SQS batch) and with one embedder call per memory. AWS
calls (moto, in process) are counted per operation with a botocore `before-call` hook.

    .venv/bin/python bench/enrichment_bench.py [--memories 200]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))

SUBJECTS = ["Caroline", "Melanie", "Jon", "Gina", "Anna", "the team", "my sister", "Dr. Patel"]
ACTIONS = ["moved to Berlin", "started a pottery class", "decided to use DynamoDB", "prefers dark roast coffee",
           "has a meeting on Friday at 10am", "adopted a dog named Luna", "is reading Dune", "visited Lake Tahoe"]
TAILS = ["last week.", "because it felt right.", "and loved it.", "after a long discussion.", "with friends.", "again."]


def texts(n: int) -> list[str]:
    return [f"{SUBJECTS[i % 8]} {ACTIONS[(i // 8) % 8]} {TAILS[i % 6]} (note {i})" for i in range(n)]


class OneAtATime:
    """The same embedder, called once per text: what a worker without batching would do."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, batch: list[str], *, keep_states: bool = False) -> list[list[float]]:
        return [self._inner.embed([text], keep_states=keep_states)[0] for text in batch]


def run(mode: str, n: int) -> dict[str, Any]:
    from moto import mock_aws

    with mock_aws():
        from mnemo import bootstrap
        from mnemo.adapters.aws import client
        from mnemo.domain.commands import CaptureCommand
        from mnemo.local.poller import QueuePoller
        from mnemo.local.server import load_function
        from mnemo.local.template_resources import create_local_resources

        bootstrap.reset()
        resources = create_local_resources(client("dynamodb"), client("sqs"), REPO / "template.yaml")
        os.environ.update({"MNEMO_MEMORIES_TABLE": resources["MemoriesTable"], "MNEMO_KEYS_TABLE": resources["KeysTable"],
                           "MNEMO_QUEUE_URL": resources["EnrichmentQueue"], "MNEMO_DLQ_URL": resources["EnrichmentDLQ"]})
        bootstrap.reset()
        services = bootstrap.container()
        principal = services.keys.authenticate(services.keys.create("bench", "bench", ["admin"]).secret)
        embedder = services.embedder
        embedder.embed(["warm up the model"])  # load once, outside the measurement
        if mode == "one-at-a-time":
            services.enrichment._embedder = OneAtATime(embedder)
        for text in texts(n):
            services.memories.capture(principal, CaptureCommand(raw=text, as_user=True))
        calls: Counter[str] = Counter()
        for aws_client in (services._dynamodb, services._sqs):
            aws_client.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
        poller = QueuePoller(services._sqs, services.settings.queue_url, load_function("worker").handler,
                             batch_size=10, wait_seconds=0)
        started = time.perf_counter()
        handled = 0
        while handled < n:
            got = poller.poll_once()
            if got == 0 and services.status.for_tenant(principal.tenant).pending == 0:
                break
            handled += got
        elapsed = time.perf_counter() - started
        status = services.status.for_tenant(principal.tenant)
        bootstrap.reset()
    return {
        "mode": mode, "memories": n, "seconds": round(elapsed, 3), "memories_per_s": round(n / elapsed, 2),
        "pending_after": status.pending, "failed_after": status.failed,
        "aws_calls_per_memory": round(sum(calls.values()) / n, 2),
        "aws_calls_by_operation_per_memory": {op: round(c / n, 2) for op, c in sorted(calls.items())},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "enrichment.json")
    args = parser.parse_args()
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                       "POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "MNEMO_MODEL_DIR": str(REPO / "models" / "minilm")})
    for name in [k for k in os.environ if k.startswith("AWS_ENDPOINT_URL")]:
        del os.environ[name]
    rows = [run("batched", args.memories), run("one-at-a-time", args.memories)]
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"Enrichment throughput, local providers, SQS batches of 10, {args.memories} memories ({machine})")
    for row in rows:
        print(f"  {row['mode']:<14} {row['memories_per_s']:>7.1f} memories/s  ({row['seconds']} s; "
              f"failed {row['failed_after']}, pending {row['pending_after']})")
    print(f"  batched / one-at-a-time: {rows[0]['memories_per_s'] / rows[1]['memories_per_s']:.2f}×")
    print(f"  AWS calls per enriched memory (batched): {rows[0]['aws_calls_per_memory']}")
    for op, per in rows[0]["aws_calls_by_operation_per_memory"].items():
        print(f"    {op:<20} {per}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
