"""The local stack (`make dev`) as it runs: edit cost and enrichment throughput as the table grows.

Runs the stack twice in the same run, each in a fresh process: `before` (moto as shipped, the
app's clients over HTTP) and `after` (mnemo.local.moto_dynamodb + in-process clients). For each
tenant size in `--sizes` it captures memories up to that size (poller stopped), then measures
- enrichment: the queue drained by the stack's poller (SQS batches of 10), memories/s, and
  AWS calls per enriched memory by operation (botocore `before-call` on the app's clients);
- edit: `append:` edits of one memory (a conditional put + history in one transaction), ms each.

    PYTHONPATH=shared:. .venv/bin/python bench/local_stack_bench.py [--sizes 300,1000] [--before-sizes 300] [--concurrency 2]

`--locomo DATA` instead: LoCoMo-size ingest through REST (issue 14's target, <= 3 min). Starts the
stack as `make dev` does (`python -m mnemo.local`, its own process and default pollers), captures
`--turns` LoCoMo turns (every conversation of DATA, cycled under new user ids until that many; one
tenant) with `--clients` HTTP clients, each posting one conversation's turns in order, and reports the
seconds from the first capture to nothing pending (GET /v1/status polled every 0.5 s), captures/s and
enriched/s.

    PYTHONPATH=shared:. .venv/bin/python bench/local_stack_bench.py --locomo ../shared/bench/locomo-dev.json [--turns 3100] [--clients 6]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))
sys.path.insert(0, str(REPO / "bench"))
KEY = "mn_localbench_0123456789abcdefghijklmnop"


def drained(services: Any, principal: Any, poller: Any, concurrency: int = 1) -> None:
    """Poll until the queue is empty and nothing is pending (the status check, two calls, runs only
    when a poll came back empty, so it adds a negligible share to the per-memory call counts);
    `concurrency` threads poll at once, as the stack's poller runs its batches."""
    def drain() -> None:
        while poller.poll_once() or services.status.for_tenant(principal.tenant).pending:
            pass

    threads = [threading.Thread(target=drain) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def measure(mode: str, sizes: list[int], edits: int, concurrency: int = 1) -> dict[str, Any]:
    from enrichment_bench import texts

    from mnemo.domain.commands import CaptureCommand, EditCommand
    from mnemo.local import inprocess, moto_dynamodb
    from mnemo.local.poller import QueuePoller
    from mnemo.local.server import LocalStack

    if mode == "before":  # moto as shipped, the app over HTTP
        moto_dynamodb.install = lambda: None  # type: ignore[assignment]
        inprocess.answer_in_process = lambda client: client  # type: ignore[assignment]
    stack = LocalStack(KEY)
    stack.start()
    stack.poller.stop()
    services = stack.container
    principal = services.keys.authenticate(KEY)
    services.embedder.embed(["warm up the model"])
    calls: Counter[str] = Counter()
    sqs = inprocess.answer_in_process(__import__("mnemo.adapters.aws", fromlist=["client"]).client("sqs"))
    for aws_client in (services._dynamodb, services._sqs, sqs):
        aws_client.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
    corpus = texts(max(sizes))
    target = services.memories.capture(principal, CaptureCommand(raw="edit target:", as_user=True))
    rows, done = [], 1
    for size in sizes:
        for text in corpus[done - 1 : size - 1]:
            services.memories.capture(principal, CaptureCommand(raw=text, as_user=True))
        batch, done = size - done, size
        calls.clear()
        poller = QueuePoller(sqs, services.settings.queue_url, stack.poller._handler, wait_seconds=0)
        started = time.perf_counter()
        drained(services, principal, poller, concurrency)
        drain = time.perf_counter() - started
        per_op = {op: round(n / batch, 2) for op, n in sorted(calls.items())}
        timings = []
        for i in range(edits):
            t = time.perf_counter()
            services.memories.edit(principal, target.id, EditCommand(edit_request=f"append: e{size}-{i}"))
            timings.append((time.perf_counter() - t) * 1000)
        drained(services, principal, poller)  # the edits' re-enrichment
        rows.append({"memories": size, "enriched": batch, "seconds": round(drain, 2),
                     "memories_per_s": round(batch / drain, 2), "edit_ms_median": round(statistics.median(timings), 2),
                     "calls_per_memory": per_op})
        print(f"  [{mode}] {size} memories: {batch / drain:.1f}/s, edit {statistics.median(timings):.1f} ms", flush=True,
              file=sys.stderr)
    stack.stop(forget=True)
    return {"mode": mode, "concurrency": concurrency, "rows": rows}


def locomo_ingest(data: Path, turns: int, clients: int, pollers: int | None = None) -> dict[str, Any]:
    import queue

    import httpx

    from bench.local_server import start
    from bench.locomo import data as locomo_data
    from bench.locomo.client import MnemoClient

    conversations, _ = locomo_data.load(data)
    units: queue.Queue[tuple[str, list[Any]]] = queue.Queue()
    total, rep = 0, 0
    while total < turns:  # every conversation, then again under new users, up to `turns`
        for conversation in conversations:
            take = list(conversation.turns[: turns - total])
            if take:
                units.put((f"ingest-{rep}-{conversation.sample_id}", take))
                total += len(take)
        rep += 1
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"mnemo-locomo-ingest-{os.getpid()}.log"
    env = {"MNEMO_EMBEDDER_ENGINE": os.environ.get("MNEMO_EMBEDDER_ENGINE", "auto")}
    if pollers:
        env["MNEMO_LOCAL_WORKER_CONCURRENCY"] = str(pollers)
    process, base = start(log, KEY, **env)
    errors: list[BaseException] = []

    def post_all() -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            client = MnemoClient(http, KEY)
            while True:
                try:
                    user, unit = units.get_nowait()
                except queue.Empty:
                    return
                try:
                    for turn in unit:
                        client.capture(user, turn)
                except BaseException as exc:
                    errors.append(exc)

    try:
        threads = [threading.Thread(target=post_all) for _ in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        captured = time.perf_counter() - started
        with httpx.Client(base_url=base, timeout=60) as http:
            wait = MnemoClient(http, KEY).wait_for_enrichment(poll_seconds=0.5, timeout_seconds=1800)
        done = time.perf_counter() - started
    finally:
        process.terminate()  # what Ctrl-C does to `make dev`
        process.wait(timeout=30)
    if errors:
        raise RuntimeError(f"{len(errors)} conversation(s) failed to ingest: {errors[0]!r}")
    return {"turns": total, "clients": clients, "pollers": pollers or "default", "capture_seconds": round(captured, 1),
            "captures_per_s": round(total / captured, 1), "seconds_to_enriched": round(done, 1),
            "enriched_per_s": round(total / done, 1), "timed_out": wait.timed_out, "status": wait.status}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="300,1000,3000")
    parser.add_argument("--before-sizes", default="300,1000")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=1,
                        help="batches enriched at once in `after` (the stack's default is 2; 1 isolates the per-batch cost)")
    parser.add_argument("--locomo", type=Path, help="LoCoMo-size ingest through REST from this LoCoMo JSON file")
    parser.add_argument("--turns", type=int, default=3100, help="--locomo: turns to capture")
    parser.add_argument("--clients", type=int, default=6, help="--locomo: concurrent HTTP clients")
    parser.add_argument("--pollers", type=int, help="--locomo: queue pollers (default: the stack's own)")
    parser.add_argument("--engine", choices=["auto", "onnxruntime", "numpy"], default="auto",
                        help="what runs the local embedder (MNEMO_EMBEDDER_ENGINE)")
    parser.add_argument("--mode", choices=["before", "after"], help=argparse.SUPPRESS)  # a child process
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "local_stack.json")
    args = parser.parse_args()
    os.environ.update({"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "MNEMO_MODEL_DIR": str(REPO / "models" / "minilm"), "MNEMO_EMBEDDER_ENGINE": args.engine})
    if args.locomo:
        print(json.dumps(locomo_ingest(args.locomo, args.turns, args.clients, args.pollers)))
        return 0
    if args.mode:
        concurrency = args.concurrency if args.mode == "after" else 1
        print(json.dumps(measure(args.mode, [int(s) for s in args.sizes.split(",")], args.edits, concurrency)))
        return 0
    results = []
    for mode, sizes in (("before", args.before_sizes), ("after", args.sizes)):
        out = subprocess.run([sys.executable, __file__, "--mode", mode, "--sizes", sizes, "--edits", str(args.edits),
                              "--concurrency", str(args.concurrency)],
                             check=True, capture_output=True, text=True, env=os.environ).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"Local stack: enrichment drain and edits as the tenant grows ({machine})")
    print(f"  {'mode':<7} {'memories':>8} {'enriched/s':>10} {'edit ms':>8}  AWS calls per enriched memory")
    for result in results:
        for row in result["rows"]:
            ops = ", ".join(f"{op} {n}" for op, n in row["calls_per_memory"].items())
            print(f"  {result['mode']:<7} {row['memories']:>8} {row['memories_per_s']:>10.1f} {row['edit_ms_median']:>8.1f}  {ops}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
