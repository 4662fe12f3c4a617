"""Bedrock: the call every Bedrock adapter makes. One client configuration (botocore's retries off,
`BEDROCK_CLIENT_CONFIG`), one retry policy (`with_retries`: exactly `ATTEMPTS` attempts with
full-jitter backoff, then `DependencyError` with a readable reason, which the enrichment service
records on the memory: there is no silent fallback to the heuristic twin), one prompt-injection
guard (`tag_guard`) and one Converse template (`ConverseAdapter.converse`: a forced tool call and the
parse of its answer, retried together). The adapters: `bedrock_embedder` (Titan embeddings),
`bedrock_extraction`, `bedrock_edits`, `bedrock_intents` (Converse), `bedrock_rerank`. Importing
this module does no I/O.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from mnemo.errors import DependencyError

if TYPE_CHECKING:
    from mnemo.settings import MnemoSettings

logger = logging.getLogger(__name__)

ATTEMPTS = 3
BASE_DELAY, MAX_DELAY = 0.5, 4.0
# `total_max_attempts=1` is one HTTP request per call. Beware: botocore reads `max_attempts` as *retries*
# (max_attempts=1 means two requests), which would silently double our count of three.
BEDROCK_CLIENT_CONFIG = Config(
    retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=3, read_timeout=20)

_THROTTLED = frozenset({"ThrottlingException", "TooManyRequestsException", "ServiceUnavailableException",
                        "ModelNotReadyException"})
_SERVER_FAULTS = frozenset({"InternalServerException", "ModelErrorException", "ModelTimeoutException"})
_CONNECTION_FAULTS: tuple[tuple[type[Exception], str], ...] = (
    (ConnectTimeoutError, "connection timed out"),
    (EndpointConnectionError, "could not connect to the endpoint"),
    (ReadTimeoutError, "no response in time"),
    (ConnectionClosedError, "connection closed"),
)
_SECRETS_RE = re.compile(r"arn:aws[\w:/.*-]*|\b\d{12}\b")


class MalformedOutputError(Exception):
    """The model answered, but not with what was asked; retryable, since another sample may be fine."""


def backoff_delay(retry: int, *, base: float = BASE_DELAY, cap: float = MAX_DELAY,
                  rand: Callable[[], float] = random.random) -> float:
    """Full jitter: uniform in [0, min(cap, base·2^retry)), so concurrent callers spread out."""
    return rand() * min(cap, base * 2**retry)


def failure_reason(exc: BaseException) -> tuple[str, bool] | None:
    """A short readable cause and whether another attempt may help; None for errors that are our bugs."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        code = error.get("Code") or f"HTTP {status}"
        message = " ".join(_SECRETS_RE.sub("<redacted>", str(error.get("Message") or "")).split())[:200]
        retryable = code in _THROTTLED or code in _SERVER_FAULTS or status >= 500
        return (f"{code} ({message})" if message else code), retryable
    for kind, what in _CONNECTION_FAULTS:
        if isinstance(exc, kind):
            return f"{kind.__name__} ({what})", True
    if isinstance(exc, MalformedOutputError):
        return f"MalformedOutput ({exc})", True
    if isinstance(exc, BotoCoreError):
        return type(exc).__name__, False
    return None


def with_retries[T](call: Callable[[], T], *, attempts: int = ATTEMPTS, sleep: Callable[[float], Any] = time.sleep,
                 describe: str = "Bedrock call", rand: Callable[[], float] = random.random) -> T:
    """Run `call` up to `attempts` times in total, backing off between tries; raise DependencyError at the end.

    Throttling, 5xx, connection faults and malformed output are retried; other AWS errors fail at once.
    Exceptions that are neither AWS nor output faults propagate unchanged (they are bugs, not outages).
    """
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except Exception as exc:
            verdict = failure_reason(exc)
            if verdict is None:
                raise
            reason, retryable = verdict
            if not retryable:
                raise DependencyError(f"{describe} failed (not retried): {reason}") from exc
            if attempt == attempts:
                raise DependencyError(f"{describe} failed after {attempts} attempts: {reason}") from exc
            logger.warning("%s: attempt %d of %d failed: %s", describe, attempt, attempts, reason)
            sleep(backoff_delay(attempt - 1, rand=rand))
    raise AssertionError("unreachable")


def bedrock_client() -> Any:
    """The `bedrock-runtime` client of every Bedrock adapter but the reranker (another service)."""
    from mnemo.adapters.aws import client  # boto3 is imported only when a client is really built

    return client("bedrock-runtime", config=BEDROCK_CLIENT_CONFIG)


def tag_guard(*tags: str) -> Callable[[str], str]:
    """The one prompt-injection guard: a `tags` tag inside (hostile) data is defanged (`<` → `‹`), so
    the data cannot close its block early and pose as instructions."""
    pattern = re.compile(r"<(\s*/?\s*(?:" + "|".join(map(re.escape, tags)) + "))", re.IGNORECASE)
    return lambda data: pattern.sub(r"‹\1", data)


_FENCE_RE = re.compile(r"```[a-zA-Z]*")


def _first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in free text (code fences and prose around it ignored)."""
    text = _FENCE_RE.sub("", text)
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def tool_payload(response: dict[str, Any], tool_name: str) -> dict[str, Any]:
    """A Converse reply's tool input (the first call of `tool_name`), else the first JSON object of
    its text blocks; shared by every forced-tool adapter (extraction, edits, intents)."""
    content = response.get("output", {}).get("message", {}).get("content") or []
    payload: Any = None
    for block in content:
        tool = block.get("toolUse")
        if tool is not None and tool.get("name", tool_name) == tool_name:
            payload = tool.get("input")
            payload = _first_json_object(payload) if isinstance(payload, str) else payload
            break
    if not isinstance(payload, dict):
        payload = _first_json_object("\n".join(str(b.get("text", "")) for b in content))
    if payload is None:
        raise MalformedOutputError("no JSON object in the model's reply")
    return payload


def forced_tool_request(model_id: str, *, system: str, user: str, tool_name: str, description: str,
                        schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """Converse parameters: hardened system prompt, delimited data, one forced tool, temperature 0."""
    tool = {"name": tool_name, "description": description, "inputSchema": {"json": schema}}
    return {
        "modelId": model_id,
        "system": [{"text": system}],
        "messages": [{"role": "user", "content": [{"text": user}]}],
        "inferenceConfig": {"temperature": 0.0, "maxTokens": max_tokens},
        "toolConfig": {"tools": [{"toolSpec": tool}], "toolChoice": {"tool": {"name": tool_name}}},
    }


class ConverseAdapter:
    """A model behind Bedrock's Converse API forced onto one tool: its client, its model id, and the
    sleep `with_retries` waits with between the three attempts (tests pass a recorder)."""

    def __init__(self, client: Any, model_id: str, *, sleep: Callable[[float], Any] = time.sleep) -> None:
        self._client = client
        self.model_id = model_id
        self._sleep = sleep

    @classmethod
    def from_settings(cls, settings: MnemoSettings) -> Self:
        return cls(bedrock_client(), settings.llm_model_id)

    def converse[T](self, params: dict[str, Any], parse: Callable[[dict[str, Any]], T], *, describe: str) -> T:
        """Every adapter's model call: Converse and the parse of its answer, retried together (`with_retries`)."""
        return with_retries(lambda: parse(self._client.converse(**params)), sleep=self._sleep, describe=describe)
