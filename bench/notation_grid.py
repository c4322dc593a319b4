"""Whether the checker suite grounds a value that a source and an answer write in different notations.

    .venv/bin/python bench/notation_grid.py [-v] [--cells] [--json [FILE]] [--family NAME ...] [--jobs N]

What it measures: for each family of values (amounts of money, plain numbers, percents,
dates, clock times, durations, identifiers and their digit runs), each value, each way a
source may write it (notation A), each way an answer may write it (notation B) and each
role the source may play, one made-up conversation is judged by ``run_suite``:

- the *same value* cell: the source states the value in notation A and the final answer
  states the same value in notation B. It counts as grounded when no ``flag``-severity
  finding (``unsupported_value`` or any other) has a claim overlapping the answer's value;
- the *wrong value* cell: the same source, and an answer that states a different value in
  notation B (the next day, the next hour, an amount ten more, a run with its last digit
  changed; a notation that can only write round values, such as "$310K" or "an hour and a
  half", gets the next value it can write). It counts as flagged when a ``flag``-severity
  finding's claim overlaps it.

A value the suite does not read at all (no candidate in the answer) raises no finding: its
same-value cell counts as grounded and its wrong-value cell as not flagged. The column
"answer value not read" counts those cells, so a grounding that is only silence shows.

The notations are the ones people and agents write in English-language business text and
APIs write in JSON: grouped and ungrouped figures, cents written or dropped, a currency as
sign, code or word, before or after, European decimal commas, accounting negatives,
"$310K"; US, British, dotted and ISO dates, with weekdays, ordinals and abbreviated
months; 24- and 12-hour clocks, "22h00", "2200 hrs", noon; durations in words, units,
glued letters and "1:30 hours"; identifiers in either case, with "#", a word before them
or code quotes. A notation writes a value only where it can write it unambiguously (a
day-first date "19/05/2024" only when the day is over 12; dots grouping a plain number
only when two groups or a decimal comma show what they are); a few notations appear only
in sources (an ISO timestamp, "PT1H30M", a bare "1250.00" beside a currency field), a few
only in answers (a digit run of an identifier, Markdown bold).

The roles a source can play: the user's message ("I have it noted as X."), the user's
message with the value inside a sentence, punctuation right after it ("(X)", "X?", "X,",
"“X”;"), the system prompt, a tool's text result, a string of a tool's JSON result, a
number of a tool's JSON result (only for families that have a numeric form: then the
number replaces notation A, under a key that says what it counts), and the arguments of an
earlier successful call (``search`` called with the value; its rows do not repeat it). A
JSON result about money carries its currency code beside the amount, as APIs do.

Every conversation is one turn: a question, one call, its result, the answer, judged by
every checker but the model-based one (``entailment``), so no run leaves the machine. The
settings rotate over several unrelated everyday ones; the scoring reads only spans and
severities, never the settings' words. Printed: per family and role, "same value grounded",
"wrong value flagged" and "answer value not read", with totals; ``-v`` groups the failing
cells by family, outcome and notation pair (the roles they fail in, how many, the shortest
example); ``--cells`` lists every failing cell (source, answer, role, what the suite
found); ``--json`` dumps every cell. Needs no database and no network; exits 0 whatever it
finds.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from checks.suite import run_suite  # noqa: E402

# --- notations ---------------------------------------------------------------------------

# A writer gives the value in one notation, or None where the notation cannot write it.
Writer = Callable[[Any], str | None]


@dataclass(frozen=True)
class Notation:
    """One way of writing a family's values; ``name`` shows how it writes a sample value.
    ``wrong``, when given, replaces the family's wrong value for this notation (one it can
    write: "$310K" cannot write 310,010)."""

    name: str
    write: Writer
    wrong: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class NumberForm:
    """How a JSON result writes a value as a bare number, and the key it stands under."""

    name: str
    key: str
    write: Writer


@dataclass(frozen=True)
class Family:
    """A family of values and the notations both sides (or only one side) may use."""

    name: str
    values: tuple[Any, ...]
    notations: tuple[Notation, ...]  # written by sources and answers alike
    wrong: Callable[[Any], Any]  # a different value of the same family
    label: Callable[[Any], str]  # how the value is shown in the output
    key: str  # the JSON key a string source or a call's argument writes it under
    question: str  # the user's question; ``{subject}`` is the setting's subject
    frame: str  # the answer; ``{subject}`` as above, ``{value}`` the value in notation B
    answer_only: tuple[Notation, ...] = ()  # an answer may write these, no source does here
    source_only: tuple[Notation, ...] = ()  # a source may write these, no answer does here
    numbers: tuple[NumberForm, ...] = ()  # the family's numeric forms in a JSON result
    fields: Callable[[Any], dict[str, str]] = lambda value: {}  # beside the value in a JSON result


def bold(notation: Notation) -> Notation:
    """The notation inside Markdown bold, as agents often set the value an answer gives."""

    def write(value: Any) -> str | None:
        text = notation.write(value)
        return None if text is None else f"**{text}**"

    return Notation(f"**{notation.name}** (Markdown bold)", write, notation.wrong)


def plain_decimal(value: Decimal) -> str:
    """A decimal as a person or a JSON encoder writes it: no exponent, no trailing zeros."""
    return f"{value.normalize():f}"


def float_text(value: Decimal) -> str:
    """A decimal as Python's or JavaScript's float encoder writes it: "1250.0", "48.5"."""
    text = plain_decimal(value)
    return text if "." in text else text + ".0"


def grouped(value: Decimal, group: str, point: str, cents: bool) -> str:
    """``value`` to two places, its thousands grouped by ``group`` and its point ``point``;
    the two places only when they are not zero or ``cents`` asks for them."""
    whole, frac = f"{value:.2f}".split(".")
    if group:
        whole = f"{int(whole):,}".replace(",", group)
    return whole + point + frac if cents or frac != "00" else whole


def spaced_number(value: Decimal, group: str, point: str = ".") -> str:
    """A plain number with its thousands grouped by ``group``, its decimals as written."""
    whole, _, frac = plain_decimal(value).partition(".")
    text = f"{int(whole):,}".replace(",", group)
    return f"{text}{point}{frac}" if frac else text


# --- money --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Money:
    """An amount in one currency: a source in euros grounds no answer in dollars."""

    amount: Decimal
    currency: str  # an ISO 4217 code


SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}
CURRENCY_WORDS = {"USD": "dollars", "EUR": "euros", "GBP": "pounds"}


def money_notation(
    name: str,
    body: Callable[[Decimal], str],
    mark: Callable[[Money], str],
    *,
    after: bool = False,
    space: bool = False,
    negative: str = "sign first",
    only: str | None = None,
) -> Notation:
    """A notation of money: the figure ``body`` writes, with ``mark`` (a sign, a code, a
    word) before it, or after it when ``after``, one space between when ``space``.
    ``negative`` says where a minus goes: "sign first" ("-$12.99", "-12.99 USD"), "after
    mark" ("USD -12.99"), or "none" (the notation writes no negative amount). ``only``
    limits it to one currency."""

    def write(m: Money) -> str | None:
        if (only and m.currency != only) or (m.amount < 0 and negative == "none"):
            return None
        sign = mark(m)
        figure = body(abs(m.amount))
        gap = " " if space else ""
        minus = "-" if m.amount < 0 else ""
        if after:
            return f"{minus}{figure}{gap}{sign}"
        if negative == "after mark":
            return f"{sign}{gap}{minus}{figure}"
        return f"{minus}{sign}{gap}{figure}"

    return Notation(name, write)


def symbol(m: Money) -> str:
    return SYMBOLS[m.currency]


def code(m: Money) -> str:
    return m.currency


def word(m: Money) -> str:
    return CURRENCY_WORDS[m.currency]


def accounting(m: Money) -> str | None:
    """A negative amount in brackets, as statements write a refund or a credit: "($12.99)"."""
    if m.amount >= 0:
        return None
    return f"({symbol(m)}{grouped(-m.amount, ',', '.', True)})"


def _scale(amount: Decimal) -> tuple[int, str, int]:
    """The scale "$310K" or "$2.4M" writes an amount on, its letter, and the places it
    allows: one for thousands ("$12.5K"), two for millions ("$2.45M")."""
    return (10**6, "M", 2) if amount >= 10**6 else (10**3, "K", 1)


def short_scale(m: Money, words: bool = False) -> str | None:
    """ "$310K", "$2.4M" ("$2.4 million" with ``words``): only a positive amount of ten
    thousand or more ("$1.25K" is rare) that the scale writes exactly."""
    if m.amount < 10**4 or (words and m.amount < 10**6):
        return None
    scale, letter, places = _scale(m.amount)
    mantissa = m.amount / scale
    if mantissa != round(mantissa, places):
        return None
    return symbol(m) + plain_decimal(mantissa) + (" million" if words else letter)


def next_on_scale(m: Money) -> Money:
    """The next amount "$310K" or "$2.4 million" writes: $311K, $2.5 million."""
    step = 100_000 if m.amount >= 10**6 else 1000
    return Money(m.amount + step, m.currency)


def money_label(m: Money) -> str:
    return f"{plain_decimal(m.amount)} {m.currency}"


def in_cents(m: Money) -> str:
    return str(int(m.amount * 100))


def cents(value: Decimal) -> str:
    return grouped(value, ",", ".", True)


def dropped_cents(value: Decimal) -> str:
    return grouped(value, ",", ".", False)


def ungrouped(value: Decimal) -> str:
    return grouped(value, "", ".", False)


def continental(value: Decimal) -> str:
    return grouped(value, ".", ",", True)


def symbol_and_code(m: Money) -> str:
    """ "$1,250.00 USD": the sign and the code both, as receipts and invoices write them."""
    minus = "-" if m.amount < 0 else ""
    return f"{minus}{symbol(m)}{cents(abs(m.amount))} {m.currency}"


MONEY_NOTATIONS = (
    money_notation("$1,250.00", cents, symbol),
    money_notation("$1,250", dropped_cents, symbol),
    money_notation("$1250", ungrouped, symbol),
    money_notation("US$1,250", dropped_cents, lambda m: "US$", only="USD"),
    money_notation("USD 1,250.00", cents, code, space=True, negative="after mark"),
    Notation("$1,250.00 USD", symbol_and_code),
    money_notation("1,250.00 USD", cents, code, after=True, space=True),
    money_notation("1250 USD", ungrouped, code, after=True, space=True),
    money_notation("1,250 dollars", dropped_cents, word, after=True, space=True, negative="none"),
    money_notation("1 250,00 USD", lambda v: grouped(v, " ", ",", True), code, after=True, space=True),
    money_notation("1.250,00 USD", continental, code, after=True, space=True),
    money_notation("EUR 1.250,00", continental, code, space=True, negative="after mark", only="EUR"),
    money_notation("€1.250,00", continental, symbol, only="EUR"),
    money_notation("1.250,00 €", continental, symbol, after=True, space=True, only="EUR"),
    Notation("($12.99)", accounting),
    Notation("$310K", short_scale, wrong=next_on_scale),
    Notation("$2.4 million", lambda m: short_scale(m, words=True), wrong=next_on_scale),
)

MONEY = Family(
    name="money",
    values=(
        Money(Decimal("1250"), "USD"),
        Money(Decimal("48.5"), "USD"),
        Money(Decimal("12.99"), "USD"),
        Money(Decimal("310000"), "USD"),
        Money(Decimal("7"), "USD"),
        Money(Decimal("2400000"), "USD"),
        Money(Decimal("-12.99"), "USD"),
        Money(Decimal("1250"), "EUR"),
        Money(Decimal("48.5"), "GBP"),
    ),
    notations=MONEY_NOTATIONS,
    answer_only=(bold(MONEY_NOTATIONS[0]),),
    # A bare figure, its currency in a field of its own ("amount": "1250.00", "currency": "USD").
    source_only=(Notation("1250.00 (no currency mark)", lambda m: f"{m.amount:.2f}"),),
    wrong=lambda m: Money(m.amount + 10, m.currency),
    label=money_label,
    key="amount",
    question="What is the charge for {subject}?",
    frame="The charge for {subject} comes to {value}.",
    numbers=(
        NumberForm("JSON number", "amount", lambda m: plain_decimal(m.amount)),
        NumberForm("JSON float (1250.0)", "amount", lambda m: float_text(m.amount)),
        NumberForm("JSON number, two places (1250.00)", "amount", lambda m: f"{m.amount:.2f}"),
        NumberForm("JSON integer under amount_cents", "amount_cents", in_cents),
    ),
    fields=lambda m: {"currency": m.currency},
)

# --- plain numbers ------------------------------------------------------------------------


def dot_grouped(value: Decimal) -> str | None:
    """Thousands grouped by dots, a decimal comma ("2.750.300", "10.482,75"): only where it
    cannot be read as an English decimal point ("41.200" could be 41.2)."""
    text = spaced_number(value, ".", ",")
    return text if "," in text or text.count(".") >= 2 else None


NUMBERS = Family(
    name="numbers",
    values=(Decimal("41200"), Decimal("3406"), Decimal("987654"), Decimal("10482.75"), Decimal("2750300")),
    notations=(
        Notation("41,200", lambda v: spaced_number(v, ",")),
        Notation("41200", plain_decimal),
        Notation("41 200", lambda v: spaced_number(v, " ")),
        Notation("41\u00a0200 (no-break space)", lambda v: spaced_number(v, "\u00a0")),
        Notation("41,200.00", cents),
        Notation("2.750.300 (dots where unambiguous)", dot_grouped),
    ),
    wrong=lambda v: v + 10,
    label=lambda v: plain_decimal(v),
    key="tally",
    question="What is the tally for {subject}?",
    frame="The tally for {subject} is {value}.",
    numbers=(
        NumberForm("JSON number", "tally", plain_decimal),
        NumberForm("JSON float (41200.0)", "tally", float_text),
    ),
)

# --- percents -----------------------------------------------------------------------------


def fraction(value: Decimal) -> str:
    return plain_decimal(value / 100)


PERCENTS = Family(
    name="percents",
    values=(Decimal("12.5"), Decimal("3"), Decimal("87"), Decimal("0.75")),
    notations=(
        Notation("12.5%", lambda v: plain_decimal(v) + "%"),
        Notation("12.5 %", lambda v: plain_decimal(v) + " %"),
        Notation("12.50%", lambda v: f"{v:.2f}%"),
        Notation("12.5 percent", lambda v: plain_decimal(v) + " percent"),
        Notation("12.5 per cent", lambda v: plain_decimal(v) + " per cent"),
        Notation("12.5 pct", lambda v: plain_decimal(v) + " pct"),
    ),
    wrong=lambda v: v + 1,
    label=lambda v: plain_decimal(v) + "%",
    key="share",
    question="What share is recorded for {subject}?",
    frame="The share recorded for {subject} is {value}.",
    numbers=(
        NumberForm("JSON number under share_percent", "share_percent", plain_decimal),
        NumberForm("JSON number under share_pct", "share_pct", plain_decimal),
        NumberForm("JSON fraction under share_rate", "share_rate", fraction),
        NumberForm("JSON fraction under share_ratio", "share_ratio", fraction),
    ),
)

# --- dates --------------------------------------------------------------------------------

MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def month(d: date) -> str:
    return MONTHS[d.month - 1]


def mon(d: date) -> str:
    """The month's name cut to three letters: "Jan", "Feb", "Dec"."""
    return month(d)[:3]


