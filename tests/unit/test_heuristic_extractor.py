"""The heuristic (no-LLM) extractor: categories, entities and facts on real-looking memories, plus properties."""

from __future__ import annotations

import random

import pytest

from mnemo.adapters.local.heuristic_extractor import MAX_ENTITIES, MAX_FACTS, HeuristicExtractor
from mnemo.domain.extraction import CATEGORIES, Extraction

X = HeuristicExtractor()

# (text, category, entities that must appear as (name, kind), facts that must appear as (subject, predicate, object))
CASES: list[tuple[str, str, list[tuple[str, str]], list[tuple[str, str, str]]]] = [
    # chat turns (LoCoMo style); the "Name:" prefix is the speaker
    ("Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", "event",
     [("Caroline", "person"), ("LGBTQ", "other"), ("yesterday", "date")], []),
    ("Melanie: I painted a sunrise over the lake last year, and I've been running with my kids on Sundays.", "event",
     [("Melanie", "person"), ("last year", "date"), ("Sundays", "date")], []),
    ("Caroline: My mom moved to Sweden in 2015.", "event",
     [("Caroline", "person"), ("Sweden", "place"), ("2015", "date")], [("Caroline's mom", "lives in", "Sweden")]),
    ("Melanie's daughter is named Sarah", "person",
     [("Melanie", "person"), ("Sarah", "person")], [("Melanie", "daughter", "Sarah")]),
    ("Sarah is my cousin and she lives in Lisbon.", "person",
     [("Sarah", "person"), ("Lisbon", "place")], [("user", "cousin", "Sarah")]),
    ("John Smith works at Acme Corp as a data engineer.", "person",
     [("John Smith", "person"), ("Acme Corp", "organization")], [("John Smith", "works at", "Acme Corp")]),
    ("My brother lives in San Francisco and works at Stripe.", "person",
     [("San Francisco", "place"), ("Stripe", "organization")], [("user's brother", "lives in", "San Francisco")]),
    # agent notes
    ("Remember: team standups are Tuesdays at 10am.", "event",
     [("Tuesdays", "date"), ("10am", "date")], []),  # says when, not what standups are (issue 54): no `are` fact
    ("We decided to use DynamoDB on-demand for the memories table.", "decision", [("DynamoDB", "product")], []),
    ("Decision: we'll go with OpenSearch Serverless for vector search.", "decision",
     [("OpenSearch Serverless", "product")], []),
    ("I prefer dark roast coffee.", "preference", [], [("user", "prefers", "dark roast coffee")]),
    ("My favorite band is Radiohead.", "preference", [], [("user", "favorite band", "Radiohead")]),
    ("I don't like cilantro.", "preference", [], [("user", "likes", "cilantro")]),
    ("TODO: renew passport before 12 March 2027", "task", [("12 March 2027", "date")], []),
    ("Remind me to call Dr. Patel about the MRI results on Friday.", "task",
     [("Dr. Patel", "person"), ("Friday", "date")], []),
    ("Need to submit the expense report by 2025-03-31, the deadline is strict.", "task", [("2025-03-31", "date")], []),
    ("Docs at https://docs.aws.amazon.com/bedrock/latest/userguide/ for the Bedrock runtime.", "reference",
     [("Bedrock", "product")], []),
    ("See the runbook at https://wiki.example.com/oncall before paging anyone.", "reference", [], []),
    ("What if we cached embeddings in S3 instead of recomputing them?", "idea", [("S3", "product")], []),
    ("Idea: maybe we could add a weekly digest email.", "idea", [], []),
    ("Lunch with Priya at Blue Bottle on May 8 at 12:30pm.", "event",
     [("Priya", "person"), ("Blue Bottle", "place"), ("May 8", "date"), ("12:30pm", "date")], []),
    ("I upgraded to Python 3.12 and bought an iPhone 15 Pro last week.", "event",
     [("Python 3.12", "product"), ("iPhone 15 Pro", "product"), ("last week", "date")], []),
    ("Sarah graduated from Stanford University on 8 May 2023.", "event",
     [("Sarah", "person"), ("Stanford University", "organization"), ("8 May 2023", "date")], []),
    ("The meeting with ACME LLC got moved to next Thursday at 2:30pm.", "event",
     [("ACME LLC", "organization"), ("next Thursday", "date"), ("2:30pm", "date")], []),
    ("The API gateway timeout is 29 seconds.", "fact",
     [("API", "other")], [("API gateway timeout", "is", "29 seconds")]),
    ("Jordan has two cats and a golden retriever.", "fact",
     [("Jordan", "person")], [("Jordan", "has", "two cats and a golden retriever")]),
    ("Łukasz met Zoë in Kraków yesterday.", "event",
     [("Łukasz", "person"), ("Zoë", "person"), ("Kraków", "place")], []),
    # ordinary sentences (issue 10): a name that opens a sentence, organisations and places from their verbs,
    # and the triples of simple statements
    ("Alice Johnson from Acme Corp met Bob Smith in Berlin last week.", "event",
     [("Alice Johnson", "person"), ("Acme Corp", "organization"), ("Bob Smith", "person"), ("Berlin", "place"),
      ("last week", "date")], [("Alice Johnson", "knows", "Bob Smith")]),
    ("Alice works at Acme.", "person", [("Alice", "person"), ("Acme", "organization")], [("Alice", "works at", "Acme")]),
    ("Bob moved to Lisbon in May.", "fact", [("Bob", "person"), ("Lisbon", "place")], [("Bob", "lives in", "Lisbon")]),
    ("Greg relocated to Madrid.", "fact", [("Greg", "person"), ("Madrid", "place")], [("Greg", "lives in", "Madrid")]),
    ("Carol joined Globex in 2023.", "event", [("Carol", "person"), ("Globex", "organization"), ("2023", "date")],
     [("Carol", "works at", "Globex")]),
    ("Maria started at Initech last month.", "event", [("Maria", "person"), ("Initech", "organization")],
     [("Maria", "works at", "Initech")]),
    ("Erin is married to Frank.", "fact", [("Erin", "person"), ("Frank", "person")], [("Erin", "is married to", "Frank")]),
    ("Priya Patel and Tom Lee visited Kyoto.", "event",
     [("Priya Patel", "person"), ("Tom Lee", "person"), ("Kyoto", "place")],
     [("Priya Patel", "visited", "Kyoto"), ("Tom Lee", "visited", "Kyoto")]),
    ("Alice knows Bob.", "fact", [("Alice", "person"), ("Bob", "person")], [("Alice", "knows", "Bob")]),
    ("Ahmed was born in Cairo.", "person", [("Ahmed", "person"), ("Cairo", "place")], [("Ahmed", "was born in", "Cairo")]),
    ("Lena is the CEO of Umbrella Corp.", "fact", [("Lena", "person"), ("Umbrella Corp", "organization")], []),
    ("Hannah Weber, our new designer, starts on Monday.", "event", [("Hannah Weber", "person"), ("Monday", "date")], []),
    ("hmm, not sure about that", "note", [], []),
    ("Did anyone see the game?", "note", [], []),
]


