"""The speaker-label rule that tells a reply from one person's consecutive messages (issue 28, round 12)."""

import pytest

from mnemo.domain.text import answers, speaker


@pytest.mark.parametrize(("text", "label"), [
    ("Caroline: I went to a support group yesterday", "Caroline"),
    ("Dr. Lee: Take it twice a day.", "Dr. Lee"),
    ("Mary Ann Smith: See you then!", "Mary Ann Smith"),
    ("User: what's the weather", "User"),
    ("Zoë: the café was shut", "Zoë"),  # names in any script
    ("Łukasz Nowak: dzień dobry", "Łukasz Nowak"),
    ("O'Brien: on my way", "O'Brien"),
    ("D’Angelo: on my way", "D’Angelo"),
    ("Jean-Luc Picard: Engage.", "Jean-Luc Picard"),
    ("Caroline: I said: hello", "Caroline"),  # the first colon ends the label
    ("AI: how can I help?", None),  # capitals inside a word
    ("https://example.com: a link", None),
    ("Title case this: the quick brown fox", None),  # an instruction, not a name
    ("Episode 1: the beginning", None),
    ("Four Capitalised Words Here: too long for a name", None),
    ("I think: maybe", None),
    ("Caroline:no space after the colon", None),
    ("no label at all", None),
])
def test_a_speaker_label_is_one_to_three_capitalised_words_and_a_colon(text, label):
    assert speaker(text) == label


def test_a_reply_is_another_labelled_speakers_message():
    assert answers("Melanie: How often do you run?", "Caroline: Three times a week.")
    assert not answers("Caroline: I ran today.", "Caroline: Three times a week.")  # the same speaker
    assert not answers("How often do I run?", "Three times a week.")  # nothing says who spoke
    assert not answers("How often do you run?", "Caroline: Three times a week.")
    assert not answers("Melanie: How often do you run?", "Three times a week.")
