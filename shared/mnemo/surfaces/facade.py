"""What a profile or a REST route may call: the services, never a store, index or model client.

`bootstrap.Container` satisfies this structurally (its services are cached properties); surfaces
are typed against it, so a rule that needs an adapter has to live in a service.
`tests/unit/test_import_contract.py` also keeps the profiles and routes from importing adapters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mnemo.services.enrichment.extraction import EntityExtraction
    from mnemo.services.enrichment.status import StatusService
    from mnemo.services.erasure.memories import ErasureService
    from mnemo.services.erasure.users import ErasureJobService
    from mnemo.services.facts.connections import ConnectionService
    from mnemo.services.facts.search import FactSearchService
    from mnemo.services.facts.service import FactService
    from mnemo.services.facts.traversal import GraphTraversal
    from mnemo.services.jobs.service import JobService
    from mnemo.services.memory.adding import AddService
    from mnemo.services.memory.duplicates import DuplicateService
    from mnemo.services.memory.hot_reads import HotReads
    from mnemo.services.memory.memories import MemoryService
    from mnemo.services.memory.search_cache import SearchCache
    from mnemo.services.oauth.connect_codes import ConnectCodes
    from mnemo.services.oauth.tokens import GrantService
    from mnemo.services.portability.exports import ExportService
    from mnemo.services.portability.import_files import ImportFiles
    from mnemo.services.tenancy.keys import KeyService
    from mnemo.services.tenancy.metering import Meter
    from mnemo.settings import MnemoSettings


class ServiceFacade(Protocol):
    @property
    def settings(self) -> MnemoSettings: ...
    @property
    def edit_help(self) -> str: ...
    @property
    def memories(self) -> MemoryService: ...
    @property
    def adding(self) -> AddService: ...
    @property
    def reads(self) -> HotReads: ...
    @property
    def duplicates(self) -> DuplicateService: ...
    @property
    def search_cache(self) -> SearchCache: ...
    @property
    def status(self) -> StatusService: ...
    @property
    def extraction(self) -> EntityExtraction: ...
    @property
    def connections(self) -> ConnectionService: ...
    @property
    def traversal(self) -> GraphTraversal: ...
    @property
    def jobs(self) -> JobService: ...
    @property
    def import_files(self) -> ImportFiles: ...
    @property
    def exports(self) -> ExportService: ...
    @property
    def facts(self) -> FactService: ...
    @property
    def fact_search(self) -> FactSearchService: ...
    @property
    def erasure(self) -> ErasureService: ...
    @property
    def erasure_jobs(self) -> ErasureJobService: ...
    @property
    def keys(self) -> KeyService: ...
    @property
    def meter(self) -> Meter: ...
    @property
    def connect_codes(self) -> ConnectCodes: ...
    @property
    def oauth_grants(self) -> GrantService: ...
