"""Domain errors → HTTP status, in one place. Anything unexpected becomes a generic 500."""

from __future__ import annotations

from pydantic import ValidationError

from mnemo.errors import (
    AuthenticationError,
    ConflictError,
    DependencyError,
    ForbiddenError,
    MnemoError,
    NotFoundError,
    UnsupportedEditError,
    ValidationFailed,
)

HTTP_STATUS: dict[type[MnemoError], int] = {
    ValidationFailed: 400,
    UnsupportedEditError: 400,
    AuthenticationError: 401,
    ForbiddenError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    DependencyError: 503,
}


def status_for(error: MnemoError) -> int:
    for kind in type(error).__mro__:
        if kind in HTTP_STATUS:
            return HTTP_STATUS[kind]
    return 500


def describe_validation(exc: ValidationError) -> str:
    """`top_k: Input should be less than or equal to 100; raw: ...` — field first, no pydantic URLs."""
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(p) for p in error["loc"] if p != "body") or "request"
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{location}: {message}")
    return "; ".join(parts)


def as_validation_failure(exc: ValidationError) -> ValidationFailed:
    return ValidationFailed(describe_validation(exc))
