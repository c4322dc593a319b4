"""Lengths of time, read one way wherever they are written.

A tool records ``"duration_minutes": 90`` or ``"PT1H30M"``; a person or an answer writes
"90 minutes", "1 hour 30 minutes", "1.5 hours", "1h 30m" or "2 hrs 15 mins". Each is one
value: a number of seconds. ``read_durations`` turns a text into ``DurationValue`` spans,
and every value is filed and looked up under one key (``duration <seconds>``), so a notation
read on one side is read on the other by construction (the way ``values`` reads dates).

Principles:

- **Units are data.** ``UNITS`` maps each spelling of a unit to its seconds; the pattern is
  built from it. A glued single letter ("1h", "30m") is read only as a part of a sum that
  has an hour in it ("1h 30m", "1h30m"), or as hours alone ("2h"): "30m" alone is as often
  a length, and "90s" a decade.
- **A sum is one value.** "1 hour and 30 minutes" is 5,400 seconds, not 1 and 30.
- **A JSON number whose key names a unit is a duration** (``wait_minutes: 90``,
  ``durationHours: 1.5``): the key says what the number counts.
- **No domain.** Nothing here knows what takes the time.

What is not read: number words ("an hour and a half"), ranges ("2-3 hours") as one value,
and a month or a year, which are no fixed number of seconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from decimal import Decimal
from typing import ClassVar

from .text import alternation

UNITS: dict[str, int] = {
    "seconds": 1,
    "second": 1,
    "secs": 1,
    "sec": 1,
    "minutes": 60,
    "minute": 60,
    "mins": 60,
    "min": 60,
    "hours": 3600,
    "hour": 3600,
    "hrs": 3600,
    "hr": 3600,
    "days": 86400,
    "day": 86400,
    "weeks": 604800,
    "week": 604800,
}
# Numbers written in words, as lengths of time are ("two hours", "an hour and a half").
# "a" and "an" are one only before "and a half" in an answer ("an hour and a half"): "in a
# minute" is seldom a claim of sixty seconds; a source reads them always.
NUMBER_WORDS: dict[str, int] = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "eighteen": 18,
    "twenty": 20,
    "twenty-four": 24,
    "thirty": 30,
    "forty": 40,
    "forty-five": 45,
    "forty-eight": 48,
    "fifty": 50,
    "sixty": 60,
    "seventy-two": 72,
    "ninety": 90,
}
_ARTICLES = {"a": 1, "an": 1}
# Letters glued to a number that name a unit only inside a sum with hours, or as hours.
GLUED_LETTERS: dict[str, int] = {"h": 3600, "m": 60, "s": 1}
KEY_PREFIX = "duration "

_NUMBER = r"\d+(?:\.\d+)?"
# One part: a number and a unit's word ("90 minutes"), or hours with letters glued ("1h",
# "1h30m", "1h 30m 10s"), read whole.
# A hyphen may join them ("a 90-minute session"); a number after a colon is no part's start
# ("1:30 hours" is read whole, below).
_WORD_PART = re.compile(rf"(?<![\w.:])({_NUMBER})[ \u00a0-]?({alternation(UNITS)})\b", re.I)
# The same with the number in words, and perhaps "and a half" after it or after the unit:
# "two hours", "two and a half hours", "an hour and a half"; and "half an hour".
_SPELLED_PART = re.compile(
    rf"(?<![\w-])({alternation([*NUMBER_WORDS, *_ARTICLES])})( and a half)?[ -]"
    rf"({alternation(UNITS)})\b( and a half)?|(?<![\w-])half an? ({alternation(UNITS)})\b",
    re.I,
)
# Hours and minutes with a colon, said to be hours: "1:30 hours", "1:30 h".
_CLOCKED_HOURS = re.compile(r"(?<![\w.:])(\d{1,3}):([0-5]\d)[ \u00a0]?(?:hours|hrs|hr|h)\b", re.I)
# On a source, a clock-like length ("01:30:00") is a duration too (and a time of day).
_CLOCKLIKE = re.compile(r"(?<![\w.:])(\d{1,3}):([0-5]\d):([0-5]\d)(?![\w:]|\.\d)")
_GLUED = re.compile(r"(?<![\w.])\d+(?:\.\d+)?h(?: ?\d{1,2}m(?: ?\d{1,2}s)?)?\b", re.I)
# On a source, minutes or seconds glued alone ("45m") are read too: a reading more there only
# grounds more, while an answer's "45m" may be a length and is not checked as a duration.
_GLUED_ALONE = re.compile(r"(?<![\w.$€£])\d+(?:\.\d+)?[ms]\b", re.I)
_GLUED_PART = re.compile(r"(\d+(?:\.\d+)?)([hms])", re.I)
_ISO = re.compile(r"(?<![\w])P(?:(\d+)D)?T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?\b")
# What may stand between the parts of one sum: "1 hour 30 minutes", "1 hour, 30 minutes",
# "1 hour and 30 minutes".
_JOINER = re.compile(r",? and |, | ")
# Words a JSON member's name ends with that say its number counts a unit (``wait_minutes``).
_KEY_WORDS = re.compile(rf"(?:^|[_\-\s]|(?<=[a-z])(?=[A-Z]))({alternation(UNITS)})$", re.I)
# A JSON member whose name ends in a unit and whose value is a number.
_UNIT_ENDINGS = tuple(UNITS)
_KEYED_UNIT = re.compile(rf'(?:{alternation(UNITS)})"\s*:\s*-?\d')  # on lower-case text
_KEYED = re.compile(r'"([^"\\]{1,80})"\s*:\s*(-?\d+(?:\.\d+)?)(?![\d.eE])')
# Whether a text may hold a duration at all: a unit's word, a glued hour or an ISO period.
_MAY_HOLD = re.compile(rf"(?:{alternation(UNITS)})\b|\d[hms]\b|\dh ?\d|\bP(?:\d+D)?T\d|\d:\d\d:\d", re.I)


def duration_key(seconds: Decimal) -> str:
    return f"{KEY_PREFIX}{seconds.normalize():f}"


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
        """ISO 8601 seconds in lower case, as the suite writes values (``pt5400s``): one
        spelling whatever the notation."""
        return f"pt{self.seconds.normalize():f}s"

    def keys(self) -> list[str]:
        return [duration_key(self.seconds)]

    def lookups(self) -> list[str]:
        return self.keys()


def _parts(text: str, lenient: bool) -> list[tuple[Decimal, int, int, int]]:
    """Each part a text writes: its seconds, its unit's seconds, and its span, in order."""
    parts = [
        (Decimal(m.group(1)) * UNITS[m.group(2).lower()], UNITS[m.group(2).lower()], m.start(), m.end())
        for m in _WORD_PART.finditer(text)
    ]
    for m in _SPELLED_PART.finditer(text):
        word, half, unit, half_after, half_unit = m.groups()
        if half_unit is not None:  # "half an hour"
            whole = UNITS[half_unit.lower()]
            parts.append((Decimal(whole) / 2, whole // 2, m.start(), m.end()))
            continue
        halved = half or half_after
        if word.lower() in _ARTICLES and not (lenient or halved):
            continue
        count = Decimal(NUMBER_WORDS.get(word.lower(), 1)) + (Decimal("0.5") if halved else 0)
        unit_seconds = UNITS[unit.lower()]
        step = unit_seconds // 2 if halved else unit_seconds
        parts.append((count * unit_seconds, step, m.start(), m.end()))
    for m in _CLOCKED_HOURS.finditer(text):
        parts.append((Decimal(int(m.group(1)) * 3600 + int(m.group(2)) * 60), 60, m.start(), m.end()))
    if lenient:
        for m in _CLOCKLIKE.finditer(text):
            h, mi, se = (int(g) for g in m.groups())
            parts.append((Decimal(h * 3600 + mi * 60 + se), 1, m.start(), m.end()))
    glued = [*_GLUED.finditer(text), *(_GLUED_ALONE.finditer(text) if lenient else ())]
    for match in glued:
        pieces = [(Decimal(n), GLUED_LETTERS[u.lower()]) for n, u in _GLUED_PART.findall(match.group())]
        seconds = sum((number * unit for number, unit in pieces), Decimal(0))
        parts.append((seconds, pieces[-1][1], match.start(), match.end()))
    for match in _ISO.finditer(text):
        if any(match.groups()):  # not "PT" alone
            days, hours, minutes, secs = (Decimal(part or 0) for part in match.groups())
            seconds = days * 86400 + hours * 3600 + minutes * 60 + secs
            parts.append((seconds, 1, match.start(), match.end()))
    parts.sort(key=lambda part: (part[2], -part[3]))
    kept: list[tuple[Decimal, int, int, int]] = []
    for part in parts:
        if not kept or part[2] >= kept[-1][3]:  # "30m" of "1h 30m" is no part of its own
            kept.append(part)
    return kept


def read_durations(text: str, lenient: bool = False) -> Iterator[DurationValue]:
    """Every duration ``text`` writes, in the order they stand. Parts joined as one sum are
    one value when each is less than one of the unit before it ("1 hour 30 minutes");
    "3 days, 24 hours" is two values. ``lenient`` reads a source: "45m" too."""
    if _MAY_HOLD.search(text) is None:
        return
    current: list[tuple[Decimal, int, int, int]] = []
    for part in _parts(text, lenient):
        if current:
            _, unit, _, end = current[-1]
            joined = _JOINER.fullmatch(text, end, part[2]) is not None
            if joined and part[1] < unit and part[0] < unit:
                current.append(part)
                continue
            yield _value(text, current)
        current = [part]
    if current:
        yield _value(text, current)


def _value(text: str, parts: list[tuple[Decimal, int, int, int]]) -> DurationValue:
    _, unit, start, end = parts[-1]
    written = re.match(_NUMBER, text[start:end])
    places = len(written.group().partition(".")[2]) if written else 0
    step = Decimal(unit).scaleb(-places)
    return DurationValue(sum((p[0] for p in parts), Decimal(0)), parts[0][2], end, step)


def elapsed(value: DurationValue, clocks: list[tuple[int, str]]) -> tuple[str, str] | None:
    """Two clock times (minutes since the start of their first day, and a label) between
    which the duration elapses, as closely as it is written ("5 hours" is 4.5 to 5.5 hours
    apart, "95 minutes" is 95); the earlier and the later label, or None. A later time
    earlier in the day is on the next day."""
    half = value.step / 2
    for i, (early, first) in enumerate(clocks):
        for late, second in clocks[i + 1 :]:
            minutes = (late - early) % 1440 if late < 1440 and early < 1440 else late - early
            if minutes > 0 and abs(Decimal(minutes * 60) - value.seconds) <= half:
                return first, second
    return None


def duration_keys(text: str) -> set[str]:
    """The keys of every duration ``text`` writes."""
    return {key for value in read_durations(text, lenient=True) for key in value.keys()}


def keyed_durations(json_text: str, words: AbstractSet[str]) -> set[str]:
    """The duration keys of the JSON numbers whose member names end in a unit
    (``"wait_minutes": 90``), read from the text as it stands. ``words`` are the text's
    words in lower case, for the quick test: most results name no unit."""
    if not any(word.endswith(_UNIT_ENDINGS) for word in words):
        return set()
    low = json_text.lower()
    if _KEYED_UNIT.search(low) is None:
        return set()
    out: set[str] = set()
    for name, number in _KEYED.findall(json_text):
        match = _KEY_WORDS.search(name)
        if match is not None:
            out.add(duration_key(Decimal(number) * UNITS[match.group(1).lower()]))
    return out
