"""Cold-start (init) benchmark of the built Lambda functions against a bare MCP handler.

Each function's handler module is imported in a fresh python3.12 with only its code and its layers
on the path, laid out as Lambda does (/var/task + /opt/python), and no bytecode written (both are
read-only on Lambda). The baseline, measured in the same run the same way, is the smallest honest
MCP function: an MCPServer with one tool behind FastAPI + Mangum, on the same deps layer.

    make sam-build && .venv/bin/python bench/coldstart.py [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / ".aws-sam" / "build"
FUNCTIONS = {"McpFunction": "MCP", "ApiFunction": "REST", "WorkerFunction": "worker", "ReconcilerFunction": "reconciler"}
TARGET = 1.25  # MCP and REST init may cost at most this multiple of the bare handler

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

PROBE = "import time; t = time.perf_counter(); import app; print(time.perf_counter() - t)"


def python312() -> str:
    return subprocess.run([str(REPO / "scripts" / "find_python312.sh")], capture_output=True, text=True, check=True).stdout.strip()


def init_seconds(python: str, task_root: Path, opt: Path) -> float:
    """One fresh process importing the handler module `app` with only the layers on its path."""
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": f"{task_root}:{opt / 'python'}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_METRICS_NAMESPACE": "Mnemo",
        "LANG": "C.UTF-8",
    }
    out = subprocess.run([python, "-c", PROBE], cwd=task_root, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "coldstart.json")
    args = parser.parse_args()
    if not (BUILD / "DepsLayer").exists():
        print("no build output: run `make sam-build` first", file=sys.stderr)
        return 2
    python = python312()
    with tempfile.TemporaryDirectory() as tmp:
        opt = Path(tmp) / "opt"
        for layer in ("DepsLayer", "SharedLayer"):
            shutil.copytree(BUILD / layer, opt, dirs_exist_ok=True)
        bare = Path(tmp) / "bare"
        bare.mkdir()
        (bare / "app.py").write_text(BARE_HANDLER)
        # Interleave the measurements so machine noise hits every row alike.
        roots = {"bare MCP handler": bare, **{label: BUILD / fn for fn, label in FUNCTIONS.items()}}
        samples: dict[str, list[float]] = {label: [] for label in roots}
        for _ in range(args.runs):
            for label, root in roots.items():
                samples[label].append(init_seconds(python, root, opt))
    base = statistics.median(samples["bare MCP handler"])
    rows = []
    for label, values in samples.items():
        median = statistics.median(values)
        rows.append({"function": label, "median_s": round(median, 4), "min_s": round(min(values), 4),
                     "ratio_to_bare": round(median / base, 3)})
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, {platform.python_implementation()} 3.12"
    print(f"Cold start: handler module import, median of {args.runs} fresh processes ({machine})")
    print(f"{'function':<18}{'median s':>10}{'min s':>9}{'× bare':>9}")
    for row in rows:
        print(f"{row['function']:<18}{row['median_s']:>10.3f}{row['min_s']:>9.3f}{row['ratio_to_bare']:>9.2f}")
    verdict = {r["function"]: r["ratio_to_bare"] <= TARGET for r in rows if r["function"] in ("MCP", "REST")}
    print(f"target ≤ {TARGET}× bare for MCP and REST: " + ", ".join(f"{k} {'ok' if v else 'MISSED'}" for k, v in verdict.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "runs": args.runs, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