def weekday(d: date) -> str:
    return WEEKDAYS[d.weekday()]


def day_first_slashes(d: date) -> str | None:
    """ "19/05/2024" only when the day is over 12: "03/12/2023" reads as March 12 in the US."""
    return f"{d.day:02d}/{d.month:02d}/{d.year}" if d.day > 12 else None


def noon_utc(d: date) -> str:
    """Seconds since 1970 at noon UTC of the day: the same day in every time zone from
    UTC-11 to UTC+11."""
    return str(int(datetime(d.year, d.month, d.day, 12, tzinfo=UTC).timestamp()))


DATE_NOTATIONS = (
    Notation("2024-05-19", lambda d: d.isoformat()),
    Notation("2024/05/19", lambda d: d.strftime("%Y/%m/%d")),
    Notation("5/19/2024", lambda d: f"{d.month}/{d.day}/{d.year}"),
    Notation("05/19/2024", lambda d: d.strftime("%m/%d/%Y")),
    Notation("5/19/24", lambda d: f"{d.month}/{d.day}/{d.year % 100:02d}"),
    Notation("19/05/2024 (day over 12)", day_first_slashes),
    Notation("19.05.2024", lambda d: d.strftime("%d.%m.%Y")),
    Notation("May 19, 2024", lambda d: f"{month(d)} {d.day}, {d.year}"),
    Notation("May 19 2024", lambda d: f"{month(d)} {d.day} {d.year}"),
    Notation("May 19th, 2024", lambda d: f"{month(d)} {ordinal(d.day)}, {d.year}"),
    Notation("Dec 3, 2023", lambda d: f"{mon(d)} {d.day}, {d.year}"),
    Notation("19 May 2024", lambda d: f"{d.day} {month(d)} {d.year}"),
    Notation("19th May 2024", lambda d: f"{ordinal(d.day)} {month(d)} {d.year}"),
    Notation("3 Dec 2023", lambda d: f"{d.day} {mon(d)} {d.year}"),
    Notation("19-May-2024", lambda d: f"{d.day:02d}-{mon(d)}-{d.year}"),
    Notation("Sunday, May 19th, 2024", lambda d: f"{weekday(d)}, {month(d)} {ordinal(d.day)}, {d.year}"),
    Notation("Sunday, 19 May 2024", lambda d: f"{weekday(d)}, {d.day} {month(d)} {d.year}"),
    Notation("Sun, May 19, 2024", lambda d: f"{weekday(d)[:3]}, {month(d)} {d.day}, {d.year}"),
    Notation("Sun May 19 2024", lambda d: d.strftime("%a %b %d %Y")),  # JavaScript's toDateString
    Notation("19th of May 2024", lambda d: f"{ordinal(d.day)} of {month(d)} {d.year}"),
    Notation("May 19", lambda d: f"{month(d)} {d.day}"),
    Notation("May 19th", lambda d: f"{month(d)} {ordinal(d.day)}"),
    Notation("19 May", lambda d: f"{d.day} {month(d)}"),
)

