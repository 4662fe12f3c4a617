"""Models: embedding, reranking, extraction, edit interpretation and intent annotation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from mnemo.domain.edits import EditPlan
from mnemo.domain.extraction import Extraction
from mnemo.domain.models import Memory


class Embedder(Protocol):
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str], *, keep_states: bool = False) -> list[list[float]]:
        """One unit-length vector per text, in order; batched by the adapter. With `keep_states`, an
        adapter whose model also serves the local reranker (the local MiniLM) keeps the pass's token
        states for it on this thread: asked by those that take them next (a search that reranks,
        enrichment indexing each memory with its states). Keeping them when nothing takes them cost a
        `fast` search a tenth of its time (bench/README.md "Issue 28, round 14")."""


class Reranker(Protocol):
    """A second, finer relevance judgement of a search's best hits (mode=full only; docs/scoring.md
    "Reranking"). Production: Bedrock's rerank models; locally, late interaction over the embedder's
    own MiniLM (adapters/local/late_interaction.py), off unless configured."""

    share: float  # of the order, against the fused score (scoring.reranked): 1 = the reranker's order alone
    # Knots from the blend of fused score and relevance onto the score callers see, measured for this
    # reranker at this share (`scoring.reranked`): the blend then orders and thresholds. None: unmeasured,
    # the fused score decides what passes and is shown, capped in the reranker's order.
    calibration: tuple[tuple[float, float], ...] | None

    def rerank(self, query: str, memories: Sequence[Memory]) -> list[float]:
        """A relevance in [0, 1] per memory, in input order (memories of one tenant the caller sees)."""

    def prescore(self, query: str, tenant: str, memory_ids: Sequence[str]) -> Mapping[str, float]:
        """Before the store read: a relevance for those of `memory_ids` (index candidates found inside
        the caller's namespace) whose representation the reranker holds, so the search reads the
        memories it would rank first. Empty when it holds none (Bedrock scores the texts it is sent)."""


class Extractor(Protocol):
    def extract(self, text: str, *, speaker: str | None = None, captured_at: datetime | None = None) -> Extraction:
        """Normalised text, category, entities, facts and importance of one memory's text; `captured_at`
        (when it was said) anchors relative dates ("yesterday", "next Tuesday") in the facts' `valid_at`."""


class EditInterpreter(Protocol):
    """Turns a plain-language edit request plus the memory's current text into operations or a refusal
    (`mnemo.domain.edits`); the service applies the plan. `help` lists the forms it understands."""

    help: str

    def interpret(self, request: str, text: str) -> EditPlan:
        """The operations the whole request means, or `EditPlan.refuse(reason)`; never a partial reading."""


class IntentAnnotator(Protocol):
    name: str  # recorded as `annotator` on the edge, also when the annotation failed

    def annotate(self, sentence: str, predicate: str, *, episode: str | None = None) -> dict[str, object] | None:
        """`{"label", "confidence", "evidence", "annotator"}` for a fact sentence (`episode`: the text
        it was derived from, when there is one), or None when no intent is found. Raises
        `DependencyError` when the annotator could not answer (services keep the fact: docs/facts.md)."""
