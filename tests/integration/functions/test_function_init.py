"""What the MCP function's init (its handler module's import) leaves out: everything a cold start
without SnapStart can defer to the first request. A profile's module, the domain models, the
services, pydantic-settings and boto3 are imported by the first request that needs them (or by the
SnapStart hook, tests/integration/functions/test_snapstart.py); pydantic.v1 not at all (FastAPI imports it
for routes with parameters, which only the REST app has). bench/coldstart.py measures the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO

DEFERRED = [
    "mnemo.surfaces.profiles.toolkit", "mnemo.surfaces.profiles.eigen", "mnemo.surfaces.profiles.facts",
    "mnemo.surfaces.profiles.thrindex", "mnemo.surfaces.profiles.r3", "mnemo.domain.models", "mnemo.ports",
    "mnemo.services", "mnemo.settings", "pydantic_settings", "pydantic.v1", "boto3",
]


def test_the_mcp_function_init_imports_nothing_the_first_request_can() -> None:
    probe = f"import json, sys; import app; print(json.dumps([m for m in {DEFERRED!r} if m in sys.modules]))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "functions" / "mcp"), str(REPO / "shared")])}
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO / "functions" / "mcp", env=env, capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_the_api_function_init_does_not_import_the_mcp_server() -> None:
    # The OAuth routes (docs/oauth.md) use the SDK's auth handlers, and `mcp.server.auth` imports the
    # whole MCP server package: imported by the first OAuth request, never by the REST function's init.
    probe = ("import json, sys, app; from mnemo.bootstrap import Container; from mnemo.settings import MnemoSettings; "
             "from mnemo.surfaces.app import create_app; create_app(Container(MnemoSettings()), mcp=False); "
             "seen = lambda: [m for m in ('mcp.server', 'mcp.server.auth') if m in sys.modules]; before = seen(); "
             "import mnemo.surfaces.oauth.provider; print(json.dumps([before, seen()]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "functions" / "api"), str(REPO / "shared")])}
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO / "functions" / "api", env=env, capture_output=True,
                         text=True, check=True)
    before, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == [] and after == ["mcp.server", "mcp.server.auth"]  # after: the probe sees the import when it happens
