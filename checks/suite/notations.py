"""Values as people write them: the other spellings under which a value is the same value.

A tool records ``gift_card_7091239`` and ``certificate_7504069``; an answer says "the gift
card ending in 1239" and "certificate 7504069". Each pair is one value. This module reads
both sides into the same values, with the same keys, so the evidence checker looks a value
up once whatever notation either side used (dates and clock times are read by ``values``,
amounts of money by ``money``):

- **identifier fragments**: a number of four digits or more is the same value as the digit
  run of an identifier that carries it whole (``7504069`` of ``certificate_7504069``) or
  as its last digits (``1239`` of ``gift_card_7091239``). Both are read as a ``DigitRun``:
  ``identifier_runs`` reads the runs an identifier carries, ``number_run`` reads a number
  as the run it is, and ``DigitRun.keys`` alone decides the key both are filed and looked
  up under, so a run read on one side is found from the other by construction.

Principles:

- **Only identifiers carry fragments.** A token with a letter and a digit run is an
  identifier; a number without a letter is a value of its own, found as written.
- **A fragment is whole or a tail.** An identifier carries each of its runs whole, and the
  tails of a run it ends with: "ending in" names last digits, never middle ones, so
  ``9123`` is no fragment of ``card_7091239``.
- **Short runs are no fragments.** Fewer than four digits match too much by chance.

The keys start with ``#``, which no token of a text can (``#`` is stripped from a token's
ends), so they never collide with a value as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from .types import members

# --- identifier fragments ----------------------------------------------------------------

MIN_FRAGMENT_DIGITS = 4
_RUN = re.compile(rf"\d{{{MIN_FRAGMENT_DIGITS},}}")
FRAGMENT_PREFIX = "#"


@dataclass(frozen=True, slots=True)
class DigitRun:
    """A run of ``MIN_FRAGMENT_DIGITS`` digits or more: a number, or a fragment of an
    identifier an answer may name it by (a ``value.Value``; its span is that of the token
    it is read from, where one is known)."""

    digits: str
    start: int = 0
    end: int = 0
    kind: ClassVar[str] = "fragment"

    @property
    def canonical(self) -> str:
        return self.digits

    def keys(self) -> list[str]:
        """The one key a run is filed under in a source and looked up under in an answer."""
        return [FRAGMENT_PREFIX + self.digits]

    def lookups(self) -> list[str]:
        return self.keys()


def identifier_runs(token: str) -> list[DigitRun]:
    """The fragments an identifier token carries: each run whole, and the tails of the run
    it ends with. A token with no letter is no identifier and carries none."""
    if not any(c.isalpha() for c in token):
        return []
    found = _RUN.findall(token)
    if not found:
        return []
    runs = [DigitRun(run) for run in found]
    last = found[-1]
    if token.endswith(last):
        runs.extend(DigitRun(last[-n:]) for n in range(MIN_FRAGMENT_DIGITS, len(last)))
    return runs


def number_run(value: str) -> DigitRun | None:
    """A number written as plain digits, read as the run an identifier may carry; None for
    any other value, or one too short to be a fragment."""
    if len(value) < MIN_FRAGMENT_DIGITS or not value.isdigit():
        return None
    return DigitRun(value)


def fragment_span(text: str, key: str) -> tuple[int, int] | None:
    """Where an identifier that carries a fragment key stands in ``text`` (lower-cased): one
    that carries the run whole, else one that ends with it. The span runs from the start of
    the identifier to the end of the run.

    Each place the digits stand is found by ``str.find`` and weighed by the identifier around
    it alone, so a result of megabytes costs one pass: a regular expression that let the
    identifier's characters repeat before the digits retried them at every place (a 5 MB
    result took 37 s)."""
    digits = key.removeprefix(FRAGMENT_PREFIX)
    if not digits:
        return None
    tail_span = None
    at = text.find(digits)
    while at != -1:
        end = at + len(digits)
        if end == len(text) or not text[end].isdigit():
            start = at
            while start > 0 and _in_identifier(text[start - 1]):
                start -= 1
            if any("a" <= c <= "z" for c in text[start:at]):
                if at == 0 or not text[at - 1].isdigit():
                    return start, end  # the run whole: the first such place wins
                if tail_span is None:
                    tail_span = (start, end)
        at = text.find(digits, at + 1)
    return tail_span


def _in_identifier(char: str) -> bool:
    """A character an identifier may hold: a letter, a digit, ``_``, ``.`` or ``-``."""
    return char.isalnum() or char in "_.-"


# --- counts ------------------------------------------------------------------------------


def _singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def count_key(noun: str, count: int) -> str:
    """The key of "``count`` ``noun``": a list of that many under a key naming the noun."""
    return f"count:{_singular(noun)}:{count}"


def count_keys(value: object) -> set[str]:
    """The count keys of the lists a JSON value holds: ``"passengers": [3 rows]`` counts 3
    passengers (the key's last word names the noun: ``open_tickets`` counts tickets)."""
    out: set[str] = set()
    for key, item in members(value):
        if isinstance(item, list):
            noun = re.split(r"[^a-z]+", str(key).lower())[-1]
            if noun:
                out.add(count_key(noun, len(item)))
    return out
