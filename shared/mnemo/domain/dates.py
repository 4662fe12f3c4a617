"""Relative and absolute dates in chat text, resolved against the moment the text was said.

`resolve(text, said, future=...)` finds the first date expression of `text` and gives the local day it
names, counted in `said`'s own offset, never the wall clock: "next Tuesday" said on Thursday 14 March
2024 is 19 March. The conventions (docs/extraction.md "Dates"):
- "next <weekday>" is the first such weekday after the day said, "last <weekday>" the latest before it; a
  bare "<weekday>" / "on <weekday>" / "this <weekday>" is the next one when the text speaks of the future
  (`future=True`), else the last one; a weekday after my/our/the/every/each qualifies a habit ("my Sunday
  rides", "every Friday") and names no day;
- yesterday, today, tonight, this morning, tomorrow, the day after tomorrow; "N days/weeks ago", "in N
  days/weeks" (digits or one..twelve); "the last/past [N, few, couple of] days/weeks/months/years" is the
  period up to the day said (its first day to `resolve`, all of it to `window`); last/next week = 7 days
  back/ahead; this weekend = the coming Saturday (the day said when it is a weekend day);
- "the first/second/third/fourth/last week of <Month> [yyyy]" is those seven days of the month (the
  month in the year given, else the one the tense picks);
- last/next month and "in <Month>" are the month's first day, last/next year and "in/since <yyyy>" the
  year's; "<Month> <d>" and "the 16th" with no year are the next such day (future) or the latest (past);
- Christmas, New Year's Eve / Day and Easter (Gregorian computus), in the year the tense picks.

Pure functions, no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_NUMBERS = {w: i for i, w in enumerate(("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                                        "eleven", "twelve"), start=1)} | {"a": 1}
_MONTH = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_COUNT = r"(?P<n>\d{1,3}|" + "|".join(_NUMBERS) + r")"
_WD = r"(?P<wd>mon|tues|wednes|thurs|fri|satur|sun)day"
_PERIOD = r"(?P<n>\d{1,3}|" + "|".join(w for w in _NUMBERS if w != "a") + r"|few|couple of)"
_WEEK_OF = ("first", "second", "third", "fourth", "last")

# (pattern, kind): the first pattern that matches earliest in the text wins.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(src, re.IGNORECASE), kind) for src, kind in (
    (r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b", "iso"),
    (rf"\b{_DAY} (?:of )?{_MONTH},? {_YEAR}\b", "dmy"),
    (rf"\b{_MONTH} {_DAY},? {_YEAR}\b", "dmy"),
    (rf"\b{_MONTH},? {_YEAR}\b", "my"),
    (rf"\b{_DAY} (?:of )?{_MONTH}\b", "dm"),
    (rf"\b{_MONTH} {_DAY}\b(?!:)", "dm"),
    (r"\bthe day after tomorrow\b", "+2"),
    (r"\bthe day before yesterday\b", "-2"),
    (r"\btomorrow\b", "+1"),
    (r"\byesterday\b|\blast night\b", "-1"),
    (r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", "0"),
    (rf"\bthe (?P<nth>{'|'.join(_WEEK_OF)}) week of {_MONTH}(?:,? {_YEAR})?\b", "week of"),
    # "in the last month", "over the past two weeks": the period up to the day said, not a calendar one.
    (rf"\bthe (?:last|past) (?:{_PERIOD} )?(?P<unit>day|week|month|year)s?\b(?! of\b)", "trail"),
    (rf"\b{_COUNT} (?P<unit>day|week|month|year)s? ago\b", "ago"),
    (rf"\bin {_COUNT} (?P<unit>day|week)s?\b(?! ago)", "in"),  # not "participated in a week ago"
    (r"\b(?P<rel>last|next) (?P<unit>week|month|year)\b", "rel"),
    (r"\bthis weekend\b", "weekend"),
    (rf"\b(?P<rel>next|last|this|on|coming) {_WD}\b", "wd"),
    # A bare weekday, not one that qualifies a habit ("my Sunday group rides", "every Friday").
    (rf"(?<!\bmy )(?<!\bour )(?<!\bthe )(?<!\bevery )(?<!\beach )\b{_WD}\b(?!s)", "wd"),
    (r"\bon the (?P<day>[0-3]?\d)(?:st|nd|rd|th)\b", "dom"),
    (rf"\b(?:in|since|from|until|by) {_YEAR}\b", "y"),
    (rf"\bin {_MONTH}\b(?! \d)", "m"),
    (r"\b(?P<holiday>christmas(?: eve| day)?|new year'?s (?:eve|day)|easter)\b", "holiday"),
))


def _easter(year: int) -> date:
    """Gregorian Easter Sunday (the anonymous computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l_) // 451
    month = (h + l_ - 7 * m + 114) // 31
    return date(year, month, (h + l_ - 7 * m + 114) % 31 + 1)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.casefold()[:3]))


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[text.casefold()]


