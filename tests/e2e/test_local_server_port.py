"""`python -m mnemo.local`'s port: PORT=0 takes any free one and prints it (every e2e test starts
the server so: tests/e2e/conftest.py), a port in use or a PORT that is no port number is refused with
a message naming it."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from tests.conftest import REPO, TEST_KEY
from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e


def run_local_server(port: str) -> subprocess.CompletedProcess[str]:
    """`python -m mnemo.local` with PORT=`port`, to its exit (a refused port: at once)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "AWS_"))}
    environment.update({"PORT": port, "MNEMO_API_KEY": TEST_KEY, "PYTHONPATH": str(REPO / "shared")})
    return subprocess.run([sys.executable, "-m", "mnemo.local"], cwd=REPO, env=environment, capture_output=True,
                          text=True, timeout=60)


def test_a_port_in_use_is_refused_by_name_before_the_stack_starts(server: LocalServer) -> None:
    # Positive control: the session's server, started with PORT=0, serves on the port its banner printed.
    assert httpx.get(f"{server.base}/healthz", timeout=10).status_code == 200
    taken = int(server.base.rsplit(":", 1)[1])
    result = run_local_server(str(taken))
    assert result.returncode == 1
    assert f"Mnemo cannot listen on 127.0.0.1:{taken}: Address already in use" in result.stderr
    assert "PORT=0 for any free one" in result.stderr
    assert "Mnemo is running" not in result.stdout  # refused before the stack (moto, tables, key) started
    assert "Traceback" not in result.stderr
    assert httpx.get(f"{server.base}/healthz", timeout=10).status_code == 200  # the port's owner is untouched


@pytest.mark.parametrize("port", ["http", "-1", "65536", " 8000", "８０００"])
def test_a_port_that_is_no_port_number_is_refused_by_name(server: LocalServer, port: str) -> None:
    # Positive control: the session's server, started with PORT=0, is up.
    assert httpx.get(f"{server.base}/healthz", timeout=10).status_code == 200
    result = run_local_server(port)
    assert result.returncode == 1
    assert result.stderr.strip() == f"PORT: {port!r} is not a port number (0 to 65535, 0 for any free one)"
    assert "Mnemo is running" not in result.stdout
