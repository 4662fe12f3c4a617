"""The repeat demotion (mnemo/domain/repeats.py): a hit that restates a better-placed one moves down,
unless the two differ in a number, date, name, negation, tense or opposite; nothing is dropped."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnemo.domain.repeats import REPEAT_ALL, REPEAT_OVERLAP, demote_repeats, overlap, repeat_penalty
from mnemo.domain.scoring import RECIPES, Ranked
from mnemo.domain.text import tokenize

PLAN = "We are planning the kitchen renovation with the contractor for spring"
AGAIN = "we are planning the kitchen renovation with our contractor for spring"
BUDGET = "The contractor quoted the cabinets and the countertop install"


def hits(*texts: str, start: float = 0.9, step: float = 0.05) -> tuple[list[Ranked], dict[str, str]]:
    ranked = [Ranked(f"m{i}", round(start - i * step, 6), {"raw": 0.5}) for i in range(len(texts))]
    return ranked, {h.memory_id: t for h, t in zip(ranked, texts, strict=True)}


def order(ranked: list[Ranked]) -> list[str]:
    return [h.memory_id for h in ranked]


def test_a_restatement_moves_below_a_distinct_hit_and_says_by_how_much() -> None:
    ranked, texts = hits(PLAN, AGAIN, BUDGET)
    out = demote_repeats(ranked, texts, window=10)
    assert order(out) == ["m0", "m2", "m1"]
    again = next(h for h in out if h.memory_id == "m1")
    similarity = overlap(frozenset(tokenize(PLAN)), frozenset(tokenize(AGAIN)))
    assert similarity > 0.9
    assert again.score == pytest.approx(0.85 * (1 - repeat_penalty(similarity)))
    assert again.components == {"raw": 0.5, "repeat": pytest.approx(again.score - 0.85)}
    assert out[0] == ranked[0] and out[1] == ranked[2]  # the others are untouched


def test_the_first_of_the_two_keeps_its_place_whichever_text_it_has() -> None:
    ranked, texts = hits(AGAIN, PLAN, BUDGET)
    assert order(demote_repeats(ranked, texts, window=10)) == ["m0", "m2", "m1"]


@pytest.mark.parametrize(("better", "lower"), [
    ("Dentist appointment on Monday at 3pm downtown", "Dentist appointment on Tuesday at 3pm downtown"),
    ("I am allergic to peanuts and to shellfish", "I am not allergic to peanuts and to shellfish"),
    ("Ana is my manager at the Lisbon office", "Ana was my manager at the Lisbon office"),
    ("The staging database password is hunter2 for now", "The staging database password is hunter3 for now"),
    ("We booked a table for 4 people at the harbour restaurant", "We booked a table for 6 people at the harbour restaurant"),
    ("Dinner with Ana at the harbour restaurant on the terrace", "Dinner with Bea at the harbour restaurant on the terrace"),
])
def test_texts_that_differ_in_what_they_state_are_not_repeats(better: str, lower: str) -> None:
    ranked, texts = hits(better, lower, BUDGET)
    assert overlap(frozenset(tokenize(better)), frozenset(tokenize(lower))) > REPEAT_OVERLAP  # the words overlap
    assert demote_repeats(ranked, texts, window=10) == ranked  # and still both stay
    control, same = hits(better, better.replace(" the ", " our ", 1) if " the " in better else better, BUDGET)
    assert order(demote_repeats(control, same, window=10)) == ["m0", "m2", "m1"]  # the same statement again moves


def test_hits_sharing_some_words_are_left_alone() -> None:
    ranked, texts = hits(PLAN, "The kitchen tiles arrived from the supplier in Porto", BUDGET)
    assert overlap(frozenset(tokenize(PLAN)), frozenset(tokenize(texts["m1"]))) <= REPEAT_OVERLAP
    assert demote_repeats(ranked, texts, window=10) == ranked


def test_only_the_window_is_read_and_nothing_beyond_it_is_lost() -> None:
    ranked, texts = hits(PLAN, BUDGET, "A third unrelated note about the garden shed", AGAIN)
    assert demote_repeats(ranked, texts, window=3) == ranked  # the repeat lies outside the window
    widened = demote_repeats(ranked, texts, window=4)
    assert order(widened) == ["m0", "m1", "m2", "m3"] and widened[3].components["repeat"] < 0
    ranked, texts = hits(PLAN, AGAIN, BUDGET, "A third unrelated note about the garden shed", step=0.01)
    assert order(demote_repeats(ranked, texts, window=2)) == ["m0", "m2", "m3", "m1"]  # sorted past the window


def test_the_penalty_grows_from_nothing_at_the_bar_to_everything_at_a_near_copy() -> None:
    assert repeat_penalty(REPEAT_OVERLAP) == 0.0 and repeat_penalty(0.1) == 0.0
    assert repeat_penalty(REPEAT_ALL) == 1.0 and repeat_penalty(1.0) == 1.0
    assert 0 < repeat_penalty(0.5) < repeat_penalty(0.6) < 1
    assert overlap(frozenset(), frozenset({"kitchen"})) == 0.0


def test_only_the_full_recipe_demotes() -> None:
    assert RECIPES["full"].repeats and not RECIPES["fast"].repeats


WORDS = ["kitchen", "renovation", "contractor", "spring", "budget", "garden", "tiles", "Monday", "not", "3pm"]


@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=6), min_size=0, max_size=12),
       st.integers(min_value=0, max_value=14))
def test_a_permutation_that_only_lowers_scores_and_keeps_the_best_hit_first(texts: list[list[str]], window: int) -> None:
    ranked, by_id = hits(*(" ".join(t) for t in texts), step=0.03)
    out = demote_repeats(ranked, by_id, window=window)
    assert sorted(order(out)) == sorted(order(ranked))  # nothing dropped, nothing added
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    before = {h.memory_id: h for h in ranked}
    for h in out:
        assert h.score <= before[h.memory_id].score
        assert ("repeat" in h.components) == (h.score < before[h.memory_id].score)
    if ranked and window:
        assert out[0] == ranked[0]
