"""Arithmetic a call's argument writes ("100 * 1.5"): which of its operands nobody said.

A calculator's expression is a string of values, not a count a write asks for: each number in it
that an answer's check would read must have been said before the call, by a person, a result or the
assistant's own earlier words (a figure it stated is one it may compute with). The arguments checker
flags an operand nobody said; the evidence checker lets the result of such a call back nothing, since
what it computed from a made-up number is made up too ("120 * 3 * 1.5" is 540, and "$540" grounded
in it would hide the 1.5).

Some operands are nobody's value to say: a constant of the calendar, the clock or a scale (60,
3600, 24, 7, 365, 100, 1000, ...), and a rate written as the factor it makes, one plus or minus a
percent someone said ("8% tax": 1.08; "15% off": 0.85; a fraction is its percent too, "0.15": 15%).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from decimal import Decimal

from .decimals import number_text
from .tokens import classify, lookup_forms, tokenize

# Constants of the calendar, the clock and scales: no one says them, a computation uses them.
CONSTANTS = frozenset(map(Decimal, "7 12 24 52 60 100 365 366 1000 1440 3600 86400".split()))
# Written arithmetic: numbers joined by operators, nothing else ("(16-14)+(20-17)", "100 * 1.5").
_EXPRESSION = re.compile(r"[\s(]*\d[\d.,]*(?:[\s()]*[-+*/×÷^%][\s(]*\d[\d.,]*)+[\s)]*")
# What tells arithmetic from a date, a range or a code ("2026-11-29", "10/12", "555-0100"):
# an operator no such value uses, a bracket, or a minus or slash set apart by spaces.
_ARITHMETIC = re.compile(r"[+*×÷^%()]|\s[-/]\s")


def is_expression(raw: str) -> bool:
    """Whether a string argument is written arithmetic, not a date, a range or a code."""
    return bool(_EXPRESSION.fullmatch(raw) and _ARITHMETIC.search(raw))


def unsaid_operands(raw: str, min_digits: int, said: Callable[[list[str]], bool]) -> Iterator[str]:
    """The operands of the expression ``raw``, as written, whose forms ``said`` finds none of; a
    fraction is also its percent ("0.15": 15%)."""
    for match in re.finditer(r"\d+(?:[.,]\d+)*", raw):
        token = tokenize(match.group())[0]
        candidate = classify(token, min_digits=min_digits, figures=True, decimal_rounding=True)
        if candidate is None or candidate.number is None or candidate.number in CONSTANTS:
            continue
        number = candidate.number
        forms = [*lookup_forms(candidate.value)]
        if 0 < number < 1:
            forms += lookup_forms(number_text(number * 100))
        if 0 < number < 2 and number != 1:  # a factor: 1.08 of an 8% tax, 0.85 of 15% off
            forms += lookup_forms(number_text(abs(number - 1) * 100))
        if not said(forms):
            yield match.group()
