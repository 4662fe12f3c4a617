"""A tiny in-memory OpenSearch that *executes* the query DSL subset Mnemo sends, behind a real
opensearch-py client (a `Connection` subclass), so the port-contract suite can run the OpenSearch
adapter against behaviour rather than against scripted replies.

What it evaluates: cluster info (`GET /`), index create (400 when it exists), `_bulk` index/delete (generated or given
`_id`, `external_gte` versions), `_search` and `_msearch` with `bool` (`filter`/`must`/`must_not`/
`should` + `minimum_should_match`; a query's score sums its scoring clauses), `term` (on a text field:
one of its tokens), `terms`, `range`, `multi_match` (`most_fields`, boosted, BM25 over
`mnemo.domain.text.tokenize`, in Lucene's form; `_name` lists it in a hit's `matched_queries`), `knn`
(exact inner product, filter inside, faiss innerproduct score), `aggs` (`global`, `filters`), `sort`,
`size` and `_source`. Anything else raises, so a body this engine does
not understand fails the test instead of passing silently. It is no substitute for a real cluster
(no analyzers, no HNSW): the rule tests and the emulator/live suites cover those.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from typing import Any

from opensearchpy import Connection

from mnemo.domain.scoring import BM25_K1, bm25_idf, bm25_term
from mnemo.domain.text import tokenize

_ids = itertools.count(1)
# Analysed in the mappings (queries.index_body; fact_queries.fact_index_body): a `term` matches a token
_TEXT_FIELDS = ("text", "context", "entities", "sentence", "canonical", "names")


class Engine:
    def __init__(self) -> None:
        self.indices: dict[str, dict[str, dict[str, Any]]] = {}  # index -> _id -> {"_source", "_version"}

    # -- requests -----------------------------------------------------------------------------
    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = [p for p in path.split("?")[0].split("/") if p]
        if method == "GET" and not parts:  # cluster info: the adapter's start-up version check
            return 200, {"version": {"number": "2.19.0", "distribution": "opensearch"}}
        if method == "PUT" and len(parts) == 1:
            if parts[0] in self.indices:
                return 400, {"error": {"type": "resource_already_exists_exception", "reason": "exists"}, "status": 400}
            self.indices[parts[0]] = {}
            return 200, {"acknowledged": True, "index": parts[0]}
        index = parts[0]
        if index not in self.indices:
            return 404, {"error": {"type": "index_not_found_exception", "reason": f"no such index [{index}]"},
                         "status": 404}
        if parts[1:] == ["_bulk"]:
            return 200, self._bulk(self.indices[index], body)
        if parts[1:] == ["_search"]:
            return 200, self._search(self.indices[index], body)
        if parts[1:] == ["_msearch"]:
            bodies = body[1::2]
            return 200, {"responses": [{"status": 200, **self._search(self.indices[index], b)} for b in bodies]}
        raise AssertionError(f"the engine does not serve {method} {path}")

    def _bulk(self, docs: dict[str, dict[str, Any]], actions: list[dict[str, Any]]) -> dict[str, Any]:
        items, errors, lines = [], False, iter(actions)
        for action in lines:
            (op, meta), = action.items()
            if op == "delete":
                found = docs.pop(meta["_id"], None)
                items.append({"delete": {"_id": meta["_id"], "status": 200 if found else 404}})
                continue
            assert op == "index", f"unsupported bulk action {op}"
            source = next(lines)
            doc_id = meta.get("_id") or f"gen{next(_ids)}"
            version = meta.get("version")
            current = docs.get(doc_id)
            if meta.get("version_type") == "external_gte" and current and current["_version"] > version:
                items.append({"index": {"_id": doc_id, "status": 409, "error": {"type": "version_conflict"}}})
                errors = True
                continue
            docs[doc_id] = {"_source": source, "_version": version or 1}
            items.append({"index": {"_id": doc_id, "status": 201}})
        return {"errors": errors, "items": items}

    # -- search -------------------------------------------------------------------------------
    def _search(self, docs: dict[str, dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
        allowed = {"size", "track_total_hits", "_source", "query", "sort", "aggs"}
        assert set(body) <= allowed, f"unsupported search keys {set(body) - allowed}"
        query = body["query"]
        if "knn" in query:
            (field, spec), = query["knn"].items()
            matches = [(i, d) for i, d in docs.items()
                       if "filter" not in spec or self._matches(d["_source"], spec["filter"], docs)]
            scored = []
            for doc_id, doc in matches:
                vector = doc["_source"].get(field)
                if vector is not None:
                    ip = sum(a * b for a, b in zip(vector, spec["vector"], strict=True))
                    scored.append((doc_id, doc, 1 + ip if ip > 0 else 1 / (1 - ip)))
            scored.sort(key=lambda t: -t[2])
            scored = scored[: spec["k"]]
        else:
            scored = [(i, d, self._score(d["_source"], query, docs)) for i, d in docs.items()
                      if self._matches(d["_source"], query, docs)]
            if "sort" in body:
                for clause in reversed(body["sort"]):
                    (name, order), = clause.items()
                    scored.sort(key=lambda t: t[1]["_source"].get(name) or "", reverse=order == "desc")
            else:
                scored.sort(key=lambda t: -t[2])
        hits = []
        for i, d, s in scored[: body.get("size", 10)]:
            hit = {"_id": i, "_score": s, "_source": _project(d["_source"], body.get("_source"))}
            named = [name for name in _names(query) if self._matches(d["_source"], _names(query)[name], docs)]
            if named:
                hit["matched_queries"] = named
            hits.append(hit)
        response: dict[str, Any] = {"hits": {"hits": hits}}
        if "aggs" in body:
            response["aggregations"] = {name: self._aggregate(spec, docs) for name, spec in body["aggs"].items()}
        return response

    def _aggregate(self, spec: dict[str, Any], docs: dict[str, Any]) -> dict[str, Any]:
        assert set(spec) == {"global", "aggs"} and spec["global"] == {}, spec
        (name, inner), = spec["aggs"].items()
        (kind, filters), = inner.items()
        assert kind == "filters" and set(filters) == {"filters"}, inner
        buckets = {key: {"doc_count": sum(self._matches(d["_source"], clause, docs) for d in docs.values())}
                   for key, clause in filters["filters"].items()}
        return {"doc_count": len(docs), name: {"buckets": buckets}}

    def _matches(self, source: dict[str, Any], clause: dict[str, Any], docs: dict[str, Any]) -> bool:
        (kind, spec), = clause.items()
        if kind == "bool":
            assert set(spec) <= {"filter", "must", "must_not", "should", "minimum_should_match"}, spec
            ok = all(self._matches(source, c, docs) for c in [*spec.get("filter", []), *spec.get("must", [])])
            ok = ok and not any(self._matches(source, c, docs) for c in spec.get("must_not", []))
            if "should" in spec:
                hits = sum(self._matches(source, c, docs) for c in spec["should"])
                ok = ok and hits >= spec.get("minimum_should_match", 1)
            return ok
        if kind == "term":
            (name, value), = spec.items()
            if name in _TEXT_FIELDS:
                return value in tokenize(_text(source.get(name)))
            return source.get(name) == value
        if kind == "terms":
            (name, values), = spec.items()
            return source.get(name) in values
        if kind == "range":
            (name, bounds), = spec.items()
            value = source.get(name)
            assert set(bounds) <= {"lt", "lte", "gt", "gte"}, bounds
            return value is not None and all(_compare(value, op, bound) for op, bound in bounds.items())
        if kind == "multi_match":
            return self._multi_match(source, spec, docs) > 0
        raise AssertionError(f"the engine does not evaluate {kind!r} clauses")

    def _score(self, source: dict[str, Any], query: dict[str, Any], docs: dict[str, Any]) -> float:
        clauses = [*query.get("bool", {}).get("must", []), *query.get("bool", {}).get("should", [])]
        return sum(self._multi_match(source, c["multi_match"], docs) for c in clauses if "multi_match" in c)

    def _multi_match(self, source: dict[str, Any], spec: dict[str, Any], docs: dict[str, Any]) -> float:
        assert spec.get("type") == "most_fields" and set(spec) <= {"query", "fields", "type", "_name"}, spec
        terms = set(tokenize(spec["query"]))
        total = 0.0
        for entry in spec["fields"]:
            name, _, boost = entry.partition("^")
            corpus = [Counter(tokenize(_text(d["_source"].get(name)))) for d in docs.values()]
            avg = sum(sum(c.values()) for c in corpus) / max(1, len(corpus))
            mine = Counter(tokenize(_text(source.get(name))))
            for term in terms & mine.keys():
                idf = bm25_idf(len(corpus), sum(1 for c in corpus if term in c))
                # Lucene's BM25, as OpenSearch scores: no k1 + 1 in the numerator since Lucene 8 (LUCENE-8563)
                total += float(boost or 1.0) * bm25_term(mine[term], idf, sum(mine.values()), avg) / (BM25_K1 + 1.0)
        return total


def _names(query: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The named clauses of a query's `bool` (name -> clause)."""
    clauses = [*query.get("bool", {}).get("must", []), *query.get("bool", {}).get("should", [])]
    return {c["multi_match"]["_name"]: c for c in clauses if "_name" in c.get("multi_match", {})}


