"""The `make dev` stack in process: moto server, resources, key and queue poller."""

from __future__ import annotations

import logging
import os

import pytest

from mnemo.errors import AuthenticationError

FIRST_KEY = "mn_firststack_0123456789abcdefghijklmno"
SECOND_KEY = "mn_secondstack_0123456789abcdefghijklmn"


@pytest.fixture
def clean_env():  # noqa: ANN201
    """LocalStack points os.environ at its moto server; put everything back afterwards."""
    from mnemo import bootstrap

    saved = dict(os.environ)
    for name in list(os.environ):
        if name.startswith(("AWS_", "MNEMO_")):
            del os.environ[name]
    yield
    os.environ.clear()
    os.environ.update(saved)
    bootstrap.reset()


@pytest.mark.usefixtures("clean_env")
def test_a_forgetting_stop_leaves_the_next_stack_empty_and_the_poller_quiet(caplog: pytest.LogCaptureFixture) -> None:
    # (The LoCoMo benchmark starts a stack per conversation this way.)
    from mnemo.local.server import LocalStack

    caplog.set_level(logging.ERROR)
    first = LocalStack(FIRST_KEY)
    first.start()
    assert first.container.keys.authenticate(FIRST_KEY).tenant == "local"
    first.stop(forget=True)

    second = LocalStack(SECOND_KEY)
    second.start()
    try:
        keys = second.container.keys
        assert keys.authenticate(SECOND_KEY).tenant == "local"
        with pytest.raises(AuthenticationError):
            keys.authenticate(FIRST_KEY)  # the first stack's data is gone
    finally:
        second.stop(forget=True)

    # The poller stopped before its queue was reset, so it never polled a deleted queue
    assert [r.getMessage() for r in caplog.records if r.name.startswith("mnemo")] == []
