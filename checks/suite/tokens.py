"""Reading values out of text: the one tokenizer and normalizer both sides of a lookup share.

An answer is read into tokens with their spans (markdown, quotes and brackets separate; a
comma does unless between digits; ``**fc1/3**,`` reads ``fc1/3``), each prose or a
*candidate*, a value some tool result must carry. Tool results are read by the same rules
into a set of normalized *forms*, in C where it can. User patterns match whole tokens,
under a time bound.

- **The units of a figure are data** (``UNITS``), and a unit in two words is one token
  (``WORDED_UNITS``: "12.5 per cent" is "12.5 percent"), on both sides.
  A number written per units with slashes ("9.50/ft/mo") is that number, as "9.50 per ft per
  month" is: a figure, never an identifier.
- **Digits grouped by spaces are one number where the grouping is well formed**
  (``SPACED_NUMBER``: groups of three after a head of one to three, one space apart, never
  across a line, never glued to a word or a number: "in 2024 300 people" is two). A run
  that may be a list ("items 1 200 300") carries both readings.
- **Points group digits where the writing says so**: two groups or more ("2.750.300"), or
  one before a decimal comma ("10.482,75"). "41.200" alone is as often a decimal.
- **A sign dresses a number as "$" does**: "-11.5" and "−11.5" (a minus sign) are 11.5 to look
  up, as a ledger that subtracts writes what a source holds unsigned; "1024×" is 1024 times;
  "≈4,120" is about 4,120 and "3.8¢" is 3.8 cents.
- **A thousand's k multiplies its number** on both sides ("12.5k" is 12,500, within fifty, as
  written); a short one ("4K", "10k") is a word, as often a size or a distance as a count.
- **Sizes by "x" are one value however spaced**: "48 x 96", "48x96" and "48×96" are one.
- **A code's marks are notation**: "ABC-123-456", "abc/123/456" and "ABC123456" are one code on
  either side, as letters' case is; a point is no mark ("1.5mg" is no "15mg").
- **A unit is no identifier**: a superscript digit is a unit's power ("m³/h"), and letters per a
  power of ten are a unit ("L/100 km"); only a code mixes letters with digits of its own.
"""

from __future__ import annotations

import multiprocessing
import re
import signal
import threading
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from .decimals import EXACT, number_text, read_number
from .durations import UNITS as DURATION_WORDS
from .durations import duration_keys
from .money import COMMA_GROUPED, GROUP_SPACES, amount_keys
from .notations import identifier_runs
from .text import alternation
from .values import HALF_DAY_MARKS, MONTH_NAMES, date_keys, time_keys

# Characters that end a token wherever they stand. A comma is one too, except between digits.
SEPARATORS = " \t\r\n\f\v\"'`|*()[]{}<>;!?=,\u00a0\u201c\u201d\u2018\u2019\u00ab\u00bb\u2014\u2013\\"
_TO_SPACE = str.maketrans({c: " " for c in SEPARATORS})
_DIGITS = frozenset("0123456789")
# Stripped from a token's two ends: punctuation that dresses a value without being part of it.
DECORATION = ".:-\u2212\u00d7_/#~\u2248$\u00a2+\u20ac\u00a3\u2026^&@"
_DECORATION_SET = frozenset(DECORATION)
_TOKEN = re.compile(rf"(?:[^{re.escape(SEPARATORS)}]+|(?<=\d),(?=\d))+")

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_DOTTED = re.compile(r"\d{1,3}(?:(?:\.\d{3}){2,}(?:,\d{1,2})?|\.\d{3},\d{1,2})")  # the principle above
_DOTTED_IN_TEXT = re.compile(rf"(?<![\w.,]){_DOTTED.pattern}(?![\w]|[.,]\d)")
_HEX = re.compile(r"[0-9a-f]+")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_PER_POWER_OF_TEN = re.compile(r"[^\W\d_]{1,3}/10{1,3}")
_SHORT_FRACTION = re.compile(r"\d{1,2}(?:\.\d{1,2})?/\d{1,2}")  # "3/4", a score "4.5/5": no code
# "UTC−7", "GMT+5:30": a clock's zone, as a unit names a measure, no value of a record.
_ZONE_OFFSET = re.compile(r"(?:utc|gmt)[+\-−±](?:1[0-4]|0?\d)(?::?(?:00|30|45))?")
# 4-port, 24-hour, 64-bit, 3.5-ton, 2nd-floor: an adjective, not a value.
_MEASURE_COMPOUND = re.compile(r"(\d{1,3}\.\d{1,2})-([a-z]+)")
_COMPOUND = re.compile(r"\d{1,3}(?:\.\d{1,2}|st|nd|rd|th)?(?:-[a-z]+)+")
_GLUED = re.compile(r"(\d+(?:\.\d+)?)(°?[a-z%]{1,5}(?:/s)?)")  # "°c": a temperature's degrees
_RATE = re.compile(r"(\d+(?:\.\d+)?)((?:/[a-z]+)+)")  # a number per units: "9.50/ft/mo", "12/hr"

