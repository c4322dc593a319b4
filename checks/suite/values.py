"""Dates and clock times, read one way wherever they are written.

A tool records ``"2024-05-19"``, ``"22:00:00"``; a person writes "Sunday, May 19th, 2024",
"5/19/2024" or "10 p.m.". Both are read into ``DateValue`` and ``TimeValue`` spans (a
``value.Value``; ``durations`` adds lengths), so a notation read on one side is read on the other.

- **Vocabularies and notations are data**: the tables below, each notation with the spellings it reads.
- **A value that may mean two things carries the keys of both**: "05/06/2024" is both
  days; "5:00" with no half-day mark is both 05:00 and 17:00.
- **A part left unsaid is not a part that differs**: "May 19" carries the month and day a
  date of any year carries; a full date is looked up under its day and under "May 19 of an
  unsaid year" (``lookups()``), so two years written must agree. Seconds are not compared.
- **A member's name may say what its number is**: seconds (or ms) since 1970 under a
  member named for an instant (``starts_at``) are a date and a time in UTC.
- **A range is its two ends**, an ISO 8601 interval's too ("2024-05-19/2024-05-23"), and where
  the first end is none ("Mar 15 — 7:45 AM": no hour 15 starts a range), the second is still a
  time; a weekday, an ordinal suffix, a zone and a next-day mark ("+1", kept as ``day_offset``)
  are no part of a value.

Not read: a two-digit year after dots ("1.2.24" is more often a version), a date glued to
letters, digits or other separators (a part of an identifier or a path).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import lru_cache
from typing import ClassVar

from .durations import KEY_PREFIX as DURATION_KEY
from .durations import DurationValue, duration_key, read_durations
from .text import alternation

_MONTHS = "january february march april may june july august september october november december"
# Each month's name and its first three letters ("sept" too), with its number.
MONTH_NAMES = {name: n for n, month in enumerate(_MONTHS.split(), 1) for name in (month, month[:3])}
MONTH_NAMES["sept"] = 9
MONTH_WORDS = frozenset(["may", "march"])  # also common words ("you may"): read only capitalised
# The days of the week as ``date.weekday()`` counts them, then their abbreviations.
WEEKDAYS = tuple("monday tuesday wednesday thursday friday saturday sunday".split())
WEEKDAY_NAMES = WEEKDAYS + tuple("mon tues tue wed thurs thur thu fri sat sun".split())
# Each spelling of a half-day mark, and what it says of the hour before it.
HALF_DAY_MARKS = {f"{half[0]}{dots}": half for half in ("am", "pm") for dots in ("m", ".m.", ".m", ". m.")}
HALF_DAY_MARKS |= {"noon": "noon", "midnight": "midnight"}

_PLAIN_MONTHS = alternation(name for name in MONTH_NAMES if name not in MONTH_WORDS)
_WORDED_MONTHS = "|".join(f"{name.capitalize()}|{name.upper()}" for name in MONTH_WORDS)
_MONTH = rf"(?:(?i:{_PLAIN_MONTHS})\.?|(?-i:{_WORDED_MONTHS}))"
_WEEKDAY = rf"(?:{alternation(WEEKDAY_NAMES)})\.?"
_ORDINAL = "(?:st|nd|rd|th)"
_DIGIT = "[0-9]"  # not \d: other scripts' digits are no part of a date here

# Each key starts with its kind and a space, which no token holds: no key equals a value as written.
KEY_PREFIXES = ("date ", "time ", DURATION_KEY)


def is_value_key(form: str) -> bool:
    return form.startswith(KEY_PREFIXES)


def day_of_key(key: str) -> date | None:
    try:
        return date.fromisoformat(key[5:]) if key.startswith("date ") else None
    except ValueError:  # a month and day, the year unsaid or any
        return None


def _valid(year: int | None, month: int, day: int) -> bool:
    """Whether a date is one; the calendar is asked only past the 28th (2024 has a 29 February)."""
    try:
        return 1 <= month <= 12 and 1 <= day <= 28 or bool(date(2024 if year is None else year, month, day))
    except ValueError:
        return False


@dataclass(frozen=True)
class DateValue:
    """A date as written: its span, and each (year, month, day) it may be (the year may be unsaid)."""

    kind: ClassVar[str] = "date"
    readings: tuple[tuple[int | None, int, int], ...]
    start: int
    end: int

    @property
    def canonical(self) -> str | None:
        """ISO 8601 (``2024-05-19``, or ``--05-19`` with no year); None when ambiguous."""
        if len(self.readings) != 1:
            return None
        year, month, day = self.readings[0]
        return f"--{month:02d}-{day:02d}" if year is None else f"{year:04d}-{month:02d}-{day:02d}"

    def dates(self) -> list[date]:
        return [date(y, m, d) for y, m, d in self.readings if y is not None]

    def keys(self) -> list[str]:
        """Its day (the year may be unsaid), and the month and day a date of any year carries."""
        out: list[str] = []
        for year, month, day in self.readings:
            md = f"{month:02d}-{day:02d}"
            out += [f"date --{md}" if year is None else f"date {year:04d}-{md}", f"date md {md}"]
        return list(dict.fromkeys(out))

    def lookups(self) -> list[str]:
        """A full date is its day or its day with the year unsaid; a date with no year, any year's."""
        out: list[str] = []
        for year, month, day in self.readings:
            md = f"{month:02d}-{day:02d}"
            out += [f"date md {md}"] if year is None else [f"date {year:04d}-{md}", f"date --{md}"]
        return list(dict.fromkeys(out))