def _period(text: str | None) -> int:
    """How many units "the last/past N <unit>s" spans: one without N, three for "few", two for "couple of"."""
    if not text:
        return 1
    return {"few": 3, "couple of": 2}.get(text.casefold()) or _count(text)


def _same_day(first: date, day: int) -> date:
    """`day` of `first`'s month, or its last day when the month is shorter."""
    following = _shift_month(first, 1)
    return min(first.replace(day=1) + timedelta(days=day - 1), following - timedelta(days=1))


def _shift_month(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _safe(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _nearest(today: date, make: Callable[[int], date | None], future: bool) -> date | None:
    """The day `make(year)` gives in this year or the next (future) / the previous (past) one."""
    this = make(today.year)
    if this is None:
        return None
    if future:
        return this if this >= today else make(today.year + 1)
    return this if this <= today else make(today.year - 1)


def _resolve(match: re.Match[str], kind: str, today: date, future: bool) -> date | None:
    g = match.groupdict()
    if kind == "iso":
        return _safe(int(g["y"]), int(g["m"]), int(g["d"]))
    if kind == "dmy":
        return _safe(int(g["year"]), _month(g["month"]), int(g["day"]))
    if kind == "my":
        return date(int(g["year"]), _month(g["month"]), 1)
    if kind == "dm":
        month, day = _month(g["month"]), int(g["day"])
        return _nearest(today, lambda y: _safe(y, month, day), future)
    if kind == "week of":  # the week's first day: the 1st, 8th, 15th, 22nd, or seven days before the month ends
        month, nth = _month(g["month"]), _WEEK_OF.index(g["nth"].casefold())
        first = date(int(g["year"]), month, 1) if g["year"] else _nearest(today, lambda y: date(y, month, 1), future)
        if first is None:
            return None
        return first + timedelta(days=7 * nth) if nth < 4 else _shift_month(first, 1) - timedelta(days=7)
    if kind in ("+2", "-2", "+1", "-1", "0"):
        return today + timedelta(days=int(kind))
    if kind == "trail":  # the period's first day
        n, unit = _period(g["n"]), g["unit"].casefold()
        if unit in ("day", "week"):
            return today - timedelta(days=n * (7 if unit == "week" else 1))
        return _same_day(_shift_month(today, -n if unit == "month" else -12 * n), today.day)
    if kind in ("ago", "in"):
        n, unit = _count(g["n"]), g["unit"].casefold()
        sign = -1 if kind == "ago" else 1
        if unit in ("day", "week"):
            return today + timedelta(days=sign * n * (7 if unit == "week" else 1))
        if unit == "month":
            return _shift_month(today, sign * n)
        return date(today.year + sign * n, 1, 1)
    if kind == "rel":
        sign = 1 if g["rel"].casefold() == "next" else -1
        unit = g["unit"].casefold()
        if unit == "week":
            return today + timedelta(days=7 * sign)
        if unit == "month":
            return _shift_month(today, sign)
        return date(today.year + sign, 1, 1)
    if kind == "weekend":
        return today if today.weekday() >= 5 else today + timedelta(days=5 - today.weekday())
    if kind == "wd":
        target = next(i for i, w in enumerate(_WEEKDAYS) if w.startswith(g["wd"].casefold()))
        rel = (g.get("rel") or "").casefold()
        ahead = rel in ("next", "coming") or (rel != "last" and future)
        if ahead:
            return today + timedelta(days=(target - today.weekday() - 1) % 7 + 1)
        return today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)
    if kind == "dom":
        day, this = int(g["day"]), _safe(today.year, today.month, int(g["day"]))
        if this and (this >= today if future else this <= today):
            return this
        other = _shift_month(today, 1 if future else -1)
        return _safe(other.year, other.month, day)
    if kind == "y":
        return date(int(g["year"]), 1, 1)
    if kind == "m":
        month = _month(g["month"])
        return _nearest(today, lambda y: date(y, month, 1), future)
    if kind == "holiday":
        name = g["holiday"].casefold().replace("'", "")
        if name.startswith("easter"):
            return _nearest(today, _easter, future)
        if name.startswith("christmas"):
            day = 24 if name.endswith("eve") else 25
            return _nearest(today, lambda y: date(y, 12, day), future)
        if name.endswith("eve"):
            return _nearest(today, lambda y: date(y, 12, 31), future)
        return _nearest(today, lambda y: date(y, 1, 1), future)
    return None


def _first(text: str) -> tuple[re.Match[str], str] | None:
    """The earliest date expression of `text` and its kind."""
    best: tuple[re.Match[str], str] | None = None
    for pattern, kind in _PATTERNS:
        m = pattern.search(text)
        if m and (best is None or m.start() < best[0].start()):
            best = (m, kind)
    return best


def find(text: str, said: datetime, *, future: bool) -> tuple[date, tuple[int, int]] | None:
    """The day the first date expression of `text` names and that expression's span; None without one."""
    first = _first(text)
    if first is None:
        return None
    day = _resolve(first[0], first[1], said.date(), future)  # `said` in its own offset: the day the speaker lived
    return (day, first[0].span()) if day else None


def window(text: str, said: datetime, *, future: bool) -> tuple[date, date] | None:
    """The days (first, last) the first date expression of `text` covers: a month for "last month" or
    "in May 2023", a year for "last year", the week around the day for "a week ago" or "last week"
    (said loosely), the weekend for "this weekend", else the one day; None without one."""
    first = _first(text)
    if first is None:
        return None
    match, kind = first
    day = _resolve(match, kind, said.date(), future)
    if day is None:
        return None
    unit = (match.groupdict().get("unit") or "").casefold()
    if kind == "trail":
        return day, said.date()
    if kind in ("my", "m") or unit == "month":
        return day, _shift_month(day, 1) - timedelta(days=1)
    if kind == "y" or unit == "year":
        return day, date(day.year, 12, 31)
    if unit == "week":
        return day - timedelta(days=3), day + timedelta(days=3)
    if kind == "weekend":
        return day, day + timedelta(days=6 - day.weekday())
    if kind == "week of":
        return day, day + timedelta(days=6)
    return day, day


def resolve(text: str, said: datetime, *, future: bool) -> datetime | None:
    """`find`'s day as local midnight in `said`'s offset, the `valid_at` of a fact; None without a date."""
    found = find(text, said, future=future)
    if found is None:
        return None
    day = found[0]
    return datetime(day.year, day.month, day.day, tzinfo=said.tzinfo)


_LEAD = re.compile(r"(?:\b(?:on|in|at|by|since|for|from|until|during|of)\s+)?$", re.IGNORECASE)


def strip(text: str) -> str:
    """`text` without its date expressions (and the preposition before each): "I visited Kyoto last week"
    -> "I visited Kyoto", so a date never ends up inside a fact's object."""
    for _ in range(4):
        spans = [m.span() for pattern, _ in _PATTERNS if (m := pattern.search(text))]
        if not spans:
            break
        start, end = min(spans, key=lambda span: (span[0], -span[1]))  # the earliest, then the longest
        lead = _LEAD.search(text, 0, start)
        cut = lead.start() if lead else start
        text = f"{text[:cut]} {text[end:]}"
    return " ".join(text.split()).strip(" ,")