DATES = Family(
    name="dates",
    values=(date(2024, 5, 19), date(2023, 12, 3), date(2025, 1, 31), date(2024, 2, 29), date(2026, 8, 7)),
    notations=DATE_NOTATIONS,
    answer_only=(bold(DATE_NOTATIONS[7]),),
    source_only=(
        Notation("2024-05-19T14:30:00Z", lambda d: f"{d.isoformat()}T14:30:00Z"),
        Notation("2024-05-19T14:30:00-04:00", lambda d: f"{d.isoformat()}T14:30:00-04:00"),
        Notation("2024-05-19 14:30:00 (a database's timestamp)", lambda d: f"{d.isoformat()} 14:30:00"),
        Notation("Sun, 19 May 2024 14:30:00 GMT", lambda d: d.strftime("%a, %d %b %Y 14:30:00 GMT")),
    ),
    wrong=lambda d: d + timedelta(days=1),
    label=lambda d: d.isoformat(),
    key="date",
    question="When is {subject}?",
    frame="The date set for {subject} is {value}.",
    numbers=(NumberForm("JSON Unix seconds under starts_at", "starts_at", noon_utc),),
)

# --- clock times --------------------------------------------------------------------------


def twelve_hour(t: time, mark: str, minutes: bool) -> str:
    """``t`` on the 12-hour clock with ``mark`` ("AM"/"PM" style) after it; the minutes
    written when ``minutes`` asks or when they are not zero."""
    hour = t.hour % 12 or 12
    half = mark.format(half="PM" if t.hour >= 12 else "AM", low="pm" if t.hour >= 12 else "am")
    clock = f"{hour}:{t.minute:02d}" if minutes or t.minute else f"{hour}"
    return clock + half


