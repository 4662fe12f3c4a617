"""The agent-query set of issue 54 (bench/agent_queries/) as a user meets it: each store's memories captured
into a fresh local server (`python -m mnemo.local`, as `make dev` runs it) through REST, enriched by its own
worker, then every query sent to `/mcp` `retrieve_thoughts` with only `query`, through the official MCP
Python client, exactly as an agent calls it.

Per class (keyword, phrase, question, paraphrase) an answerable query counts as found when any memory it
names is in `results` (what passed the relevance floor); also reported: the answer first in `results`
(top-1), found only among `weaker` (below the floor), and a superseded memory (a stale value) ranked above
every answer. A never-said query is right when `results` is empty. Dev and held-out (bench/agent_queries/
heldout.txt, frozen before tuning) are reported apart; never tune on held-out.

The facts leg sends each query to `POST /v1/search` (limit 10) twice: with `threshold: 0` (the top 10,
from which every floor is read) and as an agent does, with no threshold (the server's default floor). A
fact is relevant when one of its episodes is an answering memory; reported per floor on the dev third:
answerable queries keeping a relevant fact, never-said queries left with none, and the share of unrelated
facts among all returned. `--facts-heldout` adds the held-out third (once a floor is chosen on dev).

`--buried` captures, before each store, the first 2,000 turns of the LoCoMo dev file (`speaker: text`,
each with its conversation as conversation_id, captured now, as the user's own) into the same user: the
store's memories must then be found among 2,000 unrelated ones.

    PYTHONPATH=shared:. .venv/bin/python bench/agent_queries.py [--buried] [--stores 001,002] [--out PATH] [--report PATH]
        [--facts-heldout] [--data ../shared/bench/locomo-dev.json] [--code DIR --commit SHA]

`--code DIR` measures another checkout's server (e.g. `git archive <commit> | tar -x -C DIR`, so that edits
made to this working tree during a run change nothing); the MiniLM model is this checkout's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from bench.local_server import start  # noqa: E402
from tests.unit.test_agent_queries import ANSWERABLE, CLASSES, is_held_out, load_stores  # noqa: E402

KEY = "mn_agentqueries_0123456789abcdefghijklmn"
FILLER = 2000
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo-dev.json"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def filler_turns(data: Path, count: int = FILLER) -> list[tuple[str, str]]:
    """The first `count` turns of the LoCoMo file, in file order: (content, conversation id)."""
    from bench.locomo import data as locomo_data

    conversations, _ = locomo_data.load(data)
    turns = [(t.content, c.sample_id) for c in conversations for t in c.turns]
    if len(turns) < count:
        raise SystemExit(f"{data} has {len(turns)} turns, fewer than {count}")
    return turns[:count]


async def wait_enriched(rest: httpx.AsyncClient, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status = (await rest.get("/v1/status")).raise_for_status().json()
        if status["pending"] == 0:
            return status
        if time.monotonic() > deadline:
            raise SystemExit(f"still pending after {timeout:.0f} s: {status}")
        await asyncio.sleep(0.5)


async def run_store(base: str, store: dict[str, Any], filler: list[tuple[str, str]]) -> dict[str, Any]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from mcp import Client

    headers = {"Authorization": f"Bearer {KEY}"}
    started = time.perf_counter()
    by_server_id: dict[str, set[str]] = defaultdict(set)  # a merged capture answers for every text it took
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as rest:
        gate = asyncio.Semaphore(6)  # filler order does not matter; a few in flight fill the server's threads

        async def bury(content: str, conversation: str) -> None:
            async with gate:
                (await rest.post("/v1/memories", json={"content": content, "as_user": True,
                                                       "conversation_id": conversation})).raise_for_status()

        await asyncio.gather(*(bury(content, conversation) for content, conversation in filler))
        for memory in store["memories"]:
            written = (await rest.post("/v1/memories", json={"content": memory["text"], "as_user": True}))
            by_server_id[written.raise_for_status().json()["id"]].add(memory["id"])
        captured = time.perf_counter() - started
        status = await wait_enriched(rest, timeout=1800)
    enriched = time.perf_counter() - started - captured
    merged = sum(len(ids) - 1 for ids in by_server_id.values())
    stale_of = {m["id"]: m["supersedes"] for m in store["memories"] if "supersedes" in m}
    rows = []
    transport = streamable_http_client(f"{base}/mcp", http_client=create_mcp_http_client(headers=headers))
    async with Client(transport) as client:
        for query in store["queries"]:
            t = time.perf_counter()
            result = await client.call_tool("retrieve_thoughts", {"query": query["text"]})
            ms = (time.perf_counter() - t) * 1000
            if result.is_error:
                raise SystemExit(f"retrieve_thoughts failed for {query['id']}: {result.content}")
            answer = result.structured_content
            shown = [sorted(by_server_id.get(r["id"], {f"filler:{r['id']}"})) for r in answer["results"]]
            weaker = [sorted(by_server_id.get(w["id"], {f"filler:{w['id']}"})) for w in answer.get("weaker", [])]
            answers = set(query["answers"])
            stale = {stale_of[a] for a in answers if a in stale_of}
            first_answer = next((i for i, ids in enumerate(shown) if answers & set(ids)), None)
            first_stale = next((i for i, ids in enumerate(shown) if stale & set(ids)), None)
            rows.append({
                "store": store["store"], "id": query["id"], "class": query["class"], "text": query["text"],
                "held_out": is_held_out(query), "answers": query["answers"], "results": shown, "weaker": weaker,
                "found": first_answer is not None, "top1": first_answer == 0,
                "weaker_only": first_answer is None and any(answers & set(ids) for ids in weaker),
                "stale_above": first_stale is not None and (first_answer is None or first_stale < first_answer),
                "filler_in_results": sum(1 for ids in shown if ids[0].startswith("filler:")),
                "empty": not shown, "ms": round(ms, 1),
            })
    # The facts leg (POST /v1/search, the facts product's search, same shapes as /mcp/facts): a fact is
    # relevant when it came from an answering memory (its episodes name one), so a facts floor can be read off.
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as rest:
        threshold_known = (await rest.post("/v1/search", json={"query": "x", "threshold": 0.0})).status_code == 200
        facts_of: dict[str, int] = {}  # the facts each store memory produced (the facts leg's ceiling)
        for server_id, ids in by_server_id.items():
            detail = (await rest.get(f"/v1/memories/{server_id}")).raise_for_status().json()
            for memory_id in ids:
                facts_of[memory_id] = len(detail["facts"])
        for row, query in zip(rows, store["queries"], strict=True):
            row["answer_has_fact"] = any(facts_of.get(a, 0) for a in query["answers"])
            # threshold 0: every floor is read off the same top 10 (a server before issue 54 knows no threshold
            # and fills to limit anyway); then the request as an agent sends it, the server's default floor
            ask = {"query": query["text"], "limit": 10}
            row["facts"] = await fact_edges(rest, {**ask, "threshold": 0.0} if threshold_known else ask, query, by_server_id)
            row["facts_default"] = await fact_edges(rest, ask, query, by_server_id)
    return {"store": store["store"], "memories": len(store["memories"]), "filler": len(filler), "facts_of": facts_of,
            "merged_on_capture": merged, "capture_s": round(captured, 1), "enrich_s": round(enriched, 1),
            "status": status, "queries": rows}


async def fact_edges(rest: httpx.AsyncClient, body: dict[str, Any], query: dict[str, Any],
                     by_server_id: dict[str, set[str]]) -> list[dict[str, Any]]:
    """POST /v1/search; each edge relevant when one of its episodes is a memory answering the query."""
    found = (await rest.post("/v1/search", json=body)).raise_for_status().json()["edges"]
    answers = set(query["answers"])
    return [{"score": e["score"], "relevant": bool(answers & {i for ep in e["episodes"] for i in by_server_id.get(ep, ())}),
             "fact": e["fact"]} for e in found]


def summarise(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    header = f"  {'class':<12}{'split':<10}{'n':>5}{'found':>8}{'top-1':>8}{'weaker':>8}{'stale':>7}{'empty':>8}{'shown':>7}{'filler':>8}"
    lines.append(header)
    for split in ("dev", "held-out", "all"):
        chosen = [r for r in rows if split == "all" or r["held_out"] == (split == "held-out")]
        groups = [(c, [r for r in chosen if r["class"] == c]) for c in CLASSES]
        groups.append(("answerable", [r for r in chosen if r["class"] in ANSWERABLE]))
        for name, group in groups:
            if not group:
                continue
            n = len(group)

            def rate(key: str, group: list[dict[str, Any]] = group, n: int = n) -> str:
                return f"{sum(r[key] for r in group) / n:.3f}"

            shown = sum(len(r["results"]) for r in group) / n
            filler = sum(r["filler_in_results"] for r in group) / n
            if name == "never_said":
                lines.append(f"  {name:<12}{split:<10}{n:>5}{'':>8}{'':>8}{'':>8}{'':>7}{rate('empty'):>8}{shown:>7.2f}{filler:>8.2f}")
            else:
                lines.append(f"  {name:<12}{split:<10}{n:>5}{rate('found'):>8}{rate('top1'):>8}{rate('weaker_only'):>8}"
                             f"{sum(r['stale_above'] for r in group):>7}{rate('empty'):>8}{shown:>7.2f}{filler:>8.2f}")
    return lines


FLOORS = (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7)


def facts_lines(rows: list[dict[str, Any]], held_out: bool = False) -> list[str]:
    """The facts leg on one third (dev unless `held_out`): per class, a relevant fact among the 10 returned;
    then per floor (a score below it dropped): answerable queries keeping a relevant fact, never-said
    queries left with no fact, irrelevant facts kept per answerable query, and the share of unrelated facts
    among all facts returned (every query, never-said included); last, what the server's default returned."""
    rows = [r for r in rows if "facts" in r and r["held_out"] == held_out]
    if not rows:
        return []
    lines = [f"  facts leg, {'held-out' if held_out else 'dev'} (POST /v1/search, limit 10; relevant = from an answering memory):",
             f"  {'class':<12}{'n':>5}{'answer has a fact':>19}{'relevant fact':>15}{'facts shown':>13}"]
    for name in CLASSES:
        group = [r for r in rows if r["class"] == name]
        if group:
            relevant = sum(any(f["relevant"] for f in r["facts"]) for r in group) / len(group)
            ceiling = sum(r["answer_has_fact"] for r in group) / len(group)
            lines.append(f"  {name:<12}{len(group):>5}{ceiling if name != 'never_said' else float('nan'):>19.3f}{relevant if name != 'never_said' else float('nan'):>15.3f}"
                         f"{sum(len(r['facts']) for r in group) / len(group):>13.2f}")
    lines.append(f"  {'floor':<8}{'answerable with a relevant fact':>33}{'never-said with none':>22}{'irrelevant kept/query':>23}"
                 f"{'unrelated among results':>25}")
    for floor in FLOORS:
        lines.append(f"  {floor:<8.2f}" + floor_cells(rows, lambda f, floor=floor: f["score"] >= floor))
    if any("facts_default" in r for r in rows):
        served = [{**r, "facts": r["facts_default"]} for r in rows]
        lines.append(f"  {'default':<8}" + floor_cells(served, lambda f: True) + "  (no threshold sent)")
    return lines


