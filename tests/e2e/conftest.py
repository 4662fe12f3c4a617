"""The real local server (`python -m mnemo.local`, what `make dev` runs), started once per session."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mnemo.local.server import spawn
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
    """`python -m mnemo.local` with the tests' key, on a port it binds itself (`spawn`)."""
    return spawn(log, timeout=60, MNEMO_API_KEY=TEST_KEY, **env)


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