def noon_or_midnight(t: time) -> str | None:
    return {time(12, 0): "noon", time(0, 0): "midnight"}.get(t)


TIME_NOTATIONS = (
    Notation("22:00", lambda t: f"{t.hour:02d}:{t.minute:02d}"),
    Notation("7:30 (hour unpadded)", lambda t: f"{t.hour}:{t.minute:02d}"),
    Notation("22:00:00", lambda t: f"{t.hour:02d}:{t.minute:02d}:00"),
    Notation("10 PM", lambda t: twelve_hour(t, " {half}", False)),
    Notation("10:00 PM", lambda t: twelve_hour(t, " {half}", True)),
    Notation("10:00 p.m.", lambda t: twelve_hour(t, " {low[0]}.m.", True)),
    Notation("10pm", lambda t: twelve_hour(t, "{low}", False)),
    Notation("10.00pm", lambda t: twelve_hour(t, "{low}", True).replace(":", ".")),
    Notation("22h00", lambda t: f"{t.hour}h{t.minute:02d}"),
    Notation("2200 hrs", lambda t: f"{t.hour:02d}{t.minute:02d} hrs"),
    Notation("noon", noon_or_midnight, wrong=lambda t: time((t.hour + 12) % 24, t.minute)),
)

TIMES = Family(
    name="times",
    values=(time(22, 0), time(7, 30), time(13, 45), time(0, 15), time(12, 0)),
    notations=TIME_NOTATIONS,
    answer_only=(bold(TIME_NOTATIONS[4]),),
    source_only=(Notation("2024-05-19T22:00:00", lambda t: f"2024-05-19T{t.hour:02d}:{t.minute:02d}:00"),),
    wrong=lambda t: t.replace(hour=(t.hour + 1) % 24),
    label=lambda t: t.strftime("%H:%M"),
    key="time",
    question="What time is {subject}?",
    frame="The time set for {subject} is {value}.",
)