# The units a figure is written with, a space from it or glued to it ("12.5 %", "10ms").
UNITS = frozenset(
    "% percent pct iops mbps gbps kbps ms us bytes byte".split()
    + [p + s for p in "kmgtpe" for s in ("b", "ib")]
    # Distances and weights; never a bare "m" or "g", as often minutes, millions or grams.
    + "km kms cm mm mi mile miles ft feet inch inches kg kgs lb lbs oz kilogram kilograms gram grams".split()
    + "kilometre kilometres kilometer kilometers metre metres meter meters ounce ounces".split()
    + ["°c", "°f"]  # temperatures: "21.5°C", "70 °F"
)
# Units written in two words, each read as one token with the one-word unit as its value.
WORDED_UNITS: dict[str, str] = {"per cent": "percent"}
_WORDED = re.compile("|".join(s.replace(" ", "[ \u00a0]") for s in WORDED_UNITS), re.I)
PERCENT_UNITS = frozenset(["%", "percent", "pct"])  # the units that make a figure a percent
_UNIT_SUFFIX = re.compile(rf"({alternation(UNITS)})(?:/s)?")  # glued, per second or not: "40mb/s"

# Not after a word, a mark or another number ("2024 300"), nor before a word, digits or a
# point; the look back after the first digit, so a text is scanned for digits alone.
_GROUP_SPACE = f"[{GROUP_SPACES}]"
SPACED_NUMBER = re.compile(
    rf"[1-9](?<![\w.,:/-].)(?<!\d{_GROUP_SPACE}.)\d{{0,2}}(?:{_GROUP_SPACE}\d{{3}})+(?:\.\d+)?"
    rf"(?![\w]|[.,]\d|{_GROUP_SPACE}\d)"
)
_GROUP_SPLIT = re.compile(_GROUP_SPACE)
# The last group of such a run, as a source's forms hold it: whether a source may write one.
_LAST_GROUP = re.compile(r"(?m)(?:^|[\u2009\u202f])\d{3}(?:\.\d+)?$")
_ESCAPED_GROUP_SPACE = re.compile(r"\\u(00a0|2009|202f)", re.I)  # in JSON
# A token (one a line) that may have another form: dressed, or a number ending as a decimal's zero, a
# glued unit's letter or a point's group ("41.200"); an undressed date or time ("2026-11-03t13:26") has none.
_DRESSED = f"[{re.escape(DECORATION)}]"
_SPELLED = re.compile(
    rf"\n({_DRESSED}[^\n]*+|[0-9][^\n:-]*+(?:(?<=[0a-z%])|(?<=\.[^\n]{{3}}))(?=\n)|[^\n]*+(?<={_DRESSED}))"
)
_POINT_GROUP = re.compile(r"\n[0-9][^\n]*+(?<=\.[^\n]{3})")  # a number, a point before its last three
# A digit, a space, a digit: what every such number holds (in ASCII: "0 0", digits as 0).
_DIGIT_SPACE_DIGIT = re.compile(rf"{_GROUP_SPACE}(?<=\d.)\d")
_DIGITS_AS_ZERO = str.maketrans("123456789", "0" * 9)


