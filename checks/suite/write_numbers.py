"""Numbers a model typed into a write: where each could have come from.

A booking with ``"total_baggages": 3`` when nobody mentioned bags changes the record as much
as an invented identifier does, and the answer built on it is "grounded" in the write's own
result. So each number in the arguments of a call that may change something
(``tool_names.surely_writes``) must be supplied by one of these, and nothing else:

- **the user said it of that noun**: the number (in figures or words, "a bag" is 1) stands
  within three words before a word that names the argument, or is a short reply (six words
  at most) to an assistant message that named it ("How many bags?" "2") ("2 checked bags" for
  ``total_baggages``: a word of the key, generic words like total or number aside, sharing
  its first three letters; a key of generic words only, like ``quantity``, takes a number
  said of any noun);
- **an earlier result holds it under the same key** (``total_baggages`` read as 3);
- **a documented derivation gives it**: an earlier result's value under the same key plus or
  minus a count the user said of that noun ("add two bags" to 1 makes 3); an amount of money
  that an earlier answer or the user stated as money, that a result holds under a money key
  (price, amount, total, …) or names in its text ("total price is 305"), or a sum over a
  result's list
  (``derivations``), or one share of a payment whose shares under the same key add up to such
  an amount; a count no larger than another argument of the same call that names
  the same thing and is itself supplied (the non-free bags of a total the user gave);
- **zero**, the default of every count.

A number elsewhere in the system prompt, or under an unrelated key, supplies nothing.
Numbers are compared exactly, as ``Decimal`` (``decimals``): a count of 400 digits is
supplied by that count, never by one that differs in its last digit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .decimals import ZERO, exactly, is_number
from .derivations import MAX_SOURCES, Figure, Pools, derive, money_leaves
from .evidence_index import Source, json_leaves
from .money import labelled_amounts, money_values
from .shown import Grown
from .text import COUNT_WORD, name_tokens, parse_number, singular

_GENERIC_WORDS = frozenset(
    "total num number count quantity qty new old max min nonfree free extra id ids".split()
)
_MONEY_WORDS = frozenset("amount price cost fee fare balance paid payment refund charge credit".split())
_SAID = re.compile(rf"\b(\d+|{COUNT_WORD}|an?|single)\s+((?:[a-z-]+\s+){{0,2}}[a-z-]+)", re.I)
MAX_LEAVES = 2000


def number_arguments(value: Any) -> list[tuple[str, Decimal]]:
    """Every number (not a boolean) among a call's arguments, with its path."""
    return [(path, Decimal(leaf)) for path, leaf in json_leaves(value, is_number)]


def last_key(path: str) -> str:
    """``payment_methods[0].amount`` -> ``amount``."""
    return re.sub(r"\[[^\]]*\]", "", path).rsplit(".", 1)[-1].lower()


# Everyday words for one thing (general English, no domain's vocabulary): a user who brings
# two suitcases said how many bags.
_SAME_THING = (
    frozenset(["bag", "lug", "sui"]),  # bag(gage), luggage, suitcase
    frozenset(
        ["pas", "tra", "per", "peo", "adu", "gue"]
    ),  # passenger, traveller, person, people, adult, guest
)


def key_stems(key: str) -> set[str]:
    """The first three letters of each word that names what a key counts, and of the
    everyday words for the same thing."""
    stems = {singular(word)[:3] for word in name_tokens(key) if word not in _GENERIC_WORDS and len(word) >= 3}
    for group in _SAME_THING:
        if stems & group:
            stems |= group
    return stems


def is_money_key(key: str) -> bool:
    return any(word in _MONEY_WORDS for word in name_tokens(key))


