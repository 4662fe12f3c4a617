"""SnapStart: the MCP and REST functions register their runtime hooks, and a simulated snapshot and
restore (the registered hooks called as Lambda calls them) leaves a working function that shares
no random state, AWS client, credentials or cached key with the snapshot."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
import snapshot_restore_py

from mnemo.local.server import load_function
from tests.integration.conftest import Context
from tests.integration.functions.test_handlers import API_HOST, EVENT_KEY, event


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any]]:
    """An empty runtime hook registry for this test (the library keeps module-level lists)."""
    before: list[Any] = []
    after: list[Any] = []
    monkeypatch.setattr(snapshot_restore_py, "_before_snapshot_registry", before)
    monkeypatch.setattr(snapshot_restore_py, "_after_restore_registry", after)
    return before, after


@pytest.fixture
def functions(container, hooks, monkeypatch) -> dict[str, Any]:
    monkeypatch.setenv("MNEMO_ALLOWED_HOSTS", json.dumps([API_HOST]))
    from mnemo import bootstrap

    bootstrap.reset()
    bootstrap.container().keys.ensure("local", "events", ["admin"], EVENT_KEY)
    return {name: load_function(name) for name in ("api", "mcp")}


def run(registry: list[Any], *, reverse: bool = False) -> None:
    """What Lambda does: before-snapshot hooks in reverse order of registration, after-restore in order."""
    for func, args, kwargs in reversed(registry) if reverse else registry:
        func(*args, **kwargs)


def test_the_mcp_and_rest_functions_register_one_hook_of_each_kind(functions, hooks) -> None:
    before, after = hooks
    assert len(before) == len(after) == 2  # api and mcp, imported by the fixture


def test_a_restored_function_shares_nothing_unique_with_its_snapshot(functions, hooks) -> None:
    from mnemo import bootstrap
    from mnemo.adapters import aws

    before, after = hooks
    api = functions["api"].handler
    # Given the snapshot taken after init and the before-snapshot hooks (which build the clients)
    run(before, reverse=True)
    services = bootstrap.container()
    snapshot_db, snapshot_session = services._dynamodb, aws._session
    assert snapshot_db is not None and snapshot_session is not None
    assert api(event("api_list_memories.json"), Context())["statusCode"] == 200  # the key is now cached
    loader = snapshot_session._session.get_component("data_loader")
    random_state = random.getstate()

    # When Lambda restores an instance from it and runs the after-restore hooks
    run(after)

    # Then random draws differ from what every other instance restored from this snapshot would draw
    drawn = random.random()
    random.setstate(random_state)
    assert drawn != random.random()
    # and the AWS clients (credentials, connection pools) are new, from a new session that kept
    # only the parsed service models
    assert services._dynamodb is not snapshot_db
    assert aws._session is not snapshot_session
    assert aws._session._session.get_component("data_loader") is loader
    # and the key cache is gone: the next request reads the key again, with the new client
    calls: Counter[str] = Counter()

    def count(model, params, **_):
        calls.update([f"{model.name} {params.get('TableName', '')}"])

    services._dynamodb.meta.events.register("before-parameter-build.*.*", count)
    created = api(event("api_create_memory.json"), Context())
    assert created["statusCode"] == 201, created["body"]
    # one read of the key (the capture's two other GetItems read its user's erasure fence, in the memories table)
    assert calls[f"GetItem {services.settings.keys_table}"] == 1
    # and the MCP function answers too
    assert functions["mcp"].handler(event("mcp_initialize.json"), Context())["statusCode"] == 200


def mcp_request(method: str, params: dict[str, Any], path: str = "/mcp") -> dict[str, Any]:
    request = event("mcp_tools_list.json")
    request["rawPath"] = request["requestContext"]["http"]["path"] = path
    request["body"] = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    request["headers"]["content-length"] = str(len(request["body"]))
    return request


def test_the_snapshot_holds_every_mcp_profile_server(functions, hooks, monkeypatch) -> None:
    """Init builds no profile server (a cold start without SnapStart builds one on its path's first
    request); the before-snapshot hook builds them all, so a restored instance builds none, and
    their tools reach the services rebuilt after the restore."""
    from mnemo import bootstrap
    from mnemo.surfaces.profiles import PROFILES

    built: Counter[str] = Counter()

    def counted(name: str, build: Any) -> Any:
        def build_counted(services: Any) -> Any:
            built[name] += 1
            return build(services)

        return build_counted

    for name, build in list(PROFILES.items()):
        monkeypatch.setitem(PROFILES, name, counted(name, build))
    before, after = hooks
    run(before, reverse=True)
    assert built == Counter(dict.fromkeys(PROFILES, 1))

    run(after)
    mcp = functions["mcp"].handler
    for name in PROFILES:
        listed = mcp(mcp_request("tools/list", {}, f"/mcp/{name}" if name else "/mcp"), Context())
        assert listed["statusCode"] == 200 and json.loads(listed["body"])["result"]["tools"], listed["body"]
    calls: Counter[str] = Counter()
    bootstrap.container()._dynamodb.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
    captured = mcp(mcp_request("tools/call", {"name": "capture_thought", "arguments": {"raw": "after the restore"}}), Context())
    assert captured["statusCode"] == 200 and not json.loads(captured["body"])["result"]["isError"], captured["body"]
    assert calls["PutItem"] > 0  # the memory was written through the client built after the restore
    assert built == Counter(dict.fromkeys(PROFILES, 1))  # nothing rebuilt


def test_without_the_runtime_hook_api_nothing_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from mnemo.surfaces import snapstart

    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)  # the local stack: no such module
    assert snapstart.register(lambda: None, lambda: None) is False  # type: ignore[arg-type,return-value]
