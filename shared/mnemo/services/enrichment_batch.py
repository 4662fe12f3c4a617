"""What the tasks of one SQS batch share while the enrichment service completes them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mnemo.domain.graph import Entity, EntityMention, Link
from mnemo.domain.models import Memory
from mnemo.ports import GraphChange, IndexDocument

GraphKey = tuple[str, str, str]  # tenant, user, group (mnemo.domain.graph.graph_key)

if TYPE_CHECKING:
    from mnemo.services.enrichment import Prepared
    from mnemo.services.fact_upkeep import Group


@dataclass
class Derived:
    """What one task's derived writes produced, for the enriched state (and the graph's change)."""

    category: str | None
    entities: list[str]
    importance: float | None
    index_ids: list[str]
    change: GraphChange | None = None
    groups: set[Group] = field(default_factory=set)  # fact timelines to recompute for the batch
    document: IndexDocument | None = None  # as indexed: rebuilt without a neighbour erased meanwhile
    previous_id: str | None = None  # the memory whose text is the document's context
    facts: list[str] = field(default_factory=list)  # the derived facts' uuids (an undo finds them without records)

    @property
    def neighbours(self) -> list[str]:
        """The other memories this enrichment wrote something about: linked (both ways), or context."""
        linked = list(self.document.links) if self.document is not None else []
        return list(dict.fromkeys([*linked, *([self.previous_id] if self.previous_id else [])]))


@dataclass
class Batch:
    """What the tasks of one SQS batch share while they complete (one per `complete_batch` call, so
    concurrent batches share nothing): entity postings read, and the batch's own unwritten graph."""

    postings: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    peers: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)  # entity -> batch memories naming it
    incoming: dict[str, list[Link]] = field(default_factory=dict)  # memory id -> links earlier tasks made to it
    # Fact entities by (graph key, canonical name): what the batch's memories name, resolved once.
    mentions: dict[GraphKey, dict[str, EntityMention]] = field(default_factory=dict)
    entities: dict[tuple[GraphKey, str], Entity] = field(default_factory=dict)
    previous: dict[str, Memory | None] = field(default_factory=dict)  # memory id -> captured just before it

    def mention(self, space: GraphKey, found: dict[str, EntityMention]) -> None:
        """Add a memory's mentions; one named by several memories keeps every alias they give it."""
        known = self.mentions.setdefault(space, {})
        for key, mention in found.items():
            if key in known:
                aliases = list(dict.fromkeys([*known[key].aliases, *mention.aliases]))
                known[key] = known[key].model_copy(update={"aliases": aliases})
            else:
                known[key] = mention

    def planned(self, memory: Memory, entities: list[str], links: list[Link]) -> None:
        for name in dict.fromkeys(entity_key(e) for e in entities):
            self.peers.setdefault((memory.tenant, memory.user_id, name), []).append(memory.id)
        for link in links:
            self.incoming.setdefault(link.other_id, []).append(
                Link(memory_id=link.other_id, other_id=memory.id, weight=link.weight, reason=link.reason))

    def with_incoming(self, memory: Memory, links: list[Link]) -> list[Link]:
        """`links` plus those earlier tasks of the batch made to `memory` (not yet written, so the
        graph's read could not see them)."""
        mine = {link.other_id for link in links}
        return links + [link for link in self.incoming.get(memory.id, []) if link.other_id not in mine]


def entity_key(name: str) -> str:
    return " ".join(name.casefold().split())


def by_tenant(items: Sequence[Prepared]) -> dict[str, list[Prepared]]:
    groups: dict[str, list[Prepared]] = {}
    for item in items:
        groups.setdefault(item.task.tenant, []).append(item)
    return groups
