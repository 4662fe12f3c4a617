"""MCP argument fuzzing (issue 16): hypothesis-generated arguments for every tool of every registered
profile, through the in-process MCP app. Never an internal error; every rejection is a tool error
(`isError`) whose text names the argument at fault (or is a domain answer such as "not found"),
never pydantic's dump, a model name, an input value echo or a URL. New profiles are fuzzed as
soon as they are registered in `mnemo.surfaces.profiles.PROFILES`."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnemo.surfaces.profiles import PROFILES
from tests.integration.conftest import MCP_HEADERS, auth

_ids = itertools.count(1)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                           max_leaves=6)
# `(?-i:...)`: pydantic's model names (`capture_thoughtArguments`), not the English word "arguments"
LEAKS = re.compile(r"internal error|Traceback|input_value|errors\.pydantic|https?://|(?-i:[a-z_]Arguments)\b|"
                   r"validation error for", re.I)
# Domain answers: not a validation failure, so they need not name an argument.
DOMAIN = re.compile(r"not found|not available|cannot apply|does not occur|needs the|already|requires|must be given together", re.I)


def rpc(http, path: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params or {}}
    response = http.post(path, json=body, headers={**MCP_HEADERS, **auth(), "mcp-protocol-version": "2025-06-18"})
    assert response.status_code == 200, response.text
    return response.json()


def for_schema(schema: dict[str, Any], known_ids: list[str]) -> st.SearchStrategy[Any]:
    """Values that fit the property's schema, or nearly: the fuzzer's half of the draw that gets past
    type checks into the service."""
    options = schema.get("anyOf") or [schema]
    strategies: list[st.SearchStrategy[Any]] = []
    for option in options:
        kind = option.get("type")
        if "enum" in option:
            strategies.append(st.sampled_from(option["enum"]))
        elif kind == "string":
            strategies.append(st.text(max_size=60) | st.sampled_from([*known_ids, "2024-05-08T13:56:00Z", "archive",
                                                                       "append: more", "replace a with b", "mark complete"]))
        elif kind == "integer":
            strategies.append(st.integers(-5, 200))
        elif kind == "number":
            strategies.append(st.floats(-2, 2, allow_nan=False))
        elif kind == "boolean":
            strategies.append(st.booleans())
        elif kind == "null":
            strategies.append(st.none())
        elif kind == "object":
            strategies.append(st.dictionaries(st.text(max_size=5), JSON_SCALARS, max_size=3))
    return st.one_of(*strategies) if strategies else JSON_VALUES


def arguments_for(tool: dict[str, Any], known_ids: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    properties = tool["inputSchema"].get("properties", {})
    fitting = {name: for_schema(schema, known_ids) | JSON_VALUES for name, schema in properties.items()}
    chosen = st.fixed_dictionaries({}, optional=fitting)
    strays = st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in properties), JSON_VALUES, max_size=1)
    return st.tuples(chosen, st.one_of(st.just({}), strays)).map(lambda pair: {**pair[0], **pair[1]})


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_tool_survives_fuzzed_arguments(http, profile: str) -> None:
    path = f"/mcp/{profile}" if profile else "/mcp"
    tools = rpc(http, path, "tools/list")["result"]["tools"]
    assert tools
    seed = http.post("/v1/memories", headers=auth(), json={"content": "a memory the fuzzer may edit or archive", "as_user": True})
    known_ids = [seed.json()["id"]]
    outcomes: Counter = Counter()

    for tool in tools:
        fuzz(http, path, tool, known_ids, outcomes)
    print(f"\nMCP fuzz {path}: {len(tools)} tools, {dict(outcomes)}")
    assert outcomes["accepted"] > 0 and outcomes["refused"] > 0  # both sides exercised


def fuzz(http, path: str, tool: dict[str, Any], known_ids: list[str], outcomes: Counter) -> None:
    names = set(tool["inputSchema"].get("properties", {}))

    @given(arguments=arguments_for(tool, known_ids))
    def call(arguments: dict[str, Any]) -> None:
        reply = rpc(http, path, "tools/call", {"name": tool["name"], "arguments": arguments})
        assert "error" not in reply, f"{tool['name']}({json.dumps(arguments)[:300]}) → JSON-RPC error {reply['error']}"
        result = reply["result"]
        if not result.get("isError"):
            outcomes["accepted"] += 1
            return
        text = result["content"][0]["text"]
        outcomes["refused"] += 1
        assert not LEAKS.search(text), f"{tool['name']}: leaky message {text!r}"
        stray = set(arguments) - names
        if stray:
            assert "unknown argument" in text and all(name in text for name in stray), text
        else:
            assert DOMAIN.search(text) or any(re.search(rf"\b{re.escape(n)}\b", text) for n in names), (
                f"{tool['name']}({json.dumps(arguments)[:200]}): rejection names no argument: {text!r}")

    call()
