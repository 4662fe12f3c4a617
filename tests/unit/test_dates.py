"""Relative dates resolve against the moment said, in its own offset, never the wall clock (issue 29)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from mnemo.domain.dates import find, resolve, strip, window
from mnemo.domain.query import focus

THU = datetime.fromisoformat("2024-03-14T18:30:00+01:00")  # Thursday 14 March 2024


@pytest.mark.parametrize(("text", "future", "day"), [
    ("next Tuesday", True, date(2024, 3, 19)),  # the example
    ("next Friday", True, date(2024, 3, 15)),  # the first Friday after the day said
    ("last Tuesday", False, date(2024, 3, 12)),
    ("last Thursday", False, date(2024, 3, 7)),  # the latest before, never the day itself
    ("on Saturday", True, date(2024, 3, 16)),
    ("on Monday", False, date(2024, 3, 11)),  # a past tense picks the last one
    ("yesterday", False, date(2024, 3, 13)),
    ("tomorrow", True, date(2024, 3, 15)),
    ("the day after tomorrow", True, date(2024, 3, 16)),
    ("last week", False, date(2024, 3, 7)),
    ("next week", True, date(2024, 3, 21)),
    ("in two days", True, date(2024, 3, 16)),
    ("three weeks ago", False, date(2024, 2, 22)),
    ("next month", True, date(2024, 4, 1)),
    ("last year", False, date(2023, 1, 1)),
    ("in August", True, date(2024, 8, 1)),
    ("in February", True, date(2025, 2, 1)),  # the next February
    ("on December 28th", False, date(2023, 12, 28)),
    ("on the 16th", True, date(2024, 3, 16)),
    ("on 4 May 2021", False, date(2021, 5, 4)),
    ("in March 2019", False, date(2019, 3, 1)),
    ("since 2019", False, date(2019, 1, 1)),
    ("for Easter", True, date(2024, 3, 31)),
    ("this weekend", True, date(2024, 3, 16)),
])
def test_a_date_expression_names_one_day(text: str, future: bool, day: date) -> None:
    found = find(f"I will see her {text}.", THU, future=future)
    assert found is not None and found[0] == day


def test_the_day_is_counted_in_the_offset_said_not_in_utc() -> None:
    late = datetime.fromisoformat("2024-05-31T22:30:00-07:00")  # already Saturday 1 June in UTC
    assert resolve("tomorrow", late, future=True) == datetime.fromisoformat("2024-06-01T00:00:00-07:00")
    assert find("tomorrow", late.astimezone(UTC), future=True) == (date(2024, 6, 2), (0, 8))  # the same moment read in UTC


def test_no_date_is_none_and_strip_removes_the_date_words() -> None:
    assert find("I love Thai food.", THU, future=True) is None
    assert strip("I visited Kyoto last week") == "I visited Kyoto"
    assert strip("I attended the Web Summit on 13 November 2023") == "I attended the Web Summit"
    assert strip("I am flying to Lisbon next Friday") == "I am flying to Lisbon"


@pytest.mark.parametrize(("text", "days"), [
    ("last month", (date(2024, 2, 1), date(2024, 2, 29))),  # a month: every day of it
    ("two months ago", (date(2024, 1, 1), date(2024, 1, 31))),
    ("in May 2023", (date(2023, 5, 1), date(2023, 5, 31))),
    ("last year", (date(2023, 1, 1), date(2023, 12, 31))),
    ("since 2019", (date(2019, 1, 1), date(2019, 12, 31))),
    ("a week ago", (date(2024, 3, 4), date(2024, 3, 10))),  # said loosely: the days around 7 March
    ("last week", (date(2024, 3, 4), date(2024, 3, 10))),
    ("this weekend", (date(2024, 3, 16), date(2024, 3, 17))),
    ("three days ago", (date(2024, 3, 11), date(2024, 3, 11))),  # a day: that day
    ("on October 13, 2023", (date(2023, 10, 13), date(2023, 10, 13))),
    # A trailing period runs up to the day said; "last month" alone is the calendar month (above).
    ("in the last month", (date(2024, 2, 14), date(2024, 3, 14))),
    ("over the past two weeks", (date(2024, 2, 29), date(2024, 3, 14))),
    ("in the past few days", (date(2024, 3, 11), date(2024, 3, 14))),
    ("the past 10 days", (date(2024, 3, 4), date(2024, 3, 14))),
    ("in the last year", (date(2023, 3, 14), date(2024, 3, 14))),
])
def test_a_window_covers_the_days_the_expression_names(text: str, days: tuple[date, date]) -> None:
    assert window(f"What did I do {text}?", THU, future=False) == days


def test_in_before_a_date_that_is_ago_does_not_make_it_the_future() -> None:
    """"participated in a week ago" is a week ago; "in a week" alone is a week ahead."""
    past, ahead = "the event I participated in a week ago", "the event I am going to in a week"
    assert find(past, THU, future=False) == (date(2024, 3, 7), (past.index("a week ago"), len(past)))
    assert find(ahead, THU, future=True) == (date(2024, 3, 21), (ahead.index("in a week"), len(ahead)))
    assert window("I love Thai food.", THU, future=False) is None


def test_a_search_focuses_on_past_days_only() -> None:
    """A question's days are read as the past against `now`; days that start after it ("this weekend"
    asked on a Thursday) name plans, which no memory was captured in, so they are no focus."""
    assert focus("Where did I eat last week?", THU) == (date(2024, 3, 4), date(2024, 3, 10))
    assert focus("What did I do yesterday?", THU) == (date(2024, 3, 13),) * 2
    assert focus("What should I cook this weekend?", THU) is None
    assert window("What should I cook this weekend?", THU, future=False) == (date(2024, 3, 16), date(2024, 3, 17))
    assert focus("What should I cook for dinner?", THU) is None


def test_a_trailing_period_ends_in_a_shorter_month_and_is_not_a_week_of_a_month() -> None:
    march_31 = datetime.fromisoformat("2024-03-31T09:00:00+00:00")
    assert window("What did I buy in the past month?", march_31, future=False) == (date(2024, 2, 29), date(2024, 3, 31))
    said = "I have run every day for the past week."
    span = (said.index("the past week"), said.index("."))
    assert find(said, THU, future=False) == (date(2024, 3, 7), span)  # to `resolve`: the period's first day
    # "the last week of May" names no trailing period, and not last week: May's last seven days
    assert window("What did I do the last week of May?", THU, future=False) == (date(2023, 5, 25), date(2023, 5, 31))


@pytest.mark.parametrize(("text", "future", "days"), [
    ("during the first week of March", False, (date(2024, 3, 1), date(2024, 3, 7))),
    ("the second week of March", False, (date(2024, 3, 8), date(2024, 3, 14))),
    ("in the third week of May 2023", False, (date(2023, 5, 15), date(2023, 5, 21))),
    ("the fourth week of February", False, (date(2024, 2, 22), date(2024, 2, 28))),
    ("the last week of February", False, (date(2024, 2, 23), date(2024, 2, 29))),  # a leap year's
    ("the last week of May", True, (date(2024, 5, 25), date(2024, 5, 31))),  # the tense picks the year
    ("the first week of March", True, (date(2025, 3, 1), date(2025, 3, 7))),
])
def test_a_week_of_a_month_is_those_seven_days(text: str, future: bool, days: tuple[date, date]) -> None:
    said = f"I was in Lisbon {text} with Ana"
    assert window(said, THU, future=future) == days
    assert find(said, THU, future=future) == (days[0], (said.index("the"), said.index(" with")))
    assert strip(said) == "I was in Lisbon with Ana"


def test_a_weekday_that_qualifies_a_habit_names_no_day() -> None:
    """"my Sunday group rides" is a habit, not last Sunday; "on Sunday" and a bare "Sunday" are days."""
    for habit in ("How are my Sunday group rides going?", "I swim every Friday.", "Our Monday standups run long.",
                  "The Tuesday market was busy.", "Each Saturday I call my mother."):
        assert find(habit, THU, future=False) is None, habit
    assert find("I rode with the group on Sunday.", THU, future=False)[0] == date(2024, 3, 10)
    assert find("I rode with the group Sunday.", THU, future=False)[0] == date(2024, 3, 10)
