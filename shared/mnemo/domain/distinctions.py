"""What tells two similar statements apart, token kind by token kind: the search ranking's reading.

A hit that restates a better-placed one is moved down (domain/repeats.py), but a correction is no
restatement: "Monday at 3pm" and "Tuesday at 3pm" share most words. `difference` names the first
kind of token on which two texts disagree, or answers None when it finds none. A wrong None here only
moves a hit a few places down, which is why a category reader serves the ranking; deduplication, where
a wrong "same" would drop what the user said, uses the allow-list of domain/duplicates.py instead (each
revision of this list missed the next kind: units, swapped arguments, quantifiers). The kinds:

- numbers: digit runs (thousands separators dropped, leading zeros ignored) and spelled numbers up
  to twenty, tens, ordinals up to twelfth, so "2 kids" agrees with "two kids", "3pm" with "3 pm";
- identifiers: tokens mixing letters and digits (hunter2, JIRA-4821, eu-west-1, 14C, cobalt07); and
  code-like tokens (an internal - _ / . @ or : between letters, or camelCase: sk-abc, api_key_v,
  getUserName, ana@example.com, settings.yaml), which differ only when each text has one the other
  lacks (a substitution: "sk-abc" / "sk-abd"), so a hyphenated word written apart ("well-known" /
  "well known") still agrees;
- weekdays and months (plural folded: "Mondays" is Monday; "may" and "march" in lower case only when
  used as a date: after in/on/by/until/since/before/after/of/from, or next to a day number);
- times of day and relative days: am/pm after a number, noon, midnight, morning, afternoon, evening,
  today, tomorrow, yesterday, tonight, next, last;
- names: capitalised words (beyond "I" and a list of common sentence openers) that the other text
  does not contain in any case, so "Dinner on Friday" agrees with "... dinner ..."; a text's first
  word is no name when the other text opens with a word of this one (a reordering: "Ticket JIRA-4821
  is blocked" / "JIRA-4821 is blocked");
- negation: how many of not/n't/no/never/none/nobody/nothing/nowhere/neither/nor/without/cannot,
  beyond those of "no longer" and "not ... anymore" (a status marker, below);
- tense and status (mnemo/domain/tense.py): is / was / will be, used to, former, ex-, previous /
  current, no longer / still / now: "Ana is my manager" / "Ana was my manager" differ;
- opposites (mnemo/domain/opposites.py): a word of one text whose antonym is in the other ("love" /
  "hate", "big" / "small", "remember" / "forgot"), and a reversed preference ("emails rather than
  calls" / "calls rather than emails").

Pure functions, no I/O.
"""

from __future__ import annotations

import re
import unicodedata

from mnemo.domain.opposites import opposite, reversed_preference
from mnemo.domain.tense import status_negations, tense_difference

__all__ = ["difference"]

