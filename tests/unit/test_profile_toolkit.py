"""The profile toolkit in process (the SDK's in-memory client): registration with hints, strict
arguments, and failures worded by the profile — including a seed's exact texts (Thrindex's)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import Field

from mcp import Client
from mnemo.domain.commands import CaptureCommand
from mnemo.errors import DependencyError, ForbiddenError, NotFoundError
from mnemo.surfaces.profiles.toolkit import ProfileServer, Wording

# A Thrindex-like profile: the seed's exact error texts supplied through Wording.
THRINDEX_WORDS = Wording(
    texts={"confidence": "confidence must be between 0.0 and 1.0", "content:missing": "content is required"},
    errors={NotFoundError: "Memory not found: {id}", ForbiddenError: "API key is missing the memory:write scope."},
    names={"raw": "content"},
)


def probe_profile() -> ProfileServer:
    server = ProfileServer(name="probe", title="Probe", instructions="A test profile.", wording=THRINDEX_WORDS)

    @server.tool(title="Store", read_only=False, destructive=False, idempotent=False)
    def store_memory(
        content: Annotated[str, Field(description="The information to store.")],
        confidence: Annotated[float, Field(ge=0.0, le=1.0, description="0.0-1.0.")] = 1.0,
    ) -> str:
        """Persist a fact."""
        if content == "forbidden":
            raise ForbiddenError("this API key lacks the 'memory:write' scope")
        if content == "crash":
            raise RuntimeError("secret internal detail")
        CaptureCommand(raw=content)  # the domain's rules, under the domain's field name
        return f"Memory queued for processing.\nConfidence: {confidence:.2f}"

    @server.tool(title="Get", read_only=True, destructive=False, idempotent=True)
    def get_memory(id: Annotated[str, Field(description="The UUID.")]) -> str:
        """Retrieve one memory."""
        if id == "down":
            raise DependencyError("the store is unavailable")
        raise NotFoundError(f"thought {id} not found")  # the service's words; the profile rewords them

    return server


def call(server: ProfileServer, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    async def main() -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool(tool, arguments)
            return bool(result.is_error), " ".join(c.text for c in result.content)

    return asyncio.run(main())


def test_registration_declares_the_three_hints_and_closes_the_schema() -> None:
    async def main() -> Any:
        async with Client(probe_profile()) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in asyncio.run(main())}
    store, get = tools["store_memory"], tools["get_memory"]
    assert (store.annotations.read_only_hint, store.annotations.destructive_hint, store.annotations.idempotent_hint) == (False, False, False)
    assert (get.annotations.read_only_hint, get.annotations.destructive_hint, get.annotations.idempotent_hint) == (True, False, True)
    assert store.input_schema["additionalProperties"] is False
    assert store.description == "Persist a fact." and store.annotations.title == "Store"


def test_a_result_is_the_tools_own_text() -> None:
    assert call(probe_profile(), "store_memory", {"content": "x", "confidence": 0.5}) == (
        False, "Memory queued for processing.\nConfidence: 0.50")


def test_the_seed_supplies_exact_validation_texts() -> None:
    server = probe_profile()
    assert call(server, "store_memory", {"content": "x", "confidence": 1.5}) == (True, "confidence must be between 0.0 and 1.0")
    assert call(server, "store_memory", {"content": "x", "confidence": "high"}) == (True, "confidence must be between 0.0 and 1.0")
    assert call(server, "store_memory", {}) == (True, "content is required")


def test_other_validation_errors_name_the_field_without_pydantic_internals() -> None:
    error, text = call(probe_profile(), "store_memory", {"content": 7})
    assert (error, text) == (True, "content: must be a string")
    for leak in ("Arguments", "input_value", "https://", "pydantic", "Error executing tool"):
        assert leak not in text


def test_a_domain_commands_errors_use_the_profiles_argument_names() -> None:
    assert call(probe_profile(), "store_memory", {"content": "   "}) == (True, "content: must not be empty (after trimming whitespace)")


def test_unknown_arguments_are_refused_naming_them() -> None:
    assert call(probe_profile(), "store_memory", {"content": "x", "user_id": "evil", "tenant": "t"}) == (
        True, "unknown arguments tenant, user_id; store_memory accepts content, confidence")
    assert call(probe_profile(), "get_memory", {"id": "a", "hard": True}) == (
        True, "unknown argument hard; get_memory accepts id")


def test_domain_errors_are_worded_by_the_profile_with_the_calls_arguments() -> None:
    server = probe_profile()
    assert call(server, "get_memory", {"id": "3f2e"}) == (True, "Memory not found: 3f2e")
    assert call(server, "store_memory", {"content": "forbidden"}) == (True, "API key is missing the memory:write scope.")
    assert call(server, "get_memory", {"id": "down"}) == (True, "the store is unavailable")  # no template: the message


def test_a_crash_stays_on_the_server() -> None:
    error, text = call(probe_profile(), "store_memory", {"content": "crash"})
    assert error and "secret internal detail" not in text


def test_arguments_are_strict_json_types_on_every_profile() -> None:
    # The SDK's own validation is lax ("0.5" -> 0.5, "1" -> 1.0); the toolkit validates strictly first
    server = probe_profile()
    assert call(server, "store_memory", {"content": "x", "confidence": "0.5"}) == (True, "confidence must be between 0.0 and 1.0")
    assert call(server, "store_memory", {"content": "x", "confidence": True}) == (True, "confidence must be between 0.0 and 1.0")
    assert call(server, "get_memory", {"id": 5}) == (True, "id: must be a string")
    assert call(server, "store_memory", {"content": "x", "confidence": 1}) == (False, "Memory queued for processing.\nConfidence: 1.00")


def test_the_error_envelope_is_structured_content_only_where_the_profile_asks_for_it() -> None:
    async def main(server: ProfileServer) -> Any:
        async with Client(server) as client:
            return [await client.call_tool("get_memory", {"id": "3f2e"}), await client.call_tool("store_memory", {})]

    plain = probe_profile()
    enveloped = ProfileServer(name="probe", title="Probe", instructions="A test profile.", wording=THRINDEX_WORDS,
                              error_envelope=True)
    enveloped._tool_manager = plain._tool_manager  # the same tools
    assert [r.structured_content for r in asyncio.run(main(plain))] == [None, None]
    assert [r.structured_content for r in asyncio.run(main(enveloped))] == [
        {"error": {"code": "not_found", "message": "Memory not found: 3f2e"}},
        {"error": {"code": "validation_error", "message": "content is required"}}]


def test_a_string_argument_stays_a_string_even_when_it_reads_as_json() -> None:
    # The SDK parses a string given to an argument typed other than plain `str` (here `str | None`) as JSON
    server = ProfileServer(name="probe", title="Probe", instructions="A test profile.")

    @server.tool(title="Echo", read_only=True, destructive=False, idempotent=True)
    def echo(note: Annotated[str | None, Field(description="Any text.")] = None) -> str:
        """Echo the note and its type."""
        return f"{type(note).__name__}: {note}"

    for note in ['{"theme": "dark"}', '["a", "b"]', "null", "7"]:
        assert call(server, "echo", {"note": note}) == (False, f"str: {note}")
    assert call(server, "echo", {}) == (False, "NoneType: None")  # control: omitted is None
    assert call(server, "echo", {"note": ["a"]}) == (True, "note: must be a string")  # a real array is still refused
