"""`Mem0Source` over mem0's platform REST API: `POST /v2/memories/?page=<n>&page_size=<m>` with
`{"filters": {"user_id": ...}}` and `Authorization: Token <key>`, answering
`{"count", "next", "previous", "results": [...]}` (what mem0's own `MemoryClient.get_all` sends).

Each page has a timeout and is retried on a transport error, 429 or 5xx with exponential backoff
(a short loop: tenacity is not among the layer's dependencies, and the transport's retries only
cover failed connections). The key goes in the header only: never in a URL, log or error message.
The client is httpx2, the HTTP client the mcp SDK already brings into the Lambda layer (httpx is not
there: the worker that runs a mem0 pull would not import).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import httpx2 as httpx

from mnemo.errors import DependencyError, ValidationFailed
from mnemo.ports import Mem0Page

logger = logging.getLogger(__name__)

DEFAULT_URL = "https://api.mem0.ai"
TIMEOUT = httpx.Timeout(20.0, connect=5.0)
ATTEMPTS = 4  # 1 + 3 retries: 0.5 + 1 + 2 s of backoff, well inside a worker hop
RETRIED = {429, 500, 502, 503, 504}


class Mem0HttpSource:
    def __init__(self, base_url: str = DEFAULT_URL, *, transport: httpx.BaseTransport | None = None,
                 backoff: float = 0.5, sleep: Callable[[float], None] = time.sleep) -> None:
        self._client = httpx.Client(base_url=base_url.rstrip("/"), timeout=TIMEOUT, transport=transport)
        self._backoff = backoff
        self._sleep = sleep

    def page(self, api_key: str, user_id: str, page: int, page_size: int) -> Mem0Page:
        body = self._post(api_key, {"page": page, "page_size": page_size}, {"filters": {"user_id": user_id}})
        if isinstance(body, list):  # an unpaginated answer: everything at once
            return Mem0Page(items=[i for i in body if isinstance(i, dict)], total=len(body), last=True)
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise DependencyError("mem0 answered in an unexpected shape (no results list)")
        items = [i for i in body["results"] if isinstance(i, dict)]
        total = body.get("count") if isinstance(body.get("count"), int) else None
        return Mem0Page(items=items, total=total, last=not body.get("next") or not items)

    def _post(self, api_key: str, params: dict[str, int], payload: dict[str, Any]) -> Any:
        headers = {"Authorization": f"Token {api_key}"}
        for attempt in range(ATTEMPTS):
            last = attempt == ATTEMPTS - 1
            try:
                response = self._client.post("/v2/memories/", params=params, json=payload, headers=headers)
            except httpx.HTTPError as exc:
                if last:
                    raise DependencyError(f"mem0 unreachable ({type(exc).__name__})") from exc
                logger.warning("mem0 request failed; retrying", extra={"error": type(exc).__name__, "attempt": attempt + 1})
            else:
                if response.status_code in (401, 403):
                    raise ValidationFailed(f"api_key: mem0 refused it (HTTP {response.status_code}); check the key")
                if response.status_code not in RETRIED:
                    if response.is_error:
                        raise DependencyError(f"mem0 answered HTTP {response.status_code}")
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise DependencyError("mem0 answered with something that is not JSON") from exc
                if last:
                    raise DependencyError(f"mem0 answered HTTP {response.status_code} {ATTEMPTS} times")
                logger.warning("mem0 answered an error; retrying", extra={"status": response.status_code, "attempt": attempt + 1})
            self._sleep(self._backoff * 2**attempt)
        raise AssertionError("unreachable")
