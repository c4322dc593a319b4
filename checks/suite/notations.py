"""Values as people write them: the digit runs of identifiers, and counts of lists.

A tool records ``gift_card_7091239``; an answer says "the gift card ending in 1239". Both are
read into a ``DigitRun`` (``identifier_runs``, ``number_run``) with one key, so a run read on
one side is found from the other.

- **Only identifiers carry fragments**: a token with a letter and a digit run. A number
  without a letter is a value of its own, found as written.
- **A fragment is whole or a tail**: "ending in" names last digits, never middle ones.
- **Short runs are no fragments**: fewer than four digits match too much by chance.

Keys start with ``#``, which a token cannot (it is stripped from a token's ends).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from .text import find_all
from .types import members

MIN_FRAGMENT_DIGITS = 4
_RUN = re.compile(rf"\d{{{MIN_FRAGMENT_DIGITS},}}")
FRAGMENT_PREFIX = "#"


@dataclass(frozen=True, slots=True)
class DigitRun:
    """A run of ``MIN_FRAGMENT_DIGITS`` digits or more: a number, or a fragment of an identifier."""

    digits: str
    start: int = 0
    end: int = 0
    kind: ClassVar[str] = "fragment"

    @property
    def canonical(self) -> str:
        return self.digits

    def keys(self) -> list[str]:
        return [FRAGMENT_PREFIX + self.digits]

    lookups = keys


def identifier_runs(token: str) -> list[DigitRun]:
    """The fragments an identifier carries: each run whole, and the tails of the run it ends with."""
    found = _RUN.findall(token) if any(c.isalpha() for c in token) else []
    tails = range(MIN_FRAGMENT_DIGITS, len(found[-1])) if found and token.endswith(found[-1]) else ()
    return [DigitRun(run) for run in found] + [DigitRun(found[-1][-n:]) for n in tails]


def number_run(value: str) -> DigitRun | None:
    """A number of plain digits as the run an identifier may carry; None if it is none."""
    return DigitRun(value) if len(value) >= MIN_FRAGMENT_DIGITS and value.isdigit() else None


def fragment_span(text: str, key: str) -> tuple[int, int] | None:
    """Where the first identifier with the run whole (else a tail) stands in lower-case ``text``."""
    digits = key.removeprefix(FRAGMENT_PREFIX)
    tail_span = None
    for at in find_all(text, [digits] if digits else []):
        end = at + len(digits)
        if end == len(text) or not text[end].isdigit():
            start = at
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
                start -= 1
            if any("a" <= c <= "z" for c in text[start:at]):
                if at == 0 or not text[at - 1].isdigit():
                    return start, end  # the run whole: the first such place wins
                tail_span = tail_span or (start, end)
    return tail_span


def count_key(noun: str, count: int) -> str:
    """The key of "``count`` ``noun``": a list of that many under a key naming the noun, singular."""
    word = noun.lower()
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return f"count:{word}:{count}"


def count_keys(value: object) -> set[str]:
    """The count keys of a JSON value's lists (``"open_tickets": [3 rows]`` counts 3 tickets)."""
    lists = [(str(key).lower(), len(item)) for key, item in members(value) if isinstance(item, list)]
    return {count_key(noun, size) for name, size in lists if (noun := re.split(r"[^a-z]+", name)[-1])}