@dataclass(frozen=True)
class TimeValue:
    """A clock time as written, and whether its half of the day is open ("5:00": 05:00 or 17:00)."""

    kind: ClassVar[str] = "time"
    hour: int
    minute: int
    second: int | None
    start: int
    end: int
    open_half: bool = False
    day_offset: int = 0  # a next-day mark's days ("03:00:00+1": 1); no part of the time
    also: tuple[str, ...] = ()  # the keys of another reading of the same writing ("2200 hrs")

    @property
    def canonical(self) -> str | None:
        return None if self.open_half else f"{self.hour:02d}:{self.minute:02d}"

    def minutes(self) -> list[int]:
        """Each reading's minutes after midnight: in both halves of the day where its half is open."""
        hours = (self.hour, self.hour + 12) if self.open_half else (self.hour,)
        return [hour * 60 + self.minute for hour in hours]

    def keys(self) -> list[str]:
        return [f"time {m // 60:02d}:{m % 60:02d}" for m in self.minutes()] + list(self.also)

    lookups = keys


@dataclass(frozen=True)
class Notation:
    """A way of writing a date or time: a pattern of named parts, the ``str.format`` spellings tests write."""

    name: str
    pattern: str
    spellings: tuple[str, ...] = ()


_YEAR = rf"(?P<year>{_DIGIT}{{4}})"
_DAY = rf"(?P<day>{_DIGIT}{{1,2}})"
_MONTH_NAME = rf"(?P<month_name>{_MONTH})"
_GAP = r"[ \u00a0]+"
_DASHES = " \u00a0-\u2013\u2014"  # between a range's two ends: "3-5", "3 – 5"
_RANGE_DASH = "[-\u2013\u2014]"
_DATE_END = rf"(?![\w]|[-/.:]{_DIGIT})"  # no other token glued to it
_LAST_DAY = rf"[ \u00a0]?{_RANGE_DASH}[ \u00a0]?(?P<last_day>{_DIGIT}{{1,2}}){_ORDINAL}?"
_AND_YEAR = rf"(?:,?{_GAP}{_YEAR}\b)?{_DATE_END}"
DATE_NOTATIONS: tuple[Notation, ...] = (
    Notation(  # 2024-05-19, 2024/05/19, 2024.05.19; and the date of 2024-05-19T22:00:00.
        "iso",
        rf"{_YEAR}(?P<sep>[-/.])(?P<month>{_DIGIT}{{1,2}})(?P=sep){_DAY}(?:(?=[tT]{_DIGIT})|{_DATE_END})",
        ("{year}-{mm}-{dd}", "{year}/{mm}/{dd}", "{year}-{mm}-{dd}T{hh}:{minute:02d}:{second:02d}"),
    ),
    Notation(  # 5/19/2024, 19.05.2024, 05/19/24: day and month in either order; "24" only after slashes.
        "numeric",
        rf"(?P<first>{_DIGIT}{{1,2}})(?P<sep>[/.])(?P<second>{_DIGIT}{{1,2}})(?P=sep)"
        rf"(?P<year>{_DIGIT}{{4}}|(?<=/){_DIGIT}{{2}}){_DATE_END}",
        ("{month}/{day}/{year}", "{mm}/{dd}/{year}", "{dd}/{mm}/{year}")
        + ("{dd}.{mm}.{year}", "{mm}/{dd}/{yy}"),
    ),
    Notation(  # June 3-5, 2024; June 3rd – 5th: two dates.
        "month_first_range", rf"{_MONTH_NAME}{_GAP}{_DAY}{_ORDINAL}?{_LAST_DAY}\b{_AND_YEAR}"
    ),
    Notation(  # 3-5 June 2024: two dates.
        "day_first_range", rf"{_DAY}{_ORDINAL}?{_LAST_DAY}{_GAP}(?:of{_GAP})?{_MONTH_NAME}\b{_AND_YEAR}"
    ),
    Notation(  # May 19, 2024; Sunday, May 19th; Sept. 5 2024; May 19.
        "month_first",
        rf"(?:{_WEEKDAY},?{_GAP})?{_MONTH_NAME}{_GAP}{_DAY}{_ORDINAL}?\b{_AND_YEAR}",
        ("{month_name} {day}, {year}", "{weekday}, {month_name} {day_ordinal}, {year}", "{mon} {day} {year}")
        + ("{month_name} {day}", "{weekday}, {month_name} {day_ordinal}"),
    ),
    Notation(  # 19-May-2024, 19-May-24.
        "day_month_dashed",
        rf"{_DAY}-{_MONTH_NAME}-(?P<year>{_DIGIT}{{4}}|{_DIGIT}{{2}}){_DATE_END}",
        ("{dd}-{mon}-{year}", "{day}-{month_name}-{yy}"),
    ),
    Notation(  # 19 May 2024; the 19th of May, 2024; Sunday, 19 May.
        "day_first",
        rf"(?:{_WEEKDAY},?{_GAP})?(?:the{_GAP})?{_DAY}{_ORDINAL}?{_GAP}(?:of{_GAP})?{_MONTH_NAME}\b{_AND_YEAR}",
        ("{day} {month_name} {year}", "the {day_ordinal} of {month_name}, {year}", "{day} {mon}")
        + ("{weekday}, {day} {month_name}",),
    ),
)

