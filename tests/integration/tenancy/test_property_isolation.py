"""Property-based isolation (issue 16): random sequences of operations by two tenants and two users,
over REST and MCP, against a model of who owns what.

After every step: no read returns another tenant's (or, when a user is pinned, another user's)
memory, no write through a foreign id changes anything — and, as the positive control in the same
run, every owner still sees exactly its own open memories, with the text the model expects.
Bounded by the hypothesis `ci` profile (tests/conftest.py)."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnemo.adapters.aws import client
from mnemo.local.poller import QueuePoller
from mnemo.local.server import load_function
from tests.conftest import TEST_KEY
from tests.integration.conftest import OTHER_KEY, auth, mcp_call

TENANTS = {"local": TEST_KEY, "other": OTHER_KEY}
USERS = ["u1", "u2"]
_words = itertools.count()

capture = st.tuples(st.just("capture"), st.sampled_from(list(TENANTS)), st.sampled_from([*USERS, "default"]),
                    st.sampled_from(["rest", "mcp"]))
edit = st.tuples(st.just("edit"), st.sampled_from(list(TENANTS)), st.integers(0, 50), st.sampled_from(["rest", "mcp"]))
archive = st.tuples(st.just("archive"), st.sampled_from(list(TENANTS)), st.integers(0, 50), st.sampled_from(["rest", "mcp"]))
read = st.tuples(st.just("get"), st.sampled_from(list(TENANTS)), st.integers(0, 50), st.just("rest"))
search = st.tuples(st.just("search"), st.sampled_from(list(TENANTS)), st.integers(0, 50), st.sampled_from(["rest", "mcp"]))
# A key of tenant "local" bound to u1 or u2 (issue 26): it names a user (or none) and a target memory.
bound = st.tuples(st.just("bound"), st.sampled_from(USERS), st.integers(0, 50),
                  st.sampled_from(["capture", "get", "list", "search", "r3 search"]), st.sampled_from([None, *USERS, "default"]))
OPERATIONS = st.lists(st.one_of(capture, edit, archive, read, search, bound), min_size=3, max_size=12)
BOUND_TO = 'user_id: this key is bound to user "{}"'


@dataclass
class Owned:
    id: str
    tenant: str
    user: str
    text: str
    open: bool = True


@dataclass
class World:
    memories: list[Owned] = field(default_factory=list)
    stats: Counter = field(default_factory=Counter)

    def pick(self, index: int) -> Owned | None:
        return self.memories[index % len(self.memories)] if self.memories else None


def marker() -> str:
    return f"zq{next(_words):05d}x"


@pytest.fixture
def worker(http, aws) -> QueuePoller:
    return QueuePoller(client("sqs"), aws["EnrichmentQueue"], load_function("worker").handler, wait_seconds=0)


def visible(http, tenant: str, user: str) -> dict[str, str]:
    page = http.get("/v1/memories", headers=auth(TENANTS[tenant]), params={"user_id": user, "limit": 100})
    assert page.status_code == 200, page.text
    return {m["id"]: m["content"] for m in page.json()["results"]}


def check_world(http, world: World) -> None:
    """No leak, and (positive control) every owner sees exactly its own open memories."""
    for tenant, user in itertools.product(TENANTS, [*USERS, "default"]):
        seen = visible(http, tenant, user)
        expected = {m.id: m.text for m in world.memories if (m.tenant, m.user, m.open) == (tenant, user, True)}
        assert seen == expected, (tenant, user)
        world.stats["requests"] += 1
        world.stats["owner checks"] += bool(expected)


def bound_step(http, world: World, worker: QueuePoller, keys: dict[str, str], operation: tuple) -> None:
    """A user-bound key: naming no user or its own acts for it; naming another user is refused
    (REST 403 bound_to_user, MCP isError); another user's memory by id is not found."""
    _, actor, index, action, named = operation
    key, refused = keys[actor], named not in (None, actor)
    world.stats["bound-key requests"] += 1
    world.stats["bound-key refusals (another user named)"] += refused
    user = {} if named is None else {"user_id": named}
    if action == "capture":
        text = f"note {marker()} by {actor}'s key"
        response = http.post("/v1/memories", headers=auth(key), json={"content": text, "as_user": True, **user})
        if refused:
            assert response.status_code == 403 and response.json()["error"]["message"] == BOUND_TO.format(actor)
            return  # and nothing is stored: check_world compares every user's memories with the model
        assert response.status_code == 201 and response.json()["user_id"] == actor, response.text
        world.memories.append(Owned(response.json()["id"], "local", actor, text))
        return
    target = world.pick(index)
    if action == "get":
        if target is not None:
            response = http.get(f"/v1/memories/{target.id}", headers=auth(key))
            owner = (target.tenant, target.user) == ("local", actor)
            assert response.status_code == (200 if owner else 404), response.text
        return
    if action == "list":
        response = http.get("/v1/memories", headers=auth(key), params={**user, "author": "all", "limit": 100})
        if refused:
            assert response.status_code == 403, response.text
            return
        theirs = {m.id for m in world.memories if (m.tenant, m.user, m.open) == ("local", actor, True)}
        assert response.status_code == 200 and response.json()["scope"]["user_id"] == actor
        assert {m["id"] for m in response.json()["results"]} == theirs  # exactly its own (positive control)
        return
    if target is None:
        return
    while worker.poll_once():
        pass
    word = target.text.split()[1]
    if action == "search":
        response = http.post("/v1/memories/search", headers=auth(key), json={"query": word, "author": "all", "top_k": 100, **user})
        if refused:
            assert response.status_code == 403, response.text
            return
        found = {m["id"] for m in response.json()["results"]}
    else:
        result = mcp_call(http, "search_memory", {"query": word, "limit": 100, "prefer_cache": False, **user}, key=key,
                          path="/mcp/r3")
        if refused:
            assert result["isError"] and result["content"][0]["text"] == BOUND_TO.format(actor)
            return
        assert not result.get("isError"), result
        found = {m["id"] for m in result["structuredContent"]["results"]}
    outside = {m.id for m in world.memories if (m.tenant, m.user) != ("local", actor)}
    assert not found & outside, "a bound key's search returned another user's memory"
    if (target.tenant, target.user, target.open) == ("local", actor, True):
        assert target.id in found, "positive control: the bound key finds its own memory"
        world.stats["bound-key searches that found their own memory"] += 1