def floor_cells(rows: list[dict[str, Any]], kept: Any) -> str:
    answerable = [r for r in rows if r["class"] in ANSWERABLE]
    never = [r for r in rows if r["class"] == "never_said"]
    shown = [f for r in rows for f in r["facts"] if kept(f)]
    found = sum(any(f["relevant"] and kept(f) for f in r["facts"]) for r in answerable) / len(answerable)
    none = sum(not any(kept(f) for f in r["facts"]) for r in never) / max(len(never), 1)
    noise = sum(sum(not f["relevant"] and kept(f) for f in r["facts"]) for r in answerable) / len(answerable)
    unrelated = sum(not f["relevant"] for f in shown) / max(len(shown), 1)
    return f"{found:>33.3f}{none:>22.3f}{noise:>23.2f}{unrelated:>18.3f} of {len(shown):<4}"


def per_store(rows: list[dict[str, Any]]) -> list[str]:
    """One line per store and per language: answerable found, never-said empty (dev and held-out together)."""
    language = {s["store"]: s["language"] for s in load_stores()}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["store"]].append(r)
        groups[f"language {language[r['store']]}"].append(r)
    lines = [f"  {'store':<26}{'answerable':>11}{'found':>8}{'paraphrase found':>18}{'never_said':>12}{'empty':>8}"]
    for name, group in sorted(groups.items(), key=lambda item: (item[0].startswith("language"), item[0])):
        found = [r for r in group if r["class"] in ANSWERABLE]
        para = [r for r in group if r["class"] == "paraphrase"]
        never = [r for r in group if r["class"] == "never_said"]
        lines.append(f"  {name:<26}{len(found):>11}{sum(r['found'] for r in found) / len(found):>8.3f}"
                     f"{sum(r['found'] for r in para) / len(para):>18.3f}{len(never):>12}"
                     f"{sum(r['empty'] for r in never) / len(never):>8.3f}")
    return lines


