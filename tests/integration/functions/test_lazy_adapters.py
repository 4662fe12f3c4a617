"""The cold-start property with the services taking ports: building them builds no index client,
embedding model or model client; the first use does (adapters/lazy.py, bootstrap.py)."""

from __future__ import annotations

from mnemo import bootstrap
from mnemo.settings import MnemoSettings


def test_building_the_services_builds_no_index_embedder_or_model_client(aws) -> None:
    container = bootstrap.Container(MnemoSettings())
    for service in ("memories", "duplicates", "fact_search", "erasure", "write_fence", "imports", "extraction", "oauth"):
        getattr(container, service)
    heavy = {"_index", "_fact_index", "embedder", "edit_interpreter", "extractor", "reranker", "cimd_fetcher"}
    assert heavy & container.__dict__.keys() == set()
    assert container.fact_search._index.ensure_index() is False  # positive control: a use builds it
    assert "_fact_index" in container.__dict__
