"""The local reranker (`MNEMO_RERANKER=minilm`, adapters/local/late_interaction.py) through
`POST /v1/memories/search` on the local MiniLM and the real worker: in mode=full it lifts the memory
whose aside answers the question above one that only shares its topic, keeps the calibrated scores,
orders by half fused score, half relevance; mode=fast never calls it; and only the caller's own
memories reach it (another user's copy of the same words is neither scored nor returned)."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.adapters.local.late_interaction import (
    LATE_INTERACTION_CALIBRATION,
    LATE_INTERACTION_SHARE,
    LateInteractionReranker,
    _query_rows,
    max_sim,
)
from mnemo.domain.models import Memory
from mnemo.domain.scoring import calibrate
from mnemo.services.enrichment.pipeline import REPLY_LEAD_WORDS, previous_words
from tests.conftest import TEST_KEY
from tests.integration.conftest import OTHER_KEY, auth
from tests.integration.surfaces.test_profile_thrindex import enrich

QUERY = "How much money did I raise at the charity bake sale?"
ASIDE = ("I spent the weekend repainting the kitchen cabinets a pale green and fixing the hinges that squeaked. "
         "By the way, I raised $500 at the charity bake sale.")
TOPIC = "Charity bake sale on Saturday at the church hall."
OTHERS = ["My sister baked a lemon cake for the school fair.", "I gave money to the animal shelter charity last year."]


@pytest.fixture(autouse=True)
def _minilm_reranker(aws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_RERANKER", "minilm")  # before `container` reads the settings


def capture(http, user: str, *texts: str, key: str = TEST_KEY) -> dict[str, str]:
    ids = {}
    for text in texts:
        created = http.post("/v1/memories", headers=auth(key), json={"content": text, "user_id": user, "as_user": True})
        assert created.status_code == 201, created.text
        ids[text] = created.json()["id"]
    return ids


def search(http, user: str, **body: Any) -> list[dict[str, Any]]:
    response = http.post("/v1/memories/search", headers=auth(),
                         json={"query": QUERY, "user_id": user, "explain": True, "top_k": 4} | body)
    assert response.status_code == 200, response.text
    return response.json()["results"]


class Recording:
    """The configured reranker, recording how many texts each call scores."""

    def __init__(self, inner: LateInteractionReranker) -> None:
        self.inner, self.share, self.calibration = inner, inner.share, inner.calibration
        self.sizes: list[int] = []
        self.asked: list[list[str]] = []

    def prescore(self, query: str, tenant: str, memory_ids: list[str]) -> Any:
        self.asked.append(list(memory_ids))
        return self.inner.prescore(query, tenant, memory_ids)

    def rerank(self, query: str, memories: list[Memory]) -> list[float]:
        self.sizes.append(len(memories))
        return self.inner.rerank(query, memories)


def test_full_mode_lifts_the_memory_whose_aside_answers_and_only_the_callers_memories_reach_it(
    http, aws, container
) -> None:
    dana = capture(http, "dana", ASIDE, TOPIC, *OTHERS)
    eli = capture(http, "eli", ASIDE)  # the same words in another user's namespace
    enrich(aws)
    assert isinstance(container.reranker, LateInteractionReranker)
    assert container.reranker._encoder is container.embedder  # one MiniLM in memory, not two
    recording = Recording(container.reranker)
    container.memories._reranker = recording

    fast = search(http, "dana", mode="fast")  # the fused order: the topic's words first
    assert [r["id"] for r in fast[:2]] == [dana[TOPIC], dana[ASIDE]]
    assert all("rerank" not in r["explain"] for r in fast) and recording.sizes == recording.asked == []

    full = search(http, "dana")
    assert [r["id"] for r in full[:2]] == [dana[ASIDE], dana[TOPIC]]  # the answer first
    relevance = {r["id"]: r["explain"]["rerank"] for r in full}
    assert relevance[dana[ASIDE]] > relevance[dana[TOPIC]] + 0.1
    share = LATE_INTERACTION_SHARE
    fused = [r["explain"]["fused"] for r in full]
    keys = [(1 - share) * f + share * r["explain"]["rerank"] for f, r in zip(fused, full, strict=True)]
    assert keys == sorted(keys, reverse=True)  # the fused score and the relevance, blended
    # and the blend, through the reranker's calibration, is the score: it orders and thresholds
    assert [r["score"] for r in full] == pytest.approx([calibrate(k, LATE_INTERACTION_CALIBRATION) for k in keys], abs=1e-5)
    assert fused[1] > fused[0]  # the topic's fused score was the higher one
    assert recording.sizes == [4]  # dana's four memories, not eli's copy, ...
    assert sorted(recording.asked[0]) == sorted(dana.values())  # ... also before the store read
    assert eli[ASIDE] not in relevance

    container.memories._reranker = None  # the same search without the stage: same hits, same scores
    plain = search(http, "dana")
    assert sorted((r["id"], r["score"]) for r in plain) == sorted(zip((r["id"] for r in full), fused, strict=True))
    assert [r["id"] for r in plain[:2]] == [dana[TOPIC], dana[ASIDE]]
    container.memories._reranker = recording
    assert [r["id"] for r in search(http, "eli")] == [eli[ASIDE]]  # control: eli finds his own copy


class Encodes:
    """The reranker's model, recording every text it is asked to encode."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.texts = inner, []

    def token_states(self, texts: list[str]) -> Any:
        self.texts.append(list(texts))
        return self.inner.token_states(texts)


