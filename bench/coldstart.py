"""Cold-start benchmark of the built Lambda functions against a bare MCP handler, two ways.

1. Init: each function's handler module is imported in a fresh python3.12 with only its code and
   its layers on the path, laid out as Lambda does (/var/task + /opt/python), and no bytecode
   written (both are read-only on Lambda). The baseline, measured in the same run the same way, is
   the smallest honest MCP function: an MCPServer with one tool behind FastAPI + Mangum, on the
   same deps layer.
2. Init + first request: the same fresh process then answers one `tools/list` through the handler
   (the API Gateway HTTP API event of events/mcp_tools_list.json), at each MCP profile path. What
   init leaves to the first request (the composition root, the profile's server) is paid here:
   without SnapStart, this sum is the cold start a client feels. The bare handler of (1) cannot
   answer (Mangum never runs its mounted SDK app's session manager), so the baseline here is the
   same one-tool server with the SDK app built per request, as the MCP function builds it. The API
   key is read from a moto server (the request's only AWS calls: GetItem, and the key's last-use
   UpdateItem). A last row runs Lambda's SnapStart hooks in process between import and request
   (before-snapshot, then after-restore, as the runtime calls them): the request a restored instance
   answers first.

    make sam-build && .venv/bin/python bench/coldstart.py [--runs 9]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))
BUILD = REPO / ".aws-sam" / "build"
FUNCTIONS = {"McpFunction": "MCP", "ApiFunction": "REST", "WorkerFunction": "worker", "ReconcilerFunction": "reconciler"}
TARGETS = {"MCP": 1.05, "REST": 1.25}  # init may cost at most this multiple of the bare handler's
PROFILE_PATHS = ["/mcp", "/mcp/facts", "/mcp/thrindex", "/mcp/r3"]
KEY = "mn_coldstart_0123456789abcdefghij"

BARE_HANDLER = '''
from fastapi import FastAPI
from mangum import Mangum
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


app = FastAPI()
app.mount("/mcp", server.streamable_http_app(stateless_http=True, json_response=True))
handler = Mangum(app, lifespan="off")
'''

# The same server, answering: /mcp goes to an SDK app built per request with its lifespan entered
# (as mnemo.surfaces.mcp_endpoint does), anything else to FastAPI.
BARE_SERVING_HANDLER = '''
from fastapi import FastAPI
from mangum import Mangum
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


api = FastAPI()


async def app(scope, receive, send):
    if scope["type"] == "http" and scope["path"] == "/mcp":
        sdk_app = server.streamable_http_app(stateless_http=True, json_response=True)
        async with sdk_app.router.lifespan_context(sdk_app):
            await sdk_app(scope, receive, send)
    else:
        await api(scope, receive, send)


handler = Mangum(app, lifespan="off")
'''

PROBE = "import time; t = time.perf_counter(); import app; print(time.perf_counter() - t)"

# argv: the event (JSON), then "cold" or "restored".
FIRST_REQUEST_PROBE = '''
import json, sys, time


class Context:
    function_name = "coldstart"
    function_version = "1"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:coldstart:live"
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    @staticmethod
    def get_remaining_time_in_millis():
        return 29_000


def timed(times, name, work):
    t = time.perf_counter()
    result = work()
    times[name] = time.perf_counter() - t
    return result


def run_hooks(hooks):
    for func, args, kwargs in hooks:
        func(*args, **kwargs)


event = json.loads(sys.argv[1])
times = {}
timed(times, "init", lambda: __import__("app"))
if sys.argv[2] == "restored":
    import snapshot_restore_py as runtime

    timed(times, "before_snapshot", lambda: run_hooks(reversed(runtime.get_before_snapshot())))
    timed(times, "after_restore", lambda: run_hooks(runtime.get_after_restore()))
response = timed(times, "first", lambda: sys.modules["app"].handler(event, Context()))
tools = json.loads(response["body"]).get("result", {}).get("tools") if response["statusCode"] == 200 else None
if not tools:
    sys.exit(f"{event['rawPath']}: {response['statusCode']} {response['body'][:500]}")
print(json.dumps(times))
'''


def python312() -> str:
    return subprocess.run([str(REPO / "scripts" / "find_python312.sh")], capture_output=True, text=True, check=True).stdout.strip()


def lambda_env(task_root: Path, *paths: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": ":".join(str(p) for p in (task_root, *paths)),
        "PYTHONDONTWRITEBYTECODE": "1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_METRICS_NAMESPACE": "Mnemo",
        "LANG": "C.UTF-8",
    }


def init_seconds(python: str, task_root: Path, opt: Path) -> float:
    """One fresh process importing the handler module `app` with only the layers on its path."""
    out = subprocess.run([python, "-c", PROBE], cwd=task_root, env=lambda_env(task_root, opt / "python"),
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def first_request(python: str, task_root: Path, paths: list[Path], aws_env: dict[str, str], path: str,
                  mode: str = "cold") -> dict[str, float]:
    """One fresh process importing `app`, then answering one tools/list at `path`: seconds per phase."""
    event = json.loads((REPO / "events" / "mcp_tools_list.json").read_text())
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["headers"].update({"host": "127.0.0.1:8000", "authorization": f"Bearer {KEY}"})  # a host both servers accept
    out = subprocess.run([python, "-c", FIRST_REQUEST_PROBE, json.dumps(event), mode], cwd=task_root,
                         env={**lambda_env(task_root, *paths), **aws_env}, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{task_root.name} {path} ({mode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # after Powertools' metrics line


@contextlib.contextmanager
def key_table() -> Iterator[dict[str, str]]:
    """A moto server with the template's tables and the bench's key; yields the functions' environment."""
    import logging

    import boto3

    from mnemo.adapters.dynamodb.keys import DynamoDbKeyStore
    from mnemo.local.server import refusing_address, start_moto
    from mnemo.local.template_resources import create_local_resources
    from mnemo.services.tenancy.keys import KeyService

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's line per request
    server, endpoint = start_moto()
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")
    dynamodb = session.client("dynamodb", endpoint_url=endpoint)
    resources = create_local_resources(dynamodb, session.client("sqs", endpoint_url=endpoint), REPO / "template.yaml")
    KeyService(DynamoDbKeyStore(dynamodb, resources["KeysTable"])).ensure("bench", "coldstart", ["admin"], KEY)
    try:
        with refusing_address() as closed:  # nothing listens: no request of this bench reaches it
            yield {
                "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_ENDPOINT_URL_DYNAMODB": endpoint,
                "AWS_ENDPOINT_URL_SQS": endpoint, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": closed, "POWERTOOLS_TRACE_DISABLED": "true",
                "MNEMO_KEYS_TABLE": resources["KeysTable"], "MNEMO_MEMORIES_TABLE": resources["MemoriesTable"],
                "MNEMO_QUEUE_URL": resources["EnrichmentQueue"], "MNEMO_DLQ_URL": resources["EnrichmentDLQ"],
                "MNEMO_INDEX": "opensearch", "MNEMO_OPENSEARCH_URL": closed, "MNEMO_EMBEDDER": "bedrock",
            }
    finally:
        server.stop()


