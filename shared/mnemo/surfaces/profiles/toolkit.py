"""What every MCP profile shares, so that a profile file is only its seed page in code.

A profile builds a `ProfileServer` and registers its tools with `@server.tool(...)`, declaring the
three behaviour hints every client reads. The server then, for every call:
- rejects arguments the tool does not declare, naming them (MCP is as strict as REST);
- validates the arguments against the tool's signature (the seed's names, defaults and ranges),
  strictly: JSON types as declared, so `"5"` is not an integer and `"yes"` not a boolean (as REST's
  bodies are), and reports failures as `field: what is wrong`, never pydantic's dump;
- guards the tool body: a domain error or a command's validation error becomes an `isError`
  result worded by the profile's `Wording`; anything else stays a crash the SDK logs and hides.
  A profile whose seed promises REST's error envelope (`error_envelope=True`) also sends it as the
  structured content of every failure: `{"error": {"code", "message"}}`, beside the text.
The messages themselves come from the one error writer, `mnemo.surfaces.errors.problem`.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from mnemo.domain.models import Principal
from mnemo.errors import MnemoError
from mnemo.surfaces.errors import problem
from mnemo.surfaces.principal import current_principal

__all__ = ["ProfileError", "ProfileServer", "Wording", "caller", "given"]

logger = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


_GIVEN: ContextVar[frozenset[str]] = ContextVar("mnemo_given_arguments", default=frozenset())


def given(argument: str) -> bool:
    """Whether the current call named `argument` (the tool receives its default otherwise): an explicit
    value can mean more than the default, e.g. a request a key's scopes refuse (permissions.content_check)."""
    return argument in _GIVEN.get()


def caller() -> Principal:
    """The authenticated caller of the current request (set by the MCP endpoint before any tool runs)."""
    return current_principal()


class ProfileError(ToolError):
    """A failed call, already in the profile's words: sent as the `isError` text, verbatim; `code` is
    the error's code (REST's: `not_found`, `validation_error`, ...)."""

    def __init__(self, text: str, code: str) -> None:
        super().__init__(text)
        self.code = code


class _Arguments(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@dataclass(frozen=True)
class Wording:
    """How a profile phrases failures (its own nouns; its seed's exact texts where it has them).

    - `texts`: a field's validation message, verbatim, keyed `"<field>"` or `"<field>:<error type>"`
      (pydantic's types: `missing`, `less_than_equal`, ...), e.g. `{"content:missing": "content is required"}`.
    - `errors`: a template per domain error class (the nearest base class applies), formatted with
      `{message}` (the service's message) and the call's arguments, e.g. `{NotFoundError: "Memory not found: {id}"}`.
    - `names`: the profile's argument name for a domain command's field, where they differ
      (`{"raw": "content"}` when `content` becomes `CaptureCommand.raw`), so messages use the seed's name.
    - `unknown_arguments`: formatted with `{tool}`, `{names}` (the unknown ones), `{argument}`
      ("argument" or "arguments") and `{accepted}`.
    """

    texts: Mapping[str, str] = field(default_factory=dict)
    errors: Mapping[type[MnemoError], str] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)
    unknown_arguments: str = "unknown {argument} {names}; {tool} accepts {accepted}"

    def failure(self, exc: MnemoError | ValidationError, arguments: Mapping[str, Any]) -> str:
        if isinstance(exc, ValidationError):
            return problem(exc, texts=self.texts, noun="argument", names=self.names).message
        for kind in type(exc).__mro__:
            if kind in self.errors:
                return self.errors[kind].format_map(_Arguments(arguments, message=exc.worded(self.names)))
        return problem(exc, names=self.names).message

    def unknown(self, tool: str, names: list[str], accepted: list[str]) -> str:
        return self.unknown_arguments.format(
            tool=tool, names=", ".join(names), argument="argument" if len(names) == 1 else "arguments",
            accepted=", ".join(accepted) or "none",
        )


class _VerbatimArguments(FuncMetadata):
    """The SDK's argument handling minus its JSON pre-parse: arguments arrive as JSON already, so a
    string stays a string. (The SDK parses a string given to any argument not typed plain `str` as
    JSON: r3's `content: '{"theme": "dark"}'` became an object and failed with pydantic's dump, and
    a `reason: "null"` became None.)"""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return dict(data)


def _error_result(text: str, code: str, envelope: bool) -> CallToolResult:
    structured = None
    if envelope:  # the message is the text without the code it may open with ("not_found: edge ... not found")
        structured = {"error": {"code": code, "message": text.removeprefix(f"{code}: ")}}
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured, is_error=True)


class ProfileServer(MCPServer):
    """An MCPServer whose tools are declared with their hints and whose failures speak the profile's words."""

    def __init__(self, *, name: str, title: str, instructions: str, wording: Wording | None = None,
                 error_envelope: bool = False) -> None:
        super().__init__(name=name, title=title, instructions=instructions)
        self.wording = wording or Wording()
        self.error_envelope = error_envelope

    def tool(  # type: ignore[override]  # MCPServer.tool takes optional hints; a profile must declare them
        self, *, title: str, read_only: bool, destructive: bool, idempotent: bool
    ) -> Callable[[F], F]:
        """Register a tool: the function's name and signature are the tool's name and arguments; its
        docstring (dedented) is the description the agent routes on."""
        annotations = ToolAnnotations(
            title=title, read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent
        )

        def register(fn: F) -> F:
            self.add_tool(self._guarded(fn), name=fn.__name__, description=inspect.cleandoc(fn.__doc__ or ""),
                          annotations=annotations)
            registered = self._tool_manager.get_tool(fn.__name__)
            assert registered is not None
            registered.parameters["additionalProperties"] = False  # tell clients what call_tool enforces
            metadata = registered.fn_metadata
            registered.fn_metadata = _VerbatimArguments(**{name: getattr(metadata, name) for name in FuncMetadata.model_fields})
            return fn

        return register

    def _guarded(self, fn: F) -> F:
        wording = self.wording

        @functools.wraps(fn)
        def run(**arguments: Any) -> Any:
            try:
                return fn(**arguments)
            except (MnemoError, ValidationError) as exc:
                raise ProfileError(wording.failure(exc, arguments), problem(exc).code) from exc

        return run  # type: ignore[return-value]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return await super().call_tool(name, arguments, context)
        accepted = list(tool.parameters.get("properties", {}))
        unknown = sorted(set(arguments) - set(accepted))
        if unknown:
            logger.info("tool %r: unknown arguments %r", name, unknown)
            return _error_result(self.wording.unknown(name, unknown, accepted), "validation_error", self.error_envelope)
        try:  # strict, and before the SDK's own lax pass (which reads "5" as 5 and "yes" as true)
            tool.fn_metadata.arg_model.model_validate(arguments, strict=True)
        except ValidationError as exc:
            logger.info("tool %r rejected arguments: %r", name, sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]}))
            return _error_result(self.wording.failure(exc, arguments), "validation_error", self.error_envelope)
        token = _GIVEN.set(frozenset(arguments))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ProfileError):
                logger.info("tool %r failed: %s", name, type(exc.__cause__.__cause__).__name__)
                return _error_result(str(exc.__cause__), exc.__cause__.code, self.error_envelope)
            raise
        finally:
            _GIVEN.reset(token)
