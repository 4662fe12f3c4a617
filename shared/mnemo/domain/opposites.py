"""Opposite words and reversed preferences: the one kind of disagreement a sentence embedding cannot
see well, because the two texts share every other word ("I hate cilantro" / "I love cilantro" embed at
0.86 with MiniLM, "...the big room" / "...the small room" at 0.88).
docs/deduplication.md "What counts as a duplicate".

- `opposite(a, b)`: a word of one text whose counterpart is in the other, each missing from the other
  text (so "I love X and hate Y" against its reordering is no disagreement). The list holds common
  English antonym and polarity pairs, written from general knowledge, not from the labelled pairs;
  inflections are folded by rule (liked, likes, liking; bigger, biggest; closed) plus a few irregular
  forms (forgot, won, lost, sold, bought, left).
- `reversed_preference(a, b)`: "A rather than B", "A instead of B", "rather A than B", "prefer A to
  B", "prefer/choose/pick A over B": an item one text prefers is the one the other passes over.

Pure functions, no I/O; a word in several groups ("close": open/close and near/far) has the union of
their counterparts.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict

__all__ = ["opposite", "reversed_preference"]

# One group a line; sides separated by "/", any word of a side is the opposite of any word of another.
_VERBS = """
love like enjoy adore / hate dislike detest loathe
remember recall / forget
start begin / stop end finish quit
accept approve / reject decline refuse deny
allow permit / forbid ban prohibit block
include / exclude
enable / disable
add / remove delete
open / close shut
win / lose
buy / sell
borrow / lend
send / receive
import / export
arrive enter / leave depart exit
pass succeed / fail
increase raise / decrease reduce lower
push / pull
agree / disagree
lock / unlock
"""
_ADJECTIVES = """
big large huge / small little tiny
early / late
cheap / expensive
hot warm / cold cool
near close / far
high / low
full / empty
fast quick / slow
loud noisy / quiet silent
hard difficult / easy
hard / soft
right correct / wrong incorrect
true / false
rich / poor
strong / weak
safe / dangerous unsafe
clean / dirty
wet / dry
light / dark
light / heavy
thick / thin
wide / narrow
long / short
tall / short
deep / shallow
old / new
old / young
happy glad / sad unhappy
asleep / awake
alive / dead
public / private
positive / negative
valid / invalid
possible / impossible
legal / illegal
available / unavailable
able / unable
active / inactive
complete / incomplete
"""
_OTHERS = """
good better best / bad worse worst
more most / less least fewer fewest
before / after
always / never
often frequently / rarely seldom
up upstairs upward upwards / down downstairs downward downwards
above over / below under
inside indoor indoors / outside outdoor outdoors
front / back behind
on / off
online / offline
left / right
north / south
east / west
top / bottom
maximum / minimum
success / failure
profit gain / loss
male / female
day / night
summer / winter
"""
_IRREGULAR = {
    "forgot": "forget", "forgotten": "forget", "won": "win", "lost": "lose", "sold": "sell", "bought": "buy",
    "began": "begin", "begun": "begin", "lent": "lend", "sent": "send", "left": "leave", "forbade": "forbid",
    "forbidden": "forbid", "shut": "shut",
}
_VOWELS = set("aeiou")


def _verb_forms(base: str) -> set[str]:
    forms = {base, base + "s", base + "es", base + "ed", base + "ing"}
    if base.endswith("e"):
        forms |= {base + "d", base[:-1] + "ing"}
    if base.endswith("y") and base[-2:-1] not in _VOWELS:
        forms |= {base[:-1] + "ies", base[:-1] + "ied"}
    if _doubles(base):
        forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    return forms


def _adjective_forms(base: str) -> set[str]:
    forms = {base, base + "er", base + "est"}
    if base.endswith("e"):
        forms |= {base + "r", base + "st"}
    if base.endswith("y") and base[-2:-1] not in _VOWELS:
        forms |= {base[:-1] + "ier", base[:-1] + "iest", base[:-1] + "ily"}
    if _doubles(base):
        forms |= {base + base[-1] + "er", base + base[-1] + "est"}
    return forms


def _doubles(base: str) -> bool:
    """stop → stopped, big → bigger: a short word ending consonant, vowel, consonant."""
    tail = base[-3:]
    return (len(tail) == 3 and tail[0] not in _VOWELS and tail[1] in _VOWELS and tail[2] not in _VOWELS | set("wxy"))


def _build() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    forms: dict[str, set[str]] = defaultdict(set)  # word as written → its base words
    counterparts: dict[str, set[str]] = defaultdict(set)  # base word → its opposites
    for text, inflect in ((_VERBS, _verb_forms), (_ADJECTIVES, _adjective_forms), (_OTHERS, lambda w: {w, w + "s"})):
        for line in text.strip().splitlines():
            sides = [side.split() for side in line.split("/")]
            for index, side in enumerate(sides):
                others = {w for j, s in enumerate(sides) if j != index for w in s}
                for word in side:
                    counterparts[word] |= others
                    for form in inflect(word):
                        forms[form].add(word)
    for form, base in _IRREGULAR.items():
        forms[form].add(base)
    return dict(forms), dict(counterparts)


_FORMS, _COUNTERPARTS = _build()
_WORD = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?")
_CLAUSE = re.compile(r"[.,;:!?()\[\]\"“”]+|\s[-–—]\s")


def _tokens(text: str) -> list[str]:
    return [w.casefold().replace("’", "'") for w in _WORD.findall(unicodedata.normalize("NFC", text))]


def _bases(text: str) -> set[str]:
    return {base for word in _tokens(text) for base in _FORMS.get(word, ())}


def opposite(a: str, b: str) -> tuple[str, str] | None:
    """A word of `a` and its opposite in `b`, each missing from the other text, or None."""
    left, right = _bases(a), _bases(b)
    only_left, only_right = left - right, right - left
    for word in sorted(only_left):
        found = sorted(_COUNTERPARTS[word] & only_right)
        if found:
            return word, found[0]
    return None


def _listed(words: str) -> list[str]:  # a word list read as prose, as in duplicates.py
    return words.split()


# Words that never name the item a preference is about.
_FILLER = set(_listed("""
i i'd i'm i've me my we we'd our us you your he she they them their it its this that these those a an the
some any to of for with in on at by from as and or but so be is are was were been being am would should
will can could do does did get gets getting got have has having had use using take taking make go going
much more rather than instead over prefer prefers preferred preferring choose chooses chose chosen pick
picks picked favour favours favoured favor favors favored always usually really generally
"""))
_PREFERS = re.compile(r"^(?:prefer\w*|choose|chooses|chose|chosen|pick|picks|picked|favou?r\w*|rather)$")


def _items(words: list[str]) -> set[str]:
    """Content words, plural 's' dropped."""
    return {w[:-1] if w.endswith("s") and len(w) > 3 and not w.endswith("ss") else w for w in words if w not in _FILLER}


def _run(words: list[str]) -> list[str]:
    """The phrase next to a marker: skip leading filler, stop at the first filler after a content word."""
    out: list[str] = []
    for word in words:
        if word in _FILLER:
            if out:
                break
            continue
        out.append(word)
    return out


def _preferences(text: str) -> list[tuple[set[str], set[str]]]:
    """(preferred, passed over) items of each preference construct in the text. "prefer A to B" is
    read only in a clause with no other marker: in "prefer talking to Ana over email", "to" is no
    comparison."""
    found = []
    for clause in _CLAUSE.split(text):
        words = _tokens(clause)
        marked, to = [], []
        for i, word in enumerate(words):
            pair = words[i:i + 2]
            if pair in (["rather", "than"], ["instead", "of"]):
                marked.append((_items(_run(words[:i][::-1])), _items(_run(words[i + 2:]))))
            elif word == "than" and "rather" in words[:i]:
                start = words.index("rather") + 1
                marked.append((_items(words[start:i]), _items(_run(words[i + 1:]))))
            elif word in ("over", "to") and any(_PREFERS.match(w) for w in words[:i]):
                verb = max(j for j in range(i) if _PREFERS.match(words[j]))
                if word == "over":
                    marked.append((_items(words[verb + 1:i]), _items(_run(words[i + 1:]))))
                elif words[verb] != "rather":
                    to.append((_items(words[verb + 1:i]), _items(_run(words[i + 1:]))))
        found.extend(marked or to)
    return [(first, second) for first, second in found if first and second and not first & second]


def reversed_preference(a: str, b: str) -> str | None:
    """An item one text prefers and the other passes over, or None."""
    for preferred, passed in _preferences(a):
        for other_preferred, other_passed in _preferences(b):
            crossed = (preferred & other_passed) | (passed & other_preferred)
            if crossed:
                return sorted(crossed)[0]
    return None