_SECONDS = r"(?::(?P<second>[0-5][0-9])(?:\.[0-9]+)?)"
# After a time: a zone ("Z", or "+05:30" after seconds) or a next-day (or previous-day) mark ("+1").
_ZONE_OFFSET = rf"(?<={_DIGIT}{{2}}:{_DIGIT}{{2}}:{_DIGIT}{{2}})[+-]{_DIGIT}{{2}}:{_DIGIT}{{2}}"
_TIME_NOTE = rf"(?:[zZ]\b|{_ZONE_OFFSET}|(?P<offset>[+-][1-3]))?"
_HALF = rf"(?:[ \u00a0]?(?P<half>(?:{alternation(HALF_DAY_MARKS)})(?!\w)))"
TIME_NOTATIONS: tuple[Notation, ...] = (
    Notation(  # 9-11 AM, 9:30–10:15 p.m.: the first in the half the mark names unless it wraps (11-1 PM).
        "range",
        rf"(?P<first_hour>{_DIGIT}{{1,2}})(?::(?P<first_minute>{_DIGIT}{{2}}))?[ \u00a0]?{_RANGE_DASH}"
        rf"[ \u00a0]?(?P<hour>{_DIGIT}{{1,2}})(?::(?P<minute>{_DIGIT}{{2}}))?{_HALF}",
    ),
    Notation(  # 22:00, 22:00:00, 03:00:00+1, 5:00, 10:00 PM, 10:00 p.m., 12:00 noon.
        "clock",
        rf"(?P<hour>{_DIGIT}{{1,2}}):(?P<minute>{_DIGIT}{{2}}){_SECONDS}?{_TIME_NOTE}"
        rf"(?:{_HALF}|(?![\w]|[:.]{_DIGIT}))",
        ("{hh}:{minute:02d}", "{hh}:{minute:02d}:{second:02d}", "{hh}:{minute:02d}:{second:02d}+1")
        + ("{hour}:{minute:02d}", "{h12}:{minute:02d} {AMPM}", "{h12}:{minute:02d} {a_m}")
        + ("{h12}:{minute:02d}{ampm}", "12:{minute:02d} {noon}"),
    ),
    Notation(  # 7.30pm, 10.00 PM: a point between hour and minute, only before a half-day mark.
        "dotted",
        rf"(?P<hour>{_DIGIT}{{1,2}})\.(?P<minute>[0-5]{_DIGIT}){_HALF}",
        ("{h12}.{minute:02d}{ampm}", "{h12}.{minute:02d} {AMPM}"),
    ),
    Notation(  # 22h00, 7h30: a 24-hour clock.
        "h_separated",
        rf"(?P<hour>[01]?{_DIGIT}|2[0-3])h(?P<minute>[0-5]{_DIGIT})(?![\w])",
        ("{hh}h{minute:02d}",),
    ),
    Notation(  # 2200 hrs, 0730 hours; also a length of 2,200 hours (``durations``), which it carries too.
        "military",
        rf"(?P<hour>[01]{_DIGIT}|2[0-3])(?P<minute>[0-5]{_DIGIT})[ \u00a0]?(?:hrs|hours)\b",
        ("{hh}{minute:02d} hrs",),
    ),
    Notation("word", r"(?<![\w-])(?P<half>noon|midnight)(?![\w-])", ("{noon}",)),  # a time of its own
    Notation("hour", rf"(?P<hour>{_DIGIT}{{1,2}}){_HALF}", ("{h12} {AMPM}", "{h12}{ampm}", "12 {noon}")),
)