def test_enrichment_keeps_each_memorys_token_states_so_a_search_encodes_only_the_query_until_they_go(
    http, aws, container, principal
) -> None:
    dana = capture(http, "dana", ASIDE, TOPIC, *OTHERS)
    model = container.embedder._load()
    hidden, runs = model.hidden, []
    model.hidden = lambda ids, mask: runs.append(len(ids)) or hidden(ids, mask)  # a pass for token states alone
    enrich(aws)
    assert runs == []  # the states came from the pass that gave each memory its vector
    index, reranker = container.index(), container.reranker
    assert reranker._stored is index  # the local index holds the states the reranker reads
    held = index.token_states_of(principal.tenant, list(dana.values()))
    assert {held[mid].text for mid in held} == set(dana) and len(held) == 4  # every enriched memory's, of its text
    encodes = reranker._encoder = Encodes(reranker._encoder)

    first = search(http, "dana")
    assert [r["id"] for r in first[:2]] == [dana[ASIDE], dana[TOPIC]]  # the answer first, from the stored states
    assert encodes.texts == [[QUERY]] and runs == []  # the query's states came from its embedding's pass

    # An edit: until enrichment reindexes, the stored states are of the old text, so the new one is encoded.
    edited = "Charity bake sale moved to Sunday at the church hall."
    assert http.patch(f"/v1/memories/{dana[TOPIC]}", headers=auth(), json={"content": edited}).status_code == 200
    encodes.texts.clear()
    search(http, "dana")
    assert encodes.texts == [[QUERY], [edited]]  # the query before the store read, the new text after it
    enrich(aws)
    assert index.token_states_of(principal.tenant, [dana[TOPIC]])[dana[TOPIC]].text == edited
    encodes.texts.clear()
    search(http, "dana")
    assert encodes.texts == [[QUERY]]

    # Erasure drops them with the document; another tenant never reads them, its own copy it does.
    theirs = capture(http, "dana", ASIDE, key=OTHER_KEY)[ASIDE]
    enrich(aws)
    assert index.token_states_of("other", [dana[ASIDE]]) == {}
    assert index.token_states_of(principal.tenant, [dana[ASIDE]])  # control: the owner's lookup finds them
    assert index.token_states_of("other", [theirs]).keys() == {theirs}  # control: the other tenant finds its own
    erased = http.delete(f"/v1/memories/{dana[ASIDE]}", headers=auth(), params={"hard": "true"})
    assert erased.status_code == 200, erased.text
    assert index.token_states_of(principal.tenant, [dana[ASIDE]]) == {}
    assert index.token_states_of("other", [theirs]).keys() == {theirs}  # the same words elsewhere stay
    assert dana[ASIDE] not in [r["id"] for r in search(http, "dana")]


