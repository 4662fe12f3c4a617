"""The Bedrock reranker against botocore's Stubber on a real client: the Rerank request, the mapping of
its answer back to input order, the exact retry count."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from mnemo.adapters.bedrock.base import ATTEMPTS
from mnemo.adapters.bedrock.rerank import BedrockReranker, model_arn
from mnemo.domain.models import Memory
from mnemo.errors import DependencyError

ARN = "arn:aws:bedrock:us-east-1::foundation-model/amazon.rerank-v1:0"


def reranker() -> tuple[BedrockReranker, Any, list[float]]:
    client = boto3.client("bedrock-agent-runtime", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x")
    sleeps: list[float] = []
    return BedrockReranker(client, sleep=sleeps.append), client, sleeps


def memories(*texts: str) -> list[Memory]:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return [Memory(id=f"m{i}", tenant="t", raw=text, normalized_text=" ".join(text.split()), captured_at=at,
                   created_at=at, updated_at=at, content_hash=str(i)) for i, text in enumerate(texts)]


def expected(query: str, texts: list[str]) -> dict[str, Any]:
    return {"queries": [{"type": "TEXT", "textQuery": {"text": query}}],
            "sources": [{"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}}
                        for t in texts],
            "rerankingConfiguration": {"type": "BEDROCK_RERANKING_MODEL", "bedrockRerankingConfiguration": {
                "numberOfResults": len(texts), "modelConfiguration": {"modelArn": ARN}}}}


def test_rerank_sends_every_text_inline_and_answers_in_input_order() -> None:
    rerank, client, _ = reranker()
    texts = ["Standups are on  Tuesdays", "Dinner with Anna", "The standup moved to 10am"]  # as said: raw
    with Stubber(client) as stub:
        # The model answers best first, and may leave a text out: it then ranks last (0).
        stub.add_response("rerank", {"results": [{"index": 2, "relevanceScore": 0.91},
                                                 {"index": 0, "relevanceScore": 0.42}]}, expected("when is standup", texts))
        assert rerank.rerank("when is standup", memories(*texts)) == [0.42, 0.0, 0.91]
        stub.assert_no_pending_responses()
    assert rerank.rerank("anything", []) == []  # no call for nothing to rerank
    with Stubber(client):  # a call here would fail: nothing is queued
        assert rerank.prescore("when is standup", "t", ["m0", "m1"]) == {}  # it holds nothing: it reads the texts
    assert model_arn(ARN, "eu-west-1") == ARN and model_arn("cohere.rerank-v3-5:0", "eu-west-1").startswith("arn:aws:bedrock:eu-west-1::")


def test_throttling_is_retried_exactly_attempts_times_then_a_dependency_error() -> None:
    rerank, client, sleeps = reranker()
    with Stubber(client) as stub:
        for _ in range(ATTEMPTS):
            stub.add_client_error("rerank", service_error_code="ThrottlingException", http_status_code=429)
        with pytest.raises(DependencyError, match="Bedrock rerank failed after 3 attempts: ThrottlingException"):
            rerank.rerank("q", memories("a", "b"))
        stub.assert_no_pending_responses()
    assert len(sleeps) == ATTEMPTS - 1
