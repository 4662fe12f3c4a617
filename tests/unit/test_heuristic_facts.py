"""The local extractor's fact rules of issue 29: decisions, preferences, plans with their day, negations and
corrections, compound sentences, and no fact from questions, hypotheticals or sarcasm."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from mnemo.adapters.local.heuristic_extractor import HeuristicExtractor

X = HeuristicExtractor()
THU = datetime.fromisoformat("2024-03-14T18:30:00+01:00")


def triples(text: str) -> list[tuple[str, str, str, str]]:
    return [(f.subject, f.predicate, f.object, f.polarity) for f in X.extract(text, captured_at=THU).facts]


def days(text: str) -> list[date | None]:
    return [f.valid_at.date() if f.valid_at else None for f in X.extract(text, captured_at=THU).facts]


def test_a_compound_sentence_gives_one_fact_per_clause_with_its_subject() -> None:
    assert triples("Zed lives in Quito and works at Cobaltworks.") == [
        ("Zed", "lives in", "Quito", "positive"), ("Zed", "works at", "Cobaltworks", "positive")]
    assert triples("My sister Maya lives in Berlin.") == [
        ("user", "sister", "Maya", "positive"), ("Maya", "lives in", "Berlin", "positive")]


@pytest.mark.parametrize(("text", "fact"), [
    ("I decided that the team will use Postgres for the billing service.",
     ("user", "decided", "the team will use Postgres for the billing service", "positive")),
    ("We decided to use Postgres for billing.", ("user", "decided", "use Postgres for billing", "positive")),
    ("We decided not to renew the Datadog contract.", ("user", "decided", "renew the Datadog contract", "negative")),
    ("I prefer window seats.", ("user", "prefers", "window seats", "positive")),
    ("I hate cilantro.", ("user", "dislikes", "cilantro", "positive")),
    ("I don't like spicy food.", ("user", "likes", "spicy food", "negative")),
    ("I am not allergic to peanuts.", ("user", "is allergic to", "peanuts", "negative")),
    ("I no longer work at Acme.", ("user", "works at", "Acme", "negative")),
    ("I'm a nurse at the children's hospital.", ("user", "works as", "nurse", "positive")),
])
def test_each_kind_gives_its_fact(text: str, fact: tuple[str, str, str, str]) -> None:
    assert triples(text) == [fact]


def test_a_correction_says_the_new_value_and_denies_the_old() -> None:
    assert triples("Actually, I live in Porto, not Lisbon.") == [
        ("user", "lives in", "Porto", "positive"), ("user", "lives in", "Lisbon", "negative")]


def test_a_plan_is_valid_from_the_planned_day_and_an_event_from_its_day() -> None:
    assert triples("I'm flying to Lisbon next Friday.") == [("user", "travels to", "Lisbon", "positive")]
    assert days("I'm flying to Lisbon next Friday.") == [date(2024, 3, 15)]
    assert days("I have a dentist appointment next Tuesday.") == [date(2024, 3, 19)]
    assert days("I visited Kyoto last week.") == [date(2024, 3, 7)]
    assert days("Yesterday I met Sara at the conference.") == [date(2024, 3, 13)]
    assert days("I live in Denver.") == [None]  # no date said: enrichment uses captured_at
    no_anchor = X.extract("I'm flying to Lisbon next Friday.").facts  # no captured_at: no day, never the wall clock
    assert [f.valid_at for f in no_anchor] == [None]


@pytest.mark.parametrize("text", [
    "What did I decide about the billing database?", "Where does Zed work?",
    "If I lived in Quito I would learn Spanish properly.", "I might move to Denver someday.",
    "Oh sure, I just love waiting in line for three hours.", "Yeah right, like I'd ever work at Globex.",
    "Great, another Monday. I absolutely love Mondays. Not.",
])
def test_questions_hypotheticals_and_sarcasm_yield_nothing(text: str) -> None:
    assert triples(text) == []
    # the control: the same words stated plainly do give a fact
    assert triples("I live in Quito. I love Mondays. Zed works at Globex.") != []


@pytest.mark.parametrize(("text", "fact"), [
    ("I lead a team of 4 engineers.", ("user", "leads", "team of 4 engineers", "positive")),
    ("I've been using basil and mint in my cooking.", ("user", "uses", "basil and mint in my cooking", "positive")),
    ("I teach piano.", ("user", "teaches", "piano", "positive")),
    ("I have a cat.", ("user", "has", "cat", "positive")),  # the control: a possession is still one
    ("I am really excited.", ("user", "is", "really excited", "positive")),  # and a state
])
def test_a_habit_is_said_with_its_verb(text: str, fact: tuple[str, str, str, str]) -> None:
    assert triples(text) == [fact]


@pytest.mark.parametrize("text", [
    "I was thinking of taking the train from the airport to my hotel.",  # a chat opener, not a state
    "I was just talking about this with Rachel.",
    "I have also been playing around with flavours.",  # a verb after an adverb, not a possession
    "I've even harvested some cherry tomatoes.",
    "I've been teaching at a primary school.",  # a habit's object is never a bare preposition's
])
def test_a_verb_phrase_after_is_or_has_is_no_state_or_possession(text: str) -> None:
    assert triples(text) == []


# Issue 54: everyday notes. "moved to <a day>" reschedules something; only a person lives somewhere.
@pytest.mark.parametrize("text", [
    "Dentist appointment moved to Wednesday.",  # the example: was (Dentist appointment, lives in, Wednesday)
    "The party moved to Saturday at 8pm.",
    "Standup moved to Wednesday, and retro moved to Friday.",
    "My yoga class moved to Thursdays.",
    "The launch moved to March.",
    "Scratch that, the call moved to Monday.",
])
def test_a_thing_moved_to_a_day_lives_nowhere(text: str) -> None:
    assert triples(text) == []


@pytest.mark.parametrize(("text", "facts"), [
    ("Ana moved to Lisbon.", [("Ana", "lives in", "Lisbon", "positive")]),  # the control: a real move
    ("I moved to Leipzig on Monday.", [("user", "lives in", "Leipzig", "positive")]),  # a place, then its day
    ("My sister moved to Graz in June.", [("user's sister", "lives in", "Graz", "positive")]),
    ("Ana didn't move to Lisbon after all.", [("Ana", "lives in", "Lisbon", "negative")]),
])
def test_a_person_who_moves_to_a_place_lives_there(text: str, facts: list[tuple[str, str, str, str]]) -> None:
    assert triples(text) == facts


def test_a_thing_never_lives_anywhere_but_a_person_does() -> None:
    assert triples("The team moved to Slack last month.") == []
    assert triples("Our newsletter moved to Substack.") == []
    assert triples("My parents moved to Faro.") == [("user's parents", "lives in", "Faro", "positive")]  # the control
    assert triples("Ana de Souza moved to Faro.") == [("Ana de Souza", "lives in", "Faro", "positive")]


@pytest.mark.parametrize("text", [
    "Standup is at 9:30 every day.", "Therapy is every other Wednesday at 4.", "Payday is the 25th.",
    "Choir practice is on Thursdays in the church hall.", "Remember: team standups are Tuesdays at 10am.",
    "Correction: the dentist appointment is Thursday, not Wednesday.", "The appointment was moved to 14:00.",
])
def test_a_schedule_says_when_not_what_a_thing_is(text: str) -> None:
    assert triples(text) == []


@pytest.mark.parametrize(("text", "fact"), [
    ("I'm a night owl.", ("user", "is", "night owl", "positive")),  # a part of the day before a noun is no time
    ("I'm vegetarian.", ("user", "is", "vegetarian", "positive")),
    ("My birthday is on April 2nd.", ("user", "birthday", "April 2nd", "positive")),  # a date's own attribute
    ("I'm flying to Lisbon next Friday.", ("user", "travels to", "Lisbon", "positive")),
])
def test_the_controls_of_the_schedule_rules_keep_their_facts(text: str, fact: tuple[str, str, str, str]) -> None:
    assert triples(text) == [fact]