def spaced_numbers(text: str) -> list[tuple[int, int, str]]:
    """Where each number grouped by spaces stands in ``text``, and its canonical value."""
    quick = "0 0" in text.translate(_DIGITS_AS_ZERO) if text.isascii() else _DIGIT_SPACE_DIGIT.search(text)
    if not quick:
        return []
    return [
        (m.start(), m.end(), canonical_number(_GROUP_SPLIT.sub("", m.group())))
        for m in SPACED_NUMBER.finditer(text)
    ]


def is_unit(word: str) -> bool:
    return word.lower().removesuffix("/s") in UNITS


def canonical_number(text: str) -> str:
    """``2048.0`` is ``2048``, ``41,200`` is ``41200``; the integer part is kept as written."""
    text = text.replace(",", "")
    return (text.rstrip("0").rstrip(".") if "." in text else text) or "0"


def dotted_value(written: str) -> str:
    """The canonical number a point-grouped writing is: ``10.482,75`` is ``10482.75``."""
    return canonical_number(written.replace(".", "").replace(",", "."))


def normalize(token: str) -> str:
    """The form a token is compared under: lower case, ends undressed, numbers canonical."""
    value = token.lower().strip(DECORATION)
    if value and value[0].isdigit():
        if COMMA_GROUPED.fullmatch(value) or _NUMBER.fullmatch(value):
            return canonical_number(value)
        if _DOTTED.fullmatch(value):
            return dotted_value(value)
    return value


def lookup_forms(value: str) -> list[str]:
    """Every spelling a normalized value is looked up under: ``0x`` prefixes both ways, a code
    without its marks (``joined_code``)."""
    if value.startswith("0x") and len(value) > 2:
        return [value, value[2:]]
    if len(value) >= 4 and _HEX.fullmatch(value) and any(map(str.isdigit, value)):
        return [value, "0x" + value]
    return [value, joined] if (joined := joined_code(value)) else [value]


def digit_count(value: str) -> int:
    return sum(map(str.isdigit, value))


class Token(NamedTuple):
    text: str  # as written, decoration stripped
    start: int
    end: int
    value: str  # normalized


@dataclass(frozen=True)
class Candidate:
    """A value the answer states, which some source must carry."""

    value: str  # normalized: what findings and fingerprints carry
    text: str  # as written in the answer
    start: int
    end: int
    shape: str  # number | figure | identifier | decimal | a declared shape's name
    forms: tuple[str, ...]  # spellings looked up
    number: Decimal | None = None  # exact; None past the digits a number may have (``decimals``)
    precision: int | None = None  # decimals as written, for numbers
    unit: str | None = None  # a figure's unit ("%", "percent", "kb")
    apart: tuple[str, ...] = ()  # a run of digits grouped by spaces: its numbers read apart


def tokenize(text: str, *, grouped: bool = False) -> list[Token]:
    """Every token of ``text``: a unit in two words is one; with ``grouped``, a spaced number too."""
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text):
        raw = match.group()
        core = raw.strip(DECORATION)
        start = match.start() + len(raw) - len(raw.lstrip(DECORATION))
        # 1204,1205 is two numbers; only a well-formed grouping is one.
        split = "," in core and not COMMA_GROUPED.fullmatch(core) and not _DOTTED.fullmatch(core)
        for piece in core.split(",") if split else [core]:
            if piece:
                tokens.append(Token(piece, start, start + len(piece), normalize(piece)))
            start += len(piece) + 1
    spans = [(*m.span(), WORDED_UNITS[" ".join(m.group().lower().split())]) for m in _WORDED.finditer(text)]
    spans += spaced_numbers(text) if grouped else []
    if not spans:
        return tokens
    # The tokens that exactly cover one of ``spans`` (start, end, value) are made one.
    out: list[Token] = []
    i = 0
    for start, end, value in sorted(spans):
        while i < len(tokens) and tokens[i].start < start:
            out.append(tokens[i])
            i += 1
        j = i
        while j < len(tokens) and tokens[j].end <= end:
            j += 1
        if j > i and tokens[i].start == start and tokens[j - 1].end == end:
            out.append(Token(text[start:end], start, end, value))
            i = j
    return out + tokens[i:]


