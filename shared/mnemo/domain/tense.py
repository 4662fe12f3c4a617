"""Tense and status markers: a change of state is a correction the cosine cannot see ("Ana is my
manager" / "Ana was my manager" embed at 0.93 with MiniLM, "...my former manager" at 0.96).
docs/deduplication.md "What counts as a duplicate".

`tense(text)` reads the markers, not the verbs (no tagger; "I live" / "I lived" is left to the cosine):
- past status: used to, former(ly), previous(ly), ex-, no longer, anymore / any more; the strong kind,
  a statement that something ended;
- future: will, shall, 'll, won't, going to be, gonna;
- past: was, were, had, did (and their n't);
- present: is, are, am, 'm, 're, has, have, do, does (and n't), now, still, current(ly), nowadays. A
  present auxiliary beside a status or future marker is no present ("Ana is my former manager" is
  past, "Lena is going to be my mentor" future).

`tense_difference(a, b)` compares them: two texts that both mark a tense must mark the same ones
("was" agrees with "used to" and "former", never with "is"); a text with no marker (its verb alone
carries the tense) agrees with any text that has no status marker, so "My wallet was stolen" /
"Someone stole my wallet" and "My passport expires on 12 May" / "...will expire on 12 May" (a
present for a schedule) agree while "The cat sleeps in our bedroom" / "The cat used to sleep..."
differ. `status_negations(text)` counts the negations that belong to a status marker ("no longer",
"not ... anymore"), which the negation count leaves out: "I don't eat meat anymore" / "I no longer eat
meat" agree.

Pure functions, no I/O.
"""

from __future__ import annotations

import re

__all__ = ["status_negations", "tense", "tense_difference"]

_STATUS = re.compile(r"\b(?:used to|no longer|any ?more|former(?:ly)?|previous(?:ly)?|ex(?=-\w)|ex\b)")
_FUTURE = re.compile(r"\b(?:will|shall|won't|going to be|gonna)\b|'ll\b")
_PAST = re.compile(r"\b(?:was|were|had|did)(?:n't)?\b")
_PRESENT_AUX = re.compile(r"\b(?:is|are|am|has|have|do|does)(?:n't)?\b|\b(?:i|you|we|they)'(?:m|re)\b")
_PRESENT = re.compile(r"\b(?:now|still|current(?:ly)?|nowadays)\b")


def _plain(text: str) -> str:
    return text.casefold().replace("’", "'")


def tense(text: str) -> tuple[frozenset[str], bool]:
    """The tenses the text marks, and whether a status marker is among them."""
    plain = _plain(text)
    status, future = bool(_STATUS.search(plain)), bool(_FUTURE.search(plain))
    marks = {"past"} if status or _PAST.search(plain) else set()
    if future:
        marks.add("future")
    if _PRESENT.search(plain) or (_PRESENT_AUX.search(plain) and not status and not future):
        marks.add("present")
    return frozenset(marks), status


def tense_difference(a: str, b: str) -> str | None:
    (left, left_strong), (right, right_strong) = tense(a), tense(b)
    if left == right or (not left and not right_strong) or (not right and not left_strong):
        return None
    return f"tense differs: {'/'.join(sorted(left)) or 'unmarked'} vs {'/'.join(sorted(right)) or 'unmarked'}"


def status_negations(text: str) -> int:
    plain = _plain(text)
    longer = len(re.findall(r"\bno longer\b", plain))
    anymore = bool(re.search(r"\bany ?more\b", plain)) and bool(re.search(r"\bnot\b|n't\b", plain))
    return longer + anymore
