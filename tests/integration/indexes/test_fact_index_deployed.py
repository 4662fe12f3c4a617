"""The facts index as deployed: with MNEMO_INDEX=opensearch each function instance reads one shared
facts index (not what it wrote since its cold start), and the reindex command rebuilds it from
DynamoDB, recorded facts included. moto underneath; OpenSearch is the in-memory engine that executes
the DSL (`opensearch_engine`), shared by the "instances" like one cluster."""

from __future__ import annotations

from typing import Any

import pytest
from opensearchpy import OpenSearch

from mnemo import bootstrap
from mnemo.adapters.local.fact_index import LocalFactIndex
from mnemo.adapters.opensearch.facts import OpenSearchFactIndex
from mnemo.domain.fact_commands import RecordFactCommand
from mnemo.domain.graph import FactStatus
from mnemo.services.facts.search import FactSearchQuery
from mnemo.settings import MnemoSettings
from tests.conftest import FixedClock
from tests.integration.opensearch_engine import Engine, engine_connection


def instance(engine: Engine, base: str = "mnemo-memories") -> bootstrap.Container:
    """A fresh container (a cold start) whose facts index is OpenSearch on `engine`."""
    container = bootstrap.Container(MnemoSettings(), clock=FixedClock())
    client = OpenSearch(hosts=[{"host": "engine.internal", "port": 9200}], connection_class=engine_connection(engine),
                        max_retries=0)
    container.__dict__["_fact_index"] = OpenSearchFactIndex(
        client, index=base, service="aoss", embedding_model=container.embedder.model_id,
        dimension=container.embedder.dimension)
    return container


def found(container: bootstrap.Container, principal: Any, text: str, **kw: Any) -> list[str]:
    return [s.fact.fact for s in container.fact_search.search(principal, FactSearchQuery(query=text, **kw))]


def test_bootstrap_selects_the_opensearch_facts_index_on_the_memories_index_client(aws) -> None:
    container = bootstrap.Container(MnemoSettings(index="opensearch", opensearch_url="http://search.internal:9200",
                                                  opensearch_service="none", embedding_dimension=384))
    container.__dict__["embedder"] = type("E", (), {"model_id": "m", "dimension": 384})()
    facts, memories = container.fact_index(), container.index()
    assert isinstance(facts, OpenSearchFactIndex) and facts.index_name == "mnemo-memories-facts-v2"
    assert facts._client is memories._client  # type: ignore[attr-defined] # one pool, one signer
    assert isinstance(bootstrap.Container(MnemoSettings()).fact_index(), LocalFactIndex)  # positive control


def test_a_fact_one_instance_records_is_found_by_another(container, principal) -> None:
    engine = Engine()
    writer, reader = instance(engine), instance(engine)
    writer.facts.record(principal, RecordFactCommand(subject="Alice", predicate="moved to", object="Lisbon"))

    assert found(reader, principal, "where does Alice live, Lisbon?") == ["Alice moved to Lisbon"]
    # positive control of the gap this closes: an in-process index on the reader finds nothing
    local = bootstrap.Container(MnemoSettings(), clock=FixedClock())
    assert found(local, principal, "where does Alice live, Lisbon?") == []
    assert found(reader, principal, "Lisbon", group_id="other") == []  # another graph: nothing


def test_reindex_rebuilds_the_facts_index_from_dynamodb_recorded_facts_included(container, principal) -> None:
    old = Engine()
    writer = instance(old)
    record = writer.facts.record
    record(principal, RecordFactCommand(subject="Bob", predicate="lives in", object="Berlin", valid_at="2020-01-01T00:00:00Z"))
    record(principal, RecordFactCommand(subject="Bob", predicate="lives in", object="Madrid",  # retires Berlin
                                        valid_at="2022-01-01T00:00:00Z"))
    gone = record(principal, RecordFactCommand(subject="Bob", predicate="likes", object="opera"))
    writer.facts.retract(principal, gone.uuid, "wrong")

    fresh = Engine()  # a new mapping version: an empty index
    rebuilt = instance(fresh)
    assert found(rebuilt, principal, "Bob Madrid") == []  # positive control: empty before the reindex
    assert rebuilt.recovery.reindex_facts(batch=2) == 2  # Madrid and the invalidated Berlin; not the retracted one

    assert found(rebuilt, principal, "Bob Madrid") == ["Bob lives in Madrid"]
    # the invalidated fact is indexed too, for `as_of`, and hydration keeps it out of current reads
    statuses = {s.fact.fact: s.fact.status for s in rebuilt.fact_search.search(
        principal, FactSearchQuery(query="Bob Berlin", as_of="2021-01-01T00:00:00Z"))}
    assert statuses == {"Bob lives in Berlin": FactStatus.INVALIDATED}
    assert "Bob likes opera" not in found(rebuilt, principal, "Bob opera")
    docs = fresh.indices["mnemo-memories-facts-v2"]
    assert sorted(d["_source"]["sentence"] for d in docs.values()) == ["Bob lives in Berlin", "Bob lives in Madrid"]
    assert all(d["_source"].get("vector") for d in docs.values())  # embedded in the same write

    rebuilt.recovery.reindex_facts()  # again, over a full index: still one document per fact
    assert len(fresh.indices["mnemo-memories-facts-v2"]) == 2


@pytest.mark.parametrize("batch", [1, 100])
def test_reindex_batches_every_fact_whatever_the_batch_size(container, principal, batch: int) -> None:
    for city in ("Oslo", "Rome", "Kyiv"):
        container.facts.record(principal, RecordFactCommand(subject=city, predicate="visited by", object="Dan"))
    container.__dict__["_fact_index"] = LocalFactIndex()
    assert container.recovery.reindex_facts(batch=batch) == 3
    assert sorted(found(container, principal, "Dan visited")) == ["Kyiv visited by Dan", "Oslo visited by Dan",
                                                                   "Rome visited by Dan"]
