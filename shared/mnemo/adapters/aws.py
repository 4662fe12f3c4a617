"""boto3 clients with our retry policy, built in one place so every adapter behaves alike."""

from __future__ import annotations

import threading
from typing import Any

import boto3
from botocore.config import Config

# "standard" retry mode: exponential backoff with jitter on throttling and 5xx, bounded attempts.
_RETRIES = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=3, read_timeout=10)
_lock = threading.Lock()
_session: boto3.session.Session | None = None


def client(service: str, **kwargs: Any) -> Any:
    """A client for `service`; endpoints come from AWS_ENDPOINT_URL_<SERVICE> when set (local stack).

    One shared session: a new session per client re-reads every service model from disk (~0.3 s).
    """
    global _session
    with _lock:
        if _session is None:
            _session = boto3.session.Session()
        return _session.client(service, config=kwargs.pop("config", _RETRIES), **kwargs)  # type: ignore[call-overload]


def reset_session() -> None:
    """Forget the shared session (tests that change credentials or endpoints between runs)."""
    global _session
    with _lock:
        _session = None


def refresh_session() -> None:
    """A new shared session that keeps the old one's parsed service models (its data loader) but
    nothing else: credentials are resolved again and clients built from it open new connections.
    After a SnapStart restore, the snapshot's credentials may have expired and its sockets are dead."""
    global _session
    with _lock:
        previous, _session = _session, None
        if previous is None:
            return
        import botocore.session

        core = botocore.session.Session()
        core.register_component("data_loader", previous._session.get_component("data_loader"))
        _session = boto3.session.Session(botocore_session=core)
