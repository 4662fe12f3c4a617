"""One SQS batch of enrichment tasks: each task's outcome, and what the tasks share while the
enrichment service completes them."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from mnemo.domain.extraction import Extraction
from mnemo.domain.graph import Entity, EntityMention, Link, entity_key
from mnemo.domain.messages import EnrichmentTask
from mnemo.domain.models import Memory
from mnemo.ports import GraphChange, IndexDocument
from mnemo.services.facts.upkeep import Group

logger = logging.getLogger(__name__)

GraphKey = tuple[str, str, str]  # tenant, user, group (mnemo.domain.graph.graph_key)


@dataclass(frozen=True)
class Ok:
    """Still going: every stage so far did its part."""


@dataclass(frozen=True)
class Skipped:
    """Nothing to do (stale, erased, already enriched): the message succeeds."""

    reason: str


@dataclass(frozen=True)
class Failed:
    """A stage failed for this task: the worker raises `error` so SQS retries this message alone.
    `memory` and `wrote`: what the task had written by then, for the erasure-race check (undone
    if the memory was erased meanwhile)."""

    error: Exception
    memory: Memory | None = None
    wrote: Derived | None = None


Outcome = Ok | Skipped | Failed
OK = Ok()


@dataclass(eq=False)
class Prepared:
    """One task after the batch-wide steps (load, extract, embed), and its outcome. The stages never
    change a task's data; its outcome changes only through `settle`, and only from `Ok`: the first
    skip or failure is the one the worker sees."""

    task: EnrichmentTask
    memory: Memory | None = None
    extraction: Extraction | None = None
    vector: list[float] | None = None
    fact_vectors: Mapping[str, list[float]] = field(default_factory=dict)  # fact sentence -> its embedding
    on_record: bool = False  # the extraction is the memory's stored reading (a refresh): no fact writes
    outcome: Outcome = OK

    @property
    def ok(self) -> bool:
        return isinstance(self.outcome, Ok)

    @property
    def error(self) -> Exception | None:
        return self.outcome.error if isinstance(self.outcome, Failed) else None

    @property
    def skip_reason(self) -> str | None:
        return self.outcome.reason if isinstance(self.outcome, Skipped) else None

    def settle(self, outcome: Skipped | Failed) -> None:
        if isinstance(self.outcome, Ok):
            self.outcome = outcome
            if isinstance(outcome, Skipped):
                logger.info("enrichment skipped", extra={"memory_id": self.task.memory_id, "reason": outcome.reason})


@contextmanager
def failing(tasks: Iterable[Prepared | Planned]) -> Iterator[None]:
    """The one place a stage's failure is recorded: the error fails every task given (those a batch
    read or write served, or the one a per-task stage works on); a `Planned` one keeps what it had
    written, so the erasure-race check can undo it."""
    tasks = list(tasks)
    try:
        yield
    except Exception as exc:
        for task in tasks:
            item = task.item if isinstance(task, Planned) else task
            if isinstance(item.outcome, Failed):  # its own error is what SQS must see; this one is logged
                logger.warning("a failed enrichment task failed again", exc_info=exc,
                               extra={"memory_id": item.task.memory_id})
            if isinstance(task, Planned):
                task.item.settle(Failed(exc, task.memory, task.derived))
            else:
                task.settle(Failed(exc))


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


@dataclass(frozen=True)
class Planned:
    """A task whose derived writes are done: the memory they were written for, and what they were."""

    item: Prepared
    memory: Memory
    derived: Derived


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


def by_tenant(items: Sequence[Prepared]) -> dict[str, list[Prepared]]:
    groups: dict[str, list[Prepared]] = {}
    for item in items:
        groups.setdefault(item.task.tenant, []).append(item)
    return groups
