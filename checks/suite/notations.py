"""Values as people write them: the other spellings under which a value is the same value.

A tool records ``gift_card_7091239`` and ``certificate_7504069``; an answer says "the gift
card ending in 1239" and "certificate 7504069". Each pair is one value. This module turns
both sides into the same *keys*, so the evidence checker looks a value up once whatever
notation either side used (dates and clock times are read by ``values``):

- **identifier fragments**: a number of four digits or more is the same value as the digit
  run of an identifier that carries it whole (``#7504069`` for ``certificate_7504069``) or
  as its last digits (``#~1239`` for ``gift_card_7091239``). Only digit runs of identifiers
  (tokens with a letter) count, and a fragment of at least four digits.
- **amounts** of money are read by ``money``, in every notation the same way on both sides.

The keys start with ``#``, which no token of a text can (``#`` is stripped from a token's
ends), so they never collide with a value as written.
"""

from __future__ import annotations

import re

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
