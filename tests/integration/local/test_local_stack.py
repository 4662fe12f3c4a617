"""The `make dev` stack in process: moto server, resources, key and queue poller."""

from __future__ import annotations

import logging
import os

import pytest

from mnemo.errors import AuthenticationError

FIRST_KEY = "mn_firststack_0123456789abcdefghijklmno"
SECOND_KEY = "mn_secondstack_0123456789abcdefghijklmn"


@pytest.fixture
def clean_env():
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


@pytest.mark.usefixtures("clean_env")
def test_the_apps_unsigned_in_process_calls_share_state_with_signed_http_clients() -> None:
    """In process the app's requests skip SigV4 (moto checks none) yet land in the same account and
    region as what the AWS CLI sees over HTTP with the stack's key, both ways."""
    import boto3

    from mnemo.local.server import LocalStack

    stack = LocalStack(FIRST_KEY)
    stack.start()
    try:
        app, table = stack.container._dynamodb, stack.resources["MemoriesTable"]
        headers: list[str | None] = []
        app.meta.events.register_first("before-send.dynamodb",
                                       lambda request, **_: headers.append(request.headers.get("Authorization")))
        cli = boto3.client("dynamodb", endpoint_url=stack.aws_endpoint, region_name=os.environ["AWS_DEFAULT_REGION"],
                           aws_access_key_id="local", aws_secret_access_key="local")
        signed: list[str] = []
        cli.meta.events.register("before-send.dynamodb",
                                 lambda request, **_: signed.append(request.headers["Authorization"].decode()))
        app.put_item(TableName=table, Item={"pk": {"S": "PROBE"}, "sk": {"S": "APP"}})
        cli.put_item(TableName=table, Item={"pk": {"S": "PROBE"}, "sk": {"S": "CLI"}})
        seen_by_cli = cli.query(TableName=table, KeyConditionExpression="pk = :p",
                                ExpressionAttributeValues={":p": {"S": "PROBE"}})["Items"]
        seen_by_app = app.query(TableName=table, KeyConditionExpression="pk = :p",
                                ExpressionAttributeValues={":p": {"S": "PROBE"}})["Items"]
        assert [i["sk"]["S"] for i in seen_by_cli] == [i["sk"]["S"] for i in seen_by_app] == ["APP", "CLI"]
        assert headers == [None, None]  # the app's put and query went unsigned,
        assert len(signed) == 2 and all(h.startswith("AWS4-HMAC-SHA256") for h in signed)  # the CLI's did not
    finally:
        stack.stop(forget=True)
