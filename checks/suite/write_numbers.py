"""Numbers a model typed into a write: where each could have come from.

A booking with ``"total_baggages": 3`` when nobody mentioned bags changes the record as much
as an invented identifier does. So each number in the arguments of a call that may change
something (``tool_names.surely_writes``) must be supplied by one of these, and nothing else
(numbers are compared exactly, as ``Decimal``):

- **the user said it of that noun**, in figures or words ("a bag" is 1), apart or hyphened ("a
  6-month extension" says 6 months), within three words before a word that shares its first
  three letters with a word of the key (generic words like total aside; a key of generic words
  only takes any noun), or as a short reply to a question that named it ("How many bags?" "2"),
  or as the one count of things (a plural noun, or a group the user counts themselves in: "six
  of us") of a message that says only one: "two suitcases" gives the count of bags, with no
  synonym table; or as the total of the two or three counts of things a message lists as one
  list, joined by "and" or a comma ("two adults and three kids" make a group of five, "2 rooms
  for 3 nights" nothing); or as a length of time in any unit, under a key named for a unit ("an
  hour and a half" is ``duration_min`` 90); or, for a key holding the word right after it,
  "both" as 2 ("both kayaks") and an ordinal as its number ("my third installment"): a position,
  never a count of other things; or with a sign that is a word: "6%" is said of a percent, for a
  key holding the word ``percent``, ``percentage`` or ``pct``, and of nothing else; so is a
  percentage the system prompt states, a rate the desk applies, of what the key names (its
  sentence holds a word of the key; "off" names a discount) and, where it states several, for
  whom the records name ("Silver members get 10% off" of a Silver member);
- **an answer the user read before speaking again said it of that noun**, and gave that noun
  no other count: what the user took up is theirs ("holds 120 guests", then "Book it"); an
  answer's words in the message that makes the call vouch for nothing, nor do two counts of
  one noun ("120 guests here, 80 there");
- **an earlier result holds it under the same key**, or an earlier read the tool answered
  asked for it under the same key (a write that books the party of five a search found tables
  for);
- **a documented derivation gives it**: that value plus or minus a count the user said of the noun;
  under a key naming money (a price, a fee or fees, a deposit, a discount; never its percent, rate,
  count, length or year), money (in whole units where the key counts cents: ``amount_cents``) an
  answer or the user stated, a result holds under a money key or names in its text, or a sum over a
  result's list (``derivations``), or one share of a payment whose shares add up to such an amount;
  or a sum over a result's list (or nothing) plus an amount the system prompt states per unit ("$30
  per passenger", "€2.50 each"), times the length of a list the records hold or the one count of
  things the user said: the listed fares for each of a party, a fee per head, a voucher at the
  prompt's rate for each one, never a single amount (one charge for each of two guests) nor a limit
  ("refunds above $500"); a count no larger than another supplied argument of the same call that
  names the same thing; under a key named a total of nothing in particular ("total",
  "estimated_total", never "total_guests") or of one thing ("ticket_total", never "guest_total"), an
  amount stated or held, as under a money key; under a key naming age, a person's age the user gave
  with no noun ("I'm 23", "he's 30");
- **zero**, the default of every count.
"""

from __future__ import annotations

import math
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import islice
from typing import Any

from .decimals import ZERO, exactly, is_number, number_text
from .derivations import MAX_SOURCES, Figure, Pools, derive, kept, list_lengths, money_leaves
from .durations import UNITS as DURATION_UNITS
from .durations import duration_keys, duration_member_keys
from .evidence_index import Source, json_leaves, last_key
from .money import in_whole_units, labelled_amounts, money_values, read_amounts
from .text import COUNT_WORD, name_tokens, parse_number, singular
from .tokens import is_unit
from .types import walk

