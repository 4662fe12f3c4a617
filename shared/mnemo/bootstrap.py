"""The composition root: settings → adapters → services, built once per process (per cold start).

`bootstrap_adapters.Adapters` chooses and builds the adapters; `Container` adds the services over
them. Nothing here runs at import. Adapters that only some requests need (the search index client,
the embedding model, the LLM client) are built on first use, so a capture never pays for them:
services take the port, and are handed `lazy(...)` of the accessor here (adapters/lazy.py).
"""

from __future__ import annotations

import threading
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING

from mnemo.adapters.lazy import lazy
from mnemo.bootstrap_adapters import Adapters

if TYPE_CHECKING:
    from mnemo.ports import MemoryStore
    from mnemo.services.enrichment.extraction import EntityExtraction
    from mnemo.services.enrichment.pipeline import EnrichmentService
    from mnemo.services.enrichment.recovery import RecoveryService
    from mnemo.services.enrichment.status import StatusService
    from mnemo.services.erasure.memories import ErasureService
    from mnemo.services.erasure.user_fence import WriteFence
    from mnemo.services.erasure.users import ErasureJobService
    from mnemo.services.facts.connections import ConnectionService
    from mnemo.services.facts.search import FactSearchService
    from mnemo.services.facts.service import FactService
    from mnemo.services.facts.traversal import GraphTraversal
    from mnemo.services.facts.upkeep import FactUpkeep
    from mnemo.services.jobs.runner import JobRunner
    from mnemo.services.jobs.service import JobService
    from mnemo.services.memory.adding import AddService
    from mnemo.services.memory.duplicates import DuplicateService
    from mnemo.services.memory.hot_reads import HotReads
    from mnemo.services.memory.memories import MemoryService
    from mnemo.services.memory.search_cache import SearchCache
    from mnemo.services.oauth.connect_codes import ConnectCodes
    from mnemo.services.oauth.server import AuthorizationServer
    from mnemo.services.oauth.tokens import GrantService
    from mnemo.services.portability.exports import ExportService
    from mnemo.services.portability.import_files import ImportFiles
    from mnemo.services.portability.imports import ImportService
    from mnemo.services.tenancy.keys import KeyService
    from mnemo.services.tenancy.metering import Meter


