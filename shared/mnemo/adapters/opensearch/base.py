"""What both OpenSearch adapters share (the memories index, `opensearch_index`, and the facts index,
`opensearch_facts`): the client (SigV4 for `aoss`/`es`, basic auth for `none`), the engine version
check, index creation before the first write, `_bulk` with partial-failure handling, the two search
legs (`_msearch` or concurrent `_search`), and the translation of every client failure into a
`DependencyError` that carries no host, ARN or body. Vendor shapes never leave the adapters.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import unquote, urlsplit

from mnemo.errors import DependencyError

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
NEW_INDEX_WINDOW_S = 300.0
NO_INDEX: dict[str, Any] = {}  # the answer of a read on an index that does not exist yet
_ERROR_TYPE_RE = re.compile(r"[a-z][a-z0-9_]{0,80}")
_AWS_HOST_RE = re.compile(r"\.([a-z]{2}(?:-[a-z]+)+-\d)\.(?:aoss|es)\.amazonaws\.com$")


def build_client(settings: MnemoSettings, connection_class: Any = None) -> Any:
    """A client for `MNEMO_OPENSEARCH_URL`: SigV4 for `aoss`/`es`, the URL's userinfo (basic auth) for `none`."""
    from opensearchpy import OpenSearch, Urllib3HttpConnection

    url = urlsplit(settings.opensearch_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError("MNEMO_OPENSEARCH_URL must be an http(s) URL, e.g. https://<id>.<region>.aoss.amazonaws.com")
    use_ssl = url.scheme == "https"
    host: dict[str, Any] = {"host": url.hostname, "port": url.port or (443 if use_ssl else 80)}
    if url.path.strip("/"):
        host["url_prefix"] = url.path.rstrip("/")
    if settings.opensearch_service == "none":
        auth: Any = (unquote(url.username), unquote(url.password or "")) if url.username else None
    else:
        auth = _sigv4_auth(settings.opensearch_service, url.hostname)
    return OpenSearch(
        hosts=[host], http_auth=auth, use_ssl=use_ssl, verify_certs=True,
        timeout=5, max_retries=1, retry_on_timeout=True,  # worst case ~10 s: inside the 25 s tool budget
        connection_class=connection_class or Urllib3HttpConnection,
    )


class OpenSearchBase:
    """One physical index (`index_name`) on one client. Subclasses give the index body (`_index_body`)."""

    def __init__(self, client: Any, *, index_name: str, service: Service, dimension: int, legs: Legs = "auto") -> None:
        self._client = client
        self.index_name = index_name
        self._service = service
        self._generated_ids = service == "aoss"
        # Serverless: two concurrent `_search` calls (AWS's operation list does not name `_msearch` for
        # vector collections, and k-NN #2881 reports knn ranking differently through `_msearch`).
        self._legs: Legs = legs if legs != "auto" else ("concurrent" if service == "aoss" else "msearch")
        self._dimension = dimension
        self._checked = service == "aoss"  # Serverless reports no engine version: nothing to check
        self._ensured = False
        self._created_at: float | None = None  # time.monotonic() when this instance created the index
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.RLock()

    def _index_body(self) -> dict[str, Any]:
        raise NotImplementedError

    # -- index lifecycle ----------------------------------------------------------------
    def ensure_index(self) -> bool:
        """Create the physical index with our mapping unless it exists; True when it was created."""
        from opensearchpy.exceptions import RequestError

        self._check_once()

        def create(client: Any) -> bool:
            try:
                client.indices.create(index=self.index_name, body=self._index_body())
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

    def _lookup_missing(self) -> dict[str, Any] | None:
        """What a copies lookup answers for a missing index: nothing, right after this instance created
        it (not searchable yet on Serverless); otherwise None (an error)."""
        new = self._created_at is not None and time.monotonic() - self._created_at < NEW_INDEX_WINDOW_S
        return NO_INDEX if new else None

    # -- writes ---------------------------------------------------------------------------
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
    def _run_legs(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One search response per body, in order: one `_msearch`, or one `_search` per body run
        concurrently (`legs`, see `__init__`). A missing index answers each body with an
        `index_not_found_exception` item, which `_hits` reads as no hits."""
        self._check_once()
        missing = {"error": {"type": "index_not_found_exception"}}
        if self._legs == "msearch":
            lines = [line for body in bodies for line in ({}, body)]
            response = self._call(lambda c: c.msearch(body=lines, index=self.index_name), missing=NO_INDEX)
            if response is NO_INDEX:
                return [missing] * len(bodies)
            items = list(response.get("responses", []))
            if len(items) != len(bodies):
                raise DependencyError("search index unavailable (incomplete multi-search response)")
            return items
        if len(bodies) == 1:  # one leg: no thread needed
            response = self._call(searcher(self.index_name, bodies[0]), missing=NO_INDEX)
            return [missing if response is NO_INDEX else response]
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="opensearch-leg")
        futures = [self._pool.submit(self._call, searcher(self.index_name, body), missing=NO_INDEX)
                   for body in bodies]
        return [missing if (response := future.result()) is NO_INDEX else response for future in futures]

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


def searcher(index: str, body: dict[str, Any]) -> Callable[[Any], dict[str, Any]]:
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
