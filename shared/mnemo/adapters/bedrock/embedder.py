"""`Embedder` on Bedrock: Titan Text Embeddings V2, one `invoke_model` per text (there is no batch
API), overlapped on a few threads; the Bedrock retry policy (`adapters/bedrock/base.py`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from mnemo.adapters.bedrock.base import MalformedOutputError, bedrock_client, with_retries

if TYPE_CHECKING:
    from mnemo.settings import MnemoSettings

TITAN_V2_DIMENSIONS = (256, 512, 1024)
_TITAN_MAX_CHARS = 50_000  # Titan V2 accepts up to 50,000 characters (8,192 tokens)


class BedrockEmbedder:
    """Titan Text Embeddings V2: one `invoke_model` per text (no batch API), overlapped on a few threads."""

    def __init__(self, client: Any, model_id: str = "amazon.titan-embed-text-v2:0", dimension: int = 1024, *,
                 max_workers: int = 4, sleep: Callable[[float], Any] = time.sleep) -> None:
        if dimension not in TITAN_V2_DIMENSIONS:
            raise ValueError(f"Titan V2 embedding dimension must be one of {TITAN_V2_DIMENSIONS}, not {dimension}")
        self._client = client
        self.model_id = model_id
        self.dimension = dimension
        self._max_workers = max(1, max_workers)
        self._sleep = sleep

    @classmethod
    def from_settings(cls, settings: MnemoSettings) -> BedrockEmbedder:
        return cls(bedrock_client(), settings.embedding_model_id, settings.embedding_dimension)

    def embed(self, texts: Sequence[str], *, keep_states: bool = False) -> list[list[float]]:
        """One unit-length vector per text, in input order; any text failing fails the batch. Titan
        gives no token states, so `keep_states` changes nothing here."""
        texts = list(texts)
        if len(texts) <= 1 or self._max_workers == 1:
            return [self._embed_one(t) for t in texts]
        with ThreadPoolExecutor(max_workers=min(self._max_workers, len(texts)), thread_name_prefix="titan") as pool:
            futures = [pool.submit(self._embed_one, t) for t in texts]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()  # the batch has failed: do not start the calls still queued
                raise

    def _embed_one(self, text: str) -> list[float]:
        body = json.dumps({"inputText": text[:_TITAN_MAX_CHARS], "dimensions": self.dimension, "normalize": True})

        def call() -> list[float]:
            response = self._client.invoke_model(
                modelId=self.model_id, body=body, contentType="application/json", accept="application/json"
            )
            return self._vector(response["body"].read())

        return with_retries(call, sleep=self._sleep, describe="Embedding")

    def _vector(self, raw: bytes) -> list[float]:
        try:
            vector = json.loads(raw)["embedding"]
            if len(vector) == self.dimension and all(isinstance(x, int | float) for x in vector):
                return [float(x) for x in vector]
        except (ValueError, KeyError, TypeError):
            pass
        raise MalformedOutputError(f"no {self.dimension}-dimension embedding in the response")
