"""Numbers as the suite reads them: exact decimals of any size the door accepts.

A binary float cannot hold every number a tool result may write (400 digits, 1e400, two
numbers that differ past their 16th digit), so every number is a ``Decimal``, and ``==`` and
``<`` compare what was written. A number is one while it has at most ``MAX_DIGITS`` digits on
each side of its point (what the door accepts of an integer): any two fit in ``EXACT``, so
their sums and differences are exact. A longer number takes no arithmetic: in a text it is
left a run of digits, in JSON it is a ``LongNumber``, its text as written.
"""

from __future__ import annotations

import json
import string
import sys
from collections.abc import Callable
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation, localcontext
from functools import wraps
from typing import Any, TypeGuard

# What the door accepts of an integer; 0 means no limit there, and then this one stands.
MAX_DIGITS = sys.get_int_max_str_digits() or 4300
# Room for two such numbers on opposite sides of the point, and for what a derivation does
# to them (a sum of rows, a unit scale of 1024³, a percentage).
EXACT = Context(prec=2 * MAX_DIGITS + 64, Emax=MAX_EMAX, Emin=MIN_EMIN)
ZERO = Decimal(0)


def exactly[**P, R](function: Callable[P, R]) -> Callable[P, R]:
    """``function`` computing in ``EXACT``, whatever context its caller set (Python's keeps 28 digits)."""

    @wraps(function)
    def computing(*args: P.args, **kwargs: P.kwargs) -> R:
        with localcontext(EXACT):
            return function(*args, **kwargs)

    return computing


def fits(value: Decimal) -> bool:
    """Whether a number has at most MAX_DIGITS digits on each side of its point (and is finite)."""
    exponent = value.as_tuple().exponent  # a letter for an infinity or a NaN
    return isinstance(exponent, int) and value.adjusted() < MAX_DIGITS and -exponent <= MAX_DIGITS


def read_number(text: str) -> Decimal | None:
    """The number a run of digits (``2048``, ``0.125``, ``1e400``) writes, or None: none, or too long."""
    try:
        value = Decimal(text)
    except InvalidOperation:  # also an exponent past anything a Decimal can hold
        return None
    return value if fits(value) else None


class LongNumber(str):
    """A JSON number past MAX_DIGITS digits, kept as written: text to quote, never to compute with."""


def _json_fraction(text: str) -> Decimal | LongNumber:
    value = read_number(text)
    return LongNumber(text) if value is None else value


def _json_integer(text: str) -> int | LongNumber:
    return int(text) if len(text.lstrip("-")) <= MAX_DIGITS else LongNumber(text)


_DECODER = json.JSONDecoder(parse_float=_json_fraction)
# Where no number has an exponent of three digits or a run of 160 (MAX_DIGITS is at least
# 640), each one fits, and is the ``Decimal`` it writes: the decoder calls the type itself.
_PLAIN_DECODER = json.JSONDecoder(parse_float=Decimal)
# Every integer through Python: slower, so only for JSON that ``_DECODER`` refused one of.
_LONG_INTEGERS = json.JSONDecoder(parse_float=_json_fraction, parse_int=_json_integer)
# A text's shape: digits are 0, letters a (the fifth letter, e or E, is e), signs left out.
_SHAPE = str.maketrans(string.digits + string.ascii_letters, "0" * 10 + ("aaaae" + "a" * 21) * 2, "+-")


def _fits_plainly(text: str) -> bool:
    """Whether each JSON number surely fits: no run of 160 digits, no 3-digit exponent (but ``SN1E234``'s)."""
    shape = text.translate(_SHAPE)
    if "0" * 160 in shape:
        return False
    at = shape.find("0e000")
    while at != -1:
        letter = max(shape.rfind("a", 0, at), shape.rfind("e", 0, at))
        if letter < 0 or shape[letter + 1 : at].strip("0."):
            return False
        at = shape.find("0e000", at + 1)
    return True


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """``JSONDecoder.raw_decode``, numbers read exactly (bad JSON: ValueError, RecursionError)."""
    plain = text[start : start + 1] in ("{", "[") and _fits_plainly(text)
    try:
        return (_PLAIN_DECODER if plain else _DECODER).raw_decode(text, start)
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer longer than ``int`` reads: read again, keeping it as text
        return _LONG_INTEGERS.raw_decode(text, start)


NO_JSON: Any = object()  # what ``json_head`` reads where a text holds no JSON


def json_head(text: str) -> tuple[Any, bool]:
    """The JSON value heading a text, or ``NO_JSON``, and whether it is the whole text (``json.loads``)."""
    start = len(text) - len(text.lstrip())
    try:
        value, end = raw_decode(text, start)
    except (ValueError, RecursionError):
        return NO_JSON, False
    return value, not text[:start].strip(" \t\n\r") and not text[end:].strip(" \t\n\r")


def read_json(text: str) -> Any:
    """The text as one JSON document, numbers exact; None where it is none."""
    value, whole = json_head(text)
    return value if whole else None


def is_number(value: Any) -> TypeGuard[int | Decimal]:
    """A JSON number as ``read_json`` reads one: no boolean, LongNumber or float (NaN, Infinity)."""
    return type(value) in (int, Decimal)


def number_text(value: Decimal) -> str:
    """A number as the suite spells values: plain digits, no exponent, no trailing zeros."""
    if not fits(value):
        return str(value)  # never written out: its digits would be beyond counting
    text = format(value, "f")
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("", "-0") else text
