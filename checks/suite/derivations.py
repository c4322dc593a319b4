"""Numbers no source carries that are derived from numbers sources do: one table of them.

A figure an answer writes, or a number a write is given, that no source carries may still be no
invention: a rounding or unit conversion of a number read, a column's sum, the answer's own total of
the amounts it lists, a price times the count the user gave, a date moved by the days the user or
the prompt states ("the day before"; to the day of the week the user named) or by a count of days
one record or the prompt holds, the days between two dates one record holds, and, once no other row
does, one operation on two numbers its sentence (or the one before, else the one after too: its
working) writes, in figures (a comma before one or two last digits is a decimal one, "€0,15", where
the answer writes no decimal point) or in words ("twelve months"), a count glued to its unit by a
hyphen too ("the 12-month plan", "a six-week course"), of the MAX_LOCAL nearest it (in a long table,
its own row and those above). ``TABLE`` lists every derivation accepted, one ``Row`` each, in the
order tried; a figure is explained by the first row that gives it: no chains, no averages, no
arbitrary subsets.

- **Every operand is a value a pool holds**, never a number found in passing: one record
  (each newest result read alone: values of two results are never paired by chance), the
  answer's own amounts, earlier answers' known amounts, the user's and the prompt's words,
  the money this turn's results carry, the records the answer names.
- **A percentage the system prompt states is a rate the desk applies** (a share paid out, a
  discount, a fee): an amount the pools hold times it, or with it added or taken off, is
  explained; a percentage only the answer writes is no rate, unless its sentence gives it.
- **The system prompt's date is the day the conversation happens**, held by every record: a span may
  run from it, a count of days may move it; a date the answer names "today", "tomorrow" or
  "yesterday" right before it is that day, and a year written alone that is the one before or after
  its year, with a word of a year around it, is the desk's calendar ("renews in 2026", "the 2026
  season"; never "member number 2026"). A date moved by a count of days a record holds
  (or a period: "biweekly" is 14) is explained only where its sentence writes that count; a count
  the prompt states is the desk's policy ("quotes are valid for 30 days"), and moves a date wherever
  (business days skip the weekend; a range, "5–7 business days", by its first end only beside the
  date its last reaches), and back where the sentence says the window closes before it ("exchanges
  up to 72 hours before the show"), or writes a deadline right before it ("until 15:00 on", "by")
  where the prompt writes "before" right after the count ("free cancellation until 48 hours before
  check-in"). A date its sentence (or the one before) writes that a source grounds moves on or back
  by a length in days they write, itself checked ("60 days from May 20"): never by one no check
  reads ("a week").
- **What the sentence says the figure is must fit**: a total only where labelled one, what
  remains only where said to remain, a figure for N people only as a product by N. An amount
  with cents (not ".00") is the exception: a sum or difference that gives it to the cent needs
  no word, since amounts agree to the cent by chance rarely and round ones often.
- **The rows a call's list arguments name** (the items a write was asked to act on) are a
  group of their list, summed as a whole list is: what the write moved is their total.
- **A unit conversion keeps the measure**: a size scales by powers of 1000 or 1024; a weight or
  distance is converted only into the other system's unit of like size (a kilogram and a pound,
  a kilometre and a mile, a centimetre and an inch), where the figure writes that unit; or a
  figure its sentence writes in the other unit, once a source grounds it or another row explains
  it ("20 lb, about 9.07 kg"): two figures never vouch for each other. A temperature converts
  between Celsius and Fahrenheit likewise, below zero too ("−2 °C (28.4 °F)").
- **A span of days runs between grounded dates**: between two dates its sentence (or the one
  before) writes, each one a source grounds; never to a date a row explained, which the count
  itself may have moved it to (two made-up values would vouch for each other).
- **A clock time moves by a length**: a time its sentence writes moved on or back by a length one
  record holds or the prompt states, or a time one record (or the prompt) holds moved by a length
  the sentence writes ("a 75-minute game from 7:15 PM ends at 8:30 PM"); never a time and a
  length the sentence alone writes, which made-up values would fit as well.
- **A length is an amount of time**: one sum or difference of two lengths its sentence (or the one
  before) writes gives it, or one of them times a count the sentence writes, or it restates one in
  other units, as near as its last written unit ("80 at 312 s is 24,960 s, about 6 h 56 min"). An
  operand is a length a source grounds or another row explains, or a number written with an hour's
  or a second's letter ("the 9 h day"), checked on its own: never a length only the answer writes,
  so made-up lengths never explain one another. A small whole count of its unit ("10 days") is no
  product, which small numbers give by chance. A length labelled a total ("Total | 4 h 30 min") sums
  such lengths before it as a total of amounts does: all since a break or an earlier total, or the
  totals before it, never a part of either.
- **The prompt's clock time is now**, where it writes one date and one time (or several, the
  first in its date's sentence or the next: the later ones are the desk's hours): a length may run
  from it to a time a record of that day holds, or back ("ready at 11:00, 45 minutes from
  now"), or on to a time a record of one later date holds ("Thursday 8:00, 46 hours away"), or
  to or from a time a timestamp writes with its date, over days too ("2031-06-27T23:06Z", in the
  prompt's zone where it states one); never to a time of a record of two dates that no timestamp
  dates, nor to one only the answer writes.
- **The prompt's UTC offset is the desk's clock** ("14:10 BST (UTC+1)"): a time a record holds,
  moved by it, is the same moment as the desk writes it ("13:14:22Z" is "14:14"). A time written
  with a common zone's name restates one its sentence writes before it in another zone, as the
  same moment ("16:00 EDT (15:00 CDT)"); a generic name ("ET") is either season, but two keep one.
- **Tolerance is what the figure's writing allows**: half a unit of its last written digit
  (53.2 for 53.15 to 53.25), half a cent for money, nothing for a date. Numbers are
  ``Decimal``: sums and products are exact; a quotient is taken to QUOTIENT_DIGITS digits and
  matches only when the digits it leaves off could not move it out of the tolerance.
- **Every search is bounded** (``MAX_*``), which can only leave more figures flagged, never
  fewer. An amount is weighed against at most MAX_POOL amounts stated either side of it, so
  each costs the same however long the answer; what a result yields is read once and kept.
- **A total sums what is labelled as it is**: "Total fee" sums every "Fee" before it; it may
  also sum the figures the answer itself computed, without their operands. An amount written
  with a minus before it ("−$11.00", "-€5") is taken off, as a ledger writes it. A total row of a
  markdown table sums its own column, back to the table's start or an earlier total; a total may
  carry on a subtotal before it ("subtotal $115, rush $25, total $140"), never its parts again; in a
  table, a row that sums the rows above it in its column is such a subtotal, however labelled.
  A line that shows its working ("Labour: 3.5 h × $145.00 = $507.50") is one line: the total
  sums its result, and the rate written in its working is no line of its own.
- **A share of a split is what the others leave of it**: the items of a list, one amount each,
  that add up to the amount the answer states last before the list, in prose, where the line
  before the list or its items say it is paid or split, are its shares ("Total: $1,680. Payment:
  - $250 voucher - $1,430 card"): one no source carries is the total less the others, each of
  them known. An amount further back (a subtotal before tax, an old price) is no total of them.
- **An amount per a unit is one row's price or total over its count of that unit** ("$4.50 per
  load": a row's charge over its ``loads``), the count under a member whose name has a word for
  the unit ("gal" names ``gallons``; ``item_id`` names a row, no count): the record's one such
  row, or the row the sentence names. An average is no one row's rate.
- **The answer's own arithmetic is read as written** ("(€18 + €4.50 rush) × 4 posters = €90"),
  before an "=" on the figure's line (a list's dash above it is no minus), in brackets after it,
  or in the table cell before the figure's (a calculation column: "| 14 × ($6.50 + $4.00) |
  $147.00 |"): products before sums, one level of brackets first, a word or two after a term
  naming what it counts. Where it gives the figure, the figure is explained, its terms being
  values checked on their own, and a count a word names ("3 nights", too small to be checked) one
  the conversation holds; where it does not, the flag says what it gives. Digits joined by an "x"
  are a size ("4x6").
- **One explained figure is an operand of the next** (a total, then what it leaves):
  amounts are tried in rounds (``derive``); a count of days may run to a date the answer
  explained, and a date move on from one, once (``Pools.answer_days``).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from functools import cached_property, lru_cache
from itertools import chain, islice, product, takewhile
from operator import itemgetter
from typing import Any

from .decimals import EXACT, ZERO, exactly, is_number, number_text, read_number
from .durations import (
    KEY_PREFIX,
    KEYED_UNIT,
    PERIODS,
    DurationValue,
    duration_member_keys,
    elapsed,
    read_durations,
)
from .evidence_index import Source, join_path, json_leaves, last_key, text_leaves
from .money import AMOUNT_TEXT, CODES, MARK_AFTER_TEXT, MARK_BEFORE_TEXT, read_amount, read_amounts
from .text import (
    COUNT_WORD,
    MAX_SENTENCE,
    NUMBER_WORDS,
    Sentence,
    name_tokens,
    parse_number,
    sentence_at,
    sentences,
    singular,
)
from .tokens import Candidate, digit_count, value_text
from .types import MAX_ITEMS, Evidence, walk
from .values import WEEKDAYS, read_dates, read_times

MAX_ROWS = 500
MAX_COLUMNS = 16
MAX_GROUP_KEYS = 6
MAX_GROUPS_PER_KEY = 64
MAX_DERIVED = 20_000
MAX_SOURCES = 32
MAX_RUN = 8
MAX_POOL = 96
MAX_COUNT = 9
MAX_HELD = 16  # the dates (or clock times) of one source a day count or a duration moves
MAX_OFFSET_SOURCES = 4  # the newest results whose own day counts move their own dates
MAX_BUSINESS_DAYS = 3660  # about fourteen years of working days
QUOTIENT_DIGITS = 50  # past any digit a figure written for people has
_QUOTIENT = Context(prec=QUOTIENT_DIGITS, Emax=MAX_EMAX, Emin=MIN_EMIN)
_CENT = Decimal("0.005")  # a row's tolerance for money: half a cent

_SCALES = tuple(  # exact: 1000 and 1024 to the ±3rd have at most 21 digits
    (Decimal(base) ** (sign * power), f"{mark} {base}" + (f"^{power}" if power > 1 else ""))
    for base in (1000, 1024)
    for mark, sign in (("×", 1), ("÷", -1))
    for power in (1, 2, 3)
)
# A weight or distance unit of one system, its size (in kilograms or metres) and the other
# system's unit of like size: a figure in one may convert a number a record carries in the other.
_MEASURES: dict[str, tuple[str, str]] = {
    "kg": ("1", "lb"),
    "lb": ("0.45359237", "kg"),
    "g": ("0.001", "oz"),
    "oz": ("0.028349523125", "g"),
    "km": ("1000", "mi"),
    "mi": ("1609.344", "km"),
    "m": ("1", "ft"),
    "ft": ("0.3048", "m"),
    "cm": ("0.01", "in"),
    "in": ("0.0254", "cm"),
}
# The two scales of temperature, each the other's: a degree Fahrenheit is 1/1.8 of a Celsius one.
_TEMPERATURES = {"°f": "°c", "°c": "°f"}
_FAHRENHEIT_DEGREE = Decimal("1.8")
_MEASURE_OF = {"kgs": "kg", "kilogram": "kg", "kilograms": "kg", "lbs": "lb", "gram": "g", "grams": "g"}
_MEASURE_OF |= {"ounce": "oz", "ounces": "oz", "kms": "km", "mile": "mi", "miles": "mi", "inch": "in"}
_MEASURE_OF |= {"inches": "in", "feet": "ft"}
_MEASURE_OF |= {w: "km" for w in ("kilometre", "kilometres", "kilometer", "kilometers")}
_MEASURE_OF |= {w: "m" for w in ("metre", "metres", "meter", "meters")}
_UNIT_WORDS = CODES | frozenset(  # a currency is a unit too: ``price_eur``
    "tb gb mb kb pb b bytes tib gib mib kib ms s sec secs seconds us ns pct percent count iops mbps gbps "
    "kbps hours hrs h min mins minutes days w kw watts".split()
)
_NUMBER_LINE = re.compile(r"^\d+(?:\.\d+)?$", re.M)
_ZERO_LED = re.compile(r"^0\d", re.M)
_PERCENT_FIELD = re.compile(
    r'"([^"\\]{0,64}(?:pct|percent|perc|per[ _-]cent|util|usage|%)[^"\\]{0,64})"\s*:\s*"?(-?\d+(?:\.\d+)?)',
    re.I,
)
# Every match of _PERCENT_FIELD names one of these in its key; finding none of them is far
# cheaper than running the pattern, which backtracks at every quote of a large result.
_PERCENT_WORDS = ("pct", "perc", "per_cent", "per-cent", "per cent", "util", "usage", "%")
_MONEY_KEY = re.compile(
    r"price|amount|total|cost|fee|fare|balance|paid|payment|refund|charge|credit|subtotal|tax|value", re.I
)
_TOTAL_WORDS = re.compile(
    r"(?i)\b(?:(?:sub)?total(?:s|l?ing|led)?|sum|combined|altogether|overall|in all|grand)\b"
)
_REMAINDER_WORDS = re.compile(
    r"(?i)\b(?:remain(?:s|ing|der)?|refund(?:s|ed)?|balance|difference|left|due|owe[ds]?|outstanding|additional|extra|"
    r"rest|back|less|more|save[ds]?|savings?|cheaper|reduc(?:ed|tion)|discount|credit(?:ed)?|charged?)\b"
)
_BREAK = re.compile(r"\n[ \t]*\n|\n[ \t]*(?:#{1,6}\s|\d+[.)]\s)")
_COLUMN = re.compile(r"[^\s×÷−Σ]*\[[^\]]*\]\.[^\s×÷−]+")  # a column's path in an aggregate's name
# The terms of written arithmetic are amounts in any notation (``money``), or bare numbers, each
# with at most two words naming what it counts ("2 adults × $24", "6 nights"), and one level of
# brackets ("($64 + $10 holiday) × 6 nights").
_OPERATOR_SIGN = r"[-+\u2212\u00d7*]|(?<![a-z])(?!(?<=\d)x\d)x(?![a-z])"  # "4x6" is a size
_NAMING = r"(?i:[ \u00a0](?!x\b)[a-z][a-z-]*){0,2}"
_TERMS = rf"{AMOUNT_TEXT}{_NAMING}(?:\s*(?:{_OPERATOR_SIGN})\s*{AMOUNT_TEXT}{_NAMING})*"
_FACTOR = rf"(?:{AMOUNT_TEXT}{_NAMING}|\(\s*{_TERMS}\s*\){_NAMING})"
_EXPRESSION = rf"{_FACTOR}(?:\s*(?:{_OPERATOR_SIGN})\s*{_FACTOR})+"
_EXPRESSION_BEFORE = re.compile(rf"({_EXPRESSION})\s*=\s*[*_]*{MARK_BEFORE_TEXT}?\s*$")  # "= **$792**"
# A table's cell of arithmetic right before the figure's: "| 14 × ($6.50 + $4.00) | $147.00 |".
_CELL_BEFORE = re.compile(rf"\|\s*({_EXPRESSION})\s*\|\s*[*_]*{MARK_BEFORE_TEXT}?\s*$")
_EXPRESSION_AFTER = re.compile(rf"{MARK_AFTER_TEXT}?\s*\(\s*({_EXPRESSION})\s*\)")
_NEAR = 16
_PIECE = re.compile(
    rf"\s*(?:(?P<open>\()|(?P<close>\))|(?P<amount>{AMOUNT_TEXT})|(?P<sign>{_OPERATOR_SIGN})|[a-z-]+)", re.I
)
# A number a sentence writes as an operand: grouped or plain, never a piece of a date, a time or
# an identifier ("2025-06-10", "9:30", "RC-48213"); a rate's slash before a word is no date's
# ("$45.00/hour").
# A unit glued to a count by a hyphen: "a 12-month plan", "the six-month season" count months.
_UNIT_AFTER = r"(?:minute|hour|day|night|week|month|year|person|seat|ticket|item|piece|pack|unit)s?\b"
_OPERAND = re.compile(
    r"(?<![\w.,:/\-])(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\d+,\d{1,2})(?![\w:]|-(?!"
    + _UNIT_AFTER
    + r")|/[^a-z]|[.,]\d)",
    re.I,
)
# A count in one word, never a piece of a longer one: "twenty-five" is no twenty and no five.
_WORD_OPERAND = re.compile(rf"(?<![\w-])(?:{COUNT_WORD})(?![\w]|-(?!{_UNIT_AFTER}))", re.I)
MAX_LOCAL = 12  # the operands one sentence may give
_PEOPLE = r"(?:passengers?|people|persons?|travell?ers?|guests?|adults?)"
_FOR_PEOPLE = re.compile(rf"\bfor\s+(?:all\s+|the\s+)?(\d+|{COUNT_WORD})\s+(?:of\s+you\s+|{_PEOPLE})", re.I)
_COUNT = re.compile(rf"\b(\d+|{COUNT_WORD})\b", re.I)
_SHIFT = re.compile(
    rf"(?i)\b(?:(?P<n>\d+|{COUNT_WORD}|a)\s+(?P<unit>days?|weeks?)\s+(?P<dir>later|after|earlier|before|sooner|prior)"
    r"|(?:the\s+)?(?P<next>next|following)\s+day|(?:the\s+)?day\s+(?P<after>after|before)|(?P<tomorrow>tomorrow))\b"
)
# Words that end what a total's label names ("total fee for the group": a fee).
_LABEL_END = frozenset("for of is are was were will be to in on at by from due with this these that".split())
_CHOSEN = "named by the call"  # the group of a list's rows a call's list arguments name
_WEEKDAY = re.compile(rf"\b(next\s+)?({'|'.join(WEEKDAYS)})\b", re.I)
_BUSINESS = re.compile(r"(?i)business|working|week_?day")
_PERIOD = re.compile(rf"(?i)\b(?:{'|'.join(PERIODS)})\b")  # a recurrence's length (``durations``)
# Days no calendar length counts, written in words: "10 business days", "a 3-working-day window".
# A range gives both its ends: "5–7 business days" is 5 and 7 (its first end only beside the last's).
_BUSINESS_DAYS = re.compile(
    rf"(?i)\b(?:(\d+|{COUNT_WORD})\s*[-–]\s*)?(\d+|{COUNT_WORD})[\s-]+(?:business|working)[\s-]+days?\b"
)


@dataclass(frozen=True)
class Operand:
    """A value a derivation may use: where it stands and what grounds it."""

    value: Decimal
    label: str  # how the finding names it: "$105 (stated)", "payment_history[0].amount"
    evidence: tuple[Evidence, ...] = ()
    start: int | None = None  # where this answer states it
    end: int | None = None


@dataclass(frozen=True)
class Stated:
    """An amount the answer writes, in answer order."""

    value: Decimal
    start: int
    end: int
    text: str
    known: bool  # grounded in the conversation, or explained here
    evidence: tuple[Evidence, ...] = ()
    total: bool = False  # labelled a total on its line (``_label``)
    computed: bool = False  # explained here by a derivation, not read
    taken_off: bool = False  # written with a minus before it ("−$11.00"): a ledger's deduction
    term: bool = False  # a term of the arithmetic the answer writes for another amount (``_terms``)

    def operand(self) -> Operand:
        return Operand(self.value, f"{self.text} (stated)", self.evidence, self.start, self.end)


@dataclass(frozen=True)
class Derivation:
    """How a figure is made: its kind (a row's), from what, and what grounds the operands."""

    kind: str
    source: str  # the operands named: "100 × clusters[].used_tb ÷ clusters[].total_tb"
    evidence: tuple[Evidence, ...]
    operands: tuple[Operand, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "from": self.source}
        if self.operands:
            out["operands"] = [
                dict(text=o.label, value=f"{o.value:.2f}".rstrip("0").rstrip("."), start=o.start, end=o.end)
                for o in self.operands
            ]
        return out


@dataclass(frozen=True)
class NamedRecord:
    """A JSON object of a result that an identifier names (a sample, a work item), with its amounts."""

    name: str
    amounts: dict[str, Operand]  # path inside the record -> the amount there


@dataclass
class Figure:
    """A value to explain: which rows may (``Row.shapes``), and what they read of it."""

    number: Decimal | None
    shapes: frozenset[str]
    precision: int = 0  # decimals as written
    key: str = ""  # the value as the caller files it (``Pools.known``)
    text: str = ""  # as written
    days: tuple[date, ...] = ()  # the full dates it may be
    at: int = -1  # its place among the answer's amounts (``Pools.amounts``)
    start: int = -1  # where the answer writes it
    unit: str | None = None  # a figure's unit as written ("lb")
    # Read by ``derive`` for an amount: the amounts near it and its place among them, its
    # sentence, the words around it, and the people the sentence says it is for.
    near: list[Stated] = field(default_factory=list)
    index: int = 0
    sentence: Sentence | None = None
    said: str = ""
    people: int | None = None


@dataclass
class Pools:
    """The operands a figure may be derived from, by pool (``Row.pool``)."""

    records: list[Source]  # the newest results, newest first: each one record
    answer: str = ""
    amounts: list[Candidate] = field(default_factory=list)  # the answer's amounts, in order
    known: dict[str, tuple[Evidence, ...]] = field(default_factory=dict)  # value -> what grounds it
    turn: list[Source] = field(default_factory=list)  # this turn's results
    read: list[Operand] = field(default_factory=list)  # money leaves of this turn's results
    earlier: list[Operand] = field(default_factory=list)  # earlier answers' known amounts, the user's
    counts: list[Operand] = field(default_factory=list)  # counts the user wrote or a list holds
    named: dict[str, NamedRecord] = field(default_factory=dict)  # identifier -> the record it names
    names: list[tuple[int, str]] = field(default_factory=list)  # where the answer names a record
    shifts: list[int] = field(default_factory=list)  # days the user or the prompt moves a date by
    weekdays: dict[int, int] = field(default_factory=dict)  # a day of the week named -> days it may lie ahead
    holding: Callable[[date], Source | None] = lambda day: None  # the source a date is taken from
    held: Callable[[str], bool] = lambda key: False  # whether a source or a person wrote a value (its key)
    prompt: list[Source] = field(default_factory=list)  # the system prompt: the day the conversation happens
    answer_days: list[date] = field(default_factory=list)  # dates the answer writes, grounded or explained
    grounded_days: set[date] = field(default_factory=set)  # of those, the ones a source grounds
    before: dict[Decimal, Derivation] = field(default_factory=dict)  # amounts earlier answers explained
    # Weights and distances the answer writes that a source grounds (or, on a second pass, a row explains).
    figures: list[Candidate] = field(default_factory=list)
    # Lengths of time the answer writes that a source grounds or a row before the ``last`` ones explains:
    # where each starts, its seconds, as written.
    lengths: list[tuple[int, Decimal, str]] = field(default_factory=list)
    min_digits: int = 4  # the digits a number needs to be checked on its own (``EvidenceOptions``)

    @cached_property
    def terms(self) -> set[int]:
        """Where the answer writes an amount as a term of another's working (``_terms``), found once
        for every ``derive`` over these pools."""
        return _terms(self.answer, self.amounts)

    @cached_property
    def answer_sentences(self) -> list[Sentence]:
        """The answer's sentences, split once for every row that reads them."""
        return sentences(self.answer)


# --- one record: what a result's numbers give ------------------------------------------------
# A figure over a list's rows: its magnitude (a difference or a complement is stated without
# its sign), how far it may lie from the true one (a ratio's digits left off), its kind, how made.
_Aggregate = tuple[Decimal, Decimal, str, str]
_Find = Callable[[Figure, Pools, Decimal], Derivation | None]


def kept[T](read: Callable[[Source], T]) -> Callable[[Source], T]:
    """``read(source)``, computed on first use and kept in the source's cache."""
    return lambda source: source.kept(read.__name__, lambda: read(source))


def _lines(source: Source, dated: bool) -> tuple[str, bool]:
    """A source's words one a line (with its dates' keys, where only a year is a number), and whether
    they are ASCII with no number led by 0 and a digit: then a number's line starts with its whole part."""
    words = [*source.forms.words, *source.value_keys("dates")] if dated else source.forms.words
    lines = "\n" + "\n".join(words) + "\n"
    return lines, lines.isascii() and not _ZERO_LED.search(lines)


def _near(source: Source, target: Decimal, tol: Decimal) -> str | None:
    """The least number a source carries within ``tol`` of ``target``, as spelled; its dates are
    read only where a year (1 to 9999) may lie that near. Where the window holds few whole
    numbers, only the lines that start with one are read; else all, sorted once."""
    low, high = target - tol, target + tol
    year = max(1, math.ceil(low))  # the least a year near enough could be
    dated = year <= high and year <= 9999
    first, last = max(0, math.floor(low)), math.floor(high)
    lines, plain = source.kept(f"lines {dated}", lambda: _lines(source, dated))
    if last - first < 16 and plain:
        near = []
        for mark in (f"\n{whole}{end}" for whole in range(first, last + 1) for end in ".\n"):
            at = lines.find(mark)
            while at != -1:
                text = lines[at + 1 : lines.index("\n", at + 1)]
                if _NUMBER_LINE.fullmatch(text) and low <= (value := Decimal(text)) <= high:
                    near.append((value, text))
                at = lines.find(mark, at + 1)
        return min(near)[1] if near else None

    def sorted_numbers() -> list[tuple[Decimal, str]]:
        found = sorted(_NUMBER_LINE.findall(lines))
        # By spelling, then (stably) by value: comparing the pairs would compare Decimals twice.
        return sorted(zip(map(Decimal, found), found, strict=True), key=itemgetter(0))

    numbers = source.kept(f"numbers {dated}", sorted_numbers)
    i = bisect_left(numbers, (low, ""))
    return numbers[i][1] if i < len(numbers) and numbers[i][0] <= high else None


@kept
def _percents(source: Source) -> list[tuple[Decimal, int]]:
    """Percentage fields: each value with where its number stands. Only for ASCII text is
    ``lower`` exactly what ``re.I`` matches, so other text is left to the pattern itself."""
    text = source.text[:2_000_000]
    if text.isascii() and not any(map(text.lower().__contains__, _PERCENT_WORDS)):
        return []
    found = ((read_number(m.group(2)), m.start(2)) for m in _PERCENT_FIELD.finditer(text))
    return [(value, at) for value, at in found if value is not None]


def _at(source: Source, path: str) -> tuple[Evidence, ...]:
    return (Evidence(call_id=source.call_id, path=path),)


@kept
def _tables(source: Source) -> list[_Table]:
    """Every list of rows (objects) in a JSON result, with its path; rows are not walked."""
    leaves = text_leaves(source.arguments)
    # What a call's list arguments name (``item_ids[0]``); a single value's rows are a text group already.
    named = {text for path, text in leaves if path.endswith("]")}
    nodes = walk(source.parsed(), join_path, into=lambda node: not _is_table(node))
    return list(islice((_Table(path, node, named) for path, node, _ in nodes if _is_table(node)), 64))


def _is_table(node: Any) -> bool:
    """A list holding rows (objects): answered at its first row, however long the list."""
    return isinstance(node, list) and any(isinstance(row, dict) for row in node[:MAX_ROWS])


def _unit(key: str) -> str | None:
    parts = re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", key)
    tail = parts[-1].lower() if len(parts) > 1 else ""
    return tail if tail in _UNIT_WORDS else None


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """A row with the numbers of its nested objects as columns of their own (``prices.economy``)."""
    out = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items() if is_number(v)})
        else:
            out[key] = value
    return out


