"""In-process HTTP clients over the ASGI app (REST + MCP), two tenants, moto underneath."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from mnemo.adapters.aws import client
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function
from tests.conftest import TEST_KEY

OTHER_KEY = "mn_othertenant_0123456789abcdefghijklmnop"
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
_ids = itertools.count(1)


class Context:
    """The Lambda context object a handler receives."""

    function_name = "mnemo-test"
    function_version = "$LATEST"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mnemo-test"
    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 29_000


@pytest.fixture
def drain(aws, container):
    """Run the real worker over the local queue until it is empty (at most 10 rounds)."""
    sqs = client("sqs")
    sqs.set_queue_attributes(QueueUrl=aws["EnrichmentQueue"], Attributes={"VisibilityTimeout": "0"})
    poller = QueuePoller(sqs, aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)

    def run() -> None:
        for _ in range(10):
            if poller.poll_once() == 0:
                return

    return run


@pytest.fixture
def http(container, principal) -> TestClient:
    from mnemo.surfaces.app import create_app

    container.keys.ensure("other", "other", ["admin"], OTHER_KEY)
    return TestClient(create_app(container), base_url="http://127.0.0.1:8000")


def auth(key: str = TEST_KEY) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def mcp_call(http: TestClient, tool: str, arguments: dict[str, Any], key: str = TEST_KEY, path: str = "/mcp") -> dict[str, Any]:
    """One stateless JSON-RPC tools/call (at `path`: a profile's endpoint); returns the JSON-RPC result."""
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    response = http.post(path, json=body, headers={**MCP_HEADERS, **auth(key), "mcp-protocol-version": "2025-06-18"})
    assert response.status_code == 200, response.text
    return response.json()["result"]


@pytest.fixture(scope="module")
def emulator_url() -> Iterator[str]:
    """An osmem-server (in-memory OpenSearch emulator, PyPI `osmem-server`) on a free 127.0.0.1 port,
    for one test module; it also exits when this process does (`--parent-pid`)."""
    osmem = pytest.importorskip("osmem_server")
    server = osmem.OsmemServer.start(japanese=False)  # no kuromoji: nothing here is Japanese
    try:
        yield server.url
    finally:
        server.close()