_GENERIC_WORDS = frozenset(
    "total num number count quantity qty new old max min nonfree free extra id ids".split()
)
_MONEY_WORDS = frozenset(
    "amount price cost fee fare balance paid payment refund charge credit deposit discount surcharge"
    " supplement tax tip".split()
)
# The words after a number are looked ahead at, not taken: "2 adults and a child" says a child too.
# A word holds a letter and may hold digits: "48 4x6 prints" says 48 of the 4x6. A count is a whole
# number: the cents of "$45.60 per night" and the thousands of "1,200 guests" are no count of their own.
_WORD = r"[a-z0-9-]*[a-z][a-z0-9-]*"
_SAID = re.compile(
    rf"(?<!\d[.,])\b(\d+|{COUNT_WORD}|an?|single)(?:\s+|-)(?=((?:{_WORD}\s+){{0,2}}{_WORD}))", re.I
)
# "both kayaks", "my third installment": a number of the words right after it, and of no other.
_ORDINALS = {
    w: n for n, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth".split(), 1)
}
# "both" may name a thing by two words ("both toner cartridges"); an ordinal its next one only.
_BOTH_OR_ORDINAL = re.compile(
    rf"\b(?:both\s+([a-z]+)(?:\s+([a-z]+))?|({'|'.join(_ORDINALS)})\s+([a-z]+))\b", re.I
)
_MEASURES = {*DURATION_UNITS, "months", "years"}  # with ``tokens.is_unit``: no count of things
_GROUP = re.compile(  # "six of us", not "two of us are": a closed class of verbs marks a part
    r"of us\b(?!\s+(?:are|is|was|were|will|would|can|could|have|has|had|need|needs|want|wants|do|does"
    r"|don't|doesn't|won't|can't|prefer|prefers)\b)",
    re.I,
)
# "6%": the sign says percent, as the word would.
_PERCENT = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?)\s?%")
_PERCENT_WORDS = ("percent", "percentage", "pct")
# Words a rate's clause shares with any record, naming nobody in particular.
_COMMON = frozenset("a an the of to for and or is are get gets members member off".split())
# "I'm 23", "he's 30", "who's 9", "aged 9": a person's age, said with no noun after it ("I'm 5 minutes
# away" is none).
_AGED = re.compile(
    r"\b(?:I['\u2019]m|I am|(?:he|she|who)['\u2019]s|(?:he|she|who) is|aged)\s+(\d{1,3})(?![\d:%a-z]|\.\d)"
    r"(?!\s+(?!(?:and|or|but|so|years?|yrs?)\b)[a-z])",
    re.I,
)
_JOINED = re.compile(r"\s*(?:,|&|\+|\band\b|\bplus\b)\s*(?:and\s+)?", re.I)
MAX_NODES = 2000
MAX_FEES = 8  # the prompt's per-unit fees a payment is tried with
MAX_REPLY_WORDS = 6


def key_stems(key: str) -> set[str]:
    """The first three letters of each word that names what a key counts."""
    return {singular(word)[:3] for word in name_tokens(key) if word not in _GENERIC_WORDS and len(word) >= 3}


_TOTAL_WORDS = frozenset({"total", "subtotal"})
# Words that say which total, and name nothing it counts ("estimated_total", "order_total").
_OF_A_TOTAL = frozenset("grand estimated expected quoted final new order booking".split())
# Nouns a total counts though singular() leaves them alone: people, and lengths and measures.
_COUNTED = frozenset(
    "people children staff men women person guest adult child member attendee participant patient"
    " visitor seat night day hour minute week month year unit item piece pallet box page visit session"
    " class rep set point step calorie weight mile".split()
)


def _names_a_total(key: str) -> bool:
    """Whether a key names a total of nothing it counts: ``total``, ``estimated_total``, the total of
    one thing (``ticket_total``, ``bill_total``: a noun in the singular), never ``guests_total``,
    ``guest_total`` or ``session_total`` (people, times and units are counted) or ``total_baggages``."""
    words = name_tokens(key)
    return (
        bool(words)
        and words[-1] in _TOTAL_WORDS
        and all(
            w in _OF_A_TOTAL or singular(w) == w and w not in _COUNTED and not is_unit(w) for w in words[:-1]
        )
    )


# Words that make a key a rate, a count, a length or a year of the money it names: "tax_rate",
# "deposit_count", "discount_days", "tax_year", "discount_uses".
_NOT_MONEY_WORDS = frozenset(
    (
        *_PERCENT_WORDS,
        *"perc rate ratio count num number qty quantity use year day night week month code".split(),
    )
)


def is_money_key(key: str) -> bool:
    """Whether a key names money, in the singular or the plural (``booking_fees``), and no percent
    (``discount_pct`` is a rate), count, rate or length."""
    words = [singular(word) for word in name_tokens(key)]
    return any(word in _MONEY_WORDS for word in words) and _NOT_MONEY_WORDS.isdisjoint(words)


def _under_key(key: str, at: str | int) -> str:
    return key if isinstance(at, int) else at.lower()  # an array's items stand under its key


