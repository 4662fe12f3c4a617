"""Shared fixtures: moto-backed AWS with the tables and queues of template.yaml, and the services."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _hypothesis_profiles() -> None:
    """`ci` (the default, what `make test` runs): bounded, derandomised (the same examples every run,
    so a failure reproduces), no deadline (2 shared cores make timings meaningless), no example
    database. `deep`: HYPOTHESIS_PROFILE=deep for a longer local hunt."""
    from hypothesis import HealthCheck, settings

    common = {"deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}
    settings.register_profile("ci", max_examples=20, derandomize=True, database=None, print_blob=True, **common)
    settings.register_profile("deep", max_examples=300, **common)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_hypothesis_profiles()
TEMPLATE = REPO / "template.yaml"
TEST_KEY = "mn_testlocal_0123456789abcdefghijklmnop"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """In-process moto with every table and queue of template.yaml; yields logical id → name/url."""
    from moto import mock_aws

    for name in list(os.environ):
        if name.startswith(("AWS_ENDPOINT_URL", "MNEMO_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    from mnemo.local import moto_patches

    # The local stack's moto, every patch of it (shared/mnemo/local/moto_patches.py): transactions
    # all-or-nothing without losing other requests' writes, keyed queries reading their partition,
    # item reads as plain JSON. Every test runs on it.
    moto_patches.install()
    with mock_aws():
        from mnemo.adapters.aws import client
        from mnemo.local.template_resources import create_local_resources

        resources = create_local_resources(client("dynamodb"), client("sqs"), str(TEMPLATE), {"maxReceiveCount": 3})
        monkeypatch.setenv("MNEMO_MEMORIES_TABLE", resources["MemoriesTable"])
        monkeypatch.setenv("MNEMO_KEYS_TABLE", resources["KeysTable"])
        monkeypatch.setenv("MNEMO_OAUTH_TABLE", resources["OAuthTable"])
        monkeypatch.setenv("MNEMO_QUEUE_URL", resources["EnrichmentQueue"])
        monkeypatch.setenv("MNEMO_DLQ_URL", resources["EnrichmentDLQ"])
        monkeypatch.setenv("MNEMO_MAX_RECEIVE_COUNT", "3")
        monkeypatch.setenv("MNEMO_MODEL_DIR", str(REPO / "models" / "minilm"))
        yield resources


class FixedClock:
    """A fixed start, one millisecond further at each reading: deterministic and strictly increasing,
    so no test depends on the day, hour or weekday it runs (the services never read the wall clock)."""

    START = datetime(2025, 6, 7, 9, 0, tzinfo=UTC)  # a Saturday

    def __init__(self) -> None:
        self._ticks = itertools.count()
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self.START + timedelta(milliseconds=next(self._ticks))


@pytest.fixture(autouse=True)
def _forget_finished_apps() -> Iterator[None]:
    """FastAPI remembers every endpoint it classified in module-level lru_caches
    (fastapi.dependencies.models). A test's app closes over its container (moto tables, an ONNX MiniLM
    session of ~200 MB), so without this each test's container outlived it: 6.9 GB after 36 tests,
    and the whole suite was OOM-killed on a 24 GiB machine. Production builds one app per process."""
    yield
    from fastapi.dependencies import models

    for value in vars(models).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


@pytest.fixture
def container(aws: dict[str, str]):
    """The services on moto with a `FixedClock`, installed as the process-wide container so the
    Lambda handlers a test invokes share them."""
    from mnemo import bootstrap
    from mnemo.settings import MnemoSettings

    bootstrap.reset()
    yield bootstrap.install(bootstrap.Container(MnemoSettings(), clock=FixedClock()))
    bootstrap.reset()


@pytest.fixture
def principal(container):
    """An admin key of tenant `local`, registered like `make dev` registers MNEMO_API_KEY."""
    container.keys.ensure("local", "test", ["admin"], TEST_KEY)
    return container.keys.authenticate(TEST_KEY)


def received(sqs, queue_url: str) -> list[dict]:
    """Drain a queue (test helper)."""
    messages = []
    while True:
        batch = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        if not batch:
            return messages
        messages.extend(batch)