_WORD = re.compile(r"[^\W_](?:[\w'’.#/-]*[^\W_])?")
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|nowhere|neither|nor|without|cannot)\b|n['’]t\b")
_SUFFIXED_NUMBER = re.compile(r"\d+(?:st|nd|rd|th|am|pm)")  # 3rd, 3pm: a number, not an identifier


def _listed(words: str) -> list[str]:  # word lists read as prose; a list literal of 100 quoted words does not
    return words.split()


_SPELLED = {w: str(n) for n, w in enumerate(
    _listed("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
            "seventeen eighteen nineteen twenty"))}
_SPELLED |= {w: str(10 * n) for n, w in enumerate(_listed("thirty forty fifty sixty seventy eighty ninety"), start=3)}
_SPELLED |= {w: str(n) for n, w in enumerate(
    _listed("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"), start=1)}
_SPELLED |= {"hundred": "100", "thousand": "1000", "million": "1000000", "dozen": "12"}
_WEEKDAYS = {d: d for d in _listed("monday tuesday wednesday thursday friday saturday sunday")}
_MONTHS = {m: m for m in _listed("january february march april may june july august september october november december")}
_CAPITAL_ONLY_MONTHS = {"may", "march"}  # also a verb: a month when capitalised or used as a date
_DATE_PREPOSITIONS = set(_listed("in on by until till since before after of from through during early late mid"))
_DAY = re.compile(r"\d{1,2}(?:st|nd|rd|th)?")
# Code-like: letters joined by - _ / . @ or :, or a lower-case letter followed by a capital (camelCase).
_CODE_CHUNK = re.compile(r"[^\s\"'“”‘’()\[\]{}<>,;!?]+")
_CODE_JOIN = re.compile(r"[^\W_][-_/.@:]+[^\W_]|[a-z][A-Z]")
_TIMES = {"noon", "midnight", "morning", "afternoon", "evening", "today", "tomorrow", "yesterday", "tonight", "next", "last"}
_MERIDIEM = {"am": "am", "pm": "pm", "a.m": "am", "p.m": "pm"}
# Capitalised words that open sentences (or are the pronoun I): not names.
_OPENERS = set(_listed("""
i i'm i'd i've i'll a an the this that these those my our your his her their its we you he she they it there
here please and but or so if when while since because as at on in of for to from by with after before during
every each all some any no not never do does did don't is are was were be been will would can could should
may might must let let's also just then now yes ok okay hi hello remind call send use note what who where why how
"""))


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFC", text))


def _fold(word: str) -> str:
    return word.casefold().replace("’", "'")


def _numbers(text: str) -> set[str]:
    found = {_number(m) for m in _NUMBER.findall(text)}
    return found | {_SPELLED[w] for w in (_fold(w) for w in _words(text)) if w in _SPELLED}


def _number(digits: str) -> str:
    value = digits.replace(",", "")
    if "." in value:
        whole, fraction = value.split(".", 1)
        fraction = fraction.rstrip("0")
        return f"{int(whole)}.{fraction}" if fraction else str(int(whole))
    return str(int(value))


def _identifiers(text: str) -> set[str]:
    return {_fold(w) for w in _words(text)
            if any(c.isdigit() for c in w) and any(c.isalpha() for c in w) and not _SUFFIXED_NUMBER.fullmatch(_fold(w))}


def _code(text: str) -> set[str]:
    """Code-like tokens (folded), beyond abbreviations of single letters (e.g., a.m., U.S.) and ex-."""
    found = set()
    for chunk in _CODE_CHUNK.findall(unicodedata.normalize("NFC", text)):
        token = chunk.strip("#.:*`").removeprefix("@")
        parts = re.split(r"[-_/.@:]+", token)
        if (_CODE_JOIN.search(token) and any(c.isalpha() for c in token) and any(len(p) > 1 for p in parts)
                and not token.casefold().startswith("ex-")):
            found.add(token.casefold())
    return found


def _month_as_date(words: list[str], index: int) -> bool:
    """A lower-case "may" / "march" is a month after a date preposition or next to a day number."""
    before = _fold(words[index - 1]) if index > 0 else ""
    after = words[index + 1] if index + 1 < len(words) else ""
    return before in _DATE_PREPOSITIONS or bool(_DAY.fullmatch(before) or _DAY.fullmatch(_fold(after)))


def _calendar(text: str) -> set[str]:
    """Weekdays, months, times of day and relative days the text names (plurals folded)."""
    found: set[str] = set()
    words = _words(text)
    for index, word in enumerate(words):
        folded = _fold(word)
        single = folded[:-1] if folded.endswith("s") else folded
        if single in _WEEKDAYS:
            found.add(single)
        elif folded in _MONTHS and (folded not in _CAPITAL_ONLY_MONTHS or word[0].isupper()
                                    or _month_as_date(words, index)):
            found.add(folded)
        elif single in _TIMES:
            found.add(single)
        elif folded.rstrip(".") in _MERIDIEM and index > 0 and words[index - 1][-1].isdigit():
            found.add(_MERIDIEM[folded.rstrip(".")])  # "3 pm"; "I am" is no time
        match = re.fullmatch(r"\d+(am|pm)", folded)
        if match:
            found.add(match.group(1))
    return found


def _names(text: str) -> set[str]:
    """Capitalised words; weekdays and months are compared as such (plurals folded), not as names."""
    names = {_fold(w).removesuffix("'s") for w in _words(text) if w[0].isupper() and not any(c.isdigit() for c in w)}
    return {n for n in names if n not in _OPENERS and n not in _MONTHS and n.removesuffix("s") not in _WEEKDAYS}


def _first_word(text: str) -> str | None:
    words = _words(text)
    return _fold(words[0]) if words else None


def _missing_names(text: str, other: str) -> list[str]:
    """The names of `text` that `other` does not contain. The text's capitalised first word is no
    name when `other` opens with a word `text` also holds, unless `text` capitalises it again: the same
    statement reordered ("Ticket JIRA-4821 is blocked" / "JIRA-4821 is blocked", "Pay rent on the
    first" / "Rent is paid on the first"), where the opener is as likely an ordinary word. A substituted
    name ("Kim works at Initech" / "Lee works at Initech") stays one: the other text opens with a word
    this one lacks. Only the first word: after a full stop, "Dr. Okafor" is a name all the same."""
    words, other_words = [_fold(w) for w in _words(text)], {_fold(w) for w in _words(other)}
    first, other_first = _first_word(text), _first_word(other)
    opener = first if other_first in set(words) and sum(w[0].isupper() for w in _words(text)
                                                          if _fold(w) == first) == 1 else None
    return sorted(n for n in _names(text) if n not in other_words and n + "'s" not in other_words and n != opener)


def _negations(text: str) -> int:
    return len(_NEGATION.findall(text.casefold())) - status_negations(text)


def difference(a: str, b: str) -> str | None:
    """The first kind of token on which the two texts disagree, with the tokens, or None."""
    for kind, read in (("numbers", _numbers), ("identifiers", _identifiers), ("dates and times", _calendar)):
        left, right = read(a), read(b)
        if left != right:
            return f"{kind} differ: {_show(left - right)} vs {_show(right - left)}"
    left_code, right_code = _code(a), _code(b)
    if left_code - right_code and right_code - left_code:
        return f"identifiers differ: {_show(left_code - right_code)} vs {_show(right_code - left_code)}"
    missing = _missing_names(a, b) + _missing_names(b, a)
    if missing:
        return f"names differ: {', '.join(missing)}"
    if _negations(a) != _negations(b):
        return "negation differs"
    tense_changed = tense_difference(a, b)
    if tense_changed:
        return tense_changed
    words = opposite(a, b)
    if words:
        return f"opposites differ: {words[0]} vs {words[1]}"
    item = reversed_preference(a, b)
    if item:
        return f"preference reversed: {item}"
    return None


def _show(tokens: set[str]) -> str:
    return "{" + ", ".join(sorted(tokens)) + "}" if tokens else "{}"
