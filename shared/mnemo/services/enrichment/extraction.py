"""Extract entities from a text without storing it (r3 `extract_entities`): an operation of the
permission table (`memory:write`) and of the meter (one `writes` unit), since it calls the same model
(Bedrock in production) a capture's enrichment calls."""

from __future__ import annotations

from mnemo.domain.extraction import Extraction
from mnemo.domain.models import Principal
from mnemo.ports import Extractor
from mnemo.services.tenancy.metering import Meter
from mnemo.services.tenancy.permissions import Operation, authorize


class EntityExtraction:
    def __init__(self, extractor: Extractor, *, meter: Meter) -> None:
        self._extractor = extractor  # deferred by the composition root: the first call builds the model client
        self._meter = meter

    def extract(self, principal: Principal, text: str) -> Extraction:
        """The entities and facts the configured extractor finds in `text`; refused (nothing called)
        without `memory:write` or when the tenant's `writes` limit is reached."""
        authorize(principal, Operation.EXTRACT)
        self._meter.charge(principal, Operation.EXTRACT)
        return self._extractor.extract(text)
