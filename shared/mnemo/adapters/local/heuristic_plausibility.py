"""What a heuristic fact's subject and object can be (issue 54): the checks a surface pattern cannot make.

The fact patterns read words, not meanings, so "Dentist appointment moved to Wednesday" matched "<S> moved to
<O>" and became (Dentist appointment, lives in, Wednesday). These rules veto such a triple after a pattern built
it, each for one reason:
- a weekday, month, time or date is never a place, an employer or a destination: "moved to Wednesday" reschedules
  something (`names_a_time`);
- "<X> is on Thursdays / at 9:30 / the 25th" says when X happens, not what X is: the generic `is` facts are
  attributes ("vegetarian", "a night owl"), so a time is no value of them, and "was moved to 14:00" is a passive
  verb, not a state;
- only a person lives somewhere: the speaker, a name, or a relation ("my sister", "Greta's brother"); "the team
  moved to Slack" and "my yoga class moved to Thursdays" are things (`can_live_somewhere`).
Measured on the everyday notes of tests/data/extraction_set.jsonl (docs/extraction.md "Everyday notes").
"""

from __future__ import annotations

import re

__all__ = ["RELATIONS", "can_live_somewhere", "names_a_time", "plausible"]

# People named by their relation to someone; also the extractor's cue for a person entity ("my sister ...").
RELATIONS = (r"(?:best friend|mom|mum|mother|dad|father|parents?|sister|brother|siblings?|sons?|daughters?|wife"
             r"|husband|partner|spouse|boyfriend|girlfriend|fianc[eé]e?|friend|cousin|aunt|uncle|grandma|grandmother"
             r"|grandpa|grandfather|niece|nephew|kids?|children|child|boss|manager|colleague|co-?worker|roommate"
             r"|neighbou?r|mentor)")
_RELATION_END = re.compile(rf"(?:^|\s){RELATIONS}s?$", re.IGNORECASE)
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?"
          r"|nov(?:ember)?|dec(?:ember)?)")
# A time of day or a day: "9:30", "10am", "at 4", "the 25th", "noon", "Friday mornings", "the weekend". A part of
# the day counts only where it ends the phrase or a preposition follows ("nights next week"): before a noun it
# describes ("a night owl", "a morning person").
_PART_OF_DAY = (r"(?:weekend|morning|afternoon|evening|night)s?"
                r"(?=\s*$|\s*[,.;]|\s+(?:on|at|in|from|next|this|every|until|till|starting|and|of)\b)")
_TIME_WORD = (rf"{_WEEKDAY}|{_MONTH}|\d{{1,2}}(?::[0-5]\d)? ?(?:am|pm|a\.m\.|p\.m\.)|\d{{1,2}}:[0-5]\d|(?<=\bat )\d{{1,2}}"
              rf"|\d{{1,2}}(?:st|nd|rd|th)|noon|midnight|today|tonight|tomorrow|{_PART_OF_DAY}")
# Words that may come before it: "on", "every other", "the end of", "next".
_TIME = re.compile(rf"^(?:(?:on|at|by|until|till|from|for|to|every|each|other|the|this|next|coming|end of)\s+)*"
                   rf"(?:{_TIME_WORD})(?!\w)", re.IGNORECASE)
# "The appointment was moved to 14:00": a passive verb, not the state "moved to 14:00".
_RESCHEDULED = re.compile(r"^(?:moved|pushed|rescheduled|postponed|shifted|bumped|brought forward|cancell?ed|delayed)\b",
                          re.IGNORECASE)
_PARTICLES = frozenset({"de", "da", "do", "dos", "van", "von", "der", "den", "del", "la", "le", "di", "bin", "al"})
# Predicates whose object is a place, an employer or a destination: a time is none of these.
_WHERE = frozenset({"lives in", "works at", "travels to", "visited", "is from", "was born in", "studies at",
                    "graduated from", "interviewed at"})
_STATE = frozenset({"is", "are", "was", "were"})


def names_a_time(text: str) -> bool:
    """True when `text` opens with a day, a month or a time of day ("Wednesday", "Saturday at 8pm", "at 9:30
    every day", "the 25th", "every other at 4" once the weekday is stripped)."""
    return bool(_TIME.match(text.strip(" ,.")))


def _is_name(words: list[str]) -> bool:
    """Every word Capitalised ("Ana", "Dr. Patel", "Ana de Souza"): a name, not a noun phrase ("Dentist
    appointment", "Office hours", "Kids' swim class")."""
    return words[0][:1].isupper() and all(w[:1].isupper() or w in _PARTICLES for w in words)


def can_live_somewhere(subject: str, speaker: str) -> bool:
    """A person: the speaker, a name, or someone named by a relation ("user's sister", "the kids")."""
    if subject == speaker or _RELATION_END.search(subject):
        return True
    words = subject.split()
    return bool(words) and _is_name(words)


def plausible(subject: str, predicate: str, obj: str, speaker: str) -> bool:
    """False for a triple no careful reader would take from the text, whatever pattern built it."""
    if (predicate in _WHERE or predicate in _STATE) and names_a_time(obj):
        return False
    if predicate in _STATE and _RESCHEDULED.match(obj):
        return False
    return predicate != "lives in" or can_live_somewhere(subject, speaker)
