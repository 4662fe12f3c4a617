"""Round trips to the local server as `make dev` runs it (`python -m mnemo.local`, a fresh process per
run): p50 per call of MCP `tools/call` through the official client and of REST calls through httpx,
one keep-alive connection each, after 20 captures. With `--baseline-code DIR` (another checkout, e.g.
`git archive <commit> | tar -x -C DIR`) its server is measured in the same run, the two alternating.

    PYTHONPATH=shared:. .venv/bin/python bench/local_round_trip.py [--baseline-code DIR] [--calls 25] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.local_server import start  # noqa: E402

KEY = "mn_roundtrip_0123456789abcdefghijklmnop"
USER = "round-trip"


async def timed(call: Callable[[int], Awaitable[Any]], calls: int) -> float:
    """p50 in ms of `calls` calls, after two unmeasured ones."""
    for i in range(2):
        await call(i)
    spent = []
    for i in range(calls):
        started = time.perf_counter()
        await call(i)
        spent.append((time.perf_counter() - started) * 1000)
    return statistics.median(spent)


async def measure(base: str, calls: int) -> dict[str, float]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from mcp import Client

    headers = {"Authorization": f"Bearer {KEY}"}

    async def ok(response: Awaitable[httpx.Response]) -> None:
        (await response).raise_for_status()

    async def tool(client: Any, name: str, arguments: dict[str, Any]) -> None:
        if (await client.call_tool(name, arguments)).is_error:
            raise SystemExit(f"{name} failed")

    p50: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as rest:
        for i in range(20):
            await ok(rest.post("/v1/memories", json={"content": f"Note {i}: the standup moved to {9 + i % 8}am "
                                                                f"on Tuesdays for project {i}.", "user_id": USER}))
        p50["REST POST /v1/memories/search"] = await timed(lambda i: ok(rest.post(
            "/v1/memories/search", json={"query": f"standup project {i}", "user_id": USER})), calls)
        p50["REST GET /v1/memories"] = await timed(lambda i: ok(rest.get("/v1/memories", params={"user_id": USER})), calls)
        p50["REST GET /healthz"] = await timed(lambda i: ok(rest.get("/healthz")), calls)
    transport = streamable_http_client(f"{base}/mcp", http_client=create_mcp_http_client(headers=headers))
    async with Client(transport) as client:
        p50["MCP retrieve_thoughts (search)"] = await timed(
            lambda i: tool(client, "retrieve_thoughts", {"query": f"standup project {i}"}), calls)
        p50["MCP retrieve_thoughts (browse)"] = await timed(
            lambda i: tool(client, "retrieve_thoughts", {"order": "created_at"}), calls)
        p50["MCP capture_thought"] = await timed(
            lambda i: tool(client, "capture_thought", {"raw": f"Round trip {i}: lunch is at noon."}), calls)
    return p50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-code", type=Path, help="another checkout whose server is measured beside this one")
    parser.add_argument("--calls", type=int, default=25, help="measured calls per kind and run")
    parser.add_argument("--rounds", type=int, default=2, help="runs per checkout (alternating)")
    args = parser.parse_args()
    checkouts = {"baseline": args.baseline_code, "this": REPO} if args.baseline_code else {"this": REPO}
    runs: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in checkouts}
    for _ in range(args.rounds):
        for name, code in checkouts.items():
            with tempfile.TemporaryDirectory() as scratch:
                process, base = start(Path(scratch) / "server.log", KEY, code=code.resolve())
                try:
                    for call, ms in asyncio.run(measure(base, args.calls)).items():
                        runs[name][call].append(ms)
                finally:
                    process.terminate()
                    process.wait(15)
    print(f"Local server round trips, p50 ms per run ({platform.platform()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, load avg {os.getloadavg()[0]:.1f})")
    names = list(checkouts)
    print(f"  {'call':<34}" + "".join(f"{n:>22}" for n in names) + ("   this/baseline" if len(names) == 2 else ""))
    for call in runs["this"]:
        medians = [statistics.median(runs[n][call]) for n in names]
        cells = "".join(f"{', '.join(f'{ms:.1f}' for ms in runs[n][call]):>22}" for n in names)
        print(f"  {call:<34}{cells}" + (f"   {medians[1] / medians[0]:.2f}x" if len(names) == 2 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