# --- durations ----------------------------------------------------------------------------


def counted(number: int | Decimal, word: str, short: bool = False, plural: str = "s") -> str:
    """ "1 hour", "30 minutes"; with ``short`` the word's letter glued ("1h", "30m")."""
    if short:
        return f"{number}{word[0]}"
    return f"{number} {word}" + ("" if number == 1 else plural)


def hours_and_minutes(minutes: int, hour: str, minute: str, short: bool = False, gap: str = " ") -> str:
    hours, rest = divmod(minutes, 60)
    parts = [counted(hours, hour, short)] if hours else []
    if rest or not hours:
        parts.append(counted(rest, minute, short, "" if minute == "min" else "s"))
    return gap.join(parts)


def decimal_hours(minutes: int) -> Decimal:
    return Decimal(minutes) / 60


NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()


def spelled_duration(minutes: int) -> str | None:
    """ "an hour and a half", "two and a half hours", "four hours", "forty-five minutes":
    whole and half hours, and the quarter hours under one."""
    if minutes < 60:
        return {15: "fifteen minutes", 30: "half an hour", 45: "forty-five minutes"}.get(minutes)
    hours, rest = divmod(minutes, 60)
    if rest not in (0, 30) or hours >= len(NUMBER_WORDS):
        return None
    if hours == 1:
        return "an hour and a half" if rest else "an hour"
    return f"{NUMBER_WORDS[hours]} and a half hours" if rest else f"{NUMBER_WORDS[hours]} hours"


def colon_hours(minutes: int) -> str | None:
    hours, rest = divmod(minutes, 60)
    return f"{hours}:{rest:02d} hours" if hours else None


