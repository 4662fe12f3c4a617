"""Load against a running Mnemo (issue 16): N asyncio clients, a mixed workload of capture, search and
edit over REST for a fixed time; throughput, p50/p99 per operation, errors by status, and a final
check that every acknowledged write is there (captures stored, acknowledged appends in the text).

    MNEMO_API_KEY=mn_bench_0123456789abcdefghijklmnop PORT=8765 .venv/bin/python -m mnemo.local &
    .venv/bin/python bench/load.py --url http://127.0.0.1:8765 --key mn_bench_0123456789abcdefghijklmnop \\
        --clients 20 --seconds 60

Each client owns its memories (edits never contend across clients, as with real users); `--contend`
makes every client append to one shared memory instead, which measures the conflict path (409s are
then expected and counted, not errors). Exits 1 on any error or lost write.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import httpx

MIX = {"capture": 0.4, "search": 0.3, "edit": 0.3}
WORDS = ["coffee", "tea", "paris", "berlin", "meeting", "dentist", "project", "deadline", "sister", "birthday", "guitar", "running", "book"]


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    captured: dict[str, str] = field(default_factory=dict)  # id -> content acknowledged
    appended: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # id -> tokens acknowledged


async def client_loop(http: httpx.AsyncClient, n: int, deadline: float, results: Results, shared: str | None) -> None:
    rng = random.Random(n)
    mine: list[str] = []
    user = f"load{n:02d}"
    while time.monotonic() < deadline:
        op = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        if op == "edit" and not (mine or shared):
            op = "capture"
        started = time.perf_counter()
        try:
            if op == "capture":
                content = f"{rng.choice(WORDS)} {rng.choice(WORDS)} note {uuid.uuid4().hex[:8]}"
                response = await http.post("/v1/memories", json={"content": content, "user_id": user},
                                           headers={"Idempotency-Key": uuid.uuid4().hex})
                if response.status_code == 201:
                    mine.append(response.json()["id"])
                    results.captured[response.json()["id"]] = content
            elif op == "search":
                response = await http.post("/v1/memories/search", json={"query": rng.choice(WORDS), "user_id": user, "top_k": 5})
            else:
                target = shared or rng.choice(mine)
                token = uuid.uuid4().hex[:6]
                response = await http.patch(f"/v1/memories/{target}", json={"edit_request": f"append: {token}"})
                if response.status_code == 200:
                    results.appended[target].append(token)
        except httpx.HTTPError as exc:
            results.errors[f"{op}: {type(exc).__name__}"] += 1
            continue
        results.latencies[op].append(time.perf_counter() - started)
        results.statuses[(op, response.status_code)] += 1
        expected_conflict = op == "edit" and shared is not None and response.status_code == 409
        if response.status_code >= 400 and not expected_conflict:
            results.errors[f"{op}: {response.status_code} {response.text[:120]}"] += 1
        if op == "edit" and len(mine) > 0 and shared is None and rng.random() < 0.02:
            mine.pop(0)  # keep appends within the 8 KB text limit on long runs


async def verify(http: httpx.AsyncClient, results: Results) -> dict[str, int]:
    """Every acknowledged capture is stored with its text; every acknowledged append is in the text."""
    lost_captures = lost_appends = 0
    for memory_id, content in results.captured.items():
        response = await http.get(f"/v1/memories/{memory_id}")
        if response.status_code != 200 or not response.json()["content"].startswith(content):
            lost_captures += 1
        else:
            text = response.json()["content"].split()
            lost_appends += sum(1 for token in results.appended.get(memory_id, []) if token not in text)
    return {"lost_captures": lost_captures, "lost_appends": lost_appends}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--key", default=os.environ.get("MNEMO_API_KEY", ""))
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--contend", action="store_true", help="every client appends to one shared memory")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    headers = {"authorization": f"Bearer {args.key}"}
    limits = httpx.Limits(max_connections=args.clients + 2)
    async with httpx.AsyncClient(base_url=args.url, headers=headers, timeout=60, limits=limits) as http:
        shared = None
        if args.contend:
            shared = (await http.post("/v1/memories", json={"content": "shared", "user_id": "load-shared"})).json()["id"]
        results = Results()
        started = time.monotonic()
        deadline = started + args.seconds
        await asyncio.gather(*(client_loop(http, n, deadline, results, shared) for n in range(args.clients)))
        elapsed = time.monotonic() - started
        if shared:
            results.captured[shared] = "shared"
        lost = await verify(http, results)
    total = sum(len(v) for v in results.latencies.values())
    report = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}",
        "clients": args.clients, "seconds": round(elapsed, 1), "requests": total,
        "throughput_rps": round(total / elapsed, 1),
        "operations": {op: {"count": len(v), "p50_ms": round(percentile(v, 0.5), 1), "p99_ms": round(percentile(v, 0.99), 1),
                            "mean_ms": round(statistics.fmean(v) * 1000, 1)} for op, v in sorted(results.latencies.items())},
        "statuses": {f"{op} {status}": count for (op, status), count in sorted(results.statuses.items())},
        "errors": dict(results.errors), **lost,
    }
    print(json.dumps(report, indent=2))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
    return 1 if results.errors or lost["lost_captures"] or lost["lost_appends"] else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
