"""Import as a job vs in the request (docs/import-export.md, "Jobs"), in process on moto: how long the
request that queues a large import takes, and the job's import rate (items/s through the worker, its
chunks and queue hops) against the synchronous import of the same items in the same run (baseline).

    PYTHONPATH=shared:. .venv/bin/python bench/jobs_bench.py [--items 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))


def items(n: int, prefix: str) -> list[dict[str, Any]]:
    return [{"id": f"{prefix}-{i}", "memory": f"Note {i}: the {prefix} team met about the roadmap."} for i in range(n)]


def run(mode: str, n: int) -> dict[str, Any]:
    """One mode in a fresh moto (a table and queue that grow during a run slow moto's later calls)."""
    from moto import mock_aws

    with mock_aws():
        from mnemo import bootstrap
        from mnemo.adapters.aws import client
        from mnemo.domain.jobs import JobStep
        from mnemo.local.template_resources import create_local_resources
        from mnemo.services.jobs import service as jobs

        bootstrap.reset()
        resources = create_local_resources(client("dynamodb"), client("sqs"), REPO / "template.yaml")
        os.environ.update({"MNEMO_MEMORIES_TABLE": resources["MemoriesTable"], "MNEMO_KEYS_TABLE": resources["KeysTable"],
                           "MNEMO_QUEUE_URL": resources["EnrichmentQueue"], "MNEMO_DLQ_URL": resources["EnrichmentDLQ"]})
        bootstrap.reset()
        services = bootstrap.container()
        principal = services.keys.authenticate(services.keys.create("bench", "bench", ["admin"]).secret)
        data = items(n, mode)
        started = time.perf_counter()
        if mode == "sync":  # baseline: the same items in requests of SYNC_IMPORT_LIMIT, each imported in the request
            for start in range(0, n, jobs.SYNC_IMPORT_LIMIT):
                services.jobs.import_items(principal, data[start : start + jobs.SYNC_IMPORT_LIMIT], user_id="a", skip_duplicates=True)
            return {"mode": mode, "items_per_s": round(n / (time.perf_counter() - started), 1)}
        receipt = services.jobs.import_items(principal, data, user_id="a", skip_duplicates=True)
        request_ms = (time.perf_counter() - started) * 1000
        step = 0
        while (job := services.jobs.get(principal, receipt.job_id)).status != "completed":  # type: ignore[union-attr]
            services.jobs.run(JobStep(tenant=principal.tenant, job_id=receipt.job_id, step=step))  # type: ignore[union-attr]
            step += 1
        seconds = time.perf_counter() - started
        assert job.summary.imported == n, job.summary  # type: ignore[union-attr]
        return {"mode": mode, "items_per_s": round(n / seconds, 1), "queue_request_ms": round(request_ms, 1), "hops": step}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"})
    n = parser.parse_args().items
    results = [run(mode, n) for mode in ("sync", "job", "sync", "job")]  # interleaved: load drifts
    rate = {m: sum(r["items_per_s"] for r in results if r["mode"] == m) / 2 for m in ("sync", "job")}
    print(json.dumps({"items": n, "runs": results, "job_vs_sync_rate": round(rate["job"] / rate["sync"], 2),
                      "machine": f"{platform.machine()} {os.cpu_count()} cores, CPython {platform.python_version()}",
                      "load_average": os.getloadavg()}, indent=2))


if __name__ == "__main__":
    main()
