"""A LoCoMo-shaped conversation (built here: speakers, sessions, dated turns; no LoCoMo text) imported
through `POST /v1/import`: batched AWS calls (counted with a botocore `before-call` hook, as
tests/integration/enrichment/test_enrichment_calls.py counts them), every turn searchable at once, every turn
enriched once the worker drains; and the chunk charged against the write limit as a whole."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from mnemo.domain.models import EnrichmentState
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.tenancy import Counter as Meter
from mnemo.ports import SearchQuery
from tests.integration.conftest import OTHER_KEY, auth
from tests.integration.surfaces.test_profile_thrindex import enrich

TURNS = 200  # the most one request imports at once (SYNC_IMPORT_LIMIT); more is a job (portability/test_jobs.py)
SYLLABLES = ["ka", "vo", "mi", "tre", "lu", "zen", "pa", "dor", "fi", "shu", "gan", "bel"]


def codeword(n: int) -> str:
    """A made-up word unique to turn `n` (three syllables: 1728 of them)."""
    return "".join(SYLLABLES[(n // 12**k) % 12] for k in range(3)) + "x"


def conversation(turns: int = TURNS) -> list[dict[str, Any]]:
    """Two speakers, a session every 20 turns a week apart, ids like LoCoMo's dialogue ids."""
    start, items = datetime(2023, 5, 8, 13, 56), []
    for n in range(turns):
        session, speaker = n // 20 + 1, ("Caroline", "Melanie")[n % 2]
        items.append({
            "id": f"D{session}:{n % 20 + 1}", "content": f"{speaker}: I told you about the {codeword(n)} at the lake.",
            "captured_at": (start + timedelta(weeks=session, minutes=n % 20)).isoformat() + "Z",
            "metadata": {"speaker": speaker, "session": session},
        })
    return items


def count_calls(container: Any) -> Counter[str]:
    calls: Counter[str] = Counter()
    for client in {id(c): c for c in (container._dynamodb, container._sqs)}.values():
        client.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
    return calls


def search(http, query: str, key: str | None = None) -> list[dict[str, Any]]:
    body = {"query": query, "user_id": "locomo", "top_k": 3, "explain": True}
    return http.post("/v1/memories/search", json=body, headers=auth(key) if key else auth()).json()["results"]


def test_a_conversation_imports_in_batched_calls_and_is_searchable_at_once_then_enriched(http, aws, container) -> None:
    items, calls = conversation(), count_calls(container)
    # When: the whole conversation is imported in one request
    report = http.post("/v1/import", json={"user_id": "locomo", "data": items}, headers=auth()).json()
    assert len(report["imported"]) == TURNS and report["skipped"] == report["failed"] == []
    # Then: no per-item write or send: batch writes of 25 (memories and history lines), sends of 10
    assert calls["PutItem"] == 0 and calls["SendMessage"] == 0 and calls["TransactWriteItems"] == 0, calls
    assert calls["BatchWriteItem"] == 2 * TURNS // 25 and calls["SendMessageBatch"] == TURNS // 10, calls
    assert sum(calls.values()) / TURNS < 0.25, calls
    # and every turn is found at once, before any enrichment (read-your-writes): the index holds each
    # one (search alone reads only the newest 50 pending memories from the store), and REST search
    # finds a spread of them, the oldest turns included
    imported = report["imported"]
    scope = NamespaceFilter(tenant="local", user_id="locomo")
    for n in range(TURNS):
        found = container.index().search(SearchQuery(scope=scope, text=codeword(n), authors=["user", "agent"]))
        assert [c.memory_id for c in found] == [imported[n]], n
    # (in the first 3: before enrichment there are no vectors, the look-alike turns' fused scores lie
    # within 0.01 of each other, and the default reranker's token similarity between made-up words
    # sharing syllables is as close, so the order among them is noise; being found is what counts here)
    for n in range(0, TURNS, 20):
        assert imported[n] in [hit["id"] for hit in search(http, f"what about the {codeword(n)}")], n
    assert search(http, f"the {codeword(7)}", key=OTHER_KEY) == []  # never in another tenant
    # When: the worker drains the queue; Then: every turn is enriched, and found semantically too
    enrich(aws)
    stored = container.store.get_many("local", report["imported"])
    assert len(stored) == TURNS and {m.enrichment.state for m in stored} == {EnrichmentState.ENRICHED}
    # in the conversation's order, so enrichment gives each turn the one before it as context
    assert all(a.created_at < b.created_at for a, b in zip(stored, stored[1:], strict=False))
    with_context = container.index().search(SearchQuery(scope=scope, text=codeword(0), authors=["user", "agent"]))
    assert {c.memory_id for c in with_context} == {imported[0], imported[1]}, with_context  # the turn, the reply
    assert search(http, f"what about the {codeword(42)}")[0]["explain"]["semantic"] > 0
    # A rerun writes nothing: one batch read finds every source id already imported
    calls.clear()
    rerun = http.post("/v1/import", json={"user_id": "locomo", "data": items}, headers=auth()).json()
    assert rerun["imported"] == [] and len(rerun["skipped"]) == TURNS
    assert calls["BatchWriteItem"] == calls["SendMessageBatch"] == 0 and calls["BatchGetItem"] >= 1, calls


def test_a_chunk_is_charged_whole_against_the_write_limit(http, container) -> None:
    # Given a plan with 30 writes a month
    container.meter.configure("local", {Meter.WRITES: 30}, None)
    items = conversation(40)
    # Then a chunk of 40 is refused whole, and nothing is stored
    refused = http.post("/v1/import", json={"user_id": "locomo", "data": items}, headers=auth())
    assert refused.status_code == 429 and "monthly write limit reached" in refused.text
    assert http.get("/v1/export", params={"user_id": "locomo"}, headers=auth()).json()["memories"] == []
    # Positive control: a chunk of 25 fits, and is counted as 25 writes
    accepted = http.post("/v1/import", json={"user_id": "locomo", "data": items[:25]}, headers=auth()).json()
    assert len(accepted["imported"]) == 25
    assert container.meter.usage("local").used[Meter.WRITES] == 25
