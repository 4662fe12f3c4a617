"""From outside: MNEMO_EXTRACTOR=bedrock with the Bedrock endpoint on a closed local port.
Every capture still succeeds; every memory ends `failed` with a clear reason after the retries,
its message in the DLQ — well within 5 minutes (local queue: 10 s visibility, 3 receives)."""

from __future__ import annotations

import json
import re
import time

import boto3
import httpx
import pytest

from mnemo.local.server import refusing_address
from tests.conftest import TEST_KEY
from tests.e2e.conftest import LocalServer, start_server, stop_server

pytestmark = pytest.mark.e2e


def test_unreachable_llm_fails_visibly_and_parks_messages_in_the_dlq(tmp_path) -> None:
    log = tmp_path / "server.log"
    with refusing_address() as closed:
        process, base = start_server(log, MNEMO_EXTRACTOR="bedrock", AWS_ENDPOINT_URL_BEDROCK_RUNTIME=closed)
        try:
            headers = LocalServer(base, TEST_KEY).headers()
            ids = []
            for text in ("Remember: the dentist is on Friday at 9am.", "Anna prefers tea over coffee."):
                response = httpx.post(f"{base}/v1/memories", headers=headers, json={"content": text, "as_user": True})
                assert response.status_code == 201  # tier 1 never depends on the LLM
                ids.append(response.json()["id"])
            started = time.monotonic()
            status: dict = {}
            while time.monotonic() - started < 300:
                status = httpx.get(f"{base}/v1/status", headers=headers).json()
                if status["pending"] == 0:
                    break
                time.sleep(1)
            elapsed = time.monotonic() - started
            assert status == {"tenant": "local", "pending": 0, "failed": 2, "dlq": 2}, status
            assert elapsed < 300
            for memory_id in ids:
                memory = httpx.get(f"{base}/v1/memories/{memory_id}", headers=headers).json()
                assert memory["enrichment"]["state"] == "failed"
                assert "LLM extraction failed after 3 attempts" in memory["enrichment"]["error"]
                assert memory["content"]  # tier-1 data untouched
            endpoint = re.search(r"AWS:\s+(http://\S+)", log.read_text()).group(1)
            sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1",
                               aws_access_key_id="local", aws_secret_access_key="local")
            dlq = sqs.get_queue_url(QueueName="mnemo-enrichment-dlq")["QueueUrl"]
            # SQS moves a message once a receive finds its count past maxReceiveCount: one visibility
            # timeout after the failure that marked the memory failed.
            parked: set[str] = set()
            while time.monotonic() - started < 300 and parked != set(ids):
                batch = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, VisibilityTimeout=0, WaitTimeSeconds=1)
                parked |= {json.loads(m["Body"])["memory_id"] for m in batch.get("Messages", [])}
            elapsed = time.monotonic() - started
            assert parked == set(ids) and elapsed < 300
            print(f"both memories failed and parked in the DLQ after {elapsed:.0f}s")
        finally:
            stop_server(process)
