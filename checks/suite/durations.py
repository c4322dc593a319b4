"""Lengths of time, read one way wherever they are written.

A tool records ``"duration_minutes": 90`` or ``"PT1H30M"``; a person writes "90 minutes",
"1 hour 30 minutes", "1.5 hours" or "1h 30m". Each is a number of seconds under one key
(``duration <seconds>``), so a notation read on one side is read on the other.

- **Units are data** (``UNITS``). A glued letter ("1h", "30m") is read only in a sum with
  an hour or as hours alone: "30m" alone is as often a length, "90s" a decade. An "h" set
  apart from its number is hours only before minutes ("2 h 8 min"), as timetables write it.
- **A sum is one value**: "1 hour and 30 minutes" is 5,400 seconds, not 1 and 30.
- **A word that says every day counts is part of a length**: "30 calendar days", "14 consecutive
  days" (business days are no length: the derivations count them apart).
- **A JSON number whose member's name ends in a unit is a duration** (``wait_minutes: 90``, or
  a unit's letter after a separator, as JSON writes seconds and hours: ``idle_s``, ``ttl_h``),
  and so is each end of a range written there as a string (``eta_days: "5-7"``); a name opening
  with a unit in the plural counts it (``days_supply: 30``, ``hours_remaining``), unless it names a
  price or a share (``days_late_fee``). A rate's unit stands before its "per": ``hours_per_day: 6``
  is six hours (a day), not six days.
- **A word for a recurrence writes its length** (``PERIODS``): a source's "paid biweekly" grounds
  "every two weeks", as the derivations count 14 days from it.
- **No domain.** Ranges ("2-3 hours") are no one value; a month or a year no fixed length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from decimal import Decimal
from typing import ClassVar

from .text import NUMBER_WORDS, alternation

# Each unit's spellings, each also written with an "s" ("hrs"), with its seconds.
_SINGULAR = dict(second=1, sec=1, minute=60, min=60, hour=3600, hr=3600, day=86400, week=604800, wk=604800)
UNITS = {spelled: seconds for word, seconds in _SINGULAR.items() for spelled in (word + "s", word)}
# "a" and "an" are a number (``text.NUMBER_WORDS``) in an answer only before "and a half"
# ("an hour and a half") or another part of a sum ("an hour and 15 minutes"): "in a minute" is
# seldom a claim of sixty seconds. A source reads them always.
_ARTICLES = {"a": 1, "an": 1}
_LETTERS = {"h": 3600, "m": 60, "s": 1}  # glued to a number: a unit only in a sum with hours
KEY_PREFIX = "duration "

_NUMBER = r"\d+(?:\.\d+)?"
_ANY_UNIT = alternation(UNITS)  # a pattern of every spelling of a unit
# Patterns open with a character, not a look back, so a large text is scanned for it; a unit's word first
# (lower case, quicker than re.I), then its number: "90-minute", "two and a half hours", "1:30 hours".
_UNIT_WORD = re.compile(rf"(?:{_ANY_UNIT})\b")
# A number grouped by commas is read whole ("3,840 hours"); one glued after a comma to digits
# that group no number ("12,5 hours") is a piece of another and no length.
_WRITTEN = rf"\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|{_NUMBER}"
# A word that only says the days are all counted may stand between them: "30 calendar days".
_COUNTED_ALL = r"(?:(?:calendar|consecutive)[ \u00a0-])?"
_BEFORE_NUMBER = re.compile(rf"(?:^|(?<=[^\w.:,])|(?<=[^\d],))({_WRITTEN})[ \u00a0-]?{_COUNTED_ALL}$")
_BEFORE_CLOCKED = re.compile(r"(?:^|(?<=[^\w.:]))(\d{1,3}):([0-5]\d)[ \u00a0]?$")
_COUNT_WORDS = alternation([*NUMBER_WORDS, *_ARTICLES])
_BEFORE_WORDS = re.compile(rf"(?:^|(?<=[^\w-]))({_COUNT_WORDS})( and a half)?[ -]{_COUNTED_ALL}$", re.I)
_BEFORE_HALF = re.compile(r"(?:^|(?<=[^\w-]))half an? $", re.I)
_HALF_AFTER = " and a half"
_AND_MORE = re.compile(rf",? and \d+ ?(?:{_ANY_UNIT})\b", re.I)  # "an hour and 15 minutes": one of a sum
_LOOK_BACK = 40  # characters before a unit's word that may hold its number
_CLOCKLIKE = re.compile(r"\d(?<![\w.:]\d)\d{0,2}:([0-5]\d):([0-5]\d)(?![\w:]|\.\d)")  # a source's 01:30:00
_GLUED = re.compile(r"\d(?<![\w.]\d)\d*(?:\.\d+)?h(?: ?\d{1,2}m(?: ?\d{1,2}s)?)?\b", re.I)  # 1h, 1h30m
_GLUED_ALONE = re.compile(r"\d(?<![\w.$€£]\d)\d*(?:\.\d+)?[ms]\b", re.I)  # a source's 45m
_GLUED_PART = re.compile(r"(\d+(?:\.\d+)?)([hms])", re.I)
# An "h" set apart from its number, where minutes follow as the sum's next part: "2 h 8 min".
_SPACED_HOURS = re.compile(r"\d(?<![\w.]\d)\d*\s[hH](?=\s+\d{1,2}\s?(?:min(?:ute)?s?|m)\b)")
_ISO = re.compile(r"P(?<!\wP)(?:(\d+)D)?T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?\b")
_JOINER = re.compile(r",? and |, | ")  # between the parts of one sum
# A member's name may end in a unit's letter after a separator, as JSON writes it: ``idle_s``, ``ttl_h``.
_KEY_LETTERS = {"s": 1, "h": 3600}
_KEY_WORDS = re.compile(rf"(?:^|[_\-\s]|(?-i:(?<=[a-z])(?=[A-Z])))({_ANY_UNIT})$|[_\-]([sh])$", re.I)
# A member whose name opens with a unit in the plural counts it: "days_supply", "hours_remaining".
_PLURALS = alternation([word + "s" for word in _SINGULAR])
_NO_LENGTH = re.compile(r"(?i)fee|rate|price|cost|charge|discount|pct|percent|amount")
_LEAD_UNIT = re.compile(rf"({_PLURALS})(?:[_\-]|(?-i:(?<=s)(?=[A-Z])))", re.I)
# A member named for a unit, in lower-case JSON.
KEYED_UNIT = re.compile(rf'(?:{_ANY_UNIT}|[_\-][sh])"\s*:\s*"?-?\d|"(?:{_PLURALS})[_\-]')
_MAY_HOLD = re.compile(rf"(?:{_ANY_UNIT})\b|\d[hms]\b|\dh ?\d|p(?:\d+d)?t\d|\d:\d\d:\d")  # on lower case
# The notations ``_parts`` may read: units' words, glued letters, clock-like lengths, ISO.
READERS = frozenset(["words", "glued", "clock", "iso"])
_Part = tuple[Decimal, int, int, int]  # seconds, the seconds of its unit, start, end


def duration_key(seconds: Decimal) -> str:
    return f"{KEY_PREFIX}{seconds.normalize():f}"


# A word for how often something recurs, and the days between two times it does.
PERIODS = {"daily": 1, "weekly": 7, "biweekly": 14, "bi-weekly": 14, "fortnightly": 14}


def period_keys(text: str, forms: AbstractSet[str]) -> list[str]:
    """The keys of the lengths a source's words for a recurrence write ("biweekly": 14 days)."""
    return [duration_key(Decimal(PERIODS[word] * 86400)) for word in forms & PERIODS.keys()]


