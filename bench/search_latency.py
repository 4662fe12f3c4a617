"""REST search latency on the local stack for a LoCoMo-size tenant, with where the time goes.

One LoCoMo conversation (default conv-42: 629 turns of one user) is captured through the service
and enriched by the stack's own worker, once; its DynamoDB items and index documents are saved as
a snapshot (`bench/results/search-snapshot-<conversation>.json`, reused with `--reuse-snapshot`),
which each measured mode loads into a fresh local stack in a fresh process. Then every question of
the conversation is asked through POST /v1/memories/search:

- in process: the ASGI app through Starlette's TestClient, and through the ASGI app called
  directly (no TestClient portal thread);
- over HTTP: the same app served by uvicorn on 127.0.0.1, one keep-alive httpx client.

Reported per mode: p50/p95 per search, the in-process breakdown (auth, query embedding, index
legs, fusion/graph expansion, hydration BatchGetItem, everything else = routing, validation,
serialisation) and the exact AWS calls per search. `before` is the code without this bench's
fixes (mnemo.local.moto_reads not installed; the local embedder leaves numpy's BLAS thread pool
at its default, one thread per core), in a fresh process of the same run. `baseline` is another
checkout's code as shipped (`--baseline-code DIR`, e.g. `git archive <commit> | tar -x -C DIR`),
measured exactly as `after`, also in a fresh process of the same run, on the same snapshot.

    PYTHONPATH=shared:. .venv/bin/python bench/search_latency.py ../shared/bench/locomo-dev.json [--reuse-snapshot]
        [--modes baseline,after[,baseline,after...] --baseline-code DIR] [--search-mode fast] [--reranker minilm]

`--reranker minilm` runs `after` with the local late-interaction reranker (MNEMO_RERANKER=minilm) and
`baseline` as its checkout is configured: the reranker's cost against the same code without it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CODE = Path(sys.argv[sys.argv.index("--code") + 1]) if "--code" in sys.argv else REPO  # a child measuring a baseline
sys.path.insert(0, str(CODE / "shared"))
sys.path.insert(0, str(REPO))
KEY = "mn_searchbench_0123456789abcdefghijklmnop"
TABLES = ("MemoriesTable", "KeysTable")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def local_stack() -> Iterator[Any]:
    from mnemo.local.server import LocalStack

    with contextlib.redirect_stdout(sys.stderr):  # Powertools' EMF lines
        stack = LocalStack(KEY)
        stack.start()
    stack.poller.stop()
    try:
        yield stack
    finally:
        stack.stop(forget=True)


def build_snapshot(data: Path, conversation: str, path: Path) -> dict[str, Any]:
    """Capture and enrich the conversation on a fresh stack; save its tables and index documents."""
    from bench.locomo import data as locomo_data
    from mnemo.adapters.aws import client
    from mnemo.domain.commands import CaptureCommand
    from mnemo.local.inprocess import answer_in_process
    from mnemo.local.poller import QueuePoller

    conv = locomo_data.load(data, {conversation})[0][0]
    with local_stack() as stack:
        services = stack.container
        principal = services.keys.authenticate(KEY)
        documents: dict[str, Any] = {}
        index = services.index()
        upsert = index.upsert

        def recording(docs: Any) -> Any:
            for doc in docs:
                documents[doc.memory_id] = doc.model_dump(mode="json")
            return upsert(docs)

        index.upsert = recording
        started = time.perf_counter()
        for turn in conv.turns:
            services.memories.capture(principal, CaptureCommand(
                raw=turn.content, user_id=conversation, metadata={"dia_id": turn.dia_id}, captured_at=turn.date,
                as_user=True))
        captured = time.perf_counter() - started
        poller = QueuePoller(answer_in_process(client("sqs")), services.settings.queue_url, stack.poller._handler,
                             wait_seconds=0)
        with contextlib.redirect_stdout(sys.stderr):
            while poller.poll_once() or services.status.for_tenant(principal.tenant).pending:
                pass
        enriched = time.perf_counter() - started - captured
        status = services.status.for_tenant(principal.tenant).model_dump(mode="json")
        db = services._dynamodb
        items = {}
        for logical in TABLES:
            pages = db.get_paginator("scan").paginate(TableName=stack.resources[logical])
            items[logical] = [item for page in pages for item in page["Items"]]
    snapshot = {"conversation": conversation, "turns": len(conv.turns), "questions": [q.question for q in conv.questions],
                "capture_s": round(captured, 1), "enrich_s": round(enriched, 1), "status": status,
                "items": items, "documents": list(documents.values())}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(snapshot))
    log(f"snapshot: {len(conv.turns)} turns captured in {captured:.0f} s, enriched in {enriched:.0f} s -> {path}")
    return snapshot


def load_snapshot(stack: Any, snapshot: dict[str, Any]) -> None:
    from mnemo.ports import IndexDocument

    db = stack.container._dynamodb
    for logical, items in snapshot["items"].items():
        table = stack.resources[logical]
        for start in range(0, len(items), 25):
            request = {table: [{"PutRequest": {"Item": item}} for item in items[start:start + 25]]}
            while request:
                request = db.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    # A baseline checkout from before a document field (round 12's `replies_to`) loads the snapshot
    # without it, as that code would have indexed the memory.
    known = IndexDocument.model_fields.keys()
    stack.container.index().upsert([IndexDocument.model_validate({k: v for k, v in d.items() if k in known})
                                    for d in snapshot["documents"]])


class Breakdown:
    """Wall time per stage of a search, summed per request (wrappers installed on the live objects)."""

    def __init__(self) -> None:
        self.current: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.current[stage] += time.perf_counter() - t

        setattr(owner, name, timed)

    def take(self) -> tuple[dict[str, float], Counter[str]]:
        stages, calls = dict(self.current), Counter(self.calls)
        self.current.clear()
        self.calls.clear()
        return stages, calls


def instrument(services: Any) -> Breakdown:
    from mnemo.domain import scoring
    from mnemo.services.memory import search

    b = Breakdown()
    b.wrap(services.keys, "authenticate", "auth")
    b.wrap(services.embedder, "embed", "embed query")
    b.wrap(services.index(), "search", "index legs")
    b.wrap(services.store, "get_many", "hydrate (BatchGetItem)")
    for name in ("score", "neighbours", "expand"):
        if hasattr(scoring, name):  # the module's attributes: search.py calls them through `scoring.`
            b.wrap(scoring, name, "fusion + graph")
    if hasattr(search, "demote_repeats"):  # imported by name into search.py (absent before issue 28 round 4)
        b.wrap(search, "demote_repeats", "repeats")
    b.wrap(services.memories, "search", "_service")
    for aws in (services._dynamodb, services._sqs):
        aws.meta.events.register("before-call.*.*", lambda model, **_: b.calls.update([model.name]))
    return b


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 0.5), 2), "p95": round(percentile(values, 0.95), 2),
            "mean": round(statistics.fmean(values), 2)}


def run_questions(send: Callable[[str], int], questions: list[str], b: Breakdown, warmup: int) -> dict[str, Any]:
    for q in questions[:warmup]:
        send(q)
    b.take()
    latencies, stages, calls = [], defaultdict(list), Counter()
    for q in questions:
        t = time.perf_counter()
        status = send(q)
        latencies.append((time.perf_counter() - t) * 1000)
        assert status == 200, status
        took, made = b.take()
        service = took.pop("_service", 0.0)
        inside = sum(v for k, v in took.items() if k != "auth")
        took["rest of the service"] = max(0.0, service - inside)
        took["routing, validation, serialisation"] = max(0.0, latencies[-1] / 1000 - service - took.get("auth", 0.0))
        for k, v in took.items():
            stages[k].append(v * 1000)
        calls.update(made)
    n = len(questions)
    return {"searches": n, "latency_ms": summary(latencies),
            "breakdown_ms_mean": {k: round(statistics.fmean(v), 2) for k, v in stages.items()},
            "aws_calls_per_search": {op: round(c / n, 2) for op, c in sorted(calls.items())}}


def measure(mode: str, snapshot_path: Path, limit: int, search_mode: str = "full") -> dict[str, Any]:
    import httpx
    import uvicorn
    from starlette.testclient import TestClient

    from mnemo.adapters.local import minilm_embedder
    from mnemo.local import moto_reads
    from mnemo.surfaces.app import create_app

    if mode == "before":  # the code as it was: moto's serialiser for item reads, BLAS on every core
        moto_reads.install = lambda: None  # type: ignore[assignment]
        minilm_embedder._limit_blas_threads = lambda threads: None
    snapshot = json.loads(snapshot_path.read_text())
    questions = snapshot["questions"][:limit] if limit else snapshot["questions"]
    body = {"user_id": snapshot["conversation"], "top_k": 10, "mode": search_mode}
    headers = {"authorization": f"Bearer {KEY}"}
    results: dict[str, Any] = {"mode": mode}
    with local_stack() as stack:
        load_snapshot(stack, snapshot)
        services = stack.container
        app = create_app(services)
        b = instrument(services)
        with TestClient(app) as http:
            results["testclient"] = run_questions(
                lambda q: http.post("/v1/memories/search", json={**body, "query": q}, headers=headers).status_code,
                questions, b, warmup=10)
        results["asgi"] = run_questions(lambda q: asgi_post(app, {**body, "query": q}), questions, b, warmup=5)
        # Bound here, so nothing can take the port before uvicorn serves it; TCP named, so asyncio turns
        # Nagle off on its connections (without it each response waited ~40 ms). Not `mnemo.local.server.listen`:
        # that is the measured checkout's, and a baseline older than its fix would be timed with Nagle on.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        config = uvicorn.Config(app, host="127.0.0.1", port=sock.getsockname()[1], log_level="error", lifespan="off")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        with httpx.Client(base_url=f"http://127.0.0.1:{config.port}", timeout=30) as http:
            results["http"] = run_questions(
                lambda q: http.post("/v1/memories/search", json={**body, "query": q}, headers=headers).status_code,
                questions, b, warmup=5)
        server.should_exit = True
        thread.join(10)
        sock.close()
    return results


def asgi_post(app: Any, body: dict[str, Any]) -> int:
    """One POST straight into the ASGI app (what Mangum does on Lambda, minus the event mapping)."""
    payload = json.dumps(body).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/memories/search", "raw_path": b"/v1/memories/search", "query_string": b"", "root_path": "",
             "headers": [(b"host", b"bench"), (b"content-type", b"application/json"),
                         (b"authorization", f"Bearer {KEY}".encode()), (b"content-length", str(len(payload)).encode())],
             "client": ("127.0.0.1", 1), "server": ("bench", 80)}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": payload, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return int(sent[0]["status"])


def print_ratio(results: list[dict[str, Any]]) -> None:
    """`after` against `baseline` (or `before`), ASGI: with a mode repeated (`--modes
    baseline,after,baseline,after,...`), the median of its runs' p50 and p95, so one noisy run, or the
    order the modes ran in, does not decide the ratio."""
    runs: dict[str, list[dict[str, float]]] = defaultdict(list)
    for result in results:
        runs[result["mode"]].append(result["asgi"]["latency_ms"])
    against = next((mode for mode in ("baseline", "before") if mode in runs), None)
    if "after" not in runs or against is None:
        return
    def median(mode: str, q: str) -> float:
        return statistics.median(r[q] for r in runs[mode])
    n = f"median of {len(runs['after'])} and {len(runs[against])} runs" if max(map(len, runs.values())) > 1 else "one run each"
    print(f"  after/{against} (ASGI, {n}): p50 {median('after', 'p50') / median(against, 'p50'):.2f}x, "
          f"p95 {median('after', 'p95') / median(against, 'p95'):.2f}x")
    if len(runs["after"]) > 1:
        print("  p50 per run: " + "; ".join(f"{mode} " + ", ".join(f"{r['p50']:.1f}" for r in rs) for mode, rs in runs.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, nargs="?", help="a LoCoMo JSON file, e.g. ../shared/bench/locomo-dev.json")
    parser.add_argument("--conversation", default="conv-42", help="the tenant: one conversation, one user")
    parser.add_argument("--questions", type=int, default=0, help="searches per mode (default: every question)")
    parser.add_argument("--reuse-snapshot", action="store_true", help="skip the build if the snapshot exists")
    parser.add_argument("--modes", default="before,after",
                        help="before, baseline and/or after, comma-separated; repeat them to interleave runs "
                             "(the ratio is then the median's)")
    parser.add_argument("--baseline-code", type=Path, help="the checkout `baseline` measures (its shared/)")
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)  # read before the imports (CODE)
    parser.add_argument("--mode", help=argparse.SUPPRESS)  # a child process
    parser.add_argument("--snapshot", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--build", action="store_true", help=argparse.SUPPRESS)  # a child process
    parser.add_argument("--search-mode", choices=["full", "fast"], default="full", help="the searches' `mode`")
    parser.add_argument("--reranker", choices=["off", "bedrock", "minilm"],
                        help="MNEMO_RERANKER for the `after` mode only (default: as the environment says)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "search_latency.json")
    args = parser.parse_args()
    os.environ.update({"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "MNEMO_MODEL_DIR": os.environ.get("MNEMO_MODEL_DIR", str(REPO / "models" / "minilm"))})
    if args.build:
        build_snapshot(args.data, args.conversation, args.snapshot)
        return 0
    if args.mode:
        print(json.dumps(measure(args.mode, args.snapshot, args.questions, args.search_mode)))
        return 0
    snapshot = REPO / "bench" / "results" / f"search-snapshot-{args.conversation}.json"
    if not (args.reuse_snapshot and snapshot.exists()):
        if args.data is None:
            parser.error("DATA is needed to build the snapshot")
        # A fresh process: the stack the snapshot is built on leaves moto's process-wide state behind.
        subprocess.run([sys.executable, __file__, str(args.data.resolve()), "--conversation", args.conversation,
                        "--build", "--snapshot", str(snapshot)], env=os.environ, check=True)
    meta = json.loads(snapshot.read_text())
    results = []
    for mode in args.modes.split(","):
        log(f"measuring {mode} ...")
        if mode == "baseline" and args.baseline_code is None:
            parser.error("--modes baseline needs --baseline-code DIR")
        code = ["--code", str(args.baseline_code.resolve())] if mode == "baseline" else []
        env = {**os.environ, "MNEMO_RERANKER": args.reranker} if mode == "after" and args.reranker else os.environ
        out = subprocess.run([sys.executable, __file__, "--mode", mode, "--snapshot", str(snapshot),
                              "--questions", str(args.questions), "--search-mode", args.search_mode, *code], check=True, capture_output=True, text=True,
                             env=env).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, " \
              f"load avg {os.getloadavg()[0]:.1f}"
    print(f"REST search (mode={args.search_mode}), local stack, {meta['conversation']}: {meta['turns']} memories of one user, enriched "
          f"({meta['status']}); {len(meta['questions'])} questions ({machine})")
    print(f"  {'mode':<7}{'via':<11}{'p50 ms':>8}{'p95 ms':>8}  AWS calls/search")
    for result in results:
        for via in ("testclient", "asgi", "http"):
            r = result[via]
            ops = ", ".join(f"{op} {n}" for op, n in r["aws_calls_per_search"].items()) or "none"
            print(f"  {result['mode']:<7}{via:<11}{r['latency_ms']['p50']:>8.1f}{r['latency_ms']['p95']:>8.1f}  {ops}")
    print("  breakdown, mean ms per search (ASGI, in process):")
    stages = sorted({k for r in results for k in r["asgi"]["breakdown_ms_mean"]})
    print(f"    {'stage':<38}" + "".join(f"{r['mode']:>9}" for r in results))
    for stage in stages:
        print(f"    {stage:<38}" + "".join(f"{r['asgi']['breakdown_ms_mean'].get(stage, 0):>9.2f}" for r in results))
    print_ratio(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "conversation": meta["conversation"], "turns": meta["turns"],
                                    "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
