"""Every Lambda handler invoked in process with the sample events of events/ (as `sam local invoke` would)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mnemo.local.server import load_function
from tests.conftest import REPO
from tests.integration.conftest import Context

EVENTS = REPO / "events"
EVENT_KEY = "mn_test_local_key_0123456789"  # the key the sample events carry
API_HOST = "a1b2c3d4e5.execute-api.us-east-1.amazonaws.com"


def event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / name).read_text())


@pytest.fixture
def handlers(container, monkeypatch) -> dict[str, Any]:
    monkeypatch.setenv("MNEMO_ALLOWED_HOSTS", json.dumps([API_HOST]))
    from mnemo import bootstrap

    bootstrap.reset()
    bootstrap.container().keys.ensure("local", "events", ["admin"], EVENT_KEY)
    return {name: load_function(name).handler for name in ("api", "mcp", "worker", "reconciler")}


def test_api_health(handlers) -> None:
    response = handlers["api"](event("api_health.json"), Context())
    assert response["statusCode"] == 200 and json.loads(response["body"])["status"] == "ok"


def test_api_create_then_list(handlers) -> None:
    created = handlers["api"](event("api_create_memory.json"), Context())
    assert created["statusCode"] == 201, created["body"]
    memory = json.loads(created["body"])
    listed = handlers["api"](event("api_list_memories.json"), Context())
    assert listed["statusCode"] == 200
    assert memory["id"] in [m["id"] for m in json.loads(listed["body"])["results"]]


def test_api_without_key_is_401(handlers) -> None:
    request = event("api_list_memories.json")
    del request["headers"]["authorization"]
    response = handlers["api"](request, Context())
    assert response["statusCode"] == 401
    assert f'resource_metadata="https://{API_HOST}/.well-known/oauth-protected-resource"' in response["headers"]["www-authenticate"]


def test_mcp_initialize_and_tools_list(handlers) -> None:
    initialized = handlers["mcp"](event("mcp_initialize.json"), Context())
    assert initialized["statusCode"] == 200, initialized["body"]
    assert json.loads(initialized["body"])["result"]["serverInfo"]["name"] == "mnemo"
    listed = handlers["mcp"](event("mcp_tools_list.json"), Context())
    assert listed["statusCode"] == 200, listed["body"]
    names = {t["name"] for t in json.loads(listed["body"])["result"]["tools"]}
    assert names == {"capture_thought", "retrieve_thoughts", "edit_thought", "delete_thought"}


def test_mcp_get_is_405_not_a_hanging_stream(handlers) -> None:
    response = handlers["mcp"](event("mcp_get_405.json"), Context())
    assert response["statusCode"] == 405 and response["headers"]["allow"] == "POST"


def test_mcp_rejects_hosts_outside_the_allowlist(handlers, monkeypatch) -> None:
    monkeypatch.setenv("MNEMO_ALLOWED_HOSTS", "[]")
    from mnemo import bootstrap

    bootstrap.reset()
    response = handlers["mcp"](event("mcp_tools_list.json"), Context())
    assert response["statusCode"] == 421  # DNS-rebinding guard: why the template sets MNEMO_ALLOWED_HOSTS


def test_worker_reports_partial_batch_failures(handlers) -> None:
    # The sample event names memories that do not exist: both are skipped (nothing to enrich), none fail.
    response = handlers["worker"](event("sqs_enrichment.json"), Context())
    assert response == {"batchItemFailures": []}
    poison = event("sqs_enrichment.json")
    poison["Records"][0]["body"] = "not json"
    response = handlers["worker"](poison, Context())
    assert response == {"batchItemFailures": [{"itemIdentifier": poison["Records"][0]["messageId"]}]}


def test_reconciler_runs_on_the_schedule_event(handlers) -> None:
    result = handlers["reconciler"](event("schedule_reconcile.json"), Context())
    assert result == {"requeued": 0}


def test_events_folder_has_a_sample_for_every_function() -> None:
    names = {p.name for p in EVENTS.glob("*.json")}
    assert {"api_health.json", "mcp_initialize.json", "sqs_enrichment.json", "schedule_reconcile.json"} <= names
    assert Path(REPO / "functions").is_dir()