def iso_duration(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    return "PT" + (f"{hours}H" if hours else "") + (f"{rest}M" if rest else "")


DURATION_NOTATIONS = (
    Notation("90 minutes", lambda m: counted(m, "minute")),
    Notation("90 min", lambda m: f"{m} min"),
    Notation("90 mins", lambda m: f"{m} mins"),
    Notation("1 hour 30 minutes", lambda m: hours_and_minutes(m, "hour", "minute")),
    Notation("1 hour and 30 minutes", lambda m: hours_and_minutes(m, "hour", "minute", gap=" and ")),
    Notation("1 hr 30 min", lambda m: hours_and_minutes(m, "hr", "min")),
    Notation("1.5 hours", lambda m: counted(Decimal(plain_decimal(decimal_hours(m))), "hour")),
    Notation("1.5 hrs", lambda m: counted(Decimal(plain_decimal(decimal_hours(m))), "hr")),
    Notation("1h 30m", lambda m: hours_and_minutes(m, "h", "m", short=True)),
    Notation("1h30m", lambda m: hours_and_minutes(m, "h", "m", short=True, gap="")),
    Notation("1:30 hours", colon_hours),
    Notation("an hour and a half", spelled_duration, wrong=lambda m: m + 60 if m >= 60 else m - 15),
    Notation("a 90-minute session", lambda m: f"a {m}-minute session"),
)

DURATIONS = Family(
    name="durations",
    values=(90, 45, 150, 240),
    notations=DURATION_NOTATIONS,
    answer_only=(bold(DURATION_NOTATIONS[0]),),
    source_only=(
        Notation("PT1H30M", iso_duration),
        Notation("01:30:00", lambda m: f"{m // 60:02d}:{m % 60:02d}:00"),
    ),
    wrong=lambda m: m + 15,
    label=lambda m: f"{m} min",
    key="duration",
    question="How long does {subject} take?",
    frame="The time taken by {subject} is {value}.",
    numbers=(
        NumberForm("JSON number under duration_minutes", "duration_minutes", str),
        NumberForm(
            "JSON number under duration_hours", "duration_hours", lambda m: plain_decimal(decimal_hours(m))
        ),
        NumberForm("JSON number under duration_seconds", "duration_seconds", lambda m: str(m * 60)),
    ),
)

# --- identifiers --------------------------------------------------------------------------

_LAST_RUN = re.compile(r"\d{4,}(?!.*\d{4,})")


def last_run(ident: str) -> re.Match[str]:
    """Where the identifier's last run of four digits or more stands."""
    found = _LAST_RUN.search(ident)
    if found is None:
        raise ValueError(f"{ident!r} has no run of four digits")
    return found


def digit_run(ident: str) -> str:
    return last_run(ident).group()


def ending_in(ident: str) -> str | None:
    """ "ending in 0931": the last four digits, only of an identifier that ends with them."""
    run = last_run(ident)
    return f"the one ending in {run.group()[-4:]}" if run.end() == len(ident) else None


def another_digit(ident: str) -> str:
    """The identifier with the last digit of its run changed."""
    last = last_run(ident).end() - 1
    return ident[:last] + str((int(ident[last]) + 1) % 10) + ident[last + 1 :]


IDENTIFIER_NOTATIONS = (
    Notation("as issued", lambda s: s),
    Notation("lower case", lambda s: s.lower()),
    Notation("upper case", lambda s: s.upper()),
    Notation("with/without #", lambda s: s[1:] if s.startswith("#") else "#" + s),
    Notation("order ORD-20931-XK (a word before)", lambda s: "order " + s),
    Notation("`ORD-20931-XK` (code quotes)", lambda s: f"`{s}`"),
)

IDENTIFIERS = Family(
    name="identifiers",
    values=("ORD-20931-XK", "#A1729", "SMP_77412", "KX9-40417", "inv-88213-b", "4417382"),
    notations=IDENTIFIER_NOTATIONS,
    answer_only=(
        Notation("digit run (20931)", digit_run),
        Notation("#digit run (#20931)", lambda s: "#" + digit_run(s)),
        Notation("ending in 7412 (last four digits)", ending_in),
        bold(IDENTIFIER_NOTATIONS[0]),
    ),
    wrong=another_digit,
    label=lambda s: s,
    key="reference",
    question="What is the reference for {subject}?",
    frame="The reference for {subject} is {value}.",
)

FAMILIES = (MONEY, NUMBERS, PERCENTS, DATES, TIMES, DURATIONS, IDENTIFIERS)

# --- made-up conversations ----------------------------------------------------------------

ROLES = (
    "user",
    "user sentence",
    "system",
    "tool text",
    "tool JSON string",
    "tool JSON number",
    "call arguments",
)

# The role "user sentence": the value inside the user's sentence, punctuation right after it.
USER_SENTENCES = (
    "{question} My note ({source}) may be out of date.",
    "{question} Is it still {source}?",
    "{question} The desk said {source}, if I heard right.",
    "{question} The slip reads “{source}”; please check.",
    "{question} Last time it was {source}!",
    "{question} I was told: {source}.",
)


@dataclass(frozen=True)
class Setting:
    """An everyday subject a conversation is about, and the rows a search of it returns."""

    subject: str
    rows: tuple[str, str]


# No digit, no month or weekday name: nothing in a setting is a value.
SETTINGS = (
    Setting("the reading-room booking at the library desk", ("north alcove", "quiet gallery")),
    Setting("the reagent shelf audit in the lab inventory", ("cold cabinet", "solvent rack")),
    Setting("the coastal station report of the weather service", ("harbour mast", "cliff gauge")),
    Setting("the allotment renewal at the community garden", ("herb bed", "bean row")),
    Setting("the telescope night at the observatory", ("east dome", "roof deck")),
    Setting("the hive inspection at the apiary", ("meadow hive", "orchard hive")),
    Setting("the kiln firing at the pottery studio", ("glaze kiln", "raku kiln")),
)
NEUTRAL_PROMPT = "Answer from the records you look up."


def one_stop(text: str) -> str:
    """A sentence ending in "p.m." takes no second full stop."""
    return text.replace("..", ".")


def conversation(plan: CellPlan, setting: Setting, answer: str, external_id: str) -> dict[str, Any]:
    """One turn in which the plan's role states its source and the final answer is ``answer``.

    For the role ``tool JSON number``, the plan's ``source`` is the number's JSON text."""
    role, family, source, key = plan.role, plan.family, plan.source, plan.key
    subject = setting.subject
    question = family.question.format(subject=subject)
    if role == "user":
        user = f"{question} I have it noted as {source}."
    elif role == "user sentence":
        user = USER_SENTENCES[plan.variant % len(USER_SENTENCES)].format(question=question, source=source)
    else:
        user = question
    tool, arguments = "lookup", "{}"
    fields = {**family.fields(plan.value), "status": "on file"}
    if role == "tool text":
        result = f"Record for {subject}: {source}"
    elif role == "tool JSON string":
        result = json.dumps({key: source, **fields}, ensure_ascii=False)
    elif role == "tool JSON number":
        result = '{"' + key + '": ' + source + ", " + json.dumps(fields, ensure_ascii=False)[1:]
    elif role == "call arguments":
        tool, arguments = "search", json.dumps({key: source}, ensure_ascii=False)
        rows = [{"name": name, "status": "listed"} for name in setting.rows]
        result = json.dumps({"rows": rows, "status": "ok"})
    else:
        result = json.dumps({"status": "on file"})
    call = {"id": "call-1", "type": "function", "function": {"name": tool, "arguments": arguments}}
    system = f"Reference for {subject}: {source}." if role == "system" else NEUTRAL_PROMPT
    return {
        "external_id": external_id,
        "system": one_stop(system),
        "messages": [
            {"role": "user", "content": one_stop(user)},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call-1", "content": result},
            {"role": "assistant", "content": answer},
        ],
    }


# --- the grid -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CellPlan:
    """One conversation to judge: which value, which notations, which role, which side."""

    family: Family
    value: Any
    role: str
    source_notation: str
    answer_notation: Notation
    source: str  # what the source writes (for a JSON number: its JSON text)
    key: str
    wrong: bool  # the answer states another value
    variant: int  # picks the user's sentence; the same for a pair's two cells

    def stated(self) -> str:
        """The value, or the wrong one, in the answer's notation."""
        notation = self.answer_notation
        value = (notation.wrong or self.family.wrong)(self.value) if self.wrong else self.value
        text = notation.write(value)
        if text is None:  # ``plans`` leaves out what a notation cannot write
            raise ValueError(f"{notation.name} cannot write {value!r}")
        return text


@dataclass
class Cell:
    """A judged cell; ``passed`` is "grounded" for a same-value cell, "flagged" for a wrong one."""

    family: str
    value: str
    role: str
    source_notation: str
    answer_notation: str
    expect: str  # "same" or "wrong"
    source: str
    answer: str
    claim: str  # the value as the answer writes it
    passed: bool
    read: bool  # whether the suite read the answer's value as a value at all
    found: str  # what the suite said of the answer's value
    user: str  # the user's message (the role "user sentence" varies it)
    findings: list[dict[str, Any]] = field(default_factory=list)


def _distinct(pairs: Iterator[tuple[Any, Any]]) -> Iterator[Any]:
    """The items of ``(written, item)`` pairs whose written form no earlier item had: a
    notation that writes a value as another one does ("10 PM", "10:00 PM" of 7:30 both
    give "7:30 AM") adds no cell."""
    seen = set()
    for written, item in pairs:
        if written not in seen:
            seen.add(written)
            yield item


def plans(family: Family) -> Iterator[CellPlan]:
    """Every cell of one family: values × source notations × answer notations × roles, each
    once with the same value and once with another."""
    variant = 0
    for value in family.values:
        answers = list(
            _distinct(
                ((n.write(value), n.write((n.wrong or family.wrong)(value))), n)
                for n in family.notations + family.answer_only
            )
        )
        for role in ROLES:
            if role == "tool JSON number":
                sources = [(form.name, form.write(value), form.key) for form in family.numbers]
            else:
                notations = family.notations + family.source_only
                sources = [(n.name, n.write(value), family.key) for n in notations]
            for name, source, key in _distinct(((s[1], s[2]), s) for s in sources):
                if source is None:
                    continue
                for notation in answers:
                    variant += 1
                    for wrong in (False, True):
                        plan = CellPlan(family, value, role, name, notation, source, key, wrong, variant)
                        try:
                            plan.stated()
                        except ValueError:
                            continue
                        yield plan


def judge(plan: CellPlan, number: int) -> Cell:
    """Build the plan's conversation, run the suite, and read what it says of the value."""
    family = plan.family
    stated = plan.stated()
    setting = SETTINGS[number % len(SETTINGS)]
    before, after = family.frame.split("{value}")
    head = before.format(subject=setting.subject)
    answer = head + stated + after.format(subject=setting.subject)
    start, end = len(head), len(head) + len(stated)
    data = conversation(plan, setting, answer, f"grid-{family.name}-{number}")
    report = run_suite(data, skip={"entailment"})
    on_value = [f for f in report["findings"] if _overlaps(f.get("claim"), start, end)]
    flags = [f for f in on_value if f["severity"] == "flag"]
    passed = bool(flags) if plan.wrong else not flags
    return Cell(
        family=family.name,
        value=family.label(plan.value),
        role=plan.role,
        source_notation=plan.source_notation,
        answer_notation=plan.answer_notation.name,
        expect="wrong" if plan.wrong else "same",
        source=plan.source,
        answer=answer,
        claim=stated,
        passed=passed,
        read=_read(report),
        found=_found(report, on_value, start, end),
        user=data["messages"][0]["content"],
        findings=[_short(f) for f in on_value],
    )


def _overlaps(claim: dict[str, Any] | None, start: int, end: int) -> bool:
    return claim is not None and claim["start"] < end and claim["end"] > start


def _short(finding: dict[str, Any]) -> dict[str, Any]:
    claim = finding.get("claim") or {}
    return {"code": finding["code"], "severity": finding["severity"], "claim": claim.get("text")}


def _found(report: dict[str, Any], on_value: list[dict[str, Any]], start: int, end: int) -> str:
    """In a few words: what the suite said of the answer's value, or why it said nothing."""
    if on_value:
        return "; ".join(f"{f['code']} ({f['severity']}) on “{f['claim']['text']}”" for f in on_value)
    grounded = [p for p in report["provenance"] if _overlaps(p.get("claim"), start, end)]
    if grounded:
        places = [e.get("path") or "text" for p in grounded for e in p["evidence"]]
        return "grounded in a tool result at " + ", ".join(places)
    if not _read(report):
        return "not read as a value (no candidate)"
    return "no finding: supplied by the user or the system prompt"


def _read(report: dict[str, Any]) -> bool:
    """Whether the answer held a candidate; the answer writes no value but the cell's."""
    return sum(turn["candidates"] for turn in report["turns"]) > 0


_PLANS: list[CellPlan] = []  # the plans a pool's workers judge, inherited when they fork


def _judge_at(number: int) -> Cell:
    return judge(_PLANS[number], number)


def run_grid(families: tuple[Family, ...], jobs: int = 1) -> list[Cell]:
    _PLANS[:] = [plan for family in families for plan in plans(family)]
    numbers = range(len(_PLANS))
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [_judge_at(number) for number in numbers]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return pool.map(_judge_at, numbers, chunksize=200)


# --- the report ---------------------------------------------------------------------------


def ratio(passed: int, total: int) -> str:
    if total == 0:
        return "-"
    return f"{passed}/{total} ({100 * passed / total:.1f}%)"


def tally(cells: list[Cell]) -> tuple[str, str, str]:
    """Same values grounded, wrong values flagged, and cells whose answer value went unread."""
    same = [c for c in cells if c.expect == "same"]
    wrong = [c for c in cells if c.expect == "wrong"]
    return (
        ratio(sum(c.passed for c in same), len(same)),
        ratio(sum(c.passed for c in wrong), len(wrong)),
        ratio(sum(not c.read for c in cells), len(cells)),
    )


def table(cells: list[Cell], families: tuple[Family, ...]) -> str:
    rows = [("family", "source role", "same value grounded", "wrong value flagged", "answer value not read")]
    for family in families:
        mine = [c for c in cells if c.family == family.name]
        for role in ROLES:
            here = [c for c in mine if c.role == role]
            if here:
                rows.append((family.name, role, *tally(here)))
        rows.append((family.name, "all roles", *tally(mine)))
    for role in ROLES:
        here = [c for c in cells if c.role == role]
        if here:
            rows.append(("all", role, *tally(here)))
    rows.append(("all", "all roles", *tally(cells)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _outcome(cell: Cell) -> str:
    return "same value not grounded" if cell.expect == "same" else "wrong value not flagged"


def _describe(cell: Cell) -> str:
    lines = [f"    source: {cell.source}"]
    if cell.role.startswith("user"):
        lines.append(f"    user:   {cell.user}")
    lines += [f"    answer: {cell.answer}", f"    found:  {cell.found}"]
    return "\n".join(lines)


def failures(cells: list[Cell]) -> str:
    """Every failing cell."""
    lines = []
    for cell in cells:
        if not cell.passed:
            lines.append(
                f"[{cell.family} | {cell.role} | {_outcome(cell)}] "
                f"{cell.source_notation} -> {cell.answer_notation}\n" + _describe(cell)
            )
    return "\n".join(lines) if lines else "(none)"


def grouped_failures(cells: list[Cell]) -> str:
    """The failing cells grouped by family, outcome and notation pair: the roles they fail
    in, how many of the pair's cells fail, and the shortest failing example."""
    failed: dict[tuple[str, str, str, str], list[Cell]] = defaultdict(list)
    totals: dict[tuple[str, str, str, str], int] = defaultdict(int)
    for cell in cells:
        key = (cell.family, _outcome(cell), cell.source_notation, cell.answer_notation)
        totals[key] += 1
        if not cell.passed:
            failed[key].append(cell)
    lines = []
    for key in sorted(failed, key=lambda k: (k[0], k[1], -len(failed[k]), k[2], k[3])):
        family, outcome, source, answer = key
        mine = failed[key]
        roles = sorted({c.role for c in mine}, key=ROLES.index)
        example = min(mine, key=lambda c: (len(c.source) + len(c.claim), ROLES.index(c.role)))
        lines.append(
            f"[{family} | {outcome}] {source} -> {answer}: {len(mine)}/{totals[key]} cells; "
            f"roles: {', '.join(roles)}\n    role:   {example.role}\n" + _describe(example)
        )
    return "\n".join(lines) if lines else "(none)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="the failing cells grouped by notation pair"
    )
    parser.add_argument("--cells", action="store_true", help="list every failing cell")
    parser.add_argument(
        "--json", nargs="?", const="-", metavar="FILE", help="dump every cell as JSON (to FILE, or stdout)"
    )
    parser.add_argument(
        "--family",
        action="append",
        choices=[f.name for f in FAMILIES],
        help="only this family (repeatable)",
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="processes judging cells (default: one per CPU)"
    )
    args = parser.parse_args(argv)
    families = tuple(f for f in FAMILIES if not args.family or f.name in args.family)
    cells = run_grid(families, args.jobs)
    if args.json:
        dumped = json.dumps([asdict(c) for c in cells], indent=1, ensure_ascii=False)
        if args.json == "-":
            print(dumped)
            return 0
        Path(args.json).write_text(dumped + "\n")
    print(table(cells, families))
    if args.verbose:
        print("\nFailing cells by notation pair:\n" + grouped_failures(cells))
    if args.cells:
        print("\nFailing cells:\n" + failures(cells))
    print(f"\n{len(cells)} cells; reproduce: .venv/bin/python bench/notation_grid.py -v")
    return 0


if __name__ == "__main__":
    sys.exit(main())
