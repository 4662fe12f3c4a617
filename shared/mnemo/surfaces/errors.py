"""The one writer of error messages and envelopes, for every surface.

`problem(exc)` turns anything a request can fail with (a domain error, a pydantic validation error,
FastAPI's request validation error, an HTTP error of the router, a crash) into a `Problem`: the
status, a stable code and one message. REST sends `problem.envelope()`; MCP sends `problem.message`
as the `isError` text. Validation messages read `field: what is wrong`, naming the limit
(`top_k: must be at most 100`), never pydantic's dump, its URLs, input values or model names. A
profile whose seed gives exact texts passes them as `texts` (see `field_texts`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from mnemo.domain.timestamps import ISO_HINT
from mnemo.errors import (
    AuthenticationError,
    ConflictError,
    DependencyError,
    ForbiddenError,
    MnemoError,
    NotFoundError,
    OAuthError,
    PaymentRequiredError,
    QuotaExceededError,
    RateLimitedError,
    TenantSuspendedError,
    UnsupportedEditError,
    ValidationFailed,
)

HTTP_STATUS: dict[type[MnemoError], int] = {
    ValidationFailed: 400,
    UnsupportedEditError: 400,
    AuthenticationError: 401,
    ForbiddenError: 403,
    TenantSuspendedError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    PaymentRequiredError: 402,
    QuotaExceededError: 429,
    RateLimitedError: 429,
    OAuthError: 400,
    DependencyError: 503,
}
HTTP_CODES: dict[int, str] = {
    400: "validation_error",
    401: "unauthenticated",
    402: "payment_required",
    403: "missing_scope",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "quota_exceeded",
    503: "dependency_error",
}
# Where FastAPI found a request value; the first element of its error locations.
REQUEST_PARTS = {"body", "query", "path", "header", "cookie"}
INTERNAL = "internal error; it has been logged"
# REST's names for the services' fields where they differ: PATCH /v1/memories/{id} takes `content`.
REST_NAMES: Mapping[str, str] = {"raw_text": "content", "raw": "content"}


@dataclass(frozen=True)
class Problem:
    status: int
    code: str
    message: str
    retry_after: int | None = None  # seconds; a quota's is the time left until its month ends

    def envelope(self) -> dict[str, dict[str, str]]:
        """The documented REST (and MCP transport) error body."""
        return {"error": {"code": self.code, "message": self.message}}


RETRY_AFTER_SECONDS = 1  # a 503 is a dependency's hiccup (throttling, a restart): retry soon


def headers_for(error: Problem) -> dict[str, str]:
    """Headers a status implies: `Retry-After` on every 503, so clients back off instead of giving up,
    and on a quota refusal, the seconds until the month ends and the counters start again."""
    if error.retry_after is not None:
        return {"retry-after": str(error.retry_after)}
    return {"retry-after": str(RETRY_AFTER_SECONDS)} if error.status == 503 else {}


async def send_problem(send: Callable[[Any], Awaitable[None]], error: Problem, headers: Mapping[str, str] | None = None) -> None:
    """Answer an ASGI request with the envelope, from middleware that runs before any router."""
    payload = json.dumps(error.envelope()).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in {**headers_for(error), **(headers or {})}.items()]
    await send({"type": "http.response.start", "status": error.status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


def status_for(error: MnemoError) -> int:
    for kind in type(error).__mro__:
        if kind in HTTP_STATUS:
            return HTTP_STATUS[kind]
    return 500


def problem(
    exc: BaseException,
    *,
    texts: Mapping[str, str] | None = None,
    noun: str = "field",
    names: Mapping[str, str] | None = None,
) -> Problem:
    """What went wrong, in the words a caller can act on.

    `texts` replaces the message of one field: key `"<field>:<pydantic error type>"` (e.g.
    `"content:missing"`) or `"<field>"` for any error of that field; the text is used verbatim.
    `noun` is what the surface calls its inputs in "unknown <noun>" ("field" for REST bodies,
    "argument" for MCP tools). `names` renames a field the way the surface calls it, for errors
    raised by a domain command whose field names differ (`{"raw": "content"}`).
    """
    if isinstance(exc, QuotaExceededError | RateLimitedError) and exc.retry_after is not None:
        return Problem(status_for(exc), exc.code, exc.worded(names or {}), retry_after=exc.retry_after)
    if isinstance(exc, MnemoError):
        return Problem(status_for(exc), exc.code, exc.worded(names or {}))
    errors = _validation_errors(exc)
    if errors is not None:
        return Problem(400, "validation_error", describe_errors(errors, texts=texts, noun=noun, names=names))
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and 400 <= status < 500:  # the router's own HTTP errors (404, 405, ...)
        detail = getattr(exc, "detail", None)
        return Problem(status, HTTP_CODES.get(status, "bad_request"), str(detail) if detail else "bad request")
    return Problem(500, "internal_error", INTERNAL)


def describe_errors(
    errors: Iterable[Mapping[str, Any]],
    *,
    texts: Mapping[str, str] | None = None,
    noun: str = "field",
    names: Mapping[str, str] | None = None,
) -> str:
    """`top_k: must be at most 100; raw: must not be empty`: field first, then what is wrong."""
    parts: list[str] = []
    for error in errors:
        loc = tuple(error["loc"])
        if loc and names and str(loc[0]) in names:
            loc = (names[str(loc[0])], *loc[1:])
        field = _field(loc)
        override = (texts or {}).get(f"{field}:{error['type']}") or (texts or {}).get(field)
        text = override or (f"{field}: {_what(error, noun)}" if field else _what(error, noun))
        if text not in parts:
            parts.append(text)
    return "; ".join(parts) or "invalid request"


def describe_validation(exc: ValidationError) -> str:
    """The message of a pydantic validation error (kept for callers that only need the text)."""
    return describe_errors(exc.errors(include_url=False))


def _validation_errors(exc: BaseException) -> list[Mapping[str, Any]] | None:
    """The error list of pydantic's ValidationError or FastAPI's RequestValidationError (whose
    locations start with where the value was found: body, query, path)."""
    if isinstance(exc, ValidationError):
        return list(exc.errors(include_url=False, include_input=False))
    if type(exc).__name__ == "RequestValidationError":  # fastapi's; not imported so MCP needs no FastAPI
        located: list[Mapping[str, Any]] = []
        for error in exc.errors():  # type: ignore[attr-defined]
            loc = tuple(error.get("loc", ()))
            part, rest = (loc[0], loc[1:]) if loc and loc[0] in REQUEST_PARTS else ("", loc)
            if error.get("type") == "json_invalid" or (part == "body" and not rest):
                rest = ("body",)  # the body as a whole: bad JSON, missing, not an object
            located.append({**error, "loc": rest})
        return located
    return None


def _field(loc: Iterable[Any]) -> str:
    return ".".join(str(part) for part in loc)


def _what(error: Mapping[str, Any], noun: str) -> str:
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    message = str(error.get("msg", "is invalid")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    match kind:
        case "missing":
            return "is required"
        case "extra_forbidden":
            return f"unknown {noun}"
        case "less_than_equal":
            return f"must be at most {ctx.get('le')}"
        case "greater_than_equal":
            return f"must be at least {ctx.get('ge')}"
        case "less_than":
            return f"must be less than {ctx.get('lt')}"
        case "greater_than":
            return f"must be greater than {ctx.get('gt')}"
        case "string_too_short":
            n = ctx.get("min_length")
            return "must not be empty" if n == 1 else f"must be at least {n} characters"
        case "string_too_long":
            return f"must be at most {ctx.get('max_length')} characters"
        case "too_short":
            return f"must have at least {ctx.get('min_length')} items"
        case "too_long":
            return f"must have at most {ctx.get('max_length')} items"
        case "literal_error" | "enum":
            return f"must be {ctx.get('expected')}"
        case "string_pattern_mismatch":
            return f"must match {ctx.get('pattern')}"
        case "int_type" | "int_parsing" | "int_from_float":
            return "must be an integer"
        case "int_parsing_size":
            return "is too large"
        case "float_type" | "float_parsing":
            return "must be a number"
        case "finite_number":
            return "must be a finite number"
        case "bool_type" | "bool_parsing":
            return "must be true or false"
        case "string_type":
            return "must be a string"
        case "string_unicode":
            return "must be valid UTF-8 text"
        case "dict_type" | "model_type" | "model_attributes_type":
            return "must be a JSON object"
        case "list_type":
            return "must be an array"
        case "datetime_type" | "datetime_parsing" | "datetime_from_date_parsing" | "datetime_object_invalid":
            return f"must be {ISO_HINT}"
        case "json_invalid":
            return "is not valid JSON"
        case "json_type":
            return "must be a JSON string"
        case "recursion_loop":
            return "is nested too deeply"
    return message
