"""Tokenisation shared by the local index and the scoring code (OpenSearch analyses on its side)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[\w']+", re.UNICODE)
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your", "yours"]
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stopwords, with a light plural/possessive folding: the steps of
    the OpenSearch `mnemo_text` analyzer, in its order (possessive, lower case, stopwords, plural)."""
    tokens = []
    for word in _WORD.findall(text.casefold()):
        word = word.strip("'")
        if word.endswith("'s"):
            word = word[:-2]
        if not word or word in STOPWORDS:  # before the plural fold, as OpenSearch's analyzer: "does" is no "doe"
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        tokens.append(word)
    return tokens


# A transcript's speaker label: one to three capitalised words and a colon at the start ("Caroline: ",
# "Dr. Lee: ", "Zoë: ", "O'Brien: "). Lower-case words after the first ("Title case this: ") make it an
# instruction, not a name; digits ("Episode 1: ") and capitals inside a word ("AI: ") are not names either.
_LABEL = re.compile(r"\s*([^\s:]+(?: [^\s:]+){0,2}):\s")
_NAME_PARTS = re.compile(r"['’-]")


def _name(word: str) -> bool:
    """A capitalised word of letters (any script), maybe joined by apostrophes or hyphens, maybe
    abbreviated ("Dr.")."""
    parts = _NAME_PARTS.split(word.removesuffix("."))
    return all(p[:1].isupper() and p.isalpha() and (len(p) == 1 or p[1:].islower()) for p in parts)


def speaker(text: str) -> str | None:
    """Who the text says is speaking, when it starts with a speaker label."""
    match = _LABEL.match(text)
    return match.group(1) if match and all(map(_name, match.group(1).split(" "))) else None


def answers(previous: str, text: str) -> bool:
    """Whether `text` is another speaker's reply to `previous` (the message just before it): both carry
    a speaker label, and the labels differ. Without labels nothing says who spoke, and one person's
    consecutive messages (a user's turns, the assistant's replies between them not captured) are not
    answers to each other."""
    said, before = speaker(text), speaker(previous)
    return said is not None and before is not None and said != before