_INNER_PUNCTUATION = re.compile(r"([/:@.#+=&?_-])")


def parts_of_tokens(text: str) -> set[str]:
    """The pieces of compound tokens: an id inside a path or an email (``user:mia_li_3668``: ``3668``)."""
    out: set[str] = set()
    for token in tokenize(text):
        parts = _INNER_PUNCTUATION.split(token.value)  # its pieces, and the marks between them
        for i in range(0, len(parts) if len(parts) > 1 else 0, 2):
            for j in range(i, min(len(parts), i + 11), 2):  # every run of up to six pieces, as written
                if len(core := normalize("".join(parts[i : j + 1]))) >= 3:
                    out.update(lookup_forms(core))
    return out


def classify(
    token: Token, *, min_digits: int, figures: bool, decimal_rounding: bool, unit: Token | None = None
) -> Candidate | None:
    """The candidate a token is, or None for prose. ``unit`` is a unit word written after it."""
    value = token.value
    # A superscript is a unit's power ("m³/h"), and a unit per a power of ten ("L/100") no code.
    if not any(map(str.isdecimal, value)) or _PER_POWER_OF_TEN.fullmatch(value):
        return None
    at = (token.text, token.start, token.end)
    if _NUMBER.fullmatch(value):
        number, pieces = read_number(value), _GROUP_SPLIT.split(token.text)
        apart = tuple(map(canonical_number, pieces)) if len(pieces) > 1 else ()  # "1 200 300" may be a list
        if figures and unit is not None:
            text = token.text + unit.text if unit.start == token.end else f"{token.text} {unit.text}"
            both, places = (
                (value, value + unit.value, *_undegreed(value + unit.value)),
                _precision(token.text),
            )
            return Candidate(
                value, text, token.start, unit.end, "figure", both, number, places, unit.value, apart
            )
        if digit_count(value) >= min_digits:
            forms = (value,) if "." in value else (value, "0x" + value)  # 650000 may be 0x650000
            return Candidate(value, *at, "number", forms, number, _precision(value), apart=apart)
        if decimal_rounding and "." in value:
            return Candidate(value, *at, "decimal", (value,), number, _precision(value))
        return None
    glued = _GLUED.fullmatch(value)
    if glued is not None and (thousands := _thousands(value, glued)) is not None:
        whole = number_text(thousands)
        return Candidate(whole, *at, "number", (whole, value), thousands, _precision(glued.group(1)) - 3)
    with_unit = glued if glued and _UNIT_SUFFIX.fullmatch(glued.group(2)) else _RATE.fullmatch(value)
    if with_unit:
        digits = canonical_number(with_unit.group(1))
        both = (digits, value, *_undegreed(value))
        if figures:
            number, precision = read_number(digits), _precision(with_unit.group(1))
            return Candidate(digits, *at, "figure", both, number, precision, with_unit.group(2))
        # With figures off, a number dressed with a unit is a number like any other.
        if digit_count(digits) >= min_digits:
            return Candidate(digits, *at, "number", both, unit=with_unit.group(2))
        return None
    too_short = len(value) < 4 or _ORDINAL.fullmatch(value) or _SHORT_FRACTION.fullmatch(value)
    too_short = too_short or _ZONE_OFFSET.fullmatch(value)
    compound = _COMPOUND.fullmatch(value) and digit_count(value) < min_digits
    # A number hyphened to a unit's word ("15.6-inch", "1.5-mile") is a measure, checked as one.
    if figures and (measure := _MEASURE_COMPOUND.fullmatch(value)) and is_unit(measure.group(2)):
        number, precision = read_number(measure.group(1)), _precision(measure.group(1))
        return Candidate(
            measure.group(1), *at, "figure", (measure.group(1), value), number, precision, measure.group(2)
        )
    if too_short or compound or not any(c.isalpha() or c in ":_-/." for c in value):
        return None
    # 1204itw is looked up as 1204 too.
    spellings = lookup_forms(value) + ([canonical_number(glued.group(1))] if glued else [])
    return Candidate(value, *at, "identifier", tuple(spellings))


