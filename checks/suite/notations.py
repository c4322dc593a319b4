"""Values as people write them: the other spellings under which a value is the same value.

A tool records ``"22:00:00"``, ``"03:00:00+1"``, ``"2024-05-19"`` and ``gift_card_7091239``;
an answer says "10:00 PM", "03:00 AM (next day)", "May 19" and "the gift card ending in
1239". Each pair is one value. This module turns both sides into the same *keys*, so the
evidence checker looks a value up once whatever notation either side used:

- **clock times** are keyed by their 24-hour spelling, ``HH:MM`` and ``HH:MM:SS``. An answer
  that writes AM or PM (or noon, midnight) means one half of the day; a time written with a
  one-digit hour and no mark ("5:00") may mean either half; a two-digit hour with no mark
  ("05:00", "17:00") is a 24-hour time. A next-day mark (``+1``, "(next day)") is a note on
  the time, not part of it: both sides drop it.
- **dates** are keyed by their ISO spelling; a date written without its year ("May 19",
  "Sunday, May 19th") is keyed by its month and day (``md:05-19``), which an ISO date of any
  year also carries.
- **identifier fragments**: a number of four digits or more is the same value as the digit
  run of an identifier that carries it whole (``#7504069`` for ``certificate_7504069``) or
  as its last digits (``#~1239`` for ``gift_card_7091239``). Only digit runs of identifiers
  (tokens with a letter) count, and a fragment of at least four digits.
- **amounts** of money are read by ``money``, in every notation the same way on both sides.

The keys start with ``#`` or ``md:``, which no token of a text can (``#`` is stripped from a
token's ends and ``md:`` holds a colon after letters only in these keys), so they never
collide with a value as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# --- clock times -------------------------------------------------------------------------

# A clock time as one token reads it: "10:00", "22:00:00", "03:00:00+1", "0:05".
_CLOCK_TOKEN = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?(?:[+-]\d)?")
# What may follow a clock time in prose: a half-day mark, then perhaps a zone and a next-day note.
_HALF_DAY = r"(?:[ap](?:\.\s?m\.|\s?m\b)|noon\b|midnight\b)"
_MERIDIEM = re.compile(rf"[ \u00a0]?({_HALF_DAY})", re.I)


def clock_keys(hour: int, minute: int, second: int | None = None) -> list[str]:
    """The 24-hour spellings a clock time is looked up and indexed under."""
    padded = f"{hour:02d}:{minute:02d}"
    keys = [padded, f"{padded}:{second or 0:02d}"]
    if hour < 10:
        keys.append(f"{hour}:{minute:02d}")
    return keys


def read_clock(text: str, value: str, end: int) -> tuple[list[str], int] | None:
    """The keys of a clock time an answer writes (``value`` is its token, ending at ``end``).

    Returns the keys and where the time ends in ``text`` (past a half-day mark), or None when
    the token is no clock time (an hour past 23, a minute past 59, "13:00 PM").
    """
    match = _CLOCK_TOKEN.fullmatch(value)
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    second = int(match.group(3)) if match.group(3) else None
    if hour > 23 or minute > 59 or (second is not None and second > 59):
        return None
    mark = _MERIDIEM.match(text, end)
    if mark is None:
        # "5:00" with no mark may be either half of the day; "05:00" and "17:00" are 24-hour.
        ambiguous = len(match.group(1)) == 1 and 1 <= hour <= 9
        hours = [hour, hour + 12] if ambiguous else [hour]
        return [key for h in hours for key in clock_keys(h, minute, second)], end
    word = mark.group(1).lower().replace(".", "").replace(" ", "")
    if not 1 <= hour <= 12:
        return None
    if word == "noon":
        hours = [12] if hour == 12 else []
    elif word == "midnight":
        hours = [0] if hour == 12 else []
    else:
        hours = [hour % 12 + (12 if word == "pm" else 0)]
    if not hours:
        return None
    return [key for h in hours for key in clock_keys(h, minute, second)], mark.end()


def source_clock_keys(token: str) -> list[str]:
    """The keys a clock-time token of a source adds: its time without seconds or day mark."""
    match = _CLOCK_TOKEN.fullmatch(token)
    if match is None:
        return []
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23 or minute > 59:
        return []
    second = int(match.group(3)) if match.group(3) else None
    return clock_keys(hour, minute, second)


# 12-hour times written in a text ("10:00 PM", "10 pm", "12:00 noon").
_TWELVE_HOUR = re.compile(
    rf"(?<![\d:])(\d{{1,2}})(?::(\d{{2}}))?(?::(\d{{2}}))?[ \u00a0]?({_HALF_DAY})",
    re.I,
)


def twelve_hour_times(text: str) -> Iterable[tuple[list[str], int, int]]:
    """Each 12-hour time of ``text``: its 24-hour keys and its span."""
    for match in _TWELVE_HOUR.finditer(text):
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
        second = int(match.group(3)) if match.group(3) else None
        word = match.group(4).lower().replace(".", "").replace(" ", "")
        if not 1 <= hour <= 12 or minute > 59:
            continue
        if word in ("noon", "midnight"):
            if hour != 12:
                continue
            h24 = 12 if word == "noon" else 0
        else:
            h24 = hour % 12 + (12 if word == "pm" else 0)
        yield clock_keys(h24, minute, second), match.start(), match.end()


# --- dates -------------------------------------------------------------------------------

MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(?:[a-z]*)\.?"
_WEEKDAY = r"(?:(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*\.?,?\s+)?"
_ORDINAL = r"(?:st|nd|rd|th)?"
_MONTH_DAY = re.compile(rf"\b{_WEEKDAY}{_MONTH}\s+(\d{{1,2}}){_ORDINAL}\b(?:,?\s+(\d{{4}})\b)?", re.I)
_DAY_MONTH = re.compile(rf"\b{_WEEKDAY}(\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?{_MONTH}(?:,?\s+(\d{{4}})\b)?", re.I)
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def month_day_key(month: int, day: int) -> str:
    return f"md:{month:02d}-{day:02d}"


def iso_date_keys(value: str) -> list[str]:
    """An ISO date's month-day key, so a date written without its year can ground it."""
    match = _ISO_DATE.fullmatch(value)
    if match is None:
        return []
    return [month_day_key(int(match.group(2)), int(match.group(3)))]