class Container(Adapters):
    # -- tenancy, keys and metering --------------------------------------------------------------
    @cached_property
    def keys(self) -> KeyService:
        from mnemo.adapters.dynamodb.keys import DynamoDbKeyStore
        from mnemo.services.tenancy.keys import KeyService

        return KeyService(DynamoDbKeyStore(self._dynamodb, self.settings.keys_table), clock=self.clock)

    @cached_property
    def meter(self) -> Meter:
        """Tenants' plans and monthly counters, on the keys table (docs/tenancy.md)."""
        from mnemo.adapters.dynamodb.tenants import DynamoDbTenantStore
        from mnemo.services.tenancy.metering import Meter

        return Meter(DynamoDbTenantStore(self._dynamodb, self.settings.keys_table), clock=self.clock)

    # -- OAuth (docs/oauth.md) -------------------------------------------------------------------
    @cached_property
    def oauth_grants(self) -> GrantService:
        """OAuth grants and tokens (docs/oauth.md): what the MCP gate verifies an access token with."""
        from mnemo.adapters.dynamodb.keys import DynamoDbKeyStore
        from mnemo.services.oauth.tokens import GrantService, Lifetimes

        lifetimes = Lifetimes(access=timedelta(seconds=self.settings.oauth_access_seconds),
                              refresh=timedelta(days=self.settings.oauth_refresh_days))
        keys = DynamoDbKeyStore(self._dynamodb, self.settings.keys_table)
        return GrantService(self._oauth_store, keys, lifetimes, clock=self.clock)

    @cached_property
    def connect_codes(self) -> ConnectCodes:
        from mnemo.services.oauth.connect_codes import ConnectCodes

        return ConnectCodes(self._oauth_store, clock=self.clock)

    @cached_property
    def oauth(self) -> AuthorizationServer:
        from mnemo.services.oauth.server import AuthorizationServer
        from mnemo.surfaces.profiles import PROFILES

        return AuthorizationServer(self._oauth_store, self.keys, self.connect_codes, self.oauth_grants,
                                   issuer=self.settings.issuer, profiles=list(PROFILES),
                                   registrations_per_minute=self.settings.oauth_registrations_per_minute,
                                   cimd_allow=self.settings.oauth_cimd_allow, fetcher=lazy(lambda: self.cimd_fetcher),
                                   clock=self.clock)

    # -- memories: capture, search, edits, the r3 hot set ----------------------------------------
    @cached_property
    def memories(self) -> MemoryService:
        from mnemo.services.memory.memories import MemoryService

        return MemoryService(
            self._watched_store, self.queue, lazy(self.index), embedder=lazy(lambda: self.embedder), graph=self.graph,
            facts=self.fact_store, interpreter=lazy(lambda: self.edit_interpreter), clock=self.clock, meter=self.meter,
            fence=self.write_fence, reranker=lazy(lambda: self.reranker) if self.settings.rerank_stage != "off" else None,
        )

    @cached_property
    def search_cache(self) -> SearchCache:
        """The r3 hot set of this warm instance (services/memory/search_cache.py)."""
        from mnemo.services.memory.search_cache import SearchCache

        return SearchCache(self.store, meter=self.meter)

    @cached_property
    def _watched_store(self) -> MemoryStore:
        """The store as memories and erasure write it: each write drops the user's cached answers."""
        from mnemo.services.memory.search_cache import WatchedStore

        return WatchedStore(self.store, lazy(lambda: self.search_cache))

    @cached_property
    def adding(self) -> AddService:
        """r3 add_memory: the duplicate check, the capture and the bounded wait for its enrichment."""
        from mnemo.services.memory.adding import AddService

        return AddService(self.memories, self.duplicates, self.store)

    @cached_property
    def reads(self) -> HotReads:
        """r3 search_memory and get_all_memories through the hot set (offset pages over the store's cursors)."""
        from mnemo.services.memory.hot_reads import HotReads

        return HotReads(self.memories, self.search_cache)

    @cached_property
    def duplicates(self) -> DuplicateService:
        from mnemo.services.memory.duplicates import DuplicateService

        return DuplicateService(self.store, self.memories, lazy(self.index), lazy(lambda: self.embedder), meter=self.meter)

    @cached_property
    def extraction(self) -> EntityExtraction:
        from mnemo.services.enrichment.extraction import EntityExtraction

        return EntityExtraction(lazy(lambda: self.extractor), meter=self.meter)

    @cached_property
    def enrichment(self) -> EnrichmentService:
        from mnemo.services.enrichment.pipeline import EnrichmentService

        return EnrichmentService(self.store, self.graph, lazy(self.index), self.embedder, self._extractor(),
                                 facts=self.fact_store, upkeep=self.fact_upkeep, erasure=self.erasure, clock=self.clock,
                                 meter=self.meter)

    @cached_property
    def status(self) -> StatusService:
        from mnemo.services.enrichment.status import StatusService

        return StatusService(self.store, self.queue)

    @cached_property
    def recovery(self) -> RecoveryService:
        from mnemo.services.enrichment.recovery import RecoveryService

        return RecoveryService(self.store, self.queue, self.queue, facts=self.fact_store,  # type: ignore[arg-type]
                               upkeep=self.fact_upkeep, clock=self.clock, jobs=self._job_store)

    # -- erasure ---------------------------------------------------------------------------------
    @cached_property
    def write_fence(self) -> WriteFence:
        """Every write that creates memories reads the user's erasure fence (services/erasure/user_fence.py)."""
        from mnemo.services.erasure.user_fence import WriteFence

        return WriteFence(self._erasure_fences, lazy(lambda: self.erasure))

    @cached_property
    def erasure(self) -> ErasureService:
        from mnemo.adapters.dynamodb.erasure_jobs import DynamoDbErasureMarks
        from mnemo.services.erasure.memories import ErasureService

        return ErasureService(self._watched_store, self.graph, self.fact_store, lazy(self.index), clock=self.clock,
                              marks=DynamoDbErasureMarks(self._dynamodb, self.settings.memories_table),
                              fact_index=lazy(self.fact_index), upkeep=self.fact_upkeep, queue=self.queue)

    @cached_property
    def erasure_jobs(self) -> ErasureJobService:
        from mnemo.adapters.dynamodb.erasure_jobs import DynamoDbErasureJobStore
        from mnemo.services.erasure.users import ErasureJobService

        return ErasureJobService(self.store, DynamoDbErasureJobStore(self._dynamodb, self.settings.memories_table),
                                 self._job_queue, self.erasure, clock=self.clock,
                                 fences=self._erasure_fences, settle=timedelta(seconds=self.settings.erasure_settle_seconds),
                                 work_jobs=self._job_store, runner=self.runner)

    # -- jobs, imports and exports ---------------------------------------------------------------
    @cached_property
    def runner(self) -> JobRunner:
        """The worker's job runner; each job service registers its kinds' step handlers when built,
        which the runner asks for on the first message of its family."""
        from mnemo.services.jobs.runner import JobRunner

        return JobRunner(self._job_queue, clock=self.clock, builders={"job": lambda: self.jobs, "erasure": lambda: self.erasure_jobs})

    @cached_property
    def jobs(self) -> JobService:
        from mnemo.services.jobs.service import JobService

        return JobService(self._job_store, self._job_queue, self.imports, self.duplicates,
                          self.erasure_jobs, lazy(self._mem0) if self.settings.mem0_import_enabled else None,
                          clock=self.clock, fence=self.write_fence, runner=self.runner)

    @cached_property
    def imports(self) -> ImportService:
        from mnemo.services.portability.fact_imports import FactImports
        from mnemo.services.portability.imports import ImportService

        recorded = FactImports(self.fact_store, upkeep=self.fact_upkeep, meter=self.meter, clock=self.clock)
        return ImportService(lazy(lambda: self.duplicates), store=self._watched_store, queue=self.queue, index=lazy(self.index),
                             erased_among=self.erasure.erased_among, meter=self.meter, clock=self.clock,
                             recorded=recorded, fence=self.write_fence)

    @cached_property
    def import_files(self) -> ImportFiles:
        """r3 json_file imports: only inside MNEMO_IMPORT_DIR, off when it is unset (as on Lambda)."""
        from mnemo.services.portability.import_files import ImportFiles

        return ImportFiles(self.settings.import_dir)

    @cached_property
    def exports(self) -> ExportService:
        from mnemo.services.portability.exports import ExportService

        return ExportService(self.memories, self.store, self.fact_store)

    # -- facts and the graph ---------------------------------------------------------------------
    @cached_property
    def facts(self) -> FactService:
        from mnemo.services.facts.service import FactService

        return FactService(self.fact_store, upkeep=self.fact_upkeep, annotator=self.fact_upkeep.annotator, clock=self.clock,
                           meter=self.meter, fence=self.write_fence)

    @cached_property
    def fact_upkeep(self) -> FactUpkeep:
        from mnemo.domain.predicates import PredicateTable
        from mnemo.services.facts.upkeep import FactUpkeep

        table = PredicateTable.extended(self.settings.fact_single_valued, self.settings.fact_synonyms,
                                        self.settings.fact_multi_valued)
        return FactUpkeep(self.fact_store, table, lazy(self.fact_index), embedder=lazy(lambda: self.embedder),
                          annotator=self._intent_annotator())

    @cached_property
    def fact_search(self) -> FactSearchService:
        from mnemo.services.facts.search import FactSearchService

        return FactSearchService(self.fact_store, lazy(self.fact_index), embedder=lazy(lambda: self.embedder), meter=self.meter)

    @cached_property
    def connections(self) -> ConnectionService:
        from mnemo.services.facts.connections import ConnectionService

        return ConnectionService(self.fact_store, self.traversal, memories=self.store)

    @cached_property
    def traversal(self) -> GraphTraversal:
        from mnemo.services.facts.traversal import GraphTraversal

        return GraphTraversal(self.fact_store, meter=self.meter)


_current: Container | None = None
_current_lock = threading.Lock()


def container() -> Container:
    """The process-wide container of the Lambda entry points, built from the environment on first use."""
    global _current
    with _current_lock:
        if _current is None:
            from mnemo.settings import MnemoSettings  # pydantic-settings: on the first request, not at Lambda init

            _current = Container(MnemoSettings())
        return _current


def install(replacement: Container) -> Container:
    """Make `replacement` the process-wide container (tests: one container, with their clock, shared
    by the services they call and the Lambda handlers they invoke)."""
    global _current
    with _current_lock:
        _current = replacement
    return replacement


def reset() -> None:
    """Forget the process-wide container (tests and the local server rebuild it with new settings)."""
    global _current
    from mnemo.adapters.aws import reset_session

    with _current_lock:
        _current = None
    reset_session()