_CODE = re.compile(r"(?=[-/a-z0-9]*[a-z])[a-z0-9]+(?:[-/][a-z0-9]+)+", re.I)  # a code's parts and marks
_CODE_MARKS = re.compile(r"[-/]")
JOINED_CODE = re.compile(r"(?=[a-z0-9]*[a-z])(?=[a-z0-9]*\d)[a-z0-9]+")  # how a joined code is looked up


def _undegreed(value: str) -> tuple[str, ...]:
    """A temperature as a source may write it without its degree sign: "31°c" as "31c"."""
    return (value.replace("°", ""),) if "°" in value else ()


def joined_code(value: str) -> str | None:
    """A code of letters and digits without the hyphens and slashes between its parts
    ("abc-123-456": "abc123456"), or None where ``value`` is none or has no such mark. A point is
    no mark: "1.5mg" is no "15mg"."""
    return _CODE_MARKS.sub("", value) if _CODE.fullmatch(value) and any(map(str.isdigit, value)) else None


def code_forms(text: str, forms: AbstractSet[str]) -> list[str]:
    """The codes among a source's tokens (``forms``), joined (``joined_code``)."""
    return [joined for token in forms if ("-" in token or "/" in token) and (joined := joined_code(token))]


def _thousands(value: str, glued: re.Match[str]) -> Decimal | None:
    """The number a thousands k multiplies ("12.5k": 12500), or None: none, or too short to be sure."""
    if glued.group(2) != "k" or len(value) < 4:
        return None
    number = read_number(glued.group(1))
    return None if number is None else EXACT.multiply(number, Decimal(1000))


def _precision(text: str) -> int:
    return len(text.replace(",", "").split(".")[1]) if "." in text else 0


def index_text(text: str) -> set[str]:
    """The normalized forms a text carries: its words and the keys of its values and amounts."""
    forms = word_forms(text)
    forms.update([*date_forms(text, forms), *time_forms(text, forms), *duration_forms(text, forms)])
    forms.update([*code_forms(text, forms), *dimension_forms(text)])
    # The text as written: a code glued to its number is read only in capitals ("USD5").
    forms.update(amount_keys(value_text(text), words=forms))
    return forms


def split_text(text: str) -> str:
    """``text`` in lower case with each separator a space, in C: its tokens are what ``split`` gives."""
    low = text.lower()
    if "\\" in low:  # JSON escapes would glue their letter to the next word
        low = low.replace("\\n", " ").replace("\\t", " ").replace("\\r", " ").replace("\\/", "/")
    return low.translate(_TO_SPACE)


def word_forms(text: str, split: str | None = None) -> set[str]:
    """The forms (``token_keys``) of a text's tokens (``split``: its ``split_text``) and spaced numbers."""
    forms = set((split_text(text) if split is None else split).split())
    # The distinct tokens one a line, where patterns pick in C the few with another form.
    lines = "\n" + "\n".join(forms) + "\n"
    keys = [key for token in _SPELLED.findall(lines) for key in token_keys(token)]
    forms.update(keys)
    # Numbers grouped by spaces, looked for where a form may end one or an escape hide a space.
    if ("\\" in text and "\\u" in text) or _LAST_GROUP.search(lines) or _LAST_GROUP.search("\n".join(keys)):
        unescaped = _ESCAPED_GROUP_SPACE.sub(lambda m: chr(int(m.group(1), 16)), text)
        forms.update(value for _, _, value in spaced_numbers(unescaped))
    # A decimal comma after a point's group ("10.482,75") is a separator above: read whole.
    if "," in text and _POINT_GROUP.search(lines):
        forms.update(dotted_value(m.group()) for m in _DOTTED_IN_TEXT.finditer(text))
    return forms


# A run of two to four sizes by "x" or "×", spaced or not, a part a fraction too: "48 x 96",
# "5×5×11", "1/2 x 48 x 96" (read whole: no run starts or ends inside a longer one).
_PART = r"\d+(?:\.\d+)?(?:/\d+)?"
_DIMENSIONS = re.compile(
    rf"(?<![\w./×])(?<![x×] ){_PART}(?: ?[x×] ?{_PART}){{1,3}}(?!\w|[./]\d| ?[x×] ?\d)", re.I
)
_BY = re.compile(r" ?[x×] ?", re.I)
SIZE_KEY = re.compile(r"\d+(?:\.\d+)?(?:[x×]\d+(?:\.\d+)?){1,2}")  # a size as looked up: "48x96"


