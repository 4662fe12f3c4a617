"""Predicate classes and synonyms: which facts replace each other, and which accumulate.

A new fact retires an older one only when both have the same subject and the same *single-valued*
predicate and their objects differ ("Alice lives in Berlin" then "Alice lives in Lisbon"). Every
other predicate is multi-valued: "likes", "visited", "knows" accumulate. Predicates are normalised
through the synonym table first ("moved to" and "relocated to" mean "lives in"), so the rule sees one
predicate for one relation. Operators extend both tables through settings (docs/facts.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from mnemo.domain.graph import canonical_predicate

# A person or thing has one value of these at a time (at event time).
SINGLE_VALUED: frozenset[str] = frozenset({
    "lives in", "works at", "is married to", "prefers", "deadline is", "is located in", "is ceo of",
    "reports to", "is dating", "is engaged to", "age is", "status is",
})  # deliberately small: a wrongly single-valued predicate retires true facts (over-invalidation)
# Other wordings of a relation -> the predicate the rule compares (all in canonical form).
SYNONYMS: dict[str, str] = {
    "moved to": "lives in", "moves to": "lives in", "relocated to": "lives in", "resides in": "lives in",
    "lives at": "lives in", "is based in": "lives in", "is living in": "lives in", "lived in": "lives in",
    "joined": "works at", "works for": "works at", "is employed by": "works at", "is employed at": "works at",
    "started at": "works at", "worked at": "works at", "worked for": "works at", "is working at": "works at",
    "married": "is married to", "got married to": "is married to", "is the wife of": "is married to",
    "is the husband of": "is married to", "is the spouse of": "is married to",
    "deadline": "deadline is", "is due": "deadline is", "is due on": "deadline is",
    "prefer": "prefers", "likes best": "prefers", "favours": "prefers", "favors": "prefers",
    "like": "likes", "loves": "likes", "love": "likes", "enjoys": "likes", "enjoy": "likes",
    "visit": "visited", "went to": "visited", "travelled to": "visited", "traveled to": "visited",
    "know": "knows", "met": "knows", "works alongside": "works with", "collaborates with": "works with",
}


def _parse_list(text: str) -> list[str]:
    return [canonical_predicate(p) for p in text.split(",") if p.strip()]


def _parse_map(text: str) -> dict[str, str]:
    """`"moved into=lives in; hired by=works at"` -> {"moved into": "lives in", ...}."""
    pairs = [item.split("=", 1) for item in text.split(";") if item.strip()]
    bad = [item for item in pairs if len(item) != 2 or not item[0].strip() or not item[1].strip()]
    if bad:
        raise ValueError(f"predicate synonyms: expected 'wording=predicate; ...', got {'='.join(bad[0])!r}")
    return {canonical_predicate(k): canonical_predicate(v) for k, v in pairs}


@dataclass(frozen=True)
class PredicateTable:
    """The synonym table and the single-valued class, with the operator's extensions merged in."""

    single_valued: frozenset[str] = SINGLE_VALUED
    synonyms: Mapping[str, str] = field(default_factory=lambda: dict(SYNONYMS))

    @classmethod
    def extended(cls, single_valued: Iterable[str] | str = (), synonyms: Mapping[str, str] | str = "",
                 multi_valued: Iterable[str] | str = ()) -> PredicateTable:
        """The defaults plus an operator's additions (strings are the settings' text forms:
        `"owns, drives"` and `"moved into=lives in; hired by=works at"`); `multi_valued` removes a
        default single-valued predicate."""
        single = _parse_list(single_valued) if isinstance(single_valued, str) else [canonical_predicate(p) for p in single_valued]
        multi = _parse_list(multi_valued) if isinstance(multi_valued, str) else [canonical_predicate(p) for p in multi_valued]
        extra = _parse_map(synonyms) if isinstance(synonyms, str) else {canonical_predicate(k): canonical_predicate(v)
                                                                         for k, v in synonyms.items()}
        return cls(single_valued=(SINGLE_VALUED | set(single)) - set(multi), synonyms={**SYNONYMS, **extra})

    def normalize(self, predicate: str) -> str:
        """Canonical form (`lives_in` -> `lives in`), then the synonym it stands for, if any."""
        canonical = canonical_predicate(predicate)
        return self.synonyms.get(canonical, canonical)

    def is_single_valued(self, predicate: str) -> bool:
        return self.normalize(predicate) in self.single_valued
