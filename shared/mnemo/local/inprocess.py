"""The local stack's boto3 clients answered by moto in this process instead of over HTTP.

moto's threaded server keeps serving the same backends (process-wide state) to the AWS CLI and
other processes; the app's own clients skip the socket, the HTTP server thread and its request
parsing (measured: bench/local_stack_bench.py). Requests still go through botocore's serialisation
and moto's request handlers, so the wire format, errors and retries behave as they do over HTTP.

Two costs per request that buy nothing in process are skipped: SigV4 signing (moto verifies no
signature; it takes the region from the host and, with no key, the default account, which is what
the stack's `local` key maps to anyway) and moto's `inspect.getmembers` of the handler class
(cached per class: a class's methods do not change while it serves). Together ~5% of the worker's
time on an imported conversation (cProfile; bench/README.md).
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import botocore
import moto.core.responses
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from moto.core.botocore_stubber import BotocoreStubber, MockRawResponse

__all__ = ["answer_in_process", "remember_handler_methods"]

_stubber = BotocoreStubber()
_stubber.enabled = True


def answer_in_process(client: Any) -> Any:
    """Route `client`'s requests to moto's in-process backends (only this client's; returns it)."""
    remember_handler_methods()
    service = client.meta.service_model.endpoint_prefix
    region = client.meta.region_name
    host = f"{service}.{region}.amazonaws.com"

    def send(request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
        # moto routes by AWS hostname: present the request as sent to the service's public endpoint.
        parts = urlsplit(request.url)
        request.url = urlunsplit(("https", host, parts.path, parts.query, parts.fragment))
        answer = _stubber.process_request(request)
        if answer is None:
            return None
        status, headers, body = answer
        return AWSResponse(request.url, status, headers, MockRawResponse(body))  # type: ignore[arg-type]

    name = client.meta.service_model.service_name
    client.meta.events.register_first(f"choose-signer.{name}", _unsigned)
    client.meta.events.register_first(f"before-send.{name}", send)
    return client


def remember_handler_methods() -> None:
    """moto lists a handler class's methods (`inspect.getmembers`) on every request: once per class."""
    if not hasattr(moto.core.responses.method_names_from_class, "cache_info"):  # once per process
        moto.core.responses.method_names_from_class = functools.cache(moto.core.responses.method_names_from_class)


def _unsigned(**_: Any) -> Any:
    return botocore.UNSIGNED
