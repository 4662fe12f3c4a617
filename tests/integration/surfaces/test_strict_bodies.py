"""Issue 53 §3: REST bodies are strict JSON types, as MCP arguments are (`as_user: "yes"` was stored as
true), and no JSON a client sends nests past `MAX_JSON_DEPTH` (10,000 levels answered "not valid JSON"
on REST, a parse error on MCP, and "Error executing tool" from r3's json_file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mnemo.domain.limits import MAX_JSON_DEPTH
from tests.integration.conftest import MCP_HEADERS, auth, mcp_call
from tests.integration.surfaces.test_profile_r3 import app, call  # noqa: F401 - the fixture
from tests.integration.surfaces.test_profile_thrindex import error_text, text

# An otherwise valid body for every route whose JSON body has a boolean, integer or number field.
VALID: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/v1/memories"): {"content": "Strict bodies keep their JSON types."},
    ("post", "/v1/memories/search"): {"query": "JSON types"},
    ("post", "/v1/episodes"): {"content": "Alice moved to Lisbon in May."},
    ("post", "/v1/facts"): {"subject": "Alice", "predicate": "lives_in", "object": "Lisbon"},
    ("post", "/v1/search"): {"query": "Where does Alice live?"},
    ("post", "/v1/import"): {"data": [{"content": "Imported with strict types."}]},
    ("post", "/v1/oauth/connect-codes"): {},
}
WRONG = {"boolean": ["yes", "true", "no", "off", "1", 1, 0], "integer": ["5", "1", True], "number": ["0.5", "1", True]}
TOO_DEEP = f"must be nested at most {MAX_JSON_DEPTH} levels deep (objects and arrays)"
MCP = {**MCP_HEADERS, **auth(), "mcp-protocol-version": "2025-06-18"}


def scalar_fields(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """(method, path) → {field: its schema (the non-null branch)} for each boolean, integer or number field of a JSON body."""
    schemas = document["components"]["schemas"]

    def branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
        """The non-null alternatives of a schema, each $ref resolved (`X | None` is anyOf [X, null])."""
        found = [b for b in schema.get("anyOf", [schema]) if b.get("type") != "null"]
        return [schemas[b["$ref"].rsplit("/", 1)[1]] if "$ref" in b else b for b in found]

    found: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            (model,) = branches(body["schema"])
            fields = {}
            for name, prop in model.get("properties", {}).items():
                kinds = branches(prop)
                if any(k.get("type") in WRONG for k in kinds):
                    assert len(kinds) == 1, f"{path} {name}: a number or boolean in a union; say here what is wrong for it"
                    fields[name] = kinds[0]
            if fields:
                found[(method, path)] = fields
    return found


def right_values(schema: dict[str, Any]) -> list[Any]:
    if schema["type"] == "boolean":
        return [True, False]
    bounds = [schema[k] for k in ("minimum", "maximum") if k in schema] or [schema.get("default", 1)]
    # the document may write an integer's bound as 1.0; a number field takes a JSON integer too (threshold: 0 and 1)
    return [int(v) for v in bounds]


def test_every_boolean_and_number_in_a_rest_body_refuses_other_json_types(http) -> None:
    found = scalar_fields(http.get("/openapi.json").json())
    assert set(found) == set(VALID), "a route with a boolean/number body field needs an entry in VALID"
    assert "as_user" in found[("post", "/v1/memories")] and sum(map(len, found.values())) >= 9  # the walk sees them
    for (method, path), fields in found.items():
        for field, schema in fields.items():
            for value in WRONG[schema["type"]]:
                # Given an otherwise valid body with a value of another JSON type ("yes", "5", true for a number)
                response = http.request(method, path, json={**VALID[(method, path)], field: value}, headers=auth())
                # Then it is refused naming the field, nothing stored
                assert response.status_code == 400, (path, field, value, response.text)
                error = response.json()["error"]
                assert error["code"] == "validation_error" and error["message"].startswith(f"{field}: must be"), (path, error)
            for value in right_values(schema):
                # Positive control: the same body with the declared type is not a validation error
                response = http.request(method, path, json={**VALID[(method, path)], field: value}, headers=auth())
                refused = response.status_code >= 400 and response.json()["error"]["code"] == "validation_error"
                assert not refused, (path, field, value, response.text)


def test_as_user_yes_is_refused_and_true_is_the_users_memory(http) -> None:
    refused = http.post("/v1/memories", json={"content": "I prefer tea.", "as_user": "yes"}, headers=auth())
    assert refused.json() == {"error": {"code": "validation_error", "message": "as_user: must be true or false"}}
    assert http.get("/v1/memories", params={"author": "all"}, headers=auth()).json()["results"] == []  # nothing stored
    stored = http.post("/v1/memories", json={"content": "I prefer tea.", "as_user": True}, headers=auth())
    assert (stored.status_code, stored.json()["author"]) == (201, "user")


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_rest_body_nested_past_the_limit_is_refused_naming_it(http) -> None:
    headers = {**auth(), "content-type": "application/json"}
    for levels in (10_000, MAX_JSON_DEPTH - 1):  # the body and metadata add 2 levels: 10,000 and 65 are too deep
        body = '{"content": "Deep.", "metadata": {"a": ' + nested(levels) + "}}"
        response = http.post("/v1/memories", content=body, headers=headers)
        assert (response.status_code, response.json()) == (400, {"error": {"code": "validation_error", "message": f"body: {TOO_DEEP}"}})
    # Positive control: 64 levels pass the rule and reach the model (whose metadata allows 16 below it)
    body = '{"content": "Deep.", "metadata": {"a": ' + nested(MAX_JSON_DEPTH - 2) + "}}"
    within = http.post("/v1/memories", content=body, headers=headers).json()["error"]["message"]
    assert within.startswith("metadata: must be nested at most 16 levels deep")
    assert http.get("/v1/memories", headers=auth()).json()["results"] == []  # nothing refused was stored
    brackets = '{"content": "' + "[" * 5000 + '", "metadata": {"k": "' + "{" * 5000 + '"}}'  # inside strings: text
    assert http.post("/v1/memories", content=brackets, headers=headers).status_code == 201


def test_an_mcp_message_nested_past_the_limit_is_refused_naming_it(http) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_memory", "arguments": {"content": "x"}}}
    deep = json.dumps(message).replace('"content": "x"', '"content": "x", "metadata": {"a": ' + nested(10_000) + "}")
    response = http.post("/mcp/r3", content=deep, headers=MCP)
    assert (response.status_code, response.json()) == (400, {"error": {"code": "validation_error", "message": f"body: {TOO_DEEP}"}})
    # Positive control: metadata at its own limit (16 levels below it) is within the message's, and stored
    metadata: dict[str, Any] = {"leaf": 1}
    for _ in range(16):
        metadata = {"a": metadata}
    stored = mcp_call(http, "add_memory", {"content": "Deep but allowed.", "metadata": metadata}, path="/mcp/r3")
    assert not stored["isError"], stored


def test_r3_json_file_nested_past_the_limit_is_a_tool_error_naming_it(app, container, tmp_path: Path) -> None:  # noqa: F811
    container.settings.import_dir = str(tmp_path)
    (tmp_path / "deep.json").write_text(nested(10_000))
    assert error_text(call(app, "import_memories", {"source": "json_file", "file_path": "deep.json"})
                      ) == f"file_path: the file's JSON {TOO_DEEP}"
    (tmp_path / "huge.json").write_text('[{"content": "x", "metadata": {"n": ' + "9" * 5000 + "}}]")
    assert error_text(call(app, "import_memories", {"source": "json_file", "file_path": "huge.json"})
                      ).startswith("file_path: is not valid JSON (Exceeds the limit (4300 digits)")
    # Positive control: a file whose items carry metadata 16 levels deep is imported
    metadata: dict[str, Any] = {"leaf": 1}
    for _ in range(16):
        metadata = {"a": metadata}
    (tmp_path / "ok.json").write_text(json.dumps({"results": [{"memory": "Files may nest.", "metadata": metadata}]}))
    assert text(call(app, "import_memories", {"source": "json_file", "file_path": "ok.json"})) == "Imported 1, skipped 0, failed 0"