@pytest.mark.parametrize(("text", "category", "entities", "facts"), CASES, ids=[c[0][:40] for c in CASES])
def test_table(text: str, category: str, entities: list[tuple[str, str]], facts: list[tuple[str, str, str]]) -> None:
    out = X.extract(text)
    assert out.category == category
    got_entities = {(e.name, e.kind) for e in out.entities}
    assert set(entities) <= got_entities, got_entities
    got_facts = {(f.subject, f.predicate, f.object) for f in out.facts}
    assert set(facts) <= got_facts, got_facts


def test_categories_all_reachable_and_valid() -> None:
    assert {c[1] for c in CASES} == set(CATEGORIES)


def test_speaker_argument_replaces_first_person() -> None:
    assert [(f.subject, f.predicate, f.object) for f in X.extract("I live in Berlin.", speaker="Caroline").facts] == [
        ("Caroline", "lives in", "Berlin")
    ]
    assert X.extract("I live in Berlin.").facts[0].subject == "user"
    # an explicit speaker wins over the chat prefix
    assert X.extract("Caroline: I live in Berlin.", speaker="Mel").facts[0].subject == "Mel"


def test_normalized_text() -> None:
    out = X.extract("  Cafe\u0301   opens\t\n at 9am  ")
    assert out.normalized_text == "Café opens at 9am"


@pytest.mark.parametrize("text", ["", "   ", "\n\t \u00a0 "])
def test_empty_input(text: str) -> None:
    out = X.extract(text)
    assert out == Extraction(normalized_text="", category="note", importance=0.0)


ODD = [
    "\u200b", "\ud800 Sarah is my sister", "🙂🙂 I love 🍕", "ﬁ ﬂ ﬃ", "Ｆｕｌｌｗｉｄｔｈ Ｔｅｘｔ", "مرحبا بالعالم",
    "日本語のテキスト", "e\u0301\u0301\u0301", "\x00\x01\x7f", "'s ’s 's", "Mr. Dr. Ms.", "https://", "x@y.z",
    "ALL CAPS SHOUTING NASA IS LOUD",
    "a, b; c: d — e - f ( g ) [ h ]", "My is", "Sarah is my", "I like", "İstanbul'da ı", "Dr. " * 50,
    "A" * 8192, "Aa " * 2730, "10am " * 1638, "my sister is " * 630, "a@" * 4096, "? " * 4096, "Xyz " * 2048,
]


