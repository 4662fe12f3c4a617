"""`OpenSearchIndex` against osmem-server (the `emulator_url` fixture): what a recording cannot show.

The emulator builds analyzers for real (an undefined filter is a 400), stores and deletes documents,
generates `_id`s and runs BM25; it does not execute k-NN. The port contract over the emulator is in
`indexes/test_search_index_port.py`; this module covers the production index body as sent, the Serverless
write path's generated ids, both leg transports, and the documented analyzer differences (issue 17).
"""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime

import pytest
from opensearchpy import OpenSearch

from mnemo.adapters.opensearch import queries as q
from mnemo.adapters.opensearch.index import OpenSearchIndex
from mnemo.domain.namespace import NamespaceFilter
from mnemo.domain.text import tokenize
from mnemo.errors import DependencyError
from mnemo.ports import IndexDocument, SearchQuery
from tests.integration.indexes.test_search_index_port import emulate_possessive_filter

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def adapter(url: str, service: str = "none", legs: str = "auto") -> OpenSearchIndex:
    return OpenSearchIndex(OpenSearch(hosts=[url]), index=f"mnemo-emu-{uuid.uuid4().hex[:8]}", service=service,  # type: ignore[arg-type]
                           embedding_model="m", dimension=4, legs=legs)  # type: ignore[arg-type]


def doc(memory_id: str, text: str, **kw: object) -> IndexDocument:
    return IndexDocument(tenant="t1", memory_id=memory_id, user_id="u1", author="user", status="open", text=text,
                         captured_at=NOW, created_at=NOW, **kw)  # type: ignore[arg-type]


def test_the_production_body_creates_the_index_once_and_an_undefined_filter_is_refused(
        emulator_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    index = adapter(emulator_url)
    assert index.ensure_index() is True  # the body as shipped, possessive stemmer included
    assert index.ensure_index() is False

    # Issue 17, defect 1, on something that builds analyzers: the old body is a 400
    broken = copy.deepcopy(q.TEXT_ANALYSIS)
    broken["analyzer"]["mnemo_text"]["filter"][0] = "english_possessive_stemmer"
    monkeypatch.setattr(q, "TEXT_ANALYSIS", broken)
    with pytest.raises(DependencyError, match="HTTP 400"):
        adapter(emulator_url).ensure_index()


# How `tokenize` (local index) and the `mnemo_text` analyzer (OpenSearch) differ, word by word
# (docs/index-mapping.md, "Local tokens and OpenSearch tokens"): (text, local tokens, OpenSearch tokens).
DIFFERENCES = [
    ("memories stories", ["memorie", "storie"], ["memory", "story"]),  # -ies -> -y in Lucene's minimal stemmer
    ("plus gorgeous", ["plu", "gorgeou"], ["plus", "gorgeous"]),  # -us kept by Lucene
    ("shoes trees", ["shoe", "tree"], ["shoes", "trees"]),  # -oes/-ees kept by Lucene
    ("yes", ["yes"], ["ye"]),  # 3 letters: Lucene strips, local keeps
    ("3.5", ["3", "5"], ["3.5"]),  # UAX#29 keeps a decimal number whole
    ("Straße", ["strasse"], ["straße"]),  # casefold vs lowercase
]
SAME = ["Alice's cats love the garden", "Standups are on Tuesdays at 10am", "boxes classes dresses", "don't",
        "What does this say"]  # stopwords before the plural fold, as the analyzer (issue 54)


@pytest.mark.parametrize(("text", "local", "opensearch"), DIFFERENCES + [(t, tokenize(t), tokenize(t)) for t in SAME])
def test_local_and_opensearch_tokens_differ_only_as_documented(emulator_url: str, text: str, local: list[str],
                                                               opensearch: list[str]) -> None:
    client = OpenSearch(hosts=[emulator_url])
    name = "mnemo-analysis"
    if not client.indices.exists(index=name):
        client.indices.create(index=name, body=q.index_body(4))  # the production body, unpatched
    analysed = client.indices.analyze(index=name, body={"analyzer": "mnemo_text", "text": text})
    assert tokenize(text) == local
    assert [t["token"] for t in analysed["tokens"]] == opensearch


def test_serverless_write_path_keeps_and_deletes_by_the_generated_ids(
        emulator_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    emulate_possessive_filter(monkeypatch)
    index = adapter(emulator_url, service="aoss")
    client = index._client

    first = index.upsert([doc("m1", "buy milk")])["m1"]
    stored = client.search(index=index.index_name, body={"query": {"match_all": {}}})["hits"]["hits"]
    assert [h["_id"] for h in stored] == first  # the id the bulk answer gave is the document's

    second = index.upsert([doc("m1", "buy bread", version=2, index_ids=first)])["m1"]
    stored = client.search(index=index.index_name, body={"query": {"match_all": {}}})["hits"]["hits"]
    assert [h["_id"] for h in stored] == second != first

    index.delete("t1", "m1", second)
    assert client.search(index=index.index_name, body={"query": {"match_all": {}}})["hits"]["hits"] == []


def test_both_leg_transports_rank_alike(emulator_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    emulate_possessive_filter(monkeypatch)
    writer = adapter(emulator_url)
    writer.upsert([doc("a", "I prefer dark roast coffee"), doc("b", "Coffee with Anna on Friday"),
                   doc("c", "Standups are on Tuesdays")])
    query = SearchQuery(scope=NamespaceFilter(tenant="t1", user_id="u1"), text="dark roast coffee")
    by_msearch = OpenSearchIndex(writer._client, index=writer.index_name.rsplit("-v", 1)[0], service="none",
                                 embedding_model="m", dimension=4, legs="msearch")
    by_search = OpenSearchIndex(writer._client, index=writer.index_name.rsplit("-v", 1)[0], service="none",
                                embedding_model="m", dimension=4, legs="concurrent")

    def ranked(index: OpenSearchIndex) -> list[tuple[str, float]]:
        return sorted(((c.memory_id, c.lexical) for c in index.search(query)), key=lambda t: -t[1])

    assert [memory_id for memory_id, _ in ranked(by_msearch)] == ["a", "b"]
    assert ranked(by_search) == ranked(by_msearch)
