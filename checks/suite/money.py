"""Amounts of money, read one way wherever they are written.

"$1,000.00", "USD1,000", "1.000,00 €", "1000 dollars", "-$5", "$12 per night" and "$2.4
million" are each one ``Amount`` (a ``value.Value``). What makes a number an amount is data,
the tables below, naming no domain; the rest:

- **A currency mark belongs to the number beside it, on its own line**: a sign touching it
  or one space away, a code or a word one space away ("58.40 USD" then "2." is no "USD 2").
- **Digits group by commas, dots or spaces** in well-formed groups (three digits after a
  head of one to three); the point is the last separator where it differs from the others.
- **"1,000" is a thousand; "1.000" is ambiguous**: a group or three decimals, with the keys
  of both, the decimal first. A lone comma is a point only for cents ("12,50 €").
- **Keys are the magnitude, canonical** (``1000``, ``5.5``): not the sign (``-50`` is
  "refunded $50"), not the currency (a bare ``"price": 50`` states none). An amount in a
  minor unit ("50 cents", a member ``amount_cents``; never "percent") carries both values.
- **A scale multiplies the number it follows** ("$310K", "$2.4 million"), to the precision
  of its last digit. Without a currency mark, a scale word makes a number of a source only;
  scale letters make nothing ("5m"). A number grouped by commas ("41,200") is read too.

A long text is read only around its marks, so megabytes with no amount cost a few searches.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from decimal import Decimal

from .decimals import EXACT, number_text, read_number
from .text import alternation, find_all

# Signs touching the number or one space from it, before ("$5", "US$5") or after ("5 €"),
# with the currency each names; a sign several currencies use ("$", "¥") names only itself.
SIGNS = {"$": "$", "us$": "USD", "c$": "CAD", "ca$": "CAD", "a$": "AUD", "au$": "AUD", "nz$": "NZD"}
SIGNS |= {"hk$": "HKD", "s$": "SGD", "r$": "BRL", "mx$": "MXN", "€": "EUR", "£": "GBP", "¥": "¥"}
SIGNS |= {"₹": "INR", "₩": "KRW", "₽": "RUB", "₪": "ILS", "฿": "THB", "₫": "VND", "₦": "NGN"}
# ISO 4217 codes, before or after the number, in either case; none that is also a word ("try").
CODES = frozenset("usd eur gbp jpy cny chf cad aud nzd hkd sgd sek nok dkk pln czk huf inr krw mxn".split())
CODES |= frozenset("brl zar rub ils thb aed".split())
# Words after the number, with the currency each names.
WORDS = {"us dollars": "USD", "dollars": "$", "dollar": "$", "bucks": "$", "euros": "EUR", "euro": "EUR"}
WORDS |= {"pounds": "GBP", "pound": "GBP", "yen": "JPY", "yuan": "CNY", "rupees": "INR", "rupee": "INR"}
WORDS |= {"francs": "franc", "franc": "franc", "pesos": "peso", "peso": "peso"}
# Words of a minor unit after the number, with how many make one of the major unit.
MINOR_WORDS = {"cents": 100, "cent": 100, "pence": 100}
# Scales after the number, with their power of ten: words ("$2.4 million"), letters ("$310K").
SCALE_WORDS = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12, "lakh": 5, "lakhs": 5}
SCALE_WORDS |= {"crore": 7, "crores": 7}
SCALE_LETTERS = {"k": 3, "m": 6, "mm": 6, "mn": 6, "mln": 6, "b": 9, "bn": 9, "t": 12, "tn": 12}
GROUP_SPACES = " \u00a0\u2009\u202f"  # a space, a no-break, a thin and a narrow no-break one
MINUS = "-\u2212"  # hyphen-minus and minus, touching the amount ("-$5", "$-5")
# What makes an amount a price of one unit: "$85/person", "$12 per night", "$54 each".
PER_WORDS = frozenset(["per"])
EACH_WORDS = frozenset(["each", "apiece"])
# Nouns under which a text names an amount without a currency mark ("total price is 305").
MONEY_NOUNS = frozenset("price total paid amount cost fee fare balance refund charge charged".split())

_SIGN = alternation(SIGNS)
_CODE = alternation(CODES)
_SPACE = "[ \u00a0]"
_GAP = f"{_SPACE}?"  # between a sign and its number: one space at most, never a line break
_MINUS = f"[{MINUS}]"
# A scale word a space from the number or glued to it, letters glued; never in a longer word.
_SCALE = rf"(?:{_SPACE}?(?:{alternation(SCALE_WORDS)})|(?:{alternation(SCALE_LETTERS)}))(?!\w)"
# A run of digits and separators; a space separates only before a group of exactly three.
_NUMERAL = rf"\d+(?:(?:[.,]|[{GROUP_SPACES}](?=\d{{3}}(?!\d)))\d+)*"
# A code or word a space from the number, a code in capitals touching it ("USD5"; "cad3f" is hex), a sign.
_UPPER_CODE = "|".join(sorted(code.upper() for code in CODES))
_MARK_BEFORE = rf"(?:(?:{_CODE}){_SPACE}(?:{_SIGN})?|(?-i:{_UPPER_CODE})(?=\d)|{_SIGN})"
_GLUED_CODE = re.compile(rf"(?:{_UPPER_CODE})(?=\d)")
_CAPITALS = str.maketrans(dict.fromkeys(string.ascii_uppercase, "A"))
_MARK_AFTER = rf"(?:{_GAP}(?:{_SIGN})|{_SPACE}(?:{_CODE}|{alternation([*WORDS, *MINOR_WORDS])})\b)"
_AMOUNT = re.compile(
    rf"""
    (?<![\w$])
    (?P<minus>{_MINUS})?
    (?:(?P<before>{_MARK_BEFORE}){_GAP}(?P<minus2>{_MINUS})?)?
    (?P<number>(?>{_NUMERAL}))(?!\d|[.,]\d)
    (?P<scale>{_SCALE})?
    (?P<after>{_MARK_AFTER})?
    (?:
        [ \u00a0]?/[ \u00a0]?(?P<slash>[a-z]+)\b
        | [ \u00a0](?:{alternation(PER_WORDS)})[ \u00a0](?P<per>[a-z]+)\b
        | [ \u00a0](?P<each>{alternation(EACH_WORDS)})\b
    )?
    (?![\w%]|/\w)
    """,
    re.I | re.X,
)
# Pieces of a larger pattern (no groups): the terms of an answer's arithmetic ("1,480 USD - 1,215 USD").
AMOUNT_TEXT = rf"(?i:{_MINUS}?(?:{_MARK_BEFORE}{_GAP}{_MINUS}?)?{_NUMERAL}(?:{_SCALE})?(?:{_MARK_AFTER})?)"
MARK_BEFORE_TEXT = rf"(?i:{_MARK_BEFORE}{_GAP}{_MINUS}?)"
MARK_AFTER_TEXT = rf"(?i:{_MARK_AFTER})"

# What a text writing an amount holds: a sign, a code or a word (lower case; a longer found by a shorter).
_ONE_CHARACTER_SIGNS = [sign for sign in SIGNS if len(sign) == 1]  # every longer one ends in "$"
_ALL_WORDS = {word for mark in [*CODES, *WORDS, *MINOR_WORDS] for word in mark.split()} - {"us"}
_MARK_WORDS = frozenset(word for word in _ALL_WORDS if not any(o != word and o in word for o in _ALL_WORDS))
_COMMA_GROUP = re.compile(r",\d{3}")  # a literal first, so a large text is searched fast
# A longer text is read only around its marks, this far either side, widened to whole words.
_SMALL, _REACH = 2048, 48
_WORD_OR_NUMBER = frozenset(
    string.ascii_letters + string.digits + ".,/%" + MINUS + "".join(SIGNS) + GROUP_SPACES[1:]
)
COMMA_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_SEPARATOR = re.compile(rf"([.,{GROUP_SPACES}])")
_LABELLED = re.compile(
    rf"\b(?:{alternation(MONEY_NOUNS)})\b[^\d\n]{{0,20}}?(?<![\d.,])(\d+(?:[.,]\d+)*)(?!\d|[.,]\d)", re.I
)
# A JSON member named for a minor unit, a word of its own ("amount_cents", "priceCents"), never "percent".
_MINOR_NAMES = [
    (re.compile(rf"(?<!{before}){re.escape(spelled)}$"), per)
    for word, per in MINOR_WORDS.items()
    for spelled, before in ((word, r"[^\W_]"), (word.capitalize(), "[A-Z0-9]"), (word.upper(), "[A-Z0-9]"))
]


def _grouped(head: str, groups: list[str]) -> bool:
    return (head == "0" or 1 <= len(head) <= 3 and head[0] != "0") and all(len(g) == 3 for g in groups)


def read_numeral(run: str) -> tuple[Decimal, ...]:
    """Every value a run of digits and separators may write, the usual first; none if ill-formed."""
    parts = _SEPARATOR.split(run)
    digits, separators = parts[0::2], [s if s in ".," else " " for s in parts[1::2]]
    if len(separators) == 1 and separators[0] != " ":  # "1.000", "1,5": a group or a point
        (head, tail), mark = digits, separators[0]
        if len(tail) == 3 and _grouped(head, [tail]):
            return _values([head + tail] if mark == "," else [f"{head}.{tail}", head + tail])
        return () if mark == "," and len(tail) > 2 else _values([f"{head}.{tail}"])  # "1204,1205": two
    # The last separator is the point where it is a mark written once; the others group alike.
    last = separators[-1] if separators else " "
    point = last if last != " " and separators.count(last) == 1 else None
    groups = digits[1 : -1 if point else None]
    if len(set(separators) - {point}) > 1 or (separators and not _grouped(digits[0], groups)):
        return ()
    return _values(["".join(digits[:-1]) + "." + digits[-1] if point else "".join(digits)])


def _values(texts: list[str]) -> tuple[Decimal, ...]:
    return tuple(value for value in map(read_number, texts) if value is not None)


@dataclass(frozen=True)
class Amount:
    """One amount of a text: a typed span with its value and its keys (a ``value.Value``)."""

    kind: str  # "money" (a currency mark beside it) or "number" (grouped, no mark)
    value: Decimal  # as written, signed, in the major unit
    readings: tuple[Decimal, ...]  # every value its digits may write (``value`` first), unsigned
    currency: str | None  # the currency named, where one is
    per: str | None  # the unit of a per-unit amount ("person", "night", "each")
    start: int  # the whole amount: sign, number, currency, unit
    end: int
    number_start: int  # its digits alone, and the scale written after them ("2.4 million")
    number_end: int
    precision: int  # decimals as written, of the first reading, less a scale's power ("2.4 million": -5)

    @property
    def magnitude(self) -> Decimal:
        return self.readings[0]

    @property
    def canonical(self) -> str | None:
        return number_text(self.magnitude) if len(self.readings) == 1 else None

    def keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(number_text(reading) for reading in self.readings))

    lookups = keys


def _currency(mark: str | None) -> str | None:
    mark = " ".join(mark.lower().split()) if mark else ""  # one space, none at the ends
    code = re.sub(r"[^a-z]", "", mark)  # "usd $" names its code
    return SIGNS.get(mark) or WORDS.get(mark) or (code.upper() if code in CODES else None)


def _amount(match: re.Match[str], plain: bool, bare: bool = False, scaled: bool = False) -> Amount | None:
    """The amount a match of ``_AMOUNT`` is; one with no mark only where ``bare``, ``plain`` or ``scaled``."""
    before, after = match.group("before"), match.group("after")
    number, scale = match.group("number"), match.group("scale")
    word = scale.strip().lower() if scale else ""
    if scale is None:
        unmarked = plain and COMMA_GROUPED.fullmatch(number) is not None  # "41,200"
    else:
        unmarked = scaled and scale[0].isspace() and word in SCALE_WORDS  # "2.4 million"
    if before is None and after is None and not (bare or unmarked):
        return None
    digits = read_numeral(number)
    if not digits:
        return None
    power = SCALE_WORDS.get(word) or SCALE_LETTERS.get(word, 0)
    readings = tuple(EXACT.scaleb(reading, power) for reading in digits) if power else digits
    minor = MINOR_WORDS.get(after.strip().lower()) if after else None
    if minor is not None:
        readings = tuple(dict.fromkeys([r / minor for r in readings] + list(readings)))
    per = match.group("slash") or match.group("per") or match.group("each")
    return Amount(
        kind="number" if before is None and after is None else "money",
        value=-readings[0] if match.group("minus") or match.group("minus2") else readings[0],
        readings=readings,
        currency=_currency(before) or _currency(after),
        per=per.lower() if per else None,
        start=match.start(),
        end=match.end(),
        number_start=match.start("number"),
        number_end=match.end("scale" if scale is not None else "number"),
        precision=-int(digits[0].as_tuple().exponent) - power,  # digits and a point: never above 0
    )


def read_amounts(
    text: str, *, plain: bool = False, scaled: bool = False, words: AbstractSet[str] | None = None
) -> list[Amount]:
    """The amounts ``text`` writes, in order, with ``plain`` its numbers grouped by commas
    ("41,200"), with ``scaled`` those a scale word follows; ``words``: its words, if known."""
    low = text.lower()
    # A text whose lower case is longer (a few letters lower to two) is read whole.
    if len(text) <= _SMALL or len(low) != len(text):
        places = _places(text, low, plain, scaled, words if len(text) > _SMALL else None)
        spans = [(0, len(text))] if next(places, None) is not None else []
    else:
        spans = _windows(text, list(_places(text, low, plain, scaled, words)))
    out: list[Amount] = []
    for low_end, high_end in spans:
        for match in _AMOUNT.finditer(text, low_end, high_end):
            start = match.start()
            if text[start].isdigit() and start >= 2 and text[start - 1] in ".," and text[start - 2].isdigit():
                continue  # the rest of a number that is not one ("5" of "1.1.5")
            if (amount := _amount(match, plain, scaled=scaled)) is not None:
                out.append(amount)
    return out


def _places(text: str, low: str, plain: bool, scaled: bool, words: AbstractSet[str] | None) -> Iterator[int]:
    """Where ``text`` writes a currency mark (``plain``: a comma group; ``scaled``: a scale word)."""
    yield from find_all(text, ["$"] if text.isascii() else _ONE_CHARACTER_SIGNS)
    marks = _MARK_WORDS if words is None else _MARK_WORDS & words
    if words is not None and "/" in text:  # "USD/night" is one word: its code is a mark
        marks |= _MARK_WORDS & {word.partition("/")[0] for word in words if "/" in word}
    yield from find_all(low, marks)
    # A code in capitals touching a number ("USD5" is no word of its own), where three capitals stand.
    shape = text.translate(_CAPITALS)
    if shape.count("AAA") > len(text) // 128:  # so often that the pattern is the quicker
        yield from (match.start() for match in _GLUED_CODE.finditer(text))
    else:
        yield from (at for at in find_all(shape, ["AAA"]) if _GLUED_CODE.match(text, at))
    if plain:
        yield from (match.start() for match in _COMMA_GROUP.finditer(text))
    if scaled:  # read without a mark only as a word of its own: one of ``words`` where given
        yield from find_all(low, SCALE_WORDS if words is None else SCALE_WORDS.keys() & words)


def _windows(text: str, places: list[int]) -> list[tuple[int, int]]:
    """Spans of ``text`` around ``places``, merged, widened until they cut no word or number."""
    spans: list[tuple[int, int]] = []
    for place in sorted(places):
        if spans and place < spans[-1][1]:
            continue  # read with the span before
        floor = spans[-1][1] if spans else 0
        start, end = max(floor, place - _REACH), min(len(text), place + _REACH)
        while start > floor and _joins(text, start - 1, -1):
            start -= 1
        while end < len(text) and _joins(text, end, 1):
            end += 1
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _joins(text: str, at: int, step: int) -> bool:
    """Whether the character at ``at`` is of a word or number: a space too before a digit one ``step`` on."""
    return text[at] in _WORD_OR_NUMBER or (text[at] == " " and text[at + step : at + step + 1].isdigit())


def read_amount(text: str) -> Amount | None:
    """The one amount ``text`` is, whole, with or without a currency ("$1,204.50", "3")."""
    match = _AMOUNT.fullmatch(text.strip())
    return None if match is None else _amount(match, plain=True, bare=True)


def amount_keys(text: str, *, plain: bool = True, words: AbstractSet[str] | None = None) -> set[str]:
    """The keys a source's text is indexed under: its amounts, and numbers a scale word follows."""
    amounts = read_amounts(text, plain=plain, scaled=True, words=words)
    return {key for amount in amounts for key in amount.keys()}