class _Table:
    """A list's rows, read for their aggregates: over all the rows, and over each group that
    shares a text value, each column's sum, the same-unit ratio of two (a fraction, a
    percentage and its complement) and their difference. A group's are made on first need."""

    def __init__(self, path: str, items: list[Any], named: set[str]) -> None:
        rows = [row for row in items[:MAX_ROWS] if isinstance(row, dict)]
        if any(dict in map(type, row.values()) for row in rows[:32]):
            rows = [_flat(row) for row in rows]
        self.path, self.columns, texts = path, list[str](), list[str]()
        for row in rows[:32]:
            for k, v in row.items():
                if is_number(v):
                    if k not in self.columns and len(self.columns) < MAX_COLUMNS:
                        self.columns.append(k)
                elif isinstance(v, str) and k not in texts:
                    texts.append(k)
        # Past the first rows, a nested object changes a column only where a key has a point.
        if any("." in k for k in self.columns + texts):
            if any(dict in map(type, row.values()) for row in rows[32:]):
                rows = [_flat(row) for row in rows]
        # Integers and Decimals as read; summed from 0, integers add as integers (far faster); exact.
        self.values: dict[str, list[Any]] = {
            c: [v if is_number(v := row.get(c)) else 0 for row in rows] for c in self.columns
        }
        self.groups: list[tuple[str, list[int] | None]] = [("", None)] if self.columns else []
        keyed: list[tuple[str, dict[str, list[int]]]] = []
        for k in texts if self.columns else ():
            members: dict[str, list[int]] = {}
            for i, row in enumerate(rows):
                if isinstance(v := row.get(k), str):
                    members.setdefault(v, []).append(i)
                    if len(members) > MAX_GROUPS_PER_KEY:
                        break
            if 1 < len(members) <= MAX_GROUPS_PER_KEY:
                keyed.append((k, members))
        for k, members in sorted(keyed, key=lambda item: len(item[1]))[:MAX_GROUP_KEYS]:
            self.groups.extend((f"{k}={v}", idx) for v, idx in members.items())
        # The rows the call's own arguments name (the items a write was asked to act on); most calls
        # name none, and then no row is read for them.
        chosen = (
            [i for i, row in enumerate(rows) if any(isinstance(v, str) and v in named for v in row.values())]
            if named
            else []
        )
        if self.columns and 2 <= len(chosen) < len(rows):
            self.groups.append((_CHOSEN, chosen))
        units = {c: _unit(c) for c in self.columns}
        self.pairs = [(a, b) for a in self.columns for b in self.columns if a != b and units[a] == units[b]]
        self.most = len(self.groups) * (len(self.columns) + 4 * len(self.pairs))  # entries at most
        self.summed: dict[int, dict[str, Decimal]] = {}
        self.made: dict[int, list[_Aggregate]] = {}

    @exactly
    def sums(self, group: int) -> dict[str, Decimal]:
        if group not in self.summed:
            idx = self.groups[group][1]
            self.summed[group] = {
                c: ZERO + sum(cells if idx is None else map(cells.__getitem__, idx))
                for c, cells in self.values.items()
            }
        return self.summed[group]

    def may(self, group: int, kind: str, low: Decimal, high: Decimal) -> bool:
        """Whether a group's column sum or difference may lie from ``low`` to ``high``: its
        sums are made first, its other aggregates only where one does."""
        sums = self.sums(group)
        if kind == "column-sum":
            return any(low <= abs(total) <= high for total in sums.values())
        if kind == "column-difference":
            return any(low <= sums[a] - sums[b] <= high for a, b in self.pairs)
        return True

    @exactly
    def entries(self, group: int) -> list[_Aggregate]:
        if group in self.made:
            return self.made[group]
        label, sums = self.groups[group][0], self.sums(group)
        name = {c: f"{self.path}[{label}].{c}" for c in sums}
        out = [(abs(total), ZERO, "column-sum", f"Σ {name[c]}") for c, total in sums.items()]
        for a, b in self.pairs:
            if sums[b]:
                ratio, off = _quotient(sums[a], sums[b])
                out += [
                    (abs(100 * ratio), 100 * off, "column-ratio", f"100 × {name[a]} ÷ {name[b]}"),
                    (abs(ratio), off, "column-ratio", f"{name[a]} ÷ {name[b]}"),
                    (abs(100 - 100 * ratio), 100 * off, "complement", f"100 − 100 × {name[a]} ÷ {name[b]}"),
                ]
            if sums[a] >= sums[b]:
                out.append((sums[a] - sums[b], ZERO, "column-difference", f"{name[a]} − {name[b]}"))
        self.made[group] = out
        return out