def test_only_a_search_that_reranks_keeps_its_query_pass_token_states(http, aws, container) -> None:
    """The query's pass keeps its token states for the reranker in mode=full, and one model pass gives
    the vector and the states; mode=fast never reranks, so its pass keeps none (keeping them cost a fast
    search a tenth of its time: bench/README.md "Issue 28, round 14"), and finds the same answer."""
    capture(http, "dana", ASIDE, TOPIC, *OTHERS)
    enrich(aws)
    model = container.embedder._load()
    passes: list[str] = []
    for name in ("forward", "both", "hidden"):
        run = getattr(model, name)
        setattr(model, name, lambda ids, mask, run=run, name=name: passes.append(name) or run(ids, mask))

    full = search(http, "dana")
    assert passes == ["both"] and "rerank" in full[0]["explain"]  # one pass: the vector and the states it keeps
    passes.clear()
    fast = search(http, "dana", mode="fast")
    assert passes == ["forward"] and "rerank" not in fast[0]["explain"]  # the vector alone
    assert {r["id"] for r in fast} == {r["id"] for r in full}  # the same memories, each mode's order


QUESTION = "Melanie: So tell me, how often do you go running these days?"  # 12 words: the lead, its last 10
REPLY = "Caroline: Three times a week; it keeps me on track."
SAME_SPEAKER = "Caroline: I adopted a puppy last month."


def test_a_reply_is_read_after_the_words_it_answers_until_they_are_erased(http, aws, container, principal) -> None:
    """A memory another speaker's message precedes (speaker labels, `text.answers`) keeps its token states
    read after that message's last words: a reply's own words rarely name what it is about. The same
    speaker's next message does not (control). Erasing the question takes its words out of the reply's
    states too, not just out of its document's context."""
    ids = capture(http, "rosa", QUESTION, REPLY, SAME_SPEAKER)
    enrich(aws)
    index, encoder = container.index(), container.reranker._encoder
    held = index.token_states_of(principal.tenant, list(ids.values()))
    lead = previous_words(QUESTION, REPLY_LEAD_WORDS)
    assert held[ids[REPLY]].lead == lead and held[ids[REPLY]].text == REPLY
    assert held[ids[SAME_SPEAKER]].lead == "" and held[ids[QUESTION]].lead == ""  # not replies
    alone, read_after = encoder.token_states([REPLY, f"{lead} {REPLY}"])
    assert len(held[ids[REPLY]].codes) == len(read_after.tokens) > len(alone.tokens)

    asked = "How often does Caroline go running?"
    rows = _query_rows(encoder.token_states([asked])[0])
    found = {r["id"]: r for r in search(http, "rosa", query=asked)}
    assert found[ids[REPLY]]["explain"]["rerank"] > max_sim(rows, alone.vectors) + 0.05  # the lead counts

    erased = http.delete(f"/v1/memories/{ids[QUESTION]}", headers=auth(), params={"hard": "true"})
    assert erased.status_code == 200, erased.text
    enrich(aws)  # the refresh the erasure queued for its neighbours
    after = index.token_states_of(principal.tenant, [ids[REPLY]])[ids[REPLY]]
    assert after.lead == "" and len(after.codes) == len(alone.tokens)
    found = {r["id"]: r for r in search(http, "rosa", query=asked)}
    assert found[ids[REPLY]]["explain"]["rerank"] == pytest.approx(max_sim(rows, alone.vectors), abs=0.02)


@pytest.mark.parametrize("erase", [True, False])
def test_a_reply_whose_question_is_erased_while_it_is_enriched_keeps_none_of_its_words(
        erase: bool, http, aws, container, principal, monkeypatch) -> None:
    """The question is erased after the reply's enrichment planned its links and before they land (as
    tests/integration/erasure/test_erasure_links.py races it): the reply's states are read again
    without the question's words. Without the erasure they keep them (control)."""
    question = capture(http, "rosa", QUESTION)[QUESTION]
    enrich(aws)
    reply = capture(http, "rosa", REPLY)[REPLY]
    graph, done = container.enrichment._graph, []
    apply = graph.apply

    def erase_before_the_links_land(changes: Any) -> Any:
        if erase and not done and question in [link.other_id for change in changes for link in change.links]:
            done.append(container.erasure.erase_memory(principal, question))
        return apply(changes)

    monkeypatch.setattr(graph, "apply", erase_before_the_links_land)
    enrich(aws)
    held = container.index().token_states_of(principal.tenant, [reply])[reply]
    assert held.text == REPLY
    if not erase:
        assert held.lead == previous_words(QUESTION, REPLY_LEAD_WORDS)
        return
    assert done and done[0].memory_ids == [question]
    alone = container.reranker._encoder.token_states([REPLY])[0]
    assert held.lead == "" and len(held.codes) == len(alone.tokens)
