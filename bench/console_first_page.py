"""The console's first page on a user with 10,000 memories vs the `GET /v1/memories?limit=50` call it
makes, both timed in the same run (issue 30: the page may add at most 0.5 s over the call).

Starts the local stack as `make dev` does (`python -m mnemo.local`), imports `--memories` memories for
one user (requests of 200), waits for enrichment to settle (so both timings see an idle worker), then
per run, interleaved:
- `api`: `GET /v1/memories?limit=50` for that user with httpx (a warm client);
- `console`: a fresh browser context (cold cache: first visit) opens `/console/#/memories` with the key
  in sessionStorage; timed from navigation start to the 50 rows in the table (performance.now() in the
  page), with the console's own `/v1/memories` call read from the page's resource timing;
- `added`: console minus its own call: what the page adds (HTML, modules, whoami, rendering).

    PYTHONPATH=shared .venv/bin/python bench/console_first_page.py [--memories 10000] [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]
from bench.local_server import start  # noqa: E402

ADMIN = "mn_consolebench_0123456789abcdefghijklmnop"
USER = "bench-console"
CHROMIUM = os.environ.get("MNEMO_CHROMIUM", "/usr/bin/chromium")


def seed(client: httpx.Client, count: int, settle: float) -> float:
    started = time.perf_counter()
    for first in range(0, count, 200):
        items = [{"id": f"m{i}", "content": f"Memory {i}: the team decided item {i % 97} in meeting {i // 97}",
                  "captured_at": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"} for i in range(first, min(first + 200, count))]
        answer = client.post("/v1/import", json={"data": items, "user_id": USER, "skip_duplicates": False})
        answer.raise_for_status()
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline and client.get("/v1/status").json()["pending"]:
        time.sleep(2)
    return time.perf_counter() - started


def console_once(browser: Any, base: str, key: str) -> tuple[float, float]:
    context = browser.new_context()
    context.add_init_script(f"sessionStorage.setItem('mnemo.apiKey', {json.dumps(key)})")
    page = context.new_page()
    page.goto(f"{base}/console/#/memories")
    # a locator wait, not wait_for_function: the console's CSP refuses the eval a string predicate needs
    page.locator("main tbody tr").nth(49).wait_for(timeout=60_000)
    shown = page.evaluate("performance.now()")
    call = page.evaluate("performance.getEntriesByType('resource').filter(e => e.name.includes('/v1/memories?'))"
                         ".map(e => e.responseEnd - e.startTime)[0]")
    context.close()
    return shown, call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--settle", type=float, default=1200, help="seconds to wait for enrichment to finish")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    log = Path(tempfile.mkdtemp(prefix="console-bench-log-")) / "server.log"
    process, base = start(log, ADMIN, MNEMO_IMPORT_DIR=tempfile.mkdtemp(prefix="console-bench-"))
    try:
        print(f"local stack at {base} (log: {log})", flush=True)
        admin = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=120)
        seconds = seed(admin, args.memories, args.settle)
        pending = admin.get("/v1/status").json()["pending"]
        reader = admin.post("/v1/keys", json={"name": "bench reader", "scopes": ["memory:read"], "user_id": USER}).json()["secret"]
        client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {reader}"}, timeout=60)
        api, console, own_call = [], [], []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            version = browser.version
            console_once(browser, base, reader)  # warm the server's code paths once (not counted)
            for _ in range(args.runs):
                started = time.perf_counter()
                page = client.get("/v1/memories", params={"limit": 50})
                api.append((time.perf_counter() - started) * 1000)
                assert len(page.json()["results"]) == 50, page.text
                shown, call = console_once(browser, base, reader)
                console.append(shown)
                own_call.append(call)
            browser.close()
    except httpx.HTTPError:
        raise SystemExit(f"the local stack stopped answering (exit code {process.poll()}); its log: {log}") from None
    finally:
        process.terminate()
        process.wait(timeout=30)
    added = [c - o for c, o in zip(console, own_call, strict=True)]
    median = statistics.median
    print(f"machine: {platform.platform()} | {platform.processor() or platform.machine()} | cpus={os.cpu_count()} | "
          f"python {platform.python_version()} | chromium {version} | load {os.getloadavg()[0]:.2f}")
    print(f"user {USER}: {args.memories} memories imported and enriched in {seconds:.0f} s (pending at start: {pending}); {args.runs} runs")
    print(f"GET /v1/memories?limit=50 (httpx)        median {median(api):7.1f} ms   max {max(api):7.1f} ms")
    print(f"  the same call made by the console        median {median(own_call):7.1f} ms   max {max(own_call):7.1f} ms")
    print(f"console first page (navigation -> 50 rows) median {median(console):7.1f} ms   max {max(console):7.1f} ms")
    print(f"added by the console (page - its call)     median {median(added):7.1f} ms   max {max(added):7.1f} ms   (target <= 500 ms)")


if __name__ == "__main__":
    main()
