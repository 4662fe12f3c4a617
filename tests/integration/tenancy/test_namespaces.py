"""Namespaces through the service, the DynamoDB browse indexes and the search index (moto + the
real worker): every filter returns exactly its memories, each negative paired with its positive."""

from __future__ import annotations

import pytest

from mnemo.adapters.aws import client
from mnemo.domain.commands import CaptureCommand, RetrieveCommand
from mnemo.domain.namespace import NamespaceFilter
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function

# (name, user, agent, group): the same words in every one, so only the namespace tells them apart
PLACES = [
    ("alice-claude-team", "alice", "claude", "team"),
    ("alice-claude", "alice", "claude", "default"),
    ("alice-cursor-team", "alice", "cursor", "team"),
    ("bob-claude-team", "bob", "claude", "team"),
]


@pytest.fixture
def world(container, principal, aws):
    ids = {}
    for name, user, agent, group in PLACES:
        command = CaptureCommand(raw=f"release checklist {name}", as_user=True, user_id=user, agent_id=agent,
                                 group_id=group)
        ids[container.memories.capture(principal, command).id] = name
    poller = QueuePoller(client("sqs"), aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)
    while poller.poll_once():
        pass
    return ids


def names(ids: dict[str, str], memories) -> set[str]:
    return {ids[m.id] for m in memories}


# (the levels a read pins, what it must return): one world, every combination the surfaces use
CASES = [
    ({"user_id": "alice"}, {"alice-claude-team", "alice-claude", "alice-cursor-team"}),
    ({"user_id": "alice", "agent_id": "claude"}, {"alice-claude-team", "alice-claude"}),
    ({"user_id": "alice", "group_id": "team"}, {"alice-claude-team", "alice-cursor-team"}),
    ({"user_id": "alice", "agent_id": "claude", "group_id": "team"}, {"alice-claude-team"}),
    ({"user_id": None}, {name for name, *_ in PLACES}),
    ({"user_id": None, "agent_id": "claude"}, {"alice-claude-team", "alice-claude", "bob-claude-team"}),
    ({"user_id": None, "group_id": "team"}, {"alice-claude-team", "alice-cursor-team", "bob-claude-team"}),
    ({"user_id": "bob"}, {"bob-claude-team"}),
    ({"user_id": "carol"}, set()),
]


def test_browse_and_search_return_exactly_the_filtered_namespace(container, principal, world) -> None:
    for levels, expected in CASES:
        browse = container.memories.browse(principal, RetrieveCommand(**levels, top_k=100))
        search = container.memories.search(principal, RetrieveCommand(query="release checklist", **levels, top_k=100))
        assert names(world, browse.items) == expected, f"browse {levels}"
        assert names(world, [hit.memory for hit in search]) == expected, f"search {levels}"


def test_the_effective_scope_is_the_keys_tenant_and_the_pinned_levels(container, principal) -> None:
    scope = container.memories.scope(principal, RetrieveCommand(user_id=None, group_id="team"))
    assert scope == NamespaceFilter(tenant="local", user_id=None, agent_id=None, group_id="team")
    assert scope.levels() == {"tenant": "local", "group_id": "team"}


def test_a_filtered_browse_pages_through_everything_exactly_once(container, principal, aws, monkeypatch) -> None:
    # Given 7 memories of agent "claude" among 20 of one user, and a read bound of 5 index items a
    # page (the shipped bound is 200), browsing claude's page by page returns each of the 7 once.
    from mnemo.adapters.dynamodb import store as dynamodb_store

    monkeypatch.setattr(dynamodb_store, "_FILTERED_READ_CAP", 5)
    claude = {container.memories.capture(principal, CaptureCommand(
        raw=f"note {i}", as_user=True, user_id="dora", agent_id="claude" if i % 3 == 0 else "cursor",
        group_id="g")).id for i in range(20)}
    claude = {m for m in claude if container.store.get("local", m).agent_id == "claude"}
    seen: list[str] = []
    command = RetrieveCommand(user_id=None, agent_id="claude", top_k=3)
    for _ in range(20):
        page = container.memories.browse(principal, command)
        seen += [m.id for m in page.items]
        if page.next_cursor is None:
            break
        command = command.model_copy(update={"cursor_created_at": page.next_cursor.cursor_created_at,
                                             "cursor_id": page.next_cursor.cursor_id})
    assert sorted(seen) == sorted(claude) and len(claude) == 7


def test_rest_writes_and_reads_agent_and_group_namespaces_and_echoes_the_scope(http, container, aws) -> None:
    from tests.integration.conftest import auth

    def create(content: str, **namespace: str) -> str:
        response = http.post("/v1/memories", headers=auth(), json={"content": content, "as_user": True, **namespace})
        assert response.status_code == 201, response.text
        assert {k: response.json()[k] for k in namespace} == namespace  # the write echoes where it went
        return response.json()["id"]

    team = create("deploy runbook for the team", user_id="ana", agent_id="claude", group_id="team")
    solo = create("deploy runbook of my own", user_id="ana", agent_id="cursor")
    other = create("deploy runbook elsewhere", user_id="ben", agent_id="claude", group_id="team")
    poller = QueuePoller(client("sqs"), aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)
    while poller.poll_once():
        pass

    def search(**body: str) -> tuple[set[str], dict[str, str]]:
        response = http.post("/v1/memories/search", headers=auth(), json={"query": "deploy runbook", **body})
        assert response.status_code == 200, response.text
        return {m["id"] for m in response.json()["results"]}, response.json()["scope"]

    def browse(**params: str) -> tuple[set[str], dict[str, str]]:
        response = http.get("/v1/memories", headers=auth(), params=params)
        assert response.status_code == 200, response.text
        return {m["id"] for m in response.json()["results"]}, response.json()["scope"]

    for read in (search, browse):
        assert read(user_id="ana") == ({team, solo}, {"tenant": "local", "user_id": "ana", "author": "all"})
        assert read(user_id="ana", agent_id="claude")[0] == {team}
        assert read(user_id="ana", group_id="team") == (
            {team}, {"tenant": "local", "user_id": "ana", "group_id": "team", "author": "all"})
        assert read(user_id="*", agent_id="claude") == (
            {team, other}, {"tenant": "local", "agent_id": "claude", "author": "all"})
        assert read(user_id="ana", agent_id="nobody")[0] == set()


def test_reading_every_user_of_the_tenant_needs_an_admin_key(http, container) -> None:
    from tests.integration.conftest import auth

    reader = container.keys.create("local", "reader", ["memory:read"]).secret
    assert http.get("/v1/memories", headers=auth(), params={"user_id": "*"}).status_code == 200  # admin: allowed
    refused = http.get("/v1/memories", headers=auth(reader), params={"user_id": "*"})
    assert refused.status_code == 403 and "admin" in refused.json()["error"]["message"]
    assert http.get("/v1/memories", headers=auth(reader)).status_code == 200  # its own default user: allowed
    refused = http.post("/v1/memories/search", headers=auth(reader), json={"query": "x", "user_id": "*"})
    assert refused.status_code == 403