def written_dates(text: str) -> Iterable[tuple[list[str], int, int]]:
    """Each date ``text`` writes in words: its keys (ISO when it gives a year) and its span."""
    for pattern, month_group, day_group in ((_MONTH_DAY, 1, 2), (_DAY_MONTH, 2, 1)):
        for match in pattern.finditer(text):
            month = MONTHS[match.group(month_group)[:3].lower()]
            day = int(match.group(day_group))
            if not 1 <= day <= 31:
                continue
            keys = [month_day_key(month, day)]
            if match.group(3):
                keys.append(f"{int(match.group(3)):04d}-{month:02d}-{day:02d}")
            yield keys, match.start(), match.end()


# --- identifier fragments ----------------------------------------------------------------

MIN_FRAGMENT_DIGITS = 4
_RUN = re.compile(r"\d{4,}")


def fragment_keys(token: str) -> list[str]:
    """The digit-run keys of an identifier token: each run whole, and the last run's tails."""
    if not any(c.isalpha() for c in token):
        return []
    runs = _RUN.findall(token)
    if not runs:
        return []
    keys = ["#" + run for run in runs]
    last = runs[-1]
    if token.endswith(last):
        keys.extend("#~" + last[-n:] for n in range(MIN_FRAGMENT_DIGITS, len(last)))
    return keys


def fragment_lookups(value: str) -> list[str]:
    """The keys under which a number may be an identifier's digit run or its tail."""
    if len(value) < MIN_FRAGMENT_DIGITS or not value.isdigit():
        return []
    return ["#" + value, "#~" + value]


def fragment_span(text: str, key: str) -> tuple[int, int] | None:
    """Where the identifier that carries a fragment key stands in ``text`` (lower-cased)."""
    digits = key.lstrip("#~")
    pattern = (
        rf"[\w.-]*[a-z][\w.-]*?{digits}(?!\d)"
        if key.startswith("#~")
        else rf"[\w.-]*[a-z][\w.-]*?(?<!\d){digits}(?!\d)"
    )
    match = re.search(pattern, text)
    return (match.start(), match.end()) if match else None


# --- counts ------------------------------------------------------------------------------


def _singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def count_key(noun: str, count: int) -> str:
    """The key of "``count`` ``noun``": a list of that many under a key naming the noun."""
    return f"count:{_singular(noun)}:{count}"


def count_keys(value: object, depth: int = 0) -> set[str]:
    """The count keys of the lists a JSON value holds: ``"passengers": [3 rows]`` counts 3
    passengers (the key's last word names the noun: ``open_tickets`` counts tickets)."""
    out: set[str] = set()
    if depth > 12:
        return out
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, list):
                noun = re.split(r"[^a-z]+", str(key).lower())[-1]
                if noun:
                    out.add(count_key(noun, len(item)))
            if isinstance(item, (dict, list)):
                out |= count_keys(item, depth + 1)
    elif isinstance(value, list):
        for item in value[:500]:
            if isinstance(item, (dict, list)):
                out |= count_keys(item, depth + 1)
    return out