def _aggregates(source: Source, kind: str, low: Decimal, high: Decimal) -> Iterator[_Aggregate]:
    """The aggregates of a source's lists, group by group, at most MAX_DERIVED; a group whose
    sums cannot come near is passed over, where the bound cannot fall before it."""
    tables, left = _tables(source), MAX_DERIVED
    every = sum(table.most for table in tables) > MAX_DERIVED  # the bound may cut: count them all
    for table in tables:
        for group in range(len(table.groups)):
            if every or table.may(group, kind, low, high):
                found = table.entries(group)
                yield from found[:left]
                left -= len(found)
                if left <= 0:
                    return


def _quotient(a: Decimal, b: Decimal) -> tuple[Decimal, Decimal]:
    """``a ÷ b`` to QUOTIENT_DIGITS digits, and how far it may lie from the true quotient."""
    ratio = _QUOTIENT.divide(a, b)
    if EXACT.multiply(ratio, b) == a:
        return ratio, ZERO
    return ratio, Decimal(1).scaleb(ratio.adjusted() - QUOTIENT_DIGITS + 1)


def _leaf(kind: str, how: str, source: Source, offset: int | None) -> Derivation:
    """A derivation from the number of ``source`` at ``offset``, named by its path."""
    path = source.path_at(offset) if offset is not None else ""
    return Derivation(kind, how.format(path or f"{source.call_id} text"), _at(source, path))


