"""Tokenisation shared by the local index and the scoring code (OpenSearch analyses on its side)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[\w']+", re.UNICODE)
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your", "yours"]
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stopwords, with a light plural/possessive folding."""
    tokens = []
    for word in _WORD.findall(text.casefold()):
        word = word.strip("'")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if word and word not in STOPWORDS:
            tokens.append(word)
    return tokens