def step(http, world: World, worker: QueuePoller, operation: tuple, keys: dict[str, str]) -> None:
    if operation[0] == "bound":
        bound_step(http, world, worker, keys, operation)
        return
    kind, tenant, arg, surface = operation
    key = TENANTS[tenant]
    world.stats["requests"] += 1
    if kind == "capture":
        text = f"note {marker()} for {arg}"
        if surface == "rest":
            response = http.post("/v1/memories", headers=auth(key), json={"content": text, "user_id": arg, "as_user": True})
            assert response.status_code == 201, response.text
            memory_id = response.json()["id"]
        else:  # the Eigen profile writes to the default user
            result = mcp_call(http, "capture_thought", {"raw": text, "as_user": True}, key=key)
            assert not result["isError"], result
            memory_id, arg = result["structuredContent"]["thought"]["id"], "default"
        world.memories.append(Owned(memory_id, tenant, arg, text))
        return
    target = world.pick(arg)
    if target is None:
        return
    mine = target.tenant == tenant
    world.stats["own" if mine else "cross-tenant attempts"] += 1
    if kind == "get":
        response = http.get(f"/v1/memories/{target.id}", headers=auth(key))
        assert response.status_code == (200 if mine else 404)
        if mine:
            assert response.json()["content"] == target.text
    elif kind == "edit":
        text = f"edited {marker()}"
        if surface == "rest":
            response = http.patch(f"/v1/memories/{target.id}", headers=auth(key), json={"content": text})
            ok = response.status_code == 200
            assert response.status_code == (200 if mine else 404), response.text
        else:
            result = mcp_call(http, "edit_thought", {"thought_id": target.id, "raw_text": text}, key=key)
            ok = not result["isError"]
            assert ok == mine, result
        if ok:
            target.text = text
    elif kind == "archive":
        if surface == "rest":
            response = http.delete(f"/v1/memories/{target.id}", headers=auth(key))
            assert response.status_code == (200 if mine else 404), response.text
        else:
            result = mcp_call(http, "delete_thought", {"thought_id": target.id}, key=key)
            assert (not result["isError"]) == mine, result
        if mine:
            target.open = False
    elif kind == "search":
        while worker.poll_once():  # enrich what is queued, so search can find it (else isolation is vacuous)
            pass
        word = target.text.split()[1]
        if surface == "rest":
            hits = http.post("/v1/memories/search", headers=auth(key), json={"query": word, "user_id": target.user,
                                                                              "author": "all", "top_k": 100})
            assert hits.status_code == 200, hits.text
            found = {m["id"] for m in hits.json()["results"]}
        else:
            result = mcp_call(http, "retrieve_thoughts", {"query": word, "author": "all", "top_k": 100}, key=key)
            assert not result["isError"], result
            found = {t["id"] for t in result["structuredContent"]["results"]}
        foreign = {m.id for m in world.memories if m.tenant != tenant}
        assert not found & foreign, "search returned another tenant's memory"
        searched_user = target.user if surface == "rest" else "default"
        if mine and target.open and target.user == searched_user:
            assert target.id in found, "positive control: the owner's search finds its own memory"
            world.stats["searches that found their own memory"] += 1


def test_random_operations_never_cross_tenants_or_users(http, worker) -> None:
    totals: Counter = Counter()
    keys = {}
    for user in USERS:
        created = http.post("/v1/keys", headers=auth(), json={"name": user, "user_id": user,
                                                               "scopes": ["memory:read", "memory:write"]})
        assert created.status_code == 201, created.text
        keys[user] = created.json()["secret"]

    @given(operations=OPERATIONS)
    def run(operations: list[tuple]) -> None:
        world = World()
        for tenant in TENANTS:  # this example's start: what earlier examples left is archived, out of view
            for user in [*USERS, "default"]:
                for memory_id in visible(http, tenant, user):
                    http.delete(f"/v1/memories/{memory_id}", headers=auth(TENANTS[tenant]))
        for operation in operations:
            step(http, world, worker, operation, keys)
        check_world(http, world)
        totals.update(world.stats)

    run()
    print(f"\nproperty isolation: {dict(totals)}")
    # The run exercised both sides: foreign ids were tried, and owners found their own data.
    assert totals["cross-tenant attempts"] > 0 and totals["owner checks"] > 0
    assert totals["searches that found their own memory"] > 0
    assert totals["bound-key refusals (another user named)"] > 0 and totals["bound-key searches that found their own memory"] > 0
