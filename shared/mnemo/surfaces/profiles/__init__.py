"""The MCP profiles, one file each, and the registry the endpoint routes by.

`/mcp` (and the seed's `/api/mcp`) serves the default profile, registered under ""; `/mcp/<name>`
serves the profile registered under <name>; any other `/mcp/...` path is a 404. Adding a profile is
one file here (`build(services) -> ProfileServer`, see `toolkit.py`), one line below, and its
contract test in tests/integration/test_profile_<name>.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mnemo.surfaces.profiles import eigen, facts, r3, thrindex
from mnemo.surfaces.profiles.toolkit import ProfileServer

if TYPE_CHECKING:
    from mnemo.bootstrap import Container

ProfileBuilder = Callable[["Container"], ProfileServer]

PROFILES: dict[str, ProfileBuilder] = {
    "": eigen.build,  # /mcp, /api/mcp: Eigen Mesh thoughts (seed 000)
    "facts": facts.build,  # /mcp/facts: episodes & facts (seed 001)
    "thrindex": thrindex.build,  # /mcp/thrindex: Thrindex memory API (seed 003)
    "r3": r3.build,  # /mcp/r3: r3 mem0-style server (seed 004)
}