def key_span(text: str, key: str, *, plain: bool = True) -> tuple[int, int] | None:
    """Where the digits (and the scale) of the first amount of ``text`` keyed ``key`` stand."""
    amounts = read_amounts(text, plain=plain, scaled=True)
    return next(((a.number_start, a.number_end) for a in amounts if key in a.keys()), None)


def needs_its_strings(json_text: str) -> bool:
    """Whether a JSON text's strings are read one by one: "[1,250]" may be an array, ``\\u20ac`` a sign."""
    # A backslash alone is looked for first: at once, where the pair is found slower.
    return ("\\" in json_text and "\\u" in json_text) or _COMMA_GROUP.search(json_text) is not None


def labelled_amounts(text: str) -> set[Decimal]:
    """The numbers after a money noun with no currency mark ("total price is 305"), all readings."""
    return {value for match in _LABELLED.finditer(text) for value in read_numeral(match.group(1))}


def minor_units(name: str) -> int | None:
    """How many of the minor unit a member's name counts make one (``priceCents``: 100), or None."""
    return next((per for pattern, per in _MINOR_NAMES if pattern.search(name)), None)


def in_whole_units(name: str, number: int | Decimal) -> Decimal:
    """The amount a JSON number under a member named ``name`` is: ``"priceCents": 1299`` is 12.99."""
    per = minor_units(name)
    return EXACT.divide(Decimal(number), per) if per else Decimal(number)


def minor_member_keys(name: str, number: str) -> list[str]:
    """The amount key of a JSON number counting a minor unit (``in_whole_units``)."""
    value = read_number(number) if minor_units(name) else None
    return [] if value is None else [number_text(in_whole_units(name, value.copy_abs()))]


def money_values(text: str) -> set[Decimal]:
    """The magnitudes of the amounts of money ``text`` writes, in every reading."""
    return {reading for amount in read_amounts(text) for reading in amount.readings}
