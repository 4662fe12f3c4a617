"""`MNEMO_RERANKER=auto` (the default) resolves to the late-interaction reranker only where its token
states can live: the local MiniLM embedder with the local index (the embedded default). With Bedrock's
embeddings or OpenSearch it is off, and a named reranker is taken as named (issue 28, round 10)."""

from __future__ import annotations

import pytest

from mnemo.settings import MnemoSettings


@pytest.mark.parametrize(("given", "stage"), [
    ({}, "minilm"),  # the embedded default
    ({"embedder": "bedrock"}, "off"),
    ({"index": "opensearch"}, "off"),
    ({"embedder": "bedrock", "index": "opensearch"}, "off"),  # the deployed shape
    ({"reranker": "off"}, "off"),
    ({"reranker": "bedrock", "embedder": "bedrock", "index": "opensearch"}, "bedrock"),
    ({"reranker": "minilm", "embedder": "bedrock"}, "minilm"),
])
def test_auto_is_late_interaction_only_with_the_local_embedder_and_index(monkeypatch, given, stage) -> None:
    for name in ("MNEMO_RERANKER", "MNEMO_EMBEDDER", "MNEMO_INDEX"):
        monkeypatch.delenv(name, raising=False)
    settings = MnemoSettings(**given)
    assert settings.reranker == given.get("reranker", "auto")
    assert settings.rerank_stage == stage
