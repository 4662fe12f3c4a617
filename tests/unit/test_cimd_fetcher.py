"""The Client ID Metadata Document fetcher's SSRF guards, with an injected resolver and transport."""

from __future__ import annotations

import json

import httpx2 as httpx
import pytest

from mnemo.adapters.http.cimd import SafeMetadataFetcher
from mnemo.errors import ValidationFailed

URL = "https://client.example/oauth/metadata.json"
DOCUMENT = {"client_id": URL, "client_name": "Example", "redirect_uris": ["http://127.0.0.1:1/cb"]}


def fetcher(addresses: list[str], answer: httpx.Response | None = None, seen: list[httpx.Request] | None = None,
            **kwargs: int) -> SafeMetadataFetcher:
    def handle(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return answer or httpx.Response(200, json=DOCUMENT)

    return SafeMetadataFetcher(resolver=lambda host, port: addresses, transport=httpx.MockTransport(handle), **kwargs)


def test_it_connects_to_the_vetted_address_with_the_name_as_host_and_tls_name() -> None:
    seen: list[httpx.Request] = []
    assert fetcher(["93.184.216.34"], seen=seen).fetch(URL) == DOCUMENT
    [request] = seen
    assert request.url.host == "93.184.216.34" and request.url.path == "/oauth/metadata.json"
    assert request.headers["host"] == "client.example" and request.extensions["sni_hostname"] == "client.example"


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.5", "169.254.169.254", "::1", "fd00::1", "::ffff:10.0.0.1",
                                     "0.1.2.3", "100.64.1.1"])
def test_a_private_address_is_refused_before_any_connection(address: str) -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(ValidationFailed, match="may not be fetched"):
        fetcher(["93.184.216.34", address], seen=seen).fetch(URL)  # one bad address among good ones is enough
    assert seen == []


def test_no_redirects_no_http_and_a_size_cap() -> None:
    with pytest.raises(ValidationFailed, match="302"):
        fetcher(["93.184.216.34"], httpx.Response(302, headers={"location": "http://169.254.169.254/"})).fetch(URL)
    with pytest.raises(ValidationFailed, match="https only"):
        fetcher(["93.184.216.34"]).fetch("http://client.example/oauth/metadata.json")
    big = httpx.Response(200, content=json.dumps({"x": "y" * 70_000}).encode())
    with pytest.raises(ValidationFailed, match="larger than"):
        fetcher(["93.184.216.34"], big).fetch(URL)
    with pytest.raises(ValidationFailed, match="not a JSON object"):
        fetcher(["93.184.216.34"], httpx.Response(200, json=[1])).fetch(URL)
