"""Capture on the real local server → enriched within seconds: category, entities, facts, links."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e


def wait_enriched(server: LocalServer, memory_id: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        memory = httpx.get(f"{server.base}/v1/memories/{memory_id}", headers=server.headers()).json()
        if memory["enrichment"]["state"] != "pending":
            return memory
        time.sleep(0.2)
    raise AssertionError(f"memory {memory_id} still pending after {timeout}s")


def test_capture_is_enriched_with_category_entities_facts_and_links(server: LocalServer) -> None:
    post = lambda content: httpx.post(  # noqa: E731
        f"{server.base}/v1/memories", headers=server.headers(),
        json={"content": content, "user_id": "e2e-enrich", "as_user": True},
    ).json()["id"]
    first = post("Melanie's daughter Sarah loves painting sunsets at Lake Tahoe.")
    second = post("Melanie took Sarah to an art class in Sacramento last Saturday.")
    one, two = wait_enriched(server, first), wait_enriched(server, second)
    assert one["enrichment"] == {"state": "enriched", "error": None}
    assert two["enrichment"]["state"] == "enriched"
    assert one["category"] and two["category"]
    assert {"Melanie", "Sarah"} <= set(two["entities"])
    assert two["facts"] or one["facts"]
    linked = {link["id"]: link for link in two["links"]}
    assert first in linked and linked[first]["reason"] in {"semantic", "entity", "sequence"}
    assert second in {link["id"] for link in wait_enriched(server, first)["links"]}  # stored both ways
    status = httpx.get(f"{server.base}/v1/status", headers=server.headers()).json()
    assert status["failed"] == 0
    found = httpx.post(f"{server.base}/v1/memories/search", headers=server.headers(),
                       json={"query": "Who loves painting sunsets?", "user_id": "e2e-enrich"}).json()["results"]
    assert found[0]["id"] == first
