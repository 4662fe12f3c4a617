"""The OpenAPI document states the responses the API really gives, so clients and the API fuzzer
(tests/integration/surfaces/test_api_fuzz.py) can rely on it: validation failures are 400 (never FastAPI's
422), every error is the `{"error": {"code", "message"}}` envelope, and the limits are stated."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, Field

from mnemo.surfaces.gate import MAX_REST_BODY_BYTES


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable machine-readable code: validation_error, unauthenticated, missing_scope, not_found, "
                                  "conflict, user_erased, payload_too_large, dependency_error, unreadable_item, ...")
    message: str = Field(description="What is wrong, field first with the limit: `top_k: must be at most 100`.")


class ErrorEnvelope(BaseModel):
    error: ErrorDetail


def _error(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"model": ErrorEnvelope, "description": description}
    if headers:
        response["headers"] = headers
    return response


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _error("Invalid request: `field: what is wrong (the limit)`; bodies and parameters alike."),
    401: _error("Missing, unknown or revoked API key (checked before the body is read).",
                {"WWW-Authenticate": {"description": "Bearer challenge with resource_metadata", "schema": {"type": "string"}}}),
    403: _error("The key lacks the permission this operation needs (docs/permissions.md)."),
    404: _error("No such memory in the caller's tenant."),
    409: _error("A concurrent change won the race (retry), an Idempotency-Key was reused with another body, or the "
                 "user is being erased (`user_erased`: docs/erasure.md, writes in flight)."),
    413: _error(f"Body larger than {MAX_REST_BODY_BYTES} bytes."),
    500: _error("A stored item that can no longer be read (`unreadable_item`); logged for an operator."),
    503: _error("A dependency is unavailable or throttled; retry after the Retry-After seconds.",
                {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}}),
}


def document_errors(api: FastAPI) -> None:
    """Replace FastAPI's generated 422 (which this API never sends) by the real 400."""
    generate = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is None:
            schema = generate()
            for path in schema.get("paths", {}).values():
                for operation in path.values():
                    operation.get("responses", {}).pop("422", None)
            for unused in ("HTTPValidationError", "ValidationError"):
                schema.get("components", {}).get("schemas", {}).pop(unused, None)
            api.openapi_schema = schema
        return api.openapi_schema

    api.openapi = openapi  # type: ignore[method-assign]