def dimension_forms(text: str, forms: AbstractSet[str] = frozenset()) -> list[str]:
    """The sizes ``text`` writes by "x" or "×", glued in both spellings: each run of two or three
    of a run's parts in order ("1/2 x 48 x 96" is "48x96" too: a plate's width and length).
    ``forms``, a lazy reader's second argument, is not needed."""
    text = text.replace("\\u00d7", "×").replace("\\u00D7", "×") if "\\u00" in text else text  # in JSON
    if not ("x" in text or "X" in text or "×" in text):
        return []
    out = []
    for m in _DIMENSIONS.finditer(text):
        parts = _BY.split(m.group())
        runs = (parts[i:j] for i in range(len(parts)) for j in range(i + 2, min(len(parts), i + 3) + 1))
        out += [mark.join(run) for run in runs for mark in "x×"]
    return out


def grouped_span(text: str, key: str) -> tuple[int, int] | None:
    """Where the first number grouped by spaces whose value is ``key`` stands in ``text``."""
    return next(((start, end) for start, end, value in spaced_numbers(text) if value == key), None)


def value_text(text: str) -> str:
    """``text`` with JSON's escaped whitespace as spaces, each as long as its escape (offsets hold)."""
    return text.replace("\\n", "  ").replace("\\t", "  ").replace("\\r", "  ") if "\\" in text else text


# A source's dates, times and durations are read from the whole text where one may stand
# across tokens (a month's name, "10 PM"), else from the distinct tokens that may hold one.
_MONTH_TOKENS = frozenset(MONTH_NAMES)
_MONTH_GLUED = re.compile(rf"-(?:{alternation(MONTH_NAMES)})\.?-")  # 19-may-2024
# "10:00 PM", "10 p. m." (of whose two tokens "m." tells), "2200 hrs".
_ACROSS_TIME_TOKENS = frozenset(
    [*(m.rstrip(".") for m in HALF_DAY_MARKS if " " not in m), "m.", "hrs", "hours"]
)
_DURATION_ENDINGS = tuple(DURATION_WORDS)


def date_forms(text: str, forms: AbstractSet[str]) -> list[str]:
    """The keys of the dates a source writes, and their years (a number a source carries)."""
    dated = "\n".join(t for t in forms if t[0] in _DIGITS and ("-" in t or "/" in t or "." in t))
    if not forms.isdisjoint(_MONTH_TOKENS) or _MONTH_GLUED.search(dated) is not None:
        return list(date_keys(value_text(text)))
    return list(date_keys(dated, in_words=False))


def time_forms(text: str, forms: AbstractSet[str]) -> list[str]:
    """The keys of the clock times a source writes."""
    if not forms.isdisjoint(_ACROSS_TIME_TOKENS):
        return list(time_keys(value_text(text)))
    timed = [t for t in forms if t[0] in _DIGITS and (":" in t or t[-1] == "m" or "h" in t)]
    return list(time_keys("\n".join(timed)))


def duration_forms(text: str, forms: AbstractSet[str]) -> list[str]:
    """The keys of a source's durations, in the notations its tokens show ("90-minute", "1h30m", "PT")."""
    numeric = [t for t in forms if t[0] in _DIGITS]
    lettered = [t for t in numeric if t[-1].isalpha()]
    readers = {
        "words": not forms.isdisjoint(DURATION_WORDS) or any(t.endswith(_DURATION_ENDINGS) for t in lettered),
        "glued": any(t[-1] in "hms" for t in lettered),
        "clock": any(len(t) <= 9 and t.count(":") == 2 for t in numeric if ":" in t),
        "iso": "PT" in text,
    }
    found = {reader for reader, may in readers.items() if may}
    return list(duration_keys(value_text(text), found)) if found else []


_IDENTIFIER_RUN = re.compile(r"^[^\n]*\d{4}[^\n]*$", re.M)