def report(saved: dict[str, Any], facts_held_out: bool = False) -> None:
    runs = saved["runs"]
    rows = [r for run in runs for r in run["queries"]]
    print(f"Agent-query set (issue 54), {saved['label']}: {len(runs)} stores, {sum(r['memories'] for r in runs)} memories"
          + (f", each buried in {runs[0]['filler']} LoCoMo dev turns" if runs and runs[0]["filler"] else "")
          + f"; code {saved['code']}{' + uncommitted changes in shared/' if saved['dirty'] else ''}; {saved['machine']}")
    print("  found = an answering memory in results; top-1 = first result answers; weaker = only below the floor; "
          "stale = a superseded memory above every answer (count); empty = results empty (right for never_said); "
          "shown = mean results; filler = mean filler turns in results")
    for line in summarise(rows):
        print(line)
    for line in per_store(rows) + facts_lines(rows) + (facts_lines(rows, held_out=True) if facts_held_out else []):
        print(line)
    p50 = sorted(r["ms"] for r in rows)[len(rows) // 2] if rows else 0
    print(f"  retrieve_thoughts p50 {p50:.0f} ms over {len(rows)} calls; capture + enrichment "
          f"{sum(r['capture_s'] + r['enrich_s'] for r in runs):.0f} s in all")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--buried", action="store_true", help=f"capture {FILLER} LoCoMo dev turns into each store's user first")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the LoCoMo dev file (for --buried)")
    parser.add_argument("--stores", help="comma-separated store numbers or names (default: all)")
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout whose server is measured (default: this one)")
    parser.add_argument("--commit", help="the commit --code was archived from, for the report (when DIR is no git checkout)")
    parser.add_argument("--report", type=Path, help="print the summary of a saved per-query JSON, run nothing")
    parser.add_argument("--facts-heldout", action="store_true", help="also print the facts leg on the held-out third "
                        "(only once a facts floor is chosen on dev)")
    parser.add_argument("--out", type=Path, help="per-query JSON (default bench/results/agent_queries-<alone|buried>.json)")
    args = parser.parse_args()
    if args.report:
        report(json.loads(args.report.read_text(encoding="utf-8")), args.facts_heldout)
        return 0
    stores = load_stores()
    if args.stores:
        wanted = args.stores.split(",")
        stores = [s for s in stores if s["store"] in wanted or s["store"].split("_")[0] in wanted]
    filler = filler_turns(args.data) if args.buried else []
    code = args.code.resolve()
    commit = subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or args.commit or "unknown"
    dirty = subprocess.run(["git", "-C", str(code), "status", "--porcelain", "--untracked-files=no", "--", "shared"],
                           capture_output=True, text=True).stdout.strip()
    machine = (f"{platform.node()}, {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
               f"load avg {os.getloadavg()[0]:.1f}")
    runs = []
    for store in stores:
        with tempfile.TemporaryDirectory() as scratch:
            process, base = start(Path(scratch) / "server.log", KEY, code=code)
            try:
                run = asyncio.run(run_store(base, store, filler))
            finally:
                process.terminate()
                process.wait(30)
        found = [r for r in run["queries"] if r["class"] in ANSWERABLE]
        never = [r for r in run["queries"] if r["class"] == "never_said"]
        log(f"{store['store']}: {run['memories']} memories (+{run['filler']} filler), captured {run['capture_s']} s, "
            f"enriched {run['enrich_s']} s, status {run['status']}, merged {run['merged_on_capture']}; "
            f"found {sum(r['found'] for r in found)}/{len(found)}, never-said empty {sum(r['empty'] for r in never)}/{len(never)}")
        runs.append(run)
    label = "buried" if args.buried else "alone"
    saved = {"label": label, "code": commit, "dirty": bool(dirty), "machine": machine, "runs": runs}
    report(saved, args.facts_heldout)
    out = args.out or REPO / "bench" / "results" / f"agent_queries-{label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(saved, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    log(f"per-query results -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
