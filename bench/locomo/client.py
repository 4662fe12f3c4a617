"""Mnemo's public REST API, as the benchmark uses it: capture turns, wait for enrichment, search.

The same calls go to a running server (httpx) or to the app in this process (Starlette's TestClient,
itself an httpx client), so both modes measure exactly what a user gets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.locomo.data import Conversation, Turn


class ApiError(RuntimeError):
    """Mnemo answered with an unexpected status."""


@dataclass(frozen=True)
class Hit:
    dia_id: str | None
    score: float | None
    content: str
    explain: dict[str, float] | None = None


@dataclass(frozen=True)
class SearchOutcome:
    hits: list[Hit]
    seconds: float  # client-side wall time of the HTTP call

    @property
    def dia_ids(self) -> list[str]:
        return [h.dia_id for h in self.hits if h.dia_id is not None]


@dataclass
class EnrichmentWait:
    seconds: float = 0.0
    status: dict[str, Any] = field(default_factory=dict)
    timed_out: bool = False


def _json(response: httpx.Response, expected: int) -> Any:
    if response.status_code != expected:
        request = response.request
        raise ApiError(f"{request.method} {request.url.path} → {response.status_code}: {response.text[:500]}")
    return response.json()


class MnemoClient:
    def __init__(self, http: httpx.Client, api_key: str) -> None:
        self._http = http
        self._headers = {"authorization": f"Bearer {api_key}"}

    def capture(self, user_id: str, turn: Turn) -> str:
        body = {
            "content": turn.content,
            "user_id": user_id,
            "metadata": {"dia_id": turn.dia_id},
            "captured_at": turn.date.isoformat(),
            "as_user": True,
            "conversation_id": f"session_{turn.session}",
        }
        created = _json(self._http.post("/v1/memories", json=body, headers=self._headers), 201)
        return str(created["id"])

    def ingest(self, user_id: str, conversation: Conversation) -> None:
        """Every turn, sequentially and in order: enrichment links a turn to the one captured before it."""
        for turn in conversation.turns:
            self.capture(user_id, turn)

    def status(self) -> dict[str, Any]:
        result: dict[str, Any] = _json(self._http.get("/v1/status", headers=self._headers), 200)
        return result

    def wait_for_enrichment(
        self, *, poll_seconds: float = 2.0, timeout_seconds: float = 3600.0,
        report: Callable[[dict[str, Any], float], None] | None = None,
    ) -> EnrichmentWait:
        """Poll `GET /v1/status` until nothing is pending (or the timeout passes)."""
        start = time.perf_counter()
        while True:
            status = self.status()
            elapsed = time.perf_counter() - start
            if report is not None:
                report(status, elapsed)
            if int(status.get("pending", 0)) == 0:
                return EnrichmentWait(seconds=elapsed, status=status)
            if elapsed >= timeout_seconds:
                return EnrichmentWait(seconds=elapsed, status=status, timed_out=True)
            time.sleep(poll_seconds)

    def search(self, query: str, user_id: str, top_k: int, *, explain: bool = False) -> SearchOutcome:
        body: dict[str, Any] = {"query": query, "user_id": user_id, "top_k": top_k}
        if explain:
            body["explain"] = True
        start = time.perf_counter()
        response = self._http.post("/v1/memories/search", json=body, headers=self._headers)
        seconds = time.perf_counter() - start
        results = _json(response, 200)["results"]
        hits = [
            Hit(
                dia_id=(r.get("metadata") or {}).get("dia_id"),
                score=r.get("score"),
                content=str(r.get("content", "")),
                explain=r.get("explain"),
            )
            for r in results
        ]
        return SearchOutcome(hits=hits, seconds=seconds)
