"""Idempotent writes: a retried request (botocore's own retry, a client's retry with an
`Idempotency-Key`) is answered as the first one was, and never reported as failed or applied twice.

Keys are scoped to (tenant, API key): two keys of a tenant (two users of an app) using the same
value never meet, so a 409 never tells one caller that another used it.

Capture: the memory id is derived from (tenant, API key prefix, key), so a retry targets the same
item. It is read before the request is metered: a replay answers with the stored memory (and the
enqueue the failed attempt may have missed), even once the tenant is at its cap, and costs no write;
a different request under the same key is 409. Without a key the id is fresh, so "already exists"
can only be botocore replaying our own put after a lost response: the stored item is compared the
same way.

Edit: the key is recorded on the history line the edit writes, with the key prefix (its actor); an
edit whose key this API key already used on the memory is not applied again, nor metered.
"""

from __future__ import annotations

import uuid

from mnemo.domain.models import Activity, Memory
from mnemo.errors import ValidationFailed

__all__ = ["MAX_KEY_CHARS", "REUSED", "applied", "check_key", "memory_id_for", "same_capture"]

MAX_KEY_CHARS = 128
_NAMESPACE = uuid.UUID("6f1c7c1e-5d0b-4f4e-9a57-1d0f5e0c6a31")  # fixed: the same key maps to the same id forever
REUSED = "Idempotency-Key: already used for a different request; use a new key per request"


def check_key(key: str | None) -> str | None:
    """The header's value, or None; printable ASCII, at most 128 characters (what the docs promise)."""
    if key is None:
        return None
    if not key or len(key) > MAX_KEY_CHARS or not key.isascii() or not key.isprintable():
        raise ValidationFailed(f"Idempotency-Key: must be 1-{MAX_KEY_CHARS} printable ASCII characters")
    return key


def memory_id_for(tenant: str, key_prefix: str, key: str) -> str:
    """The id a capture with this key gets: stable, scoped to (tenant, API key), unguessable from another's view."""
    return str(uuid.uuid5(_NAMESPACE, f"{tenant}\n{key_prefix}\n{key}"))


def same_capture(stored: Memory, attempt: Memory, *, explicit_time: bool) -> bool:
    """Whether `stored` is what `attempt` would have written (the time of capture only counts when the
    caller gave it: a retry a second later defaults to a later "now")."""
    fields = ("tenant", "user_id", "agent_id", "group_id", "author", "raw", "metadata")
    same = all(getattr(stored, f) == getattr(attempt, f) for f in fields)
    return same and (not explicit_time or stored.captured_at == attempt.captured_at)


def applied(history: list[Activity], key: str, key_prefix: str) -> bool:
    """Whether this API key already applied a change with this Idempotency-Key (another key's is not this one's)."""
    return any(line.request_key == key and line.actor == key_prefix for line in history)
