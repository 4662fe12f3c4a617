"""Import of one LoCoMo conversation through `POST /v1/import` on the local stack: before vs after.

Each mode runs in a fresh process on a fresh local stack (moto, local index, MiniLM), the REST app
in process. `before` mounts the per-item engine the import used up to a503de0 (one
`MemoryService.capture` per item: a metering write, two PutItems, one SendMessage) behind the same
route; `after` is the batched engine (services/portability/imports.py). Reported per mode:
- items/s of the import request, and AWS calls per imported item by operation (botocore `before-call`);
- found at once: of a spread of turns, how many a search for their text ranks in the top 10 right
  after the import, before any enrichment (read-your-writes);
- time to all enriched: from the import's start until the queue is drained by two pollers.

    PYTHONPATH=shared:. .venv/bin/python bench/import_bench.py [--data /work/shared/bench/locomo-dev.json] [--sample 0]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))
KEY = "mn_importbench_0123456789abcdefghijklmnop"
PROBES = 20


class PerItemImport:
    """The engine before batching, reduced to its write path: one capture (and, for a closed status,
    one edit) per item, under the id derived from the source id."""

    def __init__(self, services: Any) -> None:
        self._memories = services.memories

    def run(self, principal: Any, data: Any, *, user_id: str, skip_duplicates: bool) -> Any:
        from mnemo.domain.commands import CaptureCommand
        from mnemo.services.portability.imports import ImportReport, imported_id

        report = ImportReport()
        for item in data:
            command = CaptureCommand(raw=item["content"], user_id=user_id, as_user=True, captured_at=item["captured_at"],
                                     metadata={**item["metadata"], "source_id": item["id"]})
            memory_id = imported_id(principal.tenant, user_id, item["id"])
            report.imported.append(self._memories.capture(principal, command, memory_id=memory_id).id)
        return report


def items(data: Path, sample: int) -> list[dict[str, Any]]:
    from locomo.data import load

    conversation = load(data)[0][sample]
    return [{"id": t.dia_id, "content": t.content, "captured_at": t.date.isoformat(), "metadata": {"speaker": t.speaker}}
            for t in conversation.turns]


def measure(mode: str, data: Path, sample: int) -> dict[str, Any]:
    from local_stack_bench import drained
    from starlette.testclient import TestClient

    from mnemo.adapters.aws import client
    from mnemo.local import inprocess
    from mnemo.local.poller import QueuePoller
    from mnemo.local.server import LocalStack
    from mnemo.services.jobs.service import SYNC_IMPORT_LIMIT
    from mnemo.surfaces.app import create_app

    stack = LocalStack(KEY)
    stack.start()
    stack.poller.stop()
    services = stack.container
    principal = services.keys.authenticate(KEY)
    services.embedder.embed(["warm up the model"])
    if mode == "before":
        services.__dict__["imports"] = PerItemImport(services)  # the container's cached_property slot
    http = TestClient(create_app(services), base_url="http://127.0.0.1")
    headers = {"authorization": f"Bearer {KEY}"}
    turns = items(data, sample)
    calls: Counter[str] = Counter()
    sqs = inprocess.answer_in_process(client("sqs"))
    for aws_client in {id(c): c for c in (services._dynamodb, services._sqs)}.values():
        aws_client.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
    started = time.perf_counter()
    ids: list[str] = []
    for start in range(0, len(turns), SYNC_IMPORT_LIMIT):  # requests a client waits on (more would be a job)
        response = http.post("/v1/import", json={"user_id": "bench", "data": turns[start:start + SYNC_IMPORT_LIMIT]},
                             headers=headers)
        assert response.status_code == 200, response.text
        ids += response.json()["imported"]
    imported = time.perf_counter() - started
    assert len(ids) == len(turns), (len(ids), len(turns))
    per_op = {op: round(n / len(turns), 3) for op, n in sorted(calls.items())}
    per_item = round(sum(calls.values()) / len(turns), 3)  # the import's own calls (searches and drain follow)
    probes = range(0, len(turns), max(1, len(turns) // PROBES))
    found = 0
    for n in probes:
        body = {"query": turns[n]["content"], "user_id": "bench", "top_k": 10}
        results = http.post("/v1/memories/search", json=body, headers=headers).json()["results"]
        found += ids[n] in [r["id"] for r in results]
    searched = time.perf_counter() - started - imported
    poller = QueuePoller(sqs, services.settings.queue_url, stack.poller._handler, wait_seconds=0)
    drain_started = time.perf_counter()
    drained(services, principal, poller, concurrency=2)
    drain = time.perf_counter() - drain_started
    stack.stop(forget=True)
    return {"mode": mode, "items": len(turns), "import_s": round(imported, 2), "items_per_s": round(len(turns) / imported, 1),
            "calls_per_item": per_item, "calls_by_op": per_op,
            "found_at_once": f"{found}/{len(probes)}", "to_all_enriched_s": round(imported + drain, 1),
            "probe_searches_s": round(searched, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench/locomo-dev.json"))
    parser.add_argument("--sample", type=int, default=0, help="which conversation of the file")
    parser.add_argument("--mode", choices=["before", "after"], help=argparse.SUPPRESS)  # a child process
    args = parser.parse_args()
    os.environ.update({"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "MNEMO_MODEL_DIR": str(REPO / "models" / "minilm")})
    if args.mode:
        print(json.dumps(measure(args.mode, args.data, args.sample)))
        return 0
    results = []
    for mode in ("before", "after"):
        out = subprocess.run([sys.executable, __file__, "--mode", mode, "--data", str(args.data), "--sample", str(args.sample)],
                             check=True, capture_output=True, text=True, env=os.environ).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    print(f"LoCoMo conversation {args.sample} through POST /v1/import (load average {os.getloadavg()[0]:.2f})")
    print(f"  {'mode':<7} {'items':>5} {'items/s':>8} {'calls/item':>10} {'found at once':>13} {'to all enriched s':>17}  calls by op")
    for r in results:
        ops = ", ".join(f"{op} {n}" for op, n in r["calls_by_op"].items())
        print(f"  {r['mode']:<7} {r['items']:>5} {r['items_per_s']:>8} {r['calls_per_item']:>10} {r['found_at_once']:>13} "
              f"{r['to_all_enriched_s']:>17}  {ops}")
    before, after = results
    print(f"  after/before: items/s x{after['items_per_s'] / before['items_per_s']:.1f}, calls per item "
          f"x{after['calls_per_item'] / before['calls_per_item']:.3f}, time to all enriched "
          f"x{after['to_all_enriched_s'] / before['to_all_enriched_s']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