def keyed_numbers(source: Source) -> dict[str, set[Decimal]]:
    """Each key of a JSON result with the numbers it holds anywhere in the result."""
    cached = source.cache.get("keyed_numbers")
    if cached is not None:
        return cached
    out: dict[str, set[Decimal]] = {}
    stack: list[tuple[Any, str]] = [(source.parsed() if source.looks_json else None, "")]
    seen = 0
    while stack and seen < MAX_LEAVES:
        node, key = stack.pop()
        seen += 1
        if isinstance(node, dict):
            stack.extend((item, str(k).lower()) for k, item in node.items())
        elif isinstance(node, list):
            stack.extend((item, key) for item in node[:500])
        elif is_number(node) and key:
            out.setdefault(key, set()).add(Decimal(node))
    source.cache["keyed_numbers"] = out
    return out


def said_of(texts: Iterable[str], stems: set[str]) -> set[Decimal]:
    """The numbers the texts say of a noun with one of ``stems`` ("two checked bags"), or of
    any noun when there are no stems."""
    out: set[Decimal] = set()
    for text in texts:
        for match in _SAID.finditer(text):
            words = match.group(2).lower().split()
            # A key that names no noun (``quantity``) takes a number said of any noun.
            if not stems or any(singular(w)[:3] in stems for w in words):
                number = _number(match.group(1))
                if number is not None:
                    out.add(number)
    return out


MAX_REPLY_WORDS = 6


def answered(replies: list[tuple[str, str]], stems: set[str]) -> set[Decimal]:
    """The numbers of short replies to a question that named the thing ("How many bags?" "2")."""
    out: set[Decimal] = set()
    for question, reply in replies:
        numbers = _reply_numbers(reply)
        if numbers is None or (stems and not _asked(question) & stems):
            continue
        out |= numbers
    return out


def _reply_numbers(reply: str) -> set[Decimal] | None:
    """The numbers of a short reply; None for a reply too long (or too empty) to answer."""
    words = re.findall(r"[a-z0-9-]+", reply.lower())
    if not words or len(words) > MAX_REPLY_WORDS:
        return None
    return {n for n in (_number(w) for w in words if w not in ("a", "an")) if n is not None}


def _asked(question: str) -> set[str]:
    """What a question names: the first three letters of each of its words."""
    return {singular(w)[:3] for w in re.findall(r"[a-z]+", question.lower()) if len(w) >= 3}


def _number(word: str) -> Decimal | None:
    """A number in figures or words (``text.parse_number``); "a bag" and "a single bag" are one."""
    if word.lower() in ("a", "an", "single"):
        return Decimal(1)
    value = parse_number(word)
    return None if value is None else Decimal(value)


@dataclass
class Supply:
    """What the conversation has said before a call: who could have supplied a number.

    The lists only grow, in conversation order. What a call asks of all of them (the numbers
    a key held, the money read, what the user said of a noun) is answered by walking them
    while that is cheap, and from indexes grown with them once it is not (``shown.Grown``),
    so a write late in a long conversation costs no more than one early in it.
    """

    user_texts: list[str] = field(default_factory=list)
    # Short replies with the question they answer: "2" after "How many bags will you check?"
    replies: list[tuple[str, str]] = field(default_factory=list)
    prose_amounts: set[Decimal] = field(default_factory=set)  # money the user or an answer stated
    results: list[Source] = field(default_factory=list)
    _index: _SupplyIndex = field(default_factory=lambda: _SupplyIndex(), repr=False, compare=False)

    def same_key(self, key: str) -> set[Decimal]:
        """The numbers the results hold under ``key``."""
        index = self._index
        if not index.indexed("keys", self.results, index.read_keys):
            out: set[Decimal] = set()
            for source in self.results:
                out |= keyed_numbers(source).get(key, set())
            return out
        return index.by_key.get(key, set())

    def money_read(self, value: Decimal) -> bool:
        """Whether a result holds ``value`` under a money key, or a text result names it."""
        index = self._index
        if not index.indexed("money", self.results, index.read_money):
            return any(
                leaf.value == value for source in self.results for leaf in money_leaves(source)
            ) or any(value in _text_amounts(source) for source in self.results if not source.looks_json)
        return value in index.money

    def said(self, stems: set[str]) -> set[Decimal]:
        """``said_of(user_texts, stems) | answered(replies, stems)``."""
        index = self._index
        out: set[Decimal] = set()
        if not index.indexed("said", self.user_texts, index.read_said):
            out |= said_of(self.user_texts, stems)
        elif not stems:
            out |= index.said_any
        else:
            for stem in stems:
                out |= index.said_by_stem.get(stem, set())
        if not index.indexed("answered", self.replies, index.read_answered):
            out |= answered(self.replies, stems)
        elif not stems:
            out |= index.answered_any
        else:
            for stem in stems:
                out |= index.answered_by_stem.get(stem, set())
        return out


