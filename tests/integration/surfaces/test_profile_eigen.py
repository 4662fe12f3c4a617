"""Contract of the Eigen profile (seed 000) at /mcp, in process: the official SDK client over the
ASGI app (auth, routing, registry and profile as deployed), moto underneath.

The table below is the seed's tool reference as Mnemo declares it: a change to a tool's name, an
argument's name, type, default or range, or a behaviour hint fails here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import httpx
import pytest
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from tests.conftest import TEST_KEY

BASE = "http://127.0.0.1:8000"
REQUIRED = object()


class Arg(NamedTuple):
    type: str
    default: Any = REQUIRED
    enum: list[str] | None = None
    range: tuple[float | None, float | None] = (None, None)


class Hints(NamedTuple):
    read_only: bool
    destructive: bool
    idempotent: bool


SEED_000: dict[str, tuple[Hints, dict[str, Arg]]] = {
    "capture_thought": (Hints(read_only=False, destructive=False, idempotent=False), {
        "raw": Arg("string"),
        "captured_at": Arg("string|null", None),
        "as_user": Arg("boolean|null", None),
        "author": Arg("string|null", None),
    }),
    "retrieve_thoughts": (Hints(read_only=True, destructive=False, idempotent=True), {
        "query": Arg("string|null", None),
        "order": Arg("string|null", None, enum=["relevance", "created_at"]),
        "top_k": Arg("integer", 10, range=(1, 100)),
        "threshold": Arg("number|null", None, range=(0.0, 1.0)),
        "mode": Arg("string", "full", enum=["fast", "full"]),
        "detail": Arg("string", "snippet", enum=["snippet", "full"]),
        "author": Arg("string", "user", enum=["user", "agent", "all"]),
        "include_agent": Arg("boolean", False),
        "cursor_created_at": Arg("string|null", None),
        "cursor_id": Arg("string|null", None),
    }),
    "edit_thought": (Hints(read_only=False, destructive=True, idempotent=False), {
        "thought_id": Arg("string"),
        "edit_request": Arg("string|null", None),
        "raw_text": Arg("string|null", None),
    }),
    "delete_thought": (Hints(read_only=False, destructive=False, idempotent=True), {  # archive: reversible
        "thought_id": Arg("string"),
    }),
}


def declared(schema: dict[str, Any]) -> Arg:
    """One argument's JSON schema reduced to what the seed specifies."""
    variants = schema.get("anyOf", [schema])
    value = next(v for v in variants if v.get("type") != "null")
    return Arg(
        "|".join(v["type"] for v in variants),
        schema.get("default", REQUIRED),
        value.get("enum"),
        (value.get("minimum"), value.get("maximum")),
    )


def run_mcp(http_app: Any, calls: Callable[[Client], Awaitable[Any]], *, path: str = "/mcp") -> Any:
    async def main() -> Any:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=http_app), base_url=BASE,
                                 headers={"authorization": f"Bearer {TEST_KEY}"}, timeout=30)
        async with http, Client(streamable_http_client(BASE + path, http_client=http)) as client:
            return await calls(client)

    return asyncio.run(main())


@pytest.fixture
def app(container, principal):
    from mnemo.surfaces.app import create_app

    return create_app(container)


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error
    return " ".join(c.text for c in result.content)


def test_tools_list_is_the_seed_argument_for_argument(app) -> None:
    async def calls(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run_mcp(app, calls)}
    assert list(tools) == list(SEED_000)
    for name, (hints, arguments) in SEED_000.items():
        schema = tools[name].input_schema
        assert {arg: declared(s) for arg, s in schema["properties"].items()} == arguments, name
        assert list(schema["properties"]) == list(arguments), f"{name}: argument order"
        assert schema.get("required", []) == [a for a, spec in arguments.items() if spec.default is REQUIRED]
        assert schema["additionalProperties"] is False
        annotations = tools[name].annotations
        assert Hints(annotations.read_only_hint, annotations.destructive_hint, annotations.idempotent_hint) == hints, name
        assert annotations.title and len(tools[name].description) > 60


