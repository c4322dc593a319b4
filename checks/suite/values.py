"""Dates and clock times, read one way wherever they are written.

A tool records ``"2024-05-19"`` and ``"22:00:00"``; a person or an answer writes "May 19",
"5/19/2024", "Sunday, May 19th, 2024", "10 PM" or "10:00 p.m.". Each is one value. This
module is the suite's only reader of dates and clock times: one reader per kind turns a
text into typed spans (``DateValue``, ``TimeValue``; ``durations`` adds ``DurationValue``),
each a ``value.Value`` with its canonical content and the keys it is filed and looked up
under. The evidence index files a source's
values under their keys and the evidence checker looks an answer's values up under theirs,
so a notation read on one side is read on the other by construction.

Principles:

- **Vocabularies and notations are data.** Month names and abbreviations, weekdays,
  ordinal suffixes, half-day marks and next-day marks are tables below; the patterns are
  built from them, and ``DATE_NOTATIONS`` and ``TIME_NOTATIONS`` list what is read, each
  with the spellings it reads (which the tests write values in).
- **A value that may mean two things carries the keys of both, on both sides.** A numeric
  date whose day and month could swap ("05/06/2024") is both days; "5:00" with no half-day
  mark is both 05:00 and 17:00.
- **A part left unsaid is not a part that differs.** "May 19" names no year, so it is keyed
  by its month and day, which a date of any year also carries; a full date is looked up
  under its own day and under "May 19 of an unsaid year". A year both sides write must be
  the same. That is why a value has ``lookups()`` beside ``keys()``: they are equal for
  every value but a full date, since "any year" matches both 2024 and 2025, which must not
  match each other, and no set of keys shared by both sides says so. Seconds are not
  compared: "22:00" and "22:00:30" are one minute.
- **A member's name may say what its number is.** Seconds (or milliseconds) since 1970
  under a member named for an instant (``starts_at``, ``createdTime``, ``timestamp``) are a
  date and a time, in UTC (``member_keys``); the same number under another name is a
  number.
- **A range is its two ends.** "June 3-5, 2024" is June 3 and June 5, 2024: a source
  carries both, and an answer claims each on its own.
- **Marks about a value are not the value.** A weekday, an ordinal suffix, a next-day mark
  ("+1", "(next day)") and a zone are dropped on both sides; a glued next-day mark is kept
  beside the time (``TimeValue.day_offset``), as it says which day the time is on.
- **No domain.** Nothing here knows what the dates and times are of.

"noon" and "midnight" alone are the times they name: "before midnight" claims 00:00.

What is not read: a two-digit year written with dots ("1.2.24" is more often a version), a date glued
to letters, digits or other separators (a part of an identifier or a path).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import lru_cache
from typing import ClassVar

from .durations import KEY_PREFIX as DURATION_KEY
from .durations import DurationValue, duration_key, read_durations
from .text import alternation

# --- vocabularies -------------------------------------------------------------------------

MONTH_NAMES: dict[str, int] = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
# Month names that are also common words ("you may", "march on"): read only capitalised.
MONTH_WORDS = frozenset(["may", "march"])
WEEKDAY_NAMES = (
    "monday",
    "mon",
    "tuesday",
    "tues",
    "tue",
    "wednesday",
    "wed",
    "thursday",
    "thurs",
    "thur",
    "thu",
    "friday",
    "fri",
    "saturday",
    "sat",
    "sunday",
    "sun",
)
ORDINAL_SUFFIXES = ("st", "nd", "rd", "th")
# Each spelling of a half-day mark, and what it says of the hour before it.
HALF_DAY_MARKS: dict[str, str] = {
    "am": "am",
    "a.m.": "am",
    "a.m": "am",
    "a. m.": "am",
    "pm": "pm",
    "p.m.": "pm",
    "p.m": "pm",
    "p. m.": "pm",
    "noon": "noon",
    "midnight": "midnight",
}
# What a next-day (or previous-day) mark glued to a clock time looks like: "03:00:00+1".
DAY_OFFSET = r"[+-][1-3]"


def _month_alternation() -> str:
    plain = [name for name in MONTH_NAMES if name not in MONTH_WORDS]
    # Words that are also months only with a capital: "May", "MAY"; not "may".
    worded = [f"{name.capitalize()}|{name.upper()}" for name in MONTH_WORDS]
    return rf"(?:(?i:{alternation(plain)})\.?|(?-i:{'|'.join(worded)}))"


_MONTH = _month_alternation()
_WEEKDAY = rf"(?:{alternation(WEEKDAY_NAMES)})\.?"
_ORDINAL = rf"(?:{alternation(ORDINAL_SUFFIXES)})"
_HALF_DAY = rf"(?:{alternation(HALF_DAY_MARKS)})(?!\w)"
_DIGIT = "[0-9]"  # not \d: other scripts' digits are no part of a date here

# --- the canonical content of a value, and its keys ---------------------------------------

# Every key starts with its kind and a space. A source's token never holds a space, so a key
# never equals a value as written: "10:00" written before "pm" is no key of 10:00 AM.
KEY_PREFIXES = ("date ", "time ", DURATION_KEY)


def is_value_key(form: str) -> bool:
    return form.startswith(KEY_PREFIXES)


def day_key(year: int, month: int, day: int) -> str:
    return f"date {year:04d}-{month:02d}-{day:02d}"


def day_of_key(key: str) -> date | None:
    """The full date a ``day_key`` names; None for any other key."""
    if not key.startswith("date ") or key[5:6] == "-" or key[5:7] == "md":
        return None
    try:
        return date.fromisoformat(key[5:])
    except ValueError:
        return None


def month_day_key(month: int, day: int) -> str:
    """The key every date of this month and day carries, whatever its year (or none)."""
    return f"date md {month:02d}-{day:02d}"


def unsaid_year_key(month: int, day: int) -> str:
    """The key of a date written without its year (ISO 8601's spelling, ``--05-19``)."""
    return f"date --{month:02d}-{day:02d}"


def time_key(hour: int, minute: int) -> str:
    return f"time {hour:02d}:{minute:02d}"


def _valid(year: int | None, month: int, day: int) -> bool:
    if 1 <= month <= 12 and 1 <= day <= 28:
        return True  # every month has these days: no need to ask the calendar
    try:
        date(2024 if year is None else year, month, day)  # 2024 has a 29 February
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class DateValue:
    """A date as written: its readings (year, month, day; the year may be unsaid) and span.

    More than one reading when the notation leaves the order of day and month open.
    """

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
        """The full dates it may be (none when it gives no year)."""
        return [date(y, m, d) for y, m, d in self.readings if y is not None]

    def keys(self) -> list[str]:
        """The keys a source's date is filed under: its day (or its month and day with the
        year unsaid), and the month and day that a date of any year carries."""
        out: list[str] = []
        for year, month, day in self.readings:
            out.append(unsaid_year_key(month, day) if year is None else day_key(year, month, day))
            out.append(month_day_key(month, day))
        return list(dict.fromkeys(out))

    def lookups(self) -> list[str]:
        """The keys an answer's date is looked up under: a full date is its own day, or its
        month and day where a source left the year unsaid; a date with no year is any date
        of its month and day. So two years both written must agree."""
        out: list[str] = []
        for year, month, day in self.readings:
            if year is None:
                out.append(month_day_key(month, day))
            else:
                out.extend([day_key(year, month, day), unsaid_year_key(month, day)])
        return list(dict.fromkeys(out))


@dataclass(frozen=True)
class TimeValue:
    """A clock time as written: hour (0-23), minute, second (None if unsaid), and whether the
    half of the day is open ("5:00" with no mark: 05:00 or 17:00)."""

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
    def hours(self) -> list[int]:
        return [self.hour, self.hour + 12] if self.open_half else [self.hour]

    @property
    def canonical(self) -> str | None:
        """The 24-hour ``HH:MM``; None when the half of the day is open."""
        return None if self.open_half else f"{self.hour:02d}:{self.minute:02d}"

    def keys(self) -> list[str]:
        """Its 24-hour hour and minute, for each half of the day it may be in, and the keys
        of any other reading of its writing."""
        return [time_key(hour, self.minute) for hour in self.hours] + list(self.also)

    def lookups(self) -> list[str]:
        """A clock time is looked up under the keys it is filed under."""
        return self.keys()


# The kinds this module and ``durations`` read; each is a ``value.Value``.
Value = DateValue | TimeValue | DurationValue

# --- notations ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Notation:
    """One way of writing a date or a time: a pattern whose named groups give its parts
    (``year``, ``month`` or ``month_name``, ``day``; ``hour``, ``minute``, ``second``,
    ``half``), and the spellings it reads, as ``str.format`` templates over the fields
    ``year yy mm dd month day month_name mon weekday day_ordinal`` (a date) and
    ``hh hour h12 minute second AMPM ampm a_m noon`` (a time), in which the tests write
    values."""

    name: str
    pattern: str
    spellings: tuple[str, ...] = field(default=())
    in_words: bool = False  # whether it writes a word (a month's name): it may span tokens


_YEAR = rf"(?P<year>{_DIGIT}{{4}})"
_DAY = rf"(?P<day>{_DIGIT}{{1,2}})"
_MONTH_NUMBER = rf"(?P<month>{_DIGIT}{{1,2}})"
_MONTH_NAME = rf"(?P<month_name>{_MONTH})"
_GAP = r"[ \u00a0]+"
_RANGE_DASH = "[-\u2013\u2014]"  # "3-5", "3–5": a range, whose two ends are two values
# A date ends where no other token is glued to it.
_DATE_END = rf"(?![\w]|[-/.:]{_DIGIT})"

DATE_NOTATIONS: tuple[Notation, ...] = (
    Notation(
        # 2024-05-19, 2024/05/19, 2024.05.19; and the date of 2024-05-19T22:00:00.
        "iso",
        rf"{_YEAR}(?P<sep>[-/.]){_MONTH_NUMBER}(?P=sep){_DAY}(?:(?=[tT]{_DIGIT})|{_DATE_END})",
        ("{year}-{mm}-{dd}", "{year}/{mm}/{dd}", "{year}-{mm}-{dd}T{hh}:{minute:02d}:{second:02d}"),
    ),
    Notation(
        # 5/19/2024, 19/05/2024, 19.05.2024, 05/19/24: day and month in either order. A
        # two-digit year only after slashes.
        "numeric",
        rf"(?P<first>{_DIGIT}{{1,2}})(?P<sep>[/.])(?P<second>{_DIGIT}{{1,2}})(?P=sep)"
        rf"(?P<year>{_DIGIT}{{4}}|(?<=/){_DIGIT}{{2}}){_DATE_END}",
        (
            "{month}/{day}/{year}",
            "{mm}/{dd}/{year}",
            "{dd}/{mm}/{year}",
            "{dd}.{mm}.{year}",
            "{mm}/{dd}/{yy}",
        ),
    ),
    Notation(
        # A range of days in one month: June 3-5, 2024; June 3rd – 5th. Two dates.
        "month_first_range",
        rf"{_MONTH_NAME}{_GAP}{_DAY}{_ORDINAL}?[ \u00a0]?{_RANGE_DASH}[ \u00a0]?"
        rf"(?P<last_day>{_DIGIT}{{1,2}}){_ORDINAL}?\b(?:,?{_GAP}{_YEAR}\b)?{_DATE_END}",
        (),  # two values: the property tests write one; ranges have tests of their own
        in_words=True,
    ),
    Notation(
        # 3-5 June 2024. Two dates.
        "day_first_range",
        rf"{_DAY}{_ORDINAL}?[ \u00a0]?{_RANGE_DASH}[ \u00a0]?(?P<last_day>{_DIGIT}{{1,2}}){_ORDINAL}?"
        rf"{_GAP}(?:of{_GAP})?{_MONTH_NAME}\b(?:,?{_GAP}{_YEAR}\b)?{_DATE_END}",
        (),
        in_words=True,
    ),
    Notation(
        # May 19, 2024; Sunday, May 19th; Sept. 5 2024; May 19.
        "month_first",
        rf"(?:{_WEEKDAY},?{_GAP})?{_MONTH_NAME}{_GAP}{_DAY}{_ORDINAL}?\b(?:,?{_GAP}{_YEAR}\b)?{_DATE_END}",
        (
            "{month_name} {day}, {year}",
            "{weekday}, {month_name} {day_ordinal}, {year}",
            "{mon} {day} {year}",
            "{month_name} {day}",
            "{weekday}, {month_name} {day_ordinal}",
        ),
        in_words=True,
    ),
    Notation(
        # 19-May-2024, 19-May-24: a day, a month's name and a year joined by hyphens.
        "day_month_dashed",
        rf"{_DAY}-{_MONTH_NAME}-(?P<year>{_DIGIT}{{4}}|{_DIGIT}{{2}}){_DATE_END}",
        ("{dd}-{mon}-{year}", "{day}-{month_name}-{yy}"),
        in_words=True,
    ),
    Notation(
        # 19 May 2024; the 19th of May, 2024; Sunday, 19 May.
        "day_first",
        rf"(?:{_WEEKDAY},?{_GAP})?(?:the{_GAP})?{_DAY}{_ORDINAL}?{_GAP}(?:of{_GAP})?{_MONTH_NAME}\b"
        rf"(?:,?{_GAP}{_YEAR}\b)?{_DATE_END}",
        (
            "{day} {month_name} {year}",
            "the {day_ordinal} of {month_name}, {year}",
            "{day} {mon}",
            "{weekday}, {day} {month_name}",
        ),
        in_words=True,
    ),
)

_SECONDS = r"(?::(?P<second>[0-5][0-9])(?:\.[0-9]+)?)"
# After a time: a zone ("Z", or "+05:30" after seconds) or a next-day mark ("+1").
_ZONE_OFFSET = rf"(?<={_DIGIT}{{2}}:{_DIGIT}{{2}}:{_DIGIT}{{2}})[+-]{_DIGIT}{{2}}:{_DIGIT}{{2}}"
_TIME_NOTE = rf"(?:[zZ]\b|{_ZONE_OFFSET}|(?P<offset>{DAY_OFFSET}))?"
_HALF = rf"(?:[ \u00a0]?(?P<half>{_HALF_DAY}))"

TIME_NOTATIONS: tuple[Notation, ...] = (
    Notation(
        # A range whose mark of half of the day stands once, at its end: 9-11 AM, 9:30–10:15
        # p.m. Two times, the first in the half the mark names unless it wraps (11-1 PM).
        "range",
        rf"(?P<first_hour>{_DIGIT}{{1,2}})(?::(?P<first_minute>{_DIGIT}{{2}}))?[ \u00a0]?{_RANGE_DASH}"
        rf"[ \u00a0]?(?P<hour>{_DIGIT}{{1,2}})(?::(?P<minute>{_DIGIT}{{2}}))?{_HALF}",
        (),  # two values: the property tests write one; ranges have tests of their own
    ),
    Notation(
        # 22:00, 22:00:00, 03:00:00+1, 5:00, 10:00 PM, 10:00 p.m., 12:00 noon.
        "clock",
        rf"(?P<hour>{_DIGIT}{{1,2}}):(?P<minute>{_DIGIT}{{2}}){_SECONDS}?{_TIME_NOTE}"
        rf"(?:{_HALF}|(?![\w]|[:.]{_DIGIT}))",
        (
            "{hh}:{minute:02d}",
            "{hh}:{minute:02d}:{second:02d}",
            "{hh}:{minute:02d}:{second:02d}+1",
            "{hour}:{minute:02d}",
            "{h12}:{minute:02d} {AMPM}",
            "{h12}:{minute:02d} {a_m}",
            "{h12}:{minute:02d}{ampm}",
            "12:{minute:02d} {noon}",
        ),
    ),
    Notation(
        # 7.30pm, 10.00 PM: a point between hour and minute, read only before a half-day mark.
        "dotted",
        rf"(?P<hour>{_DIGIT}{{1,2}})\.(?P<minute>[0-5]{_DIGIT}){_HALF}",
        ("{h12}.{minute:02d}{ampm}", "{h12}.{minute:02d} {AMPM}"),
    ),
    Notation(
        # 22h00, 7h30: an "h" between hour and minute, a 24-hour clock.
        "h_separated",
        rf"(?P<hour>[01]?{_DIGIT}|2[0-3])h(?P<minute>[0-5]{_DIGIT})(?![\w])",
        ("{hh}h{minute:02d}",),
    ),
    Notation(
        # 2200 hrs, 0730 hours: four figures of a 24-hour clock, said to be hours. Also a
        # length of 2,200 hours (``durations``): the time carries that reading too.
        "military",
        rf"(?P<hour>[01]{_DIGIT}|2[0-3])(?P<minute>[0-5]{_DIGIT})[ \u00a0]?(?:hrs|hours)\b",
        ("{hh}{minute:02d} hrs",),
    ),
    Notation(
        # noon, midnight: a time of its own.
        "word",
        r"(?<![\w-])(?P<half>noon|midnight)(?![\w-])",
        ("{noon}",),
    ),
    Notation(
        # 10 PM, 10pm, 10 a.m., 12 noon.
        "hour",
        rf"(?P<hour>{_DIGIT}{{1,2}}){_HALF}",
        ("{h12} {AMPM}", "{h12}{ampm}", "12 {noon}"),
    ),
)

# Where a value may start: not inside a longer token (an identifier, a path, a version, a
# zone's offset). A time may follow another's hyphen ("10:00-11:00") and the "T" of an ISO
# date and time ("2024-05-19T22:00").
_DATE_START = r"(?<![\w./:+-])"
_TIME_START = rf"(?:(?<![\w./:+-])|(?<={_DIGIT}[tT-]))"


def _compile(
    notations: tuple[Notation, ...], start: str, words: Iterable[str], uncaptured: Iterable[str] = ()
) -> re.Pattern[str]:
    """One pattern trying each notation at each place, its groups renamed per notation (and
    the parts named in ``uncaptured`` matched but not kept).

    It opens by looking ahead for a character a value can start with (a digit, or the first
    letter of one of ``words``), which lets the regular expression engine skip the others
    quickly: a text is read in a few passes of its characters, not one per notation.
    """
    parts = []
    for i, notation in enumerate(notations):
        body = notation.pattern
        for name in uncaptured:
            body = body.replace(f"(?P<{name}>", "(?:")
        body = re.sub(r"\(\?P([<=])(\w+)", rf"(?P\1n{i}_\2", body)
        # The notation's own group holds only the character it starts with, so that two
        # writings of one value differ only in the parts they write (``_distinct_parts``).
        parts.append(f"(?=(?P<n{i}>.)){body}")
    letters = "".join(sorted({word[0].lower() for word in words} | {word[0].upper() for word in words}))
    return re.compile(rf"(?=[0-9{letters}]){start}(?:{'|'.join(parts)})", re.I)


_Groups = list[tuple[Notation, str, list[tuple[str, str]]]]


def _group_names(notations: tuple[Notation, ...]) -> _Groups:
    """For each notation: its group in the compiled pattern, and its parts' (name, group)."""
    return [
        (
            notation,
            f"n{i}",
            [(name, f"n{i}_{name}") for name in re.findall(r"\(\?P<(\w+)>", notation.pattern)],
        )
        for i, notation in enumerate(notations)
    ]


_DATES = _compile(DATE_NOTATIONS, _DATE_START, [*MONTH_NAMES, *WEEKDAY_NAMES, "the"])
_TIMES = _compile(TIME_NOTATIONS, _TIME_START, ["noon", "midnight"])
_DATE_GROUPS = _group_names(DATE_NOTATIONS)
# For keys alone, where a text writes no month's name: the notations in figures only.
_FIGURE_NOTATIONS = tuple(notation for notation in DATE_NOTATIONS if not notation.in_words)
_FIGURE_DATES = _compile(_FIGURE_NOTATIONS, _DATE_START, [])
_FIGURE_DATE_GROUPS = _group_names(_FIGURE_NOTATIONS)
_TIME_GROUPS = _group_names(TIME_NOTATIONS)
# For keys alone: a time's seconds are matched but not kept, as no key holds them, so that
# the times of a large result are read once for each minute they name.
_TIMES_WITHOUT_SECONDS = _compile(TIME_NOTATIONS, _TIME_START, ["noon", "midnight"], ["second"])


def _notation_group(notation: Notation) -> str:
    """The name of a date notation's own group in the compiled pattern."""
    return next(outer for held, outer, _ in _DATE_GROUPS if held is notation)


def _parts(group: Callable[[str], str | None], groups: _Groups) -> tuple[Notation, dict[str, str]]:
    """The notation that matched and the parts it wrote, by their names in its pattern;
    ``group`` gives a group of the match by its name in the compiled pattern."""
    for notation, outer, names in groups:
        if group(outer):
            found = {name: group(inner) for name, inner in names}
            return notation, {name: text for name, text in found.items() if text}
    raise AssertionError("a match of no notation")


def _written(
    pattern: re.Pattern[str], groups: _Groups, found: tuple[str, ...]
) -> tuple[Notation, dict[str, str]]:
    """The notation and parts of one value as ``pattern.findall`` gives it (a part the
    pattern does not keep, ``uncaptured``, reads as unwritten)."""
    number = pattern.groupindex
    return _parts(lambda name: found[number[name] - 1] if name in number else None, groups)


def _readings(notation: Notation, parts: dict[str, str]) -> tuple[tuple[int | None, int, int], ...]:
    """The valid (year, month, day) a date's parts may be."""
    year = int(parts["year"]) if "year" in parts else None
    if year is not None and len(parts["year"]) == 2:
        year += 2000
    if notation.name == "numeric":
        first, second = int(parts["first"]), int(parts["second"])
        candidates = [(year, first, second), (year, second, first)]  # month first, then day first
    else:
        month_name = parts.get("month_name", "").lower().rstrip(".")
        month = MONTH_NAMES[month_name] if month_name else int(parts["month"])
        candidates = [(year, month, int(parts["day"]))]
        if "last_day" in parts:  # a range: the source carries both ends
            candidates.append((year, month, int(parts["last_day"])))
    return tuple(dict.fromkeys(r for r in candidates if _valid(*r)))


def read_dates(text: str) -> Iterator[DateValue]:
    """Every date ``text`` writes, in order, in any notation of ``DATE_NOTATIONS``."""
    for match in _DATES.finditer(text):
        notation, parts = _parts(match.group, _DATE_GROUPS)
        readings = _readings(notation, parts)
        if not readings:
            continue
        if "last_day" not in parts:
            yield DateValue(readings, match.start(), match.end())
            continue
        # A range's two ends are two values, each claimed on its own: the first from the
        # range's start, the last from its last day to the end.
        if len(readings) < 2 or readings[0][2] >= readings[1][2]:
            continue  # "June 5-3" or a day past the month's end: no range
        split = match.start(f"{_notation_group(notation)}_last_day")
        first_end = len(text[:split].rstrip(" \u00a0-\u2013\u2014"))
        yield DateValue(readings[:1], match.start(), first_end)
        yield DateValue(readings[1:], split, match.end())


def _time(parts: dict[str, str], start: int, end: int) -> TimeValue | None:
    hour, minute = int(parts.get("hour", 12)), int(parts.get("minute", 0))  # "noon" alone: 12
    second = int(parts["second"]) if "second" in parts else None
    if minute > 59 or (second is not None and second > 59):
        return None
    if "half" not in parts:
        if hour > 23:
            return None
        # "5:00" may be either half of the day; "05:00" and "17:00" are 24-hour times.
        open_half = len(parts["hour"]) == 1 and 1 <= hour <= 9
        return TimeValue(hour, minute, second, start, end, open_half, int(parts.get("offset", 0)))
    half = HALF_DAY_MARKS[" ".join(parts["half"].lower().split())]
    if not 1 <= hour <= 12 or (half in ("noon", "midnight") and hour != 12):
        return None
    if half == "noon":
        return TimeValue(12, minute, second, start, end)
    if half == "midnight":
        return TimeValue(0, minute, second, start, end)
    return TimeValue(hour % 12 + (12 if half == "pm" else 0), minute, second, start, end)


def _range_start(parts: dict[str, str], last: TimeValue) -> TimeValue | None:
    """The first time of a range whose half-day mark follows its last ("9-11 AM")."""
    hour = int(parts["first_hour"])
    first = _time(
        {"hour": parts["first_hour"], "minute": parts.get("first_minute", "00"), "half": parts["half"]}, 0, 0
    )
    if first is None or not 1 <= hour <= 12:
        return None
    wraps = hour % 12 > int(parts["hour"]) % 12  # 11-1 PM: from 11 AM
    start = (first.hour + 12) % 24 if wraps else first.hour
    return (
        TimeValue(start, first.minute, None, 0, 0)
        if start * 60 + first.minute < last.hour * 60 + last.minute
        else None
    )


def read_times(text: str) -> Iterator[TimeValue]:
    """Every clock time ``text`` writes, in order, in any notation of ``TIME_NOTATIONS``; a
    range's two ends are two values."""
    for match in _TIMES.finditer(text):
        notation, parts = _parts(match.group, _TIME_GROUPS)
        found = _time(parts, match.start(), match.end())
        if found is None:
            continue
        if notation.name == "military":  # "2200 hrs" may be 2,200 hours long too
            hours = Decimal(parts["hour"] + parts["minute"]) * 3600
            found = replace(found, also=(duration_key(hours),))
        if "first_hour" not in parts:
            yield found
            continue
        first = _range_start(parts, found)
        if first is None:
            continue
        group = next(outer for held, outer, _ in _TIME_GROUPS if held is notation)
        split = match.start(f"{group}_hour")
        first_end = len(text[:split].rstrip(" \u00a0-\u2013\u2014"))
        yield TimeValue(first.hour, first.minute, None, match.start(), first_end)
        yield TimeValue(found.hour, found.minute, found.second, split, match.end())


def date_keys(text: str, in_words: bool = True) -> tuple[set[str], set[int]]:
    """The keys of every date ``text`` writes, and the years of its full dates: what
    ``read_dates`` gives, without spans, read once for each distinct writing (a large
    result repeats a few dates in thousands of rows). ``in_words=False`` reads only the
    notations in figures, for a text that names no month."""
    keys: set[str] = set()
    years: set[int] = set()
    pattern = _DATES if in_words else _FIGURE_DATES
    for found in set(pattern.findall(text)):
        more, more_years = _date_keys_of(found, in_words)
        keys.update(more)
        years.update(more_years)
    return keys, years


@lru_cache(maxsize=4096)
def _date_keys_of(found: tuple[str, ...], in_words: bool) -> tuple[tuple[str, ...], tuple[int, ...]]:
    if in_words:
        readings = _readings(*_written(_DATES, _DATE_GROUPS, found))
    else:
        readings = _readings(*_written(_FIGURE_DATES, _FIGURE_DATE_GROUPS, found))
    if not readings:
        return (), ()
    return tuple(DateValue(readings, 0, 0).keys()), tuple(year for year, _, _ in readings if year is not None)


def time_keys(text: str) -> set[str]:
    """The keys of every clock time ``text`` writes: what ``read_times`` gives, without spans,
    read once for each distinct time (seconds aside, which no key holds)."""
    keys: set[str] = set()
    for found in set(_TIMES_WITHOUT_SECONDS.findall(text)):
        keys.update(_time_keys_of(found))
    return keys


@lru_cache(maxsize=4096)
def _time_keys_of(found: tuple[str, ...]) -> tuple[str, ...]:
    parts = _written(_TIMES_WITHOUT_SECONDS, _TIME_GROUPS, found)[1]
    time = _time(parts, 0, 0)
    if time is None:
        return ()
    first = _range_start(parts, time) if "first_hour" in parts else None
    return tuple(time.keys()) + (tuple(first.keys()) if first is not None else ())


# A JSON member that holds an instant as seconds (or milliseconds) since 1970, named for it:
# ``created_at``, ``startTime``, ``timestamp``, ``due_date``, ``ts``, ``epoch``.
_INSTANT_NAME = re.compile(r"(?:^|[_\-]|(?<=[a-z])(?=[A-Z]))(?:at|time|timestamp|date|ts|epoch)$", re.I)
_LONG_NUMBER = re.compile(r":\s*\d{9}")  # seconds since 1970 have ten digits


def member_may_hold(low_json: str) -> bool:
    """Whether a JSON text holds a number long enough to be an instant at all."""
    return _LONG_NUMBER.search(low_json) is not None


def member_keys(name: str, number: str) -> list[str]:
    """The date and time keys (in UTC) of a JSON number that a member named for an instant
    holds as seconds or milliseconds since 1970 (``"starts_at": 1716120000``), or none."""
    if not (number.isdigit() and len(number) in (9, 10, 12, 13)) or _INSTANT_NAME.search(name) is None:
        return []
    moment = datetime.fromtimestamp(int(number) // (1000 if len(number) > 10 else 1), tz=UTC)
    day = DateValue(((moment.year, moment.month, moment.day),), 0, 0)
    return [*day.keys(), *TimeValue(moment.hour, moment.minute, moment.second, 0, 0).keys()]


def read_values(text: str) -> list[Value]:
    """Every date, clock time and duration (``durations``) of ``text``, in the order they stand."""
    # "1:30 hours" is a length of time, not half past one: a duration's span wins, except
    # over a time that carries the duration's reading itself ("2200 hrs").
    times = list(read_times(text))
    both = {t.start for t in times if t.also}
    durations = [d for d in read_durations(text) if d.start not in both]
    times = [t for t in times if t.also or not any(d.start <= t.start < d.end for d in durations)]
    found: list[Value] = [*read_dates(text), *times, *durations]
    found.sort(key=lambda v: v.start)
    return found