class _SupplyIndex(Grown):
    """What ``Supply``'s lists hold, by what a call asks of them."""

    def __init__(self) -> None:
        super().__init__()
        self.by_key: dict[str, set[Decimal]] = {}
        self.money: set[Decimal] = set()
        self.said_any: set[Decimal] = set()
        self.said_by_stem: dict[str, set[Decimal]] = {}
        self.answered_any: set[Decimal] = set()
        self.answered_by_stem: dict[str, set[Decimal]] = {}

    def read_keys(self, ordinal: int, source: Source) -> None:
        for key, numbers in keyed_numbers(source).items():
            self.by_key.setdefault(key, set()).update(numbers)

    def read_money(self, ordinal: int, source: Source) -> None:
        self.money.update(leaf.value for leaf in money_leaves(source))
        if not source.looks_json:
            self.money |= _text_amounts(source)

    def read_said(self, ordinal: int, text: str) -> None:
        for match in _SAID.finditer(text):
            number = _number(match.group(1))
            if number is None:
                continue
            self.said_any.add(number)
            for word in match.group(2).lower().split():
                self.said_by_stem.setdefault(singular(word)[:3], set()).add(number)

    def read_answered(self, ordinal: int, reply: tuple[str, str]) -> None:
        numbers = _reply_numbers(reply[1])
        if numbers is None:
            return
        self.answered_any |= numbers
        for stem in _asked(reply[0]):
            self.answered_by_stem.setdefault(stem, set()).update(numbers)


@exactly
def unsupplied(arguments: Any, supply: Supply) -> list[tuple[str, Decimal]]:
    """The numbers of a write's arguments that nothing supplied, with their paths."""
    numbers = number_arguments(arguments)
    supplied: dict[str, bool] = {}
    for path, value in numbers:
        supplied[path] = _supplied(path, value, supply)
    out = []
    for path, value in numbers:
        if supplied[path]:
            continue
        key = last_key(path)
        if is_money_key(key):
            # One share of a split payment: the shares under the same key make a known total.
            shares = sum((other_value for other, other_value in numbers if last_key(other) == key), ZERO)
            if _known_amount(shares, supply):
                continue
        stems = key_stems(key)
        # A part of a supplied total of the same thing: the non-free bags of the bags the user gave.
        if any(
            supplied[other] and other != path and value <= total and stems & key_stems(last_key(other))
            for other, total in numbers
        ):
            continue
        out.append((path, value))
    return out


def _text_amounts(source: Source) -> set[Decimal]:
    """The amounts a text result names ("total price is 305, but paid 255") or writes as
    money ("$250", "55 USD"), read by ``money``."""
    text = source.text[:20_000]
    return labelled_amounts(text) | money_values(text)


def _known_amount(value: Decimal, supply: Supply) -> bool:
    """Money the user or an answer stated, a result holds under a money key, or a sum over
    one result's list."""
    if value in supply.prose_amounts or supply.money_read(value):
        return True
    paid = Figure(value, frozenset({"paid"}), precision=2)
    return derive([paid], Pools(supply.results[-MAX_SOURCES:][::-1]))[0] is not None


def _supplied(path: str, value: Decimal, supply: Supply) -> bool:
    key = last_key(path)
    if value == 0:
        return True
    if value in supply.same_key(key):
        return True
    if is_money_key(key):
        return _known_amount(value, supply)
    stems = key_stems(key)
    said = supply.said(stems)
    if value in said:
        return True
    return any(value in (old + count, old - count) for old in supply.same_key(key) for count in said)
