"""MCP Inspector's CLI (pinned 2.12.0, installed by `make test` from npm) against the real local server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e
CLI = Path(__file__).parent / "inspector" / "node_modules" / ".bin" / "mcp-inspector"


def inspector(server: LocalServer, *args: str, key: str | None = "default") -> subprocess.CompletedProcess[str]:
    if not CLI.exists():
        pytest.fail("MCP Inspector is not installed: run `make test` (it installs the pinned package in tests/e2e/inspector)")
    command = [str(CLI), "--cli", server.mcp_url, "--transport", "http"]
    if key is not None:
        command += ["--header", f"Authorization: Bearer {server.key if key == 'default' else key}"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def result(process: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert process.returncode == 0, process.stderr or process.stdout
    return json.loads(process.stdout)


def test_inspector_lists_the_four_tools(server: LocalServer) -> None:
    tools = result(inspector(server, "--method", "tools/list"))["tools"]
    assert sorted(t["name"] for t in tools) == ["capture_thought", "delete_thought", "edit_thought", "retrieve_thoughts"]


def test_inspector_captures_edits_and_deletes(server: LocalServer) -> None:
    captured = result(inspector(server, "--method", "tools/call", "--tool-name", "capture_thought",
                                "--tool-arg", "raw=Inspector says hello", "--tool-arg", "as_user=true"))
    thought = captured["structuredContent"]["thought"]
    assert thought["normalizedText"] == "Inspector says hello" and thought["author"] == "user"
    edited = result(inspector(server, "--method", "tools/call", "--tool-name", "edit_thought",
                              "--tool-arg", f"thought_id={thought['id']}", "--tool-arg", "edit_request=mark complete"))
    assert edited["structuredContent"]["ok"] is True
    assert edited["structuredContent"]["thought"]["status"] == "completed"
    deleted = result(inspector(server, "--method", "tools/call", "--tool-name", "delete_thought",
                               "--tool-arg", f"thought_id={thought['id']}"))
    assert deleted["structuredContent"]["status"] == "archived"


def test_inspector_sees_tool_errors(server: LocalServer) -> None:
    process = inspector(server, "--method", "tools/call", "--tool-name", "retrieve_thoughts", "--tool-arg", "order=relevance")
    assert process.returncode != 0 and "tool_is_error" in process.stderr  # the CLI exits non-zero on isError
    response = json.loads(process.stdout)
    assert response["isError"] is True
    assert "order=relevance requires a non-empty query" in response["content"][0]["text"]


def test_inspector_without_a_key_is_refused(server: LocalServer) -> None:
    process = inspector(server, "--method", "tools/list", key=None)
    output = process.stdout + process.stderr
    assert '"tools"' not in output
    assert "auth" in output.lower()
