"""The token kinds that tell two statements apart (mnemo.domain.distinctions): what the search ranking
reads to keep a correction from being demoted as a repeat of what it corrects (domain/repeats.py).
Deduplication no longer reads them: its rule is an allow-list (tests/unit/test_duplicate_rule.py)."""

from __future__ import annotations

from mnemo.domain.distinctions import difference
from mnemo.domain.opposites import opposite


def test_issue_examples_are_distinct_and_say_why() -> None:
    assert difference("The team meeting is on Monday at 3pm.", "The team meeting is on Tuesday at 3pm.") == (
        "dates and times differ: {monday} vs {tuesday}")
    assert difference("I am allergic to peanuts", "I am not allergic to peanuts") == "negation differs"
    assert difference("release on 2025-03-01", "release on 2025-04-15") is not None
    assert difference("Invoice 1003 is paid.", "Invoice 1001 is paid.") is not None
    assert difference("the cobalt00 lighthouse", "the cobalt01 lighthouse") is not None
    # the controls: rewordings that keep every distinguishing token agree
    assert difference("The team meeting is on Monday at 3pm.", "Team meeting: Monday at 3 pm.") is None
    assert difference("I don't eat pork.", "I do not eat pork.") is None
    assert difference("I have two kids.", "I've got 2 kids.") is None
    assert difference("I am allergic to peanuts.", "I'm allergic to peanuts.") is None  # "am" is no time


def test_opposite_words_and_reversed_preferences_are_distinct_and_reorderings_are_not() -> None:
    assert difference("I love cilantro.", "I hate cilantro.") == "opposites differ: love vs hate"
    assert difference("I remember the door code.", "I forgot the door code.") == "opposites differ: remember vs forget"
    assert difference("The meeting is in the big room.", "The meeting is in the bigger room.") is None
    assert difference("We meet in the smaller room.", "We meet in the biggest room.") == "opposites differ: small vs big"
    assert difference("She liked the plan.", "She disliked the plan.") == "opposites differ: like vs dislike"
    assert difference("I'd rather get emails than phone calls.", "I'd rather get phone calls than emails.") == (
        "preference reversed: call")
    assert difference("Use Slack instead of email.", "Use email rather than Slack.") == "preference reversed: email"
    assert difference("I prefer tea to coffee.", "I prefer coffee over tea.") == "preference reversed: coffee"
    # the controls: the same words in another order, and words that only look like an inflection
    assert difference("I love cilantro.", "Cilantro is something I love.") is None
    assert difference("I love jazz but hate opera.", "I hate opera but love jazz.") is None  # both words in both
    assert difference("I prefer tea over coffee.", "I'd rather have tea than coffee.") is None
    assert difference("For short trips, book trains instead of flights.", "Book trains rather than flights for short trips.") is None
    assert difference("I prefer to work from home.", "I prefer working from home.") is None  # "to" here is no "A to B"
    assert difference("I prefer talking to Ana over email.", "I prefer to talk to Ana rather than email.") is None
    assert difference("I prefer talking to Ana over email.", "I prefer email over talking to Ana.") is not None
    # inflections are folded by word class: "offer" is no form of "off", nor "wind" of "win"
    assert opposite("The heater is turned off.", "The heater is turned on.") == ("off", "on")
    assert opposite("I made an offer.", "I made it on time.") is None
    assert opposite("We won the match.", "We lost the match.") == ("win", "lose")
    assert opposite("The wind picked up.", "We lost the match.") is None


def test_a_capitalised_opener_is_no_name_in_a_reordering_but_a_substituted_name_stays_one() -> None:
    assert difference("Ticket JIRA-4821 is blocked on the API review.", "JIRA-4821 is blocked on the API review.") is None
    assert difference("Pay rent on the first of every month.", "Rent is paid on the first of every month.") is None
    # the controls: another opener (a substituted or added name), a title's full stop, a second capital
    assert difference("Kim works at Initech.", "Lee works at Initech.") == "names differ: kim, lee"
    assert difference("Kim works at Initech.", "Initech employs Lee.") == "names differ: lee"
    assert difference("My doctor is Dr. Okafor.", "My doctor is Dr. Okoye.") == "names differ: okafor, okoye"
    assert difference("Ticket JIRA-1 is blocked, Ticket said.", "JIRA-1 is blocked.") == "names differ: ticket"


def test_the_audits_corrections_are_distinct_and_same_tense_paraphrases_are_not() -> None:
    # the audit's examples (MiniLM cosines 0.929, 0.933, 0.956: above add_memory's 0.92)
    assert difference("Ana is my manager", "Ana was my manager") == "tense differs: present vs past"
    assert difference("Tom is my boyfriend", "Tom was my boyfriend") == "tense differs: present vs past"
    assert difference("Ana is my manager", "Ana is my former manager") == "tense differs: present vs past"
    assert difference("ship it in march", "ship it in may") == "dates and times differ: {march} vs {may}"
    assert difference("The API key is sk-abc", "The API key is sk-abd") == "identifiers differ: {sk-abc} vs {sk-abd}"
    assert difference("Lena will be my mentor.", "Lena is my mentor.") == "tense differs: future vs present"
    assert difference("The cat sleeps in our bedroom.", "The cat used to sleep in our bedroom.") is not None
    assert difference("Marco is no longer my landlord.", "Marco is still my landlord.") is not None
    assert difference("Set api_key_v in the env file.", "Set api_key_w in the env file.") is not None
    assert difference("Call getUserName to fetch it.", "Call getUserId to fetch it.") is not None
    assert difference("Email me at ana@example.com.", "Email me at ana@example.org.") is not None
    # the controls: the same tense reworded, "may" as a verb, a hyphenated word written apart
    assert difference("Ana was my manager.", "Ana used to be my manager.") is None
    assert difference("Ana is my former manager.", "Ana was my manager.") is None
    assert difference("Lena will be my mentor.", "Lena is going to be my mentor.") is None
    assert difference("I don't eat meat anymore.", "I no longer eat meat.") is None
    assert difference("My wallet was stolen.", "Someone stole my wallet.") is None  # the verb alone carries it
    assert difference("My passport expires on 12 May 2027.", "My passport will expire on 12 May 2027.") is None
    assert difference("You may call me after six.", "You can call me after six.") is None
    assert difference("ship it in march", "we ship it in march") is None
    assert difference("I am a well-known baker in town.", "I'm a well known baker in town.") is None
    assert difference("The API key is sk-abc.", "My API key: sk-abc") is None
    assert difference("Meet at 3 p.m., e.g. in the lobby.", "Meet at 3 pm, for example in the lobby.") is None
