"""The real local server (`python -m mnemo.local`, what `make dev` runs), started once per session."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from mnemo.local.server import address_in_banner
from tests.conftest import REPO, TEST_KEY


@dataclass(frozen=True)
class LocalServer:
    base: str
    key: str
    log: Path | None = None  # what the server printed (its banner, then its log)

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def start_server(log: Path, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start `python -m mnemo.local` on a port it binds itself (PORT=0) and read its address from the
    banner: a port picked here and passed in could be taken before the server binds it."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "AWS_"))}
    environment.update({"PORT": "0", "MNEMO_API_KEY": TEST_KEY, "PYTHONPATH": str(REPO / "shared"), **env})
    process = subprocess.Popen(
        [sys.executable, "-m", "mnemo.local"], cwd=REPO, env=environment, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )
    base = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"local server exited early:\n{log.read_text()}")
        base = base or address_in_banner(log.read_text())
        try:
            if base and httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"local server did not become healthy:\n{log.read_text()}")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()  # what Ctrl-C does, minus the terminal
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    log = tmp_path_factory.mktemp("server") / "server.log"
    imports = REPO / "imports"  # what `make dev` sets and creates (the README's r3 import example writes there)
    imports.mkdir(exist_ok=True)
    process, base = start_server(log, MNEMO_IMPORT_DIR=str(imports))
    yield LocalServer(base=base, key=TEST_KEY, log=log)
    stop_server(process)


# -- the console's browser tests (tests/e2e/test_console_*.py) ------------------------------------
CHROMIUM = Path(os.environ.get("MNEMO_CHROMIUM", "/usr/bin/chromium"))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's Chromium driven by Playwright (never a downloaded browser), one per test module.
    `make pytest` installs it when root; elsewhere a missing browser fails, never skips."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `sudo apt-get install -y chromium` (or set MNEMO_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield launched
        launched.close()
