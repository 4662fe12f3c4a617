"""`SearchIndex` on OpenSearch: Serverless VECTORSEARCH (`aoss`), a managed domain (`es`) or a
self-hosted cluster (`none`). Request bodies live in `opensearch_queries`; ranking is the memory service's.

Documents and ids. OpenSearch Serverless VECTORSEARCH collections reject a custom `_id` on
index/create (the AWS "Supported operations" page marks `PUT <index>/_doc/<id>` and `_create/<id>`
"for search collection types only") and do not serve `_delete_by_query`; `_bulk` with generated ids,
`_search`/`_msearch` and deletes by generated `_id` work. Our id is therefore the `memory_id` field,
and the write path depends on the service (inside this adapter only):

- `aoss`: upsert = one `_search` for the visible copies of the memories (tenant + memory_id), then one
  `_bulk` that deletes them and the copies the caller remembers (`IndexDocument.index_ids`) and indexes
  the new documents (no `_id`), returning the generated `_id`s to remember; a visible copy with a higher
  `version` wins (the write is stale and skipped). delete = the same lookup + a `_bulk` of deletes.
- `es` / `none`: `_id` = a digest of (tenant, memory_id); upsert = one `_bulk` of index actions with
  `version_type=external_gte` on our version (a stale write gets 409 and is dropped); delete = one
  `_bulk` delete by `_id`.

No `_refresh` anywhere (Serverless has none; a vector collection refreshes about once a minute).
So on Serverless a copy indexed less than a refresh ago is invisible to the lookup (the remembered ids
cover it) and, when its id was not remembered, can survive as a duplicate: `search` and `similar` collapse hits by `memory_id`, keeping the highest version,
and the next upsert/delete of that memory (or a reindex) removes it. Search results are hydrated from
DynamoDB, which decides status and content. opensearch-py is imported lazily (import cost ~0.5 s).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import unquote, urlsplit

from mnemo.adapters import opensearch_queries as q
from mnemo.domain.scoring import Candidate, clamp01, leg_size
from mnemo.errors import DependencyError
from mnemo.ports import SIMILAR_AUTHORS, SIMILAR_STATUSES, IndexDocument, SearchHit, SearchQuery

if TYPE_CHECKING:
    from mnemo.settings import MnemoSettings

logger = logging.getLogger(__name__)
T = TypeVar("T")
Service = Literal["aoss", "es", "none"]
Legs = Literal["auto", "msearch", "concurrent"]
# Below 2.13 faiss `innerproduct` is scored wrongly in the exact search that efficient filtering falls
# back to for small filtered sets (k-NN #1396/#1525, fixed in 2.13): a small tenant's semantic leg
# would rank by a wrong score. (faiss efficient filtering itself needs 2.9.)
MIN_VERSION = (2, 13)
# How long after this instance created the index a missing index on the copies lookup means "nothing
# indexed yet": a new Serverless index is not searchable at once (index_not_found right after PUT).
_NEW_INDEX_WINDOW_S = 300.0
_NO_INDEX: dict[str, Any] = {}  # the answer of a read on an index that does not exist yet
_ERROR_TYPE_RE = re.compile(r"[a-z][a-z0-9_]{0,80}")
_AWS_HOST_RE = re.compile(r"\.([a-z]{2}(?:-[a-z]+)+-\d)\.(?:aoss|es)\.amazonaws\.com$")


class OpenSearchIndex:
    """`SearchIndex` over one physical index (`index_name`); `service` picks the write path (module docstring)."""

    def __init__(self, client: Any, *, index: str, service: Service, embedding_model: str, dimension: int,
                 legs: Legs = "auto") -> None:
        self._client = client
        self.index_name = q.physical_index(index)
        self._service = service
        self._generated_ids = service == "aoss"
        # Serverless: two concurrent `_search` calls (AWS's operation list does not name `_msearch` for
        # vector collections, and k-NN #2881 reports knn ranking differently through `_msearch`).
        self._legs: Legs = legs if legs != "auto" else ("concurrent" if service == "aoss" else "msearch")
        self._embedding_model = embedding_model
        self._dimension = dimension
        self._checked = service == "aoss"  # Serverless reports no engine version: nothing to check
        self._ensured = False
        self._created_at: float | None = None  # time.monotonic() when this instance created the index
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.RLock()

    @classmethod
    def from_settings(cls, settings: MnemoSettings, *, embedding_model: str | None = None,
                      dimension: int | None = None,
                      connection_class: Any = None) -> OpenSearchIndex:
        """A client for `MNEMO_OPENSEARCH_URL`: SigV4 for `aoss`/`es`, the URL's userinfo (basic auth) for `none`.

        `embedding_model`/`dimension` default to the settings; pass the embedder's when it is not Bedrock."""
        from opensearchpy import OpenSearch, Urllib3HttpConnection

        url = urlsplit(settings.opensearch_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError("MNEMO_OPENSEARCH_URL must be an http(s) URL, e.g. https://<id>.<region>.aoss.amazonaws.com")
        use_ssl = url.scheme == "https"
        host: dict[str, Any] = {"host": url.hostname, "port": url.port or (443 if use_ssl else 80)}
        if url.path.strip("/"):
            host["url_prefix"] = url.path.rstrip("/")
        service = settings.opensearch_service
        if service == "none":
            auth: Any = (unquote(url.username), unquote(url.password or "")) if url.username else None
        else:
            auth = _sigv4_auth(service, url.hostname)
        client = OpenSearch(
            hosts=[host], http_auth=auth, use_ssl=use_ssl, verify_certs=True,
            timeout=5, max_retries=1, retry_on_timeout=True,  # worst case ~10 s: inside the 25 s tool budget
            connection_class=connection_class or Urllib3HttpConnection,
        )
        return cls(client, index=settings.opensearch_index, service=service,
                   embedding_model=embedding_model or settings.embedding_model_id,
                   dimension=dimension or settings.embedding_dimension, legs=settings.opensearch_legs)

    # -- index lifecycle ----------------------------------------------------------------
    def ensure_index(self) -> bool:
        """Create the physical index with our mapping unless it exists; True when it was created."""
        from opensearchpy.exceptions import RequestError

        self._check_once()

        def create(client: Any) -> bool:
            try:
                client.indices.create(index=self.index_name, body=q.index_body(self._dimension))
            except RequestError as exc:
                if exc.error == "resource_already_exists_exception":
                    return False
                raise
            return True

        created = self._call(create)
        if created:
            self._created_at = time.monotonic()
        self._ensured = True
        return created

    def _check_once(self) -> None:
        """Refuse a cluster below `MIN_VERSION`, once per instance (its first request, never at import)."""
        if self._checked:
            return
        with self._lock:
            if self._checked:
                return
            info = self._call(lambda c: c.info())
            version = info.get("version") or {}
            number = str(version.get("number") or "")
            if version.get("distribution", "opensearch") != "opensearch":
                raise DependencyError(f"search index is not OpenSearch ({version.get('distribution')} {number}); "
                                      f"Mnemo needs OpenSearch {_dotted(MIN_VERSION)} or later with the k-NN plugin")
            if number == "7.10.2":  # a managed domain in compatibility mode hides its real version
                logger.warning("search index reports 7.10.2 (compatibility mode): cannot check for OpenSearch >= %s",
                               _dotted(MIN_VERSION))
            elif _version_tuple(number) < MIN_VERSION:
                raise DependencyError(f"search index runs OpenSearch {number or 'of unknown version'}; Mnemo needs "
                                      f"{_dotted(MIN_VERSION)} or later (faiss innerproduct is scored wrongly in "
                                      "filtered exact search before 2.13, k-NN #1396/#1525)")
            self._checked = True

    def _ensure_once(self) -> None:
        # Before the first write of this instance: a write to a missing index would auto-create it
        # with a dynamic mapping (no knn_vector), which only a reindex could repair.
        if not self._ensured:
            with self._lock:
                if not self._ensured:
                    self.ensure_index()

    # -- writes ---------------------------------------------------------------------------
    def upsert(self, documents: Sequence[IndexDocument]) -> dict[str, list[str]]:
        """Returns, on Serverless, memory id -> the generated `_id`s its copies have after this write."""
        latest: dict[tuple[str, str], IndexDocument] = {}
        for doc in documents:  # one document per memory: the highest version (the last on a tie)
            key = (doc.tenant, doc.memory_id)
            if key not in latest or doc.version >= latest[key].version:
                latest[key] = doc
        if not latest:
            return {}
        for doc in latest.values():
            if doc.vector is not None and len(doc.vector) != self._dimension:
                raise DependencyError(f"embedding has {len(doc.vector)} dimensions but the search index expects "
                                      f"{self._dimension}; reindex with the new model")
        self._ensure_once()
        actions: list[dict[str, Any]] = []
        if not self._generated_ids:
            for doc in latest.values():
                meta = {"_id": q.document_id(doc.tenant, doc.memory_id), "version": doc.version,
                        "version_type": "external_gte"}
                actions += [{"index": meta}, q.document_source(doc)]
            self._bulk(actions)
            return {}
        # Serverless: delete every copy we know of (the ids earlier writes returned, which a refresh may
        # not show yet, plus the visible ones), index without an `_id`, and hand back the new `_id`s.
        copies = self._copies(latest.keys())
        kept: dict[str, list[str]] = {}
        indexed: list[str] = []  # memory id of each index action, in order
        for key, doc in latest.items():
            found = copies.get(key, [])
            old_ids = list(dict.fromkeys([*doc.index_ids, *(doc_id for doc_id, _ in found)]))
            if any(version > doc.version for _, version in found):
                logger.info("stale index write skipped", extra={"memory_id": doc.memory_id})
                kept[doc.memory_id] = old_ids
                continue
            actions += [{"delete": {"_id": doc_id}} for doc_id in old_ids]
            actions += [{"index": {}}, q.document_source(doc)]
            indexed.append(doc.memory_id)
        items = self._bulk(actions)
        new_ids = [result.get("_id") for op, result in items if op == "index"]
        if len(new_ids) != len(indexed) or not all(new_ids):
            raise DependencyError("search index returned no document ids for a bulk write")
        for memory_id, doc_id in zip(indexed, new_ids, strict=True):
            kept.setdefault(memory_id, []).append(str(doc_id))
        return kept

    def delete(self, tenant: str, memory_id: str, index_ids: Sequence[str] = ()) -> None:
        self._ensure_once()
        if self._generated_ids:
            found = [doc_id for doc_id, _ in self._copies([(tenant, memory_id)]).get((tenant, memory_id), [])]
            ids = list(dict.fromkeys([*index_ids, *found]))
        else:
            ids = [q.document_id(tenant, memory_id)]
        self._bulk([{"delete": {"_id": doc_id}} for doc_id in ids])

    def _copies(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, int]]]:
        """Visible copies per (tenant, memory id): (generated _id, version). Returns ids, never documents."""
        by_tenant: dict[str, list[str]] = {}
        for tenant, memory_id in keys:
            by_tenant.setdefault(tenant, []).append(memory_id)
        body = q.copies_body(by_tenant)
        new = self._created_at is not None and time.monotonic() - self._created_at < _NEW_INDEX_WINDOW_S
        response = self._call(lambda c: c.search(index=self.index_name, body=body), missing=_NO_INDEX if new else None)
        copies: dict[tuple[str, str], list[tuple[str, int]]] = {}
        for hit in response.get("hits", {}).get("hits", []):
            src = hit.get("_source") or {}
            key = (src.get("tenant", ""), src.get("memory_id", ""))
            copies.setdefault(key, []).append((hit["_id"], int(src.get("version") or 0)))
        return copies

    def _bulk(self, actions: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
        """Send the actions; returns each item's (operation, result), in order."""
        if not actions:
            return []
        response = self._call(lambda c: c.bulk(body=actions, index=self.index_name))
        items = [next(iter(item.items())) for item in response.get("items", [])]
        if not response.get("errors"):
            return items
        failures = []
        for op, result in items:
            status = int(result.get("status") or 0)
            if status < 300 or (op == "delete" and status == 404) or (op == "index" and status == 409):
                continue  # already gone / a newer version is indexed (external_gte)
            failures.append(result.get("error") or {"type": f"HTTP {status}"})
        if failures:
            first = failures[0]
            reason = f"{first.get('type', 'error')}: {first.get('reason', '')}".strip(": ")[:200]
            raise DependencyError(f"search index rejected {len(failures)} of {len(items)} "
                                  f"bulk actions (first: {reason})")
        return items

    # -- reads ----------------------------------------------------------------------------
    def search(self, query: SearchQuery) -> list[Candidate]:
        """The k-NN leg (when the query has a vector) and the BM25 leg (`_run_legs`), as candidates."""
        levels = query.scope.levels()
        scope = q.scope_filter(levels, query.authors, query.statuses)
        bodies: list[dict[str, Any]] = []
        if query.vector is not None:
            self._check_query_vector(query.vector)
            knn_scope = q.scope_filter(levels, query.authors, query.statuses, embedding_model=self._embedding_model)
            bodies.append(q.knn_body(query.vector, leg_size(query.top_k), knn_scope, source=q.CANDIDATE_SOURCE))
        bodies.append(q.lexical_body(query.text, leg_size(query.top_k), scope, source=q.CANDIDATE_SOURCE))
        legs = [self._hits(item) for item in self._run_legs(bodies)]
        semantic_hits, lexical_hits = (legs[0], legs[1]) if query.vector is not None else ([], legs[0])
        return _candidates(semantic_hits, lexical_hits)

    def _run_legs(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One search response per body, in order: one `_msearch`, or one `_search` per body run
        concurrently (`legs`, see `__init__`). A missing index answers each body with an
        `index_not_found_exception` item, which `_hits` reads as no hits."""
        self._check_once()
        missing = {"error": {"type": "index_not_found_exception"}}
        if self._legs == "msearch":
            lines = [line for body in bodies for line in ({}, body)]
            response = self._call(lambda c: c.msearch(body=lines, index=self.index_name), missing=_NO_INDEX)
            if response is _NO_INDEX:
                return [missing] * len(bodies)
            items = list(response.get("responses", []))
            if len(items) != len(bodies):
                raise DependencyError("search index unavailable (incomplete multi-search response)")
            return items
        if len(bodies) == 1:  # the lexical leg alone: no thread needed
            response = self._call(_searcher(self.index_name, bodies[0]), missing=_NO_INDEX)
            return [missing if response is _NO_INDEX else response]
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="opensearch-leg")
        futures = [self._pool.submit(self._call, _searcher(self.index_name, body), missing=_NO_INDEX)
                   for body in bodies]
        return [missing if (response := future.result()) is _NO_INDEX else response for future in futures]

    def similar(self, tenant: str, user_id: str, vector: list[float], k: int,
                exclude: str | None = None) -> list[SearchHit]:
        if k <= 0:
            return []
        self._check_query_vector(vector)
        self._check_once()
        scope = q.scope_filter({"tenant": tenant, "user_id": user_id}, SIMILAR_AUTHORS, SIMILAR_STATUSES,
                               embedding_model=self._embedding_model, exclude=exclude)
        body = q.knn_body(vector, k, scope, source=["memory_id", "version"])
        response = self._call(lambda c: c.search(index=self.index_name, body=body), missing=_NO_INDEX)
        best: dict[str, tuple[int, float]] = {}
        for hit in response.get("hits", {}).get("hits", []):
            src = hit.get("_source") or {}
            mid, version = src.get("memory_id"), int(src.get("version") or 0)
            cosine = q.cosine_from_knn_score(float(hit.get("_score") or 0.0))
            if mid and (mid not in best or (version, cosine) > best[mid]):
                best[mid] = (version, cosine)
        ordered = sorted(best.items(), key=lambda kv: (-kv[1][1], kv[0]))[:k]
        return [SearchHit(memory_id=mid, score=clamp01(cos)) for mid, (_, cos) in ordered]

    def preceding(self, tenant: str, user_id: str, before: datetime) -> IndexDocument | None:
        """One sorted search. On Serverless a document becomes searchable only after its refresh
        interval, so a predecessor captured seconds earlier may not be found yet there."""
        self._check_once()
        scope = q.scope_filter({"tenant": tenant, "user_id": user_id}, SIMILAR_AUTHORS, ("open",))
        body = q.preceding_body(before.isoformat(), scope)
        response = self._call(lambda c: c.search(index=self.index_name, body=body), missing=_NO_INDEX)
        hits = response.get("hits", {}).get("hits", [])
        return IndexDocument.model_validate(hits[0]["_source"]) if hits else None

    def _check_query_vector(self, vector: Sequence[float]) -> None:
        if len(vector) != self._dimension:
            raise DependencyError(f"query embedding has {len(vector)} dimensions but the search index expects "
                                  f"{self._dimension}")

    def _hits(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        error = item.get("error")
        if error is None:
            return list(item.get("hits", {}).get("hits", []))
        kind = error.get("type", "error") if isinstance(error, dict) else str(error)
        if kind == "index_not_found_exception":  # nothing was ever written: no document can match
            logger.warning("search index %s does not exist yet", self.index_name)
            return []
        raise DependencyError(f"search index unavailable (search failed: {kind})")

    # -- errors ---------------------------------------------------------------------------
    def _call(self, request: Callable[[Any], T], *, missing: T | None = None) -> T:
        """Run one client request; every opensearch-py failure becomes a DependencyError without internals.

        `missing` is the answer when the index does not exist yet (nothing was ever written, so a read
        finds nothing); without it a missing index is an error."""
        from opensearchpy.exceptions import ConnectionError as ConnectError
        from opensearchpy.exceptions import ConnectionTimeout, NotFoundError, OpenSearchException, TransportError

        try:
            return request(self._client)
        except NotFoundError as exc:
            if missing is not None and exc.error == "index_not_found_exception":
                logger.warning("search index %s does not exist yet", self.index_name)
                return missing
            raise DependencyError(f"search index rejected the request (HTTP 404{_kind(exc)})") from exc
        except ConnectionTimeout as exc:
            raise DependencyError("search index unavailable (timed out)") from exc
        except ConnectError as exc:
            raise DependencyError("search index unavailable (connection failed)") from exc
        except TransportError as exc:
            status = exc.status_code
            if isinstance(status, int) and status >= 500:
                raise DependencyError(f"search index unavailable (HTTP {status})") from exc
            if status == 429:
                raise DependencyError("search index unavailable (throttled, HTTP 429)") from exc
            raise DependencyError(f"search index rejected the request (HTTP {status}{_kind(exc)})") from exc
        except OpenSearchException as exc:
            raise DependencyError(f"search index unavailable ({type(exc).__name__})") from exc


def _candidates(semantic_hits: list[dict[str, Any]], lexical_hits: list[dict[str, Any]]) -> list[Candidate]:
    """The union of both legs, one candidate per memory. Transient duplicates (see the module
    docstring) collapse to the highest version seen; a stale copy contributes no signal."""
    newest: dict[str, int] = {}
    for hit in (*semantic_hits, *lexical_hits):
        src = hit.get("_source") or {}
        if src.get("memory_id"):
            newest[src["memory_id"]] = max(newest.get(src["memory_id"], 0), int(src.get("version") or 0))
    sources: dict[str, dict[str, Any]] = {}

    def best(hits: list[dict[str, Any]], convert: Callable[[float], float]) -> dict[str, float]:
        signal: dict[str, float] = {}
        for hit in hits:
            src = hit.get("_source") or {}
            mid = src.get("memory_id")
            if mid and int(src.get("version") or 0) == newest[mid]:
                value = convert(float(hit.get("_score") or 0.0))
                signal[mid] = max(signal.get(mid, value), value)
                sources[mid] = src
        return signal

    lexical = best(lexical_hits, float)
    semantic = best(semantic_hits, q.cosine_from_knn_score)
    return [
        Candidate(
            memory_id=mid,
            lexical=lexical.get(mid, 0.0),
            semantic=semantic.get(mid),
            importance=src.get("importance"),
            captured_at=_parse_time(src.get("captured_at")),
            text_tokens=src.get("text_tokens"),
            links=tuple((str(other), float(weight)) for other, weight in (src.get("links") or {}).items()),
        )
        for mid, src in sources.items()
    ]


def _searcher(index: str, body: dict[str, Any]) -> Callable[[Any], dict[str, Any]]:
    return lambda client: client.search(index=index, body=body)


def _version_tuple(number: str) -> tuple[int, ...]:
    """`2.19.1` -> (2, 19, 1); anything unparsable -> (0,), which fails the minimum check."""
    parts = re.findall(r"\d+", number)[:3]
    return tuple(int(p) for p in parts) if parts else (0,)


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(p) for p in version)


def _kind(exc: Any) -> str:
    """The error type (` mapper_parsing_exception`) when the body had one; never free text, which
    can carry ARNs, account ids or host names (a Serverless 403 body is `{"message": "User: arn:..."}`)."""
    kind = str(exc.error)
    return f" {kind}" if _ERROR_TYPE_RE.fullmatch(kind) else ""


def _parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _sigv4_auth(service: str, hostname: str) -> Any:
    """SigV4 for urllib3 (`AWSV4SignerAuth` is the requests flavour and cannot sign urllib3 requests)."""
    import boto3
    from opensearchpy import Urllib3AWSV4SignerAuth

    session = boto3.Session()
    credentials = session.get_credentials()
    if credentials is None:
        raise DependencyError("search index unavailable (no AWS credentials to sign requests)")
    match = _AWS_HOST_RE.search(hostname)
    region = (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or session.region_name
              or (match.group(1) if match else None))
    if not region:
        raise ValueError("set AWS_REGION to sign OpenSearch requests")
    return Urllib3AWSV4SignerAuth(credentials, region, service)
