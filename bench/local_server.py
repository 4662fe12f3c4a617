"""The local server as `make dev` runs it (`python -m mnemo.local`, its own process), for the benches
that drive it over HTTP (each puts `shared/` on the path first). It binds a port itself (PORT=0) and
prints it in its banner: a port picked here and passed in could be taken before the server binds it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from mnemo.local.server import address_in_banner

REPO = Path(__file__).resolve().parents[1]


def start(log: Path, key: str, *, code: Path = REPO, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    """The server of the checkout `code` with `key` as its API key and `env` on top of this process's
    environment (minus MNEMO_* and AWS_*), its output in `log`; (process, base URL) once /healthz answers."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "AWS_"))}
    environment.update({"PORT": "0", "MNEMO_API_KEY": key, "PYTHONPATH": str(code / "shared"),
                        "MNEMO_MODEL_DIR": str(REPO / "models" / "minilm"), **env})
    process = subprocess.Popen([sys.executable, "-m", "mnemo.local"], cwd=code, env=environment,
                               stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base = ""
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"the local server exited early:\n{log.read_text()}")
        base = base or address_in_banner(log.read_text())
        try:
            if base and httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise SystemExit(f"the local server did not become healthy:\n{log.read_text()}")