# Where a value may start: not inside a longer token (an identifier, a path, a version, a zone's
# offset); a time also after another's hyphen ("10:00-11:00") or an ISO "T" ("2024-05-19T22:00").
_DATE_START = r"(?<![\w./:+-])"
_TIME_START = rf"(?:(?<![\w./:+-])|(?<={_DIGIT}[tT-]))"
# Each notation of a compiled pattern, the number of its own group, and its parts' numbers.
_Groups = list[tuple[Notation, int, dict[str, int]]]


def _compile(
    notations: tuple[Notation, ...], start: str, words: Iterable[str], uncaptured: Iterable[str] = ()
) -> tuple[re.Pattern[str], _Groups]:
    """One pattern trying each notation at each place (``uncaptured`` parts matched, not kept), and its
    groups; opening on a digit or a first letter of ``words``, it reads fast."""
    parts = []
    for i, notation in enumerate(notations):
        body = notation.pattern
        for name in uncaptured:
            body = body.replace(f"(?P<{name}>", "(?:")
        body = re.sub(r"\(\?P([<=])(\w+)", rf"(?P\1n{i}_\2", body)
        # The notation's own group holds its first character alone: two writings differ only in parts.
        parts.append(f"(?=(?P<n{i}>.)){body}")
    letters = "".join(sorted({word[0].lower() for word in words} | {word[0].upper() for word in words}))
    pattern = re.compile(rf"(?=[0-9{letters}]){start}(?:{'|'.join(parts)})", re.I)
    groups: _Groups = [(notation, pattern.groupindex[f"n{i}"], {}) for i, notation in enumerate(notations)]
    for name, number in pattern.groupindex.items():
        if "_" in name:  # "n3_hour": the hour of the fourth notation
            which, part = name[1:].split("_", 1)
            groups[int(which)][2][part] = number
    return pattern, groups


_DATES, _DATE_GROUPS = _compile(DATE_NOTATIONS, _DATE_START, [*MONTH_NAMES, *WEEKDAY_NAMES, "the"])
# For keys alone, where a text writes no month's name: the notations in figures only.
_IN_FIGURES = tuple(n for n in DATE_NOTATIONS if "<month_name>" not in n.pattern)
_FIGURE_DATES, _FIGURE_DATE_GROUPS = _compile(_IN_FIGURES, _DATE_START, [])
_TIMES, _TIME_GROUPS = _compile(TIME_NOTATIONS, _TIME_START, ["noon", "midnight"])
# For keys alone: seconds matched, not kept (no key holds them): a result's times read once a minute.
_KEYED_TIMES, _KEYED_TIME_GROUPS = _compile(TIME_NOTATIONS, _TIME_START, ["noon", "midnight"], ["second"])