@dataclass(frozen=True)
class DurationValue:
    """A length of time as written: its seconds and its span."""

    kind: ClassVar[str] = "duration"
    seconds: Decimal
    start: int
    end: int
    step: Decimal = Decimal(1)  # seconds in the last place written: 3600 for "5 hours"

    @property
    def canonical(self) -> str:
        return f"pt{self.seconds.normalize():f}s"

    def keys(self) -> list[str]:
        return [duration_key(self.seconds)]

    lookups = keys


def _part_ending(text: str, unit: re.Match[str], lenient: bool) -> _Part | None:
    """The part a unit's word ends, read from what stands before it, or None."""
    start, end = unit.span()
    if start and text[start - 1].isalpha():
        return None  # "holiday", "thermometer": no unit's word
    seconds = UNITS[unit.group()]
    before = text[max(0, start - _LOOK_BACK) : start]
    offset = start - len(before)
    if (m := _BEFORE_NUMBER.search(before)) is not None:
        return Decimal(m.group(1).replace(",", "")) * seconds, seconds, offset + m.start(), end
    if seconds == 3600 and (m := _BEFORE_CLOCKED.search(before)) is not None:
        return Decimal(int(m.group(1)) * 3600 + int(m.group(2)) * 60), 60, offset + m.start(), end
    if (m := _BEFORE_HALF.search(before)) is not None:
        return Decimal(seconds) / 2, seconds // 2, offset + m.start(), end
    if (m := _BEFORE_WORDS.search(before)) is None:
        return None
    word, half_after = m.group(1).lower(), text[end : end + len(_HALF_AFTER)].lower() == _HALF_AFTER
    halved = bool(m.group(2) or half_after)
    if word in _ARTICLES and not (lenient or halved or _AND_MORE.match(text, end)):
        return None
    count = Decimal(NUMBER_WORDS.get(word, 1)) + (Decimal("0.5") if halved else 0)
    end += len(_HALF_AFTER) if half_after else 0
    return count * seconds, seconds // 2 if halved else seconds, offset + m.start(), end


