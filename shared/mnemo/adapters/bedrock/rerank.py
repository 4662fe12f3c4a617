"""`Reranker` on Bedrock: a rerank model (default Amazon Rerank 1.0) through `bedrock-agent-runtime`
`Rerank`, one request per search with every text inline. Same retry policy as the other Bedrock
adapters (`adapters/bedrock/base.py`: exactly `ATTEMPTS` tries, then `DependencyError`). The texts are
memories of the caller's own namespace: the service hands over only what the caller may see.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from mnemo.adapters.bedrock.base import BEDROCK_CLIENT_CONFIG, with_retries
from mnemo.domain.models import Memory

if TYPE_CHECKING:
    from mnemo.settings import MnemoSettings

MAX_TEXT_CHARS = 32_000  # the API's limit per query and per document


def model_arn(model_id: str, region: str) -> str:
    """A foundation model's ARN (Rerank takes an ARN, not a model id); an ARN passes through."""
    return model_id if model_id.startswith("arn:") else f"arn:aws:bedrock:{region}::foundation-model/{model_id}"


class BedrockReranker:
    share = 1.0  # a cross-encoder: its order alone
    # Its relevance's scale is unmeasured here (a deployment's `bench/score_calibration.py --via rest`
    # would say): the fused score decides what passes the floor, and is what a hit shows.
    calibration: tuple[tuple[float, float], ...] | None = None

    def __init__(self, client: Any, model_id: str = "amazon.rerank-v1:0", *,
                 sleep: Callable[[float], Any] = time.sleep) -> None:
        self._client = client
        self.model_arn = model_arn(model_id, client.meta.region_name)
        self._sleep = sleep

    @classmethod
    def from_settings(cls, settings: MnemoSettings) -> Self:
        from mnemo.adapters.aws import client

        return cls(client("bedrock-agent-runtime", config=BEDROCK_CLIENT_CONFIG), settings.rerank_model_id)

    def prescore(self, query: str, tenant: str, memory_ids: Sequence[str]) -> Mapping[str, float]:
        return {}  # a cross-encoder reads the texts: it orders the best RERANK_DEPTH after the store read

    def rerank(self, query: str, memories: Sequence[Memory]) -> list[float]:
        if not memories:
            return []
        texts = [m.raw for m in memories]
        request = {
            "queries": [{"type": "TEXT", "textQuery": {"text": query[:MAX_TEXT_CHARS]}}],
            "sources": [{"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t[:MAX_TEXT_CHARS]}}}
                        for t in texts],
            "rerankingConfiguration": {"type": "BEDROCK_RERANKING_MODEL", "bedrockRerankingConfiguration": {
                "numberOfResults": len(texts), "modelConfiguration": {"modelArn": self.model_arn}}},
        }
        response = with_retries(lambda: self._client.rerank(**request), sleep=self._sleep, describe="Bedrock rerank")
        relevance = [0.0] * len(texts)  # a text the model left out of its answer ranks last
        for result in response.get("results", []):
            index = int(result["index"])
            if 0 <= index < len(texts):
                relevance[index] = min(1.0, max(0.0, float(result["relevanceScore"])))
        return relevance