def _parts(found: Sequence[str | None], groups: _Groups) -> tuple[Notation, dict[str, int], dict[str, str]]:
    """The notation, its parts' group numbers and the parts written, from a match's groups."""
    for notation, outer, numbers in groups:
        if found[outer - 1]:
            return notation, numbers, {name: text for name, n in numbers.items() if (text := found[n - 1])}
    raise AssertionError("a match of no notation")


def _readings(notation: Notation, parts: dict[str, str]) -> tuple[tuple[int | None, int, int], ...]:
    """The valid (year, month, day) a date's parts may be."""
    written = parts.get("year")
    year = None if written is None else int(written) + (2000 if len(written) == 2 else 0)
    if notation.name == "numeric":
        first, second = int(parts["first"]), int(parts["second"])
        candidates = [(year, first, second), (year, second, first)]  # month first, then day first
    else:
        month_name = parts.get("month_name", "").lower().rstrip(".")
        month = MONTH_NAMES[month_name] if month_name else int(parts["month"])
        candidates = [(year, month, int(parts[day])) for day in ("day", "last_day") if day in parts]
    return tuple(dict.fromkeys(r for r in candidates if _valid(*r)))


# The slash of an ISO 8601 interval, "2025-06-10/2025-06-14": between two dates, no path's.
_INTERVAL = re.compile(r"(?<=\d{4}-\d\d-\d\d)/(?=\d{4}-\d\d-\d\d)|(?<=[\dZz])/(?=\d{4}-\d\d-\d\d[Tt])")


def _intervals_apart(text: str) -> str:
    """``text`` with each ISO interval's slash a space, one character for one: the offsets stay."""
    return _INTERVAL.sub(" ", text) if "/" in text else text


def read_dates(text: str) -> Iterator[DateValue]:
    """Every date ``text`` writes, in order; a range's two ends are two values, an ISO interval's too."""
    text = _intervals_apart(text)
    for match in _DATES.finditer(text):
        notation, numbers, parts = _parts(match.groups(), _DATE_GROUPS)
        readings = _readings(notation, parts)
        if readings and "last_day" not in parts:
            yield DateValue(readings, match.start(), match.end())
        elif len(readings) == 2 and readings[0][2] < readings[1][2]:  # not "June 5-3", nor past the month
            split = match.start(numbers["last_day"])
            yield DateValue(readings[:1], match.start(), len(text[:split].rstrip(_DASHES)))
            yield DateValue(readings[1:], split, match.end())


def _time(parts: dict[str, str], start: int, end: int) -> TimeValue | None:
    hour, minute = int(parts.get("hour", 12)), int(parts.get("minute", 0))  # "noon" alone: 12
    second = int(parts["second"]) if "second" in parts else None
    if minute > 59 or ("half" not in parts and hour > 23):  # seconds past 59 are never matched
        return None
    if "half" not in parts:  # "5:00" may be either half of the day; "05:00" is a 24-hour time
        open_half = len(parts["hour"]) == 1 and 1 <= hour <= 9
        return TimeValue(hour, minute, second, start, end, open_half, int(parts.get("offset", 0)))
    half = HALF_DAY_MARKS[" ".join(parts["half"].lower().split())]
    if not 1 <= hour <= 12 or (half in ("noon", "midnight") and hour != 12):
        return None
    hour = {"noon": 12, "midnight": 0}.get(half, hour % 12 + (12 if half == "pm" else 0))
    return TimeValue(hour, minute, second, start, end)


def _range_start(parts: dict[str, str], last: TimeValue, start: int = 0, end: int = 0) -> TimeValue | None:
    """The first time of a range whose half-day mark follows its last ("9-11 AM")."""
    written = {"hour": parts["first_hour"], "minute": parts.get("first_minute", "00"), "half": parts["half"]}
    first = _time(written, start, end)  # None past 12: a half-day mark follows
    if first is None:
        return None
    if int(parts["first_hour"]) % 12 > int(parts["hour"]) % 12:  # 11-1 PM: from 11 AM
        first = replace(first, hour=(first.hour + 12) % 24)
    return first if first.hour * 60 + first.minute < last.hour * 60 + last.minute else None


