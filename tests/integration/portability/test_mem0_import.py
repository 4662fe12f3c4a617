"""import_memories source mem0_api (/mcp/r3): a job that pulls every page of a mem0 account from a fake
mem0 platform API served over real HTTP on localhost (more than r3's 1,000 cap, one page failing once
to prove the retry), idempotent by mem0 id, tenant-scoped, and never storing or logging the key."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from mcp.client import Client
from starlette.testclient import TestClient

from tests.conftest import TEST_KEY, FixedClock
from tests.integration.conftest import OTHER_KEY, auth
from tests.integration.erasure.test_erasure import every_item
from tests.integration.portability.test_jobs import run_jobs
from tests.integration.surfaces.test_profile_r3 import run
from tests.integration.surfaces.test_profile_thrindex import text

KEY = "m0-fake-secret-key-7f3a9c"
MEMORIES = 1_010  # above r3's single 1,000-memory fetch


class FakeMem0:
    """mem0's `POST /v2/memories/?page=&page_size=` with `{"filters": {"user_id": ...}}`, paginated as mem0
    answers (`count`, `next`, `previous`, `results`); page 3 answers 503 the first time."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, int, str | None]] = []  # (user, page, authorization)
        self.failed_once = False
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                url = urlparse(self.path)
                query = {k: int(v[0]) for k, v in parse_qs(url.query).items()}
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                user, page, size = body["filters"]["user_id"], query["page"], query["page_size"]
                fake.requests.append((user, page, self.headers.get("authorization")))
                if self.headers.get("authorization") != f"Token {KEY}":
                    return self._answer(401, {"detail": "Invalid token"})
                if page == 3 and not fake.failed_once:
                    fake.failed_once = True
                    return self._answer(503, {"detail": "try again"})
                rows = [{"id": f"mem0-{i}", "memory": f"Ana's mem0 memory number {i}.", "user_id": user,
                         "metadata": {"n": i}, "created_at": "2025-01-02T03:04:05Z"}
                        for i in range(MEMORIES)] if user == "ana" else []
                chunk = rows[(page - 1) * size : page * size]
                more = page * size < len(rows)
                self._answer(200, {"count": len(rows), "next": f"{url.path}?page={page + 1}" if more else None,
                                   "previous": None, "results": chunk})

            def _answer(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def mem0() -> Iterator[FakeMem0]:
    fake = FakeMem0()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture
def enabled(aws, mem0):
    """The services with the mem0 pull switched on and pointed at the fake."""
    from mnemo import bootstrap
    from mnemo.settings import MnemoSettings

    bootstrap.reset()
    container = bootstrap.install(bootstrap.Container(
        MnemoSettings(mem0_import_enabled=True, mem0_api_url=mem0.url), clock=FixedClock()))
    container.keys.ensure("local", "test", ["admin"], TEST_KEY)
    container.keys.ensure("other", "other", ["admin"], OTHER_KEY)
    yield container
    bootstrap.reset()


def pull(container: Any, arguments: dict[str, Any], key: str = TEST_KEY) -> Any:
    from mnemo.surfaces.app import create_app

    async def calls(client: Client) -> Any:
        return await client.call_tool("import_memories", arguments)

    return run(create_app(container), calls, key=key)


def test_a_mem0_pull_is_a_paginated_retried_idempotent_job_that_never_keeps_the_key(enabled, mem0, aws, caplog) -> None:
    caplog.set_level(logging.INFO)  # what the functions log (POWERTOOLS_LOG_LEVEL INFO; botocore DEBUG would show SQS bodies)
    http = TestClient(__import__("mnemo.surfaces.app", fromlist=["create_app"]).create_app(enabled), base_url="http://127.0.0.1:8000")
    # Given a mem0 account with 1,010 memories of "ana": the tool answers with a job at once
    started = pull(enabled, {"source": "mem0_api", "api_key": KEY, "user_id": "ana"})
    job_id = started.structured_content["job_id"]
    assert text(started).startswith(f"Started the mem0 import as job {job_id} (mem0_import, queued)")
    assert mem0.requests == []  # nothing leaves the account inside the request
    # When the worker runs it: 11 pages of 100, page 3 retried once inside its hop
    assert run_jobs(enabled, aws) == 11
    assert [p for _, p, _ in mem0.requests] == [1, 2, 3, 3, *range(4, 12)]
    assert {a for _, _, a in mem0.requests} == {f"Token {KEY}"}  # positive control: the key did reach mem0
    job = http.get(f"/v1/jobs/{job_id}", headers=auth()).json()
    assert job["status"] == "completed" and job["progress"] == {"done": MEMORIES, "total": MEMORIES}
    assert (job["summary"]["imported"], job["summary"]["skipped"], job["summary"]["failed"]) == (MEMORIES, 0, 0)
    exported, cursor = [], ""
    while True:
        page = http.get(f"/v1/export?user_id=ana&limit=100{cursor}", headers=auth()).json()
        exported += page["memories"]
        if not page["next_cursor"]:
            break
        cursor = f"&cursor={page['next_cursor']}"
    assert len(exported) == MEMORIES and {m["metadata"]["source_id"] for m in exported} == {f"mem0-{i}" for i in range(MEMORIES)}
    # The key: in no table item, no log record; the job keeps its last four characters only
    assert KEY not in json.dumps(every_item(aws)) and f'"key_hint": "{KEY[-4:]}"'.replace(" ", "") in json.dumps(every_item(aws)).replace(" ", "").replace("\\", "")
    assert not [r for r in caplog.records if KEY in r.getMessage() or KEY in json.dumps(r.__dict__, default=str)]
    # Tenancy: another tenant neither reads the job nor sees the memories (positive controls above)
    assert http.get(f"/v1/jobs/{job_id}", headers=auth(OTHER_KEY)).status_code == 404
    assert http.get("/v1/export?user_id=ana", headers=auth(OTHER_KEY)).json()["memories"] == []
    # Then a rerun skips every memory by its mem0 id
    again = pull(enabled, {"source": "mem0_api", "api_key": KEY, "user_id": "ana"}).structured_content["job_id"]
    run_jobs(enabled, aws)
    summary = http.get(f"/v1/jobs/{again}", headers=auth()).json()["summary"]
    assert (summary["imported"], summary["skipped"]) == (0, MEMORIES)
    assert summary["reasons"][0] == "item 0: already imported (source id mem0-0)"


def test_a_refused_key_fails_the_job_with_the_reason_and_no_key(enabled, mem0, aws) -> None:
    from mnemo.domain.jobs import JobStep

    job_id = pull(enabled, {"source": "mem0_api", "api_key": "m0-wrong-key-0000", "user_id": "ana"}).structured_content["job_id"]
    principal = enabled.keys.authenticate(TEST_KEY)
    step = JobStep(tenant="local", job_id=job_id, step=0, api_key="m0-wrong-key-0000")
    with pytest.raises(Exception, match="api_key: mem0 refused it"):
        enabled.jobs.run(step)
    enabled.jobs.fail(step, _last_error(enabled, step))
    job = enabled.jobs.get(principal, job_id)
    assert job.status == "failed" and job.error.startswith("api_key: mem0 refused it (HTTP 401)")
    assert "m0-wrong-key-0000" not in json.dumps(every_item(aws)) and "m0-wrong" not in repr(step)


def _last_error(container: Any, step: Any) -> Exception:
    try:
        container.jobs.run(step)
    except Exception as exc:
        return exc
    raise AssertionError("the step should fail")
