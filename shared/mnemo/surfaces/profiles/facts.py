"""The episodes & facts tools (seed 001 "Tool reference"), served at /mcp/facts.

| tool | seed arguments | service call |
|---|---|---|
| add_episode | content, group_id="default", extract_intent=false | memories.capture (group_id its sub-namespace) |
| record_fact | subject, predicate, object, group_id="default", extract_intent=false | facts.record_triple |
| search | query, group_id="default", limit=10 (1-100), threshold? [0, 1] (extension) | fact_search.search (no threshold: its floor) |
| retract | edge_uuid, reason? | facts.retract (admin) |

Results are the REST shapes (surfaces/fact_views.py). Arguments are strict JSON types (toolkit.py);
`edge_uuid` must be a UUID (every fact's id is one). Failures start with the seed's code where it has
one: `missing_scope`, `quota_exceeded`, `payment_required` (`unauthenticated` is the 401 the endpoint
answers before any tool runs); every failure, validation included, also carries REST's error envelope
`{"error": {"code", "message"}}` as structured content ("The error envelope shape matches the REST API").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from mnemo.domain.commands import CaptureCommand
from mnemo.domain.fact_commands import FactUuid, RecordFactCommand
from mnemo.errors import (
    BoundKeyError,
    DependencyError,
    ForbiddenError,
    NotFoundError,
    PaymentRequiredError,
    QuotaExceededError,
    TenantSuspendedError,
)
from mnemo.services.facts.search import FACT_RELEVANCE_FLOOR, FactSearchQuery
from mnemo.surfaces.fact_views import (
    EpisodeResult,
    FactResult,
    RetractResult,
    SearchResult,
    edge,
    episode,
    recorded,
    retracted,
)
from mnemo.surfaces.profiles.toolkit import ProfileServer, Wording, caller

if TYPE_CHECKING:
    from mnemo.surfaces.facade import ServiceFacade

INSTRUCTIONS = (
    "A temporal knowledge graph of the team's facts. When the user says 'remember that...', call add_episode; "
    "when you already hold a subject-predicate-object triple, call record_fact; before answering 'what did I "
    "decide about...' or any question about people, places, preferences or decisions, call search; when the user "
    "says a fact is wrong ('that's wrong, ignore it'), call retract with its uuid from search."
)
WORDING = Wording(
    texts={"limit:less_than_equal": "limit: must be at most 100", "limit:greater_than_equal": "limit: must be at least 1"},
    errors={
        BoundKeyError: "bound_to_user: {message}",
        ForbiddenError: "missing_scope: {message}",
        QuotaExceededError: "quota_exceeded: {message}",
        PaymentRequiredError: "payment_required: {message}",
        TenantSuspendedError: "tenant_suspended: {message}",
        NotFoundError: "not_found: edge {edge_uuid} not found",
        DependencyError: "dependency_error: {message}; nothing was changed, retry shortly",
    },
    names={"raw": "content"},
)
GroupId = Annotated[str, Field(description="Sub-namespace within the project.")]
ExtractIntent = Annotated[bool, Field(
    description="Run intent annotation (goal, preference, commitment, constraint, decision, belief) on the edges "
    "this call creates; costs an intents credit per annotated edge.")]


def build(services: ServiceFacade) -> ProfileServer:
    server = ProfileServer(name="mnemo-facts", title="Mnemo episodes & facts", instructions=INSTRUCTIONS, wording=WORDING,
                          error_envelope=True)

    @server.tool(title="Add an episode", read_only=False, destructive=False, idempotent=False)
    def add_episode(
        content: Annotated[str, Field(description="The prose to ingest.")],
        group_id: GroupId = "default",
        extract_intent: ExtractIntent = False,
    ) -> EpisodeResult:
        """Write a prose memory. Call when the user says "remember that..." or shares something worth keeping.

        Returns at once with the episode's uuid and status "queued"; entities and facts are extracted from it
        in the background within seconds and then show up in search."""
        metadata = {"extract_intent": True} if extract_intent else {}
        command = CaptureCommand(raw=content, group_id=group_id, as_user=True, metadata=metadata)
        return episode(services.memories.capture(caller(), command))

    @server.tool(title="Record a fact", read_only=False, destructive=False, idempotent=False)
    def record_fact(
        subject: Annotated[str, Field(description="Source entity name.")],
        predicate: Annotated[str, Field(description="Relation, e.g. lives_in or works at (underscores become spaces).")],
        object: Annotated[str, Field(description="Target entity name.")],
        group_id: GroupId = "default",
        extract_intent: ExtractIntent = False,
    ) -> FactResult:
        """Write a single subject-predicate-object triple, with no extraction. Lower overhead than add_episode when you already have structured data.

        A single-valued relation (lives in, works at, is married to, prefers, deadline is) replaces the subject's
        previous value: the old edge is invalidated and listed in "invalidated". Other relations accumulate."""
        command = RecordFactCommand(subject=subject, predicate=predicate, object=object, group_id=group_id)
        done = services.facts.record_triple(caller(), command, extract_intent=extract_intent)
        return recorded(done.edge, done.invalidated)

    @server.tool(title="Search facts", read_only=True, destructive=False, idempotent=True)
    def search(
        query: Annotated[str, Field(description="Natural-language question or keyword list.")],
        group_id: GroupId = "default",
        limit: Annotated[int, Field(ge=1, le=100, description="Maximum edges, 1-100.")] = 10,
        threshold: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description=f"Drop edges scoring below this, in [0, 1]. Default {FACT_RELEVANCE_FLOOR}: "
                                              "below it a fact is unrelated to the query. 0 returns up to limit edges."),
        ] = None,
    ) -> SearchResult:
        """Retrieve facts from the active team / project. Call before answering "what did I decide about...", or any question about people, places, preferences, plans or decisions.

        Returns the current (active) edges best first: the fact sentence, source and target nodes, valid_at /
        invalid_at, a score in [0, 1], the episodes it came from, and intent_meta when present. Edges scoring below
        the threshold (unrelated) are dropped, so fewer than limit edges, or none, means nothing else matched."""
        command = FactSearchQuery(query=query, group_id=group_id, limit=limit, threshold=threshold)
        found = services.fact_search.search(caller(), command)
        return SearchResult(edges=[edge(s.fact, s.score) for s in found], group_id=group_id)

    @server.tool(title="Retract a fact", read_only=False, destructive=True, idempotent=True)
    def retract(
        edge_uuid: Annotated[FactUuid, Field(description="The edge's uuid, from a prior search result.")],
        reason: Annotated[str | None, Field(max_length=1000, description="Free-form audit note.")] = None,
    ) -> RetractResult:
        """Soft-delete an edge so it stops appearing in search. Call when the user says a fact is wrong ("that's wrong, ignore it").

        The audit row (who, when, reason) is kept. Needs an admin key: otherwise it fails with missing_scope and
        nothing changes."""
        return retracted(services.facts.retract(caller(), edge_uuid, reason))

    return server
