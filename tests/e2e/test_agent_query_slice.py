"""What an agent meets with the defaults (issue 54), on the agent-query set's slice (tests/data/
agent_queries_slice.jsonl: a 20-memory English store and a 30-memory German one, dev queries only): a
fresh local server per store, the memories captured through REST as the user's and enriched by the
server's worker, then every keyword and question query to `/mcp` `retrieve_thoughts` with `query` alone
through the official MCP client. The memory that answers is never missing from what the agent reads: in
`results`, or in `weaker` beside them with the `note` saying so. The control: the same query with
`threshold: 0` has it in `results`. Every answer, there and from REST's search, reads in descending
order of the scores it shows, where the local reranker reorders the fused ranking. bench/agent_queries.py measures the
whole set."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp import Client
from tests.conftest import REPO, TEST_KEY
from tests.e2e.conftest import start_server, stop_server

pytestmark = pytest.mark.e2e
SLICE = [json.loads(line) for line in (REPO / "tests" / "data" / "agent_queries_slice.jsonl").read_text().splitlines()]
CLASSES = ("keyword", "question")


@pytest.fixture(params=[store["store"] for store in SLICE])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[dict[str, Any], str, dict[str, str]]]:
    """The store's memories in a fresh server, enriched: (store, base URL, slice id -> server id)."""
    data = next(s for s in SLICE if s["store"] == request.param)
    process, base = start_server(tmp_path / "server.log")
    headers = {"Authorization": f"Bearer {TEST_KEY}"}
    try:
        ids = {}
        for memory in data["memories"]:
            response = httpx.post(f"{base}/v1/memories", json={"content": memory["text"], "as_user": True},
                                  headers=headers, timeout=30)
            assert response.status_code == 201, response.text
            ids[memory["id"]] = response.json()["id"]
        deadline = time.monotonic() + 120
        while httpx.get(f"{base}/v1/status", headers=headers, timeout=30).json()["pending"] and time.monotonic() < deadline:
            time.sleep(0.2)
        yield data, base, ids
    finally:
        stop_server(process)


def test_the_answering_memory_is_in_results_or_weaker_with_the_defaults(store) -> None:
    data, base, ids = store
    queries = [q for q in data["queries"] if q["class"] in CLASSES]
    assert len(queries) >= 5

    async def main() -> list[tuple[dict[str, Any], dict[str, Any]]]:
        transport = streamable_http_client(f"{base}/mcp", http_client=create_mcp_http_client(
            headers={"Authorization": f"Bearer {TEST_KEY}"}))
        async with Client(transport) as client:
            answers = []
            for query in queries:
                defaults = await client.call_tool("retrieve_thoughts", {"query": query["text"]})
                everything = await client.call_tool("retrieve_thoughts", {"query": query["text"], "threshold": 0})
                assert not defaults.is_error and not everything.is_error
                answers.append((defaults.structured_content, everything.structured_content))
            return answers

    below = 0
    moved = 0  # answers where the reranker put a hit above one with a higher fused score
    for query, (defaults, everything) in zip(queries, asyncio.run(main()), strict=True):
        rest = httpx.post(f"{base}/v1/memories/search", json={"query": query["text"], "explain": True},
                          headers={"Authorization": f"Bearer {TEST_KEY}"}, timeout=30).json()["results"]
        for answer in (defaults["results"], everything["results"], rest):
            scores = [hit["score"] for hit in answer]
            assert scores == sorted(scores, reverse=True), (query, scores)
        fused = [(hit.get("explain") or {}).get("fused", hit["score"]) for hit in rest]
        moved += any(later > earlier for earlier, later in zip(fused, fused[1:], strict=False))
        wanted = {ids[a] for a in query["answers"]}
        shown = {t["id"] for t in defaults["results"]}
        weaker = {w["id"] for w in defaults["weaker"]}
        # the control: nothing dropped, the answer is among the results
        assert wanted & {t["id"] for t in everything["results"]}, (query, everything)
        # with the defaults it is a result, or a weaker match beside them, never just absent
        assert wanted & (shown | weaker), (query, defaults)
        if not wanted & shown:
            below += 1
            assert defaults["note"] and len(defaults["results"]) < 10, defaults
    print(f"{data['store']}: {len(queries)} queries, {below} answered only in weaker, {moved} REST answers reordered")
    assert moved, "the reranker reordered nothing: the order check above proved nothing"