def median(values: list[float]) -> float:
    return round(statistics.median(values), 4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "coldstart.json")
    args = parser.parse_args()
    if not (BUILD / "DepsLayer").exists():
        print("no build output: run `make sam-build` first", file=sys.stderr)
        return 2
    import snapshot_restore_py  # SnapStart's hook registry: the runtime provides it on Lambda

    python = python312()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, key_table() as aws_env:
        opt = Path(tmp) / "opt"
        for layer in ("DepsLayer", "SharedLayer"):
            shutil.copytree(BUILD / layer, opt, dirs_exist_ok=True)
        runtime = Path(tmp) / "runtime"
        runtime.mkdir()
        shutil.copy(snapshot_restore_py.__file__, runtime)
        bare, serving = Path(tmp) / "bare", Path(tmp) / "bare-serving"
        for root, source in ((bare, BARE_HANDLER), (serving, BARE_SERVING_HANDLER)):
            root.mkdir()
            (root / "app.py").write_text(source)
        mcp = BUILD / "McpFunction"
        # The rows of (2): the task root, the paths after it, the request path, the mode.
        cases = {
            "bare (per-request app)": (serving, [opt / "python"], "/mcp", "cold"),
            **{f"MCP {path}": (mcp, [opt / "python"], path, "cold") for path in PROFILE_PATHS},
            "MCP /mcp, restored": (mcp, [opt / "python", runtime], "/mcp", "restored"),
        }
        roots = {"bare MCP handler": bare, **{label: BUILD / fn for fn, label in FUNCTIONS.items()}}
        inits: dict[str, list[float]] = {label: [] for label in roots}
        firsts: dict[str, list[dict[str, float]]] = {label: [] for label in cases}
        for _ in range(args.runs):  # interleaved, so machine noise hits every row alike
            for label, root in roots.items():
                inits[label].append(init_seconds(python, root, opt))
            for label, (root, paths, path, mode) in cases.items():
                firsts[label].append(first_request(python, root, paths, aws_env, path, mode))

    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, {platform.python_implementation()} 3.12"
    print(f"{machine}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} before the run; median of {args.runs} fresh processes")
    base = statistics.median(inits["bare MCP handler"])
    init_rows = [{"function": label, "median_s": median(v), "min_s": round(min(v), 4), "ratio_to_bare": round(statistics.median(v) / base, 3)}
                 for label, v in inits.items()]
    print(f"\n(1) init: handler module import\n{'function':<20}{'median s':>10}{'min s':>9}{'× bare':>9}")
    for r in init_rows:
        print(f"{r['function']:<20}{r['median_s']:>10.3f}{r['min_s']:>9.3f}{r['ratio_to_bare']:>9.2f}")
    verdict = {str(r["function"]): float(r["ratio_to_bare"]) <= TARGETS[str(r["function"])] for r in init_rows if r["function"] in TARGETS}
    print("targets: " + ", ".join(f"{k} ≤ {TARGETS[k]}× bare {'ok' if ok else 'MISSED'}" for k, ok in verdict.items()))

    first_rows = []
    for label, samples in firsts.items():
        cold = [s["init"] + s["first"] for s in samples]
        first_rows.append({"function": label, **{f"{phase}_s": median([s[phase] for s in samples]) for phase in samples[0]},
                           "init_plus_first_s": median(cold)})
    first_base = float(first_rows[0]["init_plus_first_s"])
    print(f"\n(2) init + first tools/list through the handler\n{'function':<24}{'init s':>8}{'first s':>9}{'sum s':>8}{'× bare':>8}")
    *cold_rows, restored = first_rows
    for r in cold_rows:
        print(f"{r['function']:<24}{r['init_s']:>8.3f}{r['first_s']:>9.3f}{r['init_plus_first_s']:>8.3f}"
              f"{float(r['init_plus_first_s']) / first_base:>8.2f}")
    print(f"{restored['function']:<24}{'-':>8}{restored['first_s']:>9.3f}   (before-snapshot hook {restored['before_snapshot_s']:.3f} s, "
          f"once per published version; after-restore hook {restored['after_restore_s']:.3f} s)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "load_average": load, "runs": args.runs, "rows": init_rows,
                                    "first_request_rows": first_rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
