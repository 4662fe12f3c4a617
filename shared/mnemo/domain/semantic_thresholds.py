"""The cosine above which a hit sharing a word with the query is about it, per embedding model and
dimension: a property of the embedder, not of the ranking (issue 54). Each model spreads the cosines of
unrelated texts differently, so a threshold measured on one lifts noise, or nothing, on another.

`scoring.score` lifts a hit that shares a word with the query and reaches the threshold to at least the
relevance floor (`scoring.semantic_evidence`); the memory search reads the threshold of the embedder it
runs with here. An embedder nobody measured gets none (`value` None): its cosines lift nothing, and a
hit is judged on its weighted sum alone. That is the conservative side of any threshold (it can only
lower a score against a measured one), and it costs little since the lexical signal is a share of the
query's own maximum: a word match no longer needs a corpus, so in a small store the lift is left only
for a hit whose text holds little of the query (docs/scoring.md "Small stores").
"""

from __future__ import annotations

from dataclasses import dataclass

from mnemo.domain.scoring import SEMANTIC_EVIDENCE

# What an operator runs against a deployment to measure its embedder (bench/README.md "Issue 54: the
# semantic threshold per embedder"): it prints the cosines of hits for another conversation's questions.
MEASURE = (
    "PYTHONPATH=shared:. python bench/score_calibration.py LOCOMO_DEV --via rest --url URL --key KEY --model ID --dimension N")


@dataclass(frozen=True)
class SemanticThreshold:
    """An embedder's semantic threshold and what it was measured on; `value` None: unmeasured."""

    model_id: str
    dimension: int
    value: float | None
    measured_on: str

    @property
    def measured(self) -> bool:
        return self.value is not None


_MINILM = "sentence-transformers/all-MiniLM-L6-v2"  # adapters/local/minilm_embedder.py MODEL_ID
_TITAN_V2 = "amazon.titan-embed-text-v2:0"  # adapters/bedrock/embedder.py, settings.embedding_model_id

SEMANTIC_THRESHOLDS: dict[tuple[str, int], SemanticThreshold] = {
    (_MINILM, 384): SemanticThreshold(
        _MINILM, 384, SEMANTIC_EVIDENCE,
        "LoCoMo dev, bench/score_calibration.py in process: hits for another conversation's questions reach "
        "cosine p99 0.45, max 0.50; knee swept 0.55-0.60 on recall@5 (docs/scoring.md \"Small stores\")"),
    **{(_TITAN_V2, dimension): SemanticThreshold(_TITAN_V2, dimension, None, f"unmeasured: run {MEASURE}")
       for dimension in (256, 512, 1024)},
}


def semantic_threshold(model_id: str, dimension: int) -> SemanticThreshold:
    """The threshold measured for this model at this dimension; unmeasured (None) for any other."""
    return SEMANTIC_THRESHOLDS.get((model_id, dimension)) or SemanticThreshold(
        model_id, dimension, None, f"unmeasured: run {MEASURE}")
