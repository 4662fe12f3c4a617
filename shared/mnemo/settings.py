"""One settings model for every entry point; field names are the environment names in template.yaml."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class MnemoSettings(BaseSettings):
    """Configuration read from `MNEMO_*` environment variables.

    AWS endpoints are not settings of ours: boto3 already honours `AWS_ENDPOINT_URL_DYNAMODB`,
    `AWS_ENDPOINT_URL_SQS` and `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, which is how the local stack
    points the same adapters at moto.
    """

    model_config = SettingsConfigDict(env_prefix="MNEMO_", extra="ignore")

    memories_table: str = "mnemo-memories"
    keys_table: str = "mnemo-keys"
    queue_url: str = ""
    dlq_url: str = ""
    max_receive_count: int = Field(default=5, description="The queue's RedrivePolicy maxReceiveCount.")

    index: Literal["local", "opensearch"] = "local"
    opensearch_url: str = ""
    opensearch_service: Literal["aoss", "es", "none"] = "aoss"
    opensearch_index: str = "mnemo-memories"
    opensearch_legs: Literal["auto", "msearch", "concurrent"] = Field(
        default="auto", description="How a search sends its two legs: one _msearch, or two concurrent _search "
        "calls; auto = concurrent on Serverless (aoss), _msearch elsewhere (docs/index-mapping.md).")

    embedder: Literal["local", "bedrock"] = "local"
    embedding_model_id: str = "amazon.titan-embed-text-v2:0"
    embedding_dimension: int = Field(default=1024, description="Bedrock Titan V2 output size: 256, 512 or 1024.")
    model_dir: str = Field(default="", description="Folder holding the local MiniLM files; empty = ./models/minilm.")
    embedder_engine: Literal["auto", "onnxruntime", "numpy"] = Field(default="auto", description=(
        "What runs the local MiniLM: auto = onnxruntime when installed (requirements-dev.txt), numpy "
        "otherwise. Same vectors either way (docs/providers.md)."))

    reranker: Literal["auto", "off", "bedrock", "minilm"] = Field(default="auto", description=(
        "A reranking stage over a mode=full search's best hits: auto = minilm where its states can live (the "
        "local embedder and the local index: the embedded default), off elsewhere; bedrock = Bedrock's rerank model through "
        "bedrock-agent-runtime (needs bedrock:Rerank and bedrock:InvokeModel on it); minilm = late "
        "interaction over the local MiniLM's token states (the model files of model_dir; each memory's "
        "states are kept by the local index from enrichment, ~15 KB of memory each, so a search runs the "
        "model over its query alone and orders the best 100 candidates before the store read). docs/scoring.md."))
    rerank_model_id: str = "amazon.rerank-v1:0"

    extractor: Literal["heuristic", "bedrock"] = "heuristic"
    llm_model_id: str = "anthropic.claude-3-5-haiku-20241022-v1:0"

    fact_single_valued: str = Field(default="", description="Extra single-valued predicates, comma-separated (docs/facts.md).")
    fact_multi_valued: str = Field(default="", description="Default single-valued predicates to treat as multi-valued, comma-separated.")
    fact_synonyms: str = Field(default="", description="Extra predicate synonyms: 'moved into=lives in; hired by=works at'.")

    mem0_import_enabled: bool = Field(default=False, description=(
        "import_memories source mem0_api: off by default, since it sends the caller's mem0 key out of the account "
        "and brings data in (template parameter Mem0ImportEnabled)."))
    erasure_settle_seconds: int = Field(default=0, ge=0, le=900, description=(
        "A user erasure's last listing runs at least this long after the request: the browse index it lists is "
        "eventually consistent on AWS (template.yaml sets 5), not on the local stack (docs/erasure.md)."))
    mem0_api_url: str = Field(default="https://api.mem0.ai", description="mem0's platform API (tests point it at a local fake).")

    import_dir: str = Field(default="", description=(
        "The folder r3 import_memories source json_file may read (paths resolved, symlinks and .. included; "
        "anything outside is refused). Empty: json_file is off. `make dev` sets ./imports."))

    public_url: str = Field(default="", description=(
        "Public base URL (origin): the resource and metadata URLs, and the OAuth issuer, which must not change "
        "once clients have registered (docs/oauth.md)."))
    oauth_enabled: bool = Field(default=False, description=(
        "Serve MCP authorization (OAuth 2.1: metadata, /register, /authorize, /token, /revoke) beside API keys; "
        "needs public_url (template parameter OAuthEnabled, docs/oauth.md)."))
    oauth_table: str = "mnemo-oauth"
    oauth_open_registration: bool = Field(default=True, description="Dynamic client registration open to anyone.")
    oauth_registrations_per_minute: int = Field(default=30, ge=1, le=10_000, description=(
        "Client registrations accepted per minute across the deployment (a DCR flood's bound)."))
    oauth_cimd_allow: list[str] = Field(default_factory=list, description=(
        "Client ID Metadata Document URLs admitted, as prefixes matched on the parsed URL (scheme, exact host, "
        "path on a / boundary), e.g. [\"https://claude.ai/\"]; empty: CIMD off (docs/oauth.md)."))
    oauth_access_seconds: int = Field(default=3600, ge=60, le=86_400, description="Access token lifetime.")
    oauth_refresh_days: int = Field(default=30, ge=1, le=365, description="Refresh token (and grant idle) lifetime.")
    allowed_hosts: list[str] = Field(default_factory=list, description="Extra Host values MCP accepts (DNS-rebinding guard).")
    allowed_origins: list[str] = Field(default_factory=list, description="Extra Origin values MCP accepts.")

    api_key: str = Field(default="", description="Local mode only: this exact key is registered at start-up.")
    local_tenant: str = "local"
    local_worker_concurrency: int = Field(default=2, ge=1, le=16, description=(
        "Local mode only: SQS batches the queue poller runs at once, as the event source mapping's "
        "MaximumConcurrency does on Lambda (template.yaml: 5)."))

    @model_validator(mode="after")
    def _issuer_is_configured(self) -> MnemoSettings:
        """OAuth's issuer comes from configuration, never from a request's Host header."""
        if self.oauth_enabled:
            parts = urlsplit(self.public_url)
            local = parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")
            if not (parts.scheme == "https" or local) or not parts.hostname or parts.query or parts.fragment:
                raise ValueError("MNEMO_PUBLIC_URL: OAuth needs an https origin (http only on loopback), no query or fragment")
        return self

    @property
    def rerank_stage(self) -> Literal["off", "bedrock", "minilm"]:
        """The reranker `reranker` names, `auto` resolved. The late-interaction one needs the local MiniLM's
        token states kept by the local index; with both local it gains on LoCoMo and loses nothing on
        LongMemEval through REST (issue 28, round 10)."""
        if self.reranker != "auto":
            return self.reranker
        return "minilm" if self.embedder == "local" and self.index == "local" else "off"

    @property
    def issuer(self) -> str:
        return self.public_url.rstrip("/")
