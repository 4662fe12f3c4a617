"""Warm-call overhead of the MCP function: one `tools/call` round trip through the Lambda handler,
Mnemo's against a bare SDK server with one tool, measured in the same run, interleaved.

Both go through Mangum with an API Gateway HTTP API (payload v2) event, as on Lambda, and both build
the SDK's stateless Streamable HTTP app per request and enter its lifespan (what the SDK needs on
Lambda: docs in shared/mnemo/surfaces/mcp_endpoint.py). The bare tool returns a string; Mnemo's
`capture_thought` runs its service call (one PutItem + one SQS send, moto in process), which is
timed separately: overhead = round trip − service time, compared with the bare round trip.

    PYTHONPATH=shared:. .venv/bin/python bench/mcp_warm_call.py [--calls 300]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))
KEY = "mn_warmcall_0123456789abcdefghijklmnop"
TARGET = 2.0


class Context:
    function_name = "bench"
    function_version = "1"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench:live"
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 29_000


def bare_handler() -> Any:
    """The smallest honest MCP Lambda: one tool, the SDK app built per request (as Lambda needs)."""
    from mangum import Mangum
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bare")

    @server.tool()
    def ping(text: str) -> str:
        """Answer pong."""
        return "pong"

    async def app(scope: Any, receive: Any, send: Any) -> None:
        sdk_app = server.streamable_http_app(stateless_http=True, json_response=True)
        async with sdk_app.router.lifespan_context(sdk_app):
            await sdk_app(scope, receive, send)

    return Mangum(app, lifespan="off")


def event(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
    host = "127.0.0.1:8000"
    return {
        "version": "2.0", "routeKey": "ANY /mcp", "rawPath": "/mcp", "rawQueryString": "",
        "headers": {"accept": "application/json, text/event-stream", "authorization": f"Bearer {KEY}",
                    "content-type": "application/json", "content-length": str(len(body)), "host": host,
                    "mcp-protocol-version": "2025-11-25", "x-forwarded-proto": "http"},
        "requestContext": {"accountId": "123456789012", "apiId": "local", "domainName": host, "domainPrefix": "local",
                           "http": {"method": "POST", "path": "/mcp", "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1",
                                    "userAgent": "bench"},
                           "requestId": "bench", "routeKey": "ANY /mcp", "stage": "$default", "time": "", "timeEpoch": 0},
        "body": body, "isBase64Encoded": False,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "mcp_warm_call.json")
    args = parser.parse_args()
    os.environ.update({"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_DISABLED": "true",
                       "POWERTOOLS_METRICS_NAMESPACE": "Mnemo"})
    import logging

    from mnemo import bootstrap
    from mnemo.local.server import LocalStack, load_function

    logging.getLogger("mcp").setLevel(logging.WARNING)  # the SDK's per-request INFO lines

    with contextlib.redirect_stdout(sys.stderr):
        stack = LocalStack(KEY)
        stack.start()
    stack.poller.stop()
    bootstrap.install(stack.container)
    mnemo = load_function("mcp").handler
    bare = bare_handler()
    service_time = [0.0]
    memories = stack.container.memories
    capture = memories.capture

    def timed_capture(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return capture(*a, **k)
        finally:
            service_time[0] += time.perf_counter() - t

    memories.capture = timed_capture
    calls = {"bare": (bare, event("ping", {"text": "hello"})),
             "mnemo": (mnemo, event("capture_thought", {"raw": "warm call bench note"}))}
    samples: dict[str, list[float]] = {"bare": [], "mnemo": [], "mnemo service": []}
    with contextlib.redirect_stdout(sys.stderr):  # Powertools' EMF lines
        for i in range(args.calls + 20):
            for name, (handler, request) in calls.items():
                service_time[0] = 0.0
                t = time.perf_counter()
                response = handler(request, Context())
                elapsed = (time.perf_counter() - t) * 1000
                assert response["statusCode"] == 200 and '"isError":false' in response["body"].replace(" ", ""), response
                if i >= 20:  # warm-up
                    samples[name].append(elapsed)
                    if name == "mnemo":
                        samples["mnemo service"].append(service_time[0] * 1000)
    stack.stop(forget=True)
    med = {k: statistics.median(v) for k, v in samples.items()}
    overhead = med["mnemo"] - med["mnemo service"]
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"MCP tools/call warm round trip through the Lambda handler, median of {args.calls} ({machine})")
    print(f"  bare SDK server, one tool           {med['bare']:7.2f} ms")
    print(f"  Mnemo capture_thought               {med['mnemo']:7.2f} ms  ({med['mnemo'] / med['bare']:.2f}x bare)")
    print(f"    of which the service (2 AWS calls) {med['mnemo service']:6.2f} ms")
    print(f"    overhead (round trip - service)   {overhead:7.2f} ms  ({overhead / med['bare']:.2f}x bare; target <= {TARGET}x)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "calls": args.calls, "median_ms": med,
                                    "overhead_ratio": overhead / med["bare"]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