def _scaled(kind: str, scales: tuple[tuple[Decimal, str], ...]) -> _Find:
    """The row of a number a record carries (``_near``) times one of ``scales``."""

    def find(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
        if kind == "unit-scale" and measure_of(f.unit) in _TEMPERATURES:
            return None  # a temperature is no thousandth of a number (``_temperature`` converts it)
        for source in p.records:
            for factor, label in scales:
                if (spelling := _near(source, (f.number or ZERO) / factor, tol / factor)) is not None:
                    span = source.span_of(spelling)
                    return _leaf(kind, f"{{}} {label}".rstrip(), source, span[0] if span else None)
        return None

    return find


def measure_of(unit: str | None) -> str | None:
    """The weight or distance unit (of ``_MEASURES``) a figure's unit spells, or None."""
    spelled = (unit or "").lower()
    measure = _MEASURE_OF.get(spelled, spelled)
    return measure if measure in _MEASURES or measure in _TEMPERATURES else None


def _converted(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A figure written in a unit of ``_MEASURES``, a number a record carries (or a grounded figure its
    sentence writes, ``Pools.figures``) in the other system's."""
    unit = measure_of(f.unit)
    if unit in _TEMPERATURES:
        return _temperature(f, unit, p, tol)
    if unit is None:
        return None
    size, other = _MEASURES[unit]
    factor = _QUOTIENT.divide(Decimal(_MEASURES[other][0]), Decimal(size))  # one ``other`` in ``unit``s
    found = _scaled("unit-scale", ((factor, f"({other}) in {unit}"),))(f, p, tol)
    if found is not None:
        return found
    return _restated(
        f, p, unit, other, lambda c: abs((c.number or ZERO) * factor - (f.number or ZERO)) <= tol
    )


def _restated(
    f: Figure, p: Pools, unit: str, other: str, fits: Callable[[Candidate], bool]
) -> Derivation | None:
    """A grounded figure the figure's sentence writes in the ``other`` unit (``Pools.figures``) that
    ``fits`` it, restated: "20 lb, about 9.07 kg", "75°F (24°C)"."""
    sentence = sentence_at(p.answer_sentences, f.start)
    if sentence is None:
        return None
    for c in p.figures:
        if sentence.start <= c.start < sentence.end and measure_of(c.unit) == other and fits(c):
            return Derivation("restated", f"{c.text} in {unit}", p.known.get(c.value, ()))
    return None


def _temperature(f: Figure, unit: str, p: Pools, tol: Decimal) -> Derivation | None:
    """A temperature a record carries (or a grounded figure its sentence writes) in the other scale:
    "24" under ``high_c`` is "75°F" (75.2); "75°F (24°C)"; "−2 °C (28.4 °F)". Only a member named for
    a temperature (``_temperatures_held``) in the other scale, or in none its name gives, is read."""
    other, degrees = _TEMPERATURES[unit], _signed(f.number or ZERO, p.answer, f.start)
    if unit == "°f":  # the figure, and how near it must come, in the other scale
        target, width = _QUOTIENT.divide(degrees - 32, _FAHRENHEIT_DEGREE), tol / _FAHRENHEIT_DEGREE
    else:
        target, width = degrees * _FAHRENHEIT_DEGREE + 32, tol * _FAHRENHEIT_DEGREE
    for source in p.records:
        for value, scale, path in _temperatures_held(source):
            if scale in (other, None) and abs(value - target) <= width:
                return Derivation("unit-scale", f"{path} ({other}) in {unit}", _at(source, path))
    return _restated(
        f, p, unit, other, lambda c: abs(_signed(c.number or ZERO, p.answer, c.start) - target) <= width
    )


# A member named for a temperature, and the scale its name gives: "high_c", "setpoint_f", "temp".
_TEMPERATURE_KEY = re.compile(r"(?i)temp|celsius|fahrenheit|degree|setpoint|(?:^|[_\-])([cf])$")


@kept
def _temperatures_held(source: Source) -> list[tuple[Decimal, str | None, str]]:
    """The JSON numbers a result holds under a member named for a temperature, each with its scale
    where the name gives one ("°c" for ``high_c``), and its path."""
    if source.role != "tool" or not source.looks_json:
        return []
    out = []
    for path, number in json_leaves(source.parsed(), is_number)[:MAX_ITEMS]:
        name = last_key(path)
        if (named := _TEMPERATURE_KEY.search(name)) is not None:
            letter = (named.group(1) or "").lower() or next(
                (c for word, c in (("celsius", "c"), ("fahrenheit", "f")) if word in name.lower()), ""
            )
            out.append((Decimal(number), f"°{letter}" if letter else None, path))
    return out


def _signed(number: Decimal, text: str, start: int) -> Decimal:
    """A number written at ``start`` of ``text``, negated where a minus stands right before it."""
    return -number if text[max(0, start - 1) : start] in ("-", "−") else number


def _complement(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    for source in p.records:
        for value, offset in _percents(source):
            if 0 <= value <= 100 and abs(100 - value - (f.number or ZERO)) <= tol:
                return _leaf("complement", "100 − {}", source, offset)
    return None


def _column(kind: str, within: str = "") -> _Find:
    """The row over lists' rows of one ``kind``, of aggregates whose name holds ``within``: "[]."
    takes every row of a list only, never a group of them (a record's total is the sum of all its
    parts); ``_CHOSEN``, the rows a call names."""

    def find(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
        number = f.number or ZERO
        low, high = number - tol, number + tol  # two comparisons settle most of a long list
        for source in p.records:
            for magnitude, off, found, how in _aggregates(source, kind, low, high):
                if found != kind or not low <= magnitude <= high or within not in how:
                    continue
                if not off or abs(magnitude - number) + off <= tol:
                    columns = [Evidence(call_id=source.call_id, path=part) for part in _COLUMN.findall(how)]
                    return Derivation(kind, how, tuple(columns or [Evidence(call_id=source.call_id)]))
        return None

    return find


def _per_unit(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """An amount written per a unit ("$3.24/gal", "$150 per night") that one row's price or total
    over its count of that unit gives, the count under a member named for the unit (``gallons``,
    ``nights``): the record's one such row, or the row the sentence names by one of its words. An
    average's sentence asks for more than one row, and no row answers it."""
    written = p.answer[max(0, f.start - 8) : f.start + len(f.text) + 32]
    offset = max(0, f.start - 8)
    per = next((a.per for a in read_amounts(written) if offset + a.number_start == f.start), None)
    sentence = sentence_at(p.answer_sentences, f.start)
    said = sentence.text.lower() if sentence else ""
    if per is None or len(per) < 2 or f.number is None or _AVERAGE.search(said):
        return None
    for source in p.records:
        rows = []  # each row with its money and its counts of the unit
        for path, row, _ in islice(walk(source.parsed(), join_path, max_depth=math.inf), MAX_ROWS):
            if isinstance(row, dict):
                numbers = [(key, Decimal(v)) for key, v in row.items() if is_number(v) and v > 0]
                money = [
                    (key, v) for key, v in numbers if _MONEY_KEY.search(key) and not _NOT_A_PRICE.search(key)
                ]
                units = [(key, v) for key, v in numbers if _names_unit(key, per)]
                if money and units:
                    rows.append((path, row, money, units))
        for path, row, money, units in rows:
            named = any(isinstance(v, str) and len(v) >= 3 and v.lower() in said for v in row.values())
            for (m_key, m), (u_key, u) in product(money, units) if len(rows) == 1 or named else ():
                if abs(m / u - f.number) <= tol:
                    paths = (join_path(path, m_key), join_path(path, u_key))
                    operands = [
                        Operand(m, paths[0], _at(source, paths[0])),
                        Operand(u, paths[1], _at(source, paths[1])),
                    ]
                    return _made("unit-rate", f"{paths[0]} ÷ {paths[1]}", operands)
    return None


_AVERAGE = re.compile(r"\b(?:average[ds]?|avg|mean|overall|across|typical(?:ly)?)\b")
_NOT_A_PRICE = re.compile(r"tax|discount|refund|credit|balance|deposit|tip", re.I)
_NOT_A_COUNT = frozenset("id ids number no num code ref".split())  # what names a row, not its size


def _names_unit(key: str, unit: str) -> bool:
    """Whether a member's name holds a word for ``unit`` ("night" names ``nights``, "gal" as its
    abbreviation ``gallons``), and is no price and no row's name (``item_id``, ``room_number``)."""
    words = name_tokens(key)
    if _MONEY_KEY.search(key) or not words or words[-1] in _NOT_A_COUNT:
        return False
    return any(singular(word) == singular(unit) or word.startswith(unit) for word in words)


# --- the answer's amounts and the conversation's ---------------------------------------------
@kept
def money_leaves(source: Source) -> list[Operand]:
    """The numbers a JSON result carries under a money key, each with its path."""
    nodes = walk(source.parsed(), join_path)
    found = ((p, node) for p, node, _ in nodes if is_number(node) and _MONEY_KEY.search(p))
    return [Operand(Decimal(node), path, _at(source, path)) for path, node in islice(found, MAX_POOL)]


@kept
def list_lengths(source: Source) -> list[tuple[str, int]]:
    """Where each list of records (2 to 9 of them) a JSON result holds stands, and its length."""
    found = (
        (path, len(node))
        for path, node, _ in walk(source.parsed(), join_path)
        if isinstance(node, list)
        and 2 <= len(node) <= MAX_COUNT
        and all(isinstance(row, dict) for row in node)
    )
    return list(islice(found, 16))


def list_counts(source: Source) -> list[Operand]:
    """The lengths of the lists of records a JSON result holds (``list_lengths``): counts the data gave."""
    return [
        Operand(Decimal(n), f"the {n} rows of {path or 'the result'}", _at(source, path))
        for path, n in list_lengths(source)
    ]


def named_records(source: Source, names: set[str]) -> list[NamedRecord]:
    """The objects of a JSON result holding one of ``names`` as a value, with their money amounts."""
    out: list[NamedRecord] = []

    def amounts(node: dict[str, Any], path: str, inner: str, depth: int) -> dict[str, Operand]:
        found: dict[str, Operand] = {}
        for key, item in node.items():
            here, rel = join_path(path, str(key)), f"{inner}.{key}" if inner else str(key)
            if isinstance(item, dict) and depth < 3:
                found.update(amounts(item, here, rel, depth + 1))
            elif is_number(item) and _MONEY_KEY.search(rel):
                found[rel] = Operand(Decimal(item), here, _at(source, here))
        return found

    for path, node, _ in walk(source.parsed(), join_path) if names else ():
        if isinstance(node, dict):
            name = next((v for v in node.values() if isinstance(v, str) and v.lower() in names), None)
            if name is not None and (found := amounts(node, path, "", 0)):
                labelled = {k: replace(o, label=f"{k} of {name}") for k, o in found.items()}
                out.append(NamedRecord(name.lower(), labelled))
                if len(out) >= 256:
                    break
    return out


def user_counts(text: str) -> list[Operand]:
    """Whole numbers from 2 to 9 the user wrote, in figures or words."""
    found = ((parse_number(word), word) for word in _COUNT.findall(text))
    return [
        Operand(Decimal(n), f"{word} (the user's words)") for n, word in found if n and 2 <= n <= MAX_COUNT
    ]


def line_label(answer: str, start: int) -> str:
    """The words before an amount on its line ("Total Price:"), read no further back than a
    sentence is (``text.MAX_SENTENCE``): each amount of one long line costs the same."""
    begin = max(0, start - MAX_SENTENCE)
    return answer[answer.rfind("\n", begin, start) + 1 or begin : start]


def _label_words(answer: str, start: int) -> list[str]:
    return re.findall(r"[a-z]+", line_label(answer, start).lower())


def _made(kind: str, source: str, operands: list[Operand]) -> Derivation:
    return Derivation(kind, source, tuple(e for o in operands for e in o.evidence), tuple(operands))


def _summed(run: list[Stated] | list[Operand], f: Figure, tol: Decimal) -> Derivation | None:
    """The sum of ``run``, where it comes within ``tol`` of the amount ``f``."""
    operands = [s.operand() if isinstance(s, Stated) else s for s in run]
    signed = [-s.value if isinstance(s, Stated) and s.taken_off else s.value for s in run]
    if abs(abs(sum(signed, ZERO)) - f.near[f.index].value) > tol:  # deductions alone: what they take
        return None
    return _made("sum", " + ".join(s.text if isinstance(s, Stated) else s.label for s in run), operands)


@dataclass(frozen=True)
class _Evaluated:
    """Written arithmetic's value, its kind (its operators'), its counts (bare numbers a word
    names: "3 nights"), all its bare numbers, and whether money dresses any term."""

    value: Decimal
    kind: str
    counts: tuple[Decimal, ...]
    bare: tuple[Decimal, ...]
    priced: bool


def _evaluate(expression: str) -> _Evaluated | None:
    """The written ``(a + b) × c − d`` read, or None when it is not one: products first, one level
    of brackets first of all, the words naming a term read past."""
    pieces: list[str | Decimal] = []
    counts: list[Decimal] = []
    bare: list[Decimal] = []
    named = None  # the last term read, where no mark of money dresses it
    for match in _PIECE.finditer(expression):
        if match.group("amount") is not None:
            amount = read_amount(match.group("amount"))
            if amount is None:
                return None
            pieces.append(amount.magnitude)
            named = amount.magnitude if amount.kind == "number" else None
            bare += [amount.magnitude] if amount.kind == "number" else []
        elif match.lastgroup is not None:
            pieces.append(match.group().strip())
            named = None
        elif named is not None:  # a word naming a bare term: a count of things ("3 nights")
            counts.append(named)
            named = None
    kinds: set[str] = set()
    value, at = _sum_of(pieces, 0, kinds)
    if value is None or at != len(pieces):
        return None
    kind = next((k for k in ("difference", "product") if k in kinds), "sum")
    terms = sum(isinstance(piece, Decimal) for piece in pieces)
    return _Evaluated(value, kind, tuple(counts), tuple(bare), terms > len(bare))


def _sum_of(pieces: list[str | Decimal], at: int, kinds: set[str]) -> tuple[Decimal | None, int]:
    """The sum of the products from ``pieces[at]`` on, and where it ends."""
    total, sign = ZERO, 1
    while True:
        term, at = _product_of(pieces, at, kinds)
        if term is None:
            return None, at
        total += sign * term
        if at == len(pieces) or pieces[at] not in ("+", "-", "\u2212"):
            return total, at
        sign = 1 if pieces[at] == "+" else -1
        kinds.add("sum" if sign == 1 else "difference")
        at += 1


def _product_of(pieces: list[str | Decimal], at: int, kinds: set[str]) -> tuple[Decimal | None, int]:
    """The product of the factors from ``pieces[at]`` on (a number, or a bracket's sum), and where it ends."""
    result = Decimal(1)
    while at < len(pieces):
        piece = pieces[at]
        factor: Decimal | None = None
        if isinstance(piece, Decimal):
            factor, at = piece, at + 1
        elif piece == "(":
            factor, at = _sum_of(pieces, at + 1, kinds)
            at += 1  # past the bracket's close, which must stand there
            if at > len(pieces) or pieces[at - 1] != ")":
                factor = None
        if factor is None:
            return None, at
        result *= factor
        if at == len(pieces) or str(pieces[at]).lower() not in ("\u00d7", "*", "x"):
            return result, at
        kinds.add("product")
        at += 1
    return None, at


@dataclass(frozen=True)
class Working:
    """The answer's own arithmetic for one figure: as written, its value, its kind (its
    operators'), its counts, and where it stands in the answer."""

    written: str
    value: Decimal
    kind: str
    counts: tuple[Decimal, ...]
    start: int
    end: int


def written_arithmetic(answer: str, start: int, end: int) -> Iterator[Working]:
    """The answer's own arithmetic for the figure at ``start:end``, just before it (``… = $X``), in
    the table cell before its own, or in brackets after. Looked for only where an "=", a "|" or a
    "(" stands near the figure. A cell stands apart from the figure, so it must price something (a
    size, "8 × 10", does not), and each of its bare numbers is a count the conversation must hold."""
    before = cell = after = None
    near = answer[max(0, start - _NEAR) : start]
    line = max(0, start - 200, answer.rfind("\n", 0, start) + 1)  # a list's dash above is no minus
    if "=" in near:
        before = _EXPRESSION_BEFORE.search(answer, line, start)
    if "|" in near:
        cell = _CELL_BEFORE.search(answer, line, start)
    if "(" in answer[end : end + _NEAR]:
        after = _EXPRESSION_AFTER.match(answer, end)
    for match in (before, cell, after):
        if match is None or (read := _evaluate(match.group(1))) is None:
            continue
        if match is cell and not read.priced:
            continue
        counts = read.bare if match is cell else read.counts
        written = " ".join(match.group(1).split())
        yield Working(written, read.value, read.kind, counts, match.start(1), match.end(1))


def _written(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """The answer's own arithmetic (``written_arithmetic``) where it gives the figure."""
    figure = f.near[f.index]
    counts = {c.value for c in p.counts}
    for w in written_arithmetic(p.answer, figure.start, figure.end):
        # A money term is a value checked on its own; a count of things ("3 nights") is too small
        # to be one, so the conversation must hold it: else a made-up count would pass unseen.
        held = all(n in counts or p.held(number_text(n)) for n in w.counts)
        if abs(w.value - figure.value) <= tol and held:
            return (
                Derivation(w.kind, f"{w.written} as the answer writes it", ())
                if f.people is None or w.kind == "product"
                else None
            )
    return None


def _listed(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """All the amounts stated since the last break (the answer's start, a blank line, a numbered
    item or heading, the previous total, or that total carried on: "Subtotal $115, rush $25, total
    $140"), never a part of them; else the totals listed before."""
    stated, index = f.near, f.index
    for start in range(index - 1, max(-1, index - 1 - MAX_RUN), -1):
        closed = start == 0 or stated[start - 1].total
        if closed or _BREAK.search(p.answer, stated[start - 1].end, stated[start].start):
            carried = (
                [stated[start - 1 : index]] if start and _carried(p.answer, stated[start - 1], f) else []
            )
            for whole in [stated[start:index], *carried]:
                run = [s for s in whole if not s.term]  # a line's result stands for its working
                if len(run) >= 2 and all(s.known for s in run):
                    if found := _summed(run, f, tol):
                        return found
            if closed:
                break
    return _last(f, [s for s in stated[:index] if s.known and s.total], tol)


def _carried(answer: str, earlier: Stated, f: Figure) -> bool:
    """Whether a total may carry ``earlier`` on: a subtotal, into a total that is none ("Subtotal
    $115 ... Total $140"), never one group's total into the next group's."""
    return bool(_SUBTOTAL.search(line_label(answer, earlier.start))) and not _SUBTOTAL.search(
        line_label(answer, f.near[f.index].start)
    )


_SUBTOTAL = re.compile(r"(?i)sub-?\s?total")


def _last(f: Figure, run: list[Stated], tol: Decimal) -> Derivation | None:
    """The sum of the last two, three, ... up to MAX_RUN amounts of ``run`` that gives the figure."""
    return next((d for k in range(2, min(len(run), MAX_RUN) + 1) if (d := _summed(run[-k:], f, tol))), None)


def _computed(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """The last figures the answer computed before this one, without the amounts they were made from."""
    return _last(f, [s for s in f.near[: f.index] if s.computed], tol)


def _cell(answer: str, at: int) -> tuple[int, int] | None:
    """Where the line holding ``at`` starts, and the column of a markdown table row it stands in."""
    start = answer.rfind("\n", 0, at) + 1
    line = answer[start:at]
    return (start, line.count("|")) if line.lstrip().startswith("|") else None


def _table_column(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """The amounts of the rows above in the figure's column of a markdown table, back to an earlier
    total or the table's start: a total row's sum of its own column, whatever other columns hold."""
    figure = f.near[f.index]
    here = _cell(p.answer, figure.start)
    if here is None:
        return None
    start, column = here
    top = start  # the table's first line: every line from it to the figure's is a row
    while top and (row := _cell(p.answer, top - 1)) is not None:
        top = row[0]
    run: list[Stated] = []
    carried: list[Stated] = []  # an earlier total of the column, which a running total carries on
    for s in reversed(f.near[: f.index]):
        if s.start < top:
            break  # above the table
        cell = _cell(p.answer, s.start)
        in_column = cell is not None and cell[1] == column and cell[0] < start
        if s.total:
            carried = [s] if in_column and _carried(p.answer, s, f) else []
            break
        if in_column:
            run.append(s)
    # A row the answer made that sums the rows above it since the table's start or the last such row
    # (a deduction taken off) is a subtotal, whatever its label ("**Fares** | $1,218"): the total
    # carries the last one on with the rows after it, and only that. A row a result holds as an item
    # of its own is no subtotal, whatever it equals.
    top_down = run[::-1]
    segment, running = 0, ZERO
    for j, s in enumerate(top_down):
        signed = -s.value if s.taken_off else s.value
        if j - segment >= 2 and (s.computed or not s.known) and abs(running - signed) <= _CENT:
            segment, running = j, ZERO
        running += signed
    if segment:
        rows = top_down[segment:]
        return _summed(rows, f, tol) if 2 <= len(rows) <= MAX_RUN and all(s.known for s in rows) else None
    for rows in (run, run + carried) if carried else (run,):
        if 2 <= len(rows) <= MAX_RUN and all(s.known for s in rows):
            if (found := _summed(rows[::-1], f, tol)) is not None:
                return found
    return None


def _like_labelled(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """Every amount stated before a total whose label ends in what the total's label names
    after its "total" ("Total fee: $9" after "Fee: $4" and "Fee: $5"), whatever stands between."""
    words = _label_words(p.answer, f.near[f.index].start)
    at = next((i for i in range(len(words) - 1, -1, -1) if _TOTAL_WORDS.fullmatch(words[i])), len(words))
    named = list(takewhile(lambda word: word not in _LABEL_END, words[at + 1 : at + 4]))
    if not named:
        return None
    labelled = (s for s in f.near[: f.index] if not s.total)
    run = [s for s in labelled if _label_words(p.answer, s.start)[-len(named) :] == named]
    if not 2 <= len(run) <= MAX_RUN or not all(s.known for s in run):
        return None
    return _summed(run, f, tol)


def _named_sums(f: Figure, p: Pools) -> Iterator[list[Operand]]:
    """One amount, under one key, of every record the answer names since a break, nearest break first."""
    stated, figure = f.near, f.near[f.index]
    first = max(0, stated[0].start - MAX_SENTENCE)
    starts = {0, *(m.end() for m in _BREAK.finditer(p.answer, first, figure.start))}
    starts.update(s.end for s in stated[: f.index] if s.total)
    end = bisect_left(p.names, f.sentence.end if f.sentence else figure.end, key=itemgetter(0))
    for start in sorted(starts, reverse=True)[:MAX_RUN]:
        names = p.names[bisect_left(p.names, start, key=itemgetter(0)) : end]
        records = [p.named[n] for n in dict.fromkeys(name for _, name in names) if n in p.named]
        if 2 <= len(records) <= MAX_RUN:
            for key in sorted(set(records[0].amounts).intersection(*(r.amounts for r in records[1:]))):
                yield [r.amounts[key] for r in records]


def _named(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    return next((d for run in _named_sums(f, p) if (d := _summed(run, f, tol))), None)


def _total_less(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """The nearest earlier total less every amount stated between it and the figure."""
    stated, index = f.near, f.index
    back = range(index - 1, max(-1, index - 1 - MAX_RUN), -1)
    at = next((t for t in back if stated[t].known and stated[t].total), index)  # index: none
    run = stated[at:index]  # the total, then every amount it is less
    if len(run) < 2 or not all(s.known for s in run):
        return None
    if abs(run[0].value - sum((s.value for s in run[1:]), ZERO) - stated[index].value) > tol:
        return None
    return _made("total-less", " − ".join(s.text for s in run), [s.operand() for s in run])


# A line that is an item of a list: a dash, a star, a bullet or a number before it.
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*\u2022]|\d{1,2}[.)])[ \t]")


_SPLIT_WORDS = re.compile(
    r"\b(?:pa(?:id|y|ying|yment|yments)|split|charged?|covered?|voucher|card|credit|gift|cash|wallet|points"
    r"|account|insurance|hsa|fsa|deposit|installments?|instalments?|share|each)\b",
    re.I,
)


@lru_cache(maxsize=4)
def _list_runs(answer: str) -> dict[int, tuple[int, int]]:
    """Each list item's line start -> the start of its run's first item and the end of its last,
    read once per answer: a long list is walked once, not once for each of its amounts."""
    runs: dict[int, tuple[int, int]] = {}
    run: list[int] = []
    start = 0
    while start <= len(answer):
        stop = answer.find("\n", start)
        stop = len(answer) if stop < 0 else stop
        if _LIST_ITEM.match(answer, start):
            run.append(start)
        elif run:
            runs.update(dict.fromkeys(run, (run[0], start - 1)))
            run = []
        start = stop + 1
    if run:
        runs.update(dict.fromkeys(run, (run[0], len(answer))))
    return runs


def _shares(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """One share of an amount split over a list's items, one amount an item: the shares of the
    figure's run of items add up to the amount the answer states and knows last before the list,
    which is paid or split ("$250 from the voucher", "$1,430 on the card" of "$1,680"), and the
    figure is what the others leave of it."""
    figure = f.near[f.index]
    line_start = p.answer.rfind("\n", 0, figure.start) + 1
    if not _LIST_ITEM.match(p.answer, line_start):
        return None
    first, end = _list_runs(p.answer)[line_start]  # the run's first item's start, its last item's end
    shares = [s for s in f.near if first <= s.start < end]
    items = {p.answer.rfind("\n", 0, s.start) for s in shares}
    others = [s for s in shares if s is not figure]
    if not 1 <= len(others) < MAX_RUN or len(items) != len(shares) or not all(s.known for s in others):
        return None  # an item with two amounts is no share, nor one of a list too long to be a split
    whole = sum((s.value for s in shares), ZERO)
    # The total is the amount the list's lead-in states last ("comes to $860, paid as:"), in prose
    # (no item of another list), and the line before the list or its items say it is paid or split.
    before = [s for s in f.near if s.end <= first]
    if not before or _LIST_ITEM.match(p.answer, p.answer.rfind("\n", 0, before[-1].start) + 1):
        return None
    total = before[-1]
    if (
        not total.known
        or abs(total.value - whole) > tol
        or not _SPLIT_WORDS.search(p.answer, p.answer.rfind("\n", 0, len(p.answer[:first].rstrip())) + 1, end)
    ):
        return None
    return _made(
        "shares",
        " − ".join(s.text for s in [total, *others]),
        [total.operand(), *(s.operand() for s in others)],
    )


def _difference(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """``a − b`` of two amounts the pools hold; two only read, from one result (a price and its refund)."""
    pool = [s.operand() for i, s in enumerate(f.near) if s.known and i != f.index][:MAX_POOL]
    pool += p.earlier[-MAX_POOL:] + p.read[:MAX_POOL]
    said = len(pool) - len(p.read[:MAX_POOL])  # the first ``said`` were stated, not only read
    for i, a in enumerate(pool):
        for b in pool[i + 1 :]:
            if i >= said and a.evidence and b.evidence and a.evidence[0].call_id != b.evidence[0].call_id:
                continue
            big, small = (a, b) if a.value >= b.value else (b, a)
            if abs(big.value - small.value - f.near[f.index].value) <= tol and big.value != small.value:
                return _made("difference", f"{big.label} − {small.label}", [big, small])
    return None


_PERCENT = re.compile(r"(?<![\d.,])(\d{1,2}(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)", re.I)


def _prompt_rate(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A percentage the system prompt states (a fee, a discount, a share paid out) of an amount the
    pools hold, or that amount with it added or taken off: "paid at 40% of the resale price"."""
    rates = [(Decimal(m.group(1)), m.group()) for s in p.prompt for m in _PERCENT.finditer(s.text)][:MAX_RUN]
    if not rates:
        return None
    figure = f.near[f.index]
    values = [s.operand() for s in f.near if s.known and s is not figure] + p.earlier + p.read
    for rate, written in rates:
        for value in values[: 3 * MAX_POOL]:
            for made, how in (
                (value.value * rate / 100, f"{written} of {value.label}"),
                (value.value * (100 + rate) / 100, f"{value.label} + {written}"),
                (value.value * (100 - rate) / 100, f"{value.label} − {written}"),
            ):
                if abs(made - figure.value) <= tol:
                    rate_operand = Operand(rate, f"{written} (the system prompt)")
                    return _made("rate", how, [value, rate_operand])
    return None


def _product(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """An amount of the pools (or a sum over the records the answer names) times a count the
    user or the data gave, which the sentence says: N where it says the figure is for N people."""
    figure, sentence = f.near[f.index], f.sentence.text if f.sentence else ""
    counts = [c for c in p.counts if f.people in (None, int(c.value)) and _says(sentence, int(c.value))]
    if not counts:
        return None
    values = [s.operand() for s in f.near if s.known and s is not figure] + p.earlier + p.read
    for run in _named_sums(f, p):
        label, evidence = " + ".join(o.label for o in run), tuple(e for o in run for e in o.evidence)
        values.append(Operand(sum((o.value for o in run), ZERO), f"({label})", evidence))
    for count in counts:
        for value in values[: 3 * MAX_POOL]:
            if abs(value.value * count.value - figure.value) <= tol:
                return _made("product", f"{value.label} × {count.label}", [value, count])
    return None


def _local_results(a: Decimal, b: Decimal, whole: bool) -> Iterator[tuple[Decimal, str]]:
    """What one operation on ``a`` and ``b`` gives; only a sum or a difference for a small whole
    count, which a product or a quotient of two small numbers gives by chance."""
    yield a + b, "{a} + {b}"
    yield abs(a - b), "{a} − {b}"
    if whole:
        return
    yield a * b, "{a} × {b}"
    yield a * b / 100, "{b}% of {a}"
    yield a * (100 + b) / 100, "{a} + {b}%"
    yield a * (100 - b) / 100, "{a} − {b}%"
    if b:
        yield _QUOTIENT.divide(a, b), "{a} ÷ {b}"
        yield _QUOTIENT.divide(100 * (a - b), b), "100 × ({a} − {b}) ÷ {b}"
        yield _QUOTIENT.divide(100 * a, b), "100 × {a} ÷ {b}"


def _with_one_before(f: Figure, p: Pools, after: bool = False) -> Sentence | None:
    """The figure's sentence and the one before it (and with ``after``, the one after), as one; None
    where it stands in none."""
    split = p.answer_sentences
    at = bisect_right(split, f.start, key=lambda s: s.start) - 1  # as ``sentence_at`` finds it
    if f.start < 0 or at < 0 or f.start >= split[at].end:
        return None
    first, last = split[max(0, at - 1)], split[min(len(split) - 1, at + after)]
    return Sentence(first.start, last.end, p.answer[first.start : last.end])


def _local(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """One operation on two numbers the figure's sentence (or table row) and the one before write
    ("80 h at $28.50 is $2,280.00", "up 75% from 4,200 to 7,350"), else with the one after too
    ("Chargeable weight: 259 kg. Gross: 14 × 18.5 kg"), where what follows the figure writes an
    operation's sign: its working. Each operand is checked on its own."""
    # With the sentence before it: "Base: 3 × $185 = $555. Surcharge (12%): $66.60."
    # A comma before one or two last digits is a decimal one only where the answer writes no point
    # in a number: "seats 14,15" beside "$16.00" is a list.
    commas = _POINTED.search(p.answer) is None
    if (found := _operated(f, _with_one_before(f, p), tol, commas)) is not None:
        return found
    wider = _with_one_before(f, p, after=True)
    shown = wider is not None and _WORKING.search(wider.text, f.start - wider.start + len(f.text))
    return _operated(f, wider, tol, commas) if shown else None


_WORKING = re.compile(r"[×*÷=]|(?<![a-z])x(?![a-z])")  # an operation's sign, written out


def length_written(text: str) -> DurationValue | None:
    """The length of time a text writes from its start ("6 h 56 min"), or None."""
    return next((v for v in read_durations(text) if v.start == 0), None)


def lengths_at(written: Iterable[tuple[int, str]]) -> list[tuple[int, Decimal, str]]:
    """Each length of time among texts and where they start, with its seconds (``Pools.lengths``)."""
    return [(at, value.seconds, text) for at, text in written if (value := length_written(text))]


# A number written with the letter of an hour or a second ("24,960 s", "the standard 9 h").
_TIME_LETTER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)? ?([hs])\b")
_LETTER_SECONDS = {"h": 3600, "s": 1}


def _length_worked(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A length that restates the one written right before it in other units ("24,960 s = 6 h 56
    min", "67,392 s (18 h 43 min)"), as near as its last written unit; or that one sum or difference
    of two lengths its sentence (or the one before) writes gives, or one of them times a count they
    write, to the minute where it is written to the minute, else exactly (the module's docstring
    says which operands count)."""
    value = length_written(f.text)
    sentence = _with_one_before(f, p)
    if value is None or sentence is None:
        return None
    text, at = sentence.text, f.start - sentence.start
    low, high = sentence.start, sentence.end
    operands = [  # each: seconds, as written, where it ends in ``text``
        (seconds, written, start - low + len(written))
        for start, seconds, written in p.lengths
        if low <= start < high and start != f.start
    ]
    taken = [(v.start, v.end) for v in read_durations(text)]
    lettered = [m for m in _TIME_LETTER.finditer(text) if not any(a <= m.start() < b for a, b in taken)]
    held = [*p.records[:MAX_OFFSET_SOURCES], *p.prompt] if lettered else []
    for m in lettered:
        number = m.group(1).replace(",", "") + (m.group(2) or "")
        seconds = Decimal(number) * _LETTER_SECONDS[m.group(3)]
        if digit_count(number) >= p.min_digits or _held_in(m.group(), seconds, held):
            operands.append((seconds, m.group(), m.end()))
    taken += [m.span() for m in lettered]
    counts = [
        (n, m.group())
        for m in chain(_OPERAND.finditer(text), _WORD_OPERAND.finditer(text))
        if not any(a <= m.start() < b for a, b in taken)
        and not _DECIMAL_COMMA.fullmatch(m.group())  # a count is whole
        and (n := parse_number(m.group()))
        and n >= 2
    ]
    half, units = value.step / 2, value.seconds / value.step
    for seconds, written, end in operands:
        if _RESTATING.fullmatch(text, end, at) and abs(seconds - value.seconds) <= half:
            return Derivation("restated", f"{written} in other units", ())
    # A coarse length ("3 hours", "about 6 hours") is no sum of others within half its unit: by chance.
    near = half if value.step <= 60 else ZERO
    for i, (a, a_text, _) in enumerate(operands[:MAX_LOCAL]):
        for b, b_text, _ in operands[i + 1 : MAX_LOCAL]:
            for total, how in ((a + b, "{a} + {b}"), (abs(a - b), "{a} − {b}")):
                if abs(total - value.seconds) <= near:
                    return Derivation("sentence-arithmetic", how.format(a=a_text, b=b_text), ())
    # A small whole count of its last unit ("10 days") a product of small numbers gives by chance.
    for n, n_text in counts[:MAX_LOCAL] if units != units.to_integral_value() or units >= 100 else ():
        for a, a_text, _ in operands[:MAX_LOCAL]:
            if abs(a * n - value.seconds) <= near:
                return Derivation("sentence-arithmetic", f"{a_text} × {n_text}", ())
    return None


def _lengths_totalled(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A length labelled a total ("Total | 4 h 30 min") that the lengths the answer writes before it
    sum to, as near as its last written unit, each grounded or explained: as a total of amounts is,
    all of those since a break (a blank line, a heading or a numbered item) or an earlier total,
    never a part of them; else the totals before it."""
    value = length_written(f.text)
    if value is None or not _said_a_total(p, f.start, f.start + len(f.text), in_its_sentence=True):
        return None
    before = sorted(entry for entry in p.lengths if entry[0] < f.start)[-MAX_RUN:]
    half = value.step / 2
    for start in range(len(before) - 1, -1, -1):
        previous_end = before[start - 1][0] + len(before[start - 1][2]) if start else 0
        closed = start == 0 or _said_a_total(p, before[start - 1][0], previous_end)
        if closed or _BREAK.search(p.answer, previous_end, before[start][0]):
            run = before[start:]
            if len(run) >= 2 and abs(sum((s for _, s, _ in run), ZERO) - value.seconds) <= half:
                return Derivation("length-sum", " + ".join(text for _, _, text in run), ())
            if closed:
                break
    totals = [entry for entry in before if _said_a_total(p, entry[0], entry[0] + len(entry[2]))]
    for k in range(2, len(totals) + 1):
        if abs(sum((s for _, s, _ in totals[-k:]), ZERO) - value.seconds) <= half:
            return Derivation("length-sum", " + ".join(text for _, _, text in totals[-k:]), ())
    return None


def _said_a_total(p: Pools, at: int, end: int, in_its_sentence: bool = False) -> bool:
    """Whether the line before ``at`` or the words after it up to the clause's end ("1 h 55 min in
    total") label what stands there a total, or (``in_its_sentence``) its sentence does."""
    after = _CLAUSE.match(p.answer, end)
    sentence = sentence_at(p.answer_sentences, at) if in_its_sentence else None
    said = [line_label(p.answer, at), after.group() if after else "", sentence.text if sentence else ""]
    return bool(_TOTAL_WORDS.search(" ".join(said)))


_CLAUSE = re.compile(r"[^.,;:\n|]{0,40}")


# What may stand between a length and its restatement: "=", "(", "≈", "about", "or" ...
_RESTATING = re.compile(r"[\s*=(≈~:,→]*(?:about|or|roughly|approx\.?|i\.e\.,?)?[\s*=(≈~]*", re.I)


def _held_in(written: str, seconds: Decimal, sources: list[Source]) -> bool:
    """Whether one of ``sources`` holds a length (``_lengths``: ``handle_seconds``) of ``seconds``, or
    writes ``written`` as a whole ("9 h" of "9 h per day")."""
    whole = re.compile(rf"(?<![\w.,]){re.escape(written.lower())}(?!\w)")
    return any(
        whole.search(source.low) or any(held == seconds for held, _, _ in _lengths(source))
        for source in sources
    )


def _operand_value(written: str) -> Decimal:
    """A number a sentence writes, in figures as ``money`` reads them ("1,250", "115,00") or in words."""
    amount = read_amount(written)
    return amount.magnitude if amount is not None else Decimal(parse_number(written) or 0)


_DECIMAL_COMMA = re.compile(r"\d+,\d{1,2}")
_POINTED = re.compile(r"\d\.\d{1,2}(?!\d)")  # a decimal point, not a thousands one ("3.800,00")


def _operated(f: Figure, sentence: Sentence | None, tol: Decimal, commas: bool) -> Derivation | None:
    """One operation on two of the MAX_LOCAL numbers of ``sentence`` nearest the figure (``commas``:
    a comma may be a decimal one)."""
    if f.number is None or sentence is None:
        return None
    end = f.start - sentence.start + len(f.text)
    at_figure = f.start - sentence.start
    # A count in words is the same number: "Twelve months at $29.99" as "12 months at $29.99".
    words = (m for m in _WORD_OPERAND.finditer(sentence.text) if m.group().lower() not in ("zero", "one"))
    spans = [
        m
        for m in chain(_OPERAND.finditer(sentence.text), words)
        if not at_figure <= m.start() < end and (commas or not _DECIMAL_COMMA.fullmatch(m.group()))
    ]
    # The MAX_LOCAL nearest the figure, in the text's order: in a long table, its row and those above.
    nearest = sorted(
        sorted(spans, key=lambda m: abs(m.start() - at_figure))[:MAX_LOCAL], key=lambda m: m.start()
    )
    operands = [(_operand_value(m.group()), m.group()) for m in nearest]
    # A small whole count ("6 crates") written without decimals: "$65.00", to the cent, is no count.
    small = f.number == f.number.to_integral_value() and abs(f.number) < 100
    whole = "percent" not in f.shapes and not f.precision and small
    for i, (a, a_text) in enumerate(operands):
        for b, b_text in operands[:i] + operands[i + 1 :]:
            for value, how in _local_results(a, b, whole):
                if abs(value - f.number) <= tol:
                    return Derivation("sentence-arithmetic", how.format(a=a_text, b=b_text), ())
    return None


def _says(sentence: str, number: int) -> bool:
    words = [w for w, n in NUMBER_WORDS.items() if n == number and " " not in w]
    return bool(re.search(rf"\b(?:{number}|{'|'.join(words)})\b", sentence, re.I))


# --- dates and times ---------------------------------------------------------------------------
def stated_shifts(text: str) -> list[int]:
    """Numbers of days a person's words move a date by: "the day after" is +1."""
    out = []
    for match in _SHIFT.finditer(text):
        if match.group("n") is None:  # tomorrow, the next or following day, the day after or before
            out.append(-1 if (match.group("after") or "").lower() == "before" else 1)
        else:
            word, weeks = match.group("n").lower(), match.group("unit").lower().startswith("week")
            n = (1 if word == "a" else (parse_number(word) or 0)) * (7 if weeks else 1)
            out.append(n if match.group("dir").lower() in ("later", "after") else -n)
    return [n for n in out if n and abs(n) <= 366]


def named_weekdays(text: str) -> list[tuple[int, int]]:
    """The days of the week a person names (Monday 0), each with the most days it may lie after a
    date held: the next one ("on Wednesday", within 7), or the one after too ("next Wednesday", 14)."""
    return [(WEEKDAYS.index(m.group(2).lower()), 14 if m.group(1) else 7) for m in _WEEKDAY.finditer(text)]


def dates_in(text: str) -> Iterable[tuple[date, int, int]]:
    """Each full date ``text`` writes, in any notation (``values``), with its span."""
    return ((day, found.start, found.end) for found in read_dates(text) for day in found.dates())


def _place(source: Source, span: tuple[int, int]) -> tuple[Evidence, ...]:
    """Where a tool's result writes ``span``; a call's argument (no span): the result as a whole."""
    if source.role != "tool":
        return ()
    return (source.evidence_at(span),) if span[0] >= 0 else _at(source, "")


def _from(
    kind: str, how: str, source: Source, span: tuple[int, int], label: str, more: tuple[Evidence, ...] = ()
) -> Derivation:
    """A derivation from ``source`` at ``span`` (an origin, ``label``), grounded there and in ``more``."""
    place = _place(source, span)
    origin = Operand(ZERO, f"{label} ({source.call_id or source.role})", place)
    return Derivation(kind, how, (*place, *more), (origin,))


def _shifted(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A date held (``Pools.holding``) moved by days the user or the prompt states, or to a weekday
    the user named."""
    for target in f.days:
        to_weekday = range(1, p.weekdays.get(target.weekday(), 0) + 1)
        for shift in dict.fromkeys([*p.shifts, *to_weekday]):
            if not timedelta(days=shift) <= target - date.min <= date.max - date.min + timedelta(days=shift):
                continue  # before the calendar's first day or after its last
            wanted = target - timedelta(days=shift)
            source = p.holding(wanted)
            for found, start, end in dates_in(source.text) if source is not None else ():
                if found == wanted and source is not None:
                    days = f"{abs(shift)} day{'s' * (abs(shift) != 1)} {'later' if shift > 0 else 'earlier'}"
                    how = f"{found.isoformat()} moved {days}"
                    return _from("date-shift", how, source, (start, end), found.isoformat())
    return None


# A day named by where it lies from today, right before the date it names: "tomorrow, Tuesday Apr 15".
_NAMED_DAY = re.compile(r"(?i)(?<!after )(?<!before )\b(today|tomorrow|yesterday)[\s,(]{1,3}$")
_NAMED_SHIFT = {"today": 0, "tomorrow": 1, "yesterday": -1}


def _named_day(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A date the answer names as today, tomorrow or yesterday right before it: the prompt's date,
    or the day after or before it."""
    named = _NAMED_DAY.search(p.answer, max(0, f.start - 16), f.start)
    if named is None:
        return None
    shift = timedelta(days=_NAMED_SHIFT[named.group(1).lower()])
    # The prompt's date is today only where it writes one: "updated 2024-01-01. Today is ..." is two.
    written = _prompt_dates(p)
    for day, source, start, end in written if len({day for day, *_ in written}) == 1 else ():
        if date.min + timedelta(days=1) <= day <= date.max - timedelta(days=1) and day + shift in f.days:
            how = f"{day.isoformat()}, {named.group(1).lower()}"
            return _from("date-shift", how, source, (start, end), day.isoformat())
    return None


# Words right before a year: a season, a month, a preposition of time ("Spring 2026", "in 2026");
# or right after it, what kind of year it is ("the 2026 calendar year", "the 2026 season").
_YEAR_BEFORE = re.compile(
    r"(?i)\b(?:spring|summer|fall|autumn|winter|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may"
    r"|june?|july?|aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
    r"|(?<!ends )(?<!ending )in|of|for|from|since|until|till|through|by|during|before|after|early|late"
    r"|mid|fy|year)[\s,-]+$"
)
_YEAR_AFTER = re.compile(
    r"(?i)[\s-]+(?:calendar|school|academic|fiscal|financial|tax|model|membership)?\s*(?:year|season|term)\b"
)


def _calendar_year(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A year written alone (four figures) that is the one before or after the prompt's date's:
    the desk's calendar ("renews in 2026", "Spring 2026"), where the prompt writes one date."""
    # Cheapest first: most figures are no four-figure number, and most prompts write no date.
    if f.number is None or not p.prompt or not 1000 <= f.number <= 9999 or not re.fullmatch(r"\d{4}", f.text):
        return None
    before = _YEAR_BEFORE.search(p.answer, max(0, f.start - 24), f.start)
    if not (before or _YEAR_AFTER.match(p.answer, f.start + len(f.text))):
        return None
    written = _prompt_dates(p)
    for day, source, start, end in written if len({day.year for day, *_ in written}) == 1 else ():
        if f.number in (day.year - 1, day.year + 1):
            how = f"{day.isoformat()}, the year {'after' if f.number > day.year else 'before'}"
            return _from("date-shift", how, source, (start, end), day.isoformat())
    return None


@kept
def _dates_held(source: Source) -> list[tuple[date, int, int]]:
    """Each date a result writes, with its span, and those its call's arguments name (no span)."""
    held = list(dates_in(source.text))
    for _, text in text_leaves(source.arguments):
        held.extend((day, -1, -1) for day, _, _ in dates_in(text))
    return held


@kept
def _day_marks(source: Source) -> list[tuple[date, int, int]]:
    """Each date a result or its call names moved by a next-day mark (``"00:00:00+1"``), with its span."""
    marked = [time for time in read_times(source.text) if time.day_offset]
    if not marked:
        return []
    days = sorted({day for day, _, _ in _dates_held(source)})
    return [(day + timedelta(days=time.day_offset), time.start, time.end) for time in marked for day in days]


def _day_marked(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """The date of a time a result writes with a next-day mark."""
    for target in f.days:
        for source in p.records:
            for day, start, end in _day_marks(source):
                if day == target:
                    marked = source.text[start:end]
                    return _from("day-mark", f"the day of {marked}", source, (start, end), marked)
    return None


def _spanned(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A whole number of days between two dates one record holds (a stay, a rental, a notice), or
    from (or to) one of MAX_HELD dates the prompt writes to one the newest results, the prompt or
    the answer (``Pools.answer_days``) holds."""
    value = length_written(f.text)
    # Written in days or weeks, not "24 hours": a span of dates is a count of days.
    days = _whole_days(value.seconds) if value is not None and not value.step % 86400 else 0
    if not 0 < days <= (date.max - date.min).days:
        return None
    step = timedelta(days=days)
    for source in p.records:
        held = _dates_held(source)[: 4 * MAX_HELD]
        ends: dict[date, set[int]] = {}  # each date -> where it is written (two readings share a place)
        for day, start, _ in held:
            ends.setdefault(day, set()).add(start)
        for first, start, end in held:
            later = first + step if date.max - first >= step else None
            if later in ends and (start < 0 or ends[later] != {start}):
                how = f"the days from {first.isoformat()} to {later.isoformat()} ({source.call_id})"
                return Derivation("date-span", how, _place(source, (start, end)))
    prompt = [day for source in p.prompt for day, _, _ in _prompt_days(source)][:MAX_HELD]
    held_days = {day for source in p.records for day, _, _ in _dates_held(source)} if prompt else set()
    held_days.update(prompt, p.answer_days)
    if (found := _grounded_span(f, p, step)) is not None:
        return found
    for first in prompt:
        for other in (first + step, first - step) if date.min + step <= first <= date.max - step else ():
            if other in held_days:
                early, late = sorted((first, other))
                how = f"the days from {early.isoformat()} to {late.isoformat()} (the day the prompt gives)"
                return Derivation("date-span", how, ())
    return None


def _grounded_span(f: Figure, p: Pools, step: timedelta) -> Derivation | None:
    """The days between two dates the figure's sentence (or the one before) writes, each one a source
    grounds: never one a row explained, which this count may have moved it to."""
    sentences = _with_one_before(f, p) if p.grounded_days else None
    readings = (
        {reading for value in read_dates(sentences.text) for reading in value.readings}
        if sentences
        else set()
    )
    written = {d for d in p.grounded_days if {(d.year, d.month, d.day), (None, d.month, d.day)} & readings}
    for first in sorted(written):
        if first <= date.max - step and first + step in written:
            how = f"the days from {first.isoformat()} to {(first + step).isoformat()}"
            return Derivation("date-span", how, ())
    return None


def _prompt_dates(p: Pools) -> list[tuple[date, Source, int, int]]:
    """Each date the system prompt writes, with the prompt that writes it and its span."""
    return [(day, source, start, end) for source in p.prompt for day, start, end in _prompt_days(source)]


@kept
def _prompt_days(source: Source) -> list[tuple[date, int, int]]:
    """The dates a system prompt writes, with their spans: a month and day written without a year
    ("the deadline is September 5") in each year of the full dates it writes."""
    found = list(read_dates(source.text))
    full = [(day, value.start, value.end) for value in found for day in value.dates()]
    years = sorted({day.year for day, _, _ in full})
    for value in found:
        for year, month, day in value.readings if years else ():
            for each in years if year is None else ():
                with suppress(ValueError):
                    full.append((date(each, month, day), value.start, value.end))
    return full


def _whole_days(seconds: Decimal) -> int:
    """A length as a count of days, or 0 where it is no whole number of them."""
    return int(seconds) // 86400 if seconds and not seconds % 86400 else 0


@dataclass(frozen=True)
class DayCount:
    """A number of days a source holds, and whether they are business days (weekends not counted)."""

    days: int
    business: bool
    label: str  # where it stands: a member's path, or the words as written
    evidence: tuple[Evidence, ...]
    last: int | None = None  # for a range's first end, its last: a date it reaches is no deadline alone

    @property
    def spelled(self) -> str:
        unit = "business day" if self.business else "day"
        return f"{self.days} {unit}{'s' * (self.days != 1)}"


@kept
def _lengths(source: Source) -> list[tuple[Decimal, str, tuple[Evidence, ...]]]:
    """The lengths of time a source holds, in seconds, each with how it is written and where: a JSON
    number under a member named for a unit (``window_days``: ``durations.duration_member_keys``),
    walked only where a member is so named (most results have none), and each its words write."""
    out = []
    keyed = source.role == "tool" and KEYED_UNIT.search(source.low) is not None
    for path, number in json_leaves(source.parsed(), is_number)[:MAX_ITEMS] if keyed else ():
        for key in duration_member_keys(last_key(path), str(number)):
            out.append((Decimal(key.removeprefix(KEY_PREFIX)), path, _at(source, path)))
    for value in islice(read_durations(source.text, lenient=True), MAX_ITEMS):
        span = (value.start, value.end)
        out.append((value.seconds, source.text[value.start : value.end], _place(source, span)))
    return out


@kept
def _day_counts(source: Source) -> list[DayCount]:
    """The numbers of days a source holds: a length in whole days (``_lengths``: "10 days",
    ``window_days``), a period ("biweekly"), business days where the name or words say so
    ("10 business days", ``review_business_days``)."""
    out = [
        DayCount(days, bool(_BUSINESS.search(label)), label, evidence)
        for seconds, label, evidence in _lengths(source)
        if (days := _whole_days(seconds))
    ]
    for match in islice(_PERIOD.finditer(source.text), MAX_COUNT):
        days, words = PERIODS[match.group().lower()], match.group()
        out.append(DayCount(days, False, words, _place(source, match.span())))
    for match in islice(_BUSINESS_DAYS.finditer(source.text), MAX_COUNT):
        first, last = (parse_number(end) if end else None for end in match.groups())
        place = _place(source, match.span())
        if last:
            out.append(DayCount(last, True, match.group(), place))
            if first:
                out.append(DayCount(first, True, match.group(), place, last=last))
    return out


def _days_written(text: str) -> set[int]:
    """The numbers of days a sentence writes: each whole number it writes outside its dates and
    clock times (the 10 of "April 10" is no count), each length in whole days, each period."""
    spans = [(v.start, v.end) for v in read_dates(text)] + [(v.start, v.end) for v in read_times(text)]
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    numbers = {n for word in _COUNT.findall(text) if (n := parse_number(word))}
    lengths = read_durations(text, lenient=True)
    periods = {PERIODS[match.group().lower()] for match in _PERIOD.finditer(text)}
    return numbers | periods | {days for v in lengths if (days := _whole_days(v.seconds))}


def _moved(day: date, count: DayCount, back: bool = False) -> date | None:
    """``day`` moved on (or ``back``) by ``count``; business days, counted one at a time, up to
    MAX_BUSINESS_DAYS, and only on."""
    if back:
        return None if count.business or count.days > (day - date.min).days else day - timedelta(count.days)
    if count.days > (MAX_BUSINESS_DAYS if count.business else (date.max - day).days):
        return None  # past the calendar's end, or past any business-day promise read day by day
    if not count.business:
        return day + timedelta(days=count.days)
    left = count.days
    while left and day < date.max - timedelta(days=7):
        day += timedelta(days=1)
        left -= day.weekday() < 5
    return None if left else day


def _date_moved(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A date the figure's sentence (or the one before) writes that a source grounds, moved on or
    back by a length in days those sentences write as the answer's lengths are read, each checked
    on its own ("from May 20, 60 days on: July 19"); never a date only the answer writes, nor a
    length no check reads ("a week"), which would move a made-up date as well."""
    sentences = _with_one_before(f, p) if f.days and p.answer_days else None
    if sentences is None:
        return None
    at, text = f.start - sentences.start, sentences.text
    text = text[:at] + " " * len(f.text) + text[at + len(f.text) :]
    # A date written without its year is each grounded date of that month and day.
    readings = {(month, day, year) for value in read_dates(text) for year, month, day in value.readings}
    starts = [
        d
        for d in dict.fromkeys(p.answer_days)
        if {(d.month, d.day, d.year), (d.month, d.day, None)} & readings
    ]
    lengths = sorted({days for v in read_durations(text) if (days := _whole_days(v.seconds))})
    for first in starts[:MAX_HELD]:
        for count in (DayCount(n, False, str(n), ()) for n in lengths[:MAX_COUNT]):
            for way, moved in (("on", _moved(first, count)), ("back", _moved(first, count, back=True))):
                if moved in f.days:
                    how = f"{first.isoformat()} moved {way} {count.spelled}"
                    source = p.holding(first)  # where the date was read, to cite
                    held = [(a, b) for day, a, b in dates_in(source.text) if day == first] if source else []
                    return (
                        _from("date-offset", how, source, held[0], first.isoformat())
                        if source and held
                        else Derivation("date-offset", how, ())
                    )
    return None


def _offset(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A date one record or the prompt holds moved on by a count of days the prompt states, or one
    the record holds and the figure's sentence writes ("within 3 days: by May 9"): each of the
    MAX_OFFSET_SOURCES newest results alone."""
    sentence = sentence_at(p.answer_sentences, f.start) if f.days else None
    written = _days_written(sentence.text) if sentence is not None else set()
    prompt_counts = [c for s in p.prompt for c in _day_counts(s)]
    if not written and not prompt_counts:
        return None
    prompt_days = [(day, s, (start, end)) for s in p.prompt for day, start, end in _prompt_days(s)]
    # A window that closes before a date ("48 hours before departure") moves it back: where the
    # figure's sentence says so, or where a deadline stands right before the figure ("until 15:00
    # on") and the prompt writes "before" right after the count ("until 48 hours before check-in").
    before = sentence is not None and _BEFORE.search(sentence.text) is not None
    deadline = _DEADLINE.search(p.answer, max(0, f.start - 40), max(0, f.start)) is not None
    closing = {
        c.label
        for s in (p.prompt if deadline else ())
        for c in _day_counts(s)
        if re.search(rf"(?<![\w.]){re.escape(c.label)}\W+(?:\w+\W+)?{_BEFORE_WORDS}", s.text, re.I)
    }
    for record in [*p.records[:MAX_OFFSET_SOURCES], None]:
        # A record's count only where the sentence writes it; the prompt's (a policy) wherever.
        counts = [c for c in (_day_counts(record) if record is not None else ()) if c.days in written]
        counts = [*counts, *prompt_counts][:MAX_COUNT]
        held = [(day, record, (start, end)) for day, start, end in _dates_held(record)] if record else []
        for first, source, span in (held[:MAX_HELD] + prompt_days[:MAX_HELD]) if counts else ():
            for count in counts:
                if _moved(first, count) in f.days and _with_its_last(first, count, sentence):
                    how = f"{first.isoformat()} moved on {count.spelled} ({count.label})"
                    return _from("date-offset", how, source, span, first.isoformat(), count.evidence)
                if (before or count.label in closing) and _moved(first, count, back=True) in f.days:
                    how = f"{first.isoformat()} moved back {count.spelled} ({count.label})"
                    return _from("date-offset", how, source, span, first.isoformat(), count.evidence)
    return None


_BEFORE_WORDS = r"\b(?:before|prior\s+to|ahead\s+of)\b"
_BEFORE = re.compile(rf"(?i){_BEFORE_WORDS}")
# A deadline written right before a date: "until 15:00 on", "by", "no later than the".
_DEADLINE = re.compile(
    r"(?i)\b(?:until|till|by|no\s+later\s+than)\s+"
    r"(?:(?:\d[\d:.]*(?:\s*[ap]\.?m\.?)?|on|the|end\s+of|midnight|noon)[\s,]+){0,3}[*_]*$"
)


def _with_its_last(first: date, count: DayCount, sentence: Sentence | None) -> bool:
    """Whether a range's first end may move ``first``: only where the sentence also writes the date
    its last end reaches ("between Friday and Tuesday"), so the early date is never read as a
    deadline alone; any other count may."""
    if count.last is None:
        return True
    latest = _moved(first, replace(count, days=count.last, last=None))
    if latest is None or sentence is None:
        return False
    # Written with its year or without: "Tuesday, July 22" is every July 22.
    keys = {f"date {latest.isoformat()}", f"date md {latest:%m-%d}"}
    return any(latest in found.dates() or keys & set(found.lookups()) for found in read_dates(sentence.text))


def _elapsed(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A duration between two clock times the answer or this turn's results write, or the prompt's
    one clock time (now) and one of them (``durations.elapsed``)."""
    value = length_written(f.text)
    if value is None:
        return None
    clocks: list[tuple[int, str]] = []
    places: dict[str, tuple[Evidence, ...]] = {}
    texts = [(p.answer, "stated", None), *((s.text, s.call_id or s.role, s) for s in p.turn)]
    for text, where, source in texts:
        for time in read_times(value_text(text)):
            mark = f"+{time.day_offset}" if time.day_offset else ""
            label = f"{time.hour:02d}:{time.minute:02d}{mark} ({where})"
            clocks.append((time.hour * 60 + time.minute + 1440 * time.day_offset, label))
            places[label] = (source.evidence_at((time.start, time.end)),) if source is not None else ()
            if len(clocks) >= MAX_POOL:
                break
    found = elapsed(value, clocks) or _from_now(value, clocks, p)
    if found is None:
        return None
    operands = [Operand(ZERO, label, places.get(label, ())) for label in found]
    return _made("elapsed", f"the time from {found[0]} to {found[1]}", operands)


def _from_now(value: DurationValue, clocks: list[tuple[int, str]], p: Pools) -> tuple[str, str] | None:
    """The prompt's clock time (now, on its one date) and a time written that a record of that day (or
    of one later date) holds too, or a timestamp dates: a length may run from now to it, or back from
    now to it; a time only the answer writes would vouch for itself."""
    if len(p.prompt) != 1:
        return None
    now = _now(p.prompt[0])
    today = {day for day, _, _ in _prompt_days(p.prompt[0])}
    if now is None or len(today) != 1:
        return None
    # A record of one date holds its times on that day (one of no date, today's): a time of today, or
    # one some days on; never a time of a record of two dates, whose day is anyone's guess.
    (day,) = today
    held: dict[int, set[int]] = {}  # days on from today -> the times held that day
    for source in p.records:
        days = {each for each, _, _ in _dates_held(source)}
        on = 0 if days <= today else (min(days) - day).days if len(days) == 1 else -1
        if on >= 0:
            held.setdefault(on, set()).update(m for m, _ in _clock_times(source))
        # A timestamp writes its time's day ("2031-08-09T07:42:10Z"); one in UTC is on the prompt's
        # zone's clock where the prompt states its offset.
        for stamp in islice(_STAMP.finditer(source.text), MAX_HELD):
            with suppress(ValueError):
                at = (date.fromisoformat(stamp.group(1)) - day).days * 1440 + int(stamp.group(2)) * 60
                shifts = (stamp.group(4) and _prompt_offsets(p)) or {0}
                for moment in {at + int(stamp.group(3)) + shift for shift in shifts}:
                    held.setdefault(moment // 1440, set()).add(moment % 1440)
    mark = (now, f"{now // 60:02d}:{now % 60:02d} (the prompt's time now)")
    today_held = held.pop(0, set())
    times = [(m, written) for m, written in clocks if m % 1440 in today_held]
    for on, minutes in sorted(held.items()):
        times += [
            (on * 1440 + m % 1440, f"{w} on {day + timedelta(on)}") for m, w in clocks if m % 1440 in minutes
        ]
    # Only the pairs with now: those of two written times were tried already (``_elapsed``). A time of
    # an earlier day is counted from its day's start, and now that many days later.
    pairs = chain(
        ([mark, time] for time in times if time[0] >= 0),
        ([time, mark] for time in times if time[0] >= 0),
        ([(m % 1440, w), (now - m // 1440 * 1440, mark[1])] for m, w in times if m < 0),
    )
    return next((found for pair in pairs if (found := elapsed(value, pair))), None)


# A date and its time in one token, and whether it is marked as UTC's.
_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2})[T ]([01]\d|2[0-3]):([0-5]\d)(?::[0-5]\d(?:\.\d+)?)?(Z|[+]00:?00)?")


def _prompt_offsets(p: Pools) -> set[int]:
    """The minutes the prompt's zone lies from UTC, by the offsets it states ("UTC+1": 60)."""
    stated = [match for source in p.prompt for match in _UTC_OFFSET.findall(source.text)]
    return {
        (1 if sign == "+" else -1) * (int(hours) * 60 + int(minutes or 0)) for sign, hours, minutes in stated
    } - {0}


@kept
def _now(source: Source) -> int | None:
    """The prompt's time now: its one clock time, or the first where it stands in the sentence that
    writes the prompt's first date or the next (the times after it are the desk's hours)."""
    times = list(islice(read_times(value_text(source.text)), MAX_HELD))
    first = times[0].minutes() if times else []
    if len(first) != 1 or len(times) == 1:
        return first[0] if len(first) == 1 else None
    dated = next(read_dates(source.text), None)
    said = sentences(source.text)
    when = sentence_at(said, dated.start) if dated else None
    where = sentence_at(said, times[0].start)
    if when is None or where is None or not 0 <= said.index(where) - said.index(when) <= 1:
        return None
    return first[0]


@kept
def _clock_times(source: Source) -> list[tuple[int, tuple[Evidence, ...]]]:
    """The minutes after midnight of the first MAX_HELD clock times a source writes, with where."""
    times = islice(read_times(value_text(source.text)), MAX_HELD)
    return [(m, _place(source, (t.start, t.end))) for t in times for m in t.minutes()]


_Labelled = dict[Any, tuple[str, tuple[Evidence, ...]]]  # a value -> how it is written, and where


def _clock_moved(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A clock time moved on or back by a length (the module's docstring says which): "7:15 PM, a
    75-minute game: done at 8:30 PM", "check-in closes 30 minutes before" (the prompt's)."""
    sentence = sentence_at(p.answer_sentences, f.start)
    targets = {m for t in read_times(f.text) for m in t.minutes()}
    if sentence is None or not targets:
        return None
    at = f.start - sentence.start
    rest = sentence.text[:at] + " " * len(f.text) + sentence.text[at + len(f.text) :]
    said_times: _Labelled = {
        m: (f"{m // 60:02d}:{m % 60:02d}", ()) for t in read_times(rest) for m in t.minutes()
    }
    said_lengths: _Labelled = {v.seconds: (rest[v.start : v.end], ()) for v in read_durations(rest, True)}
    held_times: _Labelled = {}
    held_lengths: _Labelled = {}
    for source in [*p.records[:MAX_OFFSET_SOURCES], *p.prompt]:
        held_times.update({m: (f"{m // 60:02d}:{m % 60:02d}", place) for m, place in _clock_times(source)})
        for seconds, label, place in _lengths(source)[:MAX_HELD]:
            held_lengths.setdefault(seconds, (label, place))
    # A time the sentence writes and a length held, or a time held and a length the sentence writes:
    # never both from the sentence alone, where three made-up values would explain one another.
    for times, lengths in ((said_times, held_lengths), (held_times, said_lengths)):
        for start, (time, first) in times.items():
            for seconds, (length, second) in lengths.items():
                for sign in (1, -1) if seconds % 60 == 0 and 0 < seconds < 86400 else ():
                    if (start + sign * int(seconds) // 60) % 1440 in targets:
                        how = f"{time} {'+' if sign > 0 else '−'} {length}"
                        return Derivation("time-offset", how, (*first, *second))
    return None


# "UTC+1", "GMT−5", "UTC+05:30": the offset of the zone the prompt keeps its clock in.
_UTC_OFFSET = re.compile(r"\b(?:UTC|GMT) ?([+\-−]) ?(\d{1,2})(?::?([0-5]\d))?(?![\d:])")


def _zoned(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A clock time one of the newest records holds, moved by the UTC offset the prompt states
    ("time is 14:10 BST (UTC+1)"): the same moment on the desk's clock, "13:14:22Z" as "14:14"."""
    targets = {m for t in read_times(f.text) for m in t.minutes()}
    offsets = _prompt_offsets(p)
    for source in p.records[:MAX_OFFSET_SOURCES] if targets and offsets else ():
        for minute, place in _clock_times(source):
            for offset in sorted(offsets):
                if (minute + offset) % 1440 in targets:
                    shift = f"{'+' if offset > 0 else '−'} {abs(offset)} min"
                    how = f"{minute // 60:02d}:{minute % 60:02d} UTC {shift}"
                    return Derivation("time-zone", how, place)
    return None


# Common zones' offsets from UTC, in minutes; a generic one ("ET") may be either of its pair.
_ZONES: dict[str, tuple[int, ...]] = {
    "UTC": (0,), "GMT": (0,), "Z": (0,), "BST": (60,), "CET": (60,), "CEST": (120,), "EET": (120,),
    "EEST": (180,), "JST": (540,), "AEST": (600,), "AEDT": (660,), "NZST": (720,), "NZDT": (780,),
    "EST": (-300,), "EDT": (-240,), "CST": (-360,), "CDT": (-300,), "MST": (-420,), "MDT": (-360,),
    "PST": (-480,), "PDT": (-420,), "AKST": (-540,), "AKDT": (-480,), "HST": (-600,),
    "ET": (-300, -240), "CT": (-360, -300), "MT": (-420, -360), "PT": (-480, -420),
}  # fmt: skip
# What may stand between a time and its restatement: "(", "/", "=", ", which is", "or" ...
_RESTATING_TIME = re.compile(r"[\s(/,=≈~:*]*(?:or|i\.e\.,?|which is|that's|that is|is)?[\s(/,=≈~:*]*", re.I)
_ZONE_AFTER = re.compile(rf"[\s(]*({'|'.join(_ZONES)})\b")


def _zone_restated(f: Figure, p: Pools, tol: Decimal) -> Derivation | None:
    """A clock time written with a zone that restates the one written right before it with another
    zone, as the same moment: "16:00 EDT (15:00 CDT)", "9:10 AM PT, which is 12:10 PM ET"."""
    zone = _ZONE_AFTER.match(p.answer, f.start + len(f.text))
    sentence = _with_one_before(f, p) if zone else None
    if zone is None or sentence is None:
        return None
    targets = {m for t in read_times(f.text) for m in t.minutes()}
    for time in read_times(sentence.text[: f.start - sentence.start]):
        other = _ZONE_AFTER.match(sentence.text, time.end)
        if other is None or other.group(1) == zone.group(1):
            continue
        if not _RESTATING_TIME.fullmatch(sentence.text, other.end(), f.start - sentence.start):
            continue  # a restatement stands right after what it restates, not after another event
        heres, theres = _ZONES[zone.group(1)], _ZONES[other.group(1)]
        # Two generic zones keep one season: standard with standard, daylight with daylight.
        pairs = zip(heres, theres, strict=True) if len(heres) == len(theres) == 2 else product(heres, theres)
        shifts = {here - there for here, there in pairs}
        for minute in time.minutes():
            if any((minute + shift) % 1440 in targets for shift in shifts):
                how = f"{sentence.text[time.start : other.end()].strip()} in {zone.group(1)}"
                return Derivation("restated", how, ())
    return None


# --- the table ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One derivation."""

    kind: str  # as findings report it
    pool: str  # where its operands come from
    arity: str  # how many it takes
    shapes: str  # the figures it may explain (``Figure.shapes``)
    tolerance: Decimal | None  # how near it must come; None: half a unit of the figure's last digit
    find: _Find
    # Words that must surround the figure, unless it has cents (not .00); a guarded row never
    # explains a figure said to be for N people.
    guard: re.Pattern[str] | None = None
    last: bool = False  # tried only once the others are done: a more telling row explains first


_ANY = "number percent"  # a figure's shapes (``Figure.shapes``) a row may explain
_DIGIT = None  # a row's tolerance: half a unit of the figure's last digit
TABLE = (
    Row("elapsed", "clock times: the answer's, this turn's results'", "2", "duration", _CENT, _elapsed),
    Row("date-span", "one record: dates held", "2", "duration", _CENT, _spanned),
    Row("date-shift", "dates held; days the user asked for", "2", "date", _CENT, _shifted),
    Row("date-shift", "the prompt's date; the day the answer names", "1", "date", _CENT, _named_day),
    Row("date-shift", "the prompt's date: the year before or after", "1", "number", _CENT, _calendar_year),
    Row("time-offset", "a time, a length: said, held or stated", "2", "time", _CENT, _clock_moved),
    Row("time-zone", "one record: a time; the prompt's UTC offset", "2", "time", _CENT, _zoned),
    Row("time-zone", "a time before it in another zone", "1", "time", _CENT, _zone_restated),
    Row("day-mark", "one record: a marked time, a date named", "2", "date", _CENT, _day_marked),
    Row("date-offset", "one record, the prompt: a date, a day count", "2", "date", _CENT, _offset),
    Row("date-offset", "a date grounded, a day count its sentence writes", "2", "date", _CENT, _date_moved),
    Row("rounded", "one record", "1", _ANY + " decimal", _DIGIT, _scaled("rounded", ((Decimal(1), ""),))),
    Row("unit-scale", "one record", "1", "number", _DIGIT, _scaled("unit-scale", _SCALES)),
    Row("unit-scale", "one record, or its sentence: a weight or distance", "1", "number", _DIGIT, _converted),
    Row("complement", "one record: a percentage field", "1", _ANY, _DIGIT, _complement),
    Row("column-sum", "one record: a list's rows", "n", _ANY, _DIGIT, _column("column-sum")),
    Row("column-ratio", "one record: a list's rows", "2n", _ANY, _DIGIT, _column("column-ratio")),
    Row("complement", "one record: a list's rows", "2n", _ANY, _DIGIT, _column("complement")),
    Row("column-difference", "one record: a list's rows", "2n", _ANY, _DIGIT, _column("column-difference")),
    Row("written", "the answer's words", "n", "amount", _CENT, _written),
    Row("sum", "the answer's amounts", "2-8", "amount", _CENT, _listed, _TOTAL_WORDS),
    Row("sum", "the records the answer names", "2-8", "amount", _CENT, _named, _TOTAL_WORDS),
    Row("sum", "the figures the answer computed", "2-8", "amount", _CENT, _computed, _TOTAL_WORDS),
    Row("sum", "the amounts labelled as the total is", "2-8", "amount", _CENT, _like_labelled, _TOTAL_WORDS),
    Row("sum", "the column of the answer's table", "2-8", "amount", _CENT, _table_column, _TOTAL_WORDS),
    Row("total-less", "the answer's amounts", "2-8", "amount", _CENT, _total_less, _REMAINDER_WORDS),
    Row("difference", "amounts stated; one result's", "2", "amount", _CENT, _difference, _REMAINDER_WORDS),
    Row("shares", "the answer's amounts: a total, the other shares", "2-8", "amount", _CENT, _shares),
    Row("product", "amounts; the user's counts, lists' lengths", "2", "amount", _CENT, _product),
    Row("unit-rate", "one record: a row's money, its count of the unit", "2", "amount", _CENT, _per_unit),
    Row("rate", "amounts; the prompt's percentages", "2", "amount", _CENT, _prompt_rate),
    Row("rounded", "one record", "1", "amount", _DIGIT, _scaled("rounded", ((Decimal(1), ""),))),
    Row("column-sum", "one record: a whole list", "n", "amount paid", _DIGIT, _column("column-sum", "[].")),
    Row("column-sum", "the rows a call names", "n", "amount", _DIGIT, _column("column-sum", _CHOSEN)),
    Row("again", "earlier answers", "1", "amount", _CENT, lambda f, p, _: p.before.get(f.number or ZERO)),
    Row("sentence-arithmetic", "its sentence's numbers", "2", _ANY + " amount", _DIGIT, _local, last=True),
    Row(
        "sentence-arithmetic", "its sentence's lengths", "1-2", "duration", _DIGIT, _length_worked, last=True
    ),
    Row(
        "length-sum", "the lengths the answer lists", "2-8", "duration", _DIGIT, _lengths_totalled, last=True
    ),
)
_SHAPES = tuple(frozenset(row.shapes.split()) for row in TABLE)


def written_tolerance(places: int) -> Decimal:
    """How far a figure may lie from what it writes: half a unit of its last digit (the module's
    docstring), ``places`` its digits after the point."""
    return Decimal(5).scaleb(-places - 1)


def _first(f: Figure, p: Pools, last: bool = False, others: bool = True) -> Derivation | None:
    """The figure's first derivation in ``TABLE`` order, among the ``last`` rows and/or the others."""
    # Cents that are not zero (the module's docstring): a round amount agrees by chance as a whole one does.
    cents = "amount" in f.shapes and f.number is not None and f.number != f.number.to_integral_value()
    for row, shapes in zip(TABLE, _SHAPES, strict=True):
        if (
            (last if row.last else others)
            and not f.shapes.isdisjoint(shapes)
            and (row.guard is None or f.people is None and (cents or row.guard.search(f.said)))
        ):
            tol = written_tolerance(f.precision) if row.tolerance is None else row.tolerance
            if (found := row.find(f, p, tol)) is not None:
                return found
    return None


# "| −$11.00", "Discount: -€5": a sign, never a range's dash nor a list's "- $11.00"
_TAKEN_OFF = re.compile(r"(?:^|[\s|(:])(?:−\s?|-(?!\s))[^\s\d]{0,3}$")


def _stated(
    c: Candidate, marks: tuple[bool, bool, bool], known: dict[str, tuple[Evidence, ...]], computed: set[str]
) -> Stated:
    """An amount the answer writes, as known this round; ``marks``: whether it is labelled a total,
    whether a minus takes it off, whether it is a term of another amount's working."""
    (total, off, term), grounds = marks, known.get(c.value)
    made = c.value in computed
    return Stated(
        c.number or ZERO, c.start, c.end, c.text, grounds is not None, grounds or (), total, made, off, term
    )


def _terms(answer: str, amounts: list[Candidate]) -> set[int]:
    """Where the answer writes an amount as a term of the arithmetic it writes for another one
    ("Labour: 3.5 h × $145.00 = $507.50"): the rate is the working of that line, not a line of its
    own, so a total of the lines sums the result in its place. Only a working that gives its
    figure: a slip explains nothing, so its terms stay lines of the list."""
    starts = [c.start for c in amounts]
    terms: set[int] = set()
    for c in amounts:
        for w in written_arithmetic(answer, c.start, c.end):
            if c.number is not None and abs(w.value - c.number) <= _CENT:
                terms.update(starts[bisect_left(starts, w.start) : bisect_left(starts, w.end)])
    return terms


@exactly
def derive(figures: list[Figure], pools: Pools) -> list[Derivation | None]:
    """Each figure's first derivation in ``TABLE`` order, or None; amounts are tried in three rounds."""
    out: list[Derivation | None] = [None] * len(figures)
    answer, amounts, known = pools.answer, pools.amounts, pools.known
    terms = pools.terms
    marks = [
        (
            bool(_TOTAL_WORDS.search(line_label(answer, c.start))),
            bool(_TAKEN_OFF.search(answer[max(0, c.start - 6) : c.start])),
            c.start in terms,
        )
        for c in amounts
    ]
    computed: set[str] = set()  # the figures this answer's derivations explain
    for f in (f for f in figures if f.at >= 0):
        f.sentence = sentence_at(pools.answer_sentences, amounts[f.at].start)
        said = f.sentence.text if f.sentence else ""
        f.said = line_label(answer, amounts[f.at].start) + " " + said
        people = parse_number(match.group(1)) if (match := _FOR_PEOPLE.search(said)) else None
        f.people = people if people is not None and people >= 2 else None
    # The rows marked ``last`` join only once the others have explained all they can.
    for last in (False, True):
        if last:  # the lengths the others explained are operands of the last ones
            pools.lengths += lengths_at(
                (f.start, f.text) for f, found in zip(figures, out, strict=True) if found
            )
        pending = [i for i, found in enumerate(out) if found is None]
        for round_ in range(3):
            stated = [_stated(c, m, known, computed) for c, m in zip(amounts, marks, strict=True)]
            progress = False
            for i in pending:
                f = figures[i]
                if f.at >= 0:
                    low = max(0, f.at - MAX_POOL)
                    f.near, f.index = stated[low : f.at + MAX_POOL + 1], f.at - low
                # The others, tried already, are tried again only with what the ``last`` rows explained.
                found = out[i] = _first(f, pools, last, others=not last or round_ > 0)
                if found is not None and f.at >= 0:
                    known[f.key], progress = found.evidence, True
                    computed.add(f.key)
            pending = [i for i in pending if out[i] is None and figures[i].at >= 0]
            if not progress or not pending:
                break
    return out
