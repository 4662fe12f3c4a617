"""`ClientMetadataFetcher` over https with SSRF guards (docs/oauth.md, CIMD).

The function runs with AWS credentials in its environment, so a fetch must never reach the
instance's own network: the host is resolved once, every address it resolves to must be public
(`domain/oauth.is_public_address`: no private, loopback, link-local, unique-local, IPv4-mapped,
0.0.0.0/8 or 100.64.0.0/10), and the connection is made to that vetted address, with the name as
TLS server name and Host header: no second lookup a rebinding DNS server could answer differently.
No redirects, a size cap and a time cap. The resolver and the transport are injectable for tests;
nothing in the settings relaxes the guards."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2 as httpx

from mnemo.domain.oauth import is_public_address
from mnemo.errors import DependencyError, ValidationFailed

MAX_BYTES = 64 * 1024
TIMEOUT = httpx.Timeout(5.0, connect=3.0)  # each step; DEADLINE bounds the whole answer (a slow drip)
DEADLINE = 5.0
Resolver = Callable[[str, int], list[str]]


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (the system resolver)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise DependencyError(f"client metadata: cannot resolve {host}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class SafeMetadataFetcher:
    def __init__(self, *, resolver: Resolver = resolve, transport: httpx.BaseTransport | None = None,
                 max_bytes: int = MAX_BYTES) -> None:
        self._resolve = resolver
        self._client = httpx.Client(timeout=TIMEOUT, transport=transport, follow_redirects=False, trust_env=False)
        self._max = max_bytes

    def fetch(self, url: str) -> dict[str, Any]:
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname:
            raise ValidationFailed("client metadata: https only")
        host, port = parts.hostname, parts.port or 443
        addresses = self._resolve(host, port)
        if not addresses or not all(is_public_address(a) for a in addresses):
            raise ValidationFailed(f"client metadata: {host} resolves to an address that may not be fetched")
        vetted = addresses[0]
        literal = f"[{vetted}]" if ":" in vetted else vetted
        target = urlunsplit(("https", f"{literal}:{port}", parts.path, "", ""))
        authority = host if port == 443 else f"{host}:{port}"
        request = self._client.build_request("GET", target, headers={"host": authority, "accept": "application/json"},
                                             extensions={"sni_hostname": host})
        try:
            response = self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise DependencyError(f"client metadata: {host} is unreachable") from exc
        try:
            if response.status_code != 200:
                raise ValidationFailed(f"client metadata: {host} answered {response.status_code} (redirects are not followed)")
            body, started = b"", time.monotonic()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self._max:
                    raise ValidationFailed(f"client metadata: larger than {self._max} bytes")
                if time.monotonic() - started > DEADLINE:
                    raise DependencyError(f"client metadata: {host} took longer than {DEADLINE:.0f} s")
        except httpx.HTTPError as exc:
            raise DependencyError(f"client metadata: {host} failed mid-answer") from exc
        finally:
            response.close()
        try:
            document = json.loads(body)
        except ValueError as exc:
            raise ValidationFailed("client metadata: not JSON") from exc
        if not isinstance(document, dict):
            raise ValidationFailed("client metadata: not a JSON object")
        return document
