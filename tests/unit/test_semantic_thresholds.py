"""The semantic threshold per embedder (issue 54, domain/semantic_thresholds.py): MiniLM's is measured,
Titan V2's (every dimension it serves) is not, and an unmeasured one lifts no hit by its cosine."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from mnemo.adapters.bedrock.embedder import TITAN_V2_DIMENSIONS
from mnemo.adapters.local.minilm_embedder import DIMENSION, MODEL_ID
from mnemo.domain.scoring import DEFAULT_WEIGHTS, RELEVANCE_FLOOR, Candidate, calibrate, fuse, semantic_evidence
from mnemo.domain.semantic_thresholds import SEMANTIC_THRESHOLDS, semantic_threshold
from mnemo.settings import MnemoSettings

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_minilm_answers_its_measured_threshold_and_titan_v2_is_unmeasured_at_every_dimension() -> None:
    minilm = semantic_threshold(MODEL_ID, DIMENSION)
    assert minilm.measured and minilm.value == 0.59 and "LoCoMo dev" in minilm.measured_on
    assert DEFAULT_WEIGHTS.semantic_evidence == minilm.value  # the default (benches, direct callers) is MiniLM's
    titan = MnemoSettings().embedding_model_id
    for dimension in TITAN_V2_DIMENSIONS:
        entry = semantic_threshold(titan, dimension)
        assert (titan, dimension) in SEMANTIC_THRESHOLDS
        assert not entry.measured and entry.value is None
        assert "bench/score_calibration.py" in entry.measured_on and "--via rest" in entry.measured_on
    # A model (or a dimension) nobody listed is unmeasured too, not MiniLM's
    assert semantic_threshold(MODEL_ID, 768).value is None and semantic_threshold("other-model", 384).value is None


def test_an_unmeasured_threshold_lifts_no_hit_and_the_measured_one_does() -> None:
    assert semantic_evidence(1.0, None) == 0.0 and calibrate(0.1, cosine=0.95, threshold=None) == calibrate(0.1)
    assert semantic_evidence(0.59, 0.59) == pytest.approx(RELEVANCE_FLOOR)  # control: where the lift starts
    # Given a weak word match at a high cosine (its sum alone is under the floor)
    weak = Candidate("weak", lexical=0.05, semantic=0.62, text_tokens=4)
    lifted = fuse([weak], top_k=1, now=NOW, expand_graph=False)[0]
    unlifted = fuse([weak], top_k=1, now=NOW, expand_graph=False, weights=replace(DEFAULT_WEIGHTS, semantic_evidence=None))[0]
    # Then MiniLM's threshold lifts it over the floor, an unmeasured embedder's leaves it its sum's score
    assert lifted.score >= RELEVANCE_FLOOR > unlifted.score == pytest.approx(calibrate(unlifted.components["raw"]))
    assert lifted.components == unlifted.components and unlifted.components["cosine"] == 0.62