def _parts(text: str, low: str, lenient: bool, readers: AbstractSet[str]) -> list[_Part]:
    """Each part a text writes (``low``: it in lower case), in order, in the notations of ``readers``."""
    parts: list[_Part] = []
    if "words" in readers:
        parts.extend(p for unit in _UNIT_WORD.finditer(low) if (p := _part_ending(text, unit, lenient)))
        spaced = _SPACED_HOURS.finditer(text) if " h" in low else ()
        parts.extend((Decimal(m.group()[:-2]) * 3600, 3600, m.start(), m.end()) for m in spaced)
    if lenient and "clock" in readers:
        for m in _CLOCKLIKE.finditer(text):
            h, mi, se = (int(g) for g in m.group().split(":"))
            parts.append((Decimal(h * 3600 + mi * 60 + se), 1, m.start(), m.end()))
    if "glued" in readers:
        for m in [*_GLUED.finditer(text), *(_GLUED_ALONE.finditer(text) if lenient else ())]:
            pieces = [(Decimal(n), _LETTERS[u.lower()]) for n, u in _GLUED_PART.findall(m.group())]
            parts.append((sum((n * u for n, u in pieces), Decimal(0)), pieces[-1][1], m.start(), m.end()))
    for m in _ISO.finditer(text) if "iso" in readers else ():
        if any(m.groups()):  # not "PT" alone
            days, hours, minutes, secs = (Decimal(part or 0) for part in m.groups())
            parts.append((days * 86400 + hours * 3600 + minutes * 60 + secs, 1, m.start(), m.end()))
    return sorted(parts, key=lambda part: (part[2], -part[3]))


def read_durations(
    text: str, lenient: bool = False, readers: AbstractSet[str] = READERS
) -> Iterator[DurationValue]:
    """Every duration ``text`` writes, in order: joined parts each less than one of the unit
    before are one sum ("3 days, 24 hours" is two). ``lenient`` reads a source ("45m" too)."""
    low = text.lower()
    if _MAY_HOLD.search(low) is None:
        return
    if len(low) != len(text):  # a few characters lower-case to two: keep the offsets
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    sums: list[list[_Part]] = []
    for part in _parts(text, low, lenient, readers):
        last = sums[-1][-1] if sums else None
        if last and part[2] < last[3]:
            continue  # "30m" of "1h 30m" is no part of its own
        if last and _JOINER.fullmatch(text, last[3], part[2]) and part[1] < last[1] and part[0] < last[1]:
            sums[-1].append(part)
        else:
            sums.append([part])
    yield from (_value(text, parts) for parts in sums)


def _value(text: str, parts: list[_Part]) -> DurationValue:
    _, unit, start, end = parts[-1]
    written = re.match(_WRITTEN, text[start:end])
    places = len(written.group().partition(".")[2]) if written else 0
    seconds = sum((p[0] for p in parts), Decimal(0))
    return DurationValue(seconds, parts[0][2], end, Decimal(unit).scaleb(-places))


def elapsed(value: DurationValue, clocks: list[tuple[int, str]]) -> tuple[str, str] | None:
    """The labels of two clocks (minutes since their first day's start, a label) the duration elapses
    between, as closely as written ("5 hours": 4.5 to 5.5); a later time earlier in the day is the next's."""
    half = value.step / 2
    for i, (early, first) in enumerate(clocks):
        for late, second in clocks[i + 1 :]:
            minutes = (late - early) % 1440 if late < 1440 and early < 1440 else late - early
            if minutes > 0 and abs(Decimal(minutes * 60) - value.seconds) <= half:
                return first, second
    return None


def duration_keys(text: str, readers: AbstractSet[str] = READERS) -> set[str]:
    """The keys of every duration a source's ``text`` writes in the notations of ``readers``."""
    return {key for value in read_durations(text, True, readers) for key in value.keys()}


# A member named for a rate, "hours_per_day", "minutesPerSession": what stands before "per" is its unit.
_PER_KEY = re.compile(r"(.+?)(?:[_\-\s][Pp]er[_\-\s]|(?<=[a-z])Per(?=[A-Z]))\w+")


def duration_member_keys(name: str, number: str) -> list[str]:
    """The duration key of a JSON number whose member's name ends in a unit (or names one before a
    "per": 6 under ``hours_per_day`` is six hours, 80 under ``km_per_hour`` none), or opens with one
    in the plural and names no price or share ("days_supply", not "days_late_fee"), or none."""
    rate = _PER_KEY.fullmatch(name)
    lead = _LEAD_UNIT.match(name) if _NO_LENGTH.search(name) is None else None
    match = _KEY_WORDS.search(rate.group(1) if rate else name) or lead
    if match is None:
        return []
    unit = UNITS[match.group(1).lower()] if match.group(1) else _KEY_LETTERS[match.group(2).lower()]
    return [duration_key(Decimal(number) * unit)]
