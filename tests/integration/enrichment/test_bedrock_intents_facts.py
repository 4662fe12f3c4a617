"""`record_fact extract_intent=true` on the facts profile with the Bedrock annotator (botocore's
Stubber on a real client, recorded model outputs) end to end, through a real MCP client: the edge
carries the model's intent_meta and counts one credit; when Bedrock fails its three attempts the
edge is still stored, the failure is on it, and nothing is counted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.stub import Stubber

from mcp import Client
from mnemo.domain.tenancy import Counter
from tests.conftest import TEST_KEY, FixedClock
from tests.integration.surfaces.test_profile_facts import facts
from tests.unit.test_bedrock import _client
from tests.unit.test_bedrock_intents import _answer


@pytest.fixture
def stubbed(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Stubber]]:
    """A container whose extractor setting is `bedrock`, its Bedrock client stubbed."""
    from mnemo import bootstrap
    from mnemo.adapters.bedrock import base as bedrock
    from mnemo.settings import MnemoSettings

    client = _client()
    monkeypatch.setattr(bedrock, "bedrock_client", lambda: client)  # ConverseAdapter.from_settings reads it
    monkeypatch.setattr(bedrock.time, "sleep", lambda _: None)  # the backoff, not the count
    bootstrap.reset()
    container = bootstrap.install(bootstrap.Container(MnemoSettings(extractor="bedrock"), clock=FixedClock()))
    container.keys.ensure("local", "test", ["admin"], TEST_KEY)
    with Stubber(client) as stubber:
        yield container, stubber
    bootstrap.reset()


def test_record_fact_annotates_with_bedrock_and_counts_one_credit(stubbed: tuple[Any, Stubber]) -> None:
    from mnemo.surfaces.app import create_app

    container, stubber = stubbed
    stubber.add_response("converse", _answer("preference", 0.9, "prefers"))
    for _ in range(3):
        stubber.add_client_error("converse", "ThrottlingException", "Rate exceeded", 429)

    async def calls(client: Client) -> Any:
        triple = {"subject": "Alice", "predicate": "prefers", "object": "green tea", "extract_intent": True}
        labelled = await client.call_tool("record_fact", triple)
        failed = await client.call_tool("record_fact", {**triple, "object": "black coffee"})
        return labelled.structured_content, failed.structured_content

    labelled, failed = facts(create_app(container), calls)
    stubber.assert_no_pending_responses()  # one call for the first edge, exactly three for the second
    assert labelled["edge"]["intent_meta"] == {"label": "preference", "confidence": 0.9, "evidence": "prefers",
                                               "annotator": "bedrock"}
    # The second edge is stored and active (it retired green tea), its intent_meta says why it has no label
    edge = failed["edge"]
    assert edge["status"] == "active" and failed["invalidated"] == [labelled["edge"]["uuid"]]
    assert edge["intent_meta"]["annotator"] == "bedrock" and "label" not in edge["intent_meta"]
    assert edge["intent_meta"]["error"].startswith("LLM intent annotation failed after 3 attempts: ThrottlingException")
    assert container.fact_store.get("local", edge["uuid"]).intent_meta == edge["intent_meta"]
    # One credit: the labelled edge counted, the failed one not
    assert container.meter.usage("local").used[Counter.INTENTS] == 1
