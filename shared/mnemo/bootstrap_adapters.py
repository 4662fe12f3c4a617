"""The composition root's outer half: settings → adapters. Which adapter serves each port (DynamoDB
tables, SQS queues, OpenSearch or the in-process indexes, Bedrock or the local models), each built
on first use and kept for the process (per cold start). `bootstrap.Container` builds the services
over them.

Nothing here runs at import, and nothing is built with the container: AWS clients, the search index
client, the embedding model and the LLM clients come with the first request that needs one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING

from mnemo.domain.semantic_thresholds import semantic_threshold
from mnemo.domain.timestamps import utcnow

if TYPE_CHECKING:
    from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder
    from mnemo.ports import (
        ClientMetadataFetcher,
        EditInterpreter,
        Embedder,
        EnrichmentQueue,
        ErasureFences,
        Extractor,
        FactIndex,
        FactStore,
        GraphStore,
        IntentAnnotator,
        JobQueue,
        JobStore,
        Mem0Source,
        MemoryStore,
        OAuthStore,
        Reranker,
        SearchIndex,
    )
    from mnemo.settings import MnemoSettings


logger = logging.getLogger(__name__)


class Adapters:
    def __init__(self, settings: MnemoSettings, *, clock: Callable[[], datetime] = utcnow) -> None:
        """`clock` is every service's notion of now (tests inject a fixed one: no test reads the wall clock)."""
        self.settings = settings
        self.clock = clock
        self._lock = threading.Lock()

    def forget_connections(self) -> None:
        """Drop every adapter and service built so far (AWS clients with their credentials and
        connection pools, the search index client, the API-key cache) and refresh the shared AWS
        session; the next request builds them afresh. Run after a SnapStart restore
        (mnemo.surfaces.snapstart): a snapshot's connections are dead and its credentials may be."""
        from mnemo.adapters.aws import refresh_session

        with self._lock:
            for layer in type(self).__mro__:  # the container's services and these adapters
                for name, attribute in vars(layer).items():
                    if isinstance(attribute, cached_property):
                        self.__dict__.pop(name, None)
        refresh_session()

    # -- AWS: one client per service, the tables and queues on them ----------------------------
    @cached_property
    def _dynamodb(self) -> object:
        from mnemo.adapters.aws import client

        return client("dynamodb")

    @cached_property
    def _sqs(self) -> object:
        from mnemo.adapters.aws import client

        return client("sqs")

    @cached_property
    def store(self) -> MemoryStore:
        from mnemo.adapters.dynamodb.store import DynamoDbMemoryStore

        return DynamoDbMemoryStore(self._dynamodb, self.settings.memories_table)

    @cached_property
    def graph(self) -> GraphStore:
        from mnemo.adapters.dynamodb.graph import DynamoDbGraphStore

        return DynamoDbGraphStore(self._dynamodb, self.settings.memories_table)

    @cached_property
    def fact_store(self) -> FactStore:
        from mnemo.adapters.dynamodb.facts import DynamoDbFactStore

        return DynamoDbFactStore(self._dynamodb, self.settings.memories_table)

    @cached_property
    def _erasure_fences(self) -> ErasureFences:
        from mnemo.adapters.dynamodb.erasure_jobs import DynamoDbErasureFences

        return DynamoDbErasureFences(self._dynamodb, self.settings.memories_table)

    @cached_property
    def _job_store(self) -> JobStore:
        from mnemo.adapters.dynamodb.jobs import DynamoDbJobStore

        return DynamoDbJobStore(self._dynamodb, self.settings.memories_table)

    @cached_property
    def _oauth_store(self) -> OAuthStore:
        from mnemo.adapters.dynamodb.oauth import DynamoDbOAuthStore

        return DynamoDbOAuthStore(self._dynamodb, self.settings.oauth_table)

    @cached_property
    def queue(self) -> EnrichmentQueue:
        from mnemo.adapters.sqs.queue import SqsEnrichmentQueue

        return SqsEnrichmentQueue(self._sqs, self.settings.queue_url, self.settings.dlq_url)

    @cached_property
    def _job_queue(self) -> JobQueue:
        from mnemo.adapters.sqs.jobs import SqsJobQueue

        return SqsJobQueue(self._sqs, self.settings.queue_url)

    # -- the indexes: OpenSearch (one client for both) or in process ---------------------------
    def index(self) -> SearchIndex:
        with self._lock:
            return self._index

    @cached_property
    def _index(self) -> SearchIndex:
        if self.settings.index == "opensearch":
            from mnemo.adapters.opensearch.index import OpenSearchIndex

            # The k-NN leg filters on the embedder's model: vectors of two models never mix.
            return OpenSearchIndex.from_settings(
                self.settings, embedding_model=self.embedder.model_id, dimension=self.embedder.dimension,
                client=self._opensearch_client,
            )
        from mnemo.adapters.local.index import LocalSearchIndex

        # The local reranker reads each memory's token states from here, computed as it is indexed.
        return LocalSearchIndex(token_encoder=self._minilm if self.settings.rerank_stage == "minilm" else None)

    def fact_index(self) -> FactIndex:
        with self._lock:
            return self._fact_index

    @cached_property
    def _fact_index(self) -> FactIndex:
        if self.settings.index == "opensearch":  # the second physical index, on the same client
            from mnemo.adapters.opensearch.facts import OpenSearchFactIndex

            return OpenSearchFactIndex.from_settings(
                self.settings, embedding_model=self.embedder.model_id, dimension=self.embedder.dimension,
                client=self._opensearch_client,
            )
        from mnemo.adapters.local.fact_index import LocalFactIndex

        return LocalFactIndex()

    @cached_property
    def _opensearch_client(self) -> object:
        """One client (connection pool, SigV4 signer) for the memories and the facts index."""
        from mnemo.adapters.opensearch.base import build_client

        return build_client(self.settings)

    # -- the models: Bedrock, or the local twins ------------------------------------------------
    @cached_property
    def embedder(self) -> Embedder:
        embedder: Embedder
        if self.settings.embedder == "bedrock":
            from mnemo.adapters.bedrock.embedder import BedrockEmbedder

            embedder = BedrockEmbedder.from_settings(self.settings)
        else:
            embedder = self._minilm
        # /v1/status reports a tenant's enrichment, not the deployment's models: the operator reads the
        # semantic threshold in force here, once per cold start (docs/scoring.md "In production").
        threshold = semantic_threshold(embedder.model_id, embedder.dimension)
        logger.info("embedder %s (%d dimensions): semantic threshold %s, %s", embedder.model_id, embedder.dimension,
                    threshold.value if threshold.measured else "none (no cosine lift)", threshold.measured_on)
        return embedder

    @cached_property
    def extractor(self) -> Extractor:
        """The configured extractor, for callers that extract without storing (r3 extract_entities)."""
        return self._extractor()

    def _extractor(self) -> Extractor:
        if self.settings.extractor == "bedrock":
            from mnemo.adapters.bedrock.extraction import BedrockExtractor

            return BedrockExtractor.from_settings(self.settings)
        from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor

        return HeuristicExtractor()

    @cached_property
    def edit_interpreter(self) -> EditInterpreter:
        """Chosen with the extractor setting: Bedrock Converse, or the local phrase grammar."""
        if self.settings.extractor == "bedrock":
            from mnemo.adapters.bedrock.edits import BedrockEditInterpreter

            return BedrockEditInterpreter.from_settings(self.settings)
        from mnemo.adapters.local.rule_edit_interpreter import RuleEditInterpreter

        return RuleEditInterpreter()

    @property
    def edit_help(self) -> str:
        """What the configured interpreter understands, for tool descriptions, without building its client."""
        if self.settings.extractor == "bedrock":
            from mnemo.adapters.bedrock.edits import HELP as BEDROCK_HELP

            return BEDROCK_HELP
        from mnemo.adapters.local.rule_edit_interpreter import HELP

        return HELP

    def _intent_annotator(self) -> IntentAnnotator:
        """Chosen with the extractor setting: Bedrock Converse, or the local cue-word table."""
        if self.settings.extractor == "bedrock":
            from mnemo.adapters.bedrock.intents import BedrockIntentAnnotator

            return BedrockIntentAnnotator.from_settings(self.settings)
        from mnemo.adapters.local.heuristic_intents import HeuristicIntentAnnotator

        return HeuristicIntentAnnotator()

    @cached_property
    def _minilm(self) -> LocalMiniLmEmbedder:
        """The local MiniLM: the local embedder, and the local reranker's model (one model in memory).
        With the local reranker, each pass keeps its token states for the reranker or the index."""
        from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder

        return LocalMiniLmEmbedder(self.settings.model_dir or default_model_dir(), engine=self.settings.embedder_engine,
                                   keep_token_states=self.settings.rerank_stage == "minilm")

    @cached_property
    def reranker(self) -> Reranker:
        if self.settings.rerank_stage == "minilm":
            from mnemo.adapters.local.index import LocalSearchIndex
            from mnemo.adapters.local.late_interaction import LateInteractionReranker

            index = self.index()
            return LateInteractionReranker(self._minilm, stored=index if isinstance(index, LocalSearchIndex) else None)
        from mnemo.adapters.bedrock.rerank import BedrockReranker

        return BedrockReranker.from_settings(self.settings)

    # -- over HTTP ------------------------------------------------------------------------------
    @cached_property
    def cimd_fetcher(self) -> ClientMetadataFetcher:
        """Client ID Metadata Documents over https with SSRF guards (tests replace it with one whose
        resolver and transport they choose)."""
        from mnemo.adapters.http.cimd import SafeMetadataFetcher

        return SafeMetadataFetcher()

    def _mem0(self) -> Mem0Source:
        """The mem0 platform API an import job pulls a page from."""
        from mnemo.adapters.http.mem0 import Mem0HttpSource

        return Mem0HttpSource(self.settings.mem0_api_url)


def default_model_dir() -> str:
    from pathlib import Path

    return str(Path.cwd() / "models" / "minilm")
