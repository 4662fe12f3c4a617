"""boto3 clients with our retry policy, built in one place so every adapter behaves alike."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config

# "standard" retry mode: exponential backoff with jitter on throttling and 5xx, bounded attempts.
_RETRIES = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=3, read_timeout=10)


def client(service: str, **kwargs: Any) -> Any:
    """A client for `service`; endpoints come from AWS_ENDPOINT_URL_<SERVICE> when set (local stack)."""
    return boto3.session.Session().client(service, config=kwargs.pop("config", _RETRIES), **kwargs)