def _text(value: Any) -> str:
    return " ".join(value) if isinstance(value, list) else str(value or "")


def _compare(value: Any, op: str, bound: Any) -> bool:
    left, right = str(value), str(bound)  # ISO timestamps in our documents: string order is time order
    return {"lt": left < right, "lte": left <= right, "gt": left > right, "gte": left >= right}[op]


def _project(source: dict[str, Any], spec: Any) -> dict[str, Any]:
    if spec is None:
        return dict(source)
    if isinstance(spec, list):
        return {k: v for k, v in source.items() if k in spec}
    return {k: v for k, v in source.items() if k not in spec.get("excludes", [])}


def engine_connection(engine: Engine) -> type[Connection]:
    class EngineConnection(Connection):
        def __init__(self, **kwargs: Any) -> None:
            kwargs.pop("http_auth", None)
            kwargs.pop("verify_certs", None)
            super().__init__(**kwargs)

        def perform_request(self, method, url, params=None, body=None, timeout=None, ignore=(), headers=None):
            text = body.decode() if isinstance(body, bytes) else body
            if text is None:
                parsed = None
            elif url.split("?")[0].endswith(("/_bulk", "/_msearch")):
                parsed = [json.loads(line) for line in text.splitlines() if line]
            else:
                parsed = json.loads(text)
            status, payload = engine.handle(method, url, parsed)
            raw = json.dumps(payload, allow_nan=False)
            if not (200 <= status < 300) and status not in ignore:
                self._raise_error(status, raw, "application/json")
            return status, {"content-type": "application/json"}, raw

    return EngineConnection