def test_one_round_trip_per_tool_in_the_seeds_words(app) -> None:
    async def calls(client: Client) -> Any:
        captured = structured(await client.call_tool("capture_thought", {"raw": " Standups are Tuesdays at 10am. ", "as_user": True}))
        thought_id = captured["thought"]["id"]
        browsed = structured(await client.call_tool("retrieve_thoughts", {"top_k": 5, "detail": "full"}))
        edited = structured(await client.call_tool("edit_thought", {"thought_id": thought_id, "raw_text": "Standups are Wednesdays"}))
        deleted = structured(await client.call_tool("delete_thought", {"thought_id": thought_id}))
        return captured, browsed, edited, deleted

    captured, browsed, edited, deleted = run_mcp(app, calls)
    thought = captured["thought"]
    assert thought["normalizedText"] == "Standups are Tuesdays at 10am." and thought["author"] == "user"
    assert {"id", "normalizedText", "category", "metadata"} <= set(thought) and "score" not in thought
    assert captured["summary"].startswith(f"Stored the user's memory {thought['id']}")
    assert [t["id"] for t in browsed["results"]] == [thought["id"]] and browsed["next_cursor"] is None
    assert edited["ok"] is True and edited["thought"]["normalizedText"] == "Standups are Wednesdays"
    assert edited["thought"]["version"] == 2
    assert deleted == {"ok": True, "id": thought["id"], "status": "archived", "message": "archived; reopen with edit_thought",
                       "scope": captured["scope"]}  # the namespace written (issue 27), the capture's


def test_failures_read_field_first_and_unknown_arguments_are_refused(app) -> None:
    async def calls(client: Client) -> Any:
        return [
            await client.call_tool("retrieve_thoughts", {"top_k": 101}),
            await client.call_tool("retrieve_thoughts", {"threshold": -0.5}),
            await client.call_tool("retrieve_thoughts", {"mode": "slow"}),
            await client.call_tool("capture_thought", {}),
            await client.call_tool("capture_thought", {"raw": "x", "captured_at": "last tuesday"}),
            await client.call_tool("capture_thought", {"raw": "x", "user_id": "evil", "metadata": {"k": "v"}}),
            await client.call_tool("delete_thought", {"thought_id": "no-such-id"}),
        ]

    texts = [error_text(result) for result in run_mcp(app, calls)]
    assert texts == [
        "top_k: must be at most 100",
        "threshold: must be at least 0.0",
        "mode: must be 'fast' or 'full'",
        "raw: is required",
        "captured_at: must be an ISO-8601 date or date-time, e.g. 2024-05-08 or 2024-05-08T13:56:00+02:00 (no offset = UTC)",
        "unknown arguments metadata, user_id; capture_thought accepts raw, captured_at, as_user, author",
        "thought no-such-id not found",
    ]


def test_nothing_was_stored_by_a_refused_call(app, container, principal) -> None:
    from mnemo.domain.commands import RetrieveCommand

    async def calls(client: Client) -> Any:
        return await client.call_tool("capture_thought", {"raw": "smuggled", "user_id": "evil"})

    assert run_mcp(app, calls).is_error
    everyone = container.memories.browse(principal, RetrieveCommand(include_agent=True, user_id="evil")).items
    assert everyone == [] and container.memories.browse(principal, RetrieveCommand(include_agent=True)).items == []


