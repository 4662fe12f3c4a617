"""The one error writer (`mnemo.surfaces.errors.problem`): status, code and a message a caller can act on."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException

from mnemo.errors import ConflictError, DependencyError, ForbiddenError, NotFoundError, UnsupportedEditError
from mnemo.surfaces.errors import Problem, problem


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Annotated[str, Field(min_length=1, max_length=10)]
    top_k: Annotated[int, Field(ge=1, le=100)] = 10
    score: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.5
    mode: Literal["fast", "full"] = "full"
    flag: bool = False
    tags: list[str] = []
    meta: dict[str, Any] = {}


def invalid(**values: Any) -> ValidationError:
    with pytest.raises(ValidationError) as exc:
        Body(**values)
    return exc.value


@pytest.mark.parametrize(("values", "message"), [
    ({}, "text: is required"),
    ({"text": ""}, "text: must not be empty"),
    ({"text": "x" * 11}, "text: must be at most 10 characters"),
    ({"text": "x", "top_k": 101}, "top_k: must be at most 100"),
    ({"text": "x", "top_k": 0}, "top_k: must be at least 1"),
    ({"text": "x", "top_k": "many"}, "top_k: must be an integer"),
    ({"text": "x", "score": 1.0}, "score: must be less than 1.0"),
    ({"text": "x", "score": 0}, "score: must be greater than 0.0"),
    ({"text": "x", "mode": "slow"}, "mode: must be 'fast' or 'full'"),
    ({"text": "x", "flag": "perhaps"}, "flag: must be true or false"),
    ({"text": "x", "tags": "a"}, "tags: must be an array"),
    ({"text": "x", "tags": [1]}, "tags.0: must be a string"),
    ({"text": "x", "meta": 3}, "meta: must be a JSON object"),
    ({"text": "x", "bogus": 1}, "bogus: unknown field"),
    ({"top_k": 0}, "text: is required; top_k: must be at least 1"),
])
def test_validation_messages_are_field_first_and_name_the_limit(values: dict[str, Any], message: str) -> None:
    assert problem(invalid(**values)) == Problem(400, "validation_error", message)


def test_no_pydantic_internals_leak() -> None:
    text = problem(invalid(text="x" * 50, bogus=1)).message
    for leak in ("Body", "input_value", "https://errors.pydantic.dev", "Input should", "type="):
        assert leak not in text


def test_a_surface_supplies_exact_texts_and_its_own_noun() -> None:
    texts = {"top_k": "top_k is out of range", "text:missing": "text is required"}
    assert problem(invalid(top_k=500), texts=texts).message == "text is required; top_k is out of range"
    assert problem(invalid(text="", top_k=5), texts=texts).message == "text: must not be empty"  # only :missing overridden
    assert problem(invalid(text="x", user_id="u"), noun="argument").message == "user_id: unknown argument"


@pytest.mark.parametrize(("error", "status", "code"), [
    (NotFoundError("thought x not found"), 404, "not_found"),
    (ForbiddenError("this API key lacks the 'memory:write' scope"), 403, "missing_scope"),
    (ConflictError("the memory changed"), 409, "conflict"),
    (UnsupportedEditError("cannot apply"), 400, "unsupported_edit"),
    (DependencyError("the store is unavailable"), 503, "dependency_error"),
])
def test_domain_errors_keep_their_code_and_message(error: Exception, status: int, code: str) -> None:
    assert problem(error) == Problem(status, code, str(error))


def test_request_validation_errors_name_the_field_not_where_it_was_found() -> None:
    """FastAPI prefixes locations with body/query/path: the field named `query` is still `query`."""
    exc = RequestValidationError([
        {"type": "missing", "loc": ("body", "query"), "msg": "Field required"},
        {"type": "less_than_equal", "loc": ("query", "limit"), "msg": "x", "ctx": {"le": 100}},
        {"type": "json_invalid", "loc": ("body", 0), "msg": "JSON decode error", "ctx": {"error": "Expecting value"}},
        {"type": "model_attributes_type", "loc": ("body",), "msg": "Input should be a valid dictionary"},
    ])
    assert problem(exc).message == (
        "query: is required; limit: must be at most 100; body: is not valid JSON; body: must be a JSON object")


def test_router_errors_and_crashes() -> None:
    assert problem(HTTPException(405, "PUT is not allowed on /v1/memories")) == Problem(
        405, "method_not_allowed", "PUT is not allowed on /v1/memories")
    assert problem(RuntimeError("secret detail")) == Problem(500, "internal_error", "internal error; it has been logged")
    assert Problem(404, "not_found", "gone").envelope() == {"error": {"code": "not_found", "message": "gone"}}