def read_times(text: str) -> Iterator[TimeValue]:
    """Every clock time ``text`` writes, in order; a range's two ends are two values."""
    for match in _TIMES.finditer(text):
        notation, numbers, parts = _parts(match.groups(), _TIME_GROUPS)
        found = _time(parts, match.start(), match.end())
        if found is not None and notation.name == "military":  # "2200 hrs" may be 2,200 hours long too
            found = replace(found, also=(duration_key(Decimal(parts["hour"] + parts["minute"]) * 3600),))
        if found is not None and "first_hour" not in parts:
            yield found
        elif found is not None:
            split = match.start(numbers["hour"])
            first = _range_start(parts, found, match.start(), len(text[:split].rstrip(_DASHES)))
            if first is not None:  # "14 — 6:12 PM" is no range, but its end is still a time
                yield first
            yield replace(found, start=split)


def date_keys(text: str, in_words: bool = True) -> set[str]:
    """The keys of each date ``text`` writes, and its full dates' years; ``in_words=False``: figures only."""
    pattern = _DATES if in_words else _FIGURE_DATES
    text = _intervals_apart(text)
    return {key for found in set(pattern.findall(text)) for key in _date_keys_of(found, in_words)}


@lru_cache(maxsize=4096)
def _date_keys_of(found: tuple[str, ...], in_words: bool) -> tuple[str, ...]:
    notation, _, parts = _parts(found, _DATE_GROUPS if in_words else _FIGURE_DATE_GROUPS)
    readings = _readings(notation, parts)
    return (*DateValue(readings, 0, 0).keys(), *(str(year) for year, _, _ in readings if year is not None))


def time_keys(text: str) -> set[str]:
    """The keys of every clock time ``text`` writes, read once for each distinct time."""
    return {key for found in set(_KEYED_TIMES.findall(text)) for key in _time_keys_of(found)}


@lru_cache(maxsize=4096)
def _time_keys_of(found: tuple[str, ...]) -> tuple[str, ...]:
    parts = _parts(found, _KEYED_TIME_GROUPS)[2]
    time = _time(parts, 0, 0)
    first = _range_start(parts, time) if time is not None and "first_hour" in parts else None
    return (*(time.keys() if time else ()), *(first.keys() if first else ()))


# A JSON member named for an instant: ``created_at``, ``startTime``, ``timestamp``, ``due_date``, ``ts``.
_INSTANT_NAME = re.compile(r"(?:^|[_\-]|(?-i:(?<=[a-z])(?=[A-Z])))(?:at|time|timestamp|date|ts|epoch)$", re.I)
LONG_NUMBER = re.compile(r":\s*\d{9}")  # long enough to be an instant: seconds since 1970 have ten digits


def instant_member_keys(name: str, number: str) -> list[str]:
    """The UTC date and time keys of seconds (or ms) since 1970 under a name for an instant, or none."""
    if not (number.isdigit() and len(number) in (9, 10, 12, 13)) or _INSTANT_NAME.search(name) is None:
        return []
    moment = datetime.fromtimestamp(int(number) // (1000 if len(number) > 10 else 1), tz=UTC)
    day = DateValue(((moment.year, moment.month, moment.day),), 0, 0)
    return [*day.keys(), *TimeValue(moment.hour, moment.minute, moment.second, 0, 0).keys()]


def read_values(text: str) -> list[DateValue | TimeValue | DurationValue]:
    """Every date, clock time and duration of ``text``, in the order they stand."""
    # "1:30 hours" is a length, not half past one: a duration's span wins, but over "2200 hrs" (both).
    times = list(read_times(text))
    both = {t.start for t in times if t.also}
    durations = [d for d in read_durations(text) if d.start not in both]
    times = [t for t in times if t.also or not any(d.start <= t.start < d.end for d in durations)]
    return sorted([*read_dates(text), *times, *durations], key=lambda v: v.start)