def test_the_registry_routes_mcp_profile_paths(container, principal, monkeypatch) -> None:
    """A profile is one registration line: registered under "probe", it is served at /mcp/probe;
    /mcp and the seed's /api/mcp keep serving Eigen; unregistered names are 404 in the envelope."""
    from mnemo.surfaces.app import create_app
    from mnemo.surfaces.profiles import PROFILES
    from mnemo.surfaces.profiles.toolkit import ProfileServer

    def build_probe(services: Any) -> ProfileServer:
        server = ProfileServer(name="probe", title="Probe", instructions="test")

        @server.tool(title="Ping", read_only=True, destructive=False, idempotent=True)
        def ping() -> str:
            """Answer pong."""
            return "pong"

        return server

    monkeypatch.setitem(PROFILES, "probe", build_probe)
    app = create_app(container)

    async def names(client: Client) -> list[str]:
        return [t.name for t in (await client.list_tools()).tools]

    assert run_mcp(app, names, path="/mcp/probe") == ["ping"]
    assert run_mcp(app, names, path="/mcp") == list(SEED_000)
    assert run_mcp(app, names, path="/api/mcp") == list(SEED_000)
    from starlette.testclient import TestClient

    response = TestClient(app, base_url=BASE).post("/mcp/nope", json={}, headers={"authorization": f"Bearer {TEST_KEY}"})
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "no MCP profile 'nope'; served: /mcp, /mcp/facts, /mcp/thrindex, /mcp/r3, /mcp/probe"}}


def captured_and_enriched(app: Any, aws: Any, texts: list[str]) -> list[str]:
    """The user's thoughts captured through the client, in order, then enriched: their ids."""
    from tests.integration.surfaces.test_profile_thrindex import enrich

    async def capture(client: Client) -> list[str]:
        return [structured(await client.call_tool("capture_thought", {"raw": t, "as_user": True}))["thought"]["id"]
                for t in texts]

    ids = run_mcp(app, capture)
    enrich(aws)
    return ids


def test_a_search_ordered_by_created_at_answers_the_same_hits_newest_first(app, aws) -> None:
    texts = ["I drink green tea every morning.", "Ana gave me a tin of oolong tea.", "The dentist appointment is on Friday."]

    ids = captured_and_enriched(app, aws, texts)

    async def search(client: Client) -> Any:
        by_relevance = structured(await client.call_tool("retrieve_thoughts", {"query": "tea", "threshold": 0}))
        by_date = structured(await client.call_tool("retrieve_thoughts", {"query": "tea", "threshold": 0, "order": "created_at"}))
        return by_relevance, by_date

    by_relevance, by_date = run_mcp(app, search)
    relevant = [t["id"] for t in by_relevance["results"]]
    assert sorted(relevant) == sorted(ids) and relevant[-1] == ids[2]  # the control: the unrelated one ranks last
    assert [t["id"] for t in by_date["results"]] == ids[::-1]  # the same hits, newest first
    assert all("score" in t for t in by_date["results"]) and by_date["next_cursor"] is None  # a search: one page


def test_fewer_results_than_top_k_say_what_lies_below_the_threshold(app, aws) -> None:
    texts = ["I take the 8:15 train to work every weekday.", "My sister Lena lives in Graz.",
             "I am vegetarian and allergic to peanuts.", "The dentist appointment is on Friday.",
             "My passport expires in March 2027."]

    ids = captured_and_enriched(app, aws, texts)

    async def search(client: Client) -> Any:
        return [structured(await client.call_tool("retrieve_thoughts", {"query": "train", **extra}))
                for extra in ({"threshold": 0.99}, {"threshold": 0}, {})]

    above_all, everything, defaults = run_mcp(app, search)
    # nothing reaches 0.99: results stay empty, the closest three are beside them, best first, and the note says so
    assert above_all["results"] == [] and len(above_all["weaker"]) == 3 and above_all["weaker"][0]["id"] == ids[0]
    scores = [w["score"] for w in above_all["weaker"]]
    assert scores == sorted(scores, reverse=True) and above_all["weaker"][0]["snippet"] == texts[0]
    assert above_all["note"].startswith("No thought scored the threshold 0.99 or more; the 3 closest below it are in weaker")
    # the control: with no threshold every hit is a result, the same one first, and nothing is below
    assert everything["results"][0]["id"] == ids[0] and everything["weaker"] == [] and everything["note"] is None
    assert everything["results"][0]["score"] == above_all["weaker"][0]["score"]
    # with the defaults, the memory that says "train" is returned, as a result or as a weaker match
    assert ids[0] in [t["id"] for t in defaults["results"]] + [w["id"] for w in defaults["weaker"]], defaults
