"""The MCP profiles, one file each, and the registry the endpoint routes by.

`/mcp` (and the seed's `/api/mcp`) serves the default profile, registered under ""; `/mcp/<name>`
serves the profile registered under <name>; any other `/mcp/...` path is a 404. Adding a profile is
one file here (`build(services) -> ProfileServer`, see `toolkit.py`), one line below, and its
contract test in tests/integration/test_profile_<name>.py.

A profile's module (its tools, their models, the domain they call) is imported by its first build,
not with this registry: Lambda init imports none, a request pays only for its own profile, and a
SnapStart snapshot builds them all (`McpDispatcher.prime`). So a tool looks its services up on the
container when called, never at build time: a server built before the snapshot outlives the
clients that a restore drops.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemo.surfaces.facade import ServiceFacade
    from mnemo.surfaces.profiles.toolkit import ProfileServer

ProfileBuilder = Callable[["ServiceFacade"], "ProfileServer"]


def _built_by(module: str) -> ProfileBuilder:
    """`build` of mnemo.surfaces.profiles.<module>, imported on the first call."""

    def build(services: ServiceFacade) -> ProfileServer:
        return import_module(f"{__name__}.{module}").build(services)

    return build


PROFILES: dict[str, ProfileBuilder] = {
    "": _built_by("eigen"),  # /mcp, /api/mcp: Eigen Mesh thoughts (seed 000)
    "facts": _built_by("facts"),  # /mcp/facts: episodes & facts (seed 001)
    "thrindex": _built_by("thrindex"),  # /mcp/thrindex: Thrindex memory API (seed 003)
    "r3": _built_by("r3"),  # /mcp/r3: r3 mem0-style server (seed 004)
}