def fragment_forms(forms: Iterable[str]) -> set[str]:
    """The keys of the digit runs the identifiers among ``forms`` carry (``notations``)."""
    runs = [run for token in _IDENTIFIER_RUN.findall("\n".join(forms)) for run in identifier_runs(token)]
    return {key for run in runs for key in run.keys()}


def token_keys(token: str) -> set[str]:
    """A raw source token's keys: undressed in lower case and a number's canonical form (``10ms``: ``10``)."""
    core = token.lower().strip(DECORATION)
    if not core:
        return set()
    if core[0] not in _DIGITS:
        return {core}
    if core[-1] == "0" and "." in core and _NUMBER.fullmatch(core):
        return {core, canonical_number(core)}
    if core.count(".") > 1 and _DOTTED.fullmatch(core):
        return {core, dotted_value(core)}
    glued = _GLUED.fullmatch(core)
    if glued and _UNIT_SUFFIX.fullmatch(glued.group(2)):
        return {core, canonical_number(glued.group(1))}
    if glued is not None and (thousands := _thousands(core, glued)) is not None:
        return {core, number_text(thousands)}
    return {core}


def dressed_in(
    split: str, key: str, whole: bool = False, most: int = -1, first: int | None = None
) -> bool | None:
    """Whether ``key`` is a token of a ``split_text`` or (unless ``whole``, and undressed itself) the core
    of one dressed with ``DECORATION``, as ``token_keys`` files it, from ``first`` (where it first stands) on.
    None past ``most`` places that write it inside other tokens: a set of the tokens answers sooner."""
    if key.split() != [key]:
        return False
    dressed = not whole and key[0] not in _DECORATION_SET and key[-1] not in _DECORATION_SET
    at = split.find(key) if first is None else first
    while at != -1 and most != 0:
        start, end = at, at + len(key)
        while dressed and start > 0 and split[start - 1] in _DECORATION_SET:
            start -= 1
        while dressed and end < len(split) and split[end] in _DECORATION_SET:
            end += 1
        if (start == 0 or split[start - 1].isspace()) and (end == len(split) or split[end].isspace()):
            return True
        at, most = split.find(key, at + 1), most - 1
    return None if at != -1 else False


# --- user patterns, whole-token and under a time bound -----------------------------------

PATTERN_BUDGET_S = 0.05


def _out_of_time(signum: int, frame: object) -> None:
    raise TimeoutError


def _first_matches(patterns: list[str], values: list[str], out: list[int]) -> list[int]:
    """For each value, the first pattern matching it whole or -1, appended to ``out`` as found."""
    compiled = [re.compile(p, re.I) for p in patterns]
    for value in values:
        out.append(next((i for i, pattern in enumerate(compiled) if pattern.fullmatch(value)), -1))
    return out


class _Pool:
    """A one-process pool for threads that cannot use a timer signal; killed when it overruns."""

    lock = threading.Lock()
    pool = None

    @classmethod
    def run(cls, patterns: list[str], values: list[str]) -> tuple[list[int], bool]:
        with cls.lock:
            if cls.pool is None:
                cls.pool = multiprocessing.get_context("spawn").Pool(1)
            pool = cls.pool
        pending = pool.apply_async(_first_matches, (patterns, values, []))
        try:  # a fresh process needs a moment to start
            return pending.get(timeout=max(PATTERN_BUDGET_S, 2.0)), False
        except multiprocessing.TimeoutError:
            with cls.lock:
                pool.terminate()
                cls.pool = None
            return [-1] * len(values), True


def match_patterns(patterns: list[str], values: list[str]) -> tuple[list[int], bool]:
    """``_first_matches`` within ``PATTERN_BUDGET_S`` (a timer signal, off the main thread a helper process),
    and whether it was hit: the values not yet tried then match no pattern."""
    if not patterns or not values:
        return [-1] * len(values), False
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return _Pool.run(patterns, values)
    out: list[int] = []
    previous = signal.signal(signal.SIGALRM, _out_of_time)
    signal.setitimer(signal.ITIMER_REAL, PATTERN_BUDGET_S)
    try:
        return _first_matches(patterns, values, out), False
    except TimeoutError:
        return out + [-1] * (len(values) - len(out)), True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
