"""When two texts are one memory (docs/deduplication.md "What counts as a duplicate").

An allow-list, not a list of what may differ. Two texts are one memory only when every difference
between them is one this module names: case, punctuation, whitespace, the articles a / an / the, a
contraction written out or with or without its apostrophe, and a reviewed closed list of
equivalents (a spelled number and its digits, British and American spelling, a unit and its
abbreviation). Everything else is content: another word, a word more or less, the same words in
another order ("Alice owes Bob" / "Bob owes Alice"), a pronoun, preposition or auxiliary ("to Paris"
/ "from Paris", "is at 10" / "was at 10"), a symbol ("$50" / "€50", "-5" / "5") or a question mark.
Earlier rules read categories of difference (numbers, names, negation, tense, antonyms) and each
attack found the next category; a duplicate costs a little storage, a dropped statement costs what
the user said, so in doubt two texts are two memories.

`canonical` reads a text as the token sequence those allowed differences leave; `difference` says
where two sequences part, or None. Pure functions, no I/O: services/memory/duplicates.py applies
`same_memory` to every comparison (a capture's check, a deduplication, an import's skip_duplicates).
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata

__all__ = ["canonical", "difference", "same_memory"]

# Written forms folded before reading tokens, each of which would otherwise split on its full stops
# or hyphen ("a.m." would leave the article "a").
_SPELLINGS = ((re.compile(r"\ba\.\s?m\.?(?!\w)", re.IGNORECASE), "am"), (re.compile(r"\bp\.\s?m\.?(?!\w)", re.IGNORECASE), "pm"),
              (re.compile(r"\be-mail", re.IGNORECASE), "email"))
# A token: an ordinal ("3rd"); a number with its sign and inner separators kept ("-5", "3.5",
# "3,500", "10:30", "1/2": "3,5" is not "35" and "-5" is not "5"), apart from a word written onto it
# ("3pm", "5km"); a word, apostrophes inside it kept ("don't", "Ana's", "hunter2"); or one other
# character. Of those, symbols (currency, maths, °, and % # @ &) and the question mark (a question is
# not a statement) are tokens; other punctuation only separates.
_TOKEN = re.compile(r"\d+(?:st|nd|rd|th)(?!\w)|(?:(?<!\w)[-+−])?\d+(?:[.,:/]\d+)*|[^\W_]+(?:'[^\W_]+)*|[^\w\s]")
_SIGNS = frozenset("%#@&?")
_ARTICLES = frozenset({"an", "the"})  # and a lower-case "a": "A" inside a sentence may be a grade or a plan


def _listed(words: str) -> list[str]:
    return words.split()


# Contractions that say exactly their expansion. "'s" and "'d" are left as written (is or has, had or
# would), so "He's gone" is not "He is gone".
_NOT = {f"{stem}n't": (stem, "not") for stem in _listed(
    "do does did is are was were have has had would could should must need might")}
_NOT |= {"can't": ("can", "not"), "cannot": ("can", "not"), "won't": ("will", "not"), "shan't": ("shall", "not")}
_PRONOUN = {f"{pronoun}'{short}": (pronoun, full) for pronoun in _listed("i you we they")
            for short, full in (("ve", "have"), ("ll", "will"))}
_PRONOUN |= {"i'm": ("i", "am"), "you're": ("you", "are"), "we're": ("we", "are"), "they're": ("they", "are")}
_PRONOUN |= {f"{modal}'ve": (modal, "have") for modal in _listed("could would should might must")}
_CONTRACTIONS: dict[str, tuple[str, ...]] = {**_NOT, **_PRONOUN}
_AS_WRITTEN = _listed("he's she's it's that's there's here's what's who's where's let's i'd you'd he'd she'd we'd they'd")
# Written without the apostrophe, a contraction is read as one unless that spelling is a word of its own.
_WORDS_NOT_CONTRACTIONS = frozenset(_listed("its lets were well ill id wed shed hell shell"))
_BARE = {c.replace("'", ""): c for c in [*_CONTRACTIONS, *_AS_WRITTEN] if c.replace("'", "") not in _WORDS_NOT_CONTRACTIONS}

# The reviewed equivalents: each word on the left is read as the tokens on the right.
_SPELLED = {w: str(n) for n, w in enumerate(_listed(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty"))}
_SPELLED |= {w: str(10 * n) for n, w in enumerate(_listed("thirty forty fifty sixty seventy eighty ninety"), start=3)}
_SPELLED |= {w: f"{n}{'st' if n == 1 else 'nd' if n == 2 else 'rd' if n == 3 else 'th'}" for n, w in enumerate(
    _listed("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"), start=1)}
_BRITISH = dict(pair.split("/") for pair in _listed("""
colour/color colours/colors favourite/favorite favourites/favorites centre/center theatre/theater
neighbour/neighbor neighbours/neighbors flavour/flavor flavours/flavors organise/organize organised/organized
organising/organizing realise/realize realised/realized apologise/apologize apologised/apologized
grey/gray travelling/traveling travelled/traveled traveller/traveler cancelled/canceled cancelling/canceling
licence/license catalogue/catalog analyse/analyze analysed/analyzed defence/defense programme/program
metre/meter metres/meters litre/liter litres/liters kilometre/kilometer kilometres/kilometers mum/mom
jewellery/jewelry cheque/check tyre/tire tyres/tires pyjamas/pajamas aeroplane/airplane behaviour/behavior
honour/honor labour/labor humour/humor practise/practice enrol/enroll enrolment/enrollment
"""))
_UNITS = dict(pair.split("/") for pair in _listed("""
kilometer/km kilometers/km kilogram/kg kilograms/kg kilos/kg kilo/kg centimeter/cm centimeters/cm
millimeter/mm millimeters/mm hours/hrs hour/hr minutes/mins seconds/secs percent/% okay/ok and/&
"""))
_EQUIVALENTS: dict[str, tuple[str, ...]] = {w: (v,) for w, v in _SPELLED.items()}
_EQUIVALENTS |= {w: (_UNITS.get(_BRITISH.get(w, w), _BRITISH.get(w, w)),) for w in [*_BRITISH, *_UNITS]}
_EQUIVALENTS |= {"hrs": ("hr",)}


@functools.lru_cache(maxsize=4096)  # a deduplication compares each of up to 300 texts with every other
def canonical(text: str) -> tuple[str, ...]:
    """The text as the tokens that remain when every allowed difference is folded away."""
    text = unicodedata.normalize("NFC", text).replace("’", "'").replace("‘", "'")
    for pattern, written in _SPELLINGS:
        text = pattern.sub(written, text)
    tokens: list[str] = []
    for match in _TOKEN.finditer(text):
        word = match.group()
        if len(word) == 1 and not word.isalnum() and not _symbol(word):
            continue
        if word.casefold() in _ARTICLES or word == "a" or (word == "A" and not tokens):
            continue
        tokens.extend(_read(word.casefold()))
    return tuple(tokens)


def _symbol(character: str) -> bool:
    """Currency, maths and other symbols; modifier symbols (` ^) are formatting, not content."""
    return character in _SIGNS or (unicodedata.category(character).startswith("S") and unicodedata.category(character) != "Sk")


def _read(word: str) -> tuple[str, ...]:
    word = _BARE.get(word, word)
    if word in _CONTRACTIONS:
        return _CONTRACTIONS[word]
    return _EQUIVALENTS.get(word, (word,))


def difference(a: str, b: str) -> str | None:
    """Where the two texts part beyond the allowed differences, in words, or None when they do not."""
    left, right = canonical(a), canonical(b)
    if left == right:
        return None
    if sorted(left) == sorted(right):
        return "word order differs"
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=left, b=right, autojunk=False).get_opcodes():
        if tag == "replace":
            return f"words differ: {_said(left[i1:i2])} vs {_said(right[j1:j2])}"
        if tag == "delete":
            return f"only the first says {_said(left[i1:i2])}"
        if tag == "insert":
            return f"only the second says {_said(right[j1:j2])}"
    return "words differ"  # unreachable: unequal sequences have a non-equal opcode


def _said(tokens: tuple[str, ...]) -> str:
    return repr(" ".join(tokens))


def same_memory(a: str, b: str, *, same_hash: bool, cosine: float, threshold: float) -> bool:
    """An exact repeat (the same content hash) always is; otherwise the cosine must reach the
    threshold and every difference be an allowed one."""
    return same_hash or (cosine >= threshold and difference(a, b) is None)
