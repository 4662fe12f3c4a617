"""The local server as `make dev` runs it, for the benches that drive it over HTTP (each puts `shared/`
on the path first): `mnemo.local.server.spawn` with a bench's key and the model this checkout fetched."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mnemo.local.server import spawn

REPO = Path(__file__).resolve().parents[1]


def start(log: Path, key: str, *, code: Path = REPO, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    """The server of the checkout `code` with `key` as its API key and `env` on top; (process, base URL)."""
    return spawn(log, code=code, MNEMO_API_KEY=key, MNEMO_MODEL_DIR=str(REPO / "models" / "minilm"), **env)
