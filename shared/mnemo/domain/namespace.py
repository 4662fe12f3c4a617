"""Where a memory or fact lives, and which of them a read covers.

tenant (from the API key, never from arguments) > user_id (default "default") > agent_id (optional)
> group_id (default "default"). Writes go to one `Namespace`; reads cover a `NamespaceFilter`, in
which an omitted level means "any" (a tenant-wide read leaves `user_id` unset).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

DEFAULT = "default"


class Namespace(BaseModel):
    """The exact place one item is written to."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    user_id: str = DEFAULT
    agent_id: str | None = None
    group_id: str = DEFAULT


class NamespaceFilter(BaseModel):
    """What a read covers: the tenant always, and each lower level only when it is set."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    user_id: str | None = DEFAULT  # None: every user of the tenant
    agent_id: str | None = None  # None: every agent
    group_id: str | None = None  # None: every group

    def covers(self, namespace: Namespace) -> bool:
        return (
            namespace.tenant == self.tenant
            and self.user_id in (None, namespace.user_id)
            and self.agent_id in (None, namespace.agent_id)
            and self.group_id in (None, namespace.group_id)
        )

    def levels(self) -> dict[str, str]:
        """The levels this filter pins, tenant first (what an index query filters on, and what a
        response echoes as its effective scope)."""
        pinned = {"tenant": self.tenant, "user_id": self.user_id, "agent_id": self.agent_id, "group_id": self.group_id}
        return {name: value for name, value in pinned.items() if value is not None}
