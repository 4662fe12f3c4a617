"""The embedded default reranks: with `MNEMO_RERANKER` unset, a mode=full REST search on the local
stack orders by late interaction (issue 28, round 10); `off` keeps the fused order (the control, same
memories, same request)."""

from __future__ import annotations

import pytest

from mnemo.adapters.local.late_interaction import LateInteractionReranker
from tests.integration.memories.test_search_late_interaction import ASIDE, OTHERS, TOPIC, capture, search
from tests.integration.surfaces.test_profile_thrindex import enrich


@pytest.fixture(params=["unset", "off"])
def setting(request, aws, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("MNEMO_RERANKER", raising=False)  # before `container` reads the settings
    if request.param == "off":
        monkeypatch.setenv("MNEMO_RERANKER", "off")
    return str(request.param)


def test_the_default_reranks_by_late_interaction_and_off_keeps_the_fused_order(setting, http, aws, container) -> None:
    dana = capture(http, "dana", ASIDE, TOPIC, *OTHERS)
    enrich(aws)
    full = search(http, "dana")
    if setting == "unset":
        assert isinstance(container.reranker, LateInteractionReranker)
        assert [r["id"] for r in full[:2]] == [dana[ASIDE], dana[TOPIC]]  # the aside that answers first
        assert all("rerank" in r["explain"] for r in full)
    else:
        assert [r["id"] for r in full[:2]] == [dana[TOPIC], dana[ASIDE]]  # the topic's words first
        assert all("rerank" not in r["explain"] for r in full)