@kept
def keyed_numbers(source: Source) -> dict[str, set[Decimal]]:
    """Each key of a JSON result with the numbers it holds anywhere in the first ``MAX_NODES`` nodes."""
    out: dict[str, set[Decimal]] = {}
    nodes = walk(source.parsed(), _under_key, max_depth=math.inf, last_first=True)
    for key, node, _ in islice(nodes, MAX_NODES):
        if is_number(node) and key:
            out.setdefault(key, set()).add(Decimal(node))
    return out


def _number(word: str) -> Decimal | None:
    """A number in figures or words (``text.parse_number``); "a bag" and "a single bag" are one."""
    value = 1 if word.lower() in ("a", "an", "single") else parse_number(word)
    return None if value is None else Decimal(value)


def _stems_of(words: list[str]) -> set[str]:
    return {singular(word)[:3] for word in words}


@dataclass(frozen=True)
class PromptRate:
    """A percentage the system prompt states: the rate, the stems of its sentence's words (what it
    is a rate of), and the words of its clause (whom it is for: "Silver members get 10% off")."""

    rate: Decimal
    of: frozenset[str]
    whom: frozenset[str]


@dataclass
class Supply:
    """What the conversation has said before a call: who could have supplied a number.

    The lists only grow; each item is read into the indexes once, on the first question after
    it came, so a write late in a long conversation costs no more than one early in it."""

    user_texts: list[str] = field(default_factory=list)
    answer_texts: list[str] = field(default_factory=list)  # the answers the user read before speaking again
    # Short replies with the question they answer: "2" after "How many bags will you check?"
    replies: list[tuple[str, str]] = field(default_factory=list)
    prose_amounts: set[Decimal] = field(default_factory=set)  # money the user or an answer stated
    unit_fees: set[Decimal] = field(default_factory=set)  # money the system prompt states per unit
    prompt_rates: list[PromptRate] = field(default_factory=list)  # the prompt's percentages
    results: list[Source] = field(default_factory=list)
    # How many user texts, replies, results and answer texts are read into the indexes.
    _read: list[int] = field(default_factory=lambda: [0, 0, 0, 0], repr=False)
    _by_key: dict[str, set[Decimal]] = field(default_factory=dict, repr=False)
    _money: set[Decimal] = field(default_factory=set, repr=False)
    # The lengths of the results' lists, each with where those lists stand ("passengers").
    _lengths: dict[Decimal, set[str]] = field(default_factory=dict, repr=False)
    _known: dict[tuple[Decimal, int, int], bool] = field(default_factory=dict, repr=False)
    # Stem of a word a number was said of (or asked about) -> the numbers; "": any noun.
    _said: dict[str, set[Decimal]] = field(default_factory=dict, repr=False)
    # A word "both" or an ordinal named, as written (or "percent", of "6%") -> the numbers: a key
    # holding that word takes them.
    _named: dict[str, set[Decimal]] = field(default_factory=dict, repr=False)
    # The one count of a user message that says only one ("2 suitcases" for a key of bags).
    lone: set[Decimal] = field(default_factory=set, repr=False)
    lengths: set[str] = field(default_factory=set, repr=False)  # the user's lengths of time, as keys

    def _catch_up(self) -> None:
        texts, replies, results, answers = self._read
        for source in self.results[results:]:
            for key, numbers in keyed_numbers(source).items():
                self._by_key.setdefault(key, set()).update(numbers)
            self._money.update(leaf.value for leaf in money_leaves(source))
            for path, length in list_lengths(source):
                self._lengths.setdefault(Decimal(length), set()).add(path)
            if not source.looks_json:  # what it names ("total price is 305") or writes as money ("$250")
                self._money |= labelled_amounts(source.text[:20_000]) | money_values(source.text[:20_000])
        for text in self.user_texts[texts:]:
            self.lengths |= duration_keys(text)
            for match in _BOTH_OR_ORDINAL.finditer(text):
                both, also, ordinal, named = match.groups()
                position = Decimal(_ORDINALS[ordinal.lower()] if ordinal else 2)
                for word in (both, also, named):
                    if word:
                        self._named.setdefault(word.lower(), set()).add(position)
            for match in _PERCENT.finditer(text):  # of a percent only: no count of things
                for word in _PERCENT_WORDS:
                    self._named.setdefault(word, set()).add(Decimal(match.group(1)))
            counted: set[Decimal] = set()
            listed: list[tuple[Decimal, int, int]] = []  # each count of things, where it and its noun stand
            for match in _SAID.finditer(text):
                said, words = match.group(1), match.group(2).lower().split()
                if (number := _number(said)) is None:
                    continue
                self._add_said({number}, _stems_of(words))
                # A count of things: in figures or words ("a" aside), of a plural noun that
                # is no unit ("3 days", "5 gb" are amounts of time and size, not things).
                # So is a group the user counts themselves in ("there are six of us"), not a part of
                # one a verb follows ("two of us are vegetarian").
                noun = words[0]
                things = noun.endswith("s") and not is_unit(noun) and noun not in _MEASURES
                group = _GROUP.match(text, match.start(2)) is not None
                if (things or group) and said.lower() not in ("a", "an"):
                    counted.add(number)
                    listed.append((number, match.start(1), match.start(2) + len(noun)))
            for match in _AGED.finditer(text):  # "I'm 23", "he's 30": an age, and no count of anything
                self._said.setdefault("age", set()).add(Decimal(match.group(1)))
            if len(counted) == 1:
                self.lone |= counted
            # "two adults and three kids": one list, its counts joined by "and" or a comma, a group of five.
            joined = all(
                _JOINED.fullmatch(text, a[2], b[1]) for a, b in zip(listed, listed[1:], strict=False)
            )
            if 2 <= len(listed) <= 3 and joined:
                self.lone.add(sum((number for number, _, _ in listed), ZERO))
        for question, reply in self.replies[replies:]:
            words = re.findall(r"[a-z0-9-]+", reply.lower())
            if words and len(words) <= MAX_REPLY_WORDS:  # else too long (or too empty) to answer
                numbers = {n for n in (_number(w) for w in words if w not in ("a", "an")) if n is not None}
                asked = _stems_of([w for w in re.findall(r"[a-z]+", question.lower()) if len(w) >= 3])
                self._add_said(numbers, asked)
        for text in self.answer_texts[answers:]:
            # An answer's count of a noun is the user's only where it gives that noun one count:
            # "holds 120 guests" supplies guests, "120 guests here, 80 there" supplies neither.
            counts: dict[str, set[Decimal]] = {}
            for match in _SAID.finditer(text):
                if (number := _number(match.group(1))) is not None:
                    for stem in _stems_of(match.group(2).lower().split()):
                        counts.setdefault(stem, set()).add(number)
            for stem, numbers in counts.items():
                if len(numbers) == 1:
                    self._said.setdefault(stem, set()).update(numbers)
        self._read = [len(self.user_texts), len(self.replies), len(self.results), len(self.answer_texts)]

    def asked(self, arguments: Any) -> None:
        """The numbers a read the tool answered asked for, each under its key."""
        for path, number in json_leaves(arguments, is_number):
            self._by_key.setdefault(last_key(path).lower(), set()).add(Decimal(number))

    def _add_said(self, numbers: set[Decimal], stems: set[str]) -> None:
        for stem in ("", *stems):
            self._said.setdefault(stem, set()).update(numbers)

    def read_prompt(self, text: str) -> None:
        """What the system prompt states: money per unit, and its percentages, the rates the desk
        applies (``_prompt_rate``)."""
        self.unit_fees |= {a.magnitude for a in read_amounts(text) if a.per and a.kind == "money"}
        for sentence in re.split(r"(?<=[.;!?])\s+|\n+", text):
            words = {word.lower() for word in re.findall(r"[A-Za-z]+", sentence)}
            of = frozenset(_stems_of(list(words)) | ({"dis"} if "off" in words else set()))
            for match in _PERCENT.finditer(sentence):
                before, after = sentence[: match.start()], sentence[match.start() :]
                clause = re.split(r"[,;]", before)[-1] + after.split(",")[0]
                whom = frozenset(word.lower() for word in re.findall(r"[A-Za-z]+", clause))
                self.prompt_rates.append(PromptRate(Decimal(match.group(1)), of, whom))

    def _prompt_rate(self, key: str, value: Decimal) -> bool:
        """A percentage the prompt states, under a key naming a percent: of what the key names (its
        sentence holds a word of the key, "off" naming a discount), and where the prompt states
        several, for whom the records name ("Silver members get 10% off" of a Silver member)."""
        words = set(name_tokens(key))
        if words.isdisjoint(_PERCENT_WORDS):
            return False
        named = {
            singular(w)[:3] for w in words - set(_PERCENT_WORDS) if w not in _GENERIC_WORDS and len(w) >= 3
        }
        rates = [r for r in self.prompt_rates if not named or named & r.of]
        if len({r.rate for r in rates}) > 1:
            held = {w for s in self.results for w in re.findall(r"[a-z]+", s.text[:20_000].lower())}
            rates = [r for r in rates if r.whom & held - _COMMON] or ([] if named else rates)
        return any(r.rate == value for r in rates)

    def supplies(self, key: str, value: Decimal) -> bool:
        """Whether the user, a result or a derivation supplied ``value`` for ``key`` (``last_key``)."""
        self._catch_up()
        same_key = self._by_key.get(key.lower(), set())
        if value == 0 or value in same_key:
            return True
        if is_money_key(key):  # in whole units where the key counts a minor one ("amount_cents")
            if self.known_amount(in_whole_units(key, value)):
                return True
            # "4 credits", "3 payments": a count the user said of the key's own noun.
            return value in set().union(*(self._said.get(stem, set()) for stem in key_stems(key)))
        # A key named a total of nothing in particular ("total", "estimated_total") may total money:
        # an amount stated or held supplies it, as a count said of any noun does.
        if _names_a_total(key) and self.known_amount(value):
            return True
        said = set().union(*(self._said.get(stem, set()) for stem in key_stems(key) or {""}))
        if value in said or value in self.lone:
            return True
        if any(value in self._named.get(word, ()) for word in name_tokens(key)):
            return True
        if self._prompt_rate(key, value):
            return True
        # A length the user gave, in whatever unit the key is named for ("90 minutes", ``duration_min``).
        if not self.lengths.isdisjoint(duration_member_keys(key, number_text(value))):
            return True
        return any(value in (old + count, old - count) for old in same_key for count in said)

    def known_amount(self, value: Decimal) -> bool:
        """Money stated, held by a result (``_money``), or a sum over one result's list; or such a
        sum (or none) plus a fee the prompt states per unit, times a count the records or the user
        give. Kept per value while nothing new is read: a call's lines ask again for one total."""
        self._catch_up()
        key = (value, sum(self._read), len(self.prose_amounts))
        if key not in self._known:
            counts = {n: set() if n in self.lone else self._lengths[n] for n in {*self._lengths, *self.lone}}
            self._known[key] = self._stated_or_held(value) or any(
                self._for_each(value / n, counted) for n, counted in counts.items() if n >= 2
            )
        return self._known[key]

    def _stated_or_held(self, value: Decimal) -> bool:
        return value in self.prose_amounts or value in self._money or self._list_sum(value)

    def _list_sum(self, value: Decimal, counted: AbstractSet[str] = frozenset()) -> bool:
        """Whether ``value`` sums a result's list, none of the ``counted`` ones (a list's total is
        no amount for each of its own rows)."""
        paid = Figure(value, frozenset({"paid"}), precision=2)
        found = derive([paid], Pools(self.results[-MAX_SOURCES:][::-1]))[0]
        return found is not None and not any(f"{path}[]" in found.source for path in counted)

    def _for_each(self, each: Decimal, counted: AbstractSet[str]) -> bool:
        """Whether one head's share is a list's sum, a fee the prompt states per unit, or both."""
        for fee in (ZERO, *sorted(self.unit_fees)[:MAX_FEES]):
            rest = each - fee
            if (rest == 0 and fee) or (rest > 0 and rest == round(rest, 2) and self._list_sum(rest, counted)):
                return True
        return False


@exactly
def unsupplied(arguments: Any, supply: Supply) -> list[tuple[str, Decimal]]:
    """The numbers of a write's arguments that nothing supplied, with their paths."""
    numbers = [(path, Decimal(leaf)) for path, leaf in json_leaves(arguments, is_number)]
    supplied = {path: supply.supplies(last_key(path), value) for path, value in numbers}
    out = []
    for path, value in numbers:
        if supplied[path]:
            continue
        key = last_key(path)
        if is_money_key(key):
            # One share of a split payment: the shares under the same key make a known total.
            shares = sum((share for other, share in numbers if last_key(other) == key), ZERO)
            if supply.known_amount(shares):
                continue
        # A part of a supplied total of the same thing: the non-free bags of the bags the user gave.
        stems = key_stems(key)
        if not any(
            supplied[other] and other != path and value <= total and stems & key_stems(last_key(other))
            for other, total in numbers
        ):
            out.append((path, value))
    return out