@pytest.mark.parametrize("text", ODD, ids=[f"odd{i}" for i in range(len(ODD))])
def test_never_raises_and_stays_in_bounds(text: str) -> None:
    out = X.extract(text)
    assert out.category in CATEGORIES
    assert 0.0 <= out.importance <= 1.0
    assert len(out.entities) <= MAX_ENTITIES
    assert len(out.facts) <= MAX_FACTS


def test_random_unicode_fuzz() -> None:
    rng = random.Random(1234)
    alphabet = "aAbB zZ.,;:!?'’-_0123456789éÉßİıﬃ\u0301\u200b🙂\t\n()[]/@#" + "".join(map(chr, range(0x370, 0x3a0)))
    words = "Caroline went to the Park in Boston at 10am is my sister likes works at Acme Inc iPhone 15 TODO: https://x.y"
    for _ in range(200):
        texts = ("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))),
                 " ".join(rng.choice(words.split()) for _ in range(rng.randint(0, 80))))
        for text in texts:
            out = X.extract(text)
            assert 0.0 <= out.importance <= 1.0
            assert out == X.extract(text)


def test_long_input_8kb() -> None:
    text = ("Caroline: I went to a LGBTQ support group yesterday with Melanie in Boston and it was so powerful. " * 90)
    text = text[:8192]
    out = X.extract(text)
    assert out.normalized_text == text.strip()
    assert 0.0 <= out.importance <= 1.0
    assert ("Melanie", "person") in {(e.name, e.kind) for e in out.entities}


@pytest.mark.parametrize("text", [c[0] for c in CASES])
def test_deterministic(text: str) -> None:
    assert X.extract(text) == X.extract(text) == HeuristicExtractor().extract(text)


def test_entities_deduplicated_case_insensitively_in_first_seen_order() -> None:
    out = X.extract("Met Sarah at Google. Later SARAH's friend and sarah met Priya, then Sarah left. Sarah! Sarah?")
    names = [e.name.casefold() for e in out.entities]
    assert len(names) == len(set(names))
    assert names.index("sarah") < names.index("priya")


def test_entity_and_fact_caps() -> None:
    names = " ".join(f"and Person{chr(65 + i)}x{chr(97 + i)}" for i in range(26))
    assert len(X.extract(f"I met {names}.").entities) <= MAX_ENTITIES
    many = ". ".join(f"Name{chr(97 + i)} lives in Place{chr(97 + i)}" for i in range(20))
    assert len(X.extract(many).facts) == MAX_FACTS


def test_importance_orders_sensibly() -> None:
    note = X.extract("hmm, not sure about that").importance
    task = X.extract("TODO: renew passport before 12 March 2027").importance
    urgent = X.extract("Important: always rotate the API keys before the deadline on 2025-03-31.").importance
    assert note < task < urgent <= 1.0


def test_odd_speaker_never_raises() -> None:
    out = X.extract("I live in Berlin.", speaker="\ud800" + "x" * 500)
    assert out.facts and len(out.facts[0].subject) <= 200


def test_a_relation_needs_a_named_object() -> None:
    # "met with the team" is no relation between named things; "met Melanie" is (positive control)
    assert X.extract("Caroline: I met with the team yesterday.").facts == []
    assert [(f.subject, f.predicate, f.object) for f in X.extract("Caroline: I met Melanie at the park.").facts] == [
        ("Caroline", "knows", "Melanie")]


@pytest.mark.parametrize("text", ["Remember that Quinn works at Umbrella.", "Please remember that Quinn works at Umbrella.",
                                  "please remember Quinn works at Umbrella", "Don't forget that Quinn works at Umbrella.",
                                  "do not forget that Quinn works at Umbrella", "And remember that Quinn works at Umbrella."])
def test_a_leading_request_to_remember_is_not_part_of_the_fact(text: str) -> None:
    # Seed 001's own example: "remember that ..." is what the user says; the fact is what follows it
    assert [(f.subject, f.predicate, f.object) for f in X.extract(text).facts] == [("Quinn", "works at", "Umbrella")]


def test_that_opening_a_sentence_without_a_request_to_remember_stays_no_subject() -> None:
    # Negative control: the rule strips "that" only after a request to remember
    assert X.extract("That Quinn works at Umbrella is odd.").facts == []
    assert X.extract("I remember that Quinn works at Umbrella.").facts == []
