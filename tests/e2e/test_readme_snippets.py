"""README code blocks: each is marked (the HTML comment on the line before its fence) as
`<!-- runnable ... -->`, `<!-- output ... -->` or `<!-- not run: reason -->`. Runnable blocks run as
written (bash with bash, Python with this interpreter) against the local server this test starts,
with the environment the README tells the reader to set (MNEMO_URL, MNEMO_KEY); outputs the README
shows are checked against the real ones. Only the port differs: the README's server listens on :8000,
this one on a free port, so `http://127.0.0.1:8000` in a block becomes the test server's address. A
block calling `npx` runs in tests/e2e/inspector, where `make test` installs the pinned MCP Inspector,
so npx finds it there instead of asking to download it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import REPO
from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e
README_BASE = "http://127.0.0.1:8000"
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
MARKER = re.compile(r"^\s*<!-- (runnable|output|not run)\b[^>]*-->\s*$")
# What a runnable block must print, by a phrase of the block: the README says what each one does.
INSPECTOR = REPO / "tests" / "e2e" / "inspector"
PRINTS = {
    "capture_thought": "Standups are Tuesdays at 10am",  # the Python client finds the thought it captured
    "--method tools/list": '"retrieve_thoughts"',  # the Inspector lists the tools
    "r3-export.json": "Imported 1, skipped 0, failed 0",  # the r3 file import, from make dev's import directory
}


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    lang: str
    kind: str | None  # runnable | output | not run | None (unmarked)
    body: str


def blocks(markdown: str) -> list[Block]:
    found, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        marker = MARKER.match(lines[i - 1]) if i > 0 else None
        indent, end = len(opening.group(1)), i + 1
        while end < len(lines) and not FENCE.match(lines[end]):
            end += 1
        body = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
        found.append(Block(i + 1, opening.group(2), marker.group(1) if marker else None, body))
        i = end + 1
    return found


BLOCKS = blocks((REPO / "README.md").read_text())


def test_every_readme_block_is_marked_runnable_output_or_not_run() -> None:
    unmarked = [f"README.md:{b.line}" for b in BLOCKS if b.kind is None]
    assert not unmarked, f"mark these blocks <!-- runnable --> / <!-- output: ... --> / <!-- not run: why -->: {unmarked}"
    assert {"runnable", "output", "not run"} <= {b.kind for b in BLOCKS}  # positive control: the parser sees markers


def test_the_parser_reports_an_unmarked_block() -> None:
    sample = "Text\n```bash\necho hi\n```\n<!-- runnable -->\n```python\nprint(1)\n```\n  <!-- not run: x -->\n  ```json\n  {}\n  ```\n"
    assert [(b.lang, b.kind, b.body) for b in blocks(sample)] == [
        ("bash", None, "echo hi\n"), ("python", "runnable", "print(1)\n"), ("json", "not run", "{}\n")]


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.kind == "runnable"], ids=lambda b: f"line{b.line}-{b.lang}")
def test_runnable_block_runs_as_written(block: Block, server: LocalServer, tmp_path) -> None:
    interpreter = {"python": [sys.executable], "bash": ["bash", "-eo", "pipefail"]}.get(block.lang)
    assert interpreter, f"README.md:{block.line}: a runnable block is bash or python, not {block.lang!r}"
    script = tmp_path / f"snippet.{block.lang}"
    script.write_text(block.body.replace(README_BASE, server.base))
    env = {**os.environ, "MNEMO_URL": server.base, "MNEMO_KEY": server.key}
    cwd = INSPECTOR if "npx " in block.body else REPO
    done = subprocess.run([*interpreter, str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
                          check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"README.md:{block.line} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    for phrase, printed in PRINTS.items():
        if phrase in block.body:
            assert printed in done.stdout, f"README.md:{block.line} did not print {printed!r}:\n{done.stdout}"


def test_the_banner_the_readme_shows_is_what_the_server_prints(server: LocalServer) -> None:
    shown = next(b for b in BLOCKS if b.kind == "output" and "API key:" in b.body)
    assert server.log is not None
    printed = server.log.read_text().splitlines()
    for line in shown.body.splitlines():
        expected = line.replace(README_BASE, server.base).replace("mn_1a2b3c4d_...", server.key)
        assert expected in printed, f"README.md:{shown.line}: the server prints no line {expected!r}"


def test_the_erasure_receipt_has_the_fields_the_readme_shows(server: LocalServer) -> None:
    shown = json.loads(next(b for b in BLOCKS if b.kind == "output" and '"counts"' in b.body).body)
    created = httpx.post(f"{server.base}/v1/memories", headers=server.headers(), json={"content": "Erase me: readme receipt"})
    assert created.status_code == 201, created.text
    memory_id = created.json()["id"]
    receipt = httpx.delete(f"{server.base}/v1/memories/{memory_id}", params={"hard": "true"}, headers=server.headers())
    assert receipt.status_code == 200, receipt.text
    body = receipt.json()
    assert body.keys() == shown.keys() and body["counts"].keys() == shown["counts"].keys()
    assert (body["kind"], body["status"], body["memory_ids"]) == ("memory", "completed", [memory_id])
    assert httpx.get(f"{server.base}/v1/memories/{memory_id}", headers=server.headers()).status_code == 404
