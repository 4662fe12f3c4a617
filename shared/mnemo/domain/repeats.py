"""Repeats in a ranking: a hit that says again what a better-placed hit already says is moved down.

Conversations restate: "we're planning the kitchen renovation" comes back in three sessions, each
turn scoring like the first. A question whose evidence lies in several places ("how many times...",
"what changed between...") then finds the same piece three times in its first five and misses the
others. So a hit whose words overlap a better-placed hit's by more than `REPEAT_OVERLAP` (Jaccard of
the tokenised texts) loses part of its score, the more the closer the repeat (all of it from
`REPEAT_ALL` on), and the list is sorted again. Nothing is dropped, and two texts that differ in a
number, date, name, identifier, negation, tense or opposite are never repeats of each other (the
dedup rule's `duplicates.difference`): "Monday 3pm" and "Tuesday 3pm" both keep their places.
The ablation behind the constants: docs/scoring.md "Repeats". Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mnemo.domain.distinctions import difference
from mnemo.domain.scoring import Ranked, clamp01
from mnemo.domain.text import tokenize

# Jaccard overlap above which a lower hit counts as a repeat, and the overlap at which it loses all of
# its score (linear between): the middle of the plateau the ablation found (docs/scoring.md "Repeats").
REPEAT_OVERLAP = 0.4
REPEAT_ALL = 0.7


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two token sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def repeat_penalty(similarity: float) -> float:
    """The share of its score a repeat loses: none at `REPEAT_OVERLAP`, all of it from `REPEAT_ALL` on."""
    return clamp01((similarity - REPEAT_OVERLAP) / (REPEAT_ALL - REPEAT_OVERLAP))


def demote_repeats(hits: Sequence[Ranked], texts: Mapping[str, str], window: int) -> list[Ranked]:
    """`hits` (best first) with each of the first `window` that repeats a better-placed one lowered,
    then sorted again (ties keep the given order). `texts`: memory id -> the text its words are read
    from. A demoted hit carries the `repeat` component: how much its score fell (negative)."""
    head = list(hits[:window])
    words = [frozenset(tokenize(texts.get(h.memory_id, ""))) for h in head]
    lowered: list[Ranked] = []
    for i, hit in enumerate(head):
        similarity = max(
            (s for j in range(i) if (s := overlap(words[i], words[j])) > REPEAT_OVERLAP
             and difference(texts[head[j].memory_id], texts[hit.memory_id]) is None),
            default=0.0,
        )
        penalty = repeat_penalty(similarity)
        if penalty > 0:
            new = clamp01(hit.score * (1.0 - penalty))
            hit = Ranked(hit.memory_id, new, {**hit.components, "repeat": new - hit.score})
        lowered.append(hit)
    ranked = lowered + list(hits[window:])
    order = sorted(range(len(ranked)), key=lambda i: (-ranked[i].score, i))
    return [ranked[i] for i in order]
