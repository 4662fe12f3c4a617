"""The official MCP Python SDK client against the real local server at /mcp/facts: a recorded fact
replaced by a newer value, an episode whose extracted fact shows up in search after enrichment (the
local poller feeds the worker), a retract that restores the older value, and the 401 before any tool."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcp import Client
from tests.conftest import TEST_KEY
from tests.e2e.conftest import LocalServer, start_server, stop_server
from tests.e2e.test_mcp_python_client import run, structured

pytestmark = pytest.mark.e2e
PATH = "/mcp/facts"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """A server of its own: the episodes written here must not show up in other modules' memory searches."""
    process, base = start_server(tmp_path_factory.mktemp("facts-server") / "server.log")
    yield LocalServer(base=base, key=TEST_KEY)
    stop_server(process)


def test_facts_round_trip_with_the_official_client(server: LocalServer) -> None:
    async def calls(client: Client) -> Any:
        tools = [t.name for t in (await client.list_tools()).tools]
        old = structured(await client.call_tool("record_fact", {"subject": "Grace", "predicate": "works_at", "object": "Acme",
                                                                "group_id": "e2e"}))
        new = structured(await client.call_tool("record_fact", {"subject": "Grace", "predicate": "joined", "object": "Globex",
                                                                "group_id": "e2e"}))
        episode = structured(await client.call_tool("add_episode", {"content": "Heidi moved to Lisbon.", "group_id": "e2e"}))
        # seed 001's own flow: the user says "remember that ..." -> add_episode; later a question -> search
        remember = structured(await client.call_tool("add_episode", {"content": "Remember that Quinn works at Umbrella.",
                                                                      "group_id": "e2e"}))
        deadline, found, quinn = time.monotonic() + 60, [], []
        while time.monotonic() < deadline:
            found = structured(await client.call_tool("search", {"query": "Where does Heidi live?", "group_id": "e2e"}))["edges"]
            quinn = structured(await client.call_tool("search", {"query": "Where does Quinn work?", "group_id": "e2e"}))["edges"]
            if any(e["target"]["name"] == "Lisbon" for e in found) and any(e["source"]["name"] == "Quinn" for e in quinn):
                break
            await asyncio.sleep(0.5)
        retracted = structured(await client.call_tool("retract", {"edge_uuid": new["edge"]["uuid"], "reason": "e2e"}))
        after = structured(await client.call_tool("search", {"query": "Where does Grace work?", "group_id": "e2e"}))
        return tools, old, new, episode, found, retracted, after, remember, quinn

    tools, old, new, episode, found, retracted, after, remember, quinn = run(server, calls, path=PATH)
    assert [(e["source"]["name"], e["predicate"], e["target"]["name"], e["episodes"]) for e in quinn
            if e["source"]["name"] == "Quinn"] == [("Quinn", "works at", "Umbrella", [remember["episode"]["uuid"]])]
    assert tools == ["add_episode", "record_fact", "search", "retract"]
    assert new["invalidated"] == [old["edge"]["uuid"]] and new["edge"]["predicate"] == "works at"
    heidi = next(e for e in found if e["target"]["name"] == "Lisbon")
    assert heidi["predicate"] == "lives in" and heidi["episodes"] == [episode["episode"]["uuid"]]
    assert retracted["edge"]["status"] == "retracted"
    uuids = [e["uuid"] for e in after["edges"]]
    assert uuids[0] == old["edge"]["uuid"] and new["edge"]["uuid"] not in uuids  # Acme is back, first


def test_what_did_i_decide_finds_the_decision(server: LocalServer) -> None:
    """Seed 001: "User asks 'what did I decide about…' → search"; the decision said in an episode is found
    (issue 29: the local extractor makes the decision a fact); another decision of the same group, unrelated
    to the question, is dropped by the default floor (issue 54) and comes back below it with threshold 0."""
    question = "what did I decide about the billing database?"

    async def calls(client: Client) -> Any:
        said = [structured(await client.call_tool("add_episode", {"content": text, "group_id": "decide"}))
                for text in ("I decided that the team will use Postgres for the billing service.",
                             "We decided to name the dog Biscuit.")]
        deadline, everything = time.monotonic() + 60, []
        while time.monotonic() < deadline:
            everything = structured(await client.call_tool("search", {"query": question, "group_id": "decide",
                                                                      "threshold": 0}))["edges"]
            if len({e["episodes"][0] for e in everything if e["predicate"] == "decided"}) == 2:
                break
            await asyncio.sleep(0.5)
        default = structured(await client.call_tool("search", {"query": question, "group_id": "decide"}))["edges"]
        return said, default, everything

    (billing, dog), default, everything = run(server, calls, path=PATH)

    def decisions(edges: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
        return [(e["source"]["name"], e["target"]["name"], e["episodes"]) for e in edges if e["predicate"] == "decided"]

    billing_decision = ("user", "the team will use Postgres for the billing service", [billing["episode"]["uuid"]])
    assert decisions(default) == [billing_decision]
    # Control: with threshold 0 the dog's name is there too, ranked below
    assert decisions(everything) == [billing_decision, ("user", "name the dog Biscuit", [dog["episode"]["uuid"]])]


def test_a_bad_key_is_401_before_any_tool_runs(server: LocalServer) -> None:
    response = httpx.post(server.base + PATH, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Authorization": "Bearer mn_wrong_0000000000000000000000"})
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"
