"""The MCP profiles served under /mcp (default) and /mcp/<name>; each server is built once."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from mcp.server.mcpserver import MCPServer

from mnemo.bootstrap import container


@lru_cache(maxsize=None)
def eigen() -> MCPServer:
    from mnemo.surfaces.eigen import build_eigen_server

    return build_eigen_server(lambda: container().memories)


PROFILES: dict[str, Callable[[], MCPServer]] = {"": eigen}
